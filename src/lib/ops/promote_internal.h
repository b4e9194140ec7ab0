/*
 * promote_internal.h -- links between the registry and the type rules
 * (promote.c) and the converting parent kernel (promote_kernel.c).
 * Private; nothing here is ABI.
 */
#ifndef CKERNEL_PROMOTE_INTERNAL_H
#define CKERNEL_PROMOTE_INTERNAL_H

#include "core/core_internal.h"

#include "ckernel/registry.h"

/* NumPy's type order: the position of a builtin id in "?bBhHiIlLefdFD"
 * (0 for anything else). */
unsigned ck__type_rank(ck_type_id t);

/*
 * Build at `offset` the converting parent of a registered kernel whose
 * argument types are `to`, called with arguments of types `from` (each
 * from[i] casts safely to to[i]; equal types are passed through).  The
 * parent and its conversion children are built; a zeroed prefix is reserved
 * (and recorded in the parent) at *out_op_child, where the caller builds the
 * registered kernel itself.  Errors as ck_kernel_builder_ensure_capacity;
 * the half-built parent stays destroyable.
 */
ck_status ck__make_promote_kernel(ck_kernel_builder *ckb, size_t offset,
                                  ck_kernel_request req, size_t n,
                                  const ck_type_id *from, const ck_type_id *to,
                                  size_t *out_op_child);

#endif /* CKERNEL_PROMOTE_INTERNAL_H */
