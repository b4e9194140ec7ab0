/* `var * ?R` results of jitted kernels with core dims (ck_jit_var_option_finish,
 * jit.h): rows of records {value, validity byte} written into the result's
 * var arena here as the generated code writes them -- one allocation per row,
 * rows in separate arena chunks too -- then laid out as Arrow's list child:
 * the values one after another, a bitmap over them.  Checked: values and
 * validity per row, empty rows, rows under an outer fixed dim, zeros under
 * the nulls, the null count, the errors, and no leaked block. */
#include "ck_test.h"
#include "option_test_util.h"

#include "ckernel/jit.h"
#include "ckernel/pod_allocator.h"

/* Row `i` of a `strided * var * ?float64` array (its arrmeta after the outer
 * dim's): n records, value k * 1.5 + i, null where (k + i) % 3 == 0. */
static void write_row(ck_array_preamble *a, intptr_t i, size_t n) {
  char *meta = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  const ck_dim_arrmeta *outer = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(a);
  ck_var_dim_arrmeta *vm = (ck_var_dim_arrmeta *)(void *)meta;
  ck_var_dim_data *d = (ck_var_dim_data *)(void *)(wdata(a) + i * outer->stride);
  size_t rec = ck_jit_var_option_record_size(CK_BUILTIN(CK_TYPE_FLOAT64));
  CHECK(rec == 16);
  if (n == 0) {
    d->begin = NULL;
    d->size = 0;
    return;
  }
  char *b = NULL, *e = NULL;
  REQUIRE_OK(ck_pod_allocate(vm->blockref, n * rec, 8, &b, &e));
  for (size_t k = 0; k < n; k++) {
    double x = (double)k * 1.5 + (double)i;
    memcpy(b + k * rec, &x, 8);
    b[k * rec + 8] = (char)((k + (size_t)i) % 3 != 0);
  }
  d->begin = b - vm->offset;
  d->size = n;
}

static void check_rows(ck_array_preamble *a, const size_t *sizes, intptr_t nrows) {
  const ck_dim_arrmeta *outer = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(a);
  const char *meta = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(const void *)meta;
  const ck_option_arrmeta *om =
      (const ck_option_arrmeta *)(const void *)(meta + sizeof(ck_var_dim_arrmeta));
  CHECK(vm->stride == 8 && vm->offset == 0);
  const char *next = NULL;
  int64_t nulls = 0;
  for (intptr_t i = 0; i < nrows; i++) {
    const ck_var_dim_data *d =
        (const ck_var_dim_data *)(const void *)(ck_array_data(a) + i * outer->stride);
    CHECK(d->size == sizes[i]);
    if (d->size == 0) {
      continue;
    }
    if (next != NULL) {
      CHECK(d->begin == next); /* one allocation, rows in order */
    }
    for (size_t k = 0; k < d->size; k++) {
      const char *p = d->begin + k * 8;
      bool valid = false;
      CHECK_OK(ck_option_get_valid(om, p, &valid));
      bool want = (k + (size_t)i) % 3 != 0;
      CHECK(valid == want);
      double x;
      memcpy(&x, p, 8);
      CHECK(x == (want ? (double)k * 1.5 + (double)i : 0.0));
      nulls += !want;
    }
    next = d->begin + d->size * 8;
  }
  int64_t count = -1;
  CHECK_OK(ck_array_null_count(a, &count, NULL));
  CHECK(count == nulls);
}

static void test_rows_laid_out(void) {
  const size_t sizes[] = {5, 0, 3, 1, 0, 64};
  ck_array_preamble *a = empty("strided * var * ?float64", 6);
  REQUIRE(a != NULL);
  for (intptr_t i = 0; i < 6; i++) {
    write_row(a, i, sizes[i]);
  }
  CHECK_OK(ck_jit_var_option_finish(a));
  check_rows(a, sizes, 6);
  ck_array_decref(a);
}

static void test_rows_in_several_chunks(void) {
  /* rows larger than the arena's first chunks: each in a chunk of its own */
  const size_t sizes[] = {3000, 7, 50000, 0, 120000};
  ck_array_preamble *a = empty("strided * var * ?float64", 5);
  REQUIRE(a != NULL);
  for (intptr_t i = 0; i < 5; i++) {
    write_row(a, i, sizes[i]);
  }
  CHECK_OK(ck_jit_var_option_finish(a));
  check_rows(a, sizes, 5);
  ck_array_decref(a);
}

static void test_no_elements(void) {
  const size_t sizes[] = {0, 0};
  ck_array_preamble *a = empty("strided * var * ?float64", 2);
  REQUIRE(a != NULL);
  write_row(a, 0, 0);
  write_row(a, 1, 0);
  CHECK_OK(ck_jit_var_option_finish(a));
  check_rows(a, sizes, 2);
  ck_array_decref(a);
}

static void test_errors(void) {
  CHECK_ERR(ck_jit_var_option_finish(NULL), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_array_preamble *a = empty("strided * var * float64", 2);
  REQUIRE(a != NULL);
  CHECK_ERR(ck_jit_var_option_finish(a), CK_ERR_TYPE, "var * ?R");
  ck_array_decref(a);
  a = empty("strided * ?float64", 2);
  REQUIRE(a != NULL);
  CHECK_ERR(ck_jit_var_option_finish(a), CK_ERR_TYPE, "var * ?R");
  ck_array_decref(a);
  CHECK(ck_jit_var_option_record_size(CK_BUILTIN(CK_TYPE_BOOL)) == 2);
  CHECK(ck_jit_var_option_record_size(CK_BUILTIN(CK_TYPE_INT32)) == 8);
}

CK_TEST_MAIN(CK_TEST(test_rows_laid_out), CK_TEST(test_rows_in_several_chunks),
             CK_TEST(test_no_elements), CK_TEST(test_errors))
