/*
 * builder_internal.h -- links between builder.c and the kernel factories.
 * Private; nothing here is ABI.
 */
#ifndef CKERNEL_BUILDER_INTERNAL_H
#define CKERNEL_BUILDER_INTERNAL_H

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

#endif /* CKERNEL_BUILDER_INTERNAL_H */
