/*
 * utf8_view.h -- the read-only str operations of ckernel/utf8.h (len,
 * indexing, ord, comparison, in, find, startswith, endswith) written once for
 * every C dialect the library speaks: C11, OpenCL C and CUDA C++.  The Python
 * package places this header's text in front of the device programs its jit
 * emits for string arguments (as it does ckernel/pyarith.h); the C tests
 * (tests/c/test_utf8_view.c) instantiate it for C11 and check every function
 * against the library's ck_str_* on random UTF-8.
 *
 * Why a header of macros: OpenCL C 1.2 (what PoCL and most OpenCL devices
 * compile) has no generic address space, so a function reading a string must
 * say where the string lives (__global: a device string array; __constant: a
 * literal of the program), and it has no libc (memcmp, memcpy, popcount).
 * The includer defines the types and qualifiers, then instantiates:
 *
 *   CK_UTF8_VIEW_ONE(SUF, AS)                     strings in address space AS:
 *     I64 ck_sv_len_SUF(AS const U8 *s, I64 n)          len(s) (code points)
 *     I64 ck_sv_offset_SUF(AS const U8 *s, I64 n, I64 k) byte offset of code
 *                                                       point k (0 <= k; past
 *                                                       the end: n)
 *     int ck_sv_getitem_SUF(AS const U8 *s, I64 n, I64 i, I64 *off, I64 *len)
 *                                                       s[i] as a byte span;
 *                                                       0 for IndexError
 *     I64 ck_sv_ord_SUF(AS const U8 *s, I64 n)          ord(s); -1 when s is
 *                                                       not one code point
 *     void ck_sv_strip_SUF(s, n, left, right, I64 *a, I64 *b)
 *                                                       s.strip() (lstrip:
 *                                                       right 0, rstrip: left
 *                                                       0): kept bytes [a, b)
 *   CK_UTF8_VIEW_TWO(SUF, SA, AS_A, SB, AS_B)     a in AS_A (ONE instantiated
 *                                                 as SA), b in AS_B (as SB):
 *     int  ck_sv_cmp_SUF(a, na, b, nb)              <0, 0, >0 (code point order)
 *     bool ck_sv_eq_SUF(a, na, b, nb)
 *     I64  ck_sv_find_SUF(s, n, sub, m, start, end) s.find(sub, start, end)
 *     bool ck_sv_contains_SUF(s, n, sub, m)         sub in s
 *     bool ck_sv_startswith_SUF(s, n, p, m, start, end)
 *     bool ck_sv_endswith_SUF(s, n, p, m, start, end)
 *     void ck_sv_stripc_SUF(s, n, chars, m, left, right, I64 *a, I64 *b)
 *                                                   s.strip(chars) and co.
 *
 * Types and qualifiers, defined by the includer: CK_SV_FN (function
 * qualifiers; C11 default "static inline"), CK_SV_I64 (a signed 64-bit type),
 * CK_SV_U8 (unsigned char).  start/end follow Python's rules (negative counts
 * from the end, clamped; None is 0 and a value >= len).
 *
 * Semantics are those of ckernel/utf8.h for valid UTF-8 (the only text device
 * string arrays hold: they are uploaded from host strings).  Cost: a byte at
 * a time (no word loads: device buffers need not be 8-byte aligned per row),
 * substring search by direct comparison at each candidate byte (O(n*m); the
 * CPU library uses Horspool's tables, 2 KiB per call, too big for a work
 * item's private memory on GPUs).
 */
#ifndef CKERNEL_UTF8_VIEW_H
#define CKERNEL_UTF8_VIEW_H

#ifndef CK_SV_FN
#define CK_SV_FN static inline
#endif

#define CK_UTF8_VIEW_ONE(SUF, AS)                                              \
  CK_SV_FN CK_SV_I64 ck_sv_len_##SUF(AS const CK_SV_U8 *s, CK_SV_I64 n) {      \
    CK_SV_I64 c = 0;                                                           \
    for (CK_SV_I64 i = 0; i < n; i++) {                                        \
      c += (s[i] & 0xC0) != 0x80;                                              \
    }                                                                          \
    return c;                                                                  \
  }                                                                            \
  CK_SV_FN CK_SV_I64 ck_sv_offset_##SUF(AS const CK_SV_U8 *s, CK_SV_I64 n,     \
                                        CK_SV_I64 k) {                         \
    CK_SV_I64 i = 0;                                                           \
    for (; i < n; i++) {                                                       \
      if ((s[i] & 0xC0) != 0x80) {                                             \
        if (k == 0) {                                                          \
          return i;                                                            \
        }                                                                      \
        k--;                                                                   \
      }                                                                        \
    }                                                                          \
    return n;                                                                  \
  }                                                                            \
  CK_SV_FN int ck_sv_getitem_##SUF(AS const CK_SV_U8 *s, CK_SV_I64 n,          \
                                   CK_SV_I64 i, CK_SV_I64 *off,                \
                                   CK_SV_I64 *len) {                           \
    CK_SV_I64 cps = ck_sv_len_##SUF(s, n);                                     \
    if (i < 0) {                                                               \
      i += cps;                                                                \
    }                                                                          \
    if (i < 0 || i >= cps) {                                                   \
      return 0;                                                                \
    }                                                                          \
    CK_SV_I64 b = ck_sv_offset_##SUF(s, n, i);                                 \
    CK_SV_I64 e = b + 1;                                                       \
    while (e < n && (s[e] & 0xC0) == 0x80) {                                   \
      e++;                                                                     \
    }                                                                          \
    *off = b;                                                                  \
    *len = e - b;                                                              \
    return 1;                                                                  \
  }                                                                            \
  CK_SV_FN CK_SV_I64 ck_sv_ord_##SUF(AS const CK_SV_U8 *s, CK_SV_I64 n) {      \
    if (n < 1 || n > 4 || ck_sv_len_##SUF(s, n) != 1) {                        \
      return -1;                                                               \
    }                                                                          \
    CK_SV_I64 b = s[0];                                                        \
    if (b < 0x80) {                                                            \
      return b;                                                                \
    }                                                                          \
    CK_SV_I64 cp = n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);     \
    for (CK_SV_I64 i = 1; i < n; i++) {                                        \
      cp = (cp << 6) | (s[i] & 0x3F);                                          \
    }                                                                          \
    return cp;                                                                 \
  }                                                                            \
  /* bytes of the code point at s[i] when Python's str.isspace() holds for  \
   * it (Unicode White_Space: 9-13, 28-32, U+85, U+A0, U+1680, U+2000-200A, \
   * U+2028, U+2029, U+202F, U+205F, U+3000), else 0 */                     \
  CK_SV_FN int ck_sv_space_##SUF(AS const CK_SV_U8 *s, CK_SV_I64 n,            \
                                 CK_SV_I64 i) {                                \
    CK_SV_U8 a = s[i];                                                         \
    if (a < 0x80) {                                                            \
      return (a >= 9 && a <= 13) || (a >= 28 && a <= 32);                      \
    }                                                                          \
    CK_SV_U8 b = i + 1 < n ? s[i + 1] : 0, c = i + 2 < n ? s[i + 2] : 0;       \
    if (a == 0xC2) {                                                           \
      return (b == 0x85 || b == 0xA0) ? 2 : 0;                                 \
    }                                                                          \
    if (a == 0xE1) {                                                           \
      return (b == 0x9A && c == 0x80) ? 3 : 0;                                 \
    }                                                                          \
    if (a == 0xE2 && b == 0x80) {                                              \
      return (c <= 0x8A || c == 0xA8 || c == 0xA9 || c == 0xAF) ? 3 : 0;       \
    }                                                                          \
    if (a == 0xE2 && b == 0x81) {                                              \
      return c == 0x9F ? 3 : 0;                                                \
    }                                                                          \
    return (a == 0xE3 && b == 0x80 && c == 0x80) ? 3 : 0;                      \
  }                                                                            \
  /* the first byte of the code point ending at byte j (> i), not before i */  \
  CK_SV_FN CK_SV_I64 ck_sv_last_##SUF(AS const CK_SV_U8 *s, CK_SV_I64 i,       \
                                      CK_SV_I64 j) {                           \
    CK_SV_I64 k = j - 1;                                                       \
    while (k > i && (s[k] & 0xC0) == 0x80) {                                   \
      k--;                                                                     \
    }                                                                          \
    return k;                                                                  \
  }                                                                            \
  /* s.strip() / lstrip() / rstrip(): the kept bytes [*a, *b) */               \
  CK_SV_FN void ck_sv_strip_##SUF(AS const CK_SV_U8 *s, CK_SV_I64 n, int left, \
                                  int right, CK_SV_I64 *a, CK_SV_I64 *b) {     \
    CK_SV_I64 i = 0, j = n;                                                    \
    int w;                                                                     \
    while (left && i < j && (w = ck_sv_space_##SUF(s, n, i)) > 0) {            \
      i += w;                                                                  \
    }                                                                          \
    while (right && j > i) {                                                   \
      CK_SV_I64 k = ck_sv_last_##SUF(s, i, j);                                 \
      if (ck_sv_space_##SUF(s, n, k) != j - k) {                               \
        break;                                                                 \
      }                                                                        \
      j = k;                                                                   \
    }                                                                          \
    *a = i;                                                                    \
    *b = j;                                                                    \
  }

#define CK_UTF8_VIEW_TWO(SUF, SA, AS_A, SB, AS_B)                              \
  CK_SV_FN int ck_sv_cmp_##SUF(AS_A const CK_SV_U8 *a, CK_SV_I64 na,           \
                               AS_B const CK_SV_U8 *b, CK_SV_I64 nb) {         \
    CK_SV_I64 m = na < nb ? na : nb;                                           \
    for (CK_SV_I64 i = 0; i < m; i++) {                                        \
      if (a[i] != b[i]) {                                                      \
        return a[i] < b[i] ? -1 : 1;                                           \
      }                                                                        \
    }                                                                          \
    return na < nb ? -1 : na > nb ? 1 : 0;                                     \
  }                                                                            \
  CK_SV_FN bool ck_sv_eq_##SUF(AS_A const CK_SV_U8 *a, CK_SV_I64 na,           \
                               AS_B const CK_SV_U8 *b, CK_SV_I64 nb) {         \
    return na == nb && ck_sv_cmp_##SUF(a, na, b, nb) == 0;                     \
  }                                                                            \
  /* the byte offset of sub in s[from, to) or -1 */                            \
  CK_SV_FN CK_SV_I64 ck_sv_search_##SUF(AS_A const CK_SV_U8 *s,                \
                                        CK_SV_I64 from, CK_SV_I64 to,          \
                                        AS_B const CK_SV_U8 *sub,              \
                                        CK_SV_I64 m) {                         \
    for (CK_SV_I64 i = from; i + m <= to; i++) {                               \
      CK_SV_I64 j = 0;                                                         \
      while (j < m && s[i + j] == sub[j]) {                                    \
        j++;                                                                   \
      }                                                                        \
      if (j == m) {                                                            \
        return i;                                                              \
      }                                                                        \
    }                                                                          \
    return -1;                                                                 \
  }                                                                            \
  /* Python's ADJUST_INDICES over s, then the byte range [*bs, *be) of code  \
   * points [start, end); false when shorter than mcp code points */          \
  CK_SV_FN bool ck_sv_range_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 n,         \
                                  CK_SV_I64 start, CK_SV_I64 end,              \
                                  CK_SV_I64 mcp, CK_SV_I64 *cs,                \
                                  CK_SV_I64 *bs, CK_SV_I64 *be) {              \
    CK_SV_I64 len = ck_sv_len_##SA(s, n);                                      \
    if (end > len) {                                                           \
      end = len;                                                               \
    } else if (end < 0) {                                                      \
      end += len;                                                              \
      if (end < 0) {                                                           \
        end = 0;                                                               \
      }                                                                        \
    }                                                                          \
    if (start < 0) {                                                           \
      start += len;                                                            \
      if (start < 0) {                                                         \
        start = 0;                                                             \
      }                                                                        \
    }                                                                          \
    if (end - start < mcp) {                                                   \
      return false;                                                            \
    }                                                                          \
    *cs = start;                                                               \
    *bs = ck_sv_offset_##SA(s, n, start);                                      \
    *be = ck_sv_offset_##SA(s, n, end);                                        \
    return true;                                                               \
  }                                                                            \
  CK_SV_FN CK_SV_I64 ck_sv_find_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 n,     \
                                      AS_B const CK_SV_U8 *sub, CK_SV_I64 m,   \
                                      CK_SV_I64 start, CK_SV_I64 end) {        \
    CK_SV_I64 cs, bs, be;                                                      \
    if (!ck_sv_range_##SUF(s, n, start, end, ck_sv_len_##SB(sub, m), &cs, &bs, \
                           &be)) {                                             \
      return -1;                                                               \
    }                                                                          \
    CK_SV_I64 off = ck_sv_search_##SUF(s, bs, be, sub, m);                     \
    return off < 0 ? -1 : cs + ck_sv_len_##SA(s + bs, off - bs);              \
  }                                                                            \
  CK_SV_FN bool ck_sv_contains_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 n,      \
                                     AS_B const CK_SV_U8 *sub, CK_SV_I64 m) {  \
    return ck_sv_search_##SUF(s, 0, n, sub, m) >= 0;                           \
  }                                                                            \
  /* p (m bytes) at the start (at_end 0) or end (1) of code points             \
   * [start, end) of s: s.startswith(p, start, end) / s.endswith(...) */       \
  CK_SV_FN bool ck_sv_affix_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 n,         \
                                  AS_B const CK_SV_U8 *p, CK_SV_I64 m,         \
                                  CK_SV_I64 start, CK_SV_I64 end,              \
                                  int at_end) {                                \
    CK_SV_I64 cs, bs, be;                                                      \
    if (!ck_sv_range_##SUF(s, n, start, end, ck_sv_len_##SB(p, m), &cs, &bs,   \
                           &be)) {                                             \
      return false;                                                            \
    }                                                                          \
    return m <= be - bs &&                                                     \
           ck_sv_cmp_##SUF(s + (at_end ? be - m : bs), m, p, m) == 0;          \
  }                                                                            \
  CK_SV_FN bool ck_sv_startswith_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 n,    \
                                       AS_B const CK_SV_U8 *p, CK_SV_I64 m,    \
                                       CK_SV_I64 start, CK_SV_I64 end) {       \
    return ck_sv_affix_##SUF(s, n, p, m, start, end, 0);                       \
  }                                                                            \
  CK_SV_FN bool ck_sv_endswith_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 n,      \
                                     AS_B const CK_SV_U8 *p, CK_SV_I64 m,      \
                                     CK_SV_I64 start, CK_SV_I64 end) {         \
    return ck_sv_affix_##SUF(s, n, p, m, start, end, 1);                       \
  }                                                                            \
  /* whether the code point s[i, i + w) is one of the code points of chars */ \
  CK_SV_FN bool ck_sv_inset_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 i,         \
                                  CK_SV_I64 w, AS_B const CK_SV_U8 *chars,     \
                                  CK_SV_I64 m) {                               \
    for (CK_SV_I64 k = 0; k + w <= m; k++) {                                   \
      CK_SV_I64 t = 0;                                                         \
      while (t < w && s[i + t] == chars[k + t]) {                              \
        t++;                                                                   \
      }                                                                        \
      if (t == w) {                                                            \
        return true;                                                           \
      }                                                                        \
    }                                                                          \
    return false;                                                              \
  }                                                                            \
  /* s.strip(chars) / lstrip(chars) / rstrip(chars): the kept bytes */        \
  CK_SV_FN void ck_sv_stripc_##SUF(AS_A const CK_SV_U8 *s, CK_SV_I64 n,        \
                                   AS_B const CK_SV_U8 *chars, CK_SV_I64 m,    \
                                   int left, int right, CK_SV_I64 *a,          \
                                   CK_SV_I64 *b) {                             \
    CK_SV_I64 i = 0, j = n;                                                    \
    while (left && i < j) {                                                    \
      CK_SV_I64 e = i + 1;                                                     \
      while (e < j && (s[e] & 0xC0) == 0x80) {                                 \
        e++;                                                                   \
      }                                                                        \
      if (!ck_sv_inset_##SUF(s, i, e - i, chars, m)) {                         \
        break;                                                                 \
      }                                                                        \
      i = e;                                                                   \
    }                                                                          \
    while (right && j > i) {                                                   \
      CK_SV_I64 k = ck_sv_last_##SA(s, i, j);                                  \
      if (!ck_sv_inset_##SUF(s, k, j - k, chars, m)) {                         \
        break;                                                                 \
      }                                                                        \
      j = k;                                                                   \
    }                                                                          \
    *a = i;                                                                    \
    *b = j;                                                                    \
  }

#endif /* CKERNEL_UTF8_VIEW_H */
