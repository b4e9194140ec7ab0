/*
 * array_internal.h -- array allocation the library's own writers use, and
 * what array.c shares with array_view.c (not installed; nothing here is
 * ABI).
 */
#ifndef CKERNEL_ARRAY_INTERNAL_H
#define CKERNEL_ARRAY_INTERNAL_H

#include "ckernel/array.h"

/*
 * As ck_array_empty_uninit, but no data is zero-filled, strings and var
 * dims included: for a writer that stores every slot before the array is
 * read or handed out (the Arrow import's string leaves).  Until then the
 * slots are garbage; an array given up before that may only be decref'd
 * (its release reads no slot).  An option's bitmap is set up as in
 * ck_array_empty.
 */
ck_status ck__array_empty_unfilled(ck_type type, const intptr_t *shape, size_t ndim,
                                   uint64_t flags, ck_array_preamble **out);

/* The arrmeta, right after the preamble. */
static inline char *ck__array_meta(const ck_array_preamble *a) {
  return (char *)(a + 1);
}

/* CK_OK if `a` is a non-NULL array memblock, else the error recorded
 * naming `func`. */
ck_status ck__array_check(const ck_array_preamble *a, const char *func);

/* The allocation behind ck_array_empty (`zero`), ck_array_empty_uninit and
 * ck__array_empty_unfilled (`unfilled`), errors naming `func`. */
ck_status ck__array_new(ck_type type, const intptr_t *shape, size_t ndim, uint64_t flags,
                        bool zero, bool unfilled, ck_array_preamble **out, const char *func);

/* Finish a view preamble `v` whose arrmeta is written: an array memblock
 * of `type` (v takes over the caller's reference) over `data`, with a new
 * reference to the data's owner `data_ref`. */
void ck__array_view_init(ck_array_preamble *v, ck_type type, char *data, uint64_t flags,
                         ck_memblock *data_ref);

/* Give the option slot sets of `count` slots of type t at base + k * step
 * (step 0: count is 1) new all-valid bitmaps, as ck_array_empty does
 * (validity.c); var dims and pointers inside are left without one. */
ck_status ck__validity_alloc_slots(ck_type t, char *meta, char *base, intptr_t step,
                                   intptr_t count);

#endif /* CKERNEL_ARRAY_INTERNAL_H */
