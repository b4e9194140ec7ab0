/* The word-at-a-time paths of the Arrow string import and the one-pass
 * string export: ck_bitmap_word against bit-by-bit reads, nulls filled 64
 * slots at a time (words without nulls, words of nulls, mixed, at bit
 * offsets 0..7), garbage and invalid UTF-8 under nulls against invalid
 * UTF-8 under a valid slot, a fill value over numbers, and the text of an
 * export shared (one range, kept alive after the array is gone) or copied
 * (a few ranges, more than 64 ranges, 32-bit offsets). */
#include "arrow_hand.h"
#include "ckernel/validity.h"

enum { N = 300 }; /* several 64-bit words and a partial one */

/* Validity of slot i: all valid in [0, 64), all null in [64, 128), then a
 * mix (every 5th and 7th null). */
static bool vbit(int64_t i) {
  if (i < 64) return true;
  if (i < 128) return false;
  return i % 5 != 0 && i % 7 != 0;
}

static uint8_t bitmap[(N + 16) / 8 + 8];
static int32_t offs32[N + 9];
static int64_t offs64[N + 9];
static char text[8 * (N + 8)];

/* Physical slot k holds "s<k>", except that null slots hold garbage: `bad`,
 * bytes that are no UTF-8 (0xff) or a lone continuation byte (the import
 * then checks element by element), else "~x" (the text validated at once,
 * the nulls filled word by word). */
static void build(int64_t shift, bool bad) {
  memset(bitmap, 0, sizeof bitmap);
  int64_t pos = 0;
  for (int64_t k = 0; k < N + 8; k++) {
    bool valid = k < shift || vbit(k - shift);
    if (valid) bitmap[k >> 3] |= (uint8_t)(1u << (k & 7));
    offs32[k] = (int32_t)pos;
    offs64[k] = pos;
    if (valid) {
      pos += sprintf(text + pos, "s%lld", (long long)k);
    } else {
      text[pos++] = !bad ? '~' : k % 2 ? (char)0xff : (char)0x80;
      text[pos++] = 'x';
    }
  }
  offs32[N + 8] = (int32_t)pos;
  offs64[N + 8] = pos;
}

static void test_bitmap_word(void) {
  uint8_t b[24];
  for (int i = 0; i < 24; i++) b[i] = (uint8_t)(i * 37 + 11);
  for (int64_t off = 0; off < 40; off++) {
    for (int n = 1; n <= 64; n++) {
      uint64_t w = ck_bitmap_word(b, off, n), want = 0;
      for (int i = 0; i < n; i++) {
        want |= (uint64_t)ck_bitmap_get(b, off + i) << i;
      }
      CHECK(w == want);
    }
  }
}

static void test_import_nulls_by_words(void) {
  for (int64_t shift = 0; shift < 16; shift++) {
    build(shift % 8, shift >= 8);
    for (int large = 0; large < 2; large++) {
      const void *bufs[3] = {bitmap, large ? (const void *)offs64 : (const void *)offs32,
                             text};
      struct ArrowSchema s = sc(large ? "U" : "u", "", 0, NULL);
      struct ArrowArray x = mk(N, -1, 3, bufs, 0, NULL);
      x.offset = shift % 8;
      ck_array_preamble *a = import_ok(&s, &x);
      REQUIRE(a != NULL);
      int64_t nulls = -1, first = -1;
      REQUIRE_OK(ck_array_null_count(a, &nulls, &first));
      int64_t want = 0;
      for (int64_t i = 0; i < N; i++) want += !vbit(i);
      CHECK(nulls == want && first == 64);
      char buf[32];
      for (intptr_t i = 0; i < N; i++) {
        bool v;
        CHECK_OK(ck_array_valid_at(a, i, &v));
        CHECK(v == vbit(i));
        if (v) {
          snprintf(buf, sizeof buf, "s%lld", (long long)(i + shift % 8));
          CHECK(str_eq(str_at(a, i), buf));
        } else {
          CHECK(str_at(a, i)->begin == NULL && str_at(a, i)->end == NULL);
        }
      }
      ck_array_decref(a);
    }
  }
}

/* Invalid UTF-8 under a valid slot is refused, naming the element; under a
 * null it is never read (above). */
static void test_invalid_utf8_under_valid_slot(void) {
  build(0, false);
  char saved = text[offs32[201]];
  CHECK(vbit(201));
  text[offs32[201]] = (char)0xc3; /* a lead byte followed by '2': invalid */
  const void *bufs[3] = {bitmap, offs32, text};
  struct ArrowSchema s = sc("u", "", 0, NULL);
  struct ArrowArray x = mk(N, -1, 3, bufs, 0, NULL);
  ck_array_preamble *a = NULL;
  CHECK(ck_arrow_import(&s, &x, NULL, &a) == CK_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL);
  CHECK(strstr(ck_last_error(), "element 201 is not valid UTF-8") != NULL);
  text[offs32[201]] = saved;
}

/* Text that is ASCII up to some element and not after: the elements that
 * start past the ASCII prefix are checked for a character boundary (an "é"
 * split between two elements is valid text as a whole, not as elements). */
static void test_non_ascii_boundaries(void) {
  static int64_t offs[101];
  static char t[1024];
  for (int split = 0; split < 2; split++) {
    int64_t pos = 0;
    for (int i = 0; i < 100; i++) {
      offs[i] = pos;
      pos += sprintf(t + pos, i < 50 ? "a%d" : "\xc3\xa9%d", i);
    }
    offs[100] = pos;
    if (split) { /* element 70 ends with the lead byte of 71's "é", 71 starts with
                  * its continuation byte: the text as a whole is unchanged */
      offs[71] += 1;
    }
    const void *bufs[3] = {NULL, offs, t};
    struct ArrowSchema sch = sc("U", "", 0, NULL);
    struct ArrowArray x = mk(100, 0, 3, bufs, 0, NULL);
    ck_array_preamble *a = NULL;
    ck_status st = ck_arrow_import(&sch, &x, NULL, &a);
    if (!split) {
      REQUIRE(st == CK_OK);
      char buf[32];
      for (int i = 0; i < 100; i++) {
        snprintf(buf, sizeof buf, i < 50 ? "a%d" : "\xc3\xa9%d", i);
        CHECK(str_eq(str_at(a, i), buf));
      }
      ck_array_decref(a);
    } else {
      CHECK(st == CK_ERR_INVALID_ARGUMENT && a == NULL);
      /* named by the element that starts inside a character */
      CHECK(strstr(ck_last_error(), "element 71 is not valid UTF-8") != NULL);
    }
  }
}

/* Numbers with a fill value: the values copied at once, the fill value
 * written over the nulls word by word. */
static void test_fill_numbers_by_words(void) {
  static int32_t vals[N + 8];
  for (int64_t shift = 0; shift < 8; shift++) {
    build(shift, false);
    for (int64_t k = 0; k < N + 8; k++) vals[k] = (int32_t)k;
    const void *bufs[2] = {bitmap, vals};
    struct ArrowSchema s = sc("i", "", 0, NULL);
    struct ArrowArray x = mk(N, -1, 2, bufs, 0, NULL);
    x.offset = shift;
    ck_array_preamble *fill = arr("int32", 0, NULL), *a = NULL;
    REQUIRE(fill != NULL);
    *(int32_t *)fill->data = -7;
    REQUIRE_OK(ck_arrow_import(&s, &x, fill, &a));
    for (int64_t i = 0; i < N; i++) {
      CHECK(((const int32_t *)a->data)[i] == (vbit(i) ? (int32_t)(i + shift) : -7));
    }
    ck_array_decref(a);
    ck_array_decref(fill);
  }
}

static char *exported_text(const struct ArrowArray *y, bool large, int64_t i, size_t *len) {
  int64_t b = large ? ((const int64_t *)y->buffers[1])[i] : ((const int32_t *)y->buffers[1])[i];
  int64_t e = large ? ((const int64_t *)y->buffers[1])[i + 1]
                    : ((const int32_t *)y->buffers[1])[i + 1];
  *len = (size_t)(e - b);
  return (char *)y->buffers[2] + b;
}

/* An imported array's text exported again: one range, shared, and alive
 * after the ck array (and the producer's release) is gone. */
static void test_export_shares_one_range(void) {
  int released = released_arrays;
  /* the valid slots only (a string array without nulls, every slot valid) */
  static int32_t offs[N + 1];
  static char vtext[8 * N];
  int32_t pos = 0;
  for (int i = 0; i < N; i++) {
    offs[i] = pos;
    pos += (int32_t)sprintf(vtext + pos, "v%d", i);
  }
  offs[N] = pos;
  for (int64_t start = 0; start < 8; start++) {
    const void *bufs[3] = {NULL, offs, vtext};
    struct ArrowSchema s = sc("u", "", 0, NULL);
    struct ArrowArray x = mk(N - start, 0, 3, bufs, 0, NULL);
    x.offset = start;
    ck_array_preamble *a = import_ok(&s, &x);
    REQUIRE(a != NULL);
    for (int req = 0; req < 2; req++) {
      struct ArrowSchema rs = sc(req ? "u" : "U", "", 0, NULL), s2;
      struct ArrowArray y;
      REQUIRE_OK(ck_arrow_export(a, &rs, &s2, &y));
      CHECK(y.buffers[2] == vtext + offs[start]); /* zero-copy */
      if (req == 1) {
        ck_array_decref(a); /* the export keeps the array, the array the producer's text */
        a = NULL;
        CHECK(released_arrays == released);
      }
      char buf[32];
      for (int64_t i = 0; i < N - start; i++) {
        size_t len;
        const char *p = exported_text(&y, req == 0, i, &len);
        snprintf(buf, sizeof buf, "v%d", (int)(i + start));
        CHECK(len == strlen(buf) && memcmp(p, buf, len) == 0);
      }
      y.release(&y);
      s2.release(&s2);
    }
    CHECK(released_arrays == ++released); /* the last export released the producer */
  }
}

/* Strings written into an arena out of order, or strided so that every
 * element is its own range: copied, each range once; an element written
 * twice points at the same text twice (one range each time). */
static void test_export_copies_ranges(void) {
  for (int kind = 0; kind < 4; kind++) {
    intptr_t n = 200;
    ck_array_preamble *a = arr("strided * ?string", 1, &n);
    REQUIRE(a != NULL);
    const char *meta = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta) + sizeof(ck_option_arrmeta);
    char buf[32];
    /* kind 0: in order (one range); 1: the second half first (two
     * ranges); 2: backwards (200 ranges); 3: in order with nulls (one
     * range: a null's slot holds no text) */
    for (intptr_t j = 0; j < n; j++) {
      intptr_t i = kind == 1 ? (j + n / 2) % n : kind == 2 ? n - 1 - j : j;
      snprintf(buf, sizeof buf, "t%d", (int)i);
      if (kind == 3 && i % 3 == 1) {
        CHECK_OK(ck_array_set_valid_at(a, i, false));
        continue;
      }
      CHECK_OK(ck_string_assign(a->data + i * 16, meta, buf, strlen(buf)));
    }
    struct ArrowSchema s2;
    struct ArrowArray y;
    REQUIRE_OK(ck_arrow_export(a, NULL, &s2, &y));
    CHECK(strcmp(s2.format, "U") == 0);
    const ck_string *s0 = str_at(a, 0);
    CHECK((y.buffers[2] == s0->begin) == (kind == 0 || kind == 3));
    for (intptr_t i = 0; i < n; i++) {
      size_t len;
      const char *p = exported_text(&y, true, i, &len);
      if (kind == 3 && i % 3 == 1) {
        CHECK(len == 0 && !ck_bitmap_get(y.buffers[0], i));
        continue;
      }
      snprintf(buf, sizeof buf, "t%d", (int)i);
      CHECK(len == strlen(buf) && memcmp(p, buf, len) == 0);
    }
    ck_array_decref(a);
    y.release(&y);
    s2.release(&s2);
  }
}

/* A step-2 slice: every element its own range (more than 64), 32-bit
 * offsets requested. */
static void test_export_strided_slice(void) {
  intptr_t n = 400;
  ck_array_preamble *a = arr("strided * string", 1, &n), *v = NULL;
  REQUIRE(a != NULL);
  const char *meta = ck_array_arrmeta(a) + sizeof(ck_dim_arrmeta);
  char buf[32];
  for (intptr_t i = 0; i < n; i++) {
    snprintf(buf, sizeof buf, "%d", (int)(i * 7));
    CHECK_OK(ck_string_assign(a->data + i * 16, meta, buf, strlen(buf)));
  }
  REQUIRE_OK(ck_array_slice(a, 0, 1, n, 2, &v));
  struct ArrowSchema rs = sc("u", "", 0, NULL), s2;
  struct ArrowArray y;
  REQUIRE_OK(ck_arrow_export(v, &rs, &s2, &y));
  CHECK(strcmp(s2.format, "u") == 0 && y.length == n / 2);
  for (intptr_t i = 0; i < n / 2; i++) {
    size_t len;
    const char *p = exported_text(&y, false, i, &len);
    snprintf(buf, sizeof buf, "%d", (int)((2 * i + 1) * 7));
    CHECK(len == strlen(buf) && memcmp(p, buf, len) == 0);
  }
  ck_array_decref(v);
  ck_array_decref(a);
  y.release(&y);
  s2.release(&s2);
}

CK_TEST_MAIN(CK_TEST(test_bitmap_word), CK_TEST(test_import_nulls_by_words),
             CK_TEST(test_invalid_utf8_under_valid_slot), CK_TEST(test_non_ascii_boundaries),
             CK_TEST(test_fill_numbers_by_words),
             CK_TEST(test_export_shares_one_range), CK_TEST(test_export_copies_ranges),
             CK_TEST(test_export_strided_slice))
