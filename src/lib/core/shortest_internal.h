/*
 * shortest_internal.h -- the shortest round-trip decimal of a float64
 * (shortest.c, the Ryu algorithm) and the other pieces of
 * ckernel/format_view.h the host's text code calls (shortest.c instantiates
 * the header for C11).  Private; nothing here is ABI.
 */
#ifndef CKERNEL_SHORTEST_INTERNAL_H
#define CKERNEL_SHORTEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The IEEE-754 binary64 `bits` of a finite nonzero value v (the sign bit is
 * ignored) -> the digits d and *exp10 with |v| read back from d * 10^*exp10
 * exactly, d as short as possible and, among the shortest, nearest |v|
 * (an exact tie to even) -- CPython's repr digits.  d may end in zeros. */
uint64_t ck__shortest_f64(uint64_t bits, int32_t *exp10);

/* |v|'s exact digits rounded half to even, CPython's dtoa mode 3
 * (format(|v|, '.{ndigits}f')) or 2 (`ndigits` significant: 'e', 'g'), with
 * no trailing zeros ("0" for a value that rounds to zero) into
 * digits[0, *n) (40 bytes at least) and the point *decpt (|v| ~
 * 0.digits * 10^decpt), for finite |v| < 2^64 when the last digit is at
 * most 19 places after the point (and, mode 2, |v| >= 10^-19):
 * format_view.h's ck_fv_fixed_digits / ck_fv_sig_digits, integer
 * arithmetic only.  false (nothing written) otherwise. */
bool ck__fixed_digits(double v, int mode, int ndigits, char *digits, size_t *n, int *decpt);

/* The decimal digits of m into digits[0, n) without trailing zeros (at
 * least one digit; no terminator); returns n, *ndig: all of m's digits
 * (format_view.h's ck_fv_u64_digits).  digits holds 20 bytes at least. */
int ck__u64_digits(uint64_t m, char *digits, int *ndig);

/* Characters the grouped digits take: CPython's InsertThousandsGrouping,
 * groups of `g` (0: no grouping) from the right, separators included,
 * zero-padded up to min_width (ck_fv_grouped_len). */
size_t ck__grouped_len(size_t n_digits, int64_t min_width, int g);

/* Write those grouped digits (digits[0, n_digits), 'a'-'f' upper-cased when
 * `upper`, separator sepc) right to left into out[0, len), len from
 * ck__grouped_len (ck_fv_grouped). */
void ck__write_grouped(char *out, size_t len, const char *digits, size_t n_digits,
                       int64_t min_width, int g, char sepc, bool upper);

/* format()'s presentation of a float for a spec's type and precision: the
 * code 'e', 'f', 'g' or 'r', the precision, upper case, ".0" added, '%' (v
 * to be multiplied by 100) -- format_view.h's ck_fv_float_code. */
char ck__float_code(char type, int64_t spec_precision, bool empty, int *precision, bool *upper,
                    bool *add_dot0, bool *pct);

#endif /* CKERNEL_SHORTEST_INTERNAL_H */
