/* Built-in arithmetic kernels: add, subtract, multiply, divide,
 * floor_divide, mod, power, negative, absolute.
 *
 * Integers: every pair of edge values (0, +-1, +-2, 3, 7, 100, min, min+1,
 * max, max-1) of each of the 8 integer types against expectations computed
 * in 128-bit arithmetic with different formulas (Python's floor division
 * from the remainder identity, wrap-around by masking).  Floats and complex:
 * hand-written tables (values checked with numpy 2.4), including -0.0,
 * inf, nan, 1e308 and float16 rounding. */
#include "ops_test_util.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

static const ck_type_id int_types[8] = {CK_TYPE_INT8,  CK_TYPE_INT16,  CK_TYPE_INT32,
                                        CK_TYPE_INT64, CK_TYPE_UINT8,  CK_TYPE_UINT16,
                                        CK_TYPE_UINT32, CK_TYPE_UINT64};

static int bits_of(ck_type_id t) { return (int)ot_size(t) * 8; }
static bool is_signed(ck_type_id t) { return t >= CK_TYPE_INT8 && t <= CK_TYPE_INT64; }

/* v reduced modulo 2^bits into the value range of t. */
static i128 wrap(ck_type_id t, i128 v) {
  int bits = bits_of(t);
  u128 mask = bits == 64 ? (u128)UINT64_MAX : (((u128)1 << bits) - 1);
  u128 u = (u128)v & mask;
  if (is_signed(t) && (u >> (bits - 1)) != 0) {
    return (i128)u - ((i128)1 << bits);
  }
  return (i128)u;
}

static i128 tmin(ck_type_id t) {
  return is_signed(t) ? -((i128)1 << (bits_of(t) - 1)) : 0;
}
static i128 tmax(ck_type_id t) {
  return is_signed(t) ? ((i128)1 << (bits_of(t) - 1)) - 1 : ((i128)1 << bits_of(t)) - 1;
}

/* Store / load an integer of type t (little-endian host assumed by memcpy
 * of the low bytes). */
static void store_int(ck_type_id t, void *p, i128 v) {
  uint64_t u = (uint64_t)(u128)v;
  memcpy(p, &u, ot_size(t));
}
static i128 load_int(ck_type_id t, const void *p) {
  uint64_t u = 0;
  memcpy(&u, p, ot_size(t));
  return wrap(t, (i128)u);
}

static i128 py_mod(i128 a, i128 b) { return ((a % b) + b) % b; }

static void test_int_binary(void) {
  static const char *const ops[] = {"add",   "subtract", "multiply", "floor_divide",
                                    "mod",   "power",    "divide"};
  for (size_t ti = 0; ti < 8; ti++) {
    ck_type_id t = int_types[ti];
    i128 vals[] = {0, 1, -1, 2, -2, 3, 7, 100, tmin(t), tmin(t) + 1, tmax(t), tmax(t) - 1};
    size_t nv = sizeof vals / sizeof vals[0];
    for (size_t i = 0; i < nv; i++) {
      for (size_t j = 0; j < nv; j++) {
        i128 a = wrap(t, vals[i]), b = wrap(t, vals[j]);
        char ab[8], bb[8], rb[8];
        store_int(t, ab, a);
        store_int(t, bb, b);
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
          const char *op = ops[o];
          ck_type_id ret = CK_TYPE_UNINITIALIZED;
          if (strcmp(op, "power") == 0 && (b > 70 || b < -2)) {
            continue; /* checked separately below */
          }
          ck_clear_error();
          int st = ot_call2(op, t, ab, t, bb, rb, &ret);
          bool ok;
          if (strcmp(op, "divide") == 0) {
            double got;
            memcpy(&got, rb, sizeof got);
            /* int -> double rounds once (exact below 2^53); not through
             * long double, which valgrind emulates at double precision */
            double da = is_signed(t) ? (double)(int64_t)a : (double)(uint64_t)a;
            double db = is_signed(t) ? (double)(int64_t)b : (double)(uint64_t)b;
            double want = da / db;
            ok = st == 0 && ret == CK_TYPE_FLOAT64 && ot_same_f64(got, want);
          } else if ((strcmp(op, "floor_divide") == 0 || strcmp(op, "mod") == 0) && b == 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s: integer division by zero (%s)", op,
                     ck_type_id_name(t));
            ok = st == CK_ERR_ZERO_DIVISION && strcmp(ck_last_error(), msg) == 0;
          } else if (strcmp(op, "power") == 0 && b < 0) {
            ok = st == CK_ERR_VALUE &&
                 strstr(ck_last_error(),
                        "power: Integers to negative integer powers are not allowed") != NULL;
          } else {
            i128 want;
            if (strcmp(op, "add") == 0) {
              want = wrap(t, a + b);
            } else if (strcmp(op, "subtract") == 0) {
              want = wrap(t, a - b);
            } else if (strcmp(op, "multiply") == 0) {
              want = wrap(t, (i128)((u128)a * (u128)b));
            } else if (strcmp(op, "floor_divide") == 0) {
              want = wrap(t, (a - py_mod(a, b)) / b);
            } else if (strcmp(op, "mod") == 0) {
              want = wrap(t, py_mod(a, b));
            } else { /* power by repeated multiplication, 0 ** 0 = 1 */
              u128 acc = 1;
              for (i128 e = 0; e < b; e++) {
                acc *= (u128)a;
              }
              want = wrap(t, (i128)acc);
            }
            ok = st == 0 && ret == t && load_int(t, rb) == want;
            if (!ok) {
              fprintf(stderr, "%s(%s %lld, %lld): st %d got %lld want %lld\n", op,
                      ck_type_id_name(t), (long long)a, (long long)b, st,
                      (long long)load_int(t, rb), (long long)want);
            }
          }
          CHECK(ok);
        }
      }
    }
  }
}

static void test_int_edge_cases(void) {
  /* named cases from the brief and numpy */
  int32_t a = INT32_MIN, b = -1, r;
  CHECK(ot_call2("floor_divide", CK_TYPE_INT32, &a, CK_TYPE_INT32, &b, &r, NULL) == 0);
  CHECK(r == INT32_MIN); /* wraps like numpy */
  CHECK(ot_call2("mod", CK_TYPE_INT32, &a, CK_TYPE_INT32, &b, &r, NULL) == 0);
  CHECK(r == 0);
  int64_t x[4] = {-7, 7, -7, 7}, y[4] = {2, -2, -2, 2};
  int64_t q[4] = {-4, -4, 3, 3}, m[4] = {1, -1, -1, 1};
  for (int i = 0; i < 4; i++) {
    int64_t rq, rm;
    CHECK(ot_call2("floor_divide", CK_TYPE_INT64, &x[i], CK_TYPE_INT64, &y[i], &rq, NULL) == 0);
    CHECK(ot_call2("mod", CK_TYPE_INT64, &x[i], CK_TYPE_INT64, &y[i], &rm, NULL) == 0);
    CHECK(rq == q[i] && rm == m[i]);
  }
  int8_t i8 = 2, e8 = 7, r8;
  CHECK(ot_call2("power", CK_TYPE_INT8, &i8, CK_TYPE_INT8, &e8, &r8, NULL) == 0);
  CHECK(r8 == -128);
  int64_t b3 = 3, e40 = 40, r64;
  CHECK(ot_call2("power", CK_TYPE_INT64, &b3, CK_TYPE_INT64, &e40, &r64, NULL) == 0);
  CHECK(r64 == INT64_C(-6289078614652622815)); /* numpy's wrapped 3**40 */
  uint64_t u2 = 2, u64e = 64, ur;
  CHECK(ot_call2("power", CK_TYPE_UINT64, &u2, CK_TYPE_UINT64, &u64e, &ur, NULL) == 0);
  CHECK(ur == 0);
  uint64_t big = UINT64_MAX;
  CHECK(ot_call2("power", CK_TYPE_UINT64, &big, CK_TYPE_UINT64, &big, &ur, NULL) == 0);
  CHECK(ur == UINT64_MAX); /* odd ** odd stays odd; (-1)**odd mod 2^64 */
  /* bool: add = or, multiply = and, divide -> float64; floor_divide -> int8 */
  uint8_t t = 1, f = 0, two = 2, rb;
  double d;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call2("add", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &t, &rb, &ret) == 0);
  CHECK(rb == 1 && ret == CK_TYPE_BOOL);
  CHECK(ot_call2("add", CK_TYPE_BOOL, &two, CK_TYPE_BOOL, &f, &rb, NULL) == 0);
  CHECK(rb == 1); /* any nonzero byte is true; results are 0/1 */
  CHECK(ot_call2("multiply", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &f, &rb, NULL) == 0);
  CHECK(rb == 0);
  CHECK(ot_call2("divide", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &f, &d, &ret) == 0);
  CHECK(isinf(d) && d > 0 && ret == CK_TYPE_FLOAT64);
  CHECK(ot_call2("floor_divide", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &t, &r8, &ret) == 0);
  CHECK(r8 == 1 && ret == CK_TYPE_INT8);
  CHECK(ot_call2("floor_divide", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &f, &r8, &ret) ==
        CK_ERR_ZERO_DIVISION);
  CHECK(strcmp(ck_last_error(), "floor_divide: integer division by zero (int8)") == 0);
  CHECK(ot_call2("subtract", CK_TYPE_BOOL, &t, CK_TYPE_BOOL, &t, &rb, NULL) == CK_ERR_TYPE);
  CHECK(ot_call1("negative", CK_TYPE_BOOL, &t, &rb, NULL) == CK_ERR_TYPE);
  CHECK(ot_call1("absolute", CK_TYPE_BOOL, &two, &rb, &ret) == 0);
  CHECK(rb == 1 && ret == CK_TYPE_BOOL);
  /* mixed: int8 + uint8 -> int16 */
  int8_t m8 = -100;
  uint8_t u8 = 200;
  int16_t r16;
  CHECK(ot_call2("add", CK_TYPE_INT8, &m8, CK_TYPE_UINT8, &u8, &r16, &ret) == 0);
  CHECK(r16 == 100 && ret == CK_TYPE_INT16);
  /* int64 + uint64 -> float64 */
  int64_t mi = -1;
  uint64_t mu = UINT64_MAX;
  CHECK(ot_call2("add", CK_TYPE_INT64, &mi, CK_TYPE_UINT64, &mu, &d, &ret) == 0);
  CHECK(d == 0x1p64 && ret == CK_TYPE_FLOAT64);
}

static void test_int_unary(void) {
  for (size_t ti = 0; ti < 8; ti++) {
    ck_type_id t = int_types[ti];
    i128 vals[] = {0, 1, -1, 2, 100, tmin(t), tmin(t) + 1, tmax(t)};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
      i128 a = wrap(t, vals[i]);
      char ab[8], rb[8];
      store_int(t, ab, a);
      ck_type_id ret = CK_TYPE_UNINITIALIZED;
      CHECK(ot_call1("negative", t, ab, rb, &ret) == 0);
      CHECK(ret == t && load_int(t, rb) == wrap(t, -a));
      CHECK(ot_call1("absolute", t, ab, rb, &ret) == 0);
      CHECK(ret == t && load_int(t, rb) == wrap(t, a < 0 ? -a : a));
    }
  }
  int8_t m = INT8_MIN, r;
  CHECK(ot_call1("absolute", CK_TYPE_INT8, &m, &r, NULL) == 0);
  CHECK(r == INT8_MIN);
  uint8_t one = 1, ru;
  CHECK(ot_call1("negative", CK_TYPE_UINT8, &one, &ru, NULL) == 0);
  CHECK(ru == 255);
}

typedef struct {
  const char *op;
  double a, b, want;
} f64_case;

static void test_float64(void) {
  static const f64_case cases[] = {
      {"add", 0.1, 0.2, 0.30000000000000004},
      {"add", -0.0, 0.0, 0.0},
      {"add", -0.0, -0.0, -0.0},
      {"add", INFINITY, -INFINITY, NAN},
      {"add", 1e308, 1e308, INFINITY},
      {"subtract", 1.0, 1.0, 0.0},
      {"subtract", -0.0, 0.0, -0.0},
      {"multiply", 1e308, 10.0, INFINITY},
      {"multiply", -1.0, 0.0, -0.0},
      {"multiply", INFINITY, 0.0, NAN},
      {"divide", 1.0, 0.0, INFINITY},
      {"divide", -1.0, 0.0, -INFINITY},
      {"divide", 1.0, -0.0, -INFINITY},
      {"divide", 0.0, 0.0, NAN},
      {"divide", 1.0, 3.0, 0x1.5555555555555p-2},
      {"floor_divide", 1.0, 0.1, 9.0},
      {"floor_divide", -7.5, 2.0, -4.0},
      {"floor_divide", 7.5, -2.0, -4.0},
      {"floor_divide", -0.0, 1.0, -0.0},
      {"floor_divide", 1.0, 0.0, INFINITY},
      {"floor_divide", -1.0, 0.0, -INFINITY},
      {"floor_divide", 0.0, 0.0, NAN},
      {"floor_divide", NAN, 1.0, NAN},
      {"mod", 1.0, 0.1, 0.09999999999999995},
      {"mod", -7.5, 2.0, 0.5},
      {"mod", 7.5, -2.0, -0.5},
      {"mod", -0.0, 1.0, 0.0},
      {"mod", 0.0, -1.0, -0.0},
      {"mod", -1.0, INFINITY, INFINITY},
      {"mod", 1.0, -INFINITY, -INFINITY},
      {"mod", 1.0, 0.0, NAN},
      {"mod", INFINITY, 1.0, NAN},
      {"power", 2.0, 0.5, 1.4142135623730951},
      {"power", -8.0, 1.0 / 3.0, NAN},
      {"power", 0.0, -1.0, INFINITY},
      {"power", 1.0, NAN, 1.0},
      {"power", 10.0, 308.0, 1e308},
      {"power", 10.0, 309.0, INFINITY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double r;
    ck_type_id ret = CK_TYPE_UNINITIALIZED;
    CHECK(ot_call2(cases[i].op, CK_TYPE_FLOAT64, &cases[i].a, CK_TYPE_FLOAT64,
                   &cases[i].b, &r, &ret) == 0);
    bool ok = ret == CK_TYPE_FLOAT64 && ot_same_f64(r, cases[i].want);
    if (!ok) {
      fprintf(stderr, "%s(%a, %a) = %a, want %a\n", cases[i].op, cases[i].a, cases[i].b,
              r, cases[i].want);
    }
    CHECK(ok);
  }
  double z = 0.0, nz = -0.0, r;
  CHECK(ot_call1("negative", CK_TYPE_FLOAT64, &z, &r, NULL) == 0);
  CHECK(ot_same_f64(r, -0.0));
  CHECK(ot_call1("absolute", CK_TYPE_FLOAT64, &nz, &r, NULL) == 0);
  CHECK(ot_same_f64(r, 0.0));
  /* floor_divide and mod agree: a == b * (a // b) + a % b for ordinary values */
  for (int i = -20; i <= 20; i++) {
    for (int j = -5; j <= 5; j++) {
      if (j == 0) {
        continue;
      }
      double a = i * 0.75, b = j * 1.25, q, m;
      CHECK(ot_call2("floor_divide", CK_TYPE_FLOAT64, &a, CK_TYPE_FLOAT64, &b, &q, NULL) == 0);
      CHECK(ot_call2("mod", CK_TYPE_FLOAT64, &a, CK_TYPE_FLOAT64, &b, &m, NULL) == 0);
      CHECK(q == floor(a / b) && fabs(b * q + m - a) < 1e-12);
      CHECK(m == 0 || (m < 0) == (b < 0));
    }
  }
}

static void test_float32_float16(void) {
  float a = 16777216.0f, one = 1.0f, three = 3.0f, big = 1e38f, ten = 10.0f, r;
  CHECK(ot_call2("add", CK_TYPE_FLOAT32, &a, CK_TYPE_FLOAT32, &one, &r, NULL) == 0);
  CHECK(r == 16777216.0f); /* rounds to even in float32, not float64 */
  CHECK(ot_call2("divide", CK_TYPE_FLOAT32, &one, CK_TYPE_FLOAT32, &three, &r, NULL) == 0);
  CHECK(r == 0x1.555556p-2f);
  CHECK(ot_call2("multiply", CK_TYPE_FLOAT32, &big, CK_TYPE_FLOAT32, &ten, &r, NULL) == 0);
  CHECK(isinf(r));
  float m75 = -7.5f, two = 2.0f;
  CHECK(ot_call2("mod", CK_TYPE_FLOAT32, &m75, CK_TYPE_FLOAT32, &two, &r, NULL) == 0);
  CHECK(r == 0.5f);

  /* float16 (bits; expectations from numpy) */
  struct {
    const char *op;
    uint16_t a, b, want;
  } h[] = {
      {"add", 0x7bff, 0x5000, 0x7c00},      /* 65504 + 32 = inf */
      {"multiply", 0x2e66, 0x4200, 0x34cc}, /* 0.1 * 3 = 0.2998 */
      {"divide", 0x3c00, 0x4200, 0x3555},   /* 1 / 3 */
      {"add", 0x3c00, 0x1000, 0x3c00},      /* 1 + 2^-11: tie, to even */
      {"add", 0x3c00, 0x1001, 0x3c01},      /* just above the tie */
      {"floor_divide", 0x4780, 0xc000, 0xc400}, /* 7.5 // -2 = -4 */
      {"mod", 0x4780, 0xc000, 0xb800},      /* 7.5 % -2 = -0.5 */
      {"subtract", 0x8000, 0x0000, 0x8000}, /* -0 - 0 = -0 */
      {"divide", 0x0000, 0x0000, 0x7e00},   /* nan */
      {"power", 0x4000, 0x4a00, 0x6c00},    /* 2 ** 12 = 4096 */
  };
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
    uint16_t rh = 0;
    ck_type_id ret = CK_TYPE_UNINITIALIZED;
    CHECK(ot_call2(h[i].op, CK_TYPE_FLOAT16, &h[i].a, CK_TYPE_FLOAT16, &h[i].b, &rh, &ret) == 0);
    bool nan_ok = (h[i].want & 0x7c00) == 0x7c00 && (h[i].want & 0x3ff) && (rh & 0x7c00) == 0x7c00 &&
                  (rh & 0x3ff);
    bool ok = ret == CK_TYPE_FLOAT16 && (rh == h[i].want || nan_ok);
    if (!ok) {
      fprintf(stderr, "float16 %s(%#x, %#x) = %#x, want %#x\n", h[i].op, h[i].a, h[i].b, rh,
              h[i].want);
    }
    CHECK(ok);
  }
  uint16_t x = 0x7e00, rh; /* NaN: the sign flips, the payload stays */
  CHECK(ot_call1("negative", CK_TYPE_FLOAT16, &x, &rh, NULL) == 0);
  CHECK(rh == 0xfe00);
  x = 0xbc00; /* -1 */
  CHECK(ot_call1("absolute", CK_TYPE_FLOAT16, &x, &rh, NULL) == 0);
  CHECK(rh == 0x3c00);
}

static void test_complex(void) {
  ot_c128 a = {1, 2}, b = {3, 4}, r;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call2("multiply", CK_TYPE_COMPLEX128, &a, CK_TYPE_COMPLEX128, &b, &r, &ret) == 0);
  CHECK(r.re == -5 && r.im == 10 && ret == CK_TYPE_COMPLEX128);
  CHECK(ot_call2("divide", CK_TYPE_COMPLEX128, &a, CK_TYPE_COMPLEX128, &b, &r, NULL) == 0);
  CHECK(ot_ulps(r.re, 0.44) <= 1 && ot_ulps(r.im, 0.08) <= 2);
  CHECK(ot_call2("add", CK_TYPE_COMPLEX128, &a, CK_TYPE_COMPLEX128, &b, &r, NULL) == 0);
  CHECK(r.re == 4 && r.im == 6);
  CHECK(ot_call2("subtract", CK_TYPE_COMPLEX128, &a, CK_TYPE_COMPLEX128, &b, &r, NULL) == 0);
  CHECK(r.re == -2 && r.im == -2);
  ot_c128 one1 = {1, 1}, zero = {0, 0};
  CHECK(ot_call2("divide", CK_TYPE_COMPLEX128, &one1, CK_TYPE_COMPLEX128, &zero, &r, NULL) == 0);
  CHECK(isinf(r.re) && isinf(r.im)); /* numpy: (inf+infj) */
  /* power: numpy's special cases */
  ot_c128 two0 = {2, 0};
  CHECK(ot_call2("power", CK_TYPE_COMPLEX128, &one1, CK_TYPE_COMPLEX128, &two0, &r, NULL) == 0);
  CHECK(r.re == 0 && r.im == 2); /* exact: repeated multiplication */
  CHECK(ot_call2("power", CK_TYPE_COMPLEX128, &zero, CK_TYPE_COMPLEX128, &zero, &r, NULL) == 0);
  CHECK(r.re == 1 && r.im == 0);
  ot_c128 m1 = {-1, 0};
  CHECK(ot_call2("power", CK_TYPE_COMPLEX128, &two0, CK_TYPE_COMPLEX128, &m1, &r, NULL) == 0);
  CHECK(r.re == 0.5 && r.im == 0);
  CHECK(ot_call2("power", CK_TYPE_COMPLEX128, &zero, CK_TYPE_COMPLEX128, &m1, &r, NULL) == 0);
  CHECK(isnan(r.re) && isnan(r.im));
  ot_c128 half = {0.5, 0};
  CHECK(ot_call2("power", CK_TYPE_COMPLEX128, &one1, CK_TYPE_COMPLEX128, &half, &r, NULL) == 0);
  CHECK(ot_ulps(r.re, 1.0986841134678098) <= 4 && ot_ulps(r.im, 0.45508986056222733) <= 4);
  /* absolute -> the real type */
  ot_c128 z34 = {3, -4};
  double d;
  CHECK(ot_call1("absolute", CK_TYPE_COMPLEX128, &z34, &d, &ret) == 0);
  CHECK(d == 5.0 && ret == CK_TYPE_FLOAT64);
  ot_c64 f34 = {-3, 4};
  float f;
  CHECK(ot_call1("absolute", CK_TYPE_COMPLEX64, &f34, &f, &ret) == 0);
  CHECK(f == 5.0f && ret == CK_TYPE_FLOAT32);
  ot_c128 inf_nan = {INFINITY, NAN};
  CHECK(ot_call1("absolute", CK_TYPE_COMPLEX128, &inf_nan, &d, NULL) == 0);
  CHECK(isinf(d)); /* hypot(inf, nan) = inf */
  CHECK(ot_call1("negative", CK_TYPE_COMPLEX128, &a, &r, NULL) == 0);
  CHECK(r.re == -1 && r.im == -2);
  /* complex64 + float64 -> complex128 */
  ot_c64 c = {1.5f, -2.0f};
  double x = 0.25;
  CHECK(ot_call2("add", CK_TYPE_COMPLEX64, &c, CK_TYPE_FLOAT64, &x, &r, &ret) == 0);
  CHECK(ret == CK_TYPE_COMPLEX128 && r.re == 1.75 && r.im == -2.0);
  /* no floor_divide / mod for complex */
  CHECK(ot_call2("floor_divide", CK_TYPE_COMPLEX128, &a, CK_TYPE_COMPLEX128, &b, &r, NULL) ==
        CK_ERR_TYPE);
  CHECK(ot_call2("mod", CK_TYPE_COMPLEX64, &c, CK_TYPE_COMPLEX64, &c, &r, NULL) == CK_ERR_TYPE);
}

/* The strided loops over many elements (vectorised contiguous path, the
 * broadcast path and the generic one) agree with per-element results. */
static void test_strided_paths(void) {
  enum { N = 1000 };
  static int32_t a[N], b[N], out[N];
  for (int i = 0; i < N; i++) {
    a[i] = (int32_t)((uint32_t)i * 2654435u - 1000000007u);
    b[i] = (i % 7) - 3;
  }
  const ck_op *ops[3] = {ot_op("add"), ot_op("multiply"), ot_op("floor_divide")};
  for (int o = 0; o < 3; o++) {
    ck_kernel_builder kb;
    ck_kernel_builder_init(&kb);
    ck_type_id t[2] = {CK_TYPE_INT32, CK_TYPE_INT32};
    REQUIRE_OK(ck_op_make_kernel(ops[o], &kb, 0, CK_KERNEL_REQUEST_STRIDED, 2, t, NULL, NULL));
    ck_prefix *k = ck_kernel_builder_get(&kb, 0);
    const char *src[2] = {(const char *)a, (const char *)b};
    for (int mode = 0; mode < 3; mode++) {
      intptr_t ss[2] = {4, mode == 1 ? 0 : 4};
      intptr_t ds = mode == 2 ? -4 : 4;
      char *dst = mode == 2 ? (char *)&out[N - 1] : (char *)out;
      int st = ck_prefix_strided(k)(dst, ds, src, ss, N, k);
      bool ok = true;
      int fails_at = -1;
      for (int i = 0; i < N; i++) {
        int32_t bi = mode == 1 ? b[0] : b[i];
        i128 want;
        if (o == 0) {
          want = wrap(CK_TYPE_INT32, (i128)a[i] + bi);
        } else if (o == 1) {
          want = wrap(CK_TYPE_INT32, (i128)a[i] * bi);
        } else {
          if (bi == 0) {
            fails_at = i;
            break;
          }
          want = wrap(CK_TYPE_INT32, ((i128)a[i] - py_mod(a[i], bi)) / bi);
        }
        int32_t got = mode == 2 ? out[N - 1 - i] : out[i];
        ok = ok && got == (int32_t)want;
      }
      if (fails_at >= 0) {
        /* floor_divide stops at the first zero divisor (b[3] == 0) */
        CHECK(st == CK_ERR_ZERO_DIVISION && fails_at == 3);
      } else {
        CHECK(st == 0);
      }
      CHECK(ok);
    }
    ck_kernel_builder_destroy(&kb);
  }
}

CK_TEST_MAIN(CK_TEST(test_int_binary), CK_TEST(test_int_edge_cases),
             CK_TEST(test_int_unary), CK_TEST(test_float64),
             CK_TEST(test_float32_float16), CK_TEST(test_complex),
             CK_TEST(test_strided_paths))
