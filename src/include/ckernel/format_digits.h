/*
 * format_digits.h -- the exact decimal digits of a float64 rounded to a
 * fixed precision, by 64-bit integer arithmetic: Python's format() digits
 * for 'f' and '%' (n digits after the point: CPython's dtoa mode 3) and 'e'
 * and 'g' (n significant: mode 2), rounded half to even on the exact binary
 * value, for |v| < 2^64 with the last digit at most 19 places after the
 * point.  No libc, no heap, no floating point, no 128-bit type: written once
 * for C11, OpenCL C and CUDA C++ like ckernel/format_view.h, whose
 * ck_fv_digits (the device programs' digits, big-integer arithmetic for the
 * rest) and core/shortest.c (the host's: core/float_text.c's 'f'/'e'/'g'/'%' digits,
 * snprintf for the rest) call it.
 *
 * |v| = I + F / 2^f exactly (I < 2^64, F < 2^53, F < 2^f).  n fraction
 * digits are q = floor(F * 10^n / 2^f) < 10^n <= 10^19: F * 10^n < 2^117 is
 * the 128-bit product of two 64-bit words (CK_FV_MULHI for its high word),
 * and the remainder F * 10^n mod 2^f against 2^(f - 1) decides the
 * rounding; a carry out of q increments I.  n significant digits are
 * n - decpt places after the point, decpt exact from I's digits (or, below
 * 1, from floor(F * 10^19 / 2^f)); with more integer digits than n, I is
 * rounded at a power of ten with F as the sticky bit.
 *
 * The includer defines CK_FV_FN, CK_FV_I64, CK_FV_U64, CK_FV_U8 and
 * CK_FV_MULHI(a, b) as for ckernel/format_view.h (<stdbool.h>'s bool in C),
 * then includes this header.  Results follow ck_fv_digits: digits d[0, *nd)
 * (at most 39) without trailing zeros ("0", *decpt 1, for a value that
 * rounds to zero) and the point *decpt (|v| ~ 0.d * 10^decpt); a function
 * returns false, writing nothing, for a value or precision outside its
 * range (and for inf/nan), and the caller takes its exact general path.
 * tests/c/core/test_fixed_digits.c checks both against glibc's snprintf.
 */
#ifndef CKERNEL_FORMAT_DIGITS_H
#define CKERNEL_FORMAT_DIGITS_H

#define CK_FV_FIXED_MAX 19 /* the most digits after the point ck_fv_fixed_digits takes */

/* 10^i, 0 <= i <= 19 */
CK_FV_FN CK_FV_U64 ck_fv_pow10(int i) {
  CK_FV_U64 p = 1u, b = 10u;
  while (i != 0) {
    if (i & 1) {
      p *= b;
    }
    b *= b; /* wraps past 10^16 only after its last use */
    i >>= 1;
  }
  return p;
}

/* floor(fr * p10 / 2^f) into *q, fr < 2^53, p10 <= 10^19, 1 <= f (the
 * scaled fraction: below p10 when fr < 2^f), from the 128-bit product of two
 * 64-bit words (CK_FV_MULHI: no 128-bit type); returns how the remainder
 * fr * p10 mod 2^f compares with one half, 2^(f - 1): -1, 0 or 1. */
CK_FV_FN int ck_fv_scaled_fraction(CK_FV_U64 fr, int f, CK_FV_U64 p10, CK_FV_U64 *q) {
  CK_FV_U64 lo = fr * p10, hi = CK_FV_MULHI(fr, p10); /* < 2^117 */
  if (f >= 118) { /* the product is below 2^(f - 1) */
    *q = 0;
    return -1;
  }
  CK_FV_U64 rh, rl, hh, hl; /* the remainder and one half, as (high, low) words */
  if (f < 64) {
    *q = (lo >> f) | (hi << (64 - f));
    rh = 0;
    rl = lo & ((((CK_FV_U64)1) << f) - 1);
    hh = 0;
    hl = ((CK_FV_U64)1) << (f - 1);
  } else if (f == 64) {
    *q = hi;
    rh = 0;
    rl = lo;
    hh = 0;
    hl = ((CK_FV_U64)1) << 63;
  } else {
    *q = hi >> (f - 64);
    rh = hi & ((((CK_FV_U64)1) << (f - 64)) - 1);
    rl = lo;
    hh = ((CK_FV_U64)1) << (f - 65);
    hl = 0;
  }
  if (rh != hh) {
    return rh > hh ? 1 : -1;
  }
  return rl == hl ? 0 : rl > hl ? 1 : -1;
}

/* The decimal digits of v into d[k, k + n) (n of them, leading zeros
 * included) */
CK_FV_FN void ck_fv_put_digits(CK_FV_U8 *d, CK_FV_I64 k, int n, CK_FV_U64 v) {
  for (int i = n - 1; i >= 0; i--) {
    d[k + i] = (CK_FV_U8)('0' + v % 10u);
    v /= 10u;
  }
}

CK_FV_FN int ck_fv_ndigits(CK_FV_U64 v) {
  int n = 1;
  while (v >= 10u) {
    v /= 10u;
    n++;
  }
  return n;
}

/* |v| = ip + fr / 2^f exactly (ip < 2^64; fr < 2^53 and fr < 2^f; f = 0:
 * an integer) from the bits of a finite value, false for |v| >= 2^64 */
CK_FV_FN bool ck_fv_split(CK_FV_U64 bits, CK_FV_U64 *ip, CK_FV_U64 *fr, int *f) {
  CK_FV_U64 mant = bits & ((((CK_FV_U64)1) << 52) - 1);
  int bexp = (int)((bits >> 52) & 0x7ff);
  CK_FV_U64 m = bexp == 0 ? mant : mant | (((CK_FV_U64)1) << 52);
  int e = bexp == 0 ? -1074 : bexp - 1075;
  if (e >= 0) {
    if (e > 11) {
      return false;
    }
    *ip = m << e;
    *fr = 0;
    *f = 0;
  } else {
    *f = -e;
    *ip = *f <= 52 ? m >> *f : 0;
    *fr = *f <= 52 ? m & ((((CK_FV_U64)1) << *f) - 1) : m;
  }
  return true;
}

/* The exact digits of ck_fv_digits' mode 3 (`ndigits` after the point,
 * rounded half to even on the exact binary value) without a big integer,
 * for |v| < 2^64 and 0 <= ndigits <= CK_FV_FIXED_MAX: |v| = I + F / 2^f,
 * the fraction's digits are q = floor(F * 10^ndigits / 2^f) < 10^ndigits
 * (ck_fv_scaled_fraction) and the remainder against one half decides the
 * rounding (a tie goes to the even last digit; a carry out of q increments
 * I).  Writes d[0, *nd) and *decpt as ck_fv_digits does (at most 39 digits)
 * and returns true; false (nothing written) outside that range or for
 * inf/nan. */
CK_FV_FN bool ck_fv_fixed_digits(CK_FV_U64 bits, CK_FV_I64 ndigits, CK_FV_U8 *d,
                                 CK_FV_I64 *nd, CK_FV_I64 *decpt) {
  CK_FV_U64 ip, fr, q = 0;
  int f;
  if (((bits >> 52) & 0x7ff) == 0x7ff || ndigits < 0 || ndigits > CK_FV_FIXED_MAX ||
      !ck_fv_split(bits, &ip, &fr, &f)) {
    return false;
  }
  int n = (int)ndigits;
  CK_FV_U64 p10 = ck_fv_pow10(n);
  if (fr != 0) {
    int c = ck_fv_scaled_fraction(fr, f, p10, &q);
    if (c > 0 || (c == 0 && (((n > 0 ? q : ip) & 1u) != 0))) {
      q += 1u;
      if (q == p10) { /* 0.99..95 -> 1.00..0: the carry goes into I */
        q = 0;
        ip += 1u;
      }
    }
  }
  CK_FV_I64 k = 0;
  if (ip != 0) {
    k = ck_fv_ndigits(ip);
    ck_fv_put_digits(d, 0, (int)k, ip);
    *decpt = k;
  } else if (q == 0) {
    d[0] = '0';
    *nd = 1;
    *decpt = 1;
    return true;
  } else {
    /* no integer part: the point sits before q's n digits, its leading zeros skipped */
    int nq = ck_fv_ndigits(q);
    *decpt = nq - n;
    n = nq;
  }
  ck_fv_put_digits(d, k, n, q);
  k += n;
  while (k > 1 && d[k - 1] == '0') {
    k--;
  }
  *nd = k;
  return true;
}

/* The exact digits of ck_fv_digits' mode 2 (`ndigits` significant, 'e' and
 * 'g') by the same integer arithmetic, for 1 <= ndigits <= CK_FV_FIXED_MAX
 * and 10^-19 <= |v| < 2^64 when the last digit kept is at most 19 places
 * after the point: the position of |v|'s first digit is exact (the digits
 * of I, or of floor(F * 10^19 / 2^f) below 1), so that ndigits significant
 * are mode 3's ndigits - decpt places; with more integer digits than
 * ndigits, I itself is rounded at a power of ten (the fraction a sticky
 * bit).  Writes as ck_fv_fixed_digits; false (nothing written) otherwise. */
CK_FV_FN bool ck_fv_sig_digits(CK_FV_U64 bits, CK_FV_I64 ndigits, CK_FV_U8 *d,
                               CK_FV_I64 *nd, CK_FV_I64 *decpt) {
  CK_FV_U64 ip, fr;
  int f;
  if (((bits >> 52) & 0x7ff) == 0x7ff || ndigits < 1 || ndigits > CK_FV_FIXED_MAX ||
      !ck_fv_split(bits, &ip, &fr, &f)) {
    return false;
  }
  if (ip == 0) {
    if (fr == 0) {
      d[0] = '0';
      *nd = 1;
      *decpt = 1;
      return true;
    }
    CK_FV_U64 q19;
    ck_fv_scaled_fraction(fr, f, ck_fv_pow10(CK_FV_FIXED_MAX), &q19);
    if (q19 == 0) { /* below 10^-19 */
      return false;
    }
    /* |v| = 0.0..0d..., zeros = CK_FV_FIXED_MAX - digits of floor(|v| * 10^19) */
    CK_FV_I64 places = ndigits + CK_FV_FIXED_MAX - ck_fv_ndigits(q19);
    return ck_fv_fixed_digits(bits, places, d, nd, decpt);
  }
  int k = ck_fv_ndigits(ip);
  if (ndigits >= k) {
    return ck_fv_fixed_digits(bits, ndigits - k, d, nd, decpt);
  }
  /* round I to its first ndigits digits: Q = I / 10^c, c = k - ndigits <= 19 */
  int c = k - (int)ndigits;
  CK_FV_U64 p = ck_fv_pow10(c);
  CK_FV_U64 qq = ip / p, r = ip % p, hp = p / 2u; /* one half of 10^c */
  if (r > hp || (r == hp && (fr != 0 || (qq & 1u) != 0))) {
    qq += 1u; /* 99..9 -> 100..0: one digit more, decpt too */
  }
  int nq = ck_fv_ndigits(qq);
  ck_fv_put_digits(d, 0, nq, qq);
  *decpt = nq + c;
  CK_FV_I64 kk = nq;
  while (kk > 1 && d[kk - 1] == '0') {
    kk--;
  }
  *nd = kk;
  return true;
}

#endif /* CKERNEL_FORMAT_DIGITS_H */
