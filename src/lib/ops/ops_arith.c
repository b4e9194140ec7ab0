/*
 * ops_arith.c -- built-in kernels of add, subtract, multiply, divide,
 * floor_divide, mod, power, negative, absolute.
 *
 * Semantics (NumPy's unless stated; docs/kernel-registry.md has the table):
 *   integers   add/subtract/multiply/negative/power wrap modulo 2^N
 *              (computed in unsigned arithmetic: no UB).  divide is true
 *              division: (intN, intN) -> float64, bool too.  floor_divide
 *              and mod follow Python: the quotient rounds toward -inf, the
 *              remainder has the divisor's sign; a zero divisor is
 *              CK_ERR_ZERO_DIVISION ("floor_divide: integer division by
 *              zero (int32)") where NumPy warns and returns 0; INT_MIN // -1
 *              wraps to INT_MIN and raises the "overflow" flag (NumPy's
 *              warning), INT_MIN % -1 is 0.  power with a negative
 *              exponent is CK_ERR_VALUE ("Integers to negative integer powers
 *              are not allowed"); 0 ** 0 = 1.  absolute(INT_MIN) = INT_MIN.
 *   bool       add = logical or, multiply = logical and, absolute = identity,
 *              divide -> float64; subtract and negative are not registered
 *              and bool arguments are not promoted for them (NumPy refuses
 *              boolean subtraction); floor_divide, mod, power promote bool to
 *              int8 (NumPy's result type).
 *   floats     IEEE: x / 0 = +-inf, 0 / 0 = nan.  floor_divide and mod are
 *              NumPy's npy_divmod: mod = fmod(a, b) moved to the divisor's
 *              sign, floor_divide = the floor of (a - mod) / b rounded to the
 *              nearest integer, so 1.0 // 0.1 == 9.0 and a // b + a % b
 *              stays consistent; b == 0 gives a / b (and its flags only) and
 *              fmod's nan ("invalid"); NaN operands raise nothing.  float16 computes in float32 and
 *              rounds back once (a finite result that rounds to inf raises
 *              "overflow", as NumPy's conversion does).
 *   complex    add/subtract/negative componentwise; multiply and divide with
 *              NumPy's formulas (divide: Smith's algorithm), not C's Annex G
 *              ones; power like NumPy's npy_cpow: z ** 0 = 1, 0 ** z = 0 for
 *              re(z) > 0 (nan and "invalid" otherwise), small integer
 *              exponents (|n| < 100) by repeated multiplication, cpow
 *              otherwise; absolute returns the real type (hypot).
 *              floor_divide and mod are not registered (NumPy removed
 *              them).
 */
#include "ops/ops_internal.h"

/* Python's //, % and integer ** (the one device-portable definition, shared
 * with the device code the Python package generates), instantiated for the
 * storage and compute types of this file. */
#define CK_PYARITH_FN static CK__OPS_INLINE
#define CK_PYARITH_LT(a, b) isless(a, b) /* quiet: NaN raises no "invalid" */
#define CK_PYARITH_GT(a, b) isgreater(a, b)
#include "ckernel/pyarith.h"

#define CK__PY_SINT(tok, id, T, WU, bits, unused) CK_PYARITH_SINT(tok, T)
CK__SINT_TYPES(CK__PY_SINT, 0)
#define CK__PY_POW(tok, id, T, WU, bits, unused) CK_PYARITH_POW(tok, T, WU, uint64_t)
CK__INT_TYPES(CK__PY_POW, 0)
CK_PYARITH_FLOAT(float, float, fmodf, floorf, copysignf)
CK_PYARITH_FLOAT(double, double, fmod, floor, copysign)

/* ---- add, subtract, multiply ------------------------------------------- */

#define CK__INT_ARITH(tok, id, T, WU, bits, unused)                            \
  static CK__OPS_INLINE int ck__add_##tok(T *r, T a, T b) {                    \
    *r = (T)((WU)a + (WU)b);                                                   \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__subtract_##tok(T *r, T a, T b) {               \
    *r = (T)((WU)a - (WU)b);                                                   \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__multiply_##tok(T *r, T a, T b) {               \
    *r = (T)((WU)a * (WU)b);                                                   \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__divide_##tok(double *r, T a, T b) {            \
    *r = (double)a / (double)b;                                                \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__negative_##tok(T *r, T a) {                    \
    *r = (T)(0u - (WU)a);                                                      \
    return 0;                                                                  \
  }
CK__INT_TYPES(CK__INT_ARITH, 0)

static CK__OPS_INLINE int ck__add_boolean(uint8_t *r, uint8_t a, uint8_t b) {
  *r = (a != 0) | (b != 0);
  return 0;
}
static CK__OPS_INLINE int ck__multiply_boolean(uint8_t *r, uint8_t a, uint8_t b) {
  *r = (a != 0) & (b != 0);
  return 0;
}
static CK__OPS_INLINE int ck__divide_boolean(double *r, uint8_t a, uint8_t b) {
  *r = (double)(a != 0) / (double)(b != 0);
  return 0;
}
static CK__OPS_INLINE int ck__absolute_boolean(uint8_t *r, uint8_t a) {
  *r = a != 0;
  return 0;
}

/* Signed: Python floor division and remainder. */
#define CK__SINT_DIV(tok, id, T, WU, bits, unused)                             \
  static CK__OPS_INLINE int ck__floor_divide_##tok(T *r, T a, T b) {           \
    if (b == 0) {                                                              \
      return ck__ops_zero_division("floor_divide", id);                       \
    }                                                                          \
    if (b == -1) {                                                             \
      if (a == (T)((WU)1 << (bits - 1))) {                                     \
        feraiseexcept(FE_OVERFLOW); /* INT_MIN // -1 wraps, NumPy warns */     \
      }                                                                        \
      *r = (T)(0u - (WU)a);                                                    \
      return 0;                                                                \
    }                                                                          \
    *r = ck_py_floordiv_##tok(a, b);                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__mod_##tok(T *r, T a, T b) {                    \
    if (b == 0) {                                                              \
      return ck__ops_zero_division("mod", id);                                 \
    }                                                                          \
    if (b == -1) {                                                             \
      *r = 0;                                                                  \
      return 0;                                                                \
    }                                                                          \
    *r = ck_py_mod_##tok(a, b);                                                \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__power_##tok(T *r, T a, T b) {                  \
    if (b < 0) {                                                               \
      return ck__ops_negative_power("power", id);                              \
    }                                                                          \
    *r = ck_py_pow_##tok(a, (uint64_t)b);                                      \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__absolute_##tok(T *r, T a) {                    \
    *r = a < 0 ? (T)(0u - (WU)a) : a;                                          \
    return 0;                                                                  \
  }
CK__SINT_TYPES(CK__SINT_DIV, 0)

#define CK__UINT_DIV(tok, id, T, WU, bits, unused)                             \
  static CK__OPS_INLINE int ck__floor_divide_##tok(T *r, T a, T b) {           \
    if (b == 0) {                                                              \
      return ck__ops_zero_division("floor_divide", id);                       \
    }                                                                          \
    *r = (T)(a / b);                                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__mod_##tok(T *r, T a, T b) {                    \
    if (b == 0) {                                                              \
      return ck__ops_zero_division("mod", id);                                 \
    }                                                                          \
    *r = (T)(a % b);                                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__power_##tok(T *r, T a, T b) {                  \
    *r = ck_py_pow_##tok(a, (uint64_t)b);                                      \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__absolute_##tok(T *r, T a) {                    \
    *r = a;                                                                    \
    return 0;                                                                  \
  }
CK__UINT_TYPES(CK__UINT_DIV, 0)

/* ---- floats ------------------------------------------------------------ */

#define CK__FLT_ARITH(tok, id, ST, CT, LD, STO, SUF, unused)                   \
  static CK__OPS_INLINE int ck__add_##tok(ST *r, ST a, ST b) {                 \
    *r = STO(LD(a) + LD(b));                                                   \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__subtract_##tok(ST *r, ST a, ST b) {            \
    *r = STO(LD(a) - LD(b));                                                   \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__multiply_##tok(ST *r, ST a, ST b) {            \
    *r = STO(LD(a) * LD(b));                                                   \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__divide_##tok(ST *r, ST a, ST b) {              \
    *r = STO(LD(a) / LD(b));                                                   \
    return 0;                                                                  \
  }                                                                            \
  /* x // 0 is x / 0 and its flags only ("invalid" for 0 / 0, "divide by   \
   * zero" for a finite x): fmod's "invalid" is not raised, as in NumPy. */   \
  static CK__OPS_INLINE int ck__floor_divide_##tok(ST *r, ST a, ST b) {        \
    *r = STO(ck_py_floordiv_##CT(LD(a), LD(b)));                               \
    return 0;                                                                  \
  }                                                                            \
  /* NumPy's npy_remainder: x % 0 is fmod's nan ("invalid" only). */         \
  static CK__OPS_INLINE int ck__mod_##tok(ST *r, ST a, ST b) {                 \
    *r = STO(ck_py_mod_##CT(LD(a), LD(b)));                                    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__power_##tok(ST *r, ST a, ST b) {               \
    CT x = LD(a), y = LD(b);                                                   \
    if (sizeof(ST) > 2 && x == 0 && CK__ISINF_BITS(y) && y < 0) {              \
      feraiseexcept(FE_DIVBYZERO); /* 0 ** -inf, as NumPy's float32/64 */      \
    }                                                                          \
    *r = STO(pow##SUF(x, y));                                                  \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__absolute_##tok(ST *r, ST a) {                  \
    *r = STO(fabs##SUF(LD(a)));                                                \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__negative_##tok(ST *r, ST a) {                  \
    *r = STO(-LD(a));                                                          \
    return 0;                                                                  \
  }
CK__FLOAT_TYPES(CK__FLT_ARITH, 0)

/* float16 sign operations flip/clear the sign bit directly (exact for every
 * value including NaN, and cheaper than a round trip).  These replace the
 * generic ones above through the list below. */
static CK__OPS_INLINE int ck__negative_f16bits(uint16_t *r, uint16_t a) {
  *r = (uint16_t)(a ^ 0x8000u);
  return 0;
}
static CK__OPS_INLINE int ck__absolute_f16bits(uint16_t *r, uint16_t a) {
  *r = (uint16_t)(a & 0x7fffu);
  return 0;
}

/* ---- complex ------------------------------------------------------------ */

#define CK__CPX_ARITH(tok, id, ST, RT, RID, CT, SUF, unused)                   \
  /* NumPy's complex division (Smith's algorithm). */                          \
  static CK__OPS_INLINE ST ck__cdiv_##tok(ST a, ST b) {                        \
    RT abr = fabs##SUF(b.re), abi = fabs##SUF(b.im);                           \
    ST r;                                                                      \
    if (abr >= abi) {                                                          \
      if (abr == 0 && abi == 0) {                                              \
        r.re = a.re / abr;                                                     \
        r.im = a.im / abr;                                                     \
      } else {                                                                 \
        RT rat = b.im / b.re;                                                  \
        RT scl = (RT)1.0 / (b.re + b.im * rat);                                \
        r.re = (a.re + a.im * rat) * scl;                                      \
        r.im = (a.im - a.re * rat) * scl;                                      \
      }                                                                        \
    } else {                                                                   \
      RT rat = b.re / b.im;                                                    \
      RT scl = (RT)1.0 / (b.im + b.re * rat);                                  \
      r.re = (a.re * rat + a.im) * scl;                                        \
      r.im = (a.im * rat - a.re) * scl;                                        \
    }                                                                          \
    return r;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE ST ck__cmul_##tok(ST a, ST b) {                        \
    ST r;                                                                      \
    r.re = a.re * b.re - a.im * b.im;                                          \
    r.im = a.re * b.im + a.im * b.re;                                          \
    return r;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__add_##tok(ST *r, ST a, ST b) {                 \
    r->re = a.re + b.re;                                                       \
    r->im = a.im + b.im;                                                       \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__subtract_##tok(ST *r, ST a, ST b) {            \
    r->re = a.re - b.re;                                                       \
    r->im = a.im - b.im;                                                       \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__multiply_##tok(ST *r, ST a, ST b) {            \
    *r = ck__cmul_##tok(a, b);                                                 \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__divide_##tok(ST *r, ST a, ST b) {              \
    *r = ck__cdiv_##tok(a, b);                                                 \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__negative_##tok(ST *r, ST a) {                  \
    r->re = -a.re;                                                             \
    r->im = -a.im;                                                             \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__absolute_##tok(RT *r, ST a) {                  \
    *r = hypot##SUF(a.re, a.im);                                               \
    return 0;                                                                  \
  }                                                                            \
  /* NumPy's npy_cpow. */                                                      \
  static CK__OPS_INLINE int ck__power_##tok(ST *r, ST a, ST b) {               \
    if (b.re == 0 && b.im == 0) {                                              \
      r->re = 1;                                                               \
      r->im = 0;                                                               \
      return 0;                                                                \
    }                                                                          \
    if (a.re == 0 && a.im == 0) { /* NumPy 2: |0 ** z| = 0 ** re(z) */         \
      if (isgreater(b.re, (RT)0)) {                                            \
        r->re = 0;                                                             \
        r->im = 0;                                                             \
      } else {                                                                 \
        feraiseexcept(FE_INVALID);                                             \
        r->re = (RT)NAN;                                                       \
        r->im = (RT)NAN;                                                       \
      }                                                                        \
      return 0;                                                                \
    }                                                                          \
    if (b.im == 0 && fabs##SUF(b.re) < 100 && b.re == (RT)(int)b.re) {         \
      int n = (int)b.re;                                                       \
      ST one = {1, 0}, acc = one, base = a;                                    \
      for (unsigned e = (unsigned)(n < 0 ? -n : n); e != 0; e >>= 1) {         \
        if (e & 1u) {                                                          \
          acc = ck__cmul_##tok(acc, base);                                     \
        }                                                                      \
        base = ck__cmul_##tok(base, base);                                     \
      }                                                                        \
      *r = n < 0 ? ck__cdiv_##tok(one, acc) : acc;                             \
      return 0;                                                                \
    }                                                                          \
    CT z = cpow##SUF(CK__CLOAD(CT, a), CK__CLOAD(CT, b));                      \
    r->re = creal##SUF(z);                                                     \
    r->im = cimag##SUF(z);                                                     \
    return 0;                                                                  \
  }
CK__COMPLEX_TYPES(CK__CPX_ARITH, 0)

/* ---- the kernel list --------------------------------------------------------- */

/* float16's negative/absolute use the sign-bit versions. */
#define ck__negative_float16 ck__negative_f16bits
#define ck__absolute_float16 ck__absolute_f16bits

#define CK__B_INT_F64(tok, id, T, WU, bits, B, op)                             \
  B(op, tok, T, T, double, id, id, CK_TYPE_FLOAT64)
#define CK__U_CPX_REAL(tok, id, ST, RT, RID, CT, SUF, U, op)                   \
  U(op, tok, ST, RT, id, RID)

#define CK__ARITH_LIST(U, B)                                                   \
  CK__B_BOOL(B, add)                                                           \
  CK__INT_TYPES(CK__B_INT, B, add)                                             \
  CK__FLOAT_TYPES(CK__B_FLT, B, add)                                           \
  CK__COMPLEX_TYPES(CK__B_CPX, B, add)                                         \
  CK__INT_TYPES(CK__B_INT, B, subtract)                                        \
  CK__FLOAT_TYPES(CK__B_FLT, B, subtract)                                      \
  CK__COMPLEX_TYPES(CK__B_CPX, B, subtract)                                    \
  CK__B_BOOL(B, multiply)                                                      \
  CK__INT_TYPES(CK__B_INT, B, multiply)                                        \
  CK__FLOAT_TYPES(CK__B_FLT, B, multiply)                                      \
  CK__COMPLEX_TYPES(CK__B_CPX, B, multiply)                                    \
  B(divide, boolean, uint8_t, uint8_t, double, CK_TYPE_BOOL, CK_TYPE_BOOL,     \
    CK_TYPE_FLOAT64)                                                           \
  CK__INT_TYPES(CK__B_INT_F64, B, divide)                                      \
  CK__FLOAT_TYPES(CK__B_FLT, B, divide)                                        \
  CK__COMPLEX_TYPES(CK__B_CPX, B, divide)                                      \
  CK__INT_TYPES(CK__B_INT, B, floor_divide)                                    \
  CK__FLOAT_TYPES(CK__B_FLT, B, floor_divide)                                  \
  CK__INT_TYPES(CK__B_INT, B, mod)                                             \
  CK__FLOAT_TYPES(CK__B_FLT, B, mod)                                           \
  CK__INT_TYPES(CK__B_INT, B, power)                                           \
  CK__FLOAT_TYPES(CK__B_FLT, B, power)                                         \
  CK__COMPLEX_TYPES(CK__B_CPX, B, power)                                       \
  CK__INT_TYPES(CK__U_INT, U, negative)                                        \
  CK__FLOAT_TYPES(CK__U_FLT, U, negative)                                      \
  CK__COMPLEX_TYPES(CK__U_CPX, U, negative)                                    \
  CK__U_BOOL(U, absolute)                                                      \
  CK__INT_TYPES(CK__U_INT, U, absolute)                                        \
  CK__FLOAT_TYPES(CK__U_FLT, U, absolute)                                      \
  CK__COMPLEX_TYPES(CK__U_CPX_REAL, U, absolute)

CK__ARITH_LIST(CK__DEFINE1, CK__DEFINE2)

static const ck__op_row ck__arith_rows[] = {CK__ARITH_LIST(CK__ROW1, CK__ROW2)};

static const ck__op_flags ck__arith_flags[] = {
    {"subtract", CK__OPF_NO_BOOL_PROMOTION}, {"negative", CK__OPF_NO_BOOL_PROMOTION}};

const ck__op_table ck__ops_arith_table = {
    ck__arith_rows, sizeof ck__arith_rows / sizeof ck__arith_rows[0], ck__arith_flags,
    sizeof ck__arith_flags / sizeof ck__arith_flags[0]};
