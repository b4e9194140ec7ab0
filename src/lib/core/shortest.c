/*
 * shortest.c -- the shortest round-trip decimal digits of a float64 (the
 * Ryu algorithm, Adams 2018): among the decimals that read back as v, the
 * shortest, and of those the one nearest v (ties to an even last digit),
 * the choice CPython's repr makes (dtoa mode 0).  Integer arithmetic only:
 * no locale, no strtod, no floating-point flags.  The algorithm is
 * ckernel/format_view.h's ck_fv_shortest, the one text device programs
 * compile too, instantiated here for C11 (core/format_view_internal.h); the powers of five
 * come from tools/gen_pow5_table.py (pow5_table.inc).  The header's pieces that
 * text.c and numtext.c share with it (digit text, grouped digits, a float's
 * presentation type) are exported from here too, so each rule has one
 * implementation, and so is the fast exact path of fixed-precision digits
 * ('f' and '%', 'e' and 'g': up to 19 digits after the point of values
 * below 2^64).
 */
#include "core/shortest_internal.h"

#include <string.h>

#include "core/format_view_internal.h"

uint64_t ck__shortest_f64(uint64_t bits, int32_t *exp10) {
  int e10;
  uint64_t m = ck_fv_shortest(bits, &e10);
  *exp10 = (int32_t)e10;
  return m;
}

bool ck__fixed_digits(double v, int mode, int ndigits, char *digits, size_t *n, int *decpt) {
  int64_t k, dp;
  unsigned char *d = (unsigned char *)digits;
  if (!(mode == 3 ? ck_fv_fixed_digits(ck__bits(v), ndigits, d, &k, &dp)
                  : ck_fv_sig_digits(ck__bits(v), ndigits, d, &k, &dp))) {
    return false;
  }
  *n = (size_t)k;
  *decpt = (int)dp;
  return true;
}

int ck__u64_digits(uint64_t m, char *digits, int *ndig) {
  return ck_fv_u64_digits(m, (unsigned char *)digits, ndig);
}

size_t ck__grouped_len(size_t n_digits, int64_t min_width, int g) {
  return (size_t)ck_fv_grouped_len((int64_t)n_digits, min_width, g);
}

void ck__write_grouped(char *out, size_t len, const char *digits, size_t n_digits,
                       int64_t min_width, int g, char sepc, bool upper) {
  ck_fv_num x;
  memset(&x, 0, sizeof x);
  x.d = (const unsigned char *)digits;
  x.nd = (int64_t)n_digits;
  x.int_len = (int64_t)n_digits;
  x.upper = upper;
  ck__fv_sink k = {(unsigned char *)out, 0, 1};
  ck_fv_grouped(&k, &x, (int64_t)len, min_width, g, (unsigned char)sepc);
}

char ck__float_code(char type, int64_t spec_precision, bool empty, int *precision, bool *upper,
                    bool *add_dot0, bool *pct) {
  return ck_fv_float_code(type, spec_precision, empty, precision, upper, add_dot0, pct);
}
