/*
 * test_utf8.c -- ckernel/utf8.h: Python's str methods over UTF-8 views.
 * Expected values are CPython's (written out by hand from the interpreter);
 * the exhaustive oracle tests are tests/python/test_utf8_strings.py.
 */
#include "ck_test.h"

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

CK_TEST_MAIN(CK_TEST(test_check), CK_TEST(test_codepoints), CK_TEST(test_index_slice),
             CK_TEST(test_compare_hash), CK_TEST(test_search))
