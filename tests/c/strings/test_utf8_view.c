/*
 * test_utf8_view.c -- ckernel/utf8_view.h (the str read operations device
 * programs compile) instantiated for C11 and checked against the library's
 * ckernel/utf8.h on random UTF-8 strings (ASCII, 2-, 3- and 4-byte code
 * points, empty) and every start/end pair in a small range.
 */
#include "ck_test.h"

#define CK_SV_I64 int64_t
#define CK_SV_U8 unsigned char
#include "ckernel/utf8_view.h"

CK_UTF8_VIEW_ONE(h, )
CK_UTF8_VIEW_TWO(hh, h, , h, )

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* A random string of up to `max` code points from a small alphabet (so that
 * searches find something): "a", "b", "é", "€", "𝄞". */
static int64_t random_text(char *out, int max) {
  static const char *const alpha[] = {"a", "b", "\xc3\xa9", "\xe2\x82\xac",
                                      "\xf0\x9d\x84\x9e"};
  int k = (int)(rnd() % (uint64_t)(max + 1));
  int64_t n = 0;
  for (int i = 0; i < k; i++) {
    const char *c = alpha[rnd() % 5];
    size_t len = strlen(c);
    memcpy(out + n, c, len);
    n += (int64_t)len;
  }
  return n;
}

#define U(p) ((const unsigned char *)(p))

static void test_single(void) {
  char s[64];
  for (int iter = 0; iter < 2000; iter++) {
    int64_t n = random_text(s, 12);
    int64_t len = ck_str_length(s, n);
    CHECK(ck_sv_len_h(U(s), n) == len);
    for (int64_t i = -len - 2; i <= len + 1; i++) {
      ck_str_span sp = {0, 0};
      ck_status st = ck_str_getitem(s, n, i, &sp);
      int64_t off = -1, l = -1;
      int ok = ck_sv_getitem_h(U(s), n, i, &off, &l);
      CHECK(ok == (st == CK_OK));
      if (ok && st == CK_OK) {
        CHECK(off == sp.offset && l == sp.length);
        int64_t p = sp.offset;
        int32_t cp = ck_utf8_next(s, n, &p);
        CHECK(ck_sv_ord_h(U(s) + off, l) == cp);
      }
      if (i >= 0) {
        CHECK(ck_sv_offset_h(U(s), n, i) == ck_str_byte_offset(s, n, i, -1));
      }
    }
    CHECK(ck_sv_ord_h(U(s), n) == (len == 1 ? ck_utf8_next(s, n, &(int64_t){0}) : -1));
  }
}

static int sign(int c) { return c < 0 ? -1 : c > 0; }

static void test_pairs(void) {
  char s[64], t[64];
  for (int iter = 0; iter < 3000; iter++) {
    int64_t n = random_text(s, 10), m = random_text(t, 3);
    CHECK(sign(ck_sv_cmp_hh(U(s), n, U(t), m)) == sign(ck_str_compare(s, n, t, m)));
    CHECK(ck_sv_eq_hh(U(s), n, U(t), m) == ck_str_equal(s, n, t, m));
    CHECK(ck_sv_contains_hh(U(s), n, U(t), m) == ck_str_contains(s, n, t, m));
    for (int64_t a = -12; a <= 12; a += 3) {
      for (int64_t b = -12; b <= 12; b += 4) {
        CHECK(ck_sv_find_hh(U(s), n, U(t), m, a, b) == ck_str_find(s, n, t, m, a, b));
        CHECK(ck_sv_startswith_hh(U(s), n, U(t), m, a, b) ==
              ck_str_startswith(s, n, t, m, a, b));
        CHECK(ck_sv_endswith_hh(U(s), n, U(t), m, a, b) == ck_str_endswith(s, n, t, m, a, b));
      }
    }
    CHECK(ck_sv_find_hh(U(s), n, U(t), m, 0, INT64_MAX) ==
          ck_str_find(s, n, t, m, 0, INT64_MAX));
  }
}

CK_TEST_MAIN(CK_TEST(test_single), CK_TEST(test_pairs))
