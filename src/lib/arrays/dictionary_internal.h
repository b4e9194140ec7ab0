/*
 * dictionary_internal.h -- dictionary columns without the scan of their
 * indices, for imports that defer it (arrow_dictionary.c).  Not installed;
 * nothing here is ABI.
 */
#ifndef CKERNEL_DICTIONARY_INTERNAL_H
#define CKERNEL_DICTIONARY_INTERNAL_H

#include "ckernel/dictionary.h"

/* ck_dictionary_array_new; `check` false skips the pass over the indices
 * (O(1): the column's readers -- ck_dictionary_decode, the Python reader --
 * check every index they use). */
ck_status ck__dictionary_array_wrap(ck_array_preamble *indices, ck_array_preamble *values,
                                    bool ordered, bool check, ck_array_preamble **out);

#endif /* CKERNEL_DICTIONARY_INTERNAL_H */
