/*
 * arrow_import_stream.c -- ck_arrow_import_stream: the arrays of an
 * ArrowArrayStream, each imported (ck_arrow_import), concatenated into one
 * array (arrow.h).
 */
#include "interop/arrow_internal.h"
#include "kernels/lift_internal.h"

#include <string.h>

static ck_status stream_error(struct ArrowArrayStream *s, int rc, const char *what) {
  const char *msg = s->get_last_error != NULL ? s->get_last_error(s) : NULL;
  /* ENOMEM (12) stays out of memory; any other errno is the producer's */
  return ck__error(rc == 12 ? CK_ERR_NO_MEMORY : CK_ERR_BACKEND, "ck_arrow_import_stream",
                   "%s failed (error %d): %s",
                   what, rc, msg != NULL ? msg : "no message");
}

/* The type holding the values of both `a` and `b`, two imports of one
 * schema that differ only in where they have nulls (an Arrow array has an
 * option type exactly where it holds a null): `?` wherever either has one,
 * var and fixed dims and struct fields joined member-wise.  New reference in
 * *out; CK_ERR_TYPE when they differ otherwise. */
static ck_status join_nulls(ck_type a, ck_type b, ck_type *out) {
  if (ck_type_equal(a, b)) {
    ck_type_incref(a);
    *out = a;
    return CK_OK;
  }
  bool opt = ck_type_is_option(a) || ck_type_is_option(b);
  ck_type va = ck_type_is_option(a) ? ck_type_element(a) : a;
  ck_type vb = ck_type_is_option(b) ? ck_type_element(b) : b;
  ck_type v = NULL;
  ck_status st = CK_OK;
  ck_type_id id = ck_type_id_of(va);
  if (ck_type_equal(va, vb)) {
    ck_type_incref(va);
    v = va;
  } else if (id != ck_type_id_of(vb)) {
    st = CK_ERR_TYPE;
  } else if (id == CK_TYPE_VAR_DIM || (id == CK_TYPE_FIXED_DIM &&
                                        ck_fixed_dim_size(va) == ck_fixed_dim_size(vb))) {
    ck_type e = NULL;
    st = join_nulls(ck_type_element(va), ck_type_element(vb), &e);
    if (st == CK_OK) {
      st = id == CK_TYPE_VAR_DIM ? ck_var_dim_type_new(e, &v)
                                 : ck_fixed_dim_type_new(ck_fixed_dim_size(va), e, &v);
    }
    ck_type_decref(e);
  } else if (id == CK_TYPE_STRUCT && ck_struct_field_count(va) == ck_struct_field_count(vb)) {
    size_t n = ck_struct_field_count(va), i = 0;
    const char **names = ck__calloc(n ? n : 1, sizeof *names, __func__);
    ck_type *types = ck__calloc(n ? n : 1, sizeof *types, __func__);
    st = names == NULL || types == NULL ? CK_ERR_NO_MEMORY : CK_OK;
    for (; st == CK_OK && i < n; i++) {
      const char *nb;
      ck_type fa, fb;
      (void)ck_struct_field(va, i, &names[i], &fa, NULL, NULL);
      (void)ck_struct_field(vb, i, &nb, &fb, NULL, NULL);
      st = strcmp(names[i], nb) != 0 ? CK_ERR_TYPE : join_nulls(fa, fb, &types[i]);
    }
    if (st == CK_OK) {
      st = ck_struct_type_new(n, names, types, &v);
    }
    for (size_t j = 0; types != NULL && j < n; j++) {
      ck_type_decref(types[j]);
    }
    ck__free(names);
    ck__free(types);
  } else {
    st = CK_ERR_TYPE;
  }
  if (st == CK_OK && opt) {
    st = ck_option_type_new(v, out);
    ck_type_decref(v);
  } else if (st == CK_OK) {
    *out = v;
  }
  return st;
}

ck_status ck_arrow_import_stream(struct ArrowArrayStream *stream,
                                 const ck_array_preamble *fill_arr,
                                 ck_array_preamble **out) {
  if (out == NULL) {
    if (stream != NULL && stream->release != NULL) stream->release(stream);
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  *out = NULL;
  if (stream == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the stream is NULL");
  }
  if (stream->release == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "the stream is released (already imported?)");
  }
  struct ArrowArrayStream s = *stream; /* moved */
  stream->release = NULL;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  ck_array_preamble **parts = NULL;
  size_t nparts = 0, cap = 0;
  ck_type el = NULL, t = NULL;
  ck_array_preamble *res = NULL;
  ck_status st = CK_OK;
  int rc = s.get_schema != NULL ? s.get_schema(&s, &schema) : 22;
  if (rc != 0) {
    st = stream_error(&s, rc, "get_schema");
  } else if (schema.release == NULL) {
    st = CK_ERROR(CK_ERR_INVALID_ARGUMENT, "get_schema gave a released schema");
  } else {
    st = ck_arrow_schema_type(&schema, &el);
  }
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(el, &t);
  }
  intptr_t total = 0;
  while (st == CK_OK) {
    struct ArrowArray arr;
    memset(&arr, 0, sizeof arr);
    rc = s.get_next != NULL ? s.get_next(&s, &arr) : 22;
    if (rc != 0) {
      st = stream_error(&s, rc, "get_next");
      break;
    }
    if (arr.release == NULL) {
      break; /* the end */
    }
    if (nparts == cap) {
      size_t ncap = cap ? 2 * cap : 4;
      ck_array_preamble **np = ck__realloc(parts, ncap * sizeof *np, __func__);
      if (np == NULL) {
        arr.release(&arr);
        st = CK_ERR_NO_MEMORY;
        break;
      }
      parts = np;
      cap = ncap;
    }
    st = ck_arrow_import(&schema, &arr, fill_arr, &parts[nparts]);
    if (st != CK_OK) {
      st = ck__error_context(st, "ck_arrow_import_stream", "array %zu of the stream",
                             nparts);
      break;
    }
    intptr_t len;
    (void)ck_array_shape(parts[nparts], &len, 1, NULL);
    nparts++;
    if (total > INTPTR_MAX - len) {
      st = CK_ERROR(CK_ERR_OVERFLOW, "the stream holds more than INTPTR_MAX elements");
      break;
    }
    total += len;
  }
  if (st == CK_OK && nparts == 1) {
    res = parts[0];
    parts[0] = NULL;
  } else if (st == CK_OK) {
    /* concatenate: one copy of every part into a new array of its own, of
     * the parts' element types joined (options wherever a part has nulls:
     * `N * ?T`, `N * var * ?T`, `N * ?var * T`, struct fields) */
    ck_type j = NULL;
    for (size_t i = 0; st == CK_OK && i < nparts; i++) {
      ck_type e = ck_type_element(ck_array_type(parts[i])), n = NULL;
      if (j == NULL) {
        ck_type_incref(e);
        j = e;
        continue;
      }
      st = join_nulls(j, e, &n);
      if (st == CK_ERR_TYPE) {
        char ta[256] = "", tb[256] = "";
        (void)ck_type_print(j, ta, sizeof ta, NULL);
        (void)ck_type_print(e, tb, sizeof tb, NULL);
        st = CK_ERROR(CK_ERR_TYPE, "array %zu of the stream has type %s, the ones before %s",
                      i, tb, ta);
      }
      ck_type_decref(j);
      j = n;
    }
    if (st == CK_OK && j != NULL) { /* (no parts: `strided * el`, empty) */
      ck_type_decref(t);
      t = NULL;
      st = ck_strided_dim_type_new(j, &t);
    }
    ck_type_decref(j);
    if (st == CK_OK) {
      st = ck_array_empty(t, &total, 1, CK_ARRAY_DEFAULT_FLAGS, &res);
    }
    if (st == CK_OK) { /* `var * ?T` rows: one allocation, one bitmap (all parts) */
      st = ck__var_option_rows_prepare(res, nparts, (const ck_array_preamble *const *)parts);
    }
    intptr_t pos = 0;
    for (size_t i = 0; st == CK_OK && i < nparts; i++) {
      intptr_t len;
      ck_array_preamble *view = NULL;
      (void)ck_array_shape(parts[i], &len, 1, NULL);
      st = ck_array_slice(res, 0, pos, pos + len, 1, &view);
      if (st == CK_OK) {
        st = ck_array_assign(view, parts[i], CK_ERRMODE_DEFAULT);
      }
      ck_array_decref(view);
      pos += len;
    }
  }
  for (size_t i = 0; i < nparts; i++) {
    ck_array_decref(parts[i]);
  }
  ck__free(parts);
  ck__arrow_schema_release(&schema);
  if (s.release != NULL) {
    s.release(&s);
  }
  ck_type_decref(el);
  ck_type_decref(t);
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}
