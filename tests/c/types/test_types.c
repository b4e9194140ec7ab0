/* Types: builtin encoding, every descriptor kind's sizes and arrmeta, the
 * constructors' validation, equality/hash, arrmeta construct/copy/destruct
 * with the live counters, string/var element helpers, UTF-8 validation. */
#include "ck_test.h"

#include <stdalign.h>

static void test_builtins(void) {
  static const struct {
    ck_type_id id;
    const char *name;
    size_t size, align;
    char kind;
  } table[] = {
      {CK_TYPE_BOOL, "bool", 1, 1, 'b'},
      {CK_TYPE_INT8, "int8", 1, 1, 'i'},
      {CK_TYPE_INT16, "int16", 2, 2, 'i'},
      {CK_TYPE_INT32, "int32", 4, 4, 'i'},
      {CK_TYPE_INT64, "int64", 8, alignof(int64_t), 'i'},
      {CK_TYPE_UINT8, "uint8", 1, 1, 'u'},
      {CK_TYPE_UINT16, "uint16", 2, 2, 'u'},
      {CK_TYPE_UINT32, "uint32", 4, 4, 'u'},
      {CK_TYPE_UINT64, "uint64", 8, alignof(uint64_t), 'u'},
      {CK_TYPE_FLOAT16, "float16", 2, 2, 'f'},
      {CK_TYPE_FLOAT32, "float32", 4, 4, 'f'},
      {CK_TYPE_FLOAT64, "float64", 8, alignof(double), 'f'},
      {CK_TYPE_COMPLEX64, "complex64", 8, 4, 'c'},
      {CK_TYPE_COMPLEX128, "complex128", 16, alignof(double), 'c'},
  };
  CHECK(sizeof table / sizeof table[0] == CK_BUILTIN_TYPE_COUNT - 1);
  int64_t live = ck_type_live_count();
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    ck_type t = CK_BUILTIN(table[i].id);
    CHECK(ck_type_is_builtin(t));
    CHECK(ck_type_is_valid(t));
    CHECK(ck_type_id_of(t) == table[i].id);
    CHECK(ck_type_data_size(t) == table[i].size);
    CHECK(ck_type_data_alignment(t) == table[i].align);
    CHECK(ck_type_id_kind(table[i].id) == table[i].kind);
    CHECK(ck_type_arrmeta_size(t) == 0);
    CHECK(ck_type_flags(t) == 0);
    CHECK(ck_type_ndim(t) == 0);
    CHECK(ck_type_element(t) == NULL);
    CHECK(ck_type_dtype(t) == t);
    CHECK(strcmp(ck_type_id_name(table[i].id), table[i].name) == 0);
    CHECK(strcmp(tstr(t), table[i].name) == 0);
    ck_type_incref(t); /* no-ops */
    ck_type_decref(t);
    ck_type_decref(t);
    CHECK(ck_type_equal(t, CK_BUILTIN(table[i].id)));
    CHECK(ck_type_hash(t) == ck_type_hash(CK_BUILTIN(table[i].id)));
    for (size_t j = 0; j < i; j++) {
      CHECK(!ck_type_equal(t, CK_BUILTIN(table[j].id)));
      CHECK(ck_type_hash(t) != ck_type_hash(CK_BUILTIN(table[j].id)));
    }
  }
  CHECK(ck_type_live_count() == live);
  /* Unused ids and NULL are not valid types. */
  CHECK(!ck_type_is_valid(NULL));
  CHECK(!ck_type_is_valid(CK_BUILTIN(CK_BUILTIN_TYPE_COUNT)));
  CHECK(!ck_type_is_valid(CK_BUILTIN(63)));
  CHECK(ck_type_id_of(CK_BUILTIN(40)) == CK_TYPE_UNINITIALIZED);
  CHECK(ck_type_data_size(NULL) == 0 && ck_type_data_alignment(NULL) == 1);
  CHECK(strcmp(ck_type_id_name((ck_type_id)99), "invalid") == 0);
  CHECK(ck_type_id_kind((ck_type_id)99) == 0 && ck_type_id_kind(CK_TYPE_STRING) == 0 &&
        ck_type_id_kind(CK_TYPE_UNINITIALIZED) == 0);
  CHECK_ERR(ck_type_print(CK_BUILTIN(50), ck_test_tbuf, sizeof ck_test_tbuf, NULL),
            CK_ERR_INVALID_ARGUMENT, "invalid type");
  size_t n = 0;
  CHECK_ERR(ck_type_print(CK_BUILTIN(CK_TYPE_INT8), NULL, 5, &n),
            CK_ERR_INVALID_ARGUMENT, "buf is NULL");
}

static void test_dims(void) {
  int64_t live = ck_type_live_count();
  ck_type i32 = CK_BUILTIN(CK_TYPE_INT32), f3 = NULL, s = NULL, v = NULL, sf = NULL;
  REQUIRE_OK(ck_fixed_dim_type_new(3, i32, &f3));
  CHECK(ck_type_live_count() == live + 1);
  CHECK(!ck_type_is_builtin(f3));
  CHECK(ck_type_id_of(f3) == CK_TYPE_FIXED_DIM);
  CHECK(ck_type_data_size(f3) == 12);
  CHECK(ck_type_data_alignment(f3) == 4);
  CHECK(ck_type_arrmeta_size(f3) == sizeof(ck_dim_arrmeta));
  CHECK(ck_type_flags(f3) == CK_TYPE_FLAG_DIM);
  CHECK(ck_fixed_dim_size(f3) == 3);
  CHECK(ck_type_element(f3) == i32);
  CHECK(strcmp(tstr(f3), "3 * int32") == 0);
  CHECK(f3->refcount == 1 && f3->depth == 2);

  REQUIRE_OK(ck_strided_dim_type_new(f3, &s));
  CHECK(f3->refcount == 2); /* the constructor took its own reference */
  CHECK(ck_type_data_size(s) == 0);
  CHECK(ck_type_data_alignment(s) == 4);
  CHECK(ck_type_arrmeta_size(s) == 2 * sizeof(ck_dim_arrmeta));
  CHECK(ck_type_flags(s) == (CK_TYPE_FLAG_DIM | CK_TYPE_FLAG_ARRMETA_SIZED));
  CHECK(ck_type_ndim(s) == 2);
  CHECK(ck_type_dtype(s) == i32);
  CHECK(ck_fixed_dim_size(s) == -1);
  CHECK(strcmp(tstr(s), "strided * 3 * int32") == 0);

  REQUIRE_OK(ck_var_dim_type_new(f3, &v));
  CHECK(ck_type_data_size(v) == sizeof(ck_var_dim_data));
  CHECK(ck_type_data_alignment(v) == alignof(ck_var_dim_data));
  CHECK(ck_type_arrmeta_size(v) == sizeof(ck_var_dim_arrmeta) + sizeof(ck_dim_arrmeta));
  CHECK(ck_type_flags(v) == (CK_TYPE_FLAG_DIM | CK_TYPE_FLAG_BLOCKREF));
  CHECK(strcmp(tstr(v), "var * 3 * int32") == 0);

  /* strided of strided is fine; anything else over a strided dim is not. */
  REQUIRE_OK(ck_strided_dim_type_new(s, &sf));
  CHECK(strcmp(tstr(sf), "strided * strided * 3 * int32") == 0);
  ck_type bad = CK_BUILTIN(CK_TYPE_INT8);
  CHECK_ERR(ck_fixed_dim_type_new(2, s, &bad), CK_ERR_TYPE, "needs a fixed data size");
  CHECK(bad == NULL);
  CHECK_ERR(ck_var_dim_type_new(s, &bad), CK_ERR_TYPE, "'strided * 3 * int32'");
  CHECK_ERR(ck_pointer_type_new(s, &bad), CK_ERR_TYPE, "the target of a pointer");
  CHECK_ERR(ck_fixed_dim_type_new(-1, i32, &bad), CK_ERR_INVALID_ARGUMENT,
            "negative dimension size -1");
  CHECK_ERR(ck_fixed_dim_type_new(3, NULL, &bad), CK_ERR_INVALID_ARGUMENT,
            "not a valid type");
  CHECK_ERR(ck_fixed_dim_type_new(3, CK_BUILTIN(33), &bad), CK_ERR_INVALID_ARGUMENT,
            "not a valid type");
  CHECK_ERR(ck_fixed_dim_type_new(3, i32, NULL), CK_ERR_INVALID_ARGUMENT,
            "out must not be NULL");
  CHECK_ERR(ck_fixed_dim_type_new(INTPTR_MAX / 2, i32, &bad), CK_ERR_OVERFLOW,
            "overflows");
  /* Zero-sized dims are fine. */
  ck_type z;
  REQUIRE_OK(ck_fixed_dim_type_new(0, i32, &z));
  CHECK(ck_type_data_size(z) == 0);
  ck_type_decref(z);

  ck_type_decref(sf);
  ck_type_decref(v);
  ck_type_decref(s);
  CHECK(f3->refcount == 1);
  ck_type_decref(f3);
  CHECK(ck_type_live_count() == live);
}

static void test_string_bytes_pointer(void) {
  int64_t live = ck_type_live_count();
  ck_type s, b, b4, p, ps, bad;
  REQUIRE_OK(ck_string_type_new(&s));
  CHECK(ck_type_id_of(s) == CK_TYPE_STRING);
  CHECK(ck_type_data_size(s) == sizeof(ck_string) && sizeof(ck_string) == 2 * sizeof(char *));
  CHECK(ck_type_data_alignment(s) == alignof(char *));
  CHECK(ck_type_arrmeta_size(s) == sizeof(ck_string_arrmeta));
  CHECK(ck_type_flags(s) == CK_TYPE_FLAG_BLOCKREF);
  CHECK(strcmp(tstr(s), "string") == 0);

  REQUIRE_OK(ck_bytes_type_new(1, &b));
  REQUIRE_OK(ck_bytes_type_new(4, &b4));
  CHECK(ck_type_data_size(b4) == sizeof(ck_bytes));
  CHECK(ck_type_arrmeta_size(b4) == sizeof(ck_bytes_arrmeta));
  CHECK(ck_bytes_type_alignment(b4) == 4 && ck_bytes_type_alignment(b) == 1);
  CHECK(ck_bytes_type_alignment(s) == 0);
  CHECK(strcmp(tstr(b), "bytes") == 0);
  CHECK(strcmp(tstr(b4), "bytes[align=4]") == 0);
  CHECK(!ck_type_equal(b, b4) && !ck_type_equal(b, s));
  CHECK_ERR(ck_bytes_type_new(3, &bad), CK_ERR_INVALID_ARGUMENT, "not a power of two");
  CHECK_ERR(ck_bytes_type_new(8192, &bad), CK_ERR_INVALID_ARGUMENT, "[1, 4096]");
  CHECK_ERR(ck_bytes_type_new(0, &bad), CK_ERR_INVALID_ARGUMENT, "alignment 0");

  REQUIRE_OK(ck_pointer_type_new(CK_BUILTIN(CK_TYPE_INT32), &p));
  CHECK(ck_type_data_size(p) == sizeof(char *));
  CHECK(ck_type_arrmeta_size(p) == sizeof(ck_pointer_arrmeta));
  CHECK(ck_type_element(p) == CK_BUILTIN(CK_TYPE_INT32));
  CHECK(ck_type_ndim(p) == 0);
  CHECK(strcmp(tstr(p), "pointer[int32]") == 0);
  REQUIRE_OK(ck_pointer_type_new(s, &ps));
  CHECK(ck_type_arrmeta_size(ps) == sizeof(ck_pointer_arrmeta) + sizeof(ck_string_arrmeta));
  CHECK(strcmp(tstr(ps), "pointer[string]") == 0);
  ck_type_decref(ps);
  ck_type_decref(p);
  ck_type_decref(b4);
  ck_type_decref(b);
  ck_type_decref(s);
  CHECK(ck_type_live_count() == live);
}

static void test_struct_layout(void) {
  int64_t live = ck_type_live_count();
  ck_type str, vs, st, st2;
  REQUIRE_OK(ck_string_type_new(&str));
  REQUIRE_OK(ck_var_dim_type_new(str, &vs));
  {
    const char *names[] = {"a", "b", "c"};
    ck_type types[] = {CK_BUILTIN(CK_TYPE_INT8), CK_BUILTIN(CK_TYPE_FLOAT64),
                       CK_BUILTIN(CK_TYPE_INT16)};
    REQUIRE_OK(ck_struct_type_new(3, names, types, &st));
  }
  /* C rules: a at 0, b at 8, c at 16, size 24, align 8. */
  CHECK(ck_type_data_size(st) == 24);
  CHECK(ck_type_data_alignment(st) == 8);
  CHECK(ck_type_arrmeta_size(st) == 3 * sizeof(uintptr_t));
  CHECK(ck_struct_field_count(st) == 3);
  const char *name;
  ck_type ft;
  size_t doff, aoff;
  REQUIRE_OK(ck_struct_field(st, 1, &name, &ft, &doff, &aoff));
  CHECK(strcmp(name, "b") == 0 && ft == CK_BUILTIN(CK_TYPE_FLOAT64) && doff == 8);
  REQUIRE_OK(ck_struct_field(st, 2, NULL, NULL, &doff, &aoff));
  CHECK(doff == 16 && aoff == 3 * sizeof(uintptr_t));
  CHECK_ERR(ck_struct_field(st, 3, &name, NULL, NULL, NULL), CK_ERR_INDEX,
            "field index 3 is out of range");
  CHECK_ERR(ck_struct_field(str, 0, &name, NULL, NULL, NULL), CK_ERR_TYPE, "not a struct");
  size_t idx = 99;
  REQUIRE_OK(ck_struct_field_index(st, "c", &idx));
  CHECK(idx == 2);
  CHECK_ERR(ck_struct_field_index(st, "zz", &idx), CK_ERR_INDEX, "no field named 'zz'");
  CHECK(strcmp(tstr(st), "{a: int8, b: float64, c: int16}") == 0);
  CHECK(ck_type_flags(st) == 0);

  {
    const char *names[] = {"x", "tags", "with space"};
    ck_type types[] = {CK_BUILTIN(CK_TYPE_FLOAT64), vs, CK_BUILTIN(CK_TYPE_BOOL)};
    REQUIRE_OK(ck_struct_type_new(3, names, types, &st2));
  }
  CHECK(ck_type_data_size(st2) == 8 + 16 + 8); /* bool at 24, padded to 32 */
  CHECK(ck_type_arrmeta_size(st2) ==
        3 * sizeof(uintptr_t) + sizeof(ck_var_dim_arrmeta) + sizeof(ck_string_arrmeta));
  REQUIRE_OK(ck_struct_field(st2, 1, NULL, NULL, &doff, &aoff));
  CHECK(doff == 8 && aoff == 3 * sizeof(uintptr_t));
  REQUIRE_OK(ck_struct_field(st2, 2, NULL, NULL, &doff, &aoff));
  CHECK(doff == 24 && aoff == ck_type_arrmeta_size(st2));
  CHECK(ck_type_flags(st2) == CK_TYPE_FLAG_BLOCKREF);
  CHECK(strcmp(tstr(st2), "{x: float64, tags: var * string, 'with space': bool}") == 0);

  /* Empty struct. */
  ck_type e;
  REQUIRE_OK(ck_struct_type_new(0, NULL, NULL, &e));
  CHECK(ck_type_data_size(e) == 0 && ck_type_data_alignment(e) == 1);
  CHECK(ck_type_arrmeta_size(e) == 0);
  CHECK(strcmp(tstr(e), "{}") == 0);
  ck_type_decref(e);

  /* Validation. */
  ck_type bad, s3;
  ck_type two[] = {CK_BUILTIN(CK_TYPE_INT8), CK_BUILTIN(CK_TYPE_INT8)};
  const char *dup[] = {"a", "a"};
  CHECK_ERR(ck_struct_type_new(2, dup, two, &bad), CK_ERR_INVALID_ARGUMENT,
            "duplicate field name 'a'");
  const char *empty[] = {"a", ""};
  CHECK_ERR(ck_struct_type_new(2, empty, two, &bad), CK_ERR_INVALID_ARGUMENT,
            "name of field 1 is empty");
  const char *ctrl[] = {"a\n", "b"};
  CHECK_ERR(ck_struct_type_new(2, ctrl, two, &bad), CK_ERR_INVALID_ARGUMENT,
            "control characters");
  const char *badutf[] = {"\xc3(", "b"};
  CHECK_ERR(ck_struct_type_new(2, badutf, two, &bad), CK_ERR_INVALID_ARGUMENT, "UTF-8");
  const char *nul[] = {"a", NULL};
  CHECK_ERR(ck_struct_type_new(2, nul, two, &bad), CK_ERR_INVALID_ARGUMENT,
            "name of field 1 is NULL");
  CHECK_ERR(ck_struct_type_new(2, NULL, two, &bad), CK_ERR_INVALID_ARGUMENT,
            "must not be NULL");
  REQUIRE_OK(ck_strided_dim_type_new(CK_BUILTIN(CK_TYPE_INT8), &s3));
  ck_type withs[] = {CK_BUILTIN(CK_TYPE_INT8), s3};
  const char *ab[] = {"a", "b"};
  CHECK_ERR(ck_struct_type_new(2, ab, withs, &bad), CK_ERR_TYPE, "a struct field needs");
  ck_type_decref(s3);
  /* UTF-8 names print quoted (not identifiers) and keep their bytes. */
  const char *utf[] = {"caf\xc3\xa9", "it's"};
  REQUIRE_OK(ck_struct_type_new(2, utf, two, &bad));
  CHECK(strcmp(tstr(bad), "{'caf\xc3\xa9': int8, 'it\\'s': int8}") == 0);
  ck_type_decref(bad);

  ck_type_decref(st2);
  ck_type_decref(st);
  ck_type_decref(vs);
  ck_type_decref(str);
  CHECK(ck_type_live_count() == live);
}

static void test_equality_hash(void) {
  int64_t live = ck_type_live_count();
  static const char *types[] = {
      "3 * int32",        "4 * int32",       "3 * int64",
      "strided * int32",  "var * int32",     "string",
      "bytes",            "bytes[align=8]",  "pointer[int32]",
      "pointer[int64]",   "{a: int32}",      "{b: int32}",
      "{a: int32, b: int8}", "{b: int8, a: int32}", "{a: int64}",
      "{}",               "3 * 3 * int32",   "var * var * string",
      "strided * {x: float64, tags: var * string}",
      "int32",
  };
  enum { N = sizeof types / sizeof types[0] };
  ck_type a[N], b[N];
  for (size_t i = 0; i < N; i++) {
    a[i] = P(types[i]);
    b[i] = P(types[i]);
    REQUIRE(a[i] != NULL && b[i] != NULL);
  }
  for (size_t i = 0; i < N; i++) {
    CHECK(ck_type_equal(a[i], b[i]));
    CHECK(ck_type_hash(a[i]) == ck_type_hash(b[i]));
    CHECK(i == N - 1 || a[i] != b[i]); /* distinct descriptors */
    for (size_t j = 0; j < N; j++) {
      if (i != j) {
        CHECK(!ck_type_equal(a[i], b[j]));
        CHECK(ck_type_hash(a[i]) != ck_type_hash(b[j]));
      }
    }
  }
  for (size_t i = 0; i < N; i++) {
    ck_type_decref(a[i]);
    ck_type_decref(b[i]);
  }
  CHECK(!ck_type_equal(NULL, CK_BUILTIN(CK_TYPE_INT8)));
  CHECK(ck_type_equal(NULL, NULL));
  CHECK(ck_type_live_count() == live);
}

static void test_depth_limit(void) {
  int64_t live = ck_type_live_count();
  ck_type t = CK_BUILTIN(CK_TYPE_INT8);
  ck_type_incref(t);
  int levels = 1;
  for (;;) {
    ck_type next;
    ck_status st = ck_fixed_dim_type_new(1, t, &next);
    if (st != CK_OK) {
      CHECK(st == CK_ERR_INVALID_ARGUMENT);
      CHECK(strstr(ck_last_error(), "exceed 64 levels") != NULL);
      break;
    }
    ck_type_decref(t);
    t = next;
    levels++;
  }
  CHECK(levels == CK_TYPE_MAX_DEPTH);
  CHECK(ck_type_ndim(t) == CK_TYPE_MAX_DEPTH - 1);
  /* Its printed form parses back to an equal type. */
  size_t n = 0;
  REQUIRE_OK(ck_type_print(t, NULL, 0, &n));
  char *s = malloc(n + 1);
  REQUIRE(s != NULL);
  REQUIRE_OK(ck_type_print(t, s, n + 1, NULL));
  ck_type u;
  CHECK_OK(ck_type_parse(s, &u));
  CHECK(ck_type_equal(t, u));
  ck_type_decref(u);
  free(s);
  ck_type_decref(t);
  CHECK(ck_type_live_count() == live);
}

static void test_print_truncation(void) {
  ck_type t = P("{x: float64, tags: var * string}");
  REQUIRE(t != NULL);
  size_t n = 0;
  REQUIRE_OK(ck_type_print(t, NULL, 0, &n));
  CHECK(n == strlen("{x: float64, tags: var * string}"));
  char small[8];
  memset(small, 'Z', sizeof small);
  size_t n2 = 0;
  REQUIRE_OK(ck_type_print(t, small, sizeof small, &n2));
  CHECK(n2 == n);
  CHECK(strcmp(small, "{x: flo") == 0); /* truncated, NUL-terminated */
  ck_type_decref(t);
}

/* Arrmeta of every kind: construct makes arenas, copy increfs, destruct
 * drops them; the live memblock counter proves it. */
static void test_arrmeta_lifecycle(void) {
  int64_t blocks = ck_memblock_live_count();
  ck_type t = P("{x: float64, tags: var * string, p: pointer[string], b: bytes[align=4]}");
  REQUIRE(t != NULL);
  size_t n = ck_type_arrmeta_size(t);
  CHECK(n == 4 * sizeof(uintptr_t) + sizeof(ck_var_dim_arrmeta) +
                 sizeof(ck_string_arrmeta) + sizeof(ck_pointer_arrmeta) +
                 sizeof(ck_string_arrmeta) + sizeof(ck_bytes_arrmeta));
  char *m1 = calloc(1, n), *m2 = calloc(1, n);
  REQUIRE(m1 && m2);
  REQUIRE_OK(ck_type_arrmeta_construct(t, m1, NULL, 0));
  /* var arena, its string's arena, the pointer target string's arena, the
   * bytes' arena; the pointer itself has no blockref yet. */
  CHECK(ck_memblock_live_count() == blocks + 4);
  const uintptr_t *offs = (const uintptr_t *)m1;
  CHECK(offs[0] == 0 && offs[1] == 8 && offs[2] == 24 && offs[3] == 32);
  size_t aoff;
  REQUIRE_OK(ck_struct_field(t, 1, NULL, NULL, NULL, &aoff));
  const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(m1 + aoff);
  CHECK(vm->blockref != NULL && vm->blockref->kind == CK_MEMBLOCK_POD);
  CHECK(vm->stride == (intptr_t)sizeof(ck_string) && vm->offset == 0);
  REQUIRE_OK(ck_struct_field(t, 2, NULL, NULL, NULL, &aoff));
  const ck_pointer_arrmeta *pm = (const ck_pointer_arrmeta *)(m1 + aoff);
  CHECK(pm->blockref == NULL && pm->offset == 0);

  ck_type_arrmeta_copy(t, m2, m1);
  CHECK(ck_memblock_live_count() == blocks + 4);
  CHECK(ck_memblock_refcount(vm->blockref) == 2);
  CHECK(memcmp(m1, m2, n) == 0);
  ck_type_arrmeta_destruct(t, m1);
  CHECK(ck_memblock_live_count() == blocks + 4);
  ck_type_arrmeta_destruct(t, m2);
  CHECK(ck_memblock_live_count() == blocks);

  /* Shapes: strided dims need an entry, fixed must match, extras fail. */
  ck_type s = P("strided * strided * 3 * string");
  REQUIRE(s != NULL);
  char meta[128];
  REQUIRE(ck_type_arrmeta_size(s) <= sizeof meta);
  intptr_t shape[] = {4, 5, 3};
  REQUIRE_OK(ck_type_arrmeta_construct(s, meta, shape, 2));
  const ck_dim_arrmeta *d = (const ck_dim_arrmeta *)meta;
  CHECK(d[0].size == 4 && d[0].stride == 5 * 3 * 16);
  CHECK(d[1].size == 5 && d[1].stride == 3 * 16);
  CHECK(d[2].size == 3 && d[2].stride == 16);
  ck_type_arrmeta_destruct(s, meta);
  REQUIRE_OK(ck_type_arrmeta_construct(s, meta, shape, 3));
  ck_type_arrmeta_destruct(s, meta);
  CHECK_ERR(ck_type_arrmeta_construct(s, meta, shape, 1), CK_ERR_INVALID_ARGUMENT,
            "no entry for a strided dim");
  intptr_t wrong[] = {4, 5, 2, 1};
  CHECK_ERR(ck_type_arrmeta_construct(s, meta, wrong, 3), CK_ERR_INVALID_ARGUMENT,
            "shape entry 2 does not match the fixed dim of size 3");
  CHECK_ERR(ck_type_arrmeta_construct(s, meta, shape, 4), CK_ERR_INVALID_ARGUMENT,
            "1 entries more");
  intptr_t neg[] = {-1, 2};
  CHECK_ERR(ck_type_arrmeta_construct(s, meta, neg, 2), CK_ERR_INVALID_ARGUMENT,
            "negative dimension size -1");
  intptr_t huge[] = {INTPTR_MAX / 2, INTPTR_MAX / 2};
  CHECK_ERR(ck_type_arrmeta_construct(s, meta, huge, 2), CK_ERR_OVERFLOW, "overflows");
  CHECK_ERR(ck_type_arrmeta_construct(CK_BUILTIN(CK_TYPE_INT8), meta, shape, 1),
            CK_ERR_INVALID_ARGUMENT, "more than");
  CHECK_ERR(ck_type_arrmeta_construct(s, meta, NULL, 2), CK_ERR_INVALID_ARGUMENT,
            "shape is NULL");
  CHECK(ck_memblock_live_count() == blocks);
  ck_type_decref(s);
  ck_type_decref(t);
  free(m1);
  free(m2);
}

static void test_element_helpers(void) {
  ck_type vs = P("var * string");
  REQUIRE(vs != NULL);
  char meta[64];
  ck_var_dim_data row = {NULL, 0};
  REQUIRE_OK(ck_type_arrmeta_construct(vs, meta, NULL, 0));
  REQUIRE_OK(ck_var_dim_alloc(vs, (char *)&row, meta, 3));
  CHECK(row.size == 3 && row.begin != NULL);
  ck_string *items = (ck_string *)row.begin;
  CHECK(items[0].begin == NULL && items[2].end == NULL); /* zero-filled */
  const char *smeta = meta + sizeof(ck_var_dim_arrmeta);
  static const char text[] = "h\xc3\xa9llo\0w\xe2\x82\xac";
  REQUIRE_OK(ck_string_assign((char *)&items[1], smeta, text, sizeof text - 1));
  CHECK(items[1].end - items[1].begin == (ptrdiff_t)(sizeof text - 1));
  CHECK(memcmp(items[1].begin, text, sizeof text - 1) == 0);
  REQUIRE_OK(ck_string_assign((char *)&items[2], smeta, NULL, 0));
  CHECK(items[2].begin == items[2].end);
  CHECK_ERR(ck_string_assign((char *)&items[2], smeta, NULL, 3),
            CK_ERR_INVALID_ARGUMENT, "must not be NULL");
  CHECK_ERR(ck_var_dim_alloc(CK_BUILTIN(CK_TYPE_INT8), (char *)&row, meta, 1),
            CK_ERR_TYPE, "not a var dim");
  CHECK_ERR(ck_var_dim_alloc(vs, (char *)&row, meta, SIZE_MAX / 4), CK_ERR_OVERFLOW,
            "overflow");
  ck_var_dim_arrmeta *vm = (ck_var_dim_arrmeta *)meta;
  vm->offset = 8;
  CHECK_ERR(ck_var_dim_alloc(vs, (char *)&row, meta, 1), CK_ERR_NOT_SUPPORTED,
            "through a var dim view");
  vm->offset = 0;
  ck_type_arrmeta_destruct(vs, meta);
  ck_type_decref(vs);

  /* bytes with alignment. */
  ck_type b8 = P("bytes[align=8]");
  REQUIRE(b8 != NULL);
  REQUIRE_OK(ck_type_arrmeta_construct(b8, meta, NULL, 0));
  ck_bytes val = {NULL, NULL};
  REQUIRE_OK(ck_string_assign((char *)&val, meta, "x", 1)); /* misalign the arena */
  REQUIRE_OK(ck_bytes_assign(b8, (char *)&val, meta, "12345678", 8));
  CHECK(((uintptr_t)val.begin & 7) == 0 && memcmp(val.begin, "12345678", 8) == 0);
  CHECK_ERR(ck_bytes_assign(CK_BUILTIN(CK_TYPE_INT8), (char *)&val, meta, "x", 1), CK_ERR_TYPE, "not bytes");
  ck_type_arrmeta_destruct(b8, meta);
  ck_type_decref(b8);
  /* A string arrmeta without arena is an error, not a crash. */
  ck_string_arrmeta none = {NULL};
  CHECK_ERR(ck_string_assign((char *)&val, (const char *)&none, "x", 1),
            CK_ERR_INVALID_STATE, "no blockref");
}

static void test_utf8(void) {
  CHECK(ck_utf8_validate("", 0));
  CHECK(ck_utf8_validate(NULL, 0));
  CHECK(!ck_utf8_validate(NULL, 1));
  CHECK(ck_utf8_validate("abc\0def", 7));
  CHECK(ck_utf8_validate("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
  CHECK(ck_utf8_validate("\xf4\x8f\xbf\xbf", 4));  /* U+10FFFF */
  CHECK(!ck_utf8_validate("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
  CHECK(!ck_utf8_validate("\xc0\xaf", 2));         /* overlong */
  CHECK(!ck_utf8_validate("\xe0\x80\xaf", 3));     /* overlong */
  CHECK(!ck_utf8_validate("\xed\xa0\x80", 3));     /* surrogate */
  CHECK(!ck_utf8_validate("\xe2\x82", 2));         /* truncated */
  CHECK(!ck_utf8_validate("\x80", 1));             /* stray continuation */
  CHECK(!ck_utf8_validate("\xff", 1));
}

CK_TEST_MAIN(CK_TEST(test_builtins), CK_TEST(test_dims),
             CK_TEST(test_string_bytes_pointer), CK_TEST(test_struct_layout),
             CK_TEST(test_equality_hash), CK_TEST(test_depth_limit),
             CK_TEST(test_print_truncation), CK_TEST(test_arrmeta_lifecycle),
             CK_TEST(test_element_helpers), CK_TEST(test_utf8))
