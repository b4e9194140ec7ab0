/*
 * ckernel/validity.h -- validity bitmaps of option types `?T`.
 *
 * Bit order is Arrow's: bit i of a bitmap is (bits[i / 8] >> (i % 8)) & 1,
 * least significant bit first, 1 = valid, 0 = null.  A bitmap is addressed
 * with a bit offset (any value >= 0, so a sliced Arrow array at bit offset
 * 0..7 of a byte needs no copy).
 *
 * Where a bitmap lives: the arrmeta of each option type holds a
 * ck_option_arrmeta (layout and the address-keyed bit numbering in
 * ckernel/types.h): the bitmap pointer, the memblock that owns it, the bit
 * offset, and the data address / step / length that map a slot's data
 * address to its bit.  `bits == NULL` means no nulls.
 *
 * Ownership:
 *   - ck_array_empty and ck_array_empty_uninit give every option slot set
 *     they can describe (options under fixed/strided dims, struct fields of
 *     those, options nested in options' values) a bitmap of their own, all
 *     valid: a fixed-size POD memblock referenced by the arrmeta, released
 *     with the last array or view that refers to it.  Options under a var
 *     dim or a pointer have no bitmap (every slot valid) until one is
 *     attached with ck_option_attach_bitmap, because their elements are not
 *     allocated yet when the array is made.
 *   - ck_option_attach_bitmap and ck_array_view_external_option take a
 *     NEW reference to the owner block given (the caller keeps its own):
 *     wrap a foreign (Arrow) validity buffer in ck_external_memblock_new so
 *     that its release callback runs when the last array drops it.
 *   - The bitmap functions below (ck_bitmap_*) borrow the memory they are
 *     given for the duration of the call.
 *
 * Errors: every checked function returns a ck_status with a message
 * (CK_ERR_TYPE when the array is not an option where one is needed,
 * CK_ERR_INDEX for an index, or a data address the bitmap does not cover,
 * CK_ERR_INVALID_STATE for writing a read-only array or an option slot that
 * has no bitmap to write a null into).
 *
 * Thread safety: reading is safe from many threads.  Setting bits is a
 * read-modify-write of a byte: writers of neighbouring slots (the same byte)
 * must not race, as for Arrow builders.
 */
#ifndef CKERNEL_VALIDITY_H
#define CKERNEL_VALIDITY_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/memblock.h"
#include "ckernel/types.h"
#include "ckernel/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bitmaps (no checks: the caller owns the bounds) -------------------- */

#ifndef CK_CFFI_CDEF
/* Bit i (valid = true). */
static inline bool ck_bitmap_get(const uint8_t *bits, int64_t i) {
  return ((bits[i >> 3] >> (i & 7)) & 1u) != 0;
}
/* Set bit i to `valid`. */
static inline void ck_bitmap_set(uint8_t *bits, int64_t i, bool valid) {
  uint8_t mask = (uint8_t)(1u << (i & 7));
  bits[i >> 3] = valid ? (uint8_t)(bits[i >> 3] | mask) : (uint8_t)(bits[i >> 3] & ~mask);
}
#endif

/* Number of set bits (valid slots) in bits [offset, offset + length): 64 bits
 * at a time, reading only the bytes that hold those bits.  0 for length
 * <= 0. */
CK_API int64_t ck_bitmap_count_set(const uint8_t *bits, int64_t offset, int64_t length);

/* Bits [offset, offset + n) (1 <= n <= 64) as the low bits of a word (bit
 * offset + i is bit i of the word, the higher bits 0), reading only the
 * bytes that hold them: a bitmap walked 64 slots at a time. */
CK_API uint64_t ck_bitmap_word(const uint8_t *bits, int64_t offset, int n);

/* Index (relative to offset) of the first clear bit (null) in [offset,
 * offset + length), or -1 when there is none; 64 bits at a time. */
CK_API int64_t ck_bitmap_find_unset(const uint8_t *bits, int64_t offset, int64_t length);

/* Set bits [offset, offset + length) to `valid` (whole bytes at once). */
CK_API void ck_bitmap_set_range(uint8_t *bits, int64_t offset, int64_t length, bool valid);

/* dst[dst_off + i] = a[a_off + i] & b[b_off + i] for i < length (the
 * validity of an elementwise result).  64 bits at a time when the three
 * offsets are equal modulo 8, a byte at a time (shifted) otherwise.  `b` may
 * be NULL (all valid): then dst = a.  dst may be a or b when the offsets are
 * equal. */
CK_API void ck_bitmap_and(uint8_t *dst, int64_t dst_off, const uint8_t *a, int64_t a_off,
                          const uint8_t *b, int64_t b_off, int64_t length);

/* ---- one option slot, by its data address --------------------------------- */

/* The bit number of the slot whose data is at `data` (see ck_option_arrmeta
 * in types.h); -1 in *out_bit when the option has no bitmap (all valid).
 * CK_ERR_INDEX when `data` is not one of the slots the bitmap covers. */
CK_API ck_status ck_option_slot_bit(const ck_option_arrmeta *m, const char *data,
                                    int64_t *out_bit);

/* The bits of the `count` slots at data, data + stride, ... data + (count -
 * 1) * stride, found once for a whole strided run: the bit of slot i is
 * *out_bit0 + i * *out_bit_step (the step is 0 for a zero stride and
 * negative for a negative one).  *out_bit0 is -1 when the option has no
 * bitmap (all valid) or count is 0.  CK_ERR_INDEX when one of the slots is
 * not a slot the bitmap covers (the same check as ck_option_slot_bit, for
 * the first and the last slot and the stride). */
CK_API ck_status ck_option_slot_bits(const ck_option_arrmeta *m, const char *data,
                                     intptr_t stride, size_t count, int64_t *out_bit0,
                                     int64_t *out_bit_step);

/* Whether the slot at `data` is valid (true when there is no bitmap). */
CK_API ck_status ck_option_get_valid(const ck_option_arrmeta *m, const char *data,
                                     bool *out_valid);

/* Mark the slot at `data` valid or null.  Marking valid without a bitmap is
 * a no-op; a null needs a bitmap (CK_ERR_INVALID_STATE otherwise). */
CK_API ck_status ck_option_set_valid(const ck_option_arrmeta *m, const char *data,
                                     bool valid);

/*
 * Attach a bitmap to the option arrmeta `m` (of type `option_type`, a `?T`):
 * the slots are the `length` values at `origin + k * step` (step > 0), slot
 * k is bit `bit_offset + k` of `bits`.  Takes a new reference to `owner`
 * (may be NULL only when the caller guarantees the bits outlive every array
 * using them) and drops the reference to the bitmap the arrmeta held.  The
 * caller guarantees that `bits` holds at least bit_offset + length bits.
 * Errors: CK_ERR_TYPE (not an option type), CK_ERR_INVALID_ARGUMENT (NULL
 * bits or origin with length > 0, step <= 0, negative offset or length).
 */
CK_API ck_status ck_option_attach_bitmap(ck_type option_type, char *arrmeta,
                                         uint8_t *bits, ck_memblock *owner,
                                         int64_t bit_offset, char *origin,
                                         intptr_t step, int64_t length);

/* ---- arrays ------------------------------------------------------------------ */

/* A 0-d option array (e.g. `a[i]` of a `N * ?T` array made by
 * ck_array_index): whether it holds a value. */
CK_API ck_status ck_array_is_valid(const ck_array_preamble *a, bool *out_valid);

/* Mark a 0-d option array valid or null (needs the WRITE flag).  The value
 * bytes are left as they are. */
CK_API ck_status ck_array_set_valid(ck_array_preamble *a, bool valid);

/* For an array whose type is `dim * ?T` (one leading fixed, strided or var
 * dim): slot i (negative counts from the end, Python's rule). */
CK_API ck_status ck_array_valid_at(const ck_array_preamble *a, intptr_t i,
                                   bool *out_valid);
CK_API ck_status ck_array_set_valid_at(ck_array_preamble *a, intptr_t i, bool valid);

/*
 * Null count of an array whose dtype (the type under its leading fixed,
 * strided and var dims) is an option: counted from the bitmap -- 64 bits
 * at a time along runs of consecutive bits, slot by slot otherwise -- never
 * trusted from elsewhere.  *out_first_null (may be NULL) gets the C-order
 * flat index of the first null, -1 when there is none.  CK_ERR_TYPE when the
 * dtype is not an option.
 */
CK_API ck_status ck_array_null_count(const ck_array_preamble *a, int64_t *out_count,
                                     int64_t *out_first_null);

/*
 * Give every option slot set of the array that is a regular progression of
 * data addresses (see the ownership notes above) a new bitmap of its own
 * with every slot valid, replacing (and releasing) what it had.  Called by
 * ck_array_empty; useful after an array's option slots were made valid by
 * other means.  Needs the WRITE flag.
 */
CK_API ck_status ck_array_validity_alloc(ck_array_preamble *a);

/*
 * A zero-copy view of foreign values with a foreign validity bitmap: `type`
 * is `dims * ?T` (T without blockrefs: numbers, bools, structs of them),
 * `data` / `shape` / `strides` / `ndim` / `owner` as for
 * ck_array_view_external, and the slots, in C order of the view as made
 * (C-contiguous: `strides` must be NULL), are bits bit_offset,
 * bit_offset + 1, ... of `bits`, owned by `bits_owner` (a new reference is
 * taken; NULL bits: no nulls).  This is what an Arrow import of a numeric
 * array with nulls needs.  New reference in *out.
 */
CK_API ck_status ck_array_view_external_option(ck_type type, char *data,
                                               const intptr_t *shape, size_t ndim,
                                               uint64_t flags, ck_memblock *owner,
                                               uint8_t *bits, int64_t bit_offset,
                                               ck_memblock *bits_owner,
                                               ck_array_preamble **out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_VALIDITY_H */
