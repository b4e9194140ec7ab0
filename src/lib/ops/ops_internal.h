/*
 * ops_internal.h -- generators of the built-in registry kernels and the
 * tables that list them.  Private to src/lib/ops/; nothing here is ABI.
 *
 * A kernel is an element function
 *     static inline int ck__<op>_<tok>(TR *r, TA a [, TB b])
 * over the STORAGE types of its arguments (uint8_t for bool, uint16_t bits
 * for float16, ck__complex64/128 for complex), returning 0 or a status
 * (after recording the message).  CK__DEFINE1/2 wrap it into a leaf
 * kernel's single and strided entry points and a ck_kernel_info named
 * "<op>_<tok>"; CK__ROW1/2 make the registration row.  Each family file
 * lists its kernels once in an X-macro
 *     #define CK__FAMILY(U, B)  U(op, tok, TA, TR, IDA, IDR)
 *                               B(op, tok, TA, TB, TR, IDA, IDB, IDR) ...
 * and expands it twice (definitions, then the rows of its ck__op_table), so adding a type
 * combination is one line in that list plus its element function.
 *
 * Element functions are always inlined into loops specialised by the
 * compiler; those that cannot fail return the constant 0, so the status
 * test vanishes and the contiguous loop vectorises where the operation
 * allows.  The entry points keep no state (threadsafe), accept any
 * alignment (memcpy loads/stores), and walk strided data by running byte
 * offsets, so negative and zero strides are fine.
 *
 * Compute types: float16 is computed in float32 and rounded back once
 * (NumPy's rule); float32 in float; float64 in double; complex in their
 * component type with NumPy's formulas where C's Annex G ones differ.
 */
#ifndef CKERNEL_OPS_INTERNAL_H
#define CKERNEL_OPS_INTERNAL_H

#include "core/core_internal.h"
#include "core/scalar_internal.h"

#include "ckernel/registry.h"

#include <complex.h>
#include <fenv.h>
#include <math.h>
#include <string.h>

#if defined(__GNUC__)
#define CK__OPS_INLINE inline __attribute__((always_inline, unused))
#define CK__OPS_COLD __attribute__((cold, noinline))
#else
#define CK__OPS_INLINE inline
#define CK__OPS_COLD
#endif

/* ---- type lists ---------------------------------------------------------- */

/* Signed / unsigned integers: M(tok, id, T, WU, bits, ...) where WU is an
 * unsigned type at least as wide as int, in which wrapping arithmetic is
 * done (no promotion to signed int, so no overflow UB). */
#define CK__SINT_TYPES(M, ...)                                                 \
  M(int8, CK_TYPE_INT8, int8_t, unsigned, 8, __VA_ARGS__)                      \
  M(int16, CK_TYPE_INT16, int16_t, unsigned, 16, __VA_ARGS__)                  \
  M(int32, CK_TYPE_INT32, int32_t, uint32_t, 32, __VA_ARGS__)                  \
  M(int64, CK_TYPE_INT64, int64_t, uint64_t, 64, __VA_ARGS__)
#define CK__UINT_TYPES(M, ...)                                                 \
  M(uint8, CK_TYPE_UINT8, uint8_t, unsigned, 8, __VA_ARGS__)                   \
  M(uint16, CK_TYPE_UINT16, uint16_t, unsigned, 16, __VA_ARGS__)               \
  M(uint32, CK_TYPE_UINT32, uint32_t, uint32_t, 32, __VA_ARGS__)               \
  M(uint64, CK_TYPE_UINT64, uint64_t, uint64_t, 64, __VA_ARGS__)
#define CK__INT_TYPES(M, ...)                                                  \
  CK__SINT_TYPES(M, __VA_ARGS__) CK__UINT_TYPES(M, __VA_ARGS__)

/* Real floats: M(tok, id, ST, CT, LD, STO, SUF, ...): storage type,
 * compute type, load (ST -> CT) and store (CT -> ST) functions, and the
 * libm suffix of the compute type (f or nothing). */
#define CK__FLOAT_TYPES(M, ...)                                                \
  M(float16, CK_TYPE_FLOAT16, uint16_t, float, ck__ld_f16, ck__st_f16, f,      \
    __VA_ARGS__)                                                               \
  M(float32, CK_TYPE_FLOAT32, float, float, ck__ld_f32, ck__st_f32, f,         \
    __VA_ARGS__)                                                               \
  M(float64, CK_TYPE_FLOAT64, double, double, ck__ld_f64, ck__st_f64, ,        \
    __VA_ARGS__)

/* Complex: M(tok, id, ST, RT, RID, CT, SUF, ...): storage struct, real
 * component type and its id, C complex type, libm suffix. */
#define CK__COMPLEX_TYPES(M, ...)                                              \
  M(complex64, CK_TYPE_COMPLEX64, ck__complex64, float, CK_TYPE_FLOAT32,       \
    float complex, f, __VA_ARGS__)                                             \
  M(complex128, CK_TYPE_COMPLEX128, ck__complex128, double, CK_TYPE_FLOAT64,   \
    double complex, , __VA_ARGS__)

static CK__OPS_INLINE float ck__ld_f16(uint16_t h) {
  return (float)ck__f16_to_f64(h);
}
/* float32 -> float64 is exact, so this rounds once.  As NumPy's float16
 * conversion: a finite value that rounds to infinity raises "overflow", one
 * that loses bits to a subnormal or zero result raises "underflow". */
static CK__OPS_INLINE uint16_t ck__st_f16(float f) {
  uint16_t h = ck__f64_to_f16((double)f);
  if ((h & 0x7c00u) == 0x7c00u) {
    if ((h & 0x3ffu) == 0 && isfinite(f)) {
      feraiseexcept(FE_OVERFLOW | FE_INEXACT);
    }
  } else if ((h & 0x7c00u) == 0 && ck__f16_to_f64(h) != (double)f) {
    feraiseexcept(FE_UNDERFLOW | FE_INEXACT);
  }
  return h;
}
static CK__OPS_INLINE float ck__ld_f32(float f) { return f; }
static CK__OPS_INLINE float ck__st_f32(float f) { return f; }
static CK__OPS_INLINE double ck__ld_f64(double d) { return d; }
static CK__OPS_INLINE double ck__st_f64(double d) { return d; }

/* C complex <-> storage (C11 6.2.5p13: same layout as an array of two).
 * Built from the parts' bits, not as re + im * I: that sum turns the
 * imaginary -0.0 into +0.0 and loses the side of a branch cut. */
static CK__OPS_INLINE float complex ck__cpackf(float re, float im) {
  float parts[2] = {re, im};
  float complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}
static CK__OPS_INLINE double complex ck__cpack(double re, double im) {
  double parts[2] = {re, im};
  double complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}
#define CK__CLOAD(CT, s)                                                       \
  _Generic((s).re, float: ck__cpackf, default: ck__cpack)((s).re, (s).im)

/* NumPy's ordering of complex numbers (lexicographic; comparisons with a NaN
 * part are false except !=).  From numpy/core/src/umath/loops.c.src: its
 * comparison loops use `<` (a NaN part raises "invalid", as here). */
#define CK__CLT(xr, xi, yr, yi)                                                \
  (((xr) < (yr) && !isnan(xi) && !isnan(yi)) || ((xr) == (yr) && (xi) < (yi)))
#define CK__CLE(xr, xi, yr, yi)                                                \
  (((xr) < (yr) && !isnan(xi) && !isnan(yi)) || ((xr) == (yr) && (xi) <= (yi)))
#define CK__CGT(xr, xi, yr, yi)                                                \
  (((xr) > (yr) && !isnan(xi) && !isnan(yi)) || ((xr) == (yr) && (xi) > (yi)))
#define CK__CGE(xr, xi, yr, yi)                                                \
  (((xr) > (yr) && !isnan(xi) && !isnan(yi)) || ((xr) == (yr) && (xi) >= (yi)))
/* The same orders compared quietly (no flag for a NaN part): NumPy's complex
 * minimum/maximum raise nothing. */
#define CK__CLE_QUIET(xr, xi, yr, yi)                                          \
  ((isless(xr, yr) && !isnan(xi) && !isnan(yi)) ||                             \
   ((xr) == (yr) && islessequal(xi, yi)))
#define CK__CGE_QUIET(xr, xi, yr, yi)                                          \
  ((isgreater(xr, yr) && !isnan(xi) && !isnan(yi)) ||                          \
   ((xr) == (yr) && isgreaterequal(xi, yi)))

/* Is a float / double / float16 (bits) a NaN, an infinity, finite?  From
 * the bits: no floating-point operation, so a signalling NaN raises no
 * "invalid" (C's isnan compares, which does). */
static CK__OPS_INLINE int ck__bits_isnan_f32(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return (u & 0x7fffffffu) > 0x7f800000u;
}
static CK__OPS_INLINE int ck__bits_isinf_f32(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return (u & 0x7fffffffu) == 0x7f800000u;
}
static CK__OPS_INLINE int ck__bits_isnan_f64(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return (u & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
}
static CK__OPS_INLINE int ck__bits_isinf_f64(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return (u & 0x7fffffffffffffffu) == 0x7ff0000000000000u;
}
static CK__OPS_INLINE int ck__bits_isnan_f16(uint16_t h) {
  return (h & 0x7fffu) > 0x7c00u;
}
static CK__OPS_INLINE int ck__bits_isinf_f16(uint16_t h) {
  return (h & 0x7fffu) == 0x7c00u;
}
/* By storage type: float16's storage is its uint16_t bits. */
#define CK__ISNAN_BITS(x)                                                      \
  _Generic((x), float: ck__bits_isnan_f32, double: ck__bits_isnan_f64,         \
           default: ck__bits_isnan_f16)(x)
#define CK__ISINF_BITS(x)                                                      \
  _Generic((x), float: ck__bits_isinf_f32, double: ck__bits_isinf_f64,         \
           default: ck__bits_isinf_f16)(x)

/* Record "<op>: integer division by zero (<type>)" (CK_ERR_ZERO_DIVISION),
 * "<op>: Integers to negative integer powers are not allowed (<type>)"
 * (CK_ERR_VALUE); return the status.  Cold: only the failing element pays. */
int ck__ops_zero_division(const char *op, int type_id) CK__OPS_COLD;
int ck__ops_negative_power(const char *op, int type_id) CK__OPS_COLD;

/* ---- entry-point generators ------------------------------------------------ */

#define CK__INFO(op, tok, S, N)                                                \
  static const ck_kernel_info ck__##op##_##tok##_info = {                      \
      #op "_" #tok, S, N, sizeof(ck_prefix), NULL};

/* Unary: r = f(a); the entry points are named ck__<op>_<tok>_1<SFX> and
 * _n<SFX>. */
#define CK__DEFINE1_ENTRIES(op, tok, TA, TR, SFX)                              \
  static int ck__##op##_##tok##_1##SFX(char *dst, const char *const *src,      \
                                       ck_prefix *self) {                      \
    (void)self;                                                                \
    TA a;                                                                      \
    TR r;                                                                      \
    memset(&r, 0, sizeof r); /* silences maybe-uninitialized */                \
    memcpy(&a, src[0], sizeof a);                                              \
    int st = ck__##op##_##tok(&r, a);                                          \
    if (st != 0) {                                                             \
      return st;                                                               \
    }                                                                          \
    memcpy(dst, &r, sizeof r);                                                 \
    return 0;                                                                  \
  }                                                                            \
  static int ck__##op##_##tok##_n##SFX(char *dst, intptr_t ds,                 \
                                       const char *const *src,                 \
                                       const intptr_t *ss, size_t n,           \
                                       ck_prefix *self) {                      \
    (void)self;                                                                \
    const char *s0 = src[0];                                                   \
    intptr_t ss0 = ss[0];                                                      \
    if (ds == (intptr_t)sizeof(TR) && ss0 == (intptr_t)sizeof(TA)) {           \
      for (size_t i = 0; i < n; i++) {                                         \
        TA a;                                                                  \
        TR r;                                                                  \
        memset(&r, 0, sizeof r);                                               \
        memcpy(&a, s0 + i * sizeof(TA), sizeof a);                             \
        int st = ck__##op##_##tok(&r, a);                                      \
        if (st != 0) {                                                         \
          return st;                                                           \
        }                                                                      \
        memcpy(dst + i * sizeof(TR), &r, sizeof r);                            \
      }                                                                        \
      return 0;                                                                \
    }                                                                          \
    intptr_t od = 0, o0 = 0;                                                   \
    for (size_t i = 0; i < n; i++, od += ds, o0 += ss0) {                      \
      TA a;                                                                    \
      TR r;                                                                    \
      memset(&r, 0, sizeof r);                                                 \
      memcpy(&a, s0 + o0, sizeof a);                                           \
      int st = ck__##op##_##tok(&r, a);                                        \
      if (st != 0) {                                                           \
        return st;                                                             \
      }                                                                        \
      memcpy(dst + od, &r, sizeof r);                                          \
    }                                                                          \
    return 0;                                                                  \
  }

#define CK__DEFINE1(op, tok, TA, TR, IDA, IDR)                                 \
  CK__DEFINE1_ENTRIES(op, tok, TA, TR, )                                       \
  CK__INFO(op, tok, ck__##op##_##tok##_1, ck__##op##_##tok##_n)

/* CK__DEFINE1 whose entry points leave the "invalid" flag as the caller had
 * it (see CK__DEFINE2_QUIET): sign of floats. */
#define CK__DEFINE1_QUIET(op, tok, TA, TR, IDA, IDR)                           \
  CK__DEFINE1_ENTRIES(op, tok, TA, TR, _signalling)                            \
  CK__QUIET_ENTRIES(op, tok)

/* The entry points ck__<op>_<tok>_1 / _n around the _signalling ones (any
 * arity: the entry signatures do not depend on it), restoring the caller's
 * "invalid" flag, and the kernel's description. */
#define CK__QUIET_ENTRIES(op, tok)                                             \
  static int ck__##op##_##tok##_1(char *dst, const char *const *src,           \
                                  ck_prefix *self) {                           \
    fexcept_t invalid;                                                         \
    fegetexceptflag(&invalid, FE_INVALID);                                     \
    int st = ck__##op##_##tok##_1_signalling(dst, src, self);                  \
    fesetexceptflag(&invalid, FE_INVALID);                                     \
    return st;                                                                 \
  }                                                                            \
  static int ck__##op##_##tok##_n(char *dst, intptr_t ds,                      \
                                  const char *const *src, const intptr_t *ss,  \
                                  size_t n, ck_prefix *self) {                 \
    fexcept_t invalid;                                                         \
    fegetexceptflag(&invalid, FE_INVALID);                                     \
    int st = ck__##op##_##tok##_n_signalling(dst, ds, src, ss, n, self);       \
    fesetexceptflag(&invalid, FE_INVALID);                                     \
    return st;                                                                 \
  }                                                                            \
  CK__INFO(op, tok, ck__##op##_##tok##_1, ck__##op##_##tok##_n)

/* Binary: r = f(a, b).  Fast paths: all contiguous, and contiguous with a
 * broadcast (stride 0) second argument.  The entry points are named
 * ck__<op>_<tok>_1<SFX> and _n<SFX>. */
#define CK__DEFINE2_ENTRIES(op, tok, TA, TB, TR, SFX)                        \
  static int ck__##op##_##tok##_1##SFX(char *dst, const char *const *src,      \
                                       ck_prefix *self) {                      \
    (void)self;                                                                \
    TA a;                                                                      \
    TB b;                                                                      \
    TR r;                                                                      \
    memset(&r, 0, sizeof r); /* silences maybe-uninitialized */                \
    memcpy(&a, src[0], sizeof a);                                              \
    memcpy(&b, src[1], sizeof b);                                              \
    int st = ck__##op##_##tok(&r, a, b);                                       \
    if (st != 0) {                                                             \
      return st;                                                               \
    }                                                                          \
    memcpy(dst, &r, sizeof r);                                                 \
    return 0;                                                                  \
  }                                                                            \
  static int ck__##op##_##tok##_n##SFX(char *dst, intptr_t ds,                 \
                                       const char *const *src,                 \
                                       const intptr_t *ss, size_t n,           \
                                       ck_prefix *self) {                 \
    (void)self;                                                                \
    const char *s0 = src[0], *s1 = src[1];                                     \
    intptr_t ss0 = ss[0], ss1 = ss[1];                                         \
    if (ds == (intptr_t)sizeof(TR) && ss0 == (intptr_t)sizeof(TA) &&           \
        ss1 == (intptr_t)sizeof(TB)) {                                         \
      for (size_t i = 0; i < n; i++) {                                         \
        TA a;                                                                  \
        TB b;                                                                  \
        TR r;                                                                  \
        memset(&r, 0, sizeof r);                                               \
        memcpy(&a, s0 + i * sizeof(TA), sizeof a);                             \
        memcpy(&b, s1 + i * sizeof(TB), sizeof b);                             \
        int st = ck__##op##_##tok(&r, a, b);                                   \
        if (st != 0) {                                                         \
          return st;                                                           \
        }                                                                      \
        memcpy(dst + i * sizeof(TR), &r, sizeof r);                            \
      }                                                                        \
      return 0;                                                                \
    }                                                                          \
    if (ds == (intptr_t)sizeof(TR) && ss0 == (intptr_t)sizeof(TA) &&           \
        ss1 == 0) {                                                            \
      TB b;                                                                    \
      memcpy(&b, s1, sizeof b);                                                \
      for (size_t i = 0; i < n; i++) {                                         \
        TA a;                                                                  \
        TR r;                                                                  \
        memset(&r, 0, sizeof r);                                               \
        memcpy(&a, s0 + i * sizeof(TA), sizeof a);                             \
        int st = ck__##op##_##tok(&r, a, b);                                   \
        if (st != 0) {                                                         \
          return st;                                                           \
        }                                                                      \
        memcpy(dst + i * sizeof(TR), &r, sizeof r);                            \
      }                                                                        \
      return 0;                                                                \
    }                                                                          \
    intptr_t od = 0, o0 = 0, o1 = 0;                                           \
    for (size_t i = 0; i < n; i++, od += ds, o0 += ss0, o1 += ss1) {           \
      TA a;                                                                    \
      TB b;                                                                    \
      TR r;                                                                    \
      memset(&r, 0, sizeof r);                                                 \
      memcpy(&a, s0 + o0, sizeof a);                                           \
      memcpy(&b, s1 + o1, sizeof b);                                           \
      int st = ck__##op##_##tok(&r, a, b);                                     \
      if (st != 0) {                                                           \
        return st;                                                             \
      }                                                                        \
      memcpy(dst + od, &r, sizeof r);                                          \
    }                                                                          \
    return 0;                                                                  \
  }

#define CK__DEFINE2(op, tok, TA, TB, TR, IDA, IDB, IDR)                        \
  CK__DEFINE2_ENTRIES(op, tok, TA, TB, TR, )                                   \
  CK__INFO(op, tok, ck__##op##_##tok##_1, ck__##op##_##tok##_n)

/* CK__DEFINE2 whose entry points leave the floating-point "invalid" flag as
 * the caller had it: for float kernels whose vectorised loops compare with
 * signalling instructions (cmpltpd, minpd raise "invalid" on a quiet NaN --
 * GCC vectorises isless() into them too), where NumPy reports no flag:
 * comparisons, minimum/maximum/fmin/fmax. */
#define CK__DEFINE2_QUIET(op, tok, TA, TB, TR, IDA, IDB, IDR)                  \
  CK__DEFINE2_ENTRIES(op, tok, TA, TB, TR, _signalling)                        \
  CK__QUIET_ENTRIES(op, tok)

/* ---- registration rows ---------------------------------------------------- */

typedef struct ck__op_row {
  const char *op;
  uint8_t nargs;
  uint8_t ret;
  uint8_t args[2];
  ck_expr_single_t single;
  ck_expr_strided_t strided;
  const ck_kernel_info *info;
} ck__op_row;

#define CK__ROW1(op, tok, TA, TR, IDA, IDR)                                    \
  {#op, 1, IDR, {IDA, 0}, ck__##op##_##tok##_1, ck__##op##_##tok##_n,          \
   &ck__##op##_##tok##_info},
#define CK__ROW2(op, tok, TA, TB, TR, IDA, IDB, IDR)                           \
  {#op, 2, IDR, {IDA, IDB}, ck__##op##_##tok##_1, ck__##op##_##tok##_n,        \
   &ck__##op##_##tok##_info},

/* List helpers: one kernel per type of a type list (invoked as
 * CK__INT_TYPES(CK__B_INT, B, op) inside a family list, B/U being the
 * binary/unary callbacks).  _INT/_FLT/_CPX: arguments and result all of
 * that type; _INT_BOOL etc.: result bool (predicates). */
#define CK__B_INT(tok, id, T, WU, bits, B, op) B(op, tok, T, T, T, id, id, id)
#define CK__B_FLT(tok, id, ST, CT, LD, STO, SUF, B, op)                        \
  B(op, tok, ST, ST, ST, id, id, id)
#define CK__B_CPX(tok, id, ST, RT, RID, CT, SUF, B, op)                        \
  B(op, tok, ST, ST, ST, id, id, id)
#define CK__U_INT(tok, id, T, WU, bits, U, op) U(op, tok, T, T, id, id)
#define CK__U_FLT(tok, id, ST, CT, LD, STO, SUF, U, op) U(op, tok, ST, ST, id, id)
#define CK__U_CPX(tok, id, ST, RT, RID, CT, SUF, U, op) U(op, tok, ST, ST, id, id)
#define CK__B_INT_BOOL(tok, id, T, WU, bits, B, op)                            \
  B(op, tok, T, T, uint8_t, id, id, CK_TYPE_BOOL)
#define CK__B_FLT_BOOL(tok, id, ST, CT, LD, STO, SUF, B, op)                   \
  B(op, tok, ST, ST, uint8_t, id, id, CK_TYPE_BOOL)
#define CK__B_CPX_BOOL(tok, id, ST, RT, RID, CT, SUF, B, op)                   \
  B(op, tok, ST, ST, uint8_t, id, id, CK_TYPE_BOOL)
#define CK__U_INT_BOOL(tok, id, T, WU, bits, U, op)                            \
  U(op, tok, T, uint8_t, id, CK_TYPE_BOOL)
#define CK__U_FLT_BOOL(tok, id, ST, CT, LD, STO, SUF, U, op)                   \
  U(op, tok, ST, uint8_t, id, CK_TYPE_BOOL)
#define CK__U_CPX_BOOL(tok, id, ST, RT, RID, CT, SUF, U, op)                   \
  U(op, tok, ST, uint8_t, id, CK_TYPE_BOOL)

/* bool: storage uint8_t; any nonzero byte reads as true, results are 0/1. */
#define CK__B_BOOL(B, op)                                                      \
  B(op, boolean, uint8_t, uint8_t, uint8_t, CK_TYPE_BOOL, CK_TYPE_BOOL,           \
    CK_TYPE_BOOL)
#define CK__U_BOOL(U, op) U(op, boolean, uint8_t, uint8_t, CK_TYPE_BOOL, CK_TYPE_BOOL)

/* All 14 builtins, result bool. */
#define CK__B_ALL_BOOL(B, op)                                                  \
  CK__B_BOOL(B, op)                                                            \
  CK__INT_TYPES(CK__B_INT_BOOL, B, op)                                         \
  CK__FLOAT_TYPES(CK__B_FLT_BOOL, B, op)                                       \
  CK__COMPLEX_TYPES(CK__B_CPX_BOOL, B, op)
#define CK__U_ALL_BOOL(U, op)                                                  \
  CK__U_BOOL(U, op)                                                            \
  CK__INT_TYPES(CK__U_INT_BOOL, U, op)                                         \
  CK__FLOAT_TYPES(CK__U_FLT_BOOL, U, op)                                       \
  CK__COMPLEX_TYPES(CK__U_CPX_BOOL, U, op)

/* Flags of an operation (ck__op_flags). */
enum {
  CK__OPF_NO_BOOL_PROMOTION = 1 /* bool arguments never promote (subtract) */
};

typedef struct ck__op_flags {
  const char *op;
  unsigned flags;
} ck__op_flags;

/* A family's constant table: its registration rows and the flags of its
 * operations.  Each ops_*.c defines one; the registry reads them when it
 * first initialises (registry.c: ck__builtin_tables).  Nothing here calls
 * back into the registry. */
typedef struct ck__op_table {
  const ck__op_row *rows;
  size_t nrows;
  const ck__op_flags *flags;
  size_t nflags;
} ck__op_table;

extern const ck__op_table ck__ops_arith_table;
extern const ck__op_table ck__ops_compare_table;
extern const ck__op_table ck__ops_logic_table;
extern const ck__op_table ck__ops_minmax_table;
extern const ck__op_table ck__ops_math_table;

#endif /* CKERNEL_OPS_INTERNAL_H */
