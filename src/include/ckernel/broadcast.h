/*
 * ckernel/broadcast.h -- NumPy broadcasting of strided operands for one loop.
 *
 * ck_array_apply broadcasts while it builds the dimension kernels (lift.h).
 * Code that runs its own loop over raw strided memory -- device kernels,
 * which get per-operand byte strides -- asks here instead, so the rules and
 * the messages are the library's one set:
 *
 *   ck_broadcast_strides   the destination's shape is the iteration space;
 *                          every source broadcasts to it (missing leading
 *                          dims and dims of size 1 get stride 0), as
 *                          ck_array_apply with a given destination;
 *   ck_coalesce_dims       merges dims that every operand walks as one
 *                          (so a contiguous or scalar-broadcast operation
 *                          becomes 1-d) and drops dims of size 1.
 *
 * The result shape of sources without a destination is ck_broadcast_shapes
 * (lift.h).  Strides are in bytes and may be zero or negative.
 */
#ifndef CKERNEL_BROADCAST_H
#define CKERNEL_BROADCAST_H

#include "ckernel/config.h"
#include "ckernel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A strided operand: `ndim` sizes (>= 0, outermost first) and byte strides. */
typedef struct ck_strided_operand {
  size_t ndim;
  const intptr_t *shape;
  const intptr_t *strides;
} ck_strided_operand;

/*
 * Lay `nsrc` sources over the index space of `dst`.  Writes dst->ndim to
 * *out_ndim (CK_ERR_INVALID_ARGUMENT if it exceeds `max`), dst's shape to
 * out_shape and, in out_strides (nsrc + 1 rows of `max` entries), row 0:
 * dst's strides, row 1 + j: source j's strides over dst's dims (0 where the
 * source has no such dim or a dim of size 1).  CK_ERR_VALUE
 * "cannot broadcast shape (3,) to (4,)" when a source has more dims than
 * dst (other than leading 1s) or a size that is neither 1 nor dst's.
 * `nsrc` may be 0; `src` is then not read.
 */
CK_API ck_status ck_broadcast_strides(const ck_strided_operand *dst, size_t nsrc,
                                      const ck_strided_operand *src, size_t max,
                                      size_t *out_ndim, intptr_t *out_shape,
                                      intptr_t *out_strides);

/*
 * Simplify an iteration space in place: `shape` has *ndim entries, `strides`
 * holds `noperands` rows of `pitch` entries (row k: operand k's strides, as
 * ck_broadcast_strides writes them).  Dims of size 1 are dropped, and dim d
 * merges into d + 1 when every operand's stride[d] == stride[d + 1] *
 * shape[d + 1].  A space with no elements becomes 1-d of size 0.  The
 * result may be 0-d (a single element).  Element order is unchanged: the
 * flat index i visits the same elements before and after.
 */
CK_API ck_status ck_coalesce_dims(size_t noperands, size_t *ndim, intptr_t *shape,
                                  intptr_t *strides, size_t pitch);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_BROADCAST_H */
