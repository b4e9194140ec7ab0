/* Kernels with core dims (core_dims.h) around jitted leaves (jit.h): matching
 * operands to signature patterns and binding dimension variables (with
 * their messages), result types, the lifted kernels over outer fixed,
 * strided and var dims with broadcasting, var core dims read both ways,
 * fixed results written in place, var results allocated in the
 * destination's arena, the parallel outer loop, the kernel's decoded
 * fields, and allocation failure at every step.  The "jitted" entry points
 * are written here in C against the documented kernel-data layout
 * (ck_jit_core_kernel), as generated code reads it. */
#include "ck_test.h"

/* ---- entry points reading the ck_jit_core_kernel layout ----------------- */

/* The elements of one core dim at `p`: the first element and the count. */
static const char *core_row(const ck_jit_core_dim *d, const char *p, intptr_t *n) {
  if (d->kind == CK_JIT_DIM_VAR) {
    ck_var_dim_data v;
    memcpy(&v, p, sizeof v);
    *n = (intptr_t)v.size;
    return v.begin != NULL ? v.begin + d->offset : p;
  }
  *n = d->size;
  return p;
}

static double ld(const char *p) {
  double x;
  memcpy(&x, p, 8);
  return x;
}

static void st(char *p, double x) { memcpy(p, &x, 8); }

typedef int (*single_fn)(char *dst, const char *const *src, ck_prefix *self);

/* strided = single once per element */
#define STRIDED_OF(name)                                                       \
  static int name##_strided(char *dst, intptr_t ds, const char *const *src,   \
                            const intptr_t *ss, size_t n, ck_prefix *self) {   \
    const char *s[CK_LIFT_MAX_NSRC];                                           \
    for (size_t i = 0; i < n; i++) {                                           \
      for (size_t j = 0; j < 2; j++) {                                         \
        s[j] = src[j] + (intptr_t)i * ss[j];                                   \
      }                                                                        \
      int r = name##_single(dst + (intptr_t)i * ds, s, self);                  \
      if (r != 0) {                                                            \
        return r;                                                              \
      }                                                                        \
    }                                                                          \
    return 0;                                                                  \
  }

/* float64(N * float64, N * float64): dims[0], dims[1] are the arguments'. */
static int dot_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck_jit_core_kernel *k = (const ck_jit_core_kernel *)(const void *)self;
  intptr_t na, nb;
  const char *a = core_row(&k->dims[0], src[0], &na);
  const char *b = core_row(&k->dims[1], src[1], &nb);
  double s = 0;
  for (intptr_t i = 0; i < na; i++) {
    s += ld(a + i * k->dims[0].stride) * ld(b + i * k->dims[1].stride);
  }
  st(dst, s);
  return 0;
}
STRIDED_OF(dot)

/* float64(var * float64) */
static int rowsum_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck_jit_core_kernel *k = (const ck_jit_core_kernel *)(const void *)self;
  intptr_t n;
  const char *a = core_row(&k->dims[0], src[0], &n);
  double s = 0;
  for (intptr_t i = 0; i < n; i++) {
    s += ld(a + i * k->dims[0].stride);
  }
  st(dst, s);
  return 0;
}
STRIDED_OF(rowsum)

/* N * float64(N * float64): dims[0] the result's, dims[1] the argument's. */
static int cumsum_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck_jit_core_kernel *k = (const ck_jit_core_kernel *)(const void *)self;
  double s = 0;
  for (intptr_t i = 0; i < k->dims[1].size; i++) {
    s += ld(src[0] + i * k->dims[1].stride);
    st(dst + i * k->dims[0].stride, s);
  }
  return 0;
}
STRIDED_OF(cumsum)

/* var * float64(var * float64): the positive elements, allocated from the
 * kernel's destination arena (one allocation, trimmed with resize). */
static int positive_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck_jit_core_kernel *k = (const ck_jit_core_kernel *)(const void *)self;
  intptr_t n;
  const char *a = core_row(&k->dims[1], src[0], &n);
  char *b = NULL, *e = NULL;
  ck_status s = ck_pod_allocate(k->base.dst_arena, (size_t)n * 8, 8, &b, &e);
  if (s != CK_OK) {
    return s;
  }
  size_t m = 0;
  for (intptr_t i = 0; i < n; i++) {
    double x = ld(a + i * k->dims[1].stride);
    if (x > 0) {
      st(b + m * 8, x);
      m++;
    }
  }
  if ((s = ck_pod_resize(k->base.dst_arena, m * 8, &b, &e)) != CK_OK) {
    return s;
  }
  ck_var_dim_data v = {m ? b - k->dims[0].offset : NULL, m};
  memcpy(dst, &v, sizeof v);
  return 0;
}
STRIDED_OF(positive)

/* float64(N * ?float64): the sum of a row's valid values, read through the
 * option record that follows the core dims (jit.h: ck_jit_core_option). */
static int optsum_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck_jit_core_kernel *k = (const ck_jit_core_kernel *)(const void *)self;
  const ck_jit_core_option *o = (const ck_jit_core_option *)(const void *)(k->dims + k->ndims);
  intptr_t n;
  const char *a = core_row(&k->dims[0], src[0], &n);
  double s = 0;
  for (intptr_t i = 0; i < n; i++) {
    const char *p = a + i * k->dims[0].stride;
    intptr_t bit = o->bit_offset + (p - o->origin) / o->step;
    if (o->bits == NULL || ((o->bits[bit >> 3] >> (bit & 7)) & 1)) {
      s += ld(p);
    }
  }
  st(dst, s);
  return 0;
}
STRIDED_OF(optsum)

/* float64(?var * float64): -1 for a null row, else the sum of its values;
 * the rows' own record comes first after the core dims (jit.h). */
static int nullrows_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck_jit_core_kernel *k = (const ck_jit_core_kernel *)(const void *)self;
  const ck_jit_core_option *o = (const ck_jit_core_option *)(const void *)(k->dims + k->ndims);
  if (o->bits != NULL) {
    intptr_t bit = o->bit_offset + (src[0] - o->origin) / o->step;
    if (!((o->bits[bit >> 3] >> (bit & 7)) & 1)) {
      st(dst, -1.0);
      return 0;
    }
  }
  intptr_t n;
  const char *a = core_row(&k->dims[0], src[0], &n);
  double s = 0;
  for (intptr_t i = 0; i < n; i++) {
    s += ld(a + i * k->dims[0].stride);
  }
  st(dst, s);
  return 0;
}
STRIDED_OF(nullrows)

/* ?var * float64(?var * float64): a null row for a null row or one with no
 * positive value, else the positive values -- a null row marked
 * {CK_JIT_NULL_ROW, 0} (jit.h; the result has no option record of its
 * rows, the argument's is the first). */
static int nullpos_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck_jit_core_kernel *k = (const ck_jit_core_kernel *)(const void *)self;
  const ck_jit_core_option *o = (const ck_jit_core_option *)(const void *)(k->dims + k->ndims);
  bool null = false;
  if (o->bits != NULL) {
    intptr_t bit = o->bit_offset + (src[0] - o->origin) / o->step;
    null = !((o->bits[bit >> 3] >> (bit & 7)) & 1);
  }
  intptr_t n = 0;
  const char *a = null ? NULL : core_row(&k->dims[1], src[0], &n);
  size_t m = 0;
  for (intptr_t i = 0; i < n; i++) {
    m += ld(a + i * k->dims[1].stride) > 0;
  }
  if (m == 0) {
    ck_var_dim_data v = {CK_JIT_NULL_ROW, 0};
    memcpy(dst, &v, sizeof v);
    return 0;
  }
  char *b = NULL, *e = NULL;
  ck_status s = ck_pod_allocate(k->base.dst_arena, m * 8, 8, &b, &e);
  if (s != CK_OK) {
    return s;
  }
  m = 0;
  for (intptr_t i = 0; i < n; i++) {
    double x = ld(a + i * k->dims[1].stride);
    if (x > 0) {
      st(b + m++ * 8, x);
    }
  }
  ck_var_dim_data v = {b - k->dims[0].offset, m};
  memcpy(dst, &v, sizeof v);
  return 0;
}
STRIDED_OF(nullpos)

/* A descriptor over the entry points; the patterns are owned by the test. */
static ck_memblock *code_block(void) {
  ck_memblock *mb = NULL;
  if (ck_pod_memblock_new(0, &mb) != CK_OK) {
    fprintf(stderr, "code block: %s\n", ck_last_error());
  }
  return mb; /* stands in for the compiled code's owner */
}

static void make_desc(ck_jit_kernel_desc *d, const char *name, ck_expr_single_t single,
                      ck_expr_strided_t strided, ck_memblock *code, const char *dst,
                      size_t nsrc, const char *const *srcs) {
  memset(d, 0, sizeof *d);
  d->single = single;
  d->strided = strided;
  d->code = code;
  snprintf(d->name, sizeof d->name, "%s", name);
  d->dst_pattern = P(dst);
  d->dst_id = ck_type_id_of(ck_type_dtype(d->dst_pattern));
  d->nsrc = (uint32_t)nsrc;
  for (size_t j = 0; j < nsrc; j++) {
    d->src_patterns[j] = P(srcs[j]);
    d->src_ids[j] = ck_type_id_of(ck_type_dtype(d->src_patterns[j]));
  }
}

static void free_desc(ck_jit_kernel_desc *d) {
  ck_type_decref(d->dst_pattern);
  for (size_t j = 0; j < d->nsrc; j++) {
    ck_type_decref(d->src_patterns[j]);
  }
}

/* A strided float64 array of the given shape holding 0, 1, 2, ... scaled. */
static ck_array_preamble *f64(size_t nd, const intptr_t *shape, double scale, double shift) {
  char ty[128] = "";
  for (size_t i = 0; i < nd; i++) {
    strcat(ty, "strided * ");
  }
  strcat(ty, "float64");
  ck_array_preamble *a = arr(ty, nd, shape);
  size_t n = 1;
  for (size_t i = 0; i < nd; i++) {
    n *= (size_t)shape[i];
  }
  for (size_t i = 0; a != NULL && i < n; i++) {
    st(a->data + i * 8, (double)i * scale + shift);
  }
  return a;
}

/* `strided * var * float64` with rows of the given lengths, values k, k+1.. */
static ck_array_preamble *ragged(size_t nrows, const intptr_t *lens, double start) {
  intptr_t r = (intptr_t)nrows;
  ck_array_preamble *a = arr("strided * var * float64", 1, &r);
  if (a == NULL) {
    return NULL;
  }
  ck_type vt = ck_type_element(a->type);
  const char *vm = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  double x = start;
  for (size_t i = 0; i < nrows; i++) {
    char *slot = a->data + i * sizeof(ck_var_dim_data);
    if (ck_var_dim_alloc(vt, slot, vm, (size_t)lens[i]) != CK_OK) {
      fprintf(stderr, "var alloc: %s\n", ck_last_error());
      break;
    }
    ck_var_dim_data v;
    memcpy(&v, slot, sizeof v);
    for (intptr_t k = 0; k < lens[i]; k++) {
      st(v.begin + k * 8, x);
      x += 1;
    }
  }
  return a;
}

static const double *D(const ck_array_preamble *a) {
  return (const double *)(const void *)a->data;
}

/* ---- matching and result types ------------------------------------------- */

static void test_match(void) {
  int64_t types = ck_type_live_count();
  ck_type pn = P("N * float64"), pmn = P("M * N * float64"), p3 = P("3 * float64");
  ck_type pv = P("var * float64");
  intptr_t sh[3] = {2, 4, 3}, shc[3] = {2, 5, 4};
  ck_array_preamble *a = f64(2, sh, 1, 0);  /* (2, 4) */
  ck_array_preamble *c = f64(3, shc, 1, 0); /* (2, 5, 4) */
  ck_array_preamble *e = f64(3, sh, 1, 0);  /* (2, 4, 3) */
  ck_dim_bindings b;
  memset(&b, 0, sizeof b);
  size_t outer = 99;
  CHECK_OK(ck_core_match(pn, a->type, ck_array_arrmeta(a), "argument 0", &b, &outer));
  CHECK(outer == 1 && b.count == 1 && ck_dim_bindings_get(&b, "N") == 4);
  CHECK(strcmp(b.origins[0], "argument 0") == 0);
  CHECK_OK(ck_core_match(pmn, c->type, ck_array_arrmeta(c), "argument 1", &b, &outer));
  CHECK(outer == 1 && ck_dim_bindings_get(&b, "M") == 5 && b.count == 2);
  CHECK_ERR(ck_core_match(pn, e->type, ck_array_arrmeta(e), "argument 2", &b, &outer),
            CK_ERR_VALUE,
            "dimension variable N is 4 in argument 0 and 3 in argument 2 (core dim 0 of "
            "'N * float64')");
  CHECK_ERR(ck_core_match(p3, a->type, ck_array_arrmeta(a), "argument 0", &b, NULL),
            CK_ERR_VALUE,
            "argument 0: core dim 0 has size 4, the signature's '3 * float64' wants 3");
  CHECK_OK(ck_core_match(pv, a->type, ck_array_arrmeta(a), "argument 0", &b, &outer));
  CHECK(outer == 1);
  ck_type i64 = CK_BUILTIN(CK_TYPE_INT64);
  CHECK_ERR(ck_core_match(pn, i64, NULL, "argument 3", &b, NULL), CK_ERR_VALUE,
            "argument 3: 'int64' has 0 dims, fewer than the 1 core dims of the "
            "signature's 'N * float64'");
  intptr_t lens[2] = {1, 2};
  ck_array_preamble *r = ragged(2, lens, 1);
  CHECK_ERR(ck_core_match(pn, r->type, ck_array_arrmeta(r), "argument 0", &b, NULL),
            CK_ERR_TYPE,
            "argument 0: core dim 0 is a var dim; dimension variable N of the signature's "
            "'N * float64' needs a fixed or strided dim");
  ck_type pi = P("N * int32");
  CHECK_ERR(ck_core_match(pi, a->type, ck_array_arrmeta(a), "argument 0", &b, NULL),
            CK_ERR_TYPE, "argument 0: the elements are 'float64', the signature's are "
                         "'int32' (convert the operand first)");
  ck_type ps = P("strided * float64");
  CHECK_ERR(ck_core_match(ps, a->type, ck_array_arrmeta(a), "argument 0", &b, NULL),
            CK_ERR_TYPE, "has a strided dim; signatures take fixed (3 *), symbolic");

  /* result types */
  ck_type rt = NULL;
  intptr_t shape[8];
  size_t ns = 0;
  ck_type srcp[2] = {pmn, pn};
  ck_type srct[2] = {c->type, p3}; /* second: unused below */
  const char *srcm[2] = {ck_array_arrmeta(c), NULL};
  ck_type pm = P("M * float64");
  /* M * float64(M * N * float64) on (2, 5, 4): (2, 5) strided */
  CHECK_OK(ck_core_result_type(pm, 1, srcp, srct, srcm, &rt, shape, 8, &ns, &b));
  CHECK(strcmp(tstr(rt), "strided * strided * float64") == 0);
  CHECK(ns == 2 && shape[0] == 2 && shape[1] == 5);
  CHECK(ck_dim_bindings_get(&b, "M") == 5 && ck_dim_bindings_get(&b, "N") == 4);
  ck_type_decref(rt);
  /* var * float64(var * float64) on a ragged array */
  ck_type rp = r->type;
  const char *rm = ck_array_arrmeta(r);
  CHECK_OK(ck_core_result_type(pv, 1, &pv, &rp, &rm, &rt, shape, 8, &ns, NULL));
  CHECK(strcmp(tstr(rt), "strided * var * float64") == 0 && ns == 1 && shape[0] == 2);
  ck_type_decref(rt);
  /* N * float64(N * float64) on `var * 3 * float64`: fixed under var */
  ck_array_preamble *v3 = arr("var * 3 * float64", 0, NULL);
  ck_type vt = v3->type;
  const char *vm = ck_array_arrmeta(v3);
  CHECK_OK(ck_core_result_type(pn, 1, &pn, &vt, &vm, &rt, shape, 8, &ns, NULL));
  CHECK(strcmp(tstr(rt), "var * 3 * float64") == 0 && ns == 0);
  ck_type_decref(rt);
  /* an unbound result variable */
  ck_type pk = P("K * float64");
  const char *am = ck_array_arrmeta(a);
  ck_type at = a->type;
  CHECK_ERR(ck_core_result_type(pk, 1, &pn, &at, &am, &rt, shape, 8, &ns, NULL),
            CK_ERR_TYPE, "the result's dimension variable K (in 'K * float64') is bound by "
                         "no argument");
  CHECK(rt == NULL);
  ck_type_decref(pk);
  ck_array_decref(v3);
  ck_type_decref(pm);
  ck_type_decref(ps);
  ck_type_decref(pi);
  ck_array_decref(r);
  ck_array_decref(a);
  ck_array_decref(c);
  ck_array_decref(e);
  ck_type_decref(pn);
  ck_type_decref(pmn);
  ck_type_decref(p3);
  ck_type_decref(pv);
  CHECK(ck_type_live_count() == types);
}

/* ---- applying ------------------------------------------------------------- */

static void test_dot(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[2] = {"N * float64", "N * float64"};
  make_desc(&d, "dot", dot_single, dot_strided, code, "float64", 2, srcs);
  intptr_t s34[2] = {3, 4}, s4[1] = {4}, s5[1] = {5};
  ck_array_preamble *x = f64(2, s34, 1, 0), *y = f64(1, s4, 0.5, 1), *z = f64(1, s5, 1, 0);
  ck_array_preamble *srcv[2] = {x, y}, *res = NULL;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 2,
                                 d.src_patterns, srcv, NULL, &res));
  CHECK(strcmp(tstr(res->type), "strided * float64") == 0);
  for (int i = 0; i < 3; i++) {
    double want = 0;
    for (int k = 0; k < 4; k++) {
      want += (double)(i * 4 + k) * (0.5 * k + 1);
    }
    CHECK(D(res)[i] == want);
  }
  ck_array_decref(res);
  /* the same row against itself, reversed: a strided view with a negative stride */
  ck_array_preamble *rev = NULL;
  REQUIRE_OK(ck_array_slice(y, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &rev));
  ck_array_preamble *srcr[2] = {y, rev};
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 2,
                                 d.src_patterns, srcr, NULL, &res));
  CHECK(ck_array_ndim(res) == 0 && D(res)[0] == 1 * 2.5 + 1.5 * 2 + 2 * 1.5 + 2.5 * 1);
  ck_array_decref(res);
  ck_array_decref(rev);
  /* mismatched N */
  ck_array_preamble *bad[2] = {x, z};
  CHECK_ERR(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 2, d.src_patterns,
                                bad, NULL, &res),
            CK_ERR_VALUE, "dimension variable N is 4 in argument 0 and 5 in argument 1");
  CHECK(res == NULL);
  /* outer dims that do not broadcast */
  intptr_t s24[2] = {2, 4};
  ck_array_preamble *w = f64(2, s24, 1, 0);
  ck_array_preamble *nb[2] = {x, w};
  CHECK_ERR(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 2, d.src_patterns,
                                nb, NULL, &res),
            CK_ERR_VALUE, "operands could not be broadcast together with shapes (3,) (2,)");
  /* out= with the right outer shape, and one with a core dim it should not have */
  ck_array_preamble *out = f64(1, s34, 0, 0);
  CHECK_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 2, d.src_patterns,
                               srcv, out, NULL));
  CHECK(D(out)[2] == 8 * 1 + 9 * 1.5 + 10 * 2 + 11 * 2.5);
  ck_array_decref(out);
  /* the plain leaf factory refuses a desc with core dims */
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  CHECK_ERR(ck_jit_make_kernel(&kb, 0, &d, NULL, CK_KERNEL_REQUEST_SINGLE, NULL),
            CK_ERR_INVALID_ARGUMENT, "has core dims: build it with ck_jit_make_core_kernel");
  /* so does the registry */
  CHECK_ERR(ck_jit_register("dims_test_dot", &d), CK_ERR_INVALID_ARGUMENT,
            "has core dims; operations are elementwise");
  ck_kernel_builder_destroy(&kb);
  ck_array_decref(w);
  ck_array_decref(x);
  ck_array_decref(y);
  ck_array_decref(z);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* float64(var * float64): ragged rows (kind VAR), strided rows (kind
 * STRIDED), and an outer var dim. */
static void test_var_rows(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[1] = {"var * float64"};
  make_desc(&d, "rowsum", rowsum_single, rowsum_strided, code, "float64", 1, srcs);
  intptr_t lens[4] = {3, 0, 1, 2};
  ck_array_preamble *r = ragged(4, lens, 1), *res = NULL;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1,
                                 d.src_patterns, &r, NULL, &res));
  CHECK(strcmp(tstr(res->type), "strided * float64") == 0);
  CHECK(D(res)[0] == 6 && D(res)[1] == 0 && D(res)[2] == 4 && D(res)[3] == 11);
  ck_array_decref(res);
  /* a 2-d strided array: every row is a core row of kind STRIDED */
  intptr_t s23[2] = {2, 3};
  ck_array_preamble *m = f64(2, s23, 1, 0);
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1,
                                 d.src_patterns, &m, NULL, &res));
  CHECK(D(res)[0] == 3 && D(res)[1] == 12);
  ck_array_decref(res);
  /* `var * var * float64`: the outer var dim is lifted, the result is var */
  ck_array_preamble *vv = arr("var * var * float64", 0, NULL);
  REQUIRE(vv != NULL);
  ck_type vt = vv->type, it = ck_type_element(vt);
  const char *vm = ck_array_arrmeta(vv);
  REQUIRE_OK(ck_var_dim_alloc(vt, vv->data, vm, 2));
  ck_var_dim_data outer;
  memcpy(&outer, vv->data, sizeof outer);
  const char *im = vm + sizeof(ck_var_dim_arrmeta);
  for (int i = 0; i < 2; i++) {
    char *slot = outer.begin + i * sizeof(ck_var_dim_data);
    REQUIRE_OK(ck_var_dim_alloc(it, slot, im, (size_t)(i + 2)));
    ck_var_dim_data row;
    memcpy(&row, slot, sizeof row);
    for (int k = 0; k < i + 2; k++) {
      st(row.begin + k * 8, 10.0 * i + k);
    }
  }
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1,
                                 d.src_patterns, &vv, NULL, &res));
  CHECK(strcmp(tstr(res->type), "var * float64") == 0);
  ck_var_dim_data got;
  memcpy(&got, res->data, sizeof got);
  CHECK(got.size == 2 && ld(got.begin) == 1 && ld(got.begin + 8) == 10 + 11 + 12);
  ck_array_decref(res);
  ck_array_decref(vv);
  ck_array_decref(m);
  ck_array_decref(r);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* N * float64(N * float64): results written in place, new or out=. */
static void test_fixed_result(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[1] = {"N * float64"};
  make_desc(&d, "cumsum", cumsum_single, cumsum_strided, code, "N * float64", 1, srcs);
  intptr_t s23[2] = {2, 3};
  ck_array_preamble *m = f64(2, s23, 1, 1), *res = NULL;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1,
                                 d.src_patterns, &m, NULL, &res));
  CHECK(strcmp(tstr(res->type), "strided * strided * float64") == 0);
  const double want[6] = {1, 3, 6, 4, 9, 15};
  for (int i = 0; i < 6; i++) {
    CHECK(D(res)[i] == want[i]);
  }
  ck_array_decref(res);
  /* out= whose core dim disagrees with N */
  intptr_t s24[2] = {2, 4};
  ck_array_preamble *bad = f64(2, s24, 0, 0);
  CHECK_ERR(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1, d.src_patterns,
                                &m, bad, NULL),
            CK_ERR_VALUE, "dimension variable N is 3 in argument 0 and 4 in the result");
  ck_array_decref(bad);
  /* out= broadcasting the outer dims of a single row */
  intptr_t s3[1] = {3};
  ck_array_preamble *row = f64(1, s3, 1, 1), *out = f64(2, s23, 0, 0);
  CHECK_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1, d.src_patterns,
                               &row, out, NULL));
  CHECK(D(out)[3] == 1 && D(out)[4] == 3 && D(out)[5] == 6);
  ck_array_decref(out);
  ck_array_decref(row);
  ck_array_decref(m);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* var * float64(var * float64): rows built in the destination's arena. */
static void test_var_result(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[1] = {"var * float64"};
  make_desc(&d, "positive", positive_single, positive_strided, code, "var * float64", 1,
            srcs);
  intptr_t lens[3] = {4, 0, 3};
  ck_array_preamble *r = ragged(3, lens, -2), *res = NULL; /* -2..1 | | 2..4 */
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1,
                                 d.src_patterns, &r, NULL, &res));
  CHECK(strcmp(tstr(res->type), "strided * var * float64") == 0);
  ck_var_dim_data v[3];
  memcpy(v, res->data, sizeof v);
  CHECK(v[0].size == 1 && ld(v[0].begin) == 1);
  CHECK(v[1].size == 0 && v[1].begin == NULL);
  CHECK(v[2].size == 3 && ld(v[2].begin) == 2 && ld(v[2].begin + 16) == 4);
  /* the rows live in the result's own arena, which the arrmeta owns */
  const ck_var_dim_arrmeta *vm =
      (const ck_var_dim_arrmeta *)(const void *)(ck_array_arrmeta(res) + sizeof(ck_dim_arrmeta));
  ck_pod_stats stats;
  REQUIRE_OK(ck_pod_memblock_stats(vm->blockref, &stats));
  CHECK(stats.allocations == 3);
  ck_array_decref(res);
  ck_array_decref(r);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* Many rows: the outer loop runs on the pool and gives the serial answer. */
static void test_parallel(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[2] = {"N * float64", "N * float64"};
  make_desc(&d, "dot", dot_single, dot_strided, code, "float64", 2, srcs);
  intptr_t sh[2] = {ck_test_scaled(200000), 3};
  ck_array_preamble *x = f64(2, sh, 1, 0), *y = f64(2, sh, -1, 7);
  ck_array_preamble *srcv[2] = {x, y}, *res = NULL;
  int threads = ck_get_num_threads();
  ck_set_num_threads(2);
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 2,
                                 d.src_patterns, srcv, NULL, &res));
  ck_set_num_threads(threads);
  CHECK_OK(ck_thread_pool_shutdown()); /* no threads left for valgrind */
  bool ok = true;
  for (intptr_t i = 0; i < sh[0]; i++) {
    double want = 0;
    for (intptr_t k = 0; k < 3; k++) {
      double a = (double)(i * 3 + k);
      want += a * (7 - a);
    }
    ok = ok && D(res)[i] == want;
  }
  CHECK(ok);
  ck_array_decref(res);
  ck_array_decref(x);
  ck_array_decref(y);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* The decoded fields of a built core kernel (dumps, pictures). */
static void test_fields(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[2] = {"N * float64", "var * float64"};
  make_desc(&d, "dot", dot_single, dot_strided, code, "float64", 2, srcs);
  intptr_t s5[1] = {5};
  ck_array_preamble *x = f64(1, s5, 1, 0);
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type ty[2] = {x->type, x->type};
  const char *me[2] = {ck_array_arrmeta(x), ck_array_arrmeta(x)};
  REQUIRE_OK(ck_jit_make_core_kernel(&kb, 0, &d, CK_BUILTIN(CK_TYPE_FLOAT64), NULL, 2, ty,
                                     me, CK_KERNEL_REQUEST_SINGLE, NULL));
  ck_kernel_field f[32];
  size_t n = ck_jit_core_kernel_fields(ck_kernel_builder_get(&kb, 0), NULL, f, 32);
  CHECK(n == 2 + 1 + 2 * 3);
  CHECK(strcmp(f[2].name, "ndims") == 0 && f[2].value == 2);
  CHECK(strcmp(f[3].name, "dim_kind") == 0 && strcmp(f[3].text, "strided") == 0);
  CHECK(strcmp(f[4].name, "dim_size") == 0 && f[4].value == 5);
  CHECK(strcmp(f[5].name, "dim_stride") == 0 && f[5].value == 8 && f[5].offset == 48 + 16);
  /* the leaf alone refuses operands with outer dims left */
  ck_kernel_builder_reset(&kb);
  intptr_t s25[2] = {2, 5};
  ck_array_preamble *m = f64(2, s25, 1, 0);
  ck_type tm[2] = {m->type, x->type};
  const char *mm[2] = {ck_array_arrmeta(m), ck_array_arrmeta(x)};
  CHECK_ERR(ck_jit_make_core_kernel(&kb, 0, &d, CK_BUILTIN(CK_TYPE_FLOAT64), NULL, 2, tm, mm,
                                    CK_KERNEL_REQUEST_SINGLE, NULL),
            CK_ERR_TYPE, "dot: argument 0: 1 dims more than the core");
  ck_kernel_builder_destroy(&kb);
  ck_array_decref(m);
  ck_array_decref(x);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* Fail the k-th allocation of applying the var-result kernel, for every k:
 * a clean error every time, nothing leaked. */
static void test_fault_injection(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[1] = {"var * float64"};
  make_desc(&d, "positive", positive_single, positive_strided, code, "var * float64", 1,
            srcs);
  intptr_t lens[5] = {4, 0, 3, 2, 1};
  ck_array_preamble *r = ragged(5, lens, -2);
  int64_t live = ck_memblock_live_count(), types = ck_type_live_count();
  ck_test_faults f = CK_TEST_FAULTS(1000);
  while (ck_test_faults_arm(&f)) {
    ck_array_preamble *res = NULL;
    ck_status s = ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1,
                                      d.src_patterns, &r, NULL, &res);
    if (!ck_test_faults_fired(&f)) {
      CHECK(s == CK_OK);
      ck_array_decref(res);
      break;
    }
    CHECK(s == CK_ERR_NO_MEMORY && res == NULL);
    CHECK(ck_memblock_live_count() == live && ck_type_live_count() == types);
  }
  CHECK(f.runs >= 3);
  ck_array_decref(r);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* A `?T` pattern: option operands bring their bitmap in the option record,
 * plain `T` operands match with none (every slot valid); a plain pattern
 * refuses option elements. */
static void test_option_rows(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[1] = {"N * ?float64"};
  make_desc(&d, "optsum", optsum_single, optsum_strided, code, "float64", 1, srcs);
  intptr_t s3[1] = {3};
  ck_array_preamble *a = arr("strided * 4 * ?float64", 1, s3);
  REQUIRE(a != NULL);
  const ck_option_arrmeta *om =
      (const ck_option_arrmeta *)(const void *)(ck_array_arrmeta(a) + 2 * sizeof(ck_dim_arrmeta));
  for (int i = 0; i < 12; i++) {
    st(a->data + i * 8, (double)i);
    if (i % 3 == 1) {
      REQUIRE_OK(ck_option_set_valid(om, a->data + i * 8, false));
    }
  }
  ck_array_preamble *srcv[1] = {a}, *res = NULL;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1, d.src_patterns,
                                 srcv, NULL, &res));
  /* rows 0..3, 4..7, 8..11 without 1, 4, 7, 10 */
  CHECK(D(res)[0] == 0 + 2 + 3 && D(res)[1] == 5 + 6 && D(res)[2] == 8 + 9 + 11);
  ck_array_decref(res);
  intptr_t s24[2] = {2, 4};
  ck_array_preamble *x = f64(2, s24, 1, 0);
  srcv[0] = x;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1, d.src_patterns,
                                 srcv, NULL, &res));
  CHECK(D(res)[0] == 0 + 1 + 2 + 3 && D(res)[1] == 4 + 5 + 6 + 7);
  ck_array_decref(res);
  ck_type plain = P("N * float64");
  ck_dim_bindings b;
  memset(&b, 0, sizeof b);
  CHECK_ERR(ck_core_match(plain, a->type, ck_array_arrmeta(a), "argument 0", &b, NULL),
            CK_ERR_TYPE, "the elements are '?float64', the signature's are 'float64'");
  ck_type_decref(plain);
  ck_array_decref(x);
  ck_array_decref(a);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* A null-able row pattern `?var * float64`: data with null rows matches it
 * whole (the rows' bitmap in the first option record), rows without nulls
 * (`var * float64`) match as plain rows (no bitmap); a result of null-able
 * rows is one var dim (`?3 * float64` refused). */
static void test_null_rows(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[1] = {"?var * float64"};
  make_desc(&d, "rowsum", nullrows_single, nullrows_strided, code, "float64", 1, srcs);
  intptr_t r = 4;
  ck_array_preamble *a = arr("strided * ?var * float64", 1, &r);
  REQUIRE(a != NULL);
  ck_type ot = ck_type_element(a->type);
  const char *om = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  const char *vm = om + sizeof(ck_option_arrmeta);
  for (int i = 0; i < 4; i++) {
    char *slot = a->data + i * sizeof(ck_var_dim_data);
    REQUIRE_OK(ck_var_dim_alloc(ck_type_element(ot), slot, vm, (size_t)i));
    ck_var_dim_data v;
    memcpy(&v, slot, sizeof v);
    for (int k = 0; k < i; k++) {
      st(v.begin + k * 8, (double)(k + 1));
    }
    REQUIRE_OK(ck_option_set_valid((const ck_option_arrmeta *)(const void *)om, slot,
                                   i != 2));
  }
  ck_array_preamble *srcv[1] = {a}, *res = NULL;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1, d.src_patterns,
                                 srcv, NULL, &res));
  CHECK(D(res)[0] == 0 && D(res)[1] == 1 && D(res)[2] == -1 && D(res)[3] == 1 + 2 + 3);
  ck_array_decref(res);
  intptr_t lens[3] = {2, 0, 1};
  ck_array_preamble *g = ragged(3, lens, 1.0);
  srcv[0] = g;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1, d.src_patterns,
                                 srcv, NULL, &res));
  CHECK(D(res)[0] == 1 + 2 && D(res)[1] == 0 && D(res)[2] == 3);
  ck_array_decref(res);
  ck_jit_kernel_desc bad;
  make_desc(&bad, "rows_out", nullrows_single, nullrows_strided, code, "?3 * float64", 1,
            srcs);
  ck_kernel_builder ckb;
  ck_kernel_builder_init(&ckb);
  CHECK_ERR(ck_jit_make_core_kernel(&ckb, 0, &bad, bad.dst_pattern, NULL, 1, d.src_patterns,
                                    (const char *const[]){vm}, CK_KERNEL_REQUEST_SINGLE, NULL),
            CK_ERR_NOT_SUPPORTED, "one var dim (?var * R)");
  ck_kernel_builder_destroy(&ckb);
  free_desc(&bad);
  ck_array_decref(g);
  ck_array_decref(a);
  free_desc(&d);
  ck_memblock_decref(code);
}

/* A result of null-able rows, `?var * float64(?var * float64)`: the kernel
 * marks null rows, ck_jit_var_option_finish makes them nulls of the rows'
 * bitmap and empty rows {NULL, 0}; a null row in, a row of no positive
 * value and an empty row in all give null rows, the others their values. */
static void test_null_rows_result(void) {
  ck_memblock *code = code_block();
  ck_jit_kernel_desc d;
  const char *srcs[1] = {"?var * float64"};
  make_desc(&d, "nullpos", nullpos_single, nullpos_strided, code, "?var * float64", 1, srcs);
  intptr_t r = 11;
  ck_array_preamble *a = arr("strided * ?var * float64", 1, &r);
  REQUIRE(a != NULL);
  ck_type ot = ck_type_element(a->type);
  const char *om = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  const char *vm = om + sizeof(ck_option_arrmeta);
  for (int i = 0; i < 11; i++) { /* row i: i values, k - 1 (-(k + 1) when i % 3 == 0) */
    char *slot = a->data + i * sizeof(ck_var_dim_data);
    REQUIRE_OK(ck_var_dim_alloc(ck_type_element(ot), slot, vm, (size_t)i));
    ck_var_dim_data v;
    memcpy(&v, slot, sizeof v);
    for (int k = 0; k < i; k++) {
      st(v.begin + k * 8, i % 3 ? (double)(k - 1) : -(double)(k + 1));
    }
    REQUIRE_OK(ck_option_set_valid((const ck_option_arrmeta *)(const void *)om, slot,
                                   i != 4 && i != 8));
  }
  ck_array_preamble *srcv[1] = {a}, *res = NULL;
  REQUIRE_OK(ck_array_apply_core(ck_jit_child_factory, &d, d.dst_pattern, 1, d.src_patterns,
                                 srcv, NULL, &res));
  CHECK(strcmp(tstr(res->type), "strided * ?var * float64") == 0);
  REQUIRE_OK(ck_jit_var_option_finish(res));
  int64_t nulls = -1;
  CHECK_OK(ck_array_null_count(res, &nulls, NULL));
  /* null: rows 0-3 (< 3 values: none positive), 4 and 8 (null in), 6 and 9
   * (negated); the others hold 1 .. i - 2 */
  CHECK(nulls == 8);
  for (int i = 0; i < 11; i++) {
    bool want = i == 5 || i == 7 || i == 10;
    bool valid = !want;
    CHECK_OK(ck_array_valid_at(res, i, &valid));
    CHECK(valid == want);
    ck_var_dim_data v;
    memcpy(&v, res->data + i * sizeof v, sizeof v);
    if (!want) {
      CHECK(v.begin == NULL && v.size == 0);
      continue;
    }
    REQUIRE(v.size == (size_t)(i - 2));
    for (size_t k = 0; k < v.size; k++) {
      CHECK(ld(v.begin + k * 8) == (double)(k + 1));
    }
  }
  CHECK_OK(ck_jit_var_option_finish(res)); /* no marks left: nothing changes */
  CHECK_OK(ck_array_null_count(res, &nulls, NULL));
  CHECK(nulls == 8);
  ck_array_decref(res);
  ck_array_decref(a);
  free_desc(&d);
  ck_memblock_decref(code);
}

CK_TEST_MAIN(CK_TEST(test_match), CK_TEST(test_option_rows), CK_TEST(test_null_rows),
             CK_TEST(test_null_rows_result), CK_TEST(test_dot), CK_TEST(test_var_rows),
             CK_TEST(test_fixed_result), CK_TEST(test_var_result), CK_TEST(test_parallel),
             CK_TEST(test_fields), CK_TEST(test_fault_injection))
