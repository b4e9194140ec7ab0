/* Null-aware jitted kernels (ck_jit_option_child_factory, jit.h): the
 * "jitted" entry points are written here in C against the documented
 * convention -- a NULL source pointer for a null `?T` argument, a `?R`
 * result written as the value followed by a validity byte.  Checked: None
 * reaches the function, None results are nulls, a null into a plain
 * argument propagates without a call, a null result into a non-option
 * destination is an error, types are checked, bit offsets 1..7 of a sliced
 * source, and no leak of the bitmaps' blocks. */
#include "ck_test.h"
#include "option_test_util.h"

static double ld(const char *p) {
  double x;
  memcpy(&x, p, 8);
  return x;
}

static void st(char *p, double x) { memcpy(p, &x, 8); }

static int calls;

/* float64(?float64): -1 for None, else 2x */
static int fill_single(char *dst, const char *const *src, ck_prefix *self) {
  (void)self;
  calls++;
  st(dst, src[0] == NULL ? -1.0 : 2.0 * ld(src[0]));
  return 0;
}

/* ?float64(float64): None above 2 */
static int small_single(char *dst, const char *const *src, ck_prefix *self) {
  (void)self;
  calls++;
  double x = ld(src[0]);
  st(dst, x);
  dst[8] = x > 2.0 ? 0 : 1;
  return 0;
}

/* The strided entry of the leaf, as the generated ones: the element code
 * over n elements (a NULL source stays NULL: a null `?T` argument of a call
 * of one element).  The leaf in use is the last one `make` was given. */
static ck_expr_single_t leaf;
static int runs;

static int leaf_strided(char *dst, intptr_t ds, const char *const *src, const intptr_t *ss,
                        size_t n, ck_prefix *self) {
  runs++;
  for (size_t i = 0; i < n; i++) {
    const char *s[1] = {src[0] == NULL ? NULL : src[0] + (intptr_t)i * ss[0]};
    int r = leaf(dst + (intptr_t)i * ds, s, self);
    if (r != 0) {
      return r;
    }
  }
  return 0;
}

static void make(ck_jit_kernel_desc *d, ck_jit_option_desc *od, ck_expr_single_t fn,
                 ck_memblock *code, uint32_t src_nullable, uint32_t dst_nullable) {
  memset(d, 0, sizeof *d);
  d->single = fn;
  d->strided = leaf_strided;
  leaf = fn;
  d->code = code;
  snprintf(d->name, sizeof d->name, "f(float64) -> float64");
  d->dst_id = CK_TYPE_FLOAT64;
  d->nsrc = 1;
  d->src_ids[0] = CK_TYPE_FLOAT64;
  od->desc = d;
  od->src_nullable = src_nullable;
  od->dst_nullable = dst_nullable;
}

static ck_array_preamble *values(const char *type, intptr_t n, const int *nulls) {
  ck_array_preamble *a = empty(type, n);
  if (a == NULL) {
    return NULL;
  }
  double *x = (double *)(void *)wdata(a);
  for (intptr_t i = 0; i < n; i++) {
    x[i] = (double)i;
    if (nulls != NULL && nulls[i]) {
      (void)ck_array_set_valid_at(a, i, false);
    }
  }
  return a;
}

static void test_none_arguments(void) {
  ck_memblock *code = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &code));
  ck_jit_kernel_desc d;
  ck_jit_option_desc od;
  make(&d, &od, fill_single, code, 1u, 0u);
  const int nulls[5] = {0, 1, 0, 1, 0};
  ck_array_preamble *a = values("strided * ?float64", 5, nulls);
  REQUIRE(a != NULL);
  ck_type f64 = parse("float64");
  ck_array_preamble *r = NULL;
  calls = 0;
  CHECK_OK(ck_array_apply(ck_jit_option_child_factory, &od, f64, 1, &a, NULL, &r));
  if (r != NULL) {
    const double *x = (const double *)(const void *)ck_array_data(r);
    CHECK(x[0] == 0.0 && x[1] == -1.0 && x[2] == 4.0 && x[3] == -1.0 && x[4] == 8.0);
    CHECK(calls == 5);
    ck_array_decref(r);
  }
  ck_type_decref(f64);
  ck_array_decref(a);
  ck_memblock_decref(code);
}

static void test_none_results_and_propagation(void) {
  ck_memblock *code = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &code));
  ck_jit_kernel_desc d;
  ck_jit_option_desc od;
  make(&d, &od, small_single, code, 0u, 1u);
  const int nulls[5] = {0, 1, 0, 0, 0};
  ck_array_preamble *a = values("strided * ?float64", 5, nulls);
  REQUIRE(a != NULL);
  ck_type of64 = parse("?float64");
  ck_type f64 = parse("float64");
  ck_array_preamble *r = NULL;
  calls = 0;
  runs = 0;
  CHECK_OK(ck_array_apply(ck_jit_option_child_factory, &od, of64, 1, &a, NULL, &r));
  if (r != NULL) {
    /* 0 valid, 1 null (propagated, no call), 2 valid, 3 and 4 None results */
    CHECK(valid_at(r, 0) && !valid_at(r, 1) && valid_at(r, 2));
    CHECK(!valid_at(r, 3) && !valid_at(r, 4));
    CHECK(calls == 4);
    CHECK(runs == 2); /* slot 0; slot 1 null (no call); slots 2-4 in one strided call */
    int64_t n = 0;
    CHECK_OK(ck_array_null_count(r, &n, NULL));
    CHECK(n == 3);
    ck_array_decref(r);
  }
  /* a ?R result needs an option destination */
  r = NULL;
  CHECK_ERR(ck_array_apply(ck_jit_option_child_factory, &od, f64, 1, &a, NULL, &r),
            CK_ERR_TYPE, "must be one");
  /* a plain signature with a null into a non-option destination */
  ck_jit_kernel_desc d2;
  ck_jit_option_desc od2;
  make(&d2, &od2, fill_single, code, 0u, 0u);
  r = NULL;
  CHECK_ERR(ck_array_apply(ck_jit_option_child_factory, &od2, f64, 1, &a, NULL, &r),
            CK_ERR_VALUE, "not an option type");
  /* types are checked */
  ck_type i64 = parse("strided * int64");
  intptr_t three = 3;
  ck_array_preamble *ints = NULL;
  REQUIRE_OK(ck_array_empty(i64, &three, 1, CK_ARRAY_DEFAULT_FLAGS, &ints));
  CHECK_ERR(ck_array_apply(ck_jit_option_child_factory, &od, of64, 1, &ints, NULL, &r),
            CK_ERR_TYPE, "argument 0");
  ck_array_decref(ints);
  ck_type_decref(i64);
  ck_type_decref(of64);
  ck_type_decref(f64);
  ck_array_decref(a);
  ck_memblock_decref(code);
}

static void test_bit_offsets(void) {
  ck_memblock *code = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &code));
  ck_jit_kernel_desc d;
  ck_jit_option_desc od;
  make(&d, &od, fill_single, code, 1u, 0u);
  int nulls[16];
  for (int i = 0; i < 16; i++) {
    nulls[i] = i % 3 == 1;
  }
  ck_array_preamble *a = values("strided * ?float64", 16, nulls);
  REQUIRE(a != NULL);
  ck_type f64 = parse("float64");
  for (intptr_t off = 1; off < 8; off++) {
    ck_array_preamble *s = NULL;
    CHECK_OK(ck_array_slice(a, 0, off, 16, 1, &s));
    if (s == NULL) {
      continue;
    }
    ck_array_preamble *r = NULL;
    CHECK_OK(ck_array_apply(ck_jit_option_child_factory, &od, f64, 1, &s, NULL, &r));
    if (r != NULL) {
      const double *x = (const double *)(const void *)ck_array_data(r);
      for (intptr_t i = 0; i < 16 - off; i++) {
        double want = nulls[off + i] ? -1.0 : 2.0 * (double)(off + i);
        CHECK(x[i] == want);
      }
      ck_array_decref(r);
    }
    ck_array_decref(s);
  }
  ck_type_decref(f64);
  ck_array_decref(a);
  ck_memblock_decref(code);
}

CK_TEST_MAIN(CK_TEST(test_none_arguments), CK_TEST(test_none_results_and_propagation),
             CK_TEST(test_bit_offsets))
