/*
 * array_internal.h -- array allocation the library's own writers use (not
 * installed; nothing here is ABI).
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

#endif /* CKERNEL_ARRAY_INTERNAL_H */
