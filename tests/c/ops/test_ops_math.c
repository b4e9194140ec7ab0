/* Built-in math kernels.  Transcendental functions are compared in ulps
 * against long double references (tolerances allow for valgrind, which
 * computes long double in double precision); exact functions (floor, rint,
 * sign, square, reciprocal, isnan, ...) against hand-written values.
 * Integer arguments promote as numpy does (sqrt(int8) -> float16, ...). */
#include "ops_test_util.h"

typedef struct {
  const char *op;
  long double (*ref)(long double);
} real_fn;

static const real_fn real_fns[] = {
    {"sqrt", sqrtl},   {"exp", expl},     {"exp2", exp2l},   {"expm1", expm1l},
    {"log", logl},     {"log2", log2l},   {"log10", log10l}, {"log1p", log1pl},
    {"sin", sinl},     {"cos", cosl},     {"tan", tanl},     {"arcsin", asinl},
    {"arccos", acosl}, {"arctan", atanl}, {"sinh", sinhl},   {"cosh", coshl},
    {"tanh", tanhl},   {"floor", floorl}, {"ceil", ceill},   {"trunc", truncl},
    {"rint", rintl}};

static void test_real_functions(void) {
  static const double xs[] = {0.0,  -0.0, 0.5,  -0.5, 1.0,   -1.0, 2.5,   -2.5, 3.0,
                              0.1,  1e-8, 10.0, 100.0, 700.0, 1e308, INFINITY,
                              -INFINITY, NAN};
  for (size_t f = 0; f < sizeof real_fns / sizeof real_fns[0]; f++) {
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
      double x = xs[i], r;
      ck_type_id ret = CK_TYPE_UNINITIALIZED;
      CHECK(ot_call1(real_fns[f].op, CK_TYPE_FLOAT64, &x, &r, &ret) == 0);
      double want = (double)real_fns[f].ref((long double)x);
      double tol = 4;
      bool ok = ret == CK_TYPE_FLOAT64 && ot_ulps(r, want) <= tol;
      if (!ok) {
        fprintf(stderr, "%s(%a) = %a, want %a\n", real_fns[f].op, x, r, want);
      }
      CHECK(ok);
      /* float32: the f-suffixed function, within 2 ulps of the exact value */
      float xf = (float)x, rf;
      CHECK(ot_call1(real_fns[f].op, CK_TYPE_FLOAT32, &xf, &rf, &ret) == 0);
      double wantf = (double)real_fns[f].ref((long double)xf);
      ok = ret == CK_TYPE_FLOAT32 &&
           (ot_ulpsf(rf, wantf) <= 2 || (isinf(rf) && fabs(wantf) > 3.4e38));
      if (!ok) {
        fprintf(stderr, "%sf(%a) = %a, want %a\n", real_fns[f].op, (double)xf, (double)rf, wantf);
      }
      CHECK(ok);
    }
  }
  /* signed zeros and special values that must be exact */
  double nz = -0.0, m1 = -1.0, r;
  CHECK(ot_call1("sqrt", CK_TYPE_FLOAT64, &nz, &r, NULL) == 0 && ot_same_f64(r, -0.0));
  CHECK(ot_call1("sqrt", CK_TYPE_FLOAT64, &m1, &r, NULL) == 0 && isnan(r));
  CHECK(ot_call1("log", CK_TYPE_FLOAT64, &nz, &r, NULL) == 0 && isinf(r) && r < 0);
  double mh = -0.5, m25 = -2.5, p25 = 2.5;
  CHECK(ot_call1("ceil", CK_TYPE_FLOAT64, &mh, &r, NULL) == 0 && ot_same_f64(r, -0.0));
  CHECK(ot_call1("rint", CK_TYPE_FLOAT64, &m25, &r, NULL) == 0 && r == -2.0);
  CHECK(ot_call1("rint", CK_TYPE_FLOAT64, &p25, &r, NULL) == 0 && r == 2.0);
  CHECK(ot_call1("floor", CK_TYPE_FLOAT64, &m25, &r, NULL) == 0 && r == -3.0);
  CHECK(ot_call1("trunc", CK_TYPE_FLOAT64, &m25, &r, NULL) == 0 && r == -2.0);
}

static void test_float16_and_promotion(void) {
  /* float16 computes in float32 and rounds once (bits from numpy) */
  struct {
    const char *op;
    uint16_t x, want;
  } h[] = {
      {"sqrt", 0x4000, 0x3da8}, /* sqrt(2) = 1.414 */
      {"exp", 0x3c00, 0x4170},  /* e = 2.719 */
      {"sin", 0x3c00, 0x3abb},  /* 0.8413 */
      {"floor", 0xc100, 0xc200}, /* floor(-2.5) = -3 */
      {"exp", 0x4c00, 0x7c00},  /* exp(16) overflows float16 */
  };
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
    uint16_t r = 0;
    ck_type_id ret = CK_TYPE_UNINITIALIZED;
    CHECK(ot_call1(h[i].op, CK_TYPE_FLOAT16, &h[i].x, &r, &ret) == 0);
    CHECK(r == h[i].want && ret == CK_TYPE_FLOAT16);
  }
  /* numpy's promotion of integer arguments */
  int8_t i8 = 4;
  uint16_t r16;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call1("sqrt", CK_TYPE_INT8, &i8, &r16, &ret) == 0);
  CHECK(ret == CK_TYPE_FLOAT16 && r16 == 0x4000);
  int16_t i16 = 2;
  float r32;
  CHECK(ot_call1("sqrt", CK_TYPE_INT16, &i16, &r32, &ret) == 0);
  CHECK(ret == CK_TYPE_FLOAT32 && r32 == sqrtf(2.0f));
  int32_t i32 = 2;
  double r64;
  CHECK(ot_call1("sqrt", CK_TYPE_INT32, &i32, &r64, &ret) == 0);
  CHECK(ret == CK_TYPE_FLOAT64 && r64 == sqrt(2.0));
  uint64_t u64 = UINT64_MAX;
  CHECK(ot_call1("log2", CK_TYPE_UINT64, &u64, &r64, &ret) == 0);
  CHECK(ret == CK_TYPE_FLOAT64 && r64 == 64.0); /* 2^64 - 1 rounds to 2^64 */
  uint8_t t = 1;
  CHECK(ot_call1("exp", CK_TYPE_BOOL, &t, &r16, &ret) == 0);
  CHECK(ret == CK_TYPE_FLOAT16 && r16 == 0x4170);
}

static void test_binary_real(void) {
  struct {
    const char *op;
    double a, b, want;
  } c[] = {
      {"arctan2", 1.0, 1.0, 0.7853981633974483},
      {"arctan2", 0.0, -0.0, 3.141592653589793},
      {"arctan2", -0.0, -0.0, -3.141592653589793},
      {"arctan2", 0.0, 0.0, 0.0},
      {"arctan2", INFINITY, INFINITY, 0.7853981633974483},
      {"hypot", 3.0, 4.0, 5.0},
      {"hypot", INFINITY, NAN, INFINITY},
      {"hypot", 1e308, 1e308, 1.4142135623730951e308},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    double r;
    CHECK(ot_call2(c[i].op, CK_TYPE_FLOAT64, &c[i].a, CK_TYPE_FLOAT64, &c[i].b, &r, NULL) == 0);
    CHECK(ot_ulps(r, c[i].want) <= 1);
  }
  float fa = 3, fb = 4, fr;
  CHECK(ot_call2("hypot", CK_TYPE_FLOAT32, &fa, CK_TYPE_FLOAT32, &fb, &fr, NULL) == 0 && fr == 5);
  int8_t i8 = 1;
  int16_t i16 = 1;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call2("arctan2", CK_TYPE_INT8, &i8, CK_TYPE_INT16, &i16, &fr, &ret) == 0);
  CHECK(ret == CK_TYPE_FLOAT32 && ot_ulpsf(fr, 0.7853981633974483) <= 1);
  ot_c128 z = {1, 0};
  CHECK(ot_call2("arctan2", CK_TYPE_COMPLEX128, &z, CK_TYPE_COMPLEX128, &z, &fr, NULL) ==
        CK_ERR_TYPE);
}

static void test_exact_unary(void) {
  /* sign */
  double s_in[] = {-3.0, 0.0, -0.0, 2.5, NAN, -INFINITY};
  double s_out[] = {-1.0, 0.0, 0.0, 1.0, NAN, -1.0};
  for (int i = 0; i < 6; i++) {
    double r;
    CHECK(ot_call1("sign", CK_TYPE_FLOAT64, &s_in[i], &r, NULL) == 0);
    CHECK(ot_same_f64(r, s_out[i]));
  }
  int8_t m = INT8_MIN, r8;
  CHECK(ot_call1("sign", CK_TYPE_INT8, &m, &r8, NULL) == 0 && r8 == -1);
  uint8_t u5 = 5, ru;
  CHECK(ot_call1("sign", CK_TYPE_UINT8, &u5, &ru, NULL) == 0 && ru == 1);
  ot_c128 c34 = {3, 4}, rc;
  CHECK(ot_call1("sign", CK_TYPE_COMPLEX128, &c34, &rc, NULL) == 0);
  CHECK(ot_ulps(rc.re, 0.6) <= 1 && ot_ulps(rc.im, 0.8) <= 1);
  /* square */
  int8_t i12 = 12, i16v = 16;
  CHECK(ot_call1("square", CK_TYPE_INT8, &i12, &r8, NULL) == 0 && r8 == -112);
  CHECK(ot_call1("square", CK_TYPE_INT8, &i16v, &r8, NULL) == 0 && r8 == 0);
  ot_c128 c12 = {1, 2};
  CHECK(ot_call1("square", CK_TYPE_COMPLEX128, &c12, &rc, NULL) == 0 && rc.re == -3 && rc.im == 4);
  double big = 1e200, r;
  CHECK(ot_call1("square", CK_TYPE_FLOAT64, &big, &r, NULL) == 0 && isinf(r));
  /* reciprocal */
  int32_t iv[] = {2, 1, -1, INT32_MIN}, iw[] = {0, 1, -1, 0}, ri;
  for (int i = 0; i < 4; i++) {
    CHECK(ot_call1("reciprocal", CK_TYPE_INT32, &iv[i], &ri, NULL) == 0 && ri == iw[i]);
  }
  int32_t zero = 0;
  CHECK(ot_call1("reciprocal", CK_TYPE_INT32, &zero, &ri, NULL) == CK_ERR_ZERO_DIVISION);
  CHECK(strcmp(ck_last_error(), "reciprocal: integer division by zero (int32)") == 0);
  double four = 4.0, nz = -0.0;
  CHECK(ot_call1("reciprocal", CK_TYPE_FLOAT64, &four, &r, NULL) == 0 && r == 0.25);
  CHECK(ot_call1("reciprocal", CK_TYPE_FLOAT64, &nz, &r, NULL) == 0 && isinf(r) && r < 0);
  ot_c128 c2j = {0, 2};
  CHECK(ot_call1("reciprocal", CK_TYPE_COMPLEX128, &c2j, &rc, NULL) == 0);
  CHECK(rc.re == 0 && rc.im == -0.5);
  /* floor/ceil/trunc keep integer types (numpy 2) */
  int32_t seven = 7;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call1("floor", CK_TYPE_INT32, &seven, &ri, &ret) == 0 && ri == 7 &&
        ret == CK_TYPE_INT32);
  uint8_t t2 = 2, rb;
  CHECK(ot_call1("ceil", CK_TYPE_BOOL, &t2, &rb, &ret) == 0 && rb == 1 && ret == CK_TYPE_BOOL);
  /* rint has no integer kernel: float64 */
  CHECK(ot_call1("rint", CK_TYPE_INT32, &seven, &r, &ret) == 0 && r == 7.0 &&
        ret == CK_TYPE_FLOAT64);
}

static void test_classify(void) {
  struct {
    double x;
    uint8_t nan, inf, fin;
  } c[] = {{0.0, 0, 0, 1}, {-0.0, 0, 0, 1}, {1e308, 0, 0, 1}, {INFINITY, 0, 1, 0},
           {-INFINITY, 0, 1, 0}, {NAN, 1, 0, 0}, {0x1p-1074, 0, 0, 1}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    uint8_t a, b, d;
    ck_type_id ret = CK_TYPE_UNINITIALIZED;
    CHECK(ot_call1("isnan", CK_TYPE_FLOAT64, &c[i].x, &a, &ret) == 0 && ret == CK_TYPE_BOOL);
    CHECK(ot_call1("isinf", CK_TYPE_FLOAT64, &c[i].x, &b, NULL) == 0);
    CHECK(ot_call1("isfinite", CK_TYPE_FLOAT64, &c[i].x, &d, NULL) == 0);
    CHECK(a == c[i].nan && b == c[i].inf && d == c[i].fin);
    float xf = (float)c[i].x;
    CHECK(ot_call1("isnan", CK_TYPE_FLOAT32, &xf, &a, NULL) == 0);
    CHECK(ot_call1("isfinite", CK_TYPE_FLOAT32, &xf, &d, NULL) == 0);
    bool inf32 = c[i].x == 1e308; /* overflows float32 */
    CHECK(a == c[i].nan && d == (c[i].fin && !inf32));
  }
  uint16_t hn = 0x7e00, hi = 0xfc00, h1 = 0x3c00;
  uint8_t r;
  CHECK(ot_call1("isnan", CK_TYPE_FLOAT16, &hn, &r, NULL) == 0 && r == 1);
  CHECK(ot_call1("isinf", CK_TYPE_FLOAT16, &hi, &r, NULL) == 0 && r == 1);
  CHECK(ot_call1("isfinite", CK_TYPE_FLOAT16, &h1, &r, NULL) == 0 && r == 1);
  ot_c128 cn = {1, NAN}, ci = {INFINITY, 0};
  CHECK(ot_call1("isnan", CK_TYPE_COMPLEX128, &cn, &r, NULL) == 0 && r == 1);
  CHECK(ot_call1("isinf", CK_TYPE_COMPLEX128, &ci, &r, NULL) == 0 && r == 1);
  CHECK(ot_call1("isfinite", CK_TYPE_COMPLEX128, &ci, &r, NULL) == 0 && r == 0);
  int64_t big = INT64_MAX;
  CHECK(ot_call1("isfinite", CK_TYPE_INT64, &big, &r, NULL) == 0 && r == 1);
  CHECK(ot_call1("isnan", CK_TYPE_INT64, &big, &r, NULL) == 0 && r == 0);
}

static void test_complex_functions(void) {
  ot_c128 m4 = {-4, 0}, r;
  CHECK(ot_call1("sqrt", CK_TYPE_COMPLEX128, &m4, &r, NULL) == 0 && r.re == 0 && r.im == 2);
  ot_c128 ipi = {0, 3.141592653589793};
  CHECK(ot_call1("exp", CK_TYPE_COMPLEX128, &ipi, &r, NULL) == 0);
  CHECK(ot_ulps(r.re, -1.0) <= 1 && fabs(r.im) < 1e-15);
  ot_c128 m1 = {-1, 0};
  CHECK(ot_call1("log", CK_TYPE_COMPLEX128, &m1, &r, NULL) == 0);
  CHECK(r.re == 0 && ot_ulps(r.im, 3.141592653589793) <= 1);
  ot_c64 f = {0, 1}, rf;
  CHECK(ot_call1("sinh", CK_TYPE_COMPLEX64, &f, &rf, NULL) == 0);
  CHECK(fabsf(rf.re) < 1e-7f && ot_ulpsf(rf.im, 0.8414709848078965) <= 2);
  ot_c128 z = {0.5, 0.25};
  const char *const fns[] = {"sin", "cos", "tan", "arcsin", "arccos", "arctan", "cosh", "tanh"};
  for (int i = 0; i < 8; i++) {
    /* on a real-ish argument the imaginary part is small and the real part
     * is near the real function's value: a sanity check of the wiring */
    ot_c128 zr = {0.5, 0};
    CHECK(ot_call1(fns[i], CK_TYPE_COMPLEX128, &zr, &r, NULL) == 0);
    double x;
    CHECK(ot_call1(fns[i], CK_TYPE_FLOAT64, &zr.re, &x, NULL) == 0);
    CHECK(ot_ulps(r.re, x) <= 4 && fabs(r.im) < 1e-15);
    CHECK(ot_call1(fns[i], CK_TYPE_COMPLEX128, &z, &r, NULL) == 0);
    CHECK(isfinite(r.re) && isfinite(r.im) && r.im != 0);
  }
  /* no complex kernels (C11 has no such functions): a type error */
  const char *const none[] = {"exp2", "expm1", "log2", "log10", "log1p", "floor", "rint"};
  for (int i = 0; i < 7; i++) {
    CHECK(ot_call1(none[i], CK_TYPE_COMPLEX128, &z, &r, NULL) == CK_ERR_TYPE);
  }
}

/* Strided unary calls: negative, zero strides and a promoting kernel across
 * several chunks. */
static void test_strided(void) {
  enum { N = 517 };
  static int16_t in[N];
  static float out[N];
  for (int i = 0; i < N; i++) {
    in[i] = (int16_t)(i * 13);
  }
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type_id t = CK_TYPE_INT16, ret = CK_TYPE_UNINITIALIZED;
  REQUIRE_OK(ck_op_make_kernel(ot_op("sqrt"), &kb, 0, CK_KERNEL_REQUEST_STRIDED, 1, &t, &ret,
                               NULL));
  CHECK(ret == CK_TYPE_FLOAT32);
  ck_prefix *k = ck_kernel_builder_get(&kb, 0);
  const char *src = (const char *)&in[N - 1];
  intptr_t ss = -2;
  CHECK(ck_prefix_strided(k)((char *)out, 4, &src, &ss, N, k) == 0);
  bool ok = true;
  for (int i = 0; i < N; i++) {
    ok = ok && out[i] == sqrtf((float)in[N - 1 - i]);
  }
  CHECK(ok);
  src = (const char *)&in[10];
  ss = 0;
  CHECK(ck_prefix_strided(k)((char *)out, 4, &src, &ss, N, k) == 0);
  ok = true;
  for (int i = 0; i < N; i++) {
    ok = ok && out[i] == sqrtf(130.0f);
  }
  CHECK(ok);
  ck_kernel_builder_destroy(&kb);
}

CK_TEST_MAIN(CK_TEST(test_real_functions), CK_TEST(test_float16_and_promotion),
             CK_TEST(test_binary_real), CK_TEST(test_exact_unary), CK_TEST(test_classify),
             CK_TEST(test_complex_functions), CK_TEST(test_strided))
