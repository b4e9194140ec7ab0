/*
 * strings/strings_internal.h -- what the sources of ckernel/utf8.h share:
 * word-at-a-time helpers, UTF-8 sequence lengths, results written into an
 * arena, the substring searcher and the Unicode character records.
 */
#ifndef CKERNEL_STRINGS_INTERNAL_H
#define CKERNEL_STRINGS_INTERNAL_H

#include "ckernel/utf8.h"
#include "ckernel/pod_allocator.h"

#include <string.h>

#define CK__HI_BITS 0x8080808080808080ULL

static inline uint64_t ck__load64(const char *p) {
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
}

/* Bytes of the sequence a lead byte starts (1 for ASCII and, defensively,
 * for bytes that start nothing). */
static inline int ck__seq_len(unsigned char b) {
  return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

static inline bool ck__is_cont(unsigned char b) { return (b & 0xC0) == 0x80; }

/* Decode the sequence at p (valid UTF-8, p < e); *len receives its length.
 * Truncated sequences decode the bytes present (never read past e). */
static inline uint32_t ck__decode(const unsigned char *p, const unsigned char *e, int *len) {
  unsigned b = p[0];
  if (b < 0x80) {
    *len = 1;
    return b;
  }
  int k = ck__seq_len((unsigned char)b);
  if (k > e - p) {
    k = (int)(e - p);
  }
  uint32_t cp = k == 2 ? (b & 0x1F) : k == 3 ? (b & 0x0F) : (b & 0x07);
  for (int i = 1; i < k; i++) {
    cp = (cp << 6) | (p[i] & 0x3Fu);
  }
  *len = k;
  return cp;
}

/* Write cp (a valid scalar value) at p; returns the bytes written. */
static inline int ck__encode(uint32_t cp, char *p) {
  if (cp < 0x80) {
    p[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    p[0] = (char)(0xC0 | (cp >> 6));
    p[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    p[0] = (char)(0xE0 | (cp >> 12));
    p[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    p[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  p[0] = (char)(0xF0 | (cp >> 18));
  p[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  p[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  p[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

static inline int ck__cp_size(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/* Check a view argument (NULL with n > 0, negative n). */
ck_status ck__str_arg(const char *func, const char *s, int64_t n);
#define CK__CHECK_VIEW(s, n)                                                   \
  do {                                                                         \
    ck_status ck__st_ = ck__str_arg(__func__, (s), (n));                       \
    if (ck__st_ != CK_OK) {                                                    \
      return ck__st_;                                                          \
    }                                                                          \
  } while (0)

/* The calling thread's string state (utf8_arena.c): the current arena, the
 * result arena and its open region, in one thread-local record (one
 * thread-local address lookup per method call).  `r` comes first:
 * ck_str_result_region hands out its address. */
typedef struct ck__tls {
  ck_str_region r;      /* the open region and this element's made text */
  ck_memblock *current; /* ck_str_set_arena's                           */
  ck_memblock *result;  /* the result candidate's arena (NULL: none)    */
  char *rb;             /* the open region's allocation [rb, r.lim)     */
  size_t hint;          /* bytes the next region is sized for           */
} ck__tls;
extern _Thread_local ck__tls ck__t;

/* Close t's open region (its unused end goes back) and open one with room
 * for `need` bytes. */
ck_status ck__region_open(ck__tls *t, size_t need, const char *func);

/* Where a builder writes its result: `arena`, and `t` -- the calling
 * thread's record when `arena` is its result arena, whose region is then
 * written; else NULL. */
typedef struct ck__out {
  ck_memblock *arena;
  ck__tls *t;
} ck__out;

/* Writing into `arena`. */
static inline ck__out ck__out_of(ck_memblock *arena) {
  ck__tls *t = &ck__t;
  ck__out o = {arena, arena != NULL && arena == t->result ? t : NULL};
  return o;
}

/* Writing an element's text that may be its returned value: into the
 * result arena while this element has made no text there yet (an entry
 * point set one, no current arena is set), else into ck_str_arena's. */
static inline ck_status ck__out_candidate(ck__out *o) {
  ck__tls *t = &ck__t;
  if (t->result != NULL && t->r.made_b == NULL && t->current == NULL) {
    o->arena = t->result;
    o->t = t;
    return CK_OK;
  }
  o->t = NULL;
  return ck_str_arena(&o->arena);
}

/* Allocate `cap` bytes (at least; a size overflow is CK_ERR_OVERFLOW) for a
 * result: [*out_b, *out_e), which may be longer than cap (the rest of the
 * result region).  ck__result_grow makes room for `cap` bytes in all,
 * keeping the `used` bytes written (they may move); ck__result_done ends the
 * result at `used` bytes and fills *out (into the result region: the
 * element's made text, utf8_arena.c). */
ck_status ck__result_alloc(ck__out *o, uint64_t cap, const char *func, char **out_b,
                           char **out_e);
static inline ck_status ck__result_begin(ck__out *o, uint64_t cap, const char *func,
                                         char **out_b, char **out_e) {
  ck__tls *t = o->t;
  if (t != NULL && t->r.cur != NULL && (uint64_t)(t->r.lim - t->r.cur) >= cap) {
    *out_b = t->r.cur; /* the rest of the region: room beyond cap */
    *out_e = t->r.lim;
    return CK_OK;
  }
  return ck__result_alloc(o, cap, func, out_b, out_e);
}
ck_status ck__result_grow(ck__out *o, int64_t used, uint64_t cap, const char *func,
                          char **inout_b, char **inout_e);
ck_status ck__result_trim(ck__out *o, char *b, char *e, int64_t used, ck_string *out);
static inline ck_status ck__result_done(ck__out *o, char *b, char *e, int64_t used,
                                        ck_string *out) {
  ck__tls *t = o->t;
  if (t != NULL) {
    /* the front of the region; the store keeps it when it is returned */
    t->r.cur = b + used;
    t->r.made_b = out->begin = b;
    t->r.made_e = out->end = b + used;
    return CK_OK;
  }
  return ck__result_trim(o, b, e, used, out);
}

/* Hold the thread's scratch arena across a caller's loop that runs jitted
 * elements one at a time through their single entry points (each of which
 * ends with ck_str_scratch_free): while held, ck_str_scratch_free ends an
 * element (the arena is bounded as between elements of a strided call)
 * instead of freeing it; the last release frees it.  Calls nest. */
void ck__str_scratch_hold(void);
void ck__str_scratch_release(void);

/* Python's ADJUST_INDICES over a sequence of `len`. */
static inline void ck__adjust_indices(int64_t len, int64_t *start, int64_t *end) {
  if (*end > len) {
    *end = len;
  } else if (*end < 0) {
    *end += len;
    if (*end < 0) {
      *end = 0;
    }
  }
  if (*start < 0) {
    *start += len;
    if (*start < 0) {
      *start = 0;
    }
  }
}

/* A prepared substring search (Horspool). */
typedef struct ck__searcher {
  const char *sub;
  int64_t m;
  bool table; /* shift tables built (long haystacks) */
  uint32_t fwd[256];
  uint32_t bwd[256];
} ck__searcher;

void ck__searcher_init(ck__searcher *sr, const char *sub, int64_t m, int64_t haystack);
int64_t ck__search(const ck__searcher *sr, const char *s, int64_t from, int64_t to);
int64_t ck__rsearch(const ck__searcher *sr, const char *s, int64_t from, int64_t to);

/* str.isspace of one code point (Py_UNICODE_ISSPACE: bidirectional class
 * WS, B or S, or category Zs; checked for every code point by the tests). */
static inline bool ck__u_space(uint32_t cp) {
  if (cp < 0x80) {
    return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  }
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* Line boundaries of str.splitlines (Py_UNICODE_ISLINEBREAK). */
static inline bool ck__u_linebreak(uint32_t cp) {
  return (cp >= 0x0A && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 ||
         cp == 0x2028 || cp == 0x2029;
}

/* A growing array of spans in an arena (the arena's latest allocation). */
typedef struct ck__spans {
  ck_memblock *arena;
  char *b, *e;
  int64_t count, cap;
} ck__spans;

ck_status ck__spans_push(ck__spans *sp, int64_t offset, int64_t length);
ck_status ck__spans_done(ck__spans *sp, bool reverse, ck_str_span **out, int64_t *count);

/* ---- Unicode character records (unicode_tables.c, generated) ---------- */

/* The public CK_UNICODE_* flags, and where a mapping has several code
 * points. */
enum {
  CK__U_EXT_LOWER = 1u << 14,
  CK__U_EXT_UPPER = 1u << 15,
  CK__U_EXT_TITLE = 1u << 16,
  CK__U_EXT_FOLD = 1u << 17,
  CK__U_PUBLIC = (1u << 14) - 1
};

/* One record per distinct combination of properties: the simple mappings
 * as deltas (cp + delta), or, with the CK__U_EXT_* flag, (count << 24) |
 * index into ck__ucd_ext (full mappings of several code points). */
typedef struct ck__ucd_record {
  int32_t lower, upper, title, fold;
  uint32_t flags;
  int8_t decimal; /* unicodedata.decimal, -1: none */
  int8_t digit;   /* unicodedata.digit, -1: none   */
  uint16_t reserved;
} ck__ucd_record;

extern const ck__ucd_record ck__ucd_records[];
extern const uint32_t ck__ucd_ext[];
extern const uint16_t ck__ucd_index1[];
extern const uint16_t ck__ucd_index2[];
extern const int ck__ucd_shift;
extern const int ck__ucd_max_growth;
extern const char ck__ucd_version[];

/* The fast paths of the case mappings (utf8_case.c), generated with the
 * records (host code only; the device programs have their own cut of the
 * records, jit/c_emit/case_map.py): ck__case2[op * 2048 + v] is the UTF-8
 * of the mapping by op (0 lower, 1 upper, 2 casefold, 3 title, 4 swapcase)
 * of the 2-byte sequence of 11-bit value v, as `b0 | b1 << 8`, when that is
 * one 2-byte code point needing no context (0: take the general path); bit
 * (b & 63) of ck__case3_plain[b >> 6] says that every code point of the 64
 * with cp >> 6 == b (U+0800-U+FFFF) is its own lower, upper and casefold
 * mapping, of ck__case3_inert[b >> 6] that each is its own mapping by every
 * method and not cased; bit (v & 63) of ck__case2_cased[v >> 6]: the code
 * point v (U+0080-U+07FF) is cased. */
extern const uint16_t ck__case2[5 * 2048];
extern const uint64_t ck__case3_plain[16];
extern const uint64_t ck__case3_inert[16];
extern const uint64_t ck__case2_cased[32];
/* The public flags of U+0000-U+07FF in one load (the predicates' ASCII and
 * 2-byte code points; host code only). */
extern const uint16_t ck__flags2[0x800];

static inline const ck__ucd_record *ck__ucd(uint32_t cp) {
  if (cp > 0x10FFFF) {
    cp = 0; /* never for valid text; record 0 has no properties */
  }
  uint32_t block = ck__ucd_index1[cp >> ck__ucd_shift];
  uint32_t mask = (1u << ck__ucd_shift) - 1;
  return &ck__ucd_records[ck__ucd_index2[(block << ck__ucd_shift) + (cp & mask)]];
}

#endif /* CKERNEL_STRINGS_INTERNAL_H */
