/*
 * builder_internal.h -- links between builder.c and the kernel factories.
 * Private; nothing here is ABI.
 */
#ifndef CKERNEL_BUILDER_INTERNAL_H
#define CKERNEL_BUILDER_INTERNAL_H

#include "ckernel/builder.h"

/* The description of one of the library's own kernels whose entry point is
 * `function` (the raw prefix value), or NULL (assign.c).  *out_req gets the
 * entry point that matched.  Read-only static tables: thread-safe. */
const ck_kernel_info *ck__builtin_kernel_info_find(const void *function,
                                                   ck_kernel_request *out_req);

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
