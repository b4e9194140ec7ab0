/*
 * ops_minmax.c -- built-in kernels of minimum, maximum, fmin, fmax.
 *
 * All 14 builtins, result of the argument type.  bool: minimum = and,
 * maximum = or (results 0/1).  Integers: the smaller / larger value (fmin
 * and fmax are the same).  Floats (NumPy's loops): minimum and maximum
 * propagate NaN (a NaN in either argument gives a NaN -- the first one if
 * both are NaN); fmin and fmax ignore a NaN when the other argument is a
 * number.  Between -0.0 and 0.0 the first argument wins, as in NumPy's
 * scalar loops.  float16 compares its exact value and returns the chosen
 * argument's bits unchanged.  Complex: NumPy's lexicographic order
 * (ops_compare.c); minimum/maximum return the argument with a NaN part if
 * any, fmin/fmax the other one.  A quiet NaN raises no floating-point flag
 * (NumPy's minimum raises none).
 */
#include "ops/ops_internal.h"

static CK__OPS_INLINE int ck__minimum_boolean(uint8_t *r, uint8_t a, uint8_t b) {
  *r = (a != 0) & (b != 0);
  return 0;
}
static CK__OPS_INLINE int ck__maximum_boolean(uint8_t *r, uint8_t a, uint8_t b) {
  *r = (a != 0) | (b != 0);
  return 0;
}
#define ck__fmin_boolean ck__minimum_boolean
#define ck__fmax_boolean ck__maximum_boolean

#define CK__INT_MINMAX(tok, id, T, WU, bits, unused)                           \
  static CK__OPS_INLINE int ck__minimum_##tok(T *r, T a, T b) {                \
    *r = a <= b ? a : b;                                                       \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__maximum_##tok(T *r, T a, T b) {                \
    *r = a >= b ? a : b;                                                       \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__fmin_##tok(T *r, T a, T b) {                   \
    *r = a <= b ? a : b;                                                       \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__fmax_##tok(T *r, T a, T b) {                   \
    *r = a >= b ? a : b;                                                       \
    return 0;                                                                  \
  }
CK__INT_TYPES(CK__INT_MINMAX, 0)

/* Three selects rather than one condition with `||`: GCC if-converts and
 * vectorises this form (compare, and/andn/or masks) in the contiguous
 * loops; the results are NumPy's exactly (the first NaN wins, and between
 * equal values -- -0.0 and 0.0 -- the first argument). */
#define CK__FLT_MINMAX(tok, id, ST, CT, LD, STO, SUF, unused)                  \
  static CK__OPS_INLINE int ck__minimum_##tok(ST *r, ST a, ST b) {             \
    CT x = LD(a), y = LD(b);                                                   \
    ST t = (y < x) ? b : a;                                                    \
    t = (y != y) ? b : t;                                                      \
    *r = (x != x) ? a : t;                                                     \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__maximum_##tok(ST *r, ST a, ST b) {             \
    CT x = LD(a), y = LD(b);                                                   \
    ST t = (x < y) ? b : a;                                                    \
    t = (y != y) ? b : t;                                                      \
    *r = (x != x) ? a : t;                                                     \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__fmin_##tok(ST *r, ST a, ST b) {                \
    CT x = LD(a), y = LD(b);                                                   \
    ST t = (y < x) ? b : a;                                                    \
    t = (x != x) ? b : t;                                                      \
    *r = (y != y) ? a : t;                                                     \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__fmax_##tok(ST *r, ST a, ST b) {                \
    CT x = LD(a), y = LD(b);                                                   \
    ST t = (x < y) ? b : a;                                                    \
    t = (x != x) ? b : t;                                                      \
    *r = (y != y) ? a : t;                                                     \
    return 0;                                                                  \
  }
CK__FLOAT_TYPES(CK__FLT_MINMAX, 0)

#define CK__HAS_NAN(z) (isnan((z).re) || isnan((z).im))

#define CK__CPX_MINMAX(tok, id, ST, RT, RID, CT, SUF, unused)                  \
  static CK__OPS_INLINE int ck__minimum_##tok(ST *r, ST a, ST b) {             \
    *r = (CK__HAS_NAN(a) || CK__CLE_QUIET(a.re, a.im, b.re, b.im)) ? a : b;    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__maximum_##tok(ST *r, ST a, ST b) {             \
    *r = (CK__HAS_NAN(a) || CK__CGE_QUIET(a.re, a.im, b.re, b.im)) ? a : b;    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__fmin_##tok(ST *r, ST a, ST b) {                \
    *r = (CK__HAS_NAN(b) || CK__CLE_QUIET(a.re, a.im, b.re, b.im)) ? a : b;    \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__fmax_##tok(ST *r, ST a, ST b) {                \
    *r = (CK__HAS_NAN(b) || CK__CGE_QUIET(a.re, a.im, b.re, b.im)) ? a : b;    \
    return 0;                                                                  \
  }
CK__COMPLEX_TYPES(CK__CPX_MINMAX, 0)

/* Floats through CK__DEFINE2_QUIET (BQ): their vectorised selects raise
 * "invalid" on a NaN, which the entry points take back. */
#define CK__MM_OP(B, BQ, op)                                                   \
  CK__B_BOOL(B, op)                                                            \
  CK__INT_TYPES(CK__B_INT, B, op)                                              \
  CK__FLOAT_TYPES(CK__B_FLT, BQ, op)                                           \
  CK__COMPLEX_TYPES(CK__B_CPX, B, op)

#define CK__MINMAX_LIST(U, B, BQ)                                              \
  CK__MM_OP(B, BQ, minimum)                                                    \
  CK__MM_OP(B, BQ, maximum)                                                    \
  CK__MM_OP(B, BQ, fmin)                                                       \
  CK__MM_OP(B, BQ, fmax)

CK__MINMAX_LIST(CK__DEFINE1, CK__DEFINE2, CK__DEFINE2_QUIET)

static const ck__op_row ck__minmax_rows[] = {
    CK__MINMAX_LIST(CK__ROW1, CK__ROW2, CK__ROW2)};

const ck__op_table ck__ops_minmax_table = {
    ck__minmax_rows, sizeof ck__minmax_rows / sizeof ck__minmax_rows[0], NULL, 0};
