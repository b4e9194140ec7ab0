/*
 * ckernel/text.h -- text for generated code: Python's str() and format() of
 * numbers and text, written as UTF-8, and UTF-8 <-> code-unit arrays.
 *
 * Jitted functions (ckernels.jit) build a string result in one pass: they
 * measure every piece, make one arena allocation and write the pieces into
 * it.  The ck_format_* functions are those pieces' writers and follow
 * snprintf's contract: `*out_len` receives the full length of the text in
 * bytes, and the bytes are written to out[0, *out_len) only when
 * *out_len <= cap (nothing is written otherwise, and no NUL is ever added).
 * A caller measures with cap 0 (out may then be NULL) and writes into memory
 * of exactly that size, or formats into a small buffer and copies.
 *
 * Text values are arrays of code units of one "kind" (PEP 393, the layout of
 * CPython and Numba strings): 1 (Latin-1), 2 (UCS-2) or 4 (UCS-4) bytes per
 * code point.
 *
 * Format specs are Python 3.11's format-spec mini-language,
 *     [[fill]align][sign][z][#][0][width][grouping][.precision][type]
 * (fill any code point; align < > = ^; sign + - space; grouping , or _;
 * types b c d o x X e E f F g G % for integers, e E f F g G % for floats,
 * s for text), parsed once (ck_format_spec_parse, with Python's error
 * messages) for the kind of value it formats.  Results equal Python's
 * format(value, spec) and str(value):
 *   - integers of any width: exact (INT64_MIN and UINT64_MAX included); the
 *     float types convert the value to double first, as Python does;
 *   - bool: an empty spec (or none) gives "True"/"False", any other spec
 *     formats 0/1 as an integer (Python's bool is an int);
 *   - floats: the digits are correctly rounded from the exact binary value,
 *     as CPython's own dtoa; "f"/"e"/"g"/"%" digits of |v| < 2^64 whose last
 *     digit is at most 19 places after the point come from 64-bit integer
 *     arithmetic (ckernel/format_view.h's ck_fv_fixed_digits and
 *     ck_fv_sig_digits, the code device programs run; no locale, no libc),
 *     the others from the C library's snprintf in the "C" locale (whatever
 *     the process locale); the shortest digits of repr (no type, no
 *     precision) are the shortest that read back as the same value, picked
 *     as CPython's repr does (Ryu for float64);
 *     float32 values without a spec give the shortest float32 digits
 *     (NumPy's str of a float32), with a spec they are formatted as double
 *     (NumPy's float32.__format__).  nan has no sign; 'E', 'F', 'G' write
 *     "INF"/"NAN";
 *   - text: width and alignment count code points; a precision truncates.
 * Type 'n' (locale-dependent) is refused at parse (CK_ERR_NOT_SUPPORTED).
 *
 * Errors: CK_ERR_VALUE (a spec Python refuses for that kind of value; text
 * with surrogate code points, which UTF-8 cannot encode; invalid UTF-8),
 * CK_ERR_OVERFLOW ('c' of a value outside range(0x110000)),
 * CK_ERR_NO_MEMORY (a temporary of a very long float text),
 * CK_ERR_INVALID_ARGUMENT (NULL pointers, a bad kind, a spec parsed for
 * another kind of value).
 */
#ifndef CKERNEL_TEXT_H
#define CKERNEL_TEXT_H

#include "ckernel/config.h"
#include "ckernel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kind of value a spec formats (Python's int, bool, float, str). */
typedef enum ck_format_kind {
  CK_FORMAT_INT = 1,
  CK_FORMAT_BOOL = 2,
  CK_FORMAT_FLOAT = 3,
  CK_FORMAT_TEXT = 4
} ck_format_kind;

/* ck_format_spec.flags */
#define CK_FORMAT_ALT 0x1         /* '#': alternate form                  */
#define CK_FORMAT_NO_NEG_ZERO 0x2 /* 'z': -0 after rounding prints as 0  */
#define CK_FORMAT_EMPTY 0x4       /* the spec was "": str(value)          */

/* A parsed format spec (32 bytes, plain data: generated code embeds it as a
 * constant).  Every field is resolved: `align` is never 0, `type` is 0 only
 * for a float without a presentation type. */
typedef struct ck_format_spec {
  int64_t width;     /* minimum width in code points, -1: none             */
  int64_t precision; /* -1: none                                           */
  uint32_t fill;     /* fill code point (' ' unless given)                 */
  uint8_t kind;      /* the ck_format_kind it was parsed for               */
  char align;        /* '<', '>', '=' or '^'                               */
  char sign;         /* '+', '-', ' ' or 0                                 */
  char grouping;     /* ',', '_' or 0                                      */
  char type;         /* presentation type, or 0                            */
  uint8_t flags;     /* CK_FORMAT_*                                        */
  uint8_t reserved[6];
} ck_format_spec;

/* Parse `len` bytes of UTF-8 `spec` for values of `kind`. */
CK_API ck_status ck_format_spec_parse(const char *spec, size_t len, ck_format_kind kind,
                                      ck_format_spec *out);

/* format(v, spec) -- or str(v) when spec is NULL -- as UTF-8 (see above for
 * the out/cap/out_len contract). */
CK_API ck_status ck_format_int64(char *out, size_t cap, const ck_format_spec *spec,
                                 int64_t v, size_t *out_len);
CK_API ck_status ck_format_uint64(char *out, size_t cap, const ck_format_spec *spec,
                                  uint64_t v, size_t *out_len);
CK_API ck_status ck_format_bool(char *out, size_t cap, const ck_format_spec *spec,
                                bool v, size_t *out_len);
CK_API ck_status ck_format_float64(char *out, size_t cap, const ck_format_spec *spec,
                                   double v, size_t *out_len);
CK_API ck_status ck_format_float32(char *out, size_t cap, const ck_format_spec *spec,
                                   float v, size_t *out_len);

/* format(s, spec) -- or s itself when spec is NULL -- of the text of
 * `length` code units of `kind` (1, 2, 4) at `data`, as UTF-8. */
CK_API ck_status ck_format_text(char *out, size_t cap, const ck_format_spec *spec,
                                const void *data, int kind, size_t length,
                                size_t *out_len);

/* Check `n` bytes of UTF-8 strictly (no overlong forms, surrogates or
 * values above U+10FFFF; CK_ERR_VALUE naming the byte offset otherwise) and
 * count them: *out_length code points, the largest *out_maxchar (0 for
 * empty text). */
CK_API ck_status ck_utf8_measure(const char *bytes, size_t n, size_t *out_length,
                                 uint32_t *out_maxchar);

/* Decode `n` bytes of UTF-8 that ck_utf8_measure accepted into code units
 * of `kind` (1, 2, 4; wide enough for its largest code point) at `out`
 * (room for its length; no terminator is written). */
CK_API ck_status ck_utf8_decode(const char *bytes, size_t n, void *out, int kind);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_TEXT_H */
