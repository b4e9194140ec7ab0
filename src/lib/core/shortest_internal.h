/*
 * shortest_internal.h -- the shortest round-trip decimal of a float64
 * (shortest.c, the Ryu algorithm).  Private; nothing here is ABI.
 */
#ifndef CKERNEL_SHORTEST_INTERNAL_H
#define CKERNEL_SHORTEST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/* The IEEE-754 binary64 `bits` of a finite nonzero value v (the sign bit is
 * ignored) -> the digits d and *exp10 with |v| read back from d * 10^*exp10
 * exactly, d as short as possible and, among the shortest, nearest |v|
 * (an exact tie to even) -- CPython's repr digits.  d may end in zeros. */
uint64_t ck__shortest_f64(uint64_t bits, int32_t *exp10);

#endif /* CKERNEL_SHORTEST_INTERNAL_H */
