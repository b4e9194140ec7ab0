/* types.c -- builtin and descriptor types, arrmeta (see ckernel/types.h). */
#include "types/type_internal.h"

#include <inttypes.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

_Static_assert(sizeof(_Atomic(uint32_t)) == sizeof(uint32_t),
               "atomic refcount must look like uint32 to cffi");
_Static_assert(offsetof(struct ck_type_desc, refcount) == 0,
               "refcount first, like ck_memblock");
_Static_assert(sizeof(struct ck_type_desc) % sizeof(void *) == 0,
               "struct field arrays follow the descriptor, pointer-aligned");

/* Descriptors alive, process-wide (ck_type_live_count). */
static atomic_int_fast64_t ck_live_types;

/* The public error messages name the public entry point, not the helper. */
#define ARRMETA_ERROR(st, ...) ck__error((st), "ck_type_arrmeta_construct", __VA_ARGS__)

/* ---- builtins ------------------------------------------------------------- */

typedef struct ck_builtin_info {
  const char *name;
  size_t size;
  size_t align;
} ck_builtin_info;

static const ck_builtin_info ck_builtins[CK_BUILTIN_TYPE_COUNT] = {
    [CK_TYPE_UNINITIALIZED] = {"uninitialized", 0, 1},
    [CK_TYPE_BOOL] = {"bool", 1, 1},
    [CK_TYPE_INT8] = {"int8", 1, alignof(int8_t)},
    [CK_TYPE_INT16] = {"int16", 2, alignof(int16_t)},
    [CK_TYPE_INT32] = {"int32", 4, alignof(int32_t)},
    [CK_TYPE_INT64] = {"int64", 8, alignof(int64_t)},
    [CK_TYPE_UINT8] = {"uint8", 1, alignof(uint8_t)},
    [CK_TYPE_UINT16] = {"uint16", 2, alignof(uint16_t)},
    [CK_TYPE_UINT32] = {"uint32", 4, alignof(uint32_t)},
    [CK_TYPE_UINT64] = {"uint64", 8, alignof(uint64_t)},
    [CK_TYPE_FLOAT16] = {"float16", 2, 2},
    [CK_TYPE_FLOAT32] = {"float32", 4, alignof(float)},
    [CK_TYPE_FLOAT64] = {"float64", 8, alignof(double)},
    /* C99 complex is laid out as float[2] / double[2]. */
    [CK_TYPE_COMPLEX64] = {"complex64", 8, alignof(float)},
    [CK_TYPE_COMPLEX128] = {"complex128", 16, alignof(double)},
};

static bool ck_builtin_valid(ck_type t) {
  uintptr_t id = (uintptr_t)t;
  return id >= 1 && id < CK_BUILTIN_TYPE_COUNT;
}

bool ck_type_is_valid(ck_type t) {
  return ck_type_is_builtin(t) ? ck_builtin_valid(t) : true;
}

const char *ck_type_id_name(ck_type_id id) {
  if ((unsigned)id >= 1 && (unsigned)id < CK_BUILTIN_TYPE_COUNT) {
    return ck_builtins[id].name;
  }
  switch (id) {
  case CK_TYPE_FIXED_DIM: return "fixed_dim";
  case CK_TYPE_STRIDED_DIM: return "strided_dim";
  case CK_TYPE_VAR_DIM: return "var_dim";
  case CK_TYPE_STRING: return "string";
  case CK_TYPE_BYTES: return "bytes";
  case CK_TYPE_STRUCT: return "struct";
  case CK_TYPE_POINTER: return "pointer";
  default: return "invalid";
  }
}

/* ---- generic queries ------------------------------------------------------ */

ck_type_id ck_type_id_of(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck_builtin_valid(t) ? (ck_type_id)(uintptr_t)t : CK_TYPE_UNINITIALIZED;
  }
  return (ck_type_id)t->id;
}

size_t ck_type_data_size(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck_builtin_valid(t) ? ck_builtins[(uintptr_t)t].size : 0;
  }
  return t->data_size;
}

size_t ck_type_data_alignment(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck_builtin_valid(t) ? ck_builtins[(uintptr_t)t].align : 1;
  }
  return t->data_alignment;
}

size_t ck_type_arrmeta_size(ck_type t) {
  return ck_type_is_builtin(t) ? 0 : t->arrmeta_size;
}

uint32_t ck_type_flags(ck_type t) { return ck_type_is_builtin(t) ? 0 : t->flags; }

uint32_t ck__type_depth(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck_builtin_valid(t) ? 1 : 0;
  }
  return t->depth;
}

size_t ck_type_ndim(ck_type t) {
  size_t n = 0;
  while (ck__is_dim(t)) {
    n++;
    t = t->element;
  }
  return n;
}

ck_type ck_type_element(ck_type t) {
  if (ck__is_dim(t) || (ck__is_desc(t) && t->id == CK_TYPE_POINTER)) {
    return t->element;
  }
  return NULL;
}

ck_type ck_type_dtype(ck_type t) {
  while (ck__is_dim(t)) {
    t = t->element;
  }
  return t;
}

intptr_t ck_fixed_dim_size(ck_type t) {
  return ck__is_desc(t) && t->id == CK_TYPE_FIXED_DIM ? t->fixed_size : -1;
}

size_t ck_bytes_type_alignment(ck_type t) {
  return ck__is_desc(t) && t->id == CK_TYPE_BYTES ? t->target_alignment : 0;
}

size_t ck_struct_field_count(ck_type t) {
  return ck__is_desc(t) && t->id == CK_TYPE_STRUCT ? t->field_count : 0;
}

ck_status ck_struct_field(ck_type t, size_t i, const char **out_name,
                          ck_type *out_type, size_t *out_data_offset,
                          size_t *out_arrmeta_offset) {
  if (!ck__is_desc(t) || t->id != CK_TYPE_STRUCT) {
    return CK_ERROR(CK_ERR_TYPE, "type is not a struct");
  }
  if (i >= t->field_count) {
    return CK_ERROR(CK_ERR_INDEX, "field index %zu is out of range for a struct "
                    "with %zu fields", i, t->field_count);
  }
  if (out_name != NULL) *out_name = t->field_names[i];
  if (out_type != NULL) *out_type = t->field_types[i];
  if (out_data_offset != NULL) *out_data_offset = t->field_data_offsets[i];
  if (out_arrmeta_offset != NULL) *out_arrmeta_offset = t->field_arrmeta_offsets[i];
  return CK_OK;
}

ck_status ck_struct_field_index(ck_type t, const char *name, size_t *out_index) {
  if (name == NULL || out_index == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "name and out_index must not be NULL");
  }
  if (!ck__is_desc(t) || t->id != CK_TYPE_STRUCT) {
    return CK_ERROR(CK_ERR_TYPE, "type is not a struct");
  }
  for (size_t i = 0; i < t->field_count; i++) {
    if (strcmp(t->field_names[i], name) == 0) {
      *out_index = i;
      return CK_OK;
    }
  }
  return CK_ERROR(CK_ERR_INDEX, "the struct has no field named '%s'", name);
}

int64_t ck_type_live_count(void) {
  return (int64_t)atomic_load_explicit(&ck_live_types, memory_order_relaxed);
}

/* ---- reference counting ---------------------------------------------------- */

void ck_type_incref(ck_type t) {
  if (ck__is_desc(t)) {
    struct ck_type_desc *d = (struct ck_type_desc *)t;
    atomic_fetch_add_explicit(&d->refcount, 1u, memory_order_relaxed);
  }
}

void ck_type_decref(ck_type t) {
  /* Iterative along the element chain; recursion only into struct fields,
   * which the depth limit bounds. */
  while (ck__is_desc(t)) {
    struct ck_type_desc *d = (struct ck_type_desc *)t;
    if (atomic_fetch_sub_explicit(&d->refcount, 1u, memory_order_release) != 1u) {
      return;
    }
    atomic_thread_fence(memory_order_acquire);
    ck_type next = d->element;
    for (size_t i = 0; i < d->field_count; i++) {
      ck_type_decref(d->field_types[i]);
    }
    d->id = CK_TYPE_UNINITIALIZED; /* poison: a use after free is visible */
    d->vtable = NULL;
    ck__free(d);
    atomic_fetch_sub_explicit(&ck_live_types, 1, memory_order_relaxed);
    t = next;
  }
}

/* ---- hashing and equality ------------------------------------------------------ */

static uint64_t ck_fmix64(uint64_t x) { /* splitmix64 finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 31;
  return x;
}

static uint64_t ck_hmix(uint64_t h, uint64_t x) {
  return ck_fmix64(h ^ (x + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2)));
}

static uint64_t ck_hash_cstr(const char *s) { /* FNV-1a */
  uint64_t h = 0xcbf29ce484222325u;
  for (; *s; s++) {
    h = (h ^ (unsigned char)*s) * 0x100000001b3u;
  }
  return h;
}

uint64_t ck_type_hash(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck_fmix64((uint64_t)(uintptr_t)t + 1);
  }
  return t->hash;
}

bool ck_type_equal(ck_type a, ck_type b) {
  if (a == b) {
    return true;
  }
  if (!ck__is_desc(a) || !ck__is_desc(b)) {
    return false;
  }
  if (a->id != b->id || a->hash != b->hash || a->depth != b->depth ||
      a->arrmeta_size != b->arrmeta_size) {
    return false;
  }
  return a->vtable->equal(a, b);
}

/* ---- printing -------------------------------------------------------------------- */

bool ck__is_identifier(const char *name, size_t len) {
  if (len == 0) {
    return false;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

void ck__type_append(ck_type t, char *buf, size_t bufsize, size_t *pos) {
  if (ck_type_is_builtin(t)) {
    ck__appendf(buf, bufsize, pos, "%s",
                ck_builtin_valid(t) ? ck_builtins[(uintptr_t)t].name : "<invalid type>");
    return;
  }
  t->vtable->print(t, buf, bufsize, pos);
}

ck_status ck_type_print(ck_type t, char *buf, size_t bufsize, size_t *out_len) {
  if (buf == NULL && bufsize != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "buf is NULL but bufsize is %zu", bufsize);
  }
  if (!ck_type_is_valid(t)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid type value %p", (const void *)t);
  }
  size_t pos = 0;
  if (bufsize != 0) {
    buf[0] = '\0';
  }
  ck__type_append(t, buf, bufsize, &pos);
  if (out_len != NULL) {
    *out_len = pos;
  }
  return CK_OK;
}

/* A type string for an error message (truncated to the buffer). */
static const char *ck_tstr(ck_type t, char *buf, size_t n) {
  size_t pos = 0;
  buf[0] = '\0';
  ck__type_append(t, buf, n, &pos);
  return buf;
}

void ck__arrmeta_debug_append(ck_type t, const char *arrmeta, char *buf,
                              size_t bufsize, size_t *pos, int indent) {
  if (ck__is_desc(t)) {
    t->vtable->arrmeta_debug_print(t, arrmeta, buf, bufsize, pos, indent);
  }
}

static void ck_blockref_append(const ck_memblock *mb, char *buf, size_t bufsize,
                               size_t *pos, int indent) {
  ck__appendf(buf, bufsize, pos, "%*sblockref: %p", indent, "", (const void *)mb);
  if (mb != NULL) {
    ck__appendf(buf, bufsize, pos, " (%s, refcount %u)",
                ck_memblock_kind_name(mb->kind), (unsigned)ck_memblock_refcount(mb));
  }
  ck__appendf(buf, bufsize, pos, "\n");
}

/* ---- arrmeta dispatch -------------------------------------------------------- */

ck_status ck_type_arrmeta_construct(ck_type t, char *arrmeta, const intptr_t *shape,
                                    size_t ndim) {
  if (!ck_type_is_valid(t)) {
    return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid type value %p",
                         (const void *)t);
  }
  if (ndim > 0 && shape == NULL) {
    return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT, "shape is NULL but ndim is %zu", ndim);
  }
  if (ck_type_is_builtin(t)) {
    if (ndim > 0) {
      return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT,
                           "shape has %zu entries more than the type has "
                           "fixed/strided dims", ndim);
    }
    return CK_OK;
  }
  if (arrmeta == NULL) {
    return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT, "arrmeta must not be NULL");
  }
  return t->vtable->arrmeta_construct(t, arrmeta, shape, ndim);
}

void ck_type_arrmeta_destruct(ck_type t, char *arrmeta) {
  if (ck__is_desc(t) && arrmeta != NULL) {
    t->vtable->arrmeta_destruct(t, arrmeta);
  }
}

void ck_type_arrmeta_copy(ck_type t, char *dst, const char *src) {
  if (ck__is_desc(t) && dst != NULL && src != NULL) {
    t->vtable->arrmeta_copy(t, dst, src);
  }
}

/* A non-dim type was given shape entries left over by the dims above it. */
static ck_status ck_extra_shape(size_t ndim) {
  return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT,
                       "shape has %zu entries more than the type has leading "
                       "fixed/strided dims", ndim);
}

/* Bytes one element of `t` spans in default C-contiguous layout, given its
 * constructed arrmeta (strided dims know their extent only from there). */
static intptr_t ck_default_extent(ck_type t, const char *arrmeta) {
  if (ck_type_flags(t) & CK_TYPE_FLAG_ARRMETA_SIZED) {
    const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)arrmeta;
    return m->size * m->stride; /* checked for overflow when constructed */
  }
  return (intptr_t)ck_type_data_size(t);
}

/* ---- descriptor allocation ------------------------------------------------------ */

static struct ck_type_desc *ck_desc_alloc(size_t extra, ck_type_id id,
                                          const ck_type_vtable *vt,
                                          const char *func) {
  size_t total;
  if (!ck__add_size(sizeof(struct ck_type_desc), extra, &total)) {
    ck__error(CK_ERR_OVERFLOW, func, "type descriptor size overflows");
    return NULL;
  }
  struct ck_type_desc *d = ck__malloc(total, func);
  if (d == NULL) {
    return NULL;
  }
  memset(d, 0, total);
  atomic_init(&d->refcount, 1u);
  d->id = (uint32_t)id;
  d->vtable = vt;
  d->data_alignment = 1;
  return d;
}

static ck_type ck_desc_finish(struct ck_type_desc *d) {
  d->hash = d->vtable->hash(d);
  atomic_fetch_add_explicit(&ck_live_types, 1, memory_order_relaxed);
  return d;
}

/* Checks shared by every constructor taking an element type. */
static ck_status ck_check_elem(ck_type elem, const char *what, bool need_fixed_size,
                               const char *func) {
  if (!ck_type_is_valid(elem)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%s is not a valid type (%p)",
                     what, (const void *)elem);
  }
  if (ck__type_depth(elem) >= CK_TYPE_MAX_DEPTH) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "type nesting would exceed %d levels", CK_TYPE_MAX_DEPTH);
  }
  if (need_fixed_size && (ck_type_flags(elem) & CK_TYPE_FLAG_ARRMETA_SIZED)) {
    char tb[96];
    return ck__error(CK_ERR_TYPE, func,
                     "%s needs a fixed data size, but '%s' has its size in "
                     "arrmeta (strided dims may only be the outermost dims)",
                     what, ck_tstr(elem, tb, sizeof tb));
  }
  return CK_OK;
}

/* ---- fixed and strided dims ------------------------------------------------------ */

static ck_status dim_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                               size_t ndim) {
  ck_dim_arrmeta *m = (ck_dim_arrmeta *)arrmeta;
  bool fixed = self->id == CK_TYPE_FIXED_DIM;
  intptr_t size;
  if (ndim > 0) {
    size = shape[0];
    if (size < 0) {
      return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT, "negative dimension size %" PRIdPTR,
                           size);
    }
    if (fixed && size != self->fixed_size) {
      return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT,
                           "shape entry %" PRIdPTR " does not match the fixed dim "
                           "of size %" PRIdPTR, size, self->fixed_size);
    }
    shape++;
    ndim--;
  } else if (fixed) {
    size = self->fixed_size;
  } else {
    return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT,
                         "the shape has no entry for a strided dim");
  }
  char *elem_meta = arrmeta + sizeof(ck_dim_arrmeta);
  ck_status st = ck_type_arrmeta_construct(self->element, elem_meta, shape, ndim);
  if (st != CK_OK) {
    return st;
  }
  intptr_t stride = ck_default_extent(self->element, elem_meta), extent;
  if (__builtin_mul_overflow(size, stride, &extent)) {
    ck_type_arrmeta_destruct(self->element, elem_meta);
    return ARRMETA_ERROR(CK_ERR_OVERFLOW, "dimension size %" PRIdPTR " times stride %"
                         PRIdPTR " overflows", size, stride);
  }
  m->size = size;
  m->stride = stride;
  return CK_OK;
}

static void dim_destruct(ck_type self, char *arrmeta) {
  ck_type_arrmeta_destruct(self->element, arrmeta + sizeof(ck_dim_arrmeta));
}

static void dim_copy(ck_type self, char *dst, const char *src) {
  memcpy(dst, src, sizeof(ck_dim_arrmeta));
  ck_type_arrmeta_copy(self->element, dst + sizeof(ck_dim_arrmeta),
                       src + sizeof(ck_dim_arrmeta));
}

static void dim_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  switch (self->id) {
  case CK_TYPE_FIXED_DIM:
    ck__appendf(buf, bufsize, pos, "%" PRIdPTR " * ", self->fixed_size);
    break;
  case CK_TYPE_STRIDED_DIM:
    ck__appendf(buf, bufsize, pos, "strided * ");
    break;
  default:
    ck__appendf(buf, bufsize, pos, "var * ");
    break;
  }
  ck__type_append(self->element, buf, bufsize, pos);
}

static void dim_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                      size_t *pos, int indent) {
  const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)arrmeta;
  ck__appendf(buf, bufsize, pos,
              "%*s%s arrmeta\n%*sstride: %" PRIdPTR "\n%*ssize: %" PRIdPTR "\n",
              indent, "", self->vtable->name, indent + 1, "", m->stride, indent + 1,
              "", m->size);
  ck__arrmeta_debug_append(self->element, arrmeta + sizeof(ck_dim_arrmeta), buf,
                           bufsize, pos, indent + 1);
}

static bool elem_equal(ck_type a, ck_type b) {
  return a->fixed_size == b->fixed_size && ck_type_equal(a->element, b->element);
}

static uint64_t elem_hash(ck_type self) {
  return ck_hmix(ck_hmix(self->id, (uint64_t)self->fixed_size),
                 ck_type_hash(self->element));
}

static const ck_type_vtable ck_fixed_dim_vtable = {
    "fixed_dim", dim_construct, dim_destruct, dim_copy, dim_print, dim_debug,
    elem_equal, elem_hash};
static const ck_type_vtable ck_strided_dim_vtable = {
    "strided_dim", dim_construct, dim_destruct, dim_copy, dim_print, dim_debug,
    elem_equal, elem_hash};

static ck_status ck_elem_type_new(ck_type_id id, const ck_type_vtable *vt,
                                  ck_type elem, size_t own_arrmeta,
                                  struct ck_type_desc **out, const char *func) {
  *out = NULL;
  size_t arrmeta_size;
  if (!ck__add_size(own_arrmeta, ck_type_arrmeta_size(elem), &arrmeta_size)) {
    return ck__error(CK_ERR_OVERFLOW, func, "arrmeta size overflows");
  }
  struct ck_type_desc *d = ck_desc_alloc(0, id, vt, func);
  if (d == NULL) {
    return ck_last_status();
  }
  ck_type_incref(elem);
  d->element = elem;
  d->depth = ck__type_depth(elem) + 1;
  d->arrmeta_size = arrmeta_size;
  d->flags = ck_type_flags(elem) & CK_TYPE_FLAG_BLOCKREF;
  *out = d;
  return CK_OK;
}

ck_status ck_fixed_dim_type_new(intptr_t size, ck_type elem, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (size < 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "negative dimension size %" PRIdPTR, size);
  }
  ck_status st = ck_check_elem(elem, "the element of a fixed dim", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  size_t data_size = 0;
  if (!ck__mul_size((size_t)size, ck_type_data_size(elem), &data_size) ||
      data_size > PTRDIFF_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "data size of %" PRIdPTR " elements of %zu "
                    "bytes overflows", size, ck_type_data_size(elem));
  }
  struct ck_type_desc *d;
  st = ck_elem_type_new(CK_TYPE_FIXED_DIM, &ck_fixed_dim_vtable, elem,
                        sizeof(ck_dim_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_DIM;
  d->fixed_size = size;
  d->data_size = data_size;
  d->data_alignment = ck_type_data_alignment(elem);
  *out = ck_desc_finish(d);
  return CK_OK;
}

ck_status ck_strided_dim_type_new(ck_type elem, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck_check_elem(elem, "the element of a strided dim", false, __func__);
  if (st != CK_OK) {
    return st;
  }
  struct ck_type_desc *d;
  st = ck_elem_type_new(CK_TYPE_STRIDED_DIM, &ck_strided_dim_vtable, elem,
                        sizeof(ck_dim_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_DIM | CK_TYPE_FLAG_ARRMETA_SIZED;
  d->data_size = 0;
  d->data_alignment = ck_type_data_alignment(elem);
  *out = ck_desc_finish(d);
  return CK_OK;
}

/* ---- var dims ----------------------------------------------------------------------- */

static ck_status var_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                               size_t ndim) {
  (void)shape;
  if (ndim > 0) {
    return ck_extra_shape(ndim);
  }
  ck_var_dim_arrmeta *m = (ck_var_dim_arrmeta *)arrmeta;
  ck_memblock *mb;
  ck_status st = ck_pod_memblock_new(0, &mb);
  if (st != CK_OK) {
    return st;
  }
  st = ck_type_arrmeta_construct(self->element, arrmeta + sizeof *m, NULL, 0);
  if (st != CK_OK) {
    ck_memblock_decref(mb);
    return st;
  }
  m->blockref = mb;
  m->stride = (intptr_t)ck_type_data_size(self->element);
  m->offset = 0;
  return CK_OK;
}

static void var_destruct(ck_type self, char *arrmeta) {
  ck_var_dim_arrmeta *m = (ck_var_dim_arrmeta *)arrmeta;
  ck_type_arrmeta_destruct(self->element, arrmeta + sizeof *m);
  ck_memblock_decref(m->blockref);
  m->blockref = NULL;
}

static void var_copy(ck_type self, char *dst, const char *src) {
  memcpy(dst, src, sizeof(ck_var_dim_arrmeta));
  ck_memblock_incref(((ck_var_dim_arrmeta *)dst)->blockref);
  ck_type_arrmeta_copy(self->element, dst + sizeof(ck_var_dim_arrmeta),
                       src + sizeof(ck_var_dim_arrmeta));
}

static void var_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                      size_t *pos, int indent) {
  const ck_var_dim_arrmeta *m = (const ck_var_dim_arrmeta *)arrmeta;
  ck__appendf(buf, bufsize, pos,
              "%*svar_dim arrmeta\n%*sstride: %" PRIdPTR "\n%*soffset: %" PRIdPTR "\n",
              indent, "", indent + 1, "", m->stride, indent + 1, "", m->offset);
  ck_blockref_append(m->blockref, buf, bufsize, pos, indent + 1);
  ck__arrmeta_debug_append(self->element, arrmeta + sizeof *m, buf, bufsize, pos,
                           indent + 1);
}

static const ck_type_vtable ck_var_dim_vtable = {
    "var_dim", var_construct, var_destruct, var_copy, dim_print, var_debug,
    elem_equal, elem_hash};

ck_status ck_var_dim_type_new(ck_type elem, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck_check_elem(elem, "the element of a var dim", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  struct ck_type_desc *d;
  st = ck_elem_type_new(CK_TYPE_VAR_DIM, &ck_var_dim_vtable, elem,
                        sizeof(ck_var_dim_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_DIM | CK_TYPE_FLAG_BLOCKREF;
  d->data_size = sizeof(ck_var_dim_data);
  d->data_alignment = alignof(ck_var_dim_data);
  *out = ck_desc_finish(d);
  return CK_OK;
}

/* ---- strings and bytes ------------------------------------------------------------------ */

static ck_status string_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                  size_t ndim) {
  (void)self;
  (void)shape;
  if (ndim > 0) {
    return ck_extra_shape(ndim);
  }
  ck_memblock *mb;
  ck_status st = ck_pod_memblock_new(0, &mb);
  if (st != CK_OK) {
    return st;
  }
  ((ck_string_arrmeta *)arrmeta)->blockref = mb;
  return CK_OK;
}

static void string_destruct(ck_type self, char *arrmeta) {
  (void)self;
  ck_string_arrmeta *m = (ck_string_arrmeta *)arrmeta;
  ck_memblock_decref(m->blockref);
  m->blockref = NULL;
}

static void string_copy(ck_type self, char *dst, const char *src) {
  (void)self;
  memcpy(dst, src, sizeof(ck_string_arrmeta));
  ck_memblock_incref(((ck_string_arrmeta *)dst)->blockref);
}

static void string_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  if (self->id == CK_TYPE_STRING) {
    ck__appendf(buf, bufsize, pos, "string");
  } else if (self->target_alignment == 1) {
    ck__appendf(buf, bufsize, pos, "bytes");
  } else {
    ck__appendf(buf, bufsize, pos, "bytes[align=%zu]", self->target_alignment);
  }
}

static void string_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                         size_t *pos, int indent) {
  ck__appendf(buf, bufsize, pos, "%*s%s arrmeta\n", indent, "", self->vtable->name);
  ck_blockref_append(((const ck_string_arrmeta *)arrmeta)->blockref, buf, bufsize,
                     pos, indent + 1);
}

static bool string_equal(ck_type a, ck_type b) {
  return a->target_alignment == b->target_alignment;
}

static uint64_t string_hash(ck_type self) {
  return ck_hmix(self->id, self->target_alignment);
}

static const ck_type_vtable ck_string_vtable = {
    "string", string_construct, string_destruct, string_copy, string_print,
    string_debug, string_equal, string_hash};
static const ck_type_vtable ck_bytes_vtable = {
    "bytes", string_construct, string_destruct, string_copy, string_print,
    string_debug, string_equal, string_hash};

static ck_status ck_stringlike_new(ck_type_id id, const ck_type_vtable *vt,
                                   size_t align, ck_type *out, const char *func) {
  struct ck_type_desc *d = ck_desc_alloc(0, id, vt, func);
  if (d == NULL) {
    return ck_last_status();
  }
  d->flags = CK_TYPE_FLAG_BLOCKREF;
  d->depth = 2;
  d->data_size = sizeof(ck_string);
  d->data_alignment = alignof(ck_string);
  d->arrmeta_size = sizeof(ck_string_arrmeta);
  d->target_alignment = align;
  *out = ck_desc_finish(d);
  return CK_OK;
}

ck_status ck_string_type_new(ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  return ck_stringlike_new(CK_TYPE_STRING, &ck_string_vtable, 1, out, __func__);
}

ck_status ck_bytes_type_new(size_t align, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (!ck__is_pow2(align) || align > CK_BYTES_MAX_ALIGN) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "alignment %zu is not a power of two in [1, %d]", align,
                    CK_BYTES_MAX_ALIGN);
  }
  return ck_stringlike_new(CK_TYPE_BYTES, &ck_bytes_vtable, align, out, __func__);
}

bool ck_utf8_validate(const char *bytes, size_t len) {
  const unsigned char *s = (const unsigned char *)bytes;
  size_t i = 0;
  if (s == NULL) {
    return len == 0;
  }
  while (i < len) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;      /* no overlongs */
      if (c == 0xed) hi = 0x9f;      /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;      /* no overlongs */
      if (c == 0xf4) hi = 0x8f;      /* <= U+10FFFF */
    } else {
      return false;
    }
    if (len - i <= n) {
      return false;
    }
    if (s[i + 1] < lo || s[i + 1] > hi) {
      return false;
    }
    for (size_t k = 2; k <= n; k++) {
      if ((s[i + k] & 0xc0) != 0x80) {
        return false;
      }
    }
    i += n + 1;
  }
  return true;
}

static ck_status ck_assign_bytes(const char *func, char *data, const char *arrmeta,
                                 const char *bytes, size_t len, size_t align) {
  if (data == NULL || arrmeta == NULL || (bytes == NULL && len != 0)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "data, arrmeta and bytes must not be NULL");
  }
  ck_memblock *mb = ((const ck_string_arrmeta *)arrmeta)->blockref;
  if (mb == NULL) {
    return ck__error(CK_ERR_INVALID_STATE, func, "the arrmeta has no blockref arena");
  }
  char *b, *e;
  ck_status st = ck_pod_allocate(mb, len, align, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  if (len != 0) {
    memcpy(b, bytes, len);
  }
  ck_string *s = (ck_string *)data;
  s->begin = b;
  s->end = e;
  return CK_OK;
}

ck_status ck_string_assign(char *data, const char *arrmeta, const char *bytes,
                           size_t len) {
  return ck_assign_bytes(__func__, data, arrmeta, bytes, len, 1);
}

ck_status ck_bytes_assign(ck_type bytes_type, char *data, const char *arrmeta,
                          const char *bytes, size_t len) {
  if (!ck__is_desc(bytes_type) || bytes_type->id != CK_TYPE_BYTES) {
    return CK_ERROR(CK_ERR_TYPE, "type is not bytes");
  }
  return ck_assign_bytes(__func__, data, arrmeta, bytes, len,
                         bytes_type->target_alignment);
}

ck_status ck_var_dim_alloc(ck_type var_type, char *data, const char *arrmeta,
                           size_t count) {
  if (data == NULL || arrmeta == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "data and arrmeta must not be NULL");
  }
  if (!ck__is_desc(var_type) || var_type->id != CK_TYPE_VAR_DIM) {
    return CK_ERROR(CK_ERR_TYPE, "type is not a var dim");
  }
  const ck_var_dim_arrmeta *m = (const ck_var_dim_arrmeta *)arrmeta;
  size_t esize = ck_type_data_size(var_type->element);
  if (m->offset != 0 || m->stride < 0 || (size_t)m->stride < esize) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "cannot allocate through a var dim view (offset %" PRIdPTR
                    ", stride %" PRIdPTR ", element size %zu)",
                    m->offset, m->stride, esize);
  }
  if (m->blockref == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "the var dim arrmeta has no blockref arena");
  }
  size_t total;
  if (!ck__mul_size(count, (size_t)m->stride, &total) || total > PTRDIFF_MAX ||
      count > (size_t)INTPTR_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "%zu elements of stride %" PRIdPTR " overflow",
                    count, m->stride);
  }
  char *b, *e;
  ck_status st = ck_pod_allocate(m->blockref, total,
                                 ck_type_data_alignment(var_type->element), &b, &e);
  if (st != CK_OK) {
    return st;
  }
  memset(b, 0, total); /* elements holding strings must read as empty */
  ck_var_dim_data *v = (ck_var_dim_data *)data;
  v->begin = b;
  v->size = count;
  return CK_OK;
}

/* ---- pointer ------------------------------------------------------------------------------ */

static ck_status pointer_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                   size_t ndim) {
  (void)shape;
  if (ndim > 0) {
    return ck_extra_shape(ndim);
  }
  ck_pointer_arrmeta *m = (ck_pointer_arrmeta *)arrmeta;
  ck_status st = ck_type_arrmeta_construct(self->element, arrmeta + sizeof *m, NULL, 0);
  if (st != CK_OK) {
    return st;
  }
  m->blockref = NULL;
  m->offset = 0;
  return CK_OK;
}

static void pointer_destruct(ck_type self, char *arrmeta) {
  ck_pointer_arrmeta *m = (ck_pointer_arrmeta *)arrmeta;
  ck_type_arrmeta_destruct(self->element, arrmeta + sizeof *m);
  ck_memblock_decref(m->blockref);
  m->blockref = NULL;
}

static void pointer_copy(ck_type self, char *dst, const char *src) {
  memcpy(dst, src, sizeof(ck_pointer_arrmeta));
  ck_memblock_incref(((ck_pointer_arrmeta *)dst)->blockref);
  ck_type_arrmeta_copy(self->element, dst + sizeof(ck_pointer_arrmeta),
                       src + sizeof(ck_pointer_arrmeta));
}

static void pointer_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "pointer[");
  ck__type_append(self->element, buf, bufsize, pos);
  ck__appendf(buf, bufsize, pos, "]");
}

static void pointer_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                          size_t *pos, int indent) {
  const ck_pointer_arrmeta *m = (const ck_pointer_arrmeta *)arrmeta;
  ck__appendf(buf, bufsize, pos, "%*spointer arrmeta\n%*soffset: %" PRIdPTR "\n",
              indent, "", indent + 1, "", m->offset);
  ck_blockref_append(m->blockref, buf, bufsize, pos, indent + 1);
  ck__arrmeta_debug_append(self->element, arrmeta + sizeof *m, buf, bufsize, pos,
                           indent + 1);
}

static const ck_type_vtable ck_pointer_vtable = {
    "pointer", pointer_construct, pointer_destruct, pointer_copy, pointer_print,
    pointer_debug, elem_equal, elem_hash};

ck_status ck_pointer_type_new(ck_type target, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck_check_elem(target, "the target of a pointer", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  struct ck_type_desc *d;
  st = ck_elem_type_new(CK_TYPE_POINTER, &ck_pointer_vtable, target,
                        sizeof(ck_pointer_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_BLOCKREF;
  d->data_size = sizeof(char *);
  d->data_alignment = alignof(char *);
  *out = ck_desc_finish(d);
  return CK_OK;
}

/* ---- struct ---------------------------------------------------------------------------------- */

static ck_status struct_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                  size_t ndim) {
  (void)shape;
  if (ndim > 0) {
    return ck_extra_shape(ndim);
  }
  size_t n = self->field_count;
  if (n != 0) {
    memcpy(arrmeta, self->field_data_offsets, n * sizeof(uintptr_t));
  }
  for (size_t i = 0; i < n; i++) {
    ck_status st = ck_type_arrmeta_construct(
        self->field_types[i], arrmeta + self->field_arrmeta_offsets[i], NULL, 0);
    if (st != CK_OK) {
      while (i-- > 0) {
        ck_type_arrmeta_destruct(self->field_types[i],
                                 arrmeta + self->field_arrmeta_offsets[i]);
      }
      return st;
    }
  }
  return CK_OK;
}

static void struct_destruct(ck_type self, char *arrmeta) {
  for (size_t i = 0; i < self->field_count; i++) {
    ck_type_arrmeta_destruct(self->field_types[i],
                             arrmeta + self->field_arrmeta_offsets[i]);
  }
}

static void struct_copy(ck_type self, char *dst, const char *src) {
  size_t n = self->field_count;
  if (n != 0) {
    memcpy(dst, src, n * sizeof(uintptr_t));
  }
  for (size_t i = 0; i < n; i++) {
    ck_type_arrmeta_copy(self->field_types[i], dst + self->field_arrmeta_offsets[i],
                         src + self->field_arrmeta_offsets[i]);
  }
}

/* Field names print bare when they are identifiers, else single-quoted with
 * backslash escapes for ' and \ (the only ones the grammar defines). */
static void ck_name_append(const char *name, char *buf, size_t bufsize, size_t *pos) {
  if (ck__is_identifier(name, strlen(name))) {
    ck__appendf(buf, bufsize, pos, "%s", name);
    return;
  }
  ck__appendf(buf, bufsize, pos, "'");
  for (const char *s = name; *s; s++) {
    if (*s == '\'' || *s == '\\') {
      ck__appendf(buf, bufsize, pos, "\\%c", *s);
    } else {
      ck__appendf(buf, bufsize, pos, "%c", *s);
    }
  }
  ck__appendf(buf, bufsize, pos, "'");
}

static void struct_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "{");
  for (size_t i = 0; i < self->field_count; i++) {
    if (i > 0) {
      ck__appendf(buf, bufsize, pos, ", ");
    }
    ck_name_append(self->field_names[i], buf, bufsize, pos);
    ck__appendf(buf, bufsize, pos, ": ");
    ck__type_append(self->field_types[i], buf, bufsize, pos);
  }
  ck__appendf(buf, bufsize, pos, "}");
}

static void struct_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                         size_t *pos, int indent) {
  const uintptr_t *offs = (const uintptr_t *)arrmeta;
  ck__appendf(buf, bufsize, pos, "%*sstruct arrmeta\n%*sfield data offsets:", indent,
              "", indent + 1, "");
  for (size_t i = 0; i < self->field_count; i++) {
    ck__appendf(buf, bufsize, pos, "%s %" PRIuPTR, i ? "," : "", offs[i]);
  }
  ck__appendf(buf, bufsize, pos, "\n");
  for (size_t i = 0; i < self->field_count; i++) {
    if (ck_type_arrmeta_size(self->field_types[i]) == 0) {
      continue;
    }
    ck__appendf(buf, bufsize, pos, "%*sfield %zu (", indent + 1, "", i);
    ck_name_append(self->field_names[i], buf, bufsize, pos);
    ck__appendf(buf, bufsize, pos, "):\n");
    ck__arrmeta_debug_append(self->field_types[i],
                             arrmeta + self->field_arrmeta_offsets[i], buf, bufsize,
                             pos, indent + 2);
  }
}

static bool struct_equal(ck_type a, ck_type b) {
  if (a->field_count != b->field_count) {
    return false;
  }
  for (size_t i = 0; i < a->field_count; i++) {
    if (strcmp(a->field_names[i], b->field_names[i]) != 0 ||
        !ck_type_equal(a->field_types[i], b->field_types[i])) {
      return false;
    }
  }
  return true;
}

static uint64_t struct_hash(ck_type self) {
  uint64_t h = ck_hmix(self->id, self->field_count);
  for (size_t i = 0; i < self->field_count; i++) {
    h = ck_hmix(h, ck_hash_cstr(self->field_names[i]));
    h = ck_hmix(h, ck_type_hash(self->field_types[i]));
  }
  return h;
}

static const ck_type_vtable ck_struct_vtable = {
    "struct", struct_construct, struct_destruct, struct_copy, struct_print,
    struct_debug, struct_equal, struct_hash};

/* A valid field name: non-empty UTF-8 without control characters. */
static bool ck_valid_field_name(const char *name, size_t len) {
  if (len == 0 || !ck_utf8_validate(name, len)) {
    return false;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c < 0x20 || c == 0x7f) {
      return false;
    }
  }
  return true;
}

static size_t ck_round_up(size_t x, size_t align, bool *overflow) {
  size_t r;
  if (!ck__add_size(x, align - 1, &r)) {
    *overflow = true;
    return 0;
  }
  return r & ~(align - 1);
}

ck_status ck_struct_type_new(size_t nfields, const char *const *names,
                             const ck_type *types, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (nfields > 0 && (names == NULL || types == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "names and types must not be NULL");
  }
  /* Validate everything before allocating. */
  size_t name_bytes = 0;
  uint32_t depth = 1;
  for (size_t i = 0; i < nfields; i++) {
    if (names[i] == NULL) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "name of field %zu is NULL", i);
    }
    size_t len = strlen(names[i]);
    if (!ck_valid_field_name(names[i], len)) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "name of field %zu is empty, not UTF-8 or has control "
                      "characters", i);
    }
    for (size_t j = 0; j < i; j++) {
      if (strcmp(names[i], names[j]) == 0) {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "duplicate field name '%.64s'",
                        names[i]);
      }
    }
    ck_status st = ck_check_elem(types[i], "a struct field", true, __func__);
    if (st != CK_OK) {
      return st;
    }
    if (ck__type_depth(types[i]) + 1 > depth) {
      depth = ck__type_depth(types[i]) + 1;
    }
    if (!ck__add_size(name_bytes, len + 1, &name_bytes)) {
      return CK_ERROR(CK_ERR_OVERFLOW, "field names are too long");
    }
  }
  if (nfields == 0) {
    depth = 2;
  }
  /* Layout: C rules for data; arrmeta = offsets then each field's arrmeta. */
  bool ovf = false;
  size_t data_off = 0, align = 1, arrmeta_off = 0, blockref = 0;
  if (!ck__mul_size(nfields, sizeof(uintptr_t), &arrmeta_off)) {
    ovf = true;
  }
  for (size_t i = 0; i < nfields && !ovf; i++) {
    size_t a = ck_type_data_alignment(types[i]);
    data_off = ck_round_up(data_off, a, &ovf);
    ovf |= !ck__add_size(data_off, ck_type_data_size(types[i]), &data_off);
    ovf |= !ck__add_size(arrmeta_off, ck_type_arrmeta_size(types[i]), &arrmeta_off);
    align = a > align ? a : align;
    blockref |= ck_type_flags(types[i]) & CK_TYPE_FLAG_BLOCKREF;
  }
  size_t data_size = ck_round_up(data_off, align, &ovf);
  size_t per_field = sizeof(ck_type) + sizeof(uintptr_t) + sizeof(size_t) +
                     sizeof(const char *), extra = 0;
  ovf |= !ck__mul_size(nfields, per_field, &extra);
  ovf |= !ck__add_size(extra, name_bytes, &extra);
  if (ovf || data_size > PTRDIFF_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "struct of %zu fields is too large", nfields);
  }
  struct ck_type_desc *d = ck_desc_alloc(extra, CK_TYPE_STRUCT, &ck_struct_vtable,
                                         __func__);
  if (d == NULL) {
    return ck_last_status();
  }
  /* The arrays live right after the descriptor (one allocation). */
  ck_type *ftypes = (ck_type *)(d + 1);
  uintptr_t *doffs = (uintptr_t *)(ftypes + nfields);
  size_t *aoffs = (size_t *)(doffs + nfields);
  const char **fnames = (const char **)(aoffs + nfields);
  char *chars = (char *)(fnames + nfields);
  data_off = 0;
  arrmeta_off = nfields * sizeof(uintptr_t);
  for (size_t i = 0; i < nfields; i++) {
    size_t a = ck_type_data_alignment(types[i]);
    data_off = (data_off + a - 1) & ~(a - 1);
    doffs[i] = data_off;
    data_off += ck_type_data_size(types[i]);
    aoffs[i] = arrmeta_off;
    arrmeta_off += ck_type_arrmeta_size(types[i]);
    size_t len = strlen(names[i]);
    memcpy(chars, names[i], len + 1);
    fnames[i] = chars;
    chars += len + 1;
    ck_type_incref(types[i]);
    ftypes[i] = types[i];
  }
  d->flags = (uint32_t)blockref;
  d->depth = depth;
  d->data_size = data_size;
  d->data_alignment = align;
  d->arrmeta_size = arrmeta_off;
  d->field_count = nfields;
  d->field_names = fnames;
  d->field_types = ftypes;
  d->field_data_offsets = doffs;
  d->field_arrmeta_offsets = aoffs;
  *out = ck_desc_finish(d);
  return CK_OK;
}
