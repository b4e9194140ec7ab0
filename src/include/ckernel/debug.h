/*
 * ckernel/debug.h -- allocation accounting and fault injection for tests.
 *
 * Every heap allocation the library makes goes through one internal entry
 * point that counts it and can be told to fail.  Tests use this to prove
 * that a code path allocates nothing (ck_debug_alloc_count before/after) and
 * that every failure path cleans up (fail the k-th allocation, for every k,
 * and check that ck_memblock_live_count() and the sanitizers stay clean).
 *
 * Process-wide state: two atomic counters.  They are meant for tests run on
 * one thread at a time; using them concurrently is safe but the counts then
 * include every thread's allocations.
 */
#ifndef CKERNEL_DEBUG_H
#define CKERNEL_DEBUG_H

#include "ckernel/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of heap allocations (malloc, calloc, aligned, realloc, mmap) the
 * library has attempted since the process started. */
CK_API uint64_t ck_debug_alloc_count(void);

/* Make the k-th allocation attempted from now fail (k >= 1), as if the
 * system were out of memory; k = 0 disables.  The trigger fires once and then
 * disarms itself. */
CK_API void ck_debug_fail_alloc_after(uint64_t k);

/* True if an armed failure has fired since it was armed (so a loop over k
 * can stop once a run completes without reaching the k-th allocation). */
CK_API bool ck_debug_fail_alloc_fired(void);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_DEBUG_H */
