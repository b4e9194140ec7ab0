/*
 * arrow_import_internal.h -- what the files of the Arrow import share (the
 * "i" names: i for import; arrow_export_internal.h has the "x" names of the
 * other direction).  Not installed; nothing here is ABI.
 *
 *   arrow_import.c          the owner of the moved array, the recursive
 *                           pass `fill` (numbers, lists, fixed-size lists,
 *                           structs, option types), ck_arrow_import,
 *                           ck_arrow_import_device, dictionary-encoded input
 *   arrow_import_check.c    the checks of a foreign node: its fields and
 *                           buffers, offsets and list rows, null counts,
 *                           nulls against the fill value
 *   arrow_import_strings.c  utf8 / binary (offsets) and views as ck strings
 *   arrow_import_stream.c   ck_arrow_import_stream
 */
#ifndef CKERNEL_ARROW_IMPORT_INTERNAL_H
#define CKERNEL_ARROW_IMPORT_INTERNAL_H

#include "interop/arrow_internal.h"

/* ---- the owner of the imported array (arrow_import.c) --------------------------- */

typedef struct ck__iowner {
  struct ArrowArray array;      /* moved from the caller */
  ck_array_preamble **keep;     /* fill values converted to leaf types */
  size_t nkeep, capkeep;
} ck__iowner;

typedef struct ck__ictx {
  ck_memblock *owner_mb;
  ck__iowner *owner;
  const ck_array_preamble *fill;
  ck__arrow_path path;
  /* > 0 while a node is filled row by row (fixed-size lists in a struct):
   * then the same var dim arrmeta is met several times and its elements
   * are always copied into its arena -- sharing Arrow's buffer in a later
   * row would point its blockref at the owner and free the earlier rows'
   * copies */
  int per_row;
  /* set by fill for the value of an option `?T` and taken by the node
   * filled next: its nulls are let through (a null leaf slot gets zero
   * bytes, a null row no elements; the bitmap says they are null) */
  bool nulls_ok;
} ck__ictx;

static inline const char *ck__iwhat(ck__ictx *c, char *buf, size_t n) {
  return ck__arrow_path_what(&c->path, buf, n);
}

/* Point a blockref slot at the owner (once per arrmeta node). */
static inline void ck__iuse_owner(ck__ictx *c, ck_memblock **slot) {
  if (*slot != c->owner_mb) {
    ck_memblock_decref(*slot);
    ck_memblock_incref(c->owner_mb);
    *slot = c->owner_mb;
  }
}

/* ---- checks (arrow_import_check.c) ---------------------------------------------- */

/* CK_ERR_INVALID_ARGUMENT from ck_arrow_import: "<the node's path>: <msg>". */
ck_status ck__ibad(ck__ictx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#define BAD(c, ...) ck__ibad((c), __VA_ARGS__)

/* Check the node's own fields and that logical [start, start + count) is
 * inside it. */
ck_status ck__icheck_node(ck__ictx *c, const struct ArrowSchema *s,
                          const struct ArrowArray *a, const ck__arrow_format *f,
                          int64_t start, int64_t count);

/* Bit i of a validity bitmap (NULL: every slot valid). */
static inline bool ck__ivalid(const uint8_t *bits, int64_t i) {
  return bits == NULL || (bits[i >> 3] >> (i & 7)) & 1;
}

/* Nulls among physical indices [from, from + count); the validity bitmap
 * in *bits (NULL when there are none). */
ck_status ck__icount_nulls(ck__ictx *c, const struct ArrowArray *a, int64_t from,
                           int64_t count, const uint8_t **bits, int64_t *out);

/* The error for `nulls` nulls among `count` values that are not let
 * through (`fillable`: a fill value would have filled them). */
ck_status ck__inull_error(ck__ictx *c, int64_t nulls, int64_t count, bool fillable);

/* The nulls of a leaf among physical [from, from + count): *bits is the
 * validity bitmap (NULL when none is null) and *fv the fill value converted
 * to `t`; nulls without a fill value are the error. */
ck_status ck__ileaf_nulls(ck__ictx *c, ck_type t, const struct ArrowArray *a, int64_t from,
                          int64_t count, const uint8_t **bits, const char **fv);

/* Copy the `size` bytes at `fv` over slot j (`dst + j * dstride`) of every
 * null among physical indices [from, from + count) of validity bitmap
 * `bits`: 64 slots at a time, a word without nulls skipped. */
void ck__ifill_nulls(const uint8_t *bits, int64_t from, int64_t count, char *dst,
                     intptr_t dstride, const char *fv, size_t size);

/* Read offset i of an int32 or int64 offsets buffer. */
static inline int64_t ck__ioffset_at(const void *buf, bool large, int64_t i) {
  return large ? ((const int64_t *)buf)[i] : ((const int32_t *)buf)[i];
}

/* Row k of a list or list view as (offset, size), checked: both
 * non-negative, offset + size within int64 (list offsets: not decreasing). */
ck_status ck__ilist_row(ck__ictx *c, const void *offsets, const void *sizes, bool large,
                        int64_t k, int64_t *o, int64_t *n);

/* The exact nulls of a checked root, counted from its validity bitmap --
 * the producer's null_count is never trusted: one that is known (not -1)
 * and disagrees with the bitmap is refused. */
ck_status ck__iroot_null_count(ck__ictx *c, const struct ArrowArray *a);

/* ---- strings (arrow_import_strings.c) ------------------------------------------- */

/* `count` strings or bytes (type `t`) of node `a` from physical index
 * `from` into slots `dstride` apart: their text shared (the arrmeta's
 * blockref becomes the owner), UTF-8 checked for strings. */
ck_status ck__ifill_strings(ck__ictx *c, ck_type t, char *arrmeta, char *dst,
                            intptr_t dstride, const struct ArrowArray *a,
                            const ck__arrow_format *f, int64_t from, int64_t count);

#endif /* CKERNEL_ARROW_IMPORT_INTERNAL_H */
