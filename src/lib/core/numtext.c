/*
 * numtext.c -- numbers as text: strict parsing (integers, floats with
 * strtod's syntax, Python's complex syntax) and Python-repr formatting
 * (shortest round-trip floats), always in the "C" locale whatever the
 * process locale (see core/numtext_internal.h).
 */
#include "core/numtext_internal.h"
#include "core/scalar_internal.h"
#include "core/shortest_internal.h"

#include <errno.h>
#include <fenv.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- C locale -------------------------------------------------------------- */

static locale_t ck__c_locale;
static pthread_once_t ck__c_locale_once = PTHREAD_ONCE_INIT;
static void ck__c_locale_init(void) {
  ck__c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Switch the calling thread to the C locale; returns the previous one (or
 * (locale_t)0 if unchanged). */
locale_t ck__enter_c_locale(void) {
  (void)pthread_once(&ck__c_locale_once, ck__c_locale_init);
  return ck__c_locale != (locale_t)0 ? uselocale(ck__c_locale) : (locale_t)0;
}
void ck__leave_c_locale(locale_t old) {
  if (old != (locale_t)0) {
    uselocale(old);
  }
}

bool ck__is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The text for messages: at most 64 bytes, non-printable ASCII as \xNN. */
void ck__quote_text(const char *b, size_t n, char *out, size_t outsize) {
  size_t pos = 0;
  size_t lim = n > 64 ? 64 : n;
  if (outsize > 0) {
    out[0] = '\0';
  }
  for (size_t i = 0; i < lim; i++) {
    unsigned char c = (unsigned char)b[i];
    if (c < 0x20 || c == 0x7f || c == '\\') {
      ck__appendf(out, outsize, &pos, "\\x%02x", c);
    } else {
      ck__appendf(out, outsize, &pos, "%c", c);
    }
  }
  if (n > lim) {
    ck__appendf(out, outsize, &pos, "...");
  }
}

/* [+-]digits -> magnitude; false on anything else or > UINT64_MAX. */
bool ck__parse_uint(const char *p, const char *e, uint64_t *out,
                           bool *overflow) {
  if (p == e) {
    return false;
  }
  uint64_t v = 0;
  *overflow = false;
  for (; p < e; p++) {
    if (*p < '0' || *p > '9') {
      return false;
    }
    if (__builtin_mul_overflow(v, 10u, &v) ||
        __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v)) {
      *overflow = true;
    }
  }
  *out = v;
  return true;
}

/* strtod over [p, p + n) (NUL-free): the whole range must be consumed.
 * 1: parsed, 0: bad text, -1: out of memory (recorded). */
int ck__parse_double(const char *p, size_t n, double *out, bool *range) {
  char small[128];
  char *buf = small;
  if (n == 0) {
    return 0;
  }
  if (n >= sizeof small) {
    buf = CK_MALLOC(n + 1);
    if (buf == NULL) {
      return -1;
    }
  }
  memcpy(buf, p, n);
  buf[n] = '\0';
  locale_t old = ck__enter_c_locale();
  errno = 0;
  char *endp;
  double v = strtod(buf, &endp);
  *range = errno == ERANGE && isinf(v);
  ck__leave_c_locale(old);
  bool ok = endp == buf + n && !ck__is_space(buf[0]);
  if (buf != small) {
    ck__free(buf);
  }
  *out = v;
  return ok ? 1 : 0;
}

/* Python complex syntax: "(a+bj)", "a+bj", "bj", "a", "j", "1-j".
 * Returns as ck__parse_double. */
int ck__parse_complex(const char *p, const char *e, double *re,
                              double *im, bool *range) {
  *re = 0.0;
  *im = 0.0;
  *range = false;
  if (e - p >= 2 && *p == '(' && e[-1] == ')') {
    p++;
    e--;
    while (p < e && ck__is_space(*p)) p++;
    while (e > p && ck__is_space(e[-1])) e--;
  }
  if (p == e) {
    return 0;
  }
  if (e[-1] != 'j' && e[-1] != 'J') {
    return ck__parse_double(p, (size_t)(e - p), re, range);
  }
  e--; /* drop 'j' */
  /* find the sign that starts the imaginary part: the last + or - that is
   * not at the start and not right after an exponent marker */
  const char *split = NULL;
  for (const char *q = e; q-- > p;) {
    if ((*q == '+' || *q == '-') && q > p && q[-1] != 'e' && q[-1] != 'E') {
      split = q;
      break;
    }
  }
  bool r1 = false, r2 = false;
  const char *ib = split == NULL ? p : split; /* the imaginary text [ib, e) */
  int ok = 1;
  if (split != NULL) {
    ok = ck__parse_double(p, (size_t)(split - p), re, &r1);
  }
  if (ok == 1) {
    /* "j", "+j", "-j": a unit imaginary part (Python) */
    if (e == ib || (e - ib == 1 && (*ib == '+' || *ib == '-'))) {
      *im = (e > ib && *ib == '-') ? -1.0 : 1.0;
    } else {
      ok = ck__parse_double(ib, (size_t)(e - ib), im, &r2);
    }
  }
  *range = r1 || r2;
  return ok;
}

/* Does the decimal value m * 10^e10 read back as `v` in float type t? */
static bool ck__reads_back(int t, uint64_t m, int e10, double v) {
  char buf[48];
  snprintf(buf, sizeof buf, "%" PRIu64 "e%d", m, e10);
  double back = strtod(buf, NULL);
  switch (t) {
  case CK_TYPE_FLOAT16:
    return ck__f64_to_f16(back) == ck__f64_to_f16(fabs(v));
  case CK_TYPE_FLOAT32:
  case CK_TYPE_COMPLEX64:
    return (float)back == (float)fabs(v);
  default:
    return back == fabs(v);
  }
}

/* |v| correctly rounded to p significant digits: the digits as an integer
 * of exactly p digits, and v ~ m * 10^(*decpt - p). */
static uint64_t ck__round_digits(double v, int p, int *decpt) {
  char buf[48];
  snprintf(buf, sizeof buf, "%.*e", p - 1, fabs(v));
  uint64_t m = 0;
  const char *q = buf;
  for (; *q != 'e'; q++) {
    if (*q != '.') {
      m = m * 10u + (uint64_t)(*q - '0');
    }
  }
  *decpt = atoi(q + 1) + 1;
  return m;
}

/* The decimal digits of m, trailing zeros dropped (one digit at least) and
 * NUL-terminated; returns their count and sets *ndig to the count before
 * dropping (format_view.h's ck_fv_u64_digits, via shortest.c). */
static size_t ck__digit_text(uint64_t m, char *digits, int *ndig) {
  int n = ck__u64_digits(m, digits, ndig);
  digits[n] = '\0';
  return (size_t)n;
}

/* float16 / float32 (and complex64 parts): 'other' than float64 */
static bool ck__narrow_float(int t) {
  return t == CK_TYPE_FLOAT32 || t == CK_TYPE_COMPLEX64 || t == CK_TYPE_FLOAT16;
}

size_t ck__shortest_digits(int t, double v, char *digits, int *decpt) {
  int ndig;
  if (v == 0.0) {
    *decpt = 1;
    return ck__digit_text(0, digits, &ndig);
  }
  if (!ck__narrow_float(t)) {
    /* float64: Ryu (shortest.c), integer arithmetic, no round trips */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int32_t e10;
    uint64_t m = ck__shortest_f64(bits, &e10);
    size_t n = ck__digit_text(m, digits, &ndig);
    *decpt = ndig + e10;
    return n;
  }
  /* DIG: every decimal of at most DIG digits survives a round trip through
   * the type's normal range, so when one reads back as v, rounding v to DIG
   * digits gives it (zero-padded).  MAXDIG digits always read back.
   * Subnormals have fewer digits of precision: searched from 1. */
  int dig = 15, maxdig = 17;
  double tiny = 2.2250738585072014e-308;
  if (t == CK_TYPE_FLOAT32 || t == CK_TYPE_COMPLEX64) {
    dig = 6;
    maxdig = 9;
    tiny = 1.1754943508222875e-38;
  } else if (t == CK_TYPE_FLOAT16) {
    dig = 3;
    maxdig = 5;
    tiny = 6.103515625e-05;
  }
  int first = fabs(v) < tiny ? 1 : dig;
  for (int p = first;; p++) {
    int dp;
    uint64_t m = ck__round_digits(v, p, &dp);
    int e10 = dp - p;
    if (p == maxdig || ck__reads_back(t, m, e10, v)) {
      size_t n = ck__digit_text(m, digits, &ndig);
      *decpt = ndig + e10;
      return n;
    }
    if (p != dig || first != dig) {
      /* The nearest p-digit decimal lies outside v's rounding interval
       * (narrower below a power of two): the p-digit one on v's other side
       * may lie inside it; it is then the shortest (CPython's repr). */
      char buf[48];
      snprintf(buf, sizeof buf, "%" PRIu64 "e%d", m, e10);
      uint64_t lo = 1;
      for (int i = 1; i < p; i++) {
        lo *= 10u;
      }
      uint64_t other = m + 1u;
      if (strtod(buf, NULL) > fabs(v)) {
        other = m - 1u;
        if (m == lo) { /* below 10^k the p-digit step is ten times finer */
          other = lo * 10u - 1u;
          e10 -= 1;
        }
      }
      if (ck__reads_back(t, other, e10, v)) {
        size_t n = ck__digit_text(other, digits, &ndig);
        *decpt = ndig + e10;
        return n;
      }
    }
  }
}

/* Positional or d.ddde+XX notation for the shortest digits of v (decimal
 * exponent exp10).  float64: Python's repr, positional for -4 <= exp10 < 16
 * (by the digits).  float32 / complex64 parts and float16: NumPy's str of
 * np.float32 / np.float16 (scalartypes.c), positional for |v| == 0 or
 * 1e-4 <= |v| < 1e6 (float16: 1e3), compared by value -- so
 * np.float32(1e-4) (9.99999974e-05) prints "1e-04". */
static bool ck__positional(int t, double v, int exp10) {
  if (t == CK_TYPE_FLOAT32 || t == CK_TYPE_COMPLEX64 || t == CK_TYPE_FLOAT16) {
    double a = fabs(v);
    return a == 0.0 || (a >= 1e-4 && a < (t == CK_TYPE_FLOAT16 ? 1e3 : 1e6));
  }
  return exp10 >= -4 && exp10 < 16;
}

/* Python's float repr (format 'r') -- NumPy's str for float32 / float16:
 * shortest round-trip digits of the type; positional or d.ddde+XX as
 * ck__positional says; `dot0` adds ".0" to integral positional values
 * (repr(float)), off for complex parts.  Caller holds the C locale.
 * Returns the length. */
static size_t ck__format_repr(char *out, size_t outsize, int t, double v,
                              bool dot0) {
  /* at most 24 bytes ("-1.2345678901234567e-308"); written here, then
   * copied with ck__appendf's rules (truncated to outsize, NUL-terminated,
   * the whole length returned) */
  char tmp[48];
  size_t pos = 0;
  if (v != v) {
    memcpy(tmp, "nan", 3);
    pos = 3;
  } else if (isinf(v)) {
    if (v < 0) {
      tmp[pos++] = '-';
    }
    memcpy(tmp + pos, "inf", 3);
    pos += 3;
  } else {
    char digits[24];
    int decpt;
    size_t nd = ck__shortest_digits(t, v, digits, &decpt);
    int exp10 = decpt - 1;
    if (signbit(v)) {
      tmp[pos++] = '-';
    }
    if (ck__positional(t, v, exp10)) {
      if (exp10 >= 0) {
        for (int i = 0; i <= exp10; i++) {
          tmp[pos++] = (size_t)i < nd ? digits[i] : '0';
        }
        if ((size_t)exp10 + 1 < nd) {
          tmp[pos++] = '.';
          memcpy(tmp + pos, digits + exp10 + 1, nd - (size_t)exp10 - 1);
          pos += nd - (size_t)exp10 - 1;
        } else if (dot0) {
          tmp[pos++] = '.';
          tmp[pos++] = '0';
        }
      } else {
        tmp[pos++] = '0';
        tmp[pos++] = '.';
        for (int i = 0; i < -exp10 - 1; i++) {
          tmp[pos++] = '0';
        }
        memcpy(tmp + pos, digits, nd);
        pos += nd;
      }
    } else {
      tmp[pos++] = digits[0];
      if (nd > 1) {
        tmp[pos++] = '.';
        memcpy(tmp + pos, digits + 1, nd - 1);
        pos += nd - 1;
      }
      int a = exp10 < 0 ? -exp10 : exp10;
      tmp[pos++] = 'e';
      tmp[pos++] = exp10 < 0 ? '-' : '+';
      if (a >= 100) {
        tmp[pos++] = (char)('0' + a / 100);
      }
      tmp[pos++] = (char)('0' + a / 10 % 10);
      tmp[pos++] = (char)('0' + a % 10);
    }
  }
  if (outsize > 0) {
    size_t k = pos < outsize ? pos : outsize - 1;
    memcpy(out, tmp, k);
    out[k] = '\0';
  }
  return pos;
}

size_t ck__format_float_repr(char *out, size_t outsize, int t, double v,
                             bool dot0) {
  if (!ck__narrow_float(t)) {
    /* float64 digits take integer arithmetic alone (shortest.c) */
    return ck__format_repr(out, outsize, t, v, dot0);
  }
  /* reading candidates back may overflow (float32 near its maximum): the
   * caller's floating-point flags are left as they were */
  fexcept_t flags;
  fegetexceptflag(&flags, FE_ALL_EXCEPT);
  locale_t old = ck__enter_c_locale();
  size_t n = ck__format_repr(out, outsize, t, v, dot0);
  ck__leave_c_locale(old);
  fesetexceptflag(&flags, FE_ALL_EXCEPT);
  return n;
}

/* Format a builtin value like Python's repr into out (>= 96 bytes). */
size_t ck__format_value(char *out, size_t outsize, int id, const char *p) {
  size_t pos = 0;
  switch (id) {
  case CK_TYPE_BOOL:
    ck__appendf(out, outsize, &pos, "%s", *(const uint8_t *)p ? "True" : "False");
    return pos;
  case CK_TYPE_INT8: { int8_t v; memcpy(&v, p, 1); ck__appendf(out, outsize, &pos, "%d", v); return pos; }
  case CK_TYPE_INT16: { int16_t v; memcpy(&v, p, 2); ck__appendf(out, outsize, &pos, "%d", v); return pos; }
  case CK_TYPE_INT32: { int32_t v; memcpy(&v, p, 4); ck__appendf(out, outsize, &pos, "%" PRId32, v); return pos; }
  case CK_TYPE_INT64: { int64_t v; memcpy(&v, p, 8); ck__appendf(out, outsize, &pos, "%" PRId64, v); return pos; }
  case CK_TYPE_UINT8: { uint8_t v; memcpy(&v, p, 1); ck__appendf(out, outsize, &pos, "%u", v); return pos; }
  case CK_TYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); ck__appendf(out, outsize, &pos, "%u", v); return pos; }
  case CK_TYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); ck__appendf(out, outsize, &pos, "%" PRIu32, v); return pos; }
  case CK_TYPE_UINT64: { uint64_t v; memcpy(&v, p, 8); ck__appendf(out, outsize, &pos, "%" PRIu64, v); return pos; }
  default:
    break;
  }
  locale_t old = ck__enter_c_locale();
  double re = 0.0, im = 0.0;
  int comp = CK_TYPE_FLOAT64;
  switch (id) {
  case CK_TYPE_FLOAT16: { uint16_t h; memcpy(&h, p, 2); re = ck__f16_to_f64(h); comp = id; break; }
  case CK_TYPE_FLOAT32: { float f; memcpy(&f, p, 4); re = f; comp = id; break; }
  case CK_TYPE_FLOAT64: memcpy(&re, p, 8); break;
  case CK_TYPE_COMPLEX64: { ck__complex64 c; memcpy(&c, p, sizeof c); re = c.re; im = c.im; comp = CK_TYPE_FLOAT32; break; }
  default: { ck__complex128 c; memcpy(&c, p, sizeof c); re = c.re; im = c.im; break; }
  }
  if (id != CK_TYPE_COMPLEX64 && id != CK_TYPE_COMPLEX128) {
    pos = ck__format_repr(out, outsize, comp, re, true);
  } else {
    /* Python: "(re+imj)", or "imj" when re is +0.0 */
    char r[40], i[40];
    ck__format_repr(i, sizeof i, comp, im, false);
    if (re == 0.0 && !signbit(re)) {
      ck__appendf(out, outsize, &pos, "%sj", i);
    } else {
      ck__format_repr(r, sizeof r, comp, re, false);
      ck__appendf(out, outsize, &pos, "(%s%s%sj)", r, i[0] == '-' ? "" : "+", i);
    }
  }
  ck__leave_c_locale(old);
  return pos;
}
