/* Assignment of var dims into option rows and items (issue 27):
 *   - `?var * U <- var * T` and `var * U <- ?var * T` line the rows up (the
 *     lifter treats an option over a dim as a level), in every error mode;
 *     values under a null row never convert;
 *   - var rows with option items that the assignment allocates (`N * var *
 *     ?T`, `?var * ?T`, `var * ?{...}`, `var * ?var * ?T`) get one
 *     allocation and one bitmap over their items, as the jit's `var * ?R`
 *     results (docs/kernel-abi.md), from sources whose item bitmaps start at
 *     bit offsets 0..7;
 *   - the error modes: a null into a non-option row, a view destination. */
#include "option_test_util.h"
#include "ckernel/validity.h"

static const ck_errmode modes[] = {CK_ERRMODE_NOCHECK, CK_ERRMODE_OVERFLOW,
                                   CK_ERRMODE_FRACTIONAL, CK_ERRMODE_INEXACT,
                                   CK_ERRMODE_DEFAULT};

/* The arrmeta of `N * [?]var * ...`: the rows' option (or NULL), the var dim. */
static const ck_option_arrmeta *rows_meta(const ck_array_preamble *a,
                                          const ck_var_dim_arrmeta **vm) {
  const char *m = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  const ck_option_arrmeta *rows = NULL;
  if (ck_type_is_option(ck_type_element(ck_array_type(a)))) {
    rows = (const ck_option_arrmeta *)(const void *)m;
    m += sizeof(ck_option_arrmeta);
  }
  *vm = (const ck_var_dim_arrmeta *)(const void *)m;
  return rows;
}

static ck_var_dim_data row_at(const ck_array_preamble *a, intptr_t i) {
  ck_var_dim_data d;
  memcpy(&d, ck_array_data(a) + i * (intptr_t)sizeof d, sizeof d);
  return d;
}

/* Whether item q of row i of `N * [?]var * ?T` is valid. */
static bool item_valid(const ck_array_preamble *a, intptr_t i, size_t q) {
  const ck_var_dim_arrmeta *vm;
  (void)rows_meta(a, &vm);
  const ck_option_arrmeta *om =
      (const ck_option_arrmeta *)(const void *)((const char *)vm + sizeof *vm);
  ck_var_dim_data d = row_at(a, i);
  bool v = false;
  if (ck_option_get_valid(om, d.begin + vm->offset + (intptr_t)q * vm->stride, &v) != CK_OK) {
    fprintf(stderr, "item_valid %d %zu: %s\n", (int)i, q, ck_last_error());
  }
  return v;
}

/* Fill `a` (`N * [?]var * T`, made by ck_array_empty) with rows of the given
 * sizes, item q of row i = 10 * i + q (int64 or int32 items). */
static void fill_rows(ck_array_preamble *a, const size_t *sizes) {
  const ck_var_dim_arrmeta *vm;
  (void)rows_meta(a, &vm);
  ck_type vt = ck_type_element(ck_array_type(a));
  if (ck_type_is_option(vt)) {
    vt = ck_type_element(vt);
  }
  ck_type it = ck_type_element(vt);
  if (ck_type_is_option(it)) {
    it = ck_type_element(it);
  }
  intptr_t n = ((const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(a))->size;
  for (intptr_t i = 0; i < n; i++) {
    char *row = wdata(a) + i * (intptr_t)sizeof(ck_var_dim_data);
    REQUIRE_OK(ck_var_dim_alloc(vt, row, (const char *)vm, sizes[i]));
    ck_var_dim_data *r = (ck_var_dim_data *)(void *)row;
    for (size_t q = 0; q < sizes[i]; q++) {
      int64_t v = 10 * i + (int64_t)q;
      if (ck_type_id_of(it) == CK_TYPE_INT32) {
        ((int32_t *)(void *)r->begin)[q] = (int32_t)v;
      } else {
        ((int64_t *)(void *)r->begin)[q] = v;
      }
    }
  }
}

/* Give the items of `a` (`N * [?]var * ?T`, rows allocated one after another
 * by fill_rows: contiguous) a bitmap at bit offset `off` with the items whose
 * flat index is in `nulls` (terminated by -1) null. */
static void attach_items(ck_array_preamble *a, int64_t off, const int *nulls, size_t total,
                         uint8_t *bits) {
  const ck_var_dim_arrmeta *vm;
  (void)rows_meta(a, &vm);
  char *om = (char *)(uintptr_t)vm + sizeof *vm;
  ck_type vt = ck_type_element(ck_array_type(a));
  if (ck_type_is_option(vt)) {
    vt = ck_type_element(vt);
  }
  ck_type ot = ck_type_element(vt);
  memset(bits, 0xff, 16);
  for (const int *p = nulls; *p >= 0; p++) {
    ck_bitmap_set(bits, off + *p, false);
  }
  REQUIRE_OK(ck_option_attach_bitmap(ot, om, bits, NULL, off, row_at(a, 0).begin,
                                     vm->stride, (int64_t)total));
}

/* Bug 1: `?var * int32 <- var * int64` (rows line up), every error mode. */
static void test_var_into_option_rows(void) {
  static const size_t sizes[3] = {2, 0, 3};
  for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
    ck_array_preamble *src = empty("strided * var * int64", 3);
    ck_array_preamble *dst = empty("strided * ?var * int32", 3);
    REQUIRE(src && dst);
    fill_rows(src, sizes);
    CHECK_OK(ck_array_assign(dst, src, modes[mi]));
    for (intptr_t i = 0; i < 3; i++) {
      ck_var_dim_data d = row_at(dst, i);
      CHECK(valid_at(dst, i) && d.size == sizes[i]);
      for (size_t q = 0; q < d.size; q++) {
        CHECK(((const int32_t *)(const void *)d.begin)[q] == 10 * i + (int64_t)q);
      }
    }
    /* an item that does not fit int32 fails the checked modes */
    ck_var_dim_data r2 = row_at(src, 2);
    ((int64_t *)(void *)r2.begin)[1] = INT64_C(1) << 40;
    ck_array_preamble *dst2 = empty("strided * ?var * int32", 3);
    ck_status st = ck_array_assign(dst2, src, modes[mi]);
    CHECK((st == CK_OK) == (modes[mi] == CK_ERRMODE_NOCHECK));
    if (st != CK_OK) {
      CHECK(st == CK_ERR_OVERFLOW && strstr(ck_last_error(), "1099511627776") != NULL);
    }
    ck_array_decref(dst2);
    ck_array_decref(src);
    ck_array_decref(dst);
  }
  /* one row broadcasts to every null-able row (as into `var * T`) */
  ck_array_preamble *one = empty("strided * var * int64", 1);
  ck_array_preamble *dst = empty("strided * ?var * int64", 3);
  REQUIRE(one && dst);
  static const size_t two[1] = {2};
  fill_rows(one, two);
  ck_array_preamble *row = NULL;
  REQUIRE_OK(ck_array_index(one, 0, 0, &row));
  CHECK_OK(ck_array_assign(dst, row, CK_ERRMODE_DEFAULT));
  for (intptr_t i = 0; i < 3; i++) {
    CHECK(valid_at(dst, i) && row_at(dst, i).size == 2 &&
          ((const int64_t *)(const void *)row_at(dst, i).begin)[1] == 1);
  }
  ck_array_decref(row);
  ck_array_decref(one);
  ck_array_decref(dst);
}

/* `?var * int32 <- ?var * int64`: a null row never converts (its items would
 * overflow); `var * int64 <- ?var * int64` refuses a null row, takes rows. */
static void test_option_rows_both_ways(void) {
  static const size_t sizes[3] = {1, 2, 2};
  for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
    ck_array_preamble *src = empty("strided * ?var * int64", 3);
    ck_array_preamble *dst = empty("strided * ?var * int32", 3);
    REQUIRE(src && dst);
    fill_rows(src, sizes);
    ((int64_t *)(void *)row_at(src, 1).begin)[0] = INT64_C(1) << 50;
    CHECK_OK(ck_array_set_valid_at(src, 1, false));
    CHECK_OK(ck_array_assign(dst, src, modes[mi]));
    CHECK(valid_at(dst, 0) && !valid_at(dst, 1) && valid_at(dst, 2));
    CHECK(row_at(dst, 2).size == 2 &&
          ((const int32_t *)(const void *)row_at(dst, 2).begin)[1] == 21);
    ck_array_preamble *plain = empty("strided * var * int64", 3);
    ck_status st = ck_array_assign(plain, src, modes[mi]);
    CHECK(st == CK_ERR_VALUE && strstr(ck_last_error(), "1 null") != NULL);
    CHECK_OK(ck_array_set_valid_at(src, 1, true));
    ((int64_t *)(void *)row_at(src, 1).begin)[0] = 7;
    CHECK_OK(ck_array_assign(plain, src, modes[mi]));
    CHECK(row_at(plain, 1).size == 2 &&
          ((const int64_t *)(const void *)row_at(plain, 1).begin)[0] == 7);
    ck_array_decref(plain);
    ck_array_decref(src);
    ck_array_decref(dst);
  }
}

/* Bug 2: `N * var * ?T` rows allocated by the assignment, source item
 * bitmaps at bit offsets 0..7, every error mode. */
static void test_option_items(void) {
  static const size_t sizes[4] = {3, 0, 1, 4}; /* 8 items */
  static const int nulls[] = {1, 3, 7, -1};
  for (int64_t off = 0; off < 8; off++) {
    for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
      ck_array_preamble *src = empty("strided * var * ?int64", 4);
      ck_array_preamble *dst = empty("strided * var * ?int16", 4);
      REQUIRE(src && dst);
      fill_rows(src, sizes);
      uint8_t bits[16];
      attach_items(src, off, nulls, 8, bits);
      ((int64_t *)(void *)row_at(src, 0).begin)[1] = INT64_C(1) << 40; /* under a null */
      CHECK_OK(ck_array_assign(dst, src, modes[mi]));
      const ck_var_dim_arrmeta *vm;
      (void)rows_meta(dst, &vm);
      const ck_option_arrmeta *om =
          (const ck_option_arrmeta *)(const void *)((const char *)vm + sizeof *vm);
      /* one allocation, one bitmap at bit offset 0 over the 8 items */
      CHECK(om->bits != NULL && om->bit_offset == 0 && om->length == 8 && om->step == 2);
      CHECK(om->origin == row_at(dst, 0).begin);
      CHECK(row_at(dst, 1).size == 0);
      CHECK(row_at(dst, 3).begin == row_at(dst, 0).begin + 4 * 2);
      int flat = 0, bad = 0;
      for (intptr_t i = 0; i < 4; i++) {
        CHECK(row_at(dst, i).size == sizes[i]);
        for (size_t q = 0; q < sizes[i]; q++, flat++) {
          bool null = flat == 1 || flat == 3 || flat == 7;
          bad += item_valid(dst, i, q) == null;
          bad += !null &&
                 ((const int16_t *)(const void *)row_at(dst, i).begin)[q] != 10 * i + (int)q;
        }
      }
      CHECK(bad == 0);
      int64_t n, first;
      CHECK_OK(ck_array_null_count(dst, &n, &first));
      CHECK(n == 3 && first == 1);
      ck_array_decref(src);
      ck_array_decref(dst);
    }
  }
}

/* `?var * ?T`, items into option rows from plain rows, strings, structs. */
static void test_option_rows_and_items(void) {
  static const size_t sizes[3] = {2, 2, 1};
  static const int nulls[] = {0, 4, -1};
  ck_array_preamble *src = empty("strided * ?var * ?int32", 3);
  ck_array_preamble *dst = empty("strided * ?var * ?int64", 3);
  REQUIRE(src && dst);
  fill_rows(src, sizes);
  uint8_t bits[16];
  attach_items(src, 5, nulls, 5, bits);
  CHECK_OK(ck_array_set_valid_at(src, 1, false)); /* its items take no room */
  CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  CHECK(valid_at(dst, 0) && !valid_at(dst, 1) && valid_at(dst, 2));
  CHECK(row_at(dst, 1).size == 0 && row_at(dst, 2).size == 1);
  CHECK(!item_valid(dst, 0, 0) && item_valid(dst, 0, 1) && !item_valid(dst, 2, 0));
  CHECK(((const int64_t *)(const void *)row_at(dst, 0).begin)[1] == 1);
  ck_array_decref(src);
  ck_array_decref(dst);
  /* plain items into option items: all valid, with a bitmap */
  ck_array_preamble *p = empty("strided * var * int64", 2);
  ck_array_preamble *q = empty("strided * var * ?float64", 2);
  REQUIRE(p && q);
  static const size_t s2[2] = {1, 2};
  fill_rows(p, s2);
  CHECK_OK(ck_array_assign(q, p, CK_ERRMODE_DEFAULT));
  CHECK(item_valid(q, 0, 0) && item_valid(q, 1, 1));
  CHECK(((const double *)(const void *)row_at(q, 1).begin)[1] == 11.0);
  int64_t n;
  CHECK_OK(ck_array_null_count(q, &n, NULL));
  CHECK(n == 0);
  ck_array_decref(p);
  ck_array_decref(q);
}

/* Struct items with option fields and null-able inner rows, from ck_array
 * sources whose item bitmaps the source made the same way. */
static void test_structs_and_nested(void) {
  /* a source made by the assignment itself: `var * ?int64` into `var * {a:
   * ?int64}` is a type error, so build struct items from struct items */
  ck_array_preamble *a = empty("strided * var * ?int64", 2);
  ck_array_preamble *b = empty("strided * var * ?int64", 2);
  REQUIRE(a && b);
  static const size_t s[2] = {2, 1};
  static const int nulls[] = {1, -1};
  fill_rows(a, s);
  uint8_t bits[16];
  attach_items(a, 3, nulls, 3, bits);
  CHECK_OK(ck_array_assign(b, a, CK_ERRMODE_DEFAULT)); /* b: our layout */
  ck_array_preamble *c = empty("strided * var * ?int64", 2);
  CHECK_OK(ck_array_assign(c, b, CK_ERRMODE_DEFAULT)); /* from our layout */
  CHECK(item_valid(c, 0, 0) && !item_valid(c, 0, 1) && item_valid(c, 1, 0));
  ck_array_decref(a);
  ck_array_decref(b);
  ck_array_decref(c);
  /* `var * ?var * ?int64` (nested rows): null inner row, null items */
  bool nested_ran = false;
  ck_array_preamble *src = empty("strided * var * ?var * ?int64", 2);
  ck_array_preamble *dst = empty("strided * var * ?var * ?float64", 2);
  REQUIRE(src && dst);
  ck_type outer = ck_type_element(ck_array_type(src));
  const char *om = ck_array_arrmeta(src) + sizeof(ck_dim_arrmeta);
  ck_var_dim_data *rows = (ck_var_dim_data *)(void *)wdata(src);
  CHECK_OK(ck_var_dim_alloc(outer, (char *)&rows[0], om, 2)); /* [[1, None], None] */
  CHECK_OK(ck_var_dim_alloc(outer, (char *)&rows[1], om, 1)); /* [[5]] */
  /* the inner rows' option and the items get bitmaps */
  const ck_var_dim_arrmeta *ovm = (const ck_var_dim_arrmeta *)(const void *)om;
  char *rowopt = (char *)(uintptr_t)om + sizeof(ck_var_dim_arrmeta);
  ck_type rowopt_t = ck_type_element(outer);
  uint8_t rbits[8] = {0xff, 0xff};
  ck_bitmap_set(rbits, 1, false);
  /* inner row slots: rows[0].begin[0..1] and rows[1].begin[0]: not
   * contiguous in general; check they are, else skip the nested part */
  if (rows[1].begin == rows[0].begin + 2 * ovm->stride) {
    REQUIRE_OK(ck_option_attach_bitmap(rowopt_t, rowopt, rbits, NULL, 0, rows[0].begin,
                                       ovm->stride, 3));
    ck_type inner = ck_type_element(rowopt_t);
    const char *im = rowopt + sizeof(ck_option_arrmeta);
    ck_var_dim_data *in = (ck_var_dim_data *)(void *)rows[0].begin;
    CHECK_OK(ck_var_dim_alloc(inner, (char *)&in[0], im, 2));
    CHECK_OK(ck_var_dim_alloc(inner, (char *)&in[2], im, 1));
    ((int64_t *)(void *)in[0].begin)[0] = 1;
    ((int64_t *)(void *)in[2].begin)[0] = 5;
    const ck_var_dim_arrmeta *ivm = (const ck_var_dim_arrmeta *)(const void *)im;
    if (in[2].begin == in[0].begin + 2 * ivm->stride) {
      uint8_t ibits[8] = {0xff};
      ck_bitmap_set(ibits, 1, false);
      char *iom = (char *)(uintptr_t)im + sizeof(ck_var_dim_arrmeta);
      REQUIRE_OK(ck_option_attach_bitmap(ck_type_element(inner), iom, ibits, NULL, 0,
                                         in[0].begin, ivm->stride, 3));
      CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
      ck_var_dim_data *d = (ck_var_dim_data *)(void *)wdata(dst);
      CHECK(d[0].size == 2 && d[1].size == 1);
      const char *dom = ck_array_arrmeta(dst) + sizeof(ck_dim_arrmeta);
      const ck_option_arrmeta *drows =
          (const ck_option_arrmeta *)(const void *)(dom + sizeof(ck_var_dim_arrmeta));
      bool v0 = false, v1 = true, v2 = false;
      const ck_var_dim_arrmeta *dvm = (const ck_var_dim_arrmeta *)(const void *)dom;
      CHECK_OK(ck_option_get_valid(drows, d[0].begin, &v0));
      CHECK_OK(ck_option_get_valid(drows, d[0].begin + dvm->stride, &v1));
      CHECK_OK(ck_option_get_valid(drows, d[1].begin, &v2));
      CHECK(v0 && !v1 && v2);
      const ck_var_dim_data *di = (const ck_var_dim_data *)(const void *)d[0].begin;
      const char *dim = (const char *)drows + sizeof(ck_option_arrmeta);
      const ck_var_dim_arrmeta *divm = (const ck_var_dim_arrmeta *)(const void *)dim;
      const ck_option_arrmeta *ditems =
          (const ck_option_arrmeta *)(const void *)(dim + sizeof(ck_var_dim_arrmeta));
      bool w0 = false, w1 = true, w2 = false;
      CHECK_OK(ck_option_get_valid(ditems, di[0].begin, &w0));
      CHECK_OK(ck_option_get_valid(ditems, di[0].begin + divm->stride, &w1));
      CHECK_OK(ck_option_get_valid(ditems, di[2].begin, &w2));
      CHECK(w0 && !w1 && w2);
      CHECK(((const double *)(const void *)di[2].begin)[0] == 5.0);
      nested_ran = true;
    }
  }
  CHECK(nested_ran); /* the pod arena hands out consecutive rows */
  ck_array_decref(src);
  ck_array_decref(dst);
}

/* The error modes: a null item into plain items, a view destination whose
 * item bitmap no other view would see, rows allocated already. */
static void test_errors(void) {
  static const size_t sizes[2] = {2, 1};
  static const int nulls[] = {2, -1};
  ck_array_preamble *src = empty("strided * var * ?int64", 2);
  REQUIRE(src != NULL);
  fill_rows(src, sizes);
  uint8_t bits[16];
  attach_items(src, 6, nulls, 3, bits);
  ck_array_preamble *plain = empty("strided * var * int64", 2);
  ck_status st = ck_array_assign(plain, src, CK_ERRMODE_DEFAULT);
  CHECK(st == CK_ERR_VALUE && strstr(ck_last_error(), "1 null") != NULL &&
        strstr(ck_last_error(), "flat index 2") != NULL);
  /* a view: the bitmap would live in the view's arrmeta only */
  ck_array_preamble *dst = empty("strided * var * ?int64", 2), *view = NULL;
  REQUIRE_OK(ck_array_slice(dst, 0, 0, 2, 1, &view));
  st = ck_array_assign(view, src, CK_ERRMODE_DEFAULT);
  CHECK(st == CK_ERR_INVALID_STATE && strstr(ck_last_error(), "bitmap") != NULL);
  ck_array_decref(view);
  ck_array_decref(dst);
  /* a source of other rows than the destination's: the broadcast error */
  ck_array_preamble *three = empty("strided * var * ?int64", 3);
  st = ck_array_assign(three, src, CK_ERRMODE_DEFAULT);
  CHECK(st == CK_ERR_VALUE);
  ck_array_decref(three);
  ck_array_decref(plain);
  ck_array_decref(src);
}

CK_TEST_MAIN(CK_TEST(test_var_into_option_rows), CK_TEST(test_option_rows_both_ways),
             CK_TEST(test_option_items), CK_TEST(test_option_rows_and_items),
             CK_TEST(test_structs_and_nested), CK_TEST(test_errors))
