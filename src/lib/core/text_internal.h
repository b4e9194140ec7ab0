/*
 * text_internal.h -- what the text and format() files of core share (not
 * installed; nothing here is ABI): text.c (UTF-8 <-> code units, format() of
 * str), format_spec.c (the format-spec mini-language), format_number.c
 * (format() of ints, bools and floats: the number layout) and float_text.c
 * (a float's digits laid out in fixed, exponent or general notation).
 */
#ifndef CKERNEL_TEXT_INTERNAL_H
#define CKERNEL_TEXT_INTERNAL_H

#include "ckernel/text.h"

#include "core/core_internal.h"

#include <string.h>

/* ---- UTF-8 (inline: the writers' inner loops call them) ------------------- */

/* The UTF-8 length of code point cp. */
static inline size_t ck__cp_len(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/* Write cp as UTF-8 at p; returns the end. */
static inline char *ck__put_cp(char *p, uint32_t cp) {
  if (cp < 0x80) {
    *p++ = (char)cp;
  } else if (cp < 0x800) {
    *p++ = (char)(0xC0 | (cp >> 6));
    *p++ = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *p++ = (char)(0xE0 | (cp >> 12));
    *p++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *p++ = (char)(0x80 | (cp & 0x3F));
  } else {
    *p++ = (char)(0xF0 | (cp >> 18));
    *p++ = (char)(0x80 | ((cp >> 12) & 0x3F));
    *p++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *p++ = (char)(0x80 | (cp & 0x3F));
  }
  return p;
}

/* Write `count` copies of cp at p; returns the end. */
static inline char *ck__fill(char *p, uint32_t cp, size_t count) {
  if (cp < 0x80) {
    memset(p, (int)cp, count);
    return p + count;
  }
  for (size_t i = 0; i < count; i++) {
    p = ck__put_cp(p, cp);
  }
  return p;
}

/* The code point at p (< e) of strict UTF-8, or -1; *next past it. */
static inline int32_t ck__utf8_next(const unsigned char *p, const unsigned char *e,
                                    const unsigned char **next) {
  unsigned b0 = p[0];
  if (b0 < 0x80) {
    *next = p + 1;
    return (int32_t)b0;
  }
  int n;
  uint32_t cp, lo;
  if (b0 >= 0xC2 && b0 < 0xE0) {
    n = 1, cp = b0 & 0x1F, lo = 0x80;
  } else if (b0 >= 0xE0 && b0 < 0xF0) {
    n = 2, cp = b0 & 0x0F, lo = 0x800;
  } else if (b0 >= 0xF0 && b0 < 0xF5) {
    n = 3, cp = b0 & 0x07, lo = 0x10000;
  } else {
    return -1;
  }
  if (e - p <= n) {
    return -1;
  }
  for (int k = 1; k <= n; k++) {
    if ((p[k] & 0xC0) != 0x80) {
      return -1;
    }
    cp = (cp << 6) | (p[k] & 0x3F);
  }
  if (cp < lo || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return -1;
  }
  *next = p + n + 1;
  return (int32_t)cp;
}

/* ---- format_spec.c ----------------------------------------------------------- */

/* CK_OK if `spec` (NULL: none) was parsed for text (`text`) or for number
 * values, else CK_ERR_INVALID_ARGUMENT recorded naming `func`. */
ck_status ck__check_spec(const ck_format_spec *spec, bool text, const char *func);

/* ---- float_text.c ------------------------------------------------------------ */

/* Growable text for a float's body: p is `small` until it grows (then
 * heap, ck__free'd by the owner). */
typedef struct ck__buf {
  char *p;
  size_t n, cap;
  char small[128];
} ck__buf;

/* Room for `extra` more bytes; false: no memory (recorded). */
bool ck__buf_reserve(ck__buf *b, size_t extra);

/* CPython's PyOS_double_to_string of finite or not v, format code e, f, g
 * or r (upper: 'E', 'F', 'G'), into b: precision, alternate form (`alt`),
 * ".0" added to integral values (`add_dot0`), negative zero as zero
 * (`no_neg0`); t: the float type whose shortest digits 'r' takes.  false:
 * no memory (recorded). */
bool ck__double_text(ck__buf *b, double v, char code, int precision, bool upper, bool alt,
                     bool add_dot0, bool no_neg0, int t);

#endif /* CKERNEL_TEXT_INTERNAL_H */
