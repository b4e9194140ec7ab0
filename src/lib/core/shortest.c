/*
 * shortest.c -- the shortest round-trip decimal digits of a float64 (the
 * Ryu algorithm, Adams 2018): among the decimals that read back as v, the
 * shortest, and of those the one nearest v (ties to an even last digit),
 * the choice CPython's repr makes (dtoa mode 0).  Integer arithmetic only:
 * no locale, no strtod, no floating-point flags.  The powers of five come
 * from tools/gen_pow5_table.py (pow5_table.inc).
 */
#include "core/shortest_internal.h"

#include <string.h>

#include "core/pow5_table.inc"

#define CK__MANT_BITS 52
#define CK__BIAS 1023
#define CK__POW5_INV_BITS 125
#define CK__POW5_BITS 125

__extension__ typedef unsigned __int128 ck__u128;

/* ceil(log2(5^e)) for 1 <= e <= 3528; 1 for e == 0 */
static int32_t ck__pow5bits(int32_t e) {
  return (int32_t)(((uint32_t)e * 1217359u) >> 19) + 1;
}
/* floor(log10(2^e)), 0 <= e <= 1650 */
static uint32_t ck__log10_pow2(int32_t e) {
  return ((uint32_t)e * 78913u) >> 18;
}
/* floor(log10(5^e)), 0 <= e <= 2620 */
static uint32_t ck__log10_pow5(int32_t e) {
  return ((uint32_t)e * 732923u) >> 20;
}

static uint32_t ck__pow5_factor(uint64_t v) {
  uint32_t count = 0;
  while (v % 5u == 0) {
    v /= 5u;
    count++;
  }
  return count;
}
static bool ck__multiple_of_pow5(uint64_t v, uint32_t p) {
  return ck__pow5_factor(v) >= p;
}
static bool ck__multiple_of_pow2(uint64_t v, uint32_t p) {
  return (v & ((UINT64_C(1) << p) - 1)) == 0;
}

/* (m * mul) >> j for the 128-bit mul {low, high}; j >= 64 */
static uint64_t ck__mul_shift(uint64_t m, const uint64_t *mul, int32_t j) {
  ck__u128 b0 = (ck__u128)m * mul[0];
  ck__u128 b2 = (ck__u128)m * mul[1];
  return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

uint64_t ck__shortest_f64(uint64_t bits, int32_t *exp10) {
  uint64_t ieee_mant = bits & ((UINT64_C(1) << CK__MANT_BITS) - 1);
  uint32_t ieee_exp = (uint32_t)((bits >> CK__MANT_BITS) & 0x7ffu);
  int32_t e2;
  uint64_t m2;
  if (ieee_exp == 0) {
    e2 = 1 - CK__BIAS - CK__MANT_BITS - 2;
    m2 = ieee_mant;
  } else {
    e2 = (int32_t)ieee_exp - CK__BIAS - CK__MANT_BITS - 2;
    m2 = (UINT64_C(1) << CK__MANT_BITS) | ieee_mant;
  }
  bool even = (m2 & 1u) == 0;
  bool accept_bounds = even;

  /* the interval of decimals that read back as v: [mm, mp] around mv, all
   * times 4 (the half steps to the neighbours; a quarter step below a
   * power of two) */
  uint64_t mv = 4u * m2;
  uint32_t mm_shift = ieee_mant != 0 || ieee_exp <= 1;

  /* mv, mp, mm scaled by 10^-e10 */
  uint64_t vr, vp, vm;
  int32_t e10;
  bool vm_trailing_zeros = false, vr_trailing_zeros = false;
  if (e2 >= 0) {
    uint32_t q = ck__log10_pow2(e2) - (e2 > 3);
    e10 = (int32_t)q;
    int32_t k = CK__POW5_INV_BITS + ck__pow5bits((int32_t)q) - 1;
    int32_t i = -e2 + (int32_t)q + k;
    vr = ck__mul_shift(4u * m2, CK_POW5_INV[q], i);
    vp = ck__mul_shift(4u * m2 + 2u, CK_POW5_INV[q], i);
    vm = ck__mul_shift(4u * m2 - 1u - mm_shift, CK_POW5_INV[q], i);
    if (q <= 21) {
      /* only one of mp, mv, mm can be a multiple of 5, if any */
      if (mv % 5u == 0) {
        vr_trailing_zeros = ck__multiple_of_pow5(mv, q);
      } else if (accept_bounds) {
        vm_trailing_zeros = ck__multiple_of_pow5(mv - 1u - mm_shift, q);
      } else {
        vp -= ck__multiple_of_pow5(mv + 2u, q);
      }
    }
  } else {
    uint32_t q = ck__log10_pow5(-e2) - (-e2 > 1);
    e10 = (int32_t)q + e2;
    int32_t i = -e2 - (int32_t)q;
    int32_t k = ck__pow5bits(i) - CK__POW5_BITS;
    int32_t j = (int32_t)q - k;
    vr = ck__mul_shift(4u * m2, CK_POW5[i], j);
    vp = ck__mul_shift(4u * m2 + 2u, CK_POW5[i], j);
    vm = ck__mul_shift(4u * m2 - 1u - mm_shift, CK_POW5[i], j);
    if (q <= 1) {
      /* mv = 4 m2 has at least two trailing zero bits */
      vr_trailing_zeros = true;
      if (accept_bounds) {
        vm_trailing_zeros = mm_shift == 1; /* mm = mv - 1 - mm_shift */
      } else {
        --vp; /* mp = mv + 2: a multiple of 2, so vp has a trailing zero */
      }
    } else if (q < 63) {
      /* the full product has at least q trailing zeros when mv has q
       * factors of two (-e2 >= q) */
      vr_trailing_zeros = ck__multiple_of_pow2(mv, q);
    }
  }

  /* the shortest digits in [vm, vp]; the nearest to vr among them */
  int32_t removed = 0;
  uint32_t last_removed = 0;
  uint64_t output;
  if (vm_trailing_zeros || vr_trailing_zeros) {
    /* the rare general case: exact decimal ties and interval bounds */
    while (vp / 10u > vm / 10u) {
      vm_trailing_zeros &= vm % 10u == 0;
      vr_trailing_zeros &= last_removed == 0;
      last_removed = (uint32_t)(vr % 10u);
      vr /= 10u;
      vp /= 10u;
      vm /= 10u;
      removed++;
    }
    if (vm_trailing_zeros) {
      while (vm % 10u == 0) {
        vr_trailing_zeros &= last_removed == 0;
        last_removed = (uint32_t)(vr % 10u);
        vr /= 10u;
        vp /= 10u;
        vm /= 10u;
        removed++;
      }
    }
    if (vr_trailing_zeros && last_removed == 5 && vr % 2u == 0) {
      last_removed = 4; /* an exact tie: round to even */
    }
    output = vr + ((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last_removed >= 5);
  } else {
    bool round_up = false;
    while (vp / 10u > vm / 10u) {
      round_up = vr % 10u >= 5;
      vr /= 10u;
      vp /= 10u;
      vm /= 10u;
      removed++;
    }
    output = vr + (vr == vm || round_up);
  }
  *exp10 = e10 + removed;
  return output;
}
