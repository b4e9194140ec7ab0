/*
 * utf8_search.c -- substring search over UTF-8 views: find/rfind/index/
 * rindex/count/in/startswith/endswith with Python's index rules
 * (ckernel/utf8.h).
 *
 * Search is Horspool's: for haystacks of at least CK__TABLE_MIN bytes a
 * 256-entry shift table on the byte under the window's last (first, when
 * searching backwards) position; shorter haystacks and one-byte needles use
 * memchr on the needle's first byte and memcmp.  Matches of valid UTF-8 in
 * valid UTF-8 always start on a code point, so byte results convert to code
 * point indices by counting.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

#include <string.h>

enum { CK__TABLE_MIN = 256 };

void ck__searcher_init(ck__searcher *sr, const char *sub, int64_t m, int64_t haystack) {
  sr->sub = sub;
  sr->m = m;
  sr->table = m >= 2 && haystack >= CK__TABLE_MIN;
  if (!sr->table) {
    return;
  }
  uint32_t cap = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
  for (int c = 0; c < 256; c++) {
    sr->fwd[c] = cap;
    sr->bwd[c] = cap;
  }
  const unsigned char *u = (const unsigned char *)sub;
  for (int64_t i = 0; i < m - 1; i++) {
    int64_t d = m - 1 - i;
    sr->fwd[u[i]] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
  }
  for (int64_t i = m - 1; i >= 1; i--) {
    sr->bwd[u[i]] = i > UINT32_MAX ? UINT32_MAX : (uint32_t)i;
  }
}

/* First occurrence in s[from, to): its offset or -1. */
int64_t ck__search(const ck__searcher *sr, const char *s, int64_t from, int64_t to) {
  int64_t m = sr->m;
  if (m == 0) {
    return from <= to ? from : -1;
  }
  if (to - from < m) {
    return -1;
  }
  const char *sub = sr->sub;
  if (!sr->table) {
    const char *p = s + from, *last = s + to - m;
    while (p <= last) {
      const char *q = memchr(p, sub[0], (size_t)(last - p + 1));
      if (q == NULL) {
        return -1;
      }
      if (memcmp(q + 1, sub + 1, (size_t)(m - 1)) == 0) {
        return q - s;
      }
      p = q + 1;
    }
    return -1;
  }
  const unsigned char *u = (const unsigned char *)s;
  unsigned char tail = (unsigned char)sub[m - 1];
  for (int64_t i = from; i <= to - m;) {
    unsigned char c = u[i + m - 1];
    if (c == tail && memcmp(s + i, sub, (size_t)(m - 1)) == 0) {
      return i;
    }
    i += sr->fwd[c];
  }
  return -1;
}

/* Last occurrence in s[from, to): its offset or -1. */
int64_t ck__rsearch(const ck__searcher *sr, const char *s, int64_t from, int64_t to) {
  int64_t m = sr->m;
  if (m == 0) {
    return from <= to ? to : -1;
  }
  if (to - from < m) {
    return -1;
  }
  const char *sub = sr->sub;
  const unsigned char *u = (const unsigned char *)s;
  unsigned char head = (unsigned char)sub[0];
  if (!sr->table) {
    for (int64_t i = to - m; i >= from; i--) {
      if (u[i] == head && memcmp(s + i + 1, sub + 1, (size_t)(m - 1)) == 0) {
        return i;
      }
    }
    return -1;
  }
  for (int64_t i = to - m; i >= from;) {
    unsigned char c = u[i];
    if (c == head && memcmp(s + i + 1, sub + 1, (size_t)(m - 1)) == 0) {
      return i;
    }
    i -= sr->bwd[c];
  }
  return -1;
}

CK_API int64_t ck_str_find_bytes(const char *s, int64_t from, int64_t to, const char *sub,
                                 int64_t m) {
  if (from < 0 || m < 0 || (s == NULL && to > 0) || (sub == NULL && m > 0)) {
    return -1;
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sub, m, to - from);
  return ck__search(&sr, s, from, to);
}

CK_API int64_t ck_str_rfind_bytes(const char *s, int64_t from, int64_t to, const char *sub,
                                  int64_t m) {
  if (from < 0 || m < 0 || (s == NULL && to > 0) || (sub == NULL && m > 0)) {
    return -1;
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sub, m, to - from);
  return ck__rsearch(&sr, s, from, to);
}

/* A code point range [start, end) of s resolved as ADJUST_INDICES does, in
 * code points (cs, ce) and bytes (bs, be).  False when the range is too
 * short for a needle of `mcp` code points. */
typedef struct ck__range {
  int ascii;
  int64_t cs, ce, bs, be;
} ck__range;

static bool ck__resolve(const char *s, int64_t n, int64_t start, int64_t end, int64_t mcp,
                        ck__range *r) {
  r->ascii = ck_str_is_ascii(s, n);
  int64_t len = r->ascii ? n : ck_str_length(s, n);
  ck__adjust_indices(len, &start, &end);
  if (end - start < mcp) {
    return false;
  }
  r->cs = start;
  r->ce = end;
  r->bs = ck_str_byte_offset(s, n, start, r->ascii);
  r->be = end >= len ? n : r->bs + ck_str_byte_offset(s + r->bs, n - r->bs, end - start, r->ascii);
  return true;
}

static bool ck__args_ok(const char *s, int64_t n, const char *sub, int64_t m) {
  return n >= 0 && m >= 0 && (s != NULL || n == 0) && (sub != NULL || m == 0);
}

static int64_t ck__to_cp(const char *s, const ck__range *r, int64_t off) {
  if (off < 0) {
    return -1;
  }
  return r->cs + (r->ascii ? off - r->bs : ck_str_length(s + r->bs, off - r->bs));
}

/* [start, end) covers all of a text of n bytes (end >= n >= its code
 * points): no code point count is needed to resolve it. */
static inline bool ck__whole(int64_t n, int64_t start, int64_t end) {
  return start == 0 && end >= n;
}

static inline int64_t ck__find_byte(const char *s, int64_t n, unsigned char c) {
  const char *q = n > 0 ? memchr(s, c, (size_t)n) : NULL;
  return q == NULL ? -1 : q - s;
}

CK_API int64_t ck_str_find(const char *s, int64_t n, const char *sub, int64_t m,
                           int64_t start, int64_t end) {
  if (!ck__args_ok(s, n, sub, m)) {
    return -1;
  }
  if (ck__whole(n, start, end)) { /* byte search; the code points before the match */
    int64_t i = m == 1 ? ck__find_byte(s, n, (unsigned char)sub[0])
                       : ck_str_find_bytes(s, 0, n, sub, m);
    return i <= 0 ? i : ck_str_length(s, i);
  }
  ck__range r;
  if (!ck__resolve(s, n, start, end, ck_str_length(sub, m), &r)) {
    return -1;
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sub, m, r.be - r.bs);
  return ck__to_cp(s, &r, ck__search(&sr, s, r.bs, r.be));
}

CK_API int64_t ck_str_rfind(const char *s, int64_t n, const char *sub, int64_t m,
                            int64_t start, int64_t end) {
  if (!ck__args_ok(s, n, sub, m)) {
    return -1;
  }
  if (ck__whole(n, start, end)) {
    int64_t i = ck_str_rfind_bytes(s, 0, n, sub, m);
    return i <= 0 ? i : ck_str_length(s, i);
  }
  ck__range r;
  if (!ck__resolve(s, n, start, end, ck_str_length(sub, m), &r)) {
    return -1;
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sub, m, r.be - r.bs);
  return ck__to_cp(s, &r, ck__rsearch(&sr, s, r.bs, r.be));
}

CK_API ck_status ck_str_index(const char *s, int64_t n, const char *sub, int64_t m,
                              int64_t start, int64_t end, int64_t *out) {
  CK__CHECK_VIEW(s, n);
  CK__CHECK_VIEW(sub, m);
  int64_t i = ck_str_find(s, n, sub, m, start, end);
  if (i < 0) {
    return CK_ERROR(CK_ERR_VALUE, "substring not found");
  }
  if (out != NULL) {
    *out = i;
  }
  return CK_OK;
}

CK_API ck_status ck_str_rindex(const char *s, int64_t n, const char *sub, int64_t m,
                               int64_t start, int64_t end, int64_t *out) {
  CK__CHECK_VIEW(s, n);
  CK__CHECK_VIEW(sub, m);
  int64_t i = ck_str_rfind(s, n, sub, m, start, end);
  if (i < 0) {
    return CK_ERROR(CK_ERR_VALUE, "substring not found");
  }
  if (out != NULL) {
    *out = i;
  }
  return CK_OK;
}

CK_API int64_t ck_str_count(const char *s, int64_t n, const char *sub, int64_t m,
                            int64_t start, int64_t end) {
  ck__range r;
  if (!ck__args_ok(s, n, sub, m)) {
    return 0;
  }
  if (m > 0 && ck__whole(n, start, end)) { /* matches are counted in bytes */
    r.bs = 0;
    r.be = n;
  } else if (!ck__resolve(s, n, start, end, ck_str_length(sub, m), &r)) {
    return 0;
  } else if (m == 0) {
    return r.ce - r.cs + 1;
  }
  if (m == 1) { /* a counting loop the compiler vectorises */
    unsigned char c = (unsigned char)sub[0];
    const unsigned char *u = (const unsigned char *)s;
    int64_t count = 0;
    for (int64_t i = r.bs; i < r.be; i++) {
      count += u[i] == c;
    }
    return count;
  }
  ck__searcher sr;
  ck__searcher_init(&sr, sub, m, r.be - r.bs);
  int64_t count = 0;
  for (int64_t p = r.bs;;) {
    int64_t i = ck__search(&sr, s, p, r.be);
    if (i < 0) {
      return count;
    }
    count++;
    p = i + m;
  }
}

CK_API bool ck_str_contains(const char *s, int64_t n, const char *sub, int64_t m) {
  return ck_str_find_bytes(s, 0, n, sub, m) >= 0;
}

CK_API bool ck_str_startswith(const char *s, int64_t n, const char *prefix, int64_t m,
                              int64_t start, int64_t end) {
  if (!ck__args_ok(s, n, prefix, m)) {
    return false;
  }
  if (ck__whole(n, start, end)) { /* a code point prefix is a byte prefix */
    return m <= n && (m == 0 || memcmp(s, prefix, (size_t)m) == 0);
  }
  ck__range r;
  if (
      !ck__resolve(s, n, start, end, ck_str_length(prefix, m), &r)) {
    return false;
  }
  return m <= r.be - r.bs && (m == 0 || memcmp(s + r.bs, prefix, (size_t)m) == 0);
}

CK_API bool ck_str_endswith(const char *s, int64_t n, const char *suffix, int64_t m,
                            int64_t start, int64_t end) {
  if (!ck__args_ok(s, n, suffix, m)) {
    return false;
  }
  if (ck__whole(n, start, end)) {
    return m <= n && (m == 0 || memcmp(s + n - m, suffix, (size_t)m) == 0);
  }
  ck__range r;
  if (
      !ck__resolve(s, n, start, end, ck_str_length(suffix, m), &r)) {
    return false;
  }
  return m <= r.be - r.bs && (m == 0 || memcmp(s + r.be - m, suffix, (size_t)m) == 0);
}
