/*
 * builder_internal.h -- links between builder.c and the kernel factories.
 * Private; nothing here is ABI.
 */
#ifndef CKERNEL_BUILDER_INTERNAL_H
#define CKERNEL_BUILDER_INTERNAL_H

#include "core/core_internal.h"

#include "ckernel/builder.h"

/* Register a static table of `n` kernel descriptions for dumps (as
 * ck_kernel_info_register does for one; idempotent, thread-safe).  Each
 * factory registers its own table once, before it first builds a kernel.
 * Never fails visibly: out of memory leaves the table undescribed and the
 * caller's error state untouched. */
void ck__kernel_info_register_table(const ck_kernel_info *infos, size_t n);

/* Bytes of a saved error message (ck__kernel_info_register_table). */
enum { CK__SAVED_MESSAGE = 512 };

/* Reinterpret between the prefix's void * and the entry-point types. */
static inline void *ck__single_ptr(ck_expr_single_t f) {
  ck__fnptr u;
  u.single = f;
  return u.ptr;
}
static inline void *ck__strided_ptr(ck_expr_strided_t f) {
  ck__fnptr u;
  u.strided = f;
  return u.ptr;
}

/* The argument checks every kernel factory starts with (builder.c):
 * non-NULL builder, offset a multiple of CK_KERNEL_ALIGN, a known request,
 * and an empty slot (ck__check_kernel_slot).  `func` names the factory in
 * the message. */
ck_status ck__check_kernel_args(const char *func, ck_kernel_builder *ckb,
                                size_t offset, ck_kernel_request req);

/* CK_ERR_INVALID_STATE if the builder already holds a kernel at `offset`
 * (its prefix has a function or a destructor): building over it would lose
 * the old kernel's resources (docs/kernel-abi.md, "One kernel per slot"). */
ck_status ck__check_kernel_slot(const char *func, const ck_kernel_builder *ckb,
                                size_t offset);

#endif /* CKERNEL_BUILDER_INTERNAL_H */
