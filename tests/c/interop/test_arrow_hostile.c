/* Hostile and unusual Arrow input (issue 29).  Struct fields with empty,
 * duplicate or unusable names; formats refused with their type's name.
 * Offsets, sizes, lengths and widths whose
 * sums or products overflow int64 or the address space, negative offsets
 * and sizes, null counts past the length.  Each import must fail with
 * CK_ERR_INVALID_ARGUMENT naming the problem, reading no byte outside the
 * (tiny) buffers given -- the sanitizer builds and valgrind check that. */
#include "arrow_hand.h"

static struct ArrowSchema item_i64, item_i32, *kid_i64[1] = {&item_i64},
                                             *kid_i32[1] = {&item_i32};

static void setup(void) {
  item_i64 = sc("l", "item", 0, NULL);
  item_i32 = sc("i", "item", 0, NULL);
}

/* The reported case: a large_list_view row with offset + size past
 * INT64_MAX wrapped to a negative end, and the row then pointed anywhere. */
static void test_large_list_view_offset_plus_size(void) {
  setup();
  static const int64_t vals[4] = {1, 2, 3, 4};
  static const int64_t offs[2] = {0, INT64_MAX - 1};
  static const int64_t sizes[2] = {2, 5};
  const void *cb[2] = {NULL, vals}, *lb[3] = {NULL, offs, sizes};
  struct ArrowArray kid = mk(4, 0, 2, cb, 0, NULL);
  struct ArrowArray x = mk(2, 0, 3, lb, 1, &kid);
  struct ArrowSchema s = sc("+vL", "", 1, kid_i64);
  ck_array_preamble *a = NULL;
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "row 1: offset 9223372036854775806 + size 5 overflows");
  CHECK(a == NULL && x.release == NULL);
  /* the largest end that does not overflow is still past the child */
  static const int64_t offs2[1] = {INT64_MAX - 5};
  static const int64_t sizes2[1] = {5};
  const void *lb2[3] = {NULL, offs2, sizes2};
  kid = mk(4, 0, 2, cb, 0, NULL);
  x = mk(1, 0, 3, lb2, 1, &kid);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "the list offsets reach 9223372036854775807");
  /* negative sizes and offsets */
  static const int64_t neg_size[1] = {-1}, zero[1] = {0}, neg_off[1] = {INT64_MIN};
  const void *lb3[3] = {NULL, zero, neg_size};
  kid = mk(4, 0, 2, cb, 0, NULL);
  x = mk(1, 0, 3, lb3, 1, &kid);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "row 0 has negative size -1");
  const void *lb4[3] = {NULL, neg_off, sizes2};
  kid = mk(4, 0, 2, cb, 0, NULL);
  x = mk(1, 0, 3, lb4, 1, &kid);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "row 0 has negative offset");
  /* 32-bit list views: INT32_MAX + INT32_MAX does not overflow int64 but
   * lies past the child */
  static const int32_t o32[1] = {INT32_MAX}, s32[1] = {INT32_MAX};
  const void *lb5[3] = {NULL, o32, s32};
  static const int32_t v32[2] = {7, 8};
  const void *cb32[2] = {NULL, v32};
  kid = mk(2, 0, 2, cb32, 0, NULL);
  x = mk(1, 0, 3, lb5, 1, &kid);
  struct ArrowSchema s32s = sc("+vl", "", 1, kid_i32);
  CHECK_ERR(ck_arrow_import(&s32s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "reach 4294967294");
}

/* large_list offsets: a negative first offset subtracted from a positive
 * next one overflowed before it was checked; a null row's offsets are not
 * read at all (with a fill value the row is an empty list). */
static void test_large_list_offsets(void) {
  setup();
  static const int64_t vals[4] = {1, 2, 3, 4};
  static const int64_t offs[2] = {INT64_MIN, 3};
  const void *cb[2] = {NULL, vals}, *lb[2] = {NULL, offs};
  struct ArrowSchema s = sc("+L", "", 1, kid_i64);
  struct ArrowArray kid = mk(4, 0, 2, cb, 0, NULL);
  struct ArrowArray x = mk(1, 0, 2, lb, 1, &kid);
  ck_array_preamble *a = NULL;
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "row 0 has negative offset -9223372036854775808");
  static const int64_t dec[3] = {0, 3, 1};
  const void *lb2[2] = {NULL, dec};
  kid = mk(4, 0, 2, cb, 0, NULL);
  x = mk(2, 0, 2, lb2, 1, &kid);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "offsets 1 and 2 decrease");
  /* row 0 null with wild offsets, row 1 fine */
  static const int64_t wild[3] = {1, INT64_MIN, 4};
  static const int64_t wild_ok[3] = {1, 1, 4};
  static const uint8_t valid[1] = {0x02};
  const void *lb3[2] = {valid, wild};
  kid = mk(4, 0, 2, cb, 0, NULL);
  x = mk(2, 1, 2, lb3, 1, &kid);
  ck_array_preamble *fill = arr("int64", 0, NULL);
  REQUIRE(fill != NULL);
  /* row 1 starts at INT64_MIN: refused (row 0, null, is not read) */
  CHECK_ERR(ck_arrow_import(&s, &x, fill, &a), CK_ERR_INVALID_ARGUMENT, "row 1 has negative");
  const void *lb4[2] = {valid, wild_ok};
  kid = mk(4, 0, 2, cb, 0, NULL);
  x = mk(2, 1, 2, lb4, 1, &kid);
  REQUIRE_OK(ck_arrow_import(&s, &x, fill, &a));
  const ck_var_dim_data *d = (const ck_var_dim_data *)a->data;
  CHECK(d[0].size == 0 && d[1].size == 3 && ((const int64_t *)d[1].begin)[0] == 2);
  ck_array_decref(a);
  ck_array_decref(fill);
}

/* Offsets and lengths whose element index times the element width passes
 * the address space: primitive, offsets, views, list views. */
static void test_length_times_width(void) {
  setup();
  static const int64_t vals[2] = {1, 2};
  static const int32_t offs[2] = {0, 1};
  static const char views[32] = {0};
  const void *pb[2] = {NULL, vals};
  ck_array_preamble *a = NULL;
  struct ArrowSchema ps = sc("l", "", 0, NULL);
  struct ArrowArray x = mk(1, 0, 2, pb, 0, NULL);
  x.offset = (int64_t)1 << 61; /* 2**61 * 8 bytes wraps */
  CHECK_ERR(ck_arrow_import(&ps, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "elements of 8 bytes overflow the address space");
  x = mk(1, 0, 2, pb, 0, NULL);
  x.offset = INT64_MAX - 1;
  CHECK_ERR(ck_arrow_import(&ps, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "overflow");
  /* views: 16 bytes each */
  const void *vb[3] = {NULL, views, NULL};
  struct ArrowSchema vs = sc("vu", "", 0, NULL);
  x = mk(1, 0, 3, vb, 0, NULL);
  x.offset = (int64_t)1 << 59;
  CHECK_ERR(ck_arrow_import(&vs, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "elements of 16 bytes overflow");
  /* utf8 offsets: offset + length + 1 of 4 bytes */
  static const char text[] = "x";
  const void *ub[3] = {NULL, offs, text};
  struct ArrowSchema us = sc("u", "", 0, NULL);
  x = mk(1, 0, 3, ub, 0, NULL);
  x.offset = ((int64_t)1 << 61) - 1;
  CHECK_ERR(ck_arrow_import(&us, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "elements of 4 bytes overflow");
  /* large list offsets in a struct child: the path is named */
  static const int64_t loffs[2] = {0, 1};
  const void *lb[2] = {NULL, loffs}, *cb[2] = {NULL, vals}, *sb[1] = {NULL};
  struct ArrowArray kid = mk(2, 0, 2, cb, 0, NULL);
  struct ArrowArray list = mk(1, 0, 2, lb, 1, &kid);
  list.offset = (int64_t)1 << 60;
  list.length = 1;
  struct ArrowArray st = mk(1, 0, 1, sb, 1, &list);
  struct ArrowSchema ls = sc("+L", "rows", 1, kid_i64), *fields[1] = {&ls};
  struct ArrowSchema ss = sc("+s", "", 1, fields);
  CHECK_ERR(ck_arrow_import(&ss, &st, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "field 'rows': offset 1152921504606846976 + length 1 elements of 8 bytes");
  /* a fixed-size list whose (offset + length) * N passes int64 although
   * offset * N and length * N do not */
  static const int32_t v32[8] = {0};
  const void *cb32[2] = {NULL, v32}, *fb[1] = {NULL};
  kid = mk(8, 0, 2, cb32, 0, NULL);
  x = mk(2, 0, 1, fb, 1, &kid);
  x.offset = INT64_MAX / 4;
  struct ArrowSchema fs = sc("+w:4", "", 1, kid_i32);
  CHECK_ERR(ck_arrow_import(&fs, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "overflow");
}

/* A list whose child has a huge offset: the child's first element was
 * computed (child offset + the rows' lowest offset) before the child was
 * checked. */
static void test_child_offset_overflow(void) {
  setup();
  static const int32_t vals[3] = {1, 2, 3};
  static const int32_t offs[2] = {1, 2};
  const void *cb[2] = {NULL, vals}, *lb[2] = {NULL, offs};
  struct ArrowArray kid = mk(3, 0, 2, cb, 0, NULL);
  kid.offset = INT64_MAX;
  struct ArrowArray x = mk(1, 0, 2, lb, 1, &kid);
  struct ArrowSchema s = sc("+l", "", 1, kid_i32);
  ck_array_preamble *a = NULL;
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "overflows");
}

/* null_count against the length and the bitmap */
static void test_null_count(void) {
  static const int32_t vals[2] = {1, 2};
  static const uint8_t valid[1] = {0x03};
  const void *pb[2] = {valid, vals}, *nb[2] = {NULL, vals};
  struct ArrowSchema s = sc("i", "", 0, NULL);
  ck_array_preamble *a = NULL;
  struct ArrowArray x = mk(2, 3, 2, pb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "null count 3 exceeds the length 2");
  x = mk(2, 1, 2, nb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "null count 1 without a validity buffer");
  x = mk(2, -2, 2, pb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "negative");
  /* a declared count the bitmap does not show: refused (nulls are option
   * types now; the count is checked against the bitmap, never trusted) */
  x = mk(2, 1, 2, pb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "null count 1 disagrees with the validity bitmap, which holds 0 nulls");
  CHECK(x.release == NULL && a == NULL);
}

/* view strings: negative offsets and sizes, offset + size past the buffer */
static void test_view_bounds(void) {
  static char views[16];
  static const char text[] = "0123456789abcdefghij";
  static const int64_t vsizes[1] = {20};
  struct ArrowSchema vs = sc("vz", "", 0, NULL);
  const void *vb[4] = {NULL, views, text, vsizes};
  ck_array_preamble *a = NULL;
  int32_t size = 13, buf = 0, off = INT32_MAX;
  memcpy(views, &size, 4);
  memcpy(views + 8, &buf, 4);
  memcpy(views + 12, &off, 4);
  struct ArrowArray x = mk(1, 0, 4, vb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&vs, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "lies outside");
  off = -1;
  memcpy(views + 12, &off, 4);
  x = mk(1, 0, 4, vb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&vs, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "lies outside");
  size = INT32_MIN;
  memcpy(views, &size, 4);
  x = mk(1, 0, 4, vb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&vs, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "negative size");
  size = 20;
  off = 0;
  memcpy(views, &size, 4);
  memcpy(views + 12, &off, 4);
  x = mk(1, 0, 4, vb, 0, NULL);
  REQUIRE_OK(ck_arrow_import(&vs, &x, NULL, &a));
  ck_array_decref(a);
}

/* Found by fuzz_arrow_import: an empty slice (length 0, offset 2) of an
 * array whose values buffer is NULL (allowed when nothing is read) made a
 * pointer NULL + 8 (UBSan); a string array whose arena has no chunk (only
 * empty strings) exported through qsort(NULL, 0, ...) (UBSan). */
static void test_fuzz_findings(void) {
  const void *nb[2] = {NULL, NULL};
  struct ArrowSchema s = sc("l", "", 0, NULL);
  struct ArrowArray x = mk(0, 0, 2, nb, 0, NULL);
  x.offset = 2;
  ck_array_preamble *a = import_ok(&s, &x);
  REQUIRE(a != NULL);
  intptr_t n = -1;
  CHECK(ck_array_shape(a, &n, 1, NULL) == CK_OK && n == 0);
  ck_array_decref(a);
  n = 2;
  a = arr("strided * string", 1, &n); /* two empty strings: no arena chunk */
  REQUIRE(a != NULL);
  struct ArrowSchema vreq = sc("vu", "", 0, NULL), es; /* the string_view export */
  struct ArrowArray ex;
  REQUIRE_OK(ck_arrow_export(a, &vreq, &es, &ex));
  CHECK(strcmp(es.format, "vu") == 0 && ex.length == 2);
  es.release(&es);
  ex.release(&ex);
  ck_array_decref(a);
}

/* Arrow allows any field name, empty and duplicate ones too (Arrow's
 * generated_duplicate_fieldnames golden file, nanoarrow's
 * na.struct([na.uint8()])): such fields import as "_i", and an export
 * asked for the original schema writes the original names back. */
static void test_struct_names(void) {
  static const int32_t v0[2] = {1, 2}, v1[2] = {3, 4}, v2[2] = {5, 6}, v3[2] = {7, 8};
  const void *b0[2] = {NULL, v0}, *b1[2] = {NULL, v1}, *b2[2] = {NULL, v2},
             *b3[2] = {NULL, v3}, *sb[1] = {NULL};
  struct ArrowSchema f0 = sc("i", "", 0, NULL), f1 = sc("i", "a", 0, NULL),
                     f2 = sc("i", "a", 0, NULL), f3 = sc("i", "_3", 0, NULL);
  struct ArrowSchema *fields[4] = {&f0, &f1, &f2, &f3};
  struct ArrowSchema s = sc("+s", "", 4, fields);
  struct ArrowArray kids[4] = {mk(2, 0, 2, b0, 0, NULL), mk(2, 0, 2, b1, 0, NULL),
                               mk(2, 0, 2, b2, 0, NULL), mk(2, 0, 2, b3, 0, NULL)};
  struct ArrowArray x = mk(2, 0, 1, sb, 4, kids);
  ck_array_preamble *a = import_ok(&s, &x);
  REQUIRE(a != NULL);
  /* "" -> _0; the second "a" -> _2; "_3" kept; the type prints and parses */
  const char *want = "strided * {_0: int32, a: int32, _2: int32, _3: int32}";
  CHECK(strcmp(tstr(a->type), want) == 0);
  ck_type parsed = NULL;
  CHECK_OK(ck_type_parse(tstr(a->type), &parsed));
  CHECK(parsed != NULL && ck_type_equal(parsed, a->type));
  ck_type_decref(parsed);
  CHECK(((const int32_t *)(a->data + 8))[0] == 5); /* field _2 of row 0 */
  /* export with the original schema requested: the original names */
  struct ArrowSchema es;
  struct ArrowArray ex;
  REQUIRE_OK(ck_arrow_export(a, &s, &es, &ex));
  CHECK(es.n_children == 4 && strcmp(es.children[0]->name, "") == 0 &&
        strcmp(es.children[1]->name, "a") == 0 && strcmp(es.children[2]->name, "a") == 0 &&
        strcmp(es.children[3]->name, "_3") == 0);
  es.release(&es);
  ex.release(&ex);
  /* without a request: the ckernels names; a request of other names: refused */
  REQUIRE_OK(ck_arrow_export(a, NULL, &es, &ex));
  CHECK(strcmp(es.children[0]->name, "_0") == 0 && strcmp(es.children[2]->name, "_2") == 0);
  es.release(&es);
  ex.release(&ex);
  f2.name = "b";
  CHECK_ERR(ck_arrow_export(a, &s, &es, &ex), CK_ERR_TYPE, "requested field 2 'b'");
  ck_array_decref(a);
  /* a synthesized name that an Arrow field already has gets more '_';
   * names that are not UTF-8 or hold control characters are renamed too */
  struct ArrowSchema g0 = sc("i", "", 0, NULL), g1 = sc("i", "_0", 0, NULL),
                     g2 = sc("i", "\xff", 0, NULL), g3 = sc("i", "tab\there", 0, NULL);
  struct ArrowSchema *gfields[4] = {&g0, &g1, &g2, &g3};
  struct ArrowSchema gs = sc("+s", "", 4, gfields);
  ck_type t = NULL;
  REQUIRE_OK(ck_arrow_schema_type(&gs, &t));
  CHECK(strcmp(tstr(t), "{_0_: int32, _0: int32, _2: int32, _3: int32}") == 0);
  ck_type_decref(t);
}

/* Formats without a ckernels type are refused naming the Arrow type and
 * what is supported: the null type, fixed-size binary, extension types
 * (arrow.uuid over fixed-size binary, and over a supported storage). */
static void test_refused_types(void) {
  ck_type t = NULL;
  struct ArrowSchema n = sc("n", "", 0, NULL);
  CHECK_ERR(ck_arrow_schema_type(&n, &t), CK_ERR_NOT_SUPPORTED,
            "has Arrow type null (format 'n'), which has no ckernels type (supported: bool,");
  struct ArrowSchema w = sc("w:16", "id", 0, NULL), *kids[1] = {&w};
  struct ArrowSchema st = sc("+s", "", 1, kids);
  CHECK_ERR(ck_arrow_schema_type(&st, &t), CK_ERR_NOT_SUPPORTED,
            "field 'id' has Arrow type fixed_size_binary (format 'w:16')");
  /* metadata {1 pair: "ARROW:extension:name" = "arrow.uuid"} */
  static char meta[4 + 4 + 20 + 4 + 10];
  int32_t one = 1, klen = 20, vlen = 10;
  memcpy(meta, &one, 4);
  memcpy(meta + 4, &klen, 4);
  memcpy(meta + 8, "ARROW:extension:name", 20);
  memcpy(meta + 28, &vlen, 4);
  memcpy(meta + 32, "arrow.uuid", 10);
  w.metadata = meta;
  CHECK_ERR(ck_arrow_schema_type(&st, &t), CK_ERR_NOT_SUPPORTED,
            "field 'id' has Arrow extension type 'arrow.uuid' (storage format 'w:16')");
  struct ArrowSchema e = sc("l", "", 0, NULL);
  e.metadata = meta;
  CHECK_ERR(ck_arrow_schema_type(&e, &t), CK_ERR_NOT_SUPPORTED, "import its storage array");
  CHECK(strchr(ck_last_error(), '\n') == NULL);
  /* other metadata is no extension */
  memcpy(meta + 8, "ARROW:extension:nam_", 20);
  CHECK_OK(ck_arrow_schema_type(&e, &t));
  ck_type_decref(t);
  struct ArrowSchema ts = sc("tss:Bad Zone", "", 0, NULL);
  CHECK_ERR(ck_arrow_schema_type(&ts, &t), CK_ERR_NOT_SUPPORTED, "not a zone name");
  struct ArrowSchema iv = sc("tiM", "", 0, NULL);
  CHECK_ERR(ck_arrow_schema_type(&iv, &t), CK_ERR_NOT_SUPPORTED, "Arrow type interval");
  struct ArrowSchema bad_unit = sc("tsx:", "", 0, NULL);
  CHECK_ERR(ck_arrow_schema_type(&bad_unit, &t), CK_ERR_NOT_SUPPORTED, "'tsx:'");
}

/* Found by fuzz_arrow_import: a list inside a fixed-size list inside a
 * struct is filled row by row into one var dim arrmeta; row 0 (a null,
 * filled) was copied into the var dim's arena, row 1 (no null) shared
 * Arrow's buffer and pointed the blockref at the owner, freeing row 0's
 * copy (heap-use-after-free when read). */
static void test_list_rows_copied_then_shared(void) {
  static const int32_t vals[2] = {0, 5};
  static const uint8_t valid[1] = {0x02};
  static const int32_t offs[3] = {0, 1, 2};
  const void *vb[2] = {valid, vals}, *lb[2] = {NULL, offs}, *nb[1] = {NULL};
  struct ArrowArray leaf = mk(2, 1, 2, vb, 0, NULL);
  struct ArrowArray list = mk(2, 0, 2, lb, 1, &leaf);
  struct ArrowArray fixed = mk(2, 0, 1, nb, 1, &list);
  static const int8_t tags[2] = {1, 2};
  const void *tb[2] = {NULL, tags};
  struct ArrowArray tag = mk(2, 0, 2, tb, 0, NULL);
  struct ArrowArray kids[2] = {fixed, tag};
  struct ArrowArray x = mk(2, 0, 1, nb, 2, kids);
  struct ArrowSchema item = sc("i", "item", 0, NULL), *ik[1] = {&item};
  struct ArrowSchema ls = sc("+l", "item", 1, ik), *lk[1] = {&ls};
  struct ArrowSchema fs = sc("+w:1", "f", 1, lk), ts = sc("c", "t", 0, NULL);
  struct ArrowSchema *fields[2] = {&fs, &ts};
  struct ArrowSchema s = sc("+s", "", 2, fields);
  ck_array_preamble *fill = arr("int64", 0, NULL), *a = NULL;
  REQUIRE(fill != NULL);
  *(int64_t *)fill->data = 7;
  REQUIRE_OK(ck_arrow_import(&s, &x, fill, &a));
  ck_array_decref(fill);
  ck_array_preamble *copy = NULL;
  intptr_t n = 2;
  REQUIRE_OK(ck_array_empty(a->type, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &copy));
  CHECK_OK(ck_array_assign(copy, a, CK_ERRMODE_DEFAULT)); /* reads every row */
  const ck_var_dim_data *r0 = (const ck_var_dim_data *)a->data;
  size_t rec = ck_type_data_size(ck_type_element(a->type));
  const ck_var_dim_data *r1 = (const ck_var_dim_data *)(a->data + rec);
  CHECK(r0->size == 1 && ((const int32_t *)r0->begin)[0] == 7);
  CHECK(r1->size == 1 && ((const int32_t *)r1->begin)[0] == 5);
  ck_array_decref(copy);
  ck_array_decref(a);
}

CK_TEST_MAIN(CK_TEST(test_list_rows_copied_then_shared), CK_TEST(test_struct_names), CK_TEST(test_refused_types), CK_TEST(test_fuzz_findings), CK_TEST(test_large_list_view_offset_plus_size), CK_TEST(test_large_list_offsets),
             CK_TEST(test_length_times_width), CK_TEST(test_child_offset_overflow),
             CK_TEST(test_null_count), CK_TEST(test_view_bounds))
