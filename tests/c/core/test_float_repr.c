/*
 * test_float_repr.c -- the shortest round-trip float64 text (str(float),
 * core/shortest.c: the Ryu algorithm behind ck_format_float64 without a
 * spec).  Known texts are CPython 3.11's repr; over random bit patterns every
 * text must read back exactly (strtod), and no text one digit shorter may
 * (rounding the value to one significant digit fewer, correctly, by
 * snprintf).  The Python suite compares with repr itself over random doubles
 * (tests/python/core/test_float_repr.py).
 */
#include "ck_test.h"

#include <float.h>
#include <math.h>

static bool repr_is(double v, const char *want) {
  char buf[64];
  size_t n = 0;
  ck_status st = ck_format_float64(buf, sizeof buf, NULL, v, &n);
  if (st != CK_OK || n != strlen(want) || memcmp(buf, want, n) != 0) {
    fprintf(stderr, "  %.17g: got \"%.*s\", want \"%s\"\n", v, (int)n, buf, want);
    return false;
  }
  return true;
}

static void test_known(void) {
  CHECK(repr_is(0.0, "0.0"));
  CHECK(repr_is(-0.0, "-0.0"));
  CHECK(repr_is(INFINITY, "inf"));
  CHECK(repr_is(-INFINITY, "-inf"));
  CHECK(repr_is(NAN, "nan"));
  CHECK(repr_is(0.1, "0.1"));
  CHECK(repr_is(0.3, "0.3"));
  CHECK(repr_is(0.1 + 0.2, "0.30000000000000004"));
  CHECK(repr_is(1.0, "1.0"));
  CHECK(repr_is(-2.5, "-2.5"));
  CHECK(repr_is(1e16, "1e+16"));
  CHECK(repr_is(9999999999999998.0, "9999999999999998.0"));
  CHECK(repr_is(1e15, "1000000000000000.0"));
  CHECK(repr_is(1e-5, "1e-05"));
  CHECK(repr_is(0.0001, "0.0001"));
  CHECK(repr_is(0.00012345, "0.00012345"));
  CHECK(repr_is(1e22, "1e+22"));
  CHECK(repr_is(1e23, "1e+23"));
  CHECK(repr_is(5e-324, "5e-324"));
  CHECK(repr_is(-5e-324, "-5e-324"));
  CHECK(repr_is(1e-323, "1e-323"));
  CHECK(repr_is(2.2250738585072014e-308, "2.2250738585072014e-308"));
  CHECK(repr_is(2.225073858507201e-308, "2.225073858507201e-308")); /* largest subnormal */
  CHECK(repr_is(DBL_MAX, "1.7976931348623157e+308"));
  CHECK(repr_is(9007199254740993.0, "9007199254740992.0"));
  CHECK(repr_is(123456789012345680.0, "1.2345678901234568e+17"));
  CHECK(repr_is(2.0 / 3.0, "0.6666666666666666"));
  CHECK(repr_is(1.0 / 3.0, "0.3333333333333333"));
  CHECK(repr_is(100.0, "100.0"));
  CHECK(repr_is(1.5e300, "1.5e+300"));
  CHECK(repr_is(8.41e21, "8.41e+21"));
  CHECK(repr_is(4.35, "4.35"));
  CHECK(repr_is(5e-310, "5e-310"));
  CHECK(repr_is(1.7976931348623155e308, "1.7976931348623155e+308"));
  CHECK(repr_is(0x1p-1022 * 3.0, "6.675221575521604e-308"));
  CHECK(repr_is(0x1p60, "1.152921504606847e+18"));
}

static uint64_t next_bits(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* the significant digits of a repr text (no sign, point, exponent, leading
 * or trailing zeros) */
static int significant_digits(const char *t, size_t n) {
  int count = 0, lead = 1, trail = 0;
  for (size_t i = 0; i < n && t[i] != 'e'; i++) {
    if (t[i] < '0' || t[i] > '9') {
      continue;
    }
    if (lead && t[i] == '0') {
      continue;
    }
    lead = 0;
    count++;
    trail = t[i] == '0' ? trail + 1 : 0;
  }
  return count - trail;
}

static void test_round_trip_and_shortest(void) {
  uint64_t seed = 29;
  long n = ck_test_scaled(200000);
  int bad_trip = 0, bad_short = 0;
  for (long k = 0; k < n; k++) {
    uint64_t bits = next_bits(&seed);
    if ((k & 3) == 1) { /* subnormals */
      bits &= (UINT64_C(1) << 52) - 1;
    } else if ((k & 3) == 2) { /* powers of two and their neighbours */
      bits = (bits & (UINT64_C(0x7ff) << 52)) | (bits >> 63);
    }
    double v;
    memcpy(&v, &bits, sizeof v);
    if (!isfinite(v) || v == 0.0) {
      continue;
    }
    char buf[64];
    size_t len = 0;
    if (ck_format_float64(buf, sizeof buf - 1, NULL, v, &len) != CK_OK || len >= sizeof buf) {
      bad_trip++;
      continue;
    }
    buf[len] = '\0';
    bad_trip += strtod(buf, NULL) != v;
    int digits = significant_digits(buf, len);
    if (digits > 1) {
      char shorter[64];
      snprintf(shorter, sizeof shorter, "%.*e", digits - 2, v);
      bad_short += strtod(shorter, NULL) == v;
    }
  }
  CHECK(bad_trip == 0);
  CHECK(bad_short == 0);
  if (bad_trip || bad_short) {
    fprintf(stderr, "  %d texts do not read back, %d are not the shortest\n", bad_trip,
            bad_short);
  }
}

static void test_truncation_contract(void) {
  /* snprintf-style: the whole length is reported, nothing past cap written */
  char buf[8];
  memset(buf, 'x', sizeof buf);
  size_t n = 0;
  CHECK_OK(ck_format_float64(buf, 4, NULL, 0.30000000000000004, &n));
  CHECK(n == 19);
  CHECK(buf[4] == 'x');
  CHECK_OK(ck_format_float64(NULL, 0, NULL, 1e-7, &n));
  CHECK(n == 5);
}

CK_TEST_MAIN(CK_TEST(test_known), CK_TEST(test_round_trip_and_shortest),
             CK_TEST(test_truncation_contract))
