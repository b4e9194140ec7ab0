/*
 * utf8_case.c -- case mapping and character classes of UTF-8 views
 * (ckernel/utf8.h), over the generated tables (unicode_tables.c).  The
 * rules are CPython's (Objects/unicodeobject.c: do_lower, do_upper,
 * do_casefold, do_title, do_capitalize, do_swapcase, handle_capital_sigma;
 * unicode_islower_impl ...).
 *
 * ASCII runs are mapped 8 bytes at a time (no separate is-ASCII scan);
 * 2-byte code points by one lookup of the generated ck__case2 tables, 3-byte
 * ones of blocks no mapping changes copied, other code points through their
 * record.  Results are allocated at the input's size and grown only when a
 * mapping lengthens the text (ck__case).  The predicates read the flags of
 * U+0000-U+07FF from ck__flags2.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

#include <inttypes.h>
#include <string.h>

CK_API const char *ck_unicode_version(void) { return ck__ucd_version; }

CK_API uint32_t ck_unicode_flags(uint32_t cp) {
  return cp > 0x10FFFF ? 0 : ck__ucd(cp)->flags & CK__U_PUBLIC;
}

CK_API ck_status ck_unicode_flags_range(uint32_t first, uint32_t count, uint32_t *out) {
  if (out == NULL && count > 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  if (first > 0x110000u || count > 0x110000u - first) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "code points %" PRIu32 " + %" PRIu32 " past U+10FFFF", first, count);
  }
  for (uint32_t i = 0; i < count; i++) {
    out[i] = ck__ucd(first + i)->flags & CK__U_PUBLIC;
  }
  return CK_OK;
}

static int ck__case_of(const ck__ucd_record *r, ck_case_map which, uint32_t cp, uint32_t *out) {
  static const uint32_t ext_flag[4] = {CK__U_EXT_LOWER, CK__U_EXT_UPPER, CK__U_EXT_TITLE,
                                       CK__U_EXT_FOLD};
  int32_t v = which == CK_CASE_LOWER   ? r->lower
              : which == CK_CASE_UPPER ? r->upper
              : which == CK_CASE_TITLE ? r->title
                                       : r->fold;
  if (r->flags & ext_flag[which]) {
    int count = (int)((uint32_t)v >> 24);
    const uint32_t *seq = ck__ucd_ext + ((uint32_t)v & 0xFFFFFF);
    for (int i = 0; i < count; i++) {
      out[i] = seq[i];
    }
    return count;
  }
  out[0] = (uint32_t)((int32_t)cp + v);
  return 1;
}

CK_API int ck_unicode_case(uint32_t cp, ck_case_map which, uint32_t *out) {
  if (out == NULL || (unsigned)which > CK_CASE_FOLD || cp > 0x10FFFF) {
    if (out != NULL) {
      out[0] = cp;
    }
    return out == NULL ? 0 : 1;
  }
  return ck__case_of(ck__ucd(cp), which, cp, out);
}

CK_API int ck_unicode_decimal(uint32_t cp) { return cp > 0x10FFFF ? -1 : ck__ucd(cp)->decimal; }
CK_API int ck_unicode_digit(uint32_t cp) { return cp > 0x10FFFF ? -1 : ck__ucd(cp)->digit; }

/* ---- case mapping ------------------------------------------------------------ */

typedef enum ck__case_op {
  CK__LOWER,
  CK__UPPER,
  CK__FOLD,
  CK__TITLE,
  CK__CAPITALIZE,
  CK__SWAPCASE
} ck__case_op;

/* Is the capital sigma at byte i final (handle_capital_sigma)? */
static bool ck__final_sigma(const char *s, int64_t n, int64_t i) {
  const unsigned char *u = (const unsigned char *)s, *e = u + n;
  int64_t p = i;
  uint32_t c = 0;
  bool found = false;
  while (p > 0) {
    int64_t q = p - 1;
    while (q > 0 && ck__is_cont(u[q])) {
      q--;
    }
    int len;
    c = ck__decode(u + q, e, &len);
    p = q;
    if (!(ck__ucd(c)->flags & CK_UNICODE_CASE_IGNORABLE)) {
      found = true;
      break;
    }
  }
  if (!found || !(ck__ucd(c)->flags & CK_UNICODE_CASED)) {
    return false;
  }
  int len;
  p = i + ck__seq_len(u[i]);
  while (p < n) {
    c = ck__decode(u + p, e, &len);
    if (!(ck__ucd(c)->flags & CK_UNICODE_CASE_IGNORABLE)) {
      return !(ck__ucd(c)->flags & CK_UNICODE_CASED);
    }
    p += len;
  }
  return true;
}

/* lower_ucs4: the lowercase mapping, with the final sigma. */
static int ck__lower_at(const char *s, int64_t n, int64_t i, uint32_t cp,
                        const ck__ucd_record *r, uint32_t *out) {
  if (cp == 0x3A3) {
    out[0] = ck__final_sigma(s, n, i) ? 0x3C2 : 0x3C3;
    return 1;
  }
  return ck__case_of(r, CK_CASE_LOWER, cp, out);
}

/* The high bit of every byte of w (ASCII bytes only: no byte >= 0x80 below
 * the ones asked about) that lies in [lo, hi].  A byte >= 0x80 may carry
 * into the bytes above it (later in memory on little-endian machines), never
 * into the ones below. */
static inline uint64_t ck__in_range(uint64_t w, unsigned lo, unsigned hi) {
  const uint64_t ones = 0x0101010101010101ULL;
  uint64_t ge = w + ones * (0x80 - lo);     /* high bit: byte >= lo */
  uint64_t gt = w + ones * (0x80 - hi - 1); /* high bit: byte > hi  */
  return ge & ~gt & CK__HI_BITS;
}

/* 8 bytes mapped by op; bytes before the first byte >= 0x80 come out right
 * (the rest are rewritten by the caller).  *prev_cased: whether the byte
 * before w is cased (title; updated to the last of the 8), *first: w starts
 * the string (capitalize). */
static inline uint64_t ck__ascii_word(uint64_t w, ck__case_op op, bool *prev_cased, bool first) {
  uint64_t up = ck__in_range(w, 'A', 'Z'), lo = ck__in_range(w, 'a', 'z'), flip;
  switch (op) {
  case CK__UPPER:
    flip = lo;
    break;
  case CK__SWAPCASE:
    flip = up | lo;
    break;
  case CK__TITLE: {
    /* little-endian: byte k + 1 follows byte k (other orders take the
     * per-byte path: ck__words) */
    uint64_t letter = up | lo;
    uint64_t prev = (letter << 8) | (*prev_cased ? 0x80u : 0u);
    flip = (lo & ~prev) | (up & prev);
    *prev_cased = (letter >> 63) != 0;
    break;
  }
  case CK__CAPITALIZE:
    flip = first ? (up & ~(uint64_t)0x80) | (lo & 0x80) : up;
    break;
  default: /* lower, casefold */
    flip = up;
    break;
  }
  return w ^ (flip >> 2);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CK__WORDS 1 /* the word loop (byte k of a loaded word is s[k]) */
#else
#define CK__WORDS 0
#endif

/* One ASCII byte mapped by op (the title state as ck__ascii_word). */
static inline unsigned char ck__ascii_byte(unsigned char c, ck__case_op op, bool *prev_cased,
                                           bool first) {
  bool up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z', flip;
  switch (op) {
  case CK__UPPER:
    flip = lo;
    break;
  case CK__SWAPCASE:
    flip = up || lo;
    break;
  case CK__TITLE:
    flip = *prev_cased ? up : lo;
    *prev_cased = up || lo;
    break;
  case CK__CAPITALIZE:
    flip = first ? lo : up;
    break;
  default:
    flip = up;
    break;
  }
  return (unsigned char)(flip ? c ^ 0x20 : c);
}

/* The ASCII front of s[0, n) mapped by lower/casefold (flip 'A'-'Z') or
 * upper (flip 'a'-'z') into w: 8 bytes at a time, then the bytes of the
 * tail; stops at the word holding the first byte >= 0x80 (at that byte in
 * the tail).  Returns the bytes done.  The loop of every ASCII row of
 * s.lower() / s.upper(): no case switch per word, no title state. */
static inline int64_t ck__ascii_flip(const char *s, int64_t n, char *w, unsigned lo,
                                     unsigned hi) {
  int64_t i = 0;
  for (; n - i >= 8; i += 8) {
    uint64_t x = ck__load64(s + i);
    if (x & CK__HI_BITS) {
      return i;
    }
    x ^= ck__in_range(x, lo, hi) >> 2;
    memcpy(w + i, &x, 8);
  }
  for (; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80) {
      break;
    }
    w[i] = (char)(c - lo <= hi - lo ? c ^ 0x20 : c);
  }
  return i;
}

/* The code point at byte *pi (after the ASCII and 2-byte fast paths) mapped
 * by op through its record, written at *pw; the allocation [*pb, *pe) is
 * grown when the mapping is longer than the code point's UTF-8, keeping
 * room >= n - i (below).  *prev_cased: title's state. */
static ck_status ck__case_cp(const char *func, ck__out *o, const char *s, int64_t n,
                             ck__case_op op, int64_t *pi, bool *prev_cased, char **pb,
                             char **pe, char **pw) {
  const unsigned char *u = (const unsigned char *)s;
  int64_t i = *pi;
  int len;
  uint32_t cp = ck__decode(u + i, u + n, &len);
  const ck__ucd_record *r = ck__ucd(cp);
  uint32_t m[3];
  int k;
  switch (op) {
  case CK__LOWER:
    k = ck__lower_at(s, n, i, cp, r, m);
    break;
  case CK__UPPER:
    k = ck__case_of(r, CK_CASE_UPPER, cp, m);
    break;
  case CK__FOLD:
    k = ck__case_of(r, CK_CASE_FOLD, cp, m);
    break;
  case CK__TITLE:
    k = *prev_cased ? ck__lower_at(s, n, i, cp, r, m) : ck__case_of(r, CK_CASE_TITLE, cp, m);
    *prev_cased = (r->flags & CK_UNICODE_CASED) != 0;
    break;
  case CK__CAPITALIZE:
    k = i == 0 ? ck__case_of(r, CK_CASE_TITLE, cp, m) : ck__lower_at(s, n, i, cp, r, m);
    break;
  default: /* CK__SWAPCASE */
    if (r->flags & CK_UNICODE_UPPER) {
      k = ck__lower_at(s, n, i, cp, r, m);
    } else if (r->flags & CK_UNICODE_LOWER) {
      k = ck__case_of(r, CK_CASE_UPPER, cp, m);
    } else {
      m[0] = cp;
      k = 1;
    }
    break;
  }
  int size = 0;
  for (int j = 0; j < k; j++) {
    size += ck__cp_size(m[j]);
  }
  i += len;
  char *w = *pw;
  if (size > len && (*pe - w) - size < n - i) { /* keep room >= n - i */
    int64_t used = w - *pb;
    uint64_t cap = (uint64_t)used + (uint64_t)size + (uint64_t)(n - i) * ck__ucd_max_growth;
    if (cap > (uint64_t)PTRDIFF_MAX) {
      return ck__error(CK_ERR_OVERFLOW, func, "the result would exceed %lld bytes",
                       (long long)PTRDIFF_MAX);
    }
    ck_status st = ck__result_grow(o, used, cap, func, pb, pe);
    if (st != CK_OK) {
      return st;
    }
    w = *pb + used;
  }
  for (int j = 0; j < k; j++) {
    w += ck__encode(m[j], w);
  }
  *pw = w;
  *pi = i;
  return CK_OK;
}

/* ck__case_cp at i / w of the calling loop, through copies: the loop's
 * variables never have their address taken, so they stay in registers
 * (through memory, every word of the loop waited on a store and a load of
 * w: the mixed-text loops ran about 1.2x slower). */
#define CK__CASE_CP()                                                          \
  do {                                                                         \
    int64_t ti_ = i;                                                           \
    bool tp_ = prev_cased;                                                     \
    char *tb_ = b, *te_ = e, *tw_ = w;                                         \
    st = ck__case_cp(func, o, s, n, op, &ti_, &tp_, &tb_, &te_, &tw_);         \
    i = ti_;                                                                   \
    prev_cased = tp_;                                                          \
    b = tb_;                                                                   \
    e = te_;                                                                   \
    w = tw_;                                                                   \
  } while (0)

/* One non-ASCII code point of ck__case_simple's loops (the body of a loop:
 * `continue`s it): a 2-byte character through the table t2 (0: the general
 * path), a 3-byte one in a block no mapping touches copied, any other
 * through CK__CASE_CP (returns its error). */
#define CK__CASE_NON_ASCII_STEP()                                              \
  unsigned c0 = u[i];                                                          \
  if (c0 >= 0xC0 && c0 < 0xE0 && n - i >= 2) {                                 \
    uint16_t m = t2[((c0 & 0x1Fu) << 6) | (u[i + 1] & 0x3Fu)];                 \
    if (m != 0) {                                                              \
      memcpy(w, &m, 2); /* b0 | b1 << 8: little-endian */                      \
      w += 2;                                                                  \
      i += 2;                                                                  \
      continue;                                                                \
    }                                                                          \
  } else if (c0 >= 0xE0 && c0 < 0xF0 && n - i >= 3) {                          \
    unsigned blk = ((c0 & 0x0Fu) << 6) | (u[i + 1] & 0x3Fu); /* cp >> 6 */     \
    if ((ck__case3_plain[blk >> 6] >> (blk & 63)) & 1) {                       \
      memcpy(w, s + i, 3);                                                     \
      w += 3;                                                                  \
      i += 3;                                                                  \
      continue;                                                                \
    }                                                                          \
  }                                                                            \
  CK__CASE_CP();                                                               \
  if (st != CK_OK) {                                                           \
    return st;                                                                 \
  }

#if CK__WORDS
/* The r bytes (1-7) at p as the low bytes of a word, the others zero: two
 * overlapping loads, nothing read outside [p, p + r). */
static inline uint64_t ck__load_short(const char *p, int64_t r) {
  if (r >= 4) {
    uint32_t x, y;
    memcpy(&x, p, 4);
    memcpy(&y, p + r - 4, 4);
    return (uint64_t)x | ((uint64_t)y << (8 * (r - 4)));
  }
  if (r >= 2) {
    uint16_t x, y;
    memcpy(&x, p, 2);
    memcpy(&y, p + r - 2, 2);
    return (uint64_t)x | ((uint64_t)y << (8 * (r - 2)));
  }
  return (unsigned char)p[0];
}

/* The low r bytes (1-7) of x stored at p (two overlapping stores). */
static inline void ck__store_short(char *p, uint64_t x, int64_t r) {
  if (r >= 4) {
    uint32_t y = (uint32_t)(x >> (8 * (r - 4)));
    memcpy(p, &x, 4); /* the low 4 bytes (little-endian) */
    memcpy(p + r - 4, &y, 4);
  } else if (r >= 2) {
    uint16_t y = (uint16_t)(x >> (8 * (r - 2)));
    memcpy(p, &x, 2);
    memcpy(p + r - 2, &y, 2);
  } else {
    p[0] = (char)x;
  }
}

/*
 * lower / upper / casefold: no state but the final sigma, so a loop of its
 * own.  ASCII runs go 8 bytes at a time (the last 1-7 bytes of a run as
 * one word too: ck__load_short), also between non-ASCII characters; a
 * 2-byte sequence (Latin-1 supplement, Latin Extended, Greek, Cyrillic ...)
 * is mapped by one lookup of its two bytes (ck__case2), a 3-byte one in a
 * block that no mapping changes (CJK, most symbols) is copied; the rest --
 * the capital sigma of lower, mappings that change the length (ß -> SS),
 * other cased 3-byte and all 4-byte code points -- take the general path
 * (ck__case_cp).  Allocation and room as ck__case below.
 */
static ck_status ck__case_simple(const char *func, ck__out *o, const char *s, int64_t n,
                                 ck__case_op op, ck_string *out) {
  char *b, *e;
  ck_status st = ck__result_begin(o, (uint64_t)n, func, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  const unsigned char *u = (const unsigned char *)s;
  const unsigned lo = op == CK__UPPER ? 'a' : 'A', hi = lo + 25;
  const uint16_t *t2 = ck__case2 + 2048 * (int)op; /* CK__LOWER, CK__UPPER, CK__FOLD */
  char *w = b;
  int64_t i = 0;
  bool prev_cased = false; /* unused by these ops */
  while (i < n) {
    /* ASCII, 8 bytes at a time; a word holding other bytes is stored
     * whole (room >= n - i >= 8) and its bytes from the first other one
     * on are rewritten next */
    while (n - i >= 8) {
      uint64_t x = ck__load64(s + i), h = x & CK__HI_BITS;
      x ^= ck__in_range(x, lo, hi) >> 2;
      memcpy(w, &x, 8);
      if (h == 0) {
        i += 8;
        w += 8;
        continue;
      }
      /* the non-ASCII code points up to the next ASCII byte (a run of
       * them, as a Greek word, in a loop of its own: no word reloaded per
       * code point), then the next word from there */
      int k = __builtin_ctzll(h) >> 3;
      i += k;
      w += k;
      do {
        CK__CASE_NON_ASCII_STEP();
      } while (i < n && u[i] >= 0x80);
    }
    if (i < n) { /* 1-7 bytes left */
      int64_t r = n - i;
      uint64_t x = ck__load_short(s + i, r), h = x & CK__HI_BITS;
      x ^= ck__in_range(x, lo, hi) >> 2;
      if (h == 0) {
        ck__store_short(w, x, r);
        w += r;
        break;
      }
      int k = __builtin_ctzll(h) >> 3;
      if (k > 0) {
        ck__store_short(w, x, k);
        i += k;
        w += k;
      }
    }
    /* the non-ASCII code points of the last 1-7 bytes, up to the next
     * ASCII byte */
    while (i < n && u[i] >= 0x80) {
      CK__CASE_NON_ASCII_STEP();
    }
  }
  return ck__result_done(o, b, e, w - b, out);
}
#endif

/*
 * One pass over the text: 8 bytes at a time while they are ASCII (mapped
 * and stored as a word, no separate is-ASCII scan), other code points
 * through their record.  The result is allocated at the input's size; the
 * invariant `room >= n - i` (bytes left in the allocation >= input bytes
 * left) makes every store that writes no more than it reads safe, and a
 * code point whose mapping is longer than its UTF-8 grows the allocation
 * to what the rest can need (ck__ucd_max_growth times the input left), in
 * place when the arena's chunk has room.  Trimmed at the end.
 */
static ck_status ck__case(const char *func, ck__out *o, const char *s, int64_t n,
                          ck__case_op op, ck_string *out) {
  if (n < 0 || (s == NULL && n > 0)) {
    return ck__str_arg(func, s, n);
  }
  if (out == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL output");
  }
#if CK__WORDS
  if (op == CK__LOWER || op == CK__UPPER || op == CK__FOLD) {
    return ck__case_simple(func, o, s, n, op, out);
  }
#endif
  char *b, *e;
  ck_status st = ck__result_begin(o, (uint64_t)n, func, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  const unsigned char *u = (const unsigned char *)s;
  char *w = b;
  bool prev_cased = false; /* title: the character before i is cased */
  int64_t i = 0;
  if (op == CK__LOWER || op == CK__FOLD || op == CK__UPPER) {
    /* the ASCII front in one tight loop (all of an ASCII row) */
    i = op == CK__UPPER ? ck__ascii_flip(s, n, b, 'a', 'z') : ck__ascii_flip(s, n, b, 'A', 'Z');
    w += i;
  }
  while (i < n) {
#if CK__WORDS
    {
      /* 8 bytes, or the last 1-7 as one word (ck__load_short) */
      int64_t r = n - i;
      uint64_t x = r >= 8 ? ck__load64(s + i) : ck__load_short(s + i, r);
      uint64_t hi = x & CK__HI_BITS;
      if (hi == 0) {
        x = ck__ascii_word(x, op, &prev_cased, i == 0);
        if (r >= 8) {
          memcpy(w, &x, 8); /* room >= n - i >= 8 */
          r = 8;
        } else {
          ck__store_short(w, x, r);
        }
        w += r;
        i += r;
        continue;
      }
      int k = __builtin_ctzll(hi) >> 3; /* ASCII bytes before the first other */
      if (k > 0) {
        bool pc = prev_cased;
        x = ck__ascii_word(x, op, &pc, i == 0);
        if (r >= 8) {
          memcpy(w, &x, 8); /* bytes from k on are rewritten next */
        } else {
          ck__store_short(w, x, k);
        }
        if (op == CK__TITLE) {
          unsigned char c = u[i + k - 1] | 0x20;
          prev_cased = c >= 'a' && c <= 'z';
        }
        w += k;
        i += k;
      }
    }
#else
    if (u[i] < 0x80) {
      *w++ = (char)ck__ascii_byte(u[i], op, &prev_cased, i == 0);
      i++;
      continue;
    }
#endif
    /* the non-ASCII code points up to the next ASCII byte: 2-byte ones by
     * one lookup (title, capitalize, swapcase -- lower, upper, casefold
     * have ck__case_simple: the table by op and context, title's state
     * from ck__case2_cased; little-endian only, as the tables' words), 3-byte
     * ones of blocks no mapping changes and holding no cased code point
     * copied; the rest by their record */
    while (i < n && u[i] >= 0x80) {
#if CK__WORDS
      unsigned c0 = u[i];
      if (c0 >= 0xC0 && c0 < 0xE0 && n - i >= 2) {
        unsigned v = ((c0 & 0x1Fu) << 6) | (u[i + 1] & 0x3Fu);
        const uint16_t *t = op == CK__SWAPCASE                    ? ck__case2 + 4 * 2048
                            : (op == CK__TITLE ? !prev_cased : i == 0) ? ck__case2 + 3 * 2048
                                                                       : ck__case2;
        uint16_t m = t[v];
        if (m != 0) {
          memcpy(w, &m, 2); /* b0 | b1 << 8: little-endian (ck__case2) */
          w += 2;
          i += 2;
          prev_cased = (ck__case2_cased[v >> 6] >> (v & 63)) & 1;
          continue;
        }
      } else if (c0 >= 0xE0 && c0 < 0xF0 && n - i >= 3) {
        unsigned blk = ((c0 & 0x0Fu) << 6) | (u[i + 1] & 0x3Fu); /* cp >> 6 */
        if ((ck__case3_inert[blk >> 6] >> (blk & 63)) & 1) {
          memcpy(w, s + i, 3);
          w += 3;
          i += 3;
          prev_cased = false;
          continue;
        }
      }
#endif
      CK__CASE_CP();
      if (st != CK_OK) {
        return st;
      }
    }
  }
  return ck__result_done(o, b, e, w - b, out);
}

CK_API ck_status ck_str_lower(ck_memblock *arena, const char *s, int64_t n, ck_string *out) {
  ck__out o = ck__out_of(arena);
  return ck__case(__func__, &o, s, n, CK__LOWER, out);
}
CK_API ck_status ck_str_upper(ck_memblock *arena, const char *s, int64_t n, ck_string *out) {
  ck__out o = ck__out_of(arena);
  return ck__case(__func__, &o, s, n, CK__UPPER, out);
}
CK_API ck_status ck_str_casefold(ck_memblock *arena, const char *s, int64_t n, ck_string *out) {
  ck__out o = ck__out_of(arena);
  return ck__case(__func__, &o, s, n, CK__FOLD, out);
}
CK_API ck_status ck_str_title(ck_memblock *arena, const char *s, int64_t n, ck_string *out) {
  ck__out o = ck__out_of(arena);
  return ck__case(__func__, &o, s, n, CK__TITLE, out);
}
CK_API ck_status ck_str_capitalize(ck_memblock *arena, const char *s, int64_t n,
                                   ck_string *out) {
  ck__out o = ck__out_of(arena);
  return ck__case(__func__, &o, s, n, CK__CAPITALIZE, out);
}
CK_API ck_status ck_str_swapcase(ck_memblock *arena, const char *s, int64_t n, ck_string *out) {
  ck__out o = ck__out_of(arena);
  return ck__case(__func__, &o, s, n, CK__SWAPCASE, out);
}

/* ---- predicates -------------------------------------------------------------- */

/* The public flags of the code point at u[i] (i < n; *len its bytes):
 * ASCII and 2-byte sequences by one load of ck__flags2, the rest through
 * the records. */
static inline uint32_t ck__flags_at(const unsigned char *u, int64_t i, int64_t n, int *len) {
  unsigned c0 = u[i];
  if (c0 < 0x80) {
    *len = 1;
    return ck__flags2[c0];
  }
  if (c0 >= 0xC0 && c0 < 0xE0 && n - i >= 2) {
    *len = 2;
    return ck__flags2[((c0 & 0x1Fu) << 6) | (u[i + 1] & 0x3Fu)];
  }
  return ck__ucd(ck__decode(u + i, u + n, len))->flags & CK__U_PUBLIC;
}

/* Every code point has one of `mask`'s flags (and there is one). */
static bool ck__all(const char *s, int64_t n, uint32_t mask) {
  if (s == NULL || n <= 0) {
    return false;
  }
  const unsigned char *u = (const unsigned char *)s;
  for (int64_t i = 0; i < n;) {
    int len;
    if (!(ck__flags_at(u, i, n, &len) & mask)) {
      return false;
    }
    i += len;
  }
  return true;
}

CK_API bool ck_str_isdigit(const char *s, int64_t n) { return ck__all(s, n, CK_UNICODE_DIGIT); }
CK_API bool ck_str_isdecimal(const char *s, int64_t n) {
  return ck__all(s, n, CK_UNICODE_DECIMAL);
}
CK_API bool ck_str_isnumeric(const char *s, int64_t n) {
  return ck__all(s, n, CK_UNICODE_NUMERIC);
}
CK_API bool ck_str_isalpha(const char *s, int64_t n) { return ck__all(s, n, CK_UNICODE_ALPHA); }
CK_API bool ck_str_isalnum(const char *s, int64_t n) {
  return ck__all(s, n,
                 CK_UNICODE_ALPHA | CK_UNICODE_DECIMAL | CK_UNICODE_DIGIT | CK_UNICODE_NUMERIC);
}
CK_API bool ck_str_isspace(const char *s, int64_t n) { return ck__all(s, n, CK_UNICODE_SPACE); }
CK_API bool ck_str_isascii(const char *s, int64_t n) { return ck_str_is_ascii(s, n); }
CK_API bool ck_str_isprintable(const char *s, int64_t n) {
  return n == 0 || ck__all(s, n, CK_UNICODE_PRINTABLE);
}

/* islower / isupper: no character of `bad` flags, one of `good`. */
static bool ck__cased_only(const char *s, int64_t n, uint32_t good, uint32_t bad) {
  if (s == NULL || n <= 0) {
    return false;
  }
  const unsigned char *u = (const unsigned char *)s;
  bool cased = false;
  for (int64_t i = 0; i < n;) {
    int len;
    uint32_t f = ck__flags_at(u, i, n, &len);
    if (f & bad) {
      return false;
    }
    cased |= (f & good) != 0;
    i += len;
  }
  return cased;
}

CK_API bool ck_str_islower(const char *s, int64_t n) {
  return ck__cased_only(s, n, CK_UNICODE_LOWER, CK_UNICODE_UPPER | CK_UNICODE_TITLE);
}
CK_API bool ck_str_isupper(const char *s, int64_t n) {
  return ck__cased_only(s, n, CK_UNICODE_UPPER, CK_UNICODE_LOWER | CK_UNICODE_TITLE);
}

CK_API bool ck_str_istitle(const char *s, int64_t n) {
  if (s == NULL || n <= 0) {
    return false;
  }
  const unsigned char *u = (const unsigned char *)s;
  bool cased = false, prev = false;
  for (int64_t i = 0; i < n;) {
    int len;
    uint32_t f = ck__flags_at(u, i, n, &len);
    if (f & (CK_UNICODE_UPPER | CK_UNICODE_TITLE)) {
      if (prev) {
        return false;
      }
      prev = cased = true;
    } else if (f & CK_UNICODE_LOWER) {
      if (!prev) {
        return false;
      }
      prev = cased = true;
    } else {
      prev = false;
    }
    i += len;
  }
  return cased;
}

CK_API bool ck_str_isidentifier(const char *s, int64_t n) {
  if (s == NULL || n <= 0) {
    return false;
  }
  const unsigned char *u = (const unsigned char *)s;
  for (int64_t i = 0; i < n;) {
    int len;
    uint32_t want = i == 0 ? CK_UNICODE_XID_START : CK_UNICODE_XID_CONTINUE;
    if (!(ck__flags_at(u, i, n, &len) & want)) {
      return false;
    }
    i += len;
  }
  return true;
}

CK_API ck_status ck_str_case(ck_str_case_op op, const char *s, int64_t n, ck_string *out) {
  static const ck__case_op ops[] = {CK__LOWER, CK__UPPER,      CK__FOLD,
                                    CK__TITLE, CK__CAPITALIZE, CK__SWAPCASE};
  if ((unsigned)op > CK_STR_SWAPCASE) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown case mapping %d", (int)op);
  }
  ck__out o;
  ck_status st = ck__out_candidate(&o);
  if (st != CK_OK) {
    return st;
  }
  return ck__case(__func__, &o, s, n, ops[op], out);
}
