/*
 * test_utf8_strip_replace.c -- ckernel/utf8.h strip without `chars` (the
 * lead/last byte tests that decide most non-ASCII code points without
 * decoding them) and replace (the first-byte scan that returns s itself,
 * the one-byte swap from the first match on, the match offsets kept for
 * the copy), each against a plain reference written here: every code point
 * at both ends for strip, random texts of a small alphabet with ASCII and
 * multi-byte code points for replace, also through a result region.
 */
#include "ck_test.h"

#define V(lit) (lit), (int64_t)(sizeof(lit) - 1)

static int enc(uint32_t cp, char *o) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* CPython's str.isspace set (sys.maxunicode range, Python 3.11). */
static bool ref_space(uint32_t cp) {
  static const uint32_t wide[] = {0x85,   0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
                                  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
                                  0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  if (cp < 0x80) {
    return cp == ' ' || (cp >= 9 && cp <= 13) || (cp >= 0x1C && cp <= 0x1F);
  }
  for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
    if (wide[i] == cp) {
      return true;
    }
  }
  return false;
}

/* Every code point c, as "c c x c c": both, left and right strips keep what
 * Python keeps. */
static void test_strip_every_code_point(void) {
  int bad = 0;
  for (uint32_t cp = 0; cp <= 0x10FFFF && bad < 10; cp++) {
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      continue;
    }
    char t[20];
    int k = enc(cp, t);
    memcpy(t + k, t, (size_t)k);
    t[2 * k] = 'x';
    memcpy(t + 2 * k + 1, t, (size_t)(2 * k));
    int64_t n = 4 * k + 1;
    bool sp = ref_space(cp);
    ck_str_span r;
    CHECK_OK(ck_str_strip(t, n, NULL, 0, CK_STRIP_BOTH, &r));
    bool ok = sp ? (r.offset == 2 * k && r.length == 1) : (r.offset == 0 && r.length == n);
    CHECK_OK(ck_str_strip(t, n, NULL, 0, CK_STRIP_LEFT, &r));
    ok = ok && (sp ? (r.offset == 2 * k && r.length == n - 2 * k)
                   : (r.offset == 0 && r.length == n));
    CHECK_OK(ck_str_strip(t, n, NULL, 0, CK_STRIP_RIGHT, &r));
    ok = ok && r.offset == 0 && r.length == (sp ? 2 * k + 1 : n);
    /* the code point alone: all of it is stripped or none */
    CHECK_OK(ck_str_strip(t, k, NULL, 0, CK_STRIP_BOTH, &r));
    ok = ok && r.length == (sp ? 0 : k);
    if (!ok) {
      bad++;
      fprintf(stderr, "strip of U+%04X\n", (unsigned)cp);
    }
  }
  CHECK(bad == 0);
}

static void test_strip_mixed(void) {
  ck_str_span r;
  /* whitespace beside code points sharing its lead or last byte */
  CHECK_OK(ck_str_strip(V("\xe2\x80\x8a\xe2\x80\x8b\xe2\x80\x8a"), NULL, 0, CK_STRIP_BOTH, &r));
  CHECK(r.offset == 3 && r.length == 3); /* U+200A U+200B U+200A -> U+200B */
  CHECK_OK(ck_str_strip(V("\xc2\xa0\xc3\xa9\xe2\x80\xa9"), NULL, 0, CK_STRIP_BOTH, &r));
  CHECK(r.offset == 2 && r.length == 2); /* U+00A0 é U+2029 -> é */
  CHECK_OK(ck_str_strip(V(" \xe3\x80\x80\xe3\x80\x81 \xe1\x9a\x80"), NULL, 0, CK_STRIP_BOTH, &r));
  CHECK(r.offset == 4 && r.length == 3); /* -> U+3001 */
  CHECK_OK(ck_str_strip(V("\xc2\x85\xc2\xa0 \t"), NULL, 0, CK_STRIP_BOTH, &r));
  CHECK(r.length == 0);
  CHECK_OK(ck_str_strip(V(""), NULL, 0, CK_STRIP_BOTH, &r));
  CHECK(r.offset == 0 && r.length == 0);
  /* chars given: the byte tests are not used ("\xc3\xa9" is stripped) */
  CHECK_OK(ck_str_strip(V("\xc3\xa9x\xc3\xa9"), V("\xc3\xa9"), CK_STRIP_BOTH, &r));
  CHECK(r.offset == 2 && r.length == 1);
}

/* Python's s.replace(old, new, count) on valid UTF-8, written plainly. */
static int64_t ref_replace(const char *s, int64_t n, const char *old, int64_t m, const char *nw,
                           int64_t k, int64_t count, char *o) {
  int64_t w = 0, p = 0, done = 0;
  if (count < 0) {
    count = INT64_MAX;
  }
  if (m == 0) {
    while (done < count) {
      memcpy(o + w, nw, (size_t)k);
      w += k;
      done++;
      if (p == n) {
        break;
      }
      int64_t q = p + 1;
      while (q < n && ((unsigned char)s[q] & 0xC0) == 0x80) {
        q++;
      }
      memcpy(o + w, s + p, (size_t)(q - p));
      w += q - p;
      p = q;
    }
  } else {
    while (done < count && p + m <= n) {
      int64_t i = p;
      while (i + m <= n && memcmp(s + i, old, (size_t)m) != 0) {
        i++;
      }
      if (i + m > n) {
        break;
      }
      memcpy(o + w, s + p, (size_t)(i - p));
      w += i - p;
      memcpy(o + w, nw, (size_t)k);
      w += k;
      p = i + m;
      done++;
    }
  }
  memcpy(o + w, s + p, (size_t)(n - p));
  return w + n - p;
}

static const char *const alphabet[] = {"a", "o", "0", " ", "\xc3\xa9", "\xe6\x97\xa5",
                                       "\xf0\x9f\x98\x80", "\xc3\xb6"};

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int64_t random_text(char *o, int max_cps) {
  int64_t w = 0;
  int len = (int)(next_rand() % (uint64_t)(max_cps + 1));
  for (int i = 0; i < len; i++) {
    const char *c = alphabet[next_rand() % 8];
    size_t l = strlen(c);
    memcpy(o + w, c, l);
    w += (int64_t)l;
  }
  return w;
}

static void check_replace_random(ck_memblock *arena, int rounds) {
  static const int64_t counts[] = {-1, 0, 1, 2, 40, INT64_MAX};
  char s[400], old[16], nw[16], want[8192];
  int bad = 0;
  for (int it = 0; it < rounds && bad < 10; it++) {
    /* long texts sometimes: more than 32 matches */
    int64_t n = random_text(s, it % 7 == 0 ? 90 : 12);
    int64_t m = random_text(old, it % 5 == 0 ? 1 : 2);
    int64_t k = random_text(nw, 2);
    int64_t count = counts[next_rand() % 6];
    int64_t wn = ref_replace(s, n, old, m, nw, k, count, want);
    ck_string r;
    CHECK_OK(ck_str_replace(arena, s, n, old, m, nw, k, count, &r));
    if (r.end - r.begin != wn || memcmp(r.begin, want, (size_t)wn) != 0) {
      bad++;
      fprintf(stderr, "replace: %.*s / %.*s / %.*s / %" PRId64 "\n", (int)n, s, (int)m, old,
              (int)k, nw, count);
    }
  }
  CHECK(bad == 0);
}

static void test_replace_random(void) {
  ck_memblock *a = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &a));
  check_replace_random(a, 20000);
  /* through a result region, the jitted elements' way */
  ck_memblock *dst = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &dst));
  ck_str_result_region(dst, 64);
  for (int i = 0; i < 2000; i++) {
    ck_memblock *ra = NULL;
    CHECK_OK(ck_str_result_arena(&ra));
    check_replace_random(ra, 1);
    ck_str_scratch_free(); /* ends the region: the next element starts a new one */
    ck_str_result_region(dst, 64);
  }
  ck_str_scratch_free();
  ck_memblock_decref(dst);
  ck_memblock_decref(a);
}

static void test_replace_cases(void) {
  ck_memblock *a = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &a));
  ck_string r;
  static const char s[] = "hello w\xc3\xb6rld";
  /* no first byte of `old`: s itself, no allocation */
  CHECK_OK(ck_str_replace(a, V(s), V("~x"), V("y"), -1, &r));
  CHECK(r.begin == s && r.end == s + sizeof s - 1);
  CHECK_OK(ck_str_replace(a, V(s), V("z"), V("y"), -1, &r));
  CHECK(r.begin == s);
  /* count 0, and `old` longer than s: s */
  CHECK_OK(ck_str_replace(a, V(s), V("l"), V("L"), 0, &r));
  CHECK(r.begin == s);
  CHECK_OK(ck_str_replace(a, V("ab"), V("abc"), V("L"), -1, &r));
  CHECK(r.end - r.begin == 2);
  /* the first byte present, `old` absent: s (the same bytes) */
  CHECK_OK(ck_str_replace(a, V(s), V("lx"), V("y"), -1, &r));
  CHECK(r.end - r.begin == (int64_t)sizeof s - 1 && memcmp(r.begin, s, sizeof s - 1) == 0);
  /* one byte for one: the bytes before the first match copied */
  CHECK_OK(ck_str_replace(a, V(s), V("o"), V("0"), -1, &r));
  CHECK(r.end - r.begin == (int64_t)sizeof s - 1 &&
        memcmp(r.begin, "hell0 w\xc3\xb6rld", sizeof s - 1) == 0);
  CHECK_OK(ck_str_replace(a, V("ooo"), V("o"), V("0"), -1, &r));
  CHECK(r.end - r.begin == 3 && memcmp(r.begin, "000", 3) == 0);
  /* a multi-byte `old` whose lead byte is in s elsewhere */
  CHECK_OK(ck_str_replace(a, V("\xc3\xa9\xc3\xb6"), V("\xc3\xb6"), V("o"), -1, &r));
  CHECK(r.end - r.begin == 3 && memcmp(r.begin, "\xc3\xa9o", 3) == 0);
  /* empty s, empty old */
  CHECK_OK(ck_str_replace(a, V(""), V("a"), V("b"), -1, &r));
  CHECK(r.end == r.begin);
  CHECK_OK(ck_str_replace(a, V(""), V(""), V("A"), -1, &r));
  CHECK(r.end - r.begin == 1 && r.begin[0] == 'A');
  CHECK_OK(ck_str_replace(a, NULL, 0, V("a"), V("b"), -1, &r));
  CHECK(r.end == r.begin);
  /* 100 matches: more than the offsets kept */
  char big[300], want[400];
  for (int i = 0; i < 100; i++) {
    memcpy(big + 3 * i, "ab,", 3);
    memcpy(want + 4 * i, "ab;;", 4);
  }
  CHECK_OK(ck_str_replace(a, big, 300, V(","), V(";;"), -1, &r));
  CHECK(r.end - r.begin == 400 && memcmp(r.begin, want, 400) == 0);
  CHECK_OK(ck_str_replace(a, big, 300, V("b,"), V("B;"), 99, &r));
  CHECK(r.end - r.begin == 300 && memcmp(r.begin + 294, "aB;ab,", 6) == 0);
  ck_memblock_decref(a);
}

CK_TEST_MAIN(CK_TEST(test_strip_every_code_point), CK_TEST(test_strip_mixed),
             CK_TEST(test_replace_cases), CK_TEST(test_replace_random))
