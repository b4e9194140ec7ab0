/*
 * test_utf8_case.c -- ckernel/utf8.h case mappings in one pass (ASCII words
 * mapped 8 bytes at a time, the allocation grown only by a lengthening
 * mapping) and the result arena: ck_str_case writes an element's first
 * case mapping into it and ck_str_store_view keeps it without a copy.
 * Expected values are CPython's; the exhaustive oracle tests are
 * tests/python/core/test_utf8_strings.py and test_utf8_case_words.py.
 */
#include "ck_test.h"

#define V(lit) (lit), (int64_t)(sizeof(lit) - 1)
#define BE(lit) (lit), (lit) + sizeof(lit) - 1 /* [begin, end) */

static bool eq(ck_string s, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(s.end - s.begin) == n && memcmp(s.begin, lit, n) == 0;
}

static void test_words(void) {
  ck_memblock *a = NULL;
  CHECK_OK(ck_pod_memblock_new(0, &a));
  ck_string r;
  /* a non-ASCII byte inside a word: the bytes before it from the word */
  CHECK_OK(ck_str_title(a, V("hello wOrld\xc3\x9f" "ab cD-eF"), &r));
  CHECK(eq(r, "Hello World\xc3\x9f" "ab Cd-Ef"));
  CHECK_OK(ck_str_upper(a, V("abcdefg\xc3\x9fxyz abcdefgh"), &r)); /* ß -> SS */
  CHECK(eq(r, "ABCDEFGSSXYZ ABCDEFGH"));
  CHECK_OK(ck_str_capitalize(a, V("hELLO WORLD, AGAIN"), &r));
  CHECK(eq(r, "Hello world, again"));
  CHECK_OK(ck_str_swapcase(a, V("Hello World 123 zZ\xc3\xa9"), &r));
  CHECK(eq(r, "hELLO wORLD 123 Zz\xc3\x89"));
  /* title / capitalize / swapcase of 2-byte code points by their tables
   * (ck__case2 by context, ck__case2_cased: the cased ª keeps b lower),
   * 3-byte ones of inert blocks (東: not cased), the rest by the records */
  CHECK_OK(ck_str_title(a, V("\xc7\x86" "emal a\xc7\x84 \xc3\xa9" "a \xc3\x9fx \xce\xa9mega "
                             "\xe6\x9d\xb1" "a \xc2\xaa" "b"), &r));
  CHECK(eq(r, "\xc7\x85" "emal A\xc7\x86 \xc3\x89" "a Ssx \xce\xa9mega \xe6\x9d\xb1" "A \xc2\xaa" "b"));
  CHECK_OK(ck_str_capitalize(a, V("\xc7\x86\xc7\x86 \xc3\xa9\xc3\x89"), &r)); /* ǆǆ éÉ */
  CHECK(eq(r, "\xc7\x85\xc7\x86 \xc3\xa9\xc3\xa9"));
  CHECK_OK(ck_str_capitalize(a, V("\xc3\xa9\xc3\x89"), &r)); /* éÉ -> Éé */
  CHECK(eq(r, "\xc3\x89\xc3\xa9"));
  CHECK_OK(ck_str_swapcase(a, V("\xc3\x89\xc3\xa9\xce\xa3 \xce\xa3" "A \xc7\x85 \xe6\x9d\xb1\xc3\x9f"),
                           &r)); /* ÉéΣ ΣA ǅ 東ß */
  CHECK(eq(r, "\xc3\xa9\xc3\x89\xcf\x82 \xcf\x83" "a \xc7\x85 \xe6\x9d\xb1SS"));
  CHECK_OK(ck_str_lower(a, V("ABCDEFGH\xce\xa3 IJKLMNOP\xce\xa3"), &r)); /* final sigmas */
  CHECK(eq(r, "abcdefgh\xcf\x82 ijklmnop\xcf\x82"));
  /* growth: every ŉ (2 bytes) uppers to ʼN (3 bytes) */
  char in[2 * 300], want[3 * 300];
  for (int i = 0; i < 300; i++) {
    memcpy(in + 2 * i, "\xc5\x89", 2);
    memcpy(want + 3 * i, "\xca\xbcN", 3);
  }
  CHECK_OK(ck_str_upper(a, in, (int64_t)sizeof in, &r));
  CHECK(r.end - r.begin == (ptrdiff_t)sizeof want && memcmp(r.begin, want, sizeof want) == 0);
  CHECK_OK(ck_str_lower(a, NULL, 0, &r));
  CHECK(r.end == r.begin);
  CHECK(ck_str_case((ck_str_case_op)6, V("a"), &r) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_str_case(CK_STR_LOWER, NULL, 3, &r) == CK_ERR_INVALID_ARGUMENT);
  ck_str_scratch_free(); /* made by the last call */
  ck_memblock_decref(a);
}

/* The mapping of [s, s + n) code point by code point through
 * ck_unicode_case (the records: the general path), no final sigma. */
static size_t reference(const char *s, size_t n, ck_case_map which, char *out) {
  size_t i = 0, o = 0;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
    for (int k = 1; k < len; k++) {
      cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3Fu);
    }
    uint32_t m[3];
    int count = ck_unicode_case(cp, which, m);
    for (int k = 0; k < count; k++) {
      uint32_t x = m[k];
      if (x < 0x80) {
        out[o++] = (char)x;
      } else if (x < 0x800) {
        out[o++] = (char)(0xC0 | (x >> 6));
        out[o++] = (char)(0x80 | (x & 0x3F));
      } else if (x < 0x10000) {
        out[o++] = (char)(0xE0 | (x >> 12));
        out[o++] = (char)(0x80 | ((x >> 6) & 0x3F));
        out[o++] = (char)(0x80 | (x & 0x3F));
      } else {
        out[o++] = (char)(0xF0 | (x >> 18));
        out[o++] = (char)(0x80 | ((x >> 12) & 0x3F));
        out[o++] = (char)(0x80 | ((x >> 6) & 0x3F));
        out[o++] = (char)(0x80 | (x & 0x3F));
      }
    }
    i += (size_t)len;
  }
  return o;
}

/* lower / upper / casefold's own loop (ASCII words also between other
 * characters, the last 1-7 bytes as one word, 2-byte sequences by lookup,
 * plain 3-byte blocks copied) on random mixes, each text in a buffer of
 * its exact size (ASan: nothing read past it), against the records; then
 * every 2-byte code point between ASCII runs of every length 0-9. */
static void test_fast_paths(void) {
  static const char *pieces[] = {"a", "Z", "q", " ", "7", "\xc3\xa9", "\xc3\x89", "\xc3\x9f",
                                 "\xce\xa9", "\xd0\xb6", "\xc7\x85", "\xc4\xb0", "\xc4\xb1",
                                 "\xc5\x89", "\xe6\x9d\xb1", "\xe2\x84\xaa", "\xef\xac\x83",
                                 "\xf0\x9f\x98\x80", "\xf0\x90\x90\x80", "ABCDEFGH", "xyz"};
  static const ck_case_map maps[] = {CK_CASE_LOWER, CK_CASE_UPPER, CK_CASE_FOLD};
  static const ck_str_case_op ops[] = {CK_STR_LOWER, CK_STR_UPPER, CK_STR_CASEFOLD};
  const int npieces = (int)(sizeof pieces / sizeof pieces[0]);
  char text[256], want[1024];
  uint32_t seed = 12345;
  int bad = 0;
  for (int t = 0; t < 3000; t++) {
    size_t n = 0;
    seed = seed * 1103515245u + 12345u;
    int count = (int)((seed >> 16) % 12);
    for (int k = 0; k < count; k++) {
      seed = seed * 1103515245u + 12345u;
      const char *p = pieces[(seed >> 16) % (uint32_t)npieces];
      memcpy(text + n, p, strlen(p));
      n += strlen(p);
    }
    char *exact = malloc(n ? n : 1);
    REQUIRE(exact != NULL);
    memcpy(exact, text, n);
    for (int op = 0; op < 3; op++) {
      ck_string r;
      size_t m = reference(exact, n, maps[op], want);
      CHECK_OK(ck_str_case(ops[op], exact, (int64_t)n, &r));
      if ((size_t)(r.end - r.begin) != m || memcmp(r.begin, want, m) != 0) {
        bad++;
      }
    }
    /* title / capitalize / swapcase read the last 1-7 bytes as one word
     * too (values: the Python oracles; here: nothing read past the text) */
    for (int op = CK_STR_TITLE; op <= CK_STR_SWAPCASE; op++) {
      ck_string r;
      CHECK_OK(ck_str_case((ck_str_case_op)op, exact, (int64_t)n, &r));
    }
    free(exact);
    ck_str_scratch_free();
  }
  CHECK(bad == 0);
  bad = 0;
  for (uint32_t cp = 0x80; cp < 0x800; cp++) {
    for (int before = 0; before < 10; before++) {
      size_t n = 0;
      for (int k = 0; k < before; k++) {
        text[n++] = (char)('A' + k);
      }
      text[n++] = (char)(0xC0 | (cp >> 6));
      text[n++] = (char)(0x80 | (cp & 0x3F));
      memcpy(text + n, "bCdEfGhIj", (size_t)(9 - before));
      n += (size_t)(9 - before);
      char *exact = malloc(n);
      REQUIRE(exact != NULL);
      memcpy(exact, text, n);
      for (int op = 0; op < 3; op++) {
        ck_string r;
        if (cp == 0x3A3 && op == 0) {
          continue; /* the final sigma: test_words */
        }
        size_t m = reference(exact, n, maps[op], want);
        CHECK_OK(ck_str_case(ops[op], exact, (int64_t)n, &r));
        if ((size_t)(r.end - r.begin) != m || memcmp(r.begin, want, m) != 0) {
          bad++;
        }
      }
      free(exact);
    }
    ck_str_scratch_free();
  }
  CHECK(bad == 0);
  /* the final sigma around the fast paths */
  ck_memblock *a = NULL;
  CHECK_OK(ck_pod_memblock_new(0, &a));
  ck_string r;
  CHECK_OK(ck_str_lower(a, V("\xce\xa3\xce\x9f\xce\xa6\xce\x99\xce\x91\xce\xa3"), &r));
  CHECK(eq(r, "\xcf\x83\xce\xbf\xcf\x86\xce\xb9\xce\xb1\xcf\x82")); /* ΣΟΦΙΑΣ */
  CHECK_OK(ck_str_lower(a, V("A\xce\xa3.B \xce\xa3, B\xce\xa3"), &r)); /* AΣ.B Σ, BΣ */
  CHECK(eq(r, "a\xcf\x83.b \xcf\x83, b\xcf\x82"));
  CHECK_OK(ck_str_lower(a, V("\xe6\x9d\xb1\xce\xa3"), &r)); /* 東Σ: 東 is not cased */
  CHECK(eq(r, "\xe6\x9d\xb1\xcf\x83"));
  ck_memblock_decref(a);
}

static void test_result_arena(void) {
  ck_memblock *dst = NULL, *scratch = NULL;
  CHECK_OK(ck_pod_memblock_new(0, &dst));
  ck_pod_stats st;
  ck_string r, out[3];
  ck_str_set_result_arena(dst);
  /* element 0: the case mapping is the result: stored in place */
  CHECK_OK(ck_str_case(CK_STR_UPPER, V("hello"), &r));
  CHECK_OK(ck_str_store_view(dst, r.begin, r.end, &out[0]));
  CHECK(eq(out[0], "HELLO") && out[0].begin == r.begin);
  CHECK_OK(ck_pod_memblock_stats(dst, &st));
  CHECK(st.allocations == 1); /* the region */
  /* element 1: two mappings, the second returned: the first went into the
   * result arena, the second into the scratch arena, copied by the store */
  ck_string t;
  CHECK_OK(ck_str_case(CK_STR_LOWER, V("ABC"), &t));
  CHECK_OK(ck_str_case(CK_STR_TITLE, t.begin, t.end - t.begin, &r));
  CHECK_OK(ck_str_arena(&scratch));
  CHECK(scratch != dst);
  CHECK_OK(ck_str_store_view(dst, r.begin, r.end, &out[1]));
  CHECK(eq(out[1], "Abc") && out[1].begin != r.begin);
  /* element 2: a view of the input (no mapping): copied */
  static const char text[] = "view";
  CHECK_OK(ck_str_store_view(dst, text, text + 4, &out[2]));
  CHECK(eq(out[2], "view") && out[2].begin != text);
  CHECK(ck_str_store_view(dst, text + 1, text, &out[2]) == CK_ERR_INVALID_ARGUMENT);
  /* the end of the call clears it and gives the region's unused end back:
   * the arena holds the three results (the unused "abc" was the region's
   * last text when element 1 stored its result: taken back); a mapping
   * then goes to the scratch arena */
  ck_str_scratch_free();
  CHECK_OK(ck_pod_memblock_stats(dst, &st));
  CHECK(st.allocations == 1 && st.used == 5 + 3 + 4);
  CHECK_OK(ck_str_case(CK_STR_UPPER, V("x"), &r));
  CHECK_OK(ck_pod_memblock_stats(dst, &st));
  CHECK(st.allocations == 1 && st.used == 12);
  CHECK(eq(out[0], "HELLO") && eq(out[1], "Abc") && eq(out[2], "view"));
  /* a current arena set by the caller wins over the result arena */
  ck_memblock *cur = NULL;
  CHECK_OK(ck_pod_memblock_new(0, &cur));
  ck_str_set_result_arena(dst);
  CHECK(ck_str_set_arena(cur) == NULL);
  CHECK_OK(ck_str_case(CK_STR_UPPER, V("y"), &r));
  CHECK_OK(ck_pod_memblock_stats(cur, &st));
  CHECK(st.allocations == 1);
  CHECK(ck_str_set_arena(NULL) == cur);
  ck_str_scratch_free();
  ck_memblock_decref(cur);
  ck_memblock_decref(dst);
}

/* The result region: one allocation for many elements, its unused end given
 * back when it closes; a new region when one is full (a case mapping that
 * grows moves its text along); a region that is no longer the arena's
 * latest allocation is left as it is. */
static void test_region(void) {
  ck_memblock *dst = NULL;
  CHECK_OK(ck_pod_memblock_new(0, &dst));
  ck_pod_stats st;
  ck_string out[4], r;
  char big[300];
  memset(big, 'q', sizeof big);
  ck_str_region *rec = ck_str_result_region(dst, 700);
  CHECK(rec != NULL && rec->cur == NULL && rec->arena == dst);
  CHECK(ck_str_result_region(dst, 700) == rec); /* the thread's record */
  CHECK_OK(ck_str_region_store(rec, BE("hello"), &out[0])); /* opens 700 bytes */
  CHECK(eq(out[0], "hello") && rec->cur == out[0].end && rec->lim - out[0].begin == 700);
  CHECK_OK(ck_str_region_store(rec, big, big + sizeof big, &out[1]));
  CHECK_OK(ck_str_region_store(rec, big, big + sizeof big, &out[2]));
  CHECK_OK(ck_str_region_store(rec, big, big + sizeof big, &out[3])); /* a second region */
  CHECK_OK(ck_pod_memblock_stats(dst, &st));
  CHECK(st.allocations == 2);
  ck_str_set_result_arena(NULL);
  CHECK(rec->cur == NULL && rec->lim == NULL);
  CHECK_OK(ck_pod_memblock_stats(dst, &st));
  CHECK(st.used == 5 + 3 * sizeof big);
  CHECK(eq(out[0], "hello") && out[3].end - out[3].begin == (ptrdiff_t)sizeof big &&
        memcmp(out[3].begin, big, sizeof big) == 0 && memcmp(out[1].begin, big, sizeof big) == 0);
  /* an empty view stores as "" with a non-NULL begin */
  rec = ck_str_result_region(dst, 0);
  CHECK_OK(ck_str_region_store(rec, "", "", &out[0]));
  CHECK(out[0].begin != NULL && out[0].begin == out[0].end);
  /* growth inside a case mapping: every ŉ (2 bytes) uppers to ʼN (3), past
   * the region (256 bytes): the text moves to a new region */
  char in[2 * 200], want[3 * 200];
  for (int i = 0; i < 200; i++) {
    memcpy(in + 2 * i, "\xc5\x89", 2);
    memcpy(want + 3 * i, "\xca\xbcN", 3);
  }
  CHECK_OK(ck_str_case(CK_STR_UPPER, in, (int64_t)sizeof in, &r));
  CHECK(r.begin == rec->made_b && r.end == rec->made_e && rec->cur == r.end);
  CHECK(r.end - r.begin == (ptrdiff_t)sizeof want && memcmp(r.begin, want, sizeof want) == 0);
  CHECK_OK(ck_str_store_view(dst, r.begin, r.end, &out[1])); /* kept in place */
  CHECK(out[1].begin == r.begin && rec->made_b == NULL);
  /* the candidate: the result arena once per element */
  ck_memblock *a = NULL;
  CHECK_OK(ck_str_result_arena(&a));
  CHECK(a == dst);
  CHECK_OK(ck_str_case(CK_STR_LOWER, V("AB"), &r));
  CHECK_OK(ck_str_result_arena(&a));
  CHECK(a != dst); /* the scratch arena: this element made its text */
  CHECK_OK(ck_str_region_store(rec, r.begin, r.end, &out[2]));
  CHECK_OK(ck_str_result_arena(&a));
  CHECK(a == dst);
  /* a view into the element's made text, returned: copied over it */
  CHECK_OK(ck_str_case(CK_STR_LOWER, V("XYZW"), &r));
  char *made_at = r.begin;
  CHECK_OK(ck_str_region_store(rec, r.begin + 1, r.end, &out[0]));
  CHECK(eq(out[0], "yzw") && out[0].begin == made_at && rec->cur == made_at + 3);
  /* something else allocates from the arena: the region is no longer its
   * latest allocation, and closing it leaves its end unused */
  char *b, *e;
  CHECK_OK(ck_pod_allocate(dst, 7, 1, &b, &e));
  CHECK_OK(ck_str_region_store(rec, BE("after"), &out[3]));
  ck_str_set_result_arena(NULL);
  CHECK(memcmp(out[1].begin, want, sizeof want) == 0);
  CHECK(eq(out[2], "ab") && eq(out[3], "after"));
  /* another thread's (or a stale) record is refused */
  ck_str_region fake = {0};
  CHECK(ck_str_region_store(&fake, BE("x"), &out[0]) == CK_ERR_INVALID_ARGUMENT);
  static const char ab[] = "ab";
  CHECK(ck_str_region_store(ck_str_result_region(dst, 0), ab + 1, ab, &out[0]) ==
        CK_ERR_INVALID_ARGUMENT);
  /* no result arena: nothing to open */
  rec = ck_str_result_region(NULL, 0);
  CHECK(ck_str_region_store(rec, BE("x"), &out[0]) == CK_ERR_INVALID_STATE);
  ck_str_set_result_arena(NULL);
  ck_str_scratch_free();
  ck_memblock_decref(dst);
}

/* ck_str_made_region: the region while the element may make its text
 * there (what ck_str_case writes into); NULL once it made one, with no
 * result arena, or with a current arena set.  Text written at cur by the
 * caller and recorded as made is kept in place by the store. */
static void test_made_region(void) {
  ck_memblock *dst = NULL, *cur = NULL;
  CHECK_OK(ck_pod_memblock_new(0, &dst));
  CHECK_OK(ck_pod_memblock_new(0, &cur));
  ck_string r, out[2];
  CHECK(ck_str_made_region() == NULL); /* no result arena */
  ck_str_region *rec = ck_str_result_region(dst, 64);
  CHECK(ck_str_made_region() == rec && rec->cur == NULL); /* no region open yet */
  CHECK_OK(ck_str_case(CK_STR_LOWER, V("AB"), &r));       /* opens it */
  CHECK(ck_str_made_region() == NULL);                     /* made its text */
  CHECK_OK(ck_str_region_store(rec, r.begin, r.end, &out[0]));
  CHECK(eq(out[0], "ab") && out[0].begin == r.begin);
  /* the next element writes its text itself, as jitted code does */
  CHECK(ck_str_made_region() == rec && rec->cur != NULL && rec->lim - rec->cur >= 3);
  char *at = rec->cur;
  memcpy(at, "XYZ", 3);
  rec->cur = at + 3;
  rec->made_b = at;
  rec->made_e = at + 3;
  CHECK(ck_str_made_region() == NULL);
  CHECK_OK(ck_str_region_store(rec, at, at + 3, &out[1]));
  CHECK(out[1].begin == at && eq(out[1], "XYZ") && rec->made_b == NULL);
  /* a current arena wins over the result arena */
  CHECK(ck_str_set_arena(cur) == NULL);
  CHECK(ck_str_made_region() == NULL);
  CHECK(ck_str_set_arena(NULL) == cur);
  CHECK(ck_str_made_region() == rec);
  ck_str_set_result_arena(NULL);
  CHECK(ck_str_made_region() == NULL);
  CHECK(eq(out[0], "ab") && eq(out[1], "XYZ"));
  ck_str_scratch_free();
  ck_memblock_decref(cur);
  ck_memblock_decref(dst);
}

/* Room reserved at the region's front for a string built in one pass (the
 * caller writes at cur and moves it): nothing when it fits, else a new
 * region, the old one closed with everything before its cur kept (an
 * element's made text among it); sizes past PTRDIFF_MAX refused. */
static void test_region_reserve(void) {
  ck_memblock *dst = NULL;
  CHECK_OK(ck_pod_memblock_new(0, &dst));
  ck_pod_stats st;
  ck_str_region *rec = ck_str_result_region(dst, 0);
  CHECK_OK(ck_str_region_reserve(rec, 0)); /* "": a region opens all the same */
  CHECK(rec->cur != NULL && rec->lim - rec->cur >= 256);
  char *first = rec->cur;
  CHECK_OK(ck_str_region_reserve(rec, 10)); /* fits: nothing moves */
  CHECK(rec->cur == first);
  memcpy(rec->cur, "0123456789", 10);
  rec->cur += 10;
  /* a made text at the end of the open region stays readable after a
   * reserve that opens a new region */
  ck_string r;
  CHECK_OK(ck_str_case(CK_STR_UPPER, V("made"), &r));
  CHECK(r.begin == rec->made_b && rec->cur == r.end);
  CHECK_OK(ck_str_region_reserve(rec, 1000)); /* the new region may start at r.end */
  CHECK(rec->cur >= r.end && rec->lim - rec->cur > 1000);
  CHECK(eq(r, "MADE") && memcmp(first, "0123456789", 10) == 0);
  memset(rec->cur, 'x', 1000);
  rec->cur += 1000;
  rec->made_b = rec->made_e = NULL;
  ck_str_set_result_arena(NULL); /* the unused ends given back */
  CHECK_OK(ck_pod_memblock_stats(dst, &st));
  CHECK(st.used == 10 + 4 + 1000 && st.allocations == 2);
  /* refused: too long, another thread's record */
  rec = ck_str_result_region(dst, 0);
  CHECK(ck_str_region_reserve(rec, -1) == CK_ERR_OVERFLOW);
  CHECK(ck_str_region_reserve(rec, PTRDIFF_MAX) == CK_ERR_OVERFLOW);
  ck_str_region fake = {0};
  CHECK(ck_str_region_reserve(&fake, 1) == CK_ERR_INVALID_ARGUMENT);
  /* no result arena: nothing to open */
  rec = ck_str_result_region(NULL, 0);
  CHECK(ck_str_region_reserve(rec, 1) == CK_ERR_INVALID_STATE);
  ck_str_set_result_arena(NULL);
  ck_str_scratch_free();
  ck_memblock_decref(dst);
}

CK_TEST_MAIN(CK_TEST(test_words), CK_TEST(test_fast_paths), CK_TEST(test_result_arena),
             CK_TEST(test_region), CK_TEST(test_made_region), CK_TEST(test_region_reserve))
