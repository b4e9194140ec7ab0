/*
 * scalar_internal.h -- builtin scalar helpers private to the library: type names and
 * sizes, complex storage, and portable float16 <-> float64 conversion.
 *
 * float16 is IEEE 754 binary16 handled in software (no _Float16, no F16C):
 * the bits are a uint16_t.  Conversions go through float64, which holds
 * every float16 and float32 exactly, so float32 -> float16 via float64 rounds
 * once (no double rounding).  Rounding is to nearest, ties to even; NaNs
 * stay NaN (quiet, with the top payload bits kept).
 */
#ifndef CKERNEL_SCALAR_INTERNAL_H
#define CKERNEL_SCALAR_INTERNAL_H

#include "ckernel/types.h"

#include <stdint.h>
#include <string.h>

typedef struct ck__complex64 {
  float re, im;
} ck__complex64;

typedef struct ck__complex128 {
  double re, im;
} ck__complex128;

/* The 14 builtin scalars, the one table of their facts:
 *     X(token, "name", id, storage C type, kind, extra...)
 * kind: 'b' bool, 'i' signed integer, 'u' unsigned integer, 'f' real
 * float, 'c' complex (NumPy's dtype kinds); the width in bits is the
 * storage type's (ck__builtin_bits), a complex's component width half of
 * it.  In NumPy's type order ("?bBhHiIlLefdFD", ck__builtin_rank).
 * The token differs from the name only for bool, which <stdbool.h> defines
 * as a macro (it would expand when passed through another macro). */
#define CK__BUILTIN_TYPES(X, ...)                                              \
  X(boolean, "bool", CK_TYPE_BOOL, uint8_t, 'b', __VA_ARGS__)                  \
  X(int8, "int8", CK_TYPE_INT8, int8_t, 'i', __VA_ARGS__)                      \
  X(int16, "int16", CK_TYPE_INT16, int16_t, 'i', __VA_ARGS__)                  \
  X(int32, "int32", CK_TYPE_INT32, int32_t, 'i', __VA_ARGS__)                  \
  X(int64, "int64", CK_TYPE_INT64, int64_t, 'i', __VA_ARGS__)                  \
  X(uint8, "uint8", CK_TYPE_UINT8, uint8_t, 'u', __VA_ARGS__)                  \
  X(uint16, "uint16", CK_TYPE_UINT16, uint16_t, 'u', __VA_ARGS__)              \
  X(uint32, "uint32", CK_TYPE_UINT32, uint32_t, 'u', __VA_ARGS__)              \
  X(uint64, "uint64", CK_TYPE_UINT64, uint64_t, 'u', __VA_ARGS__)              \
  X(float16, "float16", CK_TYPE_FLOAT16, uint16_t, 'f', __VA_ARGS__)           \
  X(float32, "float32", CK_TYPE_FLOAT32, float, 'f', __VA_ARGS__)              \
  X(float64, "float64", CK_TYPE_FLOAT64, double, 'f', __VA_ARGS__)             \
  X(complex64, "complex64", CK_TYPE_COMPLEX64, ck__complex64, 'c', __VA_ARGS__) \
  X(complex128, "complex128", CK_TYPE_COMPLEX128, ck__complex128, 'c',        \
    __VA_ARGS__)

static inline bool ck__is_builtin_id(int id) {
  return id >= CK_TYPE_BOOL && id <= CK_TYPE_COMPLEX128;
}

/* "int32" etc.; "?" for anything else. */
static inline const char *ck__builtin_name(int id) {
  switch (id) {
#define CK__NAME_CASE(tok, name, id_, T, K, unused) \
  case id_:                                         \
    return name;
    CK__BUILTIN_TYPES(CK__NAME_CASE, 0)
#undef CK__NAME_CASE
  default:
    return "?";
  }
}

static inline size_t ck__builtin_size(int id) {
  switch (id) {
#define CK__SIZE_CASE(tok, name, id_, T, K, unused) \
  case id_:                                         \
    return sizeof(T);
    CK__BUILTIN_TYPES(CK__SIZE_CASE, 0)
#undef CK__SIZE_CASE
  default:
    return 0;
  }
}

/* 'b', 'i', 'u', 'f' or 'c'; 0 for anything else. */
static inline char ck__builtin_kind(int id) {
  switch (id) {
#define CK__KIND_CASE(tok, name, id_, T, K, unused) \
  case id_:                                         \
    return K;
    CK__BUILTIN_TYPES(CK__KIND_CASE, 0)
#undef CK__KIND_CASE
  default:
    return 0;
  }
}

/* The storage width in bits (a complex: both components); 0 for anything
 * else. */
static inline int ck__builtin_bits(int id) {
  return (int)(8 * ck__builtin_size(id));
}

/* The precision width in bits: the storage width, a complex's component
 * width. */
static inline int ck__builtin_precision_bits(int id) {
  return ck__builtin_kind(id) == 'c' ? ck__builtin_bits(id) / 2 : ck__builtin_bits(id);
}

/* log2 of a width of 8..64 bits in units of `unit` bits (1, 2, 4, 8 units). */
static inline unsigned ck__log2_units(int bits, int unit) {
  int u = bits / unit;
  return u >= 8 ? 3u : u >= 4 ? 2u : u >= 2 ? 1u : 0u;
}

/* NumPy's type order: the position of a builtin id in "?bBhHiIlLefdFD",
 * from its kind and width; 0 for anything else. */
static inline unsigned ck__builtin_rank(int id) {
  int bits = ck__builtin_precision_bits(id);
  switch (ck__builtin_kind(id)) {
  case 'i': return 1 + 2 * ck__log2_units(bits, 8);
  case 'u': return 2 + 2 * ck__log2_units(bits, 8);
  case 'f': return 9 + ck__log2_units(bits, 16);
  case 'c': return 12 + ck__log2_units(bits, 32);
  default: return 0;
  }
}

/* The builtin id named name[0..len) ("int32", ...); 0 if none. */
static inline int ck__builtin_by_name(const char *name, size_t len) {
#define CK__BY_NAME(tok, name_, id_, T, K, unused)                          \
  if (len == sizeof(name_) - 1 && memcmp(name, name_, len) == 0) {          \
    return id_;                                                             \
  }
  CK__BUILTIN_TYPES(CK__BY_NAME, 0)
#undef CK__BY_NAME
  return 0;
}

/* float16 bits -> float64 (exact). */
static inline double ck__f16_to_f64(uint16_t h) {
  uint64_t sign = (uint64_t)(h >> 15) << 63;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint64_t mant = h & 0x3ffu;
  uint64_t bits;
  if (exp == 0) {
    /* zero or subnormal: mant * 2^-24, exact in float64 */
    double v = (double)mant * 0x1p-24;
    return sign ? -v : v;
  } else if (exp == 31) {
    bits = sign | (UINT64_C(0x7ff) << 52) | (mant << 42);
  } else {
    bits = sign | ((uint64_t)(exp - 15 + 1023) << 52) | (mant << 42);
  }
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* float64 -> float16 bits, round to nearest even; overflow gives inf. */
static inline uint16_t ck__f64_to_f16(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000u);
  int exp = (int)((b >> 52) & 0x7ffu);
  uint64_t mant = b & ((UINT64_C(1) << 52) - 1);
  if (exp == 0x7ff) {
    /* inf stays inf; NaN stays a quiet NaN keeping the top payload bits */
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (unsigned)(mant >> 42) : 0u));
  }
  int e = exp - 1023; /* unbiased; float64 subnormals land far below -25 */
  if (e > 15) {
    return (uint16_t)(sign | 0x7c00u); /* >= 2^16: overflow */
  }
  if (e >= -14) {
    /* normal range: keep 10 of the 52 mantissa bits; a carry out of the
     * mantissa correctly bumps the exponent (up to inf at 0x7c00) */
    uint32_t h = ((uint32_t)(e + 15) << 10) | (uint32_t)(mant >> 42);
    uint64_t rem = mant & ((UINT64_C(1) << 42) - 1);
    uint64_t half = UINT64_C(1) << 41;
    if (rem > half || (rem == half && (h & 1u))) {
      h++;
    }
    return (uint16_t)(sign | h);
  }
  if (e < -25) {
    return sign; /* below half the smallest subnormal: rounds to zero */
  }
  /* subnormal result: the value in units of 2^-24 is m * 2^(e-28) with the
   * implicit bit restored; shift is 43..53 here */
  uint64_t m = mant | (UINT64_C(1) << 52);
  int shift = 28 - e;
  uint64_t q = m >> shift;
  uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
  uint64_t half = UINT64_C(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) {
    q++; /* may become 0x400, the smallest normal: still the right bits */
  }
  return (uint16_t)(sign | q);
}

#endif /* CKERNEL_SCALAR_INTERNAL_H */
