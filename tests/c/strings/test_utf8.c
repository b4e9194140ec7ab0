/*
 * test_utf8.c -- ckernel/utf8.h: Python's str methods over UTF-8 views.
 * Expected values are CPython's (written out by hand from the interpreter);
 * the exhaustive oracle tests are tests/python/core/test_utf8_strings.py.
 */
#include "ck_test.h"

#include <math.h>

#define V(lit) (lit), (int64_t)(sizeof(lit) - 1)

static ck_memblock *arena(void) {
  ck_memblock *mb = NULL;
  ck_status st = ck_pod_memblock_new(0, &mb);
  return st == CK_OK ? mb : NULL;
}

static bool eq(ck_string s, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(s.end - s.begin) == n && memcmp(s.begin, lit, n) == 0;
}

static bool span_eq(const char *s, ck_str_span sp, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)sp.length == n && memcmp(s + sp.offset, lit, n) == 0;
}

static void test_check(void) {
  int64_t len = -1;
  CHECK_OK(ck_utf8_check(V("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"), &len));
  CHECK(len == 9);
  CHECK_OK(ck_utf8_check(NULL, 0, &len));
  CHECK(len == 0);
  CHECK_ERR(ck_utf8_check(V("ab\xff"), NULL), CK_ERR_VALUE,
            "can't decode byte 0xff in position 2: invalid start byte");
  CHECK_ERR(ck_utf8_check(V("\xe2\x82\x41"), NULL), CK_ERR_VALUE,
            "bytes in position 0-1: invalid continuation byte");
  CHECK_ERR(ck_utf8_check(V("\xed\xa0\x80"), NULL), CK_ERR_VALUE,
            "byte 0xed in position 0: invalid continuation byte");
  CHECK_ERR(ck_utf8_check(V("\xc0\x80"), NULL), CK_ERR_VALUE, "invalid start byte");
  CHECK_ERR(ck_utf8_check(V("x\xf0\x90\x80"), NULL), CK_ERR_VALUE,
            "bytes in position 1-3: unexpected end of data");
  CHECK_ERR(ck_utf8_check(V("\xf4\x90\x80\x80"), NULL), CK_ERR_VALUE,
            "invalid continuation byte");
  CHECK_ERR(ck_utf8_check(NULL, 3, NULL), CK_ERR_INVALID_ARGUMENT, "NULL string");
  /* long ASCII runs go a word at a time, then the error is still found */
  char buf[100];
  memset(buf, 'a', sizeof buf);
  buf[77] = (char)0x80;
  CHECK_ERR(ck_utf8_check(buf, 100, NULL), CK_ERR_VALUE, "position 77");
}

static void test_codepoints(void) {
  const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
  int64_t n = (int64_t)strlen(s), pos = 0;
  CHECK(ck_utf8_next(s, n, &pos) == 'a' && pos == 1);
  CHECK(ck_utf8_next(s, n, &pos) == 0xE9 && pos == 3);
  CHECK(ck_utf8_next(s, n, &pos) == 0x20AC && pos == 6);
  CHECK(ck_utf8_next(s, n, &pos) == 0x1F600 && pos == 10);
  CHECK(ck_utf8_prev(s, n, &pos) == 0x1F600 && pos == 6);
  pos = 7;
  CHECK(ck_utf8_next(s, n, &pos) == -1 && pos == 7);
  char out[4];
  CHECK(ck_utf8_encode(0x20AC, out) == 3 && memcmp(out, "\xe2\x82\xac", 3) == 0);
  CHECK(ck_utf8_encode(0xD800, out) == 0);
  CHECK(ck_utf8_encode(0x110000, out) == 0);
  CHECK(ck_str_length(s, n) == 5);
  CHECK(ck_str_byte_offset(s, n, 3, -1) == 6);
  CHECK(ck_str_byte_offset(s, n, 5, -1) == n);
  CHECK(ck_str_byte_offset(s, n, 99, -1) == n);
  CHECK(ck_str_cp_index(s, n, 6, 0) == 3);
  CHECK(!ck_str_is_ascii(s, n));
  char big[300];
  memset(big, 'x', sizeof big);
  CHECK(ck_str_is_ascii(big, 300));
  big[299] = (char)0xC3;
  CHECK(!ck_str_is_ascii(big, 300));
  /* long mixed text: offsets agree with a byte loop */
  char mixed[1000];
  int64_t m = 0;
  for (int i = 0; m + 4 <= 1000; i++) {
    m += ck_utf8_encode((uint32_t)(i % 3 == 0 ? 'a' + i % 26 : i % 3 == 1 ? 0xE9 + i : 0x1F600 + i),
                        mixed + m);
  }
  int64_t idx = 0;
  for (int64_t b = 0; b < m; b++) {
    if (((unsigned char)mixed[b] & 0xC0) != 0x80) {
      CHECK(ck_str_byte_offset(mixed, m, idx, 0) == b);
      CHECK(ck_str_cp_index(mixed, m, b, 0) == idx);
      idx++;
    }
  }
  CHECK(ck_str_length(mixed, m) == idx);
}

static void test_index_slice(void) {
  const char *s = "h\xc3\xa9llo";
  int64_t n = (int64_t)strlen(s);
  ck_str_span sp;
  CHECK_OK(ck_str_getitem(s, n, 1, &sp));
  CHECK(sp.offset == 1 && sp.length == 2);
  CHECK_OK(ck_str_getitem(s, n, -1, &sp));
  CHECK(span_eq(s, sp, "o"));
  CHECK_ERR(ck_str_getitem(s, n, 5, &sp), CK_ERR_INDEX, "string index out of range");
  CHECK_ERR(ck_str_getitem(s, n, -6, &sp), CK_ERR_INDEX, "string index out of range");
  CHECK_ERR(ck_str_getitem(s, n, INT64_MIN, &sp), CK_ERR_INDEX, "out of range");
  ck_memblock *mb = arena();
  REQUIRE(mb != NULL);
  ck_string r;
  CHECK_OK(ck_str_slice(NULL, s, n, 1, 3, 1, &r));
  CHECK(eq(r, "\xc3\xa9l") && r.begin == s + 1); /* a view */
  CHECK_OK(ck_str_slice(mb, s, n, CK_STR_NONE, CK_STR_NONE, -1, &r));
  CHECK(eq(r, "oll\xc3\xa9h"));
  CHECK_OK(ck_str_slice(mb, s, n, CK_STR_NONE, CK_STR_NONE, 2, &r));
  CHECK(eq(r, "hlo"));
  /* Numba crashes on s[3:0:2**63-1]; CPython gives "" */
  CHECK_OK(ck_str_slice(mb, s, n, 3, 0, INT64_MAX, &r));
  CHECK(eq(r, ""));
  CHECK_OK(ck_str_slice(mb, s, n, 1, INT64_MAX, INT64_MAX, &r));
  CHECK(eq(r, "\xc3\xa9"));
  CHECK_OK(ck_str_slice(mb, s, n, INT64_MAX, INT64_MIN, INT64_MIN, &r));
  CHECK(eq(r, "o"));
  CHECK_OK(ck_str_slice(mb, "abcdef", 6, -2, INT64_MIN, -3, &r));
  CHECK(eq(r, "eb"));
  CHECK_OK(ck_str_slice(mb, "abcdef", 6, INT64_MIN + 1, INT64_MAX, 4, &r));
  CHECK(eq(r, "ae"));
  CHECK_ERR(ck_str_slice(mb, s, n, 0, 1, 0, &r), CK_ERR_VALUE, "slice step cannot be zero");
  int64_t a = 3, b = 0, count = -1;
  CHECK_OK(ck_slice_indices(10, &a, &b, INT64_MAX, &count));
  CHECK(count == 0);
  ck_memblock_decref(mb);
}

static void test_compare_hash(void) {
  CHECK(ck_str_compare(V("abc"), V("abd")) < 0);
  CHECK(ck_str_compare(V("ab"), V("abc")) < 0);
  CHECK(ck_str_compare(V("\xef\xbf\xbf"), V("\xf0\x90\x80\x80")) < 0); /* U+FFFF < U+10000 */
  CHECK(ck_str_compare(V(""), V("")) == 0);
  CHECK(ck_str_equal(V("h\xc3\xa9"), V("h\xc3\xa9")));
  CHECK(!ck_str_equal(V("ab"), V("ac")));
  CHECK(ck_str_hash(V("hello world!")) == ck_str_hash("hello world!xx", 12));
  CHECK(ck_str_hash(V("hello world!")) != ck_str_hash(V("hello world?")));
  CHECK(ck_str_hash(V("")) != ck_str_hash("\0", 1));
}

static void test_search(void) {
  const char *s = "h\xc3\xa9llo w\xc3\xa9rld h\xc3\xa9llo";
  int64_t n = (int64_t)strlen(s);
  CHECK(ck_str_find(s, n, V("llo"), 0, INT64_MAX) == 2);
  CHECK(ck_str_rfind(s, n, V("llo"), 0, INT64_MAX) == 14);
  CHECK(ck_str_find(s, n, V("llo"), 3, INT64_MAX) == 14);
  CHECK(ck_str_find(s, n, V("llo"), 3, -1) == -1);
  CHECK(ck_str_find(s, n, V("\xc3\xa9"), -5, INT64_MAX) == 13);
  CHECK(ck_str_find(s, n, V(""), 17, INT64_MAX) == 17);
  CHECK(ck_str_find(s, n, V(""), 18, INT64_MAX) == -1);
  CHECK(ck_str_rfind(s, n, V(""), 0, INT64_MAX) == 17);
  CHECK(ck_str_count(s, n, V("l"), 0, INT64_MAX) == 5);
  CHECK(ck_str_count(s, n, V(""), 0, INT64_MAX) == 18);
  CHECK(ck_str_count(V("aaaa"), V("aa"), 0, INT64_MAX) == 2);
  CHECK(ck_str_count(V("abc"), V(""), 4, INT64_MAX) == 0);
  CHECK(ck_str_contains(s, n, V("w\xc3\xa9r")));
  CHECK(!ck_str_contains(s, n, V("xyz")));
  int64_t i = 0;
  CHECK_OK(ck_str_index(s, n, V("w"), 0, INT64_MAX, &i));
  CHECK(i == 6);
  CHECK_ERR(ck_str_index(s, n, V("q"), 0, INT64_MAX, &i), CK_ERR_VALUE, "substring not found");
  CHECK_ERR(ck_str_rindex(s, n, V("q"), 0, INT64_MAX, &i), CK_ERR_VALUE, "substring not found");
  CHECK(ck_str_startswith(s, n, V("h\xc3\xa9"), 0, INT64_MAX));
  CHECK(ck_str_startswith(s, n, V("w"), 6, INT64_MAX));
  CHECK(!ck_str_startswith(s, n, V("w\xc3\xa9r"), 6, 8));
  CHECK(ck_str_endswith(s, n, V("llo"), 0, INT64_MAX));
  /* whole-text bounds (start 0, end >= bytes) take the byte paths: the same
   * answers as bounds resolved in code points */
  CHECK(ck_str_find(s, n, V("w\xc3\xa9"), 0, n) == 6);
  CHECK(ck_str_find(s, n, V("w\xc3\xa9"), 0, 17) == 6);
  CHECK(ck_str_find(s, n, V("h"), 0, n) == 0 && ck_str_find(s, n, V("z"), 0, n) == -1);
  CHECK(ck_str_rfind(s, n, V("h\xc3\xa9"), 0, n) == 12);
  CHECK(ck_str_rfind(s, n, V(""), 0, n) == 17 && ck_str_find(V(""), V(""), 0, 0) == 0);
  CHECK(ck_str_count(s, n, V("\xc3\xa9l"), 0, n) == 2);
  CHECK(ck_str_count(s, n, V("l"), 0, 17) == 5 && ck_str_count(s, n, V("l"), 0, 15) == 4);
  CHECK(!ck_str_startswith(V("h"), V("h\xc3\xa9"), 0, INT64_MAX));
  CHECK(ck_str_startswith(V(""), V(""), 0, 0) && ck_str_endswith(V("ab"), V(""), 0, 2));
  CHECK(!ck_str_endswith(s, n, V("llo"), 0, 16) && ck_str_endswith(s, n, V("ll"), 0, 16));
  CHECK(ck_str_endswith(s, n, V("w\xc3\xa9"), 0, 8));
  CHECK(!ck_str_startswith(V(""), V(""), 1, INT64_MAX));
  CHECK(ck_str_startswith(V(""), V(""), 0, INT64_MAX));
  /* long haystacks take the shift table; compare with a naive loop */
  char hay[3000];
  for (int k = 0; k < 3000; k++) {
    hay[k] = "abcab"[(k * 7 + k / 13) % 5];
  }
  const char *needles[] = {"abcab", "cabca", "aa", "bcabcabcab", "ab", "b", "abcabcabcabcabcabcabcabc"};
  for (size_t t = 0; t < sizeof needles / sizeof *needles; t++) {
    int64_t m = (int64_t)strlen(needles[t]), first = -1, last = -1, cnt = 0;
    for (int64_t k = 0; k + m <= 3000; k++) {
      if (memcmp(hay + k, needles[t], (size_t)m) == 0) {
        if (first < 0) {
          first = k;
        }
        last = k;
      }
    }
    for (int64_t k = 0; k + m <= 3000;) {
      if (memcmp(hay + k, needles[t], (size_t)m) == 0) {
        cnt++;
        k += m;
      } else {
        k++;
      }
    }
    CHECK(ck_str_find(hay, 3000, needles[t], m, 0, INT64_MAX) == first);
    CHECK(ck_str_rfind(hay, 3000, needles[t], m, 0, INT64_MAX) == last);
    CHECK(ck_str_count(hay, 3000, needles[t], m, 0, INT64_MAX) == cnt);
  }
}

/* The pieces of a split as one string "a|b|c" (for comparison). */
static bool pieces(const char *s, const ck_str_span *sp, int64_t k, const char *want) {
  char buf[512];
  size_t w = 0;
  for (int64_t i = 0; i < k; i++) {
    if (i > 0) {
      buf[w++] = '|';
    }
    memcpy(buf + w, s + sp[i].offset, (size_t)sp[i].length);
    w += (size_t)sp[i].length;
  }
  buf[w] = 0;
  if (strcmp(buf, want) != 0) {
    fprintf(stderr, "  pieces: got '%s', want '%s'\n", buf, want);
    return false;
  }
  return true;
}

/* ck_str_split_count / next / item give what ck_str_split gives. */
static void test_split_steps(void) {
  ck_memblock *mb = arena();
  REQUIRE(mb != NULL);
  static const char *texts[] = {
      "", " ", "a", "  a b\xe2\x80\x83" "c  d ", "abcdefgh ijklmnop", "x\x1c\x1fy\t\x0bz q",
      "12345678\xc2\xa0" "9 \xe3\x80\x80\xe3\x80\x80z", "a,b,,c,", ",,", "\xc3\xa9,\xc3\xa9",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
      "\xe6\x97\xa5\xe6\x9c\xac caf\xc3\xa9 \xc3\xbc" "ber\t\xce\xa3\xce\x9f \xf0\x9f\x98\x80 x\xe0\xa5\xa6 y  ",
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 \xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\x83\xc2\xa0\xc3\xa9 ", "\xc2\x85w\xe1\x9a\x80w\xe2\x80\xa8 \xe4\xb8\x80"};
  static const char *seps[] = {NULL, ",", " ", "ab", "\xc3\xa9"};
  for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
    const char *s = texts[t];
    int64_t n = (int64_t)strlen(s);
    for (size_t q = 0; q < sizeof seps / sizeof *seps; q++) {
      const char *sep = seps[q];
      int64_t m = sep == NULL ? 0 : (int64_t)strlen(sep);
      for (int64_t maxsplit = -1; maxsplit <= 3; maxsplit++) {
        ck_str_span *want;
        int64_t k;
        CHECK_OK(ck_str_split(mb, s, n, sep, m, maxsplit, &want, &k));
        CHECK(ck_str_split_count(s, n, sep, m, maxsplit) == k);
        ck_str_split_state state = {0, maxsplit < 0 ? INT64_MAX : maxsplit};
        ck_str_span got;
        for (int64_t i = 0; i < k; i++) {
          CHECK(ck_str_split_next(s, n, sep, m, &state, &got));
          CHECK(got.offset == want[i].offset && got.length == want[i].length);
          CHECK_OK(ck_str_split_item(s, n, sep, m, maxsplit, i, &got));
          CHECK(got.offset == want[i].offset && got.length == want[i].length);
          CHECK_OK(ck_str_split_item(s, n, sep, m, maxsplit, i - k, &got));
          CHECK(got.offset == want[i].offset && got.length == want[i].length);
        }
        CHECK(!ck_str_split_next(s, n, sep, m, &state, &got));
        CHECK(!ck_str_split_next(s, n, sep, m, &state, &got)); /* stays done */
        CHECK_ERR(ck_str_split_item(s, n, sep, m, maxsplit, k, &got), CK_ERR_INDEX,
                  "list index out of range");
        CHECK_ERR(ck_str_split_item(s, n, sep, m, maxsplit, -k - 1, &got), CK_ERR_INDEX,
                  "list index out of range");
      }
    }
  }
  ck_str_span got;
  CHECK_ERR(ck_str_split_item(V("a"), V(""), -1, 0, &got), CK_ERR_VALUE, "empty separator");
  CHECK(ck_str_split_count(V("a"), V(""), -1) == 0);
  ck_memblock_decref(mb);
}

static void test_split(void) {
  ck_memblock *mb = arena();
  REQUIRE(mb != NULL);
  ck_str_span *sp;
  int64_t k;
  const char *s = "  a b\xe2\x80\x83" "c  d ";
  int64_t n = (int64_t)strlen(s);
  CHECK_OK(ck_str_split(mb, s, n, NULL, 0, -1, &sp, &k));
  CHECK(k == 4 && pieces(s, sp, k, "a|b|c|d"));
  /* Numba ignores maxsplit of s.split(None, 1) */
  CHECK_OK(ck_str_split(mb, s, n, NULL, 0, 1, &sp, &k));
  CHECK(k == 2 && pieces(s, sp, k, "a|b\xe2\x80\x83" "c  d "));
  CHECK_OK(ck_str_rsplit(mb, s, n, NULL, 0, 1, &sp, &k));
  CHECK(k == 2 && pieces(s, sp, k, "  a b\xe2\x80\x83" "c|d"));
  CHECK_OK(ck_str_split(mb, V("   "), NULL, 0, -1, &sp, &k));
  CHECK(k == 0 && sp == NULL);
  CHECK_OK(ck_str_split(mb, V(" a b "), NULL, 0, 0, &sp, &k));
  CHECK(k == 1 && pieces(" a b ", sp, k, "a b "));
  /* Numba splits "a||b||c||d".rsplit("|", 2) in the wrong places */
  CHECK_OK(ck_str_rsplit(mb, V("a||b||c||d"), V("|"), 2, &sp, &k));
  CHECK(k == 3 && pieces("a||b||c||d", sp, k, "a||b||c||d") && sp[0].length == 7 &&
        sp[1].length == 0 && sp[2].length == 1);
  CHECK_OK(ck_str_split(mb, V("a||b||c||d"), V("||"), -1, &sp, &k));
  CHECK(k == 4 && pieces("a||b||c||d", sp, k, "a|b|c|d"));
  CHECK_OK(ck_str_split(mb, V(""), V(","), -1, &sp, &k));
  CHECK(k == 1 && sp[0].length == 0);
  CHECK_ERR(ck_str_split(mb, V("abc"), "", 0, -1, &sp, &k), CK_ERR_VALUE, "empty separator");
  /* many pieces: the span array grows (resize of the arena's latest block) */
  char big[2001];
  for (int i = 0; i < 2000; i++) {
    big[i] = i % 2 ? ',' : 'x';
  }
  CHECK_OK(ck_str_split(mb, big, 2000, V(","), -1, &sp, &k));
  CHECK(k == 1001 && sp[1000].length == 0 && sp[999].offset == 1998);
  CHECK_OK(ck_str_splitlines(mb, V("a\nb\r\nc\rd\xe2\x80\xa8" "e\x1c"), false, &sp, &k));
  CHECK(k == 5 && pieces("a\nb\r\nc\rd\xe2\x80\xa8" "e\x1c", sp, k, "a|b|c|d|e"));
  CHECK_OK(ck_str_splitlines(mb, V("a\nb\r\n"), true, &sp, &k));
  CHECK(k == 2 && pieces("a\nb\r\n", sp, k, "a\n|b\r\n"));
  ck_str_span part[3];
  CHECK_OK(ck_str_partition(V("a=b=c"), V("="), part));
  CHECK(part[0].length == 1 && part[1].offset == 1 && part[2].offset == 2 && part[2].length == 3);
  CHECK_OK(ck_str_rpartition(V("a=b=c"), V("="), part));
  CHECK(part[0].length == 3 && part[2].offset == 4);
  CHECK_OK(ck_str_rpartition(V("abc"), V("="), part));
  CHECK(part[0].length == 0 && part[2].length == 3);
  CHECK_ERR(ck_str_partition(V("abc"), "", 0, part), CK_ERR_VALUE, "empty separator");
  ck_str_span r;
  CHECK_OK(ck_str_strip(V(" \t\xc2\xa0x y\xe3\x80\x80\n"), NULL, 0, CK_STRIP_BOTH, &r));
  CHECK(r.offset == 4 && r.length == 3);
  CHECK_OK(ck_str_strip(V("xx\xc3\xa9yhixy\xc3\xa9"), V("y\xc3\xa9x"), CK_STRIP_LEFT, &r));
  CHECK(span_eq("xx\xc3\xa9yhixy\xc3\xa9", r, "hixy\xc3\xa9"));
  CHECK_OK(ck_str_strip(V("xx\xc3\xa9yhixy\xc3\xa9"), V("y\xc3\xa9x"), CK_STRIP_RIGHT, &r));
  CHECK(span_eq("xx\xc3\xa9yhixy\xc3\xa9", r, "xx\xc3\xa9yhi"));
  r = ck_str_removeprefix(V("prefix-x"), V("prefix-"));
  CHECK(r.offset == 7 && r.length == 1);
  r = ck_str_removesuffix(V("x.txt"), V(".txt"));
  CHECK(r.offset == 0 && r.length == 1);
  r = ck_str_removesuffix(V("x.txt"), V(""));
  CHECK(r.length == 5);
  ck_memblock_decref(mb);
}

static void test_build(void) {
  ck_memblock *mb = arena();
  REQUIRE(mb != NULL);
  ck_string r;
  /* Numba gives "AA" */
  CHECK_OK(ck_str_replace(mb, V(""), V(""), V("A"), -1, &r));
  CHECK(eq(r, "A"));
  CHECK_OK(ck_str_replace(mb, V("h\xc3\xa9"), V(""), V("-"), -1, &r));
  CHECK(eq(r, "-h-\xc3\xa9-"));
  CHECK_OK(ck_str_replace(mb, V("abc"), V(""), V("-"), 2, &r));
  CHECK(eq(r, "-a-bc"));
  CHECK_OK(ck_str_replace(mb, V("aaaa"), V("a"), V("bb"), 3, &r));
  CHECK(eq(r, "bbbbbba"));
  CHECK_OK(ck_str_replace(mb, V("one two one"), V("one"), V(""), -1, &r));
  CHECK(eq(r, " two "));
  CHECK_OK(ck_str_replace(mb, V("ab\xc3\xa9" "ab\xc3\xa9" "ab"), V("ab"), V("\xc3\xa9"), 2, &r));
  CHECK(eq(r, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" "ab")); /* same length: one copy */
  CHECK(ck_str_count(V("a,b,,c"), V(","), 2, INT64_MAX) == 2);
  CHECK_OK(ck_str_replace(mb, V("abc"), V("x"), V("y"), -1, &r));
  CHECK(eq(r, "abc"));
  /* one byte for another everywhere: the vectorised pass */
  const char *foo = "foo b\xc3\xa9r o";
  CHECK_OK(ck_str_replace(mb, foo, (int64_t)strlen(foo), V("o"), V("0"), -1, &r));
  CHECK(eq(r, "f00 b\xc3\xa9r 0") && r.begin != foo);
  CHECK_OK(ck_str_replace(mb, foo, (int64_t)strlen(foo), V("o"), V("o"), -1, &r));
  CHECK(r.begin == foo && r.end == foo + strlen(foo)); /* nothing changes: a view */
  CHECK_OK(ck_str_replace(mb, V("oooo"), V("o"), V("0"), 2, &r));
  CHECK(eq(r, "00oo"));
  CHECK_OK(ck_str_replace(mb, V("abc"), V("b"), V("y"), 0, &r));
  CHECK(eq(r, "abc"));
  ck_string items[3] = {{(char *)"a", (char *)"a" + 1}, {NULL, NULL}, {(char *)"\xc3\xa9", (char *)"\xc3\xa9" + 2}};
  CHECK_OK(ck_str_join(mb, V(", "), items, 3, &r));
  CHECK(eq(r, "a, , \xc3\xa9"));
  CHECK_OK(ck_str_join(mb, V(", "), items, 0, &r));
  CHECK(eq(r, ""));
  ck_str_span *sp;
  int64_t k;
  const char *s = "  hello   big  world ";
  CHECK_OK(ck_str_split(mb, s, (int64_t)strlen(s), NULL, 0, -1, &sp, &k));
  CHECK_OK(ck_str_join_spans(mb, V(" "), s, sp, k, &r));
  CHECK(eq(r, "hello big world"));
  CHECK_OK(ck_str_repeat(mb, V("ab"), 3, &r));
  CHECK(eq(r, "ababab"));
  CHECK_OK(ck_str_repeat(mb, V("ab"), -3, &r));
  CHECK(eq(r, ""));
  CHECK_ERR(ck_str_repeat(mb, V("ab"), INT64_MAX, &r), CK_ERR_OVERFLOW, "too long");
  CHECK_OK(ck_str_zfill(mb, V("-42"), 5, &r));
  CHECK(eq(r, "-0042"));
  CHECK_OK(ck_str_zfill(mb, V("+"), 3, &r));
  CHECK(eq(r, "+00"));
  CHECK_OK(ck_str_zfill(mb, V("abc"), 2, &r));
  CHECK(eq(r, "abc"));
  {
    /* zfill("") must not read the byte after its zeros: leave a '-' there */
    char *b, *e;
    CHECK_OK(ck_pod_allocate(mb, 4, 1, &b, &e));
    memcpy(b, "000-", 4);
    CHECK_OK(ck_pod_resize(mb, 0, &b, &e));
    CHECK_OK(ck_str_zfill(mb, "", 0, 3, &r));
    CHECK(eq(r, "000"));
  }
  CHECK_OK(ck_str_pad(mb, V("\xc3\xa9"), 4, V("*"), CK_ALIGN_CENTER, &r));
  CHECK(eq(r, "*\xc3\xa9**"));
  CHECK_OK(ck_str_pad(mb, V("ab"), 5, V("\xe2\x82\xac"), CK_ALIGN_CENTER, &r));
  CHECK(eq(r, "\xe2\x82\xac\xe2\x82\xac" "ab\xe2\x82\xac")); /* "**ab*" */
  CHECK_OK(ck_str_pad(mb, V("ab"), 3, V(" "), CK_ALIGN_RIGHT, &r));
  CHECK(eq(r, " ab"));
  CHECK_ERR(ck_str_pad(mb, V("ab"), 3, V("xy"), CK_ALIGN_LEFT, &r), CK_ERR_TYPE,
            "exactly one character");
  CHECK_OK(ck_str_expandtabs(mb, V("a\tb\xc3\xa9\tc\nd\te"), 4, &r));
  CHECK(eq(r, "a   b\xc3\xa9  c\nd   e"));
  CHECK_OK(ck_str_expandtabs(mb, V("a\tb"), 0, &r));
  CHECK(eq(r, "ab"));
  int64_t cp;
  CHECK_OK(ck_str_ord(V("\xe2\x82\xac"), &cp));
  CHECK(cp == 0x20AC);
  CHECK_ERR(ck_str_ord(V("ab"), &cp), CK_ERR_TYPE, "string of length 2 found");
  CHECK_ERR(ck_str_ord(V(""), &cp), CK_ERR_TYPE, "string of length 0 found");
  char c4[4];
  int64_t cl;
  CHECK_OK(ck_str_chr(0x1F600, c4, &cl));
  CHECK(cl == 4 && memcmp(c4, "\xf0\x9f\x98\x80", 4) == 0);
  CHECK_ERR(ck_str_chr(0x110000, c4, &cl), CK_ERR_VALUE, "chr() arg not in range(0x110000)");
  CHECK_ERR(ck_str_chr(-1, c4, &cl), CK_ERR_VALUE, "not in range");
  CHECK_ERR(ck_str_chr(0xDC00, c4, &cl), CK_ERR_VALUE, "surrogates");
  ck_memblock_decref(mb);
}

static void test_case(void) {
  ck_memblock *mb = arena();
  REQUIRE(mb != NULL);
  ck_string r;
  CHECK_OK(ck_str_upper(mb, V("stra\xc3\x9f" "e and more ASCII text"), &r));
  CHECK(eq(r, "STRASSE AND MORE ASCII TEXT"));
  CHECK_OK(ck_str_lower(mb, V("\xce\x9f\xce\x94\xce\x8c\xce\xa3 \xce\xa3"), &r)); /* ΟΔΌΣ Σ */
  CHECK(eq(r, "\xce\xbf\xce\xb4\xcf\x8c\xcf\x82 \xcf\x83"));                  /* οδός σ */
  CHECK_OK(ck_str_lower(mb, V("\xc4\xb0"), &r)); /* İ -> i̇ */
  CHECK(eq(r, "i\xcc\x87"));
  CHECK_OK(ck_str_lower(mb, V("ASCII Only, With A Tail@[`{"), &r));
  CHECK(eq(r, "ascii only, with a tail@[`{"));
  CHECK_OK(ck_str_upper(mb, V("ascii only, with a tail@[`{"), &r));
  CHECK(eq(r, "ASCII ONLY, WITH A TAIL@[`{"));
  CHECK_OK(ck_str_casefold(mb, V("Stra\xc3\x9f" "e"), &r));
  CHECK(eq(r, "strasse"));
  CHECK_OK(ck_str_title(mb, V("hello wORLD 3rd \xc7\x86x"), &r)); /* ǆ -> ǅ */
  CHECK(eq(r, "Hello World 3Rd \xc7\x85x"));
  CHECK_OK(ck_str_capitalize(mb, V("\xc7\x86X Y"), &r));
  CHECK(eq(r, "\xc7\x85x y"));
  CHECK_OK(ck_str_swapcase(mb, V("aB\xc3\x9f"), &r));
  CHECK(eq(r, "AbSS"));
  CHECK_OK(ck_str_upper(mb, V("\xce\x90"), &r)); /* ΐ: 2 bytes -> 6 */
  CHECK(eq(r, "\xce\x99\xcc\x88\xcc\x81"));
  CHECK_OK(ck_str_lower(mb, V(""), &r));
  CHECK(eq(r, ""));
  CHECK(ck_str_isdigit(V("\xd9\xa3" "12\xc2\xb2")));
  CHECK(!ck_str_isdecimal(V("12\xc2\xb2")));
  CHECK(ck_str_isnumeric(V("\xc2\xbd")));
  CHECK(!ck_str_isdigit(V("")));
  CHECK(ck_str_isalpha(V("h\xc3\xa9llo")));
  CHECK(ck_str_isalnum(V("abc123\xc2\xbd")));
  CHECK(ck_str_isspace(V(" \t\xe3\x80\x80")));
  CHECK(!ck_str_isspace(V("")));
  CHECK(ck_str_islower(V("abc 1")));
  CHECK(!ck_str_islower(V("1")));
  CHECK(ck_str_isupper(V("ABC \xc3\x89")));
  CHECK(ck_str_istitle(V("Hello World")));
  CHECK(!ck_str_istitle(V("Hello world")));
  CHECK(ck_str_istitle(V("\xc7\x85x")));
  CHECK(ck_str_isascii(V("")));
  CHECK(ck_str_isidentifier(V("_x\xc3\xa9" "1")));
  CHECK(!ck_str_isidentifier(V("1x")));
  uint32_t m[3];
  CHECK(ck_unicode_case(0xDF, CK_CASE_UPPER, m) == 2 && m[0] == 'S' && m[1] == 'S');
  CHECK(ck_unicode_case('a', CK_CASE_TITLE, m) == 1 && m[0] == 'A');
  CHECK(ck_unicode_flags(0x110000) == 0);
  {
    /* the flags of a range: each as ck_unicode_flags; bad ranges refused */
    static uint32_t fl[0x1000];
    REQUIRE_OK(ck_unicode_flags_range(0x10FFFF - 0xFFF, 0x1000, fl));
    CHECK(fl[0xFFF] == ck_unicode_flags(0x10FFFF));
    REQUIRE_OK(ck_unicode_flags_range(0x300, 0x1000, fl));
    bool same = true;
    for (uint32_t i = 0; i < 0x1000; i++) {
      same &= fl[i] == ck_unicode_flags(0x300 + i);
    }
    CHECK(same);
    CHECK(ck_unicode_flags_range(0x10FFFF, 2, fl) == CK_ERR_INVALID_ARGUMENT);
    CHECK(ck_unicode_flags_range(0xFFFFFFFFu, 2, fl) == CK_ERR_INVALID_ARGUMENT);
    CHECK(ck_unicode_flags_range(0, 1, NULL) == CK_ERR_INVALID_ARGUMENT);
    REQUIRE_OK(ck_unicode_flags_range(0x110000, 0, NULL));
  }
  CHECK(ck_unicode_decimal(0x663) == 3 && ck_unicode_digit(0xB2) == 2 &&
        ck_unicode_decimal(0xB2) == -1);
  CHECK(strlen(ck_unicode_version()) >= 5);
  ck_memblock_decref(mb);
}

static void test_numbers(void) {
  int64_t v = 0;
  CHECK_OK(ck_str_to_int64(V("  -1_000\xe3\x80\x80"), 10, &v));
  CHECK(v == -1000);
  CHECK_OK(ck_str_to_int64(V("\xd9\xa1\xd9\xa2"), 10, &v)); /* Arabic-Indic 12 */
  CHECK(v == 12);
  CHECK_OK(ck_str_to_int64(V("0x_ff"), 0, &v));
  CHECK(v == 255);
  CHECK_OK(ck_str_to_int64(V("0b101"), 2, &v));
  CHECK(v == 5);
  CHECK_OK(ck_str_to_int64(V("zz"), 36, &v));
  CHECK(v == 1295);
  CHECK_OK(ck_str_to_int64(V("000"), 0, &v));
  CHECK(v == 0);
  CHECK_OK(ck_str_to_int64(V("-9223372036854775808"), 10, &v));
  CHECK(v == INT64_MIN);
  CHECK_ERR(ck_str_to_int64(V("9223372036854775808"), 10, &v), CK_ERR_OVERFLOW, "int64");
  CHECK_ERR(ck_str_to_int64(V("010"), 0, &v), CK_ERR_VALUE,
            "invalid literal for int() with base 0: '010'");
  CHECK_ERR(ck_str_to_int64(V("1__0"), 10, &v), CK_ERR_VALUE, "base 10: '1__0'");
  CHECK_ERR(ck_str_to_int64(V("_1"), 10, &v), CK_ERR_VALUE, "base 10: '_1'");
  CHECK_ERR(ck_str_to_int64(V("1_"), 10, &v), CK_ERR_VALUE, "base 10: '1_'");
  CHECK_ERR(ck_str_to_int64(V(""), 10, &v), CK_ERR_VALUE, "base 10: ''");
  CHECK_ERR(ck_str_to_int64(V("it's\n"), 10, &v), CK_ERR_VALUE, "base 10: \"it's\\n\"");
  /* Python strips Py_ISSPACE and non-ASCII whitespace, not \x1c..\x1f */
  CHECK_ERR(ck_str_to_int64(V("\x1c" "1"), 10, &v), CK_ERR_VALUE, "base 10: '\\x1c1'");
  CHECK_OK(ck_str_to_int64(V("\xc2\x85" "1\xe2\x80\x80"), 10, &v));
  CHECK(v == 1);
  CHECK_ERR(ck_str_to_int64(V("1"), 1, &v), CK_ERR_VALUE, "base must be >= 2 and <= 36, or 0");
  double d = 0;
  CHECK_OK(ck_str_to_double(V(" 1_0.2_5e-1_0 "), &d));
  CHECK(d == 10.25e-10);
  CHECK_OK(ck_str_to_double(V("-iNfinity"), &d));
  CHECK(isinf(d) && d < 0);
  CHECK_OK(ck_str_to_double(V("nan"), &d));
  CHECK(isnan(d));
  CHECK_OK(ck_str_to_double(V("1e500"), &d));
  CHECK(isinf(d));
  CHECK_OK(ck_str_to_double(V(".5"), &d));
  CHECK(d == 0.5);
  CHECK_OK(ck_str_to_double(V("\xd9\xa1.\xd9\xa5"), &d));
  CHECK(d == 1.5);
  CHECK_ERR(ck_str_to_double(V("0x10"), &d), CK_ERR_VALUE,
            "could not convert string to float: '0x10'");
  CHECK_ERR(ck_str_to_double(V("1_.5"), &d), CK_ERR_VALUE, "'1_.5'");
  CHECK_ERR(ck_str_to_double(V("nan(1)"), &d), CK_ERR_VALUE, "'nan(1)'");
  CHECK_ERR(ck_str_to_double(V("."), &d), CK_ERR_VALUE, "'.'");
  CHECK_ERR(ck_str_to_double(V("\xc2\xbd"), &d), CK_ERR_VALUE, "'\xc2\xbd'");
  char longnum[300];
  memset(longnum, '1', sizeof longnum);
  longnum[1] = '_';
  CHECK_OK(ck_str_to_double(longnum, 300, &d));
  CHECK(d > 1e297 && d < 1e299);
  ck_memblock *mb = arena();
  REQUIRE(mb != NULL);
  ck_string r;
  CHECK_OK(ck_str_repr(mb, V("a'b\x01\xc2\x85\xe2\x80\xa8\xc3\xa9"), &r));
  CHECK(eq(r, "\"a'b\\x01\\x85\\u2028\xc3\xa9\""));
  ck_memblock_decref(mb);
}

/* Entry points bump the element counter; the first ck_str_arena of an
 * element 16 or more elements later frees a scratch arena past 1 MiB, keeps
 * a smaller one. */
static void test_scratch_epoch(void) {
  uint64_t *epoch = ck_str_scratch_epoch();
  CHECK(epoch != NULL && epoch == ck_str_scratch_epoch());
  ck_str_scratch_free();
  ck_memblock *a = NULL;
  char *b, *e;
  ck_pod_stats st;
  CHECK_OK(ck_str_arena(&a));
  CHECK_OK(ck_pod_allocate(a, 100, 1, &b, &e));
  *epoch += 1;
  CHECK_OK(ck_str_arena(&a)); /* small: kept */
  CHECK_OK(ck_pod_memblock_stats(a, &st));
  CHECK(st.allocations == 1);
  CHECK_OK(ck_pod_allocate(a, (size_t)2 << 20, 1, &b, &e));
  memset(b, 1, (size_t)(e - b));
  CHECK_OK(ck_str_arena(&a)); /* same element: kept whatever its size */
  CHECK_OK(ck_pod_memblock_stats(a, &st));
  CHECK(st.allocations == 2);
  *epoch += 1;
  CHECK_OK(ck_str_arena(&a)); /* the next element: not looked at yet */
  CHECK_OK(ck_pod_memblock_stats(a, &st));
  CHECK(st.allocations == 2);
  *epoch += 16;
  CHECK_OK(ck_str_arena(&a)); /* 16 elements later: a new, empty arena */
  CHECK_OK(ck_pod_memblock_stats(a, &st));
  CHECK(st.allocations == 0 && st.capacity < ((size_t)1 << 20));
  ck_str_scratch_free();
}

CK_TEST_MAIN(CK_TEST(test_check), CK_TEST(test_codepoints), CK_TEST(test_index_slice),
             CK_TEST(test_compare_hash), CK_TEST(test_search), CK_TEST(test_split),
             CK_TEST(test_split_steps),
             CK_TEST(test_build), CK_TEST(test_case),
             CK_TEST(test_numbers), CK_TEST(test_scratch_epoch))
