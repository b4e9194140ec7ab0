/*
 * arrow_nulls.c -- which nodes of an Arrow array import as option types
 * (`?T`): the type the import fills (arrow_import.c attaches the bitmaps).
 */
#include "interop/arrow_internal.h"
#include "types/type_internal.h"

/* Whether node `a` declares nulls: a validity buffer and a null count that
 * is not 0 (-1: unknown).  Read defensively -- the nodes are not checked
 * yet; anything malformed declares none here and is reported by fill. */
static bool declares_nulls(const struct ArrowArray *a) {
  return a != NULL && a->release != NULL && a->n_buffers > 0 && a->buffers != NULL &&
         a->buffers[0] != NULL && a->null_count != 0;
}

/* Child i of `a` when the node is well-formed enough to read it, else NULL. */
static const struct ArrowArray *child_of(const struct ArrowSchema *s,
                                         const struct ArrowArray *a, int64_t i) {
  if (a == NULL || a->release == NULL || a->n_children != s->n_children ||
      a->children == NULL || i >= a->n_children) {
    return NULL;
  }
  return a->children[i];
}

ck_status ck__arrow_with_options(ck_type t, const struct ArrowSchema *s,
                                 const struct ArrowArray *a, int depth, ck_type *out) {
  ck__arrow_format f;
  ck_type res = NULL;
  ck_status st = CK_OK;
  if (depth >= CK_TYPE_MAX_DEPTH || !ck__arrow_parse_format(s->format, &f)) {
    ck_type_incref(t);
    *out = t;
    return CK_OK;
  }
  ck_type_id id = ck_type_id_of(t);
  bool optionable = f.kind != CK__ARROW_FIXED_LIST && f.kind != CK__ARROW_NULL;
  if (f.kind == CK__ARROW_STRUCT && id == CK_TYPE_STRUCT &&
      ck_struct_field_count(t) == (size_t)s->n_children) {
    size_t n = ck_struct_field_count(t);
    const char **names = CK_CALLOC(n ? n : 1, sizeof *names);
    ck_type *types = CK_CALLOC(n ? n : 1, sizeof *types);
    bool changed = false;
    if (names == NULL || types == NULL) {
      st = CK_ERR_NO_MEMORY;
    }
    for (size_t i = 0; st == CK_OK && i < n; i++) {
      ck_type ft;
      (void)ck_struct_field(t, i, &names[i], &ft, NULL, NULL);
      st = ck__arrow_with_options(ft, s->children[i], child_of(s, a, (int64_t)i), depth + 1,
                        &types[i]);
      changed = changed || (st == CK_OK && types[i] != ft);
    }
    if (st == CK_OK && changed) {
      st = ck_struct_type_new(n, names, types, &res);
    }
    for (size_t i = 0; types != NULL && i < n; i++) {
      ck_type_decref(types[i]);
    }
    ck__free(names);
    ck__free(types);
  } else if (ck__arrow_is_list(f.kind) && id == CK_TYPE_VAR_DIM && s->n_children == 1) {
    ck_type el;
    st = ck__arrow_with_options(ck_type_element(t), s->children[0], child_of(s, a, 0), depth + 1,
                      &el);
    if (st == CK_OK && el != ck_type_element(t)) {
      st = ck_var_dim_type_new(el, &res);
    }
    ck_type_decref(el);
  } else if (f.kind == CK__ARROW_STRUCT || ck__arrow_is_list(f.kind)) {
    optionable = false; /* a type the schema pass mapped otherwise */
  }
  if (st != CK_OK) {
    ck_type_decref(res);
    return st;
  }
  if (res == NULL) {
    ck_type_incref(t);
    res = t;
  }
  if (optionable && declares_nulls(a) && ck_type_data_size(res) > 0) {
    ck_type opt;
    st = ck_option_type_new(res, &opt);
    ck_type_decref(res);
    if (st != CK_OK) {
      return st;
    }
    res = opt;
  }
  *out = res;
  return CK_OK;
}

