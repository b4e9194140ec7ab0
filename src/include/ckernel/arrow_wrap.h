/*
 * ckernel/arrow_wrap.h -- Arrow arrays over buffers someone else owns.
 *
 * The device arrays of the Python layer keep Arrow's layouts in device
 * memory (a string array: int64 offsets + UTF-8 data; a var dim: int64
 * offsets + the child's values; numbers: one data buffer), each buffer a
 * device allocation (an OpenCL cl_mem, a CUDA device pointer).  To hand them
 * to another library through Arrow's C device interface, or to adopt host
 * copies of such buffers as a ckernels array (ck_arrow_import of a CPU
 * device array), ck_arrow_wrap describes the buffers as an ArrowDeviceArray
 * without touching them: the pointers are stored as given and never
 * dereferenced (a device pointer is meaningless on the host).
 *
 * Ownership: the wrapped buffers belong to the caller's owner object; the
 * library calls `release(handle)` exactly once, when the root and every
 * child moved out of it have been released (a consumer may move a child out
 * and release the parent first, as the C data interface allows).  On failure
 * nothing is made and `release` is not called.
 */
#ifndef CKERNEL_ARROW_WRAP_H
#define CKERNEL_ARROW_WRAP_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/arrow.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The deepest chain of children ck_arrow_wrap accepts (var dims nest). */
#define CK_ARROW_WRAP_MAX_DEPTH 32

/*
 * One Arrow node: `length` elements, `n_buffers` buffers (1 to 3), and
 * `child` (the values of a list node, NULL for others).  buffers[0] is the
 * validity bitmap (Arrow's bit order, LSB first, 1 = valid, starting at bit
 * 0: the made array's offset is 0) or NULL (no nulls); `null_count` is the
 * number of nulls it holds: 0 without a bitmap, -1 (unknown) or 0..length
 * with one.  Other buffers of a node with elements must not be NULL (a
 * zero-length node may have NULL data).
 */
typedef struct ck_arrow_node {
  int64_t length;
  int64_t n_buffers;
  const void *buffers[3];
  const struct ck_arrow_node *child;
  int64_t null_count;
} ck_arrow_node;

/*
 * Fill *out with an ArrowDeviceArray describing `root` on `device_type`
 * (ARROW_DEVICE_CPU, _CUDA, _OPENCL, ...) `device_id` (-1 for the CPU), no
 * sync event.  Errors: CK_ERR_INVALID_ARGUMENT for a NULL argument, a
 * negative length, n_buffers outside 1..3, a null_count that a NULL
 * validity buffer or the length contradicts, a NULL buffer of a non-empty node, a chain deeper than
 * CK_ARROW_WRAP_MAX_DEPTH; CK_ERR_NO_MEMORY.
 */
CK_API ck_status ck_arrow_wrap(const ck_arrow_node *root, int32_t device_type,
                               int64_t device_id, void (*release)(void *handle),
                               void *handle, struct ArrowDeviceArray *out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ARROW_WRAP_H */
