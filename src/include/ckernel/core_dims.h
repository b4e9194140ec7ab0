/*
 * ckernel/core_dims.h -- kernels over core dimensions (generalised ufuncs).
 *
 * A kernel with core dims has a signature whose types hold dims:
 *
 *     float64(N * float64, N * float64)          a dot product
 *     M * float64(M * N * float64, N * float64)  matrix times vector
 *     float64(var * float64)                     the sum of a ragged row
 *     var * float64(var * float64)               a filtered row
 *     3 * float64(3 * float64, 3 * float64)      a cross product
 *
 * Each signature type is a *pattern* (types.h): its dims are the operand's
 * "core dims", which the kernel sees whole, and its dtype the element type
 * baked into the kernel.  A core dim of a pattern is
 *   - fixed (`3 *`): the operand's dim must be fixed or strided of that size;
 *   - symbolic (`N *`, a dimension variable): fixed or strided; the size is
 *     bound per call and every use of the same variable must agree, in the
 *     arguments and in a given destination; a variable of the result must be
 *     bound by an argument;
 *   - var (`var *`): any dim -- var, fixed or strided (the kernel reads the
 *     kind from its data).
 * An operand's dims before its core dims are its "outer dims": the kernel is
 * lifted over them with NumPy broadcasting, var outer dims and the parallel
 * outer loop (ck_make_lifted_kernel, lift.h).  Core dims are never
 * broadcast: their sizes must match exactly, as in NumPy's gufuncs.  The
 * element types must be equal to the patterns' dtypes (convert first).
 *
 * The child factory (ck_child_kernel_factory, lift.h) builds the kernel for
 * one outer element: it gets the operands' core types and the arrmeta of
 * their first core dim, copies what it needs (sizes, strides) into its
 * kernel data and must stay correct for any outer element (core arrmeta is
 * the same for all of them).  ck_jit_child_factory (jit.h) is one.
 *
 * Dimension variables are bound into a ck_dim_bindings table.  Errors name
 * the operands and the variable:
 *   "ck_array_apply_core: dimension variable N is 3 in argument 0 and 4 in
 *    argument 1 (core dim 0 of 'N * float64')"
 */
#ifndef CKERNEL_CORE_DIMS_H
#define CKERNEL_CORE_DIMS_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/array.h"
#include "ckernel/builder.h"
#include "ckernel/lift.h"
#include "ckernel/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most distinct dimension variables in one signature. */
#define CK_CORE_MAX_VARS 16

/* Dimension variables bound to sizes.  A zeroed struct is empty.  Names are
 * borrowed from the pattern types they were read from, which must outlive
 * the table; `origins` names the operand each was bound by ("argument 0"),
 * for messages. */
typedef struct ck_dim_bindings {
  size_t count;
  const char *names[CK_CORE_MAX_VARS];
  intptr_t sizes[CK_CORE_MAX_VARS];
  char origins[CK_CORE_MAX_VARS][24];
} ck_dim_bindings;

/* The size bound to `name`, or -1 when it is not bound. */
CK_API intptr_t ck_dim_bindings_get(const ck_dim_bindings *b, const char *name);

/*
 * Match an operand of type `type` (arrmeta `arrmeta`; may be NULL only for a
 * type without fixed/strided dims) against the pattern `pattern`: its last
 * ck_type_ndim(pattern) dims against the pattern's dims as described above,
 * its dtype against the pattern's dtype (ck_type_equal; a `?T` pattern dtype
 * also takes `T`, elements without nulls), binding the
 * pattern's dimension variables in `b` (or checking them against earlier
 * bindings).  `what` names the operand in messages ("argument 1", "the
 * result").  *out_outer_ndim (optional) gets the number of outer dims.
 * Errors: CK_ERR_VALUE (sizes: "dimension variable N is 3 in argument 0 and
 * 4 in argument 1 (core dim 0 of 'N * float64')"; "argument 1: core dim 0
 * has size 4, the signature's '3 * float64' wants 3"; too few dims, as
 * NumPy's gufuncs raise ValueError), CK_ERR_TYPE (a var dim where the pattern has
 * a fixed or symbolic one, other element types, a pattern `strided` dim or a
 * dimension variable inside a struct field), CK_ERR_INVALID_ARGUMENT
 * (NULLs, more than CK_CORE_MAX_VARS variables).
 */
CK_API ck_status ck_core_match(ck_type pattern, ck_type type, const char *arrmeta,
                               const char *what, ck_dim_bindings *b,
                               size_t *out_outer_ndim);

/*
 * The result type of applying a kernel with signature `dst_pattern(src_patterns)`
 * to sources of `src_types` (with their arrmeta): the broadcast outer dims
 * (strided up to the first var one, then var where a source has var, fixed
 * otherwise) followed by the result's core dims (fixed and symbolic ones with
 * their sizes -- strided while every dim above is strided, fixed below a var
 * dim --, var ones var) over the pattern's dtype.  The sizes of the leading
 * strided dims go to out_shape (room for `max`) and their count to
 * *out_nstrided (optional); the bindings (optional) to *out_bindings.  New
 * reference in *out_type.  Errors as ck_core_match, ck_broadcast_shapes, and
 * CK_ERR_TYPE for a result variable no argument binds.
 */
CK_API ck_status ck_core_result_type(ck_type dst_pattern, size_t nsrc,
                                     const ck_type *src_patterns,
                                     const ck_type *src_types,
                                     const char *const *src_arrmeta,
                                     ck_type *out_type, intptr_t *out_shape, size_t max,
                                     size_t *out_nstrided, ck_dim_bindings *out_bindings);

/*
 * Build the kernel `dst = child(src...)` over core dims: every source and
 * the destination are matched to their patterns (ck_core_match, one table of
 * bindings), then the outer dims are lifted (ck_make_lifted_kernel with the
 * patterns' ndims as core ndims) around the child.  Arguments and errors as
 * ck_make_elementwise_kernel plus those of ck_core_match.
 */
CK_API ck_status ck_make_core_kernel(ck_kernel_builder *ckb, size_t offset,
                                     ck_type dst_pattern, ck_type dst_type,
                                     const char *dst_arrmeta, size_t nsrc,
                                     const ck_type *src_patterns,
                                     const ck_type *src_types,
                                     const char *const *src_arrmeta,
                                     ck_kernel_request req, ck_child_kernel_factory child,
                                     void *child_data, size_t *out_end);

/*
 * ck_array_apply (apply.h) for a kernel with core dims: a new result of
 * ck_core_result_type, or the given destination (matched to dst_pattern,
 * its outer dims broadcasting the sources' and its element type that of the
 * pattern: convert afterwards otherwise).  Overlap, arenas and the parallel
 * outer loop as ck_array_apply.  *out (optional when a destination is
 * given) receives a new reference to the result.
 */
CK_API ck_status ck_array_apply_core(ck_child_kernel_factory child, void *child_data,
                                     ck_type dst_pattern, size_t nsrc,
                                     const ck_type *src_patterns,
                                     ck_array_preamble *const *srcs,
                                     ck_array_preamble *dst_or_null,
                                     ck_array_preamble **out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_CORE_DIMS_H */
