/* Assignment with option types: T -> ?T (all valid), ?T -> ?U (conversion on
 * valid slots only, nulls copied, in every error mode: a value under a null
 * that would fail the conversion never raises), ?T -> T (an error naming the
 * null count and the first index, or a fill value), strings, structs,
 * `?var * T`, foreign source bitmaps at bit offsets 0..7, reversed views,
 * and arrays large enough for the parallel path. */
#include "option_test_util.h"

static const ck_errmode modes[] = {CK_ERRMODE_NOCHECK, CK_ERRMODE_OVERFLOW,
                                   CK_ERRMODE_FRACTIONAL, CK_ERRMODE_INEXACT,
                                   CK_ERRMODE_DEFAULT};

static void test_to_option(void) {
  ck_array_preamble *src = empty("strided * int32", 6), *dst = empty("6 * ?float64", 0);
  REQUIRE(src && dst);
  int32_t *s = (int32_t *)(void *)wdata(src);
  for (int i = 0; i < 6; i++) {
    s[i] = i * 10 - 20;
  }
  CHECK_OK(ck_array_set_valid_at(dst, 2, false)); /* overwritten as valid */
  REQUIRE_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  const double *d = (const double *)(const void *)ck_array_data(dst);
  int64_t n;
  CHECK_OK(ck_array_null_count(dst, &n, NULL));
  CHECK(n == 0);
  for (int i = 0; i < 6; i++) {
    CHECK(d[i] == i * 10 - 20);
  }
  ck_array_decref(src);
  ck_array_decref(dst);
}

static void test_option_to_option_modes(void) {
  for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
    ck_array_preamble *src = empty("8 * ?float64", 0), *dst = empty("8 * ?int8", 0);
    REQUIRE(src && dst);
    double *s = (double *)(void *)wdata(src);
    for (int i = 0; i < 8; i++) {
      s[i] = i - 3;
    }
    /* values under nulls that would fail every checked mode */
    s[1] = 1e300;
    s[4] = 2.5;
    s[7] = __builtin_nan("");
    CHECK_OK(ck_array_set_valid_at(src, 1, false));
    CHECK_OK(ck_array_set_valid_at(src, 4, false));
    CHECK_OK(ck_array_set_valid_at(src, 7, false));
    CHECK_OK(ck_array_assign(dst, src, modes[mi]));
    const int8_t *d = (const int8_t *)(const void *)ck_array_data(dst);
    for (int i = 0; i < 8; i++) {
      bool null = i == 1 || i == 4 || i == 7;
      CHECK(valid_at(dst, i) == !null);
      if (!null) {
        CHECK(d[i] == i - 3);
      }
    }
    int64_t n, first;
    CHECK_OK(ck_array_null_count(dst, &n, &first));
    CHECK(n == 3 && first == 1);
    /* a valid slot that does not convert still fails under the checked modes */
    CHECK_OK(ck_array_set_valid_at(src, 4, true));
    ck_status st = ck_array_assign(dst, src, modes[mi]);
    /* 2.5 -> int8 truncates under NOCHECK and OVERFLOW */
    CHECK((st == CK_OK) ==
          (modes[mi] == CK_ERRMODE_NOCHECK || modes[mi] == CK_ERRMODE_OVERFLOW));
    if (st != CK_OK) {
      CHECK(st == CK_ERR_VALUE && strstr(ck_last_error(), "2.5") != NULL);
    }
    ck_array_decref(src);
    ck_array_decref(dst);
  }
}

static void test_from_option(void) {
  ck_array_preamble *src = empty("5 * ?float64", 0), *dst = empty("5 * int64", 0);
  REQUIRE(src && dst);
  double *s = (double *)(void *)wdata(src);
  for (int i = 0; i < 5; i++) {
    s[i] = i;
  }
  /* no nulls: converts as a plain array */
  CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  CHECK(((const int64_t *)(const void *)ck_array_data(dst))[4] == 4);
  s[1] = 1e300; /* under a null */
  CHECK_OK(ck_array_set_valid_at(src, 1, false));
  CHECK_OK(ck_array_set_valid_at(src, 3, false));
  int64_t *d = (int64_t *)(void *)wdata(dst);
  memset(d, 0x11, 5 * sizeof *d);
  for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
    CHECK_ERR(ck_array_assign(dst, src, modes[mi]), CK_ERR_VALUE,
              "has 2 nulls (the first at flat index 1)");
  }
  CHECK(d[0] == 0x1111111111111111); /* nothing written */
  /* with a fill value */
  ck_array_preamble *fill = NULL;
  REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_INT32), NULL, 0, CK_ARRAY_DEFAULT_FLAGS,
                            &fill));
  *(int32_t *)(void *)wdata(fill) = -7;
  for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
    memset(d, 0x11, 5 * sizeof *d);
    CHECK_OK(ck_array_assign_fill(dst, src, fill, modes[mi]));
    CHECK(d[0] == 0 && d[1] == -7 && d[2] == 2 && d[3] == -7 && d[4] == 4);
  }
  /* the fill must convert: 300 into int8 under a checked mode */
  ck_array_preamble *d8 = empty("5 * int8", 0);
  *(int32_t *)(void *)wdata(fill) = 300;
  CHECK_ERR(ck_array_assign_fill(d8, src, fill, CK_ERRMODE_OVERFLOW), CK_ERR_OVERFLOW, "300");
  CHECK_OK(ck_array_assign_fill(d8, src, fill, CK_ERRMODE_NOCHECK));
  CHECK(((const int8_t *)(const void *)ck_array_data(d8))[1] == 44);
  ck_array_decref(d8);
  /* bad fills */
  ck_array_preamble *vec = empty("5 * int64", 0);
  CHECK_ERR(ck_array_assign_fill(dst, src, vec, CK_ERRMODE_DEFAULT), CK_ERR_INVALID_ARGUMENT,
            "0-d");
  ck_array_decref(vec);
  ck_array_decref(fill);
  /* a 0-d `?T -> T` */
  ck_array_preamble *e = NULL, *one = NULL;
  REQUIRE_OK(ck_array_index(src, 0, 3, &e));
  REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_FLOAT64), NULL, 0, CK_ARRAY_DEFAULT_FLAGS,
                            &one));
  CHECK_ERR(ck_array_assign(one, e, CK_ERRMODE_DEFAULT), CK_ERR_VALUE, "has 1 null ");
  ck_array_decref(e);
  ck_array_decref(one);
  ck_array_decref(src);
  ck_array_decref(dst);
}

static void test_strings(void) {
  ck_array_preamble *src = empty("4 * ?string", 0), *dst = empty("4 * ?string", 0);
  ck_array_preamble *num = empty("4 * ?int64", 0);
  REQUIRE(src && dst && num);
  const char *words[4] = {"alpha", "", "gamma", "delta"};
  size_t es = ck_type_data_size(ck_type_element(ck_array_type(src)));
  const char *sm = ck_array_arrmeta(src) + sizeof(ck_dim_arrmeta) + sizeof(ck_option_arrmeta);
  for (int i = 0; i < 4; i++) {
    CHECK_OK(ck_string_assign(wdata(src) + (size_t)i * es, sm, words[i], strlen(words[i])));
  }
  CHECK_OK(ck_array_set_valid_at(src, 2, false));
  CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  const ck_string *d = (const ck_string *)(const void *)ck_array_data(dst);
  CHECK(valid_at(dst, 0) && valid_at(dst, 1) && !valid_at(dst, 2) && valid_at(dst, 3));
  CHECK(d[0].end - d[0].begin == 5 && memcmp(d[0].begin, "alpha", 5) == 0);
  CHECK(d[3].end - d[3].begin == 5 && memcmp(d[3].begin, "delta", 5) == 0);
  /* string -> number parses the valid slots only ("" would not parse) */
  CHECK_OK(ck_array_set_valid_at(src, 1, false));
  const char *nums[4] = {"12", "", "x", "-4"};
  for (int i = 0; i < 4; i++) {
    CHECK_OK(ck_string_assign(wdata(src) + (size_t)i * es, sm, nums[i], strlen(nums[i])));
  }
  CHECK_OK(ck_array_assign(num, src, CK_ERRMODE_DEFAULT));
  const int64_t *nv = (const int64_t *)(const void *)ck_array_data(num);
  CHECK(nv[0] == 12 && nv[3] == -4 && !valid_at(num, 1) && !valid_at(num, 2));
  /* and back: numbers to strings */
  CHECK_OK(ck_array_assign(dst, num, CK_ERRMODE_DEFAULT));
  CHECK(d[3].end - d[3].begin == 2 && memcmp(d[3].begin, "-4", 2) == 0);
  CHECK(!valid_at(dst, 1) && !valid_at(dst, 2) && valid_at(dst, 0));
  ck_array_decref(src);
  ck_array_decref(dst);
  ck_array_decref(num);
}

static void test_structs_and_var(void) {
  ck_array_preamble *src = empty("3 * {name: ?string, score: ?float64}", 0);
  ck_array_preamble *dst = empty("3 * {name: ?string, score: ?float32}", 0);
  REQUIRE(src && dst);
  ck_array_preamble *sn = NULL, *ss = NULL, *dn = NULL, *ds = NULL;
  REQUIRE_OK(ck_array_field(src, "name", 4, &sn));
  REQUIRE_OK(ck_array_field(src, "score", 5, &ss));
  CHECK_OK(ck_array_set_valid_at(sn, 1, false));
  CHECK_OK(ck_array_set_valid_at(ss, 2, false));
  CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  REQUIRE_OK(ck_array_field(dst, "name", 4, &dn));
  REQUIRE_OK(ck_array_field(dst, "score", 5, &ds));
  CHECK(valid_at(dn, 0) && !valid_at(dn, 1) && valid_at(dn, 2));
  CHECK(valid_at(ds, 0) && valid_at(ds, 1) && !valid_at(ds, 2));
  ck_array_decref(sn);
  ck_array_decref(ss);
  ck_array_decref(dn);
  ck_array_decref(ds);
  ck_array_decref(src);
  ck_array_decref(dst);
  /* `3 * ?var * int64`: a null row copies as null, rows as rows */
  ck_array_preamble *a = empty("3 * ?var * int32", 0), *b = empty("3 * ?var * int64", 0);
  REQUIRE(a && b);
  ck_type vt = ck_type_element(ck_type_element(ck_array_type(a)));
  const char *vm = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta) + sizeof(ck_option_arrmeta);
  for (int i = 0; i < 3; i++) {
    char *row = wdata(a) + (size_t)i * sizeof(ck_var_dim_data);
    CHECK_OK(ck_var_dim_alloc(vt, row, vm, (size_t)i + 1));
    ck_var_dim_data *r = (ck_var_dim_data *)(void *)row;
    for (int j = 0; j <= i; j++) {
      ((int32_t *)(void *)r->begin)[j] = 100 * i + j;
    }
  }
  CHECK_OK(ck_array_set_valid_at(a, 1, false));
  CHECK_OK(ck_array_assign(b, a, CK_ERRMODE_DEFAULT));
  CHECK(valid_at(b, 0) && !valid_at(b, 1) && valid_at(b, 2));
  const ck_var_dim_data *br = (const ck_var_dim_data *)(const void *)ck_array_data(b);
  CHECK(br[2].size == 3 && ((const int64_t *)(const void *)br[2].begin)[2] == 202);
  CHECK(br[0].size == 1 && ((const int64_t *)(const void *)br[0].begin)[0] == 0);
  ck_array_decref(a);
  ck_array_decref(b);
}

static void test_foreign_offsets_and_views(void) {
  ck_type t = parse("strided * ?int16");
  int16_t values[40];
  for (int i = 0; i < 40; i++) {
    values[i] = (int16_t)(i * 3);
  }
  for (int64_t off = 0; off < 8; off++) {
    uint8_t bits[8];
    memset(bits, 0xff, sizeof bits);
    for (int i = 0; i < 40; i += 7) { /* nulls at 0, 7, 14, ... */
      ck_bitmap_set(bits, off + i, false);
    }
    intptr_t shape = 40;
    ck_array_preamble *src = NULL;
    REQUIRE_OK(ck_array_view_external_option(t, (char *)values, &shape, 1, CK_ARRAY_READ,
                                             NULL, bits, off, NULL, &src));
    /* into a reversed view of the destination */
    ck_array_preamble *dst = empty("40 * ?float32", 0), *rev = NULL;
    REQUIRE(dst != NULL);
    REQUIRE_OK(ck_array_slice(dst, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &rev));
    CHECK_OK(ck_array_assign(rev, src, CK_ERRMODE_INEXACT));
    const float *d = (const float *)(const void *)ck_array_data(dst);
    int bad = 0;
    for (int i = 0; i < 40; i++) {
      bool null = i % 7 == 0;
      bad += valid_at(dst, 39 - i) == null;
      bad += !null && d[39 - i] != (float)(i * 3);
    }
    CHECK(bad == 0);
    int64_t n;
    CHECK_OK(ck_array_null_count(dst, &n, NULL));
    CHECK(n == 6);
    ck_array_decref(rev);
    ck_array_decref(dst);
    ck_array_decref(src);
  }
  ck_type_decref(t);
}

static void test_large(void) {
  intptr_t n = 200000;
  ck_array_preamble *src = empty("strided * ?int32", n), *dst = empty("strided * ?float64", n);
  REQUIRE(src && dst);
  int32_t *s = (int32_t *)(void *)wdata(src);
  for (intptr_t i = 0; i < n; i++) {
    s[i] = (int32_t)(i - n / 2);
    if (i % 19 == 3) {
      CHECK_OK(ck_array_set_valid_at(src, i, false));
    }
  }
  CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  const double *d = (const double *)(const void *)ck_array_data(dst);
  intptr_t bad = 0;
  for (intptr_t i = 0; i < n; i++) {
    bool null = i % 19 == 3;
    bad += valid_at(dst, i) == null;
    bad += !null && d[i] != (double)(i - n / 2);
  }
  CHECK(bad == 0);
  int64_t nulls, first;
  CHECK_OK(ck_array_null_count(dst, &nulls, &first));
  CHECK(nulls == (n - 3 + 18) / 19 && first == 3);
  ck_array_decref(src);
  ck_array_decref(dst);
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

CK_TEST_MAIN(CK_TEST(test_to_option), CK_TEST(test_option_to_option_modes),
             CK_TEST(test_from_option), CK_TEST(test_strings), CK_TEST(test_structs_and_var),
             CK_TEST(test_foreign_offsets_and_views), CK_TEST(test_large))
