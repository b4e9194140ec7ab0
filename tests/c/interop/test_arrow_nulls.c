/* Arrow arrays with nulls as option arrays `N * ?T` (import) and option
 * arrays as Arrow arrays with a validity buffer (export): zero-copy bitmaps,
 * bit offsets 0..7, slices, strings, bools, streams (lists with null rows
 * and items too), null count checks. */
#include "arrow_hand.h"
#include "ckernel/validity.h"

/* 24 values, nulls where the pattern's bit is 0 (LSB first) */
static const uint8_t pattern[4] = {0xb5, 0x6e, 0xd3, 0xff}; /* 10110101 01101110 ... */

static bool pbit(int64_t i) { return (pattern[i >> 3] >> (i & 7)) & 1; }

static int64_t pnulls(int64_t off, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) k += !pbit(off + i);
  return k;
}

static const ck_option_arrmeta *opt_meta(const ck_array_preamble *a) {
  return (const ck_option_arrmeta *)(const void *)(ck_array_arrmeta(a) +
                                                   sizeof(ck_dim_arrmeta));
}

/* The export's validity bit i (Arrow's offset applied). */
static bool xvalid(const struct ArrowArray *x, int64_t i) {
  const uint8_t *b = x->buffers[0];
  return b == NULL || ck_bitmap_get(b, x->offset + i);
}

static void test_numbers_bit_offsets(void) {
  static const int32_t vals[24] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                   12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
  for (int64_t off = 0; off < 8; off++) {
    int64_t n = 12;
    const void *bufs[2] = {pattern, vals};
    struct ArrowSchema s = sc("i", "", 0, NULL);
    struct ArrowArray x = mk(n, off % 2 ? -1 : pnulls(off, n), 2, bufs, 0, NULL);
    x.offset = off;
    ck_array_preamble *a = import_ok(&s, &x);
    REQUIRE(a != NULL);
    CHECK(strcmp(tstr(ck_array_type(a)), "12 * ?int32") == 0 ||
          strcmp(tstr(ck_array_type(a)), "strided * ?int32") == 0);
    CHECK(ck_type_is_option(ck_type_dtype(ck_array_type(a))));
    CHECK(a->data == (const char *)(vals + off)); /* values shared */
    const ck_option_arrmeta *m = opt_meta(a);
    CHECK(m->bits == pattern && m->bit_offset == off); /* bitmap shared */
    int64_t nulls = -2, first = -2;
    REQUIRE_OK(ck_array_null_count(a, &nulls, &first));
    CHECK(nulls == pnulls(off, n));
    for (intptr_t i = 0; i < n; i++) {
      bool v;
      CHECK_OK(ck_array_valid_at(a, i, &v));
      CHECK(v == pbit(off + i));
      if (v) CHECK(((const int32_t *)a->data)[i] == off + i);
    }
    /* back to Arrow: exact null count, the same validity */
    struct ArrowSchema s2;
    struct ArrowArray y;
    REQUIRE_OK(ck_arrow_export(a, NULL, &s2, &y));
    CHECK(strcmp(s2.format, "i") == 0 && (s2.flags & ARROW_FLAG_NULLABLE));
    CHECK(y.length == n && y.null_count == nulls && y.offset == 0);
    REQUIRE(y.buffers[0] != NULL);
    if (off % 8 == 0) CHECK(y.buffers[0] == pattern); /* zero-copy */
    else CHECK(y.buffers[0] != pattern);               /* shifted copy */
    for (int64_t i = 0; i < n; i++) {
      CHECK(xvalid(&y, i) == pbit(off + i));
      if (pbit(off + i)) CHECK(((const int32_t *)y.buffers[1])[i] == off + i);
    }
    ck_array_decref(a); /* the export keeps everything alive */
    CHECK(((const int32_t *)y.buffers[1])[n - 1] == off + n - 1);
    y.release(&y);
    s2.release(&s2);
  }
}

static void test_null_count_checked(void) {
  static const double vals[8] = {0};
  const void *bufs[2] = {pattern, vals};
  struct ArrowSchema s = sc("g", "", 0, NULL);
  struct ArrowArray x = mk(8, 1, 2, bufs, 0, NULL); /* the bitmap has 3 nulls */
  ck_array_preamble *a = NULL;
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "null count 1 disagrees with the validity bitmap, which holds 3 nulls");
  CHECK(x.release == NULL && a == NULL);
  /* a bitmap with null count 0: a plain array, as before; with null count
   * -1 (unknown): an option array without nulls */
  static const uint8_t all[1] = {0xff};
  const void *bufs2[2] = {all, vals};
  for (int unknown = 0; unknown < 2; unknown++) {
    x = mk(8, unknown ? -1 : 0, 2, bufs2, 0, NULL);
    a = import_ok(&s, &x);
    REQUIRE(a != NULL);
    CHECK(strcmp(tstr(ck_type_dtype(ck_array_type(a))), unknown ? "?float64" : "float64")
          == 0);
    CHECK(a->data == (const char *)vals);
    ck_array_decref(a);
  }
  /* misaligned values: copied, the bitmap still shared */
  static const int64_t wide[5] = {1, 2, 3, 4, 5};
  const void *bufs3[2] = {pattern, (const char *)wide + 1};
  struct ArrowSchema s3 = sc("g", "", 0, NULL);
  x = mk(3, -1, 2, bufs3, 0, NULL);
  a = import_ok(&s3, &x);
  REQUIRE(a != NULL);
  CHECK(a->data != (const char *)wide + 1 && opt_meta(a)->bits == pattern);
  int64_t nulls;
  CHECK_OK(ck_array_null_count(a, &nulls, NULL));
  CHECK(nulls == pnulls(0, 3));
  ck_array_decref(a);
}

static void test_bools(void) {
  static const uint8_t values[3] = {0x0f, 0xf0, 0x55};
  for (int64_t off = 0; off < 8; off++) {
    int64_t n = 15;
    const void *bufs[2] = {pattern, values};
    struct ArrowSchema s = sc("b", "", 0, NULL);
    struct ArrowArray x = mk(n, -1, 2, bufs, 0, NULL);
    x.offset = off;
    ck_array_preamble *a = import_ok(&s, &x);
    REQUIRE(a != NULL);
    CHECK(ck_type_id_of(ck_type_element(ck_type_dtype(ck_array_type(a)))) == CK_TYPE_BOOL);
    CHECK(opt_meta(a)->bits == pattern);
    for (intptr_t i = 0; i < n; i++) {
      bool v;
      CHECK_OK(ck_array_valid_at(a, i, &v));
      CHECK(v == pbit(off + i));
      if (v) CHECK(a->data[i] == ck_bitmap_get(values, off + i));
    }
    struct ArrowSchema s2;
    struct ArrowArray y;
    REQUIRE_OK(ck_arrow_export(a, NULL, &s2, &y));
    CHECK(strcmp(s2.format, "b") == 0 && y.null_count == pnulls(off, n));
    for (int64_t i = 0; i < n; i++) {
      CHECK(xvalid(&y, i) == pbit(off + i));
      if (pbit(off + i)) {
        CHECK(ck_bitmap_get(y.buffers[1], i) == ck_bitmap_get(values, off + i));
      }
    }
    y.release(&y);
    s2.release(&s2);
    ck_array_decref(a);
  }
}

static void check_strings(ck_array_preamble *a, int64_t off, const char *const *texts,
                          int64_t n) {
  for (intptr_t i = 0; i < n; i++) {
    bool v;
    CHECK_OK(ck_array_valid_at(a, i, &v));
    CHECK(v == pbit(off + i));
    if (v) CHECK(str_eq(str_at(a, i), texts[off + i]));
  }
}

static void test_strings(void) {
  static const char *texts[10] = {"a", "", "ccc", "a longer text here", "e", "ff",
                                  "", "hhhh", "i", "jj"};
  static int32_t offs32[11];
  static int64_t offs64[11];
  static char data[64];
  static uint8_t views[10][16];
  int32_t pos = 0;
  for (int i = 0; i < 10; i++) {
    offs32[i] = pos;
    offs64[i] = pos;
    int32_t len = (int32_t)strlen(texts[i]);
    memcpy(data + pos, texts[i], (size_t)len);
    memset(views[i], 0, 16);
    memcpy(views[i], &len, 4);
    if (len <= 12) {
      memcpy(views[i] + 4, texts[i], (size_t)len);
    } else {
      int32_t zero = 0;
      memcpy(views[i] + 4, texts[i], 4);
      memcpy(views[i] + 8, &zero, 4);
      memcpy(views[i] + 12, &pos, 4);
    }
    pos += len;
  }
  offs32[10] = offs64[10] = pos;
  static int64_t vsizes[1];
  vsizes[0] = pos;
  for (int64_t off = 0; off < 8; off++) {
    int64_t n = 10 - off > 7 ? 7 : 10 - off;
    for (int kind = 0; kind < 3; kind++) {
      const char *fmt = kind == 0 ? "u" : kind == 1 ? "U" : "vu";
      const void *b0[3] = {pattern, offs32, data};
      const void *b1[3] = {pattern, offs64, data};
      const void *b2[4] = {pattern, views, data, vsizes};
      struct ArrowSchema s = sc(fmt, "", 0, NULL);
      struct ArrowArray x = kind == 0   ? mk(n, -1, 3, b0, 0, NULL)
                            : kind == 1 ? mk(n, -1, 3, b1, 0, NULL)
                                        : mk(n, -1, 4, b2, 0, NULL);
      x.offset = off;
      ck_array_preamble *a = import_ok(&s, &x);
      REQUIRE(a != NULL);
      CHECK(ck_type_id_of(ck_type_element(ck_type_dtype(ck_array_type(a)))) ==
            CK_TYPE_STRING);
      CHECK(opt_meta(a)->bits == pattern && opt_meta(a)->bit_offset == off);
      check_strings(a, off, texts, n);
      /* export in each encoding, read back */
      for (int req = 0; req < 2; req++) {
        struct ArrowSchema rs = sc(req == 0 ? "u" : "vu", "", 0, NULL);
        struct ArrowSchema s2;
        struct ArrowArray y;
        REQUIRE_OK(ck_arrow_export(a, &rs, &s2, &y));
        CHECK(y.null_count == pnulls(off, n));
        for (int64_t i = 0; i < n; i++) CHECK(xvalid(&y, i) == pbit(off + i));
        ck_array_preamble *b = import_ok(&s2, &y);
        REQUIRE(b != NULL);
        check_strings(b, off, texts, n);
        ck_array_decref(b);
        s2.release(&s2);
      }
      ck_array_decref(a);
    }
  }
}

/* Slices of an option array: a shifted copy of the bitmap (start not a
 * multiple of 8), slot by slot (a step, a reversal). */
static void test_export_slices(void) {
  intptr_t n = 24;
  ck_array_preamble *a = arr("strided * ?int16", 1, &n);
  REQUIRE(a != NULL);
  for (intptr_t i = 0; i < n; i++) {
    ((int16_t *)a->data)[i] = (int16_t)(i * 3);
    CHECK_OK(ck_array_set_valid_at(a, i, pbit(i)));
  }
  static const intptr_t cases[][3] = {{0, 24, 1}, {1, 24, 1}, {3, 20, 1}, {8, 17, 1},
                                      {1, 24, 2}, {23, -25, -1}, {5, 5, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ck_array_preamble *v = NULL;
    REQUIRE_OK(ck_array_slice(a, 0, cases[c][0], cases[c][1] < 0 ? INTPTR_MIN : cases[c][1],
                              cases[c][2], &v));
    intptr_t len;
    (void)ck_array_shape(v, &len, 1, NULL);
    struct ArrowSchema s;
    struct ArrowArray y;
    REQUIRE_OK(ck_arrow_export(v, NULL, &s, &y));
    CHECK(y.length == len);
    int64_t expect = 0;
    for (intptr_t i = 0; i < len; i++) {
      intptr_t src = cases[c][0] + i * cases[c][2];
      expect += !pbit(src);
      CHECK(xvalid(&y, i) == pbit(src));
      if (pbit(src)) CHECK(((const int16_t *)y.buffers[1])[i] == src * 3);
    }
    CHECK(y.null_count == expect);
    if (expect == 0) CHECK(y.buffers[0] == NULL);
    y.release(&y);
    s.release(&s);
    ck_array_decref(v);
  }
  ck_array_decref(a);
}

/* An option array without a single null exports without a validity
 * buffer; a struct with an option field carries the field's bitmap. */
static void test_export_struct_field(void) {
  intptr_t n = 10;
  ck_array_preamble *a = arr("strided * {x: ?float64, y: int8}", 1, &n);
  REQUIRE(a != NULL);
  ck_array_preamble *fx = NULL;
  REQUIRE_OK(ck_array_field(a, "x", 1, &fx));
  for (intptr_t i = 0; i < n; i++) CHECK_OK(ck_array_set_valid_at(fx, i, pbit(i)));
  ck_array_decref(fx);
  struct ArrowSchema s;
  struct ArrowArray y;
  REQUIRE_OK(ck_arrow_export(a, NULL, &s, &y));
  CHECK(strcmp(s.format, "+s") == 0 && y.n_children == 2);
  const struct ArrowArray *cx = y.children[0];
  CHECK(cx->null_count == pnulls(0, n) && y.children[1]->null_count == 0);
  for (int64_t i = 0; i < n; i++) CHECK(xvalid(cx, i) == pbit(i));
  y.release(&y);
  s.release(&s);
  ck_array_decref(a);
}

/* A stream whose second array has nulls: the concatenation is `?T`. */
typedef struct { int next; } nstream;
static int ns_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  (void)st;
  *out = sc("s", "", 0, NULL);
  return 0;
}
static int ns_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  static const int16_t vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  nstream *p = st->private_data;
  const void *plain[2] = {NULL, vals};
  const void *nulls[2] = {pattern, vals};
  if (p->next == 0) *out = mk(4, 0, 2, plain, 0, NULL);
  else if (p->next == 1) *out = mk(8, -1, 2, nulls, 0, NULL);
  else memset(out, 0, sizeof *out);
  p->next++;
  return 0;
}
static const char *ns_err(struct ArrowArrayStream *st) { (void)st; return NULL; }
static void ns_release(struct ArrowArrayStream *st) { st->release = NULL; }

static void test_stream_with_nulls(void) {
  nstream p = {0};
  struct ArrowArrayStream st = {ns_schema, ns_next, ns_err, ns_release, &p};
  ck_array_preamble *a = NULL;
  REQUIRE_OK(ck_arrow_import_stream(&st, NULL, &a));
  CHECK(ck_type_is_option(ck_type_dtype(ck_array_type(a))));
  int64_t nulls;
  CHECK_OK(ck_array_null_count(a, &nulls, NULL));
  CHECK(nulls == pnulls(0, 8));
  for (intptr_t i = 0; i < 12; i++) {
    bool v;
    CHECK_OK(ck_array_valid_at(a, i, &v));
    CHECK(v == (i < 4 || pbit(i - 4)));
    if (v) CHECK(((const int16_t *)a->data)[i] == (i < 4 ? i + 1 : i - 3));
  }
  ck_array_decref(a);
}

/* fill_value= still fills instead (the existing behaviour). */
static void test_fill_still_fills(void) {
  static const int32_t vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const void *bufs[2] = {pattern, vals};
  struct ArrowSchema s = sc("i", "", 0, NULL);
  struct ArrowArray x = mk(8, -1, 2, bufs, 0, NULL);
  ck_array_preamble *fill = arr("int32", 0, NULL), *a = NULL;
  REQUIRE(fill != NULL);
  *(int32_t *)fill->data = -7;
  REQUIRE_OK(ck_arrow_import(&s, &x, fill, &a));
  CHECK(!ck_type_is_option(ck_type_dtype(ck_array_type(a))));
  for (int i = 0; i < 8; i++) CHECK(((const int32_t *)a->data)[i] == (pbit(i) ? i + 1 : -7));
  ck_array_decref(a);
  ck_array_decref(fill);
}

/* A stream of lists: a chunk without nulls, then one with a null row and a
 * null item whose child starts at bit offset 0..7.  The joined type is
 * `?var * ?int64`: the plain rows line up with the null-able rows, and the
 * rows the assignment allocates get one allocation with one bitmap over
 * their items (docs/nulls.md "Assigning rows with nulls"). */
typedef struct { int next; int64_t off; } lstream;
static struct ArrowSchema ls_child;
static struct ArrowSchema *ls_children[1] = {&ls_child};
static int ls_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  (void)st;
  ls_child = sc("l", "item", 0, NULL);
  *out = sc("+l", "", 1, ls_children);
  return 0;
}
static int ls_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  static const int64_t v0[2] = {1, 2};
  static const int32_t o0[2] = {0, 2};
  static const int64_t v1[11] = {0, 0, 0, 0, 0, 0, 0, 4, -9, 3, 0};
  static const int32_t o1[4] = {0, 2, 2, 3};
  static const uint8_t rows1[1] = {0x05}; /* row 1 null */
  static uint8_t items1[2];
  lstream *p = st->private_data;
  if (p->next == 0) {
    const void *cb[2] = {NULL, v0};
    struct ArrowArray child = mk(2, 0, 2, cb, 0, NULL);
    const void *b[2] = {NULL, o0};
    *out = mk(1, 0, 2, b, 1, &child);
  } else if (p->next == 1) {
    memset(items1, 0xff, sizeof items1);
    ck_bitmap_set(items1, p->off + 1, false); /* the item -9: null */
    const void *cb[2] = {items1, v1 + 7 - p->off};
    struct ArrowArray child = mk(3, 1, 2, cb, 0, NULL);
    child.offset = p->off;
    const void *b[2] = {rows1, o1};
    *out = mk(3, 1, 2, b, 1, &child);
  } else {
    memset(out, 0, sizeof *out);
  }
  p->next++;
  return 0;
}

static void test_stream_of_lists_with_nulls(void) {
  for (int64_t off = 0; off < 8; off++) {
    lstream p = {0, off};
    struct ArrowArrayStream st = {ls_schema, ls_next, ns_err, ns_release, &p};
    ck_array_preamble *a = NULL;
    REQUIRE_OK(ck_arrow_import_stream(&st, NULL, &a));
    CHECK(strcmp(tstr(ck_array_type(a)), "strided * ?var * ?int64") == 0);
    const char *m = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta) + sizeof(ck_option_arrmeta);
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(const void *)m;
    const ck_option_arrmeta *items =
        (const ck_option_arrmeta *)(const void *)(m + sizeof(ck_var_dim_arrmeta));
    const ck_var_dim_data *rows = (const ck_var_dim_data *)(const void *)a->data;
    static const size_t sizes[4] = {2, 2, 0, 1};
    static const int64_t want[5] = {1, 2, 4, -1, 3}; /* -1: null */
    CHECK(items->bits != NULL && items->bit_offset == 0 && items->length == 5);
    bool rv[4];
    int k = 0, bad = 0;
    for (intptr_t i = 0; i < 4; i++) {
      CHECK_OK(ck_array_valid_at(a, i, &rv[i]));
      bad += rows[i].size != sizes[i];
      for (size_t q = 0; q < rows[i].size; q++, k++) {
        const char *slot = rows[i].begin + vm->offset + (intptr_t)q * vm->stride;
        bool v = false;
        CHECK_OK(ck_option_get_valid(items, slot, &v));
        bad += v != (want[k] != -1);
        bad += v && *(const int64_t *)(const void *)slot != want[k];
      }
    }
    CHECK(bad == 0 && k == 5);
    CHECK(rv[0] && rv[1] && !rv[2] && rv[3]);
    ck_array_decref(a);
  }
}

CK_TEST_MAIN(CK_TEST(test_numbers_bit_offsets), CK_TEST(test_null_count_checked),
             CK_TEST(test_bools), CK_TEST(test_strings), CK_TEST(test_export_slices),
             CK_TEST(test_export_struct_field), CK_TEST(test_stream_with_nulls),
             CK_TEST(test_fill_still_fills), CK_TEST(test_stream_of_lists_with_nulls))
