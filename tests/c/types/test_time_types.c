/* Time types (ckernel/datetime.h): spellings that parse and print back,
 * refused spellings, the calendar, unit conversion as NumPy's astype
 * (values computed with NumPy 2.4 and kept here), ISO 8601 text both ways
 * (Python's isoformat / NumPy's datetime_as_string / pandas'
 * Timedelta.isoformat outputs), int64 and string assignment kernels,
 * option types, and the operation kernels with NumPy's result units. */
#include "ck_test.h"

#include <math.h>

static void test_spellings(void) {
  static const char *const same[] = {
      "datetime[unit='s']", "datetime[unit='ns', tz='UTC']",
      "datetime[unit='Y']", "datetime[unit='M']", "datetime[unit='W']",
      "datetime[unit='h', tz='Europe/Paris']", "timedelta[unit='ms']",
      "timedelta[unit='D']", "date", "date[unit='ms']", "time[unit='s']",
      "time[unit='ns']", "3 * ?datetime[unit='us']", "{t: datetime[unit='s'], d: timedelta[unit='s']}"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    ck_type t = P(same[i]);
    REQUIRE(t != NULL);
    CHECK(strcmp(tstr(t), same[i]) == 0);
    ck_type u = P(tstr(t));
    CHECK(ck_type_equal(t, u));
    ck_type_decref(u);
    ck_type_decref(t);
  }
  static const char *const alias[][2] = {
      {"datetime", "datetime[unit='us']"},
      {"datetime64[ns]", "datetime[unit='ns']"},
      {"timedelta64[ s ]", "timedelta[unit='s']"},
      {"timedelta", "timedelta[unit='us']"},
      {"time", "time[unit='us']"},
      {"date[unit='D']", "date"},
      {"datetime[tz=\"UTC\", unit=\"ms\"]", "datetime[unit='ms', tz='UTC']"}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) {
    ck_type t = P(alias[i][0]);
    REQUIRE(t != NULL);
    CHECK(strcmp(tstr(t), alias[i][1]) == 0);
    ck_type_decref(t);
  }
  ck_type t = P("datetime[unit='ns', tz='UTC']");
  CHECK(ck_type_id_of(t) == CK_TYPE_DATETIME && ck_type_data_size(t) == 8);
  CHECK(ck_time_type_unit(t) == CK_UNIT_NS && strcmp(ck_datetime_type_tz(t), "UTC") == 0);
  ck_type u = P("datetime[unit='ns']");
  CHECK(!ck_type_equal(t, u) && ck_type_hash(t) != ck_type_hash(u));
  ck_type_decref(u);
  ck_type_decref(t);
  t = P("date");
  CHECK(ck_type_data_size(t) == 4 && strcmp(ck_type_id_name(ck_type_id_of(t)), "date") == 0);
  ck_type_decref(t);
  t = P("time[unit='ms']");
  CHECK(ck_type_data_size(t) == 4);
  ck_type_decref(t);
}

static void test_refused(void) {
  ck_type t;
  CHECK_ERR(ck_type_parse("datetime64", &t), CK_ERR_PARSE, "needs a unit");
  CHECK_ERR(ck_type_parse("datetime[unit='q']", &t), CK_ERR_PARSE, "unknown time unit 'q'");
  CHECK_ERR(ck_type_parse("date[unit='s']", &t), CK_ERR_PARSE, "a date counts days");
  CHECK_ERR(ck_type_parse("time[unit='D']", &t), CK_ERR_PARSE, "time of day");
  CHECK_ERR(ck_type_parse("timedelta[tz='UTC']", &t), CK_ERR_PARSE, "unit='...'");
  CHECK_ERR(ck_type_parse("datetime[tz='a b']", &t), CK_ERR_PARSE, "not a zone name");
  CHECK_ERR(ck_type_parse("datetime[unit='s', unit='s']", &t), CK_ERR_PARSE, "once each");
  CHECK_ERR(ck_type_parse("datetime[unit='s'", &t), CK_ERR_PARSE, "expected ']'");
  CHECK_ERR(ck_type_parse("datetime[unit='s", &t), CK_ERR_PARSE, "unterminated");
  CHECK_ERR(ck_datetime_type_new((ck_time_unit)3, NULL, &t), CK_ERR_VALUE, "unknown time unit");
  CHECK_ERR(ck_time_unit_from_name("B", &(ck_time_unit){0}), CK_ERR_VALUE, "unknown time unit");
}

static void test_calendar(void) {
  CHECK(ck_days_from_civil(1970, 1, 1) == 0);
  CHECK(ck_days_from_civil(2024, 1, 1) == 19723);
  CHECK(ck_days_from_civil(1969, 12, 31) == -1);
  CHECK(ck_days_from_civil(2000, 3, 1) == 11017);
  for (int64_t d = -800000; d < 800000; d += 997) {
    int64_t y;
    int m, dd;
    ck_civil_from_days(d, &y, &m, &dd);
    CHECK(ck_days_from_civil(y, m, dd) == d);
  }
}

static void test_convert(void) {
  int64_t v;
  bool exact;
  /* NumPy: m8[s] [-1, -61] -> m8[m] [-1, -2]; M8[s] -1 -> M8[m] -1 */
  CHECK_OK(ck_time_convert(-61, CK_UNIT_S, CK_UNIT_MIN, false, &v, &exact));
  CHECK(v == -2 && !exact);
  CHECK_OK(ck_time_convert(-1, CK_UNIT_S, CK_UNIT_MIN, true, &v, &exact));
  CHECK(v == -1);
  /* m8[M] 13 -> m8[D] 395; m8[Y] 1 -> m8[D] 365; m8[D] 40 -> m8[M] 1; m8[M] 1 -> s 2629746 */
  CHECK_OK(ck_time_convert(13, CK_UNIT_M, CK_UNIT_D, false, &v, &exact));
  CHECK(v == 395);
  CHECK_OK(ck_time_convert(1, CK_UNIT_Y, CK_UNIT_D, false, &v, &exact));
  CHECK(v == 365);
  CHECK_OK(ck_time_convert(40, CK_UNIT_D, CK_UNIT_M, false, &v, &exact));
  CHECK(v == 1);
  CHECK_OK(ck_time_convert(1, CK_UNIT_M, CK_UNIT_S, false, &v, &exact));
  CHECK(v == 2629746 && exact);
  /* instants through the calendar: M8[D] -5 -> W -1, M -1, Y -1; M8[M] 649 -> D */
  CHECK_OK(ck_time_convert(-5, CK_UNIT_D, CK_UNIT_W, true, &v, &exact));
  CHECK(v == -1);
  CHECK_OK(ck_time_convert(-5, CK_UNIT_D, CK_UNIT_M, true, &v, &exact));
  CHECK(v == -1 && !exact);
  CHECK_OK(ck_time_convert(-5, CK_UNIT_D, CK_UNIT_Y, true, &v, &exact));
  CHECK(v == -1);
  CHECK_OK(ck_time_convert(648, CK_UNIT_M, CK_UNIT_D, true, &v, &exact));
  CHECK(v == 19723);   /* 2024-01-01 */
  CHECK_OK(ck_time_convert(19723, CK_UNIT_D, CK_UNIT_M, true, &v, &exact));
  CHECK(v == 648 && exact);
  CHECK_OK(ck_time_convert(54, CK_UNIT_Y, CK_UNIT_S, true, &v, &exact));
  CHECK(v == INT64_C(19723) * 86400);
  CHECK_OK(ck_time_convert(CK_NAT, CK_UNIT_S, CK_UNIT_NS, true, &v, &exact));
  CHECK(v == CK_NAT);
  /* NumPy wraps 2**62 s -> ns silently; here it is an overflow */
  CHECK_ERR(ck_time_convert(INT64_C(1) << 62, CK_UNIT_S, CK_UNIT_NS, true, &v, &exact),
            CK_ERR_OVERFLOW, "does not fit");
}

static void fmt_is(const char *type, int64_t v, const char *want) {
  ck_type t = P(type);
  char buf[96];
  size_t n = 0;
  char data[8];
  if (ck_type_data_size(t) == 4) {
    int32_t w = v == CK_NAT ? INT32_MIN : (int32_t)v;
    memcpy(data, &w, 4);
  } else {
    memcpy(data, &v, 8);
  }
  ck_status st = ck_time_format(t, data, buf, sizeof buf, &n);
  ck_test_checks++;
  if (st != CK_OK || strcmp(buf, want) != 0 || n != strlen(want)) {
    ck_test_failures++;
    fprintf(stderr, "format %s %" PRId64 ": got '%s' (%s), want '%s'\n", type, v, buf,
            ck_last_error(), want);
  }
  /* and back */
  char back[8] = {0};
  st = ck_time_parse(t, buf, n, CK_ERRMODE_DEFAULT, back);
  ck_test_checks++;
  if (st != CK_OK || memcmp(back, data, ck_type_data_size(t)) != 0) {
    ck_test_failures++;
    fprintf(stderr, "parse %s '%s' did not give %" PRId64 ": %s\n", type, buf, v,
            ck_last_error());
  }
  ck_type_decref(t);
}

static void test_text(void) {
  /* NumPy's datetime_as_string / Python's isoformat(timespec=...) */
  fmt_is("datetime[unit='s']", 0, "1970-01-01T00:00:00");
  fmt_is("datetime[unit='s']", -1, "1969-12-31T23:59:59");
  fmt_is("datetime[unit='s']", INT64_C(1) << 40, "36812-02-20T00:36:16");
  fmt_is("datetime[unit='ms']", 1, "1970-01-01T00:00:00.001");
  fmt_is("datetime[unit='us']", INT64_C(1704103200123456), "2024-01-01T10:00:00.123456");
  fmt_is("datetime[unit='ns']", -1, "1969-12-31T23:59:59.999999999");
  fmt_is("datetime[unit='h']", 0, "1970-01-01T00");
  fmt_is("datetime[unit='m']", 61, "1970-01-01T01:01");
  fmt_is("datetime[unit='D']", 19723, "2024-01-01");
  fmt_is("datetime[unit='W']", 1, "1970-01-08");
  fmt_is("datetime[unit='M']", 649, "2024-02");
  fmt_is("datetime[unit='Y']", -1, "1969");
  fmt_is("datetime[unit='Y']", -2000, "-030");   /* NumPy: %04 with the sign */
  fmt_is("datetime[unit='D']", -915000, "-536-10-25");
  fmt_is("datetime[unit='s', tz='UTC']", 0, "1970-01-01T00:00:00+00:00");
  fmt_is("datetime[unit='s']", CK_NAT, "NaT");
  fmt_is("date", 19723, "2024-01-01");
  fmt_is("date", CK_NAT, "NaT");
  fmt_is("date[unit='ms']", INT64_C(19723) * 86400000, "2024-01-01");
  fmt_is("time[unit='s']", 3661, "01:01:01");
  fmt_is("time[unit='ms']", 3661001, "01:01:01.001");
  fmt_is("time[unit='ns']", 1, "00:00:00.000000001");
  /* pandas' Timedelta.isoformat */
  fmt_is("timedelta[unit='s']", 5, "P0DT0H0M5S");
  fmt_is("timedelta[unit='s']", -1, "P-1DT23H59M59S");
  fmt_is("timedelta[unit='ms']", 1500, "P0DT0H0M1.5S");
  fmt_is("timedelta[unit='s']", 90061, "P1DT1H1M1S");
  fmt_is("timedelta[unit='ns']", 1, "P0DT0H0M0.000000001S");
  fmt_is("timedelta[unit='ms']", -90061001, "P-2DT22H58M58.999S");
  fmt_is("timedelta[unit='D']", 10, "P10DT0H0M0S");
  fmt_is("timedelta[unit='h']", 25, "P1DT1H0M0S");
  fmt_is("timedelta[unit='M']", 3, "P3M");
  fmt_is("timedelta[unit='Y']", -2, "P-2Y");
  fmt_is("timedelta[unit='s']", CK_NAT, "NaT");

  /* other accepted forms */
  ck_type t = P("datetime[unit='s']");
  int64_t v = 0;
  CHECK_OK(ck_time_parse(t, " 2024-01-01 10:00:00Z ", 22, CK_ERRMODE_DEFAULT, &v));
  CHECK(v == INT64_C(1704103200));
  CHECK_OK(ck_time_parse(t, "2024-01-01T12:00:00+02:00", 25, CK_ERRMODE_DEFAULT, &v));
  CHECK(v == INT64_C(1704103200));
  CHECK_OK(ck_time_parse(t, "2024-01", 7, CK_ERRMODE_DEFAULT, &v));
  CHECK(v == INT64_C(19723) * 86400);
  CHECK_ERR(ck_time_parse(t, "2024-01-01T00:00:00.5", 21, CK_ERRMODE_DEFAULT, &v),
            CK_ERR_VALUE, "finer precision");
  CHECK_OK(ck_time_parse(t, "1969-12-31T23:59:59.5", 21, CK_ERRMODE_OVERFLOW, &v));
  CHECK(v == -1);
  CHECK_ERR(ck_time_parse(t, "2023-02-29", 10, CK_ERRMODE_DEFAULT, &v), CK_ERR_VALUE,
            "cannot parse '2023-02-29' as datetime[unit='s']");
  CHECK_ERR(ck_time_parse(t, "yesterday", 9, CK_ERRMODE_DEFAULT, &v), CK_ERR_VALUE,
            "cannot parse");
  CHECK_ERR(ck_time_parse(t, "999999999999-01-01", 18, CK_ERRMODE_DEFAULT, &v),
            CK_ERR_OVERFLOW, "out of range");
  ck_type_decref(t);
  t = P("timedelta[unit='s']");
  CHECK_OK(ck_time_parse(t, "PT90M", 5, CK_ERRMODE_DEFAULT, &v));
  CHECK(v == 5400);
  CHECK_OK(ck_time_parse(t, "-P1W", 4, CK_ERRMODE_DEFAULT, &v));
  CHECK(v == -604800);
  CHECK_ERR(ck_time_parse(t, "P1M1D", 5, CK_ERRMODE_DEFAULT, &v), CK_ERR_VALUE,
            "cannot parse");
  ck_type_decref(t);
}

/* One scalar assignment through the general factory. */
static ck_status assign1(const char *dtype, void *dst, const char *dmeta, const char *stype,
                         const void *src, const char *smeta, ck_errmode mode) {
  ck_type dt = P(dtype), st = P(stype);
  ck_kernel_builder ckb;
  ck_kernel_builder_init(&ckb);
  ck_status s = ck_make_assignment_kernel(&ckb, 0, dt, dmeta, st, smeta,
                                          CK_KERNEL_REQUEST_SINGLE, mode, NULL);
  if (s == CK_OK) {
    const char *srcs[1] = {(const char *)src};
    s = (ck_status)ck_kernel_call_single(ck_kernel_builder_get(&ckb, 0), (char *)dst, srcs);
  }
  ck_kernel_builder_destroy(&ckb);
  ck_type_decref(dt);
  ck_type_decref(st);
  return s;
}

static void test_assign(void) {
  int64_t s = -61, d = 0;
  CHECK_OK(assign1("timedelta[unit='m']", &d, NULL, "timedelta[unit='s']", &s, NULL,
                   CK_ERRMODE_OVERFLOW));
  CHECK(d == -2);
  CHECK_ERR(assign1("timedelta[unit='m']", &d, NULL, "timedelta[unit='s']", &s, NULL,
                    CK_ERRMODE_DEFAULT), CK_ERR_VALUE, "remainder");
  s = INT64_C(1) << 62;
  CHECK_ERR(assign1("datetime[unit='ns']", &d, NULL, "datetime[unit='s']", &s, NULL,
                    CK_ERRMODE_DEFAULT), CK_ERR_OVERFLOW, "overflow");
  CHECK_OK(assign1("datetime[unit='ns']", &d, NULL, "datetime[unit='s']", &s, NULL,
                   CK_ERRMODE_NOCHECK));
  CHECK(d == CK_NAT);
  s = 19723;
  int32_t day = 0;
  CHECK_OK(assign1("date", &day, NULL, "datetime[unit='D']", &s, NULL, CK_ERRMODE_DEFAULT));
  CHECK(day == 19723);
  CHECK_OK(assign1("datetime[unit='s']", &d, NULL, "date", &day, NULL, CK_ERRMODE_DEFAULT));
  CHECK(d == INT64_C(19723) * 86400);
  s = INT64_C(1) << 40;
  CHECK_ERR(assign1("date", &day, NULL, "datetime[unit='D']", &s, NULL, CK_ERRMODE_DEFAULT),
            CK_ERR_OVERFLOW, "overflow");
  /* time of day of an instant */
  s = -1;
  int32_t tod = 0;
  CHECK_OK(assign1("time[unit='s']", &tod, NULL, "datetime[unit='s']", &s, NULL,
                   CK_ERRMODE_DEFAULT));
  CHECK(tod == 86399);
  /* int64 both ways, NaT is INT64_MIN */
  s = CK_NAT;
  CHECK_OK(assign1("int64", &d, NULL, "datetime[unit='s']", &s, NULL, CK_ERRMODE_DEFAULT));
  CHECK(d == INT64_MIN);
  int32_t i32 = 0;
  CHECK_ERR(assign1("int32", &i32, NULL, "datetime[unit='s']", &s, NULL, CK_ERRMODE_DEFAULT),
            CK_ERR_OVERFLOW, "int32");
  i32 = 7;
  CHECK_OK(assign1("timedelta[unit='s']", &d, NULL, "int32", &i32, NULL, CK_ERRMODE_DEFAULT));
  CHECK(d == 7);
  CHECK_ERR(assign1("timedelta[unit='s']", &d, NULL, "datetime[unit='s']", &s, NULL,
                    CK_ERRMODE_DEFAULT), CK_ERR_TYPE, "cannot assign");
  CHECK_ERR(assign1("float64", &d, NULL, "datetime[unit='s']", &s, NULL, CK_ERRMODE_DEFAULT),
            CK_ERR_TYPE, "cannot assign");
}

static void test_strings_arrays(void) {
  /* string <-> datetime through whole arrays (arenas, strided kernels) */
  intptr_t n = 3;
  ck_array_preamble *t = arr("strided * datetime[unit='ms']", 1, &n);
  ck_array_preamble *s = arr("strided * string", 1, &n);
  ck_array_preamble *back = arr("strided * datetime[unit='ms']", 1, &n);
  REQUIRE(t != NULL && s != NULL && back != NULL);
  int64_t vals[3] = {0, INT64_C(1704103200123), CK_NAT};
  memcpy(t->data, vals, sizeof vals);
  CHECK_OK(ck_array_assign(s, t, CK_ERRMODE_DEFAULT));
  const ck_string *ss = (const ck_string *)(const void *)s->data;
  CHECK(ss[1].end - ss[1].begin == 23 && memcmp(ss[1].begin, "2024-01-01T10:00:00.123", 23) == 0);
  CHECK(ss[2].end - ss[2].begin == 3 && memcmp(ss[2].begin, "NaT", 3) == 0);
  CHECK_OK(ck_array_assign(back, s, CK_ERRMODE_DEFAULT));
  CHECK(memcmp(back->data, vals, sizeof vals) == 0);
  ck_array_decref(t);
  ck_array_decref(s);
  ck_array_decref(back);
}

static void test_option(void) {
  /* ?datetime <- datetime and back: a value array, validity kept */
  intptr_t n = 2;
  ck_array_preamble *src = arr("strided * datetime[unit='s']", 1, &n);
  ck_array_preamble *opt = arr("strided * ?datetime[unit='ms']", 1, &n);
  REQUIRE(src != NULL && opt != NULL);
  int64_t vals[2] = {5, CK_NAT};
  memcpy(src->data, vals, sizeof vals);
  CHECK_OK(ck_array_assign(opt, src, CK_ERRMODE_DEFAULT));
  CHECK(((int64_t *)(void *)opt->data)[0] == 5000);
  /* NaT becomes a null */
  int64_t nulls = -1;
  int64_t first = -2;
  CHECK_OK(ck_array_null_count(opt, &nulls, &first));
  CHECK(nulls == 1 && first == 1);
  ck_array_decref(src);
  ck_array_decref(opt);
}

static int64_t op2(const char *op, const char *ta, const void *a, const char *tb, const void *b,
                   const char *want_ret, ck_status want) {
  ck_type t[2] = {P(ta), tb ? P(tb) : NULL};
  ck_kernel_builder ckb;
  ck_kernel_builder_init(&ckb);
  ck_type ret = NULL;
  int64_t out = 0;
  ck_clear_error();
  ck_status st = ck_make_time_op_kernel(op, &ckb, 0, CK_KERNEL_REQUEST_STRIDED, tb ? 2 : 1, t,
                                        &ret, NULL);
  if (st == CK_OK) {
    const char *src[2] = {(const char *)a, (const char *)b};
    intptr_t strides[2] = {0, 0};
    st = (ck_status)ck_kernel_call_strided(ck_kernel_builder_get(&ckb, 0), (char *)&out, 8,
                                           src, strides, 1);
    ck_test_checks++;
    if (want_ret != NULL && strcmp(tstr(ret), want_ret) != 0) {
      ck_test_failures++;
      fprintf(stderr, "%s(%s, %s): result %s, want %s\n", op, ta, tb ? tb : "", tstr(ret),
              want_ret);
    }
  }
  ck_test_checks++;
  if (st != want) {
    ck_test_failures++;
    fprintf(stderr, "%s(%s, %s): status %s (%s), want %s\n", op, ta, tb ? tb : "",
            ck_status_name(st), ck_last_error(), ck_status_name(want));
  }
  ck_type_decref(ret);
  ck_kernel_builder_destroy(&ckb);
  ck_type_decref(t[0]);
  ck_type_decref(t[1]);
  return out;
}

static void test_ops(void) {
  int64_t a = 10, b = 3, nat = CK_NAT, neg = -7, two = 2;
  double half = 0.5;
  /* NumPy: M8[s] - M8[ms] -> m8[ms]; M8[D] + m8[h] -> M8[h]; m8[s] * 1.5 etc. */
  CHECK(op2("subtract", "datetime[unit='s']", &a, "datetime[unit='ms']", &b,
            "timedelta[unit='ms']", CK_OK) == 9997);
  CHECK(op2("add", "datetime[unit='D']", &a, "timedelta[unit='h']", &b,
            "datetime[unit='h']", CK_OK) == 243);
  CHECK(op2("add", "timedelta[unit='h']", &b, "datetime[unit='D', tz='UTC']", &a,
            "datetime[unit='h', tz='UTC']", CK_OK) == 243);
  CHECK(op2("add", "datetime[unit='Y']", &a, "timedelta[unit='D']", &b,
            "datetime[unit='D']", CK_OK) == 3652 + 3);
  CHECK(op2("multiply", "timedelta[unit='s']", &neg, "float64", &half, "timedelta[unit='s']",
            CK_OK) == -3);
  CHECK(op2("multiply", "int64", &two, "timedelta[unit='s']", &neg, "timedelta[unit='s']",
            CK_OK) == -14);
  CHECK(op2("floor_divide", "timedelta[unit='s']", &neg, "int64", &two, "timedelta[unit='s']",
            CK_OK) == -3);
  CHECK(op2("floor_divide", "timedelta[unit='s']", &neg, "timedelta[unit='s']", &two, "int64",
            CK_OK) == -4);
  int64_t q = op2("true_divide", "timedelta[unit='s']", &neg, "timedelta[unit='ms']", &two,
                  "float64", CK_OK);
  double qd;
  memcpy(&qd, &q, 8);
  CHECK(qd == -3500.0);
  CHECK(op2("subtract", "date", &(int32_t){5}, "date", &(int32_t){2}, "timedelta[unit='D']",
            CK_OK) == 3);
  CHECK(op2("less", "datetime[unit='s']", &a, "datetime[unit='ms']", &b, "bool", CK_OK) == 0);
  CHECK((op2("not_equal", "datetime[unit='s']", &nat, "datetime[unit='s']", &nat, "bool",
             CK_OK) & 0xff) == 1);
  CHECK((op2("equal", "datetime[unit='s']", &nat, "datetime[unit='s']", &nat, "bool",
             CK_OK) & 0xff) == 0);
  CHECK(op2("add", "datetime[unit='s']", &nat, "timedelta[unit='s']", &b, NULL, CK_OK) ==
        CK_NAT);
  CHECK(op2("minimum", "timedelta[unit='s']", &a, "timedelta[unit='s']", &nat, NULL, CK_OK) ==
        CK_NAT);
  CHECK(op2("maximum", "timedelta[unit='s']", &a, "timedelta[unit='ms']", &b, NULL, CK_OK) ==
        10000);
  CHECK(op2("negative", "timedelta[unit='s']", &a, NULL, NULL, "timedelta[unit='s']", CK_OK) ==
        -10);
  int64_t big = INT64_MAX - 1;
  (void)op2("add", "timedelta[unit='s']", &big, "timedelta[unit='s']", &a, NULL,
            CK_ERR_OVERFLOW);
  (void)op2("add", "datetime[unit='s']", &a, "datetime[unit='s']", &b, NULL, CK_ERR_TYPE);
  (void)op2("add", "datetime[unit='D']", &a, "timedelta[unit='M']", &b, NULL, CK_ERR_TYPE);
  (void)op2("subtract", "datetime[unit='s', tz='UTC']", &a, "datetime[unit='s']", &b, NULL,
            CK_ERR_TYPE);
  (void)op2("multiply", "datetime[unit='s']", &a, "int64", &b, NULL, CK_ERR_TYPE);
  (void)op2("sqrt", "timedelta[unit='s']", &a, NULL, NULL, NULL, CK_ERR_TYPE);
  /* NumPy: an integer counts the time operand's units (M8[D] + 3, 72 - m8[h]) */
  CHECK(op2("add", "datetime[unit='D', tz='UTC']", &a, "int64", &b,
            "datetime[unit='D', tz='UTC']", CK_OK) == 13);
  CHECK(op2("add", "int8", &(int8_t){3}, "timedelta[unit='h']", &a, "timedelta[unit='h']",
            CK_OK) == 13);
  CHECK(op2("subtract", "datetime[unit='s']", &a, "bool", &(uint8_t){1}, "datetime[unit='s']",
            CK_OK) == 9);
  CHECK(op2("subtract", "int64", &b, "timedelta[unit='s']", &a, "timedelta[unit='s']",
            CK_OK) == -7);
  CHECK(op2("add", "datetime[unit='s']", &nat, "int64", &b, NULL, CK_OK) == CK_NAT);
  (void)op2("subtract", "int64", &b, "datetime[unit='s']", &a, NULL, CK_ERR_TYPE);
  (void)op2("add", "datetime[unit='s']", &a, "float64", &half, NULL, CK_ERR_TYPE);
  (void)op2("add", "date", &(int32_t){5}, "int64", &b, NULL, CK_ERR_TYPE);
}

static void test_no_type_leaks(void) {
  int64_t live = ck_type_live_count();
  test_spellings();
  test_ops();
  CHECK(ck_type_live_count() == live);
}

CK_TEST_MAIN(CK_TEST(test_spellings), CK_TEST(test_refused), CK_TEST(test_calendar),
             CK_TEST(test_convert), CK_TEST(test_text), CK_TEST(test_assign),
             CK_TEST(test_strings_arrays), CK_TEST(test_option), CK_TEST(test_ops),
             CK_TEST(test_no_type_leaks))
