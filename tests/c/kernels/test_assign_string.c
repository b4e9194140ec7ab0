/* String assignment kernels: sharing vs copying (pointer equality and arena
 * statistics), UTF-8 multi-byte and embedded NUL bytes, strict parsing of
 * every builtin kind with its errors, Python-repr formatting, parse/format
 * round trips, and allocation failure during a string array assignment. */
#include "ck_test.h"

#include <math.h>

/* A 1-D string array of n values (lens[i] bytes each, NULL lens: strlen). */
static ck_array_preamble *strings(size_t n, const char *const *vals,
                                  const size_t *lens) {
  ck_type t = P("strided * string");
  ck_array_preamble *a = NULL;
  intptr_t shape = (intptr_t)n;
  if (ck_array_empty(t, &shape, 1, CK_ARRAY_DEFAULT_FLAGS, &a) == CK_OK) {
    for (size_t i = 0; i < n; i++) {
      size_t len = lens ? lens[i] : strlen(vals[i]);
      if (ck_string_assign(a->data + i * sizeof(ck_string),
                           ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta), vals[i],
                           len) != CK_OK) {
        fprintf(stderr, "string assign failed: %s\n", ck_last_error());
      }
    }
  }
  ck_type_decref(t);
  return a;
}

static ck_memblock *arena_of(const ck_array_preamble *a) {
  return ((const ck_string_arrmeta *)(const void *)(ck_array_arrmeta(a) +
                                                    sizeof(ck_dim_arrmeta)))
      ->blockref;
}

static const ck_string *str_at(const ck_array_preamble *a, size_t i) {
  return (const ck_string *)(const void *)(a->data + i * sizeof(ck_string));
}

static bool str_eq(const ck_string *s, const char *bytes, size_t len) {
  size_t n = s->begin ? (size_t)(s->end - s->begin) : 0;
  return n == len && (len == 0 || memcmp(s->begin, bytes, len) == 0);
}

static void test_share_vs_copy(void) {
  static const char mb[] = "h\xc3\xa9llo\0w\xf0\x9f\x98\x80"; /* é, NUL, 😀 */
  const char *vals[3] = {"alpha", mb, ""};
  size_t lens[3] = {5, sizeof mb - 1, 0};
  ck_array_preamble *a = strings(3, vals, lens);
  REQUIRE(a != NULL);
  ck_pod_stats s0, s1;
  REQUIRE_OK(ck_pod_memblock_stats(arena_of(a), &s0));

  /* same arena (two views of one array): a[2] = a[1] shares the bytes */
  ck_array_preamble *v1, *v2;
  REQUIRE_OK(ck_array_index(a, 0, 1, &v1));
  REQUIRE_OK(ck_array_index(a, 0, 2, &v2));
  CHECK_OK(ck_array_assign(v2, v1, CK_ERRMODE_DEFAULT));
  CHECK(str_at(a, 2)->begin == str_at(a, 1)->begin);
  CHECK(str_at(a, 2)->end == str_at(a, 1)->end);
  REQUIRE_OK(ck_pod_memblock_stats(arena_of(a), &s1));
  CHECK(s1.allocations == s0.allocations);
  ck_array_decref(v1);
  ck_array_decref(v2);

  /* different arenas: copied through the destination's arena */
  ck_type t = P("strided * string");
  intptr_t n = 3;
  ck_array_preamble *b;
  REQUIRE_OK(ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &b));
  REQUIRE_OK(ck_pod_memblock_stats(arena_of(b), &s0));
  CHECK_OK(ck_array_assign(b, a, CK_ERRMODE_DEFAULT));
  REQUIRE_OK(ck_pod_memblock_stats(arena_of(b), &s1));
  CHECK(s1.allocations == s0.allocations + 3); /* a[2] shares a[1]'s bytes */
  for (size_t i = 0; i < 2; i++) {
    CHECK(str_at(b, i)->begin != str_at(a, i)->begin);
  }
  CHECK(str_eq(str_at(b, 0), "alpha", 5));
  CHECK(str_eq(str_at(b, 1), mb, sizeof mb - 1));
  CHECK(str_eq(str_at(b, 2), mb, sizeof mb - 1));
  /* the copies outlive the source */
  ck_array_decref(a);
  CHECK(str_eq(str_at(b, 1), mb, sizeof mb - 1));

  /* broadcasting a 0-d string into the array */
  ck_array_preamble *one = strings(1, (const char *[]){"z\xc3\xa9"}, NULL);
  ck_array_preamble *z;
  REQUIRE_OK(ck_array_index(one, 0, 0, &z));
  CHECK_OK(ck_array_assign(b, z, CK_ERRMODE_DEFAULT));
  for (size_t i = 0; i < 3; i++) {
    CHECK(str_eq(str_at(b, i), "z\xc3\xa9", 3));
  }
  ck_array_decref(z);
  ck_array_decref(one);
  ck_array_decref(b);
  ck_type_decref(t);
}

/* Parse one text into a 0-d value of builtin `id` under `mode`. */
static ck_status parse_into(const char *text, size_t len, ck_type_id id,
                            ck_errmode mode, void *out) {
  ck_array_preamble *s = strings(1, &text, &len);
  ck_array_preamble *v = NULL, *d = NULL;
  ck_status st = ck_array_index(s, 0, 0, &v);
  if (st == CK_OK) {
    st = ck_array_empty(CK_BUILTIN(id), NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &d);
  }
  if (st == CK_OK) {
    st = ck_array_assign(d, v, mode);
  }
  if (st == CK_OK) {
    memcpy(out, d->data, ck_type_data_size(CK_BUILTIN(id)));
  }
  ck_array_decref(d);
  ck_array_decref(v);
  ck_array_decref(s);
  return st;
}

static ck_status parse_str(const char *text, ck_type_id id, ck_errmode mode,
                           void *out) {
  return parse_into(text, strlen(text), id, mode, out);
}

static void test_parse(void) {
  int32_t i32 = 0;
  CHECK_OK(parse_str(" 42 ", CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32));
  CHECK(i32 == 42);
  CHECK_OK(parse_str("\t-7\n", CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32));
  CHECK(i32 == -7);
  CHECK_OK(parse_str("+2147483647", CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32));
  CHECK(i32 == INT32_MAX);
  CHECK_ERR(parse_str("abc", CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32), CK_ERR_VALUE,
            "cannot parse 'abc' as int32");
  CHECK_ERR(parse_str("3.5", CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32), CK_ERR_VALUE,
            "cannot parse '3.5' as int32");
  CHECK_ERR(parse_str("", CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32), CK_ERR_VALUE,
            "cannot parse '' as int32");
  CHECK_ERR(parse_str("1 2", CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32), CK_ERR_VALUE,
            "cannot parse '1 2' as int32");
  CHECK_ERR(parse_str("-", CK_TYPE_INT64, CK_ERRMODE_DEFAULT, &i32), CK_ERR_VALUE,
            "as int64");
  CHECK_ERR(parse_into("4\0" "2", 3, CK_TYPE_INT32, CK_ERRMODE_DEFAULT, &i32),
            CK_ERR_VALUE, "cannot parse '4\\x002' as int32");
  CHECK_ERR(parse_str("2147483648", CK_TYPE_INT32, CK_ERRMODE_OVERFLOW, &i32),
            CK_ERR_OVERFLOW, "parsing '2147483648' as int32");
  uint8_t u8 = 0;
  CHECK_ERR(parse_str("300", CK_TYPE_UINT8, CK_ERRMODE_DEFAULT, &u8), CK_ERR_OVERFLOW,
            "uint8");
  CHECK_OK(parse_str("300", CK_TYPE_UINT8, CK_ERRMODE_NOCHECK, &u8));
  CHECK(u8 == 44);
  CHECK_ERR(parse_str("-1", CK_TYPE_UINT8, CK_ERRMODE_OVERFLOW, &u8), CK_ERR_OVERFLOW,
            "uint8");
  int64_t i64 = 0;
  CHECK_OK(parse_str("-9223372036854775808", CK_TYPE_INT64, CK_ERRMODE_DEFAULT, &i64));
  CHECK(i64 == INT64_MIN);
  CHECK_ERR(parse_str("99999999999999999999999", CK_TYPE_INT64, CK_ERRMODE_NOCHECK,
                      &i64),
            CK_ERR_OVERFLOW, "out of range for int64");
  uint64_t u64 = 0;
  CHECK_OK(parse_str("18446744073709551615", CK_TYPE_UINT64, CK_ERRMODE_DEFAULT, &u64));
  CHECK(u64 == UINT64_MAX);

  double d = 0;
  CHECK_OK(parse_str(" 0.1 ", CK_TYPE_FLOAT64, CK_ERRMODE_DEFAULT, &d));
  CHECK(d == 0.1);
  CHECK_OK(parse_str("-1e300", CK_TYPE_FLOAT64, CK_ERRMODE_DEFAULT, &d));
  CHECK(d == -1e300);
  CHECK_OK(parse_str("nan", CK_TYPE_FLOAT64, CK_ERRMODE_DEFAULT, &d));
  CHECK(d != d);
  CHECK_OK(parse_str("-inf", CK_TYPE_FLOAT64, CK_ERRMODE_INEXACT, &d));
  CHECK(isinf(d) && d < 0);
  CHECK_ERR(parse_str("1e400", CK_TYPE_FLOAT64, CK_ERRMODE_OVERFLOW, &d),
            CK_ERR_OVERFLOW, "value '1e400' is out of range for float64");
  CHECK_OK(parse_str("1e400", CK_TYPE_FLOAT64, CK_ERRMODE_NOCHECK, &d));
  CHECK(isinf(d));
  CHECK_ERR(parse_str("1.5x", CK_TYPE_FLOAT64, CK_ERRMODE_DEFAULT, &d), CK_ERR_VALUE,
            "cannot parse '1.5x' as float64");
  CHECK_ERR(parse_str("0x", CK_TYPE_FLOAT64, CK_ERRMODE_DEFAULT, &d), CK_ERR_VALUE,
            "float64");
  /* a long float literal (heap buffer) */
  char longtext[300];
  memset(longtext, '0', sizeof longtext);
  longtext[0] = '1';
  longtext[1] = '.';
  longtext[sizeof longtext - 2] = '5';
  longtext[sizeof longtext - 1] = '\0';
  CHECK_OK(parse_str(longtext, CK_TYPE_FLOAT64, CK_ERRMODE_DEFAULT, &d));
  CHECK(d == 1.0);
  float f = 0;
  CHECK_OK(parse_str("0.1", CK_TYPE_FLOAT32, CK_ERRMODE_INEXACT, &f));
  CHECK(f == 0.1f);
  CHECK_ERR(parse_str("1e39", CK_TYPE_FLOAT32, CK_ERRMODE_OVERFLOW, &f),
            CK_ERR_OVERFLOW, "float32");
  uint8_t b = 7;
  CHECK_OK(parse_str("True", CK_TYPE_BOOL, CK_ERRMODE_DEFAULT, &b));
  CHECK(b == 1);
  CHECK_OK(parse_str(" false ", CK_TYPE_BOOL, CK_ERRMODE_DEFAULT, &b));
  CHECK(b == 0);
  CHECK_ERR(parse_str("yes", CK_TYPE_BOOL, CK_ERRMODE_DEFAULT, &b), CK_ERR_VALUE,
            "cannot parse 'yes' as bool");
  double c[2];
  CHECK_OK(parse_str("(1+2j)", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c));
  CHECK(c[0] == 1 && c[1] == 2);
  CHECK_OK(parse_str("2j", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c));
  CHECK(c[0] == 0 && c[1] == 2);
  CHECK_OK(parse_str("-1.5-2e3j", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c));
  CHECK(c[0] == -1.5 && c[1] == -2000);
  CHECK_OK(parse_str("1e-3+1e+3j", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c));
  CHECK(c[0] == 1e-3 && c[1] == 1e3);
  CHECK_OK(parse_str("3", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c));
  CHECK(c[0] == 3 && c[1] == 0);
  CHECK_OK(parse_str("1-j", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c));
  CHECK(c[0] == 1 && c[1] == -1);
  float c64[2];
  CHECK_OK(parse_str("(0.5+0.25j)", CK_TYPE_COMPLEX64, CK_ERRMODE_DEFAULT, c64));
  CHECK(c64[0] == 0.5f && c64[1] == 0.25f);
  CHECK_ERR(parse_str("1+2", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c), CK_ERR_VALUE,
            "cannot parse '1+2' as complex128");
  CHECK_ERR(parse_str("(1+2j", CK_TYPE_COMPLEX128, CK_ERRMODE_DEFAULT, c), CK_ERR_VALUE,
            "complex128");
}

/* Format a 0-d builtin value into a string and compare. */
static bool fmt_is(ck_type_id id, const void *value, const char *expect) {
  ck_array_preamble *v = NULL, *s = NULL;
  ck_type st = P("string");
  bool ok = ck_array_empty(CK_BUILTIN(id), NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &v) == CK_OK &&
            ck_array_empty(st, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &s) == CK_OK;
  if (ok) {
    memcpy(v->data, value, ck_type_data_size(CK_BUILTIN(id)));
    ok = ck_array_assign(s, v, CK_ERRMODE_DEFAULT) == CK_OK;
  }
  if (ok) {
    const ck_string *x = (const ck_string *)(const void *)s->data;
    ok = str_eq(x, expect, strlen(expect));
    if (!ok) {
      fprintf(stderr, "formatted '%.*s', expected '%s'\n", (int)(x->end - x->begin),
              x->begin, expect);
    }
  }
  ck_array_decref(v);
  ck_array_decref(s);
  ck_type_decref(st);
  return ok;
}

static void test_format(void) {
  int32_t i = -5;
  CHECK(fmt_is(CK_TYPE_INT32, &i, "-5"));
  int8_t i8 = -128;
  CHECK(fmt_is(CK_TYPE_INT8, &i8, "-128"));
  uint64_t u = UINT64_MAX;
  CHECK(fmt_is(CK_TYPE_UINT64, &u, "18446744073709551615"));
  uint8_t b = 1;
  CHECK(fmt_is(CK_TYPE_BOOL, &b, "True"));
  b = 0;
  CHECK(fmt_is(CK_TYPE_BOOL, &b, "False"));
  struct {
    double v;
    const char *s;
  } cases[] = {{0.1, "0.1"},       {1e300, "1e+300"},   {100.0, "100.0"},
               {1e16, "1e+16"},    {1e15, "1000000000000000.0"},
               {1e-5, "1e-05"},    {0.0001, "0.0001"},  {-0.0, "-0.0"},
               {0.0, "0.0"},       {1.5, "1.5"},        {123456789.123, "123456789.123"},
               {-2.5e-300, "-2.5e-300"}, {1.0 / 3, "0.3333333333333333"},
               {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CHECK(fmt_is(CK_TYPE_FLOAT64, &cases[k].v, cases[k].s));
  }
  double nan_ = NAN, ninf = -INFINITY;
  CHECK(fmt_is(CK_TYPE_FLOAT64, &nan_, "nan"));
  CHECK(fmt_is(CK_TYPE_FLOAT64, &ninf, "-inf"));
  float f = 0.1f;
  CHECK(fmt_is(CK_TYPE_FLOAT32, &f, "0.1"));
  /* float32 / float16 as NumPy's str (and astype(StringDType)): positional
   * for 1e-4 <= |x| < 1e6 (float16: 1e3) */
  f = 16777216.0f;
  CHECK(fmt_is(CK_TYPE_FLOAT32, &f, "1.6777216e+07"));
  f = 999999.0f;
  CHECK(fmt_is(CK_TYPE_FLOAT32, &f, "999999.0"));
  uint16_t h = 0x2e66; /* float16 nearest 0.1 */
  CHECK(fmt_is(CK_TYPE_FLOAT16, &h, "0.1"));
  h = 0x63d0; /* float16 1000 */
  CHECK(fmt_is(CK_TYPE_FLOAT16, &h, "1e+03"));
  double c[2] = {1, 2};
  CHECK(fmt_is(CK_TYPE_COMPLEX128, c, "(1+2j)"));
  c[0] = 0;
  CHECK(fmt_is(CK_TYPE_COMPLEX128, c, "2j"));
  c[0] = 1.5;
  c[1] = -0.5;
  CHECK(fmt_is(CK_TYPE_COMPLEX128, c, "(1.5-0.5j)"));
  c[0] = -0.0;
  c[1] = 1e300;
  CHECK(fmt_is(CK_TYPE_COMPLEX128, c, "(-0+1e+300j)"));
  float c64[2] = {0.1f, -0.2f};
  CHECK(fmt_is(CK_TYPE_COMPLEX64, c64, "(0.1-0.2j)"));
}

static void test_round_trips(void) {
  /* random bit patterns: format then parse gives the same bits */
  uint64_t x = 0x9e3779b97f4a7c15u;
  long n = ck_test_scaled(3000);
  ck_type st = P("string");
  ck_array_preamble *s, *v, *back;
  REQUIRE_OK(ck_array_empty(st, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &s));
  REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_FLOAT64), NULL, 0,
                            CK_ARRAY_DEFAULT_FLAGS, &v));
  REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_FLOAT64), NULL, 0,
                            CK_ARRAY_DEFAULT_FLAGS, &back));
  int bad = 0;
  for (long k = 0; k < n; k++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double d;
    memcpy(&d, &x, 8);
    if (d != d) {
      continue;
    }
    memcpy(v->data, &d, 8);
    CHECK_OK(ck_array_assign(s, v, CK_ERRMODE_DEFAULT));
    CHECK_OK(ck_array_assign(back, s, CK_ERRMODE_NOCHECK));
    bad += memcmp(back->data, &d, 8) != 0;
    /* int64 */
    int64_t i = (int64_t)x, j = 0;
    ck_array_preamble *iv, *ib;
    REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_INT64), NULL, 0,
                              CK_ARRAY_DEFAULT_FLAGS, &iv));
    REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_INT64), NULL, 0,
                              CK_ARRAY_DEFAULT_FLAGS, &ib));
    memcpy(iv->data, &i, 8);
    CHECK_OK(ck_array_assign(s, iv, CK_ERRMODE_DEFAULT));
    CHECK_OK(ck_array_assign(ib, s, CK_ERRMODE_DEFAULT));
    memcpy(&j, ib->data, 8);
    bad += i != j;
    ck_array_decref(iv);
    ck_array_decref(ib);
  }
  CHECK(bad == 0);
  /* float32: shortest text for the float32 value reads back */
  float fv = 0.0f, fb = 0.0f;
  for (long k = 0; k < n; k++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint32_t bits = (uint32_t)x;
    memcpy(&fv, &bits, 4);
    if (fv != fv) {
      continue;
    }
    ck_array_preamble *a32, *b32;
    REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_FLOAT32), NULL, 0,
                              CK_ARRAY_DEFAULT_FLAGS, &a32));
    REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_FLOAT32), NULL, 0,
                              CK_ARRAY_DEFAULT_FLAGS, &b32));
    memcpy(a32->data, &fv, 4);
    CHECK_OK(ck_array_assign(s, a32, CK_ERRMODE_DEFAULT));
    CHECK_OK(ck_array_assign(b32, s, CK_ERRMODE_NOCHECK));
    memcpy(&fb, b32->data, 4);
    bad += memcmp(&fb, &fv, 4) != 0;
    ck_array_decref(a32);
    ck_array_decref(b32);
  }
  CHECK(bad == 0);
  ck_array_decref(s);
  ck_array_decref(v);
  ck_array_decref(back);
  ck_type_decref(st);
}

/* number arrays <-> string arrays, with broadcasting and a parse error in
 * the middle of an array */
static void test_arrays(void) {
  ck_type ti = P("strided * int32"), ts = P("strided * string");
  intptr_t n = 4;
  ck_array_preamble *a, *s, *b;
  REQUIRE_OK(ck_array_empty(ti, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  REQUIRE_OK(ck_array_empty(ts, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &s));
  REQUIRE_OK(ck_array_empty(ti, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &b));
  int32_t vals[4] = {1, -20, 300, INT32_MIN};
  memcpy(a->data, vals, sizeof vals);
  CHECK_OK(ck_array_assign(s, a, CK_ERRMODE_DEFAULT));
  CHECK(str_eq(str_at(s, 3), "-2147483648", 11));
  CHECK_OK(ck_array_assign(b, s, CK_ERRMODE_DEFAULT));
  CHECK(memcmp(b->data, vals, sizeof vals) == 0);
  ck_array_decref(s);
  s = strings(4, (const char *[]){"1", "2", "x3", "4"}, NULL);
  CHECK_ERR(ck_array_assign(b, s, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot parse 'x3' as int32");
  ck_array_decref(a);
  ck_array_decref(s);
  ck_array_decref(b);
  ck_type_decref(ti);
  ck_type_decref(ts);
  /* unsupported pairs name both types */
  ck_type tb = P("bytes"), tstr = P("string");
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_string_arrmeta m1 = {NULL}, m2 = {NULL};
  CHECK_ERR(ck_make_assignment_kernel(&kb, 0, tb, (const char *)&m1, tstr,
                                      (const char *)&m2, CK_KERNEL_REQUEST_SINGLE,
                                      CK_ERRMODE_DEFAULT, NULL),
            CK_ERR_TYPE, "cannot assign from 'string' to 'bytes'");
  ck_kernel_builder_destroy(&kb);
  ck_type_decref(tb);
  ck_type_decref(tstr);
}

/* Fail every allocation in turn during a string array assignment (build
 * and run): the status is NO_MEMORY or OK, nothing leaks. */
static void test_fault_injection(void) {
  const char *vals[5] = {"one", "two", "three", "four-four-four", "five"};
  ck_array_preamble *a = strings(5, vals, NULL);
  REQUIRE(a != NULL);
  ck_type ts = P("strided * string");
  int64_t live = ck_memblock_live_count();
  ck_test_faults f1 = CK_TEST_FAULTS(100);
  while (ck_test_faults_arm(&f1)) {
    intptr_t n = 5;
    ck_array_preamble *b = NULL;
    ck_status st = ck_array_empty(ts, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &b);
    if (st == CK_OK) {
      st = ck_array_assign(b, a, CK_ERRMODE_DEFAULT);
    }
    if (!ck_test_faults_fired(&f1)) {
      CHECK(st == CK_OK);
      for (size_t i = 0; i < 5; i++) {
        CHECK(str_eq(str_at(b, i), vals[i], strlen(vals[i])));
      }
      ck_array_decref(b);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    ck_array_decref(b);
    CHECK(ck_memblock_live_count() == live);
  }
  CHECK(f1.runs >= 2);
  /* number -> string formatting with failures */
  ck_type ti = P("strided * float64");
  intptr_t n = 64;
  ck_array_preamble *f;
  REQUIRE_OK(ck_array_empty(ti, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &f));
  for (int i = 0; i < 64; i++) {
    ((double *)(void *)f->data)[i] = i * 1234.5678;
  }
  ck_test_faults f2 = CK_TEST_FAULTS(100);
  while (ck_test_faults_arm(&f2)) {
    ck_array_preamble *b = NULL;
    ck_status st = ck_array_empty(ts, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &b);
    if (st == CK_OK) {
      st = ck_array_assign(b, f, CK_ERRMODE_DEFAULT);
    }
    bool fired = ck_test_faults_fired(&f2);
    ck_array_decref(b);
    if (!fired) {
      CHECK(st == CK_OK);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
  }
  CHECK(f2.runs >= 2);
  ck_array_decref(f);
  ck_type_decref(ti);
  ck_type_decref(ts);
  ck_array_decref(a);
}

CK_TEST_MAIN(CK_TEST(test_share_vs_copy), CK_TEST(test_parse), CK_TEST(test_format),
             CK_TEST(test_round_trips), CK_TEST(test_arrays),
             CK_TEST(test_fault_injection))
