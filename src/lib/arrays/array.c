/* array.c -- array memblocks: construction, views, accessors, debug_repr
 * (see ckernel/array.h).
 *
 * Over 1000 lines and one concept: every function here makes or reads the
 * one ck_array_preamble layout (memblock header, arrmeta after it, data
 * reference) and shares its private helpers (ck__meta, the flag rules, the
 * arrmeta construction and destruction order). */
#include "memory/memblock_internal.h"
#include "types/type_internal.h"
#include "ckernel/validity.h"
#include "arrays/array_internal.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { CK_ARRAY_ALL_FLAGS = CK_ARRAY_READ | CK_ARRAY_WRITE | CK_ARRAY_IMMUTABLE };

static char *ck__meta(const ck_array_preamble *a) {
  return (char *)(a + 1);
}

/* Called by ck_memblock_free (memblock.c), which frees the block itself. */
static void ck__array_memblock_free(ck_memblock *mb) {
  ck_array_preamble *a = (ck_array_preamble *)mb;
  ck_type_arrmeta_destruct(a->type, ck__meta(a));
  ck_memblock_decref(a->data_ref);
  ck_type_decref(a->type);
  a->type = NULL;
  a->data_ref = NULL;
}

static void ck__array_memblock_debug(const ck_memblock *mb, char *buf, size_t bufsize,
                                     size_t *pos) {
  const ck_array_preamble *a = (const ck_array_preamble *)(const void *)mb;
  char type_str[128];
  ck_type_print(a->type, type_str, sizeof type_str, NULL);
  ck__appendf(buf, bufsize, pos, " type='%s' data=%p data_ref=%p flags=%u", type_str,
              (void *)a->data, (void *)a->data_ref, (unsigned)a->flags);
}

static const ck__memblock_ops ck__array_ops = {.release = ck__array_memblock_free,
                                               .debug = ck__array_memblock_debug};

static ck_status ck__check_flags(uint64_t flags, const char *func) {
  if (flags & ~(uint64_t)CK_ARRAY_ALL_FLAGS) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "unknown flag bits 0x%" PRIx64,
                     flags & ~(uint64_t)CK_ARRAY_ALL_FLAGS);
  }
  if ((flags & CK_ARRAY_WRITE) && (flags & CK_ARRAY_IMMUTABLE)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "flags WRITE and IMMUTABLE are mutually exclusive");
  }
  return CK_OK;
}

static ck_status ck__check_array(const ck_array_preamble *a, const char *func) {
  if (a == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "array must not be NULL");
  }
  if (a->memblock.kind != CK_MEMBLOCK_ARRAY) {
    return ck__error(CK_ERR_TYPE, func, "memblock of kind '%s' is not an array",
                     ck_memblock_kind_name(a->memblock.kind));
  }
  return CK_OK;
}

/* Bytes of C-contiguous data for `t` with the strided sizes in `shape`. */
static ck_status ck__default_data_size(ck_type t, const intptr_t *shape, size_t ndim,
                                      size_t *out, const char *func) {
  size_t count = 1, axis = 0;
  while (ck_type_flags(t) & CK_TYPE_FLAG_ARRMETA_SIZED) {
    if (axis >= ndim) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                       "the shape has no entry for the strided dim at axis %zu", axis);
    }
    if (shape[axis] < 0) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                       "negative size %" PRIdPTR " for axis %zu", shape[axis], axis);
    }
    if (!ck__mul_size(count, (size_t)shape[axis], &count)) {
      return ck__error(CK_ERR_OVERFLOW, func, "the number of elements overflows");
    }
    axis++;
    t = t->element;
  }
  if (!ck__mul_size(count, ck_type_data_size(t), out) || *out > PTRDIFF_MAX) {
    return ck__error(CK_ERR_OVERFLOW, func, "the data size overflows");
  }
  return CK_OK;
}

/* Re-report a failure with the type string in front, keeping NO_MEMORY as
 * it is (its message already names the allocating function). */
static ck_status ck__type_context(ck_status st, ck_type t, const char *func) {
  if (st == CK_ERR_NO_MEMORY) {
    return st;
  }
  char tb[128];
  size_t pos = 0;
  ck__type_append(t, tb, sizeof tb, &pos);
  return ck__error_context(st, func, "type '%s'", tb);
}

/* Ask for transparent huge pages on the page-aligned interior of a large
 * data block, as NumPy does for its arrays: writing 80 MB then takes tens of
 * page faults instead of twenty thousand.  Advice only: failures (no THP,
 * not an anonymous mapping) change nothing. */
enum { CK__HUGEPAGE_MIN = 4 << 20 };
static void ck__advise_hugepages(char *p, size_t n) {
#ifdef MADV_HUGEPAGE
  if (n < CK__HUGEPAGE_MIN) {
    return;
  }
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t b = ((uintptr_t)p + page - 1) & ~(page - 1);
  uintptr_t e = ((uintptr_t)p + n) & ~(page - 1);
  if (e > b) {
    (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
  }
#else
  (void)p;
  (void)n;
#endif
}

static bool ck__has_data_blockrefs(ck_type t);

/* The allocation behind ck_array_empty / ck_array_empty_uninit.  Data that
 * must read as zero (`zero`, or a type whose values hold blockrefs, whose
 * {begin, end} and var dim slots must start empty; an option's bitmap is
 * not in the data, so `?float64` data is left uninitialised too) comes from calloc where its alignment
 * allows (large blocks are fresh zero pages then: nothing is written), else
 * from an aligned allocation that is cleared. Otherwise only the preamble
 * and arrmeta are cleared and the data is left as the allocator gave it. */
static ck_status ck__array_new(ck_type type, const intptr_t *shape, size_t ndim,
                               uint64_t flags, bool zero, bool unfilled,
                               ck_array_preamble **out, const char *func) {
  if (out == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "out must not be NULL");
  }
  *out = NULL;
  if (!ck_type_is_valid(type)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "invalid type value %p",
                     (const void *)type);
  }
  if (ndim > 0 && shape == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "shape is NULL but ndim is %zu", ndim);
  }
  if (ck_type_flags(type) & CK_TYPE_FLAG_PATTERN) {
    return ck__pattern_error(type, func);
  }
  ck_status st = ck__check_flags(flags, func);
  if (st != CK_OK) {
    return st;
  }
  size_t data_size = 0;
  if ((st = ck__default_data_size(type, shape, ndim, &data_size, func)) != CK_OK) {
    return ck__type_context(st, type, func);
  }
  size_t align = ck_type_data_alignment(type);
  size_t header = sizeof(ck_array_preamble) + ck_type_arrmeta_size(type);
  size_t data_off, total;
  if (!ck__add_size(header, align - 1, &data_off)) {
    return ck__error(CK_ERR_OVERFLOW, func, "array size overflows");
  }
  data_off &= ~(align - 1);
  if (!ck__add_size(data_off, data_size, &total)) {
    return ck__error(CK_ERR_OVERFLOW, func, "array size overflows");
  }
  zero = !unfilled && (zero || ck__has_data_blockrefs(type) ||
                       ((ck_type_flags(type) & CK_TYPE_FLAG_BLOCKREF) &&
                        ck_type_id_of(ck_type_dtype(type)) == CK_TYPE_DICTIONARY));
  ck_array_preamble *a;
  if (zero && align <= 16 && _Alignof(max_align_t) >= 16) {
    a = ck__calloc(1, total, func);
  } else {
    a = ck__aligned_alloc(align > 16 ? align : 16, total, func);
    if (a != NULL) {
      memset(a, 0, zero ? total : data_off);
    }
  }
  if (a == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  if ((st = ck_type_arrmeta_construct(type, ck__meta(a), shape, ndim)) != CK_OK) {
    ck__free(a);
    return ck__type_context(st, type, func);
  }
  ck__memblock_init(&a->memblock, CK_MEMBLOCK_ARRAY, &ck__array_ops);
  ck_type_incref(type);
  a->type = type;
  a->data = (char *)a + data_off;
  a->flags = flags;
  a->data_ref = NULL;
  ck__advise_hugepages(a->data, data_size);
  if ((ck_type_flags(type) & CK_TYPE_FLAG_OPTION) && !(flags & CK_ARRAY_WRITE)) {
    a->flags |= CK_ARRAY_WRITE; /* to attach the bitmaps; restored below */
  }
  if ((ck_type_flags(type) & CK_TYPE_FLAG_OPTION) &&
      (st = ck_array_validity_alloc(a)) != CK_OK) {
    ck_array_decref(a);
    return st;
  }
  a->flags = flags;
  *out = a;
  return CK_OK;
}

ck_status ck_array_empty(ck_type type, const intptr_t *shape, size_t ndim,
                         uint64_t flags, ck_array_preamble **out) {
  return ck__array_new(type, shape, ndim, flags, true, false, out, __func__);
}

ck_status ck_array_empty_uninit(ck_type type, const intptr_t *shape, size_t ndim,
                                uint64_t flags, ck_array_preamble **out) {
  return ck__array_new(type, shape, ndim, flags, false, false, out, __func__);
}

ck_status ck__array_empty_unfilled(ck_type type, const intptr_t *shape, size_t ndim,
                                   uint64_t flags, ck_array_preamble **out) {
  return ck__array_new(type, shape, ndim, flags, false, true, out, __func__);
}

/* True if values of `t` point into arenas (strings, bytes, var dims,
 * pointers); an option's own blockref is its bitmap, not data. */
static bool ck__has_data_blockrefs(ck_type t) {
  if (!(ck_type_flags(t) & CK_TYPE_FLAG_BLOCKREF)) {
    return false;
  }
  switch (t->id) {
  case CK_TYPE_DICTIONARY: /* data: indices; the blockref is the values array */
    return false;
  case CK_TYPE_OPTION:
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM:
    return ck__has_data_blockrefs(t->element);
  case CK_TYPE_STRUCT:
    for (size_t i = 0; i < t->field_count; i++) {
      if (ck__has_data_blockrefs(t->field_types[i])) {
        return true;
      }
    }
    return false;
  default:
    return true;
  }
}

ck_status ck_array_view_external(ck_type type, char *data, const intptr_t *shape,
                                 const intptr_t *strides, size_t ndim, uint64_t flags,
                                 ck_memblock *owner, ck_array_preamble **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (!ck_type_is_valid(type)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid type value %p", (const void *)type);
  }
  if (data == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "data must not be NULL");
  }
  if (ndim > 0 && shape == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "shape is NULL but ndim is %zu", ndim);
  }
  ck_status st = ck__check_flags(flags, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (ck__has_data_blockrefs(type)) {
    char tb[128];
    size_t pos = 0;
    ck__type_append(type, tb, sizeof tb, &pos);
    return CK_ERROR(CK_ERR_TYPE,
                    "type '%s' has blockrefs (strings, bytes, var dims or "
                    "pointers) and cannot view foreign memory", tb);
  }
  ck_array_preamble *a = CK_MALLOC(sizeof *a + ck_type_arrmeta_size(type));
  if (a == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  memset(a, 0, sizeof *a);
  if ((st = ck_type_arrmeta_construct(type, ck__meta(a), shape, ndim)) != CK_OK) {
    ck__free(a);
    return ck__type_context(st, type, __func__);
  }
  if (strides != NULL) {
    /* Construction consumed one shape entry per leading fixed/strided dim. */
    char *m = ck__meta(a);
    for (size_t i = 0; i < ndim; i++) {
      ((ck_dim_arrmeta *)m)->stride = strides[i];
      m += sizeof(ck_dim_arrmeta);
    }
  }
  ck__memblock_init(&a->memblock, CK_MEMBLOCK_ARRAY, &ck__array_ops);
  ck_type_incref(type);
  ck_memblock_incref(owner);
  a->type = type;
  a->data = data;
  a->flags = flags;
  a->data_ref = owner;
  *out = a;
  return CK_OK;
}

void ck_array_incref(ck_array_preamble *a) {
  if (a != NULL) {
    ck_memblock_incref(&a->memblock);
  }
}

void ck_array_decref(ck_array_preamble *a) {
  if (a != NULL) {
    ck_memblock_decref(&a->memblock);
  }
}

/* ---- views -------------------------------------------------------------------- */

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
  char *dst = ck__meta(v);
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
  const char *src_meta = ck__meta(a);
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
  char *rm = ck__meta(r);
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
  ck_status st = ck__check_array(a, func);
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
  const char *src = ck__meta(a);
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
  char *dst = ck__meta(v);
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
  ck__memblock_init(&v->memblock, CK_MEMBLOCK_ARRAY, &ck__array_ops);
  v->type = new_type;
  v->data = data;
  v->flags = a->flags;
  ck_memblock_incref(data_ref);
  v->data_ref = data_ref;
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
  ck_status st = ck__check_array(a, __func__);
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
  const char *src = ck__meta(a);
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
  char *dst = ck__meta(v);
  ck_type_arrmeta_copy(ftype, dst + off, src + off + am_off);
  if (last_var >= 0) {
    ((ck_var_dim_arrmeta *)(dst + offs[last_var]))->offset = var_offset;
  }
  ck_memblock *data_ref = a->data_ref != NULL ? a->data_ref : &a->memblock;
  ck__memblock_init(&v->memblock, CK_MEMBLOCK_ARRAY, &ck__array_ops);
  v->type = new_type;
  v->data = data;
  v->flags = a->flags;
  ck_memblock_incref(data_ref);
  v->data_ref = data_ref;
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
  ck_status st = ck__check_array(a, __func__);
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
  const char *m = ck__meta(a);
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
  char *dst = ck__meta(v);
  for (size_t i = 0; i < ndim; i++) {
    ck_dim_arrmeta d = {shape[i], strides[i]};
    memcpy(dst + i * sizeof d, &d, sizeof d);
  }
  ck_type_arrmeta_copy(elem, dst + ndim * sizeof(ck_dim_arrmeta),
                       m + k * sizeof(ck_dim_arrmeta));
  ck_memblock *data_ref = a->data_ref != NULL ? a->data_ref : &a->memblock;
  ck__memblock_init(&v->memblock, CK_MEMBLOCK_ARRAY, &ck__array_ops);
  v->type = new_type;
  v->data = (char *)((uintptr_t)a->data + (uintptr_t)offset);
  v->flags = a->flags;
  ck_memblock_incref(data_ref);
  v->data_ref = data_ref;
  *out = v;
  return CK_OK;
}

/* ---- accessors ------------------------------------------------------------------ */

ck_type ck_array_type(const ck_array_preamble *a) { return a ? a->type : NULL; }

char *ck_array_arrmeta(const ck_array_preamble *a) { return a ? ck__meta(a) : NULL; }

const char *ck_array_data(const ck_array_preamble *a) { return a ? a->data : NULL; }

uint64_t ck_array_flags(const ck_array_preamble *a) { return a ? a->flags : 0; }

size_t ck_array_ndim(const ck_array_preamble *a) {
  return a ? ck_type_ndim(a->type) : 0;
}

static void ck__flag_names(uint64_t flags, char *buf, size_t n) {
  size_t pos = 0;
  buf[0] = '\0';
  static const char *const names[] = {"read_access", "write_access", "immutable"};
  for (int i = 0; i < 3; i++) {
    if (flags & ((uint64_t)1 << i)) {
      ck__appendf(buf, n, &pos, "%s%s", pos ? " " : "", names[i]);
    }
  }
}

static ck_status ck__require_write(const ck_array_preamble *a, const char *func) {
  if (!(a->flags & CK_ARRAY_WRITE)) {
    char names[64];
    ck__flag_names(a->flags, names, sizeof names);
    return ck__error(CK_ERR_INVALID_STATE, func,
                     "the array is read-only (flags %" PRIu64 ": %s)", a->flags,
                     names[0] ? names : "none");
  }
  return CK_OK;
}

ck_status ck_array_writable_data(const ck_array_preamble *a, char **out_data) {
  if (out_data == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out_data must not be NULL");
  }
  *out_data = NULL;
  ck_status st = ck__check_array(a, __func__);
  if (st == CK_OK) {
    st = ck__require_write(a, __func__);
  }
  if (st == CK_OK) {
    *out_data = a->data;
  }
  return st;
}

ck_status ck_array_set_readonly(ck_array_preamble *a) {
  ck_status st = ck__check_array(a, __func__);
  if (st == CK_OK) {
    a->flags &= ~(uint64_t)CK_ARRAY_WRITE;
  }
  return st;
}

ck_status ck_array_set_immutable(ck_array_preamble *a) {
  ck_status st = ck__check_array(a, __func__);
  if (st == CK_OK) {
    a->flags = (a->flags & ~(uint64_t)CK_ARRAY_WRITE) | CK_ARRAY_IMMUTABLE;
  }
  return st;
}

static ck_status ck__dims_query(const ck_array_preamble *a, intptr_t *out, size_t max,
                               size_t *out_ndim, bool strides, const char *func) {
  ck_status st = ck__check_array(a, func);
  if (st != CK_OK) {
    return st;
  }
  if (out == NULL && max != 0) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "output is NULL but max is %zu", max);
  }
  const char *m = ck__meta(a);
  size_t k = 0;
  for (ck_type t = a->type; ck__is_dim(t); t = t->element, k++) {
    intptr_t v;
    if (t->id == CK_TYPE_VAR_DIM) {
      const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)m;
      if (strides) {
        v = vm->stride;
      } else if (k == 0) {
        v = (intptr_t)((const ck_var_dim_data *)a->data)->size;
      } else {
        v = -1;
      }
    } else {
      const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)m;
      v = strides ? dm->stride : dm->size;
    }
    if (k < max) {
      out[k] = v;
    }
    m += ck__dim_header_size(t);
  }
  if (out_ndim != NULL) {
    *out_ndim = k;
  }
  return CK_OK;
}

ck_status ck_array_shape(const ck_array_preamble *a, intptr_t *out_shape, size_t max,
                         size_t *out_ndim) {
  return ck__dims_query(a, out_shape, max, out_ndim, false, __func__);
}

ck_status ck_array_strides(const ck_array_preamble *a, intptr_t *out_strides,
                           size_t max, size_t *out_ndim) {
  return ck__dims_query(a, out_strides, max, out_ndim, true, __func__);
}

ck_status ck_array_string_assign(ck_array_preamble *a, const char *bytes, size_t len) {
  ck_status st = ck__check_array(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_type_id id = ck_type_id_of(a->type);
  if (id != CK_TYPE_STRING && id != CK_TYPE_BYTES) {
    return CK_ERROR(CK_ERR_TYPE, "the array's type is not string or bytes");
  }
  if ((st = ck__require_write(a, __func__)) != CK_OK) {
    return st;
  }
  if (id == CK_TYPE_BYTES) {
    return ck_bytes_assign(a->type, a->data, ck__meta(a), bytes, len);
  }
  return ck_string_assign(a->data, ck__meta(a), bytes, len);
}

ck_status ck_array_var_dim_alloc(ck_array_preamble *a, size_t count) {
  ck_status st = ck__check_array(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (ck_type_id_of(a->type) != CK_TYPE_VAR_DIM) {
    return CK_ERROR(CK_ERR_TYPE, "the array's type is not a var dim");
  }
  if ((st = ck__require_write(a, __func__)) != CK_OK) {
    return st;
  }
  return ck_var_dim_alloc(a->type, a->data, ck__meta(a), count);
}

/* ---- debug_repr -------------------------------------------------------------------- */

ck_status ck_array_debug_repr(const ck_array_preamble *a, char *buf, size_t bufsize,
                              size_t *out_len) {
  if (buf == NULL && bufsize != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "buf is NULL but bufsize is %zu", bufsize);
  }
  ck_status st = ck__check_array(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  size_t pos = 0;
  if (bufsize != 0) {
    buf[0] = '\0';
  }
  char names[64];
  ck__flag_names(a->flags, names, sizeof names);
  ck__appendf(buf, bufsize, &pos,
              "------ array\n address: %p\n refcount: %u\n type:\n  pointer: %p\n"
              "  type: ",
              (const void *)a, (unsigned)ck_memblock_refcount(&a->memblock),
              (const void *)a->type);
  ck__type_append(a->type, buf, bufsize, &pos);
  ck__appendf(buf, bufsize, &pos,
              "\n arrmeta:\n  flags: %" PRIu64 " (%s)\n  type-specific arrmeta:\n",
              a->flags, names);
  if (ck_type_arrmeta_size(a->type) == 0) {
    ck__appendf(buf, bufsize, &pos, "   (none)\n");
  } else {
    ck__arrmeta_debug_append(a->type, ck__meta(a), buf, bufsize, &pos, 3);
  }
  ck__appendf(buf, bufsize, &pos, " data:\n   pointer: %p\n   reference: %p",
              (void *)a->data, (void *)a->data_ref);
  if (a->data_ref == NULL) {
    ck__appendf(buf, bufsize, &pos, " (embedded in array memory)\n");
  } else {
    ck__appendf(buf, bufsize, &pos, " (%s memblock, refcount %u)\n",
                ck_memblock_kind_name(a->data_ref->kind),
                (unsigned)ck_memblock_refcount(a->data_ref));
  }
  ck__appendf(buf, bufsize, &pos, "------\n");
  if (out_len != NULL) {
    *out_len = pos;
  }
  return CK_OK;
}
