/*
 * ckernel/reduce.h -- reductions: sum, product, min, max, any, all over
 * chosen axes, with keepdims, over the fixed/strided dims of arrays of
 * builtin dtypes.
 *
 * Result dtypes follow NumPy:
 *   sum, product  bool, int8..int64 -> int64; uint8..uint64 -> uint64;
 *                 float16/32/64 and complex64/128 keep their type.  Integer
 *                 arithmetic wraps modulo 2^64 (as NumPy's).
 *   min, max      the source dtype; NaN propagates (the first NaN met wins);
 *                 complex compares lexicographically (real, then imag).
 *   any, all      bool (a value is true when nonzero; NaN is true).
 * Identities: sum 0, product 1, any false, all true.  min/max have none: a
 * reduction over zero elements that must produce an element is CK_ERR_VALUE
 * "zero-size array to reduction operation minimum which has no identity"
 * (as NumPy; an empty result is fine).
 *
 * Axes that walk memory as one run are merged first (a C-contiguous full
 * reduction is a single run, as NumPy's iterator does it).  Float sums use
 * pairwise summation along the innermost run (as NumPy: blocks of 8 partial
 * sums up to 128 elements, then halving), in double precision for
 * float16/float32/float64 and per component for complex.  Sums over an
 * outer axis accumulate row by row, as NumPy.  Results agree with numpy.sum
 * to a few ulp (a contiguous float64 sum: bit for bit).
 *
 * The kernel tree: one ck strided dim kernel per source axis (destination
 * stride 0 on reduced axes) over an "accumulate" leaf:
 *   leaf.strided(dst, dst_stride, src, src_stride, n): dst[i] op= src[i];
 *   with dst_stride == 0 the whole run folds into one element.
 * The destination starts as the identity (min/max: a copy of the first
 * element along the reduced axes).
 *
 * Var dims: CK_ERR_NOT_SUPPORTED (not implemented).
 *
 * Threads: a reduction over at least CK_PARALLEL_MIN_ELEMENTS source
 * elements runs on the thread pool (parallel.h) when the split cannot change
 * the result, so every thread count gives the same bytes: along an output
 * axis (each thread owns whole output elements), or, for a full reduction
 * of one run, in chunks that combine exactly (integer/bool sum and product,
 * any, all, min, max) or along the pairwise recursion (float and complex
 * sums: the partial sums in double combine in the same tree as the serial
 * loop).  Float/complex products and ck_array_reduce_binary run on the
 * calling thread.
 */
#ifndef CKERNEL_REDUCE_H
#define CKERNEL_REDUCE_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/types.h"
#include "ckernel/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Values are ABI. */
typedef enum ck_reduce_op {
  CK_REDUCE_SUM = 0,
  CK_REDUCE_PRODUCT = 1,
  CK_REDUCE_MIN = 2,
  CK_REDUCE_MAX = 3,
  CK_REDUCE_ANY = 4,
  CK_REDUCE_ALL = 5
} ck_reduce_op;

/* "sum"/"add", "product"/"prod"/"multiply", "min"/"minimum",
 * "max"/"maximum", "any"/"logical_or", "all"/"logical_and".
 * CK_ERR_INVALID_ARGUMENT otherwise. */
CK_API ck_status ck_reduce_op_from_name(const char *name, ck_reduce_op *out);

/* "sum", "product", "minimum", "maximum", "any", "all"; NULL if unknown. */
CK_API const char *ck_reduce_op_name(ck_reduce_op op);

/* The result dtype of `op` over builtin `src_dtype` (CK_ERR_TYPE for a
 * non-builtin). */
CK_API ck_status ck_reduce_result_dtype(ck_reduce_op op, ck_type src_dtype,
                                        ck_type *out);

/*
 * The accumulate leaf kernel for `op` reading `src_dtype` elements into
 * result-dtype elements (see above), at `offset` of `ckb`.  A bare prefix:
 * threadsafe, no destructor.  *out_end as the other factories.
 */
CK_API ck_status ck_make_reduce_accumulate_kernel(ck_kernel_builder *ckb,
                                                  size_t offset,
                                                  ck_reduce_op op,
                                                  ck_type_id src_dtype,
                                                  ck_kernel_request req,
                                                  size_t *out_end);

/*
 * Reduce `src` over `axes` (naxes distinct values < ndim; axes == NULL
 * means every axis; naxes == 0 with non-NULL axes reduces nothing).  The
 * result is a new C-contiguous array (`strided` dims, none for a full
 * reduction without keepdims) in *out; with keepdims the reduced axes stay
 * as size 1.  Errors: CK_ERR_INVALID_ARGUMENT (unknown op, NULLs),
 * CK_ERR_INDEX "axis 3 is out of bounds for array of dimension 2",
 * CK_ERR_VALUE (duplicate axis; empty min/max), CK_ERR_TYPE (non-builtin
 * dtype), CK_ERR_NOT_SUPPORTED (var dims), CK_ERR_NO_MEMORY.
 */
CK_API ck_status ck_array_reduce(const char *op_name,
                                 const ck_array_preamble *src,
                                 const size_t *axes, size_t naxes,
                                 bool keepdims, ck_array_preamble **out);

/* The same with a mask: mask[i] true reduces axis i (nmask must equal the
 * array's ndim). */
CK_API ck_status ck_array_reduce_mask(const char *op_name,
                                      const ck_array_preamble *src,
                                      const bool *mask, size_t nmask,
                                      bool keepdims, ck_array_preamble **out);

/*
 * Reductions over option dtypes (`dims * ?T`, T a number or bool; also
 * accepts plain T, all valid).  ck_array_reduce and ck_array_reduce_mask
 * call this with skip_nulls = true for an option dtype.
 *   sum, product, min, max, any, all: the result is `?R` (R as above);
 *     skip_nulls: the reduction of the valid values, null where an output
 *     element has no valid value (all null, or nothing to reduce);
 *     !skip_nulls: null where any value is null, except Kleene any/all
 *     (Arrow's): a valid true decides any, a valid false decides all.
 *   mean: `?float64`, the sum of the valid values over their count (null
 *     as above); complex: CK_ERR_TYPE.
 *   count: int64, the number of valid values (never null).
 * The bytes under a null result are zero.  Built from the value reduction
 * (nulls replaced by the identity, so pairwise float sums and threads are
 * those of ck_array_reduce) and a count of the valid values.  Var dims:
 * CK_ERR_NOT_SUPPORTED.  Axes and keepdims as ck_array_reduce.
 */
CK_API ck_status ck_array_reduce_nulls(const char *op_name, const ck_array_preamble *src,
                                       const size_t *axes, size_t naxes, bool keepdims,
                                       bool skip_nulls, ck_array_preamble **out);

/*
 * Plug-in point for named binary operations (e.g. the op registry): a
 * factory building at `offset` a binary expr kernel  dst = f(src0, src1)
 * with all three of type `dtype`, entry point for `req`.
 */
typedef ck_status (*ck_binary_kernel_factory)(void *data, ck_kernel_builder *ckb,
                                              size_t offset, ck_type_id dtype,
                                              ck_kernel_request req,
                                              size_t *out_end);

/*
 * Reduce with a binary kernel from `factory` (called once, with
 * CK_KERNEL_REQUEST_STRIDED): the source is first converted to `dtype`
 * (default error mode), the result starts as `*identity` (a `dtype` value)
 * or, when identity is NULL, as the first element along the reduced axes
 * (zero elements: CK_ERR_VALUE naming `op_label`), then
 * acc = f(acc, x) runs over the source in row-major order.  The binary
 * kernel must process elements in order: its destination and first source
 * alias (stride 0 when a run folds into one element).  No pairwise
 * summation here.  Axes/keepdims/errors as ck_array_reduce.
 */
CK_API ck_status ck_array_reduce_binary(ck_binary_kernel_factory factory,
                                        void *factory_data, const char *op_label,
                                        ck_type_id dtype, const void *identity,
                                        const ck_array_preamble *src,
                                        const size_t *axes, size_t naxes,
                                        bool keepdims, ck_array_preamble **out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_REDUCE_H */
