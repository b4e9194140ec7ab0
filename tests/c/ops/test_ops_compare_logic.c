/* Built-in comparison, logical, bitwise/shift and minimum/maximum kernels
 * (three small families grouped in one program).  Integer comparisons are
 * checked for every pair of edge values of each integer type against the
 * comparison of the values widened to 128 bits; the rest are hand-written
 * tables (checked against numpy 2.4). */
#include "ops_test_util.h"

__extension__ typedef __int128 i128;

static const ck_type_id int_types[8] = {CK_TYPE_INT8,  CK_TYPE_INT16,  CK_TYPE_INT32,
                                        CK_TYPE_INT64, CK_TYPE_UINT8,  CK_TYPE_UINT16,
                                        CK_TYPE_UINT32, CK_TYPE_UINT64};

static bool is_signed(ck_type_id t) { return t >= CK_TYPE_INT8 && t <= CK_TYPE_INT64; }

static i128 load_int(ck_type_id t, const void *p) {
  size_t n = ot_size(t);
  uint64_t u = 0;
  memcpy(&u, p, n);
  if (is_signed(t) && n < 8 && (u >> (n * 8 - 1)) != 0) {
    return (i128)u - ((i128)1 << (n * 8));
  }
  if (is_signed(t) && n == 8) {
    return (i128)(int64_t)u;
  }
  return (i128)u;
}

static const char *const cmp_ops[6] = {"equal",   "not_equal", "less",
                                       "less_equal", "greater", "greater_equal"};

static bool cmp_want(int o, i128 a, i128 b) {
  switch (o) {
  case 0: return a == b;
  case 1: return a != b;
  case 2: return a < b;
  case 3: return a <= b;
  case 4: return a > b;
  default: return a >= b;
  }
}

static void test_compare_ints(void) {
  /* every type against every type (same and mixed, through promotion and
   * the exact int64/uint64 kernels) */
  static const uint64_t raw[] = {0, 1, UINT64_MAX, 0x7f, 0x80, 0xff, 0x7fff, 0x8000,
                                 0x7fffffff, 0x80000000u, UINT64_C(0x7fffffffffffffff),
                                 UINT64_C(0x8000000000000000)};
  for (int ta = 0; ta < 8; ta++) {
    for (int tb = 0; tb < 8; tb++) {
      ck_type_id A = int_types[ta], B = int_types[tb];
      ck_type_id kargs[2];
      const ck_op *less = ot_op("less");
      ck_type_id in[2] = {A, B};
      REQUIRE_OK(ck_op_resolve(less, 2, in, NULL, kargs));
      /* promotion through float64 (int8 vs uint64 etc.) is inexact for
       * large values, as in numpy; compare exactly only where it is exact */
      bool exact = kargs[0] != CK_TYPE_FLOAT64;
      for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        for (size_t j = 0; j < sizeof raw / sizeof raw[0]; j++) {
          i128 a = load_int(A, &raw[i]), b = load_int(B, &raw[j]);
          if (!exact && (a > ((i128)1 << 53) || b > ((i128)1 << 53))) {
            continue;
          }
          for (int o = 0; o < 6; o++) {
            uint8_t r = 0x55;
            ck_type_id ret = CK_TYPE_UNINITIALIZED;
            CHECK(ot_call2(cmp_ops[o], A, &raw[i], B, &raw[j], &r, &ret) == 0);
            bool ok = ret == CK_TYPE_BOOL && r == cmp_want(o, a, b);
            if (!ok) {
              fprintf(stderr, "%s(%s %lld, %s %llu) = %d\n", cmp_ops[o], ck_type_id_name(A),
                      (long long)a, ck_type_id_name(B), (unsigned long long)b, r);
            }
            CHECK(ok);
          }
        }
      }
    }
  }
  int64_t m1 = -1;
  uint64_t umax = UINT64_MAX;
  uint8_t r;
  CHECK(ot_call2("less", CK_TYPE_INT64, &m1, CK_TYPE_UINT64, &umax, &r, NULL) == 0 && r == 1);
  CHECK(ot_call2("equal", CK_TYPE_UINT64, &umax, CK_TYPE_INT64, &m1, &r, NULL) == 0 && r == 0);
}

static void test_compare_floats(void) {
  /* a, b, then equal, not_equal, less, less_equal, greater, greater_equal */
  struct {
    double a, b;
    uint8_t want[6];
  } f[] = {
      {1.0, 2.0, {0, 1, 1, 1, 0, 0}},
      {-0.0, 0.0, {1, 0, 0, 1, 0, 1}},
      {NAN, NAN, {0, 1, 0, 0, 0, 0}},
      {NAN, 1.0, {0, 1, 0, 0, 0, 0}},
      {-INFINITY, INFINITY, {0, 1, 1, 1, 0, 0}},
      {1e308, INFINITY, {0, 1, 1, 1, 0, 0}},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    float fa = (float)f[i].a, fb = (float)f[i].b;
    for (int o = 0; o < 6; o++) {
      uint8_t r64 = 9, r32 = 9;
      CHECK(ot_call2(cmp_ops[o], CK_TYPE_FLOAT64, &f[i].a, CK_TYPE_FLOAT64, &f[i].b, &r64,
                     NULL) == 0);
      CHECK(r64 == f[i].want[o]);
      if (f[i].a != 1e308) {
        CHECK(ot_call2(cmp_ops[o], CK_TYPE_FLOAT32, &fa, CK_TYPE_FLOAT32, &fb, &r32, NULL) == 0);
        CHECK(r32 == f[i].want[o]);
      }
    }
  }
  /* float16: 1 < 1 + 2^-10; -0 == 0; NaN != NaN */
  uint16_t one = 0x3c00, next = 0x3c01, nz = 0x8000, z = 0, nan = 0x7e00;
  uint8_t r;
  CHECK(ot_call2("less", CK_TYPE_FLOAT16, &one, CK_TYPE_FLOAT16, &next, &r, NULL) == 0 && r == 1);
  CHECK(ot_call2("equal", CK_TYPE_FLOAT16, &nz, CK_TYPE_FLOAT16, &z, &r, NULL) == 0 && r == 1);
  CHECK(ot_call2("not_equal", CK_TYPE_FLOAT16, &nan, CK_TYPE_FLOAT16, &nan, &r, NULL) == 0 &&
        r == 1);
  /* float16 against int8 -> float16 kernels: 2048 vs 127 */
  uint16_t h2048 = 0x6800;
  int8_t i127 = 127;
  CHECK(ot_call2("greater", CK_TYPE_FLOAT16, &h2048, CK_TYPE_INT8, &i127, &r, NULL) == 0 &&
        r == 1);
  /* complex: numpy's lexicographic order */
  struct {
    ot_c128 a, b;
    uint8_t want[6];
  } c[] = {
      {{1, 2}, {1, 3}, {0, 1, 1, 1, 0, 0}},
      {{1, 2}, {2, 0}, {0, 1, 1, 1, 0, 0}},
      {{1, NAN}, {2, 0}, {0, 1, 0, 0, 0, 0}},
      {{NAN, 0}, {NAN, 0}, {0, 1, 0, 0, 0, 0}},
      {{-0.0, 1}, {0, 1}, {1, 0, 0, 1, 0, 1}},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    ot_c64 a64 = {(float)c[i].a.re, (float)c[i].a.im}, b64 = {(float)c[i].b.re, (float)c[i].b.im};
    for (int o = 0; o < 6; o++) {
      uint8_t r1 = 9, r2 = 9;
      CHECK(ot_call2(cmp_ops[o], CK_TYPE_COMPLEX128, &c[i].a, CK_TYPE_COMPLEX128, &c[i].b, &r1,
                     NULL) == 0);
      CHECK(ot_call2(cmp_ops[o], CK_TYPE_COMPLEX64, &a64, CK_TYPE_COMPLEX64, &b64, &r2, NULL) == 0);
      CHECK(r1 == c[i].want[o] && r2 == c[i].want[o]);
    }
  }
  /* bool: false < true, any nonzero byte is true */
  uint8_t t = 1, t2 = 2, f0 = 0;
  CHECK(ot_call2("equal", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &t2, &r, NULL) == 0 && r == 1);
  CHECK(ot_call2("less", CK_TYPE_BOOL, &f0, CK_TYPE_BOOL, &t2, &r, NULL) == 0 && r == 1);
}

static void test_logical(void) {
  /* truthiness: NaN true, -0.0 false, complex either part */
  double vals[] = {0.0, -0.0, 1.0, NAN, -INFINITY};
  uint8_t truth[] = {0, 0, 1, 1, 1};
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 5; j++) {
      uint8_t r_and, r_or, r_xor;
      CHECK(ot_call2("logical_and", CK_TYPE_FLOAT64, &vals[i], CK_TYPE_FLOAT64, &vals[j], &r_and,
                     NULL) == 0);
      CHECK(ot_call2("logical_or", CK_TYPE_FLOAT64, &vals[i], CK_TYPE_FLOAT64, &vals[j], &r_or,
                     NULL) == 0);
      CHECK(ot_call2("logical_xor", CK_TYPE_FLOAT64, &vals[i], CK_TYPE_FLOAT64, &vals[j], &r_xor,
                     NULL) == 0);
      CHECK(r_and == (truth[i] && truth[j]) && r_or == (truth[i] || truth[j]) &&
            r_xor == (truth[i] != truth[j]));
    }
    uint8_t r_not;
    ck_type_id ret = CK_TYPE_UNINITIALIZED;
    CHECK(ot_call1("logical_not", CK_TYPE_FLOAT64, &vals[i], &r_not, &ret) == 0);
    CHECK(r_not == !truth[i] && ret == CK_TYPE_BOOL);
  }
  uint16_t hnz = 0x8000, hnan = 0x7e01;
  uint8_t r;
  CHECK(ot_call1("logical_not", CK_TYPE_FLOAT16, &hnz, &r, NULL) == 0 && r == 1);
  CHECK(ot_call1("logical_not", CK_TYPE_FLOAT16, &hnan, &r, NULL) == 0 && r == 0);
  ot_c128 j1 = {0, 1}, z = {0, 0};
  CHECK(ot_call2("logical_xor", CK_TYPE_COMPLEX128, &j1, CK_TYPE_COMPLEX128, &z, &r, NULL) == 0 &&
        r == 1);
  int64_t i0 = 0, imin = INT64_MIN;
  CHECK(ot_call2("logical_or", CK_TYPE_INT64, &i0, CK_TYPE_INT64, &imin, &r, NULL) == 0 && r == 1);
  /* mixed: int8 and float32 -> float32 kernel, result bool */
  int8_t i8 = 0;
  float f = 0.5f;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call2("logical_and", CK_TYPE_INT8, &i8, CK_TYPE_FLOAT32, &f, &r, &ret) == 0);
  CHECK(r == 0 && ret == CK_TYPE_BOOL);
}

static void test_bitwise_shift(void) {
  int8_t a = 0x5a, b = (int8_t)0xf0, r;
  CHECK(ot_call2("bitwise_and", CK_TYPE_INT8, &a, CK_TYPE_INT8, &b, &r, NULL) == 0 && r == 0x50);
  CHECK(ot_call2("bitwise_or", CK_TYPE_INT8, &a, CK_TYPE_INT8, &b, &r, NULL) == 0 &&
        r == (int8_t)0xfa);
  CHECK(ot_call2("bitwise_xor", CK_TYPE_INT8, &a, CK_TYPE_INT8, &b, &r, NULL) == 0 &&
        r == (int8_t)0xaa);
  int8_t z8 = 0;
  CHECK(ot_call1("invert", CK_TYPE_INT8, &z8, &r, NULL) == 0 && r == -1);
  CHECK(ot_call1("bitwise_not", CK_TYPE_INT8, &z8, &r, NULL) == 0 && r == -1);
  uint8_t u0 = 0, ur;
  CHECK(ot_call1("invert", CK_TYPE_UINT8, &u0, &ur, NULL) == 0 && ur == 255);
  uint8_t t = 1, t2 = 2, br;
  CHECK(ot_call1("invert", CK_TYPE_BOOL, &t2, &br, NULL) == 0 && br == 0);
  CHECK(ot_call2("bitwise_and", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &t2, &br, NULL) == 0 && br == 1);
  uint64_t ua = UINT64_C(0xff00ff00ff00ff00), ub = UINT64_C(0x0ff00ff00ff00ff0), u64r;
  CHECK(ot_call2("bitwise_xor", CK_TYPE_UINT64, &ua, CK_TYPE_UINT64, &ub, &u64r, NULL) == 0 &&
        u64r == (ua ^ ub));
  double d = 1.0;
  CHECK(ot_call2("bitwise_and", CK_TYPE_FLOAT64, &d, CK_TYPE_FLOAT64, &d, &d, NULL) ==
        CK_ERR_TYPE);
  CHECK(ot_call1("invert", CK_TYPE_FLOAT32, &d, &d, NULL) == CK_ERR_TYPE);

  /* shifts: counts outside [0, width) are not UB */
  struct {
    const char *op;
    ck_type_id t;
    int64_t a, b, want;
  } s[] = {
      {"left_shift", CK_TYPE_INT8, 1, 7, -128},
      {"left_shift", CK_TYPE_INT8, 1, 8, 0},
      {"left_shift", CK_TYPE_INT8, -1, 3, -8},
      {"right_shift", CK_TYPE_INT8, -5, 100, -1},
      {"right_shift", CK_TYPE_INT8, 5, 100, 0},
      {"right_shift", CK_TYPE_INT8, -128, 7, -1},
      {"right_shift", CK_TYPE_INT32, -5, -1, -1},
      {"left_shift", CK_TYPE_INT32, 3, -1, 0},
      {"left_shift", CK_TYPE_INT32, 1, 31, INT32_MIN},
      {"left_shift", CK_TYPE_INT32, 1, 32, 0},
      {"right_shift", CK_TYPE_INT64, INT64_MIN, 63, -1},
      {"right_shift", CK_TYPE_INT64, INT64_MIN, 64, -1},
      {"left_shift", CK_TYPE_INT64, -1, 63, INT64_MIN},
      {"left_shift", CK_TYPE_INT64, 1, 64, 0},
      {"right_shift", CK_TYPE_UINT8, 255, 8, 0},
      {"right_shift", CK_TYPE_UINT8, 255, 7, 1},
      {"left_shift", CK_TYPE_UINT16, 0xffff, 4, 0xfff0},
      {"left_shift", CK_TYPE_UINT64, 1, 63, INT64_MIN}, /* 2^63 as bits */
      {"right_shift", CK_TYPE_UINT32, 0x80000000, 31, 1},
      {"right_shift", CK_TYPE_UINT32, 0x80000000, 1000, 0},
  };
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
    char a8[8], b8[8], r8[8];
    size_t n = ot_size(s[i].t);
    memcpy(a8, &s[i].a, n); /* little-endian low bytes */
    memcpy(b8, &s[i].b, n);
    ck_type_id ret = CK_TYPE_UNINITIALIZED;
    CHECK(ot_call2(s[i].op, s[i].t, a8, s[i].t, b8, r8, &ret) == 0);
    int64_t want = s[i].want;
    bool ok = ret == s[i].t && memcmp(r8, &want, n) == 0;
    if (!ok) {
      fprintf(stderr, "%s(%s %lld, %lld) wrong\n", s[i].op, ck_type_id_name(s[i].t),
              (long long)s[i].a, (long long)s[i].b);
    }
    CHECK(ok);
  }
  /* bool shifts promote to int8 */
  int8_t r8;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call2("left_shift", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &t, &r8, &ret) == 0);
  CHECK(r8 == 2 && ret == CK_TYPE_INT8);
}

static void test_minmax(void) {
  struct {
    const char *op;
    double a, b, want;
  } f[] = {
      {"minimum", NAN, 1.0, NAN},       {"minimum", 1.0, NAN, NAN},
      {"maximum", NAN, 1.0, NAN},       {"maximum", 1.0, NAN, NAN},
      {"fmin", NAN, 1.0, 1.0},          {"fmin", 1.0, NAN, 1.0},
      {"fmax", NAN, 1.0, 1.0},          {"fmax", 1.0, NAN, 1.0},
      {"fmin", NAN, NAN, NAN},          {"minimum", -INFINITY, 1e308, -INFINITY},
      {"maximum", -INFINITY, 1e308, 1e308}, {"minimum", 2.0, -3.0, -3.0},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    double r;
    float fa = (float)f[i].a, fb = (float)f[i].b, r32;
    CHECK(ot_call2(f[i].op, CK_TYPE_FLOAT64, &f[i].a, CK_TYPE_FLOAT64, &f[i].b, &r, NULL) == 0);
    CHECK(ot_same_f64(r, f[i].want));
    if (f[i].b != 1e308) {
      CHECK(ot_call2(f[i].op, CK_TYPE_FLOAT32, &fa, CK_TYPE_FLOAT32, &fb, &r32, NULL) == 0);
      CHECK(ot_same_f32(r32, (float)f[i].want));
    }
  }
  /* float16 keeps the chosen argument's bits */
  uint16_t hn = 0x7e00, h1 = 0x3c00, rh;
  CHECK(ot_call2("minimum", CK_TYPE_FLOAT16, &h1, CK_TYPE_FLOAT16, &hn, &rh, NULL) == 0 &&
        rh == 0x7e00);
  CHECK(ot_call2("fmax", CK_TYPE_FLOAT16, &hn, CK_TYPE_FLOAT16, &h1, &rh, NULL) == 0 &&
        rh == 0x3c00);
  /* integers */
  int64_t lo = INT64_MIN, hi = INT64_MAX, r64;
  CHECK(ot_call2("minimum", CK_TYPE_INT64, &hi, CK_TYPE_INT64, &lo, &r64, NULL) == 0 && r64 == lo);
  CHECK(ot_call2("fmax", CK_TYPE_INT64, &lo, CK_TYPE_INT64, &hi, &r64, NULL) == 0 && r64 == hi);
  uint32_t ua = 0xffffffffu, ub = 1, u32;
  CHECK(ot_call2("maximum", CK_TYPE_UINT32, &ub, CK_TYPE_UINT32, &ua, &u32, NULL) == 0 &&
        u32 == ua);
  uint8_t t = 1, f0 = 0, rb;
  CHECK(ot_call2("minimum", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &f0, &rb, NULL) == 0 && rb == 0);
  CHECK(ot_call2("maximum", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &f0, &rb, NULL) == 0 && rb == 1);
  /* mixed int8/uint8 -> int16 */
  int8_t m = -5;
  uint8_t u = 250;
  int16_t r16;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call2("maximum", CK_TYPE_INT8, &m, CK_TYPE_UINT8, &u, &r16, &ret) == 0);
  CHECK(r16 == 250 && ret == CK_TYPE_INT16);
  /* complex (numpy): minimum propagates a NaN part, fmin ignores it */
  ot_c128 cn = {1, NAN}, c2 = {2, 0}, rc;
  CHECK(ot_call2("minimum", CK_TYPE_COMPLEX128, &cn, CK_TYPE_COMPLEX128, &c2, &rc, NULL) == 0);
  CHECK(rc.re == 1 && isnan(rc.im));
  CHECK(ot_call2("minimum", CK_TYPE_COMPLEX128, &c2, CK_TYPE_COMPLEX128, &cn, &rc, NULL) == 0);
  CHECK(rc.re == 1 && isnan(rc.im));
  CHECK(ot_call2("fmin", CK_TYPE_COMPLEX128, &cn, CK_TYPE_COMPLEX128, &c2, &rc, NULL) == 0);
  CHECK(rc.re == 2 && rc.im == 0);
  ot_c128 a = {1, 5}, b = {1, -5};
  CHECK(ot_call2("maximum", CK_TYPE_COMPLEX128, &a, CK_TYPE_COMPLEX128, &b, &rc, NULL) == 0);
  CHECK(rc.re == 1 && rc.im == 5);
  ot_c64 a64 = {-1, 0}, b64 = {0, -9}, r64c;
  CHECK(ot_call2("minimum", CK_TYPE_COMPLEX64, &a64, CK_TYPE_COMPLEX64, &b64, &r64c, NULL) == 0);
  CHECK(r64c.re == -1 && r64c.im == 0);
}

/* Contiguous float64 minimum over a long array (the vectorised path) with
 * NaNs sprinkled in, against a scalar reference. */
static void test_minmax_strided(void) {
  enum { N = 777 };
  static double a[N], b[N], out[N];
  for (int i = 0; i < N; i++) {
    a[i] = (i % 13 == 0) ? NAN : sin(i * 0.37);
    b[i] = (i % 17 == 0) ? NAN : cos(i * 0.11);
  }
  const char *const ops[4] = {"minimum", "maximum", "fmin", "fmax"};
  for (int o = 0; o < 4; o++) {
    ck_kernel_builder kb;
    ck_kernel_builder_init(&kb);
    ck_type_id t[2] = {CK_TYPE_FLOAT64, CK_TYPE_FLOAT64};
    REQUIRE_OK(ck_op_make_kernel(ot_op(ops[o]), &kb, 0, CK_KERNEL_REQUEST_STRIDED, 2, t, NULL,
                                 NULL));
    ck_prefix *k = ck_kernel_builder_get(&kb, 0);
    const char *src[2] = {(const char *)a, (const char *)b};
    intptr_t ss[2] = {8, 8};
    CHECK(ck_prefix_strided(k)((char *)out, 8, src, ss, N, k) == 0);
    bool ok = true;
    for (int i = 0; i < N; i++) {
      double w;
      bool an = isnan(a[i]), bn = isnan(b[i]);
      if (o < 2) {
        w = an ? a[i] : bn ? b[i] : (o == 0 ? (a[i] < b[i] ? a[i] : b[i])
                                            : (a[i] > b[i] ? a[i] : b[i]));
      } else {
        w = bn ? a[i] : an ? b[i] : (o == 2 ? (a[i] < b[i] ? a[i] : b[i])
                                            : (a[i] > b[i] ? a[i] : b[i]));
      }
      ok = ok && ot_same_f64(out[i], w);
    }
    CHECK(ok);
    ck_kernel_builder_destroy(&kb);
  }
}

CK_TEST_MAIN(CK_TEST(test_compare_ints), CK_TEST(test_compare_floats),
             CK_TEST(test_logical), CK_TEST(test_bitwise_shift), CK_TEST(test_minmax),
             CK_TEST(test_minmax_strided))
