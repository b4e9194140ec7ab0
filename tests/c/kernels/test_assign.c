/* Builtin assignment kernels: the full 14 x 14 x 5-mode table against a
 * reference model computed independently here, strided calls with positive,
 * negative and zero strides, messages, float16 exhaustively, the POD copy
 * kernel and argument errors.
 *
 * The model keeps integers exact as (sign, uint64 magnitude) and floats as
 * doubles; it rounds integers to floating types with its own integer
 * round-half-even, and rounds to float16 by scaling and nearbyint rather
 * than the library's bit manipulation.  It uses no long double (valgrind
 * emulates x87 long double with double precision, and some targets have
 * none). */
#include "ck_test.h"

#include <float.h>
#include <math.h>

enum { NT = 15 }; /* type ids 1..14 */
enum { C_BOOL, C_INT, C_UINT, C_FLOAT, C_COMPLEX };

static const struct {
  const char *name;
  size_t size;
  int cls;
  int bits; /* integer width, or float (component) width */
} T[NT] = {
    [CK_TYPE_BOOL] = {"bool", 1, C_BOOL, 1},
    [CK_TYPE_INT8] = {"int8", 1, C_INT, 8},
    [CK_TYPE_INT16] = {"int16", 2, C_INT, 16},
    [CK_TYPE_INT32] = {"int32", 4, C_INT, 32},
    [CK_TYPE_INT64] = {"int64", 8, C_INT, 64},
    [CK_TYPE_UINT8] = {"uint8", 1, C_UINT, 8},
    [CK_TYPE_UINT16] = {"uint16", 2, C_UINT, 16},
    [CK_TYPE_UINT32] = {"uint32", 4, C_UINT, 32},
    [CK_TYPE_UINT64] = {"uint64", 8, C_UINT, 64},
    [CK_TYPE_FLOAT16] = {"float16", 2, C_FLOAT, 16},
    [CK_TYPE_FLOAT32] = {"float32", 4, C_FLOAT, 32},
    [CK_TYPE_FLOAT64] = {"float64", 8, C_FLOAT, 64},
    [CK_TYPE_COMPLEX64] = {"complex64", 8, C_COMPLEX, 32},
    [CK_TYPE_COMPLEX128] = {"complex128", 16, C_COMPLEX, 64},
};

static const char *mode_names[5] = {"nocheck", "overflow", "fractional",
                                    "inexact", "default"};

static bool is_intlike(int t) { return T[t].cls <= C_UINT; }

/* ---- independent float16 ---- */

static double ref_round_f16(double x) {
  if (isnan(x) || isinf(x) || x == 0) {
    return x;
  }
  int e;
  (void)frexp(fabs(x), &e); /* 2^(e-1) <= |x| < 2^e */
  int q = e - 1 - 10;       /* 11 significant bits */
  if (q < -24) {
    q = -24; /* subnormal quantum */
  }
  double y = ldexp(nearbyint(ldexp(x, -q)), q); /* exact; ties to even */
  if (fabs(y) > 65504.0) {
    return copysign(INFINITY, x);
  }
  return y;
}

static uint16_t ref_encode_f16(double v) { /* v exactly a float16 */
  uint16_t sign = signbit(v) ? 0x8000u : 0u;
  double a = fabs(v);
  if (isnan(v)) {
    return 0x7e00u;
  }
  if (isinf(v)) {
    return (uint16_t)(sign | 0x7c00u);
  }
  if (a == 0) {
    return sign;
  }
  int e;
  (void)frexp(a, &e);
  int E = e + 14;
  if (E >= 1) {
    double f = (ldexp(a, -(e - 1)) - 1.0) * 1024.0;
    return (uint16_t)(sign | (unsigned)E << 10 | (unsigned)f);
  }
  return (uint16_t)(sign | (unsigned)ldexp(a, 24));
}

static double ref_decode_f16(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else if (exp == 0) {
    v = ldexp(mant, -24);
  } else {
    v = ldexp(mant + 1024, exp - 25);
  }
  return (h & 0x8000u) ? -v : v;
}

/* Round a double to a float type of `bits` width (16, 32, 64). */
static double ref_round(int bits, double x) {
  switch (bits) {
  case 16: return ref_round_f16(x);
  case 32: return (float)x;
  default: return x;
  }
}

/* Round the integer +-mag to `p` significant bits (ties to even), as a
 * double; *exact tells whether no bit was dropped. */
static double ref_round_int(bool neg, uint64_t mag, int p, bool *exact) {
  int len = 0;
  while (len < 64 && (mag >> len) != 0) {
    len++;
  }
  double r;
  if (len <= p) {
    *exact = true;
    r = (double)mag; /* < 2^53: exact */
  } else {
    int shift = len - p;
    uint64_t q = mag >> shift;
    uint64_t rem = mag & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) {
      q++;
    }
    *exact = rem == 0;
    r = ldexp((double)q, shift);
  }
  return neg ? -r : r;
}

/* Round the integer +-mag to float type `bits`. */
static double ref_int_to_float(int bits, bool neg, uint64_t mag, bool *exact) {
  int p = bits == 16 ? 11 : bits == 32 ? 24 : 53;
  double r = ref_round_int(neg, mag, p, exact);
  if (bits == 16 && fabs(r) > 65504.0) {
    *exact = false;
    return neg ? -INFINITY : INFINITY;
  }
  return r;
}

/* Does the integer +-mag fit integer type t? */
static bool int_fits(int t, bool neg, uint64_t mag) {
  int n = T[t].bits;
  if (neg && mag != 0) {
    return T[t].cls == C_INT && mag <= (UINT64_C(1) << (n - 1));
  }
  if (T[t].cls == C_BOOL) {
    return mag <= 1;
  }
  uint64_t max = T[t].cls == C_INT ? (UINT64_C(1) << (n - 1)) - 1
                 : n == 64         ? UINT64_MAX
                                   : (UINT64_C(1) << n) - 1;
  return mag <= max;
}

/* ---- values ---- */

typedef struct sval {
  bool neg;     /* integer sources: the exact value is (neg ? -mag : mag) */
  uint64_t mag;
  double re, im; /* floating sources */
  unsigned char bytes[16];
} sval;

static uint64_t twos(bool neg, uint64_t mag) { return neg ? 0 - mag : mag; }

static void encode(int t, sval *v) {
  memset(v->bytes, 0, 16);
  if (is_intlike(t)) {
    uint64_t u = twos(v->neg, v->mag);
    for (size_t i = 0; i < T[t].size; i++) { /* little-endian, no casts */
      v->bytes[i] = (unsigned char)(u >> (8 * i));
    }
    return;
  }
  switch (t) {
  case CK_TYPE_FLOAT16: {
    uint16_t x = ref_encode_f16(v->re);
    memcpy(v->bytes, &x, 2);
    break;
  }
  case CK_TYPE_FLOAT32: {
    float x = (float)v->re;
    memcpy(v->bytes, &x, 4);
    break;
  }
  case CK_TYPE_FLOAT64: memcpy(v->bytes, &v->re, 8); break;
  case CK_TYPE_COMPLEX64: {
    float x[2] = {(float)v->re, (float)v->im};
    memcpy(v->bytes, x, 8);
    break;
  }
  default: {
    double x[2] = {v->re, v->im};
    memcpy(v->bytes, x, 16);
    break;
  }
  }
}

/* Floating destinations decoded to doubles. */
static double decode_float(int t, const unsigned char *b, double *im) {
  *im = 0;
  switch (t) {
  case CK_TYPE_FLOAT16: { uint16_t x; memcpy(&x, b, 2); return ref_decode_f16(x); }
  case CK_TYPE_FLOAT32: { float x; memcpy(&x, b, 4); return x; }
  case CK_TYPE_FLOAT64: { double x; memcpy(&x, b, 8); return x; }
  case CK_TYPE_COMPLEX64: { float x[2]; memcpy(x, b, 8); *im = x[1]; return x[0]; }
  default: { double x[2]; memcpy(x, b, 16); *im = x[1]; return x[0]; }
  }
}

static const uint64_t int_cands[] = {
    0, 1, 2, 127, 128, 129, 255, 256, 32767, 32768, 65504, 65505, 65519,
    65520, 65535, 65536, 2147483647u, 2147483648u, 4294967295u, 4294967296u,
    16777217u, UINT64_C(9007199254740992), UINT64_C(9007199254740993),
    UINT64_C(9223372036854775807), UINT64_C(9223372036854775808),
    UINT64_C(18446744073709551615),
    /* float32 ties after a rounding to float64: converting through float64
     * would round these twice (down instead of up) */
    (UINT64_C(1) << 60) + (UINT64_C(1) << 36) + 1,
    (UINT64_C(1) << 63) + (UINT64_C(1) << 39) + 1};

static const double float_cands[] = {
    0, 1, 2, 0.5, 1.5, 2.5, 3.5, 0.1, 0.99, 1e300, 1e-8, 6e-8, 3e-8, 65504,
    65505, 65519, 65520, 65536, 127, 128, 127.5, 128.5, 129, 255, 255.5, 256,
    32767, 32768, 65535, 2147483647.0, 2147483648.0, 2147483648.5,
    4294967295.0, 4294967296.0, 16777217.0, 0x1p53, 0x1p63, 0x1p64,
    0x1p64 - 2048, 0x1p63 - 1024, 3.4028234663852886e38,
    3.4028235677973366e38, 1e39, FLT_MIN, DBL_MAX};

/* Does this machine convert int64 -> float32 with one rounding?  Real
 * CPUs do; valgrind's emulator goes through float64 (double rounding), and
 * the library's conversion is the C cast, so under it the last two
 * candidates are left out. */
static bool int_to_float_rounds_once(void) {
  volatile int64_t x = (INT64_C(1) << 60) + (INT64_C(1) << 36) + 1;
  float f = (float)x;
  return (double)f == 0x1p60 + 0x1p37;
}

/* All test values of source type s into vals (returns the count). */
static size_t source_values(int s, sval *vals, size_t max) {
  size_t n = 0;
  if (is_intlike(s)) {
    size_t nc = sizeof int_cands / sizeof int_cands[0];
    if (!int_to_float_rounds_once()) {
      nc -= 2;
    }
    for (size_t i = 0; i < nc; i++) {
      for (int neg = 0; neg < 2; neg++) {
        if ((neg && int_cands[i] == 0) || !int_fits(s, neg, int_cands[i]) ||
            n == max) {
          continue;
        }
        vals[n].neg = neg;
        vals[n].mag = int_cands[i];
        encode(s, &vals[n]);
        n++;
      }
    }
    return n;
  }
  static const double ims[] = {0, -0.0, 1, 0.5, 1e300, NAN};
  size_t nf = sizeof float_cands / sizeof float_cands[0];
  for (size_t i = 0; i < 2 * nf + 3; i++) {
    double x = i < 2 * nf ? (i % 2 ? -float_cands[i / 2] : float_cands[i / 2])
               : i == 2 * nf     ? INFINITY
               : i == 2 * nf + 1 ? -INFINITY
                                 : NAN;
    x = ref_round(T[s].bits, x);
    size_t nim = T[s].cls == C_COMPLEX ? sizeof ims / sizeof ims[0] : 1;
    for (size_t j = 0; j < nim && n < max; j++) {
      sval *v = &vals[n++];
      v->re = x;
      v->im = T[s].cls == C_COMPLEX ? ref_round(T[s].bits, ims[j]) : 0;
      encode(s, v);
    }
  }
  return n;
}

/* ---- the reference model ---- */

typedef struct expect {
  ck_status status;
  double re, im;         /* floating results */
  unsigned char raw[16]; /* integer/bool results and same-type copies */
  bool use_raw;
} expect;

static void set_raw_int(expect *e, int d, bool neg, uint64_t mag) {
  uint64_t u = twos(neg, mag);
  e->use_raw = true;
  for (size_t i = 0; i < T[d].size; i++) {
    e->raw[i] = (unsigned char)(u >> (8 * i));
  }
}

static expect ref_assign(int d, int s, int mode, const sval *v) {
  expect e;
  memset(&e, 0, sizeof e);
  if (mode == CK_ERRMODE_DEFAULT) {
    mode = CK_ERRMODE_FRACTIONAL;
  }
  if (d == s) {
    e.use_raw = true;
    memcpy(e.raw, v->bytes, 16);
    return e;
  }
  double re = v->re, im = v->im;
  if (mode >= 1 && T[s].cls == C_COMPLEX && T[d].cls != C_COMPLEX && im != 0) {
    e.status = CK_ERR_VALUE; /* imaginary part lost (NaN counts) */
    return e;
  }
  if (is_intlike(d)) {
    bool neg;
    uint64_t mag;
    if (is_intlike(s)) {
      neg = v->neg;
      mag = v->mag;
      if (d == CK_TYPE_BOOL) {
        if (mode >= 1 && !int_fits(d, neg, mag)) {
          e.status = CK_ERR_OVERFLOW;
          return e;
        }
        set_raw_int(&e, d, false, mag != 0);
        return e;
      }
      if (mode >= 1 && !int_fits(d, neg, mag)) {
        e.status = CK_ERR_OVERFLOW;
        return e;
      }
      set_raw_int(&e, d, neg, mag); /* wraps: the low bytes */
      return e;
    }
    if (d == CK_TYPE_BOOL) {
      if (mode >= 1 && !(re == 0 || re == 1)) {
        e.status = CK_ERR_OVERFLOW;
        return e;
      }
      set_raw_int(&e, d, false, re != 0 || im != 0);
      return e;
    }
    double t = trunc(re);
    bool fits = !isnan(t) && fabs(t) < 0x1p64;
    if (fits) {
      neg = t < 0;
      mag = (uint64_t)fabs(t);
      fits = int_fits(d, neg, mag);
    }
    if (!fits) {
      if (mode >= 1) {
        e.status = CK_ERR_OVERFLOW;
        return e;
      }
      /* saturate; NaN gives 0 */
      int n = T[d].bits;
      if (isnan(re)) {
        neg = false, mag = 0;
      } else if (re < 0) {
        neg = T[d].cls == C_INT;
        mag = T[d].cls == C_INT ? UINT64_C(1) << (n - 1) : 0;
      } else {
        neg = false;
        mag = T[d].cls == C_INT ? (UINT64_C(1) << (n - 1)) - 1
              : n == 64         ? UINT64_MAX
                                : (UINT64_C(1) << n) - 1;
      }
    } else if (mode >= 2 && t != re) {
      e.status = CK_ERR_VALUE;
      return e;
    }
    set_raw_int(&e, d, neg, mag);
    return e;
  }
  /* floating destinations */
  int bits = T[d].bits;
  double rr, ri = 0;
  bool ovf, inexact;
  if (is_intlike(s)) {
    bool exact;
    rr = ref_int_to_float(bits, v->neg, v->mag, &exact);
    ovf = isinf(rr);
    inexact = !exact;
  } else {
    rr = ref_round(bits, re);
    ri = T[d].cls == C_COMPLEX ? ref_round(bits, im) : 0;
    ovf = (isfinite(re) && isinf(rr)) || (isfinite(im) && isinf(ri));
    inexact = (!isnan(re) && rr != re) ||
              (T[d].cls == C_COMPLEX && !isnan(im) && ri != im);
  }
  if (mode >= 1 && ovf) {
    e.status = CK_ERR_OVERFLOW;
  } else if (mode >= 3 && inexact) {
    e.status = CK_ERR_VALUE;
  }
  e.re = rr;
  e.im = ri;
  return e;
}

static bool same_d(double a, double b) {
  if (isnan(a) || isnan(b)) {
    return isnan(a) && isnan(b);
  }
  return a == b && signbit(a) == signbit(b);
}

/* Compare one result with the model; prints the first mismatches. */
static int mismatches;
static bool result_ok(int d, int s, int mode, const sval *v, const expect *e,
                      int st, const unsigned char *out, const char *how) {
  bool ok = st == (int)e->status;
  if (ok && e->status == CK_OK) {
    if (e->use_raw) {
      ok = memcmp(out, e->raw, T[d].size) == 0;
    } else {
      double im;
      double re = decode_float(d, out, &im);
      ok = same_d(re, e->re) && (T[d].cls != C_COMPLEX || same_d(im, e->im));
    }
  }
  if (ok && e->status != CK_OK) {
    /* the message names both types */
    char want[64];
    snprintf(want, sizeof want, "while assigning %s value", T[s].name);
    ok = strstr(ck_last_error(), want) != NULL &&
         strstr(ck_last_error(), T[d].name) != NULL;
  }
  if (!ok && mismatches++ < 25) {
    if (is_intlike(s)) {
      fprintf(stderr, "%s %s -> %s [%s] value %s%" PRIu64 ": ", how, T[s].name,
              T[d].name, mode_names[mode], v->neg ? "-" : "", v->mag);
    } else {
      fprintf(stderr, "%s %s -> %s [%s] value (%.17g, %.17g): ", how,
              T[s].name, T[d].name, mode_names[mode], v->re, v->im);
    }
    fprintf(stderr, "got %s '%s', expected %s\n", ck_status_name((ck_status)st),
            ck_last_error(), ck_status_name(e->status));
  }
  return ok;
}

static void test_full_table(void) {
  enum { MAXV = 1024 };
  static sval vals[MAXV];
  static unsigned char outs[2 * MAXV * 16], srcbuf[MAXV * 16];
  static expect exps[MAXV];
  long cases = 0;
  mismatches = 0;
  for (int s = CK_TYPE_BOOL; s <= CK_TYPE_COMPLEX128; s++) {
    size_t n = source_values(s, vals, MAXV);
    CHECK(n < MAXV);
    for (int d = CK_TYPE_BOOL; d <= CK_TYPE_COMPLEX128; d++) {
      for (int mode = 0; mode <= CK_ERRMODE_DEFAULT; mode++) {
        ck_kernel_builder kb;
        ck_kernel_builder_init(&kb);
        REQUIRE_OK(ck_make_builtin_assignment_kernel(
            &kb, 0, (ck_type_id)d, (ck_type_id)s, CK_KERNEL_REQUEST_SINGLE,
            (ck_errmode)mode, NULL));
        ck_prefix *k = ck_kernel_builder_get(&kb, 0);
        size_t first_err = n;
        for (size_t i = 0; i < n; i++) {
          unsigned char out[16];
          memset(out, 0xee, sizeof out);
          const char *src[1] = {(const char *)vals[i].bytes};
          ck_clear_error();
          int st = ck_prefix_single(k)((char *)out, src, k);
          exps[i] = ref_assign(d, s, mode, &vals[i]);
          CHECK(result_ok(d, s, mode, &vals[i], &exps[i], st, out, "single"));
          if (exps[i].status != CK_OK && first_err == n) {
            first_err = i;
          }
          cases++;
        }
        ck_kernel_builder_destroy(&kb);

        /* strided over all values: contiguous forwards, then backwards with
         * a padded stride; stops at the first error */
        ck_kernel_builder_init(&kb);
        REQUIRE_OK(ck_make_builtin_assignment_kernel(
            &kb, 0, (ck_type_id)d, (ck_type_id)s, CK_KERNEL_REQUEST_STRIDED,
            (ck_errmode)mode, NULL));
        k = ck_kernel_builder_get(&kb, 0);
        size_t ds = T[d].size, ss = T[s].size;
        for (size_t i = 0; i < n; i++) {
          memcpy(srcbuf + i * ss, vals[i].bytes, ss);
        }
        memset(outs, 0xee, n * ds);
        const char *src[1] = {(const char *)srcbuf};
        intptr_t sst[1] = {(intptr_t)ss};
        ck_clear_error();
        int st = ck_prefix_strided(k)((char *)outs, (intptr_t)ds, src, sst, n, k);
        CHECK(st == (first_err < n ? (int)exps[first_err].status : 0));
        for (size_t i = 0; i < n; i++) {
          if (i < first_err) {
            CHECK(result_ok(d, s, mode, &vals[i], &exps[i], 0, outs + i * ds,
                            "strided"));
          } else {
            bool untouched = true;
            for (size_t b = 0; b < ds; b++) {
              untouched = untouched && outs[i * ds + b] == 0xee;
            }
            CHECK(untouched);
          }
        }
        /* backwards: source read from the end, destination stride 2*ds */
        size_t last_err = n; /* the first error met going backwards */
        for (size_t i = n; i-- > 0;) {
          if (exps[i].status != CK_OK) {
            last_err = i;
            break;
          }
        }
        memset(outs, 0xee, 2 * n * ds);
        src[0] = (const char *)srcbuf + (n - 1) * ss;
        sst[0] = -(intptr_t)ss;
        ck_clear_error();
        st = ck_prefix_strided(k)((char *)outs, 2 * (intptr_t)ds, src, sst, n, k);
        CHECK(st == (last_err < n ? (int)exps[last_err].status : 0));
        for (size_t j = 0; j < n; j++) {
          size_t i = n - 1 - j; /* output j holds source i */
          if (last_err < n && i <= last_err) {
            break;
          }
          CHECK(result_ok(d, s, mode, &vals[i], &exps[i], 0, outs + 2 * j * ds,
                          "strided-reverse"));
        }
        ck_kernel_builder_destroy(&kb);
      }
    }
  }
  printf("table: %ld single cases%s\n", cases,
         int_to_float_rounds_once()
             ? ""
             : " (int64 -> float32 double-rounds here: 2 values left out)");
  CHECK(cases > 14 * 14 * 5 * 20);
}

static void test_messages(void) {
  int64_t i64 = 300;
  uint8_t u8;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_UINT8, &u8, CK_TYPE_INT64, &i64,
                                    CK_ERRMODE_OVERFLOW),
            CK_ERR_OVERFLOW, "assign: overflow while assigning int64 value 300 to uint8");
  double d = 3.5;
  int32_t i32 = 0;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_INT32, &i32, CK_TYPE_FLOAT64, &d,
                                    CK_ERRMODE_DEFAULT),
            CK_ERR_VALUE,
            "fractional part lost while assigning float64 value 3.5 to int32");
  CHECK_OK(ck_assign_builtin_value(CK_TYPE_INT32, &i32, CK_TYPE_FLOAT64, &d,
                                   CK_ERRMODE_OVERFLOW));
  CHECK(i32 == 3);
  d = 0.1;
  float f;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_FLOAT32, &f, CK_TYPE_FLOAT64, &d,
                                    CK_ERRMODE_INEXACT),
            CK_ERR_VALUE, "inexact value while assigning float64 value 0.1 to float32");
  CHECK_OK(ck_assign_builtin_value(CK_TYPE_FLOAT32, &f, CK_TYPE_FLOAT64, &d,
                                   CK_ERRMODE_DEFAULT));
  CHECK(f == 0.1f);
  d = 1e300;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_FLOAT32, &f, CK_TYPE_FLOAT64, &d,
                                    CK_ERRMODE_DEFAULT),
            CK_ERR_OVERFLOW, "overflow while assigning float64 value 1e+300 to float32");
  d = NAN;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_INT64, &i64, CK_TYPE_FLOAT64, &d,
                                    CK_ERRMODE_OVERFLOW),
            CK_ERR_OVERFLOW, "float64 value nan to int64");
  double c[2] = {1, 2};
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_FLOAT64, &d, CK_TYPE_COMPLEX128, c,
                                    CK_ERRMODE_OVERFLOW),
            CK_ERR_VALUE,
            "imaginary part lost while assigning complex128 value (1+2j) to float64");
  c[1] = -0.25;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_INT8, &u8, CK_TYPE_COMPLEX128, c,
                                    CK_ERRMODE_DEFAULT),
            CK_ERR_VALUE, "(1-0.25j)");
  float f32 = 0.1f;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_INT8, &u8, CK_TYPE_FLOAT32, &f32,
                                    CK_ERRMODE_DEFAULT),
            CK_ERR_VALUE, "float32 value 0.1 to int8"); /* shortest float32 text */
  uint16_t h = 0x3c00 | 0x1; /* 1.0009765625 */
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_UINT16, &h, CK_TYPE_FLOAT16, &h,
                                    CK_ERRMODE_DEFAULT),
            CK_ERR_VALUE, "float16 value 1.001 to uint16");
  int64_t big = (INT64_C(1) << 53) + 1;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_FLOAT64, &d, CK_TYPE_INT64, &big,
                                    CK_ERRMODE_INEXACT),
            CK_ERR_VALUE, "inexact value while assigning int64 value 9007199254740993 to float64");
  uint8_t b = 1;
  i32 = 2;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_BOOL, &b, CK_TYPE_INT32, &i32,
                                    CK_ERRMODE_DEFAULT),
            CK_ERR_OVERFLOW, "overflow while assigning int32 value 2 to bool");
  CHECK_OK(ck_assign_builtin_value(CK_TYPE_BOOL, &b, CK_TYPE_INT32, &i32,
                                   CK_ERRMODE_NOCHECK));
  CHECK(b == 1);
  uint64_t u64 = UINT64_MAX;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_INT64, &i64, CK_TYPE_UINT64, &u64,
                                    CK_ERRMODE_OVERFLOW),
            CK_ERR_OVERFLOW, "uint64 value 18446744073709551615 to int64");
  CHECK_OK(ck_assign_builtin_value(CK_TYPE_INT64, &i64, CK_TYPE_UINT64, &u64,
                                   CK_ERRMODE_NOCHECK));
  CHECK(i64 == -1);
}

static void test_nocheck_semantics(void) {
  /* documented NOCHECK results (also in the table, spelled out here) */
  double vals[] = {NAN, 1e300, -1e300, INFINITY, -INFINITY, -0.99, 2.99, -2.99};
  int32_t want32[] = {0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0, 2, -2};
  uint16_t wantu16[] = {0, 65535, 0, 65535, 0, 0, 2, 0};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    int32_t o32;
    uint16_t o16;
    CHECK_OK(ck_assign_builtin_value(CK_TYPE_INT32, &o32, CK_TYPE_FLOAT64,
                                     &vals[i], CK_ERRMODE_NOCHECK));
    CHECK(o32 == want32[i]);
    CHECK_OK(ck_assign_builtin_value(CK_TYPE_UINT16, &o16, CK_TYPE_FLOAT64,
                                     &vals[i], CK_ERRMODE_NOCHECK));
    CHECK(o16 == wantu16[i]);
  }
  int64_t i64 = 300;
  int8_t i8;
  CHECK_OK(ck_assign_builtin_value(CK_TYPE_INT8, &i8, CK_TYPE_INT64, &i64,
                                   CK_ERRMODE_NOCHECK));
  CHECK(i8 == 44); /* 300 mod 256 */
  double nan = NAN;
  uint8_t b = 0;
  CHECK_OK(ck_assign_builtin_value(CK_TYPE_BOOL, &b, CK_TYPE_FLOAT64, &nan,
                                   CK_ERRMODE_NOCHECK));
  CHECK(b == 1);
}

static void test_float16_exhaustive(void) {
  ck_kernel_builder to64, to16, f32to16;
  ck_kernel_builder_init(&to64);
  ck_kernel_builder_init(&to16);
  ck_kernel_builder_init(&f32to16);
  REQUIRE_OK(ck_make_builtin_assignment_kernel(&to64, 0, CK_TYPE_FLOAT64,
                                               CK_TYPE_FLOAT16, CK_KERNEL_REQUEST_STRIDED,
                                               CK_ERRMODE_NOCHECK, NULL));
  REQUIRE_OK(ck_make_builtin_assignment_kernel(&to16, 0, CK_TYPE_FLOAT16,
                                               CK_TYPE_FLOAT64, CK_KERNEL_REQUEST_STRIDED,
                                               CK_ERRMODE_NOCHECK, NULL));
  REQUIRE_OK(ck_make_builtin_assignment_kernel(&f32to16, 0, CK_TYPE_FLOAT16,
                                               CK_TYPE_FLOAT32, CK_KERNEL_REQUEST_STRIDED,
                                               CK_ERRMODE_NOCHECK, NULL));
  static uint16_t h[65536], back[65536];
  static double d[65536];
  for (size_t i = 0; i < 65536; i++) {
    h[i] = (uint16_t)i;
  }
  const char *src[1] = {(const char *)h};
  intptr_t ss[1] = {2};
  ck_prefix *k = ck_kernel_builder_get(&to64, 0);
  REQUIRE(ck_prefix_strided(k)((char *)d, 8, src, ss, 65536, k) == 0);
  src[0] = (const char *)d;
  ss[0] = 8;
  k = ck_kernel_builder_get(&to16, 0);
  REQUIRE(ck_prefix_strided(k)((char *)back, 2, src, ss, 65536, k) == 0);
  int bad = 0;
  for (size_t i = 0; i < 65536; i++) {
    double ref = ref_decode_f16((uint16_t)i);
    if (!same_d(d[i], ref)) {
      bad++;
    }
    bool is_nan = ((i >> 10) & 0x1f) == 31 && (i & 0x3ff) != 0;
    if (is_nan ? (back[i] & 0x7c00) != 0x7c00 || (back[i] & 0x3ff) == 0
               : back[i] != i) {
      bad++;
    }
  }
  CHECK(bad == 0);

  /* rounding: midpoints between neighbours (ties to even), and just off
   * them, from float64 and from float32 */
  int bad_round = 0;
  for (uint32_t i = 0; i < 0x7c00; i++) {
    for (int sign = 0; sign < 2; sign++) {
      double a = ref_decode_f16((uint16_t)i), b = ref_decode_f16((uint16_t)(i + 1));
      if (isinf(b)) {
        b = 65536; /* the midpoint 65520 rounds to inf (ties to even) */
      }
      double mid = (a + b) / 2; /* exact in float64 and float32 */
      double xs[3] = {(double)mid, nextafter((double)mid, -INFINITY),
                      nextafter((double)mid, INFINITY)};
      float fs[3] = {(float)mid, nextafterf((float)mid, -INFINITY),
                     nextafterf((float)mid, INFINITY)};
      for (int m = 0; m < 3; m++) {
        double x = sign ? -xs[m] : xs[m];
        float xf = sign ? -fs[m] : fs[m];
        uint16_t got = 0;
        const char *s1[1] = {(const char *)&x};
        intptr_t one[1] = {8};
        k = ck_kernel_builder_get(&to16, 0);
        (void)ck_prefix_strided(k)((char *)&got, 2, s1, one, 1, k);
        bad_round += got != ref_encode_f16(ref_round_f16(x));
        const char *s2[1] = {(const char *)&xf};
        intptr_t four[1] = {4};
        k = ck_kernel_builder_get(&f32to16, 0);
        (void)ck_prefix_strided(k)((char *)&got, 2, s2, four, 1, k);
        bad_round += got != ref_encode_f16(ref_round_f16(xf));
      }
    }
  }
  CHECK(bad_round == 0);
  /* a float32 just above a float16 midpoint must round up (no double
   * rounding through an intermediate) */
  float just_above = nextafterf(1.0f + 0x1p-11f, 2.0f);
  uint16_t r16;
  CHECK_OK(ck_assign_builtin_value(CK_TYPE_FLOAT16, &r16, CK_TYPE_FLOAT32,
                                   &just_above, CK_ERRMODE_NOCHECK));
  CHECK(r16 == 0x3c01);
  ck_kernel_builder_destroy(&to64);
  ck_kernel_builder_destroy(&to16);
  ck_kernel_builder_destroy(&f32to16);
}

static void test_strides(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  for (int mode = 0; mode < 2; mode++) {
    ck_kernel_builder_reset(&kb);
    REQUIRE_OK(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_FLOAT64,
                                                 CK_TYPE_INT32, CK_KERNEL_REQUEST_STRIDED,
                                                 (ck_errmode)mode, NULL));
    ck_prefix *k = ck_kernel_builder_get(&kb, 0);
    int32_t in[5] = {1, 2, 3, 4, 5};
    double out[10];
    /* negative source stride: reversed */
    const char *src[1] = {(const char *)&in[4]};
    intptr_t ss[1] = {-4};
    CHECK(ck_prefix_strided(k)((char *)out, 8, src, ss, 5, k) == 0);
    CHECK(out[0] == 5 && out[4] == 1);
    /* negative destination stride */
    src[0] = (const char *)in;
    ss[0] = 4;
    CHECK(ck_prefix_strided(k)((char *)&out[4], -8, src, ss, 5, k) == 0);
    CHECK(out[4] == 1 && out[0] == 5);
    /* zero source stride: broadcast */
    ss[0] = 0;
    CHECK(ck_prefix_strided(k)((char *)out, 16, src, ss, 5, k) == 0);
    CHECK(out[0] == 1 && out[2] == 1 && out[8] == 1);
    /* zero destination stride: the last element wins */
    ss[0] = 4;
    CHECK(ck_prefix_strided(k)((char *)out, 0, src, ss, 5, k) == 0);
    CHECK(out[0] == 5);
    /* count 0 touches nothing */
    out[0] = -1;
    CHECK(ck_prefix_strided(k)((char *)out, 8, src, ss, 0, k) == 0);
    CHECK(out[0] == -1);
  }
  ck_kernel_builder_destroy(&kb);
}

static void test_contiguous_large(void) {
  /* the vectorised NOCHECK paths against elementwise expectations */
  enum { N = 1003 };
  static int32_t i32[N];
  static double f64[N];
  static int32_t back[N];
  static uint8_t u8[N];
  static float f32[N];
  for (int i = 0; i < N; i++) {
    i32[i] = (i - 500) * 4000000 + i;
    u8[i] = (uint8_t)(i * 7);
  }
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  REQUIRE_OK(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_FLOAT64, CK_TYPE_INT32,
                                               CK_KERNEL_REQUEST_STRIDED,
                                               CK_ERRMODE_NOCHECK, NULL));
  ck_prefix *k = ck_kernel_builder_get(&kb, 0);
  const char *src[1] = {(const char *)i32};
  intptr_t ss[1] = {4};
  CHECK(ck_prefix_strided(k)((char *)f64, 8, src, ss, N, k) == 0);
  bool ok = true;
  for (int i = 0; i < N; i++) {
    ok = ok && f64[i] == (double)i32[i];
  }
  CHECK(ok);
  f64[3] = NAN;
  f64[4] = 1e10;
  f64[5] = -1e10;
  f64[6] = -7.9;
  ck_kernel_builder_reset(&kb);
  REQUIRE_OK(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_INT32, CK_TYPE_FLOAT64,
                                               CK_KERNEL_REQUEST_STRIDED,
                                               CK_ERRMODE_NOCHECK, NULL));
  k = ck_kernel_builder_get(&kb, 0);
  src[0] = (const char *)f64;
  ss[0] = 8;
  CHECK(ck_prefix_strided(k)((char *)back, 4, src, ss, N, k) == 0);
  CHECK(back[3] == 0 && back[4] == INT32_MAX && back[5] == INT32_MIN && back[6] == -7);
  ok = true;
  for (int i = 7; i < N; i++) {
    ok = ok && back[i] == i32[i];
  }
  CHECK(ok);
  ck_kernel_builder_reset(&kb);
  REQUIRE_OK(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_FLOAT32, CK_TYPE_UINT8,
                                               CK_KERNEL_REQUEST_STRIDED,
                                               CK_ERRMODE_NOCHECK, NULL));
  k = ck_kernel_builder_get(&kb, 0);
  src[0] = (const char *)u8;
  ss[0] = 1;
  CHECK(ck_prefix_strided(k)((char *)f32, 4, src, ss, N, k) == 0);
  ok = true;
  for (int i = 0; i < N; i++) {
    ok = ok && f32[i] == (float)u8[i];
  }
  CHECK(ok);
  ck_kernel_builder_destroy(&kb);
}

static void test_pod_copy(void) {
  size_t sizes[] = {0, 1, 2, 3, 4, 8, 12, 16, 24};
  static unsigned char src[8 * 24 + 1], dst[16 * 24 + 1];
  for (size_t i = 0; i < sizeof src; i++) {
    src[i] = (unsigned char)(i * 13 + 1);
  }
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    size_t n = sizes[z];
    ck_kernel_builder kb;
    ck_kernel_builder_init(&kb);
    size_t end = 0;
    REQUIRE_OK(ck_make_pod_copy_kernel(&kb, 0, n, CK_KERNEL_REQUEST_STRIDED, &end));
    CHECK(end == sizeof(ck_pod_copy_kernel));
    ck_prefix *k = ck_kernel_builder_get(&kb, 0);
    /* contiguous, unaligned (offset 1) */
    memset(dst, 0, sizeof dst);
    const char *s[1] = {(const char *)src + 1};
    intptr_t ss[1] = {(intptr_t)n};
    CHECK(ck_prefix_strided(k)((char *)dst + 1, (intptr_t)n, s, ss, 8, k) == 0);
    CHECK(memcmp(dst + 1, src + 1, 8 * n) == 0);
    CHECK(dst[0] == 0 && dst[8 * n + 1] == 0);
    /* strided destination, reversed source */
    memset(dst, 0, sizeof dst);
    s[0] = (const char *)src + 7 * n;
    ss[0] = -(intptr_t)n;
    CHECK(ck_prefix_strided(k)((char *)dst, 2 * (intptr_t)n, s, ss, 8, k) == 0);
    bool ok = true;
    for (size_t i = 0; i < 8; i++) {
      ok = ok && memcmp(dst + 2 * n * i, src + (7 - i) * n, n) == 0;
    }
    CHECK(ok);
    ck_kernel_builder_destroy(&kb);
    /* single */
    ck_kernel_builder_init(&kb);
    REQUIRE_OK(ck_make_pod_copy_kernel(&kb, 0, n, CK_KERNEL_REQUEST_SINGLE, NULL));
    k = ck_kernel_builder_get(&kb, 0);
    memset(dst, 0, sizeof dst);
    s[0] = (const char *)src + 3;
    CHECK(ck_kernel_call_single(k, (char *)dst + 5, s) == 0);
    CHECK(memcmp(dst + 5, src + 3, n) == 0 && dst[5 + n] == 0);
    ck_kernel_builder_destroy(&kb);
  }
}

static void test_argument_errors(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  CHECK_ERR(ck_make_builtin_assignment_kernel(NULL, 0, CK_TYPE_INT8, CK_TYPE_INT8,
                                              CK_KERNEL_REQUEST_SINGLE, 0, NULL),
            CK_ERR_INVALID_ARGUMENT, "NULL kernel builder");
  CHECK_ERR(ck_make_builtin_assignment_kernel(&kb, 4, CK_TYPE_INT8, CK_TYPE_INT8,
                                              CK_KERNEL_REQUEST_SINGLE, 0, NULL),
            CK_ERR_INVALID_ARGUMENT, "not a multiple of 8");
  CHECK_ERR(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_STRING, CK_TYPE_INT8,
                                              CK_KERNEL_REQUEST_SINGLE, 0, NULL),
            CK_ERR_TYPE, "type id 67 is not a builtin scalar type");
  CHECK_ERR(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_INT8,
                                              CK_TYPE_UNINITIALIZED,
                                              CK_KERNEL_REQUEST_SINGLE, 0, NULL),
            CK_ERR_TYPE, "type id 0");
  CHECK_ERR(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_INT8, CK_TYPE_INT8,
                                              (ck_kernel_request)2, 0, NULL),
            CK_ERR_INVALID_ARGUMENT, "unknown kernel request 2");
  CHECK_ERR(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_INT8, CK_TYPE_INT8,
                                              CK_KERNEL_REQUEST_SINGLE,
                                              (ck_errmode)5, NULL),
            CK_ERR_INVALID_ARGUMENT, "unknown error mode 5");
  CHECK_ERR(ck_make_builtin_assignment_kernel(&kb, SIZE_MAX - 7, CK_TYPE_INT8,
                                              CK_TYPE_INT8, CK_KERNEL_REQUEST_SINGLE,
                                              0, NULL),
            CK_ERR_OVERFLOW, "overflows");
  CHECK_ERR(ck_make_pod_copy_kernel(&kb, 3, 4, CK_KERNEL_REQUEST_SINGLE, NULL),
            CK_ERR_INVALID_ARGUMENT, "not a multiple");
  CHECK(ck_kernel_builder_get(&kb, 0)->function == NULL); /* nothing built */
  /* a leaf far out grows the builder itself */
  size_t end;
  REQUIRE_OK(ck_make_builtin_assignment_kernel(&kb, 4096, CK_TYPE_INT8, CK_TYPE_INT8,
                                               CK_KERNEL_REQUEST_SINGLE, 0, &end));
  CHECK(end == 4096 + sizeof(ck_prefix));
  CHECK(ck_kernel_builder_capacity(&kb) >= end);
  ck_kernel_builder_destroy(&kb);

  ck_errmode m;
  CHECK_OK(ck_errmode_from_name("inexact", &m));
  CHECK(m == CK_ERRMODE_INEXACT);
  CHECK_ERR(ck_errmode_from_name("strict", &m), CK_ERR_INVALID_ARGUMENT,
            "unknown error mode 'strict'");
  CHECK(strcmp(ck_errmode_name(CK_ERRMODE_DEFAULT), "default") == 0);
  CHECK(ck_errmode_name((ck_errmode)9) == NULL);
  int8_t x = 0;
  CHECK_ERR(ck_assign_builtin_value(CK_TYPE_INT8, NULL, CK_TYPE_INT8, &x, 0),
            CK_ERR_INVALID_ARGUMENT, "NULL");
}

static void test_builds_allocate_nothing(void) {
  uint64_t a0 = ck_debug_alloc_count();
  for (int d = CK_TYPE_BOOL; d <= CK_TYPE_COMPLEX128; d++) {
    for (int s = CK_TYPE_BOOL; s <= CK_TYPE_COMPLEX128; s++) {
      ck_kernel_builder kb;
      ck_kernel_builder_init(&kb);
      CHECK_OK(ck_make_builtin_assignment_kernel(&kb, 0, (ck_type_id)d, (ck_type_id)s,
                                                 CK_KERNEL_REQUEST_STRIDED,
                                                 CK_ERRMODE_DEFAULT, NULL));
      ck_kernel_builder_destroy(&kb);
    }
  }
  CHECK(ck_debug_alloc_count() == a0);
}

CK_TEST_MAIN(CK_TEST(test_full_table), CK_TEST(test_messages),
             CK_TEST(test_nocheck_semantics), CK_TEST(test_float16_exhaustive),
             CK_TEST(test_strides), CK_TEST(test_contiguous_large),
             CK_TEST(test_pod_copy), CK_TEST(test_argument_errors),
             CK_TEST(test_builds_allocate_nothing))
