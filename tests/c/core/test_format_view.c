/*
 * test_format_view.c -- ckernel/format_view.h (Python's str()/format() of
 * numbers and text as device programs compile it: no libc, integer digits)
 * instantiated for C11 and checked against the library's ckernel/text.h
 * (ck_format_*: snprintf digits, the host layout) on random float64 bit
 * patterns (every exponent, subnormals, zeros, inf, nan), decimal-looking
 * values, integers and UTF-8 text, under every spec in a list covering each
 * presentation type, sign, '#', '0', width, grouping and precision.
 */
#include "ck_test.h"

#include "ckernel/text.h"

#include <inttypes.h>

#include "core/format_view_internal.h"

CK_FORMAT_VIEW_TEXT(h, )

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static ck_fv_spec to_fv(const ck_format_spec *s) {
  ck_fv_spec f;
  f.width = s->width;
  f.precision = s->precision;
  f.fill = s->fill;
  f.kind = s->kind;
  f.align = s->align;
  f.sign = s->sign;
  f.grouping = s->grouping;
  f.type = s->type;
  f.flags = s->flags;
  return f;
}

static char expect[8192], got[8192];

/* Both passes (count, then write) give the host's text. */
#define COMPARE(host_call, fv_call, what)                                                  \
  do {                                                                                     \
    size_t hn = 0;                                                                         \
    REQUIRE_OK(host_call);                                                                 \
    ck__fv_sink k0 = {NULL, 0, 0};                                                         \
    ck__fv_sink k1 = {(unsigned char *)got, 0, 1};                                         \
    {                                                                                      \
      ck__fv_sink *k = &k0;                                                                \
      fv_call;                                                                             \
      k = &k1;                                                                             \
      fv_call;                                                                             \
    }                                                                                      \
    if (k0.n != (int64_t)hn || k1.n != (int64_t)hn || memcmp(expect, got, hn) != 0) {      \
      fprintf(stderr, "%s: expected '%.*s' (%zu), got '%.*s' (%" PRId64 ", sized %" PRId64 \
                      ")\n",                                                               \
              what, (int)hn, expect, hn, (int)k1.n, got, k1.n, k0.n);                      \
      CHECK(0);                                                                            \
    }                                                                                      \
  } while (0)

static const char *const float_specs[] = {
    "",      ".2f",   ".0f",    ".17f",    ".30f",   "f",     "e",      ".3e",   ".0e",
    ".20e",  "g",     ".1g",    ".12g",    ".17g",   "#g",    "#.3g",   "%",     ".1%",
    "010.3f", "+.2f", " ^15.4e", "*<12.3g", ",.2f",  "_.3f",  "=+12,.1f", "z.1f", "F",
    "E",     "G",     ".3",     "#.0f",    "#.0e",   "020",   "^30",    "-",     "+",
    ".100f", ".60e",  "€>14.2f", "015,.4f", "#.10g", "z.0e",  ".25g",   ",",     "_"};

static void check_float(double v) {
  char what[96];
  for (size_t i = 0; i < sizeof float_specs / sizeof float_specs[0]; i++) {
    ck_format_spec hs;
    const char *sp = float_specs[i];
    REQUIRE_OK(ck_format_spec_parse(sp, strlen(sp), CK_FORMAT_FLOAT, &hs));
    ck_fv_spec fs = to_fv(&hs);
    snprintf(what, sizeof what, "format(%a, '%s')", v, sp);
    COMPARE(ck_format_float64(expect, sizeof expect, &hs, v, &hn), ck_fv_float(k, &fs, v),
            what);
  }
}

static void test_floats_match_the_host(void) {
  static const double fixed[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 2.5, 0.125, 0.375,
                                 9.995, 99.95, 0.05, 1e16, 1e17, 1e-4, 1e-5, 123456789.0,
                                 1e22, 1e23, 5e-324, -5e-324, 2.2250738585072014e-308,
                                 1.7976931348623157e308, 0.3, 2.675, 1e300, 1e-300,
                                 0.9999999, 999999.5, 9.5, 0.0005, 0.00049999999999999999};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    check_float(fixed[i]);
  }
  uint64_t inf = UINT64_C(0x7ff0000000000000), nan = UINT64_C(0x7ff8000000000000);
  double d;
  memcpy(&d, &inf, 8);
  check_float(d);
  check_float(-d);
  memcpy(&d, &nan, 8);
  check_float(d);
  long n = ck_test_scaled(300);
  for (long i = 0; i < n; i++) {
    uint64_t b = rnd();
    memcpy(&d, &b, 8);
    if (d != d) {
      continue;
    }
    check_float(d);
    /* values with few decimals: exact ties of rounding come up */
    check_float((double)(int64_t)(rnd() % 2000001 - 1000000) / 1000.0);
    check_float((double)(int64_t)(rnd() % 20001) / 8.0);
  }
}

static const char *const int_specs[] = {"",    "05d", "x",   "#X",   "#b",   "o",   ",d",
                                        "_x",  "+d",  " d",  "=^10", ".2f",  "e",   "%",
                                        "*>12,", "#o", "_b", "020,", "-^9",  "#010x", "g",
                                        "=+15_"};

static void test_integers_match_the_host(void) {
  char what[96];
  long n = ck_test_scaled(400);
  for (long r = 0; r < n + 8; r++) {
    int64_t v = r == 0 ? INT64_MIN : r == 1 ? INT64_MAX : r == 2 ? 0
              : r < 8 ? (int64_t)(r - 5) : (int64_t)(rnd() >> (rnd() % 64));
    if (r >= 8 && (rnd() & 1)) {
      v = -v;
    }
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    for (size_t i = 0; i < sizeof int_specs / sizeof int_specs[0]; i++) {
      ck_format_spec hs;
      const char *sp = int_specs[i];
      REQUIRE_OK(ck_format_spec_parse(sp, strlen(sp), CK_FORMAT_INT, &hs));
      ck_fv_spec fs = to_fv(&hs);
      snprintf(what, sizeof what, "format(%" PRId64 ", '%s')", v, sp);
      COMPARE(ck_format_int64(expect, sizeof expect, &hs, v, &hn),
              CHECK(ck_fv_int(k, &fs, mag, v < 0, 0) == 0), what);
    }
    uint64_t u = rnd();
    ck_format_spec hs;
    REQUIRE_OK(ck_format_spec_parse("#_x", 3, CK_FORMAT_INT, &hs));
    ck_fv_spec fs = to_fv(&hs);
    COMPARE(ck_format_uint64(expect, sizeof expect, &hs, u, &hn),
            CHECK(ck_fv_int(k, &fs, u, 0, 0) == 0), "uint64");
  }
  /* 'c': a code point, or OverflowError outside range(0x110000) */
  ck_format_spec hs;
  REQUIRE_OK(ck_format_spec_parse("*^5c", 4, CK_FORMAT_INT, &hs));
  ck_fv_spec fs = to_fv(&hs);
  static const int64_t cps[] = {65, 0xE9, 0x20AC, 0x1D11E, 0x10FFFF};
  for (size_t i = 0; i < 5; i++) {
    COMPARE(ck_format_int64(expect, sizeof expect, &hs, cps[i], &hn),
            CHECK(ck_fv_int(k, &fs, (uint64_t)cps[i], 0, 0) == 0), "c");
  }
  ck__fv_sink kc = {NULL, 0, 0};
  CHECK(ck_fv_int(&kc, &fs, 0x110000, 0, 0) == CK_FV_OVERFLOW);
  CHECK(ck_fv_int(&kc, &fs, 1, 1, 0) == CK_FV_OVERFLOW);
  /* bool: True/False for an empty spec, an integer otherwise */
  static const char *const bool_specs[] = {"", "d", ">6", "#x"};
  for (int b = 0; b < 2; b++) {
    for (size_t i = 0; i < 4; i++) {
      REQUIRE_OK(ck_format_spec_parse(bool_specs[i], strlen(bool_specs[i]), CK_FORMAT_BOOL,
                                      &hs));
      fs = to_fv(&hs);
      COMPARE(ck_format_bool(expect, sizeof expect, &hs, b != 0, &hn),
              CHECK(ck_fv_int(k, &fs, (uint64_t)b, 0, 1) == 0), "bool");
    }
  }
}

static void test_text_matches_the_host(void) {
  static const char *const specs[] = {"", ">10", "<7", "^9", "*^9", ".3", "10.2", "€>6",
                                      ".0", "^1"};
  static const char *const texts[] = {"", "a", "abc", "h\xc3\xa9llo", "\xe2\x82\xac\xf0\x9d\x84\x9e!",
                                      "a long piece of text"};
  char what[96];
  for (size_t t = 0; t < 6; t++) {
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
      ck_format_spec hs;
      REQUIRE_OK(ck_format_spec_parse(specs[i], strlen(specs[i]), CK_FORMAT_TEXT, &hs));
      ck_fv_spec fs = to_fv(&hs);
      const char *s = texts[t];
      size_t n = strlen(s), cps;
      uint32_t maxc;
      REQUIRE_OK(ck_utf8_measure(s, n, &cps, &maxc));
      uint32_t units[32];
      REQUIRE_OK(ck_utf8_decode(s, n, units, 4));
      snprintf(what, sizeof what, "format('%s', '%s')", s, specs[i]);
      COMPARE(ck_format_text(expect, sizeof expect, &hs, units, 4, cps, &hn),
              ck_fv_text_h(k, &fs, (const unsigned char *)s, (int64_t)n), what);
    }
  }
}

static void test_shortest_is_the_host_repr(void) {
  /* shortest.c is this header: the repr of random doubles by both paths */
  char what[64];
  ck_format_spec hs;
  REQUIRE_OK(ck_format_spec_parse("", 0, CK_FORMAT_FLOAT, &hs));
  ck_fv_spec fs = to_fv(&hs);
  long n = ck_test_scaled(20000);
  for (long i = 0; i < n; i++) {
    uint64_t b = rnd();
    double d;
    memcpy(&d, &b, 8);
    snprintf(what, sizeof what, "repr(%a)", d);
    COMPARE(ck_format_float64(expect, sizeof expect, NULL, d, &hn), ck_fv_float(k, &fs, d),
            what);
  }
}

static void check_float32(float f) {
  char what[64];
  snprintf(what, sizeof what, "str(float32 %a)", (double)f);
  COMPARE(ck_format_float32(expect, sizeof expect, NULL, f, &hn),
          ck_fv_float32_str(k, (double)f), what);
}

static void test_float32_str_is_the_host_str(void) {
  /* NumPy's str of a float32: the header's Ryu on float32 fields against the
   * library's search of round-tripping digits (numtext.c) */
  static const uint32_t fixed[] = {0u,          0x80000000u, 1u,          0x80000001u,
                                   0x007fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu,
                                   0x7f800000u, 0xff800000u, 0x7fc00000u, 0x3dcccccdu,
                                   0x38d1b717u, 0x38d1b718u, 0x497423ffu, 0x49742400u,
                                   0x3f800000u, 0x4b189680u, 0x3a83126fu, 0x4cbebc20u};
  float f;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    memcpy(&f, &fixed[i], 4);
    check_float32(f);
  }
  long n = ck_test_scaled(20000);
  for (long i = 0; i < n; i++) {
    uint32_t b = (uint32_t)rnd();
    memcpy(&f, &b, 4);
    check_float32(f);
    check_float32((float)(int64_t)(rnd() % 2000001 - 1000000) / 1000.0f);
    /* every power of two (the narrower interval below it) and its neighbours */
    b = (uint32_t)(rnd() % 255) << 23;
    for (uint32_t d = 0; d < 3; d++) {
      uint32_t c = b + d - 1u;
      memcpy(&f, &c, 4);
      check_float32(f);
    }
  }
}

/* ck_fv_u64_digits (the digits of a shortest repr: counted, then written
 * two per division from the end) against snprintf, trailing zeros dropped,
 * at every power-of-ten boundary and on random values of every length. */
static void check_u64_digits(uint64_t m) {
  char want[32];
  unsigned char digits[24];
  int all = snprintf(want, sizeof want, "%" PRIu64, m), ndig = -1;
  int n = ck_fv_u64_digits(m, digits, &ndig);
  int keep = all;
  while (keep > 1 && want[keep - 1] == '0') {
    keep--;
  }
  CHECK(ndig == all && n == keep && memcmp(digits, want, (size_t)n) == 0);
}

static void test_u64_digits(void) {
  uint64_t p = 1;
  for (int k = 0; k < 20; k++, p *= 10u) {
    check_u64_digits(p - 1);
    check_u64_digits(p);
    check_u64_digits(p + 1);
    check_u64_digits(p * 7u);
  }
  check_u64_digits(UINT64_MAX);
  for (int i = 0; i < 20000; i++) {
    uint64_t r = rnd();
    check_u64_digits(r >> (r % 64u));
  }
}

CK_TEST_MAIN(CK_TEST(test_floats_match_the_host), CK_TEST(test_integers_match_the_host),
             CK_TEST(test_text_matches_the_host), CK_TEST(test_shortest_is_the_host_repr),
             CK_TEST(test_float32_str_is_the_host_str), CK_TEST(test_u64_digits))
