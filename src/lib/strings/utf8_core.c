/*
 * utf8_core.c -- UTF-8 views: validation, code points, length, indexing and
 * slicing by code point, comparison, hashing (ckernel/utf8.h), and the
 * arena results every source of the module writes.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

#include <string.h>

/* ---- shared helpers --------------------------------------------------------- */

ck_status ck__str_arg(const char *func, const char *s, int64_t n) {
  if (n < 0) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "negative string length %lld",
                     (long long)n);
  }
  if (s == NULL && n > 0) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL string with length %lld",
                     (long long)n);
  }
  return CK_OK;
}

/* ---- validation ------------------------------------------------------------- */

static ck_status ck__decode_error(const char *s, int64_t start, int64_t end, const char *why) {
  if (end - start == 1) {
    return CK_ERROR(CK_ERR_VALUE,
                    "'utf-8' codec can't decode byte 0x%02x in position %lld: %s",
                    (unsigned)(unsigned char)s[start], (long long)start, why);
  }
  return CK_ERROR(CK_ERR_VALUE, "'utf-8' codec can't decode bytes in position %lld-%lld: %s",
                  (long long)start, (long long)(end - 1), why);
}

CK_API ck_status ck_utf8_check(const char *s, int64_t n, int64_t *out_length) {
  CK__CHECK_VIEW(s, n);
  const unsigned char *u = (const unsigned char *)s;
  int64_t i = 0, cont = 0;
  while (i < n) {
    if (i + 8 <= n && (ck__load64(s + i) & CK__HI_BITS) == 0) {
      i += 8;
      continue;
    }
    unsigned b = u[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    int need;
    unsigned lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      lo = b == 0xE0 ? 0xA0 : 0x80;
      hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      lo = b == 0xF0 ? 0x90 : 0x80;
      hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
      return ck__decode_error(s, i, i + 1, "invalid start byte");
    }
    for (int k = 1; k <= need; k++) {
      if (i + k >= n) {
        return ck__decode_error(s, i, n, "unexpected end of data");
      }
      unsigned c = u[i + k];
      if (c < lo || c > hi) {
        return ck__decode_error(s, i, i + k, "invalid continuation byte");
      }
      lo = 0x80, hi = 0xBF;
    }
    cont += need;
    i += need + 1;
  }
  if (out_length != NULL) {
    *out_length = n - cont;
  }
  return CK_OK;
}

CK_API int32_t ck_utf8_next(const char *s, int64_t n, int64_t *pos) {
  if (s == NULL || pos == NULL || *pos < 0 || *pos >= n) {
    return -1;
  }
  const unsigned char *u = (const unsigned char *)s + *pos;
  if (ck__is_cont(u[0]) || u[0] >= 0xF8 || ck__seq_len(u[0]) > n - *pos) {
    return -1;
  }
  int len;
  uint32_t cp = ck__decode(u, (const unsigned char *)s + n, &len);
  *pos += len;
  return (int32_t)cp;
}

CK_API int32_t ck_utf8_prev(const char *s, int64_t n, int64_t *pos) {
  if (s == NULL || pos == NULL || *pos <= 0 || *pos > n) {
    return -1;
  }
  int64_t p = *pos - 1;
  while (p > 0 && *pos - p < 4 && ck__is_cont((unsigned char)s[p])) {
    p--;
  }
  int64_t q = p;
  int32_t cp = ck_utf8_next(s, n, &q);
  if (cp < 0 || q != *pos) {
    return -1;
  }
  *pos = p;
  return cp;
}

CK_API int ck_utf8_encode(uint32_t cp, char *out) {
  if (out == NULL || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return ck__encode(cp, out);
}

/* ---- length, offsets -------------------------------------------------------- */

CK_API bool ck_str_is_ascii(const char *s, int64_t n) {
  if (s == NULL || n <= 0) {
    return true;
  }
  int64_t i = 0;
  uint64_t acc = 0;
  for (; i + 32 <= n; i += 32) {
    acc |= ck__load64(s + i) | ck__load64(s + i + 8) | ck__load64(s + i + 16) |
           ck__load64(s + i + 24);
    if (acc & CK__HI_BITS) {
      return false;
    }
  }
  for (; i + 8 <= n; i += 8) {
    acc |= ck__load64(s + i);
  }
  for (; i < n; i++) {
    acc |= (unsigned char)s[i];
  }
  return (acc & CK__HI_BITS) == 0;
}

/* Continuation bytes (10xxxxxx) of a word. */
static inline int ck__conts(uint64_t w) {
  return __builtin_popcountll(w & ~(w << 1) & CK__HI_BITS);
}

CK_API int64_t ck_str_length(const char *s, int64_t n) {
  if (s == NULL || n <= 0) {
    return 0;
  }
  int64_t i = 0, cont = 0;
  for (; i + 8 <= n; i += 8) {
    cont += ck__conts(ck__load64(s + i));
  }
  for (; i < n; i++) {
    cont += ck__is_cont((unsigned char)s[i]);
  }
  return n - cont;
}

CK_API int64_t ck_str_byte_offset(const char *s, int64_t n, int64_t index, int ascii) {
  if (s == NULL || n <= 0 || index <= 0) {
    return 0;
  }
  if (ascii < 0) {
    ascii = ck_str_is_ascii(s, n);
  }
  if (ascii) {
    return index < n ? index : n;
  }
  int64_t i = 0, r = index;
  for (; i + 8 <= n; i += 8) {
    int64_t c = 8 - ck__conts(ck__load64(s + i));
    if (c > r) {
      break;
    }
    r -= c;
  }
  for (; i < n; i++) {
    if (!ck__is_cont((unsigned char)s[i])) {
      if (r == 0) {
        return i;
      }
      r--;
    }
  }
  return n;
}

CK_API int64_t ck_str_cp_index(const char *s, int64_t n, int64_t offset, int ascii) {
  if (offset <= 0) {
    return 0;
  }
  if (offset > n) {
    offset = n;
  }
  return ascii > 0 ? offset : ck_str_length(s, offset);
}

/* Byte offset of `count` code points backwards from byte `pos`. */
static int64_t ck__back(const char *s, int64_t pos, int64_t count) {
  while (count > 0 && pos > 0) {
    pos--;
    if (!ck__is_cont((unsigned char)s[pos])) {
      count--;
    }
  }
  return pos;
}

/* Byte offset of `count` code points forwards from byte `pos`. */
static int64_t ck__fwd(const char *s, int64_t n, int64_t pos, int64_t count) {
  if (count <= 0) {
    return pos;
  }
  return pos + ck_str_byte_offset(s + pos, n - pos, count, 0);
}

/* ---- indexing, slicing ----------------------------------------------------- */

CK_API ck_status ck_str_getitem(const char *s, int64_t n, int64_t index, ck_str_span *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  int ascii = ck_str_is_ascii(s, n);
  if (index < 0) {
    int64_t len = ascii ? n : ck_str_length(s, n);
    if (index < -len) {
      return CK_ERROR(CK_ERR_INDEX, "string index out of range");
    }
    index += len;
  }
  int64_t off = index >= n ? n : ck_str_byte_offset(s, n, index, ascii);
  if (off >= n) {
    return CK_ERROR(CK_ERR_INDEX, "string index out of range");
  }
  int k = ck__seq_len((unsigned char)s[off]);
  out->offset = off;
  out->length = k <= n - off ? k : n - off;
  return CK_OK;
}

CK_API ck_status ck_slice_indices(int64_t length, int64_t *start, int64_t *stop, int64_t step,
                                  int64_t *out_count) {
  if (start == NULL || stop == NULL || out_count == NULL || length < 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument or negative length");
  }
  if (step == 0) {
    return CK_ERROR(CK_ERR_VALUE, "slice step cannot be zero");
  }
  if (step < -INT64_MAX) {
    step = -INT64_MAX; /* as PySlice_Unpack: -step must not overflow */
  }
  int64_t a = *start, b = *stop;
  if (a == CK_STR_NONE) {
    a = step < 0 ? INT64_MAX : 0;
  }
  if (b == CK_STR_NONE) {
    b = step < 0 ? INT64_MIN : INT64_MAX;
  }
  /* PySlice_AdjustIndices */
  if (a < 0) {
    a = a < -length ? (step < 0 ? -1 : 0) : a + length;
  } else if (a >= length) {
    a = step < 0 ? length - 1 : length;
  }
  if (b < 0) {
    b = b < -length ? (step < 0 ? -1 : 0) : b + length;
  } else if (b >= length) {
    b = step < 0 ? length - 1 : length;
  }
  int64_t count = 0;
  if (step < 0) {
    if (b < a) {
      count = (int64_t)(((uint64_t)a - (uint64_t)b - 1) / (uint64_t)(-step)) + 1;
    }
  } else if (a < b) {
    count = (int64_t)(((uint64_t)b - (uint64_t)a - 1) / (uint64_t)step) + 1;
  }
  *start = a;
  *stop = b;
  *out_count = count;
  return CK_OK;
}

CK_API ck_status ck_str_slice(ck_memblock *arena, const char *s, int64_t n, int64_t start,
                              int64_t stop, int64_t step, ck_string *out) {
  CK__CHECK_VIEW(s, n);
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  int ascii = ck_str_is_ascii(s, n);
  int64_t len = ascii ? n : ck_str_length(s, n), count;
  ck_status st = ck_slice_indices(len, &start, &stop, step, &count);
  if (st != CK_OK) {
    return st;
  }
  static const char empty[1] = {0};
  if (step == 1 || count == 0) {
    int64_t b = count == 0 ? 0 : ck_str_byte_offset(s, n, start, ascii);
    int64_t e = count == 0 ? 0 : ck_str_byte_offset(s, n, stop, ascii);
    out->begin = count == 0 ? (char *)empty : (char *)s + b;
    out->end = count == 0 ? (char *)empty : (char *)s + e;
    return CK_OK;
  }
  if (step < -INT64_MAX) {
    step = -INT64_MAX;
  }
  uint64_t cap = ascii ? (uint64_t)count : (uint64_t)count * 4 < (uint64_t)n ? (uint64_t)count * 4 : (uint64_t)n;
  char *rb, *re;
  ck__out o = ck__out_of(arena);
  st = ck__result_begin(&o, cap, __func__, &rb, &re);
  if (st != CK_OK) {
    return st;
  }
  char *w = rb;
  if (ascii) {
    for (int64_t k = 0, i = start; k < count; k++, i += (k < count ? step : 0)) {
      *w++ = s[i];
    }
  } else {
    int64_t pos = ck_str_byte_offset(s, n, start, 0);
    for (int64_t k = 0; k < count; k++) {
      int len1 = ck__seq_len((unsigned char)s[pos]);
      if (len1 > n - pos) {
        len1 = (int)(n - pos);
      }
      memcpy(w, s + pos, (size_t)len1);
      w += len1;
      if (k + 1 < count) {
        pos = step > 0 ? ck__fwd(s, n, pos, step) : ck__back(s, pos, -step);
      }
    }
  }
  return ck__result_done(&o, rb, re, w - rb, out);
}

/* ---- comparison, hashing -------------------------------------------------- */

CK_API int ck_str_compare(const char *a, int64_t na, const char *b, int64_t nb) {
  int64_t m = na < nb ? na : nb;
  int c = m > 0 ? memcmp(a, b, (size_t)m) : 0;
  if (c != 0) {
    return c < 0 ? -1 : 1;
  }
  return na < nb ? -1 : na > nb ? 1 : 0;
}

CK_API bool ck_str_equal(const char *a, int64_t na, const char *b, int64_t nb) {
  return na == nb && (na <= 0 || memcmp(a, b, (size_t)na) == 0);
}

static inline uint64_t ck__rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

CK_API uint64_t ck_str_hash(const char *s, int64_t n) {
  const uint64_t k1 = 0x87C37B91114253D5ULL, k2 = 0x4CF5AD432745937FULL;
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)(n > 0 ? n : 0) * k2);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = ck__load64(s + i) * k1;
    h ^= ck__rotl(w, 31) * k2;
    h = ck__rotl(h, 27) * 5 + 0x52DCE729;
  }
  if (i < n) {
    uint64_t w = 0;
    memcpy(&w, s + i, (size_t)(n - i));
    w *= k1;
    h ^= ck__rotl(w, 31) * k2;
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}
