/*
 * ops_compare.c -- built-in kernels of equal, not_equal, less, less_equal,
 * greater, greater_equal.
 *
 * Every kernel returns bool (one byte, 0 or 1).  Registered for each of the
 * 14 builtins against itself, plus exact mixed kernels for (int64, uint64)
 * and (uint64, int64) -- NumPy 2's rule, so that -1 < 2**64 - 1 is true
 * instead of going through float64.  Other mixed pairs promote (exactly) to
 * a common type.  Semantics:
 *   bool      any nonzero byte is true; false < true.
 *   floats    IEEE: every comparison with a NaN is false except not_equal,
 *             and leaves no "invalid" flag (the entry points take back what
 *             the vectorised compares raise: NumPy reports none); -0.0 ==
 *             0.0.  float16 compares its exact float32
 *             value.
 *   complex   NumPy's lexicographic order: a < b iff a.re < b.re, or the
 *             real parts are equal and a.im < b.im; an ordering comparison
 *             involving a NaN part is false and raises "invalid", as NumPy's
 *             (loops.c.src CLT/CLE/CGT/CGE); equal needs both parts equal.
 */
#include "ops/ops_internal.h"

#define CK__CMP_FNS(tok, ST, LDA, LDB)                                         \
  static CK__OPS_INLINE int ck__equal_##tok(uint8_t *r, ST a, ST b) {          \
    *r = LDA(a) == LDB(b);                                                     \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__not_equal_##tok(uint8_t *r, ST a, ST b) {      \
    *r = LDA(a) != LDB(b);                                                     \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__less_##tok(uint8_t *r, ST a, ST b) {           \
    *r = LDA(a) < LDB(b);                                                      \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__less_equal_##tok(uint8_t *r, ST a, ST b) {     \
    *r = LDA(a) <= LDB(b);                                                     \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__greater_##tok(uint8_t *r, ST a, ST b) {        \
    *r = LDA(a) > LDB(b);                                                      \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__greater_equal_##tok(uint8_t *r, ST a, ST b) {  \
    *r = LDA(a) >= LDB(b);                                                     \
    return 0;                                                                  \
  }

#define CK__ID(x) (x)
#define CK__TRUTH(x) ((x) != 0)

CK__CMP_FNS(boolean, uint8_t, CK__TRUTH, CK__TRUTH)

#define CK__INT_CMP(tok, id, T, WU, bits, unused) CK__CMP_FNS(tok, T, CK__ID, CK__ID)
CK__INT_TYPES(CK__INT_CMP, 0)

#define CK__FLT_CMP(tok, id, ST, CT, LD, STO, SUF, unused) CK__CMP_FNS(tok, ST, LD, LD)
CK__FLOAT_TYPES(CK__FLT_CMP, 0)

#define CK__CPX_CMP(tok, id, ST, RT, RID, CT, SUF, unused)                     \
  static CK__OPS_INLINE int ck__equal_##tok(uint8_t *r, ST a, ST b) {          \
    *r = a.re == b.re && a.im == b.im;                                         \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__not_equal_##tok(uint8_t *r, ST a, ST b) {      \
    *r = a.re != b.re || a.im != b.im;                                         \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__less_##tok(uint8_t *r, ST a, ST b) {           \
    *r = CK__CLT(a.re, a.im, b.re, b.im);                                      \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__less_equal_##tok(uint8_t *r, ST a, ST b) {     \
    *r = CK__CLE(a.re, a.im, b.re, b.im);                                      \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__greater_##tok(uint8_t *r, ST a, ST b) {        \
    *r = CK__CGT(a.re, a.im, b.re, b.im);                                      \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__greater_equal_##tok(uint8_t *r, ST a, ST b) {  \
    *r = CK__CGE(a.re, a.im, b.re, b.im);                                      \
    return 0;                                                                  \
  }
CK__COMPLEX_TYPES(CK__CPX_CMP, 0)

/* int64 against uint64, exactly: -1 for a < b, 0, 1. */
static CK__OPS_INLINE int ck__cmp_i64_u64(int64_t a, uint64_t b) {
  if (a < 0) {
    return -1;
  }
  return (uint64_t)a < b ? -1 : (uint64_t)a > b ? 1 : 0;
}

#define CK__MIXED_CMP(op, OPR)                                                 \
  static CK__OPS_INLINE int ck__##op##_int64_uint64(uint8_t *r, int64_t a,     \
                                                    uint64_t b) {              \
    *r = ck__cmp_i64_u64(a, b) OPR 0;                                          \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__##op##_uint64_int64(uint8_t *r, uint64_t a,    \
                                                    int64_t b) {               \
    *r = -ck__cmp_i64_u64(b, a) OPR 0;                                         \
    return 0;                                                                  \
  }
CK__MIXED_CMP(equal, ==)
CK__MIXED_CMP(not_equal, !=)
CK__MIXED_CMP(less, <)
CK__MIXED_CMP(less_equal, <=)
CK__MIXED_CMP(greater, >)
CK__MIXED_CMP(greater_equal, >=)

/* Floats through CK__DEFINE2_QUIET (BQ): a NaN raises no "invalid". */
#define CK__CMP_OP(B, BQ, op)                                                  \
  CK__B_BOOL(B, op)                                                            \
  CK__INT_TYPES(CK__B_INT_BOOL, B, op)                                         \
  CK__FLOAT_TYPES(CK__B_FLT_BOOL, BQ, op)                                      \
  CK__COMPLEX_TYPES(CK__B_CPX_BOOL, B, op)                                     \
  B(op, int64_uint64, int64_t, uint64_t, uint8_t, CK_TYPE_INT64,               \
    CK_TYPE_UINT64, CK_TYPE_BOOL)                                              \
  B(op, uint64_int64, uint64_t, int64_t, uint8_t, CK_TYPE_UINT64,              \
    CK_TYPE_INT64, CK_TYPE_BOOL)

#define CK__COMPARE_LIST(U, B, BQ)                                             \
  CK__CMP_OP(B, BQ, equal)                                                     \
  CK__CMP_OP(B, BQ, not_equal)                                                 \
  CK__CMP_OP(B, BQ, less)                                                      \
  CK__CMP_OP(B, BQ, less_equal)                                                \
  CK__CMP_OP(B, BQ, greater)                                                   \
  CK__CMP_OP(B, BQ, greater_equal)

CK__COMPARE_LIST(CK__DEFINE1, CK__DEFINE2, CK__DEFINE2_QUIET)

static const ck__op_row ck__compare_rows[] = {
    CK__COMPARE_LIST(CK__ROW1, CK__ROW2, CK__ROW2)};

const ck__op_table ck__ops_compare_table = {
    ck__compare_rows, sizeof ck__compare_rows / sizeof ck__compare_rows[0], NULL, 0};
