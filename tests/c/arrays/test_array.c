/* Arrays: construction for every builtin and compound type, strings with
 * multi-byte UTF-8 and embedded NULs, var dims with empty rows, indexing and
 * slicing against Python's results, external views and owner lifetime, flag
 * enforcement, debug_repr, and allocation failure at every step. */
#include "ck_test.h"

/* A 1-D `strided * int32` array holding 0..n-1. */
static ck_array_preamble *iota(intptr_t n) {
  ck_type t = P("strided * int32");
  ck_array_preamble *a = NULL;
  if (ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a) == CK_OK) {
    int32_t *d = (int32_t *)a->data;
    for (intptr_t i = 0; i < n; i++) {
      d[i] = (int32_t)i;
    }
  }
  ck_type_decref(t);
  return a;
}

/* Reads a 1-D int32 array (any stride) into out; returns its length. */
static intptr_t read_1d(const ck_array_preamble *a, int32_t *out, intptr_t max) {
  intptr_t shape, stride;
  size_t nd;
  if (ck_array_shape(a, &shape, 1, &nd) != CK_OK || nd != 1 ||
      ck_array_strides(a, &stride, 1, &nd) != CK_OK) {
    return -1;
  }
  for (intptr_t i = 0; i < shape && i < max; i++) {
    memcpy(&out[i], ck_array_data(a) + i * stride, sizeof(int32_t));
  }
  return shape;
}

static void test_empty_every_builtin(void) {
  int64_t types = ck_type_live_count();
  for (int id = 1; id < CK_BUILTIN_TYPE_COUNT; id++) {
    ck_type t = CK_BUILTIN(id), s;
    size_t size = ck_type_data_size(t);
    /* 0-d */
    ck_array_preamble *a;
    REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
    CHECK(a->memblock.kind == CK_MEMBLOCK_ARRAY);
    CHECK(ck_memblock_refcount(&a->memblock) == 1);
    CHECK(a->type == t && a->data_ref == NULL && a->flags == 3);
    CHECK(ck_array_ndim(a) == 0);
    CHECK((uintptr_t)a->data % ck_type_data_alignment(t) == 0);
    CHECK(a->data == (char *)(a + 1) ||
          a->data == (char *)a + ((sizeof *a + ck_type_data_alignment(t) - 1) &
                                  ~(ck_type_data_alignment(t) - 1)));
    for (size_t i = 0; i < size; i++) {
      CHECK(a->data[i] == 0);
    }
    ck_array_decref(a);
    /* strided * T, shape [5] */
    REQUIRE_OK(ck_strided_dim_type_new(t, &s));
    intptr_t shape = 5, got[2], strides[2];
    size_t nd = 0;
    REQUIRE_OK(ck_array_empty(s, &shape, 1, CK_ARRAY_READ, &a));
    CHECK(a->type == s && s->refcount == 2);
    REQUIRE_OK(ck_array_shape(a, got, 2, &nd));
    CHECK(nd == 1 && got[0] == 5);
    REQUIRE_OK(ck_array_strides(a, strides, 2, &nd));
    CHECK(strides[0] == (intptr_t)size);
    const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)ck_array_arrmeta(a);
    CHECK(m->size == 5 && m->stride == (intptr_t)size);
    int zero = 1;
    for (size_t i = 0; i < 5 * size; i++) {
      zero &= a->data[i] == 0;
    }
    CHECK(zero);
    CHECK((uintptr_t)a->data % ck_type_data_alignment(t) == 0);
    ck_array_decref(a);
    CHECK(s->refcount == 1);
    ck_type_decref(s);
  }
  CHECK(ck_type_live_count() == types);
}

static void test_fixed_and_shapes(void) {
  ck_type t = P("2 * 3 * int32");
  REQUIRE(t != NULL);
  ck_array_preamble *a;
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  intptr_t sh[4], st[4];
  size_t nd;
  REQUIRE_OK(ck_array_shape(a, sh, 4, &nd));
  CHECK(nd == 2 && sh[0] == 2 && sh[1] == 3);
  REQUIRE_OK(ck_array_strides(a, st, 4, &nd));
  CHECK(st[0] == 12 && st[1] == 4);
  REQUIRE_OK(ck_array_shape(a, sh, 1, &nd)); /* max smaller than ndim */
  CHECK(nd == 2);
  REQUIRE_OK(ck_array_shape(a, NULL, 0, &nd));
  CHECK(nd == 2);
  ck_array_decref(a);
  intptr_t good[] = {2, 3}, bad[] = {2, 4};
  REQUIRE_OK(ck_array_empty(t, good, 2, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_array_decref(a);
  REQUIRE_OK(ck_array_empty(t, good, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_array_decref(a);
  CHECK_ERR(ck_array_empty(t, bad, 2, CK_ARRAY_DEFAULT_FLAGS, &a),
            CK_ERR_INVALID_ARGUMENT, "shape entry 4 does not match the fixed dim of size 3");
  CHECK(strstr(ck_last_error(), "ck_array_empty: type '2 * 3 * int32'") != NULL);
  ck_type_decref(t);

  t = P("strided * strided * int16");
  REQUIRE(t != NULL);
  intptr_t zero[] = {0, 7};
  REQUIRE_OK(ck_array_empty(t, zero, 2, CK_ARRAY_DEFAULT_FLAGS, &a));
  REQUIRE_OK(ck_array_strides(a, st, 4, &nd));
  CHECK(st[0] == 14 && st[1] == 2);
  ck_array_decref(a);
  CHECK_ERR(ck_array_empty(t, zero, 1, CK_ARRAY_DEFAULT_FLAGS, &a),
            CK_ERR_INVALID_ARGUMENT, "no entry for the strided dim at axis 1");
  intptr_t huge[] = {INTPTR_MAX / 2, INTPTR_MAX / 2};
  CHECK_ERR(ck_array_empty(t, huge, 2, CK_ARRAY_DEFAULT_FLAGS, &a), CK_ERR_OVERFLOW,
            "overflows");
  intptr_t neg[] = {3, -2};
  CHECK_ERR(ck_array_empty(t, neg, 2, CK_ARRAY_DEFAULT_FLAGS, &a),
            CK_ERR_INVALID_ARGUMENT, "negative size -2 for axis 1");
  CHECK_ERR(ck_array_empty(t, NULL, 2, CK_ARRAY_DEFAULT_FLAGS, &a),
            CK_ERR_INVALID_ARGUMENT, "shape is NULL");
  CHECK_ERR(ck_array_empty(NULL, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a),
            CK_ERR_INVALID_ARGUMENT, "invalid type");
  CHECK_ERR(ck_array_empty(t, zero, 2, 8, &a), CK_ERR_INVALID_ARGUMENT, "unknown flag");
  CHECK_ERR(ck_array_empty(t, zero, 2, CK_ARRAY_WRITE | CK_ARRAY_IMMUTABLE, &a),
            CK_ERR_INVALID_ARGUMENT, "mutually exclusive");
  CHECK_ERR(ck_array_empty(t, zero, 2, 3, NULL), CK_ERR_INVALID_ARGUMENT, "out must");
  ck_type_decref(t);

  /* Structs: C layout inside the embedded data. */
  t = P("strided * {a: int8, b: float64, c: 2 * int16}");
  REQUIRE(t != NULL);
  intptr_t three = 3;
  REQUIRE_OK(ck_array_empty(t, &three, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  REQUIRE_OK(ck_array_strides(a, st, 1, &nd));
  CHECK(st[0] == 24);
  const uintptr_t *offs = (const uintptr_t *)(ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta));
  CHECK(offs[0] == 0 && offs[1] == 8 && offs[2] == 16);
  const ck_dim_arrmeta *cm =
      (const ck_dim_arrmeta *)(ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta) + 3 * sizeof(uintptr_t));
  CHECK(cm->size == 2 && cm->stride == 2);
  ck_array_decref(a);
  ck_type_decref(t);
}

static void test_debug_repr(void) {
  ck_array_preamble *a = iota(4);
  REQUIRE(a != NULL);
  REQUIRE_OK(ck_array_set_immutable(a));
  CHECK(ck_array_flags(a) == 5);
  char buf[2048], expect[256];
  size_t n = 0;
  REQUIRE_OK(ck_array_debug_repr(a, buf, sizeof buf, &n));
  CHECK(n == strlen(buf));
  CHECK(strncmp(buf, "------ array\n", 13) == 0);
  snprintf(expect, sizeof expect, " address: %p\n refcount: 1\n", (void *)a);
  CHECK(strstr(buf, expect) != NULL);
  snprintf(expect, sizeof expect, "  pointer: %p\n  type: strided * int32\n", (void *)a->type);
  CHECK(strstr(buf, expect) != NULL);
  CHECK(strstr(buf, "  flags: 5 (read_access immutable)\n") != NULL);
  CHECK(strstr(buf, "  type-specific arrmeta:\n   strided_dim arrmeta\n    stride: 4\n"
                    "    size: 4\n") != NULL);
  snprintf(expect, sizeof expect, " data:\n   pointer: %p\n", (void *)a->data);
  CHECK(strstr(buf, expect) != NULL);
  CHECK(strstr(buf, "(embedded in array memory)\n------\n") != NULL);
  /* snprintf rules. */
  char small[10];
  size_t n2 = 0;
  REQUIRE_OK(ck_array_debug_repr(a, small, sizeof small, &n2));
  CHECK(n2 == n && strlen(small) == 9);
  REQUIRE_OK(ck_array_debug_repr(a, NULL, 0, &n2));
  CHECK(n2 == n);
  CHECK_ERR(ck_array_debug_repr(a, NULL, 4, &n2), CK_ERR_INVALID_ARGUMENT, "buf is NULL");
  CHECK_ERR(ck_array_debug_repr(NULL, buf, sizeof buf, &n2), CK_ERR_INVALID_ARGUMENT,
            "must not be NULL");
  /* A view names its reference; nested arrmeta prints per level. */
  ck_array_preamble *v;
  REQUIRE_OK(ck_array_slice(a, 0, 1, CK_SLICE_NONE, 2, &v));
  REQUIRE_OK(ck_array_debug_repr(v, buf, sizeof buf, NULL));
  snprintf(expect, sizeof expect, "   reference: %p (array memblock, refcount 2)", (void *)a);
  CHECK(strstr(buf, expect) != NULL);
  CHECK(strstr(buf, "    stride: 8\n    size: 2\n") != NULL);
  /* The generic memblock printer knows arrays too. */
  REQUIRE_OK(ck_memblock_debug_print(&v->memblock, buf, sizeof buf, NULL));
  CHECK(strstr(buf, "kind=array refcount=1 type='strided * int32'") != NULL);
  ck_array_decref(v);
  ck_array_decref(a);

  ck_type t = P("var * {s: string, p: pointer[int8]}");
  REQUIRE(t != NULL);
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  REQUIRE_OK(ck_array_debug_repr(a, buf, sizeof buf, NULL));
  CHECK(strstr(buf, "   var_dim arrmeta\n    stride: 24\n    offset: 0\n    blockref: ") != NULL);
  CHECK(strstr(buf, "(pod, refcount 1)") != NULL);
  CHECK(strstr(buf, "    struct arrmeta\n     field data offsets: 0, 16\n") != NULL);
  CHECK(strstr(buf, "     field 0 (s):\n      string arrmeta\n       blockref: ") != NULL);
  CHECK(strstr(buf, "      pointer arrmeta\n       offset: 0\n       blockref: (nil)") != NULL ||
        strstr(buf, "      pointer arrmeta\n       offset: 0\n       blockref: 0") != NULL);
  ck_array_decref(a);
  REQUIRE_OK(ck_array_empty(CK_BUILTIN(CK_TYPE_FLOAT64), NULL, 0, 1, &a));
  REQUIRE_OK(ck_array_debug_repr(a, buf, sizeof buf, NULL));
  CHECK(strstr(buf, "flags: 1 (read_access)\n  type-specific arrmeta:\n   (none)\n") != NULL);
  ck_array_decref(a);
  ck_type_decref(t);
}

static const struct {
  intptr_t len, start, stop, step, n;
  int32_t expect[10];
} slices[] = {
    {10, CK_SLICE_NONE, CK_SLICE_NONE, 1, 10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
    {10, CK_SLICE_NONE, CK_SLICE_NONE, -1, 10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
    {10, 8, 2, -2, 3, {8, 6, 4}},
    {10, -3, CK_SLICE_NONE, 1, 3, {7, 8, 9}},
    {10, CK_SLICE_NONE, 100, 3, 4, {0, 3, 6, 9}},
    {10, 5, 2, 1, 0, {-1}},
    {10, -100, -90, 1, 0, {-1}},
    {10, CK_SLICE_NONE, CK_SLICE_NONE, -3, 4, {9, 6, 3, 0}},
    {10, -1, -11, -1, 10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
    {10, 10, 0, -1, 9, {9, 8, 7, 6, 5, 4, 3, 2, 1}},
    {10, 2, -2, 2, 3, {2, 4, 6}},
    {10, -2, 2, -1, 6, {8, 7, 6, 5, 4, 3}},
    {10, 100, CK_SLICE_NONE, -4, 3, {9, 5, 1}},
    {10, CK_SLICE_NONE, -100, -1, 10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
    {10, 3, 3, 1, 0, {-1}},
    {10, -100, 100, 7, 2, {0, 7}},
    {10, 0, 1, -1, 0, {-1}},
    {10, CK_SLICE_NONE, 5, -1, 4, {9, 8, 7, 6}},
    {10, 5, CK_SLICE_NONE, -2, 3, {5, 3, 1}},
    {0, CK_SLICE_NONE, CK_SLICE_NONE, 1, 0, {-1}},
    {0, CK_SLICE_NONE, CK_SLICE_NONE, -1, 0, {-1}},
    {0, 8, 2, -2, 0, {-1}},
    {0, -3, CK_SLICE_NONE, 1, 0, {-1}},
    {0, CK_SLICE_NONE, 100, 3, 0, {-1}},
    {0, 5, 2, 1, 0, {-1}},
    {0, -100, -90, 1, 0, {-1}},
    {0, CK_SLICE_NONE, CK_SLICE_NONE, -3, 0, {-1}},
    {0, -1, -11, -1, 0, {-1}},
    {0, 10, 0, -1, 0, {-1}},
    {0, 2, -2, 2, 0, {-1}},
    {0, -2, 2, -1, 0, {-1}},
    {0, 100, CK_SLICE_NONE, -4, 0, {-1}},
    {0, CK_SLICE_NONE, -100, -1, 0, {-1}},
    {0, 3, 3, 1, 0, {-1}},
    {0, -100, 100, 7, 0, {-1}},
    {0, 0, 1, -1, 0, {-1}},
    {0, CK_SLICE_NONE, 5, -1, 0, {-1}},
    {0, 5, CK_SLICE_NONE, -2, 0, {-1}},
    {1, CK_SLICE_NONE, CK_SLICE_NONE, 1, 1, {0}},
    {1, CK_SLICE_NONE, CK_SLICE_NONE, -1, 1, {0}},
    {1, 8, 2, -2, 0, {-1}},
    {1, -3, CK_SLICE_NONE, 1, 1, {0}},
    {1, CK_SLICE_NONE, 100, 3, 1, {0}},
    {1, 5, 2, 1, 0, {-1}},
    {1, -100, -90, 1, 0, {-1}},
    {1, CK_SLICE_NONE, CK_SLICE_NONE, -3, 1, {0}},
    {1, -1, -11, -1, 1, {0}},
    {1, 10, 0, -1, 0, {-1}},
    {1, 2, -2, 2, 0, {-1}},
    {1, -2, 2, -1, 0, {-1}},
    {1, 100, CK_SLICE_NONE, -4, 1, {0}},
    {1, CK_SLICE_NONE, -100, -1, 1, {0}},
    {1, 3, 3, 1, 0, {-1}},
    {1, -100, 100, 7, 1, {0}},
    {1, 0, 1, -1, 0, {-1}},
    {1, CK_SLICE_NONE, 5, -1, 0, {-1}},
    {1, 5, CK_SLICE_NONE, -2, 1, {0}},
};

static void test_slicing_python(void) {
  for (size_t c = 0; c < sizeof slices / sizeof slices[0]; c++) {
    ck_array_preamble *a = iota(slices[c].len), *v = NULL;
    REQUIRE(a != NULL);
    ck_status st = ck_array_slice(a, 0, slices[c].start, slices[c].stop, slices[c].step, &v);
    CHECK(st == CK_OK);
    if (st == CK_OK) {
      int32_t got[16];
      intptr_t n = read_1d(v, got, 16);
      bool same = n == slices[c].n;
      for (intptr_t i = 0; same && i < n; i++) {
        same = got[i] == slices[c].expect[i];
      }
      if (!same) {
        fprintf(stderr, "slice case %zu: got %" PRIdPTR " items\n", c, n);
      }
      CHECK(same);
      CHECK(v->data_ref == &a->memblock);
      CHECK(ck_type_equal(v->type, a->type)); /* strided stays strided */
      ck_array_decref(v);
    }
    ck_array_decref(a);
  }
  /* Slices of slices: a[::-1][1::3] == [8, 5, 2]; views of views share data. */
  ck_array_preamble *a = iota(10), *v1, *v2;
  REQUIRE(a != NULL);
  REQUIRE_OK(ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &v1));
  REQUIRE_OK(ck_array_slice(v1, 0, 1, CK_SLICE_NONE, 3, &v2));
  ck_array_decref(v1);
  ck_array_decref(a); /* the views keep the data alive */
  int32_t got[8];
  CHECK(read_1d(v2, got, 8) == 3);
  CHECK(got[0] == 8 && got[1] == 5 && got[2] == 2);
  CHECK(v2->data_ref == &a->memblock); /* still the original block */
  ck_array_decref(v2);
  /* Extreme steps: clamped like Python, never overflow. */
  a = iota(5);
  REQUIRE(a != NULL);
  REQUIRE_OK(ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, INTPTR_MIN, &v1));
  CHECK(read_1d(v1, got, 8) == 1 && got[0] == 4);
  ck_array_decref(v1);
  REQUIRE_OK(ck_array_slice(a, 0, INTPTR_MAX, INTPTR_MIN + 1, -1, &v1));
  CHECK(read_1d(v1, got, 8) == 5 && got[0] == 4 && got[4] == 0);
  ck_array_decref(v1);
  REQUIRE_OK(ck_array_slice(a, 0, 3, 5, INTPTR_MAX, &v1));
  CHECK(read_1d(v1, got, 8) == 1 && got[0] == 3);
  ck_array_decref(v1);
  {
    /* A stride times a step that overflows (a foreign view with a huge stride). */
    intptr_t shape = 10, stride = INTPTR_MAX / 4;
    ck_array_preamble *e;
    REQUIRE_OK(ck_array_view_external(a->type, a->data, &shape, &stride, 1, 1, NULL, &e));
    CHECK_ERR(ck_array_slice(e, 0, 0, 10, 5, &v1), CK_ERR_OVERFLOW, "stride overflows");
    CHECK_ERR(ck_array_index(e, 0, 9, &v1), CK_ERR_OVERFLOW, "element offset overflows");
    ck_array_decref(e);
  }
  CHECK_ERR(ck_array_slice(a, 0, 0, 5, 0, &v1), CK_ERR_INVALID_ARGUMENT,
            "slice step cannot be zero");
  CHECK(v1 == NULL);
  ck_array_decref(a);
}

static void test_indexing(void) {
  ck_array_preamble *a = iota(4), *v;
  REQUIRE(a != NULL);
  REQUIRE_OK(ck_array_index(a, 0, 2, &v));
  CHECK(ck_type_id_of(v->type) == CK_TYPE_INT32 && ck_array_ndim(v) == 0);
  CHECK(*(const int32_t *)ck_array_data(v) == 2);
  CHECK(v->data_ref == &a->memblock && ck_memblock_refcount(&a->memblock) == 2);
  ck_array_decref(v);
  REQUIRE_OK(ck_array_index(a, 0, -1, &v));
  CHECK(*(const int32_t *)ck_array_data(v) == 3);
  ck_array_decref(v);
  REQUIRE_OK(ck_array_index(a, 0, -4, &v));
  CHECK(*(const int32_t *)ck_array_data(v) == 0);
  ck_array_decref(v);
  CHECK_ERR(ck_array_index(a, 0, 7, &v), CK_ERR_INDEX,
            "ck_array_index: index 7 is out of bounds for axis 0 with size 4");
  CHECK_ERR(ck_array_index(a, 0, -5, &v), CK_ERR_INDEX,
            "index -5 is out of bounds for axis 0 with size 4");
  CHECK_ERR(ck_array_index(a, 0, INTPTR_MIN, &v), CK_ERR_INDEX, "out of bounds");
  CHECK_ERR(ck_array_index(a, 1, 0, &v), CK_ERR_INDEX,
            "axis 1 is out of bounds for an array with 1 dimensions");
  CHECK_ERR(ck_array_index(NULL, 0, 0, &v), CK_ERR_INVALID_ARGUMENT, "must not be NULL");
  CHECK_ERR(ck_array_index(a, 0, 0, NULL), CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  ck_memblock *pod;
  REQUIRE_OK(ck_pod_memblock_new(0, &pod));
  CHECK_ERR(ck_array_index((ck_array_preamble *)(void *)pod, 0, 0, &v), CK_ERR_TYPE,
            "memblock of kind 'pod' is not an array");
  ck_memblock_decref(pod);
  ck_array_decref(a);

  /* 2-D: index and slice any axis. */
  ck_type t = P("strided * strided * int32");
  REQUIRE(t != NULL);
  intptr_t shape[] = {3, 4};
  REQUIRE_OK(ck_array_empty(t, shape, 2, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  int32_t *d = (int32_t *)a->data;
  for (int i = 0; i < 12; i++) {
    d[i] = (i / 4) * 10 + i % 4;
  }
  int32_t got[8];
  REQUIRE_OK(ck_array_index(a, 1, 2, &v)); /* column 2 */
  CHECK(strcmp(tstr(v->type), "strided * int32") == 0);
  CHECK(read_1d(v, got, 8) == 3 && got[0] == 2 && got[1] == 12 && got[2] == 22);
  ck_array_decref(v);
  REQUIRE_OK(ck_array_index(a, 0, -1, &v)); /* last row */
  CHECK(read_1d(v, got, 8) == 4 && got[0] == 20 && got[3] == 23);
  ck_array_decref(v);
  ck_array_preamble *w;
  REQUIRE_OK(ck_array_slice(a, 1, CK_SLICE_NONE, CK_SLICE_NONE, -2, &v)); /* cols 3, 1 */
  REQUIRE_OK(ck_array_index(v, 0, 2, &w));
  CHECK(read_1d(w, got, 8) == 2 && got[0] == 23 && got[1] == 21);
  ck_array_decref(w);
  intptr_t st[2];
  REQUIRE_OK(ck_array_strides(v, st, 2, NULL));
  CHECK(st[0] == 16 && st[1] == -8);
  ck_array_decref(v);
  CHECK_ERR(ck_array_index(a, 1, 4, &v), CK_ERR_INDEX,
            "index 4 is out of bounds for axis 1 with size 4");
  CHECK_ERR(ck_array_slice(a, 2, 0, 1, 1, &v), CK_ERR_INDEX,
            "axis 2 is out of bounds for an array with 2 dimensions");
  ck_array_decref(a);

  /* Fixed dims: slicing gives a fixed dim of the new length. */
  t = P("3 * 4 * int32");
  REQUIRE(t != NULL);
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  d = (int32_t *)a->data;
  for (int i = 0; i < 12; i++) {
    d[i] = (i / 4) * 10 + i % 4;
  }
  REQUIRE_OK(ck_array_slice(a, 1, 1, 3, 1, &v));
  CHECK(strcmp(tstr(v->type), "3 * 2 * int32") == 0);
  REQUIRE_OK(ck_array_strides(v, st, 2, NULL));
  CHECK(st[0] == 16 && st[1] == 4);
  REQUIRE_OK(ck_array_index(v, 0, 2, &w));
  CHECK(strcmp(tstr(w->type), "2 * int32") == 0);
  CHECK(read_1d(w, got, 8) == 2 && got[0] == 21 && got[1] == 22);
  ck_array_decref(w);
  ck_array_decref(v);
  REQUIRE_OK(ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, 1, &v));
  CHECK(v->type == a->type); /* full slice: the very same type */
  ck_array_decref(v);
  ck_array_decref(a);
}

static void test_strings(void) {
  int64_t blocks = ck_memblock_live_count();
  ck_type t = P("3 * string");
  REQUIRE(t != NULL);
  ck_array_preamble *a, *v;
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  CHECK(ck_memblock_live_count() == blocks + 2); /* the array and its arena */
  ck_string *s = (ck_string *)a->data;
  CHECK(s[0].begin == NULL && s[0].end == NULL && s[2].begin == NULL); /* empty */
  const ck_string_arrmeta *sm =
      (const ck_string_arrmeta *)(ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta));
  CHECK(sm->blockref != NULL && sm->blockref->kind == CK_MEMBLOCK_POD);
  static const char multi[] = "\xce\xb1\xce\xb2\xce\xb3 \xe2\x82\xac \xf0\x9f\x98\x80";
  static const char nuls[] = "a\0b\0\0c";
  REQUIRE_OK(ck_array_index(a, 0, 0, &v));
  CHECK(ck_type_id_of(v->type) == CK_TYPE_STRING);
  REQUIRE_OK(ck_array_string_assign(v, multi, sizeof multi - 1));
  ck_array_decref(v);
  REQUIRE_OK(ck_array_index(a, 0, -1, &v));
  REQUIRE_OK(ck_array_string_assign(v, nuls, sizeof nuls - 1));
  CHECK(((const ck_string_arrmeta *)ck_array_arrmeta(v))->blockref == sm->blockref);
  CHECK(ck_memblock_refcount(sm->blockref) == 2); /* the view's arrmeta shares it */
  ck_array_decref(a); /* the view keeps the array (and so the arena) alive */
  const ck_string *vs = (const ck_string *)ck_array_data(v);
  CHECK(vs->end - vs->begin == 6 && memcmp(vs->begin, nuls, 6) == 0);
  CHECK(ck_utf8_validate(vs->begin, 6));
  REQUIRE_OK(ck_array_string_assign(v, "", 0)); /* overwrite with empty */
  CHECK(vs->begin == vs->end);
  ck_array_decref(v);
  CHECK(ck_memblock_live_count() == blocks);

  /* Re-read from scratch to check the first string. */
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  REQUIRE_OK(ck_array_index(a, 0, 1, &v));
  REQUIRE_OK(ck_array_string_assign(v, multi, sizeof multi - 1));
  ck_array_decref(v);
  s = (ck_string *)a->data;
  CHECK(s[1].end - s[1].begin == (ptrdiff_t)(sizeof multi - 1));
  CHECK(memcmp(s[1].begin, multi, sizeof multi - 1) == 0);
  CHECK(ck_utf8_validate(s[1].begin, (size_t)(s[1].end - s[1].begin)));
  CHECK(s[0].begin == NULL);
  CHECK_ERR(ck_array_string_assign(a, "x", 1), CK_ERR_TYPE, "not string or bytes");
  ck_array_decref(a);
  ck_type_decref(t);

  /* Strings inside structs, reached through the type's offsets. */
  t = P("strided * {x: float64, name: string}");
  REQUIRE(t != NULL);
  intptr_t n = 2;
  REQUIRE_OK(ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  REQUIRE_OK(ck_array_index(a, 0, 1, &v));
  ck_type st = v->type;
  size_t doff, aoff;
  REQUIRE_OK(ck_struct_field(st, 1, NULL, NULL, &doff, &aoff));
  char *data;
  REQUIRE_OK(ck_array_writable_data(v, &data));
  REQUIRE_OK(ck_string_assign(data + doff, ck_array_arrmeta(v) + aoff, "bob", 3));
  const ck_string *name = (const ck_string *)(a->data + 24 + 8);
  CHECK(name->end - name->begin == 3 && memcmp(name->begin, "bob", 3) == 0);
  ck_array_decref(v);
  ck_array_decref(a);
  ck_type_decref(t);
  CHECK(ck_memblock_live_count() == blocks);
}

static void test_var_dims(void) {
  int64_t blocks = ck_memblock_live_count();
  ck_type t = P("3 * var * int32");
  REQUIRE(t != NULL);
  ck_array_preamble *a, *row, *el;
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  intptr_t sh[3];
  size_t nd;
  REQUIRE_OK(ck_array_shape(a, sh, 3, &nd));
  CHECK(nd == 2 && sh[0] == 3 && sh[1] == -1); /* ragged */
  static const size_t sizes[] = {0, 2, 5};
  for (intptr_t r = 0; r < 3; r++) {
    REQUIRE_OK(ck_array_index(a, 0, r, &row));
    CHECK(strcmp(tstr(row->type), "var * int32") == 0);
    REQUIRE_OK(ck_array_shape(row, sh, 3, &nd));
    CHECK(nd == 1 && sh[0] == 0); /* rows start empty */
    REQUIRE_OK(ck_array_var_dim_alloc(row, sizes[r]));
    REQUIRE_OK(ck_array_shape(row, sh, 3, &nd));
    CHECK(sh[0] == (intptr_t)sizes[r]);
    for (size_t j = 0; j < sizes[r]; j++) {
      REQUIRE_OK(ck_array_index(row, 0, (intptr_t)j, &el));
      CHECK(el->data_ref != NULL && el->data_ref->kind == CK_MEMBLOCK_POD);
      char *p;
      REQUIRE_OK(ck_array_writable_data(el, &p));
      CHECK(*(int32_t *)p == 0); /* zero-filled */
      *(int32_t *)p = (int32_t)(100 * r + (intptr_t)j);
      ck_array_decref(el);
    }
    ck_array_decref(row);
  }
  /* Read back through the raw layout. */
  const ck_var_dim_data *rows = (const ck_var_dim_data *)a->data;
  const ck_var_dim_arrmeta *vm =
      (const ck_var_dim_arrmeta *)(ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta));
  CHECK(rows[0].size == 0 && rows[1].size == 2 && rows[2].size == 5);
  CHECK(vm->stride == 4 && vm->offset == 0);
  CHECK(*(const int32_t *)(rows[2].begin + 4 * vm->stride) == 204);
  CHECK(*(const int32_t *)(rows[1].begin + 1 * vm->stride) == 101);
  /* Out of range in an empty row; var dims cannot be sliced or indexed deep. */
  REQUIRE_OK(ck_array_index(a, 0, 0, &row));
  CHECK_ERR(ck_array_index(row, 0, 0, &el), CK_ERR_INDEX,
            "index 0 is out of bounds for axis 0 with size 0");
  REQUIRE_OK(ck_array_slice(row, 0, 0, 1, 1, &el)); /* an empty slice of an empty row */
  CHECK(strcmp(tstr(el->type), "strided * int32") == 0);
  REQUIRE_OK(ck_array_shape(el, sh, 3, &nd));
  CHECK(nd == 1 && sh[0] == 0);
  ck_array_decref(el);
  ck_array_decref(row);
  CHECK_ERR(ck_array_index(a, 1, 0, &el), CK_ERR_NOT_SUPPORTED,
            "cannot index the var dim at axis 1");
  /* An element view outlives the array: the arena is its data_ref. */
  REQUIRE_OK(ck_array_index(a, 0, 2, &row));
  REQUIRE_OK(ck_array_index(row, 0, -1, &el));
  ck_array_decref(row);
  ck_array_decref(a);
  CHECK(*(const int32_t *)ck_array_data(el) == 204);
  ck_array_decref(el);
  CHECK(ck_memblock_live_count() == blocks);

  /* var * 3 * int32: indexing / slicing the inner fixed axis moves the var
   * offset, so every row sees its own element. */
  t = P("var * 3 * int32");
  REQUIRE(t != NULL);
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  REQUIRE_OK(ck_array_var_dim_alloc(a, 4));
  rows = (const ck_var_dim_data *)a->data;
  for (int i = 0; i < 12; i++) {
    ((int32_t *)rows->begin)[i] = (i / 3) * 10 + i % 3;
  }
  ck_array_preamble *col, *x;
  REQUIRE_OK(ck_array_index(a, 1, 2, &col));
  CHECK(strcmp(tstr(col->type), "var * int32") == 0);
  CHECK(((const ck_var_dim_arrmeta *)ck_array_arrmeta(col))->offset == 8);
  CHECK(col->data == a->data);
  REQUIRE_OK(ck_array_index(col, 0, 3, &x));
  CHECK(*(const int32_t *)ck_array_data(x) == 32);
  ck_array_decref(x);
  CHECK_ERR(ck_array_var_dim_alloc(col, 1), CK_ERR_NOT_SUPPORTED, "through a var dim view");
  ck_array_decref(col);
  REQUIRE_OK(ck_array_slice(a, 1, CK_SLICE_NONE, CK_SLICE_NONE, -2, &col));
  CHECK(strcmp(tstr(col->type), "var * 2 * int32") == 0);
  REQUIRE_OK(ck_array_index(col, 0, 1, &x));
  int32_t got[4];
  CHECK(read_1d(x, got, 4) == 2 && got[0] == 12 && got[1] == 10);
  ck_array_decref(x);
  ck_array_decref(col);
  ck_array_decref(a);

  /* var * var * string: nested arenas; write a string at [1][0]. */
  t = P("var * var * string");
  REQUIRE(t != NULL);
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  REQUIRE_OK(ck_array_var_dim_alloc(a, 2));
  REQUIRE_OK(ck_array_index(a, 0, 1, &row));
  REQUIRE_OK(ck_array_var_dim_alloc(row, 1));
  REQUIRE_OK(ck_array_index(row, 0, 0, &el));
  REQUIRE_OK(ck_array_string_assign(el, "hi\0!", 4));
  ck_array_decref(el);
  ck_array_decref(row);
  rows = (const ck_var_dim_data *)a->data;
  const ck_var_dim_data *inner = (const ck_var_dim_data *)(rows[0].begin + 16);
  CHECK(rows[0].size == 2 && inner->size == 1);
  const ck_string *hs = (const ck_string *)inner->begin;
  CHECK(hs->end - hs->begin == 4 && memcmp(hs->begin, "hi\0!", 4) == 0);
  ck_array_decref(a);
  CHECK(ck_memblock_live_count() == blocks);
}

static int released;
static void on_release(void *obj) {
  CHECK(obj == &released);
  released++;
}

static void test_external_views(void) {
  int32_t buf[12];
  for (int i = 0; i < 12; i++) {
    buf[i] = i;
  }
  ck_memblock *owner;
  released = 0;
  REQUIRE_OK(ck_external_memblock_new(&released, on_release, &owner));
  ck_type t = P("strided * strided * int32");
  REQUIRE(t != NULL);
  /* Rows reversed: element (i, j) = buf[(2 - i) * 4 + j]. */
  intptr_t shape[] = {3, 4}, strides[] = {-16, 4};
  ck_array_preamble *a, *v;
  REQUIRE_OK(ck_array_view_external(t, (char *)&buf[8], shape, strides, 2, CK_ARRAY_READ,
                                    owner, &a));
  CHECK(a->data_ref == owner && ck_memblock_refcount(owner) == 2);
  ck_memblock_decref(owner); /* the view holds it now */
  REQUIRE_OK(ck_array_index(a, 0, 0, &v));
  int32_t got[8];
  CHECK(read_1d(v, got, 8) == 4 && got[0] == 8 && got[3] == 11);
  CHECK(v->data_ref == owner); /* views reference the owner, not the view */
  ck_array_decref(v);
  REQUIRE_OK(ck_array_index(a, 1, -1, &v));
  CHECK(read_1d(v, got, 8) == 3 && got[0] == 11 && got[1] == 7 && got[2] == 3);
  ck_array_decref(a);
  CHECK(released == 0);
  char *w;
  CHECK_ERR(ck_array_writable_data(v, &w), CK_ERR_INVALID_STATE,
            "the array is read-only (flags 1: read_access)");
  CHECK(w == NULL);
  ck_array_decref(v);
  CHECK(released == 1);

  /* Fixed types: strides default to C order; blockref types are refused. */
  ck_type f = P("3 * 4 * int32");
  REQUIRE(f != NULL);
  REQUIRE_OK(ck_array_view_external(f, (char *)buf, NULL, NULL, 0, CK_ARRAY_DEFAULT_FLAGS,
                                    NULL, &a));
  REQUIRE_OK(ck_array_index(a, 0, 1, &v));
  CHECK(read_1d(v, got, 8) == 4 && got[0] == 4);
  CHECK(v->data_ref == NULL || v->data_ref == &a->memblock);
  ck_array_decref(v);
  ck_array_decref(a);
  ck_type s = P("strided * string");
  REQUIRE(s != NULL);
  CHECK_ERR(ck_array_view_external(s, (char *)buf, shape, NULL, 1, 1, NULL, &a), CK_ERR_TYPE,
            "type 'strided * string' has blockrefs");
  CHECK_ERR(ck_array_view_external(t, NULL, shape, NULL, 2, 1, NULL, &a),
            CK_ERR_INVALID_ARGUMENT, "data must not be NULL");
  CHECK_ERR(ck_array_view_external(t, (char *)buf, shape, NULL, 1, 1, NULL, &a),
            CK_ERR_INVALID_ARGUMENT, "no entry for a strided dim");
  CHECK_ERR(ck_array_view_external(t, (char *)buf, shape, NULL, 2, 16, NULL, &a),
            CK_ERR_INVALID_ARGUMENT, "unknown flag bits 0x10");
  ck_type_decref(s);
  ck_type_decref(f);
  ck_type_decref(t);
}

static void test_flags(void) {
  ck_array_preamble *a = iota(4), *v;
  REQUIRE(a != NULL);
  char *p;
  REQUIRE_OK(ck_array_writable_data(a, &p));
  CHECK(p == a->data);
  REQUIRE_OK(ck_array_slice(a, 0, 1, 3, 1, &v));
  CHECK(v->flags == CK_ARRAY_DEFAULT_FLAGS);
  REQUIRE_OK(ck_array_set_readonly(v));
  CHECK_ERR(ck_array_writable_data(v, &p), CK_ERR_INVALID_STATE, "read-only");
  REQUIRE_OK(ck_array_writable_data(a, &p)); /* the source is unaffected */
  ck_array_preamble *w;
  REQUIRE_OK(ck_array_index(v, 0, 0, &w)); /* views inherit read-only */
  CHECK(w->flags == CK_ARRAY_READ);
  CHECK_ERR(ck_array_writable_data(w, &p), CK_ERR_INVALID_STATE, "read-only");
  ck_array_decref(w);
  ck_array_decref(v);
  REQUIRE_OK(ck_array_set_immutable(a));
  CHECK(a->flags == (CK_ARRAY_READ | CK_ARRAY_IMMUTABLE));
  CHECK_ERR(ck_array_writable_data(a, &p), CK_ERR_INVALID_STATE,
            "flags 5: read_access immutable");
  CHECK_ERR(ck_array_writable_data(a, NULL), CK_ERR_INVALID_ARGUMENT, "out_data");
  CHECK_ERR(ck_array_set_readonly(NULL), CK_ERR_INVALID_ARGUMENT, "must not be NULL");
  ck_array_decref(a);

  /* Element setters respect the flags. */
  ck_type t = P("string");
  REQUIRE(t != NULL);
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_READ, &a));
  CHECK_ERR(ck_array_string_assign(a, "x", 1), CK_ERR_INVALID_STATE, "read-only");
  ck_array_decref(a);
  ck_type_decref(t);
  t = P("var * int8");
  REQUIRE(t != NULL);
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_READ | CK_ARRAY_IMMUTABLE, &a));
  CHECK_ERR(ck_array_var_dim_alloc(a, 3), CK_ERR_INVALID_STATE, "read-only");
  ck_array_decref(a);
  ck_type_decref(t);
  /* Accessors on NULL. */
  CHECK(ck_array_type(NULL) == NULL && ck_array_data(NULL) == NULL);
  CHECK(ck_array_flags(NULL) == 0 && ck_array_ndim(NULL) == 0);
  ck_array_decref(NULL);
  ck_array_incref(NULL);
}

/* Fail the k-th allocation in a sequence that makes a string / var array,
 * fills it and takes views; every failure is clean. */
/* Sets row r of a `... var * int32` row view to r*100 + j for j < n. */
static void fill_row(ck_array_preamble *row, intptr_t r, size_t n) {
  REQUIRE_OK(ck_array_var_dim_alloc(row, n));
  const ck_var_dim_data *v = (const ck_var_dim_data *)row->data;
  for (size_t j = 0; j < n; j++) {
    ((int32_t *)v->begin)[j] = (int32_t)(r * 100 + (intptr_t)j);
  }
}

/* Python's list slicing is the oracle: every (start, stop, step) over rows
 * of sizes 0..6, for the outermost var dim (a strided view in the arena) and
 * for an inner var dim under a strided dim (a new array sharing elements). */
static void test_var_dim_slicing(void) {
  int64_t blocks = ck_memblock_live_count(), types = ck_type_live_count();
  static const intptr_t bounds[] = {CK_SLICE_NONE, -9, -3, -1, 0, 1, 2, 5, 9};
  static const intptr_t steps[] = {1, 2, 3, -1, -2};
  ck_type t = P("strided * var * int32");
  REQUIRE(t != NULL);
  intptr_t nrows = 7;
  ck_array_preamble *a, *row, *s, *x;
  REQUIRE_OK(ck_array_empty(t, &nrows, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  for (intptr_t r = 0; r < nrows; r++) {
    REQUIRE_OK(ck_array_index(a, 0, r, &row));
    fill_row(row, r, (size_t)r);
    ck_array_decref(row);
  }
  int checked = 0;
  for (size_t bi = 0; bi < 9; bi++) {
    for (size_t ei = 0; ei < 9; ei++) {
      for (size_t si = 0; si < 5; si++) {
        intptr_t b = bounds[bi], e = bounds[ei], st = steps[si];
        /* axis 1 (inner var): a new array with per-row slices */
        REQUIRE_OK(ck_array_slice(a, 1, b, e, st, &s));
        CHECK(strcmp(tstr(s->type), "strided * var * int32") == 0);
        CHECK(s->data != a->data);
        for (intptr_t r = 0; r < nrows; r++) {
          /* the expected Python slice of list(range(r)) */
          intptr_t exp[8], ne = 0;
          intptr_t lo = b, hi = e;
          intptr_t len = r;
          intptr_t s0, s1;
          if (st > 0) {
            s0 = lo == CK_SLICE_NONE ? 0 : lo < 0 ? (lo + len < 0 ? 0 : lo + len) : (lo > len ? len : lo);
            s1 = hi == CK_SLICE_NONE ? len : hi < 0 ? (hi + len < 0 ? 0 : hi + len) : (hi > len ? len : hi);
            for (intptr_t i = s0; i < s1; i += st) exp[ne++] = i;
          } else {
            s0 = lo == CK_SLICE_NONE ? len - 1 : lo < 0 ? (lo + len < 0 ? -1 : lo + len) : (lo >= len ? len - 1 : lo);
            s1 = hi == CK_SLICE_NONE ? -1 : hi < 0 ? (hi + len < 0 ? -1 : hi + len) : (hi >= len ? len - 1 : hi);
            for (intptr_t i = s0; i > s1; i += st) exp[ne++] = i;
          }
          REQUIRE_OK(ck_array_index(s, 0, r, &row));
          intptr_t sh;
          size_t nd;
          REQUIRE_OK(ck_array_shape(row, &sh, 1, &nd));
          CHECK(sh == ne);
          for (intptr_t j = 0; j < ne; j++) {
            REQUIRE_OK(ck_array_index(row, 0, j, &x));
            CHECK(*(const int32_t *)ck_array_data(x) == (int32_t)(r * 100 + exp[j]));
            ck_array_decref(x);
            checked++;
          }
          ck_array_decref(row);
          /* axis 0 of the row (outermost var dim): a strided view */
          REQUIRE_OK(ck_array_index(a, 0, r, &row));
          REQUIRE_OK(ck_array_slice(row, 0, b, e, st, &x));
          CHECK(strcmp(tstr(x->type), "strided * int32") == 0);
          int32_t got[8];
          CHECK(read_1d(x, got, 8) == ne);
          for (intptr_t j = 0; j < ne; j++) {
            CHECK(got[j] == (int32_t)(r * 100 + exp[j]));
          }
          ck_array_decref(x);
          ck_array_decref(row);
        }
        ck_array_decref(s);
      }
    }
  }
  CHECK(checked > 1000);
  /* Elements are shared: writing through the slice writes the source. */
  REQUIRE_OK(ck_array_slice(a, 1, 1, CK_SLICE_NONE, 2, &s));
  REQUIRE_OK(ck_array_index(s, 0, 5, &row));
  REQUIRE_OK(ck_array_index(row, 0, 1, &x)); /* source element [5][3] */
  char *p;
  REQUIRE_OK(ck_array_writable_data(x, &p));
  *(int32_t *)p = -7;
  ck_array_decref(x);
  /* a row of the slice can be given new elements: they go to the slice's
   * own slot (in the shared arena), the source row stays as it was */
  REQUIRE_OK(ck_array_var_dim_alloc(row, 1));
  ck_array_decref(row);
  ck_array_decref(s);
  REQUIRE_OK(ck_array_index(a, 0, 5, &row));
  REQUIRE_OK(ck_array_index(row, 0, 3, &x));
  CHECK(*(const int32_t *)ck_array_data(x) == -7);
  ck_array_decref(x);
  ck_array_decref(row);
  /* The outermost view outlives the array (it references the arena). */
  REQUIRE_OK(ck_array_index(a, 0, 6, &row));
  REQUIRE_OK(ck_array_slice(row, 0, 1, 4, 1, &s));
  ck_array_decref(row);
  ck_array_decref(a);
  int32_t got[4];
  CHECK(read_1d(s, got, 4) == 3 && got[0] == 601 && got[2] == 603);
  CHECK_ERR(ck_array_slice(s, 0, 0, 2, 0, &x), CK_ERR_INVALID_ARGUMENT, "step cannot be zero");
  ck_array_decref(s);
  /* A var dim below another var dim is not sliced. */
  t = P("var * var * int32");
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  CHECK_ERR(ck_array_slice(a, 1, 0, 1, 1, &s), CK_ERR_NOT_SUPPORTED,
            "below the var dim at axis 0");
  REQUIRE_OK(ck_array_slice(a, 0, 0, 1, 1, &s)); /* empty outer var dim */
  CHECK(strcmp(tstr(s->type), "strided * var * int32") == 0);
  ck_array_decref(s);
  ck_array_decref(a);
  /* Strings under a sliced inner var dim keep their arena. */
  t = P("2 * var * string");
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  REQUIRE_OK(ck_array_index(a, 0, 1, &row));
  REQUIRE_OK(ck_array_var_dim_alloc(row, 3));
  REQUIRE_OK(ck_array_index(row, 0, 2, &x));
  REQUIRE_OK(ck_array_string_assign(x, "three", 5));
  ck_array_decref(x);
  ck_array_decref(row);
  REQUIRE_OK(ck_array_slice(a, 1, -1, CK_SLICE_NONE, 1, &s));
  ck_array_decref(a);
  REQUIRE_OK(ck_array_index(s, 0, 1, &row));
  REQUIRE_OK(ck_array_index(row, 0, 0, &x));
  const ck_string *str = (const ck_string *)ck_array_data(x);
  CHECK(str->end - str->begin == 5 && memcmp(str->begin, "three", 5) == 0);
  ck_array_decref(x);
  ck_array_decref(row);
  ck_array_decref(s);
  CHECK(ck_memblock_live_count() == blocks);
  CHECK(ck_type_live_count() == types);
}

/* ck_array_view_dims against the NumPy rules it implements: transposes,
 * reshapes, new axes, broadcasting; bounds, alignment and var dims refused. */
static void test_view_dims(void) {
  int64_t blocks = ck_memblock_live_count();
  ck_array_preamble *a = iota(12), *v, *w;
  REQUIRE(a != NULL);
  /* reshape 12 -> 3 x 4, then transpose: element [i][j] = 4 j + i */
  intptr_t sh[2] = {3, 4}, st[2] = {16, 4};
  REQUIRE_OK(ck_array_view_dims(a, 1, 2, sh, st, 0, &v));
  CHECK(strcmp(tstr(v->type), "strided * strided * int32") == 0);
  CHECK(v->data == a->data && v->data_ref == &a->memblock);
  intptr_t tsh[2] = {4, 3}, tst[2] = {4, 16};
  REQUIRE_OK(ck_array_view_dims(v, 2, 2, tsh, tst, 0, &w));
  ck_array_decref(v);
  for (intptr_t i = 0; i < 4; i++) {
    for (intptr_t j = 0; j < 3; j++) {
      ck_array_preamble *r, *e;
      REQUIRE_OK(ck_array_index(w, 0, i, &r));
      REQUIRE_OK(ck_array_index(r, 0, j, &e));
      CHECK(*(const int32_t *)ck_array_data(e) == (int32_t)(4 * j + i));
      ck_array_decref(e);
      ck_array_decref(r);
    }
  }
  ck_array_decref(w);
  /* a new axis (stride 0) and a broadcast row; 0-d views of one element */
  intptr_t nsh[3] = {1, 5, 12}, nst[3] = {0, 0, 4};
  REQUIRE_OK(ck_array_view_dims(a, 1, 3, nsh, nst, 0, &v));
  CHECK(ck_array_ndim(v) == 3);
  ck_array_decref(v);
  REQUIRE_OK(ck_array_view_dims(a, 1, 0, NULL, NULL, 44, &v));
  CHECK(strcmp(tstr(v->type), "int32") == 0 && *(const int32_t *)ck_array_data(v) == 11);
  ck_array_decref(v);
  /* reversed, and a sub-range with an offset */
  intptr_t rsh = 12, rst = -4;
  REQUIRE_OK(ck_array_view_dims(a, 1, 1, &rsh, &rst, 44, &v));
  int32_t got[12];
  CHECK(read_1d(v, got, 12) == 12 && got[0] == 11 && got[11] == 0);
  ck_array_decref(v);
  /* outside the array: past the end, before the start, a too-long dim */
  intptr_t one = 1, four = 4, big = 13;
  CHECK_ERR(ck_array_view_dims(a, 1, 0, NULL, NULL, 48, &v), CK_ERR_INDEX, "outside the array");
  CHECK_ERR(ck_array_view_dims(a, 1, 0, NULL, NULL, -4, &v), CK_ERR_INDEX, "outside the array");
  CHECK_ERR(ck_array_view_dims(a, 1, 1, &big, &four, 0, &v), CK_ERR_INDEX, "outside the array");
  CHECK_ERR(ck_array_view_dims(a, 1, 1, &rsh, &rst, 40, &v), CK_ERR_INDEX, "outside the array");
  intptr_t huge = INTPTR_MAX;
  CHECK_ERR(ck_array_view_dims(a, 1, 1, &huge, &four, 0, &v), CK_ERR_INDEX, "outside the array");
  /* misaligned stride / offset; negative size; too many dims */
  intptr_t two = 2, odd = 2;
  CHECK_ERR(ck_array_view_dims(a, 1, 1, &two, &odd, 0, &v), CK_ERR_INVALID_ARGUMENT,
            "alignment");
  CHECK_ERR(ck_array_view_dims(a, 1, 1, &one, &four, 2, &v), CK_ERR_INVALID_ARGUMENT,
            "alignment");
  intptr_t neg = -1;
  CHECK_ERR(ck_array_view_dims(a, 1, 1, &neg, &four, 0, &v), CK_ERR_INVALID_ARGUMENT,
            "negative size");
  CHECK_ERR(ck_array_view_dims(a, 2, 0, NULL, NULL, 0, &v), CK_ERR_INDEX, "has 1 dims");
  /* an empty view needs nothing; an empty array gives only empty views */
  intptr_t zero = 0;
  REQUIRE_OK(ck_array_view_dims(a, 1, 1, &zero, &four, 1000, &v));
  CHECK(v->data == a->data);
  REQUIRE_OK(ck_array_view_dims(v, 1, 1, &zero, &four, 0, &w));
  ck_array_decref(w);
  CHECK_ERR(ck_array_view_dims(v, 1, 0, NULL, NULL, 0, &w), CK_ERR_INDEX,
            "outside the array");
  ck_array_decref(v);
  /* flags are inherited; the view outlives the array */
  REQUIRE_OK(ck_array_set_readonly(a));
  REQUIRE_OK(ck_array_view_dims(a, 1, 1, &four, &four, 32, &v));
  CHECK(v->flags == CK_ARRAY_READ);
  ck_array_decref(a);
  CHECK(read_1d(v, got, 12) == 4 && got[0] == 8 && got[3] == 11);
  ck_array_decref(v);
  /* below the k dims: strings and fixed dims keep their arrmeta */
  ck_type t = P("strided * 2 * string");
  intptr_t n = 3;
  REQUIRE_OK(ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  intptr_t ssh[2] = {3, 1}, sst[2] = {32, 0};
  REQUIRE_OK(ck_array_view_dims(a, 1, 2, ssh, sst, 0, &v));
  CHECK(strcmp(tstr(v->type), "strided * strided * 2 * string") == 0);
  ck_array_preamble *r, *e;
  REQUIRE_OK(ck_array_index(v, 0, 2, &r));
  REQUIRE_OK(ck_array_index(r, 0, 0, &w));
  REQUIRE_OK(ck_array_index(w, 0, 1, &e));
  REQUIRE_OK(ck_array_string_assign(e, "x", 1));
  ck_array_decref(e);
  ck_array_decref(w);
  ck_array_decref(r);
  ck_array_decref(v);
  const ck_string *str = (const ck_string *)(a->data + 2 * 32 + 16);
  CHECK(str->end - str->begin == 1 && *str->begin == 'x');
  /* the 2 * string dim can be re-strided too (k = 2), var dims cannot */
  intptr_t fsh = 6, fst = 16;
  REQUIRE_OK(ck_array_view_dims(a, 2, 1, &fsh, &fst, 0, &v));
  CHECK(strcmp(tstr(v->type), "strided * string") == 0);
  ck_array_decref(v);
  ck_array_decref(a);
  t = P("var * int32");
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  CHECK_ERR(ck_array_view_dims(a, 1, 1, &one, &four, 0, &v), CK_ERR_NOT_SUPPORTED,
            "var dim");
  intptr_t vsh = 2, vst = 0;
  REQUIRE_OK(ck_array_view_dims(a, 0, 1, &vsh, &vst, 0, &v)); /* a new axis above */
  CHECK(strcmp(tstr(v->type), "strided * var * int32") == 0);
  ck_array_decref(v);
  ck_array_decref(a);
  CHECK_ERR(ck_array_view_dims(NULL, 0, 0, NULL, NULL, 0, &v), CK_ERR_INVALID_ARGUMENT,
            "NULL");
  CHECK(ck_memblock_live_count() == blocks);
}

/* ck_array_empty_uninit leaves POD data alone and zeroes blockref slots. */
static void test_empty_uninit(void) {
  int64_t blocks = ck_memblock_live_count();
  ck_type t = P("strided * float64");
  intptr_t n = 1 << 20; /* 8 MiB: a fresh mapping, nothing touched */
  ck_array_preamble *a;
  REQUIRE_OK(ck_array_empty_uninit(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  CHECK((uintptr_t)a->data % 8 == 0 && a->data_ref == NULL && a->flags == 3);
  for (intptr_t i = 0; i < n; i++) {
    ((double *)a->data)[i] = (double)i;
  }
  CHECK(((double *)a->data)[n - 1] == (double)(n - 1));
  ck_array_decref(a);
  /* zero-filled for every type with blockrefs, whatever was there before */
  static const char *const zeroed[] = {"strided * string", "strided * var * int8",
                                       "strided * {a: int8, s: string}",
                                       "strided * pointer[int32]"};
  for (size_t k = 0; k < 4; k++) {
    ck_type z = P(zeroed[k]);
    intptr_t m = 5000;
    REQUIRE_OK(ck_array_empty_uninit(z, &m, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
    size_t bytes = (size_t)m * ck_type_data_size(z->element);
    bool all_zero = true;
    for (size_t i = 0; i < bytes; i++) {
      all_zero = all_zero && a->data[i] == 0;
    }
    CHECK(all_zero);
    ck_array_decref(a);
    ck_type_decref(z);
  }
  /* ck_array_empty zero-fills POD data (calloc or clearing) */
  REQUIRE_OK(ck_array_empty_uninit(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  memset(a->data, 0xff, (size_t)n * 8);
  ck_array_decref(a);
  REQUIRE_OK(ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  bool all_zero = true;
  for (intptr_t i = 0; i < n; i++) {
    all_zero = all_zero && ((double *)a->data)[i] == 0.0;
  }
  CHECK(all_zero);
  ck_array_decref(a);
  /* a large alignment takes the aligned path */
  ck_type wide = P("strided * {x: complex128, y: int8}");
  REQUIRE_OK(ck_array_empty(wide, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  CHECK((uintptr_t)a->data % ck_type_data_alignment(wide) == 0);
  ck_array_decref(a);
  ck_type_decref(wide);
  CHECK_ERR(ck_array_empty_uninit(t, &n, 1, 6, &a), CK_ERR_INVALID_ARGUMENT, "exclusive");
  CHECK_ERR(ck_array_empty_uninit(t, NULL, 1, 3, &a), CK_ERR_INVALID_ARGUMENT, "shape is NULL");
  CHECK_ERR(ck_array_empty_uninit(t, &n, 1, 3, NULL), CK_ERR_INVALID_ARGUMENT, "out");
  ck_type_decref(t);
  CHECK(ck_memblock_live_count() == blocks);
}

/* Struct fields as views, under strided and var dims, nested, with strings. */
static void test_fields(void) {
  int64_t blocks = ck_memblock_live_count();
  ck_type t = P("strided * {a: int8, p: {x: float64, name: string}, v: var * int16}");
  REQUIRE(t != NULL);
  intptr_t n = 3;
  ck_array_preamble *a, *f, *g, *e;
  REQUIRE_OK(ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  size_t esize = ck_type_data_size(ck_type_element(a->type));
  REQUIRE_OK(ck_array_field(a, "pxyz", 1, &f)); /* "p": length-delimited */
  CHECK(strcmp(tstr(f->type), "strided * {x: float64, name: string}") == 0);
  REQUIRE_OK(ck_array_field(f, "x", 1, &g));
  CHECK(strcmp(tstr(g->type), "strided * float64") == 0);
  intptr_t stride;
  REQUIRE_OK(ck_array_strides(g, &stride, 1, NULL));
  CHECK(stride == (intptr_t)esize && g->data == a->data + 8);
  for (intptr_t i = 0; i < 3; i++) {
    REQUIRE_OK(ck_array_index(g, 0, i, &e));
    *(double *)e->data = 1.5 * (double)i;
    ck_array_decref(e);
  }
  ck_array_decref(g);
  REQUIRE_OK(ck_array_field(f, "name", 4, &g));
  REQUIRE_OK(ck_array_index(g, 0, 2, &e));
  REQUIRE_OK(ck_array_string_assign(e, "two", 3));
  ck_array_decref(e);
  ck_array_decref(g);
  ck_array_decref(f);
  CHECK(*(const double *)(a->data + 2 * esize + 8) == 3.0);
  const ck_string *s = (const ck_string *)(a->data + 2 * esize + 16);
  CHECK(s->end - s->begin == 3 && memcmp(s->begin, "two", 3) == 0);
  /* a var dim field: its arena is the struct's */
  REQUIRE_OK(ck_array_field(a, "v", 1, &f));
  CHECK(strcmp(tstr(f->type), "strided * var * int16") == 0);
  REQUIRE_OK(ck_array_index(f, 0, 1, &g));
  REQUIRE_OK(ck_array_var_dim_alloc(g, 2));
  ck_array_decref(g);
  ck_array_decref(f);
  const ck_var_dim_data *vd = (const ck_var_dim_data *)(a->data + esize + 32);
  CHECK(vd->size == 2);
  CHECK_ERR(ck_array_field(a, "q", 1, &f), CK_ERR_INDEX, "no field 'q'");
  CHECK_ERR(ck_array_field(a, "a\0", 2, &f), CK_ERR_INDEX, "no field");
  CHECK_ERR(ck_array_field(a, "", 0, &f), CK_ERR_INDEX, "no field ''");
  CHECK_ERR(ck_array_field(a, NULL, 1, &f), CK_ERR_INVALID_ARGUMENT, "name is NULL");
  REQUIRE_OK(ck_array_index(a, 0, 0, &e)); /* 0-d struct */
  REQUIRE_OK(ck_array_field(e, "a", 1, &f));
  CHECK(strcmp(tstr(f->type), "int8") == 0 && f->data == e->data);
  CHECK_ERR(ck_array_field(f, "a", 1, &g), CK_ERR_TYPE, "no fields");
  ck_array_decref(f);
  ck_array_decref(e);
  ck_array_decref(a);
  /* under a var dim the field offset goes into the var arrmeta */
  t = P("var * {x: int32, y: int32}");
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  REQUIRE_OK(ck_array_var_dim_alloc(a, 4));
  int32_t *raw = (int32_t *)((const ck_var_dim_data *)a->data)->begin;
  for (int i = 0; i < 8; i++) {
    raw[i] = i;
  }
  REQUIRE_OK(ck_array_field(a, "y", 1, &f));
  CHECK(strcmp(tstr(f->type), "var * int32") == 0 && f->data == a->data);
  CHECK(((const ck_var_dim_arrmeta *)ck_array_arrmeta(f))->offset == 4);
  REQUIRE_OK(ck_array_index(f, 0, 3, &e));
  CHECK(*(const int32_t *)e->data == 7);
  ck_array_decref(e);
  ck_array_decref(f);
  ck_array_decref(a);
  CHECK(ck_memblock_live_count() == blocks);
}

static ck_status fault_sequence(void) {
  ck_type t = NULL;
  ck_array_preamble *a = NULL, *row = NULL, *el = NULL, *s = NULL;
  ck_status st;
  if ((st = ck_type_parse("strided * var * {name: string, v: 2 * float64}", &t)) != CK_OK) goto done;
  intptr_t n = 3;
  if ((st = ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a)) != CK_OK) goto done;
  for (intptr_t r = 0; r < 3; r++) {
    if ((st = ck_array_index(a, 0, r, &row)) != CK_OK) goto done;
    if ((st = ck_array_var_dim_alloc(row, (size_t)r * 40)) != CK_OK) goto done;
    for (intptr_t j = 0; j < r * 40; j += 7) {
      if ((st = ck_array_index(row, 0, j, &el)) != CK_OK) goto done;
      char *d;
      if ((st = ck_array_writable_data(el, &d)) != CK_OK) goto done;
      if ((st = ck_string_assign(d, ck_array_arrmeta(el) + 2 * sizeof(uintptr_t),
                                 "0123456789abcdef0123456789abcdef", 32)) != CK_OK) goto done;
      ck_array_decref(el);
      el = NULL;
    }
    ck_array_decref(row);
    row = NULL;
  }
  if ((st = ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &s)) != CK_OK) goto done;
  ck_array_decref(s);
  s = NULL;
  if ((st = ck_array_slice(a, 1, 1, CK_SLICE_NONE, 2, &s)) != CK_OK) goto done;
  ck_array_decref(s);
  s = NULL;
  {
    intptr_t sh[2] = {1, 3}, strd[2] = {0, 16};
    if ((st = ck_array_view_dims(a, 1, 2, sh, strd, 0, &s)) != CK_OK) goto done;
    ck_array_decref(s);
    s = NULL;
  }
  if ((st = ck_array_index(a, 0, 2, &row)) != CK_OK) goto done;
  if ((st = ck_array_slice(row, 0, 1, 30, 3, &s)) != CK_OK) goto done;
  ck_array_decref(s);
  s = NULL;
  if ((st = ck_array_empty_uninit(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &s)) != CK_OK) goto done;
  ck_array_decref(s);
  s = NULL;
  if ((st = ck_array_field(row, "name", 4, &s)) != CK_OK) goto done;
done:
  ck_array_decref(s);
  ck_array_decref(el);
  ck_array_decref(row);
  ck_array_decref(a);
  ck_type_decref(t);
  return st;
}

static void test_fault_injection(void) {
  int64_t blocks = ck_memblock_live_count(), types = ck_type_live_count();
  ck_test_faults f = CK_TEST_FAULTS(100000);
  while (ck_test_faults_arm(&f)) {
    ck_status st = fault_sequence();
    bool fired = ck_test_faults_fired(&f);
    CHECK(ck_memblock_live_count() == blocks);
    CHECK(ck_type_live_count() == types);
    if (!fired) {
      CHECK(st == CK_OK);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    CHECK(strstr(ck_last_error(), "out of memory") != NULL);
  }
  CHECK(f.runs >= 30);
  CHECK(fault_sequence() == CK_OK);
}

CK_TEST_MAIN(CK_TEST(test_empty_every_builtin), CK_TEST(test_fixed_and_shapes),
             CK_TEST(test_debug_repr), CK_TEST(test_slicing_python),
             CK_TEST(test_indexing), CK_TEST(test_strings), CK_TEST(test_var_dims),
             CK_TEST(test_var_dim_slicing), CK_TEST(test_view_dims),
             CK_TEST(test_empty_uninit), CK_TEST(test_fields), CK_TEST(test_external_views), CK_TEST(test_flags),
             CK_TEST(test_fault_injection))
