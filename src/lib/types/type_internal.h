/*
 * type_internal.h -- helpers shared by types.c, type_parse.c and array.c.
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

#endif /* CKERNEL_TYPE_INTERNAL_H */
