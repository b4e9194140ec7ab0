/*
 * utf8_build.c -- str methods that build new text in an arena: replace,
 * join, repeat, zfill, ljust/rjust/center, expandtabs, and ord/chr
 * (ckernel/utf8.h).  Each result is measured first, then written into one
 * allocation of exactly its size.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

#include <string.h>

/* a + b * c in bytes, or false on overflow past PTRDIFF_MAX. */
static bool ck__size_mad(int64_t a, int64_t b, int64_t c, int64_t *out) {
  int64_t t;
  if (__builtin_mul_overflow(b, c, &t) || __builtin_add_overflow(a, t, &t) || t < 0 ||
      (uint64_t)t > (uint64_t)PTRDIFF_MAX) {
    return false;
  }
  *out = t;
  return true;
}

CK_API ck_status ck_str_replace(ck_memblock *arena, const char *s, int64_t n, const char *old,
                                int64_t nold, const char *new_, int64_t nnew, int64_t count,
                                ck_string *out) {
  CK__CHECK_VIEW(s, n);
  CK__CHECK_VIEW(old, nold);
  CK__CHECK_VIEW(new_, nnew);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  int64_t maxcount = count < 0 ? INT64_MAX : count;
  /* the first byte of `old` in s: most texts hold none, and are then their
   * own result, as is any text for count 0 */
  const char *hit = nold > 0 && nold <= n ? memchr(s, old[0], (size_t)n) : NULL;
  if (maxcount == 0 || (nold > 0 && hit == NULL)) {
    out->begin = (char *)s;
    out->end = (char *)s + n;
    return CK_OK;
  }
  if (nold == 1 && nnew == 1 && count < 0) {
    /* one byte for another everywhere (an ASCII byte, or the same byte):
     * the result has s's size; the bytes before the first match copied,
     * the rest with the byte swapped in a loop the compiler vectorises --
     * no search per match */
    unsigned char from = (unsigned char)old[0], to = (unsigned char)new_[0];
    const unsigned char *u = (const unsigned char *)s;
    int64_t first = hit - s;
    if (from == to) {
      out->begin = (char *)s;
      out->end = (char *)s + n;
      return CK_OK;
    }
    char *b, *e;
    ck__out o = ck__out_of(arena);
    ck_status st = ck__result_begin(&o, (uint64_t)n, __func__, &b, &e);
    if (st != CK_OK) {
      return st;
    }
    unsigned char *w = (unsigned char *)b;
    memcpy(w, u, (size_t)first);
    for (int64_t i = first; i < n; i++) {
      w[i] = u[i] == from ? to : u[i];
    }
    return ck__result_done(&o, b, e, n, out);
  }
  ck__searcher sr;
  ck__searcher_init(&sr, old, nold, n);
  /* count the replacements; the first CK__MATCHES offsets are kept for the
   * copy, which searches again only beyond them */
  enum { CK__MATCHES = 32 };
  int64_t at[CK__MATCHES];
  int64_t k;
  if (nold == 0) {
    int64_t len = ck_str_length(s, n);
    k = len + 1 < maxcount ? len + 1 : maxcount;
  } else {
    k = 0;
    for (int64_t p = hit - s; k < maxcount;) {
      int64_t i = ck__search(&sr, s, p, n);
      if (i < 0) {
        break;
      }
      if (k < CK__MATCHES) {
        at[k] = i;
      }
      k++;
      p = i + nold;
    }
  }
  if (k == 0) {
    out->begin = (char *)s;
    out->end = (char *)s + n;
    return CK_OK;
  }
  int64_t size;
  if (!ck__size_mad(n, k, nnew - nold, &size)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "replace string is too long");
  }
  char *b, *e;
  ck__out o = ck__out_of(arena);
  ck_status st = ck__result_begin(&o, (uint64_t)size, __func__, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  char *w = b;
  if (nold == 0) {
    int64_t p = 0;
    for (int64_t r = 0; r < k; r++) {
      if (nnew > 0) {
        memcpy(w, new_, (size_t)nnew);
        w += nnew;
      }
      if (p < n) {
        int len = ck__seq_len((unsigned char)s[p]);
        if (len > n - p) {
          len = (int)(n - p);
        }
        memcpy(w, s + p, (size_t)len);
        w += len;
        p += len;
      }
    }
    if (p < n) {
      memcpy(w, s + p, (size_t)(n - p));
      w += n - p;
    }
  } else if (nold == nnew) {
    /* same length: copy once, overwrite the matches */
    memcpy(b, s, (size_t)n);
    int64_t p = 0;
    for (int64_t r = 0; r < k; r++) {
      int64_t i = r < CK__MATCHES ? at[r] : ck__search(&sr, s, p, n);
      memcpy(b + i, new_, (size_t)nnew);
      p = i + nold;
    }
    w = b + n;
  } else {
    int64_t p = 0;
    for (int64_t r = 0; r < k; r++) {
      int64_t i = r < CK__MATCHES ? at[r] : ck__search(&sr, s, p, n);
      memcpy(w, s + p, (size_t)(i - p));
      w += i - p;
      if (nnew > 0) {
        memcpy(w, new_, (size_t)nnew);
        w += nnew;
      }
      p = i + nold;
    }
    if (p < n) {
      memcpy(w, s + p, (size_t)(n - p));
      w += n - p;
    }
  }
  return ck__result_done(&o, b, e, w - b, out);
}

static ck_status ck__join(const char *func, ck_memblock *arena, const char *sep, int64_t m,
                          const char *base, const ck_string *items, const ck_str_span *spans,
                          int64_t k, ck_string *out) {
  ck_status st = ck__str_arg(func, sep, m);
  if (st != CK_OK) {
    return st;
  }
  if (out == NULL || arena == NULL || k < 0 || (k > 0 && items == NULL && spans == NULL)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL arena, items or output");
  }
  int64_t size = 0;
  for (int64_t i = 0; i < k; i++) {
    int64_t len = items != NULL ? (int64_t)(items[i].end - items[i].begin) : spans[i].length;
    if (len < 0 || (len > 0 && (items != NULL ? items[i].begin == NULL : base == NULL))) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, func, "item %lld is not a string view",
                       (long long)i);
    }
    if (__builtin_add_overflow(size, len, &size) ||
        (i > 0 && __builtin_add_overflow(size, m, &size))) {
      return ck__error(CK_ERR_OVERFLOW, func, "join() result is too long");
    }
  }
  char *b, *e;
  ck__out o = ck__out_of(arena);
  st = ck__result_begin(&o, (uint64_t)size, func, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  char *w = b;
  for (int64_t i = 0; i < k; i++) {
    if (i > 0 && m > 0) {
      memcpy(w, sep, (size_t)m);
      w += m;
    }
    const char *p = items != NULL ? items[i].begin : base + spans[i].offset;
    int64_t len = items != NULL ? (int64_t)(items[i].end - items[i].begin) : spans[i].length;
    if (len > 0) {
      memcpy(w, p, (size_t)len);
      w += len;
    }
  }
  return ck__result_done(&o, b, e, w - b, out);
}

CK_API ck_status ck_str_join(ck_memblock *arena, const char *sep, int64_t m,
                             const ck_string *items, int64_t k, ck_string *out) {
  return ck__join(__func__, arena, sep, m, NULL, items, NULL, k, out);
}

CK_API ck_status ck_str_join_spans(ck_memblock *arena, const char *sep, int64_t m,
                                   const char *base, const ck_str_span *spans, int64_t k,
                                   ck_string *out) {
  return ck__join(__func__, arena, sep, m, base, NULL, spans, k, out);
}

CK_API ck_status ck_str_repeat(ck_memblock *arena, const char *s, int64_t n, int64_t count,
                               ck_string *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  if (count < 0) {
    count = 0;
  }
  int64_t size;
  if (!ck__size_mad(0, n, count, &size)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "repeated string is too long");
  }
  char *b, *e;
  ck__out o = ck__out_of(arena);
  ck_status st = ck__result_begin(&o, (uint64_t)size, __func__, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  if (size > 0) {
    if (n == 1) {
      memset(b, s[0], (size_t)size);
    } else {
      /* doubling copies */
      memcpy(b, s, (size_t)n);
      int64_t done = n;
      while (done < size) {
        int64_t c = done <= size - done ? done : size - done;
        memcpy(b + done, b, (size_t)c);
        done += c;
      }
    }
  }
  return ck__result_done(&o, b, e, size, out);
}

/* `left` fill code points, s, `right` fill code points. */
static ck_status ck__pad(const char *func, ck_memblock *arena, const char *s, int64_t n,
                         int64_t left, int64_t right, uint32_t fill, ck_string *out) {
  int fl = ck__cp_size(fill);
  int64_t size;
  if (!ck__size_mad(n, left + right, fl, &size)) {
    return ck__error(CK_ERR_OVERFLOW, func, "padded string is too long");
  }
  char *b, *e;
  ck__out o = ck__out_of(arena);
  ck_status st = ck__result_begin(&o, (uint64_t)size, func, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  char f[4];
  ck__encode(fill, f);
  char *w = b;
  for (int64_t i = 0; i < left; i++) {
    memcpy(w, f, (size_t)fl);
    w += fl;
  }
  if (n > 0) {
    memcpy(w, s, (size_t)n);
    w += n;
  }
  for (int64_t i = 0; i < right; i++) {
    memcpy(w, f, (size_t)fl);
    w += fl;
  }
  return ck__result_done(&o, b, e, w - b, out);
}

CK_API ck_status ck_str_zfill(ck_memblock *arena, const char *s, int64_t n, int64_t width,
                              ck_string *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  int64_t len = ck_str_length(s, n);
  int64_t fill = width > len ? width - len : 0;
  ck_status st = ck__pad(__func__, arena, s, n, fill, 0, '0', out);
  /* a sign moves in front of the zeros (n > 0: the byte after the zeros is
   * the text's first, not past the result) */
  if (st == CK_OK && fill > 0 && n > 0 &&
      (out->begin[fill] == '+' || out->begin[fill] == '-')) {
    out->begin[0] = out->begin[fill];
    out->begin[fill] = '0';
  }
  return st;
}

CK_API ck_status ck_str_pad(ck_memblock *arena, const char *s, int64_t n, int64_t width,
                            const char *fill, int64_t nfill, int align, ck_string *out) {
  CK__CHECK_VIEW(s, n);
  CK__CHECK_VIEW(fill, nfill);
  if (out == NULL || align < CK_ALIGN_LEFT || align > CK_ALIGN_CENTER) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output or bad alignment %d", align);
  }
  int64_t pos = 0;
  int32_t fc = ck_utf8_next(fill, nfill, &pos);
  if (fc < 0 || pos != nfill) {
    return CK_ERROR(CK_ERR_TYPE, "The fill character must be exactly one character long");
  }
  int64_t len = ck_str_length(s, n);
  int64_t marg = width > len ? width - len : 0, left, right;
  if (align == CK_ALIGN_LEFT) {
    left = 0, right = marg;
  } else if (align == CK_ALIGN_RIGHT) {
    left = marg, right = 0;
  } else {
    left = marg / 2 + (marg & width & 1);
    right = marg - left;
  }
  return ck__pad(__func__, arena, s, n, left, right, (uint32_t)fc, out);
}

CK_API ck_status ck_str_expandtabs(ck_memblock *arena, const char *s, int64_t n,
                                   int64_t tabsize, ck_string *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  /* measure: bytes, with the columns counted in code points */
  int64_t size = 0, col = 0;
  for (int64_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\t') {
      if (tabsize > 0) {
        int64_t incr = tabsize - col % tabsize;
        if (__builtin_add_overflow(col, incr, &col) ||
            __builtin_add_overflow(size, incr, &size)) {
          return CK_ERROR(CK_ERR_OVERFLOW, "new string is too long");
        }
      }
    } else {
      size++;
      if (!ck__is_cont(c)) {
        col++;
      }
      if (c == '\n' || c == '\r') {
        col = 0;
      }
    }
  }
  char *b, *e;
  ck__out o = ck__out_of(arena);
  ck_status st = ck__result_begin(&o, (uint64_t)size, __func__, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  char *w = b;
  col = 0;
  for (int64_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\t') {
      if (tabsize > 0) {
        int64_t incr = tabsize - col % tabsize;
        col += incr;
        memset(w, ' ', (size_t)incr);
        w += incr;
      }
    } else {
      *w++ = (char)c;
      if (!ck__is_cont(c)) {
        col++;
      }
      if (c == '\n' || c == '\r') {
        col = 0;
      }
    }
  }
  return ck__result_done(&o, b, e, w - b, out);
}

CK_API ck_status ck_str_ord(const char *s, int64_t n, int64_t *out) {
  CK__CHECK_VIEW(s, n);
  int64_t pos = 0;
  int32_t cp = ck_utf8_next(s, n, &pos);
  if (cp < 0 || pos != n) {
    return CK_ERROR(CK_ERR_TYPE, "ord() expected a character, but string of length %lld found",
                    (long long)ck_str_length(s, n));
  }
  if (out != NULL) {
    *out = cp;
  }
  return CK_OK;
}

CK_API ck_status ck_str_chr(int64_t cp, char *out, int64_t *out_len) {
  if (out == NULL || out_len == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  if (cp < 0 || cp > 0x10FFFF) {
    return CK_ERROR(CK_ERR_VALUE, "chr() arg not in range(0x110000)");
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) {
    return CK_ERROR(CK_ERR_VALUE, "chr(0x%llx): surrogates not allowed in UTF-8 text",
                    (unsigned long long)cp);
  }
  *out_len = ck__encode((uint32_t)cp, out);
  return CK_OK;
}
