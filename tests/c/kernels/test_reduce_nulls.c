/* Reductions over option arrays: nulls skipped by default (sum, product,
 * min, max, mean, count; all-null -> null), skip_nulls = false (null when any
 * value is null, Kleene any/all), axes and keepdims, a per-value oracle. */
#include "option_test_util.h"

#include <math.h>

/* A 0-d result: its type, whether valid, its value as double. */
static bool scalar(const ck_array_preamble *r, const char *type, double *value) {
  char tb[64];
  (void)ck_type_print(ck_array_type(r), tb, sizeof tb, NULL);
  if (strcmp(tb, type) != 0) {
    fprintf(stderr, "result type %s, expected %s\n", tb, type);
    ck_test_failures++;
  }
  bool v = true;
  ck_type t = ck_array_type(r);
  if (ck_type_is_option(t)) {
    (void)ck_array_is_valid(r, &v);
    t = ck_type_element(t);
  }
  (void)ck_assign_builtin_value(CK_TYPE_FLOAT64, value, ck_type_id_of(t), ck_array_data(r),
                                CK_ERRMODE_NOCHECK);
  return v;
}

static ck_array_preamble *reduce(const char *op, const ck_array_preamble *a, bool skip) {
  ck_array_preamble *r = NULL;
  if (ck_array_reduce_nulls(op, a, NULL, 0, false, skip, &r) != CK_OK) {
    fprintf(stderr, "%s: %s\n", op, ck_last_error());
  }
  return r;
}

static void test_1d(void) {
  ck_array_preamble *a = empty("10 * ?float64", 0);
  double *x = (double *)(void *)wdata(a);
  for (int i = 0; i < 10; i++) {
    x[i] = i + 1;
  }
  x[2] = -1e300; /* under nulls: never seen */
  x[7] = NAN;
  CHECK_OK(ck_array_set_valid_at(a, 2, false));
  CHECK_OK(ck_array_set_valid_at(a, 7, false));
  /* valid: 1 2 4 5 6 7 9 10 */
  struct {
    const char *op, *type;
    double want;
  } cases[] = {{"sum", "?float64", 44}, {"product", "?float64", 1 * 2 * 4 * 5 * 6 * 7 * 9 * 10},
               {"min", "?float64", 1}, {"max", "?float64", 10},
               {"mean", "?float64", 44.0 / 8}, {"count", "int64", 8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_array_preamble *r = reduce(cases[i].op, a, true);
    REQUIRE(r != NULL);
    double v;
    CHECK(scalar(r, cases[i].type, &v));
    if (v != cases[i].want) {
      fprintf(stderr, "%s gave %g, expected %g\n", cases[i].op, v, cases[i].want);
    }
    CHECK(v == cases[i].want);
    ck_array_decref(r);
    /* skip_nulls = false: null (count still counts the valid values) */
    r = reduce(cases[i].op, a, false);
    REQUIRE(r != NULL);
    CHECK(scalar(r, cases[i].type, &v) == (strcmp(cases[i].op, "count") == 0));
    if (strcmp(cases[i].op, "count") != 0) {
      CHECK(v == 0); /* zero bytes under the null */
    }
    ck_array_decref(r);
  }
  /* ck_array_reduce skips nulls by default */
  ck_array_preamble *r = NULL;
  REQUIRE_OK(ck_array_reduce("max", a, NULL, 0, false, &r));
  double v;
  CHECK(scalar(r, "?float64", &v) && v == 10);
  ck_array_decref(r);
  /* all null -> null; count 0 */
  for (int i = 0; i < 10; i++) {
    CHECK_OK(ck_array_set_valid_at(a, i, false));
  }
  const char *ops[] = {"sum", "product", "min", "max", "mean"};
  for (size_t i = 0; i < 5; i++) {
    r = reduce(ops[i], a, true);
    REQUIRE(r != NULL);
    CHECK(!scalar(r, "?float64", &v) && v == 0);
    ck_array_decref(r);
  }
  r = reduce("count", a, true);
  CHECK(scalar(r, "int64", &v) && v == 0);
  ck_array_decref(r);
  CHECK_ERR(ck_array_reduce_nulls("median", a, NULL, 0, false, true, &r),
            CK_ERR_INVALID_ARGUMENT, "mean and count");
  ck_array_decref(a);
}

static void test_ints_bools_axes(void) {
  /* 3 x 4 ?int32, nulls at (0,1), (1,*), (2,3) */
  ck_array_preamble *a = empty("3 * 4 * ?int32", 0);
  int32_t *x = (int32_t *)(void *)wdata(a);
  for (int i = 0; i < 12; i++) {
    x[i] = i - 5;
  }
  int nulls[] = {1, 4, 5, 6, 7, 11};
  ck_array_preamble *row = NULL;
  for (size_t q = 0; q < sizeof nulls / sizeof nulls[0]; q++) {
    REQUIRE_OK(ck_array_index(a, 0, nulls[q] / 4, &row));
    CHECK_OK(ck_array_set_valid_at(row, nulls[q] % 4, false));
    ck_array_decref(row);
  }
  size_t ax1 = 1;
  ck_array_preamble *r = NULL;
  REQUIRE_OK(ck_array_reduce_nulls("min", a, &ax1, 1, false, true, &r));
  char tb[64];
  CHECK_OK(ck_type_print(ck_array_type(r), tb, sizeof tb, NULL));
  CHECK(strcmp(tb, "strided * ?int32") == 0);
  const int32_t *z = (const int32_t *)(const void *)ck_array_data(r);
  bool v;
  CHECK(ck_array_valid_at(r, 0, &v) == CK_OK && v && z[0] == -5);
  CHECK(ck_array_valid_at(r, 1, &v) == CK_OK && !v);
  CHECK(ck_array_valid_at(r, 2, &v) == CK_OK && v && z[2] == 3);
  ck_array_decref(r);
  /* sum over axis 0 with keepdims: int64, columns {-5+3, 4, -3+5, -2} */
  size_t ax0 = 0;
  REQUIRE_OK(ck_array_reduce_nulls("sum", a, &ax0, 1, true, true, &r));
  CHECK_OK(ck_type_print(ck_array_type(r), tb, sizeof tb, NULL));
  CHECK(strcmp(tb, "strided * strided * ?int64") == 0);
  const int64_t *s = (const int64_t *)(const void *)ck_array_data(r);
  CHECK(s[0] == -2 && s[1] == 4 && s[2] == 2 && s[3] == -2);
  ck_array_decref(r);
  /* count per row; mean per row */
  REQUIRE_OK(ck_array_reduce_nulls("count", a, &ax1, 1, false, true, &r));
  s = (const int64_t *)(const void *)ck_array_data(r);
  CHECK(s[0] == 3 && s[1] == 0 && s[2] == 3);
  ck_array_decref(r);
  REQUIRE_OK(ck_array_reduce_nulls("mean", a, &ax1, 1, false, true, &r));
  const double *m = (const double *)(const void *)ck_array_data(r);
  CHECK(fabs(m[0] - (-5 - 3 - 2) / 3.0) < 1e-15 && fabs(m[2] - (3 + 4 + 5) / 3.0) < 1e-15);
  CHECK(ck_array_valid_at(r, 1, &v) == CK_OK && !v);
  ck_array_decref(r);
  /* ck_array_reduce_mask goes the same way */
  bool mask[2] = {false, true};
  REQUIRE_OK(ck_array_reduce_mask("max", a, mask, 2, false, &r));
  z = (const int32_t *)(const void *)ck_array_data(r);
  CHECK(z[0] == -2 && z[2] == 5);
  ck_array_decref(r);
  ck_array_decref(a);
  /* bool min/max and Kleene any/all */
  ck_array_preamble *b = empty("3 * ?bool", 0);
  char *y = wdata(b);
  y[0] = 1;
  y[1] = 0;
  y[2] = 0;
  CHECK_OK(ck_array_set_valid_at(b, 1, false)); /* true, null, false */
  double d;
  r = reduce("any", b, false); /* a true decides */
  CHECK(scalar(r, "?bool", &d) && d == 1);
  ck_array_decref(r);
  r = reduce("all", b, false); /* a false decides */
  CHECK(scalar(r, "?bool", &d) && d == 0);
  ck_array_decref(r);
  y[2] = 1; /* true, null, true: any decided, all not */
  r = reduce("all", b, false);
  CHECK(!scalar(r, "?bool", &d));
  ck_array_decref(r);
  r = reduce("all", b, true);
  CHECK(scalar(r, "?bool", &d) && d == 1);
  ck_array_decref(r);
  r = reduce("min", b, true);
  CHECK(scalar(r, "?bool", &d) && d == 1);
  ck_array_decref(r);
  y[0] = 0;
  r = reduce("max", b, true);
  CHECK(scalar(r, "?bool", &d) && d == 1);
  ck_array_decref(r);
  ck_array_decref(b);
}

static void test_large_sum(void) {
  intptr_t n = 300000;
  ck_array_preamble *a = empty("strided * ?float64", n);
  double *x = (double *)(void *)wdata(a);
  double want = 0;
  int64_t valid = 0;
  for (intptr_t i = 0; i < n; i++) {
    x[i] = 1.0 / (double)(i + 1);
    if (i % 20 == 7) {
      x[i] = 1e300;
      CHECK_OK(ck_array_set_valid_at(a, i, false));
    } else {
      want += x[i];
      valid++;
    }
  }
  ck_array_preamble *r = reduce("sum", a, true);
  double v;
  CHECK(scalar(r, "?float64", &v) && fabs(v - want) < 1e-12 * want);
  ck_array_decref(r);
  r = reduce("count", a, true);
  CHECK(scalar(r, "int64", &v) && v == (double)valid);
  ck_array_decref(r);
  ck_array_decref(a);
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

CK_TEST_MAIN(CK_TEST(test_1d), CK_TEST(test_ints_bools_axes), CK_TEST(test_large_sum))
