/* `var * ?R` results of jitted kernels with core dims (ck_jit_var_option_finish,
 * jit.h): rows of records {value, validity byte} written into the result's
 * var arena here as the generated code writes them -- one allocation per row,
 * rows in separate arena chunks too -- then laid out as Arrow's list child:
 * the values one after another, a bitmap over them.  Checked: values and
 * validity per row, empty rows, rows under an outer fixed dim, zeros under
 * the nulls, the null count, the errors, and no leaked block; `?var * R`
 * results: rows marked null (CK_JIT_NULL_ROW) become nulls of the rows'
 * bitmap, at bit offsets 0-7, with `?R` elements too. */
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

/* `?var * R` results: rows marked {CK_JIT_NULL_ROW, 0} become nulls of the
 * rows' bitmap (at bit offsets 0-7 of a bitmap attached here) and empty
 * rows; the other rows and bits are left as they are. */
static void test_null_rows(void) {
  for (int64_t off = 0; off < 8; off++) {
    ck_array_preamble *a = empty("strided * ?var * int32", 13);
    REQUIRE(a != NULL);
    const ck_dim_arrmeta *outer = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(a);
    char *om = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
    const ck_var_dim_arrmeta *vm =
        (const ck_var_dim_arrmeta *)(const void *)(om + sizeof(ck_option_arrmeta));
    ck_memblock *bm = NULL;
    uint8_t *bits = NULL;
    REQUIRE_OK(ck_fixed_size_pod_memblock_new(8, 8, &bm, (char **)&bits));
    memset(bits, 0xff, 8);
    REQUIRE_OK(ck_option_attach_bitmap(ck_type_element(a->type), om, bits, bm, off,
                                       wdata(a), outer->stride, 13));
    ck_memblock_decref(bm);
    for (intptr_t i = 0; i < 13; i++) {
      ck_var_dim_data *d = (ck_var_dim_data *)(void *)(wdata(a) + i * outer->stride);
      size_t n = (size_t)(i % 4);
      if ((i + off) % 3 == 0) {
        d->begin = CK_JIT_NULL_ROW;
        d->size = 0;
        continue;
      }
      char *b = NULL, *e = NULL;
      if (n > 0) {
        REQUIRE_OK(ck_pod_allocate(vm->blockref, n * 4, 4, &b, &e));
        for (size_t k = 0; k < n; k++) {
          int32_t x = (int32_t)(i * 10 + (intptr_t)k);
          memcpy(b + k * 4, &x, 4);
        }
      }
      d->begin = n > 0 ? b - vm->offset : NULL;
      d->size = n;
    }
    CHECK_OK(ck_jit_var_option_finish(a));
    int64_t nulls = -1, want_nulls = 0;
    for (intptr_t i = 0; i < 13; i++) {
      const ck_var_dim_data *d =
          (const ck_var_dim_data *)(const void *)(ck_array_data(a) + i * outer->stride);
      bool null = (i + off) % 3 == 0;
      want_nulls += null;
      CHECK(valid_at(a, i) == !null);
      CHECK(null ? d->begin == NULL && d->size == 0 : d->size == (size_t)(i % 4));
      for (size_t k = 0; !null && k < d->size; k++) {
        int32_t x;
        memcpy(&x, d->begin + vm->offset + k * 4, 4);
        CHECK(x == (int32_t)(i * 10 + (intptr_t)k));
      }
    }
    CHECK_OK(ck_array_null_count(a, &nulls, NULL));
    CHECK(nulls == want_nulls);
    /* the bits before the offset and after the rows are untouched */
    for (int64_t b = 0; b < 64; b++) {
      if (b < off || b >= off + 13) {
        CHECK((bits[b >> 3] >> (b & 7)) & 1);
      }
    }
    ck_array_decref(a);
  }
}

/* `?var * ?float64`: null rows and rows of records, both bitmaps. */
static void test_null_rows_of_options(void) {
  const size_t sizes[] = {3, 0, 2, 0, 5};
  ck_array_preamble *a = empty("strided * ?var * ?float64", 5);
  REQUIRE(a != NULL);
  const ck_dim_arrmeta *outer = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(a);
  char *rows = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  ck_var_dim_arrmeta *vm = (ck_var_dim_arrmeta *)(void *)(rows + sizeof(ck_option_arrmeta));
  const ck_option_arrmeta *em =
      (const ck_option_arrmeta *)(const void *)((char *)vm + sizeof(ck_var_dim_arrmeta));
  size_t rec = ck_jit_var_option_record_size(CK_BUILTIN(CK_TYPE_FLOAT64));
  for (intptr_t i = 0; i < 5; i++) {
    ck_var_dim_data *d = (ck_var_dim_data *)(void *)(wdata(a) + i * outer->stride);
    if (i == 3) { /* null; row 1 is empty */
      d->begin = CK_JIT_NULL_ROW;
      d->size = 0;
      continue;
    }
    char *b = NULL, *e = NULL;
    if (sizes[i] > 0) {
      REQUIRE_OK(ck_pod_allocate(vm->blockref, sizes[i] * rec, 8, &b, &e));
    }
    for (size_t k = 0; k < sizes[i]; k++) {
      double x = (double)(i * 10 + (intptr_t)k);
      memcpy(b + k * rec, &x, 8);
      b[k * rec + 8] = (char)(k != 1);
    }
    d->begin = sizes[i] > 0 ? b - vm->offset : NULL;
    d->size = sizes[i];
  }
  CHECK_OK(ck_jit_var_option_finish(a));
  CHECK(vm->offset == 0 && vm->stride == 8);
  for (intptr_t i = 0; i < 5; i++) {
    const ck_var_dim_data *d =
        (const ck_var_dim_data *)(const void *)(ck_array_data(a) + i * outer->stride);
    CHECK(valid_at(a, i) == (i != 3));
    CHECK(d->size == sizes[i]);
    for (size_t k = 0; k < d->size; k++) {
      bool valid = false;
      CHECK_OK(ck_option_get_valid(em, d->begin + k * 8, &valid));
      CHECK(valid == (k != 1));
      double x;
      memcpy(&x, d->begin + k * 8, 8);
      CHECK(x == (k != 1 ? (double)(i * 10 + (intptr_t)k) : 0.0));
    }
  }
  ck_array_decref(a);
}

/* A row marked null with elements, and marks without a bitmap: refused,
 * the array unchanged. */
static void test_null_row_errors(void) {
  ck_array_preamble *a = empty("strided * ?var * int64", 3);
  REQUIRE(a != NULL);
  ck_var_dim_data *d = (ck_var_dim_data *)(void *)wdata(a);
  d[0].begin = CK_JIT_NULL_ROW;
  d[0].size = 0;
  d[1].begin = CK_JIT_NULL_ROW;
  d[1].size = 2;
  d[2].begin = NULL;
  d[2].size = 0;
  CHECK_ERR(ck_jit_var_option_finish(a), CK_ERR_VALUE, "row marked null holds 2");
  CHECK(d[0].begin == CK_JIT_NULL_ROW && valid_at(a, 0));
  d[1].size = 0;
  ck_option_arrmeta *om = (ck_option_arrmeta *)(void *)(ck_array_arrmeta(a) +
                                                        sizeof(ck_dim_arrmeta));
  uint8_t *bits = om->bits;
  om->bits = NULL; /* as rows under a var dim have */
  CHECK_ERR(ck_jit_var_option_finish(a), CK_ERR_NOT_SUPPORTED, "2 null rows under a var dim");
  CHECK(d[0].begin == CK_JIT_NULL_ROW);
  om->bits = bits;
  CHECK_OK(ck_jit_var_option_finish(a));
  CHECK(!valid_at(a, 0) && !valid_at(a, 1) && valid_at(a, 2));
  CHECK(d[0].begin == NULL && d[1].begin == NULL);
  ck_array_decref(a);
}

static void test_errors(void) {
  CHECK_ERR(ck_jit_var_option_finish(NULL), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_array_preamble *a = empty("strided * var * float64", 2);
  REQUIRE(a != NULL);
  CHECK_ERR(ck_jit_var_option_finish(a), CK_ERR_TYPE, "var * ?R, ?var * R");
  ck_array_decref(a);
  a = empty("strided * ?float64", 2);
  REQUIRE(a != NULL);
  CHECK_ERR(ck_jit_var_option_finish(a), CK_ERR_TYPE, "var * ?R");
  ck_array_decref(a);
  CHECK(ck_jit_var_option_record_size(CK_BUILTIN(CK_TYPE_BOOL)) == 2);
  CHECK(ck_jit_var_option_record_size(CK_BUILTIN(CK_TYPE_INT32)) == 8);
}

CK_TEST_MAIN(CK_TEST(test_rows_laid_out), CK_TEST(test_rows_in_several_chunks),
             CK_TEST(test_no_elements), CK_TEST(test_null_rows),
             CK_TEST(test_null_rows_of_options), CK_TEST(test_null_row_errors),
             CK_TEST(test_errors))
