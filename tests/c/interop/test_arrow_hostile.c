/* Hostile Arrow input (issue 29): offsets, sizes, lengths and widths whose
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
  /* a declared count the bitmap does not show: the bitmap decides */
  x = mk(2, 1, 2, pb, 0, NULL);
  REQUIRE_OK(ck_arrow_import(&s, &x, NULL, &a));
  CHECK(((const int32_t *)a->data)[1] == 2);
  ck_array_decref(a);
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
  struct ArrowSchema es;
  struct ArrowArray ex;
  REQUIRE_OK(ck_arrow_export(a, NULL, &es, &ex));
  CHECK(strcmp(es.format, "vu") == 0 && ex.length == 2);
  es.release(&es);
  ex.release(&ex);
  ck_array_decref(a);
}

CK_TEST_MAIN(CK_TEST(test_fuzz_findings), CK_TEST(test_large_list_view_offset_plus_size), CK_TEST(test_large_list_offsets),
             CK_TEST(test_length_times_width), CK_TEST(test_child_offset_overflow),
             CK_TEST(test_null_count), CK_TEST(test_view_bounds))
