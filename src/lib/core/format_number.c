/*
 * format_number.c -- Python's format() of ints, bools and floats as UTF-8
 * (ck_format_int64/uint64/bool/float64/float32 of ckernel/text.h).
 *
 * The layout of a formatted number follows CPython's (Python 3.11,
 * Python/formatter_unicode.c): the text is
 *     <lpad> <sign> <prefix> <spad> <grouped digits> <.> <rest> <rpad>
 * where only one of the paddings is non-empty, and zero padding ('0' fill
 * with '=' alignment) widens the digits, separators included.  A float's
 * digits and their notation come from float_text.c; the number digits
 * shared with str() live in numtext_internal.h.
 */
#include "core/text_internal.h"

#include "core/numtext_internal.h"
#include "core/shortest_internal.h"

#include <fenv.h>
#include <string.h>

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

/* The checks of every number entry point: out_len given, out NULL only
 * with cap 0, a spec (or none) parsed for numbers. */
static ck_status ck__number_args(char *out, size_t cap, const ck_format_spec *spec,
                                 size_t *out_len, const char *func) {
  if (out_len == NULL || (out == NULL && cap != 0)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL argument");
  }
  return ck__check_spec(spec, false, func);
}

/* text[0, n) as the result without a spec: *out_len = n, copied when it fits. */
static ck_status ck__put_plain(char *out, size_t cap, const char *text, size_t n,
                               size_t *out_len) {
  *out_len = n;
  if (n <= cap) {
    memcpy(out, text, n);
  }
  return CK_OK;
}

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
  ck_status st = ck__number_args(out, cap, spec, out_len, func);
  if (st != CK_OK) {
    return st;
  }
  if (spec == NULL || (spec->flags & CK_FORMAT_EMPTY)) {
    char buf[24];
    return ck__put_plain(out, cap, buf, ck__plain_decimal(buf, mag, neg), out_len);
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
    return ck__put_plain(out, cap, v ? "True" : "False", v ? 4 : 5, out_len);
  }
  return ck__format_integer(out, cap, spec, v ? 1u : 0u, false, out_len, __func__);
}

/* ---- floats ----------------------------------------------------------------- */

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
  ck_status st = ck__number_args(out, cap, spec, out_len, func);
  if (st != CK_OK) {
    return st;
  }
  if (spec == NULL || (spec->flags & CK_FORMAT_EMPTY)) {
    char buf[40];
    return ck__put_plain(out, cap, buf, ck__format_float_repr(buf, sizeof buf, t, v, true),
                         out_len);
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
