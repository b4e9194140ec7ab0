/* Where an element-wise kernel failed (error.h): the element recorded by the
 * leaf, the indices the lifting layers prepend, the destination address
 * deciding when dims were coalesced, the parallel runner's offsets, and the
 * user's source line; every new failure forgets them. */
#include "ck_test.h"

/* A leaf over int64 -> int64 failing at the first negative element, which it
 * records as a jitted kernel's entry point does. */
static int neg_strided(char *dst, intptr_t dst_stride, const char *const *src,
                       const intptr_t *src_stride, size_t n, ck_prefix *self) {
  (void)self;
  for (size_t i = 0; i < n; i++) {
    int64_t v = *(const int64_t *)(const void *)(src[0] + (intptr_t)i * src_stride[0]);
    char *d = dst + (intptr_t)i * dst_stride;
    if (v < 0) {
      ck_set_error(CK_ERR_VALUE, "negative");
      ck_error_set_element((int64_t)i, d);
      return CK_ERR_VALUE;
    }
    memcpy(d, &v, sizeof v);
  }
  return CK_OK;
}

static int neg_single(char *dst, const char *const *src, ck_prefix *self) {
  intptr_t z = 0;
  return neg_strided(dst, 0, src, &z, 1, self);
}

static ck_status neg_factory(void *child_data, ck_kernel_builder *ckb, size_t offset,
                             ck_type dst_type, const char *dst_arrmeta, size_t nsrc,
                             const ck_type *src_types, const char *const *src_arrmeta,
                             ck_kernel_request req, size_t *out_end) {
  (void)child_data, (void)dst_type, (void)dst_arrmeta, (void)nsrc, (void)src_types,
      (void)src_arrmeta;
  size_t end = offset + sizeof(ck_prefix);
  ck_status st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  if (st != CK_OK) {
    return st;
  }
  ck_prefix *k = ck_kernel_builder_get(ckb, offset);
  k->destructor = NULL;
  (void)ck_prefix_set_function(k, req, neg_single, neg_strided);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}

/* A `strided * strided * int64` array of shape (m, n) holding i * n + j,
 * with -1 at (fi, fj). */
static ck_array_preamble *grid(intptr_t m, intptr_t n, intptr_t fi, intptr_t fj) {
  intptr_t shape[2] = {m, n};
  ck_array_preamble *a = arr("strided * strided * int64", 2, shape);
  if (a != NULL) {
    int64_t *p = (int64_t *)(void *)a->data;
    for (intptr_t k = 0; k < m * n; k++) {
      p[k] = k;
    }
    p[fi * n + fj] = -1;
  }
  return a;
}

static size_t element(int64_t *idx) {
  return ck_last_error_element(idx, CK_ERROR_MAX_INDEX, NULL);
}

static void test_api(void) {
  int64_t idx[CK_ERROR_MAX_INDEX];
  ck_clear_error();
  CHECK(element(idx) == 0);
  ck_error_prepend_element(3); /* nothing recorded: a no-op */
  CHECK(element(idx) == 0);
  ck_set_error(CK_ERR_VALUE, "x");
  int dummy;
  ck_error_set_element(5, &dummy);
  ck_error_offset_element(10);
  ck_error_prepend_element(2);
  const void *at = NULL;
  CHECK(ck_last_error_element(idx, CK_ERROR_MAX_INDEX, &at) == 2);
  CHECK(idx[0] == 2 && idx[1] == 15 && at == &dummy);
  ck_error_offset_element(1); /* the outermost index */
  CHECK(element(idx) == 2 && idx[0] == 3);
  ck_set_error(CK_ERR_VALUE, "y"); /* a new failure forgets the element */
  CHECK(element(idx) == 0);
  ck_error_set_element(1, NULL);
  for (int k = 0; k < CK_ERROR_MAX_INDEX + 5; k++) {
    ck_error_prepend_element(k);
  }
  CHECK(element(idx) == CK_ERROR_MAX_INDEX);
  ck_clear_error();
  CHECK(element(idx) == 0);
  /* the source line */
  const char *f, *file;
  int64_t line;
  CHECK(!ck_last_error_source(&f, &file, &line));
  ck_error_set_source("fn", "/tmp/x.py", 12);
  CHECK(ck_last_error_source(&f, &file, &line));
  CHECK(strcmp(f, "fn") == 0 && strcmp(file, "/tmp/x.py") == 0 && line == 12);
  ck_set_error(CK_ERR_USER, "z");
  CHECK(!ck_last_error_source(&f, &file, &line));
  ck_error_set_source(NULL, NULL, 3);
  CHECK(ck_last_error_source(&f, &file, &line) && f[0] == 0 && file[0] == 0 && line == 3);
  ck_clear_error();
  CHECK(!ck_last_error_source(NULL, NULL, NULL));
}

static void apply_fails_at(ck_array_preamble *x, intptr_t fi, intptr_t fj) {
  ck_array_preamble *r = NULL;
  CHECK_ERR(ck_array_apply(neg_factory, NULL, CK_BUILTIN(CK_TYPE_INT64), 1, &x, NULL, &r), CK_ERR_VALUE,
            "negative");
  CHECK(r == NULL);
  int64_t idx[CK_ERROR_MAX_INDEX];
  size_t n = element(idx);
  CHECK(n == 2);
  CHECK(idx[0] == fi && idx[1] == fj);
  if (n != 2 || idx[0] != fi || idx[1] != fj) {
    fprintf(stderr, "  expected (%" PRIdPTR ", %" PRIdPTR "), got %zu indices (%" PRId64
            ", %" PRId64 ")\n", fi, fj, n, idx[0], n > 1 ? idx[1] : -1);
  }
}

/* Through the lifting layers: a contiguous grid (coalesced into one run:
 * the address decides), a strided view, a transposed view. */
static void test_lifted(void) {
  ck_array_preamble *x = grid(5, 7, 3, 4);
  REQUIRE(x != NULL);
  apply_fails_at(x, 3, 4);
  ck_array_preamble *v = NULL; /* every other column: 7 -> 4 columns */
  REQUIRE_OK(ck_array_slice(x, 1, 0, 7, 2, &v));
  apply_fails_at(v, 3, 2);
  ck_array_decref(v);
  ck_array_preamble *t = NULL; /* the transpose: shape (7, 5) */
  intptr_t tshape[2] = {7, 5}, tstrides[2] = {8, 7 * 8};
  REQUIRE_OK(ck_array_view_dims(x, 2, 2, tshape, tstrides, 0, &t));
  apply_fails_at(t, 4, 3);
  ck_array_decref(t);
  ck_array_decref(x);
}

/* The parallel runner: rows of other threads count from their chunk. */
static void test_parallel(void) {
  REQUIRE_OK(ck_set_num_threads(2));
  intptr_t m = 4000, n = 100;
  ck_array_preamble *x = grid(m, n, 3001, 18);
  REQUIRE(x != NULL);
  ck_array_preamble *v = NULL; /* not coalescable: the layers' indices */
  REQUIRE_OK(ck_array_slice(x, 1, 0, n, 2, &v));
  apply_fails_at(x, 3001, 18);
  ck_array_decref(x);
  ck_array_preamble *r = NULL;
  CHECK_ERR(ck_array_apply(neg_factory, NULL, CK_BUILTIN(CK_TYPE_INT64), 1, &v, NULL, &r), CK_ERR_VALUE,
            "negative");
  int64_t idx[CK_ERROR_MAX_INDEX];
  CHECK(element(idx) == 2 && idx[0] == 3001 && idx[1] == 9);
  ck_array_decref(v);
  CHECK_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown());
}

CK_TEST_MAIN(CK_TEST(test_api), CK_TEST(test_lifted), CK_TEST(test_parallel))
