/*
 * ops_logic.c -- built-in kernels of logical_and, logical_or, logical_xor,
 * logical_not, bitwise_and, bitwise_or, bitwise_xor, bitwise_not (also
 * registered as invert, NumPy's other name), left_shift, right_shift.
 *
 * logical_*: all 14 builtins, result bool; a value is true when nonzero
 *   (NaN is true, -0.0 false; complex: either part nonzero).
 * bitwise_*: bool (as logical) and the 8 integer types; floats and complex
 *   have no kernel and cannot be promoted to one (CK_ERR_TYPE, as NumPy).
 * left_shift / right_shift: the 8 integer types (bool promotes to int8).
 *   Shift counts are never UB: a count outside [0, width) -- negative counts
 *   included, read as huge unsigned values as NumPy does -- gives 0 for
 *   left shifts and for right shifts of non-negative values, and -1 (sign
 *   fill) for right shifts of negative values.  Left shifts are done in
 *   unsigned arithmetic and wrap; right shifts of negative values are
 *   arithmetic (GCC/Clang define >> on negative values that way).
 */
#include "ops/ops_internal.h"

/* ---- logical -------------------------------------------------------------- */

#define CK__LOGIC_FNS(tok, ST, TRUTH)                                          \
  static CK__OPS_INLINE int ck__logical_and_##tok(uint8_t *r, ST a, ST b) {    \
    *r = TRUTH(a) & TRUTH(b);                                                  \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__logical_or_##tok(uint8_t *r, ST a, ST b) {     \
    *r = TRUTH(a) | TRUTH(b);                                                  \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__logical_xor_##tok(uint8_t *r, ST a, ST b) {    \
    *r = TRUTH(a) ^ TRUTH(b);                                                  \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__logical_not_##tok(uint8_t *r, ST a) {          \
    *r = !TRUTH(a);                                                            \
    return 0;                                                                  \
  }

#define CK__NZ(x) ((x) != 0)
/* float16: any bit but the sign set (NaN and inf included) */
#define CK__NZ_F16(x) (((x) & 0x7fffu) != 0)
#define CK__NZ_CPX(x) ((x).re != 0 || (x).im != 0)

CK__LOGIC_FNS(boolean, uint8_t, CK__NZ)
#define CK__INT_LOGIC(tok, id, T, WU, bits, unused) CK__LOGIC_FNS(tok, T, CK__NZ)
CK__INT_TYPES(CK__INT_LOGIC, 0)
CK__LOGIC_FNS(float16, uint16_t, CK__NZ_F16)
CK__LOGIC_FNS(float32, float, CK__NZ)
CK__LOGIC_FNS(float64, double, CK__NZ)
CK__LOGIC_FNS(complex64, ck__complex64, CK__NZ_CPX)
CK__LOGIC_FNS(complex128, ck__complex128, CK__NZ_CPX)

/* ---- bitwise -------------------------------------------------------------- */

static CK__OPS_INLINE int ck__bitwise_and_boolean(uint8_t *r, uint8_t a, uint8_t b) {
  *r = (a != 0) & (b != 0);
  return 0;
}
static CK__OPS_INLINE int ck__bitwise_or_boolean(uint8_t *r, uint8_t a, uint8_t b) {
  *r = (a != 0) | (b != 0);
  return 0;
}
static CK__OPS_INLINE int ck__bitwise_xor_boolean(uint8_t *r, uint8_t a, uint8_t b) {
  *r = (a != 0) ^ (b != 0);
  return 0;
}
static CK__OPS_INLINE int ck__bitwise_not_boolean(uint8_t *r, uint8_t a) {
  *r = a == 0;
  return 0;
}
#define ck__invert_boolean ck__bitwise_not_boolean

#define CK__INT_BITS(tok, id, T, WU, bits, unused)                             \
  static CK__OPS_INLINE int ck__bitwise_and_##tok(T *r, T a, T b) {            \
    *r = (T)(a & b);                                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__bitwise_or_##tok(T *r, T a, T b) {             \
    *r = (T)(a | b);                                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__bitwise_xor_##tok(T *r, T a, T b) {            \
    *r = (T)(a ^ b);                                                           \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__bitwise_not_##tok(T *r, T a) {                 \
    *r = (T)~(WU)a;                                                            \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__invert_##tok(T *r, T a) {                      \
    *r = (T)~(WU)a;                                                            \
    return 0;                                                                  \
  }                                                                            \
  static CK__OPS_INLINE int ck__left_shift_##tok(T *r, T a, T b) {             \
    *r = (uint64_t)b < (bits) ? (T)((WU)a << (uint64_t)b) : (T)0;              \
    return 0;                                                                  \
  }
CK__INT_TYPES(CK__INT_BITS, 0)

#define CK__SINT_RSHIFT(tok, id, T, WU, bits, unused)                          \
  static CK__OPS_INLINE int ck__right_shift_##tok(T *r, T a, T b) {            \
    *r = (uint64_t)b < (bits) ? (T)(a >> (uint64_t)b) : (T)(a < 0 ? -1 : 0);   \
    return 0;                                                                  \
  }
CK__SINT_TYPES(CK__SINT_RSHIFT, 0)

#define CK__UINT_RSHIFT(tok, id, T, WU, bits, unused)                          \
  static CK__OPS_INLINE int ck__right_shift_##tok(T *r, T a, T b) {            \
    *r = (uint64_t)b < (bits) ? (T)(a >> (uint64_t)b) : (T)0;                  \
    return 0;                                                                  \
  }
CK__UINT_TYPES(CK__UINT_RSHIFT, 0)

/* ---- the kernel list --------------------------------------------------------- */

#define CK__LOGIC_LIST(U, B)                                                   \
  CK__B_ALL_BOOL(B, logical_and)                                               \
  CK__B_ALL_BOOL(B, logical_or)                                                \
  CK__B_ALL_BOOL(B, logical_xor)                                               \
  CK__U_ALL_BOOL(U, logical_not)                                               \
  CK__B_BOOL(B, bitwise_and)                                                   \
  CK__INT_TYPES(CK__B_INT, B, bitwise_and)                                     \
  CK__B_BOOL(B, bitwise_or)                                                    \
  CK__INT_TYPES(CK__B_INT, B, bitwise_or)                                      \
  CK__B_BOOL(B, bitwise_xor)                                                   \
  CK__INT_TYPES(CK__B_INT, B, bitwise_xor)                                     \
  CK__U_BOOL(U, bitwise_not)                                                   \
  CK__INT_TYPES(CK__U_INT, U, bitwise_not)                                     \
  CK__U_BOOL(U, invert)                                                        \
  CK__INT_TYPES(CK__U_INT, U, invert)                                          \
  CK__INT_TYPES(CK__B_INT, B, left_shift)                                      \
  CK__INT_TYPES(CK__B_INT, B, right_shift)

CK__LOGIC_LIST(CK__DEFINE1, CK__DEFINE2)

static const ck__op_row ck__logic_rows[] = {CK__LOGIC_LIST(CK__ROW1, CK__ROW2)};

const ck__op_table ck__ops_logic_table = {
    ck__logic_rows, sizeof ck__logic_rows / sizeof ck__logic_rows[0], NULL, 0};
