/*
 * ckernel/utf8.h -- Python's str methods over UTF-8 views.
 *
 * A string is a view: `(const char *s, int64_t n)`, n bytes of UTF-8 (not
 * NUL-terminated, NULs allowed).  Every function here works on views; none
 * keeps a pointer after it returns.  Results come back in one of three ways:
 *
 *   - a value (a length, an index, a bool, a hash), for what cannot fail;
 *   - a view into an argument: `ck_str_span {offset, length}` in BYTES from
 *     the start of the string argument (split, partition, strip,
 *     removeprefix, slices of step 1 ...): nothing is copied or allocated;
 *   - new text written through the pod allocator (pod_allocator.h) into the
 *     arena `arena` (a CK_MEMBLOCK_POD or CK_MEMBLOCK_ZEROINIT block) as a
 *     `ck_string {begin, end}` (types.h: the data of a string element, so a
 *     kernel stores it as is into a string array whose arrmeta references
 *     that arena).  One allocation per result, trimmed to its size (the
 *     result is the arena's latest allocation, so a caller may still resize
 *     it).  An empty result is {p, p} with p non-NULL.  Arrays of spans
 *     (split, splitlines) are allocated the same way, 8-byte aligned.
 *
 * Indices, lengths and slice bounds given or returned as code point counts
 * follow Python's rules: negative indices count from the end, out-of-range
 * bounds of find/count/startswith/slices are clamped (ADJUST_INDICES,
 * PySlice_AdjustIndices).  A Python `None` is passed as: start 0 and end
 * INT64_MAX (find, count, startswith ...), maxsplit/count -1; the bounds of
 * a slice as CK_STR_NONE (INT64_MIN).  Python integers beyond int64 are
 * passed clamped to [-INT64_MAX, INT64_MAX] (slice bounds: INT64_MIN is
 * None), which gives Python's result (as PySlice_Unpack).
 *
 * Input: the text of every view must be valid UTF-8 (what strings of this
 * library always hold; ck_utf8_check checks foreign bytes, with Python's
 * decode error).  On invalid UTF-8 the functions never read or write outside
 * their views, but their results are unspecified.  Text is never
 * normalised: equality is equality of code point sequences, which for valid
 * UTF-8 is equality of bytes, and code point order is byte order.
 *
 * Cost: ASCII text is handled a 64-bit word at a time where it matters
 * (validation, length, is-ASCII, case mapping, predicates); indexing by code
 * point is byte indexing when the text is ASCII (one word-at-a-time scan
 * tells, or ck_str_is_ascii's answer is passed where a function takes
 * `ascii`: 1 yes, 0 no, -1 unknown).  Substring search is Horspool's
 * algorithm (a 256-entry shift table, memchr for one-byte needles): linear
 * in practice, O(n*m) on adversarial periodic needles.
 *
 * Case mapping and the character predicates follow the Unicode Character
 * Database of the Python the tables were generated from
 * (tools/gen_unicode_tables.py -> src/lib/strings/unicode_tables.c;
 * CK_UNICODE_VERSION), with Python's full mappings and special casing
 * ("ß".upper() == "SS", "İ".lower(), the final sigma of lower/capitalize/
 * swapcase/title).
 *
 * Host independence: the core paths call no malloc, stdio or locale (the
 * arena allocator and the error message are the only host calls; float
 * parsing uses the C library's strtod in the "C" locale), so the same code
 * can be compiled for device programs with those two replaced.
 *
 * Errors (status + ck_last_error message, Python's wording where Python
 * raises): CK_ERR_INVALID_ARGUMENT (NULL view with n > 0, negative n, NULL
 * output), CK_ERR_VALUE (ValueError: empty separator, substring not found,
 * zero slice step, invalid literal for int()/float(), invalid UTF-8,
 * surrogates), CK_ERR_INDEX (IndexError: string index out of range),
 * CK_ERR_TYPE (TypeError: ord() of a string that is not one character,
 * a fill character that is not one character), CK_ERR_OVERFLOW (a result
 * beyond PTRDIFF_MAX bytes; int() beyond int64), CK_ERR_NO_MEMORY and the
 * arena's own errors (from the pod allocator).
 */
#ifndef CKERNEL_UTF8_H
#define CKERNEL_UTF8_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/memblock.h"
#include "ckernel/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A view into a string argument: `length` bytes from byte `offset`. */
typedef struct ck_str_span {
  int64_t offset;
  int64_t length;
} ck_str_span;

/* A slice bound that was None (s[::-1] is start = stop = CK_STR_NONE);
 * the same value as array.h's CK_SLICE_NONE on 64-bit targets. */
#define CK_STR_NONE INT64_MIN

/* ---- decoding, validation, code points ---------------------------------- */

/* Check n bytes strictly as Python's bytes.decode("utf-8") does (no
 * overlong forms, surrogates, values above U+10FFFF, truncated sequences).
 * On success *out_length (may be NULL) receives the number of code points.
 * CK_ERR_VALUE otherwise, with Python's message ("'utf-8' codec can't
 * decode byte 0xff in position 3: invalid start byte"). */
CK_API ck_status ck_utf8_check(const char *s, int64_t n, int64_t *out_length);

/* The code point starting at byte *pos (< n) of valid UTF-8; *pos moves past
 * it.  Returns -1 (and leaves *pos) at the end of the view or on a byte that
 * does not start a valid sequence. */
CK_API int32_t ck_utf8_next(const char *s, int64_t n, int64_t *pos);

/* The code point ending at byte *pos (> 0); *pos moves to its start; -1 at
 * the start of the view or on invalid text. */
CK_API int32_t ck_utf8_prev(const char *s, int64_t n, int64_t *pos);

/* Encode code point cp into out[0..4): returns its length 1..4, or 0 for a
 * surrogate or a value above U+10FFFF (nothing written). */
CK_API int ck_utf8_encode(uint32_t cp, char *out);

/* True when every byte is below 0x80 (a word at a time). */
CK_API bool ck_str_is_ascii(const char *s, int64_t n);

/* len(s): the number of code points (bytes that do not continue a
 * sequence, counted a word at a time). */
CK_API int64_t ck_str_length(const char *s, int64_t n);

/* The byte offset of code point `index` (0 <= index <= len(s); past the end
 * gives n).  `ascii` as above. */
CK_API int64_t ck_str_byte_offset(const char *s, int64_t n, int64_t index, int ascii);

/* The code point index of byte offset `offset` (0 <= offset <= n, at the
 * start of a code point). */
CK_API int64_t ck_str_cp_index(const char *s, int64_t n, int64_t offset, int ascii);

/* ---- indexing, slicing ----------------------------------------------------- */

/* s[index] as a span of one code point; CK_ERR_INDEX "string index out of
 * range". */
CK_API ck_status ck_str_getitem(const char *s, int64_t n, int64_t index, ck_str_span *out);

/* PySlice_Unpack + PySlice_AdjustIndices over a sequence of `length`:
 * start/stop may be CK_STR_NONE; on return they are the first index and
 * the stop of range(start, stop, step), and *out_count the number of items.
 * CK_ERR_VALUE "slice step cannot be zero". */
CK_API ck_status ck_slice_indices(int64_t length, int64_t *start, int64_t *stop,
                                  int64_t step, int64_t *out_count);

/* s[start:stop:step] (bounds as ck_slice_indices).  Step 1: a view into s
 * (out points into s, nothing is allocated, `arena` may be NULL); any other
 * step: the code points copied into `arena`. */
CK_API ck_status ck_str_slice(ck_memblock *arena, const char *s, int64_t n, int64_t start,
                              int64_t stop, int64_t step, ck_string *out);

/* ---- comparison, hashing -------------------------------------------------- */

/* <0, 0, >0 as a is before, equal to, after b in code point order. */
CK_API int ck_str_compare(const char *a, int64_t na, const char *b, int64_t nb);
CK_API bool ck_str_equal(const char *a, int64_t na, const char *b, int64_t nb);

/* A 64-bit hash of the text: equal strings hash equal (it reads the bytes,
 * which equal strings share).  Fixed (unseeded) and not Python's hash(). */
CK_API uint64_t ck_str_hash(const char *s, int64_t n);

/* ---- searching ------------------------------------------------------------- */

/* s.find(sub, start, end), s.rfind(...): the code point index or -1. */
CK_API int64_t ck_str_find(const char *s, int64_t n, const char *sub, int64_t m,
                           int64_t start, int64_t end);
CK_API int64_t ck_str_rfind(const char *s, int64_t n, const char *sub, int64_t m,
                            int64_t start, int64_t end);
/* s.index / s.rindex: as find / rfind, CK_ERR_VALUE "substring not found". */
CK_API ck_status ck_str_index(const char *s, int64_t n, const char *sub, int64_t m,
                              int64_t start, int64_t end, int64_t *out);
CK_API ck_status ck_str_rindex(const char *s, int64_t n, const char *sub, int64_t m,
                               int64_t start, int64_t end, int64_t *out);
/* s.count(sub, start, end): non-overlapping occurrences. */
CK_API int64_t ck_str_count(const char *s, int64_t n, const char *sub, int64_t m,
                            int64_t start, int64_t end);
/* sub in s */
CK_API bool ck_str_contains(const char *s, int64_t n, const char *sub, int64_t m);
/* s.startswith(prefix, start, end), s.endswith(suffix, start, end); a tuple
 * is any() of the calls. */
CK_API bool ck_str_startswith(const char *s, int64_t n, const char *prefix, int64_t m,
                              int64_t start, int64_t end);
CK_API bool ck_str_endswith(const char *s, int64_t n, const char *suffix, int64_t m,
                            int64_t start, int64_t end);

/* Byte-level search, for callers that work in byte offsets: the offset of
 * the first (last) occurrence of sub in s[from, to) or -1. */
CK_API int64_t ck_str_find_bytes(const char *s, int64_t from, int64_t to, const char *sub,
                                 int64_t m);
CK_API int64_t ck_str_rfind_bytes(const char *s, int64_t from, int64_t to, const char *sub,
                                  int64_t m);

/* ---- splitting, stripping (views into s) ------------------------------------ */

/* s.split(sep, maxsplit), s.rsplit(sep, maxsplit): `sep` NULL splits on
 * runs of whitespace (str.isspace), dropping empty pieces; otherwise on the
 * m > 0 bytes of sep (CK_ERR_VALUE "empty separator" for m == 0).
 * maxsplit < 0: no limit.  The pieces, in order (for rsplit too), are
 * written as an array of *out_count spans allocated in `arena` (*out_spans;
 * 8-byte aligned; nothing is allocated for zero pieces, *out_spans is then
 * NULL). */
CK_API ck_status ck_str_split(ck_memblock *arena, const char *s, int64_t n, const char *sep,
                              int64_t m, int64_t maxsplit, ck_str_span **out_spans,
                              int64_t *out_count);
CK_API ck_status ck_str_rsplit(ck_memblock *arena, const char *s, int64_t n, const char *sep,
                               int64_t m, int64_t maxsplit, ck_str_span **out_spans,
                               int64_t *out_count);

/* s.split(sep, maxsplit) without a span array (arguments as ck_str_split;
 * nothing is allocated):
 *   - ck_str_split_count: len(s.split(sep, maxsplit)) (0 for a bad view or
 *     an empty separator);
 *   - ck_str_split_next: the next piece into *out, or false when there is
 *     none; `state` starts as {0, maxsplit < 0 ? INT64_MAX : maxsplit} and
 *     is advanced (the pieces are split's, in order);
 *   - ck_str_split_item: piece `index` (negative counts from the end), or
 *     CK_ERR_INDEX "list index out of range"; it steps from the start. */
typedef struct ck_str_split_state {
  int64_t pos;  /* byte where the scan goes on; > n when done */
  int64_t left; /* splits still allowed */
} ck_str_split_state;
CK_API int64_t ck_str_split_count(const char *s, int64_t n, const char *sep, int64_t m,
                                  int64_t maxsplit);
CK_API bool ck_str_split_next(const char *s, int64_t n, const char *sep, int64_t m,
                              ck_str_split_state *state, ck_str_span *out);
CK_API ck_status ck_str_split_item(const char *s, int64_t n, const char *sep, int64_t m,
                                   int64_t maxsplit, int64_t index, ck_str_span *out);

/* s.splitlines(keepends): lines end at \n, \r, \r\n, \v, \f, \x1c, \x1d,
 * \x1e, \x85, \u2028, \u2029 (str.splitlines); spans as split's. */
CK_API ck_status ck_str_splitlines(ck_memblock *arena, const char *s, int64_t n,
                                   bool keepends, ck_str_span **out_spans,
                                   int64_t *out_count);

/* s.partition(sep), s.rpartition(sep): out[0..3) are (head, sep, tail);
 * when sep does not occur, (s, "", "") and ("", "", s).  CK_ERR_VALUE
 * "empty separator". */
CK_API ck_status ck_str_partition(const char *s, int64_t n, const char *sep, int64_t m,
                                  ck_str_span *out);
CK_API ck_status ck_str_rpartition(const char *s, int64_t n, const char *sep, int64_t m,
                                   ck_str_span *out);

/* s.strip(chars) / lstrip / rstrip: `which` is CK_STRIP_LEFT, CK_STRIP_RIGHT
 * or CK_STRIP_BOTH; `chars` NULL strips whitespace (str.isspace), otherwise
 * the code points of the nchars bytes of chars. */
enum { CK_STRIP_LEFT = 1, CK_STRIP_RIGHT = 2, CK_STRIP_BOTH = 3 };
CK_API ck_status ck_str_strip(const char *s, int64_t n, const char *chars, int64_t nchars,
                              int which, ck_str_span *out);

/* s.removeprefix(prefix), s.removesuffix(suffix). */
CK_API ck_str_span ck_str_removeprefix(const char *s, int64_t n, const char *prefix,
                                       int64_t m);
CK_API ck_str_span ck_str_removesuffix(const char *s, int64_t n, const char *suffix,
                                       int64_t m);

/* ---- building (results in the arena) -------------------------------------- */

/* s.replace(old, new, count): count < 0 replaces all; an empty `old`
 * inserts `new` before every code point and at the end ("".replace("",
 * "A") == "A").  When nothing is replaced, *out is s itself (a view, as
 * CPython returns self; nothing is allocated). */
CK_API ck_status ck_str_replace(ck_memblock *arena, const char *s, int64_t n, const char *old,
                                int64_t nold, const char *new_, int64_t nnew, int64_t count,
                                ck_string *out);

/* sep.join(items): `k` strings given as ck_string {begin, end}, or as spans
 * into one text `base` (e.g. what split returned: " ".join(s.split())). */
CK_API ck_status ck_str_join(ck_memblock *arena, const char *sep, int64_t m,
                             const ck_string *items, int64_t k, ck_string *out);
CK_API ck_status ck_str_join_spans(ck_memblock *arena, const char *sep, int64_t m,
                                   const char *base, const ck_str_span *spans, int64_t k,
                                   ck_string *out);

/* s * count (count <= 0: ""). */
CK_API ck_status ck_str_repeat(ck_memblock *arena, const char *s, int64_t n, int64_t count,
                               ck_string *out);

/* s.zfill(width); s.ljust / rjust / center(width, fill): `fill` must be one
 * code point (CK_ERR_TYPE "The fill character must be exactly one character
 * long"); widths count code points. */
CK_API ck_status ck_str_zfill(ck_memblock *arena, const char *s, int64_t n, int64_t width,
                              ck_string *out);
enum { CK_ALIGN_LEFT = 1, CK_ALIGN_RIGHT = 2, CK_ALIGN_CENTER = 3 };
CK_API ck_status ck_str_pad(ck_memblock *arena, const char *s, int64_t n, int64_t width,
                            const char *fill, int64_t nfill, int align, ck_string *out);

/* s.expandtabs(tabsize). */
CK_API ck_status ck_str_expandtabs(ck_memblock *arena, const char *s, int64_t n,
                                   int64_t tabsize, ck_string *out);

/* ord(s): CK_ERR_TYPE "ord() expected a character, but string of length N
 * found". */
CK_API ck_status ck_str_ord(const char *s, int64_t n, int64_t *out);

/* chr(cp) as UTF-8 in out[0..4), its length in *out_len: CK_ERR_VALUE
 * "chr() arg not in range(0x110000)", and for a surrogate (which Python
 * accepts but UTF-8 cannot hold) "surrogates not allowed". */
CK_API ck_status ck_str_chr(int64_t cp, char *out, int64_t *out_len);

/* ---- Unicode: case mapping, character classes ------------------------------ */

/* The properties of one code point (ck_unicode_flags), from the tables
 * generated from Python's Unicode database. */
enum {
  CK_UNICODE_ALPHA = 1u << 0,          /* str.isalpha                        */
  CK_UNICODE_DECIMAL = 1u << 1,        /* str.isdecimal                      */
  CK_UNICODE_DIGIT = 1u << 2,          /* str.isdigit                        */
  CK_UNICODE_NUMERIC = 1u << 3,        /* str.isnumeric                      */
  CK_UNICODE_SPACE = 1u << 4,          /* str.isspace                        */
  CK_UNICODE_LOWER = 1u << 5,          /* Lowercase                          */
  CK_UNICODE_UPPER = 1u << 6,          /* Uppercase                          */
  CK_UNICODE_TITLE = 1u << 7,          /* category Lt                        */
  CK_UNICODE_CASED = 1u << 8,          /* Cased                              */
  CK_UNICODE_CASE_IGNORABLE = 1u << 9, /* Case_Ignorable                     */
  CK_UNICODE_XID_START = 1u << 10,     /* XID_Start, and "_"                 */
  CK_UNICODE_XID_CONTINUE = 1u << 11,  /* XID_Continue                       */
  CK_UNICODE_LINEBREAK = 1u << 12,     /* a line boundary of str.splitlines  */
  CK_UNICODE_PRINTABLE = 1u << 13      /* str.isprintable (repr escapes)     */
};

/* Which case mapping of a code point. */
typedef enum ck_case_map {
  CK_CASE_LOWER = 0,
  CK_CASE_UPPER = 1,
  CK_CASE_TITLE = 2,
  CK_CASE_FOLD = 3
} ck_case_map;

/* The Unicode version of the tables ("14.0.0"). */
CK_API const char *ck_unicode_version(void);
/* CK_UNICODE_* flags of cp (0 above U+10FFFF). */
CK_API uint32_t ck_unicode_flags(uint32_t cp);
/* The full case mapping of one code point (without context: the final
 * sigma is a rule of the string functions) into out[0..3): the number of
 * code points, 1 to 3. */
CK_API int ck_unicode_case(uint32_t cp, ck_case_map which, uint32_t *out);
/* The CK_UNICODE_* flags of the code points first .. first + count - 1 into
 * out[0 .. count) (caller-owned); an error for a NULL out or a range past
 * U+10FFFF.  Lets a caller copy what it needs of the tables in one call (the
 * device programs' case tables). */
CK_API ck_status ck_unicode_flags_range(uint32_t first, uint32_t count, uint32_t *out);
/* unicodedata.decimal(c, -1), unicodedata.digit(c, -1). */
CK_API int ck_unicode_decimal(uint32_t cp);
CK_API int ck_unicode_digit(uint32_t cp);

/* s.lower(), upper(), casefold(), title(), capitalize(), swapcase(): full
 * mappings, special casing and the final sigma as CPython. */
CK_API ck_status ck_str_lower(ck_memblock *arena, const char *s, int64_t n, ck_string *out);
CK_API ck_status ck_str_upper(ck_memblock *arena, const char *s, int64_t n, ck_string *out);
CK_API ck_status ck_str_casefold(ck_memblock *arena, const char *s, int64_t n, ck_string *out);
CK_API ck_status ck_str_title(ck_memblock *arena, const char *s, int64_t n, ck_string *out);
CK_API ck_status ck_str_capitalize(ck_memblock *arena, const char *s, int64_t n,
                                   ck_string *out);
CK_API ck_status ck_str_swapcase(ck_memblock *arena, const char *s, int64_t n, ck_string *out);

/* The same six, by number, for jitted code: written into the calling
 * thread's current arena (ck_str_arena), or -- the first one of an element
 * while an entry point has set a result arena (ck_str_set_result_arena) and
 * no current arena is set -- straight into the result arena, where
 * ck_str_store_view then keeps it without a copy. */
typedef enum ck_str_case_op {
  CK_STR_LOWER = 0,
  CK_STR_UPPER = 1,
  CK_STR_CASEFOLD = 2,
  CK_STR_TITLE = 3,
  CK_STR_CAPITALIZE = 4,
  CK_STR_SWAPCASE = 5
} ck_str_case_op;
CK_API ck_status ck_str_case(ck_str_case_op op, const char *s, int64_t n, ck_string *out);

/* s.isdigit() ... s.isidentifier(): Python's answers (False for "" except
 * isascii). */
CK_API bool ck_str_isdigit(const char *s, int64_t n);
CK_API bool ck_str_isdecimal(const char *s, int64_t n);
CK_API bool ck_str_isnumeric(const char *s, int64_t n);
CK_API bool ck_str_isalpha(const char *s, int64_t n);
CK_API bool ck_str_isalnum(const char *s, int64_t n);
CK_API bool ck_str_isspace(const char *s, int64_t n);
CK_API bool ck_str_islower(const char *s, int64_t n);
CK_API bool ck_str_isupper(const char *s, int64_t n);
CK_API bool ck_str_istitle(const char *s, int64_t n);
CK_API bool ck_str_isascii(const char *s, int64_t n);
CK_API bool ck_str_isidentifier(const char *s, int64_t n);
CK_API bool ck_str_isprintable(const char *s, int64_t n);

/* ---- numbers, repr ---------------------------------------------------------- */

/* int(s, base): base 0 or 2..36; whitespace (str.isspace) around, a sign,
 * the base's prefix (0x/0o/0b; required with base 0, where leading zeros
 * are refused), single underscores between digits and after a prefix,
 * Unicode decimal digits (unicodedata.decimal).  CK_ERR_VALUE with Python's
 * message ("invalid literal for int() with base 10: 'x'"), CK_ERR_OVERFLOW
 * for a value outside int64 (Python's int has no bound), CK_ERR_VALUE
 * "int() base must be >= 2 and <= 36, or 0". */
CK_API ck_status ck_str_to_int64(const char *s, int64_t n, int base, int64_t *out);

/* float(s): whitespace around, a sign, decimal digits (Unicode decimal
 * digits too) with single underscores between digits, an optional point
 * and exponent, or inf / infinity / nan in any case; correctly rounded
 * (the C library's strtod in the "C" locale; a value too large gives
 * +-inf, as Python).  CK_ERR_VALUE "could not convert string to float:
 * 'x'".  Text longer than 256 bytes with underscores or non-ASCII digits
 * takes a heap temporary (CK_ERR_NO_MEMORY). */
CK_API ck_status ck_str_to_double(const char *s, int64_t n, double *out);

/* repr(s) into the arena: quotes and escapes as Python's (isprintable). */
CK_API ck_status ck_str_repr(ck_memblock *arena, const char *s, int64_t n, ck_string *out);

/* ---- the current string arena (jitted code) ----------------------------- */

/* The arena string methods of jitted code write into, on the calling
 * thread: the one set by ck_str_set_arena, else the thread's scratch arena
 * (made on first use: CK_ERR_NO_MEMORY when it cannot be).  Borrowed: the
 * caller takes no reference. */
CK_API ck_status ck_str_arena(ck_memblock **out);
/* Make `arena` (NULL: the scratch arena) the calling thread's current
 * arena; returns the previous one (NULL when it was the scratch arena).
 * The caller keeps `arena` alive while it is current. */
CK_API ck_memblock *ck_str_set_arena(ck_memblock *arena);
/* Free the calling thread's scratch arena: every view of text written into
 * it dies (a new one is made on next use). */
CK_API void ck_str_scratch_free(void);
/* The same once the scratch arena holds more than 1 MiB of chunks: entry
 * points call it after each element, when no view into the scratch arena
 * is left, so temporaries cost a bounded amount of memory. */
CK_API void ck_str_scratch_reset(void);
/* The calling thread's element counter: an entry point takes its address
 * once per call and adds 1 after each element (a plain store, no call);
 * the next ck_str_arena that returns the scratch arena then does what
 * ck_str_scratch_reset does.  Valid for the life of the thread, used only
 * on it. */
CK_API uint64_t *ck_str_scratch_epoch(void);
/* The result arena: an entry point storing each element's string result
 * into `arena` sets it for its call (NULL: none; ck_str_scratch_free clears
 * it too).  A case mapping (ck_str_case) may then write an element's text
 * straight into it, once per element.  Setting NULL gives the unused end of
 * the open region back (below). */
CK_API void ck_str_set_result_arena(ck_memblock *arena);

/*
 * The result region: how entry points write the result arena.  While a
 * result arena is set, text goes into one allocation of it at a time, the
 * region, whose front is handed out by moving `cur` -- by the C library
 * (a case mapping, replace) and inline by the entry point's store (a
 * returned view copied: bytes at cur, cur moved past them) -- and whose
 * unused end goes back to the arena when the region is closed: when a new
 * one is opened (the old one full) and when the result arena is set to
 * NULL.  The first region of a call is sized by the caller's hint (an entry
 * point passes the bytes of its string arguments, all rows), so a call
 * makes one allocation, not one per element.  Between the hand-outs nothing
 * else may allocate from the arena (the region must stay its latest
 * allocation; otherwise its unused end is simply not given back).
 *
 * Layout (offsets fixed; the generated code reads and writes the fields):
 *     @0  char *cur     next free byte of the region (NULL: none open)
 *     @8  char *lim     its end; cur <= lim
 *     @16 char *made_b  the text this element's first case mapping or
 *     @24 char *made_e  replace wrote into the region (NULL: none); a store
 *                       keeps [made_b, made_e) in place when it is the
 *                       returned view, and clears both (the element is over)
 *     @32 ck_memblock *arena  the arena of the call (borrowed)
 */
typedef struct ck_str_region {
  char *cur;
  char *lim;
  char *made_b;
  char *made_e;
  ck_memblock *arena;
} ck_str_region;

/* Make `arena` the calling thread's result arena for a call (as
 * ck_str_set_result_arena) with `hint` bytes for its first region, and
 * return the thread's region record (valid for the life of the thread, used
 * only on it).  A region an earlier call left open is dropped unseen. */
CK_API ck_str_region *ck_str_result_region(ck_memblock *arena, int64_t hint);

/* Copy the view [b, e) to the front of `region` (ck_str_result_region's;
 * a new region when it has no room) and store it as the string at `dst`
 * (may be unaligned); clears the made text.  What the entry points call
 * when the inline copy does not fit. */
CK_API ck_status ck_str_region_store(ck_str_region *region, const char *b, const char *e,
                                     ck_string *dst);

/* Make room for more than `n` bytes at the front of `region`
 * (ck_str_result_region's): nothing when the open region has it, else a new
 * region (the old one closed: what lies before its cur stays, the element's
 * made text included).  The caller then writes its text at region->cur and
 * moves cur past it.  What the entry points call when a string built in one
 * pass (an f-string, a `+` chain) does not fit the open region. */
CK_API ck_status ck_str_region_reserve(ck_str_region *region, int64_t n);

/* The arena a method making an element's new text writes into: the result
 * arena while this element has made no text there yet (and no current
 * arena is set), else ck_str_arena's.  Borrowed. */
CK_API ck_status ck_str_result_arena(ck_memblock **out);

/* The calling thread's result region when this element's next made text
 * may go into it -- a result arena is set, no current arena is set, the
 * element has made no text there yet: what ck_str_case would write into --
 * else NULL.  For jitted code that writes a made text itself (the ASCII
 * case mappings, numba_ext/_numba/str_case.py): when the open region (cur
 * not NULL) has room, it writes the text at cur, moves cur past it and
 * records it in made_b / made_e, as the library's builders do. */
CK_API ck_str_region *ck_str_made_region(void);

/* Store the view [b, e) as the string at `dst` of an array whose arena is
 * `arena`: in place when it is the text made for this element in the
 * result arena, else copied into `arena` (into its region when it is the
 * result arena; else one allocation).  Ends the element for the result
 * arena (the next ck_str_case may use it). */
CK_API ck_status ck_str_store_view(ck_memblock *arena, const char *b, const char *e,
                                   ck_string *dst);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_UTF8_H */
