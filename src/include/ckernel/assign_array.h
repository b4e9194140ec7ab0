/*
 * ckernel/assign_array.h -- the general assignment factory and the
 * array-level entry points (what the Python binding calls).
 *
 * ck_make_assignment_kernel handles every pair of types this library can
 * convert:
 *   builtin <- builtin   ck_make_builtin_assignment_kernel (assign.h), with
 *                        the error mode's checks
 *   dims    <- dims      elementwise lifting with broadcasting (lift.h):
 *                        fixed/strided <- fixed/strided/var/missing,
 *                        var <- var/fixed/strided/size-1/missing
 *   string  <- string    SHARES the bytes (copies begin/end) when both
 *                        arrmeta reference the same arena, else copies them
 *                        into the destination's arena
 *   bytes   <- bytes     the same (the destination's alignment is used)
 *   number  <- string    strict parsing: the whole text, surrounding ASCII
 *                        whitespace allowed.  bool: True/False/true/false/
 *                        1/0; ints: [+-]digits, range checked under the
 *                        error mode (through int64/uint64); floats: strtod
 *                        syntax (nan, inf, exponents); complex: Python
 *                        syntax "(1+2j)", "2j", "1-1e3j", "3".  Bad text is
 *                        CK_ERR_VALUE "cannot parse 'abc' as int32".
 *   string  <- number    formats like Python's repr: ints in decimal, bool
 *                        "True"/"False", floats shortest round-trip ("0.1",
 *                        "1e+300", "100.0", "nan", "-inf"; float32/float16
 *                        shortest for their own precision), complex
 *                        "(1+2j)", "2j".
 *   struct  <- struct    field by field; both structs need the same field
 *                        names in the same order (else CK_ERR_TYPE), each
 *                        field pair must be assignable.
 *   T       <- T         for other identical POD types (no blockrefs): a
 *                        byte copy.
 * Anything else is CK_ERR_TYPE "cannot assign from 'string' to '3 * int32'"
 * (both types named).  Parsing and formatting use the "C" locale whatever
 * the process locale is.
 *
 * Lifetime: the kernel copies what it needs from the arrmeta at build time
 * and holds references to destination arenas it allocates from; it may
 * outlive the arrays, but must only be called with data laid out as the
 * arrmeta it was built from described.
 */
#ifndef CKERNEL_ASSIGN_ARRAY_H
#define CKERNEL_ASSIGN_ARRAY_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/types.h"
#include "ckernel/array.h"
#include "ckernel/assign.h"
#include "ckernel/lift.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Build the kernel assigning a `src_type` value to a `dst_type` value at
 * `offset` of `ckb` (one source).  Errors: CK_ERR_INVALID_ARGUMENT,
 * CK_ERR_TYPE (no conversion), CK_ERR_VALUE (shapes that cannot
 * broadcast), CK_ERR_NO_MEMORY / CK_ERR_OVERFLOW. */
CK_API ck_status ck_make_assignment_kernel(ck_kernel_builder *ckb,
                                           size_t offset, ck_type dst_type,
                                           const char *dst_arrmeta,
                                           ck_type src_type,
                                           const char *src_arrmeta,
                                           ck_kernel_request req,
                                           ck_errmode mode, size_t *out_end);

/*
 * Work (destination elements) from which the array-level entry points split
 * the outermost dimension over the thread pool (ck_parallel_for, thread
 * count from CK_NUM_THREADS / ck_set_num_threads).  Each chunk holds at least
 * CK_PARALLEL_MIN_CHUNK_ELEMENTS elements.  The split happens only when
 *   - the destination's outermost dim is fixed/strided (var: serial),
 *   - the destination type has no blockrefs (strings, bytes and var dims
 *     allocate from one arena, which has a single writer: serial),
 *   - every fixed/strided destination dim multiplied together reaches
 *     CK_PARALLEL_MIN_ELEMENTS (64 Ki elements), and the outermost dim has
 *     at least two chunks.
 * Every worker calls the same built kernel (kernels are threadsafe) on its
 * range of rows.  The first failure's status and message reach the caller;
 * the other workers stop at their next chunk.  Rows before the failure may
 * have been written, in any order.
 */
#define CK_PARALLEL_MIN_ELEMENTS 65536
#define CK_PARALLEL_MIN_CHUNK_ELEMENTS 16384

/*
 * dst = src, converting and broadcasting (ck_make_assignment_kernel).  The
 * destination needs the WRITE flag (CK_ERR_INVALID_STATE "array is
 * read-only").  Builds the kernel in a builder on the stack (no allocation
 * for small trees), runs it (in parallel when large, see above) and destroys
 * it.  Overlapping dst and src memory is not detected: the result is then
 * unspecified (copy first).
 */
CK_API ck_status ck_array_assign(ck_array_preamble *dst,
                                 const ck_array_preamble *src, ck_errmode mode);

/*
 * Apply an elementwise operation: `child` builds the scalar kernel (see
 * ck_child_kernel_factory) producing `dst_dtype` elements from the dtypes of
 * the `nsrc` sources.  With dst_or_null == NULL a new C-contiguous result is
 * allocated with the broadcast shape (ck_elementwise_result_type: strided
 * dims, var where a source has var dims); otherwise the given destination
 * (WRITE flag needed) is written, its dims broadcasting the sources and its
 * dtype passed to the child (dst_dtype is then ignored and may be
 * CK_TYPE_UNINITIALIZED).  *out (optional when a destination is given)
 * receives a new reference to the result.  Parallel as ck_array_assign.
 */
CK_API ck_status ck_array_apply(ck_child_kernel_factory child, void *child_data,
                                ck_type dst_dtype, size_t nsrc,
                                ck_array_preamble *const *srcs,
                                ck_array_preamble *dst_or_null,
                                ck_array_preamble **out);

/* A ck_child_kernel_factory for ck_array_apply / ck_make_elementwise_kernel
 * that builds the assignment kernel (one source): `child_data` points to a
 * ck_errmode. */
CK_API ck_status ck_assignment_child_factory(
    void *child_data, ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
    const char *dst_arrmeta, size_t nsrc, const ck_type *src_types,
    const char *const *src_arrmeta, ck_kernel_request req, size_t *out_end);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ASSIGN_ARRAY_H */
