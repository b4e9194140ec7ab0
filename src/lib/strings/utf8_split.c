/*
 * utf8_split.c -- split/rsplit/splitlines/partition/rpartition/strip/
 * removeprefix/removesuffix over UTF-8 views (ckernel/utf8.h): every result
 * is a view into the argument; split's span arrays live in an arena.  The
 * loops are CPython's (Objects/stringlib/split.h), over code points.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

#include <string.h>

/* ---- span arrays ------------------------------------------------------------ */

ck_status ck__spans_push(ck__spans *sp, int64_t offset, int64_t length) {
  if (sp->count == sp->cap) {
    int64_t cap = sp->cap == 0 ? 8 : 2 * sp->cap;
    ck_status st;
    if (sp->cap == 0) {
      st = ck_pod_allocate(sp->arena, (size_t)cap * sizeof(ck_str_span), 8, &sp->b, &sp->e);
    } else {
      st = ck_pod_resize(sp->arena, (size_t)cap * sizeof(ck_str_span), &sp->b, &sp->e);
    }
    if (st != CK_OK) {
      return st;
    }
    sp->cap = cap;
  }
  ck_str_span v = {offset, length};
  memcpy(sp->b + sp->count * (int64_t)sizeof(ck_str_span), &v, sizeof v);
  sp->count++;
  return CK_OK;
}

ck_status ck__spans_done(ck__spans *sp, bool reverse, ck_str_span **out, int64_t *count) {
  if (sp->cap == 0) {
    *out = NULL;
    *count = 0;
    return CK_OK;
  }
  if (sp->count != sp->cap) {
    ck_status st =
        ck_pod_resize(sp->arena, (size_t)sp->count * sizeof(ck_str_span), &sp->b, &sp->e);
    if (st != CK_OK) {
      return st;
    }
  }
  ck_str_span *a = (ck_str_span *)(void *)sp->b;
  if (reverse) {
    for (int64_t i = 0, j = sp->count - 1; i < j; i++, j--) {
      ck_str_span t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
  *out = a;
  *count = sp->count;
  return CK_OK;
}

#define CK__PUSH(a, b)                                                         \
  do {                                                                         \
    ck_status st_ = ck__spans_push(&sp, (a), (b) - (a));                       \
    if (st_ != CK_OK) {                                                        \
      return st_;                                                              \
    }                                                                          \
  } while (0)

static ck_status ck__split_args(const char *func, ck_memblock *arena, const char *s, int64_t n,
                                const char *sep, int64_t m, ck_str_span **out, int64_t *count) {
  ck_status st = ck__str_arg(func, s, n);
  if (st == CK_OK && sep != NULL) {
    st = ck__str_arg(func, sep, m);
  }
  if (st != CK_OK) {
    return st;
  }
  if (arena == NULL || out == NULL || count == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL arena or output");
  }
  if (sep != NULL && m == 0) {
    return ck__error(CK_ERR_VALUE, func, "empty separator");
  }
  return CK_OK;
}

/* The code point at byte i and its length; whitespace tests of it. */
static inline bool ck__space_at(const char *s, int64_t n, int64_t i, int *len) {
  unsigned char b = (unsigned char)s[i];
  if (b < 0x80) {
    *len = 1;
    return ck__u_space(b);
  }
  return ck__u_space(ck__decode((const unsigned char *)s + i, (const unsigned char *)s + n, len));
}

/* Whitespace ending right before byte i (> 0): its start, or -1 if the code
 * point there is not whitespace. */
static inline int64_t ck__space_before(const char *s, int64_t n, int64_t i) {
  unsigned char b = (unsigned char)s[i - 1];
  if (b < 0x80) {
    return ck__u_space(b) ? i - 1 : -1;
  }
  int64_t p = i - 1;
  while (p > 0 && ck__is_cont((unsigned char)s[p])) {
    p--;
  }
  int len;
  return ck__space_at(s, n, p, &len) ? p : -1;
}

static int64_t ck__cp_start_before(const char *s, int64_t i) {
  int64_t p = i - 1;
  while (p > 0 && ck__is_cont((unsigned char)s[p])) {
    p--;
  }
  return p;
}

CK_API ck_status ck_str_split(ck_memblock *arena, const char *s, int64_t n, const char *sep,
                              int64_t m, int64_t maxsplit, ck_str_span **out_spans,
                              int64_t *out_count) {
  ck_status st = ck__split_args(__func__, arena, s, n, sep, m, out_spans, out_count);
  if (st != CK_OK) {
    return st;
  }
  ck__spans sp = {arena, NULL, NULL, 0, 0};
  int64_t left = maxsplit < 0 ? INT64_MAX : maxsplit;
  int len;
  if (sep == NULL) {
    int64_t i = 0;
    while (left-- > 0) {
      while (i < n && ck__space_at(s, n, i, &len)) {
        i += len;
      }
      if (i == n) {
        break;
      }
      int64_t j = i;
      while (i < n && !ck__space_at(s, n, i, &len)) {
        i += len;
      }
      CK__PUSH(j, i);
    }
    if (i < n) {
      while (i < n && ck__space_at(s, n, i, &len)) {
        i += len;
      }
      if (i != n) {
        CK__PUSH(i, n);
      }
    }
    return ck__spans_done(&sp, false, out_spans, out_count);
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sep, m, n);
  int64_t i = 0;
  while (left-- > 0) {
    int64_t j = ck__search(&sr, s, i, n);
    if (j < 0) {
      break;
    }
    CK__PUSH(i, j);
    i = j + m;
  }
  CK__PUSH(i, n);
  return ck__spans_done(&sp, false, out_spans, out_count);
}

CK_API ck_status ck_str_rsplit(ck_memblock *arena, const char *s, int64_t n, const char *sep,
                               int64_t m, int64_t maxsplit, ck_str_span **out_spans,
                               int64_t *out_count) {
  ck_status st = ck__split_args(__func__, arena, s, n, sep, m, out_spans, out_count);
  if (st != CK_OK) {
    return st;
  }
  ck__spans sp = {arena, NULL, NULL, 0, 0};
  int64_t left = maxsplit < 0 ? INT64_MAX : maxsplit;
  if (sep == NULL) {
    int64_t i = n; /* byte just past the code point under consideration */
    while (left-- > 0) {
      int64_t p;
      while (i > 0 && (p = ck__space_before(s, n, i)) >= 0) {
        i = p;
      }
      if (i == 0) {
        break;
      }
      int64_t j = i;
      while (i > 0 && ck__space_before(s, n, i) < 0) {
        i = ck__cp_start_before(s, i);
      }
      CK__PUSH(i, j);
    }
    if (i > 0) {
      int64_t p;
      while (i > 0 && (p = ck__space_before(s, n, i)) >= 0) {
        i = p;
      }
      if (i > 0) {
        CK__PUSH(0, i);
      }
    }
    return ck__spans_done(&sp, true, out_spans, out_count);
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sep, m, n);
  int64_t j = n;
  while (left-- > 0) {
    int64_t p = ck__rsearch(&sr, s, 0, j);
    if (p < 0) {
      break;
    }
    CK__PUSH(p + m, j);
    j = p;
  }
  CK__PUSH(0, j);
  return ck__spans_done(&sp, true, out_spans, out_count);
}

CK_API ck_status ck_str_splitlines(ck_memblock *arena, const char *s, int64_t n,
                                   bool keepends, ck_str_span **out_spans,
                                   int64_t *out_count) {
  ck_status st = ck__split_args(__func__, arena, s, n, NULL, 0, out_spans, out_count);
  if (st != CK_OK) {
    return st;
  }
  ck__spans sp = {arena, NULL, NULL, 0, 0};
  const unsigned char *u = (const unsigned char *)s;
  int64_t i = 0, j = 0;
  while (i < n) {
    int len = 1;
    while (i < n) {
      uint32_t cp = u[i] < 0x80 ? u[i] : ck__decode(u + i, u + n, &len);
      if (u[i] < 0x80) {
        len = 1;
      }
      if (ck__u_linebreak(cp)) {
        break;
      }
      i += len;
    }
    int64_t eol = i;
    if (i < n) {
      if (u[i] == '\r' && i + 1 < n && u[i + 1] == '\n') {
        i += 2;
      } else {
        i += len;
      }
      if (keepends) {
        eol = i;
      }
    }
    CK__PUSH(j, eol);
    j = i;
  }
  return ck__spans_done(&sp, false, out_spans, out_count);
}

static ck_status ck__partition_args(const char *func, const char *s, int64_t n, const char *sep,
                                    int64_t m, ck_str_span *out) {
  ck_status st = ck__str_arg(func, s, n);
  if (st == CK_OK) {
    st = ck__str_arg(func, sep, m);
  }
  if (st != CK_OK) {
    return st;
  }
  if (out == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL output");
  }
  if (m == 0) {
    return ck__error(CK_ERR_VALUE, func, "empty separator");
  }
  return CK_OK;
}

CK_API ck_status ck_str_partition(const char *s, int64_t n, const char *sep, int64_t m,
                                  ck_str_span *out) {
  ck_status st = ck__partition_args(__func__, s, n, sep, m, out);
  if (st != CK_OK) {
    return st;
  }
  int64_t p = ck_str_find_bytes(s, 0, n, sep, m);
  if (p < 0) {
    out[0] = (ck_str_span){0, n};
    out[1] = (ck_str_span){n, 0};
    out[2] = (ck_str_span){n, 0};
  } else {
    out[0] = (ck_str_span){0, p};
    out[1] = (ck_str_span){p, m};
    out[2] = (ck_str_span){p + m, n - p - m};
  }
  return CK_OK;
}

CK_API ck_status ck_str_rpartition(const char *s, int64_t n, const char *sep, int64_t m,
                                   ck_str_span *out) {
  ck_status st = ck__partition_args(__func__, s, n, sep, m, out);
  if (st != CK_OK) {
    return st;
  }
  int64_t p = ck_str_rfind_bytes(s, 0, n, sep, m);
  if (p < 0) {
    out[0] = (ck_str_span){0, 0};
    out[1] = (ck_str_span){0, 0};
    out[2] = (ck_str_span){0, n};
  } else {
    out[0] = (ck_str_span){0, p};
    out[1] = (ck_str_span){p, m};
    out[2] = (ck_str_span){p + m, n - p - m};
  }
  return CK_OK;
}

/* Is cp one of the code points of chars?  ASCII through a bitmap. */
typedef struct ck__charset {
  uint64_t ascii[2];
  const char *chars;
  int64_t n;
  bool any_wide;
} ck__charset;

static void ck__charset_init(ck__charset *cs, const char *chars, int64_t n) {
  cs->ascii[0] = cs->ascii[1] = 0;
  cs->chars = chars;
  cs->n = n;
  cs->any_wide = false;
  for (int64_t i = 0; i < n; i++) {
    unsigned char b = (unsigned char)chars[i];
    if (b < 0x80) {
      cs->ascii[b >> 6] |= 1ULL << (b & 63);
    } else {
      cs->any_wide = true;
    }
  }
}

static bool ck__charset_has(const ck__charset *cs, uint32_t cp) {
  if (cp < 0x80) {
    return (cs->ascii[cp >> 6] >> (cp & 63)) & 1;
  }
  if (!cs->any_wide) {
    return false;
  }
  const unsigned char *u = (const unsigned char *)cs->chars, *e = u + cs->n;
  while (u < e) {
    int len;
    if (ck__decode(u, e, &len) == cp) {
      return true;
    }
    u += len;
  }
  return false;
}

/* Bytes >= 0x80 that may start (end) a non-ASCII str.isspace code point:
 * U+0085, U+00A0 (C2 85, C2 A0), U+1680 (E1 9A 80), U+2000-200A, U+2028,
 * U+2029, U+202F (E2 80 80-8A/A8/A9/AF), U+205F (E2 81 9F), U+3000 (E3 80
 * 80).  Any other byte decides without decoding. */
static inline bool ck__space_lead(unsigned char b) { return b == 0xC2 || (b >= 0xE1 && b <= 0xE3); }
static inline bool ck__space_last(unsigned char b) {
  return b <= 0x8A || b == 0x9F || b == 0xA0 || b == 0xA8 || b == 0xA9 || b == 0xAF;
}

CK_API ck_status ck_str_strip(const char *s, int64_t n, const char *chars, int64_t nchars,
                              int which, ck_str_span *out) {
  CK__CHECK_VIEW(s, n);
  if (chars != NULL) {
    CK__CHECK_VIEW(chars, nchars);
  }
  if (out == NULL || which < CK_STRIP_LEFT || which > CK_STRIP_BOTH) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output or bad `which` %d", which);
  }
  ck__charset cs = {0};
  if (chars != NULL) {
    ck__charset_init(&cs, chars, nchars);
  }
  const unsigned char *u = (const unsigned char *)s;
  int64_t i = 0, j = n;
  if (which & CK_STRIP_LEFT) {
    while (i < n) {
      if (chars == NULL && u[i] >= 0x80 && !ck__space_lead(u[i])) {
        break; /* a lead byte no whitespace code point has */
      }
      int len = 1;
      uint32_t cp = u[i] < 0x80 ? u[i] : ck__decode(u + i, u + n, &len);
      if (!(chars == NULL ? ck__u_space(cp) : ck__charset_has(&cs, cp))) {
        break;
      }
      i += len;
    }
  }
  if (which & CK_STRIP_RIGHT) {
    while (j > i) {
      if (chars == NULL && u[j - 1] >= 0x80 && !ck__space_last(u[j - 1])) {
        break; /* a last byte no whitespace code point has */
      }
      int64_t p = ck__cp_start_before(s, j);
      int len;
      uint32_t cp = ck__decode(u + p, u + n, &len);
      if (!(chars == NULL ? ck__u_space(cp) : ck__charset_has(&cs, cp))) {
        break;
      }
      j = p;
    }
  }
  out->offset = i;
  out->length = j - i;
  return CK_OK;
}

CK_API ck_str_span ck_str_removeprefix(const char *s, int64_t n, const char *prefix,
                                       int64_t m) {
  ck_str_span r = {0, n < 0 ? 0 : n};
  if (m > 0 && m <= n && s != NULL && prefix != NULL && memcmp(s, prefix, (size_t)m) == 0) {
    r.offset = m;
    r.length = n - m;
  }
  return r;
}

CK_API ck_str_span ck_str_removesuffix(const char *s, int64_t n, const char *suffix,
                                       int64_t m) {
  ck_str_span r = {0, n < 0 ? 0 : n};
  if (m > 0 && m <= n && s != NULL && suffix != NULL &&
      memcmp(s + n - m, suffix, (size_t)m) == 0) {
    r.length = n - m;
  }
  return r;
}

/* ---- split without a span array: count, step, index ---------------------- */

#define CK__BYTES(x) (0x0101010101010101ULL * (uint64_t)(x))

/* ASCII whitespace (str.isspace below 0x80: \t \n \v \f \r, \x1c-\x1f, ' '):
 * bits 9-13, 28-31 and 32 of a 64-bit mask. */
static inline bool ck__ascii_space(unsigned b) {
  /* (ck__space_len's word-at-a-time twin: bytes 9-13 and 28-32) */
  return b < 64 && ((0x00000001F0003E00ULL >> b) & 1);
}

/* The length of the whitespace code point at byte i, 0 when the code point
 * there is not whitespace.  Only the lead bytes C2, E1, E2 and E3 start
 * non-ASCII whitespace; any other byte >= 0x80 (continuation bytes
 * included) is part of a code point that is not. */
static inline int ck__space_len(const unsigned char *u, int64_t n, int64_t i) {
  unsigned b = u[i];
  if (b < 0x80) {
    return ck__ascii_space(b);
  }
  if (b != 0xC2 && (b < 0xE1 || b > 0xE3)) {
    return 0;
  }
  int len;
  return ck__u_space(ck__decode(u + i, u + n, &len)) ? len : 0;
}

CK_API int64_t ck_str_split_count(const char *s, int64_t n, const char *sep, int64_t m,
                                  int64_t maxsplit) {
  if (n < 0 || (s == NULL && n > 0) || (sep != NULL && m <= 0)) {
    return 0;
  }
  const unsigned char *u = (const unsigned char *)s;
  if (sep == NULL) { /* words: non-whitespace code points after whitespace or the start */
    int64_t limit = maxsplit < 0 ? INT64_MAX : maxsplit + 1, words = 0;
    bool space = true;
    int64_t i = 0;
    if (maxsplit < 0) {
      /* 8 bytes at a time: a word starts at a byte that is not whitespace
       * after one that is (bit 7 of each byte as its flag).  Bytes >= 0x80
       * are not whitespace (continuation bytes, leads of letters ...) but
       * for the leads C2 and E0-E3, which may start Unicode whitespace:
       * a word holding one goes one byte at a time up to it. */
      while (i + 8 <= n) {
        uint64_t w = ck__load64(s + i);
        uint64_t hi = w & CK__HI_BITS;
        if (hi) {
          uint64_t c2 = w ^ CK__BYTES(0xC2), e0 = (w & CK__BYTES(0xFC)) ^ CK__BYTES(0xE0);
          uint64_t lead = ~(((c2 & CK__BYTES(0x7F)) + CK__BYTES(0x7F)) | c2) |
                          ~(((e0 & CK__BYTES(0x7F)) + CK__BYTES(0x7F)) | e0);
          lead &= CK__HI_BITS;
          if (lead) { /* one by one up to the first such lead */
            int64_t stop = i + (__builtin_ctzll(lead) >> 3) + 1;
            while (i < stop) {
              int len = ck__space_len(u, n, i);
              words += space && len == 0;
              space = len != 0;
              i += len + (len == 0);
            }
            continue;
          }
        }
        uint64_t a = w & CK__BYTES(0x7F); /* no carries between bytes */
        uint64_t sp = ((a + CK__BYTES(0x77)) & ~(a + CK__BYTES(0x72))) |
                      ((a + CK__BYTES(0x64)) & ~(a + CK__BYTES(0x5F)));
        sp &= CK__HI_BITS & ~hi;
        uint64_t prev = (sp << 8) | (space ? 0x80u : 0u);
        words += __builtin_popcountll(~sp & prev & CK__HI_BITS);
        space = (sp >> 63) != 0;
        i += 8;
      }
    }
    while (i < n) {
      unsigned b = u[i];
      int len = b < 0x80 ? ck__ascii_space(b) : ck__space_len(u, n, i);
      words += space && len == 0;
      if (words == limit) {
        return words;
      }
      space = len != 0;
      i += len + (len == 0);
    }
    return words;
  }
  int64_t left = maxsplit < 0 ? INT64_MAX : maxsplit, found = 0;
  if (m == 1 && maxsplit < 0) { /* a counting loop the compiler vectorises */
    unsigned char c = (unsigned char)sep[0];
    for (int64_t i = 0; i < n; i++) {
      found += u[i] == c;
    }
    return found + 1;
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sep, m, n);
  for (int64_t p = 0; found < left;) {
    int64_t j = ck__search(&sr, s, p, n);
    if (j < 0) {
      break;
    }
    found++;
    p = j + m;
  }
  return found + 1;
}

CK_API bool ck_str_split_next(const char *s, int64_t n, const char *sep, int64_t m,
                              ck_str_split_state *state, ck_str_span *out) {
  int64_t i = state->pos;
  if (i > n || n < 0 || (s == NULL && n > 0) || (sep != NULL && m <= 0)) {
    return false;
  }
  const unsigned char *u = (const unsigned char *)s;
  if (sep == NULL) {
    int len;
    while (i < n && (len = ck__space_len(u, n, i)) != 0) {
      i += len;
    }
    if (i == n) {
      state->pos = n + 1;
      return false;
    }
    int64_t j = i;
    if (state->left == 0) { /* the rest, its trailing whitespace kept */
      i = n;
    } else {
      while (i < n && ck__space_len(u, n, i) == 0) {
        i++;
      }
      state->left--;
    }
    out->offset = j;
    out->length = i - j;
    state->pos = i;
    return true;
  }
  if (state->left != 0) {
    ck__searcher sr;
    ck__searcher_init(&sr, sep, m, 0); /* memchr + memcmp: no table per step */
    int64_t j = ck__search(&sr, s, i, n);
    if (j >= 0) {
      out->offset = i;
      out->length = j - i;
      state->pos = j + m;
      state->left--;
      return true;
    }
  }
  out->offset = i;
  out->length = n - i;
  state->pos = n + 1;
  return true;
}

CK_API ck_status ck_str_split_item(const char *s, int64_t n, const char *sep, int64_t m,
                                   int64_t maxsplit, int64_t index, ck_str_span *out) {
  CK__CHECK_VIEW(s, n);
  if (sep != NULL) {
    CK__CHECK_VIEW(sep, m);
    if (m == 0) {
      return CK_ERROR(CK_ERR_VALUE, "empty separator");
    }
  }
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  if (index < 0) {
    index += ck_str_split_count(s, n, sep, m, maxsplit);
  }
  ck_str_split_state state = {0, maxsplit < 0 ? INT64_MAX : maxsplit};
  for (int64_t k = 0; index >= 0; k++) {
    if (!ck_str_split_next(s, n, sep, m, &state, out)) {
      break;
    }
    if (k == index) {
      return CK_OK;
    }
  }
  return CK_ERROR(CK_ERR_INDEX, "list index out of range");
}
