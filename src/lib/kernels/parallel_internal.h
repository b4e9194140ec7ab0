/*
 * parallel_internal.h -- the pool of parallel.c with a thread count fixed by
 * the caller.  Private; nothing here is ABI.
 */
#ifndef CKERNEL_PARALLEL_INTERNAL_H
#define CKERNEL_PARALLEL_INTERNAL_H

#include "ckernel/parallel.h"

/* ck_parallel_for on at most `max_threads` threads (caller included): every
 * `thread_index` fn sees is below max_threads, so callers may prepare
 * per-thread state for exactly that many (ck_get_num_threads() read once)
 * without racing ck_set_num_threads. */
ck_status ck__parallel_for_threads(size_t n, size_t min_chunk, unsigned max_threads,
                                   ck_parallel_fn fn, void *ctx);

#endif /* CKERNEL_PARALLEL_INTERNAL_H */
