/*
 * memblock_internal.h -- how the files that make memblocks of a kind (the
 * arenas in pod_allocator.c, arrays in arrays/array.c) plug their release
 * and debug text into ck_memblock_free / ck_memblock_debug_print without
 * memblock.c calling up into them.  Private; nothing here is ABI.
 */
#ifndef CKERNEL_MEMBLOCK_INTERNAL_H
#define CKERNEL_MEMBLOCK_INTERNAL_H

#include "core/core_internal.h"

/* What a kind adds to the common free and debug paths.  `release` frees
 * what the block owns (not the block itself: ck_memblock_free does that);
 * `debug` appends " key=value ..." to a debug line (ck__appendf rules). */
typedef struct ck__memblock_ops {
  void (*release)(ck_memblock *mb);
  void (*debug)(const ck_memblock *mb, char *buf, size_t bufsize, size_t *pos);
} ck__memblock_ops;

/* Initialise a new block of `kind` (refcount 1, counted live).  `ops` (static
 * storage; the same pointer for every block of the kind, NULL for the kinds
 * memblock.c handles itself) is recorded for the kind: a block of a kind
 * can only exist after its constructor passed the kind's ops here, so the
 * free and debug paths always find them. */
void ck__memblock_init(ck_memblock *mb, ck_memblock_kind kind,
                       const ck__memblock_ops *ops);

#endif /* CKERNEL_MEMBLOCK_INTERNAL_H */
