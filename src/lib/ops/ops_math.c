/*
 * ops_math.c -- built-in kernels of the math functions: sqrt, exp, exp2,
 * expm1, log, log2, log10, log1p, sin, cos, tan, arcsin, arccos, arctan,
 * sinh, cosh, tanh, arctan2, hypot, floor, ceil, trunc, rint, sign, square,
 * reciprocal, isnan, isinf, isfinite.
 *
 * Coverage and semantics (NumPy's loops):
 *   transcendental functions: float16 (computed by the float32 libm function
 *     and rounded back once), float32 (the f-suffixed libm function),
 *     float64; complex64/complex128 through C11 <complex.h> for sqrt, exp,
 *     log, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh.  No
 *     integer kernels: integers promote as NumPy does (sqrt(int8) ->
 *     float16, sqrt(int16) -> float32, sqrt(int32/int64/uint64) -> float64,
 *     sqrt(bool) -> float16).  exp2/expm1/log2/log10/log1p have no complex
 *     kernels (NumPy has them; C11 does not): CK_ERR_TYPE.
 *   arctan2, hypot: floats only.
 *   floor, ceil, trunc: floats (libm), and the identity on bool and the
 *     integers (NumPy 2 keeps the integer type); rint: floats only.
 *   sign: integers (-1, 0, 1), floats (-1, 0, 1; NaN stays NaN, no flag;
 *     sign(-0.0) is 0.0), complex as NumPy 2: z / |z|, 0 for 0, an infinite
 *     part gives its direction (1+0j for inf+0j; both infinite: NaN+NaNj),
 *     NaN+NaNj when |z| is NaN.
 *   square: integers (wrapping), floats, complex (NumPy's formula).
 *   reciprocal: integers (1 / x truncated: 1, -1 or 0; x == 0 is
 *     CK_ERR_ZERO_DIVISION), floats (1 / x), complex (NumPy's Smith-style
 *     formula).
 *   isnan, isinf, isfinite: all 14 builtins, result bool (integers and bool
 *     are never NaN or infinite); complex: isnan/isinf if either part is,
 *     isfinite if both parts are.  Floats are tested by their bits: a
 *     signalling NaN raises no "invalid".
 *   complex functions take the parts' signs as they are: log(-0.5 - 0j) is
 *     on the lower side of the branch cut (-pi), as NumPy has it.
 */
#include "ops/ops_internal.h"

/* ---- real functions --------------------------------------------------------- */

/* X(op, libm name) for the unary real functions. */
#define CK__REAL_FUNCS(X, ...)                                                 \
  X(sqrt, sqrt, __VA_ARGS__)                                                   \
  X(exp, exp, __VA_ARGS__)                                                     \
  X(exp2, exp2, __VA_ARGS__)                                                   \
  X(expm1, expm1, __VA_ARGS__)                                                 \
  X(log, log, __VA_ARGS__)                                                     \
  X(log2, log2, __VA_ARGS__)                                                   \
  X(log10, log10, __VA_ARGS__)                                                 \
  X(log1p, log1p, __VA_ARGS__)                                                 \
  X(sin, sin, __VA_ARGS__)                                                     \
  X(cos, cos, __VA_ARGS__)                                                     \
  X(tan, tan, __VA_ARGS__)                                                     \
  X(arcsin, asin, __VA_ARGS__)                                                 \
  X(arccos, acos, __VA_ARGS__)                                                 \
  X(arctan, atan, __VA_ARGS__)                                                 \
  X(sinh, sinh, __VA_ARGS__)                                                   \
  X(cosh, cosh, __VA_ARGS__)                                                   \
  X(tanh, tanh, __VA_ARGS__)                                                   \
  X(floor, floor, __VA_ARGS__)                                                 \
  X(ceil, ceil, __VA_ARGS__)                                                   \
  X(trunc, trunc, __VA_ARGS__)                                                 \
  X(rint, rint, __VA_ARGS__)

#define CK__REAL_FUNC1(op, fn, tok, ST, LD, STO, SUF)                          \
  static CK__OPS_INLINE int ck__##op##_##tok(ST *r, ST a) {                    \
    *r = STO(fn##SUF(LD(a)));                                                  \
    return 0;                                                                  \
  }
#define CK__FLT_REAL_FUNCS(tok, id, ST, CT, LD, STO, SUF, unused)              \
  CK__REAL_FUNCS(CK__REAL_FUNC1, tok, ST, LD, STO, SUF)
CK__FLOAT_TYPES(CK__FLT_REAL_FUNCS, 0)

#define CK__FLT_MISC(tok, id, ST, CT, LD, STO, SUF, unused)                    \
  static CK__OPS_INLINE int ck__arctan2_##tok(ST *r, ST a, ST b) {             \
    *r = STO(atan2##SUF(LD(a), LD(b)));                                        \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__hypot_##tok(ST *r, ST a, ST b) {               \
    *r = STO(hypot##SUF(LD(a), LD(b)));                                        \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__sign_##tok(ST *r, ST a) {                      \
    CT x = LD(a);                                                              \
    *r = STO(x > 0 ? (CT)1 : x < 0 ? (CT)-1 : x == 0 ? (CT)0 : x);             \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__square_##tok(ST *r, ST a) {                    \
    CT x = LD(a);                                                              \
    *r = STO(x * x);                                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__reciprocal_##tok(ST *r, ST a) {                \
    *r = STO((CT)1 / LD(a));                                                   \
    return 0;                                                                  \
  }                                                                            \
  /* From the stored bits: a signalling NaN raises no "invalid". */          \
  static CK__OPS_INLINE int ck__isnan_##tok(uint8_t *r, ST a) {                \
    *r = (uint8_t)CK__ISNAN_BITS(a);                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isinf_##tok(uint8_t *r, ST a) {                \
    *r = (uint8_t)CK__ISINF_BITS(a);                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isfinite_##tok(uint8_t *r, ST a) {             \
    *r = !CK__ISNAN_BITS(a) && !CK__ISINF_BITS(a);                             \
    return 0;                                                                  \
  }
CK__FLOAT_TYPES(CK__FLT_MISC, 0)

/* ---- integers and bool ------------------------------------------------------ */

#define CK__INT_MATH(tok, id, T, WU, bits, unused)                             \
  static CK__OPS_INLINE int ck__floor_##tok(T *r, T a) {                       \
    *r = a;                                                                    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__ceil_##tok(T *r, T a) {                        \
    *r = a;                                                                    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__trunc_##tok(T *r, T a) {                       \
    *r = a;                                                                    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__square_##tok(T *r, T a) {                      \
    *r = (T)((WU)a * (WU)a);                                                   \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__reciprocal_##tok(T *r, T a) {                  \
    if (a == 0) {                                                              \
      return ck__ops_zero_division("reciprocal", id);                          \
    }                                                                          \
    *r = (T)(1 / a);                                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isnan_##tok(uint8_t *r, T a) {                 \
    (void)a;                                                                   \
    *r = 0;                                                                    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isinf_##tok(uint8_t *r, T a) {                 \
    (void)a;                                                                   \
    *r = 0;                                                                    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isfinite_##tok(uint8_t *r, T a) {              \
    (void)a;                                                                   \
    *r = 1;                                                                    \
    return 0;                                                                  \
  }
CK__INT_MATH(boolean, CK_TYPE_BOOL, uint8_t, unsigned, 8, 0)
CK__INT_TYPES(CK__INT_MATH, 0)

#define CK__SINT_SIGN(tok, id, T, WU, bits, unused)                            \
  static CK__OPS_INLINE int ck__sign_##tok(T *r, T a) {                        \
    *r = (T)((a > 0) - (a < 0));                                               \
    return 0;                                                                  \
  }
CK__SINT_TYPES(CK__SINT_SIGN, 0)
#define CK__UINT_SIGN(tok, id, T, WU, bits, unused)                            \
  static CK__OPS_INLINE int ck__sign_##tok(T *r, T a) {                        \
    *r = (T)(a != 0);                                                          \
    return 0;                                                                  \
  }
CK__UINT_TYPES(CK__UINT_SIGN, 0)

/* floor/ceil/trunc of bool: normalised to 0/1. */
static CK__OPS_INLINE int ck__floor_b(uint8_t *r, uint8_t a) {
  *r = a != 0;
  return 0;
}
#define ck__floor_boolean ck__floor_b
#define ck__ceil_boolean ck__floor_b
#define ck__trunc_boolean ck__floor_b

/* ---- complex ---------------------------------------------------------------- */

/* X(op, C11 name without the leading c). */
#define CK__COMPLEX_FUNCS(X, ...)                                              \
  X(sqrt, sqrt, __VA_ARGS__)                                                   \
  X(exp, exp, __VA_ARGS__)                                                     \
  X(log, log, __VA_ARGS__)                                                     \
  X(sin, sin, __VA_ARGS__)                                                     \
  X(cos, cos, __VA_ARGS__)                                                     \
  X(tan, tan, __VA_ARGS__)                                                     \
  X(arcsin, asin, __VA_ARGS__)                                                 \
  X(arccos, acos, __VA_ARGS__)                                                 \
  X(arctan, atan, __VA_ARGS__)                                                 \
  X(sinh, sinh, __VA_ARGS__)                                                   \
  X(cosh, cosh, __VA_ARGS__)                                                   \
  X(tanh, tanh, __VA_ARGS__)

#define CK__CPX_FUNC1(op, fn, tok, ST, CT, SUF)                                \
  static CK__OPS_INLINE int ck__##op##_##tok(ST *r, ST a) {                    \
    CT z = c##fn##SUF(CK__CLOAD(CT, a));                                       \
    r->re = creal##SUF(z);                                                     \
    r->im = cimag##SUF(z);                                                     \
    return 0;                                                                  \
  }
#define CK__CPX_FUNCS(tok, id, ST, RT, RID, CT, SUF, unused)                   \
  CK__COMPLEX_FUNCS(CK__CPX_FUNC1, tok, ST, CT, SUF)                           \
  static CK__OPS_INLINE int ck__square_##tok(ST *r, ST a) {                    \
    r->re = a.re * a.re - a.im * a.im;                                         \
    r->im = a.re * a.im + a.im * a.re;                                         \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__reciprocal_##tok(ST *r, ST a) {                \
    if (fabs##SUF(a.im) <= fabs##SUF(a.re)) {                                  \
      RT q = a.im / a.re, d = a.re + a.im * q;                                 \
      r->re = (RT)1 / d;                                                       \
      r->im = -q / d;                                                          \
    } else {                                                                   \
      RT q = a.re / a.im, d = a.re * q + a.im;                                 \
      r->re = q / d;                                                           \
      r->im = (RT)-1 / d;                                                      \
    }                                                                          \
    return 0;                                                                  \
  }                                                                            \
  /* NumPy 2: z / |z|; an infinite |z| points along its infinite part (both \
   * infinite: NaN), a NaN |z| gives NaN, 0 gives 0; no flag raised. */       \
  static CK__OPS_INLINE int ck__sign_##tok(ST *r, ST a) {                      \
    RT m = hypot##SUF(a.re, a.im);                                             \
    if (CK__ISNAN_BITS(m)) {                                                   \
      r->re = r->im = (RT)NAN;                                                 \
    } else if (CK__ISINF_BITS(m)) {                                            \
      int ire = CK__ISINF_BITS(a.re), iim = CK__ISINF_BITS(a.im);              \
      RT one = (RT)1;                                                          \
      r->re = ire && iim ? (RT)NAN : ire ? copysign##SUF(one, a.re) : (RT)0;   \
      r->im = ire && iim ? (RT)NAN : iim ? copysign##SUF(one, a.im) : (RT)0;   \
    } else if (m == 0) {                                                       \
      r->re = 0;                                                               \
      r->im = 0;                                                               \
    } else {                                                                   \
      r->re = a.re / m;                                                        \
      r->im = a.im / m;                                                        \
    }                                                                          \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isnan_##tok(uint8_t *r, ST a) {                \
    *r = CK__ISNAN_BITS(a.re) || CK__ISNAN_BITS(a.im);                         \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isinf_##tok(uint8_t *r, ST a) {                \
    *r = CK__ISINF_BITS(a.re) || CK__ISINF_BITS(a.im);                         \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__isfinite_##tok(uint8_t *r, ST a) {             \
    *r = !(CK__ISNAN_BITS(a.re) || CK__ISNAN_BITS(a.im) ||                     \
           CK__ISINF_BITS(a.re) || CK__ISINF_BITS(a.im));                      \
    return 0;                                                                  \
  }
CK__COMPLEX_TYPES(CK__CPX_FUNCS, 0)

/* ---- the kernel list --------------------------------------------------------- */

/* op for every float type (F), complex type (C). */
#define CK__MATH_F(op, fn, U) CK__FLOAT_TYPES(CK__U_FLT, U, op)
#define CK__MATH_C(op, fn, U) CK__COMPLEX_TYPES(CK__U_CPX, U, op)

/* sign of floats through CK__DEFINE1_QUIET (UQ): sign(nan) leaves no
 * "invalid" (its vectorised compares raise one). */
#define CK__MATH_LIST(U, B, UQ)                                                \
  CK__REAL_FUNCS(CK__MATH_F, U)                                                \
  CK__COMPLEX_FUNCS(CK__MATH_C, U)                                             \
  CK__FLOAT_TYPES(CK__B_FLT, B, arctan2)                                       \
  CK__FLOAT_TYPES(CK__B_FLT, B, hypot)                                         \
  CK__U_BOOL(U, floor)                                                         \
  CK__INT_TYPES(CK__U_INT, U, floor)                                           \
  CK__U_BOOL(U, ceil)                                                          \
  CK__INT_TYPES(CK__U_INT, U, ceil)                                            \
  CK__U_BOOL(U, trunc)                                                         \
  CK__INT_TYPES(CK__U_INT, U, trunc)                                           \
  CK__INT_TYPES(CK__U_INT, U, sign)                                            \
  CK__FLOAT_TYPES(CK__U_FLT, UQ, sign)                                         \
  CK__COMPLEX_TYPES(CK__U_CPX, U, sign)                                        \
  CK__INT_TYPES(CK__U_INT, U, square)                                          \
  CK__FLOAT_TYPES(CK__U_FLT, U, square)                                        \
  CK__COMPLEX_TYPES(CK__U_CPX, U, square)                                      \
  CK__INT_TYPES(CK__U_INT, U, reciprocal)                                      \
  CK__FLOAT_TYPES(CK__U_FLT, U, reciprocal)                                    \
  CK__COMPLEX_TYPES(CK__U_CPX, U, reciprocal)                                  \
  CK__U_ALL_BOOL(U, isnan)                                                     \
  CK__U_ALL_BOOL(U, isinf)                                                     \
  CK__U_ALL_BOOL(U, isfinite)

CK__MATH_LIST(CK__DEFINE1, CK__DEFINE2, CK__DEFINE1_QUIET)

static const ck__op_row ck__math_rows[] = {
    CK__MATH_LIST(CK__ROW1, CK__ROW2, CK__ROW1)};

const ck__op_table ck__ops_math_table = {
    ck__math_rows, sizeof ck__math_rows / sizeof ck__math_rows[0], NULL, 0};
