/*
 * ckernel/pod_allocator.h -- the pod allocator API for variable-sized data.
 *
 * Strings and var dims store their elements in an arena memblock (kind
 * CK_MEMBLOCK_POD or CK_MEMBLOCK_ZEROINIT) referenced from their arrmeta.
 * Kernels that produce such data obtain the arena's allocator table and use
 * it like this (DyND's protocol):
 *
 *     const ck_pod_allocator_api *api = ck_memblock_pod_allocator_api(mb);
 *     char *b, *e;
 *     api->allocate(mb, guess, 1, &b, &e);   // once per output element
 *     api->resize(mb, 2 * guess, &b, &e);    // grow while writing
 *     api->resize(mb, final_size, &b, &e);   // trim when done
 *     ...
 *     api->finalize(mb);                     // once, when no more output
 *
 * Semantics (each violation is an error status, never memory corruption):
 *   - Memory already handed out never moves.  Only `resize` of the most recent
 *     allocation may move that one allocation (to a new chunk).  Bytes once
 *     handed out stay mapped until the block is freed, even when a moving
 *     resize left them behind, so a stale pointer reads old bytes instead of
 *     freed memory (a safety net for bindings; do not rely on the contents).
 *   - `resize` applies to the most recent allocation only: (*inout_begin,
 *     *inout_end) must be exactly what the last allocate/resize returned.
 *   - `finalize` releases unused capacity (never below a chunk's high-water
 *     mark) and forbids further allocate/resize.  Calling it again is a no-op.
 *   - `align` is a power of two in [1, CK_POD_MAX_ALIGN].  Size 0 is valid
 *     (begin == end, aligned, non-NULL).  Sizes whose arithmetic would
 *     overflow, or above PTRDIFF_MAX, are CK_ERR_OVERFLOW.
 *
 * Growth: the arena is a list of chunks.  The first chunk has the initial
 * capacity (CK_POD_DEFAULT_CAPACITY if 0 was asked for); each new chunk is at
 * least twice the previous one and large enough for the request, so n bytes
 * of allocations cost O(log n) chunk allocations.  Chunks of at least
 * CK_POD_MAP_THRESHOLD bytes are page mappings, so `finalize` can return
 * their unused tail pages to the system without moving anything (realloc may
 * move memory even when shrinking, so it is never used).  When an arena is
 * freed, its mapped chunks are kept as spares (the newest few, 64 MiB at
 * most) that a later pod (not zero-init) arena's chunk of about the same size
 * reuses: a loop making one string column per call writes into pages that
 * are already mapped instead of page-faulting fresh, kernel-zeroed ones.
 * Chunks of a
 * zero-init arena are zero-filled, and bytes given back by a shrinking resize
 * are re-zeroed, so every byte an allocation exposes reads as zero.  The
 * page mappings of a freed (non-zero-init) arena are kept for later chunks, a
 * few and 32 MiB in all at most (as malloc keeps freed pages): a kernel that
 * writes a large string result on every call then does not fault in fresh
 * pages each time; a chunk after the first may then be smaller than twice
 * the previous one (a kept mapping large enough for the request), and any
 * chunk up to twice what was asked.
 *
 * Thread safety: an arena has a single writer.  Concurrent kernels writing
 * strings use one arena per thread, whose chunks the destination's arena
 * then adopts (ck_pod_memblock_adopt: no byte moves); reading is free.
 */
#ifndef CKERNEL_POD_ALLOCATOR_H
#define CKERNEL_POD_ALLOCATOR_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/memblock.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CK_POD_MAX_ALIGN = 4096,
  CK_POD_DEFAULT_CAPACITY = 4096,
  CK_POD_MAP_THRESHOLD = 65536
};

typedef ck_status (*ck_pod_allocate_fn)(ck_memblock *mb, size_t size,
                                        size_t align, char **out_begin,
                                        char **out_end);
typedef ck_status (*ck_pod_resize_fn)(ck_memblock *mb, size_t size,
                                      char **inout_begin, char **inout_end);
typedef ck_status (*ck_pod_finalize_fn)(ck_memblock *mb);

/* The allocator table (one static instance per arena kind). */
typedef struct ck_pod_allocator_api {
  ck_pod_allocate_fn allocate;
  ck_pod_resize_fn resize;
  ck_pod_finalize_fn finalize;
} ck_pod_allocator_api;

/* The table for `mb`, or NULL (with CK_ERR_TYPE recorded in ck_last_error)
 * for a NULL block or a kind that has no allocator. */
CK_API const ck_pod_allocator_api *ck_memblock_pod_allocator_api(ck_memblock *mb);

/* The functions behind the table, exported so that generated code can call
 * them by name.  They check the kind of `mb`. */
CK_API ck_status ck_pod_allocate(ck_memblock *mb, size_t size, size_t align,
                                 char **out_begin, char **out_end);
CK_API ck_status ck_pod_resize(ck_memblock *mb, size_t size, char **inout_begin,
                               char **inout_end);
CK_API ck_status ck_pod_finalize(ck_memblock *mb);

/* Release unused capacity as finalize does (the pages of the newest chunk
 * above its high-water mark; the newest chunk whole if it never handed out
 * a byte) but keep the arena open: later allocations go on in what is left,
 * then in new chunks.  ck_array_apply trims the arenas of the results it
 * makes, so a string result holds about the bytes of its strings. */
CK_API ck_status ck_pod_trim(ck_memblock *mb);

/*
 * Move every chunk of arena `src` into arena `dst`, without moving a byte:
 * what `src` handed out belongs to `dst` from now on and stays mapped until
 * `dst` is freed, so data pointing into it may be referenced through `dst`
 * alone (`src` may then be freed).  This is how results built in parallel,
 * one arena per thread, end up in the one arena a destination's arrmeta
 * references (ck_array_apply).
 *
 *   - `src`'s unused capacity is released first (as ck_pod_trim does); its
 *     chunks go behind `dst`'s newest chunk, which stays the one `dst`
 *     allocates from, and `dst`'s latest allocation stays the one `resize`
 *     applies to.  A `dst` without chunks takes `src`'s newest chunk as its
 *     own (new allocations go on in what is left of it) and has no latest
 *     allocation to resize.
 *   - `src` is left empty and open: its next allocation starts a new chunk;
 *     its allocation count moves to `dst`'s statistics.
 *   - Both must be arenas of the same kind (CK_ERR_TYPE: a zero-init arena
 *     hands out zeroed bytes, a POD one may not), distinct
 *     (CK_ERR_INVALID_ARGUMENT); `dst` must not be finalized
 *     (CK_ERR_INVALID_STATE).  On an error nothing changes.
 *   - The caller is the single writer of both arenas for the duration.
 */
CK_API ck_status ck_pod_memblock_adopt(ck_memblock *dst, ck_memblock *src);

/* Statistics of an arena. */
typedef struct ck_pod_stats {
  size_t capacity;     /* bytes held in chunks now                     */
  size_t used;         /* bytes in live allocations (payload + padding) */
  size_t chunks;       /* number of chunks                             */
  size_t allocations;  /* number of allocate() calls that succeeded     */
  bool finalized;
} ck_pod_stats;

CK_API ck_status ck_pod_memblock_stats(const ck_memblock *mb, ck_pod_stats *out);

/* One chunk of an arena, for pictures and tests: `begin` is its first usable
 * byte, `capacity` its usable bytes (after a finalize or trim, the bytes
 * still held), `used` the bytes consumed from it (allocations and their
 * padding, and bytes a moving resize left behind).  `mapped` is 1 for a
 * page mapping, 0 for a heap chunk. */
typedef struct ck_pod_chunk_info {
  char *begin;
  size_t capacity;
  size_t used;
  uint32_t mapped;
  uint32_t reserved_; /* zero */
} ck_pod_chunk_info;

/* The chunks of an arena, OLDEST first (the last one is the chunk new
 * allocations come from): writes min(count, max) entries (`out` may be NULL
 * when max is 0) and stores the number of chunks in *out_count.  The first
 * chunk's allocations are at the lowest index: entry i holds every byte
 * handed out between the allocations of entries i-1 and i+1 -- except that
 * chunks adopted from other arenas (ck_pod_memblock_adopt) come right before
 * the chunk that was newest when they were adopted, oldest first.  Reads
 * only; the caller keeps the arena from changing meanwhile (its single
 * writer).  CK_ERR_TYPE for a block that is not an arena. */
CK_API ck_status ck_pod_memblock_chunks(const ck_memblock *mb,
                                        ck_pod_chunk_info *out, size_t max,
                                        size_t *out_count);

/*
 * The writer lock of an arena.  An arena has a single writer at a time (the
 * allocator itself is not thread-safe, and resize applies to the latest
 * allocation, which two writers would take from each other).  Whoever writes
 * a whole kernel application into an arena holds its lock for the duration:
 * ck_array_apply and ck_array_assign (apply.h) do so for every arena the
 * destination's arrmeta references, so concurrent calls writing into one
 * string or var-dim array are serialised.  Other writers sharing an arena
 * between threads take it the same way.  Recursive: the holder may take it
 * again (each lock needs its unlock).  Readers need no lock: bytes once
 * handed out never move.  CK_ERR_TYPE for a block that is not an arena;
 * unlocking a lock the calling thread does not hold is CK_ERR_INVALID_STATE.
 */
CK_API ck_status ck_pod_memblock_writer_lock(ck_memblock *mb);
CK_API ck_status ck_pod_memblock_writer_unlock(ck_memblock *mb);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_POD_ALLOCATOR_H */
