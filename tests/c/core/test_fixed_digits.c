/*
 * test_fixed_digits.c -- the fast exact paths of fixed-precision digits
 * (ckernel/format_view.h's ck_fv_fixed_digits: 'f' and '%' with up to 19
 * digits after the point of |v| < 2^64; ck_fv_sig_digits: 'e' and 'g' with
 * up to 19 significant digits when the last is at most 19 places after the
 * point; integer arithmetic only) and the texts built on them -- the host's
 * ck_format_float64 (text.c) and the device header's ck_fv_float, both
 * passes -- checked against glibc's snprintf("%.*f", "%.*e", "%.*g"), which
 * rounds the exact binary value half to even as CPython's dtoa does: random bit patterns of every exponent, values below
 * 2^64 at every precision 0..20, exact ties j / 2^(p + 1) and their
 * neighbours, values that round up across a power of ten, subnormals, -0.0,
 * huge values (the other paths), and CPython's own texts for an edge list.
 */
#include "ck_test.h"

#include "ckernel/text.h"

#include <fenv.h>
#include <math.h>

#include "core/format_view_internal.h"

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static double from_bits(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* finite, |v| < 2^(hi) and >= 2^(lo) roughly: a random mantissa and a
 * binary exponent drawn from [lo, hi) */
static double rnd_value(int lo, int hi) {
  int e = lo + (int)(rnd() % (uint64_t)(hi - lo));
  uint64_t bits = ((uint64_t)(e + 1023) << 52) | (rnd() & ((1ULL << 52) - 1));
  return from_bits(bits);
}

/* snprintf's digits of |v| at p places, as ck_fv_digits reports them: no
 * leading or trailing zeros ("0" and decpt 1 for zero), decpt */
static void libc_digits(double v, int p, char *d, int64_t *nd, int64_t *decpt) {
  char s[512];
  int len = snprintf(s, sizeof s, "%.*f", p, fabs(v));
  int64_t k = 0, int_digits = -1;
  for (int i = 0; i < len; i++) {
    if (s[i] == '.') {
      int_digits = k;
    } else {
      s[k++] = s[i];
    }
  }
  if (int_digits < 0) {
    int_digits = k;
  }
  int64_t lead = 0;
  while (lead < k && s[lead] == '0') {
    lead++;
  }
  if (lead == k) {
    d[0] = '0';
    *nd = 1;
    *decpt = 1;
    return;
  }
  k -= lead;
  memcpy(d, s + lead, (size_t)k);
  while (k > 1 && d[k - 1] == '0') {
    k--;
  }
  *nd = k;
  *decpt = int_digits - lead;
}

static long n_fast;

/* the fast path against snprintf; it must take every |v| < 2^64, p <= 19 */
static void check_digits(double v, int p) {
  unsigned char got[64];
  char want[512];
  int64_t gn = 0, gdp = 0, wn, wdp;
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  bool fast = ck_fv_fixed_digits(bits, p, got, &gn, &gdp);
  bool expect_fast = isfinite(v) && fabs(v) < 18446744073709551616.0 && p >= 0 && p <= 19;
  if (fast != expect_fast) {
    fprintf(stderr, "ck_fv_fixed_digits(%a, %d): took %d, expected %d\n", v, p, fast,
            expect_fast);
    CHECK(0);
    return;
  }
  if (!fast) {
    return;
  }
  n_fast++;
  libc_digits(v, p, want, &wn, &wdp);
  if (gn != wn || gdp != wdp || memcmp(got, want, (size_t)wn) != 0) {
    fprintf(stderr, "ck_fv_fixed_digits(%a, %d): '%.*s' decpt %" PRId64 ", snprintf '%.*s' "
                    "decpt %" PRId64 "\n",
            v, p, (int)gn, got, gdp, (int)wn, want, wdp);
    CHECK(0);
  }
}

/* snprintf's %.*e digits of |v| with nd significant, as ck_fv_digits' mode
 * 2 reports them */
static void libc_sig(double v, int nd, char *d, int64_t *n, int64_t *decpt) {
  char s[512];
  int len = snprintf(s, sizeof s, "%.*e", nd - 1, fabs(v));
  int64_t k = 0;
  int i = 0;
  for (; i < len && s[i] != 'e'; i++) {
    if (s[i] != '.') {
      d[k++] = s[i];
    }
  }
  int exp10 = atoi(s + i + 1);
  while (k > 1 && d[k - 1] == '0') {
    k--;
  }
  *n = k;
  *decpt = d[0] == '0' ? 1 : exp10 + 1;
}

static long n_sig;

/* ck_fv_sig_digits against snprintf; it must take 1e-10 <= |v| < 2^64 with
 * nd <= 9 (the last digit at most 19 places after the point) */
static void check_sig(double v, int nd) {
  unsigned char got[64];
  char want[512];
  int64_t gn = 0, gdp = 0, wn, wdp;
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  bool fast = ck_fv_sig_digits(bits, nd, got, &gn, &gdp);
  double a = fabs(v);
  if (!fast && isfinite(v) && a >= 1e-10 && a < 18446744073709551616.0 && nd <= 9) {
    fprintf(stderr, "ck_fv_sig_digits(%a, %d) declined\n", v, nd);
    CHECK(0);
    return;
  }
  if (fast && !(isfinite(v) && a < 18446744073709551616.0 && nd >= 1 && nd <= 19)) {
    fprintf(stderr, "ck_fv_sig_digits(%a, %d) took a value it cannot\n", v, nd);
    CHECK(0);
    return;
  }
  if (!fast) {
    return;
  }
  n_sig++;
  libc_sig(v, nd, want, &wn, &wdp);
  if (gn != wn || gdp != wdp || memcmp(got, want, (size_t)wn) != 0) {
    fprintf(stderr, "ck_fv_sig_digits(%a, %d): '%.*s' decpt %" PRId64 ", snprintf '%.*s' "
                    "decpt %" PRId64 "\n",
            v, nd, (int)gn, got, gdp, (int)wn, want, wdp);
    CHECK(0);
  }
}

static char want_text[1024], host_text[1024], dev_text[1024];

/* format(v, '.{p}<c>') for c in f % e g from the host library and from the
 * device header (count pass, write pass) against snprintf */
static void check_text(double v, int p, char c) {
  char spec[16], cfmt[8];
  bool pct = c == '%';
  snprintf(spec, sizeof spec, ".%d%c", p, c);
  snprintf(cfmt, sizeof cfmt, "%%.*%c%%s", pct ? 'f' : c);
  int wn = snprintf(want_text, sizeof want_text, cfmt, p, pct ? v * 100 : v, pct ? "%" : "");
  ck_format_spec hs;
  REQUIRE_OK(ck_format_spec_parse(spec, strlen(spec), CK_FORMAT_FLOAT, &hs));
  size_t hn = 0;
  REQUIRE_OK(ck_format_float64(host_text, sizeof host_text, &hs, v, &hn));
  ck_fv_spec fs = {hs.width, hs.precision, hs.fill, hs.kind, hs.align,
                   hs.sign,  hs.grouping,  hs.type, hs.flags};
  ck__fv_sink k0 = {NULL, 0, 0}, k1 = {(unsigned char *)dev_text, 0, 1};
  ck_fv_float(&k0, &fs, v);
  ck_fv_float(&k1, &fs, v);
  if (hn != (size_t)wn || memcmp(host_text, want_text, hn) != 0 || k0.n != wn ||
      k1.n != wn || memcmp(dev_text, want_text, (size_t)wn) != 0) {
    fprintf(stderr, "format(%a, '%s'): snprintf '%s', host '%.*s', device '%.*s' (sized %" PRId64
                    ")\n",
            v, spec, want_text, (int)hn, host_text, (int)k1.n, dev_text, k0.n);
    CHECK(0);
  }
}

/* CPython's format(v, '.{p}f') for values every path must get right */
static void test_edge_list(void) {
  static const struct {
    double v;
    int p;
    const char *text;
  } cases[] = {
      {0.125, 2, "0.12"},
      {0.375, 2, "0.38"},
      {2.5, 0, "2"},
      {0.5, 0, "0"},
      {1.5, 0, "2"},
      {9.995, 2, "9.99"},   /* 9.99499999999999921840299066388979554176330566 */
      {9.9951, 2, "10.00"}, /* across a power of ten */
      {0.045, 2, "0.04"},
      {0.9999999999999999, 15, "1.000000000000000"},
      {0.9999999999999999, 16, "0.9999999999999999"},
      {999.9999999999999, 12, "1000.000000000000"},
      {5e-324, 20, "0.00000000000000000000"},
      {2.2250738585072014e-308, 19, "0.0000000000000000000"},
      {-0.0, 2, "-0.00"},
      {-0.001, 2, "-0.00"},
      {1e-7, 7, "0.0000001"},
      {5e-8, 7, "0.0000000"},
      {2.5e-7, 7, "0.0000002"},
      {123456789.125, 2, "123456789.12"},
      {4503599627370495.5, 0, "4503599627370496"},
      {18446744073709549568.0, 2, "18446744073709549568.00"}, /* the largest below 2^64 */
      {18446744073709551616.0, 2, "18446744073709551616.00"}, /* 2^64: the other path */
      {1e19, 19, "10000000000000000000.0000000000000000000"},
      {0.1, 19, "0.1000000000000000056"},
      {0.1, 20, "0.10000000000000000555"}, /* 20 places: the other path */
      {0.3, 17, "0.29999999999999999"},
      {1e22, 2, "10000000000000000000000.00"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char spec[8], out[128];
    snprintf(spec, sizeof spec, ".%df", cases[i].p);
    ck_format_spec hs;
    REQUIRE_OK(ck_format_spec_parse(spec, strlen(spec), CK_FORMAT_FLOAT, &hs));
    size_t n = 0;
    REQUIRE_OK(ck_format_float64(out, sizeof out, &hs, cases[i].v, &n));
    if (n != strlen(cases[i].text) || memcmp(out, cases[i].text, n) != 0) {
      fprintf(stderr, "format(%a, '%s'): '%.*s', CPython '%s'\n", cases[i].v, spec, (int)n,
              out, cases[i].text);
      CHECK(0);
    }
    check_digits(cases[i].v, cases[i].p);
    check_text(cases[i].v, cases[i].p, 'f');
  }
}

/* random bit patterns: every exponent, subnormals, inf and nan (the fast
 * path declines what it does not take), a random precision */
static void test_random_bits(void) {
  long n = ck_test_scaled(1000000);
  for (long i = 0; i < n; i++) {
    double v = from_bits(rnd());
    check_digits(v, (int)(rnd() % 21));
  }
  for (long i = 0; i < ck_test_scaled(200000); i++) { /* subnormals */
    check_digits(from_bits(rnd() & ((1ULL << 52) - 1)), (int)(rnd() % 21));
  }
}

/* values below 2^64 down to 2^-70, every precision 0..20 */
static void test_every_precision(void) {
  long n = ck_test_scaled(50000);
  for (long i = 0; i < n; i++) {
    double v = rnd_value(-70, 64);
    for (int p = 0; p <= 20; p++) {
      check_digits(v, p);
    }
  }
}

/* exact ties at p places, j / 2^(p + 1) with j odd, and the doubles either
 * side: half to even on the exact value */
static void test_ties(void) {
  long n = ck_test_scaled(60000);
  for (long i = 0; i < n; i++) {
    int p = (int)(rnd() % 20);
    int bits = 1 + (int)(rnd() % 53);
    uint64_t j = (rnd() >> (64 - bits)) | 1u;
    double v = ldexp((double)j, -(p + 1));
    check_digits(v, p);
    check_digits(nextafter(v, 0.0), p);
    check_digits(nextafter(v, INFINITY), p);
  }
  /* across a power of ten: 10^k - 10^-p / 2 and its neighbours */
  for (int k = -19; k <= 19; k++) {
    for (int p = 0; p <= 19; p++) {
      double v = pow(10.0, k) - 0.5 * pow(10.0, -p);
      if (v > 0) {
        check_digits(v, p);
        check_digits(nextafter(v, 0.0), p);
        check_digits(nextafter(v, INFINITY), p);
      }
    }
  }
}

/* 'e' and 'g' digits (mode 2): every count of significant digits 1..20 on
 * values of every magnitude below 2^64, exact ties (j / 2^s written with
 * nd digits: j odd, ties at the last kept digit) and neighbours, integers
 * rounded at a power of ten, and crossings of a power of ten */
static void test_significant(void) {
  long n = ck_test_scaled(30000);
  for (long i = 0; i < n; i++) {
    double v = rnd_value(-75, 64);
    for (int nd = 1; nd <= 20; nd++) {
      check_sig(v, nd);
    }
    /* a tie: j / 2^s has s digits after the point, s + its integer digits */
    int s2 = (int)(rnd() % 12);
    uint64_t j = (rnd() >> (11 + rnd() % 40)) | 1u;
    double t = ldexp((double)j, -s2);
    int k = t >= 1 ? (int)floor(log10(t)) + 1 : 0;
    if (k + s2 - 1 >= 1 && k + s2 - 1 <= 19) {
      check_sig(t, k + s2 - 1);
      check_sig(nextafter(t, 0.0), k + s2 - 1);
      check_sig(nextafter(t, INFINITY), k + s2 - 1);
    }
    /* an integer rounded at 10^c (with a half-way remainder when c allows) */
    uint64_t m = rnd() >> (rnd() % 12);
    double w = (double)m;
    for (int nd = 1; nd <= 19; nd += 3) {
      check_sig(w, nd);
    }
  }
  for (int e10 = -19; e10 <= 19; e10++) {
    for (int nd = 1; nd <= 19; nd++) {
      double v = pow(10.0, e10) * (1 - 0.5 * pow(10.0, -nd));
      check_sig(v, nd);
      check_sig(nextafter(v, 0.0), nd);
      check_sig(nextafter(v, INFINITY), nd);
      check_sig(5 * pow(10.0, e10), nd);
    }
  }
  check_sig(0.0, 3);
  printf("'e'/'g' fast-path comparisons: %ld\n", n_sig);
  CHECK(n_sig > ck_test_scaled(400000));
}

/* the full texts: the host library and the device header at precisions
 * 0..30 (beyond 19 places, and 2^64 and up, the other paths), 'f', '%',
 * 'e' and 'g', both signs */
static void test_texts(void) {
  long n = ck_test_scaled(6000);
  for (long i = 0; i < n; i++) {
    double v = (i % 3 == 0) ? rnd_value(-70, 80) : rnd_value(-30, 40);
    if (rnd() & 1) {
      v = -v;
    }
    for (int p = 0; p <= 30; p++) {
      check_text(v, p, 'f');
    }
    check_text(v, (int)(rnd() % 12), '%');
    for (int p = 0; p <= 22; p += 1 + (int)(rnd() % 3)) {
      check_text(v, p, 'e');
      check_text(v, p, 'g');
    }
  }
  for (int p = 0; p <= 30; p++) {
    check_text(-0.0, p, 'f');
    check_text(5e-324, p, 'f');
    check_text(1e300, p % 4, 'f');
    check_text(-0.0, p, 'e');
    check_text(5e-324, p, 'g');
    check_text(1e300, p % 4, 'e');
  }
}

/* the caller's floating-point flags stay as they were, raised or clear, on
 * the integer path (no save and restore) and on the others ('%': v * 100;
 * a signalling NaN; snprintf beyond 19 places) */
static void test_flags_kept(void) {
  /* valgrind does not model the SSE status flags (the texts are still made) */
  bool model = getenv("CK_UNDER_VALGRIND") == NULL;
  static const char *const specs[] = {".2f", ".2%", ".25f", "F"};
  double sn = from_bits(0x7FF4000000000000ULL); /* a signalling NaN */
  const double vals[] = {0.1, 1e300, 3.0, sn};
  char out[512];
  size_t n;
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    ck_format_spec hs;
    REQUIRE_OK(ck_format_spec_parse(specs[i], strlen(specs[i]), CK_FORMAT_FLOAT, &hs));
    for (size_t j = 0; j < sizeof vals / sizeof vals[0]; j++) {
      feclearexcept(FE_ALL_EXCEPT);
      CHECK_OK(ck_format_float64(out, sizeof out, &hs, vals[j], &n));
      CHECK(!model || fetestexcept(FE_ALL_EXCEPT) == 0);
      feraiseexcept(FE_INEXACT | FE_UNDERFLOW);
      CHECK_OK(ck_format_float64(out, sizeof out, &hs, vals[j], &n));
      CHECK(!model || fetestexcept(FE_ALL_EXCEPT) == (FE_INEXACT | FE_UNDERFLOW));
    }
  }
  feclearexcept(FE_ALL_EXCEPT);
}

/* run after the others: most of their comparisons were of the fast path */
static void test_took_the_fast_path(void) {
  printf("fast-path comparisons: %ld\n", n_fast);
  CHECK(n_fast > ck_test_scaled(1400000));
}

CK_TEST_MAIN(CK_TEST(test_edge_list), CK_TEST(test_random_bits), CK_TEST(test_every_precision),
             CK_TEST(test_ties), CK_TEST(test_significant), CK_TEST(test_texts), CK_TEST(test_flags_kept),
             CK_TEST(test_took_the_fast_path))
