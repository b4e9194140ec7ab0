/* The fast forms of null handling: CK_NULLS_PROPAGATE_ALL_SLOTS (the child
 * run once over every slot; the validity still the AND of the sources', at
 * every bit offset 0..7, through the word path and the slot path), and the
 * direct sum / mean / count of a 1-d ?float64 / ?float32 (reduce_valid.c),
 * checked bit for bit against the general pairwise sum of the values with
 * nulls replaced by 0, with NaN and inf under the nulls, serially and on the
 * thread pool. */
#include "option_test_util.h"

#include <math.h>

static uint64_t rs = 987654321;
static uint8_t rnd8(void) {
  rs = rs * 6364136223846793005u + 1442695040888963407u;
  return (uint8_t)(rs >> 33);
}

static ck_status apply_all_slots(const char *opname, int mode, ck_array_preamble *a,
                                 ck_array_preamble *b, ck_array_preamble **r) {
  const ck_op *op = NULL;
  ck_status st = ck_op_find(opname, &op);
  if (st != CK_OK) {
    return st;
  }
  ck_type rt = parse("?float64");
  ck_null_propagation np = {ck_op_child_factory, (void *)op, mode};
  ck_array_preamble *srcs[2] = {a, b};
  st = ck_array_apply(ck_null_propagating_child_factory, &np, rt, 2, srcs, NULL, r);
  ck_type_decref(rt);
  return st;
}

static void test_all_slots_offsets(void) {
  ck_type t = parse("strided * ?float64");
  enum { N = 200 };
  double xv[N], yv[N];
  for (int i = 0; i < N; i++) {
    xv[i] = i;
    yv[i] = 0.25 * i;
  }
  for (int64_t xo = 0; xo < 8; xo++) {
    for (int64_t yo = 0; yo < 8; yo += 3) {
      uint8_t xb[32], yb[32];
      for (int i = 0; i < 32; i++) {
        xb[i] = rnd8() | 0x21;
        yb[i] = rnd8() | 0x84;
      }
      for (int i = 0; i < N; i++) { /* garbage under the nulls */
        xv[i] = i;
        if (!ck_bitmap_get(xb, xo + i)) {
          xv[i] = i % 2 ? NAN : INFINITY;
        }
      }
      intptr_t shape = N;
      ck_array_preamble *a = NULL, *b = NULL, *bv = NULL, *r = NULL, *r2 = NULL;
      REQUIRE_OK(ck_array_view_external_option(t, (char *)xv, &shape, 1, CK_ARRAY_READ, NULL,
                                               xb, xo, NULL, &a));
      REQUIRE_OK(ck_array_view_external_option(t, (char *)yv, &shape, 1, CK_ARRAY_READ, NULL,
                                               yb, yo, NULL, &b));
      REQUIRE_OK(ck_array_slice(b, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &bv));
      REQUIRE_OK(apply_all_slots("add", CK_NULLS_PROPAGATE_ALL_SLOTS, a, b, &r));
      REQUIRE_OK(apply_all_slots("add", CK_NULLS_PROPAGATE_ALL_SLOTS, a, bv, &r2));
      const double *z = (const double *)(const void *)ck_array_data(r);
      const double *z2 = (const double *)(const void *)ck_array_data(r2);
      int bad = 0;
      int64_t nulls = 0;
      for (int i = 0; i < N; i++) {
        bool v = ck_bitmap_get(xb, xo + i) && ck_bitmap_get(yb, yo + i);
        nulls += !v;
        bad += valid_at(r, i) != v;
        bad += v && z[i] != xv[i] + yv[i];
        bool v2 = ck_bitmap_get(xb, xo + i) && ck_bitmap_get(yb, yo + N - 1 - i);
        bad += valid_at(r2, i) != v2;
        bad += v2 && z2[i] != xv[i] + yv[N - 1 - i];
      }
      CHECK(bad == 0);
      int64_t n = -1;
      CHECK_OK(ck_array_null_count(r, &n, NULL));
      CHECK(n == nulls);
      ck_array_decref(r);
      ck_array_decref(r2);
      ck_array_decref(bv);
      ck_array_decref(a);
      ck_array_decref(b);
    }
  }
  ck_type_decref(t);
}

static void test_all_slots_modes(void) {
  ck_array_preamble *a = empty("strided * ?float64", 4), *b = empty("strided * float64", 4);
  REQUIRE(a && b);
  double *x = (double *)(void *)wdata(a), *y = (double *)(void *)wdata(b);
  for (int i = 0; i < 4; i++) {
    x[i] = i;
    y[i] = 10;
  }
  CHECK_OK(ck_array_set_valid_at(a, 2, false));
  ck_array_preamble *r = NULL;
  REQUIRE_OK(apply_all_slots("multiply", CK_NULLS_PROPAGATE_ALL_SLOTS, a, b, &r));
  CHECK(valid_at(r, 0) && valid_at(r, 1) && !valid_at(r, 2) && valid_at(r, 3));
  CHECK(((const double *)(const void *)ck_array_data(r))[3] == 30);
  ck_array_decref(r);
  CHECK_ERR(apply_all_slots("multiply", 7, a, b, &r), CK_ERR_INVALID_ARGUMENT, "mode 7");
  CHECK_ERR(apply_all_slots("multiply", -1, a, b, &r), CK_ERR_INVALID_ARGUMENT, "mode");
  ck_array_decref(a);
  ck_array_decref(b);
}

/* The general path's sum: the values with nulls replaced by 0, summed by
 * ck_array_reduce (the same pairwise recursion). */
static double plain_sum(const double *v, const uint8_t *bits, int64_t off, size_t n) {
  ck_array_preamble *p = empty("strided * float64", (intptr_t)n);
  double *w = (double *)(void *)wdata(p);
  for (size_t i = 0; i < n; i++) {
    w[i] = ck_bitmap_get(bits, off + (int64_t)i) ? v[i] : 0.0;
  }
  ck_array_preamble *r = NULL;
  double s = NAN;
  if (ck_array_reduce("sum", p, NULL, 0, false, &r) == CK_OK) {
    s = *(const double *)(const void *)ck_array_data(r);
  }
  ck_array_decref(r);
  ck_array_decref(p);
  return s;
}

static void check_reduce(size_t n, int64_t off) {
  ck_type t = parse("strided * ?float64");
  double *v = malloc((n ? n : 1) * sizeof *v);
  size_t nb = (n + 16) / 8 + 1;
  uint8_t *bits = malloc(nb);
  REQUIRE(v && bits);
  for (size_t i = 0; i < nb; i++) {
    bits[i] = rnd8() | (n % 3 == 0 ? 0 : 0x10);
  }
  int64_t valid = 0;
  for (size_t i = 0; i < n; i++) {
    bool ok = ck_bitmap_get(bits, off + (int64_t)i);
    valid += ok;
    v[i] = ok ? 1.0 / (double)(i + 1) + (double)(i % 17) * 1e8 : (i % 2 ? NAN : -INFINITY);
  }
  intptr_t shape = (intptr_t)n;
  ck_array_preamble *a = NULL, *r = NULL;
  REQUIRE_OK(ck_array_view_external_option(t, (char *)v, &shape, 1, CK_ARRAY_READ, NULL, bits,
                                           off, NULL, &a));
  double want = plain_sum(v, bits, off, n);
  REQUIRE_OK(ck_array_reduce_nulls("sum", a, NULL, 0, false, true, &r));
  bool ok = false;
  CHECK_OK(ck_array_is_valid(r, &ok));
  CHECK(ok == (valid > 0));
  if (ok) {
    double got = *(const double *)(const void *)ck_array_data(r);
    if (got != want) {
      fprintf(stderr, "n=%zu off=%lld: sum %.17g, expected %.17g\n", n, (long long)off, got,
              want);
      ck_test_failures++;
    }
  }
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce_nulls("mean", a, NULL, 0, false, true, &r));
  CHECK_OK(ck_array_is_valid(r, &ok));
  CHECK(ok == (valid > 0));
  if (ok) {
    CHECK(*(const double *)(const void *)ck_array_data(r) == want / (double)valid);
  }
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce_nulls("count", a, NULL, 0, false, true, &r));
  CHECK(*(const int64_t *)(const void *)ck_array_data(r) == valid);
  ck_array_decref(r);
  size_t axis = 0;
  REQUIRE_OK(ck_array_reduce_nulls("sum", a, &axis, 1, false, false, &r));
  CHECK_OK(ck_array_is_valid(r, &ok));
  CHECK(ok == (valid == (int64_t)n)); /* empty: a valid 0, as the general path */
  ck_array_decref(r);
  ck_array_decref(a);
  ck_type_decref(t);
  free(v);
  free(bits);
}

static void test_reduce_direct(void) {
  static const size_t ns[] = {0, 1, 5, 7, 8, 9, 63, 64, 65, 127, 128, 129, 200, 1000, 4099};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    for (int64_t off = 0; off < 8; off++) {
      check_reduce(ns[k], off);
    }
  }
  /* large enough for the thread pool: the same sum on 1 and 2 threads */
  unsigned old = ck_get_num_threads();
  CHECK_OK(ck_set_num_threads(2));
  check_reduce(300001, 3);
  CHECK_OK(ck_set_num_threads(1));
  check_reduce(300001, 5);
  CHECK_OK(ck_set_num_threads(old));
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

static void test_reduce_float32_and_fallbacks(void) {
  /* ?float32: the direct sum equals the general one (forced through a 2-d
   * array whose rows reduce on the general path) */
  ck_array_preamble *a = empty("strided * ?float32", 1000);
  REQUIRE(a);
  float *x = (float *)(void *)wdata(a);
  for (int i = 0; i < 1000; i++) {
    x[i] = (float)(0.1 * i);
    if (i % 9 == 4) {
      CHECK_OK(ck_array_set_valid_at(a, i, false));
    }
  }
  ck_array_preamble *r = NULL, *f = NULL, *z = NULL, *rf = NULL;
  REQUIRE_OK(ck_array_reduce_nulls("sum", a, NULL, 0, false, true, &r));
  char tb[64];
  CHECK_OK(ck_type_print(ck_array_type(r), tb, sizeof tb, NULL));
  CHECK(strcmp(tb, "?float32") == 0);
  z = empty("float32", 0);
  REQUIRE(z);
  *(float *)(void *)wdata(z) = 0.0f;
  ck_type pt = parse("strided * float32");
  intptr_t n = 1000;
  REQUIRE_OK(ck_array_empty(pt, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &f));
  REQUIRE_OK(ck_array_assign_fill(f, a, z, CK_ERRMODE_NOCHECK));
  REQUIRE_OK(ck_array_reduce("sum", f, NULL, 0, false, &rf));
  CHECK(*(const float *)(const void *)ck_array_data(r) ==
        *(const float *)(const void *)ck_array_data(rf));
  ck_array_decref(r);
  ck_array_decref(rf);
  /* keepdims and a strided (every other) view take the general path: same sums */
  REQUIRE_OK(ck_array_reduce_nulls("sum", a, NULL, 0, true, true, &r));
  ck_array_preamble *rk = r;
  CHECK(ck_array_ndim(rk) == 1);
  ck_array_decref(rk);
  ck_array_decref(f);
  ck_array_decref(z);
  ck_type_decref(pt);
  ck_array_decref(a);
}

CK_TEST_MAIN(CK_TEST(test_all_slots_offsets), CK_TEST(test_all_slots_modes),
             CK_TEST(test_reduce_direct), CK_TEST(test_reduce_float32_and_fallbacks))
