/*
 * utf8_parse.c -- int(s), float(s) and repr(s) of UTF-8 views
 * (ckernel/utf8.h), with CPython's rules and messages
 * (Objects/longobject.c PyLong_FromUnicodeObject, Objects/floatobject.c
 * float_from_string_inner, _Py_string_to_number_with_underscores,
 * unicode_repr).
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"
#include "core/numtext_internal.h"

#include <math.h>
#include <string.h>

/* ---- repr ------------------------------------------------------------------- */

/* Python's repr of s, limited to `maxcp` code points of output (the
 * "%.200R" of error messages; -1: all), written at w (NULL: measure).
 * Returns the bytes. */
static int64_t ck__repr(const char *s, int64_t n, int64_t maxcp, char *w) {
  const unsigned char *u = (const unsigned char *)s, *e = u + n;
  bool sq = false, dq = false;
  for (int64_t i = 0; i < n; i++) {
    sq |= u[i] == '\'';
    dq |= u[i] == '"';
  }
  char quote = sq && !dq ? '"' : '\'';
  int64_t bytes = 0, cps = 0;
  char tmp[12];
#define CK__EMIT(p, k, ncp)                                                    \
  do {                                                                         \
    if (maxcp >= 0 && cps + (ncp) > maxcp) {                                   \
      return bytes; /* truncated, as %.200R cuts the repr's text */           \
    }                                                                          \
    if (w != NULL) {                                                           \
      memcpy(w + bytes, (p), (size_t)(k));                                     \
    }                                                                          \
    bytes += (k);                                                              \
    cps += (ncp);                                                              \
  } while (0)
  CK__EMIT(&quote, 1, 1);
  static const char hex[] = "0123456789abcdef";
  for (int64_t i = 0; i < n;) {
    int len;
    uint32_t cp = u[i] < 0x80 ? (len = 1, u[i]) : ck__decode(u + i, e, &len);
    if (cp == (uint32_t)quote || cp == '\\') {
      tmp[0] = '\\';
      tmp[1] = (char)cp;
      CK__EMIT(tmp, 2, 2);
    } else if (cp == '\t' || cp == '\n' || cp == '\r') {
      tmp[0] = '\\';
      tmp[1] = cp == '\t' ? 't' : cp == '\n' ? 'n' : 'r';
      CK__EMIT(tmp, 2, 2);
    } else if (ck__ucd(cp)->flags & CK_UNICODE_PRINTABLE) {
      CK__EMIT(s + i, len, 1);
    } else {
      int digits = cp < 0x100 ? 2 : cp < 0x10000 ? 4 : 8;
      tmp[0] = '\\';
      tmp[1] = cp < 0x100 ? 'x' : cp < 0x10000 ? 'u' : 'U';
      for (int d = 0; d < digits; d++) {
        tmp[2 + d] = hex[(cp >> (4 * (digits - 1 - d))) & 0xF];
      }
      CK__EMIT(tmp, 2 + digits, 2 + digits);
    }
    i += len;
  }
  CK__EMIT(&quote, 1, 1);
#undef CK__EMIT
  return bytes;
}

CK_API ck_status ck_str_repr(ck_memblock *arena, const char *s, int64_t n, ck_string *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  int64_t size = ck__repr(s, n, -1, NULL);
  char *b, *e;
  ck__out o = ck__out_of(arena);
  ck_status st = ck__result_begin(&o, (uint64_t)size, __func__, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  ck__repr(s, n, -1, b);
  return ck__result_done(&o, b, e, size, out);
}

/* The repr of s (at most maxcp code points of it; shorter still if it would
 * not fit the error message) as a NUL-terminated text in `text`. */
static void ck__repr_for_error(const char *s, int64_t n, int64_t maxcp, char *text,
                               int64_t size) {
  int64_t lim = maxcp;
  while (ck__repr(s, n, lim, NULL) >= size) {
    lim = lim < 0 ? 200 : lim / 2;
  }
  int64_t k = ck__repr(s, n, lim, text);
  text[k] = 0;
}

/* Whitespace around numbers: Py_ISSPACE's six ASCII characters (not \x1c..
 * \x1f) and the non-ASCII str.isspace ones
 * (_PyUnicode_TransformDecimalAndSpaceToASCII, then Py_ISSPACE). */
static bool ck__num_space(uint32_t cp) {
  return cp < 0x80 ? cp == ' ' || (cp >= 0x09 && cp <= 0x0D) : ck__u_space(cp);
}

/* [b, e) of s without that whitespace around it. */
static void ck__strip_space(const char *s, int64_t n, int64_t *b, int64_t *e) {
  const unsigned char *u = (const unsigned char *)s, *end = u + n;
  int64_t i = 0, j = n;
  while (i < n) {
    int len;
    if (!ck__num_space(ck__decode(u + i, end, &len))) {
      break;
    }
    i += len;
  }
  while (j > i) {
    int64_t p = j - 1;
    while (p > i && ck__is_cont(u[p])) {
      p--;
    }
    int len;
    if (!ck__num_space(ck__decode(u + p, end, &len))) {
      break;
    }
    j = p;
  }
  *b = i;
  *e = j;
}

/* The decimal value of the code point at u[i] (ASCII or Unicode decimal
 * digits), or -1; *len its bytes. */
static int ck__decimal_at(const unsigned char *u, const unsigned char *e, int64_t i, int *len) {
  if (u[i] < 0x80) {
    *len = 1;
    return u[i] >= '0' && u[i] <= '9' ? u[i] - '0' : -1;
  }
  uint32_t cp = ck__decode(u + i, e, len);
  return ck__ucd(cp)->decimal;
}

/* ---- int() -------------------------------------------------------------------- */

static int ck__digit_value(const unsigned char *u, const unsigned char *e, int64_t i, int *len) {
  int d = ck__decimal_at(u, e, i, len);
  if (d >= 0) {
    return d;
  }
  unsigned c = u[i];
  if (c >= 'a' && c <= 'z') {
    return (int)(c - 'a' + 10);
  }
  if (c >= 'A' && c <= 'Z') {
    return (int)(c - 'A' + 10);
  }
  return -1;
}

CK_API ck_status ck_str_to_int64(const char *s, int64_t n, int base, int64_t *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  if (base != 0 && (base < 2 || base > 36)) {
    return CK_ERROR(CK_ERR_VALUE, "int() base must be >= 2 and <= 36, or 0");
  }
  const unsigned char *u = (const unsigned char *)s, *end = u + n;
  int64_t i, e;
  ck__strip_space(s, n, &i, &e);
  bool neg = false;
  if (i < e && (u[i] == '+' || u[i] == '-')) {
    neg = u[i] == '-';
    i++;
  }
  int b = base;
  bool prefixed = false, zero_start = false;
  if (i + 1 < e && u[i] == '0') {
    unsigned c = u[i + 1] | 0x20;
    int pb = c == 'x' ? 16 : c == 'o' ? 8 : c == 'b' ? 2 : 0;
    if (pb != 0 && (base == 0 || base == pb)) {
      b = pb;
      prefixed = true;
      i += 2;
    }
  }
  if (b == 0) {
    b = 10;
    zero_start = i < e && u[i] == '0';
  }
  uint64_t mag = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  bool overflow = false, any = false, nonzero = false, prev_us = prefixed;
  for (int64_t p = i; p < e;) {
    if (u[p] == '_') {
      if (prev_us && !(prefixed && p == i)) {
        goto bad;
      }
      if (!any && !prefixed) {
        goto bad;
      }
      prev_us = true;
      p++;
      continue;
    }
    int len;
    int d = ck__digit_value(u, end, p, &len);
    if (d < 0 || d >= b) {
      goto bad;
    }
    if (d != 0) {
      nonzero = true;
    }
    if (mag > (limit - (uint64_t)d) / (uint64_t)b) {
      overflow = true;
    } else {
      mag = mag * (uint64_t)b + (uint64_t)d;
    }
    any = true;
    prev_us = false;
    p += len;
  }
  if (!any || prev_us || (zero_start && nonzero)) {
    goto bad;
  }
  if (overflow) {
    return CK_ERROR(CK_ERR_OVERFLOW, "int() of a value outside int64");
  }
  *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  return CK_OK;
bad:;
  char text[900];
  ck__repr_for_error(s, n, 200, text, (int64_t)sizeof text);
  return CK_ERROR(CK_ERR_VALUE, "invalid literal for int() with base %d: %s", base, text);
}

/* ---- float() ------------------------------------------------------------------- */

static bool ck__ieq(const unsigned char *p, int64_t n, const char *word) {
  size_t k = strlen(word);
  if ((size_t)n != k) {
    return false;
  }
  for (size_t i = 0; i < k; i++) {
    if ((p[i] | 0x20) != (unsigned char)word[i]) {
      return false;
    }
  }
  return true;
}

CK_API ck_status ck_str_to_double(const char *s, int64_t n, double *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  const unsigned char *u = (const unsigned char *)s, *end = u + n;
  int64_t i, e;
  ck__strip_space(s, n, &i, &e);
  /* the cleaned ASCII text: digits mapped to ASCII, underscores dropped */
  char small[256], *buf = small;
  int64_t cap = (int64_t)sizeof small;
  if (e - i > cap) {
    cap = e - i;
    buf = CK_MALLOC((size_t)cap);
    if (buf == NULL) {
      return CK_ERR_NO_MEMORY;
    }
  }
  int64_t k = 0;
  bool ok = true, prev_digit = false;
  for (int64_t p = i; p < e && ok;) {
    int len;
    int d = ck__decimal_at(u, end, p, &len);
    if (d >= 0) {
      buf[k++] = (char)('0' + d);
      prev_digit = true;
    } else if (u[p] == '_') {
      /* only between two digits */
      int len2;
      ok = prev_digit && p + 1 < e && ck__decimal_at(u, end, p + 1, &len2) >= 0;
      prev_digit = false;
    } else if (u[p] < 0x80) {
      buf[k++] = (char)u[p];
      prev_digit = false;
    } else {
      ok = false;
    }
    p += len;
  }
  if (ok) {
    /* Python's grammar: [sign] (inf|infinity|nan | digits[.digits][e[sign]digits] |
     * .digits[e[sign]digits]) -- strtod also takes hex and nan(...) */
    const unsigned char *c = (const unsigned char *)buf;
    int64_t q = 0;
    if (q < k && (c[q] == '+' || c[q] == '-')) {
      q++;
    }
    if (ck__ieq(c + q, k - q, "inf") || ck__ieq(c + q, k - q, "infinity") ||
        ck__ieq(c + q, k - q, "nan")) {
      double v = (c[q] | 0x20) == 'n' ? NAN : INFINITY;
      *out = c[0] == '-' ? -v : v;
      if (buf != small) {
        ck__free(buf);
      }
      return CK_OK;
    }
    int64_t digits = 0;
    while (q < k && c[q] >= '0' && c[q] <= '9') {
      q++, digits++;
    }
    if (q < k && c[q] == '.') {
      q++;
      while (q < k && c[q] >= '0' && c[q] <= '9') {
        q++, digits++;
      }
    }
    ok = digits > 0;
    if (ok && q < k && (c[q] | 0x20) == 'e') {
      q++;
      if (q < k && (c[q] == '+' || c[q] == '-')) {
        q++;
      }
      int64_t ed = 0;
      while (q < k && c[q] >= '0' && c[q] <= '9') {
        q++, ed++;
      }
      ok = ed > 0;
    }
    ok = ok && q == k;
  }
  if (ok) {
    bool range;
    int r = ck__parse_double(buf, (size_t)k, out, &range);
    if (buf != small) {
      ck__free(buf);
    }
    if (r < 0) {
      return CK_ERR_NO_MEMORY;
    }
    if (r == 1) {
      return CK_OK;
    }
  } else if (buf != small) {
    ck__free(buf);
  }
  char text[900];
  ck__repr_for_error(s, n, -1, text, (int64_t)sizeof text);
  return CK_ERROR(CK_ERR_VALUE, "could not convert string to float: %s", text);
}
