/*
 * utf8_validate.c -- ck_utf8_validate (ckernel/types.h): strict UTF-8 (no
 * overlongs, no surrogates, nothing above U+10FFFF), as CPython's decoder.
 *
 * Two implementations of one rule:
 *
 *  - scalar: ASCII 8 bytes at a time, then one sequence at a time with the
 *    second byte's range checked against the lead byte (the table of RFC
 *    3629 section 4).  Short inputs (names, words) take it.
 *  - AVX2 (x86-64 with GCC or Clang, chosen at run time by the CPU): the
 *    "lookup" algorithm of Keiser and Lemire ("Validating UTF-8 in less than
 *    one instruction per byte", Software: Practice and Experience 51(5),
 *    2021), as in simdjson and simdutf: 32 bytes per step, three 16-entry
 *    table lookups classify every pair of adjacent bytes (too short, too
 *    long, overlong, surrogate, too large, two continuations), and the
 *    bytes two and three after a 3- or 4-byte lead must be continuations.
 *    Blocks that are all ASCII cost one test.  The last partial block is
 *    copied into a zero-padded buffer (zeros are ASCII, so a sequence cut
 *    short at the end is "too short").  Imports validate whole Arrow data
 *    buffers (megabytes) with one call: that is what it is for.
 *
 * tests/c/types/test_utf8_validate.c checks both against a reference decoder
 * on every lead byte with every second byte, at every position of a block,
 * and on random mutations of mixed text.
 */
#include "types/type_internal.h"

#include <stdint.h>
#include <string.h>

static bool ck__utf8_valid_scalar(const unsigned char *s, size_t len) {
  size_t i = 0;
  while (i < len) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      while (i + 8 <= len) { /* ASCII runs: 8 bytes at a time */
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & UINT64_C(0x8080808080808080)) {
          break;
        }
        i += 8;
      }
      continue;
    }
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;      /* no overlongs */
      if (c == 0xed) hi = 0x9f;      /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;      /* no overlongs */
      if (c == 0xf4) hi = 0x8f;      /* <= U+10FFFF */
    } else {
      return false;
    }
    if (len - i <= n) {
      return false;
    }
    if (s[i + 1] < lo || s[i + 1] > hi) {
      return false;
    }
    for (size_t k = 2; k <= n; k++) {
      if ((s[i + k] & 0xc0) != 0x80) {
        return false;
      }
    }
    i += n + 1;
  }
  return true;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(CK_NO_SIMD)
#define CK__UTF8_AVX2 1
#include <immintrin.h>

/* The error classes of a pair (byte 1, byte 2) -- bit names of the paper. */
enum {
  TOO_SHORT = 1 << 0,   /* 11______ 0_______ or 11______ 11______ */
  TOO_LONG = 1 << 1,    /* 0_______ 10______ */
  OVERLONG_3 = 1 << 2,  /* 11100000 100_____ */
  TOO_LARGE = 1 << 3,   /* 11110100 1001____, 11110100 101_____, 11110101.. */
  SURROGATE = 1 << 4,   /* 11101101 101_____ */
  OVERLONG_2 = 1 << 5,  /* 1100000_ 10______ */
  TOO_LARGE_1000 = 1 << 6, /* 11110101 1000____ and up */
  OVERLONG_4 = 1 << 6,  /* 11110000 1000____ */
  TWO_CONTS = 1 << 7,   /* 10______ 10______ */
  CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS
};

/* The three tables: classes by the high nibble of byte 1, by its low
 * nibble, and by the high nibble of byte 2. */
static const uint8_t ck__t1[16] = {
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,
    TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS, TOO_SHORT | OVERLONG_2, TOO_SHORT,
    TOO_SHORT | OVERLONG_3 | SURROGATE, TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4};
static const uint8_t ck__t2[16] = {
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, CARRY | OVERLONG_2, CARRY, CARRY,
    CARRY | TOO_LARGE, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000};
static const uint8_t ck__t3[16] = {
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT};
/* The largest byte that completes its block: any in the first 29, then
 * below a 4-, 3- and 2-byte lead in the last three. */
static const uint8_t ck__max[32] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0xf0 - 1, 0xe0 - 1,
    0xc0 - 1};

__attribute__((target("avx2"))) static inline __m256i ck__table(const uint8_t *t) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)t));
}

__attribute__((target("avx2"))) static inline __m256i
ck__prev(__m256i in, __m256i prev_in, int n) {
  /* bytes shifted by n across the two blocks: prev[i] = (prev_in:in)[32 + i - n] */
  __m256i t = _mm256_permute2x128_si256(prev_in, in, 0x21);
  switch (n) {
  case 1: return _mm256_alignr_epi8(in, t, 15);
  case 2: return _mm256_alignr_epi8(in, t, 14);
  default: return _mm256_alignr_epi8(in, t, 13);
  }
}

__attribute__((target("avx2"))) static inline __m256i
ck__block_errors(__m256i in, __m256i prev_in) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256i prev1 = ck__prev(in, prev_in, 1);
  const __m256i t1 = ck__table(ck__t1), t2 = ck__table(ck__t2), t3 = ck__table(ck__t3);
  __m256i b1h = _mm256_shuffle_epi8(t1, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), low4));
  __m256i b1l = _mm256_shuffle_epi8(t2, _mm256_and_si256(prev1, low4));
  __m256i b2h = _mm256_shuffle_epi8(t3, _mm256_and_si256(_mm256_srli_epi16(in, 4), low4));
  __m256i special = _mm256_and_si256(_mm256_and_si256(b1h, b1l), b2h);
  /* bytes 2 and 3 after a 3-/4-byte lead must be continuations (0x80 set) */
  __m256i third = _mm256_subs_epu8(ck__prev(in, prev_in, 2), _mm256_set1_epi8(0xe0 - 0x80));
  __m256i fourth = _mm256_subs_epu8(ck__prev(in, prev_in, 3), _mm256_set1_epi8(0xf0 - 0x80));
  __m256i must = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8(-128));
  return _mm256_xor_si256(must, special);
}

/* Nonzero where a block's last three bytes start a sequence it does not end. */
__attribute__((target("avx2"))) static inline __m256i ck__incomplete(__m256i in) {
  return _mm256_subs_epu8(in, _mm256_loadu_si256((const __m256i *)(const void *)ck__max));
}

__attribute__((target("avx2"))) static bool ck__utf8_valid_avx2(const unsigned char *s,
                                                                size_t len) {
  __m256i err = _mm256_setzero_si256();
  __m256i prev_in = _mm256_setzero_si256();
  __m256i prev_incomplete = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= len; i += 32) {
    __m256i in = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
    if (_mm256_movemask_epi8(in) == 0) {
      err = _mm256_or_si256(err, prev_incomplete); /* ASCII after a cut sequence */
      prev_incomplete = _mm256_setzero_si256();
    } else {
      err = _mm256_or_si256(err, ck__block_errors(in, prev_in));
      prev_incomplete = ck__incomplete(in);
    }
    prev_in = in;
    if ((i & 1023) == 992 && !_mm256_testz_si256(err, err)) {
      return false; /* stop early every 1 KiB */
    }
  }
  if (i < len) {
    unsigned char tail[32] = {0};
    memcpy(tail, s + i, len - i);
    __m256i in = _mm256_loadu_si256((const __m256i *)(const void *)tail);
    err = _mm256_or_si256(err, ck__block_errors(in, prev_in));
    prev_incomplete = ck__incomplete(in); /* zeros after it: "too short" above */
  }
  err = _mm256_or_si256(err, prev_incomplete);
  return _mm256_testz_si256(err, err) != 0;
}
#endif

/* Below this many bytes the scalar loop wins (no set-up, most such strings
 * are ASCII words). */
enum { CK__UTF8_SIMD_MIN = 64 };

bool ck_utf8_validate(const char *bytes, size_t len) {
  const unsigned char *s = (const unsigned char *)bytes;
  if (s == NULL) {
    return len == 0;
  }
#ifdef CK__UTF8_AVX2
  if (len >= CK__UTF8_SIMD_MIN && __builtin_cpu_supports("avx2")) {
    return ck__utf8_valid_avx2(s, len);
  }
#endif
  return ck__utf8_valid_scalar(s, len);
}
