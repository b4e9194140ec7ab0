/*
 * ckernel/assign.h -- assignment kernels between builtin scalar types.
 *
 * Every pair of the 14 builtin types (bool, int8..int64, uint8..uint64,
 * float16, float32, float64, complex64, complex128) has a single and a
 * strided kernel under each error mode.  They are leaf kernels made of a
 * bare prefix (no data, no destructor), read and write their elements with
 * no alignment requirement, and keep no state: they may be called from any
 * number of threads at once.
 *
 * Error modes (DyND's meanings; the full table is in docs/kernel-abi.md):
 *
 *   NOCHECK     never fails; C conversions made well-defined:
 *                 int -> narrower int / unsigned: wraps modulo 2^N;
 *                 float -> int: truncates toward zero, saturates at the
 *                   destination's min/max when out of range, NaN gives 0;
 *                 complex -> real: takes the real part;
 *                 anything -> bool: true iff nonzero (NaN is true);
 *                 float narrowing: rounds to nearest even, inf on overflow.
 *   OVERFLOW    fails (CK_ERR_OVERFLOW) when the value is out of the
 *               destination's range: int narrowing, negative to unsigned,
 *               float -> int of NaN, inf or out-of-range values, a finite
 *               float becoming inf when narrowed, a value other than 0 or 1
 *               into bool; and (CK_ERR_VALUE) complex -> non-complex with a
 *               nonzero (or NaN) imaginary part.  Float -> int truncates.
 *   FRACTIONAL  OVERFLOW, plus CK_ERR_VALUE when float -> int drops a
 *               fractional part (3.5 -> int32).
 *   INEXACT     FRACTIONAL, plus CK_ERR_VALUE when the result does not
 *               convert back to the source value (int64 2^53+1 -> float64,
 *               float64 0.1 -> float32, underflow to zero).  NaN -> NaN is
 *               exact.
 *   DEFAULT     = FRACTIONAL.
 *
 * Messages name the value and both types, e.g. "assign: overflow while
 * assigning int64 value 300 to uint8"; values print in the shortest form
 * that reads back exactly ("0.1", "(1+2j)").
 */
#ifndef CKERNEL_ASSIGN_H
#define CKERNEL_ASSIGN_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Values are ABI. */
typedef enum ck_errmode {
  CK_ERRMODE_NOCHECK = 0,
  CK_ERRMODE_OVERFLOW = 1,
  CK_ERRMODE_FRACTIONAL = 2,
  CK_ERRMODE_INEXACT = 3,
  CK_ERRMODE_DEFAULT = 4 /* = CK_ERRMODE_FRACTIONAL */
} ck_errmode;

/* "nocheck", "overflow", "fractional", "inexact", "default"; NULL if unknown. */
CK_API const char *ck_errmode_name(ck_errmode mode);

/* Parse one of the names above (CK_ERR_INVALID_ARGUMENT otherwise). */
CK_API ck_status ck_errmode_from_name(const char *name, ck_errmode *out);

/*
 * Build the kernel assigning builtin `src` to builtin `dst` at `offset` of
 * `ckb` (a multiple of CK_KERNEL_ALIGN), installing the entry point for
 * `req`.  *out_end_offset (optional) receives the offset just past the
 * kernel (offset + sizeof(ck_prefix)).  Grows the builder only if the prefix
 * does not fit yet (a parent normally reserved it).  Same-type pairs copy the
 * bytes unchanged in every mode.
 * Errors: CK_ERR_INVALID_ARGUMENT (NULL builder, misaligned offset, unknown
 * request or mode), CK_ERR_TYPE (not a builtin id), CK_ERR_OVERFLOW /
 * CK_ERR_NO_MEMORY from growing the builder.
 */
CK_API ck_status ck_make_builtin_assignment_kernel(ck_kernel_builder *ckb,
                                                   size_t offset,
                                                   ck_type_id dst,
                                                   ck_type_id src,
                                                   ck_kernel_request req,
                                                   ck_errmode mode,
                                                   size_t *out_end_offset);

/*
 * Byte copy of `data_size` bytes per element (any alignment; memcpy
 * semantics, so dst and src elements must not overlap).  Used for same-type
 * copies of any POD type.  The kernel stores data_size after its prefix
 * (layout ck_pod_copy_kernel below); sizes 1, 2, 4, 8 and 16 get
 * specialised entry points.  The strided entry point does one memcpy when
 * both strides equal data_size.  Errors as above.
 */
typedef struct ck_pod_copy_kernel {
  ck_prefix base;
  size_t data_size;
} ck_pod_copy_kernel;

CK_API ck_status ck_make_pod_copy_kernel(ck_kernel_builder *ckb, size_t offset,
                                         size_t data_size,
                                         ck_kernel_request req,
                                         size_t *out_end_offset);

/* Convenience: assign one element (builds a single kernel on the stack; no
 * heap allocation).  Same errors as the kernel. */
CK_API ck_status ck_assign_builtin_value(ck_type_id dst, void *dst_ptr,
                                         ck_type_id src, const void *src_ptr,
                                         ck_errmode mode);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ASSIGN_H */
