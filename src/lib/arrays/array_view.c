/* array_view.c -- views of an array (see ckernel/array.h): index and slice
 * along an axis (var dims too, ck_array_index / ck_array_slice), a struct
 * field (ck_array_field) and re-strided dims (ck_array_view_dims).  A view
 * is a new preamble over the same data: its own type and arrmeta, a
 * reference to the data's owner (array.c makes and frees preambles). */
#include "memory/memblock_internal.h"
#include "types/type_internal.h"
#include "arrays/array_internal.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

static ck_status ck__norm_index(intptr_t index, intptr_t size, size_t axis,
                               intptr_t *out, const char *func) {
  intptr_t i = index < 0 ? index + size : index; /* size >= 0: no overflow */
  if (i < 0 || i >= size) {
    return ck__error(CK_ERR_INDEX,
                     func, "index %" PRIdPTR " is out of bounds for axis %zu with size %"
                     PRIdPTR, index, axis, size);
  }
  *out = i;
  return CK_OK;
}

/* Python's slice.indices(): clamps start/stop, returns the length. */
static intptr_t ck__slice_adjust(intptr_t len, intptr_t *start, intptr_t *stop,
                                intptr_t step) {
  intptr_t lo = step < 0 ? -1 : 0, hi = step < 0 ? len - 1 : len;
  intptr_t *ends[2] = {start, stop};
  for (int k = 0; k < 2; k++) {
    intptr_t *v = ends[k];
    if (*v == CK_SLICE_NONE) {
      *v = (k == 0) == (step < 0) ? hi : lo; /* start: first; stop: past last */
    } else if (*v < 0) {
      *v += len;
      if (*v < 0) {
        *v = lo;
      }
    } else if (*v >= len) {
      *v = hi;
    }
  }
  if (step < 0) {
    return *stop < *start ? (*start - *stop - 1) / (-step) + 1 : 0;
  }
  return *start < *stop ? (*stop - *start - 1) / step + 1 : 0;
}

/* Rebuild the dims path[0..axis) above a new inner type (consumes `inner`). */
static ck_status ck__rebuild(ck_type const *path, size_t axis, ck_type inner,
                            ck_type *out) {
  ck_type cur = inner;
  for (size_t k = axis; k-- > 0;) {
    ck_type dim = path[k], next;
    if (ck_type_equal(cur, dim->element)) {
      ck_type_incref(dim);
      next = dim;
    } else {
      ck_status st;
      switch (dim->id) {
      case CK_TYPE_FIXED_DIM: st = ck_fixed_dim_type_new(dim->fixed_size, cur, &next); break;
      case CK_TYPE_STRIDED_DIM: st = ck_strided_dim_type_new(cur, &next); break;
      default: st = ck_var_dim_type_new(cur, &next); break;
      }
      if (st != CK_OK) {
        ck_type_decref(cur);
        return st;
      }
    }
    ck_type_decref(cur);
    cur = next;
  }
  *out = cur;
  return CK_OK;
}

/* A new view preamble over the dims path[0..n) rebuilt above `inner`
 * (consumed): its type in *new_type, its arrmeta's first n dim headers copied
 * from `src` (at offs[k]; var dims take a reference to their block).  The
 * caller fills in the rest of the arrmeta and the preamble. */
static ck_status ck__view_prefix(ck_type const *path, size_t n, ck_type inner,
                                 const char *src, const size_t *offs, const char *func,
                                 ck_array_preamble **out, ck_type *new_type) {
  ck_status st = ck__rebuild(path, n, inner, new_type);
  if (st != CK_OK) {
    return st;
  }
  ck_array_preamble *v = ck__malloc(sizeof *v + ck_type_arrmeta_size(*new_type), func);
  if (v == NULL) {
    ck_type_decref(*new_type);
    return CK_ERR_NO_MEMORY;
  }
  char *dst = ck__array_meta(v);
  for (size_t k = 0; k < n; k++) {
    memcpy(dst + offs[k], src + offs[k], ck__dim_header_size(path[k]));
    if (path[k]->id == CK_TYPE_VAR_DIM) {
      ck_memblock_incref(((ck_var_dim_arrmeta *)(dst + offs[k]))->blockref);
    }
  }
  *out = v;
  return CK_OK;
}

/* Slicing the var dim at `axis` > 0 whose outer dims path[0..axis) are all
 * fixed/strided: every row has its own size, so the result is a new array of
 * the same type (own outer data, C-contiguous) whose var dim slots select
 * each row's slice.  The elements themselves are shared: the var dim
 * arrmeta (and everything below) is a copy of the source's, referencing the
 * same arena, with the stride multiplied by `step`. */
static ck_status ck__slice_inner_var(const char *func, ck_array_preamble *a, size_t axis,
                                     ck_type const *path, const size_t *offs,
                                     intptr_t start, intptr_t stop, intptr_t step,
                                     ck_array_preamble **out) {
  const char *src_meta = ck__array_meta(a);
  intptr_t shape[CK_TYPE_MAX_DEPTH], sstride[CK_TYPE_MAX_DEPTH];
  for (size_t k = 0; k < axis; k++) {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(src_meta + offs[k]);
    shape[k] = dm->size;
    sstride[k] = dm->stride;
  }
  const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(src_meta + offs[axis]);
  intptr_t new_stride = vm->stride;
  if (step != 1 && __builtin_mul_overflow(vm->stride, step, &new_stride)) {
    return ck__error(CK_ERR_OVERFLOW, func, "slice stride overflows");
  }
  ck_array_preamble *r = NULL;
  ck_status st = ck__array_new(a->type, shape, axis, a->flags, true, false, &r, func);
  if (st != CK_OK) {
    return st;
  }
  ck_type var = path[axis];
  char *rm = ck__array_meta(r);
  ck_type_arrmeta_destruct(var, rm + offs[axis]);
  ck_type_arrmeta_copy(var, rm + offs[axis], src_meta + offs[axis]);
  ck_var_dim_arrmeta *rvm = (ck_var_dim_arrmeta *)(rm + offs[axis]);
  rvm->stride = new_stride;
  rvm->offset = 0;
  intptr_t dstride[CK_TYPE_MAX_DEPTH], idx[CK_TYPE_MAX_DEPTH];
  size_t count = 1;
  for (size_t k = 0; k < axis; k++) {
    dstride[k] = ((const ck_dim_arrmeta *)(rm + offs[k]))->stride;
    idx[k] = 0;
    count *= (size_t)shape[k];
  }
  for (size_t n = 0; n < count; n++) {
    const char *sp = a->data;
    char *dp = r->data;
    for (size_t k = 0; k < axis; k++) {
      sp += idx[k] * sstride[k];
      dp += idx[k] * dstride[k];
    }
    ck_var_dim_data v;
    memcpy(&v, sp, sizeof v);
    if (v.size > (size_t)INTPTR_MAX) {
      ck_array_decref(r);
      return ck__error(CK_ERR_INVALID_STATE, func, "corrupt var dim size %zu", v.size);
    }
    intptr_t b = start, e = stop, off = 0;
    intptr_t len = ck__slice_adjust((intptr_t)v.size, &b, &e, step);
    ck_var_dim_data nv = {v.begin, (size_t)len};
    if (len > 0) {
      if (__builtin_mul_overflow(b, vm->stride, &off) ||
          __builtin_add_overflow(off, vm->offset, &off)) {
        ck_array_decref(r);
        return ck__error(CK_ERR_OVERFLOW, func, "slice offset overflows");
      }
      nv.begin = (char *)((uintptr_t)v.begin + (uintptr_t)off);
    }
    memcpy(dp, &nv, sizeof nv);
    for (size_t k = axis; k-- > 0;) { /* next row, row-major */
      if (++idx[k] < shape[k]) {
        break;
      }
      idx[k] = 0;
    }
  }
  *out = r;
  return CK_OK;
}

static ck_status ck__view_op(const char *func, ck_array_preamble *a, size_t axis,
                            bool is_index, intptr_t index, intptr_t start,
                            intptr_t stop, intptr_t step, ck_array_preamble **out) {
  if (out == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck__array_check(a, func);
  if (st != CK_OK) {
    return st;
  }
  size_t ndim = ck_type_ndim(a->type);
  if (axis >= ndim) {
    return ck__error(CK_ERR_INDEX, func,
                     "axis %zu is out of bounds for an array with %zu dimensions",
                     axis, ndim);
  }
  /* The dims down to `axis` and their arrmeta offsets. */
  ck_type path[CK_TYPE_MAX_DEPTH];
  size_t offs[CK_TYPE_MAX_DEPTH];
  size_t off = 0;
  ptrdiff_t last_var = -1;
  ck_type t = a->type;
  for (size_t k = 0; k <= axis; k++) {
    path[k] = t;
    offs[k] = off;
    if (k < axis && t->id == CK_TYPE_VAR_DIM) {
      last_var = (ptrdiff_t)k;
    }
    off += ck__dim_header_size(t);
    t = t->element;
  }
  ck_type dim = path[axis], elem = dim->element;
  const char *src = ck__array_meta(a);
  char *data = a->data;
  ck_memblock *data_ref = a->data_ref != NULL ? a->data_ref : &a->memblock;
  ck_type inner;
  intptr_t disp = 0;
  ck_dim_arrmeta new_dim = {0, 0};

  if (dim->id == CK_TYPE_VAR_DIM && !is_index) {
    if (step == 0) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, func, "slice step cannot be zero");
    }
    if (step < -INTPTR_MAX) {
      step = -INTPTR_MAX;
    }
    if (axis != 0) {
      if (last_var >= 0) {
        return ck__error(CK_ERR_NOT_SUPPORTED, func,
                         "cannot slice the var dim at axis %zu below the var dim at axis "
                         "%td; index the outer var dim first", axis, last_var);
      }
      return ck__slice_inner_var(func, a, axis, path, offs, start, stop, step, out);
    }
    /* The outermost var dim: its size is known, so the slice is a strided
     * dim over the selected elements, in the var dim's arena. */
    const ck_var_dim_data *vd = (const ck_var_dim_data *)a->data;
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)src;
    if (vd->size > (size_t)INTPTR_MAX) {
      return ck__error(CK_ERR_INVALID_STATE, func, "corrupt var dim size %zu", vd->size);
    }
    intptr_t len = ck__slice_adjust((intptr_t)vd->size, &start, &stop, step);
    if (len > 0) {
      intptr_t byte_off = 0;
      if (__builtin_mul_overflow(start, vm->stride, &byte_off) ||
          __builtin_add_overflow(byte_off, vm->offset, &byte_off)) {
        return ck__error(CK_ERR_OVERFLOW, func, "slice offset overflows");
      }
      data = (char *)((uintptr_t)vd->begin + (uintptr_t)byte_off);
      data_ref = vm->blockref;
    } /* else: no element is addressed; the data stays the (valid) slot */
    new_dim.size = len;
    if (len <= 1) {
      new_dim.stride = vm->stride;
    } else if (__builtin_mul_overflow(vm->stride, step, &new_dim.stride)) {
      return ck__error(CK_ERR_OVERFLOW, func, "slice stride overflows");
    }
    if ((st = ck_strided_dim_type_new(elem, &inner)) != CK_OK) {
      return st;
    }
  } else if (dim->id == CK_TYPE_VAR_DIM) {
    if (axis != 0) {
      return ck__error(CK_ERR_NOT_SUPPORTED, func,
                       "cannot index the var dim at axis %zu of every element at "
                       "once; index the outer axes first", axis);
    }
    const ck_var_dim_data *vd = (const ck_var_dim_data *)a->data;
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)src;
    if (vd->size > (size_t)INTPTR_MAX) {
      return ck__error(CK_ERR_INVALID_STATE, func, "corrupt var dim size %zu", vd->size);
    }
    intptr_t i = 0, byte_off = 0;
    if ((st = ck__norm_index(index, (intptr_t)vd->size, axis, &i, func)) != CK_OK) {
      return st;
    }
    if (__builtin_mul_overflow(i, vm->stride, &byte_off) ||
        __builtin_add_overflow(byte_off, vm->offset, &byte_off)) {
      return ck__error(CK_ERR_OVERFLOW, func, "element offset overflows");
    }
    data = (char *)((uintptr_t)vd->begin + (uintptr_t)byte_off);
    data_ref = vm->blockref;
    inner = elem;
    ck_type_incref(inner);
  } else {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(src + offs[axis]);
    if (is_index) {
      intptr_t i = 0;
      if ((st = ck__norm_index(index, dm->size, axis, &i, func)) != CK_OK) {
        return st;
      }
      if (__builtin_mul_overflow(i, dm->stride, &disp)) {
        return ck__error(CK_ERR_OVERFLOW, func, "element offset overflows");
      }
      inner = elem;
      ck_type_incref(inner);
    } else {
      if (step == 0) {
        return ck__error(CK_ERR_INVALID_ARGUMENT, func, "slice step cannot be zero");
      }
      if (step < -INTPTR_MAX) {
        step = -INTPTR_MAX; /* as Python does, so -step is representable */
      }
      intptr_t len = ck__slice_adjust(dm->size, &start, &stop, step);
      if (len > 0 && __builtin_mul_overflow(start, dm->stride, &disp)) {
        return ck__error(CK_ERR_OVERFLOW, func, "slice offset overflows");
      }
      new_dim.size = len;
      /* With at most one element the stride is never used: keep the old one
       * (a huge step on a short dim is fine in Python, so here too). */
      if (len <= 1) {
        new_dim.stride = dm->stride;
      } else if (__builtin_mul_overflow(dm->stride, step, &new_dim.stride)) {
        return ck__error(CK_ERR_OVERFLOW, func, "slice stride overflows");
      }
      if (dim->id == CK_TYPE_STRIDED_DIM || len == dim->fixed_size) {
        inner = dim;
        ck_type_incref(inner);
      } else if ((st = ck_fixed_dim_type_new(len, elem, &inner)) != CK_OK) {
        return st;
      }
    }
  }
  /* The displacement goes into the innermost var dim above the axis (every
   * element of it moves the same way), else into the data pointer. */
  intptr_t var_offset = 0;
  if (last_var >= 0) {
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(src + offs[last_var]);
    if (__builtin_add_overflow(vm->offset, disp, &var_offset)) {
      ck_type_decref(inner);
      return ck__error(CK_ERR_OVERFLOW, func, "var dim offset overflows");
    }
  } else {
    data = (char *)((uintptr_t)data + (uintptr_t)disp);
  }
  ck_type new_type;
  ck_array_preamble *v;
  if ((st = ck__view_prefix(path, axis, inner, src, offs, func, &v, &new_type)) != CK_OK) {
    return st;
  }
  char *dst = ck__array_meta(v);
  size_t elem_src = offs[axis] + ck__dim_header_size(dim);
  if (is_index) {
    ck_type_arrmeta_copy(elem, dst + offs[axis], src + elem_src);
  } else {
    memcpy(dst + offs[axis], &new_dim, sizeof new_dim);
    ck_type_arrmeta_copy(elem, dst + offs[axis] + sizeof new_dim, src + elem_src);
  }
  if (last_var >= 0) {
    ((ck_var_dim_arrmeta *)(dst + offs[last_var]))->offset = var_offset;
  }
  ck__array_view_init(v, new_type, data, a->flags, data_ref);
  *out = v;
  return CK_OK;
}

ck_status ck_array_index(ck_array_preamble *a, size_t axis, intptr_t index,
                         ck_array_preamble **out) {
  return ck__view_op(__func__, a, axis, true, index, 0, 0, 0, out);
}

ck_status ck_array_slice(ck_array_preamble *a, size_t axis, intptr_t start,
                         intptr_t stop, intptr_t step, ck_array_preamble **out) {
  return ck__view_op(__func__, a, axis, false, 0, start, stop, step, out);
}

ck_status ck_array_field(ck_array_preamble *a, const char *name, size_t len,
                         ck_array_preamble **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck__array_check(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (name == NULL && len != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "name is NULL but len is %zu", len);
  }
  ck_type path[CK_TYPE_MAX_DEPTH];
  size_t offs[CK_TYPE_MAX_DEPTH];
  size_t nd = 0, off = 0;
  ptrdiff_t last_var = -1;
  ck_type t = a->type;
  for (; ck__is_dim(t); t = t->element, nd++) {
    path[nd] = t;
    offs[nd] = off;
    if (t->id == CK_TYPE_VAR_DIM) {
      last_var = (ptrdiff_t)nd;
    }
    off += ck__dim_header_size(t);
  }
  if (ck_type_id_of(t) != CK_TYPE_STRUCT) {
    char tb[128];
    size_t pos = 0;
    ck__type_append(a->type, tb, sizeof tb, &pos);
    return CK_ERROR(CK_ERR_TYPE, "an array of type '%s' has no fields (not a struct)", tb);
  }
  size_t nfields = ck_struct_field_count(t), i;
  const char *fname = NULL;
  ck_type ftype = NULL;
  size_t am_off = 0;
  for (i = 0; i < nfields; i++) {
    ck_struct_field(t, i, &fname, &ftype, NULL, &am_off);
    if (strlen(fname) == len && (len == 0 || memcmp(fname, name, len) == 0)) {
      break;
    }
  }
  if (i == nfields) {
    return CK_ERROR(CK_ERR_INDEX, "the struct has no field '%.*s'", (int)(len > 64 ? 64 : len),
                    name != NULL ? name : "");
  }
  const char *src = ck__array_meta(a);
  uintptr_t disp = ((const uintptr_t *)(const void *)(src + off))[i];
  char *data = a->data;
  intptr_t var_offset = 0;
  if (last_var >= 0) {
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(src + offs[last_var]);
    if (disp > (uintptr_t)INTPTR_MAX ||
        __builtin_add_overflow(vm->offset, (intptr_t)disp, &var_offset)) {
      return CK_ERROR(CK_ERR_OVERFLOW, "var dim offset overflows");
    }
  } else {
    data = (char *)((uintptr_t)data + disp);
  }
  ck_type_incref(ftype);
  ck_type new_type;
  ck_array_preamble *v;
  if ((st = ck__view_prefix(path, nd, ftype, src, offs, __func__, &v, &new_type)) != CK_OK) {
    return st;
  }
  char *dst = ck__array_meta(v);
  ck_type_arrmeta_copy(ftype, dst + off, src + off + am_off);
  if (last_var >= 0) {
    ((ck_var_dim_arrmeta *)(dst + offs[last_var]))->offset = var_offset;
  }
  ck_memblock *data_ref = a->data_ref != NULL ? a->data_ref : &a->memblock;
  ck__array_view_init(v, new_type, data, a->flags, data_ref);
  *out = v;
  return CK_OK;
}

/* [lo, hi]: the byte offsets of the first bytes of the elements that `n`
 * dims of sizes `shape` and strides `strides` address, from `base`; false
 * on overflow.  Only meaningful when no size is 0. */
static bool ck__extent(const intptr_t *shape, const intptr_t *strides, size_t n,
                       intptr_t base, intptr_t *lo, intptr_t *hi) {
  *lo = *hi = base;
  for (size_t i = 0; i < n; i++) {
    intptr_t span;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &span)) {
      return false;
    }
    if (__builtin_add_overflow(span < 0 ? *lo : *hi, span, span < 0 ? lo : hi)) {
      return false;
    }
  }
  return true;
}

ck_status ck_array_view_dims(ck_array_preamble *a, size_t k, size_t ndim,
                             const intptr_t *shape, const intptr_t *strides,
                             intptr_t offset, ck_array_preamble **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck__array_check(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (ndim > 0 && (shape == NULL || strides == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "shape/strides are NULL but ndim is %zu", ndim);
  }
  if (ndim >= CK_TYPE_MAX_DEPTH) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "%zu dims exceed CK_TYPE_MAX_DEPTH", ndim);
  }
  if (k > ck_type_ndim(a->type)) {
    return CK_ERROR(CK_ERR_INDEX, "the array has %zu dims, not %zu",
                    ck_type_ndim(a->type), k);
  }
  intptr_t oshape[CK_TYPE_MAX_DEPTH], ostride[CK_TYPE_MAX_DEPTH];
  const char *m = ck__array_meta(a);
  ck_type elem = a->type;
  for (size_t i = 0; i < k; i++, elem = elem->element) {
    if (elem->id == CK_TYPE_VAR_DIM) {
      return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                      "dim %zu is a var dim: only fixed/strided dims can be re-strided", i);
    }
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(m + i * sizeof(ck_dim_arrmeta));
    oshape[i] = dm->size;
    ostride[i] = dm->stride;
  }
  size_t align = ck_type_data_alignment(elem);
  bool new_empty = false, old_empty = false;
  for (size_t i = 0; i < ndim; i++) {
    if (shape[i] < 0) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "negative size %" PRIdPTR " for dim %zu",
                      shape[i], i);
    }
    new_empty = new_empty || shape[i] == 0;
    if (shape[i] > 1 && strides[i] % (intptr_t)align != 0) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "stride %" PRIdPTR " of dim %zu is not a multiple of the element "
                      "alignment %zu", strides[i], i, align);
    }
  }
  for (size_t i = 0; i < k; i++) {
    old_empty = old_empty || oshape[i] == 0;
  }
  if (!new_empty) {
    intptr_t olo, ohi, nlo, nhi;
    if (offset % (intptr_t)align != 0) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "offset %" PRIdPTR " is not a multiple of the element alignment %zu",
                      offset, align);
    }
    if (old_empty || !ck__extent(oshape, ostride, k, 0, &olo, &ohi) ||
        !ck__extent(shape, strides, ndim, offset, &nlo, &nhi) || nlo < olo || nhi > ohi) {
      return CK_ERROR(CK_ERR_INDEX, "the view (%zu dims, offset %" PRIdPTR
                      ") reaches elements outside the array", ndim, offset);
    }
  } else {
    offset = 0;
  }
  ck_type new_type = elem;
  ck_type_incref(new_type);
  for (size_t i = ndim; i-- > 0;) {
    ck_type next;
    if ((st = ck_strided_dim_type_new(new_type, &next)) != CK_OK) {
      ck_type_decref(new_type);
      return st;
    }
    ck_type_decref(new_type);
    new_type = next;
  }
  ck_array_preamble *v = CK_MALLOC(sizeof *v + ck_type_arrmeta_size(new_type));
  if (v == NULL) {
    ck_type_decref(new_type);
    return CK_ERR_NO_MEMORY;
  }
  char *dst = ck__array_meta(v);
  for (size_t i = 0; i < ndim; i++) {
    ck_dim_arrmeta d = {shape[i], strides[i]};
    memcpy(dst + i * sizeof d, &d, sizeof d);
  }
  ck_type_arrmeta_copy(elem, dst + ndim * sizeof(ck_dim_arrmeta),
                       m + k * sizeof(ck_dim_arrmeta));
  ck_memblock *data_ref = a->data_ref != NULL ? a->data_ref : &a->memblock;
  ck__array_view_init(v, new_type, (char *)((uintptr_t)a->data + (uintptr_t)offset),
                      a->flags, data_ref);
  *out = v;
  return CK_OK;
}

