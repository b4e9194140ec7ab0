/*
 * ckernel/ops.h -- registry operations applied to whole arrays.
 *
 * Glue between the kernel registry (registry.h: scalar kernels keyed by
 * argument types) and the dimension kernels (assign_array.h: lifting with
 * broadcasting and the parallel outer loop: apply.h).
 */
#ifndef CKERNEL_OPS_H
#define CKERNEL_OPS_H

#include "ckernel/array.h"
#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/lift.h"
#include "ckernel/apply.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Apply the registered operation `op_name` elementwise to `nsrc` arrays
 * (nsrc = the op's arity) with NumPy broadcasting.  The element types of the
 * sources (builtin dtypes) select the kernel, promoting as ck_op_resolve
 * does.  With dst_or_null == NULL a new array of the broadcast shape and the
 * kernel's return type is made; otherwise the result is written into it
 * (it needs the WRITE flag and a broadcast-compatible shape; if its dtype
 * differs from the kernel's return type the values are converted under the
 * default error mode).  *out receives a new reference to the result (the
 * destination itself when given).  Runs on the library's thread pool for
 * large arrays, like ck_array_apply.
 */
CK_API ck_status ck_array_apply_op(const char *op_name, size_t nsrc,
                                   ck_array_preamble *const *srcs,
                                   ck_array_preamble *dst_or_null,
                                   ck_array_preamble **out);

/* The ck_child_kernel_factory behind ck_array_apply_op: `child_data` is a
 * `const ck_op *`.  Usable directly with ck_make_elementwise_kernel. */
CK_API ck_status ck_op_child_factory(void *child_data, ck_kernel_builder *ckb,
                                     size_t offset, ck_type dst_type,
                                     const char *dst_arrmeta, size_t nsrc,
                                     const ck_type *src_types,
                                     const char *const *src_arrmeta,
                                     ck_kernel_request req, size_t *out_end);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_OPS_H */
