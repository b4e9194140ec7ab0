/*
 * numtext_internal.h -- numbers as text (numtext.c): the strict parsers
 * behind string -> number assignment and the Python-repr formatting behind
 * number -> string assignment and error messages.  Private; nothing here is
 * ABI.  Everything runs in the "C" locale whatever the process locale.
 */
#ifndef CKERNEL_NUMTEXT_INTERNAL_H
#define CKERNEL_NUMTEXT_INTERNAL_H

#include "core/core_internal.h"

#include <locale.h>

/* Switch the calling thread to the "C" locale; returns the previous one
 * ((locale_t)0 if unchanged), to hand to ck__leave_c_locale. */
locale_t ck__enter_c_locale(void);
void ck__leave_c_locale(locale_t old);

/* ASCII whitespace as Python's str.strip() without arguments sees it. */
bool ck__is_space(char c);

/* The text for messages: at most 64 bytes, non-printable ASCII as \xNN, then
 * "..." if cut. */
void ck__quote_text(const char *b, size_t n, char *out, size_t outsize);

/* [+-]digits in [p, e) -> magnitude; false on anything else; *overflow
 * when the magnitude exceeds UINT64_MAX. */
bool ck__parse_uint(const char *p, const char *e, uint64_t *out, bool *overflow);

/* strtod over [p, p + n) (NUL-free): the whole range must be consumed.
 * 1: parsed, 0: bad text, -1: out of memory (recorded).  *range: the value
 * overflowed to an infinity. */
int ck__parse_double(const char *p, size_t n, double *out, bool *range);

/* Python complex syntax: "(a+bj)", "a+bj", "bj", "a", "j", "1-j".  Returns
 * as ck__parse_double. */
int ck__parse_complex(const char *p, const char *e, double *re, double *im,
                      bool *range);

/* The shortest decimal digits of finite `v` that read back (strtod) as v
 * in builtin float/complex type `t`, chosen as CPython's repr chooses them:
 * digits[0, n) ("0" for zero, no trailing zeros, room for 24), and
 * |v| ~ 0.d1d2...dn * 10^(*decpt).  Caller holds the C locale.  Returns n. */
size_t ck__shortest_digits(int t, double v, char *digits, int *decpt);

/* Python's repr of a float value of builtin float/complex type id `t`
 * (shortest round-trip digits for that type's precision; `dot0` appends
 * ".0" to integral values).  Returns the length (ck__appendf rules). */
size_t ck__format_float_repr(char *out, size_t outsize, int t, double v, bool dot0);

/* Python's repr of the builtin value of type id `id` at `p` ("True", "-3",
 * "0.1", "(1+2j)") into out (>= 96 bytes).  Returns the length. */
size_t ck__format_value(char *out, size_t outsize, int id, const char *p);

#endif /* CKERNEL_NUMTEXT_INTERNAL_H */
