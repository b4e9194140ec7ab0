/*
 * ckernel/assign_array.h -- the general assignment factory.  Applying it to
 * whole arrays (ck_array_assign) and applying any kernel (ck_array_apply)
 * are in apply.h, which this header includes.
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
 *   ?U      <- ?T / T    option kernels (docs/kernel-abi.md "Option types"),
 *   U       <- ?T        also over dims: an option over a dim (`?var * T`,
 *                        a null-able row) is a level of the lifting, so
 *                        `?var * U <- var * T` lines the rows up and a null
 *                        row's items are never converted.  ck_array_assign
 *                        into unallocated `var * ?T` rows of an array no
 *                        other array sees lays them out first with one
 *                        allocation and one bitmap over their items (the
 *                        layout of the jit's `var * ?R` results).
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
#include "ckernel/apply.h"

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
