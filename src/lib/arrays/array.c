/* array.c -- array memblocks: construction, release, accessors, flags,
 * debug_repr (see ckernel/array.h); views are array_view.c's.  Every
 * function here makes or reads the one ck_array_preamble layout (memblock
 * header, arrmeta after it, data reference); array_internal.h gives the
 * views its private helpers (the arrmeta, the checks, the allocation). */
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

/* Called by ck_memblock_free (memblock.c), which frees the block itself. */
static void ck__array_memblock_free(ck_memblock *mb) {
  ck_array_preamble *a = (ck_array_preamble *)mb;
  ck_type_arrmeta_destruct(a->type, ck__array_meta(a));
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

ck_status ck__array_check(const ck_array_preamble *a, const char *func) {
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
ck_status ck__array_new(ck_type type, const intptr_t *shape, size_t ndim,
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
  if ((st = ck_type_arrmeta_construct(type, ck__array_meta(a), shape, ndim)) != CK_OK) {
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
  if ((st = ck_type_arrmeta_construct(type, ck__array_meta(a), shape, ndim)) != CK_OK) {
    ck__free(a);
    return ck__type_context(st, type, __func__);
  }
  if (strides != NULL) {
    /* Construction consumed one shape entry per leading fixed/strided dim. */
    char *m = ck__array_meta(a);
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

void ck__array_view_init(ck_array_preamble *v, ck_type type, char *data, uint64_t flags,
                         ck_memblock *data_ref) {
  ck__memblock_init(&v->memblock, CK_MEMBLOCK_ARRAY, &ck__array_ops);
  v->type = type;
  v->data = data;
  v->flags = flags;
  ck_memblock_incref(data_ref);
  v->data_ref = data_ref;
}

/* ---- accessors ------------------------------------------------------------------ */

ck_type ck_array_type(const ck_array_preamble *a) { return a ? a->type : NULL; }

char *ck_array_arrmeta(const ck_array_preamble *a) { return a ? ck__array_meta(a) : NULL; }

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
  ck_status st = ck__array_check(a, __func__);
  if (st == CK_OK) {
    st = ck__require_write(a, __func__);
  }
  if (st == CK_OK) {
    *out_data = a->data;
  }
  return st;
}

ck_status ck_array_set_readonly(ck_array_preamble *a) {
  ck_status st = ck__array_check(a, __func__);
  if (st == CK_OK) {
    a->flags &= ~(uint64_t)CK_ARRAY_WRITE;
  }
  return st;
}

ck_status ck_array_set_immutable(ck_array_preamble *a) {
  ck_status st = ck__array_check(a, __func__);
  if (st == CK_OK) {
    a->flags = (a->flags & ~(uint64_t)CK_ARRAY_WRITE) | CK_ARRAY_IMMUTABLE;
  }
  return st;
}

static ck_status ck__dims_query(const ck_array_preamble *a, intptr_t *out, size_t max,
                               size_t *out_ndim, bool strides, const char *func) {
  ck_status st = ck__array_check(a, func);
  if (st != CK_OK) {
    return st;
  }
  if (out == NULL && max != 0) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "output is NULL but max is %zu", max);
  }
  const char *m = ck__array_meta(a);
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
  ck_status st = ck__array_check(a, __func__);
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
    return ck_bytes_assign(a->type, a->data, ck__array_meta(a), bytes, len);
  }
  return ck_string_assign(a->data, ck__array_meta(a), bytes, len);
}

ck_status ck_array_var_dim_alloc(ck_array_preamble *a, size_t count) {
  ck_status st = ck__array_check(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (ck_type_id_of(a->type) != CK_TYPE_VAR_DIM) {
    return CK_ERROR(CK_ERR_TYPE, "the array's type is not a var dim");
  }
  if ((st = ck__require_write(a, __func__)) != CK_OK) {
    return st;
  }
  return ck_var_dim_alloc(a->type, a->data, ck__array_meta(a), count);
}

/* ---- debug_repr -------------------------------------------------------------------- */

ck_status ck_array_debug_repr(const ck_array_preamble *a, char *buf, size_t bufsize,
                              size_t *out_len) {
  if (buf == NULL && bufsize != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "buf is NULL but bufsize is %zu", bufsize);
  }
  ck_status st = ck__array_check(a, __func__);
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
    ck__arrmeta_debug_append(a->type, ck__array_meta(a), buf, bufsize, &pos, 3);
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
