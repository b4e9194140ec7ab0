/*
 * text.c -- Python's str() and format() of numbers and text as UTF-8, and
 * UTF-8 <-> code-unit arrays (ckernel/text.h).
 *
 * The layout of a formatted number follows CPython's (Python 3.11,
 * Python/formatter_unicode.c): the text is
 *     <lpad> <sign> <prefix> <spad> <grouped digits> <.> <rest> <rpad>
 * where only one of the paddings is non-empty, and zero padding ('0' fill
 * with '=' alignment) widens the digits, separators included.  Floats are
 * turned into digits exactly -- Ryu's shortest digits and the fixed-precision
 * integer path of ckernel/format_view.h, else snprintf in the "C" locale
 * (correctly rounded in glibc and every libc we build on) -- and laid out as
 * CPython's format_float_short lays out dtoa's digits.
 *
 * Over 1000 lines and one concept: the format-spec parser, the layout above
 * and the per-kind digit producers (integers, floats, str) are the one
 * implementation of format(); the number digits shared with str() live in
 * numtext_internal.h.
 */
#include "ckernel/text.h"

#include "core/core_internal.h"
#include "core/numtext_internal.h"
#include "core/shortest_internal.h"

#include <fenv.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(ck_format_spec) == 32, "ck_format_spec: 32 bytes");

/* ---- UTF-8 ---------------------------------------------------------------- */

static size_t ck__cp_len(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

static char *ck__put_cp(char *p, uint32_t cp) {
  if (cp < 0x80) {
    *p++ = (char)cp;
  } else if (cp < 0x800) {
    *p++ = (char)(0xC0 | (cp >> 6));
    *p++ = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *p++ = (char)(0xE0 | (cp >> 12));
    *p++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *p++ = (char)(0x80 | (cp & 0x3F));
  } else {
    *p++ = (char)(0xF0 | (cp >> 18));
    *p++ = (char)(0x80 | ((cp >> 12) & 0x3F));
    *p++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *p++ = (char)(0x80 | (cp & 0x3F));
  }
  return p;
}

static char *ck__fill(char *p, uint32_t cp, size_t count) {
  if (cp < 0x80) {
    memset(p, (int)cp, count);
    return p + count;
  }
  for (size_t i = 0; i < count; i++) {
    p = ck__put_cp(p, cp);
  }
  return p;
}

/* The code point at p (< e) of strict UTF-8, or -1; *next past it. */
static int32_t ck__utf8_next(const unsigned char *p, const unsigned char *e,
                             const unsigned char **next) {
  unsigned b0 = p[0];
  if (b0 < 0x80) {
    *next = p + 1;
    return (int32_t)b0;
  }
  int n;
  uint32_t cp, lo;
  if (b0 >= 0xC2 && b0 < 0xE0) {
    n = 1, cp = b0 & 0x1F, lo = 0x80;
  } else if (b0 >= 0xE0 && b0 < 0xF0) {
    n = 2, cp = b0 & 0x0F, lo = 0x800;
  } else if (b0 >= 0xF0 && b0 < 0xF5) {
    n = 3, cp = b0 & 0x07, lo = 0x10000;
  } else {
    return -1;
  }
  if (e - p <= n) {
    return -1;
  }
  for (int k = 1; k <= n; k++) {
    if ((p[k] & 0xC0) != 0x80) {
      return -1;
    }
    cp = (cp << 6) | (p[k] & 0x3F);
  }
  if (cp < lo || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return -1;
  }
  *next = p + n + 1;
  return (int32_t)cp;
}

ck_status ck_utf8_measure(const char *bytes, size_t n, size_t *out_length,
                          uint32_t *out_maxchar) {
  if ((bytes == NULL && n != 0) || out_length == NULL || out_maxchar == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  const unsigned char *p = (const unsigned char *)bytes, *e = p + n;
  size_t len = 0;
  uint32_t maxc = 0;
  while (p < e) {
    /* ASCII runs, eight bytes at a time */
    while (e - p >= 8) {
      uint64_t w;
      memcpy(&w, p, 8);
      if (w & UINT64_C(0x8080808080808080)) {
        break;
      }
      p += 8;
      len += 8;
    }
    if (p == e) {
      break;
    }
    if (*p < 0x80) {
      p++;
      len++;
      continue;
    }
    const unsigned char *next;
    int32_t cp = ck__utf8_next(p, e, &next);
    if (cp < 0) {
      return CK_ERROR(CK_ERR_VALUE, "invalid UTF-8 data in a ckernel string (byte %zu)",
                      (size_t)(p - (const unsigned char *)bytes));
    }
    if ((uint32_t)cp > maxc) {
      maxc = (uint32_t)cp;
    }
    p = next;
    len++;
  }
  if (maxc == 0 && n != 0) { /* ASCII: the largest byte */
    for (size_t i = 0; i < n; i++) {
      if ((unsigned char)bytes[i] > maxc) {
        maxc = (unsigned char)bytes[i];
      }
    }
  }
  *out_length = len;
  *out_maxchar = maxc;
  return CK_OK;
}

ck_status ck_utf8_decode(const char *bytes, size_t n, void *out, int kind) {
  if ((bytes == NULL || out == NULL) && n != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (kind != 1 && kind != 2 && kind != 4) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "kind %d is not 1, 2 or 4", kind);
  }
  const unsigned char *p = (const unsigned char *)bytes, *e = p + n;
  size_t i = 0;
  while (p < e) {
    const unsigned char *next = p + 1;
    int32_t cp = *p < 0x80 ? (int32_t)*p : ck__utf8_next(p, e, &next);
    if (cp < 0 || (kind == 1 && cp > 0xFF) || (kind == 2 && cp > 0xFFFF)) {
      return CK_ERROR(CK_ERR_VALUE,
                      "invalid UTF-8 data, or a code point wider than kind %d (byte %zu)",
                      kind, (size_t)(p - (const unsigned char *)bytes));
    }
    if (kind == 1) {
      ((uint8_t *)out)[i] = (uint8_t)cp;
    } else if (kind == 2) {
      ((uint16_t *)out)[i] = (uint16_t)cp;
    } else {
      ((uint32_t *)out)[i] = (uint32_t)cp;
    }
    i++;
    p = next;
  }
  return CK_OK;
}

/* ---- spec parsing ----------------------------------------------------------- */

static bool ck__is_align(char c) { return c == '<' || c == '>' || c == '=' || c == '^'; }

static const char *ck__kind_name(int kind) {
  switch (kind) {
  case CK_FORMAT_INT: return "int";
  case CK_FORMAT_BOOL: return "bool";
  case CK_FORMAT_FLOAT: return "float";
  default: return "str";
  }
}

/* Digits at *pp as a non-negative count: the number of digits read, or -1
 * (recorded) when they overflow. */
static int ck__spec_integer(const char **pp, const char *e, int64_t *out) {
  const char *p = *pp;
  int64_t acc = 0;
  int n = 0;
  for (; p < e && *p >= '0' && *p <= '9'; p++, n++) {
    int d = *p - '0';
    if (acc > (INT64_MAX - d) / 10) {
      CK_ERROR(CK_ERR_VALUE, "Too many decimal digits in format string");
      return -1;
    }
    acc = acc * 10 + d;
  }
  *pp = p;
  *out = acc;
  return n;
}

ck_status ck_format_spec_parse(const char *spec, size_t len, ck_format_kind kind,
                               ck_format_spec *out) {
  if ((spec == NULL && len != 0) || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (kind < CK_FORMAT_INT || kind > CK_FORMAT_TEXT) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown format kind %d", (int)kind);
  }
  bool text = kind == CK_FORMAT_TEXT;
  memset(out, 0, sizeof *out);
  out->width = -1;
  out->precision = -1;
  out->fill = ' ';
  out->kind = (uint8_t)kind;
  out->align = text ? '<' : '>';
  out->type = kind == CK_FORMAT_FLOAT ? 0 : (text ? 's' : 'd');
  if (len == 0) {
    out->flags = CK_FORMAT_EMPTY;
    return CK_OK;
  }
  const char *p = spec, *e = spec + len;
  bool fill_given = false, align_given = false;
  /* [[fill]align]: the fill is one code point, any */
  const unsigned char *next = (const unsigned char *)p + 1;
  int32_t cp = (unsigned char)*p < 0x80 ? (unsigned char)*p
                                        : ck__utf8_next((const unsigned char *)p,
                                                        (const unsigned char *)e, &next);
  if (cp < 0) {
    return CK_ERROR(CK_ERR_VALUE, "the format spec is not valid UTF-8");
  }
  if ((const char *)next < e && ck__is_align(*(const char *)next)) {
    out->fill = (uint32_t)cp;
    out->align = *(const char *)next;
    p = (const char *)next + 1;
    fill_given = align_given = true;
  } else if (ck__is_align(*p)) {
    out->align = *p++;
    align_given = true;
  }
  if (p < e && (*p == '+' || *p == '-' || *p == ' ')) {
    out->sign = *p++;
  }
  if (p < e && *p == 'z') {
    out->flags |= CK_FORMAT_NO_NEG_ZERO;
    p++;
  }
  if (p < e && *p == '#') {
    out->flags |= CK_FORMAT_ALT;
    p++;
  }
  if (!fill_given && p < e && *p == '0') {
    out->fill = '0';
    if (!align_given && !text) {
      out->align = '=';
    }
    p++;
  }
  int64_t v;
  int nd = ck__spec_integer(&p, e, &v);
  if (nd < 0) {
    return CK_ERR_VALUE;
  }
  if (nd > 0) {
    out->width = v;
  }
  if (p < e && (*p == ',' || *p == '_')) {
    out->grouping = *p++;
    if (p < e && (*p == ',' || *p == '_')) {
      return CK_ERROR(CK_ERR_VALUE, "Cannot specify both ',' and '_'.");
    }
  }
  if (p < e && *p == '.') {
    p++;
    nd = ck__spec_integer(&p, e, &v);
    if (nd < 0) {
      return CK_ERR_VALUE;
    }
    if (nd == 0) {
      return CK_ERROR(CK_ERR_VALUE, "Format specifier missing precision");
    }
    out->precision = v;
  }
  if (e - p > 1) {
    return CK_ERROR(CK_ERR_VALUE, "Invalid format specifier '%.*s' for object of type '%s'",
                    (int)len, spec, ck__kind_name(kind));
  }
  if (p < e) {
    out->type = *p;
  }
  char t = out->type;
  if (out->grouping != 0) {
    bool ok = strchr("deEfFgG%", t) != NULL || t == 0 ||
              (out->grouping == '_' && strchr("boxX", t) != NULL);
    if (!ok) {
      if (t > 32 && t < 127) {
        return CK_ERROR(CK_ERR_VALUE, "Cannot specify '%c' with '%c'.", out->grouping, t);
      }
      return CK_ERROR(CK_ERR_VALUE, "Cannot specify '%c' with '\\x%x'.", out->grouping,
                      (unsigned)(unsigned char)t);
    }
  }
  if (t == 'n') {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "format type 'n' depends on the process locale; use 'd', 'g' or "
                    "grouping (',' / '_') instead");
  }
  bool int_type = t != 0 && strchr("bcdoxX", t) != NULL;
  bool float_type = t != 0 && strchr("eEfFgG%", t) != NULL;
  bool known = text ? t == 's'
                    : (kind == CK_FORMAT_FLOAT ? (t == 0 || float_type) : (int_type || float_type));
  if (!known) {
    if (t > 32 && t < 127) {
      return CK_ERROR(CK_ERR_VALUE, "Unknown format code '%c' for object of type '%s'", t,
                      ck__kind_name(kind));
    }
    return CK_ERROR(CK_ERR_VALUE, "Unknown format code '\\x%x' for object of type '%s'",
                    (unsigned)(unsigned char)t, ck__kind_name(kind));
  }
  /* the checks in Python's order */
  if (text) {
    if (out->sign != 0) {
      return CK_ERROR(CK_ERR_VALUE, "%s not allowed in string format specifier",
                      out->sign == ' ' ? "Space" : "Sign");
    }
    if (out->flags & CK_FORMAT_NO_NEG_ZERO) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Negative zero coercion (z) not allowed in string format specifier");
    }
    if (out->flags & CK_FORMAT_ALT) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Alternate form (#) not allowed in string format specifier");
    }
    if (out->align == '=') {
      return CK_ERROR(CK_ERR_VALUE, "'=' alignment not allowed in string format specifier");
    }
    return CK_OK;
  }
  if (int_type) {
    if (out->precision != -1) {
      return CK_ERROR(CK_ERR_VALUE, "Precision not allowed in integer format specifier");
    }
    if (out->flags & CK_FORMAT_NO_NEG_ZERO) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Negative zero coercion (z) not allowed in integer format specifier");
    }
    if (t == 'c' && out->sign != 0) {
      return CK_ERROR(CK_ERR_VALUE, "Sign not allowed with integer format specifier 'c'");
    }
    if (t == 'c' && (out->flags & CK_FORMAT_ALT)) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Alternate form (#) not allowed with integer format specifier 'c'");
    }
  } else if (out->precision > INT_MAX) {
    return CK_ERROR(CK_ERR_VALUE, "precision too big");
  }
  return CK_OK;
}

static ck_status ck__check_spec(const ck_format_spec *spec, bool text, const char *func) {
  if (spec == NULL) {
    return CK_OK;
  }
  bool ok = text ? spec->kind == CK_FORMAT_TEXT
                 : (spec->kind >= CK_FORMAT_INT && spec->kind <= CK_FORMAT_FLOAT);
  if (!ok) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "the spec was parsed for %s values",
                     ck__kind_name(spec->kind));
  }
  return CK_OK;
}

/* ---- the number layout ---------------------------------------------------- */

/* A number's parts: [-]<prefix><digits>[.]<rest> (rest: fraction, exponent,
 * '%', "inf", a 'c' character). */
typedef struct ck__number {
  bool neg;
  const char *prefix;
  size_t n_prefix;
  const char *digits;
  size_t n_digits;
  bool has_decimal;
  const char *rest;
  size_t n_rest;
  size_t rest_extra; /* bytes of rest beyond its code points ('c') */
  bool upper; /* 'X': prefix and digits in upper case */
} ck__number;

/* The grouped digits (their length and their text) are format_view.h's
 * ck_fv_grouped_len / ck_fv_grouped, the ones device programs run
 * (shortest_internal.h). */

static ck_status ck__write_number(char *out, size_t cap, const ck_format_spec *spec,
                                  const ck__number *num, size_t *out_len) {
  char sign = 0;
  if (spec->sign == '+') {
    sign = num->neg ? '-' : '+';
  } else if (spec->sign == ' ') {
    sign = num->neg ? '-' : ' ';
  } else if (num->neg) {
    sign = '-';
  }
  size_t n_sign = sign != 0;
  size_t nonpad = n_sign + num->n_prefix + (num->has_decimal ? 1u : 0u) + num->n_rest -
                  num->rest_extra; /* code points */
  int64_t min_width = 0;
  if (spec->fill == '0' && spec->align == '=') {
    min_width = spec->width - (int64_t)nonpad;
  }
  int g = 0;
  if (spec->grouping != 0) {
    g = (spec->grouping == '_' && strchr("boxX", spec->type) != NULL && spec->type != 0) ? 4 : 3;
  }
  size_t n_grouped = num->n_digits == 0 ? 0 : ck__grouped_len(num->n_digits, min_width, g);
  size_t chars = nonpad + n_grouped;
  size_t lpad = 0, spad = 0, rpad = 0;
  if (spec->width > 0 && (uint64_t)spec->width > chars) {
    size_t pad = (size_t)spec->width - chars;
    switch (spec->align) {
    case '<': rpad = pad; break;
    case '^': lpad = pad / 2; rpad = pad - lpad; break;
    case '=': spad = pad; break;
    default: lpad = pad; break;
    }
  }
  size_t fl = ck__cp_len(spec->fill);
  size_t pads = lpad + spad + rpad;
  if (pads > (SIZE_MAX - chars) / fl) {
    return CK_ERROR(CK_ERR_OVERFLOW, "formatted text too long");
  }
  size_t total = chars + num->rest_extra + pads * fl;
  *out_len = total;
  if (total > cap || out == NULL) {
    return CK_OK;
  }
  char *p = ck__fill(out, spec->fill, lpad);
  if (sign != 0) {
    *p++ = sign;
  }
  for (size_t i = 0; i < num->n_prefix; i++) {
    char c = num->prefix[i];
    *p++ = num->upper && c == 'x' ? 'X' : c;
  }
  p = ck__fill(p, spec->fill, spad);
  if (n_grouped != 0) {
    ck__write_grouped(p, n_grouped, num->digits, num->n_digits, min_width, g, spec->grouping,
                      num->upper);
    p += n_grouped;
  }
  if (num->has_decimal) {
    *p++ = '.';
  }
  if (num->n_rest != 0) { /* rest may be NULL when empty (memcpy's arguments must not be) */
    memcpy(p, num->rest, num->n_rest);
    p += num->n_rest;
  }
  ck__fill(p, spec->fill, rpad);
  return CK_OK;
}

/* ---- integers --------------------------------------------------------------- */

static ck_status ck__format_float_spec(char *out, size_t cap, const ck_format_spec *spec,
                                       double v, size_t *out_len);

static size_t ck__plain_decimal(char *buf, uint64_t mag, bool neg) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + mag % 10u);
    mag /= 10u;
  } while (mag != 0);
  size_t k = 0;
  if (neg) {
    buf[k++] = '-';
  }
  while (n > 0) {
    buf[k++] = tmp[--n];
  }
  return k;
}

static ck_status ck__format_integer(char *out, size_t cap, const ck_format_spec *spec,
                                    uint64_t mag, bool neg, size_t *out_len,
                                    const char *func) {
  if (out_len == NULL || (out == NULL && cap != 0)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL argument");
  }
  ck_status st = ck__check_spec(spec, false, func);
  if (st != CK_OK) {
    return st;
  }
  if (spec == NULL || (spec->flags & CK_FORMAT_EMPTY)) {
    char buf[24];
    size_t n = ck__plain_decimal(buf, mag, neg);
    *out_len = n;
    if (n <= cap) {
      memcpy(out, buf, n);
    }
    return CK_OK;
  }
  char t = spec->type;
  if (t != 0 && strchr("eEfFgG%", t) != NULL) {
    double d = (double)mag; /* round to nearest even, as Python's float(int) */
    return ck__format_float_spec(out, cap, spec, neg ? -d : d, out_len);
  }
  ck__number num = {0};
  num.neg = neg;
  char digits[72];
  char ch[4];
  if (t == 'c') {
    if (neg || mag > 0x10FFFF) {
      return ck__error(CK_ERR_OVERFLOW, func, "%%c arg not in range(0x110000)");
    }
    num.neg = false;
    num.rest = ch;
    num.n_rest = (size_t)(ck__put_cp(ch, (uint32_t)mag) - ch);
    num.rest_extra = num.n_rest - 1;
    return ck__write_number(out, cap, spec, &num, out_len);
  }
  unsigned base = t == 'b' ? 2u : t == 'o' ? 8u : (t == 'x' || t == 'X') ? 16u : 10u;
  char tmp[72];
  size_t n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[mag % base];
    mag /= base;
  } while (mag != 0);
  for (size_t i = 0; i < n; i++) {
    digits[i] = tmp[n - 1 - i];
  }
  num.digits = digits;
  num.n_digits = n;
  num.upper = t == 'X';
  if ((spec->flags & CK_FORMAT_ALT) && base != 10) {
    num.prefix = base == 2 ? "0b" : base == 8 ? "0o" : "0x";
    num.n_prefix = 2;
  }
  return ck__write_number(out, cap, spec, &num, out_len);
}

ck_status ck_format_int64(char *out, size_t cap, const ck_format_spec *spec, int64_t v,
                          size_t *out_len) {
  uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  return ck__format_integer(out, cap, spec, mag, v < 0, out_len, __func__);
}

ck_status ck_format_uint64(char *out, size_t cap, const ck_format_spec *spec, uint64_t v,
                           size_t *out_len) {
  return ck__format_integer(out, cap, spec, v, false, out_len, __func__);
}

ck_status ck_format_bool(char *out, size_t cap, const ck_format_spec *spec, bool v,
                         size_t *out_len) {
  if (spec == NULL || (spec->flags & CK_FORMAT_EMPTY)) {
    if (out_len == NULL || (out == NULL && cap != 0)) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
    }
    const char *s = v ? "True" : "False";
    size_t n = v ? 4 : 5;
    *out_len = n;
    if (n <= cap) {
      memcpy(out, s, n);
    }
    return CK_OK;
  }
  return ck__format_integer(out, cap, spec, v ? 1u : 0u, false, out_len, __func__);
}

/* ---- floats ----------------------------------------------------------------- */

/* Growable text for a float's body. */
typedef struct ck__buf {
  char *p;
  size_t n, cap;
  char small[128];
} ck__buf;

static bool ck__buf_reserve(ck__buf *b, size_t extra) {
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
static bool ck__double_text(ck__buf *b, double v, char code, int precision, bool upper,
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

static ck_status ck__float_layout(char *out, size_t cap, const ck_format_spec *spec,
                                  double v, int t, size_t *out_len) {
  int precision;
  bool upper, add_dot0, pct;
  char code = ck__float_code(spec->type, spec->precision, false, &precision, &upper, &add_dot0,
                             &pct);
  if (pct) {
    v *= 100;
  }
  ck__buf b;
  b.p = b.small;
  b.n = 0;
  b.cap = sizeof b.small;
  bool ok = ck__double_text(&b, v, code, precision, upper, (spec->flags & CK_FORMAT_ALT) != 0,
                            add_dot0, (spec->flags & CK_FORMAT_NO_NEG_ZERO) != 0,
                            code == 'r' ? t : CK_TYPE_FLOAT64);
  ck_status st = ok ? CK_OK : CK_ERR_NO_MEMORY;
  if (ok && pct && !ck__buf_reserve(&b, 1)) {
    st = CK_ERR_NO_MEMORY;
  }
  if (st == CK_OK) {
    if (pct) {
      b.p[b.n++] = '%';
    }
    ck__number num = {0};
    const char *s = b.p, *e = b.p + b.n;
    if (*s == '-') {
      num.neg = true;
      s++;
    }
    const char *d = s;
    while (d < e && *d >= '0' && *d <= '9') {
      d++;
    }
    num.digits = s;
    num.n_digits = (size_t)(d - s);
    num.has_decimal = d < e && *d == '.';
    num.rest = num.has_decimal ? d + 1 : d;
    num.n_rest = (size_t)(e - num.rest);
    st = ck__write_number(out, cap, spec, &num, out_len);
  }
  if (b.p != b.small) {
    ck__free(b.p);
  }
  return st;
}

/* Formatting computes (v * 100 for '%', strtod and float conversions of
 * candidate digits) but leaves the caller's floating-point flags as they
 * were: NumPy reports flags raised in a ufunc loop as warnings, and Python's
 * format() raises none.  Reading the flags is cheap, writing them back
 * (fldenv) is not: they are written back only when they changed (the
 * integer digit paths change none). */
static ck_status ck__float_layout_quiet(char *out, size_t cap, const ck_format_spec *spec,
                                        double v, size_t *out_len) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  if ((spec->type == 'f' || spec->type == 'F') && spec->precision <= 19 &&
      ((bits >> 52) & 0x7ff) < 1023 + 64) {
    /* |v| < 2^64 at <= 19 places: the integer path (ck__fixed_digits), no
     * floating-point operation that could raise a flag */
    return ck__float_layout(out, cap, spec, v, CK_TYPE_FLOAT64, out_len);
  }
  fexcept_t flags, after;
  fegetexceptflag(&flags, FE_ALL_EXCEPT);
  ck_status st = ck__float_layout(out, cap, spec, v, CK_TYPE_FLOAT64, out_len);
  fegetexceptflag(&after, FE_ALL_EXCEPT);
  if (memcmp(&after, &flags, sizeof flags) != 0) {
    fesetexceptflag(&flags, FE_ALL_EXCEPT);
  }
  return st;
}

static ck_status ck__format_float_spec(char *out, size_t cap, const ck_format_spec *spec,
                                       double v, size_t *out_len) {
  return ck__float_layout_quiet(out, cap, spec, v, out_len);
}

static ck_status ck__format_float(char *out, size_t cap, const ck_format_spec *spec, double v,
                                  int t, size_t *out_len, const char *func) {
  if (out_len == NULL || (out == NULL && cap != 0)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL argument");
  }
  ck_status st = ck__check_spec(spec, false, func);
  if (st != CK_OK) {
    return st;
  }
  if (spec == NULL || (spec->flags & CK_FORMAT_EMPTY)) {
    char buf[40];
    size_t n = ck__format_float_repr(buf, sizeof buf, t, v, true);
    *out_len = n;
    if (n <= cap) {
      memcpy(out, buf, n);
    }
    return CK_OK;
  }
  /* a float32 with a spec is formatted as double (NumPy's float32.__format__) */
  return ck__float_layout_quiet(out, cap, spec, v, out_len);
}

ck_status ck_format_float64(char *out, size_t cap, const ck_format_spec *spec, double v,
                            size_t *out_len) {
  return ck__format_float(out, cap, spec, v, CK_TYPE_FLOAT64, out_len, __func__);
}

ck_status ck_format_float32(char *out, size_t cap, const ck_format_spec *spec, float v,
                            size_t *out_len) {
  /* widening a signalling NaN raises FE_INVALID: the caller's flags stay as
   * they were (NumPy's str of one warns of nothing) */
  volatile float vv = v; /* the widening stays between the two calls */
  fexcept_t flags;
  fegetexceptflag(&flags, FE_ALL_EXCEPT);
  volatile double d = (double)vv;
  fesetexceptflag(&flags, FE_ALL_EXCEPT);
  return ck__format_float(out, cap, spec, d, CK_TYPE_FLOAT32, out_len, __func__);
}

/* ---- text ------------------------------------------------------------------- */

static uint32_t ck__unit(const void *data, int kind, size_t i) {
  return kind == 1 ? ((const uint8_t *)data)[i]
                   : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
}

ck_status ck_format_text(char *out, size_t cap, const ck_format_spec *spec,
                         const void *data, int kind, size_t length, size_t *out_len) {
  if (out_len == NULL || (out == NULL && cap != 0) || (data == NULL && length != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (kind != 1 && kind != 2 && kind != 4) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "kind %d is not 1, 2 or 4", kind);
  }
  ck_status st = ck__check_spec(spec, true, __func__);
  if (st != CK_OK) {
    return st;
  }
  size_t n = length;
  if (spec != NULL && spec->precision >= 0 && (uint64_t)spec->precision < n) {
    n = (size_t)spec->precision;
  }
  size_t bytes = n;
  if (kind != 1) {
    bytes = 0;
    for (size_t i = 0; i < n; i++) {
      uint32_t cp = ck__unit(data, kind, i);
      if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
        return CK_ERROR(CK_ERR_VALUE,
                        "code point U+%04X at index %zu cannot be encoded to UTF-8 "
                        "(surrogates not allowed)",
                        (unsigned)cp, i);
      }
      bytes += ck__cp_len(cp);
    }
  } else {
    const uint8_t *u = data;
    for (size_t i = 0; i < n; i++) {
      bytes += u[i] >= 0x80;
    }
  }
  size_t lpad = 0, rpad = 0;
  if (spec != NULL && spec->width > 0 && (uint64_t)spec->width > n) {
    size_t pad = (size_t)spec->width - n;
    if (spec->align == '>') {
      lpad = pad;
    } else if (spec->align == '^') {
      lpad = pad / 2;
      rpad = pad - lpad;
    } else {
      rpad = pad;
    }
  }
  uint32_t fill = spec != NULL ? spec->fill : ' ';
  size_t fl = ck__cp_len(fill);
  if (lpad + rpad > (SIZE_MAX - bytes) / fl) {
    return CK_ERROR(CK_ERR_OVERFLOW, "formatted text too long");
  }
  size_t total = bytes + (lpad + rpad) * fl;
  *out_len = total;
  if (total > cap || out == NULL) {
    return CK_OK;
  }
  char *p = ck__fill(out, fill, lpad);
  if (kind == 1 && bytes == n) {
    if (n != 0) { /* an empty text's data may be NULL */
      memcpy(p, data, n);
      p += n;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      p = ck__put_cp(p, ck__unit(data, kind, i));
    }
  }
  ck__fill(p, fill, rpad);
  return CK_OK;
}
