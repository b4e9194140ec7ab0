/*
 * type_internal.h -- helpers shared by the type files (types.c, type_dims.c,
 * type_string.c, type_struct.c, type_parse.c) and the arrays above them.
 * Not installed; nothing here is ABI.
 */
#ifndef CKERNEL_TYPE_INTERNAL_H
#define CKERNEL_TYPE_INTERNAL_H

#include "core/core_internal.h"

/* The descriptor behind a non-builtin type (caller checked !builtin). */
static inline const struct ck_type_desc *ck__desc(ck_type t) { return t; }

static inline bool ck__is_desc(ck_type t) {
  return t != NULL && !ck_type_is_builtin(t);
}

static inline bool ck__is_dim(ck_type t) {
  return ck__is_desc(t) && (t->flags & CK_TYPE_FLAG_DIM) != 0;
}

/* Nesting depth (builtin 1; invalid 0). */
uint32_t ck__type_depth(ck_type t);

/* Append the canonical type string (ck__appendf rules). */
void ck__type_append(ck_type t, char *buf, size_t bufsize, size_t *pos);

/* Append the debug description of arrmeta of `t` at `indent` spaces. */
void ck__arrmeta_debug_append(ck_type t, const char *arrmeta, char *buf,
                              size_t bufsize, size_t *pos, int indent);

/* Size in bytes of a dim's own arrmeta header (16 fixed/strided, 24 var). */
static inline size_t ck__dim_header_size(ck_type dim) {
  return dim->id == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta)
                                    : sizeof(ck_dim_arrmeta);
}

/* True if `name` (len bytes) is a plain identifier [A-Za-z_][A-Za-z0-9_]*. */
bool ck__is_identifier(const char *name, size_t len);

/* Errors of arrmeta construction name the public entry point. */
#define ARRMETA_ERROR(st, ...) ck__error((st), "ck_type_arrmeta_construct", __VA_ARGS__)

/* The canonical type string of `t` in `buf` (truncated), for messages. */
const char *ck__type_str(ck_type t, char *buf, size_t n);

/* Append "<indent>blockref: <ptr> (<kind>, refcount <n>)\n" (debug views). */
void ck__blockref_append(const ck_memblock *mb, char *buf, size_t bufsize,
                         size_t *pos, int indent);

/* CK_ERR_TYPE, naming `func`: `t` is a pattern type (it holds a dimension
 * variable), which no array can have. */
ck_status ck__pattern_error(ck_type t, const char *func);

/* True if `name` (len bytes) is a dimension variable: an upper-case
 * identifier shorter than CK_DIM_NAME_MAX. */
bool ck__is_dim_name(const char *name, size_t len);

/* CK_ERR_INVALID_ARGUMENT: a non-dim type got `ndim` shape entries. */
ck_status ck__extra_shape(size_t ndim);

/* Bytes one element of `t` spans in default C-contiguous layout, given its
 * constructed arrmeta. */
intptr_t ck__default_extent(ck_type t, const char *arrmeta);

/* A zeroed descriptor of `extra` trailing bytes, refcount 1 (NULL after
 * recording the error); ck__desc_finish computes the hash and counts it
 * live. */
struct ck_type_desc *ck__desc_alloc(size_t extra, ck_type_id id,
                                    const ck_type_vtable *vt, const char *func);
ck_type ck__desc_finish(struct ck_type_desc *d);

/* Checks shared by every constructor taking an element type (valid, depth
 * limit, and a fixed data size when `need_fixed_size`). */
ck_status ck__check_elem(ck_type elem, const char *what, bool need_fixed_size,
                         const char *func);

/* Hash mixing (splitmix64 finaliser, a combiner, FNV-1a of a C string). */
uint64_t ck__fmix64(uint64_t x);
uint64_t ck__hmix(uint64_t h, uint64_t x);
uint64_t ck__hash_cstr(const char *s);

/* Types made of one element type (dims, pointer; type_dims.c): equality and
 * hash over (id, fixed size, element), and a new descriptor holding a
 * reference to `elem` with `own_arrmeta` bytes of arrmeta before the
 * element's. */
bool ck__elem_equal(ck_type a, ck_type b);
uint64_t ck__elem_hash(ck_type self);
ck_status ck__elem_type_new(ck_type_id id, const ck_type_vtable *vt, ck_type elem,
                            size_t own_arrmeta, struct ck_type_desc **out,
                            const char *func);

/* A set of C strings (open addressing; the strings are borrowed and must
 * outlive the set), so that n struct field names are checked for
 * duplicates in O(n).  Init allocates nothing. */
typedef struct ck__name_set {
  const char **slots;
  size_t cap;
  size_t n;
} ck__name_set;

void ck__name_set_init(ck__name_set *set);
void ck__name_set_free(ck__name_set *set);
/* 1: added; 0: already present; -1: out of memory (recorded, naming func). */
int ck__name_set_add(ck__name_set *set, const char *name, const char *func);

#endif /* CKERNEL_TYPE_INTERNAL_H */
