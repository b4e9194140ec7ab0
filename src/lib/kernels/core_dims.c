/*
 * core_dims.c -- kernels over core dimensions (see ckernel/core_dims.h):
 * matching operands to signature patterns, dimension variable bindings,
 * result types, and the lifted kernel around a core child.  Applying to
 * whole arrays is in apply.c (ck_array_apply_core).
 */
#include "ckernel/core_dims.h"

#include "kernels/lift_internal.h"
#include "types/type_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

intptr_t ck_dim_bindings_get(const ck_dim_bindings *b, const char *name) {
  if (b == NULL || name == NULL) {
    return -1;
  }
  for (size_t i = 0; i < b->count && i < CK_CORE_MAX_VARS; i++) {
    if (strcmp(b->names[i], name) == 0) {
      return b->sizes[i];
    }
  }
  return -1;
}

/* Bind `name` to `size` (the caller checked that it is not bound yet). */
static ck_status ck__bind(ck_dim_bindings *b, const char *name, intptr_t size,
                          const char *what, const char *func) {
  if (b->count >= CK_CORE_MAX_VARS) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "%s: more than %d dimension variables", what, CK_CORE_MAX_VARS);
  }
  b->names[b->count] = name;
  b->sizes[b->count] = size;
  snprintf(b->origins[b->count], sizeof b->origins[0], "%s", what);
  b->count++;
  return CK_OK;
}

/* Whether elements of type `t` pass as the signature's element `p`: the same
 * type, or `t` with options only where `p` has them (a `?T` pattern takes
 * `T` slots; a null-able row pattern `?var * ?T` takes rows without nulls,
 * `var * T`, and rows whose elements have no nulls). */
static bool ck__element_accepts(ck_type p, ck_type t) {
  if (ck_type_equal(p, t)) {
    return true;
  }
  if (ck_type_is_option(p)) {
    return ck__element_accepts(p->element, ck_type_is_option(t) ? t->element : t);
  }
  return ck_type_id_of(p) == CK_TYPE_VAR_DIM && ck_type_id_of(t) == CK_TYPE_VAR_DIM &&
         ck__element_accepts(p->element, t->element);
}

static ck_status ck__match(ck_type pattern, ck_type type, const char *arrmeta,
                           const char *what, ck_dim_bindings *b, size_t *out_outer,
                           const char *func) {
  char pb[128], tb[128];
  if (!ck_type_is_valid(pattern) || !ck_type_is_valid(type)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%s: invalid type", what);
  }
  size_t pn = ck_type_ndim(pattern), tn = ck_type_ndim(type);
  if (tn < pn) {
    /* CK_ERR_VALUE (a ValueError in Python), as NumPy's gufuncs report an
     * operand without enough dims */
    return ck__error(CK_ERR_VALUE, func,
                     "%s: '%s' has %zu dim%s, fewer than the %zu core dims of the "
                     "signature's '%s'", what, ck__type_str(type, tb, sizeof tb), tn,
                     tn == 1 ? "" : "s", pn, ck__type_str(pattern, pb, sizeof pb));
  }
  if (arrmeta == NULL && ck_type_arrmeta_size(type) != 0) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%s: arrmeta is NULL", what);
  }
  if (ck_type_is_option(pattern) && ck_type_ndim(pattern->element) > 0) {
    /* null-able rows, `?var * T`: an option is no dim, so data with null
     * rows matches it whole as its element; rows without nulls (`var * T`,
     * or strided dims) match the rows' own pattern */
    ck_type e = type;
    while (ck_type_ndim(e) > 0) {
      e = e->element;
    }
    if (!ck_type_is_option(e) || ck_type_ndim(e->element) == 0) {
      return ck__match(pattern->element, type, arrmeta, what, b, out_outer, func);
    }
  }
  ck_type t = type;
  const char *m = arrmeta;
  for (size_t i = 0; i < tn - pn; i++) {
    m += ck__dim_header_size(t);
    t = t->element;
  }
  ck_type p = pattern;
  for (size_t axis = 0; axis < pn; axis++) {
    bool var = t->id == CK_TYPE_VAR_DIM;
    intptr_t size = var ? -1 : ((const ck_dim_arrmeta *)(const void *)m)->size;
    switch (p->id) {
    case CK_TYPE_VAR_DIM:
      break;
    case CK_TYPE_FIXED_DIM:
      if (var) {
        return ck__error(CK_ERR_TYPE, func,
                         "%s: core dim %zu is a var dim; the signature's '%s' needs a "
                         "fixed or strided dim of size %" PRIdPTR " there",
                         what, axis, ck__type_str(pattern, pb, sizeof pb), p->fixed_size);
      }
      if (size != p->fixed_size) {
        return ck__error(CK_ERR_VALUE, func,
                         "%s: core dim %zu has size %" PRIdPTR
                         ", the signature's '%s' wants %" PRIdPTR,
                         what, axis, size, ck__type_str(pattern, pb, sizeof pb),
                         p->fixed_size);
      }
      break;
    case CK_TYPE_SYMBOLIC_DIM: {
      if (var) {
        return ck__error(CK_ERR_TYPE, func,
                         "%s: core dim %zu is a var dim; dimension variable %s of the "
                         "signature's '%s' needs a fixed or strided dim (a var dim in the "
                         "signature takes ragged data)",
                         what, axis, p->dim_name, ck__type_str(pattern, pb, sizeof pb));
      }
      size_t k = 0;
      while (k < b->count && strcmp(b->names[k], p->dim_name) != 0) {
        k++;
      }
      if (k == b->count) {
        ck_status st = ck__bind(b, p->dim_name, size, what, func);
        if (st != CK_OK) {
          return st;
        }
      } else if (b->sizes[k] != size) {
        return ck__error(CK_ERR_VALUE, func,
                         "dimension variable %s is %" PRIdPTR " in %s and %" PRIdPTR
                         " in %s (core dim %zu of '%s')",
                         p->dim_name, b->sizes[k], b->origins[k], size, what, axis,
                         ck__type_str(pattern, pb, sizeof pb));
      }
      break;
    }
    default:
      return ck__error(CK_ERR_TYPE, func,
                       "%s: the signature's '%s' has a strided dim; signatures take "
                       "fixed (3 *), symbolic (N *) and var dims",
                       what, ck__type_str(pattern, pb, sizeof pb));
    }
    m += ck__dim_header_size(t);
    t = t->element;
    p = p->element;
  }
  if (ck_type_flags(p) & CK_TYPE_FLAG_PATTERN) {
    return ck__error(CK_ERR_TYPE, func,
                     "%s: the signature's element type '%s' holds a dimension variable; "
                     "dimension variables are supported as dims, not inside struct "
                     "fields or pointers", what, ck__type_str(p, pb, sizeof pb));
  }
  /* a `?T` pattern takes `T` elements too: slots without nulls */
  if (!ck__element_accepts(p, t)) {
    return ck__error(CK_ERR_TYPE, func,
                     "%s: the elements are '%s', the signature's are '%s' (convert the "
                     "operand first)", what, ck__type_str(t, tb, sizeof tb),
                     ck__type_str(p, pb, sizeof pb));
  }
  if (out_outer != NULL) {
    *out_outer = tn - pn;
  }
  return CK_OK;
}

ck_status ck_core_match(ck_type pattern, ck_type type, const char *arrmeta,
                        const char *what, ck_dim_bindings *b, size_t *out_outer_ndim) {
  if (b == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "bindings must not be NULL");
  }
  return ck__match(pattern, type, arrmeta, what != NULL ? what : "operand", b,
                   out_outer_ndim, __func__);
}

/* "argument 3" */
static const char *ck__arg_name(size_t j, char *buf, size_t n) {
  snprintf(buf, n, "argument %zu", j);
  return buf;
}

/* Match every source (and the destination when `dst_type` is valid). */
static ck_status ck__match_all(ck_type dst_pattern, ck_type dst_type, const char *dst_arrmeta,
                               size_t nsrc, const ck_type *src_patterns,
                               const ck_type *src_types, const char *const *src_arrmeta,
                               ck_dim_bindings *b, size_t *outer, const char *func) {
  if (nsrc > CK_LIFT_MAX_NSRC) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%zu sources (at most %d)", nsrc,
                     CK_LIFT_MAX_NSRC);
  }
  if (nsrc > 0 && (src_patterns == NULL || src_types == NULL)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL source patterns or types");
  }
  memset(b, 0, sizeof *b);
  char name[32];
  for (size_t j = 0; j < nsrc; j++) {
    ck_status st = ck__match(src_patterns[j], src_types[j],
                             src_arrmeta != NULL ? src_arrmeta[j] : NULL,
                             ck__arg_name(j, name, sizeof name), b,
                             outer != NULL ? &outer[1 + j] : NULL, func);
    if (st != CK_OK) {
      return st;
    }
  }
  /* every variable of the result is bound by an argument */
  for (ck_type p = dst_pattern; ck__is_dim(p); p = p->element) {
    if (p->id == CK_TYPE_SYMBOLIC_DIM && ck_dim_bindings_get(b, p->dim_name) < 0) {
      char pb[128];
      return ck__error(CK_ERR_TYPE, func,
                       "the result's dimension variable %s (in '%s') is bound by no "
                       "argument", p->dim_name, ck__type_str(dst_pattern, pb, sizeof pb));
    }
  }
  if (ck_type_is_valid(dst_type)) {
    return ck__match(dst_pattern, dst_type, dst_arrmeta, "the result", b,
                     outer != NULL ? &outer[0] : NULL, func);
  }
  return CK_OK;
}

ck_status ck_core_result_type(ck_type dst_pattern, size_t nsrc, const ck_type *src_patterns,
                              const ck_type *src_types, const char *const *src_arrmeta,
                              ck_type *out_type, intptr_t *out_shape, size_t max,
                              size_t *out_nstrided, ck_dim_bindings *out_bindings) {
  if (out_type == NULL || (max > 0 && out_shape == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  *out_type = NULL;
  if (!ck_type_is_valid(dst_pattern)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid result pattern");
  }
  ck_dim_bindings b;
  size_t outer[1 + CK_LIFT_MAX_NSRC];
  ck_status st = ck__match_all(dst_pattern, NULL, NULL, nsrc, src_patterns, src_types,
                               src_arrmeta, &b, outer, __func__);
  if (st != CK_OK) {
    return st;
  }
  /* outer shapes of the sources, broadcast */
  intptr_t shapes[CK_LIFT_MAX_NSRC][CK_TYPE_MAX_DEPTH];
  const intptr_t *sp[CK_LIFT_MAX_NSRC];
  size_t nds[CK_LIFT_MAX_NSRC];
  for (size_t j = 0; j < nsrc; j++) {
    ck_type t = src_types[j];
    const char *m = src_arrmeta != NULL ? src_arrmeta[j] : NULL;
    for (size_t a = 0; a < outer[1 + j]; a++) {
      shapes[j][a] = t->id == CK_TYPE_VAR_DIM
                         ? CK_VAR_DIM_SIZE
                         : ((const ck_dim_arrmeta *)(const void *)m)->size;
      m += ck__dim_header_size(t);
      t = t->element;
    }
    sp[j] = shapes[j];
    nds[j] = outer[1 + j];
  }
  intptr_t res[CK_TYPE_MAX_DEPTH];
  size_t nd = 0;
  st = ck_broadcast_shapes(nsrc, sp, nds, res, CK_TYPE_MAX_DEPTH, &nd);
  if (st != CK_OK) {
    return st;
  }
  /* the full list of result dims: outer ones, then core ones */
  size_t pn = ck_type_ndim(dst_pattern);
  if (nd + pn > CK_TYPE_MAX_DEPTH) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the result would have %zu dims", nd + pn);
  }
  intptr_t all[CK_TYPE_MAX_DEPTH]; /* size, or CK_VAR_DIM_SIZE */
  for (size_t a = 0; a < nd; a++) {
    all[a] = res[a];
  }
  ck_type p = dst_pattern;
  for (size_t a = 0; a < pn; a++, p = p->element) {
    all[nd + a] = p->id == CK_TYPE_VAR_DIM        ? CK_VAR_DIM_SIZE
                  : p->id == CK_TYPE_FIXED_DIM    ? p->fixed_size
                                                  : ck_dim_bindings_get(&b, p->dim_name);
  }
  size_t total = nd + pn, first_var = total;
  for (size_t a = 0; a < total; a++) {
    if (all[a] == CK_VAR_DIM_SIZE) {
      first_var = a;
      break;
    }
  }
  if (first_var > max) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "the result has %zu strided dims, room for %zu", first_var, max);
  }
  ck_type t;
  if ((st = ck__dims_type_new(p /* the dtype */, all, total, first_var, &t)) != CK_OK) {
    return st;
  }
  for (size_t a = 0; a < first_var; a++) {
    out_shape[a] = all[a];
  }
  if (out_nstrided != NULL) {
    *out_nstrided = first_var;
  }
  if (out_bindings != NULL) {
    *out_bindings = b;
  }
  *out_type = t;
  return CK_OK;
}

ck_status ck_make_core_kernel(ck_kernel_builder *ckb, size_t offset, ck_type dst_pattern,
                              ck_type dst_type, const char *dst_arrmeta, size_t nsrc,
                              const ck_type *src_patterns, const ck_type *src_types,
                              const char *const *src_arrmeta, ck_kernel_request req,
                              ck_child_kernel_factory child, void *child_data,
                              size_t *out_end) {
  if (!ck_type_is_valid(dst_pattern) || !ck_type_is_valid(dst_type)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid destination type or pattern");
  }
  ck_dim_bindings b;
  size_t outer[1 + CK_LIFT_MAX_NSRC];
  ck_status st = ck__match_all(dst_pattern, dst_type, dst_arrmeta, nsrc, src_patterns,
                               src_types, src_arrmeta, &b, outer, __func__);
  if (st != CK_OK) {
    return st;
  }
  /* the core: what the match left after the outer dims (a null-able row
   * pattern `?var * T` is one dim of `var * T` data, none of `?var * T`) */
  size_t core[1 + CK_LIFT_MAX_NSRC];
  core[0] = ck_type_ndim(dst_type) - outer[0];
  for (size_t j = 0; j < nsrc; j++) {
    core[1 + j] = ck_type_ndim(src_types[j]) - outer[1 + j];
  }
  return ck_make_lifted_kernel(ckb, offset, dst_type, dst_arrmeta, nsrc, src_types,
                               src_arrmeta, core, req, child, child_data, out_end);
}
