/* type_time.c -- the time types (instants, durations, dates, times of day),
 * their units and the calendar and unit arithmetic (see ckernel/datetime.h).
 *
 * A time descriptor keeps its unit in `fixed_size` and an instant's time
 * zone in `dim_name` (a copy stored after the descriptor); nothing else.
 */
#include "types/type_internal.h"
#include "types/time_internal.h"

#include <string.h>

static const char *const ck__unit_names[] = {"Y", "M", "W", NULL, "D", "h",
                                             "m", "s", "ms", "us", "ns"};

/* Nanoseconds per unit for the linear units; Y and M as NumPy's mean
 * Gregorian year (365.2425 days) and month, used by durations. */
static const int64_t ck__unit_ns[] = {
    INT64_C(31556952000000000), INT64_C(2629746000000000), INT64_C(604800000000000), 0,
    INT64_C(86400000000000),    INT64_C(3600000000000),    INT64_C(60000000000),
    INT64_C(1000000000),        INT64_C(1000000),          INT64_C(1000), 1};

bool ck__time_unit_valid(int unit) {
  return unit >= CK_UNIT_Y && unit <= CK_UNIT_NS && unit != 3;
}

const char *ck_time_unit_name(ck_time_unit unit) {
  return ck__time_unit_valid((int)unit) ? ck__unit_names[unit] : NULL;
}

ck_status ck_time_unit_from_name(const char *name, ck_time_unit *out) {
  if (name == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "name and out must not be NULL");
  }
  for (int u = CK_UNIT_Y; u <= CK_UNIT_NS; u++) {
    if (ck__unit_names[u] != NULL && strcmp(ck__unit_names[u], name) == 0) {
      *out = (ck_time_unit)u;
      return CK_OK;
    }
  }
  return CK_ERROR(CK_ERR_VALUE,
                  "unknown time unit '%.40s' (the units are Y, M, W, D, h, m, s, ms, "
                  "us, ns)", name);
}

/* ---- descriptors -------------------------------------------------------------------- */

static ck_status ck__time_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                    size_t ndim) {
  (void)self;
  (void)arrmeta;
  (void)shape;
  return ndim > 0 ? ck__extra_shape(ndim) : CK_OK;
}

static void ck__time_destruct(ck_type self, char *arrmeta) {
  (void)self;
  (void)arrmeta;
}

static void ck__time_copy(ck_type self, char *dst, const char *src) {
  (void)self;
  (void)dst;
  (void)src;
}

static void ck__time_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  const char *u = ck__unit_names[self->fixed_size];
  switch ((ck_type_id)self->id) {
  case CK_TYPE_DATETIME:
    if (self->dim_name != NULL) {
      ck__appendf(buf, bufsize, pos, "datetime[unit='%s', tz='%s']", u, self->dim_name);
    } else {
      ck__appendf(buf, bufsize, pos, "datetime[unit='%s']", u);
    }
    break;
  case CK_TYPE_TIMEDELTA: ck__appendf(buf, bufsize, pos, "timedelta[unit='%s']", u); break;
  case CK_TYPE_DATE:
    ck__appendf(buf, bufsize, pos, self->fixed_size == CK_UNIT_D ? "date" : "date[unit='%s']",
                u);
    break;
  default: ck__appendf(buf, bufsize, pos, "time[unit='%s']", u); break;
  }
}

static void ck__time_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                           size_t *pos, int indent) {
  (void)arrmeta;
  ck__appendf(buf, bufsize, pos, "%*s%s arrmeta (none)\n", indent, "", self->vtable->name);
}

static bool ck__time_equal(ck_type a, ck_type b) {
  if (a->fixed_size != b->fixed_size) {
    return false;
  }
  if (a->dim_name == NULL || b->dim_name == NULL) {
    return a->dim_name == b->dim_name;
  }
  return strcmp(a->dim_name, b->dim_name) == 0;
}

static uint64_t ck__time_hash(ck_type self) {
  uint64_t h = ck__hmix(self->id, (uint64_t)self->fixed_size);
  return self->dim_name != NULL ? ck__hmix(h, ck__hash_cstr(self->dim_name)) : h;
}

#define CK__TIME_VTABLE(var, nm)                                                          \
  static const ck_type_vtable var = {                                                     \
      .name = nm,                                                                         \
      .arrmeta_construct = ck__time_construct,                                            \
      .arrmeta_destruct = ck__time_destruct,                                              \
      .arrmeta_copy = ck__time_copy,                                                      \
      .print = ck__time_print,                                                            \
      .arrmeta_debug_print = ck__time_debug,                                              \
      .equal = ck__time_equal,                                                            \
      .hash = ck__time_hash,                                                              \
  }
CK__TIME_VTABLE(ck__datetime_vtable, "datetime");
CK__TIME_VTABLE(ck__timedelta_vtable, "timedelta");
CK__TIME_VTABLE(ck__date_vtable, "date");
CK__TIME_VTABLE(ck__timeofday_vtable, "time");

bool ck__tz_valid(const char *tz, size_t n) {
  if (n == 0 || n >= CK_TIME_ZONE_MAX) {
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    char c = tz[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '+' || c == '-' || c == '/' || c == ':')) {
      return false;
    }
  }
  return true;
}

static ck_status ck__time_new(ck_type_id id, const ck_type_vtable *vt, ck_time_unit unit,
                              const char *tz, ck_type *out, const char *func) {
  if (out == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "out must not be NULL");
  }
  *out = NULL;
  if (!ck__time_unit_valid((int)unit)) {
    return ck__error(CK_ERR_VALUE, func, "unknown time unit %d", (int)unit);
  }
  size_t data = 8;
  if (id == CK_TYPE_DATE) {
    if (unit != CK_UNIT_D && unit != CK_UNIT_MS) {
      return ck__error(CK_ERR_VALUE, func,
                       "a date counts days (unit 'D') or milliseconds ('ms'), not '%s'",
                       ck__unit_names[unit]);
    }
    data = unit == CK_UNIT_D ? 4 : 8;
  } else if (id == CK_TYPE_TIME) {
    if (unit < CK_UNIT_S) {
      return ck__error(CK_ERR_VALUE, func,
                       "a time of day counts 's', 'ms', 'us' or 'ns', not '%s'",
                       ck__unit_names[unit]);
    }
    data = unit <= CK_UNIT_MS ? 4 : 8;
  }
  size_t tzlen = tz == NULL ? 0 : strlen(tz);
  if (tzlen > 0 && !ck__tz_valid(tz, tzlen)) {
    return ck__error(CK_ERR_VALUE, func,
                     "time zone '%.80s' is not a zone name (1 to %d characters of "
                     "A-Z a-z 0-9 _ + - / :)", tz, CK_TIME_ZONE_MAX - 1);
  }
  struct ck_type_desc *d = ck__desc_alloc(tzlen > 0 ? tzlen + 1 : 0, id, vt, func);
  if (d == NULL) {
    return ck_last_status();
  }
  d->depth = 2;
  d->data_size = data;
  d->data_alignment = data;
  d->fixed_size = (intptr_t)unit;
  if (tzlen > 0) {
    char *name = (char *)(d + 1);
    memcpy(name, tz, tzlen + 1);
    d->dim_name = name;
  }
  *out = ck__desc_finish(d);
  return CK_OK;
}

ck_status ck_datetime_type_new(ck_time_unit unit, const char *tz, ck_type *out) {
  return ck__time_new(CK_TYPE_DATETIME, &ck__datetime_vtable, unit, tz, out, __func__);
}

ck_status ck_timedelta_type_new(ck_time_unit unit, ck_type *out) {
  return ck__time_new(CK_TYPE_TIMEDELTA, &ck__timedelta_vtable, unit, NULL, out, __func__);
}

ck_status ck_date_type_new(ck_time_unit unit, ck_type *out) {
  return ck__time_new(CK_TYPE_DATE, &ck__date_vtable, unit, NULL, out, __func__);
}

ck_status ck_time_type_new(ck_time_unit unit, ck_type *out) {
  return ck__time_new(CK_TYPE_TIME, &ck__timeofday_vtable, unit, NULL, out, __func__);
}

bool ck_type_is_time(ck_type t) {
  return ck__is_desc(t) && t->id >= CK_TYPE_DATETIME && t->id <= CK_TYPE_TIME;
}

int ck_time_type_unit(ck_type t) {
  return ck_type_is_time(t) ? (int)t->fixed_size : -1;
}

const char *ck_datetime_type_tz(ck_type t) {
  return ck_type_is_time(t) && t->id == CK_TYPE_DATETIME ? t->dim_name : NULL;
}

/* ---- calendar ------------------------------------------------------------------------ */

static int64_t ck__floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* H. Hinnant's days_from_civil / civil_from_days (public domain algorithms). */
int64_t ck_days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = ck__floordiv(y, 400);
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void ck_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = ck__floordiv(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

/* ---- unit conversion ----------------------------------------------------------------- */

static int64_t ck__gcd(int64_t a, int64_t b) {
  while (b != 0) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* v * num / den, floored, exact flag; false on overflow. */
static bool ck__muldiv_floor(int64_t v, int64_t num, int64_t den, int64_t *out,
                             bool *exact) {
  ck__i128 p = (ck__i128)v * num;
  ck__i128 q = p / den;
  ck__i128 r = p % den;
  if (r != 0 && ((r < 0) != (den < 0))) {
    q -= 1;
  }
  *exact = r == 0;
  if (q > INT64_MAX || q <= INT64_MIN) { /* INT64_MIN is NaT */
    return false;
  }
  *out = (int64_t)q;
  return true;
}

ck_status ck__time_convert_linear(int64_t v, ck_time_unit from, ck_time_unit to,
                                  int64_t *out, bool *exact) {
  int64_t a = ck__unit_ns[from], b = ck__unit_ns[to];
  int64_t g = ck__gcd(a, b);
  if (!ck__muldiv_floor(v, a / g, b / g, out, exact)) {
    return ck__error(CK_ERR_OVERFLOW, "assign",
                     "%" PRId64 " %s does not fit in int64 %s", v, ck__unit_names[from],
                     ck__unit_names[to]);
  }
  return CK_OK;
}

static bool ck__calendar(ck_time_unit u) { return u == CK_UNIT_Y || u == CK_UNIT_M; }

ck_status ck_time_convert(int64_t value, ck_time_unit from, ck_time_unit to,
                          bool is_instant, int64_t *out, bool *out_exact) {
  if (out == NULL || !ck__time_unit_valid((int)from) || !ck__time_unit_valid((int)to)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "bad unit or NULL out");
  }
  bool exact_dummy;
  bool *exact = out_exact != NULL ? out_exact : &exact_dummy;
  *exact = true;
  if (value == CK_NAT || from == to) {
    *out = value;
    return CK_OK;
  }
  if (!is_instant || (!ck__calendar(from) && !ck__calendar(to)) ||
      (ck__calendar(from) && ck__calendar(to))) {
    return ck__time_convert_linear(value, from, to, out, exact);
  }
  /* instants across the calendar: through days */
  ck_status st;
  if (ck__calendar(from)) {
    int64_t months = from == CK_UNIT_Y ? value : 0, y = 0, days = 0;
    if (from == CK_UNIT_Y) {
      if (value > INT64_C(1) << 40 || value < -(INT64_C(1) << 40)) {
        goto overflow;
      }
      days = ck_days_from_civil(1970 + value, 1, 1);
    } else {
      months = value;
      if (value > INT64_C(1) << 44 || value < -(INT64_C(1) << 44)) {
        goto overflow;
      }
      y = 1970 + ck__floordiv(months, 12);
      days = ck_days_from_civil(y, (int)(months - ck__floordiv(months, 12) * 12) + 1, 1);
    }
    return ck__time_convert_linear(days, CK_UNIT_D, to, out, exact);
  }
  int64_t days = 0;
  bool e1;
  if ((st = ck__time_convert_linear(value, from, CK_UNIT_D, &days, &e1)) != CK_OK) {
    return st;
  }
  int64_t y;
  int m, d;
  ck_civil_from_days(days, &y, &m, &d);
  if (to == CK_UNIT_Y) {
    *out = y - 1970;
    *exact = e1 && m == 1 && d == 1;
  } else {
    *out = (y - 1970) * 12 + (m - 1);
    *exact = e1 && d == 1;
  }
  return CK_OK;
overflow:
  return ck__error(CK_ERR_OVERFLOW, "assign", "%" PRId64 " %s is out of the calendar's range",
                   value, ck__unit_names[from]);
}
