/*
 * float_text.c -- a float's text as CPython's PyOS_double_to_string makes it
 * (format codes e, f, g, r): the decimal digits -- Ryu's shortest, the
 * exact fixed-precision integer path of ckernel/format_view.h, else
 * snprintf in the "C" locale (correctly rounded in glibc and every libc we
 * build on) -- laid out in fixed, exponent or general notation as CPython's
 * format_float_short lays out dtoa's digits.  format_number.c pads, signs
 * and groups the result for format().
 */
#include "core/text_internal.h"

#include "core/numtext_internal.h"
#include "core/shortest_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ck__buf_reserve(ck__buf *b, size_t extra) {
  if (b->n + extra <= b->cap) {
    return true;
  }
  size_t cap = b->cap * 2 > b->n + extra ? b->cap * 2 : b->n + extra;
  char *np = CK_MALLOC(cap);
  if (np == NULL) {
    return false;
  }
  memcpy(np, b->p, b->n);
  if (b->p != b->small) {
    ck__free(b->p);
  }
  b->p = np;
  b->cap = cap;
  return true;
}

static void ck__buf_put(ck__buf *b, char c, size_t count) {
  memset(b->p + b->n, c, count);
  b->n += count;
}

/* ck__float_digits from the C library (snprintf, or the shortest digits of
 * a narrow float that read back through strtod).  Caller holds the C locale. */
static char *ck__float_digits_libc(double v, int mode, int ndigits, int t, size_t *n,
                                   int *decpt, char *small, size_t small_size) {
  if (mode == 0) {
    *n = ck__shortest_digits(t, v, small, decpt);
    return small;
  }
  /* %.*e / %.*f are correctly rounded from the exact binary value */
  int len = mode == 2 ? snprintf(small, small_size, "%.*e", ndigits - 1, fabs(v))
                      : snprintf(small, small_size, "%.*f", ndigits, fabs(v));
  char *s = small;
  if (len < 0) {
    return NULL;
  }
  if ((size_t)len >= small_size) {
    s = CK_MALLOC((size_t)len + 1);
    if (s == NULL) {
      return NULL;
    }
    if (mode == 2) {
      snprintf(s, (size_t)len + 1, "%.*e", ndigits - 1, fabs(v));
    } else {
      snprintf(s, (size_t)len + 1, "%.*f", ndigits, fabs(v));
    }
  }
  /* collect the digits in place, note the point and the exponent */
  size_t k = 0;
  int int_digits = -1;
  int exp10 = 0;
  for (int i = 0; i < len; i++) {
    char c = s[i];
    if (c == '.') {
      int_digits = (int)k;
    } else if (c == 'e') {
      exp10 = atoi(s + i + 1);
      break;
    } else {
      s[k++] = c;
    }
  }
  if (int_digits < 0) {
    int_digits = (int)k;
  }
  int dp = mode == 2 ? exp10 + 1 : int_digits;
  size_t lead = 0;
  while (lead < k && s[lead] == '0') {
    lead++;
  }
  if (lead == k) { /* zero, or rounds to zero */
    s[0] = '0';
    *n = 1;
    *decpt = 1;
    return s;
  }
  memmove(s, s + lead, k - lead);
  k -= lead;
  dp -= (int)lead;
  while (k > 1 && s[k - 1] == '0') {
    k--;
  }
  *n = k;
  *decpt = dp;
  return s;
}

/* |v| as decimal digits (no trailing zeros; "" or "0" for zero) and the
 * decimal point position (|v| ~ 0.digits * 10^decpt): CPython's dtoa modes
 * 0 (shortest, t: the float type), 2 (`ndigits` significant) and 3
 * (`ndigits` after the point).  Modes 2 and 3 of |v| < 2^64 with the last
 * digit at most 19 places after the point are format_view.h's exact
 * integer path (no locale, no libc); the rest comes from the C library in
 * the "C" locale (snprintf's %.*e / %.*f are correctly rounded from the
 * exact binary value in glibc).
 * small holds 40 bytes at least.  NULL: no memory. */
static char *ck__float_digits(double v, int mode, int ndigits, int t, size_t *n,
                              int *decpt, char *small, size_t small_size) {
  if (mode != 0 && ck__fixed_digits(v, mode, ndigits, small, n, decpt)) {
    return small;
  }
  locale_t old = ck__enter_c_locale();
  char *s = ck__float_digits_libc(v, mode, ndigits, t, n, decpt, small, small_size);
  ck__leave_c_locale(old);
  return s;
}

/* CPython's PyOS_double_to_string of finite or not v, format code e, f, g
 * or r (upper: 'E', 'F', 'G'), into b.  false: no memory (recorded). */
bool ck__double_text(ck__buf *b, double v, char code, int precision, bool upper,
                     bool alt, bool add_dot0, bool no_neg0, int t) {
  bool neg = signbit(v) != 0;
  if (isnan(v) || isinf(v)) {
    if (!ck__buf_reserve(b, 4)) {
      return false;
    }
    if (isinf(v) && neg) {
      b->p[b->n++] = '-';
    }
    memcpy(b->p + b->n, isnan(v) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"), 3);
    b->n += 3;
    return true;
  }
  int mode = code == 'r' ? 0 : code == 'f' ? 3 : 2;
  int ndigits = precision;
  if (code == 'e') {
    ndigits = precision + 1;
  } else if (code == 'g' && precision == 0) {
    ndigits = precision = 1;
  }
  char small[352];
  size_t nd;
  int decpt;
  char *digits = ck__float_digits(v, mode, ndigits, t, &nd, &decpt, small, sizeof small);
  if (digits == NULL) {
    CK_ERROR(CK_ERR_NO_MEMORY, "no memory for the digits of a float");
    return false;
  }
  if (nd == 1 && digits[0] == '0' && no_neg0) {
    neg = false;
  }
  /* the visible slice [vstart, vend) of digits padded with zeros both ways */
  bool use_exp = false;
  int64_t vend = (int64_t)nd;
  switch (code) {
  case 'e': use_exp = true; vend = ndigits; break;
  case 'f': vend = (int64_t)decpt + precision; break;
  case 'g':
    if (decpt <= -4 || decpt > (add_dot0 ? precision - 1 : precision)) {
      use_exp = true;
    }
    if (alt) {
      vend = precision;
    }
    break;
  default: /* 'r' */
    if (decpt <= -4 || decpt > 16) {
      use_exp = true;
    }
    break;
  }
  int exp10 = 0;
  int64_t dp = decpt;
  if (use_exp) {
    exp10 = decpt - 1;
    dp = 1;
  }
  int64_t vstart = dp <= 0 ? dp - 1 : 0;
  if (!use_exp && add_dot0) {
    vend = vend > dp ? vend : dp + 1;
  } else {
    vend = vend > dp ? vend : dp;
  }
  size_t need = 8 + (size_t)(vend - vstart) + 8;
  if (!ck__buf_reserve(b, need)) {
    if (digits != small) {
      ck__free(digits);
    }
    return false;
  }
  if (neg) {
    b->p[b->n++] = '-';
  }
  int64_t ndl = (int64_t)nd;
  if (dp <= 0) {
    ck__buf_put(b, '0', (size_t)(dp - vstart));
    b->p[b->n++] = '.';
    ck__buf_put(b, '0', (size_t)(-dp));
  } else {
    ck__buf_put(b, '0', (size_t)(-vstart));
  }
  if (0 < dp && dp <= ndl) {
    memcpy(b->p + b->n, digits, (size_t)dp);
    b->n += (size_t)dp;
    b->p[b->n++] = '.';
    memcpy(b->p + b->n, digits + dp, (size_t)(ndl - dp));
    b->n += (size_t)(ndl - dp);
  } else {
    memcpy(b->p + b->n, digits, nd);
    b->n += nd;
  }
  if (ndl < dp) {
    ck__buf_put(b, '0', (size_t)(dp - ndl));
    b->p[b->n++] = '.';
    ck__buf_put(b, '0', (size_t)(vend - dp));
  } else {
    ck__buf_put(b, '0', (size_t)(vend - ndl));
  }
  if (b->p[b->n - 1] == '.' && !alt) {
    b->n--;
  }
  if (use_exp) {
    int k = snprintf(b->p + b->n, 8, "%c%+.02d", upper ? 'E' : 'e', exp10);
    b->n += (size_t)k;
  }
  if (digits != small) {
    ck__free(digits);
  }
  return true;
}
