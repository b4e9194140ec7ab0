/*
 * types.c -- what every type shares: the builtin scalars, generic queries,
 * reference counting, hashing and equality, printing, the arrmeta dispatch
 * and descriptor allocation (see ckernel/types.h).  The type families live
 * in type_dims.c, type_string.c and type_struct.c; the parser in
 * type_parse.c.
 */
#include "types/type_internal.h"
#include "core/scalar_internal.h"

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
static atomic_int_fast64_t ck__live_types;


/* ---- builtins ------------------------------------------------------------- */

typedef struct ck__builtin_info {
  const char *name;
  size_t size;
  size_t align;
} ck__builtin_info;

/* From the builtin table (scalar_internal.h); C99 complex is laid out as
 * float[2] / double[2], as the storage structs are. */
static const ck__builtin_info ck__builtins[CK_BUILTIN_TYPE_COUNT] = {
    [CK_TYPE_UNINITIALIZED] = {"uninitialized", 0, 1},
#define CK__BUILTIN_INFO(tok, name, id, T, K, unused) [id] = {name, sizeof(T), alignof(T)},
    CK__BUILTIN_TYPES(CK__BUILTIN_INFO, 0)
#undef CK__BUILTIN_INFO
};

static bool ck__builtin_valid(ck_type t) {
  uintptr_t id = (uintptr_t)t;
  return id >= 1 && id < CK_BUILTIN_TYPE_COUNT;
}

bool ck_type_is_valid(ck_type t) {
  return ck_type_is_builtin(t) ? ck__builtin_valid(t) : true;
}

char ck_type_id_kind(ck_type_id id) {
  return ck__builtin_kind((int)id);
}

const char *ck_type_id_name(ck_type_id id) {
  if ((unsigned)id >= 1 && (unsigned)id < CK_BUILTIN_TYPE_COUNT) {
    return ck__builtins[id].name;
  }
  switch (id) {
  case CK_TYPE_FIXED_DIM: return "fixed_dim";
  case CK_TYPE_STRIDED_DIM: return "strided_dim";
  case CK_TYPE_VAR_DIM: return "var_dim";
  case CK_TYPE_STRING: return "string";
  case CK_TYPE_BYTES: return "bytes";
  case CK_TYPE_STRUCT: return "struct";
  case CK_TYPE_POINTER: return "pointer";
  case CK_TYPE_SYMBOLIC_DIM: return "symbolic_dim";
  case CK_TYPE_OPTION: return "option";
  case CK_TYPE_DATETIME: return "datetime";
  case CK_TYPE_TIMEDELTA: return "timedelta";
  case CK_TYPE_DATE: return "date";
  case CK_TYPE_TIME: return "time";
  case CK_TYPE_DICTIONARY: return "dictionary";
  default: return "invalid";
  }
}

/* ---- generic queries ------------------------------------------------------ */

ck_type_id ck_type_id_of(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck__builtin_valid(t) ? (ck_type_id)(uintptr_t)t : CK_TYPE_UNINITIALIZED;
  }
  return (ck_type_id)t->id;
}

size_t ck_type_data_size(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck__builtin_valid(t) ? ck__builtins[(uintptr_t)t].size : 0;
  }
  return t->data_size;
}

size_t ck_type_data_alignment(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck__builtin_valid(t) ? ck__builtins[(uintptr_t)t].align : 1;
  }
  return t->data_alignment;
}

size_t ck_type_arrmeta_size(ck_type t) {
  return ck_type_is_builtin(t) ? 0 : t->arrmeta_size;
}

uint32_t ck_type_flags(ck_type t) { return ck_type_is_builtin(t) ? 0 : t->flags; }

uint32_t ck__type_depth(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck__builtin_valid(t) ? 1 : 0;
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
  if (ck__is_dim(t) || (ck__is_desc(t) && (t->id == CK_TYPE_POINTER ||
                                            t->id == CK_TYPE_OPTION))) {
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

const char *ck_symbolic_dim_name(ck_type t) {
  return ck__is_desc(t) && t->id == CK_TYPE_SYMBOLIC_DIM ? t->dim_name : NULL;
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
  return (int64_t)atomic_load_explicit(&ck__live_types, memory_order_relaxed);
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
    atomic_fetch_sub_explicit(&ck__live_types, 1, memory_order_relaxed);
    t = next;
  }
}

/* ---- hashing and equality ------------------------------------------------------ */

uint64_t ck__fmix64(uint64_t x) { /* splitmix64 finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 31;
  return x;
}

uint64_t ck__hmix(uint64_t h, uint64_t x) {
  return ck__fmix64(h ^ (x + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2)));
}

uint64_t ck__hash_cstr(const char *s) { /* FNV-1a */
  uint64_t h = 0xcbf29ce484222325u;
  for (; *s; s++) {
    h = (h ^ (unsigned char)*s) * 0x100000001b3u;
  }
  return h;
}

/* ---- name sets ------------------------------------------------------------------ */

void ck__name_set_init(ck__name_set *set) {
  set->slots = NULL;
  set->cap = 0;
  set->n = 0;
}

void ck__name_set_free(ck__name_set *set) {
  ck__free((void *)set->slots);
  ck__name_set_init(set);
}

/* Insert without growing (room guaranteed); false if already present. */
static bool ck__name_set_put(const char **slots, size_t cap, const char *name) {
  size_t i = (size_t)ck__hash_cstr(name) & (cap - 1);
  while (slots[i] != NULL) {
    if (strcmp(slots[i], name) == 0) {
      return false;
    }
    i = (i + 1) & (cap - 1);
  }
  slots[i] = name;
  return true;
}

int ck__name_set_add(ck__name_set *set, const char *name, const char *func) {
  if (2 * (set->n + 1) > set->cap) { /* load factor <= 1/2 */
    size_t cap = set->cap ? 2 * set->cap : 16;
    const char **slots = ck__calloc(cap, sizeof *slots, func);
    if (slots == NULL) {
      return -1;
    }
    for (size_t i = 0; i < set->cap; i++) {
      if (set->slots[i] != NULL) {
        (void)ck__name_set_put(slots, cap, set->slots[i]);
      }
    }
    ck__free((void *)set->slots);
    set->slots = slots;
    set->cap = cap;
  }
  if (!ck__name_set_put(set->slots, set->cap, name)) {
    return 0;
  }
  set->n++;
  return 1;
}

uint64_t ck_type_hash(ck_type t) {
  if (ck_type_is_builtin(t)) {
    return ck__fmix64((uint64_t)(uintptr_t)t + 1);
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
                ck__builtin_valid(t) ? ck__builtins[(uintptr_t)t].name : "<invalid type>");
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
const char *ck__type_str(ck_type t, char *buf, size_t n) {
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

void ck__blockref_append(const ck_memblock *mb, char *buf, size_t bufsize,
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
  if (t->flags & CK_TYPE_FLAG_PATTERN) {
    return ck__pattern_error(t, "ck_type_arrmeta_construct");
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

/* The first dimension variable of a pattern type (depth-first), or NULL. */
static const char *ck__first_dim_name(ck_type t) {
  if (!ck__is_desc(t) || !(t->flags & CK_TYPE_FLAG_PATTERN)) {
    return NULL;
  }
  if (t->id == CK_TYPE_SYMBOLIC_DIM) {
    return t->dim_name;
  }
  for (size_t i = 0; i < t->field_count; i++) {
    const char *n = ck__first_dim_name(t->field_types[i]);
    if (n != NULL) {
      return n;
    }
  }
  return ck__first_dim_name(t->element);
}

ck_status ck__pattern_error(ck_type t, const char *func) {
  char tb[160];
  const char *name = ck__first_dim_name(t);
  return ck__error(CK_ERR_TYPE, func,
                       "'%s' is a pattern type: the dimension variable %s is bound "
                       "when a kernel with that signature is applied; an array needs "
                       "fixed (3 *), strided or var dims",
                       ck__type_str(t, tb, sizeof tb), name != NULL ? name : "?");
}

/* A non-dim type was given shape entries left over by the dims above it. */
ck_status ck__extra_shape(size_t ndim) {
  return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT,
                       "shape has %zu entries more than the type has leading "
                       "fixed/strided dims", ndim);
}

/* Bytes one element of `t` spans in default C-contiguous layout, given its
 * constructed arrmeta (strided dims know their extent only from there). */
intptr_t ck__default_extent(ck_type t, const char *arrmeta) {
  if (ck_type_flags(t) & CK_TYPE_FLAG_ARRMETA_SIZED) {
    const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)arrmeta;
    return m->size * m->stride; /* checked for overflow when constructed */
  }
  return (intptr_t)ck_type_data_size(t);
}

/* ---- descriptor allocation ------------------------------------------------------ */

struct ck_type_desc *ck__desc_alloc(size_t extra, ck_type_id id,
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

ck_type ck__desc_finish(struct ck_type_desc *d) {
  d->hash = d->vtable->hash(d);
  atomic_fetch_add_explicit(&ck__live_types, 1, memory_order_relaxed);
  return d;
}

/* Checks shared by every constructor taking an element type. */
ck_status ck__check_elem(ck_type elem, const char *what, bool need_fixed_size,
                               const char *func) {
  if (!ck_type_is_valid(elem)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%s is not a valid type (%p)",
                     what, (const void *)elem);
  }
  if (ck__type_depth(elem) >= CK_TYPE_MAX_DEPTH) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "type nesting would exceed %d levels", CK_TYPE_MAX_DEPTH);
  }
  /* a pattern has no data to size: `M * N * T`, `var * N * T` are signatures */
  if (need_fixed_size && (ck_type_flags(elem) & CK_TYPE_FLAG_ARRMETA_SIZED) &&
      !(ck_type_flags(elem) & CK_TYPE_FLAG_PATTERN)) {
    char tb[96];
    return ck__error(CK_ERR_TYPE, func,
                     "%s needs a fixed data size, but '%s' has its size in "
                     "arrmeta (strided dims may only be the outermost dims)",
                     what, ck__type_str(elem, tb, sizeof tb));
  }
  return CK_OK;
}

