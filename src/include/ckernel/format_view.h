/*
 * format_view.h -- Python's str() and format() of numbers and text
 * (ckernel/text.h's semantics) written once for every C dialect the library
 * speaks: C11, OpenCL C and CUDA C++.  No libc, no locale, no heap, no
 * floating-point formatting of the C library: integer arithmetic only.
 *
 *   - the shortest round-trip digits of a float64 (the Ryu algorithm, Adams
 *     2018: CPython's repr digits), and of a float32 (NumPy's str of a
 *     float32: ck_fv_float32_str).  core/shortest.c is this header
 *     instantiated for C11: the host and the devices run one implementation
 *     (of these digits, the integer digit text and the grouped digits);
 *   - the exact digits of a float64 rounded (half to even on the exact binary
 *     value, as CPython's dtoa and glibc's printf) to n significant digits
 *     ('e', 'g') or n digits after the point ('f', '%'): for |v| < 2^64 with
 *     the last digit at most 19 places after the point by 64-bit integer
 *     arithmetic (format_digits.h's ck_fv_fixed_digits, ck_fv_sig_digits:
 *     the fraction times 10^n as a 128-bit product of two words, its
 *     remainder against one half), else from a big integer of at most 1088 bits (the exact
 *     expansion of a double has at most 767 significant digits: CK_FV_MAXDIG
 *     bounds the digit buffer).  core/shortest.c exports the fast path to
 *     core/float_text.c, so the host's 'f'/'e'/'g'/'%' digits are these too;
 *   - CPython's layout of those digits (format_float_short) and of every
 *     number (formatter_unicode.c: sign, prefix, zero padding, grouping,
 *     fill and alignment in code points), as src/lib/core/format_number.c lays them
 *     out; text (UTF-8 bytes) with width, alignment and precision.
 *
 * Text goes to a *sink*, the includer's type CK_FV_SINK with members p (a
 * byte pointer), n (bytes so far, CK_FV_I64) and w (nonzero: write; zero:
 * only count) -- the sizing pass and the writing pass of device string
 * results run the same calls.
 *
 * The includer defines: CK_FV_FN (function qualifiers), CK_FV_I64,
 * CK_FV_U64, CK_FV_U32, CK_FV_U8, CK_FV_SINK, CK_FV_BITS(d) (the IEEE bits
 * of a double as CK_FV_U64) and CK_FV_MULHI(a, b) (the high 64 bits of
 * the 128-bit product of two CK_FV_U64), declares the tables
 * CK_POW5_INV[342][2] and CK_POW5[326][2] of CK_FV_U64 (the rows of
 * tools/gen_pow5_table.py: src/lib/core/pow5_table.inc on the host, the same
 * rows written by the Python package for device programs), then includes
 * ckernel/format_digits.h (the fixed-precision digits' integer path, under
 * the same definitions) and this header.  Functions reading text are instantiated per
 * address space with CK_FORMAT_VIEW_TEXT(SUF, AS):
 *
 *   int ck_fv_text_SUF(CK_FV_SINK *k, const ck_fv_spec *s, AS const U8 *t, I64 n)
 *
 * The spec is ck_format_spec's fields (text.h) in order, parsed on the host
 * (ck_format_spec_parse) and embedded in the generated code.  Functions
 * returning int give 0 on success and CK_FV_OVERFLOW for format 'c' of a value
 * outside range(0x110000) (Python's OverflowError).
 */
#ifndef CKERNEL_FORMAT_VIEW_H
#define CKERNEL_FORMAT_VIEW_H

#ifndef CKERNEL_FORMAT_DIGITS_H
#error "include ckernel/format_digits.h before ckernel/format_view.h"
#endif

#define CK_FV_MAXDIG 800
#define CK_FV_OVERFLOW 1
#define CK_FV_FLAG_ALT 0x1
#define CK_FV_FLAG_NO_NEG_ZERO 0x2
#define CK_FV_FLAG_EMPTY 0x4

typedef struct ck_fv_spec {
  CK_FV_I64 width;
  CK_FV_I64 precision;
  CK_FV_U32 fill;
  CK_FV_U8 kind;
  char align;
  char sign;
  char grouping;
  char type;
  CK_FV_U8 flags;
} ck_fv_spec;

/* ---- the sink ---------------------------------------------------------------------------- */
CK_FV_FN void ck_fv_put(CK_FV_SINK *k, CK_FV_U8 c) {
  if (k->w) {
    k->p[k->n] = c;
  }
  k->n += 1;
}

CK_FV_FN CK_FV_I64 ck_fv_cp_len(CK_FV_U32 cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

CK_FV_FN void ck_fv_put_cp(CK_FV_SINK *k, CK_FV_U32 cp) {
  if (cp < 0x80) {
    ck_fv_put(k, (CK_FV_U8)cp);
  } else if (cp < 0x800) {
    ck_fv_put(k, (CK_FV_U8)(0xC0 | (cp >> 6)));
    ck_fv_put(k, (CK_FV_U8)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    ck_fv_put(k, (CK_FV_U8)(0xE0 | (cp >> 12)));
    ck_fv_put(k, (CK_FV_U8)(0x80 | ((cp >> 6) & 0x3F)));
    ck_fv_put(k, (CK_FV_U8)(0x80 | (cp & 0x3F)));
  } else {
    ck_fv_put(k, (CK_FV_U8)(0xF0 | (cp >> 18)));
    ck_fv_put(k, (CK_FV_U8)(0x80 | ((cp >> 12) & 0x3F)));
    ck_fv_put(k, (CK_FV_U8)(0x80 | ((cp >> 6) & 0x3F)));
    ck_fv_put(k, (CK_FV_U8)(0x80 | (cp & 0x3F)));
  }
}

CK_FV_FN void ck_fv_fill(CK_FV_SINK *k, CK_FV_U32 cp, CK_FV_I64 count) {
  if (!k->w) {
    k->n += count * ck_fv_cp_len(cp);
    return;
  }
  for (CK_FV_I64 i = 0; i < count; i++) {
    ck_fv_put_cp(k, cp);
  }
}

/* ---- shortest digits: Ryu ---------------------------------------------------------------- */
/* ((m * {lo, hi}) >> 64 + ...) >> (j - 64): the top of a 64 x 128-bit product; 64 <= j < 128 */
CK_FV_FN CK_FV_U64 ck_fv_mul_shift(CK_FV_U64 m, CK_FV_U64 lo, CK_FV_U64 hi, int j) {
  CK_FV_U64 b0 = CK_FV_MULHI(m, lo);
  CK_FV_U64 b2lo = m * hi;
  CK_FV_U64 b2hi = CK_FV_MULHI(m, hi);
  CK_FV_U64 slo = b2lo + b0;
  CK_FV_U64 shi = b2hi + (slo < b0 ? 1u : 0u);
  int s = j - 64;
  return s == 0 ? slo : (slo >> s) | (shi << (64 - s));
}

CK_FV_FN int ck_fv_pow5bits(int e) {
  return (int)(((CK_FV_U32)e * 1217359u) >> 19) + 1;
}
CK_FV_FN CK_FV_U32 ck_fv_log10_pow2(int e) {
  return ((CK_FV_U32)e * 78913u) >> 18;
}
CK_FV_FN CK_FV_U32 ck_fv_log10_pow5(int e) {
  return ((CK_FV_U32)e * 732923u) >> 20;
}
CK_FV_FN bool ck_fv_multiple_of_pow5(CK_FV_U64 v, CK_FV_U32 p) {
  CK_FV_U32 count = 0;
  while (v % 5u == 0) {
    v /= 5u;
    count++;
  }
  return count >= p;
}

/* One decimal digit off vr, vp and vm (Ryu's general case): vr's digit in
 * *last_removed; *vr_tz stays true while vr's digits removed before it are
 * all zeros. */
CK_FV_FN void ck_fv_drop_digit(CK_FV_U64 *vr, CK_FV_U64 *vp, CK_FV_U64 *vm, bool *vr_tz,
                               CK_FV_U32 *last_removed) {
  *vr_tz &= *last_removed == 0;
  *last_removed = (CK_FV_U32)(*vr % 10u);
  *vr /= 10u;
  *vp /= 10u;
  *vm /= 10u;
}

/* The IEEE-754 bits of a finite nonzero float64 (sign ignored) -> the
 * shortest digits d (may end in zeros) and *exp10, |v| = d * 10^*exp10 read
 * back exactly; among the shortest the nearest (ties to even). */
/* Ryu's search on the rounding interval of m2 * 2^(e2 + 2) (m2 at most 53
 * bits; mm_shift: the interval below is half as wide, at a power of two
 * above the smallest normal): the digits and *exp10 as ck_fv_shortest.  The
 * arithmetic is the 64-bit one of double for any narrower format too (float32
 * fields: ck_fv_float32_str). */
CK_FV_FN CK_FV_U64 ck_fv_shortest_of(CK_FV_U64 m2, int e2, CK_FV_U32 mm_shift, int *exp10) {
  bool accept_bounds = (m2 & 1u) == 0;
  CK_FV_U64 mv = 4u * m2;
  CK_FV_U64 vr, vp, vm;
  int e10;
  bool vm_tz = false, vr_tz = false;
  if (e2 >= 0) {
    CK_FV_U32 q = ck_fv_log10_pow2(e2) - (e2 > 3);
    e10 = (int)q;
    int kk = 125 + ck_fv_pow5bits((int)q) - 1;
    int i = -e2 + (int)q + kk;
    CK_FV_U64 lo = CK_POW5_INV[q][0], hi = CK_POW5_INV[q][1];
    vr = ck_fv_mul_shift(4u * m2, lo, hi, i);
    vp = ck_fv_mul_shift(4u * m2 + 2u, lo, hi, i);
    vm = ck_fv_mul_shift(4u * m2 - 1u - mm_shift, lo, hi, i);
    if (q <= 21) {
      if (mv % 5u == 0) {
        vr_tz = ck_fv_multiple_of_pow5(mv, q);
      } else if (accept_bounds) {
        vm_tz = ck_fv_multiple_of_pow5(mv - 1u - mm_shift, q);
      } else {
        vp -= ck_fv_multiple_of_pow5(mv + 2u, q);
      }
    }
  } else {
    CK_FV_U32 q = ck_fv_log10_pow5(-e2) - (-e2 > 1);
    e10 = (int)q + e2;
    int i = -e2 - (int)q;
    int kk = ck_fv_pow5bits(i) - 125;
    int j = (int)q - kk;
    CK_FV_U64 lo = CK_POW5[i][0], hi = CK_POW5[i][1];
    vr = ck_fv_mul_shift(4u * m2, lo, hi, j);
    vp = ck_fv_mul_shift(4u * m2 + 2u, lo, hi, j);
    vm = ck_fv_mul_shift(4u * m2 - 1u - mm_shift, lo, hi, j);
    if (q <= 1) {
      vr_tz = true;
      if (accept_bounds) {
        vm_tz = mm_shift == 1;
      } else {
        --vp;
      }
    } else if (q < 63) {
      vr_tz = (mv & ((((CK_FV_U64)1) << q) - 1)) == 0;
    }
  }
  int removed = 0;
  CK_FV_U32 last_removed = 0;
  CK_FV_U64 output;
  if (vm_tz || vr_tz) {
    while (vp / 10u > vm / 10u) {
      vm_tz &= vm % 10u == 0;
      ck_fv_drop_digit(&vr, &vp, &vm, &vr_tz, &last_removed);
      removed++;
    }
    if (vm_tz) {
      while (vm % 10u == 0) {
        ck_fv_drop_digit(&vr, &vp, &vm, &vr_tz, &last_removed);
        removed++;
      }
    }
    if (vr_tz && last_removed == 5 && vr % 2u == 0) {
      last_removed = 4;
    }
    output = vr + ((vr == vm && (!accept_bounds || !vm_tz)) || last_removed >= 5);
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

CK_FV_FN CK_FV_U64 ck_fv_shortest(CK_FV_U64 bits, int *exp10) {
  CK_FV_U64 ieee_mant = bits & ((((CK_FV_U64)1) << 52) - 1);
  CK_FV_U32 ieee_exp = (CK_FV_U32)((bits >> 52) & 0x7ffu);
  if (ieee_exp == 0) {
    return ck_fv_shortest_of(ieee_mant, 1 - 1023 - 52 - 2, 1u, exp10);
  }
  return ck_fv_shortest_of((((CK_FV_U64)1) << 52) | ieee_mant, (int)ieee_exp - 1023 - 52 - 2,
                           ieee_mant != 0 || ieee_exp <= 1, exp10);
}

/* ---- digits of a float64 ----------------------------------------------------------------- */
/* The digits of m into d (no trailing zeros, at least one digit); returns
 * how many; *ndig: all of m's digits. */
CK_FV_FN int ck_fv_u64_digits(CK_FV_U64 m, CK_FV_U8 *d, int *ndig) {
  /* the count first, then the digits in place from the end, two per
   * division (no reversed copy; no table: device code shares this) */
  int n = 1;
  for (CK_FV_U64 p = 10u; n < 20 && m >= p; p *= 10u) {
    n++;
  }
  *ndig = n;
  int i = n;
  while (i > 1) {
    CK_FV_U64 q = m / 100u;
    unsigned r = (unsigned)(m - q * 100u);
    d[--i] = (CK_FV_U8)('0' + r % 10u);
    d[--i] = (CK_FV_U8)('0' + r / 10u);
    m = q;
  }
  if (i == 1) {
    d[0] = (CK_FV_U8)('0' + m);
  }
  while (n > 1 && d[n - 1] == '0') {
    n--;
  }
  return n;
}

/* |v| (bits, finite) as decimal digits d[0, *nd) without trailing zeros ("0"
 * for zero, or a value that rounds to zero) and the point *decpt (|v| ~
 * 0.d * 10^decpt): CPython's dtoa mode 0 (shortest), 2 (`ndigits`
 * significant, ndigits >= 1) or 3 (`ndigits` after the point). */
CK_FV_FN void ck_fv_digits(CK_FV_U64 bits, int mode, CK_FV_I64 ndigits, CK_FV_U8 *d,
                           CK_FV_I64 *nd, CK_FV_I64 *decpt) {
  CK_FV_U64 mant = bits & ((((CK_FV_U64)1) << 52) - 1);
  int bexp = (int)((bits >> 52) & 0x7ff);
  if (bexp == 0 && mant == 0) {
    d[0] = '0';
    *nd = 1;
    *decpt = 1;
    return;
  }
  if (mode == 0) {
    int e10, ndig;
    CK_FV_U64 m = ck_fv_shortest(bits, &e10);
    *nd = ck_fv_u64_digits(m, d, &ndig);
    *decpt = ndig + e10;
    return;
  }
  if (mode == 3 ? ck_fv_fixed_digits(bits, ndigits, d, nd, decpt)
                : ck_fv_sig_digits(bits, ndigits, d, nd, decpt)) {
    return; /* |v| < 2^64, at most 19 places: 64-bit integer arithmetic */
  }
  /* v = m * 2^e exactly */
  CK_FV_U64 m = bexp == 0 ? mant : mant | (((CK_FV_U64)1) << 52);
  int e = bexp == 0 ? -1074 : bexp - 1075;
  CK_FV_U32 w[36]; /* a big integer, 32-bit words, least significant first */
  for (int i = 0; i < 36; i++) {
    w[i] = 0;
  }
  CK_FV_I64 n = 0, dp = 0;
  if (e >= 0) {
    /* an integer: m << e (at most 1024 bits), digits by division by 10^9 */
    int ws = e / 32, bs = e % 32;
    w[ws] = (CK_FV_U32)(m << bs);
    w[ws + 1] = (CK_FV_U32)(m >> (32 - bs));
    w[ws + 2] = bs == 0 ? 0u : (CK_FV_U32)(m >> (64 - bs));
    CK_FV_U32 chunks[36];
    int nc = 0, top = ws + 3;
    while (top > 0) {
      CK_FV_U64 r = 0;
      for (int i = top - 1; i >= 0; i--) {
        CK_FV_U64 cur = (r << 32) | w[i];
        w[i] = (CK_FV_U32)(cur / 1000000000u);
        r = cur % 1000000000u;
      }
      chunks[nc++] = (CK_FV_U32)r;
      while (top > 0 && w[top - 1] == 0) {
        top--;
      }
    }
    for (int c = nc - 1; c >= 0; c--) {
      CK_FV_U32 x = chunks[c];
      CK_FV_U8 t[9];
      for (int i = 8; i >= 0; i--) {
        t[i] = (CK_FV_U8)('0' + x % 10u);
        x /= 10u;
      }
      for (int i = 0; i < 9; i++) {
        if (n == 0 && t[i] == '0') {
          continue;
        }
        d[n++] = t[i];
      }
    }
    dp = n;
  } else {
    int f = -e; /* fraction bits */
    CK_FV_U64 ip = f >= 64 ? 0 : m >> f;
    CK_FV_U64 fr = f >= 64 ? m : m & ((((CK_FV_U64)1) << f) - 1);
    if (ip != 0) {
      int ndig;
      int k = ck_fv_u64_digits(ip, d, &ndig);
      for (int i = k; i < ndig; i++) {
        d[i] = '0';
      }
      n = ndig;
      dp = ndig;
    }
    w[0] = (CK_FV_U32)fr;
    w[1] = (CK_FV_U32)(fr >> 32);
    int fw = f / 32, fb = f % 32; /* the digit is bits [f, f + 4): word fw, bit fb */
    int top = fw + 2 < 36 ? fw + 2 : 36;
    bool nonzero = fr != 0;
    while (nonzero) {
      CK_FV_U64 carry = 0;
      nonzero = false;
      for (int i = 0; i < top; i++) {
        CK_FV_U64 cur = (CK_FV_U64)w[i] * 10u + carry;
        w[i] = (CK_FV_U32)cur;
        carry = cur >> 32;
      }
      CK_FV_U64 hi = ((CK_FV_U64)w[fw] | ((CK_FV_U64)w[fw + 1] << 32)) >> fb;
      CK_FV_U32 digit = (CK_FV_U32)(hi & 0xF);
      w[fw] &= fb == 0 ? 0u : (CK_FV_U32)((((CK_FV_U64)1) << fb) - 1);
      w[fw + 1] = 0;
      for (int i = 0; i <= fw; i++) {
        nonzero = nonzero || w[i] != 0;
      }
      if (n == 0 && digit == 0) {
        dp--; /* a leading zero of the fraction */
        continue;
      }
      if (n < CK_FV_MAXDIG) {
        d[n++] = (CK_FV_U8)('0' + digit);
      }
    }
  }
  /* round the exact digits d[0, n) to `cut` digits, half to even */
  CK_FV_I64 cut = mode == 2 ? ndigits : dp + ndigits;
  if (cut < n) {
    bool up = false;
    if (cut >= 0) {
      CK_FV_U8 next = d[cut];
      bool sticky = false;
      for (CK_FV_I64 i = cut + 1; i < n; i++) {
        sticky = sticky || d[i] != '0';
      }
      bool odd = cut > 0 && ((d[cut - 1] - '0') & 1) != 0;
      up = next > '5' || (next == '5' && (sticky || odd));
    }
    n = cut < 0 ? 0 : cut;
    if (up) {
      CK_FV_I64 i = n - 1;
      while (i >= 0 && d[i] == '9') {
        i--;
      }
      if (i < 0) { /* all nines (or no digit): 1 at the next place */
        d[0] = '1';
        n = 1;
        dp += 1;
      } else {
        d[i] += 1;
        n = i + 1;
      }
    }
  }
  while (n > 0 && d[n - 1] == '0') {
    n--;
  }
  if (n == 0) {
    d[0] = '0';
    *nd = 1;
    *decpt = 1;
    return;
  }
  *nd = n;
  *decpt = dp;
}

/* ---- the layout of a number -------------------------------------------------------------- */
/* A number's text (CPython's <sign><prefix><digits>[.<rest>]): the integer
 * digits are digit chars d[0, nd) read at positions 0..int_len (zeros past
 * nd; zero_int: the one digit "0"), the rest is fraction digits at d
 * positions dp + j (j < frac_len), then an exponent and '%', or the code
 * point cp ('c'). */
typedef struct ck_fv_num {
  const CK_FV_U8 *d;
  CK_FV_I64 nd, int_len, dp, frac_len, exp10;
  int neg, has_decimal, upper, zero_int, use_exp, pct, n_prefix, is_cp;
  CK_FV_U8 prefix_c; /* 'b', 'o', 'x' after '0' */
  CK_FV_U32 cp;
} ck_fv_num;

/* *x with no digits, prefix, fraction, exponent, '%' or code point: the
 * fields each kind of number then sets */
CK_FV_FN void ck_fv_num_init(ck_fv_num *x, int neg, int upper) {
  x->d = 0;
  x->nd = 0;
  x->int_len = 0;
  x->dp = 0;
  x->frac_len = 0;
  x->exp10 = 0;
  x->neg = neg;
  x->has_decimal = 0;
  x->upper = upper;
  x->zero_int = 0;
  x->use_exp = 0;
  x->pct = 0;
  x->n_prefix = 0;
  x->is_cp = 0;
  x->prefix_c = 0;
  x->cp = 0;
}

CK_FV_FN CK_FV_U8 ck_fv_digit_at(const ck_fv_num *x, CK_FV_I64 q) {
  CK_FV_U8 c = q >= 0 && q < x->nd ? x->d[q] : (CK_FV_U8)'0';
  return x->upper && c >= 'a' && c <= 'f' ? (CK_FV_U8)(c - 'a' + 'A') : c;
}

CK_FV_FN CK_FV_I64 ck_fv_exp_len(const ck_fv_num *x) {
  CK_FV_I64 a = x->exp10 < 0 ? -x->exp10 : x->exp10;
  return x->use_exp ? (a >= 100 ? 5 : 4) : 0;
}

/* the rest after the point: fraction digits, exponent, '%' */
CK_FV_FN void ck_fv_rest(CK_FV_SINK *k, const ck_fv_num *x) {
  if (x->is_cp) {
    ck_fv_put_cp(k, x->cp);
    return;
  }
  for (CK_FV_I64 j = 0; j < x->frac_len; j++) {
    ck_fv_put(k, ck_fv_digit_at(x, x->dp + j));
  }
  if (x->use_exp) {
    CK_FV_I64 a = x->exp10 < 0 ? -x->exp10 : x->exp10;
    ck_fv_put(k, x->upper ? 'E' : 'e');
    ck_fv_put(k, x->exp10 < 0 ? '-' : '+');
    if (a >= 100) {
      ck_fv_put(k, (CK_FV_U8)('0' + a / 100));
    }
    ck_fv_put(k, (CK_FV_U8)('0' + a / 10 % 10));
    ck_fv_put(k, (CK_FV_U8)('0' + a % 10));
  }
  if (x->pct) {
    ck_fv_put(k, '%');
  }
}

/* characters of the grouped digits (the host's ck__grouped_len, core/shortest.c) */
CK_FV_FN CK_FV_I64 ck_fv_grouped_len(CK_FV_I64 remaining, CK_FV_I64 min_width, int g) {
  if (g == 0) {
    CK_FV_I64 l = remaining > min_width ? remaining : min_width;
    return l > 1 ? l : 1;
  }
  CK_FV_I64 count = 0;
  bool sep = false;
  for (;;) {
    CK_FV_I64 l = remaining > min_width ? remaining : min_width;
    if (l < 1) {
      l = 1;
    }
    if (l > g) {
      l = g;
    }
    CK_FV_I64 chars = remaining < l ? (remaining > 0 ? remaining : 0) : l;
    count += (sep ? 1 : 0) + l;
    sep = true;
    remaining -= chars;
    min_width -= l;
    if (remaining <= 0 && min_width <= 0) {
      return count;
    }
    min_width -= 1;
  }
}

CK_FV_FN CK_FV_U8 ck_fv_int_digit(const ck_fv_num *x, CK_FV_I64 i) {
  return x->zero_int ? (CK_FV_U8)'0' : ck_fv_digit_at(x, i);
}

/* the grouped digits written right to left into the sink's next `len` bytes
 * (the host's ck__write_grouped, core/shortest.c) */
CK_FV_FN void ck_fv_grouped(CK_FV_SINK *k, const ck_fv_num *x, CK_FV_I64 len,
                            CK_FV_I64 min_width, int g, CK_FV_U8 sepc) {
  if (k->w) {
    CK_FV_I64 remaining = x->int_len, dend = x->int_len, p = k->n + len;
    bool sep = false;
    for (;;) {
      CK_FV_I64 l = remaining > min_width ? remaining : min_width;
      if (l < 1) {
        l = 1;
      }
      if (g != 0 && l > g) {
        l = g;
      }
      CK_FV_I64 chars = remaining < l ? (remaining > 0 ? remaining : 0) : l;
      if (sep) {
        k->p[--p] = sepc;
      }
      for (CK_FV_I64 i = 0; i < chars; i++) {
        k->p[--p] = ck_fv_int_digit(x, --dend);
      }
      for (CK_FV_I64 i = chars; i < l; i++) {
        k->p[--p] = '0';
      }
      sep = true;
      remaining -= chars;
      min_width -= l;
      if (g == 0 || (remaining <= 0 && min_width <= 0)) {
        break;
      }
      min_width -= 1;
    }
  }
  k->n += len;
}

/* the host's ck__write_number (core/shortest.c) */
CK_FV_FN void ck_fv_number(CK_FV_SINK *k, const ck_fv_spec *s, const ck_fv_num *x) {
  CK_FV_U8 sign = 0;
  if (s->sign == '+') {
    sign = x->neg ? '-' : '+';
  } else if (s->sign == ' ') {
    sign = x->neg ? '-' : ' ';
  } else if (x->neg) {
    sign = '-';
  }
  CK_FV_I64 n_rest = x->is_cp ? 1 : x->frac_len + ck_fv_exp_len(x) + (x->pct ? 1 : 0);
  CK_FV_I64 nonpad = (sign != 0) + x->n_prefix + (x->has_decimal ? 1 : 0) + n_rest;
  CK_FV_I64 min_width = 0;
  if (s->fill == '0' && s->align == '=') {
    min_width = s->width - nonpad;
  }
  int g = 0;
  if (s->grouping != 0) {
    char t = s->type;
    g = s->grouping == '_' && (t == 'b' || t == 'o' || t == 'x' || t == 'X') ? 4 : 3;
  }
  CK_FV_I64 n_grouped = x->int_len == 0 ? 0 : ck_fv_grouped_len(x->int_len, min_width, g);
  CK_FV_I64 chars = nonpad + n_grouped;
  CK_FV_I64 lpad = 0, spad = 0, rpad = 0;
  if (s->width > chars) {
    CK_FV_I64 pad = s->width - chars;
    if (s->align == '<') {
      rpad = pad;
    } else if (s->align == '^') {
      lpad = pad / 2;
      rpad = pad - lpad;
    } else if (s->align == '=') {
      spad = pad;
    } else {
      lpad = pad;
    }
  }
  ck_fv_fill(k, s->fill, lpad);
  if (sign != 0) {
    ck_fv_put(k, sign);
  }
  if (x->n_prefix) {
    ck_fv_put(k, '0');
    ck_fv_put(k, x->upper && x->prefix_c == 'x' ? 'X' : x->prefix_c);
  }
  ck_fv_fill(k, s->fill, spad);
  if (n_grouped != 0) {
    ck_fv_grouped(k, x, n_grouped, min_width, g, (CK_FV_U8)s->grouping);
  }
  if (x->has_decimal) {
    ck_fv_put(k, '.');
  }
  ck_fv_rest(k, x);
  ck_fv_fill(k, s->fill, rpad);
}

/* ---- floats ------------------------------------------------------------------------------ */
/* CPython's format_float_short of finite v (code e, f, g or r) laid out by
 * ck_fv_number (core/format_number.c's ck__double_text + core/float_text.c's
 * ck__float_layout) */
CK_FV_FN void ck_fv_double(CK_FV_SINK *k, const ck_fv_spec *s, double v, char code,
                           int precision, bool upper, bool add_dot0, bool pct) {
  CK_FV_U64 bits = CK_FV_BITS(v);
  bool neg = (bits >> 63) != 0;
  ck_fv_num x;
  ck_fv_num_init(&x, neg, upper);
  x.pct = pct;
  if (((bits >> 52) & 0x7ff) == 0x7ff) {
    bool nan = (bits & ((((CK_FV_U64)1) << 52) - 1)) != 0;
    CK_FV_U8 t[3];
    CK_FV_U8 c = upper ? 'A' - 'a' : 0;
    t[0] = (CK_FV_U8)((nan ? 'n' : 'i') + c);
    t[1] = (CK_FV_U8)((nan ? 'a' : 'n') + c);
    t[2] = (CK_FV_U8)((nan ? 'n' : 'f') + c);
    x.neg = neg && !nan;
    x.d = t;
    x.nd = 3;
    x.int_len = 0;
    x.dp = 0;
    x.frac_len = 3;
    x.has_decimal = 0;
    x.upper = 0;
    ck_fv_number(k, s, &x);
    return;
  }
  bool alt = (s->flags & CK_FV_FLAG_ALT) != 0;
  int mode = code == 'r' ? 0 : code == 'f' ? 3 : 2;
  CK_FV_I64 ndigits = precision;
  if (code == 'e') {
    ndigits = precision + 1;
  } else if (code == 'g' && precision == 0) {
    ndigits = precision = 1;
  }
  CK_FV_U8 d[CK_FV_MAXDIG];
  CK_FV_I64 nd, decpt;
  ck_fv_digits(bits & ((((CK_FV_U64)1) << 63) - 1), mode, ndigits, d, &nd, &decpt);
  if (nd == 1 && d[0] == '0' && (s->flags & CK_FV_FLAG_NO_NEG_ZERO)) {
    x.neg = 0;
  }
  CK_FV_I64 vend = nd;
  if (code == 'e') {
    x.use_exp = 1;
    vend = ndigits;
  } else if (code == 'f') {
    vend = decpt + precision;
  } else if (code == 'g') {
    if (decpt <= -4 || decpt > (add_dot0 ? precision - 1 : precision)) {
      x.use_exp = 1;
    }
    if (alt) {
      vend = precision;
    }
  } else if (decpt <= -4 || decpt > 16) {
    x.use_exp = 1;
  }
  CK_FV_I64 dp = decpt;
  if (x.use_exp) {
    x.exp10 = decpt - 1;
    dp = 1;
  }
  if (!x.use_exp && add_dot0) {
    vend = vend > dp ? vend : dp + 1;
  } else {
    vend = vend > dp ? vend : dp;
  }
  x.d = d;
  x.nd = nd;
  x.dp = dp;
  x.zero_int = dp <= 0;
  x.int_len = dp <= 0 ? 1 : dp;
  x.frac_len = vend - dp;
  x.has_decimal = x.frac_len > 0 || alt;
  ck_fv_number(k, s, &x);
}

/* The presentation of a float for a spec's type (0 or `empty`: str()'s
 * 'r' with ".0" added; '%': 'f' of v * 100, which the caller multiplies) and
 * precision (negative or `empty`: the type's default): returns the code 'e',
 * 'f', 'g' or 'r' and sets *precision, *upper, *add_dot0 and *pct (the host's
 * ck__float_code, core/shortest.c) */
CK_FV_FN char ck_fv_float_code(char type, CK_FV_I64 spec_precision, bool empty,
                               int *precision, bool *upper, bool *add_dot0, bool *pct) {
  int default_precision = 6;
  *precision = (int)spec_precision;
  *add_dot0 = false;
  *pct = false;
  if (empty || type == 0) {
    *add_dot0 = true;
    type = 'r';
    default_precision = 0;
  }
  if (type == '%') {
    type = 'f';
    *pct = true;
  }
  if (*precision < 0 || empty) {
    *precision = default_precision;
  } else if (type == 'r') {
    type = 'g';
  }
  *upper = type == 'E' || type == 'F' || type == 'G';
  return *upper ? (char)(type - 'A' + 'a') : type;
}

/* format(v, spec) of a float64 (str(v) for an empty spec) */
CK_FV_FN void ck_fv_float(CK_FV_SINK *k, const ck_fv_spec *s, double v) {
  int precision;
  bool upper, add_dot0, pct;
  char code = ck_fv_float_code(s->type, s->precision, (s->flags & CK_FV_FLAG_EMPTY) != 0,
                               &precision, &upper, &add_dot0, &pct);
  if (pct) {
    v *= 100;
  }
  ck_fv_double(k, s, v, code, precision, upper, add_dot0, pct);
}

/* NumPy's str() of a float32 (scalartypes.c; text.h's ck_format_float32 with
 * an empty spec) given as the double v holding its value exactly: the
 * shortest digits that read back as that float32 (Ryu on the float32's
 * rounding interval), positional for v == 0 or 1e-4 <= |v| < 1e6 (by value)
 * with ".0" on integral values, else d.ddde+XX (two exponent digits at
 * least); "nan", "inf", "-inf". */
CK_FV_FN void ck_fv_float32_str(CK_FV_SINK *k, double v) {
  CK_FV_U64 bits = CK_FV_BITS(v);
  bool neg = (bits >> 63) != 0;
  int bexp = (int)((bits >> 52) & 0x7ff);
  CK_FV_U64 dm = bits & ((((CK_FV_U64)1) << 52) - 1);
  if (bexp == 0x7ff && dm != 0) {
    ck_fv_put(k, 'n');
    ck_fv_put(k, 'a');
    ck_fv_put(k, 'n');
    return;
  }
  if (neg) {
    ck_fv_put(k, '-');
  }
  if (bexp == 0x7ff) {
    ck_fv_put(k, 'i');
    ck_fv_put(k, 'n');
    ck_fv_put(k, 'f');
    return;
  }
  if (bexp == 0 && dm == 0) {
    ck_fv_put(k, '0');
    ck_fv_put(k, '.');
    ck_fv_put(k, '0');
    return;
  }
  /* the float32's fields: every float32 value is a normal double 1.dm * 2^e */
  int e = bexp - 1023;
  CK_FV_U64 m2;
  int e2;
  CK_FV_U32 mm_shift;
  if (e >= -126) {
    CK_FV_U64 mant = dm >> 29;
    m2 = (((CK_FV_U64)1) << 23) | mant;
    e2 = e - 23 - 2;
    mm_shift = mant != 0 || e == -126;
  } else { /* a float32 subnormal: mant * 2^-149 */
    m2 = ((((CK_FV_U64)1) << 52) | dm) >> (29 + (-126 - e));
    e2 = 1 - 127 - 23 - 2;
    mm_shift = 1u;
  }
  int e10, ndig;
  CK_FV_U64 m = ck_fv_shortest_of(m2, e2, mm_shift, &e10);
  CK_FV_U8 d[24];
  int nd = ck_fv_u64_digits(m, d, &ndig);
  int x10 = ndig + e10 - 1;
  double a = neg ? -v : v;
  if (a >= 1e-4 && a < 1e6) {
    if (x10 >= 0) {
      for (int i = 0; i <= x10; i++) {
        ck_fv_put(k, i < nd ? d[i] : (CK_FV_U8)'0');
      }
      ck_fv_put(k, '.');
      if (x10 + 1 < nd) {
        for (int i = x10 + 1; i < nd; i++) {
          ck_fv_put(k, d[i]);
        }
      } else {
        ck_fv_put(k, '0');
      }
    } else {
      ck_fv_put(k, '0');
      ck_fv_put(k, '.');
      for (int i = 0; i < -x10 - 1; i++) {
        ck_fv_put(k, '0');
      }
      for (int i = 0; i < nd; i++) {
        ck_fv_put(k, d[i]);
      }
    }
    return;
  }
  ck_fv_put(k, d[0]);
  if (nd > 1) {
    ck_fv_put(k, '.');
    for (int i = 1; i < nd; i++) {
      ck_fv_put(k, d[i]);
    }
  }
  int ax = x10 < 0 ? -x10 : x10;
  ck_fv_put(k, 'e');
  ck_fv_put(k, x10 < 0 ? '-' : '+');
  if (ax >= 100) {
    ck_fv_put(k, (CK_FV_U8)('0' + ax / 100));
  }
  ck_fv_put(k, (CK_FV_U8)('0' + ax / 10 % 10));
  ck_fv_put(k, (CK_FV_U8)('0' + ax % 10));
}

/* ---- integers ---------------------------------------------------------------------------- */
/* format(+-mag, spec) of an integer (str() for an empty spec); bool_text:
 * True/False for an empty spec */
CK_FV_FN int ck_fv_int(CK_FV_SINK *k, const ck_fv_spec *s, CK_FV_U64 mag, int neg,
                       int bool_text) {
  char t = s->type;
  if ((s->flags & CK_FV_FLAG_EMPTY) && bool_text) {
    if (mag) {
      ck_fv_put(k, 'T');
      ck_fv_put(k, 'r');
      ck_fv_put(k, 'u');
      ck_fv_put(k, 'e');
    } else {
      ck_fv_put(k, 'F');
      ck_fv_put(k, 'a');
      ck_fv_put(k, 'l');
      ck_fv_put(k, 's');
      ck_fv_put(k, 'e');
    }
    return 0;
  }
  if (!(s->flags & CK_FV_FLAG_EMPTY) &&
      (t == 'e' || t == 'E' || t == 'f' || t == 'F' || t == 'g' || t == 'G' || t == '%')) {
    double dv = (double)mag;
    ck_fv_float(k, s, neg ? -dv : dv);
    return 0;
  }
  ck_fv_num x;
  ck_fv_num_init(&x, neg, t == 'X');
  CK_FV_U8 digits[72];
  x.d = digits;
  if (t == 'c' && !(s->flags & CK_FV_FLAG_EMPTY)) {
    if (neg || mag > 0x10FFFF) {
      return CK_FV_OVERFLOW;
    }
    x.neg = 0;
    x.is_cp = 1;
    x.cp = (CK_FV_U32)mag;
    x.nd = 0;
    x.int_len = 0;
    ck_fv_number(k, s, &x);
    return 0;
  }
  CK_FV_U32 base = t == 'b' ? 2u : t == 'o' ? 8u : (t == 'x' || t == 'X') ? 16u : 10u;
  CK_FV_U8 tmp[72];
  int n = 0;
  do {
    CK_FV_U32 r = (CK_FV_U32)(mag % base);
    tmp[n++] = (CK_FV_U8)(r < 10 ? '0' + r : 'a' + r - 10);
    mag /= base;
  } while (mag != 0);
  for (int i = 0; i < n; i++) {
    digits[i] = tmp[n - 1 - i];
  }
  x.nd = n;
  x.int_len = n;
  if ((s->flags & CK_FV_FLAG_ALT) && base != 10) {
    x.n_prefix = 2;
    x.prefix_c = base == 2 ? 'b' : base == 8 ? 'o' : 'x';
  }
  ck_fv_number(k, s, &x);
  return 0;
}

/* ---- text -------------------------------------------------------------------------------- */
/* format(t, spec) of n bytes of UTF-8 at t in address space AS (text.c's
 * ck_format_text: width and precision in code points) */
#define CK_FORMAT_VIEW_TEXT(SUF, AS)                                                         \
  CK_FV_FN int ck_fv_text_##SUF(CK_FV_SINK *k, const ck_fv_spec *s, AS const CK_FV_U8 *t,   \
                                CK_FV_I64 n) {                                               \
    CK_FV_I64 cps = 0, bytes = n;                                                            \
    for (CK_FV_I64 i = 0; i < n; i++) {                                                      \
      if ((t[i] & 0xC0) != 0x80) {                                                           \
        if (s->precision >= 0 && cps == s->precision) {                                      \
          bytes = i;                                                                         \
          break;                                                                             \
        }                                                                                    \
        cps++;                                                                               \
      }                                                                                      \
    }                                                                                        \
    CK_FV_I64 lpad = 0, rpad = 0;                                                            \
    if (s->width > cps) {                                                                    \
      CK_FV_I64 pad = s->width - cps;                                                        \
      if (s->align == '>') {                                                                 \
        lpad = pad;                                                                          \
      } else if (s->align == '^') {                                                          \
        lpad = pad / 2;                                                                      \
        rpad = pad - lpad;                                                                   \
      } else {                                                                               \
        rpad = pad;                                                                          \
      }                                                                                      \
    }                                                                                        \
    ck_fv_fill(k, s->fill, lpad);                                                            \
    if (k->w) {                                                                              \
      for (CK_FV_I64 i = 0; i < bytes; i++) {                                                \
        k->p[k->n + i] = t[i];                                                               \
      }                                                                                      \
    }                                                                                        \
    k->n += bytes;                                                                           \
    ck_fv_fill(k, s->fill, rpad);                                                            \
    return 0;                                                                                \
  }

#endif /* CKERNEL_FORMAT_VIEW_H */
