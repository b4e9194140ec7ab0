/* Elementwise lifting: ck_broadcast_shapes and the result type helper,
 * N-ary ck_array_apply with broadcasting (size-1, missing leading and
 * zero-size dims, incompatible shapes), one child call per row, var dims in
 * sources and results, the kernel dump, and allocation failure at every
 * step while building lifted kernel trees deeper than the inline buffer. */
#include "ck_test.h"

/* ---- a user child kernel: dst(float64) = sum of float64 sources ---- */

static long leaf_calls;     /* strided calls (single-threaded tests only) */
static long leaf_elements;

static int sum_single(char *dst, const char *const *src, ck_prefix *self) {
  size_t n = ((const size_t *)(const void *)(self + 1))[0];
  double acc = 0;
  for (size_t j = 0; j < n; j++) {
    double x;
    memcpy(&x, src[j], 8);
    acc += x;
  }
  memcpy(dst, &acc, 8);
  return 0;
}

static int sum_strided(char *dst, intptr_t ds, const char *const *src,
                       const intptr_t *ss, size_t count, ck_prefix *self) {
  leaf_calls++;
  leaf_elements += (long)count;
  size_t n = ((const size_t *)(const void *)(self + 1))[0];
  for (size_t i = 0; i < count; i++) {
    double acc = 0;
    for (size_t j = 0; j < n; j++) {
      double x;
      memcpy(&x, src[j] + (intptr_t)i * ss[j], 8);
      acc += x;
    }
    memcpy(dst + (intptr_t)i * ds, &acc, 8);
  }
  return 0;
}

static ck_status sum_factory(void *data, ck_kernel_builder *ckb, size_t offset,
                             ck_type dst_type, const char *dst_arrmeta, size_t nsrc,
                             const ck_type *src_types, const char *const *src_arrmeta,
                             ck_kernel_request req, size_t *out_end) {
  (void)data;
  (void)dst_arrmeta;
  (void)src_arrmeta;
  if (ck_type_id_of(dst_type) != CK_TYPE_FLOAT64) {
    return ck_set_error(CK_ERR_TYPE, "sum_factory: float64 only");
  }
  for (size_t j = 0; j < nsrc; j++) {
    if (ck_type_id_of(src_types[j]) != CK_TYPE_FLOAT64) {
      return ck_set_error(CK_ERR_TYPE, "sum_factory: float64 only");
    }
  }
  ck_status st = ck_kernel_builder_ensure_capacity_leaf(ckb, offset + 24);
  if (st != CK_OK) {
    return st;
  }
  ck_prefix *k = ck_kernel_builder_get(ckb, offset);
  ((size_t *)(void *)(k + 1))[0] = nsrc;
  st = ck_prefix_set_function(k, req, sum_single, sum_strided);
  if (st == CK_OK && out_end) {
    *out_end = offset + 24;
  }
  return st;
}

static ck_array_preamble *f64(size_t nd, const intptr_t *shape, double base) {
  static const char *names[] = {"float64", "strided * float64",
                                "strided * strided * float64",
                                "strided * strided * strided * float64",
                                "strided * strided * strided * strided * float64"};
  ck_array_preamble *a = arr(names[nd], nd, shape);
  if (a) {
    size_t n = 1;
    for (size_t i = 0; i < nd; i++) {
      n *= (size_t)shape[i];
    }
    for (size_t i = 0; i < n; i++) {
      ((double *)(void *)a->data)[i] = base + (double)i;
    }
  }
  return a;
}

static double at(const ck_array_preamble *a, size_t i) {
  return ((const double *)(const void *)a->data)[i];
}

/* ---- tests ---- */

static void test_broadcast_shapes(void) {
  intptr_t out[8];
  size_t nd;
  const intptr_t a[] = {3, 1}, b[] = {4}, c[] = {0, 1}, d[] = {5}, e[] = {2, 1, 7};
  const intptr_t *s1[] = {a, b};
  size_t n1[] = {2, 1};
  REQUIRE_OK(ck_broadcast_shapes(2, s1, n1, out, 8, &nd));
  CHECK(nd == 2 && out[0] == 3 && out[1] == 4);
  const intptr_t *s2[] = {c, d};
  REQUIRE_OK(ck_broadcast_shapes(2, s2, n1, out, 8, &nd));
  CHECK(nd == 2 && out[0] == 0 && out[1] == 5);
  const intptr_t *s3[] = {a, e, b};
  size_t n3[] = {2, 3, 0}; /* the third is a scalar */
  REQUIRE_OK(ck_broadcast_shapes(3, s3, n3, out, 8, &nd));
  CHECK(nd == 3 && out[0] == 2 && out[1] == 3 && out[2] == 7);
  const intptr_t *s4[] = {b, d};
  size_t n4[] = {1, 1};
  CHECK_ERR(ck_broadcast_shapes(2, s4, n4, out, 8, &nd), CK_ERR_VALUE,
            "operands could not be broadcast together with shapes (4,) (5,)");
  const intptr_t v[] = {CK_VAR_DIM_SIZE}, v2[] = {3, CK_VAR_DIM_SIZE};
  const intptr_t *s5[] = {v, v2, d};
  size_t n5[] = {1, 2, 1};
  REQUIRE_OK(ck_broadcast_shapes(3, s5, n5, out, 8, &nd));
  CHECK(nd == 2 && out[0] == 3 && out[1] == CK_VAR_DIM_SIZE);
  CHECK_ERR(ck_broadcast_shapes(2, s1, n1, out, 1, &nd), CK_ERR_INVALID_ARGUMENT,
            "room");
  /* zero against zero and one */
  const intptr_t z[] = {0}, one[] = {1};
  const intptr_t *s6[] = {z, one, z};
  size_t n6[] = {1, 1, 1};
  REQUIRE_OK(ck_broadcast_shapes(3, s6, n6, out, 8, &nd));
  CHECK(nd == 1 && out[0] == 0);
}

static void test_result_type(void) {
  ck_type f = CK_BUILTIN(CK_TYPE_FLOAT64);
  ck_type t1 = P("strided * strided * int32"), t2 = P("3 * int8");
  ck_dim_arrmeta m1[2] = {{4, 12}, {1, 4}}, m2[1] = {{3, 1}};
  const ck_type ts[] = {t1, t2};
  const char *ms[] = {(const char *)m1, (const char *)m2};
  ck_type rt;
  intptr_t shape[4];
  size_t ns;
  REQUIRE_OK(ck_elementwise_result_type(f, 2, ts, ms, &rt, shape, 4, &ns));
  CHECK(strcmp(tstr(rt), "strided * strided * float64") == 0);
  CHECK(ns == 2 && shape[0] == 4 && shape[1] == 3);
  ck_type_decref(rt);
  /* var in a source: var from there on, fixed below it */
  ck_type tv = P("var * 2 * int32");
  ck_var_dim_arrmeta vm = {NULL, 8, 0};
  char vmeta[sizeof vm + sizeof(ck_dim_arrmeta)];
  ck_dim_arrmeta inner = {2, 4};
  memcpy(vmeta, &vm, sizeof vm);
  memcpy(vmeta + sizeof vm, &inner, sizeof inner);
  ck_dim_arrmeta m5[3] = {{5, 0}, {1, 0}, {1, 0}};
  ck_type t5 = P("strided * strided * strided * int32");
  const ck_type ts2[] = {tv, t5};
  const char *ms2[] = {vmeta, (const char *)m5};
  REQUIRE_OK(ck_elementwise_result_type(f, 2, ts2, ms2, &rt, shape, 4, &ns));
  CHECK(strcmp(tstr(rt), "strided * var * 2 * float64") == 0);
  CHECK(ns == 1 && shape[0] == 5);
  ck_type_decref(rt);
  /* no sources: the dtype */
  REQUIRE_OK(ck_elementwise_result_type(f, 0, NULL, NULL, &rt, NULL, 0, &ns));
  CHECK(rt == f && ns == 0);
  CHECK_ERR(ck_elementwise_result_type(t2, 1, ts, ms, &rt, shape, 4, &ns), CK_ERR_TYPE,
            "dim");
  ck_type_decref(t1);
  ck_type_decref(t2);
  ck_type_decref(tv);
  ck_type_decref(t5);
}

static void test_apply_broadcast(void) {
  intptr_t s31[2] = {3, 1}, s4 = 4;
  ck_array_preamble *a = f64(2, s31, 100), *b = f64(1, &s4, 0), *out = NULL;
  ck_array_preamble *srcs[2] = {a, b};
  leaf_calls = leaf_elements = 0;
  REQUIRE_OK(ck_array_apply(sum_factory, NULL, CK_BUILTIN(CK_TYPE_FLOAT64), 2, srcs,
                            NULL, &out));
  CHECK(strcmp(tstr(out->type), "strided * strided * float64") == 0);
  intptr_t shape[2];
  size_t nd;
  CHECK_OK(ck_array_shape(out, shape, 2, &nd));
  CHECK(nd == 2 && shape[0] == 3 && shape[1] == 4);
  for (size_t i = 0; i < 3; i++) {
    for (size_t j = 0; j < 4; j++) {
      CHECK(at(out, i * 4 + j) == 100 + (double)i + (double)j);
    }
  }
  CHECK(leaf_calls == 3 && leaf_elements == 12); /* one strided call per row */
  /* into an explicit destination, with a 0-d third source */
  ck_array_preamble *c = f64(0, NULL, 1000);
  ck_array_preamble *srcs3[3] = {a, b, c};
  ck_array_preamble *same = NULL;
  CHECK_OK(ck_array_apply(sum_factory, NULL, CK_TYPE_UNINITIALIZED, 3, srcs3, out,
                          &same));
  CHECK(same == out && at(out, 11) == 1000 + 100 + 2 + 3);
  ck_array_decref(same);
  /* zero-size: (0,1) with (4,) -> (0,4); no child call */
  intptr_t s01[2] = {0, 1};
  ck_array_preamble *z = f64(2, s01, 0), *zo = NULL;
  ck_array_preamble *zs[2] = {z, b};
  leaf_calls = 0;
  CHECK_OK(ck_array_apply(sum_factory, NULL, CK_BUILTIN(CK_TYPE_FLOAT64), 2, zs, NULL,
                          &zo));
  CHECK_OK(ck_array_shape(zo, shape, 2, &nd));
  CHECK(shape[0] == 0 && shape[1] == 4 && leaf_calls == 0);
  ck_array_decref(zo);
  /* incompatible */
  intptr_t s5 = 5;
  ck_array_preamble *f5 = f64(1, &s5, 0), *bad = NULL;
  ck_array_preamble *bs[2] = {b, f5};
  CHECK_ERR(ck_array_apply(sum_factory, NULL, CK_BUILTIN(CK_TYPE_FLOAT64), 2, bs, NULL,
                           &bad),
            CK_ERR_VALUE, "operands could not be broadcast together with shapes (4,) (5,)");
  CHECK(bad == NULL);
  CHECK_ERR(ck_array_apply(sum_factory, NULL, CK_TYPE_UNINITIALIZED, 2, bs, out, NULL),
            CK_ERR_VALUE, "cannot broadcast shape (5,) to (3, 4)");
  /* the child's own errors pass through */
  intptr_t s3 = 3;
  ck_array_preamble *i3 = arr("strided * int32", 1, &s3);
  ck_array_preamble *is[1] = {i3};
  CHECK_ERR(ck_array_apply(sum_factory, NULL, CK_BUILTIN(CK_TYPE_FLOAT64), 1, is, NULL,
                           &bad),
            CK_ERR_TYPE, "float64 only");
  /* read-only destination */
  CHECK_OK(ck_array_set_readonly(out));
  CHECK_ERR(ck_array_apply(sum_factory, NULL, CK_TYPE_UNINITIALIZED, 2, srcs, out, NULL),
            CK_ERR_INVALID_STATE, "read-only");
  ck_array_decref(i3);
  ck_array_decref(f5);
  ck_array_decref(z);
  ck_array_decref(c);
  ck_array_decref(out);
  ck_array_decref(a);
  ck_array_decref(b);
}

static void test_apply_negative_strides(void) {
  intptr_t s = 6;
  ck_array_preamble *a = f64(1, &s, 0), *rev, *out = NULL;
  REQUIRE_OK(ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &rev));
  ck_array_preamble *srcs[2] = {a, rev};
  REQUIRE_OK(ck_array_apply(sum_factory, NULL, CK_BUILTIN(CK_TYPE_FLOAT64), 2, srcs,
                            NULL, &out));
  for (size_t i = 0; i < 6; i++) {
    CHECK(at(out, i) == 5);
  }
  /* write through a reversed view of the result */
  ck_array_preamble *orev;
  REQUIRE_OK(ck_array_slice(out, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &orev));
  ck_array_preamble *one[1] = {a};
  CHECK_OK(ck_array_apply(sum_factory, NULL, CK_TYPE_UNINITIALIZED, 1, one, orev, NULL));
  CHECK(at(out, 0) == 5 && at(out, 5) == 0);
  ck_array_decref(orev);
  ck_array_decref(out);
  ck_array_decref(rev);
  ck_array_decref(a);
}

static void test_apply_var(void) {
  /* `strided * var * float64` rows {1,2,3}, {}, {10} plus a (3,1) column */
  intptr_t n = 3;
  ck_array_preamble *v = arr("strided * var * float64", 1, &n);
  REQUIRE(v != NULL);
  ck_type vt = ck_type_element(v->type);
  const char *vm = ck_array_arrmeta(v) + sizeof(ck_dim_arrmeta);
  size_t sizes[3] = {3, 0, 1};
  for (size_t i = 0; i < 3; i++) {
    char *el = v->data + i * sizeof(ck_var_dim_data);
    REQUIRE_OK(ck_var_dim_alloc(vt, el, vm, sizes[i]));
    for (size_t k = 0; k < sizes[i]; k++) {
      ((double *)(void *)((ck_var_dim_data *)(void *)el)->begin)[k] =
          i == 2 ? 10 : (double)k + 1;
    }
  }
  intptr_t s31[2] = {3, 1};
  ck_array_preamble *col = f64(2, s31, 100), *out = NULL;
  ck_array_preamble *srcs[2] = {v, col};
  leaf_calls = 0;
  REQUIRE_OK(ck_array_apply(sum_factory, NULL, CK_BUILTIN(CK_TYPE_FLOAT64), 2, srcs,
                            NULL, &out));
  CHECK(strcmp(tstr(out->type), "strided * var * float64") == 0);
  const ck_var_dim_data *r = (const ck_var_dim_data *)(const void *)out->data;
  CHECK(r[0].size == 3 && r[1].size == 0 && r[2].size == 1);
  CHECK(((const double *)(const void *)r[0].begin)[2] == 103);
  CHECK(((const double *)(const void *)r[2].begin)[0] == 112);
  CHECK(leaf_calls == 2); /* the empty row makes no call */
  char dump[4096];
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  const ck_type ts[2] = {v->type, col->type};
  const char *ms[2] = {ck_array_arrmeta(v), ck_array_arrmeta(col)};
  REQUIRE_OK(ck_make_elementwise_kernel(&kb, 0, out->type, ck_array_arrmeta(out), 2,
                                        ts, ms, CK_KERNEL_REQUEST_SINGLE, sum_factory,
                                        NULL, NULL));
  CHECK_OK(ck_kernel_builder_dump(&kb, dump, sizeof dump, NULL));
  CHECK(strstr(dump, "strided_dim") != NULL && strstr(dump, "var_dim") != NULL);
  ck_kernel_builder_destroy(&kb);
  /* the empty var row against a row of size 3 fails when run */
  intptr_t s13[2] = {3, 3};
  ck_array_preamble *m33 = f64(2, s13, 0), *bad = NULL;
  ck_array_preamble *bs[2] = {v, m33};
  CHECK_ERR(ck_array_apply(sum_factory, NULL, CK_BUILTIN(CK_TYPE_FLOAT64), 2, bs, NULL,
                           &bad),
            CK_ERR_VALUE, "cannot broadcast a var dim of size 3 to size 0");
  CHECK(bad == NULL);
  ck_array_decref(m33);
  ck_array_decref(out);
  ck_array_decref(col);
  ck_array_decref(v);
}

/* Fail every allocation while building a deep N-ary lifted kernel (heap
 * buffer) holding var-dim arena references: no leak, refcounts restored. */
static void test_fault_injection_deep(void) {
  ck_type dt = P("strided * strided * strided * var * float64");
  ck_type st = P("strided * strided * strided * 4 * float64");
  ck_dim_arrmeta sm[4] = {{2, 96}, {3, 32}, {1, 32}, {4, 8}};
  intptr_t shape[3] = {2, 3, 5};
  ck_array_preamble *d;
  REQUIRE_OK(ck_array_empty(dt, shape, 3, CK_ARRAY_DEFAULT_FLAGS, &d));
  ck_memblock *arena =
      ((const ck_var_dim_arrmeta *)(const void *)(ck_array_arrmeta(d) +
                                                  3 * sizeof(ck_dim_arrmeta)))
          ->blockref;
  uint32_t rc = ck_memblock_refcount(arena);
  const ck_type ts[3] = {st, st, st};
  const char *ms[3] = {(const char *)sm, (const char *)sm, (const char *)sm};
  int64_t live = ck_memblock_live_count();
  ck_test_faults f = CK_TEST_FAULTS(50);
  while (ck_test_faults_arm(&f)) {
    ck_kernel_builder kb;
    ck_kernel_builder_init(&kb);
    ck_status s = ck_make_elementwise_kernel(&kb, 0, dt, ck_array_arrmeta(d), 3, ts, ms,
                                             CK_KERNEL_REQUEST_SINGLE, sum_factory, NULL,
                                             NULL);
    if (!ck_test_faults_fired(&f)) {
      CHECK(s == CK_OK);
      CHECK(!ck_kernel_builder_is_inline(&kb));
      CHECK(ck_memblock_refcount(arena) == rc + 1); /* the var kernel's ref */
      ck_kernel_builder_destroy(&kb);
      break;
    }
    CHECK(s == CK_ERR_NO_MEMORY);
    ck_kernel_builder_destroy(&kb);
    CHECK(ck_memblock_refcount(arena) == rc);
    CHECK(ck_memblock_live_count() == live);
  }
  CHECK(f.runs >= 1);
  CHECK(ck_memblock_refcount(arena) == rc);
  /* and running it with failures in the arena allocations */
  double src[2 * 3 * 4];
  for (int i = 0; i < 24; i++) {
    src[i] = i;
  }
  /* each run gets a fresh destination, made before the failure is armed */
  ck_array_preamble *d2 = NULL;
  REQUIRE_OK(ck_array_empty(dt, shape, 3, CK_ARRAY_DEFAULT_FLAGS, &d2));
  ck_test_faults f2 = CK_TEST_FAULTS(50);
  while (ck_test_faults_arm(&f2)) {
    ck_kernel_builder kb;
    ck_kernel_builder_init(&kb);
    ck_status s = ck_make_elementwise_kernel(&kb, 0, dt, ck_array_arrmeta(d2), 3, ts, ms,
                                             CK_KERNEL_REQUEST_SINGLE, sum_factory, NULL,
                                             NULL);
    if (s == CK_OK) {
      const char *sp[3] = {(const char *)src, (const char *)src, (const char *)src};
      ck_prefix *root = ck_kernel_builder_get(&kb, 0);
      s = (ck_status)ck_prefix_single(root)(d2->data, sp, root);
    }
    bool fired = ck_test_faults_fired(&f2);
    ck_kernel_builder_destroy(&kb);
    if (!fired) {
      CHECK(s == CK_OK);
      const ck_var_dim_data *last =
          (const ck_var_dim_data *)(const void *)(d2->data + (2 * 3 * 5 - 1) * 16);
      CHECK(last->size == 4 && ((const double *)(const void *)last->begin)[3] == 69);
      break;
    }
    CHECK(s == CK_ERR_NO_MEMORY);
    ck_array_decref(d2);
    d2 = NULL;
    CHECK(ck_memblock_live_count() == live);
    REQUIRE_OK(ck_array_empty(dt, shape, 3, CK_ARRAY_DEFAULT_FLAGS, &d2));
  }
  ck_array_decref(d2);
  CHECK(f2.runs >= 2);
  ck_array_decref(d);
  ck_type_decref(dt);
  ck_type_decref(st);
}

static void test_args(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type f = CK_BUILTIN(CK_TYPE_FLOAT64);
  ck_type ts[CK_LIFT_MAX_NSRC + 1];
  const char *ms[CK_LIFT_MAX_NSRC + 1];
  for (int i = 0; i <= CK_LIFT_MAX_NSRC; i++) {
    ts[i] = f;
    ms[i] = NULL;
  }
  CHECK_ERR(ck_make_elementwise_kernel(&kb, 0, f, NULL, CK_LIFT_MAX_NSRC + 1, ts, ms,
                                       CK_KERNEL_REQUEST_SINGLE, sum_factory, NULL, NULL),
            CK_ERR_INVALID_ARGUMENT, "sources");
  CHECK_ERR(ck_make_elementwise_kernel(&kb, 0, f, NULL, 1, ts, ms,
                                       CK_KERNEL_REQUEST_SINGLE, NULL, NULL, NULL),
            CK_ERR_INVALID_ARGUMENT, "child");
  /* scalars only: the child itself at the root */
  size_t end = 0;
  CHECK_OK(ck_make_elementwise_kernel(&kb, 0, f, NULL, 2, ts, ms,
                                      CK_KERNEL_REQUEST_SINGLE, sum_factory, NULL, &end));
  CHECK(end == 24 && ck_kernel_builder_is_inline(&kb));
  double x = 1.5, y = 2.25, r = 0;
  const char *src[2] = {(const char *)&x, (const char *)&y};
  ck_prefix *root = ck_kernel_builder_get(&kb, 0);
  CHECK(ck_prefix_single(root)((char *)&r, src, root) == 0 && r == 3.75);
  ck_kernel_builder_destroy(&kb);
}

/* How many strided_dim kernels a tree has (from its dump). */
static int count_sdims(const ck_kernel_builder *kb) {
  static char dump[8192];
  size_t n = 0;
  if (ck_kernel_builder_dump(kb, dump, sizeof dump, &n) != CK_OK) {
    return -1;
  }
  int count = 0;
  for (const char *p = dump; (p = strstr(p, "strided_dim")) != NULL; p++) {
    count++;
  }
  return count;
}

static int build_add(ck_array_preamble *dst, ck_array_preamble *a, ck_array_preamble *b,
                     ck_kernel_builder *kb) {
  const ck_op *add = NULL;
  if (ck_op_find("add", &add) != CK_OK) {
    return -1;
  }
  ck_type types[2] = {a->type, b->type};
  const char *meta[2] = {ck_array_arrmeta(a), ck_array_arrmeta(b)};
  ck_kernel_builder_init(kb);
  if (ck_make_elementwise_kernel(kb, 0, dst->type, ck_array_arrmeta(dst), 2, types, meta,
                                 CK_KERNEL_REQUEST_SINGLE, ck_op_child_factory,
                                 (void *)add, NULL) != CK_OK) {
    fprintf(stderr, "build: %s\n", ck_last_error());
    return -1;
  }
  return count_sdims(kb);
}

/* Contiguous dims coalesce into one strided_dim kernel (one leaf call over
 * every element); views that are not contiguous, and broadcasting along an
 * inner dim only, keep their dims; results are right either way. */
static void test_contiguous_dims_coalesce(void) {
  intptr_t s3[3] = {4, 5, 6};
  ck_array_preamble *x = arr("strided * strided * strided * float64", 3, s3);
  ck_array_preamble *y = arr("strided * strided * strided * float64", 3, s3);
  ck_array_preamble *d = arr("strided * strided * strided * float64", 3, s3);
  REQUIRE(x != NULL && y != NULL && d != NULL);
  for (int i = 0; i < 120; i++) {
    ((double *)(void *)x->data)[i] = i;
    ((double *)(void *)y->data)[i] = 1000.0 * i;
  }
  ck_kernel_builder kb;
  CHECK(build_add(d, x, y, &kb) == 1);
  ck_prefix *root = ck_kernel_builder_get(&kb, 0);
  const char *src[2] = {x->data, y->data};
  CHECK(ck_prefix_single(root)(d->data, src, root) == 0);
  bool ok = true;
  for (int i = 0; i < 120; i++) {
    ok = ok && ((const double *)(const void *)d->data)[i] == 1001.0 * i;
  }
  CHECK(ok);
  ck_kernel_builder_destroy(&kb);

  /* a row broadcast over the outer dims: (6,) + (4, 5, 6) keeps the inner
   * dim apart (stride 0 outside, 8 inside) but merges the two outer ones */
  ck_array_preamble *row = NULL;
  ck_array_preamble *tmp = NULL;
  REQUIRE_OK(ck_array_index(y, 0, 0, &tmp));
  REQUIRE_OK(ck_array_index(tmp, 0, 0, &row));
  ck_array_decref(tmp);
  CHECK(build_add(d, x, row, &kb) == 2);
  root = ck_kernel_builder_get(&kb, 0);
  const char *src2[2] = {x->data, row->data};
  CHECK(ck_prefix_single(root)(d->data, src2, root) == 0);
  ok = true;
  for (int i = 0; i < 120; i++) {
    ok = ok && ((const double *)(const void *)d->data)[i] == i + 1000.0 * (i % 6);
  }
  CHECK(ok);
  ck_kernel_builder_destroy(&kb);
  ck_array_decref(row);

  /* every other element of the last dim is still one run (stride 16);
   * a slice of the middle dim breaks the outer merge only */
  ck_array_preamble *v = NULL;
  REQUIRE_OK(ck_array_slice(x, 2, 0, CK_SLICE_NONE, 2, &v));
  intptr_t s3b[3] = {4, 5, 3};
  ck_array_preamble *d2 = arr("strided * strided * strided * float64", 3, s3b);
  REQUIRE(d2 != NULL);
  CHECK(build_add(d2, v, v, &kb) == 1);
  ck_kernel_builder_destroy(&kb);
  ck_array_decref(v);
  ck_array_decref(d2);
  REQUIRE_OK(ck_array_slice(x, 1, 0, 4, 1, &v));
  intptr_t s3c[3] = {4, 4, 6};
  d2 = arr("strided * strided * strided * float64", 3, s3c);
  REQUIRE(d2 != NULL);
  CHECK(build_add(d2, v, v, &kb) == 2);
  root = ck_kernel_builder_get(&kb, 0);
  const char *src3[2] = {v->data, v->data};
  CHECK(ck_prefix_single(root)(d2->data, src3, root) == 0);
  ok = true;
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      for (int k = 0; k < 6; k++) {
        ok = ok && ((const double *)(const void *)d2->data)[(i * 4 + j) * 6 + k] ==
                       2.0 * ((i * 5 + j) * 6 + k);
      }
    }
  }
  CHECK(ok);
  ck_kernel_builder_destroy(&kb);
  ck_array_decref(v);
  ck_array_decref(d2);
  ck_array_decref(x);
  ck_array_decref(y);
  ck_array_decref(d);
}

/* The decoded fields of dimension kernels (ck_kernel_fields) are the sizes
 * and strides of the arrays they were built for, child offsets point at the
 * next node, and the dump prints them. */
static void test_decoded_fields(void) {
  intptr_t s2[2] = {4, 6};
  ck_array_preamble *x = arr("strided * strided * float64", 2, s2);
  REQUIRE(x != NULL);
  ck_array_preamble *v = NULL; /* x[:, :3]: (4, 3), strides (48, 8): no coalescing */
  REQUIRE_OK(ck_array_slice(x, 1, 0, 3, 1, &v));
  intptr_t s2b[2] = {4, 3};
  ck_array_preamble *d = arr("strided * strided * float32", 2, s2b);
  REQUIRE(d != NULL);
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  REQUIRE_OK(ck_make_assignment_kernel(&kb, 0, d->type, ck_array_arrmeta(d), v->type,
                                       ck_array_arrmeta(v), CK_KERNEL_REQUEST_SINGLE,
                                       CK_ERRMODE_NOCHECK, NULL));
  ck_kernel_node nodes[4];
  size_t n = 0;
  REQUIRE_OK(ck_kernel_builder_nodes(&kb, nodes, 4, &n));
  REQUIRE(n == 3);
  intptr_t want[2][3] = {{4, 12, 48}, {3, 4, 8}}; /* size, dst_stride, src_stride */
  for (size_t i = 0; i < 2; i++) {
    ck_kernel_field f[8];
    size_t nf = 0;
    REQUIRE_OK(ck_kernel_fields(ck_kernel_builder_get(&kb, nodes[i].offset), f, 8, &nf));
    REQUIRE(nf == 5);
    CHECK(strcmp(f[0].name, "size") == 0 && f[0].value == want[i][0] && f[0].offset == 16);
    CHECK(strcmp(f[1].name, "dst_stride") == 0 && f[1].value == want[i][1]);
    CHECK(strcmp(f[2].name, "nsrc") == 0 && f[2].value == 1);
    CHECK(f[3].kind == CK_KERNEL_FIELD_CHILD &&
          nodes[i].offset + (size_t)f[3].value == nodes[i + 1].offset);
    CHECK(strcmp(f[4].name, "src_stride") == 0 && f[4].index == 0 &&
          f[4].value == want[i][2] && f[4].offset == 48);
  }
  char buf[2048];
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, NULL));
  CHECK(strstr(buf, "fields size=4 dst_stride=12 nsrc=1 child_offset=+56 src_stride[0]=48") !=
        NULL);
  CHECK(strstr(buf, "fields dst_type=float32 src_type=float64 errmode=nocheck") != NULL);
  printf("%s", buf);
  ck_kernel_builder_destroy(&kb);

  /* a var dim: the destination's var type and arena */
  intptr_t three = 3;
  ck_array_preamble *vs = arr("strided * var * int32", 1, &three);
  ck_array_preamble *vd = arr("strided * var * int64", 1, &three);
  REQUIRE(vs != NULL && vd != NULL);
  ck_kernel_builder_init(&kb);
  REQUIRE_OK(ck_make_assignment_kernel(&kb, 0, vd->type, ck_array_arrmeta(vd), vs->type,
                                       ck_array_arrmeta(vs), CK_KERNEL_REQUEST_SINGLE,
                                       CK_ERRMODE_DEFAULT, NULL));
  REQUIRE_OK(ck_kernel_builder_nodes(&kb, nodes, 4, &n));
  REQUIRE(n == 3 && strcmp(nodes[1].info->name, "var_dim") == 0);
  ck_kernel_field f[16];
  size_t nf = 0;
  REQUIRE_OK(ck_kernel_fields(ck_kernel_builder_get(&kb, nodes[1].offset), f, 16, &nf));
  const ck_var_dim_arrmeta *vam =
      (const ck_var_dim_arrmeta *)(const void *)(ck_array_arrmeta(vd) + sizeof(ck_dim_arrmeta));
  bool saw_type = false, saw_arena = false, saw_src = false;
  for (size_t i = 0; i < nf && i < 16; i++) {
    if (f[i].kind == CK_KERNEL_FIELD_TYPE) {
      char t[64];
      CHECK_OK(ck_type_print((ck_type)f[i].pointer, t, sizeof t, NULL));
      saw_type = strcmp(t, "var * int64") == 0;
    }
    saw_arena = saw_arena || (f[i].kind == CK_KERNEL_FIELD_MEMBLOCK &&
                              f[i].pointer == vam->blockref);
    saw_src = saw_src || (strcmp(f[i].name, "src_kind") == 0 && f[i].index == 0 &&
                          strcmp(f[i].text, "var") == 0);
  }
  CHECK(saw_type && saw_arena && saw_src);
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, NULL));
  CHECK(strstr(buf, "dst_kind=var") != NULL &&
        strstr(buf, "dst_var_type='var * int64'") != NULL);
  printf("%s", buf);
  ck_kernel_builder_destroy(&kb);
  ck_array_decref(vs);
  ck_array_decref(vd);
  ck_array_decref(d);
  ck_array_decref(v);
  ck_array_decref(x);
}

CK_TEST_MAIN(CK_TEST(test_broadcast_shapes), CK_TEST(test_result_type),
             CK_TEST(test_apply_broadcast), CK_TEST(test_apply_negative_strides),
             CK_TEST(test_apply_var), CK_TEST(test_fault_injection_deep),
             CK_TEST(test_args), CK_TEST(test_contiguous_dims_coalesce),
             CK_TEST(test_decoded_fields))
