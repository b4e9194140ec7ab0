/* The operation registry: enumeration, NumPy type promotion (checked
 * against a table generated once with numpy 2.4 and pasted below), dispatch
 * and its error messages, user kernels (plain and factories with user data
 * and a release callback), concurrent registration and lookup, fault
 * injection while building nested promoting kernels, dumps, and strided
 * calls with negative, zero and chunk-crossing strides. */
#include "ops_test_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define B CK_TYPE_BOOL
#define I8 CK_TYPE_INT8
#define I16 CK_TYPE_INT16
#define I32 CK_TYPE_INT32
#define I64 CK_TYPE_INT64
#define U8 CK_TYPE_UINT8
#define U16 CK_TYPE_UINT16
#define U32 CK_TYPE_UINT32
#define U64 CK_TYPE_UINT64
#define F16 CK_TYPE_FLOAT16
#define F32 CK_TYPE_FLOAT32
#define F64 CK_TYPE_FLOAT64
#define C64 CK_TYPE_COMPLEX64
#define C128 CK_TYPE_COMPLEX128

/* Generated with:
 *   python3 -c "import numpy as np; T=['bool','int8','int16','int32','int64',
 *     'uint8','uint16','uint32','uint64','float16','float32','float64',
 *     'complex64','complex128']; [print([np.result_type(a,b).name for b in T])
 *     for a in T]"   (numpy 2.4.6), and np.can_cast(a, b, 'safe'). */
static const ck_type_id numpy_result_type[14][14] = {
    {B, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128},
    {I8, I8, I16, I32, I64, I16, I32, I64, F64, F16, F32, F64, C64, C128},
    {I16, I16, I16, I32, I64, I16, I32, I64, F64, F32, F32, F64, C64, C128},
    {I32, I32, I32, I32, I64, I32, I32, I64, F64, F64, F64, F64, C128, C128},
    {I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, F64, C128, C128},
    {U8, I16, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128},
    {U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F32, F64, C64, C128},
    {U32, I64, I64, I64, I64, U32, U32, U32, U64, F64, F64, F64, C128, C128},
    {U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, F64, C128, C128},
    {F16, F16, F32, F64, F64, F16, F32, F64, F64, F16, F32, F64, C64, C128},
    {F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F32, F64, C64, C128},
    {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C128, C128},
    {C64, C64, C64, C128, C128, C64, C64, C128, C128, C64, C64, C128, C64, C128},
    {C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128},
};
static const unsigned char numpy_can_cast_safe[14][14] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1},
    {0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1},
    {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1},
    {0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
};

/* numpy.result_type(T, 1), (T, 1.0), (T, 1j) per T in the order above
 * (numpy 2.4.6): the NEP 50 rule for weak Python scalars. */
static const ck_type_id numpy_weak_result[14][3] = {
    {I64, F64, C128}, {I8, F64, C128},  {I16, F64, C128}, {I32, F64, C128},
    {I64, F64, C128}, {U8, F64, C128},  {U16, F64, C128}, {U32, F64, C128},
    {U64, F64, C128}, {F16, F16, C64},  {F32, F32, C64},  {F64, F64, C128},
    {C64, C64, C64},  {C128, C128, C128},
};

/* ---- test kernels ------------------------------------------------------------ */

static int dummy_single(char *dst, const char *const *src, ck_prefix *self) {
  (void)dst, (void)src, (void)self;
  return ck_set_error(CK_ERR_USER, "dummy");
}
static int dummy_strided(char *dst, intptr_t ds, const char *const *src,
                         const intptr_t *ss, size_t n, ck_prefix *self) {
  (void)dst, (void)ds, (void)src, (void)ss, (void)n, (void)self;
  return ck_set_error(CK_ERR_USER, "dummy");
}

/* twice: int32 -> int64, 2 * x (a plain user kernel) */
static int twice_single(char *dst, const char *const *src, ck_prefix *self) {
  (void)self;
  int32_t x;
  memcpy(&x, src[0], sizeof x);
  int64_t r = 2 * (int64_t)x;
  memcpy(dst, &r, sizeof r);
  return 0;
}
static int twice_strided(char *dst, intptr_t ds, const char *const *src,
                         const intptr_t *ss, size_t n, ck_prefix *self) {
  for (size_t i = 0; i < n; i++) {
    const char *s = src[0] + (intptr_t)i * ss[0];
    twice_single(dst + (intptr_t)i * ds, &s, self);
  }
  return 0;
}

/* myop: (float64, float64) -> float64, a + b + user_data->add, built by a
 * factory: a leaf with data (the addend), so the kernel does not point at
 * the user data. */
typedef struct my_data {
  double add;
  int released;
} my_data;

typedef struct my_ck {
  ck_prefix base;
  double add;
} my_ck;

static int my_single(char *dst, const char *const *src, ck_prefix *self) {
  const my_ck *e = (const my_ck *)(void *)self;
  double a, b;
  memcpy(&a, src[0], sizeof a);
  memcpy(&b, src[1], sizeof b);
  double r = a + b + e->add;
  memcpy(dst, &r, sizeof r);
  return 0;
}
static int my_strided(char *dst, intptr_t ds, const char *const *src,
                      const intptr_t *ss, size_t n, ck_prefix *self) {
  for (size_t i = 0; i < n; i++) {
    const char *s[2] = {src[0] + (intptr_t)i * ss[0], src[1] + (intptr_t)i * ss[1]};
    my_single(dst + (intptr_t)i * ds, s, self);
  }
  return 0;
}
static const ck_kernel_info my_info = {"my_kernel", my_single, my_strided,
                                       sizeof(my_ck), NULL};

static ck_status my_factory(ck_kernel_builder *ckb, size_t offset,
                            ck_kernel_request req, void *user_data, size_t *out_end) {
  const my_data *d = user_data;
  ck_status st = ck_kernel_builder_ensure_capacity_leaf(ckb, offset + sizeof(my_ck));
  if (st != CK_OK) {
    return st;
  }
  my_ck *e = (my_ck *)(void *)ck_kernel_builder_get(ckb, offset);
  e->add = d->add;
  st = ck_prefix_set_function(&e->base, req, my_single, my_strided);
  *out_end = offset + sizeof(my_ck);
  return st;
}

static void my_release(void *user_data) { ((my_data *)user_data)->released++; }

static double call_f64_2(const char *name, ck_type_id ta, const void *a, ck_type_id tb,
                         const void *b) {
  double r = NAN;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  int st = ot_call2(name, ta, a, tb, b, &r, &ret);
  CHECK(st == 0);
  CHECK(ret == F64);
  return r;
}

/* ---- enumeration ------------------------------------------------------------ */

static const char *const expected_ops[] = {
    "add", "subtract", "multiply", "divide", "floor_divide", "mod", "power",
    "negative", "absolute", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "invert", "left_shift", "right_shift", "minimum", "maximum", "fmin", "fmax",
    "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arctan2", "hypot", "floor", "ceil", "trunc", "rint", "sign", "square",
    "reciprocal", "isnan", "isinf", "isfinite"};

static const char *const unary_ops[] = {
    "negative", "absolute", "logical_not", "bitwise_not", "invert", "sqrt",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
    "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "floor",
    "ceil", "trunc", "rint", "sign", "square", "reciprocal", "isnan", "isinf",
    "isfinite"};

/* Fault injection over the very first registry call: the lazy built-in
 * registration fails cleanly at every allocation and is retried. */
static void test_init_fault_injection(void) {
  ck_test_faults f = CK_TEST_FAULTS(100000);
  while (ck_test_faults_arm(&f)) {
    const ck_op *op = NULL;
    ck_status st = ck_op_find("add", &op);
    if (!ck_test_faults_fired(&f)) {
      CHECK(st == CK_OK && op != NULL);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    CHECK(strstr(ck_last_error(), "out of memory") != NULL);
    /* stride the loop: the built-ins make ~700 allocations */
    f.k += ck_test_scaled(10) == 10 ? 0 : 9;
  }
  CHECK(f.runs > 10);
  /* everything is there exactly once after the retries */
  size_t n = ck_op_count();
  for (size_t i = 0; i < n; i++) {
    for (size_t j = i + 1; j < n; j++) {
      CHECK(strcmp(ck_op_name_at(i), ck_op_name_at(j)) != 0);
    }
  }
  const ck_op *add;
  REQUIRE_OK(ck_op_find("add", &add));
  CHECK(ck_op_kernel_count(add) == 14);
}

static void test_enumerate(void) {
  size_t n = ck_op_count();
  CHECK(n >= sizeof expected_ops / sizeof expected_ops[0]);
  for (size_t i = 0; i < sizeof expected_ops / sizeof expected_ops[0]; i++) {
    const ck_op *op = NULL;
    CHECK_OK(ck_op_find(expected_ops[i], &op));
    REQUIRE(op != NULL);
    CHECK(strcmp(ck_op_name(op), expected_ops[i]) == 0);
    CHECK(ck_op_kernel_count(op) > 0);
    bool unary = false;
    for (size_t j = 0; j < sizeof unary_ops / sizeof unary_ops[0]; j++) {
      unary = unary || strcmp(unary_ops[j], expected_ops[i]) == 0;
    }
    CHECK(ck_op_arity(op) == (unary ? 1u : 2u));
    bool listed = false;
    for (size_t j = 0; j < n; j++) {
      listed = listed || strcmp(ck_op_name_at(j), expected_ops[i]) == 0;
    }
    CHECK(listed);
  }
  CHECK(ck_op_name_at(n) == NULL);
  const ck_op *op = (const ck_op *)1;
  CHECK_ERR(ck_op_find("no_such_op", &op), CK_ERR_INDEX,
            "ck_op_find: no operation named 'no_such_op'");
  CHECK(op == NULL);
  CHECK_ERR(ck_op_find(NULL, &op), CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK(ck_op_arity(NULL) == 0 && ck_op_name(NULL) == NULL);

  /* coverage counts per op (the documented table) */
  struct {
    const char *name;
    size_t kernels;
  } counts[] = {{"add", 14},        {"subtract", 13},   {"multiply", 14},
                {"divide", 14},     {"floor_divide", 11}, {"mod", 11},
                {"power", 13},      {"negative", 13},   {"absolute", 14},
                {"less", 16},       {"logical_and", 14}, {"bitwise_and", 9},
                {"left_shift", 8},  {"minimum", 14},    {"sqrt", 5},
                {"exp2", 3},        {"arctan2", 3},     {"floor", 12},
                {"rint", 3},        {"sign", 13},       {"isnan", 14}};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    REQUIRE_OK(ck_op_find(counts[i].name, &op));
    if (ck_op_kernel_count(op) != counts[i].kernels) {
      fprintf(stderr, "%s: %zu kernels, expected %zu\n", counts[i].name,
              ck_op_kernel_count(op), counts[i].kernels);
    }
    CHECK(ck_op_kernel_count(op) == counts[i].kernels);
  }
}

/* ---- promotion ------------------------------------------------------------ */

static void test_promotion_table(void) {
  for (int a = B; a <= C128; a++) {
    for (int b = B; b <= C128; b++) {
      ck_type_id got = CK_TYPE_UNINITIALIZED;
      CHECK_OK(ck_promote_types((ck_type_id)a, (ck_type_id)b, &got));
      if (got != numpy_result_type[a - 1][b - 1]) {
        fprintf(stderr, "promote(%s, %s) = %s, numpy says %s\n",
                ck_type_id_name((ck_type_id)a), ck_type_id_name((ck_type_id)b),
                ck_type_id_name(got), ck_type_id_name(numpy_result_type[a - 1][b - 1]));
      }
      CHECK(got == numpy_result_type[a - 1][b - 1]);
      CHECK(ck_can_cast_safely((ck_type_id)a, (ck_type_id)b) ==
            (numpy_can_cast_safe[a - 1][b - 1] != 0));
    }
  }
  ck_type_id t;
  CHECK_ERR(ck_promote_types(CK_TYPE_STRING, I32, &t), CK_ERR_TYPE,
            "no promotion between string and int32");
  /* the NEP 50 rule (weak Python scalars) */
  static const ck_weak_kind weak[3] = {CK_WEAK_INT, CK_WEAK_FLOAT, CK_WEAK_COMPLEX};
  for (int a = B; a <= C128; a++) {
    for (int k = 0; k < 3; k++) {
      ck_type_id got = CK_TYPE_UNINITIALIZED;
      CHECK_OK(ck_weak_result((ck_type_id)a, weak[k], &got));
      if (got != numpy_weak_result[a - 1][k]) {
        fprintf(stderr, "weak_result(%s, %d) = %s, numpy says %s\n",
                ck_type_id_name((ck_type_id)a), (int)weak[k], ck_type_id_name(got),
                ck_type_id_name(numpy_weak_result[a - 1][k]));
      }
      CHECK(got == numpy_weak_result[a - 1][k]);
    }
  }
  CHECK_ERR(ck_weak_result(CK_TYPE_STRING, CK_WEAK_INT, &t), CK_ERR_TYPE,
            "no promotion between string and a Python int");
  CHECK_ERR(ck_weak_result(I8, (ck_weak_kind)0, &t), CK_ERR_INVALID_ARGUMENT,
            "unknown weak scalar kind 0");
  CHECK_ERR(ck_weak_result(I8, CK_WEAK_FLOAT, NULL), CK_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(!ck_can_cast_safely(CK_TYPE_STRING, CK_TYPE_STRING));
  CHECK(!ck_can_cast_safely(CK_TYPE_UNINITIALIZED, I32));
}

typedef struct {
  const char *op;
  size_t n;
  ck_type_id in[2];
  ck_type_id kargs[2];
  ck_type_id ret;
} resolve_case;

static void test_resolve(void) {
  static const resolve_case cases[] = {
      /* the brief's examples */
      {"add", 2, {I8, U8}, {I16, I16}, I16},
      {"add", 2, {I64, U64}, {F64, F64}, F64},
      {"add", 2, {I16, F16}, {F32, F32}, F32},
      {"add", 2, {I32, F32}, {F64, F64}, F64},
      {"add", 2, {B, I8}, {I8, I8}, I8},
      {"add", 2, {C64, F64}, {C128, C128}, C128},
      {"add", 2, {B, B}, {B, B}, B},
      {"multiply", 2, {U8, F16}, {F16, F16}, F16},
      /* NumPy's loop search for unary and special ops */
      {"sqrt", 1, {I8}, {F16}, F16},
      {"sqrt", 1, {U8}, {F16}, F16},
      {"sqrt", 1, {B}, {F16}, F16},
      {"sqrt", 1, {I16}, {F32}, F32},
      {"sqrt", 1, {U16}, {F32}, F32},
      {"sqrt", 1, {I32}, {F64}, F64},
      {"sqrt", 1, {U64}, {F64}, F64},
      {"sqrt", 1, {C64}, {C64}, C64},
      {"arctan2", 2, {I8, U8}, {F16, F16}, F16}, /* numpy: float16 */
      {"arctan2", 2, {I8, I16}, {F32, F32}, F32},
      {"divide", 2, {I8, I8}, {I8, I8}, F64},
      {"divide", 2, {B, B}, {B, B}, F64},
      {"divide", 2, {I8, U8}, {I16, I16}, F64},
      {"divide", 2, {F16, I8}, {F16, F16}, F16},
      {"floor_divide", 2, {B, B}, {I8, I8}, I8},
      {"power", 2, {B, B}, {I8, I8}, I8},
      {"left_shift", 2, {B, B}, {I8, I8}, I8},
      {"left_shift", 2, {U8, I8}, {I16, I16}, I16},
      {"less", 2, {I64, U64}, {I64, U64}, B},
      {"less", 2, {U64, I64}, {U64, I64}, B},
      {"less", 2, {I8, U64}, {F64, F64}, B},
      {"absolute", 1, {C64}, {C64}, F32},
      {"absolute", 1, {C128}, {C128}, F64},
      {"subtract", 2, {B, I8}, {I8, I8}, I8},
      {"floor", 1, {I32}, {I32}, I32},
      {"rint", 1, {I32}, {F64}, F64},
      {"isnan", 1, {U16}, {U16}, B},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const resolve_case *c = &cases[i];
    const ck_op *op = ot_op(c->op);
    REQUIRE(op != NULL);
    ck_type_id ret = CK_TYPE_UNINITIALIZED, kargs[2] = {0, 0};
    CHECK_OK(ck_op_resolve(op, c->n, c->in, &ret, kargs));
    bool ok = ret == c->ret && kargs[0] == c->kargs[0] &&
              (c->n == 1 || kargs[1] == c->kargs[1]);
    if (!ok) {
      fprintf(stderr, "resolve %s(%s, %s): got (%s, %s) -> %s\n", c->op,
              ck_type_id_name(c->in[0]), c->n > 1 ? ck_type_id_name(c->in[1]) : "",
              ck_type_id_name(kargs[0]), c->n > 1 ? ck_type_id_name(kargs[1]) : "",
              ck_type_id_name(ret));
    }
    CHECK(ok);
  }
  /* property: whatever resolves, every argument casts safely to the kernel's
   * argument type, for every op and every builtin pair */
  size_t nops = ck_op_count();
  for (size_t o = 0; o < nops; o++) {
    const ck_op *op = ot_op(ck_op_name_at(o));
    REQUIRE(op != NULL);
    size_t ar = ck_op_arity(op);
    if (ar > 2) {
      continue;
    }
    for (int a = B; a <= C128; a++) {
      for (int b = B; b <= (ar == 2 ? C128 : B); b++) {
        ck_type_id in[2] = {(ck_type_id)a, (ck_type_id)b}, kargs[2], ret;
        ck_status st = ck_op_resolve(op, ar, in, &ret, kargs);
        if (st == CK_OK) {
          CHECK(ck_can_cast_safely(in[0], kargs[0]));
          CHECK(ar == 1 || ck_can_cast_safely(in[1], kargs[1]));
        } else {
          CHECK(st == CK_ERR_TYPE);
        }
      }
    }
  }
}

static void test_dispatch_errors(void) {
  const ck_op *add = ot_op("add");
  const ck_op *sub = ot_op("subtract");
  const ck_op *neg = ot_op("negative");
  const ck_op *band = ot_op("bitwise_and");
  const ck_op *cexp2 = ot_op("exp2");
  REQUIRE(add && sub && neg && band && cexp2);
  ck_type_id t[2] = {CK_TYPE_STRING, I32};
  CHECK_ERR(ck_op_resolve(add, 2, t, NULL, NULL), CK_ERR_TYPE,
            "ck_op_resolve: no kernel for add(string, int32); add has: (bool, "
            "bool) -> bool, (int8, int8) -> int8, (int16, int16) -> int16");
  CHECK(strstr(ck_last_error(), "(complex128, complex128) -> complex128") != NULL);
  ck_type_id bb[2] = {B, B};
  CHECK_ERR(ck_op_resolve(sub, 2, bb, NULL, NULL), CK_ERR_TYPE,
            "no kernel for subtract(bool, bool); subtract has: (int8, int8) -> int8");
  CHECK_ERR(ck_op_resolve(neg, 1, bb, NULL, NULL), CK_ERR_TYPE,
            "no kernel for negative(bool)");
  ck_type_id ff[2] = {F64, F32};
  CHECK_ERR(ck_op_resolve(band, 2, ff, NULL, NULL), CK_ERR_TYPE,
            "no kernel for bitwise_and(float64, float32); bitwise_and has: "
            "(bool, bool) -> bool, (int8, int8) -> int8");
  ck_type_id c[1] = {C64};
  CHECK_ERR(ck_op_resolve(cexp2, 1, c, NULL, NULL), CK_ERR_TYPE,
            "exp2 has: (float16) -> float16, (float32) -> float32, (float64) -> "
            "float64");
  CHECK_ERR(ck_op_resolve(add, 1, t, NULL, NULL), CK_ERR_INVALID_ARGUMENT,
            "add takes 2 arguments, got 1");
  /* make_kernel reports the same and leaves the builder empty */
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  CHECK_ERR(ck_op_make_kernel(add, &kb, 0, CK_KERNEL_REQUEST_SINGLE, 2, t, NULL, NULL),
            CK_ERR_TYPE, "no kernel for add(string, int32)");
  CHECK_ERR(ck_op_make_kernel(add, &kb, 4, CK_KERNEL_REQUEST_SINGLE, 2, ff, NULL, NULL),
            CK_ERR_INVALID_ARGUMENT, "offset 4 not a multiple of 8");
  CHECK_ERR(ck_op_make_kernel(add, &kb, 0, (ck_kernel_request)7, 2, ff, NULL, NULL),
            CK_ERR_INVALID_ARGUMENT, "bad request 7");
  ck_kernel_builder_destroy(&kb);

  /* long lists are truncated, and the message says how many are left */
  for (int a = B; a <= C128; a++) {
    for (int b = B; b <= C128; b++) {
      ck_type_id sig[2] = {(ck_type_id)a, (ck_type_id)b};
      REQUIRE_OK(ck_op_register_kernel("many_sigs", 2, F64, sig, dummy_single,
                                       dummy_strided));
    }
  }
  const ck_op *many = ot_op("many_sigs");
  REQUIRE(many != NULL);
  CHECK(ck_op_kernel_count(many) == 196);
  ck_type_id st[2] = {CK_TYPE_STRING, CK_TYPE_STRING};
  CHECK_ERR(ck_op_resolve(many, 2, st, NULL, NULL), CK_ERR_TYPE,
            "no kernel for many_sigs(string, string); many_sigs has: (bool, bool) -> "
            "float64, (bool, int8) -> float64");
  const char *more = strstr(ck_last_error(), "... (");
  CHECK(more != NULL && strstr(more, " more)") != NULL);
  CHECK(strlen(ck_last_error()) < 1000);
  /* the full list through ck_op_signatures */
  size_t len = 0;
  CHECK_OK(ck_op_signatures(many, NULL, 0, &len));
  CHECK(len > 3000);
}

static void test_signatures(void) {
  const ck_op *op = ot_op("sqrt");
  REQUIRE(op != NULL);
  const char *want = "(float16) -> float16, (float32) -> float32, (float64) -> "
                     "float64, (complex64) -> complex64, (complex128) -> complex128";
  char buf[256];
  size_t len = 0;
  CHECK_OK(ck_op_signatures(op, buf, sizeof buf, &len));
  CHECK(strcmp(buf, want) == 0);
  CHECK(len == strlen(want));
  char small[10];
  CHECK_OK(ck_op_signatures(op, small, sizeof small, &len));
  CHECK(len == strlen(want));
  CHECK(strcmp(small, "(float16)") == 0); /* truncated, NUL-terminated */
  CHECK_OK(ck_op_signatures(op, NULL, 0, &len));
  CHECK(len == strlen(want));
  CHECK_ERR(ck_op_signatures(op, NULL, 4, &len), CK_ERR_INVALID_ARGUMENT, "NULL");

  ck_type_id ret = 0, args[2] = {0, 0};
  CHECK_OK(ck_op_kernel_signature(op, 3, &ret, args, 2));
  CHECK(ret == C64 && args[0] == C64 && args[1] == 0);
  CHECK_ERR(ck_op_kernel_signature(op, 5, &ret, args, 2), CK_ERR_INDEX,
            "sqrt has 5 kernels, no kernel 5");
  const ck_op *less = ot_op("less");
  REQUIRE(less != NULL);
  CHECK_OK(ck_op_kernel_signature(less, 14, &ret, args, 2));
  CHECK(ret == B && args[0] == I64 && args[1] == U64);
}

static void test_register_errors(void) {
  ck_type_id t[CK_OP_MAX_ARGS + 1] = {I32, I32, I32, I32, I32, I32, I32, I32, I32};
  CHECK_ERR(ck_op_register_kernel("bad name", 1, I32, t, twice_single, twice_strided),
            CK_ERR_INVALID_ARGUMENT, "has a character outside [A-Za-z0-9_]");
  CHECK_ERR(ck_op_register_kernel("", 1, I32, t, twice_single, twice_strided),
            CK_ERR_INVALID_ARGUMENT, "1 to 63 bytes");
  char longname[80];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK_ERR(ck_op_register_kernel(longname, 1, I32, t, twice_single, twice_strided),
            CK_ERR_INVALID_ARGUMENT, "1 to 63 bytes");
  CHECK_ERR(ck_op_register_kernel("ok_name", 0, I32, t, twice_single, twice_strided),
            CK_ERR_INVALID_ARGUMENT, "take 1 to 8 arguments");
  CHECK_ERR(ck_op_register_kernel("ok_name", 9, I32, t, twice_single, twice_strided),
            CK_ERR_INVALID_ARGUMENT, "take 1 to 8 arguments");
  CHECK_ERR(ck_op_register_kernel("ok_name", 1, (ck_type_id)999, t, twice_single,
                                  twice_strided),
            CK_ERR_TYPE, "invalid return type id 999");
  ck_type_id bad[1] = {(ck_type_id)40};
  CHECK_ERR(ck_op_register_kernel("ok_name", 1, I32, bad, twice_single, twice_strided),
            CK_ERR_TYPE, "invalid type id 40 for argument 0");
  CHECK_ERR(ck_op_register_kernel("ok_name", 1, I32, t, twice_single, NULL),
            CK_ERR_INVALID_ARGUMENT, "both the single and the strided");
  CHECK_ERR(ck_op_register_kernel("add", 1, I32, t, twice_single, twice_strided),
            CK_ERR_INVALID_ARGUMENT, "add takes 2 arguments, not 1");
  const ck_op *op;
  CHECK_ERR(ck_op_find("ok_name", &op), CK_ERR_INDEX, "no operation");
  /* a failed factory registration releases the user data */
  my_data d = {1.0, 0};
  CHECK_ERR(ck_op_register_factory("add", 3, F64, t, my_factory, &d, my_release),
            CK_ERR_INVALID_ARGUMENT, "add takes 2 arguments, not 3");
  CHECK(d.released == 1);
  CHECK_ERR(ck_op_register_factory("x", 1, F64, t, NULL, &d, my_release),
            CK_ERR_INVALID_ARGUMENT, "NULL factory");
  CHECK(d.released == 2);
  ck_type_id bad2[2] = {CK_TYPE_STRING, I32};
  CHECK_ERR(ck_op_unregister_kernel("add", 2, bad2), CK_ERR_INDEX, "no kernel of add");
}

static void test_user_plain(void) {
  ck_type_id t[1] = {I32};
  REQUIRE_OK(ck_op_register_kernel("twice", 1, I64, t, twice_single, twice_strided));
  int32_t x = -21;
  int64_t r = 0;
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  CHECK(ot_call1("twice", I32, &x, &r, &ret) == 0);
  CHECK(r == -42 && ret == I64);
  /* int8 and uint16 promote to int32 (safe casts); uint32 and float32 do not */
  int8_t x8 = -128;
  CHECK(ot_call1("twice", I8, &x8, &r, &ret) == 0);
  CHECK(r == -256);
  uint16_t x16 = 65535;
  CHECK(ot_call1("twice", U16, &x16, &r, &ret) == 0);
  CHECK(r == 131070);
  uint32_t x32 = 1;
  CHECK(ot_call1("twice", U32, &x32, &r, &ret) == CK_ERR_TYPE);
  CHECK(strstr(ck_last_error(), "no kernel for twice(uint32); twice has: (int32) -> int64") != NULL);
  CHECK_OK(ck_op_unregister_kernel("twice", 1, t));
  const ck_op *op = ot_op("twice");
  REQUIRE(op != NULL); /* the op stays, empty */
  CHECK(ck_op_kernel_count(op) == 0);
  CHECK_ERR(ck_op_resolve(op, 1, t, NULL, NULL), CK_ERR_TYPE, "twice has: no kernels");
}

static void test_user_factory(void) {
  static my_data d1 = {100.0, 0}, d2 = {1000.0, 0};
  ck_type_id t[2] = {F64, F64};
  REQUIRE_OK(ck_op_register_factory("myop", 2, F64, t, my_factory, &d1, my_release));
  double a = 1.5, b = 2.25;
  CHECK(call_f64_2("myop", F64, &a, F64, &b) == 103.75);
  /* promoted arguments: a converting parent around the factory's kernel */
  int32_t ia = -3;
  float fb = 0.5f;
  CHECK(call_f64_2("myop", I32, &ia, F32, &fb) == 97.5);
  CHECK(d1.released == 0);
  /* re-registering the same signature replaces it and releases d1 once */
  REQUIRE_OK(ck_op_register_factory("myop", 2, F64, t, my_factory, &d2, my_release));
  CHECK(d1.released == 1 && d2.released == 0);
  CHECK(call_f64_2("myop", F64, &a, F64, &b) == 1003.75);
  const ck_op *op = ot_op("myop");
  REQUIRE(op != NULL);
  CHECK(ck_op_kernel_count(op) == 1);
  /* a plain kernel for another signature of the same op */
  ck_type_id ti[2] = {I8, I8};
  REQUIRE_OK(ck_op_register_kernel("myop", 2, F64, ti, dummy_single, dummy_strided));
  int8_t x = 1;
  double r;
  CHECK(ot_call2("myop", I8, &x, I8, &x, &r, NULL) == CK_ERR_USER);
  CHECK(strcmp(ck_last_error(), "dummy") == 0);
  /* the dump names the factory's kernel once its description is registered */
  REQUIRE_OK(ck_kernel_info_register(&my_info));
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type_id tp[2] = {U8, F32};
  REQUIRE_OK(ck_op_make_kernel(op, &kb, 0, CK_KERNEL_REQUEST_SINGLE, 2, tp, NULL, NULL));
  char dump[2048];
  CHECK_OK(ck_kernel_builder_dump(&kb, dump, sizeof dump, NULL));
  CHECK(strstr(dump, "op_promote2") != NULL);
  CHECK(strstr(dump, "assign_uint8_to_float64_nocheck") != NULL);
  CHECK(strstr(dump, "assign_float32_to_float64_nocheck") != NULL);
  CHECK(strstr(dump, "my_kernel") != NULL);
  ck_kernel_builder_destroy(&kb);
  CHECK_OK(ck_kernel_info_unregister(&my_info));
  CHECK_OK(ck_op_unregister_kernel("myop", 2, t));
  CHECK(d1.released == 1 && d2.released == 1);
  CHECK_OK(ck_op_unregister_kernel("myop", 2, ti));
}

static void test_dump_builtin(void) {
  const ck_op *add = ot_op("add");
  REQUIRE(add != NULL);
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type_id t[2] = {I8, F64};
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  size_t end;
  REQUIRE_OK(ck_op_make_kernel(add, &kb, 0, CK_KERNEL_REQUEST_STRIDED, 2, t, &ret, &end));
  CHECK(ret == F64);
  CHECK(ck_kernel_builder_is_inline(&kb)); /* small trees allocate nothing */
  CHECK(end <= CK_KERNEL_BUILDER_INLINE_SIZE);
  char dump[2048];
  CHECK_OK(ck_kernel_builder_dump(&kb, dump, sizeof dump, NULL));
  CHECK(strstr(dump, "op_promote2 [strided]") != NULL);
  CHECK(strstr(dump, "assign_int8_to_float64_nocheck [strided]") != NULL);
  CHECK(strstr(dump, "add_float64 [strided]") != NULL);
  ck_kernel_builder_destroy(&kb);
}

/* ---- strides ------------------------------------------------------------------- */

static void test_strides(void) {
  enum { N = 300 }; /* crosses the 128-element chunks of the promoting kernel */
  int16_t a[N];
  float b = 0.25f;
  float out[2 * N];
  for (int i = 0; i < N; i++) {
    a[i] = (int16_t)(i * 97 - 14000);
  }
  const ck_op *add = ot_op("add");
  REQUIRE(add != NULL);
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type_id t[2] = {I16, F32}, ret = CK_TYPE_UNINITIALIZED;
  REQUIRE_OK(ck_op_make_kernel(add, &kb, 0, CK_KERNEL_REQUEST_STRIDED, 2, t, &ret, NULL));
  CHECK(ret == F32);
  ck_prefix *k = ck_kernel_builder_get(&kb, 0);
  /* a read backwards, b broadcast (stride 0), out every other float, backwards */
  const char *src[2] = {(const char *)&a[N - 1], (const char *)&b};
  intptr_t ss[2] = {-(intptr_t)sizeof(int16_t), 0};
  for (int i = 0; i < 2 * N; i++) {
    out[i] = -1.0f;
  }
  CHECK(ck_prefix_strided(k)((char *)&out[2 * N - 2], -2 * (intptr_t)sizeof(float), src,
                             ss, N, k) == 0);
  bool ok = true;
  for (int i = 0; i < N; i++) {
    /* element i of the call: a[N-1-i] + b, written at out[2N-2-2i] */
    float want = (float)a[N - 1 - i] + 0.25f;
    ok = ok && out[2 * N - 2 - 2 * i] == want && out[2 * N - 1 - 2 * i] == -1.0f;
  }
  CHECK(ok);
  /* zero count: nothing touched */
  CHECK(ck_prefix_strided(k)((char *)&out[1], 4, src, ss, 0, k) == 0);
  CHECK(out[1] == -1.0f);
  ck_kernel_builder_destroy(&kb);

  /* a leaf (no promotion) with a zero-stride first argument and a negative
   * destination stride */
  int64_t x = 5, ys[4] = {1, 2, 3, 4}, r[4] = {0, 0, 0, 0};
  ck_type_id t2[2] = {I64, I64};
  REQUIRE_OK(ck_op_make_kernel(ot_op("subtract"), &kb, 0, CK_KERNEL_REQUEST_STRIDED, 2,
                               t2, NULL, NULL));
  k = ck_kernel_builder_get(&kb, 0);
  const char *s2[2] = {(const char *)&x, (const char *)ys};
  intptr_t st2[2] = {0, sizeof(int64_t)};
  CHECK(ck_prefix_strided(k)((char *)&r[3], -(intptr_t)sizeof(int64_t), s2, st2, 4, k) == 0);
  CHECK(r[3] == 4 && r[2] == 3 && r[1] == 2 && r[0] == 1);
  ck_kernel_builder_destroy(&kb);
}

/* ---- fault injection: nested promoting kernels ------------------------------------- */

/* nest_op (float64, float32) -> float64: its factory builds add(float64,
 * float32) through the registry, i.e. a promoting kernel of its own. */
static ck_status nest_factory(ck_kernel_builder *ckb, size_t offset,
                              ck_kernel_request req, void *user_data, size_t *out_end) {
  (void)user_data;
  const ck_op *add;
  ck_status st = ck_op_find("add", &add);
  if (st != CK_OK) {
    return st;
  }
  ck_type_id t[2] = {F64, F32};
  return ck_op_make_kernel(add, ckb, offset, req, 2, t, NULL, out_end);
}

/* An outer test kernel with a big data block (forces the builder to the
 * heap) and one child after it. */
typedef struct outer_ck {
  ck_prefix base;
  char pad[120];
} outer_ck;

static int outer_strided(char *dst, intptr_t ds, const char *const *src,
                         const intptr_t *ss, size_t n, ck_prefix *self) {
  ck_prefix *c = ck_prefix_child(self, sizeof(outer_ck));
  return ck_prefix_strided(c)(dst, ds, src, ss, n, c);
}
static void outer_destroy(ck_prefix *self) {
  ck_prefix_destroy_child(ck_prefix_child(self, sizeof(outer_ck)));
}

static const ck_kernel_info outer_info = {"outer", dummy_single, outer_strided,
                                          sizeof(outer_ck),
                                          ck_kernel_children_after_data};

static ck_status build_outer(ck_kernel_builder *kb, const ck_op *nest) {
  ck_status st = ck_kernel_builder_ensure_capacity(kb, sizeof(outer_ck));
  if (st != CK_OK) {
    return st;
  }
  ck_prefix *p = ck_kernel_builder_get(kb, 0);
  p->function = NULL;
  st = ck_prefix_set_function(p, CK_KERNEL_REQUEST_STRIDED, dummy_single, outer_strided);
  if (st != CK_OK) {
    return st;
  }
  p->destructor = outer_destroy;
  ck_type_id t[2] = {I32, I16}; /* -> nest_op(float64, float32) by promotion */
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  st = ck_op_make_kernel(nest, kb, sizeof(outer_ck), CK_KERNEL_REQUEST_STRIDED, 2, t,
                         &ret, NULL);
  if (st == CK_OK && ret != F64) {
    st = CK_ERR_TYPE;
  }
  return st;
}

static void test_fault_injection_nested(void) {
  ck_type_id t[2] = {F64, F32};
  REQUIRE_OK(ck_op_register_factory("nest_op", 2, F64, t, nest_factory, NULL, NULL));
  const ck_op *nest = ot_op("nest_op");
  REQUIRE(nest != NULL);
  REQUIRE_OK(ck_kernel_info_register(&outer_info));
  ck_test_faults f = CK_TEST_FAULTS(1000);
  while (ck_test_faults_arm(&f)) {
    ck_kernel_builder kb;
    ck_kernel_builder_init(&kb); /* no allocation */
    ck_status st = build_outer(&kb, nest);
    if (!ck_test_faults_fired(&f)) {
      REQUIRE_OK(st);
      int32_t a[3] = {1, -2, 2000000000};
      int16_t b[3] = {10, -20, 30};
      double out[3];
      const char *src[2] = {(const char *)a, (const char *)b};
      intptr_t ss[2] = {sizeof(int32_t), sizeof(int16_t)};
      ck_prefix *root = ck_kernel_builder_get(&kb, 0);
      CHECK(ck_prefix_strided(root)((char *)out, sizeof(double), src, ss, 3, root) == 0);
      CHECK(out[0] == 11.0 && out[1] == -22.0 && out[2] == 2000000030.0);
      char dump[4096];
      CHECK_OK(ck_kernel_builder_dump(&kb, dump, sizeof dump, NULL));
      /* outer -> promote(int32->f64, int16->f32) -> promote(f32->f64) -> add */
      const char *p1 = strstr(dump, "op_promote2");
      CHECK(p1 != NULL && strstr(p1 + 1, "op_promote2") != NULL);
      CHECK(strstr(dump, "assign_int16_to_float32_nocheck") != NULL);
      CHECK(strstr(dump, "add_float64") != NULL);
      ck_kernel_builder_destroy(&kb);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    CHECK(strstr(ck_last_error(), "out of memory") != NULL);
    ck_kernel_builder_destroy(&kb);
  }
  CHECK(f.runs >= 2);
  CHECK_OK(ck_kernel_info_unregister(&outer_info));

  /* registration itself at every failing allocation: the release runs once
   * on failure, never twice */
  ck_test_faults g = CK_TEST_FAULTS(1000);
  while (ck_test_faults_arm(&g)) {
    static my_data d;
    d.add = 0;
    d.released = 0;
    char name[32];
    snprintf(name, sizeof name, "fi_op_%d", (int)g.k);
    ck_status st = ck_op_register_factory(name, 2, F64, t, my_factory, &d, my_release);
    if (!ck_test_faults_fired(&g)) {
      REQUIRE_OK(st);
      CHECK(d.released == 0);
      CHECK_OK(ck_op_unregister_kernel(name, 2, t));
      CHECK(d.released == 1);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    CHECK(d.released == 1);
  }
  CHECK(g.runs >= 2);
  CHECK_OK(ck_op_unregister_kernel("nest_op", 2, t));
}

/* ---- concurrency ------------------------------------------------------------------ */

static atomic_int conc_made, conc_released;
static atomic_int conc_calls_ok;

typedef struct conc_data {
  double add;
} conc_data;

static void conc_release(void *p) {
  conc_data *d = p;
  d->add = -1e300; /* poison: a use after release gives a wrong sum */
  free(d);
  atomic_fetch_add(&conc_released, 1);
}

static ck_status conc_factory(ck_kernel_builder *ckb, size_t offset,
                              ck_kernel_request req, void *user_data, size_t *out_end) {
  my_data d = {((conc_data *)user_data)->add, 0};
  return my_factory(ckb, offset, req, &d, out_end);
}

static void *conc_writer(void *arg) {
  int id = (int)(intptr_t)arg;
  long iters = ck_test_scaled(400);
  ck_type_id t[2] = {F64, F64};
  for (long i = 0; i < iters; i++) {
    conc_data *d = malloc(sizeof *d);
    if (d == NULL) {
      continue;
    }
    d->add = 7.0;
    atomic_fetch_add(&conc_made, 1);
    char name[32];
    snprintf(name, sizeof name, "conc_%d", (int)(i % 8));
    if (ck_op_register_factory("conc_shared", 2, F64, t, conc_factory, d,
                               conc_release) != CK_OK) {
      atomic_fetch_add(&conc_calls_ok, -100000);
    }
    /* new operations while readers enumerate */
    conc_data *d2 = malloc(sizeof *d2);
    if (d2 != NULL) {
      d2->add = 7.0;
      atomic_fetch_add(&conc_made, 1);
      snprintf(name, sizeof name, "conc_w%d_%ld", id, i % 16);
      (void)ck_op_register_factory(name, 2, F64, t, conc_factory, d2, conc_release);
    }
  }
  return NULL;
}

static void *conc_reader(void *arg) {
  (void)arg;
  long iters = ck_test_scaled(400);
  for (long i = 0; i < iters; i++) {
    const ck_op *op;
    if (ck_op_find("conc_shared", &op) == CK_OK) {
      ck_kernel_builder kb;
      ck_kernel_builder_init(&kb);
      ck_type_id t[2] = {I32, F32}; /* promoting */
      if (ck_op_make_kernel(op, &kb, 0, CK_KERNEL_REQUEST_SINGLE, 2, t, NULL, NULL) ==
          CK_OK) {
        int32_t a = 1;
        float b = 2;
        double r = 0;
        const char *src[2] = {(const char *)&a, (const char *)&b};
        ck_prefix *k = ck_kernel_builder_get(&kb, 0);
        if (ck_prefix_single(k)((char *)&r, src, k) == 0 && r == 10.0) {
          atomic_fetch_add(&conc_calls_ok, 1);
        } else {
          atomic_fetch_add(&conc_calls_ok, -100000);
        }
      }
      ck_kernel_builder_destroy(&kb);
    }
    size_t n = ck_op_count();
    for (size_t j = 0; j < n; j += 7) {
      const char *name = ck_op_name_at(j);
      if (name == NULL || ck_op_find(name, &op) != CK_OK) {
        atomic_fetch_add(&conc_calls_ok, -100000);
      }
    }
    /* and a built-in, through promotion */
    int8_t x = 3;
    uint8_t y = 200;
    int16_t r16 = 0;
    if (ck_op_find("add", &op) == CK_OK) {
      ck_kernel_builder kb;
      ck_kernel_builder_init(&kb);
      ck_type_id t[2] = {I8, U8};
      if (ck_op_make_kernel(op, &kb, 0, CK_KERNEL_REQUEST_SINGLE, 2, t, NULL, NULL) ==
          CK_OK) {
        const char *src[2] = {(const char *)&x, (const char *)&y};
        ck_prefix *k = ck_kernel_builder_get(&kb, 0);
        if (ck_prefix_single(k)((char *)&r16, src, k) != 0 || r16 != 203) {
          atomic_fetch_add(&conc_calls_ok, -100000);
        }
      }
      ck_kernel_builder_destroy(&kb);
    }
  }
  return NULL;
}

static void test_concurrent(void) {
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    REQUIRE(pthread_create(&th[i], NULL, i < 2 ? conc_writer : conc_reader,
                           (void *)(intptr_t)i) == 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
  }
  CHECK(atomic_load(&conc_calls_ok) >= 0);
  /* drop what is still registered: then every user_data was released once */
  ck_type_id t[2] = {F64, F64};
  CHECK_OK(ck_op_unregister_kernel("conc_shared", 2, t));
  for (int id = 0; id < 2; id++) {
    for (int j = 0; j < 16; j++) {
      char name[32];
      snprintf(name, sizeof name, "conc_w%d_%d", id, j);
      (void)ck_op_unregister_kernel(name, 2, t);
    }
  }
  CHECK(atomic_load(&conc_made) > 0);
  CHECK(atomic_load(&conc_released) == atomic_load(&conc_made));
}

CK_TEST_MAIN(CK_TEST(test_init_fault_injection), CK_TEST(test_enumerate),
             CK_TEST(test_promotion_table), CK_TEST(test_resolve),
             CK_TEST(test_dispatch_errors), CK_TEST(test_signatures),
             CK_TEST(test_register_errors), CK_TEST(test_user_plain),
             CK_TEST(test_user_factory), CK_TEST(test_dump_builtin),
             CK_TEST(test_strides), CK_TEST(test_fault_injection_nested),
             CK_TEST(test_concurrent))
