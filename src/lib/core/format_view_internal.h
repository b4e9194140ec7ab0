/*
 * format_view_internal.h -- ckernel/format_view.h (and the format_digits.h
 * it calls) instantiated for C11: the
 * includer's definitions the header asks for (static inline functions, the
 * <stdint.h> types, the sink ck__fv_sink, the IEEE bits by memcpy, the high
 * half of a 64 x 64-bit product by unsigned __int128) and the powers of five
 * of core/pow5_table.inc.  Included once per translation unit that runs the
 * header on the host: core/shortest.c (the library's instance) and
 * tests/c/core/test_format_view.c, test_fixed_digits.c.  Private; nothing
 * here is ABI.
 */
#ifndef CKERNEL_FORMAT_VIEW_INTERNAL_H
#define CKERNEL_FORMAT_VIEW_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/pow5_table.inc"

__extension__ typedef unsigned __int128 ck__u128;

static inline uint64_t ck__mulhi(uint64_t a, uint64_t b) {
  return (uint64_t)(((ck__u128)a * b) >> 64);
}

static inline uint64_t ck__bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* format_view.h's sink: p (bytes), n (bytes so far), w (nonzero: write) */
typedef struct ck__fv_sink {
  unsigned char *p;
  int64_t n;
  int w;
} ck__fv_sink;

#define CK_FV_FN static inline
#define CK_FV_I64 int64_t
#define CK_FV_U64 uint64_t
#define CK_FV_U32 uint32_t
#define CK_FV_U8 unsigned char
#define CK_FV_SINK ck__fv_sink
#define CK_FV_BITS(d) ck__bits(d)
#define CK_FV_MULHI(a, b) ck__mulhi((a), (b))
#include "ckernel/format_digits.h"
#include "ckernel/format_view.h"

#endif /* CKERNEL_FORMAT_VIEW_INTERNAL_H */
