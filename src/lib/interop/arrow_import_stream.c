/*
 * arrow_import_stream.c -- ck_arrow_import_stream: the arrays of an
 * ArrowArrayStream, each imported (ck_arrow_import), concatenated into one
 * array (arrow.h).
 */
#include "interop/arrow_internal.h"

#include <string.h>

static ck_status stream_error(struct ArrowArrayStream *s, int rc, const char *what) {
  const char *msg = s->get_last_error != NULL ? s->get_last_error(s) : NULL;
  /* ENOMEM (12) stays out of memory; any other errno is the producer's */
  return ck__error(rc == 12 ? CK_ERR_NO_MEMORY : CK_ERR_BACKEND, "ck_arrow_import_stream",
                   "%s failed (error %d): %s",
                   what, rc, msg != NULL ? msg : "no message");
}

/* `strided * ?el` in *out (new reference). */
static ck_status option_of(ck_type el, ck_type *out) {
  ck_type opt;
  ck_status st = ck_option_type_new(el, &opt);
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(opt, out);
    ck_type_decref(opt);
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
    /* concatenate: one copy of every part into a new array of its own, an
     * option array `N * ?T` when any part has nulls */
    for (size_t i = 0; st == CK_OK && i < nparts; i++) {
      if (ck_type_is_option(ck_type_dtype(ck_array_type(parts[i])))) {
        ck_type_decref(t);
        t = NULL;
        st = option_of(el, &t);
        break;
      }
    }
    if (st == CK_OK) {
      st = ck_array_empty(t, &total, 1, CK_ARRAY_DEFAULT_FLAGS, &res);
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
