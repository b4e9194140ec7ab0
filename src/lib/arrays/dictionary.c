/* dictionary.c -- dictionary columns: made over indices and values, their
 * parts, decoding (see ckernel/dictionary.h). */
#include "arrays/dictionary_internal.h"
#include "types/type_internal.h"
#include "ckernel/validity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The index at p of integer type `id` as int64 (uint64 above INT64_MAX is
 * -1: out of range either way). */
static int64_t ck__index_at(ck_type_id id, const char *p) {
  switch (id) {
  case CK_TYPE_INT8: { int8_t v; memcpy(&v, p, 1); return v; }
  case CK_TYPE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
  case CK_TYPE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
  case CK_TYPE_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
  case CK_TYPE_UINT8: { uint8_t v; memcpy(&v, p, 1); return v; }
  case CK_TYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
  case CK_TYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
  case CK_TYPE_UINT64: {
    uint64_t v;
    memcpy(&v, p, 8);
    return v > (uint64_t)INT64_MAX ? -1 : (int64_t)v;
  }
  default: return -1;
  }
}

/* A one-dim array's dim arrmeta and element type: `N * T` or `strided * T`. */
static ck_status ck__one_dim(const ck_array_preamble *a, const char *what, const char *func,
                             const ck_dim_arrmeta **dim, ck_type *el) {
  ck_type t = a != NULL ? a->type : NULL;
  if (t == NULL || ck_type_ndim(t) != 1 ||
      (ck_type_id_of(t) != CK_TYPE_FIXED_DIM && ck_type_id_of(t) != CK_TYPE_STRIDED_DIM)) {
    char tb[96];
    return ck__error(CK_ERR_TYPE, func, "%s must be a one-dim array ('N * T' or 'strided * T'), "
                     "not '%s'", what, t != NULL ? ck__type_str(t, tb, sizeof tb) : "NULL");
  }
  *dim = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(a);
  *el = t->element;
  return CK_OK;
}

/* Whether every one of the `n` indices at `data` (`stride` apart), null
 * slots included, is in [0, nvalues): one branch-free pass (vectorised for
 * contiguous indices); a negative index is a huge unsigned one. */
#define CK__ALL_IN(T, WIDEN)                                                    \
  do {                                                                          \
    uint64_t bad = 0;                                                           \
    if (contig) {                                                               \
      const T *q = (const T *)(const void *)data;                               \
      for (intptr_t i = 0; i < n; i++) bad |= (uint64_t)(WIDEN)q[i] >= lim;     \
    } else {                                                                    \
      for (intptr_t i = 0; i < n; i++) {                                        \
        T v;                                                                    \
        memcpy(&v, data + i * stride, sizeof v);                                \
        bad |= (uint64_t)(WIDEN)v >= lim;                                       \
      }                                                                         \
    }                                                                           \
    return bad == 0;                                                            \
  } while (0)

static bool ck__all_in_range(ck_type_id id, const char *data, intptr_t n, intptr_t stride,
                             int64_t nvalues) {
  uint64_t lim = (uint64_t)nvalues;
  size_t w = ck_type_data_size(CK_BUILTIN(id));
  bool contig = stride == (intptr_t)w && (uintptr_t)data % w == 0;
  switch (id) {
  case CK_TYPE_INT8: CK__ALL_IN(int8_t, int64_t);
  case CK_TYPE_INT16: CK__ALL_IN(int16_t, int64_t);
  case CK_TYPE_INT32: CK__ALL_IN(int32_t, int64_t);
  case CK_TYPE_INT64: CK__ALL_IN(int64_t, int64_t);
  case CK_TYPE_UINT8: CK__ALL_IN(uint8_t, uint64_t);
  case CK_TYPE_UINT16: CK__ALL_IN(uint16_t, uint64_t);
  case CK_TYPE_UINT32: CK__ALL_IN(uint32_t, uint64_t);
  case CK_TYPE_UINT64: CK__ALL_IN(uint64_t, uint64_t);
  default: return false;
  }
}

/* Check the valid indices of `n` slots at `data` (`stride` apart) against
 * [0, nvalues); `opt`: their option arrmeta (NULL when not an option). */
static ck_status ck__check_indices(ck_type_id id, const char *data, intptr_t n,
                                   intptr_t stride, const ck_option_arrmeta *opt,
                                   int64_t nvalues, const char *func) {
  if (ck__all_in_range(id, data, n, stride, nvalues)) {
    return CK_OK;
  }
  for (intptr_t i = 0; i < n; i++) {
    const char *p = data + i * stride;
    int64_t k = ck__index_at(id, p);
    if (k >= 0 && k < nvalues) {
      continue;
    }
    bool valid = true;
    if (opt != NULL) {
      ck_status st = ck_option_get_valid(opt, p, &valid);
      if (st != CK_OK) {
        return st;
      }
    }
    if (valid) {
      char txt[32];
      if (id == CK_TYPE_UINT64) {
        uint64_t u;
        memcpy(&u, p, 8);
        snprintf(txt, sizeof txt, "%" PRIu64, u);
      } else {
        snprintf(txt, sizeof txt, "%" PRId64, k);
      }
      return ck__error(CK_ERR_INDEX, func, "dictionary index %s at position %" PRIdPTR
                       " is %s (the dictionary holds %" PRId64 " values: indices 0..%" PRId64
                       ")", txt, i, k < 0 ? "negative" : "out of range", nvalues,
                       nvalues - 1);
    }
  }
  return CK_OK;
}

ck_status ck_dictionary_array_new(ck_array_preamble *indices, ck_array_preamble *values,
                                  bool ordered, ck_array_preamble **out) {
  return ck__dictionary_array_wrap(indices, values, ordered, true, out);
}

ck_status ck__dictionary_array_wrap(ck_array_preamble *indices, ck_array_preamble *values,
                                    bool ordered, bool check, ck_array_preamble **out) {
  static const char *const func = "ck_dictionary_array_new";
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  const ck_dim_arrmeta *idim = NULL, *vdim = NULL;
  ck_type iel = NULL, vel = NULL;
  ck_status st = ck__one_dim(indices, "the indices", func, &idim, &iel);
  if (st == CK_OK) {
    st = ck__one_dim(values, "the values", func, &vdim, &vel);
  }
  if (st != CK_OK) {
    return st;
  }
  bool opt = ck_type_is_option(iel);
  ck_type ity = opt ? ck_type_element(iel) : iel;
  char k = ck_type_is_builtin(ity) ? ck_type_id_kind(ck_type_id_of(ity)) : 0;
  if (k != 'i' && k != 'u') {
    char tb[96];
    return CK_ERROR(CK_ERR_TYPE, "the indices must be integers (int8..uint64, with nulls "
                    "?int8..?uint64), not '%s'", ck__type_str(iel, tb, sizeof tb));
  }
  const ck_option_arrmeta *iopt =
      opt ? (const ck_option_arrmeta *)(const void *)(idim + 1) : NULL;
  if (check && (st = ck__check_indices(ck_type_id_of(ity), indices->data, idim->size,
                                       idim->stride, iopt, vdim->size, func)) != CK_OK) {
    return st;
  }
  ck_type dt = NULL, ot = NULL, t = NULL;
  st = ck_dictionary_type_new(ck_type_id_of(ity), vel, ordered, &dt);
  if (st == CK_OK && opt) {
    st = ck_option_type_new(dt, &ot);
  }
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(opt ? ot : dt, &t);
  }
  ck_array_preamble *res = NULL;
  if (st == CK_OK) {
    intptr_t n = idim->size, stride = idim->stride;
    /* the owner of the indices' data: its data_ref, or the array itself */
    ck_memblock *owner = indices->data_ref != NULL ? indices->data_ref : &indices->memblock;
    st = ck_array_view_external(t, indices->data, &n, &stride, 1,
                                indices->flags, owner, &res);
  }
  if (st == CK_OK) {
    char *m = ck_array_arrmeta(res) + sizeof(ck_dim_arrmeta);
    if (opt) { /* the same bitmap, keyed by the same data addresses */
      ck_option_arrmeta *om = (ck_option_arrmeta *)(void *)m;
      memcpy(om, iopt, sizeof *om);
      ck_memblock_incref(om->blockref);
      m += sizeof *om;
    }
    ck_dictionary_arrmeta *dm = (ck_dictionary_arrmeta *)(void *)m;
    ck_memblock_incref(&values->memblock);
    dm->values = &values->memblock;
  }
  ck_type_decref(dt);
  ck_type_decref(ot);
  ck_type_decref(t);
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}

/* The parts of a one-dim dictionary column. */
typedef struct ck__dict_parts {
  const ck_dim_arrmeta *dim;
  const ck_option_arrmeta *opt; /* NULL: no nulls */
  ck_type dict;                 /* the dictionary type (borrowed) */
  ck_array_preamble *values;    /* borrowed, may be NULL */
} ck__dict_parts;

static ck_status ck__parts(const ck_array_preamble *a, const char *func, ck__dict_parts *p) {
  ck_type el = NULL;
  ck_status st = ck__one_dim(a, "a dictionary column", func, &p->dim, &el);
  if (st != CK_OK) {
    return st;
  }
  const char *m = (const char *)(p->dim + 1);
  p->opt = NULL;
  if (ck_type_is_option(el)) {
    p->opt = (const ck_option_arrmeta *)(const void *)m;
    m += sizeof(ck_option_arrmeta);
    el = ck_type_element(el);
  }
  if (!ck_type_is_dictionary(el)) {
    char tb[96];
    return ck__error(CK_ERR_TYPE, func, "'%s' is not a dictionary column ('strided * "
                     "dictionary[I, V]')", ck__type_str(a->type, tb, sizeof tb));
  }
  p->dict = el;
  p->values = (ck_array_preamble *)(void *)((const ck_dictionary_arrmeta *)(const void *)m)
                  ->values;
  return CK_OK;
}

ck_status ck_dictionary_array_values(const ck_array_preamble *a,
                                     ck_array_preamble **out_values) {
  if (out_values == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out_values must not be NULL");
  }
  *out_values = NULL;
  ck__dict_parts p = {0};
  ck_status st = ck__parts(a, __func__, &p);
  if (st == CK_OK) {
    *out_values = p.values;
  }
  return st;
}

ck_status ck_dictionary_array_indices(ck_array_preamble *a, ck_array_preamble **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck__dict_parts p = {0};
  ck_status st = ck__parts(a, __func__, &p);
  if (st != CK_OK) {
    return st;
  }
  ck_type it = CK_BUILTIN(ck_dictionary_index_id(p.dict)), ot = NULL, t = NULL;
  if (p.opt != NULL) {
    st = ck_option_type_new(it, &ot);
  }
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(p.opt != NULL ? ot : it, &t);
  }
  ck_array_preamble *res = NULL;
  if (st == CK_OK) {
    intptr_t n = p.dim->size, stride = p.dim->stride;
    ck_memblock *owner = a->data_ref != NULL ? a->data_ref : &a->memblock;
    st = ck_array_view_external(t, a->data, &n, &stride, 1, a->flags, owner, &res);
  }
  if (st == CK_OK && p.opt != NULL) {
    ck_option_arrmeta *om =
        (ck_option_arrmeta *)(void *)(ck_array_arrmeta(res) + sizeof(ck_dim_arrmeta));
    memcpy(om, p.opt, sizeof *om);
    ck_memblock_incref(om->blockref);
  }
  ck_type_decref(ot);
  ck_type_decref(t);
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}

/* dst[i] = values[index i] for `n` indices all in range: typed loops for
 * the common value sizes. */
#define CK__GATHER_ES(IT, ES)                                                   \
  for (intptr_t i = 0; i < n; i++) {                                          \
    IT k;                                                                     \
    memcpy(&k, idx + i * istride, sizeof k);                                  \
    memcpy(dst + (size_t)i * (ES), vals + (intptr_t)k * vstride, (ES));       \
  }
#define CK__GATHER(IT)                                                          \
  do {                                                                          \
    switch (es) {                                                               \
    case 1: CK__GATHER_ES(IT, 1) break;                                         \
    case 2: CK__GATHER_ES(IT, 2) break;                                         \
    case 4: CK__GATHER_ES(IT, 4) break;                                         \
    case 8: CK__GATHER_ES(IT, 8) break;                                         \
    case 16: CK__GATHER_ES(IT, 16) break;                                       \
    default: CK__GATHER_ES(IT, es) break;                                       \
    }                                                                           \
  } while (0)

static void ck__gather(ck_type_id id, const char *idx, intptr_t n, intptr_t istride,
                       const char *vals, intptr_t vstride, size_t es, char *dst) {
  switch (id) {
  case CK_TYPE_INT8: CK__GATHER(int8_t); break;
  case CK_TYPE_INT16: CK__GATHER(int16_t); break;
  case CK_TYPE_INT32: CK__GATHER(int32_t); break;
  case CK_TYPE_INT64: CK__GATHER(int64_t); break;
  case CK_TYPE_UINT8: CK__GATHER(uint8_t); break;
  case CK_TYPE_UINT16: CK__GATHER(uint16_t); break;
  case CK_TYPE_UINT32: CK__GATHER(uint32_t); break;
  default: CK__GATHER(uint64_t); break;
  }
}

ck_status ck_dictionary_decode(const ck_array_preamble *a, ck_array_preamble **out) {
  static const char *const func = "ck_dictionary_decode";
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck__dict_parts p;
  ck_status st = ck__parts(a, func, &p);
  if (st != CK_OK) {
    return st;
  }
  ck_type vt = ck_dictionary_value_type(p.dict);
  ck_type_id iid = ck_dictionary_index_id(p.dict);
  intptr_t n = p.dim->size, stride = p.dim->stride;
  const ck_dim_arrmeta *vdim = NULL;
  const char *vdata = NULL, *vmeta = NULL;
  intptr_t nvalues = 0;
  if (p.values != NULL) {
    vdim = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(p.values);
    nvalues = vdim->size;
    vdata = p.values->data;
    vmeta = (const char *)(vdim + 1);
  }
  /* every index in range, null slots too: one typed pass, then the nulls */
  bool fast = n > 0 && nvalues > 0 && ck__all_in_range(iid, a->data, n, stride, nvalues);
  if (!fast && (st = ck__check_indices(iid, a->data, n, stride, p.opt, nvalues, func)) !=
                   CK_OK) {
    return st;
  }
  ck_type ot = NULL, t = NULL;
  if (p.opt != NULL) {
    st = ck_option_type_new(vt, &ot);
  }
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(p.opt != NULL ? ot : vt, &t);
  }
  ck_array_preamble *res = NULL;
  if (st == CK_OK) {
    st = ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &res);
  }
  if (st == CK_OK) {
    char *m = ck_array_arrmeta(res) + sizeof(ck_dim_arrmeta);
    const ck_option_arrmeta *rop = NULL;
    if (p.opt != NULL) {
      rop = (const ck_option_arrmeta *)(const void *)m;
      m += sizeof(ck_option_arrmeta);
    }
    if (vmeta != NULL) { /* share the values' arenas */
      ck_type_arrmeta_destruct(vt, m);
      ck_type_arrmeta_copy(vt, m, vmeta);
    }
    size_t es = ck_type_data_size(vt);
    if (fast) {
      ck__gather(iid, a->data, n, stride, vdata, vdim->stride, es, res->data);
    }
    for (intptr_t i = 0; fast && p.opt != NULL && i < n && st == CK_OK; i++) {
      bool valid = true;
      st = ck_option_get_valid(p.opt, a->data + i * stride, &valid);
      if (st == CK_OK && !valid) {
        memset(res->data + (size_t)i * es, 0, es);
        st = ck_option_set_valid(rop, res->data + (size_t)i * es, false);
      }
    }
    for (intptr_t i = 0; !fast && i < n && st == CK_OK; i++) {
      const char *src = a->data + i * stride;
      char *dst = res->data + (size_t)i * es;
      bool valid = true;
      if (p.opt != NULL) {
        st = ck_option_get_valid(p.opt, src, &valid);
        if (st == CK_OK && !valid) {
          st = ck_option_set_valid(rop, dst, false);
        }
      }
      if (st == CK_OK && valid) {
        memcpy(dst, vdata + ck__index_at(iid, src) * vdim->stride, es);
      }
    }
  }
  ck_type_decref(ot);
  ck_type_decref(t);
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}
