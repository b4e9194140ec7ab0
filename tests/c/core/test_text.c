/*
 * test_text.c -- ckernel/text.h: Python's str()/format() of numbers and text
 * as UTF-8 (expected texts are Python 3.11's own), the snprintf-style
 * contract, spec errors, and UTF-8 <-> code units.  The Python suite checks
 * the same functions against format() over random values and specs
 * (tests/python/test_text_format.py).
 */
#include "ck_test.h"

#include <fenv.h>
#include <float.h>
#include <math.h>

static bool fmt_ok_(ck_status st, const char *got, const size_t *np, const char *want) {
  size_t n = *np;
  if (st != CK_OK) {
    fprintf(stderr, "  status %s: %s (want \"%s\")\n", ck_status_name(st), ck_last_error(),
            want);
    return false;
  }
  if (n != strlen(want) || memcmp(got, want, n) != 0) {
    fprintf(stderr, "  got \"%.*s\", want \"%s\"\n", (int)n, got, want);
    return false;
  }
  return true;
}

/* the length is read after the call (argument evaluation order) */
#define fmt_ok(call, got, n, want) fmt_ok_((call), (got), &(n), (want))

static bool parse(const char *spec, ck_format_kind kind, ck_format_spec *out) {
  if (spec == NULL) {
    return false;
  }
  ck_status st = ck_format_spec_parse(spec, strlen(spec), kind, out);
  if (st != CK_OK) {
    fprintf(stderr, "  spec \"%s\": %s\n", spec, ck_last_error());
  }
  return st == CK_OK;
}

static void test_integers(void) {
  static const struct { int64_t v; const char *spec, *want; } cases[] = {
      {0, "05d", "00000"},
      {-42, "+08,d", "-000,042"},
      {INT64_MAX, ",", "9,223,372,036,854,775,807"},
      {INT64_MIN, "_x", "-8000_0000_0000_0000"},
      {INT64_MIN, "#b", "-0b1000000000000000000000000000000000000000000000000000000000000000"},
      {255, "#X", "0XFF"},
      {255, "#o", "0o377"},
      {1234, "08,", "0,001,234"},
      {65, "^5c", "  A  "},
      {0x1F600, "*>3c", "**😀"},
      {123456789, "_", "123_456_789"},
      {-5, "=+6", "-    5"},
      {5, ".2f", "5.00"},
      {INT64_MIN, "e", "-9.223372e+18"},
      {7, "%", "700.000000%"},
      {INT64_MIN, NULL, "-9223372036854775808"},
      {INT64_MIN, "", "-9223372036854775808"},
  };
  char buf[128];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_format_spec spec, *sp = NULL;
    if (cases[i].spec != NULL) {
      REQUIRE(parse(cases[i].spec, CK_FORMAT_INT, &spec));
      sp = &spec;
    }
    size_t n = 0;
    CHECK(fmt_ok(ck_format_int64(buf, sizeof buf, sp, cases[i].v, &n), buf, n, cases[i].want));
  }
  static const struct { uint64_t v; const char *spec, *want; } ucases[] = {
      {UINT64_MAX, "d", "18446744073709551615"},
      {UINT64_MAX, "#x", "0xffffffffffffffff"},
      {UINT64_MAX, ".3e", "1.845e+19"},
      {UINT64_MAX, NULL, "18446744073709551615"},
  };
  for (size_t i = 0; i < sizeof ucases / sizeof ucases[0]; i++) {
    ck_format_spec spec, *sp = NULL;
    if (ucases[i].spec != NULL) {
      REQUIRE(parse(ucases[i].spec, CK_FORMAT_INT, &spec));
      sp = &spec;
    }
    size_t n = 0;
    CHECK(fmt_ok(ck_format_uint64(buf, sizeof buf, sp, ucases[i].v, &n), buf, n,
                 ucases[i].want));
  }
  static const struct { bool v; const char *spec, *want; } bcases[] = {
      {true, NULL, "True"}, {false, "", "False"}, {true, ">5", "    1"}, {true, "#x", "0x1"},
  };
  for (size_t i = 0; i < sizeof bcases / sizeof bcases[0]; i++) {
    ck_format_spec spec, *sp = NULL;
    if (bcases[i].spec != NULL) {
      REQUIRE(parse(bcases[i].spec, CK_FORMAT_BOOL, &spec));
      sp = &spec;
    }
    size_t n = 0;
    CHECK(fmt_ok(ck_format_bool(buf, sizeof buf, sp, bcases[i].v, &n), buf, n,
                 bcases[i].want));
  }
  /* 'c' outside range(0x110000) */
  ck_format_spec c;
  REQUIRE(parse("c", CK_FORMAT_INT, &c));
  size_t n = 0;
  CHECK(ck_format_int64(buf, sizeof buf, &c, 0x110000, &n) == CK_ERR_OVERFLOW);
  CHECK(strstr(ck_last_error(), "range(0x110000)") != NULL);
  CHECK(ck_format_int64(buf, sizeof buf, &c, -1, &n) == CK_ERR_OVERFLOW);
}

static void test_floats(void) {
  static const struct { double v; const char *spec, *want; } cases[] = {
      {0.1, NULL, "0.1"},
      {-0.0, NULL, "-0.0"},
      {1e16, NULL, "1e+16"},
      {5e-324, NULL, "5e-324"},
      {1.5, ".0", "2e+00"},
      {1e5, ".3", "1e+05"},
      {-0.0001, "z.2f", "0.00"},
      {INFINITY, "010", "0000000inf"},
      {NAN, "+010", "+000000nan"},
      {-NAN, NULL, "nan"},
      {-INFINITY, "F", "-INF"},
      {12345.678, ",.2f", "12,345.68"},
      {1e300, ".3e", "1.000e+300"},
      {0.125, ".2f", "0.12"},
      {2.5, ".0f", "2"},
      {5e-324, "g", "4.94066e-324"},
      {5.5, "#.0", "6.e+00"},
      {1.0 / 3.0, "%", "33.333333%"},
      {1.0, "#g", "1.00000"},
      {123456.0, "g", "123456"},
      {1e-5, "G", "1E-05"},
      {3.14159, "日^12.3f", "日日日3.142日日日日"},
  };
  char buf[128];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_format_spec spec, *sp = NULL;
    if (cases[i].spec != NULL) {
      REQUIRE(parse(cases[i].spec, CK_FORMAT_FLOAT, &spec));
      sp = &spec;
    }
    size_t n = 0;
    CHECK(fmt_ok(ck_format_float64(buf, sizeof buf, sp, cases[i].v, &n), buf, n,
                 cases[i].want));
  }
  /* float32: its own shortest digits without a spec, as double with one */
  size_t n = 0;
  CHECK(fmt_ok(ck_format_float32(buf, sizeof buf, NULL, 0.1f, &n), buf, n, "0.1"));
  /* ... laid out as NumPy's str(np.float32(x)): positional for
   * 1e-4 <= |x| < 1e6 by value (float64 switches at 1e16, by the digits) */
  static const struct { float v; const char *want; } f32[] = {
      {1e6f, "1e+06"},           {999999.0f, "999999.0"},   {1.0000001e7f, "1.0000001e+07"},
      {1e-4f, "1e-04"},          {1.00000005e-4f, "0.000100000005"},
      {-0.0f, "-0.0"},           {123456789.0f, "1.2345679e+08"}, {1e-45f, "1e-45"}};
  for (size_t i = 0; i < sizeof f32 / sizeof f32[0]; i++) {
    CHECK(fmt_ok(ck_format_float32(buf, sizeof buf, NULL, f32[i].v, &n), buf, n, f32[i].want));
  }
  CHECK(fmt_ok(ck_format_float64(buf, sizeof buf, NULL, 1e6, &n), buf, n, "1000000.0"));
  ck_format_spec wide;
  REQUIRE(parse(">20", CK_FORMAT_FLOAT, &wide));
  CHECK(fmt_ok(ck_format_float32(buf, sizeof buf, &wide, 0.1f, &n), buf, n,
               " 0.10000000149011612"));
  /* the caller's floating-point flags stay as they were (NumPy turns flags
   * raised in a ufunc loop into warnings; Python's format raises none) */
  ck_format_spec pct;
  REQUIRE(parse(".2%", CK_FORMAT_FLOAT, &pct));
  feclearexcept(FE_ALL_EXCEPT);
  CHECK_OK(ck_format_float64(buf, sizeof buf, &pct, DBL_MAX, &n));
  CHECK_OK(ck_format_float32(buf, sizeof buf, NULL, FLT_MAX, &n));
  CHECK(fetestexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO | FE_UNDERFLOW) == 0);
  /* long texts: exact digits beyond any small buffer */
  ck_format_spec f;
  REQUIRE(parse(".400f", CK_FORMAT_FLOAT, &f));
  char *big = malloc(1024);
  REQUIRE(big != NULL);
  CHECK_OK(ck_format_float64(big, 1024, &f, 1e300, &n));
  CHECK(n == 301 + 1 + 400);
  CHECK(big[0] == '1' && big[1] == '0' && big[301] == '.');
  free(big);
}

static void test_text(void) {
  /* code units of three kinds */
  static const uint8_t latin[] = {'h', 0xE9, 'l', 'l', 'o'};
  static const uint16_t cjk[] = {0x65E5, 0x672C, 0x8A9E};
  static const uint32_t emoji[] = {'x'};
  char buf[64];
  ck_format_spec spec;
  size_t n = 0;
  REQUIRE(parse(">8", CK_FORMAT_TEXT, &spec));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, &spec, latin, 1, 5, &n), buf, n, "   héllo"));
  REQUIRE(parse("*^7", CK_FORMAT_TEXT, &spec));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, &spec, cjk, 2, 3, &n), buf, n, "**日本語**"));
  REQUIRE(parse(".1", CK_FORMAT_TEXT, &spec));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, &spec, cjk, 2, 3, &n), buf, n, "日"));
  REQUIRE(parse("05", CK_FORMAT_TEXT, &spec));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, &spec, emoji, 4, 1, &n), buf, n, "x0000"));
  REQUIRE(parse("😀<3", CK_FORMAT_TEXT, &spec));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, &spec, emoji, 4, 1, &n), buf, n, "x😀😀"));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, NULL, latin, 1, 5, &n), buf, n, "héllo"));
  /* the empty text: its data may be NULL (memcpy must not see it) */
  REQUIRE(parse("*>3", CK_FORMAT_TEXT, &spec));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, &spec, NULL, 1, 0, &n), buf, n, "***"));
  CHECK(fmt_ok(ck_format_text(buf, sizeof buf, NULL, NULL, 1, 0, &n), buf, n, ""));
  /* surrogates cannot be UTF-8 */
  static const uint16_t sur[] = {'a', 0xD800};
  CHECK(ck_format_text(buf, sizeof buf, NULL, sur, 2, 2, &n) == CK_ERR_VALUE);
  CHECK(strstr(ck_last_error(), "U+D800") != NULL);
}

static void test_contract(void) {
  /* too small: the length, nothing written */
  char buf[8];
  memset(buf, '#', sizeof buf);
  size_t n = 0;
  CHECK_OK(ck_format_int64(buf, 3, NULL, -12345, &n));
  CHECK(n == 6 && buf[0] == '#');
  CHECK_OK(ck_format_int64(NULL, 0, NULL, -12345, &n));
  CHECK(n == 6);
  CHECK(ck_format_int64(buf, sizeof buf, NULL, 1, NULL) == CK_ERR_INVALID_ARGUMENT);
  /* a spec parsed for another kind of value */
  ck_format_spec s;
  REQUIRE(parse(">3", CK_FORMAT_TEXT, &s));
  CHECK(ck_format_int64(buf, sizeof buf, &s, 1, &n) == CK_ERR_INVALID_ARGUMENT);
  REQUIRE(parse(">3", CK_FORMAT_INT, &s));
  CHECK(ck_format_text(buf, sizeof buf, &s, "a", 1, 1, &n) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_format_text(buf, sizeof buf, NULL, "a", 3, 1, &n) == CK_ERR_INVALID_ARGUMENT);
}

static void test_spec_errors(void) {
  static const struct { const char *spec; ck_format_kind kind; const char *msg; } cases[] = {
      {"z", CK_FORMAT_INT, "Negative zero coercion (z) not allowed in integer format"},
      {"z", CK_FORMAT_TEXT, "Negative zero coercion (z) not allowed in string format"},
      {".2d", CK_FORMAT_INT, "Precision not allowed in integer format specifier"},
      {"+c", CK_FORMAT_INT, "Sign not allowed with integer format specifier 'c'"},
      {"#c", CK_FORMAT_INT, "Alternate form (#) not allowed with integer format specifier"},
      {",c", CK_FORMAT_INT, "Cannot specify ',' with 'c'."},
      {",x", CK_FORMAT_INT, "Cannot specify ',' with 'x'."},
      {"+", CK_FORMAT_TEXT, "Sign not allowed in string format specifier"},
      {"#", CK_FORMAT_TEXT, "Alternate form (#) not allowed in string format specifier"},
      {"=", CK_FORMAT_TEXT, "'=' alignment not allowed in string format specifier"},
      {"s", CK_FORMAT_BOOL, "Unknown format code 's' for object of type 'bool'"},
      {"d", CK_FORMAT_FLOAT, "Unknown format code 'd' for object of type 'float'"},
      {"d", CK_FORMAT_TEXT, "Unknown format code 'd' for object of type 'str'"},
      {",_", CK_FORMAT_INT, "Cannot specify both ',' and '_'."},
      {".", CK_FORMAT_INT, "Format specifier missing precision"},
      {"xx", CK_FORMAT_INT, "Invalid format specifier 'xx' for object of type 'int'"},
      {"99999999999999999999", CK_FORMAT_INT, "Too many decimal digits in format string"},
      {".3000000000f", CK_FORMAT_FLOAT, "precision too big"},
      {"n", CK_FORMAT_FLOAT, "locale"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_format_spec s;
    ck_status st = ck_format_spec_parse(cases[i].spec, strlen(cases[i].spec), cases[i].kind, &s);
    CHECK(st == CK_ERR_VALUE || st == CK_ERR_NOT_SUPPORTED);
    if (strstr(ck_last_error(), cases[i].msg) == NULL) {
      fprintf(stderr, "  \"%s\": %s\n", cases[i].spec, ck_last_error());
      CHECK(!"message");
    }
  }
  ck_format_spec s;
  CHECK(ck_format_spec_parse("\xff<", 2, CK_FORMAT_INT, &s) == CK_ERR_VALUE);
  CHECK(ck_format_spec_parse("d", 1, (ck_format_kind)9, &s) == CK_ERR_INVALID_ARGUMENT);
}

static void test_utf8(void) {
  const char *t = "aé日😀";
  size_t len = 0;
  uint32_t maxc = 0;
  CHECK_OK(ck_utf8_measure(t, strlen(t), &len, &maxc));
  CHECK(len == 4 && maxc == 0x1F600);
  uint32_t u[4];
  CHECK_OK(ck_utf8_decode(t, strlen(t), u, 4));
  CHECK(u[0] == 'a' && u[1] == 0xE9 && u[2] == 0x65E5 && u[3] == 0x1F600);
  uint16_t w[4];
  CHECK(ck_utf8_decode(t, strlen(t), w, 2) == CK_ERR_VALUE); /* too narrow */
  CHECK_OK(ck_utf8_measure("abc", 3, &len, &maxc));
  CHECK(len == 3 && maxc == 'c');
  CHECK_OK(ck_utf8_measure(NULL, 0, &len, &maxc));
  CHECK(len == 0 && maxc == 0);
  static const char *bad[] = {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ab\xe6\x97",
                              "\x80"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(ck_utf8_measure(bad[i], strlen(bad[i]), &len, &maxc) == CK_ERR_VALUE);
    CHECK(strstr(ck_last_error(), "invalid UTF-8") != NULL);
  }
}

CK_TEST_MAIN(CK_TEST(test_integers), CK_TEST(test_floats), CK_TEST(test_text),
             CK_TEST(test_contract), CK_TEST(test_spec_errors), CK_TEST(test_utf8))
