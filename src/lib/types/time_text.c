/* time_text.c -- ISO 8601 text of the time types: ck_time_format and
 * ck_time_parse (see ckernel/datetime.h for the forms). */
#include "types/type_internal.h"
#include "types/time_internal.h"
#include "core/numtext_internal.h"

#include <stdio.h>
#include <string.h>

static const int64_t ck__per_second[] = {0, 0, 0, 0, 0, 0, 0, 1, 1000, 1000000,
                                         1000000000};
static const int ck__frac_digits[] = {0, 0, 0, 0, 0, 0, 0, 0, 3, 6, 9};

static int64_t ck__fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* NumPy's years: printf's %04 (sign included: -538, -030) */
static void ck__append_year(char *buf, size_t n, size_t *pos, int64_t y) {
  ck__appendf(buf, n, pos, "%04" PRId64, y);
}

static void ck__append_date(char *buf, size_t n, size_t *pos, int64_t days) {
  int64_t y;
  int m, d;
  ck_civil_from_days(days, &y, &m, &d);
  ck__append_year(buf, n, pos, y);
  ck__appendf(buf, n, pos, "-%02d-%02d", m, d);
}

/* hh[:mm[:ss[.fff]]] of `rem` units of `u` since midnight (0 <= rem < 1 day) */
static void ck__append_clock(char *buf, size_t n, size_t *pos, int64_t rem, ck_time_unit u) {
  if (u == CK_UNIT_H) {
    ck__appendf(buf, n, pos, "%02" PRId64, rem);
    return;
  }
  if (u == CK_UNIT_MIN) {
    ck__appendf(buf, n, pos, "%02" PRId64 ":%02" PRId64, rem / 60, rem % 60);
    return;
  }
  int64_t ps = ck__per_second[u];
  int64_t secs = rem / ps, frac = rem % ps;
  ck__appendf(buf, n, pos, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, secs / 3600,
              secs / 60 % 60, secs % 60);
  if (ck__frac_digits[u] > 0) {
    ck__appendf(buf, n, pos, ".%0*" PRId64, ck__frac_digits[u], frac);
  }
}

static void ck__append_duration(char *buf, size_t n, size_t *pos, int64_t v,
                                ck_time_unit u) {
  if (u == CK_UNIT_Y || u == CK_UNIT_M) {
    ck__appendf(buf, n, pos, "P%" PRId64 "%c", v, u == CK_UNIT_Y ? 'Y' : 'M');
    return;
  }
  /* pandas' Timedelta.isoformat: floored days, then a nonnegative clock */
  int64_t days, rem, ps;
  if (u == CK_UNIT_W || u == CK_UNIT_D) {
    days = u == CK_UNIT_W ? v * 7 : v; /* |v| < 2^63/7 checked by caller */
    rem = 0;
    ps = 1;
  } else if (u == CK_UNIT_H || u == CK_UNIT_MIN) {
    int64_t per_day = u == CK_UNIT_H ? 24 : 1440;
    days = ck__fdiv(v, per_day);
    rem = (v - days * per_day) * (u == CK_UNIT_H ? 3600 : 60);
    ps = 1;
  } else {
    ps = ck__per_second[u];
    int64_t per_day = 86400 * ps;
    days = ck__fdiv(v, per_day);
    rem = v - days * per_day;
  }
  int64_t secs = rem / ps, frac = rem % ps;
  ck__appendf(buf, n, pos, "P%" PRId64 "DT%" PRId64 "H%" PRId64 "M%" PRId64, days,
              secs / 3600, secs / 60 % 60, secs % 60);
  if (frac != 0) {
    char f[16];
    int digits = ck__frac_digits[u];
    snprintf(f, sizeof f, "%0*" PRId64, digits, frac);
    while (digits > 0 && f[digits - 1] == '0') {
      f[--digits] = '\0';
    }
    ck__appendf(buf, n, pos, ".%s", f);
  }
  ck__appendf(buf, n, pos, "S");
}

/* `n` zero-padded decimal digits of 0 <= v < 10^n at p */
static char *ck__put_digits(char *p, int64_t v, int n) {
  for (int i = n - 1; i >= 0; i--) {
    p[i] = (char)('0' + v % 10);
    v /= 10;
  }
  return p + n;
}

/* The common case without printf: an instant in D..ns (or a date) in the
 * years 0..9999; the length, or 0 to take the general path. */
static size_t ck__format_instant_fast(ck_type t, int64_t v, char out[48]) {
  ck_time_unit u = (ck_time_unit)t->fixed_size;
  if (u < CK_UNIT_D || v == CK_NAT) {
    return 0;
  }
  int64_t per_day = u == CK_UNIT_D ? 1 : u == CK_UNIT_H ? 24 : u == CK_UNIT_MIN ? 1440
                                                          : 86400 * ck__per_second[u];
  int64_t days = ck__fdiv(v, per_day), rem = v - days * per_day;
  int64_t y;
  int m, d;
  ck_civil_from_days(days, &y, &m, &d);
  if (y < 0 || y > 9999) {
    return 0;
  }
  char *p = out;
  p = ck__put_digits(p, y, 4);
  *p++ = '-';
  p = ck__put_digits(p, m, 2);
  *p++ = '-';
  p = ck__put_digits(p, d, 2);
  if (t->id == CK_TYPE_DATETIME && u > CK_UNIT_D) {
    *p++ = 'T';
    int64_t secs = u == CK_UNIT_H ? rem * 3600 : u == CK_UNIT_MIN ? rem * 60
                                                                   : rem / ck__per_second[u];
    p = ck__put_digits(p, secs / 3600, 2);
    if (u >= CK_UNIT_MIN) {
      *p++ = ':';
      p = ck__put_digits(p, secs / 60 % 60, 2);
    }
    if (u >= CK_UNIT_S) {
      *p++ = ':';
      p = ck__put_digits(p, secs % 60, 2);
    }
    if (ck__frac_digits[u] > 0) {
      *p++ = '.';
      p = ck__put_digits(p, rem % ck__per_second[u], ck__frac_digits[u]);
    }
    if (t->dim_name != NULL) {
      memcpy(p, "+00:00", 6);
      p += 6;
    }
  }
  return (size_t)(p - out);
}

ck_status ck_time_format(ck_type t, const void *data, char *buf, size_t bufsize,
                         size_t *out_len) {
  if (!ck_type_is_time(t) || data == NULL || (buf == NULL && bufsize > 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "a time type and its data are needed");
  }
  size_t pos = 0;
  if (bufsize > 0) {
    buf[0] = '\0';
  }
  int64_t v = ck__time_load(t, (const char *)data);
  ck_time_unit u = (ck_time_unit)t->fixed_size;
  if (t->id == CK_TYPE_DATETIME || t->id == CK_TYPE_DATE) {
    char fast[48];
    size_t n = ck__format_instant_fast(t, v, fast);
    if (n > 0) {
      if (bufsize > 0) {
        size_t c = n < bufsize - 1 ? n : bufsize - 1;
        memcpy(buf, fast, c);
        buf[c] = '\0';
      }
      if (out_len != NULL) {
        *out_len = n;
      }
      return CK_OK;
    }
  }
  if (v == CK_NAT) {
    ck__appendf(buf, bufsize, &pos, "NaT");
  } else {
    switch ((ck_type_id)t->id) {
    case CK_TYPE_TIMEDELTA:
      if (u == CK_UNIT_W && (v > INT64_MAX / 7 || v < INT64_MIN / 7)) {
        return CK_ERROR(CK_ERR_OVERFLOW, "%" PRId64 " weeks is out of range", v);
      }
      ck__append_duration(buf, bufsize, &pos, v, u);
      break;
    case CK_TYPE_TIME: {
      int64_t per_day = 86400 * ck__per_second[u];
      if (v < 0 || v >= per_day) {
        return CK_ERROR(CK_ERR_VALUE, "time of day %" PRId64 " %s is not in [0, 24h)", v,
                        ck_time_unit_name(u));
      }
      ck__append_clock(buf, bufsize, &pos, v, u);
      break;
    }
    default: { /* instants and dates */
      if (u == CK_UNIT_Y) {
        ck__append_year(buf, bufsize, &pos, 1970 + v);
        break;
      }
      if (u == CK_UNIT_M) {
        int64_t y = ck__fdiv(v, 12);
        ck__append_year(buf, bufsize, &pos, 1970 + y);
        ck__appendf(buf, bufsize, &pos, "-%02d", (int)(v - 12 * y) + 1);
        break;
      }
      int64_t days, rem = 0;
      if (u == CK_UNIT_W || u == CK_UNIT_D) {
        if (u == CK_UNIT_W && (v > INT64_MAX / 7 || v < INT64_MIN / 7)) {
          return CK_ERROR(CK_ERR_OVERFLOW, "%" PRId64 " weeks is out of range", v);
        }
        days = u == CK_UNIT_W ? v * 7 : v;
      } else {
        int64_t per_day = u == CK_UNIT_H ? 24 : u == CK_UNIT_MIN ? 1440
                                                                   : 86400 * ck__per_second[u];
        days = ck__fdiv(v, per_day);
        rem = v - days * per_day;
      }
      ck__append_date(buf, bufsize, &pos, days);
      if (t->id == CK_TYPE_DATETIME && u > CK_UNIT_D) {
        ck__appendf(buf, bufsize, &pos, "T");
        ck__append_clock(buf, bufsize, &pos, rem, u);
      }
      if (t->id == CK_TYPE_DATETIME && t->dim_name != NULL) {
        ck__appendf(buf, bufsize, &pos, "+00:00");
      }
      break;
    }
    }
  }
  if (out_len != NULL) {
    *out_len = pos;
  }
  return CK_OK;
}

/* ---- parsing --------------------------------------------------------------------------- */

typedef struct ck__scan {
  const char *p, *e;
} ck__scan;

/* exactly `n` digits (n > 0), or at least `n` when `more` */
static bool ck__digits(ck__scan *s, int n, bool more, int64_t *out) {
  int64_t v = 0;
  int k = 0;
  while (s->p < s->e && *s->p >= '0' && *s->p <= '9' && (more || k < n)) {
    if (v > (INT64_MAX - 9) / 10) {
      return false;
    }
    v = v * 10 + (*s->p - '0');
    s->p++;
    k++;
  }
  *out = v;
  return k >= n && k > 0;
}

static bool ck__lit(ck__scan *s, char c) {
  if (s->p < s->e && *s->p == c) {
    s->p++;
    return true;
  }
  return false;
}

/* a fraction after '.': value in ns (9 digits), and whether digits beyond ns
 * were nonzero */
static bool ck__fraction(ck__scan *s, int64_t *ns, bool *beyond) {
  int64_t v = 0;
  int k = 0;
  *beyond = false;
  while (s->p < s->e && *s->p >= '0' && *s->p <= '9') {
    if (k < 9) {
      v = v * 10 + (*s->p - '0');
    } else if (*s->p != '0') {
      *beyond = true;
    }
    s->p++;
    k++;
  }
  for (int i = k; i < 9; i++) {
    v *= 10;
  }
  *ns = v;
  return k > 0;
}

static int ck__bad(ck_type t, const char *b, size_t n) {
  char q[200], tb[96];
  ck__quote_text(b, n, q, sizeof q);
  return ck__error(CK_ERR_VALUE, "assign", "cannot parse '%s' as %s", q,
                   ck__type_str(t, tb, sizeof tb));
}

/* Result in nanoseconds-within-day precision: days, ns since midnight,
 * plus the calendar precision the text had (Y, M or D when no clock). */
typedef struct ck__instant_text {
  int64_t days, ns, offset_ns;
  int coarse; /* CK_UNIT_Y, CK_UNIT_M, CK_UNIT_D or -1 (clock present) */
  bool beyond_ns;
} ck__instant_text;

static bool ck__parse_clock(ck__scan *s, int64_t *ns, bool *beyond) {
  int64_t h, m = 0, sec = 0, frac = 0;
  *beyond = false;
  if (!ck__digits(s, 2, false, &h) || h > 24) {
    return false;
  }
  if (ck__lit(s, ':')) {
    if (!ck__digits(s, 2, false, &m) || m > 59) {
      return false;
    }
    if (ck__lit(s, ':')) {
      if (!ck__digits(s, 2, false, &sec) || sec > 59) {
        return false;
      }
      if ((ck__lit(s, '.') || ck__lit(s, ',')) && !ck__fraction(s, &frac, beyond)) {
        return false;
      }
    }
  }
  *ns = ((h * 60 + m) * 60 + sec) * INT64_C(1000000000) + frac;
  return true;
}

static bool ck__parse_instant(ck__scan *s, bool allow_offset, ck__instant_text *r) {
  int64_t y, mo = 1, d = 1;
  bool neg = ck__lit(s, '-');
  if (!neg) {
    (void)ck__lit(s, '+');
  }
  if (!ck__digits(s, neg ? 3 : 4, true, &y) || y > INT64_C(1) << 40) {
    return false;
  }
  if (neg) {
    y = -y;
  }
  r->coarse = CK_UNIT_Y;
  r->ns = 0;
  r->offset_ns = 0;
  r->beyond_ns = false;
  if (ck__lit(s, '-')) {
    if (!ck__digits(s, 2, false, &mo) || mo < 1 || mo > 12) {
      return false;
    }
    r->coarse = CK_UNIT_M;
    if (ck__lit(s, '-')) {
      if (!ck__digits(s, 2, false, &d) || d < 1) {
        return false;
      }
      int64_t next = mo == 12 ? ck_days_from_civil(y + 1, 1, 1)
                              : ck_days_from_civil(y, (int)mo + 1, 1);
      if (ck_days_from_civil(y, (int)mo, (int)d) >= next) {
        return false; /* 2023-02-29 */
      }
      r->coarse = CK_UNIT_D;
      if (ck__lit(s, 'T') || ck__lit(s, ' ')) {
        if (!ck__parse_clock(s, &r->ns, &r->beyond_ns)) {
          return false;
        }
        r->coarse = -1;
      }
    }
  }
  r->days = ck_days_from_civil(y, (int)mo, (int)d);
  if (allow_offset && r->coarse == -1) {
    if (ck__lit(s, 'Z')) {
      return s->p == s->e;
    }
    if (s->p < s->e && (*s->p == '+' || *s->p == '-')) {
      bool minus = *s->p++ == '-';
      int64_t oh, om = 0;
      if (!ck__digits(s, 2, false, &oh) || oh > 23) {
        return false;
      }
      if (ck__lit(s, ':') && (!ck__digits(s, 2, false, &om) || om > 59)) {
        return false;
      }
      r->offset_ns = (oh * 60 + om) * 60 * INT64_C(1000000000) * (minus ? -1 : 1);
    }
  }
  return s->p == s->e;
}

/* v = a * b + c with overflow check */
static bool ck__fma(int64_t a, int64_t b, int64_t c, int64_t *v) {
  ck__i128 r = (ck__i128)a * b + c;
  if (r > INT64_MAX || r <= INT64_MIN) {
    return false;
  }
  *v = (int64_t)r;
  return true;
}

/* ISO 8601 duration: [-]P[nY][nM][nW][nD][T[nH][nM][n[.f]S]] into ns (linear),
 * or months for a calendar-only text (*calendar set). */
static bool ck__parse_duration(ck__scan *s, ck__i128 *ns, int64_t *months, bool *calendar,
                               bool *beyond) {
  bool neg = ck__lit(s, '-');
  if (!ck__lit(s, 'P')) {
    return false;
  }
  ck__i128 tot = 0;
  int64_t mon = 0;
  bool any = false, in_time = false, lin = false;
  *beyond = false;
  while (s->p < s->e) {
    if (!in_time && ck__lit(s, 'T')) {
      in_time = true;
      continue;
    }
    bool dneg = ck__lit(s, '-'); /* pandas writes P-1DT23H... */
    int64_t v, frac = 0;
    if (!ck__digits(s, 1, true, &v)) {
      return false;
    }
    bool has_frac = false;
    if (ck__lit(s, '.')) {
      if (!ck__fraction(s, &frac, beyond)) {
        return false;
      }
      has_frac = true;
    }
    if (dneg) {
      v = -v;
    }
    if (s->p >= s->e) {
      return false;
    }
    char c = *s->p++;
    int64_t unit_ns;
    if (!in_time && (c == 'Y' || c == 'M')) {
      if (has_frac || !ck__fma(v, c == 'Y' ? 12 : 1, mon, &mon)) {
        return false;
      }
      any = true;
      continue;
    }
    if (!in_time && c == 'W') unit_ns = INT64_C(604800000000000);
    else if (!in_time && c == 'D') unit_ns = INT64_C(86400000000000);
    else if (in_time && c == 'H') unit_ns = INT64_C(3600000000000);
    else if (in_time && c == 'M') unit_ns = INT64_C(60000000000);
    else if (in_time && c == 'S') unit_ns = INT64_C(1000000000);
    else return false;
    if (has_frac && c != 'S') {
      return false;
    }
    tot += (ck__i128)v * unit_ns + (dneg ? -frac : frac);
    if (tot > ((ck__i128)1 << 100) || tot < -((ck__i128)1 << 100)) {
      return false;
    }
    any = lin = true;
  }
  if (!any || (lin && mon != 0)) {
    return false;
  }
  *calendar = !lin;
  *ns = neg ? -tot : tot;
  *months = neg ? -mon : mon;
  return true;
}

ck_status ck_time_parse(ck_type t, const char *text, size_t len, int errmode, void *data) {
  if (!ck_type_is_time(t) || data == NULL || (text == NULL && len > 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "a time type, text and data are needed");
  }
  const char *b = text, *e = text == NULL ? text : text + len;
  while (b < e && ck__is_space(*b)) b++;
  while (e > b && ck__is_space(e[-1])) e--;
  size_t n = (size_t)(e - b);
  if (n == 0 || memchr(b, '\0', n) != NULL) {
    return ck__bad(t, b, n);
  }
  bool strict = errmode == CK_ERRMODE_FRACTIONAL || errmode == CK_ERRMODE_INEXACT ||
                errmode == CK_ERRMODE_DEFAULT;
  ck_time_unit u = (ck_time_unit)t->fixed_size;
  char tb[96];
  if (n == 3 && memcmp(b, "NaT", 3) == 0) {
    (void)ck__time_store(t, data, CK_NAT);
    return CK_OK;
  }
  ck__scan s = {b, e};
  int64_t v;
  bool exact = true, ok = true;
  ck_status st = CK_OK;
  if (t->id == CK_TYPE_TIMEDELTA) {
    ck__i128 ns;
    int64_t months;
    bool cal, beyond;
    if (!ck__parse_duration(&s, &ns, &months, &cal, &beyond)) {
      return ck__bad(t, b, n);
    }
    if (cal) {
      st = ck__time_convert_linear(months, CK_UNIT_M, u, &v, &exact);
    } else {
      int64_t per; /* ns in one u (a year is 3.2e16 ns: it fits) */
      (void)ck__time_convert_linear(1, u, CK_UNIT_NS, &per, &exact);
      ck__i128 q = ns / per, r = ns % per;
      if (r != 0 && r < 0) {
        q -= 1;
      }
      exact = r == 0 && !beyond;
      if (q > INT64_MAX || q <= INT64_MIN) {
        ok = false;
      } else {
        v = (int64_t)q;
      }
    }
  } else if (t->id == CK_TYPE_TIME) {
    int64_t ns;
    bool beyond;
    if (!ck__parse_clock(&s, &ns, &beyond) || s.p != s.e ||
        ns >= INT64_C(86400000000000)) {
      return ck__bad(t, b, n);
    }
    st = ck__time_convert_linear(ns, CK_UNIT_NS, u, &v, &exact);
    exact = exact && !beyond;
  } else {
    ck__instant_text r;
    if (!ck__parse_instant(&s, t->id == CK_TYPE_DATETIME, &r)) {
      return ck__bad(t, b, n);
    }
    /* the text's value in the finest unit it needs, then to u */
    if (r.coarse == CK_UNIT_Y || r.coarse == CK_UNIT_M || r.coarse == CK_UNIT_D) {
      st = ck_time_convert(r.days, CK_UNIT_D, u, true, &v, &exact);
    } else if (u <= CK_UNIT_D) {
      st = ck_time_convert(r.days, CK_UNIT_D, u, true, &v, &exact);
      exact = exact && r.ns == 0 && r.offset_ns == 0;
      if (st == CK_OK && (r.ns != 0 || r.offset_ns != 0)) {
        int64_t total;
        if (!ck__fma(r.days, INT64_C(86400000000000), r.ns - r.offset_ns, &total)) {
          ok = false;
        } else {
          st = ck_time_convert(total, CK_UNIT_NS, u, true, &v, &exact);
        }
      }
    } else {
      /* days in u, plus the clock in u */
      int64_t dv, cv;
      bool e2;
      st = ck__time_convert_linear(r.days, CK_UNIT_D, u, &dv, &exact);
      if (st == CK_OK) {
        st = ck__time_convert_linear(r.ns - r.offset_ns, CK_UNIT_NS, u, &cv, &e2);
        exact = e2 && !r.beyond_ns;
        if (st == CK_OK) {
          ok = ck__fma(dv, 1, cv, &v);
        }
      }
    }
  }
  if (st != CK_OK || !ok || !ck__time_store(t, data, v)) {
    char q[200];
    ck__quote_text(b, n, q, sizeof q);
    return ck__error(CK_ERR_OVERFLOW, "assign", "'%s' is out of range for %s", q,
                     ck__type_str(t, tb, sizeof tb));
  }
  if (!exact && strict) {
    char q[200];
    ck__quote_text(b, n, q, sizeof q);
    return ck__error(CK_ERR_VALUE, "assign",
                     "'%s' has a finer precision than %s (its unit is '%s'; the "
                     "'overflow' or 'nocheck' error mode rounds it down)",
                     q, ck__type_str(t, tb, sizeof tb), ck_time_unit_name(u));
  }
  return CK_OK;
}
