/* Option types `?T` and their validity bitmaps: the grammar (parse, print,
 * equality), the layout, the bitmap primitives against a bit-by-bit oracle
 * at every bit offset 0..7 (and more), the address-keyed slot lookup through
 * views, ownership of our own and of foreign bitmaps. */
#include "ck_test.h"

static ck_type parse(const char *s) {
  ck_type t = NULL;
  ck_status st = ck_type_parse(s, &t);
  if (st != CK_OK) {
    fprintf(stderr, "parse '%s': %s\n", s, ck_last_error());
  }
  return t;
}

static void check_round_trip(const char *in, const char *canon) {
  ck_type t = parse(in);
  CHECK(t != NULL);
  if (t == NULL) {
    return;
  }
  char buf[256];
  CHECK_OK(ck_type_print(t, buf, sizeof buf, NULL));
  if (strcmp(buf, canon) != 0) {
    fprintf(stderr, "'%s' printed '%s', expected '%s'\n", in, buf, canon);
  }
  CHECK(strcmp(buf, canon) == 0);
  ck_type u = parse(buf);
  CHECK(ck_type_equal(t, u));
  CHECK(ck_type_hash(t) == ck_type_hash(u));
  ck_type_decref(u);
  ck_type_decref(t);
}

static void test_grammar(void) {
  int64_t live = ck_type_live_count();
  static const char *const cases[][2] = {
      {"?int64", "?int64"},
      {"? bool", "?bool"},
      {"?string", "?string"},
      {"?bytes[align=4]", "?bytes[align=4]"},
      {"?complex[float32]", "?complex64"},
      {"var * ?string", "var * ?string"},
      {"3*?float64", "3 * ?float64"},
      {"strided * ?int8", "strided * ?int8"},
      {"{name: ?string, score: ?float64}", "{name: ?string, score: ?float64}"},
      {"?{x: int8}", "?{x: int8}"},
      {"?var * int64", "?var * int64"},
      {"var * ?var * ?int32", "var * ?var * ?int32"},
      {"?3 * int8", "?3 * int8"},
      {"pointer[?int8]", "pointer[?int8]"},
      {"N * ?float64", "N * ?float64"},
      {"{'a b': ?{c: ?string}}", "{'a b': ?{c: ?string}}"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_round_trip(cases[i][0], cases[i][1]);
  }
  ck_type a = parse("?int64"), b = parse("int64"), c = parse("?int32");
  CHECK(ck_type_is_option(a) && !ck_type_is_option(b));
  CHECK(ck_type_id_of(a) == CK_TYPE_OPTION);
  CHECK(!ck_type_equal(a, b) && !ck_type_equal(a, c));
  CHECK(ck_type_element(a) == b);
  CHECK(ck_type_data_size(a) == 8 && ck_type_data_alignment(a) == 8);
  CHECK(ck_type_arrmeta_size(a) == sizeof(ck_option_arrmeta));
  CHECK((ck_type_flags(a) & (CK_TYPE_FLAG_OPTION | CK_TYPE_FLAG_BLOCKREF)) ==
        (CK_TYPE_FLAG_OPTION | CK_TYPE_FLAG_BLOCKREF));
  CHECK(strcmp(ck_type_id_name(CK_TYPE_OPTION), "option") == 0);
  ck_type d = parse("3 * {x: ?int8}");
  CHECK(ck_type_flags(d) & CK_TYPE_FLAG_OPTION);
  ck_type plain = parse("3 * {x: int8}");
  CHECK(!(ck_type_flags(plain) & CK_TYPE_FLAG_OPTION));
  ck_type_decref(plain);
  ck_type s = parse("?string");
  CHECK(ck_type_arrmeta_size(s) == sizeof(ck_option_arrmeta) + sizeof(ck_string_arrmeta));
  ck_type_decref(s);
  ck_type_decref(d);
  ck_type_decref(a);
  ck_type_decref(c);
  /* constructor errors */
  ck_type o = NULL;
  ck_type oi8 = parse("?int8");
  CHECK_ERR(ck_option_type_new(oi8, &o), CK_ERR_TYPE, "option of an option");
  ck_type_decref(oi8);
  CHECK_ERR(ck_type_parse("??int8", &o), CK_ERR_PARSE, "at column 0");
  CHECK_ERR(ck_type_parse("?{}", &o), CK_ERR_PARSE, "nonzero data size");
  CHECK_ERR(ck_type_parse("?strided * int8", &o), CK_ERR_PARSE, "fixed data size");
  CHECK_ERR(ck_type_parse("?", &o), CK_ERR_PARSE, "expected a type after '?'");
  CHECK_ERR(ck_type_parse("3 * ?", &o), CK_ERR_PARSE, "at column 5");
  CHECK_ERR(ck_type_parse("int8?", &o), CK_ERR_PARSE, "expected the end of the type");
  CHECK(o == NULL);
  CHECK(ck_type_live_count() == live);
}

static void test_option_nesting_depth(void) {
  /* "?" adds a level; 32 levels of "var * ?" stay below the limit, 33 not */
  char buf[512];
  size_t pos = 0;
  for (int i = 0; i < 31; i++) {
    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "var * ?");
  }
  snprintf(buf + pos, sizeof buf - pos, "int8");
  ck_type t = parse(buf);
  CHECK(t != NULL);
  ck_type_decref(t);
  pos = 0;
  for (int i = 0; i < 33; i++) {
    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "var * ?");
  }
  snprintf(buf + pos, sizeof buf - pos, "int8");
  CHECK_ERR(ck_type_parse(buf, &t), CK_ERR_PARSE, "deeper than 64");
}

/* ---- bitmaps against a bit-by-bit oracle ---------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void test_bitmap_ops(void) {
  enum { NBYTES = 64 };
  for (int trial = 0; trial < 200; trial++) {
    /* exact-size heap buffers, so ASan/valgrind catch any overread */
    uint8_t *a = malloc(NBYTES), *b = malloc(NBYTES), *d = malloc(NBYTES);
    uint8_t *ref = malloc(NBYTES);
    REQUIRE(a && b && d && ref);
    for (int i = 0; i < NBYTES; i++) {
      a[i] = (uint8_t)rng();
      b[i] = (uint8_t)(rng() | rng()); /* mostly valid */
      d[i] = (uint8_t)rng();
    }
    if (trial % 5 == 0) {
      memset(a, 0xff, NBYTES);
    }
    for (int64_t off = 0; off < 8 + (trial % 3) * 7; off++) {
      int64_t maxlen = NBYTES * 8 - off - 12;
      int64_t len = (int64_t)(rng() % (uint64_t)maxlen);
      int64_t set = 0, first = -1;
      for (int64_t i = 0; i < len; i++) {
        bool v = ck_bitmap_get(a, off + i);
        set += v;
        if (!v && first < 0) {
          first = i;
        }
      }
      CHECK(ck_bitmap_count_set(a, off, len) == set);
      CHECK(ck_bitmap_find_unset(a, off, len) == first);
      /* up to the last bit of the buffer: no byte past it is read */
      int64_t full = NBYTES * 8 - off, fset = 0, ffirst = -1;
      for (int64_t i = 0; i < full; i++) {
        bool v = ck_bitmap_get(a, off + i);
        fset += v;
        if (!v && ffirst < 0) {
          ffirst = i;
        }
      }
      CHECK(ck_bitmap_count_set(a, off, full) == fset);
      CHECK(ck_bitmap_find_unset(a, off, full) == ffirst);
      CHECK(ck_bitmap_count_set(a + NBYTES - 1, off & 7, 8 - (off & 7)) ==
            ck_bitmap_count_set(a, (NBYTES - 1) * 8 + (off & 7), 8 - (off & 7)));
      /* AND at every pair of offsets (aligned and not) */
      for (int64_t boff = off; boff < off + 3; boff++) {
        for (int64_t doff = off; doff < off + 10; doff += 9) {
          memcpy(ref, d, NBYTES);
          for (int64_t i = 0; i < len; i++) {
            ck_bitmap_set(ref, doff + i, ck_bitmap_get(a, off + i) && ck_bitmap_get(b, boff + i));
          }
          uint8_t *out = malloc(NBYTES);
          REQUIRE(out != NULL);
          memcpy(out, d, NBYTES);
          ck_bitmap_and(out, doff, a, off, b, boff, len);
          CHECK(memcmp(out, ref, NBYTES) == 0);
          memcpy(out, d, NBYTES);
          ck_bitmap_and(out, doff, a, off, NULL, 0, len);
          for (int64_t i = 0; i < len; i++) {
            ck_bitmap_set(ref, doff + i, ck_bitmap_get(a, off + i));
          }
          CHECK(memcmp(out, ref, NBYTES) == 0);
          free(out);
        }
      }
      /* set_range keeps the bits around the range */
      memcpy(ref, d, NBYTES);
      uint8_t *out = malloc(NBYTES);
      REQUIRE(out != NULL);
      memcpy(out, d, NBYTES);
      bool v = (trial & 1) != 0;
      ck_bitmap_set_range(out, off, len, v);
      for (int64_t i = 0; i < len; i++) {
        ck_bitmap_set(ref, off + i, v);
      }
      CHECK(memcmp(out, ref, NBYTES) == 0);
      free(out);
    }
    free(a);
    free(b);
    free(d);
    free(ref);
  }
  CHECK(ck_bitmap_count_set(NULL, 0, 10) == 10);
  CHECK(ck_bitmap_find_unset(NULL, 0, 10) == -1);
  uint8_t one = 0xfe; /* bit 0 clear */
  CHECK(ck_bitmap_count_set(&one, 0, 8) == 7);
  CHECK(ck_bitmap_count_set(&one, 1, 7) == 7);
  CHECK(ck_bitmap_find_unset(&one, 0, 8) == 0);
  CHECK(ck_bitmap_find_unset(&one, 1, 7) == -1);
  CHECK(ck_bitmap_count_set(&one, 3, 0) == 0);
}

/* ---- arrays ---------------------------------------------------------------------------- */

static void test_array_bits(void) {
  int64_t live_blocks = ck_memblock_live_count();
  ck_type t = parse("10 * ?float64");
  ck_array_preamble *a = NULL;
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  const ck_option_arrmeta *m =
      (const ck_option_arrmeta *)(ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta));
  REQUIRE(m->bits != NULL);
  CHECK(m->blockref != NULL && m->length == 10 && m->step == 8 && m->bit_offset == 0);
  CHECK(m->origin == ck_array_data(a));
  int64_t n = -1, first = 7;
  CHECK_OK(ck_array_null_count(a, &n, &first));
  CHECK(n == 0 && first == -1);
  CHECK_OK(ck_array_set_valid_at(a, 3, false));
  CHECK_OK(ck_array_set_valid_at(a, -1, false));
  CHECK_OK(ck_array_null_count(a, &n, &first));
  CHECK(n == 2 && first == 3);
  bool v = true;
  CHECK_OK(ck_array_valid_at(a, 3, &v));
  CHECK(!v);
  CHECK_OK(ck_array_valid_at(a, 4, &v));
  CHECK(v);
  CHECK_ERR(ck_array_valid_at(a, 10, &v), CK_ERR_INDEX, "out of bounds");
  /* views find their bits by address: index, reversed slice, strided */
  ck_array_preamble *e = NULL, *r = NULL, *s = NULL;
  REQUIRE_OK(ck_array_index(a, 0, 3, &e));
  CHECK_OK(ck_array_is_valid(e, &v));
  CHECK(!v);
  REQUIRE_OK(ck_array_slice(a, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1, &r));
  CHECK_OK(ck_array_valid_at(r, 0, &v));
  CHECK(!v);
  CHECK_OK(ck_array_valid_at(r, 6, &v));
  CHECK(!v);
  CHECK_OK(ck_array_null_count(r, &n, &first));
  CHECK(n == 2 && first == 0);
  REQUIRE_OK(ck_array_slice(a, 0, 1, CK_SLICE_NONE, 2, &s)); /* 1 3 5 7 9 */
  CHECK_OK(ck_array_null_count(s, &n, &first));
  CHECK(n == 2 && first == 1);
  CHECK_OK(ck_array_set_valid(e, true)); /* through the 0-d view */
  CHECK_OK(ck_array_null_count(a, &n, &first));
  CHECK(n == 1 && first == 9);
  /* the bitmap outlives the array through the views */
  ck_array_decref(a);
  CHECK_OK(ck_array_null_count(s, &n, &first));
  CHECK(n == 1 && first == 4);
  ck_array_decref(e);
  ck_array_decref(r);
  ck_array_decref(s);
  CHECK(ck_memblock_live_count() == live_blocks);
  /* read-only arrays refuse writes; non-options refuse */
  ck_array_preamble *ro = NULL;
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_READ, &ro));
  CHECK(ck_array_flags(ro) == CK_ARRAY_READ);
  CHECK_ERR(ck_array_set_valid_at(ro, 0, false), CK_ERR_INVALID_STATE, "read-only");
  ck_array_decref(ro);
  ck_type p = parse("4 * float64");
  ck_array_preamble *plain = NULL;
  REQUIRE_OK(ck_array_empty(p, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &plain));
  CHECK_ERR(ck_array_null_count(plain, &n, NULL), CK_ERR_TYPE, "not an option");
  CHECK_ERR(ck_array_valid_at(plain, 0, &v), CK_ERR_TYPE, "dim * ?T");
  ck_array_decref(plain);
  ck_type_decref(p);
  ck_type_decref(t);
  CHECK(ck_memblock_live_count() == live_blocks);
}

static void test_nd_and_structs(void) {
  int64_t live_blocks = ck_memblock_live_count();
  /* 2-d: transposed views count in their own C order */
  ck_type t = parse("3 * 4 * ?int32");
  ck_array_preamble *a = NULL, *tr = NULL;
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_array_preamble *row = NULL;
  REQUIRE_OK(ck_array_index(a, 0, 1, &row));
  CHECK_OK(ck_array_set_valid_at(row, 2, false)); /* flat 6 */
  ck_array_decref(row);
  int64_t n, first;
  CHECK_OK(ck_array_null_count(a, &n, &first));
  CHECK(n == 1 && first == 6);
  intptr_t shape[2] = {4, 3}, strides[2] = {4, 16};
  REQUIRE_OK(ck_array_view_dims(a, 2, 2, shape, strides, 0, &tr));
  CHECK_OK(ck_array_null_count(tr, &n, &first));
  CHECK(n == 1 && first == 2 * 3 + 1);
  ck_array_decref(tr);
  ck_array_decref(a);
  ck_type_decref(t);
  /* struct fields: each field has its own bitmap, step = struct size */
  t = parse("5 * {name: ?string, score: ?float64, id: int64}");
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_array_preamble *names = NULL, *scores = NULL;
  REQUIRE_OK(ck_array_field(a, "name", 4, &names));
  REQUIRE_OK(ck_array_field(a, "score", 5, &scores));
  CHECK_OK(ck_array_set_valid_at(names, 0, false));
  CHECK_OK(ck_array_set_valid_at(scores, 4, false));
  CHECK_OK(ck_array_set_valid_at(scores, 2, false));
  CHECK_OK(ck_array_null_count(names, &n, &first));
  CHECK(n == 1 && first == 0);
  CHECK_OK(ck_array_null_count(scores, &n, &first));
  CHECK(n == 2 && first == 2);
  const ck_option_arrmeta *sm =
      (const ck_option_arrmeta *)(ck_array_arrmeta(scores) + sizeof(ck_dim_arrmeta));
  CHECK(sm->step == (intptr_t)ck_type_data_size(ck_type_element(t)));
  /* a string set through the field view stays readable next to its bit */
  ck_array_preamble *n1 = NULL;
  REQUIRE_OK(ck_array_index(names, 0, 1, &n1));
  CHECK(ck_type_is_option(ck_array_type(n1)));
  ck_array_decref(n1);
  ck_array_decref(names);
  ck_array_decref(scores);
  ck_array_decref(a);
  ck_type_decref(t);
  /* a 0-d option and `?var * int64` (one null-able row) */
  t = parse("?var * int64");
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  bool v = false;
  CHECK_OK(ck_array_is_valid(a, &v));
  CHECK(v);
  CHECK_OK(ck_array_set_valid(a, false));
  CHECK_OK(ck_array_is_valid(a, &v));
  CHECK(!v);
  CHECK_OK(ck_array_null_count(a, &n, &first));
  CHECK(n == 1 && first == 0);
  ck_array_decref(a);
  ck_type_decref(t);
  /* options under a var dim have no bitmap until one is attached */
  t = parse("var * ?int16");
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  CHECK_OK(ck_array_var_dim_alloc(a, 6));
  CHECK_OK(ck_array_valid_at(a, 5, &v));
  CHECK(v);
  CHECK_ERR(ck_array_set_valid_at(a, 5, false), CK_ERR_INVALID_STATE, "no validity bitmap");
  ck_memblock *mb = NULL;
  char *bits = NULL;
  REQUIRE_OK(ck_fixed_size_pod_memblock_new(2, 1, &mb, &bits));
  bits[0] = (char)0xff;
  bits[1] = (char)0xff;
  const ck_var_dim_data *vd = (const ck_var_dim_data *)(const void *)ck_array_data(a);
  const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(const void *)ck_array_arrmeta(a);
  REQUIRE_OK(ck_option_attach_bitmap(ck_type_element(t), ck_array_arrmeta(a) + sizeof *vm,
                                     (uint8_t *)bits, mb, 5, vd->begin + vm->offset, 2, 6));
  ck_memblock_decref(mb);
  CHECK_OK(ck_array_set_valid_at(a, 5, false));
  CHECK_OK(ck_array_set_valid_at(a, 1, false));
  CHECK((uint8_t)bits[0] == 0xbf && (uint8_t)bits[1] == 0xfb); /* bits 6 and 10 */
  CHECK_OK(ck_array_null_count(a, &n, &first));
  CHECK(n == 2 && first == 1);
  ck_array_decref(a);
  ck_type_decref(t);
  CHECK(ck_memblock_live_count() == live_blocks);
}

/* A foreign (Arrow-like) bitmap kept alive by an external memblock. */
static int released;
static void release_bits(void *p) {
  free(p);
  released++;
}

static void test_foreign_bitmap(void) {
  int64_t live_blocks = ck_memblock_live_count();
  ck_type t = parse("strided * ?float64");
  double values[20];
  for (int i = 0; i < 20; i++) {
    values[i] = i;
  }
  for (int64_t off = 0; off < 8; off++) {
    uint8_t *bits = malloc(4);
    REQUIRE(bits != NULL);
    memset(bits, 0xff, 4);
    /* nulls at slots 0, 7, 19 (bits off + k) */
    ck_bitmap_set(bits, off + 0, false);
    ck_bitmap_set(bits, off + 7, false);
    ck_bitmap_set(bits, off + 19, false);
    ck_memblock *owner = NULL;
    REQUIRE_OK(ck_external_memblock_new(bits, release_bits, &owner));
    ck_array_preamble *a = NULL;
    intptr_t shape = 20;
    released = 0;
    REQUIRE_OK(ck_array_view_external_option(t, (char *)values, &shape, 1, CK_ARRAY_READ,
                                             NULL, bits, off, owner, &a));
    ck_memblock_decref(owner);
    CHECK(released == 0);
    int64_t n, first;
    CHECK_OK(ck_array_null_count(a, &n, &first));
    CHECK(n == 3 && first == 0);
    ck_array_preamble *s = NULL;
    REQUIRE_OK(ck_array_slice(a, 0, 1, 19, 1, &s));
    CHECK_OK(ck_array_null_count(s, &n, &first));
    CHECK(n == 1 && first == 6);
    ck_array_decref(a);
    CHECK(released == 0); /* the slice keeps it */
    ck_array_decref(s);
    CHECK(released == 1);
  }
  /* no bitmap: all valid; a view of plain values with an option type */
  ck_array_preamble *a = NULL;
  intptr_t shape = 20;
  REQUIRE_OK(ck_array_view_external_option(t, (char *)values, &shape, 1, CK_ARRAY_READ, NULL,
                                           NULL, 0, NULL, &a));
  int64_t n;
  CHECK_OK(ck_array_null_count(a, &n, NULL));
  CHECK(n == 0);
  ck_array_decref(a);
  ck_type s = parse("strided * ?string");
  CHECK_ERR(ck_array_view_external_option(s, (char *)values, &shape, 1, CK_ARRAY_READ, NULL,
                                          NULL, 0, NULL, &a), CK_ERR_TYPE, "blockrefs");
  ck_type_decref(s);
  ck_type_decref(t);
  CHECK(ck_memblock_live_count() == live_blocks);
}

static void test_bad_bitmaps(void) {
  ck_type t = parse("4 * ?int8");
  ck_array_preamble *a = NULL;
  REQUIRE_OK(ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a));
  char *meta = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  uint8_t bits[1] = {0xff};
  CHECK_ERR(ck_option_attach_bitmap(ck_type_element(t), meta, bits, NULL, -1,
                                    (char *)ck_array_data(a), 1, 4),
            CK_ERR_INVALID_ARGUMENT, "bad bitmap");
  CHECK_ERR(ck_option_attach_bitmap(ck_type_element(t), meta, bits, NULL, 0,
                                    (char *)ck_array_data(a), 0, 4),
            CK_ERR_INVALID_ARGUMENT, "bad bitmap");
  CHECK_ERR(ck_option_attach_bitmap(ck_type_element(ck_type_element(t)), meta, bits, NULL, 0,
                                    (char *)ck_array_data(a), 1, 4),
            CK_ERR_TYPE, "not an option");
  /* a bitmap that covers fewer slots than the array: an error, never a wild read */
  REQUIRE_OK(ck_option_attach_bitmap(ck_type_element(t), meta, bits, NULL, 0,
                                     (char *)ck_array_data(a), 1, 2));
  bool v;
  CHECK_OK(ck_array_valid_at(a, 1, &v));
  CHECK_ERR(ck_array_valid_at(a, 2, &v), CK_ERR_INDEX, "not one of the 2 option slots");
  int64_t n;
  CHECK_ERR(ck_array_null_count(a, &n, NULL), CK_ERR_INDEX, "option slots");
  char dbg[2048];
  CHECK_OK(ck_array_debug_repr(a, dbg, sizeof dbg, NULL));
  CHECK(strstr(dbg, "option arrmeta") != NULL && strstr(dbg, "length: 2") != NULL);
  ck_array_decref(a);
  ck_type_decref(t);
}

CK_TEST_MAIN(CK_TEST(test_grammar), CK_TEST(test_option_nesting_depth),
             CK_TEST(test_bitmap_ops), CK_TEST(test_array_bits), CK_TEST(test_nd_and_structs),
             CK_TEST(test_foreign_bitmap), CK_TEST(test_bad_bitmaps))
