/* Reductions: hand-computed sums/products/min/max/any/all over chosen axes
 * with keepdims, NumPy result dtypes, NaN propagation, empty reductions,
 * pairwise float summation accuracy, negative strides, errors, the mask
 * variant, and the binary-kernel plug-in path fed by the op registry. */
#include "ck_test.h"

#include <math.h>

/* (2, 3, 4) int32 holding 0..23 */
static ck_array_preamble *cube(void) {
  intptr_t s[3] = {2, 3, 4};
  ck_array_preamble *a = arr("strided * strided * strided * int32", 3, s);
  if (a) {
    for (int i = 0; i < 24; i++) {
      ((int32_t *)(void *)a->data)[i] = i;
    }
  }
  return a;
}

static bool shape_is(const ck_array_preamble *a, size_t nd, const intptr_t *expect) {
  intptr_t s[8];
  size_t n;
  if (ck_array_shape(a, s, 8, &n) != CK_OK || n != nd) {
    return false;
  }
  for (size_t i = 0; i < nd; i++) {
    if (s[i] != expect[i]) {
      return false;
    }
  }
  return true;
}

static int64_t i64at(const ck_array_preamble *a, size_t i) {
  return ((const int64_t *)(const void *)a->data)[i];
}

static void test_sum_axes(void) {
  ck_array_preamble *a = cube(), *r = NULL;
  REQUIRE(a != NULL);
  /* all axes */
  REQUIRE_OK(ck_array_reduce("sum", a, NULL, 0, false, &r));
  CHECK(strcmp(tstr(r->type), "int64") == 0);
  CHECK(i64at(r, 0) == 276);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("sum", a, NULL, 0, true, &r));
  CHECK(strcmp(tstr(r->type), "strided * strided * strided * int64") == 0);
  CHECK(shape_is(r, 3, (intptr_t[]){1, 1, 1}) && i64at(r, 0) == 276);
  ck_array_decref(r);
  /* axis 0: (3,4) = a[0] + a[1] */
  size_t ax0[1] = {0};
  REQUIRE_OK(ck_array_reduce("sum", a, ax0, 1, false, &r));
  CHECK(shape_is(r, 2, (intptr_t[]){3, 4}));
  for (int i = 0; i < 12; i++) {
    CHECK(i64at(r, (size_t)i) == i + (i + 12));
  }
  ck_array_decref(r);
  /* axis 2 with keepdims: (2,3,1), row sums 4*base+6 */
  size_t ax2[1] = {2};
  REQUIRE_OK(ck_array_reduce("sum", a, ax2, 1, true, &r));
  CHECK(shape_is(r, 3, (intptr_t[]){2, 3, 1}));
  for (int i = 0; i < 6; i++) {
    CHECK(i64at(r, (size_t)i) == 4 * (4 * i) + 6);
  }
  ck_array_decref(r);
  /* axes {0, 2} in either order: (3,) */
  size_t ax02[2] = {2, 0};
  REQUIRE_OK(ck_array_reduce("sum", a, ax02, 2, false, &r));
  CHECK(shape_is(r, 1, (intptr_t[]){3}));
  /* j: sum over i,k of 12i + 4j + k = 12*4 + 8*4j + 2*6 */
  for (int j = 0; j < 3; j++) {
    CHECK(i64at(r, (size_t)j) == 48 + 32 * j + 12);
  }
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("sum", a, ax02, 2, true, &r));
  CHECK(shape_is(r, 3, (intptr_t[]){1, 3, 1}) && i64at(r, 2) == 48 + 64 + 12);
  ck_array_decref(r);
  /* no axes: a converted copy */
  size_t none[1] = {0};
  REQUIRE_OK(ck_array_reduce("sum", a, none, 0, false, &r));
  CHECK(shape_is(r, 3, (intptr_t[]){2, 3, 4}) && i64at(r, 23) == 23);
  ck_array_decref(r);
  /* the mask variant */
  bool mask[3] = {false, true, false};
  REQUIRE_OK(ck_array_reduce_mask("add", a, mask, 3, false, &r));
  CHECK(shape_is(r, 2, (intptr_t[]){2, 4}) && i64at(r, 0) == 0 + 4 + 8);
  ck_array_decref(r);
  CHECK_ERR(ck_array_reduce_mask("sum", a, mask, 2, false, &r), CK_ERR_INVALID_ARGUMENT,
            "mask has 2 entries");
  /* product / min / max along axis 1 */
  REQUIRE_OK(ck_array_reduce("prod", a, (size_t[]){1}, 1, false, &r));
  CHECK(i64at(r, 1) == 1 * 5 * 9 && i64at(r, 4) == 12 * 16 * 20);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("max", a, (size_t[]){1}, 1, false, &r));
  CHECK(strcmp(tstr(r->type), "strided * strided * int32") == 0);
  CHECK(((int32_t *)(void *)r->data)[7] == 23);
  ck_array_decref(r);
  ((int32_t *)(void *)a->data)[13] = -50;
  REQUIRE_OK(ck_array_reduce("minimum", a, NULL, 0, false, &r));
  CHECK(*(int32_t *)(void *)r->data == -50);
  ck_array_decref(r);
  ck_array_decref(a);
}

static void test_dtypes(void) {
  intptr_t n = 4;
  struct {
    const char *src, *op, *res;
  } cases[] = {
      {"strided * bool", "sum", "int64"},      {"strided * int8", "sum", "int64"},
      {"strided * int32", "product", "int64"}, {"strided * uint8", "sum", "uint64"},
      {"strided * uint32", "prod", "uint64"},  {"strided * float16", "sum", "float16"},
      {"strided * float32", "sum", "float32"}, {"strided * complex64", "sum", "complex64"},
      {"strided * uint16", "min", "uint16"},   {"strided * float64", "any", "bool"},
      {"strided * int16", "all", "bool"},      {"strided * complex128", "max", "complex128"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_array_preamble *a = arr(cases[i].src, 1, &n), *r = NULL;
    CHECK_OK(ck_array_reduce(cases[i].op, a, NULL, 0, false, &r));
    if (r) {
      CHECK(strcmp(tstr(r->type), cases[i].res) == 0);
    }
    ck_array_decref(r);
    ck_array_decref(a);
  }
  /* values: uint8 sum wraps nowhere (uint64), bool sum counts */
  ck_array_preamble *u = arr("strided * uint8", 1, &n), *r = NULL;
  memset(u->data, 200, 4);
  REQUIRE_OK(ck_array_reduce("sum", u, NULL, 0, false, &r));
  CHECK(*(uint64_t *)(void *)r->data == 800);
  ck_array_decref(r);
  ck_array_decref(u);
  ck_array_preamble *b = arr("strided * bool", 1, &n);
  b->data[1] = 1;
  b->data[3] = 1;
  REQUIRE_OK(ck_array_reduce("sum", b, NULL, 0, false, &r));
  CHECK(i64at(r, 0) == 2);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("any", b, NULL, 0, false, &r));
  CHECK(r->data[0] == 1);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("all", b, NULL, 0, false, &r));
  CHECK(r->data[0] == 0);
  ck_array_decref(r);
  ck_array_decref(b);
  /* complex: sum, product, lexicographic max */
  ck_array_preamble *c = arr("strided * complex128", 1, &n);
  double cv[8] = {1, 2, 3, -1, 3, 5, 0, 1};
  memcpy(c->data, cv, sizeof cv);
  REQUIRE_OK(ck_array_reduce("sum", c, NULL, 0, false, &r));
  CHECK(((double *)(void *)r->data)[0] == 7 && ((double *)(void *)r->data)[1] == 7);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("max", c, NULL, 0, false, &r));
  CHECK(((double *)(void *)r->data)[0] == 3 && ((double *)(void *)r->data)[1] == 5);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("product", c, NULL, 0, false, &r));
  /* (1+2j)(3-1j) = 5+5j; (5+5j)(3+5j) = -10+40j; * 1j = -40-10j */
  CHECK(((double *)(void *)r->data)[0] == -40 && ((double *)(void *)r->data)[1] == -10);
  ck_array_decref(r);
  ck_array_decref(c);
  /* float16 sum */
  ck_array_preamble *h = arr("strided * float16", 1, &n);
  uint16_t hv[4] = {0x3c00, 0x4000, 0x4200, 0x4400}; /* 1, 2, 3, 4 */
  memcpy(h->data, hv, 8);
  REQUIRE_OK(ck_array_reduce("sum", h, NULL, 0, false, &r));
  CHECK(*(uint16_t *)(void *)r->data == 0x4900); /* 10 */
  ck_array_decref(r);
  ck_array_decref(h);
}

static void test_nan_and_empty(void) {
  intptr_t n = 5;
  ck_array_preamble *a = arr("strided * float64", 1, &n), *r = NULL;
  double v[5] = {3, NAN, -1, 7, 2};
  memcpy(a->data, v, sizeof v);
  REQUIRE_OK(ck_array_reduce("min", a, NULL, 0, false, &r));
  CHECK(isnan(*(double *)(void *)r->data));
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("max", a, NULL, 0, false, &r));
  CHECK(isnan(*(double *)(void *)r->data));
  ck_array_decref(r);
  ((double *)(void *)a->data)[1] = 0;
  REQUIRE_OK(ck_array_reduce("min", a, NULL, 0, false, &r));
  CHECK(*(double *)(void *)r->data == -1);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("all", a, NULL, 0, false, &r));
  CHECK(r->data[0] == 0);
  ck_array_decref(r);
  ck_array_decref(a);
  /* empty */
  intptr_t s03[2] = {0, 3};
  ck_array_preamble *e = arr("strided * strided * float32", 2, s03);
  CHECK_ERR(ck_array_reduce("min", e, NULL, 0, false, &r), CK_ERR_VALUE,
            "zero-size array to reduction operation minimum which has no identity");
  CHECK(r == NULL);
  CHECK_ERR(ck_array_reduce("max", e, (size_t[]){0}, 1, false, &r), CK_ERR_VALUE,
            "reduction operation maximum which has no identity");
  /* reducing the size-3 axis of an empty array gives an empty result */
  CHECK_OK(ck_array_reduce("min", e, (size_t[]){1}, 1, false, &r));
  CHECK(shape_is(r, 1, (intptr_t[]){0}));
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("sum", e, NULL, 0, false, &r));
  CHECK(*(float *)(void *)r->data == 0);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("prod", e, (size_t[]){0}, 1, true, &r));
  CHECK(shape_is(r, 2, (intptr_t[]){1, 3}) && ((float *)(void *)r->data)[2] == 1);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("any", e, NULL, 0, false, &r));
  CHECK(r->data[0] == 0);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce("all", e, NULL, 0, false, &r));
  CHECK(r->data[0] == 1);
  ck_array_decref(r);
  ck_array_decref(e);
}

static void test_pairwise_accuracy(void) {
  intptr_t n = 1000003;
  ck_array_preamble *a = arr("strided * float64", 1, &n), *r = NULL;
  REQUIRE(a != NULL);
  double *v = (double *)(void *)a->data;
  /* reference: Neumaier's compensated sum (no long double: valgrind runs
   * x87 long double at double precision) */
  double exact = 0, comp = 0;
  for (intptr_t i = 0; i < n; i++) {
    v[i] = 0.1 + (double)(i % 7) * 1e-3;
    double t = exact + v[i];
    comp += fabs(exact) >= fabs(v[i]) ? (exact - t) + v[i] : (v[i] - t) + exact;
    exact = t;
  }
  exact += comp;
  REQUIRE_OK(ck_array_reduce("sum", a, NULL, 0, false, &r));
  double got = *(double *)(void *)r->data;
  double naive = 0;
  for (intptr_t i = 0; i < n; i++) {
    naive += v[i];
  }
  double err = fabs(got - exact), nerr = fabs(naive - exact);
  CHECK(err <= 4 * (nextafter(exact, INFINITY) - exact)); /* a few ulp */
  CHECK(err <= nerr);
  ck_array_decref(r);
  /* the same through a reversed view */
  ck_array_preamble *rev;
  REQUIRE_OK(ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &rev));
  REQUIRE_OK(ck_array_reduce("sum", rev, NULL, 0, false, &r));
  CHECK(fabs(*(double *)(void *)r->data - exact) <= 4 * (nextafter(exact, INFINITY) - exact));
  ck_array_decref(r);
  ck_array_decref(rev);
  /* float32 data (summed in double) */
  ck_array_preamble *f = arr("strided * float32", 1, &n);
  for (intptr_t i = 0; i < n; i++) {
    ((float *)(void *)f->data)[i] = 0.1f;
  }
  REQUIRE_OK(ck_array_reduce("sum", f, NULL, 0, false, &r));
  float fs = *(float *)(void *)r->data;
  CHECK(fabs((double)fs - (double)n * (double)0.1f) <= 0.02);
  ck_array_decref(r);
  ck_array_decref(f);
  ck_array_decref(a);
  CHECK_OK(ck_thread_pool_shutdown()); /* a large sum may have started workers */
}

static void test_errors(void) {
  ck_array_preamble *a = cube(), *r = NULL;
  CHECK_ERR(ck_array_reduce("sum", a, (size_t[]){3}, 1, false, &r), CK_ERR_INDEX,
            "axis 3 is out of bounds for array of dimension 3");
  CHECK_ERR(ck_array_reduce("sum", a, (size_t[]){1, 1}, 2, false, &r), CK_ERR_VALUE,
            "duplicate value in 'axis'");
  CHECK_ERR(ck_array_reduce("mean", a, NULL, 0, false, &r), CK_ERR_INVALID_ARGUMENT,
            "unknown reduction 'mean'");
  intptr_t n = 2;
  ck_array_preamble *v = arr("strided * var * int32", 1, &n);
  CHECK_ERR(ck_array_reduce("sum", v, NULL, 0, false, &r), CK_ERR_NOT_SUPPORTED,
            "var dims");
  ck_array_preamble *s = arr("strided * string", 1, &n);
  CHECK_ERR(ck_array_reduce("sum", s, NULL, 0, false, &r), CK_ERR_TYPE,
            "builtin dtype");
  CHECK(r == NULL);
  ck_array_decref(s);
  ck_array_decref(v);
  ck_array_decref(a);
}

/* ---- plug-in: a binary kernel from the op registry ---- */

static ck_status registry_factory(void *data, ck_kernel_builder *ckb, size_t offset,
                                  ck_type_id dtype, ck_kernel_request req,
                                  size_t *out_end) {
  ck_type_id args[2] = {dtype, dtype};
  return ck_op_make_kernel((const ck_op *)data, ckb, offset, req, 2, args, NULL, out_end);
}

static void test_binary_plugin(void) {
  const ck_op *add = NULL, *mx = NULL;
  if (ck_op_find("add", &add) != CK_OK || ck_op_find("maximum", &mx) != CK_OK) {
    fprintf(stderr, "op registry has no add/maximum yet: skipped\n");
    return;
  }
  ck_array_preamble *a = cube(), *r1 = NULL, *r2 = NULL;
  int64_t zero = 0;
  size_t ax[1] = {1};
  REQUIRE_OK(ck_array_reduce_binary(registry_factory, (void *)add, "add", CK_TYPE_INT64,
                                    &zero, a, ax, 1, false, &r1));
  REQUIRE_OK(ck_array_reduce("sum", a, ax, 1, false, &r2));
  CHECK(strcmp(tstr(r1->type), tstr(r2->type)) == 0);
  CHECK(memcmp(r1->data, r2->data, 8 * 8) == 0);
  ck_array_decref(r1);
  ck_array_decref(r2);
  REQUIRE_OK(ck_array_reduce_binary(registry_factory, (void *)mx, "maximum",
                                    CK_TYPE_INT32, NULL, a, NULL, 0, true, &r1));
  CHECK(shape_is(r1, 3, (intptr_t[]){1, 1, 1}) && *(int32_t *)(void *)r1->data == 23);
  ck_array_decref(r1);
  intptr_t s0 = 0;
  ck_array_preamble *e = arr("strided * int32", 1, &s0);
  CHECK_ERR(ck_array_reduce_binary(registry_factory, (void *)mx, "maximum",
                                   CK_TYPE_INT32, NULL, e, NULL, 0, false, &r1),
            CK_ERR_VALUE, "zero-size array to reduction operation maximum");
  ck_array_decref(e);
  ck_array_decref(a);
}

static void test_fault_injection(void) {
  ck_array_preamble *a = cube();
  int64_t live = ck_memblock_live_count();
  ck_test_faults f = CK_TEST_FAULTS(50);
  while (ck_test_faults_arm(&f)) {
    ck_array_preamble *r = NULL;
    ck_status st = ck_array_reduce("max", a, (size_t[]){0, 2}, 2, true, &r);
    if (!ck_test_faults_fired(&f)) {
      CHECK(st == CK_OK && ((int32_t *)(void *)r->data)[1] == 23 - 4);
      ck_array_decref(r);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY && r == NULL);
    CHECK(ck_memblock_live_count() == live);
  }
  CHECK(f.runs >= 1);
  ck_array_decref(a);
}

/* ---- the thread pool: results independent of the thread count ---------------- */

/* A 1-d array of n elements of `type` filled from a deterministic sequence
 * (a simple LCG; values of every sign, with one NaN for floats if nan). */
static ck_array_preamble *filled(const char *type, intptr_t n, bool nan) {
  char full[64];
  snprintf(full, sizeof full, "strided * %s", type);
  ck_array_preamble *a = arr(full, 1, &n);
  if (a == NULL) {
    return NULL;
  }
  ck_type_id id = ck_type_id_of(ck_type_dtype(a->type));
  size_t es = ck_type_data_size(ck_type_dtype(a->type));
  uint64_t x = 12345;
  for (intptr_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    double v = (double)(int64_t)(x >> 20) / (double)(1ull << 40);
    if (id == CK_TYPE_BOOL) {
      v = (x >> 60) == 0; /* mostly false */
    }
    (void)ck_assign_builtin_value(id, a->data + (size_t)i * es, CK_TYPE_FLOAT64, &v,
                                  CK_ERRMODE_NOCHECK);
  }
  if (nan && (id == CK_TYPE_FLOAT64 || id == CK_TYPE_FLOAT32)) {
    double q = NAN;
    (void)ck_assign_builtin_value(id, a->data + (size_t)(n / 3) * es, CK_TYPE_FLOAT64, &q,
                                  CK_ERRMODE_NOCHECK);
  }
  return a;
}

static bool same_bytes(const ck_array_preamble *a, const ck_array_preamble *b) {
  size_t na = ck_type_data_size(ck_type_dtype(a->type));
  intptr_t sa[4], sb[4];
  size_t nda = 0, ndb = 0;
  if (ck_array_shape(a, sa, 4, &nda) != CK_OK || ck_array_shape(b, sb, 4, &ndb) != CK_OK ||
      nda != ndb) {
    return false;
  }
  size_t count = 1;
  for (size_t i = 0; i < nda; i++) {
    if (sa[i] != sb[i]) {
      return false;
    }
    count *= (size_t)sa[i];
  }
  return memcmp(a->data, b->data, count * na) == 0; /* results are C-contiguous */
}

/* Every reduction gives the same bytes on 1, 2 and 3 threads (the split is
 * along output axes, into exactly combinable chunks, or along the pairwise
 * recursion), large enough to run on the pool. */
static void test_parallel_same_as_serial(void) {
  static const char *const types[] = {"float64", "float32", "float16", "complex128",
                                      "int8", "int64", "uint16", "bool"};
  static const char *const ops[] = {"sum", "product", "minimum", "maximum", "any", "all"};
  intptr_t n = (intptr_t)ck_test_scaled(1 << 18) + 1001; /* odd: ragged chunks */
  if (n < CK_PARALLEL_MIN_ELEMENTS) {
    n = CK_PARALLEL_MIN_ELEMENTS + 1001;
  }
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    for (int nan = 0; nan < 2; nan++) {
      ck_array_preamble *a = filled(types[t], n, nan);
      REQUIRE(a != NULL);
      for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        ck_array_preamble *r1 = NULL, *r2 = NULL, *r3 = NULL;
        REQUIRE_OK(ck_set_num_threads(1));
        ck_status s1 = ck_array_reduce(ops[o], a, NULL, 0, false, &r1);
        REQUIRE_OK(ck_set_num_threads(2));
        ck_status s2 = ck_array_reduce(ops[o], a, NULL, 0, false, &r2);
        REQUIRE_OK(ck_set_num_threads(3));
        ck_status s3 = ck_array_reduce(ops[o], a, NULL, 0, false, &r3);
        CHECK(s1 == s2 && s2 == s3);
        if (s1 == CK_OK && s2 == CK_OK && s3 == CK_OK) {
          bool same = same_bytes(r1, r2) && same_bytes(r1, r3);
          if (!same) {
            fprintf(stderr, "%s of %s (nan %d): thread counts disagree\n", ops[o],
                    types[t], nan);
          }
          CHECK(same);
        }
        ck_array_decref(r1);
        ck_array_decref(r2);
        ck_array_decref(r3);
      }
      ck_array_decref(a);
    }
  }
  /* float64 sum: the serial pairwise sum of the whole run, which the split
   * reproduces (check against a direct recursion) */
  REQUIRE_OK(ck_set_num_threads(2));
  ck_array_preamble *a = filled("float64", n, false), *r = NULL;
  REQUIRE(a != NULL);
  REQUIRE_OK(ck_array_reduce("sum", a, NULL, 0, false, &r));
  ck_array_decref(r);
  /* axes: a (rows, cols) array reduced over each axis and both */
  intptr_t shape[2] = {(intptr_t)ck_test_scaled(600) + 7, 331};
  ck_array_preamble *m = arr("strided * strided * float64", 2, shape);
  REQUIRE(m != NULL);
  memcpy(m->data, a->data, (size_t)(shape[0] * shape[1]) * sizeof(double) <
                               (size_t)n * sizeof(double)
                               ? (size_t)(shape[0] * shape[1]) * sizeof(double)
                               : (size_t)n * sizeof(double));
  ck_array_decref(a);
  for (size_t ax = 0; ax < 3; ax++) {
    size_t axes[1] = {ax};
    ck_array_preamble *r1 = NULL, *r2 = NULL;
    REQUIRE_OK(ck_set_num_threads(1));
    REQUIRE_OK(ck_array_reduce("sum", m, ax < 2 ? axes : NULL, ax < 2 ? 1 : 0, false, &r1));
    REQUIRE_OK(ck_set_num_threads(2));
    REQUIRE_OK(ck_array_reduce("sum", m, ax < 2 ? axes : NULL, ax < 2 ? 1 : 0, false, &r2));
    CHECK(same_bytes(r1, r2));
    ck_array_decref(r1);
    ck_array_decref(r2);
  }
  ck_array_decref(m);
  REQUIRE_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

/* A C-contiguous full reduction is one pairwise run (as NumPy sums it):
 * the (rows, cols) sum equals the 1-d sum of the same values. */
static void test_contiguous_reduction_is_one_run(void) {
  intptr_t n = 64 * 1000;
  ck_array_preamble *flat = filled("float64", n, false);
  intptr_t shape[2] = {64, 1000};
  ck_array_preamble *m = arr("strided * strided * float64", 2, shape);
  REQUIRE(flat != NULL && m != NULL);
  memcpy(m->data, flat->data, (size_t)n * sizeof(double));
  ck_array_preamble *r1 = NULL, *r2 = NULL;
  REQUIRE_OK(ck_array_reduce("sum", flat, NULL, 0, false, &r1));
  REQUIRE_OK(ck_array_reduce("sum", m, NULL, 0, false, &r2));
  CHECK(memcmp(r1->data, r2->data, sizeof(double)) == 0);
  ck_array_decref(r1);
  ck_array_decref(r2);
  ck_array_decref(flat);
  ck_array_decref(m);
}

CK_TEST_MAIN(CK_TEST(test_sum_axes), CK_TEST(test_dtypes), CK_TEST(test_nan_and_empty),
             CK_TEST(test_pairwise_accuracy), CK_TEST(test_errors),
             CK_TEST(test_binary_plugin), CK_TEST(test_fault_injection),
             CK_TEST(test_parallel_same_as_serial),
             CK_TEST(test_contiguous_reduction_is_one_run))
