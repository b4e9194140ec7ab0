/* The general assignment factory and ck_array_assign: conversions over
 * dims with broadcasting (size-1, missing leading, extra size-1 leading,
 * zero-size, incompatible), negative strides, var dims (var->var,
 * fixed->var, size-1->var, var->fixed, empty rows), structs, read-only
 * destinations, and the parallel outer loop (1 vs 4 threads identical, an
 * error raised in a worker reaches the caller). */
#include "ck_test.h"

static void test_builtin_and_dims(void) {
  intptr_t s23[2] = {2, 3};
  ck_array_preamble *a = arr("strided * strided * int32", 2, s23);
  ck_array_preamble *d = arr("strided * strided * float64", 2, s23);
  REQUIRE(a && d);
  int32_t *ai = (int32_t *)(void *)a->data;
  for (int i = 0; i < 6; i++) {
    ai[i] = i * 10 - 7;
  }
  CHECK_OK(ck_array_assign(d, a, CK_ERRMODE_DEFAULT));
  const double *dd = (const double *)(const void *)d->data;
  for (int i = 0; i < 6; i++) {
    CHECK(dd[i] == i * 10 - 7);
  }
  /* (3,) broadcasts over rows; (2,1) over columns; (1,3) too */
  intptr_t s3 = 3, s21[2] = {2, 1}, s13[2] = {1, 3};
  ck_array_preamble *r = arr("strided * int32", 1, &s3);
  ck_array_preamble *c = arr("strided * strided * int32", 2, s21);
  ck_array_preamble *r13 = arr("3 * int32", 0, NULL);
  ck_array_preamble *f13 = arr("strided * 3 * int32", 1, s13);
  int32_t *rv = (int32_t *)(void *)r->data, *cv = (int32_t *)(void *)c->data;
  rv[0] = 1, rv[1] = 2, rv[2] = 3;
  cv[0] = 100, cv[1] = 200;
  memcpy(r13->data, rv, 12);
  memcpy(f13->data, rv, 12);
  CHECK_OK(ck_array_assign(d, r, CK_ERRMODE_DEFAULT));
  CHECK(dd[0] == 1 && dd[2] == 3 && dd[3] == 1 && dd[5] == 3);
  CHECK_OK(ck_array_assign(d, c, CK_ERRMODE_DEFAULT));
  CHECK(dd[0] == 100 && dd[2] == 100 && dd[3] == 200 && dd[5] == 200);
  CHECK_OK(ck_array_assign(d, r13, CK_ERRMODE_DEFAULT));
  CHECK(dd[1] == 2 && dd[4] == 2);
  CHECK_OK(ck_array_assign(d, f13, CK_ERRMODE_DEFAULT));
  CHECK(dd[2] == 3 && dd[5] == 3);
  /* a 0-d source fills everything */
  ck_array_preamble *z = arr("int8", 0, NULL);
  *(int8_t *)(void *)z->data = -1;
  CHECK_OK(ck_array_assign(d, z, CK_ERRMODE_DEFAULT));
  for (int i = 0; i < 6; i++) {
    CHECK(dd[i] == -1);
  }
  /* extra leading size-1 source dims are dropped: (1,3) -> (3,) */
  CHECK_OK(ck_array_assign(r, f13, CK_ERRMODE_DEFAULT));
  /* incompatible shapes */
  intptr_t s4 = 4;
  ck_array_preamble *r4 = arr("strided * int32", 1, &s4);
  CHECK_ERR(ck_array_assign(d, r4, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast shape (4,) to (2, 3)");
  CHECK_ERR(ck_array_assign(r, a, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast shape (2, 3) to (3,)");
  CHECK_ERR(ck_array_assign(r4, r, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast shape (3,) to (4,)");
  /* zero-size dims: (0, 3) <- (3,) and (0,3) <- (1,3), nothing written */
  intptr_t s03[2] = {0, 3};
  ck_array_preamble *e = arr("strided * strided * float64", 2, s03);
  CHECK_OK(ck_array_assign(e, r, CK_ERRMODE_DEFAULT));
  CHECK_OK(ck_array_assign(e, f13, CK_ERRMODE_DEFAULT));
  CHECK_ERR(ck_array_assign(e, r4, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast shape (4,) to (0, 3)");
  /* (2,0) <- (0,) */
  intptr_t s20[2] = {2, 0}, s0 = 0;
  ck_array_preamble *e2 = arr("strided * strided * float64", 2, s20);
  ck_array_preamble *e0 = arr("strided * int32", 1, &s0);
  CHECK_OK(ck_array_assign(e2, e0, CK_ERRMODE_DEFAULT));
  CHECK_ERR(ck_array_assign(e2, r, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast shape (3,) to (2, 0)");
  /* errors from the element kernels pass through */
  ai[4] = 300;
  ck_array_preamble *u8 = arr("strided * strided * uint8", 2, s23);
  CHECK_ERR(ck_array_assign(u8, a, CK_ERRMODE_OVERFLOW), CK_ERR_OVERFLOW,
            "overflow while assigning int32 value -7 to uint8");
  /* read-only destination */
  CHECK_OK(ck_array_set_readonly(d));
  CHECK_ERR(ck_array_assign(d, a, CK_ERRMODE_DEFAULT), CK_ERR_INVALID_STATE,
            "read-only");
  ck_array_preamble *all[] = {a, d, r, c, r13, f13, z, r4, e, e2, e0, u8};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    ck_array_decref(all[i]);
  }
}

static void test_negative_strides(void) {
  intptr_t n = 5;
  ck_array_preamble *a = arr("strided * int64", 1, &n);
  ck_array_preamble *b = arr("strided * float32", 1, &n);
  for (int i = 0; i < 5; i++) {
    ((int64_t *)(void *)a->data)[i] = i;
  }
  ck_array_preamble *rev;
  REQUIRE_OK(ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &rev));
  CHECK_OK(ck_array_assign(b, rev, CK_ERRMODE_DEFAULT));
  for (int i = 0; i < 5; i++) {
    CHECK(((float *)(void *)b->data)[i] == 4 - i);
  }
  /* reversed destination, stepped source */
  ck_array_preamble *brev, *step;
  REQUIRE_OK(ck_array_slice(b, 0, 3, CK_SLICE_NONE, -1, &brev)); /* b[3::-1] */
  REQUIRE_OK(ck_array_slice(a, 0, 0, CK_SLICE_NONE, 2, &step));  /* a[::2]  */
  intptr_t shape;
  size_t nd;
  CHECK_OK(ck_array_shape(brev, &shape, 1, &nd));
  CHECK(shape == 4);
  CHECK_ERR(ck_array_assign(brev, step, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast shape (3,) to (4,)");
  ck_array_preamble *brev3;
  REQUIRE_OK(ck_array_slice(b, 0, 2, CK_SLICE_NONE, -1, &brev3)); /* b[2::-1] */
  CHECK_OK(ck_array_assign(brev3, step, CK_ERRMODE_DEFAULT));
  const float *bv = (const float *)(const void *)b->data;
  CHECK(bv[2] == 0 && bv[1] == 2 && bv[0] == 4 && bv[3] == 1 && bv[4] == 0);
  ck_array_decref(brev3);
  ck_array_decref(brev);
  ck_array_decref(step);
  ck_array_decref(rev);
  ck_array_decref(a);
  ck_array_decref(b);
}

/* `strided * var * int32` with the given rows. */
static ck_array_preamble *var_rows(size_t nrows, const size_t *sizes,
                                   const int32_t *const *rows) {
  intptr_t n = (intptr_t)nrows;
  ck_array_preamble *a = arr("strided * var * int32", 1, &n);
  if (a == NULL) {
    return NULL;
  }
  ck_type vt = ck_type_element(a->type);
  const char *vm = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  for (size_t i = 0; i < nrows; i++) {
    char *el = a->data + i * sizeof(ck_var_dim_data);
    if (ck_var_dim_alloc(vt, el, vm, sizes[i]) != CK_OK) {
      fprintf(stderr, "alloc: %s\n", ck_last_error());
      continue;
    }
    if (sizes[i] > 0) {
      memcpy(((ck_var_dim_data *)(void *)el)->begin, rows[i], sizes[i] * 4);
    }
  }
  return a;
}

static const ck_var_dim_data *row(const ck_array_preamble *a, size_t i) {
  return (const ck_var_dim_data *)(const void *)(a->data + i * sizeof(ck_var_dim_data));
}

static bool row_is(const ck_array_preamble *a, size_t i, size_t n, const int32_t *v) {
  const ck_var_dim_data *r = row(a, i);
  if (r->size != n) {
    return false;
  }
  for (size_t k = 0; k < n; k++) {
    int32_t x;
    memcpy(&x, r->begin + k * 4, 4);
    if (x != v[k]) {
      return false;
    }
  }
  return true;
}

static void test_var_dims(void) {
  const int32_t r0[] = {1, 2, 3}, r2[] = {7};
  const int32_t *rows[3] = {r0, NULL, r2};
  size_t sizes[3] = {3, 0, 1};
  ck_array_preamble *src = var_rows(3, sizes, rows);
  REQUIRE(src != NULL);
  intptr_t n = 3;
  /* var -> var: sizes copied, new memory in the destination arena */
  ck_array_preamble *dst = arr("strided * var * int64", 1, &n);
  CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  for (size_t i = 0; i < 3; i++) {
    CHECK(row(dst, i)->size == sizes[i]);
  }
  CHECK(((const int64_t *)(const void *)row(dst, 0)->begin)[2] == 3);
  CHECK(((const int64_t *)(const void *)row(dst, 2)->begin)[0] == 7);
  ck_array_decref(dst);
  ck_array_preamble *d32 = arr("strided * var * int32", 1, &n);
  CHECK_OK(ck_array_assign(d32, src, CK_ERRMODE_DEFAULT));
  CHECK(row_is(d32, 0, 3, r0) && row_is(d32, 1, 0, NULL) && row_is(d32, 2, 1, r2));
  CHECK(row(d32, 0)->begin != row(src, 0)->begin);
  /* allocated rows are written in place: a size-1 source row broadcasts,
   * a mismatched size is an error at run time */
  const int32_t q0[] = {5}, q1[] = {6, 6}, q2[] = {8, 9, 10};
  const int32_t *qrows[3] = {q0, q1, q2};
  size_t qs[3] = {1, 0, 1};
  ck_array_preamble *q = var_rows(3, qs, qrows);
  CHECK_OK(ck_array_assign(d32, q, CK_ERRMODE_DEFAULT));
  const int32_t five[3] = {5, 5, 5}, eight[1] = {8};
  CHECK(row_is(d32, 0, 3, five) && row_is(d32, 1, 0, NULL) && row_is(d32, 2, 1, eight));
  size_t qs2[3] = {2, 0, 1};
  const int32_t *qrows2[3] = {q1, q1, q2};
  ck_array_preamble *q2a = var_rows(3, qs2, qrows2);
  CHECK_ERR(ck_array_assign(d32, q2a, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast a var dim of size 2 to size 3");
  ck_array_decref(q2a);
  ck_array_decref(q);
  ck_array_decref(d32);

  /* fixed -> var: each row gets the fixed size */
  intptr_t s32[2] = {3, 2};
  ck_array_preamble *fx = arr("strided * strided * int32", 2, s32);
  for (int i = 0; i < 6; i++) {
    ((int32_t *)(void *)fx->data)[i] = i;
  }
  ck_array_preamble *fv = arr("strided * var * int32", 1, &n);
  CHECK_OK(ck_array_assign(fv, fx, CK_ERRMODE_DEFAULT));
  const int32_t e0[] = {0, 1}, e2[] = {4, 5};
  CHECK(row_is(fv, 0, 2, e0) && row_is(fv, 2, 2, e2));
  /* size-1 -> var: unallocated rows become size 1, allocated ones fill */
  intptr_t s31[2] = {3, 1};
  ck_array_preamble *c1 = arr("strided * strided * int32", 2, s31);
  ((int32_t *)(void *)c1->data)[0] = 11;
  ((int32_t *)(void *)c1->data)[1] = 22;
  ((int32_t *)(void *)c1->data)[2] = 33;
  CHECK_OK(ck_array_assign(fv, c1, CK_ERRMODE_DEFAULT));
  const int32_t e22[] = {22, 22};
  CHECK(row_is(fv, 1, 2, e22));
  ck_array_preamble *fresh = arr("strided * var * int32", 1, &n);
  CHECK_OK(ck_array_assign(fresh, c1, CK_ERRMODE_DEFAULT));
  const int32_t e33[] = {33};
  CHECK(row_is(fresh, 2, 1, e33));
  /* a 0-d scalar into var rows; a missing var dim broadcasts */
  ck_array_preamble *sc = arr("int32", 0, NULL);
  *(int32_t *)(void *)sc->data = -4;
  CHECK_OK(ck_array_assign(fv, sc, CK_ERRMODE_DEFAULT));
  const int32_t m4[] = {-4, -4};
  CHECK(row_is(fv, 0, 2, m4) && row_is(fv, 2, 2, m4));
  /* var -> fixed: sizes must match (or be 1) */
  ck_array_preamble *back = arr("strided * strided * int32", 2, s32);
  CHECK_OK(ck_array_assign(back, fv, CK_ERRMODE_DEFAULT));
  CHECK(((int32_t *)(void *)back->data)[5] == -4);
  CHECK_ERR(ck_array_assign(back, src, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast a var dim of size 3 to size 2");
  /* var -> 0-d is not a broadcast */
  CHECK_ERR(ck_array_assign(sc, src, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "cannot broadcast shape (3, var) to ()");
  /* a top-level var dim: `var * float64` */
  ck_array_preamble *tv = arr("var * float64", 0, NULL);
  intptr_t s4 = 4;
  ck_array_preamble *f4 = arr("strided * float64", 1, &s4);
  ((double *)(void *)f4->data)[3] = 2.5;
  CHECK_OK(ck_array_assign(tv, f4, CK_ERRMODE_DEFAULT));
  const ck_var_dim_data *tvd = (const ck_var_dim_data *)(const void *)tv->data;
  CHECK(tvd->size == 4 && ((const double *)(const void *)tvd->begin)[3] == 2.5);
  ck_array_preamble *all[] = {src, fx, fv, c1, fresh, sc, back, tv, f4};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    ck_array_decref(all[i]);
  }
}

static void test_structs(void) {
  ck_array_preamble *a = arr("{x: int32, y: float64, s: string}", 0, NULL);
  ck_array_preamble *b = arr("{x: float32, y: int16, s: string}", 0, NULL);
  ck_array_preamble *c = arr("{y: int32, x: float64, s: string}", 0, NULL);
  ck_array_preamble *d = arr("{x: int32, y: float64}", 0, NULL);
  REQUIRE(a && b && c && d);
  size_t xo, yo, so, smo;
  REQUIRE_OK(ck_struct_field(a->type, 0, NULL, NULL, &xo, NULL));
  REQUIRE_OK(ck_struct_field(a->type, 1, NULL, NULL, &yo, NULL));
  REQUIRE_OK(ck_struct_field(a->type, 2, NULL, NULL, &so, &smo));
  int32_t x = 12;
  double y = 3.0;
  memcpy(a->data + xo, &x, 4);
  memcpy(a->data + yo, &y, 8);
  REQUIRE_OK(ck_string_assign(a->data + so, ck_array_arrmeta(a) + smo, "hi", 2));
  CHECK_OK(ck_array_assign(b, a, CK_ERRMODE_DEFAULT));
  size_t bx, by, bs;
  REQUIRE_OK(ck_struct_field(b->type, 0, NULL, NULL, &bx, NULL));
  REQUIRE_OK(ck_struct_field(b->type, 1, NULL, NULL, &by, NULL));
  REQUIRE_OK(ck_struct_field(b->type, 2, NULL, NULL, &bs, NULL));
  float fx;
  int16_t iy;
  memcpy(&fx, b->data + bx, 4);
  memcpy(&iy, b->data + by, 2);
  CHECK(fx == 12.0f && iy == 3);
  const ck_string *bstr = (const ck_string *)(const void *)(b->data + bs);
  CHECK(bstr->end - bstr->begin == 2 && memcmp(bstr->begin, "hi", 2) == 0);
  /* a fractional value in a field: the error names the field */
  y = 3.5;
  memcpy(a->data + yo, &y, 8);
  CHECK_ERR(ck_array_assign(b, a, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "fractional part lost while assigning float64 value 3.5 to int16");
  CHECK_ERR(ck_array_assign(c, a, CK_ERRMODE_DEFAULT), CK_ERR_TYPE,
            "field 0 is named");
  CHECK_ERR(ck_array_assign(d, a, CK_ERRMODE_DEFAULT), CK_ERR_TYPE,
            "cannot assign from '{x: int32, y: float64, s: string}' to "
            "'{x: int32, y: float64}'");
  ck_array_preamble *i = arr("int32", 0, NULL);
  CHECK_ERR(ck_array_assign(i, a, CK_ERRMODE_DEFAULT), CK_ERR_TYPE,
            "cannot assign from");
  /* identical POD structs: byte copy, also over dims with broadcasting */
  intptr_t n = 3;
  ck_array_preamble *ds = arr("strided * {x: int32, y: float64}", 1, &n);
  memcpy(d->data, a->data, ck_type_data_size(d->type)); /* same layout prefix */
  CHECK_OK(ck_array_assign(ds, d, CK_ERRMODE_DEFAULT));
  CHECK(memcmp(ds->data + 2 * ck_type_data_size(d->type), d->data,
               ck_type_data_size(d->type)) == 0);
  ck_array_decref(ds);
  ck_array_decref(i);
  ck_array_decref(a);
  ck_array_decref(b);
  ck_array_decref(c);
  ck_array_decref(d);
}

static void test_kernel_api(void) {
  /* build by hand and call the strided entry point; request checks */
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_dim_arrmeta m = {4, 8};
  ck_dim_arrmeta ms = {4, 4};
  ck_type t64 = P("strided * float64"), t32 = P("strided * int32");
  size_t end = 0;
  REQUIRE_OK(ck_make_assignment_kernel(&kb, 0, t64, (const char *)&m, t32,
                                       (const char *)&ms, CK_KERNEL_REQUEST_STRIDED,
                                       CK_ERRMODE_DEFAULT, &end));
  CHECK(end > sizeof(ck_prefix));
  int32_t in[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  double out[2][4];
  const char *src[1] = {(const char *)in};
  intptr_t ss[1] = {16};
  ck_prefix *root = ck_kernel_builder_get(&kb, 0);
  CHECK(ck_prefix_strided(root)((char *)out, 32, src, ss, 2, root) == 0);
  CHECK(out[0][0] == 1 && out[1][3] == 8);
  char dump[2048];
  CHECK_OK(ck_kernel_builder_dump(&kb, dump, sizeof dump, NULL));
  CHECK(strstr(dump, "strided_dim") != NULL);
  ck_kernel_builder_destroy(&kb);
  CHECK_ERR(ck_make_assignment_kernel(&kb, 3, t64, (const char *)&m, t32,
                                      (const char *)&ms, CK_KERNEL_REQUEST_SINGLE,
                                      CK_ERRMODE_DEFAULT, NULL),
            CK_ERR_INVALID_ARGUMENT, "multiple of");
  CHECK_ERR(ck_make_assignment_kernel(&kb, 0, t64, (const char *)&m, t32,
                                      (const char *)&ms, CK_KERNEL_REQUEST_SINGLE,
                                      (ck_errmode)9, NULL),
            CK_ERR_INVALID_ARGUMENT, "error mode");
  ck_kernel_builder_destroy(&kb);
  ck_type_decref(t64);
  ck_type_decref(t32);
}

/* ---- parallel ---- */

static void test_parallel_identical(void) {
  intptr_t shape[2] = {ck_test_scaled(2048) < 256 ? 256 : ck_test_scaled(2048), 256};
  ck_array_preamble *a = arr("strided * strided * float64", 2, shape);
  ck_array_preamble *b1 = arr("strided * strided * float32", 2, shape);
  ck_array_preamble *b4 = arr("strided * strided * float32", 2, shape);
  REQUIRE(a && b1 && b4);
  size_t n = (size_t)(shape[0] * shape[1]);
  double *av = (double *)(void *)a->data;
  for (size_t i = 0; i < n; i++) {
    av[i] = (double)i * 1.000001 - 12345.678;
  }
  unsigned saved = ck_get_num_threads();
  REQUIRE_OK(ck_set_num_threads(1));
  CHECK_OK(ck_array_assign(b1, a, CK_ERRMODE_NOCHECK));
  REQUIRE_OK(ck_set_num_threads(4));
  CHECK_OK(ck_array_assign(b4, a, CK_ERRMODE_NOCHECK));
  CHECK(memcmp(b1->data, b4->data, n * 4) == 0);
  CHECK(ck_thread_pool_size() >= 1); /* the pool was used */
  /* broadcast source (1, 256) -> (rows, 256) in parallel */
  intptr_t s1[2] = {1, 256};
  ck_array_preamble *row = arr("strided * strided * float64", 2, s1);
  for (int i = 0; i < 256; i++) {
    ((double *)(void *)row->data)[i] = i;
  }
  CHECK_OK(ck_array_assign(b4, row, CK_ERRMODE_NOCHECK));
  const float *bv = (const float *)(const void *)b4->data;
  CHECK(bv[n - 1] == 255 && bv[256 + 7] == 7);
  CHECK_OK(ck_set_num_threads(saved));
  CHECK_OK(ck_thread_pool_shutdown()); /* no threads left for valgrind */
  ck_array_decref(row);
  ck_array_decref(a);
  ck_array_decref(b1);
  ck_array_decref(b4);
}

static void test_parallel_error(void) {
  intptr_t n = 1 << 18;
  ck_array_preamble *a = arr("strided * int64", 1, &n);
  ck_array_preamble *b = arr("strided * uint8", 1, &n);
  REQUIRE(a && b);
  int64_t *av = (int64_t *)(void *)a->data;
  for (intptr_t i = 0; i < n; i++) {
    av[i] = i % 200;
  }
  av[n / 4 * 3] = 300;
  unsigned saved = ck_get_num_threads();
  for (unsigned nt = 1; nt <= 4; nt += 3) {
    REQUIRE_OK(ck_set_num_threads(nt));
    CHECK_ERR(ck_array_assign(b, a, CK_ERRMODE_OVERFLOW), CK_ERR_OVERFLOW,
              "overflow while assigning int64 value 300 to uint8");
    CHECK_OK(ck_array_assign(b, a, CK_ERRMODE_NOCHECK));
    CHECK(b->data[n / 4 * 3] == 44);
  }
  /* a 2-D case: the failing row is in the last quarter */
  intptr_t s2[2] = {1024, n / 1024};
  ck_array_preamble *a2 = arr("strided * strided * float64", 2, s2);
  ck_array_preamble *b2 = arr("strided * strided * int32", 2, s2);
  ((double *)(void *)a2->data)[(size_t)n - 5] = 0.5;
  REQUIRE_OK(ck_set_num_threads(4));
  CHECK_ERR(ck_array_assign(b2, a2, CK_ERRMODE_DEFAULT), CK_ERR_VALUE,
            "fractional part lost while assigning float64 value 0.5 to int32");
  CHECK_OK(ck_set_num_threads(saved));
  CHECK_OK(ck_thread_pool_shutdown());
  ck_array_decref(a2);
  ck_array_decref(b2);
  ck_array_decref(a);
  ck_array_decref(b);
}

/* strings in a large array stay serial (one arena, one writer) and right */
static void test_parallel_blockref_serial(void) {
  intptr_t n = 1 << 17;
  ck_array_preamble *a = arr("strided * int16", 1, &n);
  ck_array_preamble *s = arr("strided * string", 1, &n);
  for (intptr_t i = 0; i < n; i++) {
    ((int16_t *)(void *)a->data)[i] = (int16_t)(i % 1000);
  }
  unsigned saved = ck_get_num_threads();
  REQUIRE_OK(ck_set_num_threads(4));
  CHECK_OK(ck_array_assign(s, a, CK_ERRMODE_DEFAULT));
  const ck_string *x = (const ck_string *)(const void *)(s->data + 12345 * sizeof(ck_string));
  CHECK(x->end - x->begin == 3 && memcmp(x->begin, "345", 3) == 0);
  CHECK_OK(ck_set_num_threads(saved));
  CHECK_OK(ck_thread_pool_shutdown());
  ck_array_decref(a);
  ck_array_decref(s);
}

CK_TEST_MAIN(CK_TEST(test_builtin_and_dims), CK_TEST(test_negative_strides),
             CK_TEST(test_var_dims), CK_TEST(test_structs), CK_TEST(test_kernel_api),
             CK_TEST(test_parallel_identical), CK_TEST(test_parallel_error),
             CK_TEST(test_parallel_blockref_serial))
