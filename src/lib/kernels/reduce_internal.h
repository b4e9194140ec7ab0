/*
 * reduce_internal.h -- the direct path of the null-aware reductions
 * (reduce_valid.c), used by ck_array_reduce_nulls (reduce_option.c).
 * Private; nothing here is ABI.
 */
#ifndef CKERNEL_REDUCE_INTERNAL_H
#define CKERNEL_REDUCE_INTERNAL_H

#include "types/type_internal.h"
#include "ckernel/array.h"

#include <stdbool.h>

/* What is computed: the value reduction "sum", the mean, the count. */
enum { CK__RV_SUM = 0, CK__RV_MEAN = 1, CK__RV_COUNT = 2 };

/* Whether `t` is one strided or fixed dim over a non-dim element. */
static inline bool ck__rv_is_1d_dim(ck_type t) {
  return ck__is_dim(t) && t->id != CK_TYPE_VAR_DIM && !ck__is_dim(t->element);
}

/* sum / mean / count of a whole one-dimensional `?float64` or `?float32`
 * array (count: any `?T`) over axes NULL or {0}, without keepdims, whose
 * values are contiguous and whose slots step one bit per element, read from
 * the values and the bitmap directly (pairwise sums, as the general path).
 * Sets *done and the result in *out (a new 0-d array, as
 * ck_array_reduce_nulls documents) when it applies; *done false and CK_OK
 * when it does not (the caller takes the general path). */
ck_status ck__reduce_valid_1d(int kind, const ck_array_preamble *src, const size_t *axes,
                              size_t naxes, bool keepdims, bool skip_nulls,
                              ck_array_preamble **out, bool *done);

#endif /* CKERNEL_REDUCE_INTERNAL_H */
