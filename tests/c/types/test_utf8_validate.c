/* test_utf8_validate.c -- ck_utf8_validate (utf8_validate.c): the block
 * (AVX2) path of long inputs and the scalar path of short ones, both against
 * a reference decoder written from RFC 3629's table, at every position of a
 * 32-byte block and across block boundaries. */
#include "ck_test.h"

/* The reference: one sequence at a time, the second byte's range from the
 * lead byte (RFC 3629 section 4). */
static bool ref_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i], need, lo = 0x80, hi = 0xbf;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      lo = c == 0xe0 ? 0xa0 : 0x80;
      hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      lo = c == 0xf0 ? 0x90 : 0x80;
      hi = c == 0xf4 ? 0x8f : 0xbf;
    } else {
      return false;
    }
    if (i + need >= n || s[i + 1] < lo || s[i + 1] > hi) {
      return false;
    }
    for (unsigned k = 2; k <= need; k++) {
      if (s[i + k] < 0x80 || s[i + k] > 0xbf) {
        return false;
      }
    }
    i += need + 1;
  }
  return true;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

/* Valid text of `n` bytes: ASCII, 2-, 3- and 4-byte characters mixed. */
static size_t fill_text(unsigned char *b, size_t n) {
  static const char *const pieces[] = {"a", "word ", "\xc3\xa9", "\xd0\xb6",
                                       "\xe6\x9d\xb1", "\xe2\x82\xac", "\xed\x9f\xbf",
                                       "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
                                       "\xe0\xa0\x80", "\xf0\x90\x80\x80"};
  size_t i = 0;
  for (;;) {
    const char *p = pieces[rnd() % (sizeof pieces / sizeof pieces[0])];
    size_t k = strlen(p);
    if (i + k > n) {
      break;
    }
    memcpy(b + i, p, k);
    i += k;
  }
  while (i < n) {
    b[i++] = 'x';
  }
  return n;
}

/* Every lead byte with every second byte (and continuations after), at
 * every offset of the block and of the block after, in a long ASCII text. */
static void test_every_pair_every_position(void) {
  unsigned char buf[160];
  long step = ck_test_scaled(1) > 1 ? 7 : 1;
  for (unsigned c = 0x80; c < 0x100; c++) {
    for (unsigned d = 0; d < 0x100; d += (unsigned)step) {
      for (size_t pos = 28; pos < 70; pos++) {
        memset(buf, 'a', sizeof buf);
        buf[pos] = (unsigned char)c;
        buf[pos + 1] = (unsigned char)d;
        buf[pos + 2] = 0x80;
        buf[pos + 3] = 0x80;
        bool want = ref_valid(buf, sizeof buf);
        if (ck_utf8_validate((const char *)buf, sizeof buf) != want) {
          CHECK(!"long input disagrees with the reference");
          fprintf(stderr, "  lead %02x second %02x at %zu: reference %d\n", c, d, pos,
                  (int)want);
          return;
        }
        /* the same bytes as a short input (scalar path) */
        bool want_short = ref_valid(buf + pos - 2, 8);
        CHECK(ck_utf8_validate((const char *)buf + pos - 2, 8) == want_short);
      }
    }
  }
}

/* A sequence cut short by the end of the input, at every length. */
static void test_truncated_at_end(void) {
  unsigned char buf[200];
  static const char *const seqs[] = {"\xc3\xa9", "\xe6\x9d\xb1", "\xf0\x9f\x98\x80"};
  for (size_t len = 60; len < 200; len++) {
    for (size_t s = 0; s < 3; s++) {
      size_t k = strlen(seqs[s]);
      for (size_t cut = 1; cut <= k; cut++) {
        memset(buf, 'b', len);
        memcpy(buf + len - cut, seqs[s], cut);
        bool want = cut == k;
        CHECK(ref_valid(buf, len) == want);
        CHECK(ck_utf8_validate((const char *)buf, len) == want);
      }
    }
  }
}

/* Random valid text, then one random byte changed: both paths agree with
 * the reference. */
static void test_random_mutations(void) {
  enum { N = 4096 };
  static unsigned char buf[N];
  long rounds = ck_test_scaled(4000);
  for (long r = 0; r < rounds; r++) {
    size_t n = 1 + rnd() % N;
    fill_text(buf, n);
    REQUIRE(ck_utf8_validate((const char *)buf, n));
    size_t at = rnd() % n;
    buf[at] = (unsigned char)rnd();
    if (rnd() % 2) {
      buf[rnd() % n] = (unsigned char)(0x80 | rnd());
    }
    bool want = ref_valid(buf, n);
    if (ck_utf8_validate((const char *)buf, n) != want) {
      CHECK(!"mutated text disagrees with the reference");
      fprintf(stderr, "  n %zu, byte %zu: reference %d\n", n, at, (int)want);
      return;
    }
  }
}

static void test_edges(void) {
  CHECK(ck_utf8_validate(NULL, 0));
  CHECK(!ck_utf8_validate(NULL, 1));
  CHECK(ck_utf8_validate("", 0));
  unsigned char big[1 << 16];
  memset(big, 'z', sizeof big);
  CHECK(ck_utf8_validate((const char *)big, sizeof big));
  big[sizeof big - 1] = 0xc3; /* a lead byte as the very last byte */
  CHECK(!ck_utf8_validate((const char *)big, sizeof big));
  big[sizeof big - 1] = 'z';
  big[5000] = 0xff;           /* an error far from the end: found */
  CHECK(!ck_utf8_validate((const char *)big, sizeof big));
  big[5000] = 0xed;           /* a surrogate U+D800 */
  big[5001] = 0xa0;
  big[5002] = 0x80;
  CHECK(!ck_utf8_validate((const char *)big, sizeof big));
  big[5001] = 0x9f;           /* U+D7FF */
  CHECK(ck_utf8_validate((const char *)big, sizeof big));
}

CK_TEST_MAIN(CK_TEST(test_every_pair_every_position), CK_TEST(test_truncated_at_end),
             CK_TEST(test_random_mutations), CK_TEST(test_edges))
