/* The floating-point flags the built-in kernels raise: those NumPy reports
 * for the same operation and values (numpy.errstate sees them through the
 * ufunc path), and no others -- the values NumPy 2.4 gives are the oracle
 * here, written out.  Under valgrind (which does not model the SSE status
 * flags) only the values are checked. */
#include "ops_test_util.h"

#include <fenv.h>

#define ALL_FLAGS (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW)

static bool flags_modeled(void) { return getenv("CK_UNDER_VALGRIND") == NULL; }

/* Run `call` with the flags cleared; true when exactly `want` of
 * FE_INVALID / DIVBYZERO / OVERFLOW / UNDERFLOW were raised. */
#define RAISES(call, want)                                                     \
  (feclearexcept(FE_ALL_EXCEPT), (call),                                       \
   !flags_modeled() || fetestexcept(ALL_FLAGS) == (want))

static const ck_type_id F64 = CK_TYPE_FLOAT64, F32 = CK_TYPE_FLOAT32,
                        F16 = CK_TYPE_FLOAT16, I8 = CK_TYPE_INT8, C128 = CK_TYPE_COMPLEX128;

/* `name` over 64 contiguous float64 elements with NaNs (the vectorised
 * loop): no "invalid" raised, one raised before the call kept. */
static bool strided_is_quiet(const char *name) {
  enum { N = 64 };
  double x[N], y[N], out[N];
  for (int i = 0; i < N; i++) {
    x[i] = i % 5 == 0 ? NAN : i;
    y[i] = i % 7 == 0 ? NAN : N - i;
  }
  const ck_op *op = ot_op(name);
  ck_type_id t2[2] = {F64, F64};
  size_t nargs = ck_op_arity(op);
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  if (ck_op_make_kernel(op, &kb, 0, CK_KERNEL_REQUEST_STRIDED, nargs, t2, NULL, NULL) !=
      CK_OK) {
    ck_kernel_builder_destroy(&kb);
    return false;
  }
  ck_prefix *k = ck_kernel_builder_get(&kb, 0);
  const char *src[2] = {(const char *)x, (const char *)y};
  intptr_t ss[2] = {8, 8};
  bool quiet = RAISES(ck_prefix_strided(k)((char *)out, 8, src, ss, N, k), 0);
  feclearexcept(FE_ALL_EXCEPT);
  feraiseexcept(FE_INVALID);
  quiet = quiet && ck_prefix_strided(k)((char *)out, 8, src, ss, N, k) == CK_OK &&
          (!flags_modeled() || fetestexcept(FE_INVALID) != 0);
  ck_kernel_builder_destroy(&kb);
  if (strcmp(name, "minimum") == 0) {
    for (int i = 0; i < N; i++) {
      quiet = quiet && (isnan(x[i]) || isnan(y[i]) ? isnan(out[i]) : out[i] == fmin(x[i], y[i]));
    }
  }
  if (!quiet) {
    fprintf(stderr, "%s: a contiguous run raised \"invalid\" or lost it\n", name);
  }
  return quiet;
}

static void test_nan_is_quiet(void) {
  double nan = NAN, one = 1.0, r;
  uint8_t b = 7;
  /* sign(nan) is nan, no "invalid" */
  CHECK(RAISES(ot_call1("sign", F64, &nan, &r, NULL), 0) && isnan(r));
  double m = -2.5;
  CHECK(RAISES(ot_call1("sign", F64, &m, &r, NULL), 0) && r == -1.0);
  /* comparisons of floats with a NaN: false (not_equal true), no flag */
  static const char *const cmp[] = {"less", "less_equal", "greater", "greater_equal",
                                    "equal", "not_equal"};
  for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++) {
    CHECK(RAISES(ot_call2(cmp[i], F64, &nan, F64, &one, &b, NULL), 0));
    CHECK(b == (strcmp(cmp[i], "not_equal") == 0));
    float nf = NAN, of = 1.0f;
    CHECK(RAISES(ot_call2(cmp[i], F32, &of, F32, &nf, &b, NULL), 0));
  }
  /* complex orderings raise "invalid" on a NaN part, as NumPy's loops do */
  ot_c128 cn = {NAN, 1.0}, c1 = {1.0, 1.0};
  CHECK(RAISES(ot_call2("less", C128, &cn, C128, &c1, &b, NULL), FE_INVALID) && b == 0);
  /* minimum / maximum / fmin / fmax: NaN handling without "invalid" */
  static const char *const mm[] = {"minimum", "maximum", "fmin", "fmax"};
  for (size_t i = 0; i < 4; i++) {
    CHECK(RAISES(ot_call2(mm[i], F64, &nan, F64, &one, &r, NULL), 0));
    CHECK(i < 2 ? isnan(r) : r == 1.0);
    CHECK(RAISES(ot_call2(mm[i], F64, &one, F64, &nan, &r, NULL), 0));
    ot_c128 rc;
    CHECK(RAISES(ot_call2(mm[i], C128, &c1, C128, &cn, &rc, NULL), 0));
  }
  /* the vectorised contiguous loops too (their compares signal), and a
   * caller's pending "invalid" survives them */
  static const char *const vec[] = {"minimum", "fmax", "less", "greater_equal", "sign"};
  for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
    CHECK(strided_is_quiet(vec[i]));
  }
  /* isnan / isinf / isfinite of a signalling NaN: by the bits, no flag */
  uint32_t sbits = 0x7fa00000u; /* float32 signalling NaN */
  float snan;
  memcpy(&snan, &sbits, 4);
  CHECK(RAISES(ot_call1("isnan", F32, &snan, &b, NULL), 0) && b == 1);
  CHECK(RAISES(ot_call1("isinf", F32, &snan, &b, NULL), 0) && b == 0);
  CHECK(RAISES(ot_call1("isfinite", F32, &snan, &b, NULL), 0) && b == 0);
  uint64_t dbits = 0x7ff4000000000000u;
  double dsnan;
  memcpy(&dsnan, &dbits, 8);
  CHECK(RAISES(ot_call1("isnan", F64, &dsnan, &b, NULL), 0) && b == 1);
  uint16_t hsnan = 0x7d00;
  CHECK(RAISES(ot_call1("isnan", F16, &hsnan, &b, NULL), 0) && b == 1);
  float inf = INFINITY;
  CHECK(RAISES(ot_call1("isinf", F32, &inf, &b, NULL), 0) && b == 1);
}

static void test_division(void) {
  /* int8 -128 // -1 wraps and raises "overflow" (NumPy warns); -128 % -1 = 0 */
  int8_t a = -128, m1 = -1, r8 = 0, five = 5;
  CHECK(RAISES(ot_call2("floor_divide", I8, &a, I8, &m1, &r8, NULL), FE_OVERFLOW) &&
        r8 == -128);
  CHECK(RAISES(ot_call2("floor_divide", I8, &five, I8, &m1, &r8, NULL), 0) && r8 == -5);
  CHECK(RAISES(ot_call2("mod", I8, &a, I8, &m1, &r8, NULL), 0) && r8 == 0);
  /* float x // 0: x / 0 and its flags, x % 0: fmod's nan with "invalid" */
  double one = 1.0, zero = 0.0, nan = NAN, r;
  CHECK(RAISES(ot_call2("floor_divide", F64, &one, F64, &zero, &r, NULL), FE_DIVBYZERO) &&
        isinf(r) && r > 0);
  CHECK(RAISES(ot_call2("floor_divide", F64, &zero, F64, &zero, &r, NULL), FE_INVALID) &&
        isnan(r));
  CHECK(RAISES(ot_call2("mod", F64, &one, F64, &zero, &r, NULL), FE_INVALID) && isnan(r));
  double inf = INFINITY;
  CHECK(RAISES(ot_call2("floor_divide", F64, &inf, F64, &zero, &r, NULL), 0) && isinf(r));
  CHECK(RAISES(ot_call2("floor_divide", F64, &nan, F64, &zero, &r, NULL), 0) && isnan(r));
  /* NaN operands: quiet */
  CHECK(RAISES(ot_call2("mod", F64, &zero, F64, &nan, &r, NULL), 0) && isnan(r));
  CHECK(RAISES(ot_call2("floor_divide", F64, &zero, F64, &nan, &r, NULL), 0) && isnan(r));
  CHECK(RAISES(ot_call2("floor_divide", F64, &nan, F64, &one, &r, NULL), 0) && isnan(r));
  double m35 = -3.5, two = 2.0;
  CHECK(RAISES(ot_call2("mod", F64, &m35, F64, &two, &r, NULL), 0) && r == 0.5);
  CHECK(RAISES(ot_call2("floor_divide", F64, &m35, F64, &two, &r, NULL), 0) && r == -2.0);
  /* 0 ** -inf: inf with "divide by zero" */
  double minf = -INFINITY;
  CHECK(RAISES(ot_call2("power", F64, &zero, F64, &minf, &r, NULL), FE_DIVBYZERO) &&
        isinf(r));
}

static void test_float16_overflow(void) {
  /* a float32 result that rounds to float16's infinity raises "overflow" */
  static const struct {
    const char *op;
    uint16_t x, want;
  } cases[] = {
      {"exp", 0x49c0, 0x7c00},  /* exp(11.5) = 98715 */
      {"sinh", 0x4a00, 0x7c00}, /* sinh(12) */
      {"cosh", 0x4a00, 0x7c00}, /* cosh(12) */
      {"exp", 0x4800, 0x69d2},  /* exp(8) = 2980: no flag beyond inexact */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint16_t r = 0;
    int want = cases[i].want == 0x7c00 ? FE_OVERFLOW : 0;
    bool ok = RAISES(ot_call1(cases[i].op, F16, &cases[i].x, &r, NULL), want) &&
              r == cases[i].want;
    if (!ok) {
      fprintf(stderr, "%s(float16 %#x) = %#x flags %#x\n", cases[i].op, cases[i].x, r,
              fetestexcept(ALL_FLAGS));
    }
    CHECK(ok);
  }
  uint16_t big = 0x7bff, r; /* 65504 */
  CHECK(RAISES(ot_call2("add", F16, &big, F16, &big, &r, NULL), FE_OVERFLOW) &&
        r == 0x7c00);
  uint16_t inf = 0x7c00;
  CHECK(RAISES(ot_call2("add", F16, &inf, F16, &big, &r, NULL), 0) && r == 0x7c00);
  /* a product below float16's subnormals: "underflow" (NumPy's conversion) */
  uint16_t tiny = 0x0400; /* 2**-14 */
  CHECK(RAISES(ot_call2("multiply", F16, &tiny, F16, &tiny, &r, NULL), FE_UNDERFLOW) &&
        r == 0);
}

static void test_complex_edges(void) {
  ot_c128 zero = {0.0, 0.0}, r;
  /* 0 ** z = 0 for re(z) > 0; nan+nanj with "invalid" otherwise */
  ot_c128 e1 = {1.0, 4.0}, e2 = {0.5, -3.0}, e3 = {-1.0, 1.0}, e4 = {0.0, 1.0};
  CHECK(RAISES(ot_call2("power", C128, &zero, C128, &e1, &r, NULL), 0) && r.re == 0 &&
        r.im == 0);
  CHECK(RAISES(ot_call2("power", C128, &zero, C128, &e2, &r, NULL), 0) && r.re == 0);
  CHECK(RAISES(ot_call2("power", C128, &zero, C128, &e3, &r, NULL), FE_INVALID) &&
        isnan(r.re) && isnan(r.im));
  CHECK(RAISES(ot_call2("power", C128, &zero, C128, &e4, &r, NULL), FE_INVALID));
  /* sign: an infinite part gives its direction; both infinite: nan */
  static const struct {
    double re, im, want_re, want_im;
  } signs[] = {
      {INFINITY, 0.0, 1.0, 0.0},  {-INFINITY, 2.0, -1.0, 0.0}, {3.0, INFINITY, 0.0, 1.0},
      {1.0, -INFINITY, 0.0, -1.0}, {INFINITY, NAN, 1.0, 0.0},  {NAN, INFINITY, 0.0, 1.0},
      {INFINITY, INFINITY, NAN, NAN}, {NAN, 0.0, NAN, NAN},    {-0.0, -0.0, 0.0, 0.0},
      {3.0, 4.0, 0.6, 0.8},       {1e308, 1e308, 0x1.6a09e667f3bccp-1, 0x1.6a09e667f3bccp-1},
  };
  for (size_t i = 0; i < sizeof signs / sizeof signs[0]; i++) {
    ot_c128 z = {signs[i].re, signs[i].im};
    bool ok = RAISES(ot_call1("sign", C128, &z, &r, NULL), 0) &&
              ot_same_f64(r.re, signs[i].want_re) && ot_same_f64(r.im, signs[i].want_im);
    if (!ok) {
      fprintf(stderr, "sign(%g%+gj) = %g%+gj\n", z.re, z.im, r.re, r.im);
    }
    CHECK(ok);
  }
  /* the sign of a zero imaginary part picks the side of a branch cut */
  ot_c128 below = {-0.5, -0.0}, above = {-0.5, 0.0}, m1 = {-1.0, -0.0};
  CHECK(ot_call1("log", C128, &below, &r, NULL) == 0 && r.im == -acos(-1.0));
  CHECK(ot_call1("log", C128, &above, &r, NULL) == 0 && r.im == acos(-1.0));
  CHECK(ot_call1("sqrt", C128, &m1, &r, NULL) == 0 && r.im == -1.0);
  ot_c64 belowf = {-0.5f, -0.0f}, rf;
  CHECK(ot_call1("log", CK_TYPE_COMPLEX64, &belowf, &rf, NULL) == 0 && rf.im < 0);
}

CK_TEST_MAIN(CK_TEST(test_nan_is_quiet), CK_TEST(test_division),
             CK_TEST(test_float16_overflow), CK_TEST(test_complex_edges))
