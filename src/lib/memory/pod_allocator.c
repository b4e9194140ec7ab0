/* pod_allocator.c -- arena memblocks and the pod allocator API
 * (see ckernel/pod_allocator.h for the semantics). */
#include "memory/memblock_internal.h"

#include <pthread.h>
#include <string.h>

/*
 * Layout: an arena is a singly-linked list of chunks, newest first.  Each
 * chunk starts with this header; its usable bytes follow at a 16-byte
 * aligned offset.  Only the newest chunk ("head") is ever allocated from.
 *
 * Invariant (memory safety for stale views): bytes once handed out stay
 * mapped until the arena is freed.  A resize that moves the latest
 * allocation leaves its old bytes in the old chunk (no longer part of any
 * allocation); finalize only trims pages above a chunk's high-water mark.
 */
typedef struct ck_pod_chunk {
  struct ck_pod_chunk *prev; /* older chunk, or NULL                       */
  size_t total;              /* bytes malloc'd or mapped for this chunk      */
  size_t used;               /* bytes consumed (kept current for non-heads)  */
  size_t high;               /* most bytes ever consumed (non-heads)         */
  uint32_t mapped;           /* 1: page mapping (trimmable), 0: malloc       */
  uint32_t pad_;
} ck_pod_chunk;

enum { CK_CHUNK_HEADER = 48 };
_Static_assert(sizeof(ck_pod_chunk) <= CK_CHUNK_HEADER, "chunk header fits");
_Static_assert(CK_CHUNK_HEADER % 16 == 0, "chunk data is 16-byte aligned");

typedef struct ck_pod_memblock {
  ck_memblock base;
  uint32_t finalized;
  ck_pod_chunk *head;   /* newest chunk, NULL before the first allocation  */
  char *cur;            /* first free byte of head                         */
  char *end;            /* end of head's usable bytes                      */
  char *high;           /* high-water mark of head                         */
  char *last_begin;     /* most recent allocation, NULL if none/finalized  */
  char *last_end;
  size_t last_align;
  size_t initial_capacity;
  size_t allocations;
  pthread_mutex_t writer; /* recursive: ck_pod_memblock_writer_lock        */
} ck_pod_memblock;

static inline char *ck__chunk_data(ck_pod_chunk *c) {
  return (char *)c + CK_CHUNK_HEADER;
}

static inline size_t ck__chunk_capacity(const ck_pod_chunk *c) {
  return c->total - CK_CHUNK_HEADER;
}

/* Move the head's cursor, keeping its high-water mark. */
static inline void ck__set_cur(ck_pod_memblock *a, char *cur) {
  a->cur = cur;
  if (cur > a->high) {
    a->high = cur;
  }
}

static bool ck__is_arena(const ck_memblock *mb) {
  return mb != NULL &&
         (mb->kind == CK_MEMBLOCK_POD || mb->kind == CK_MEMBLOCK_ZEROINIT);
}

static const ck__memblock_ops ck__arena_ops;

static ck_status ck__arena_new(ck_memblock_kind kind, size_t initial_capacity,
                              ck_memblock **out, const char *func) {
  if (out == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "out must not be NULL");
  }
  *out = NULL;
  if (initial_capacity > PTRDIFF_MAX / 2) {
    return ck__error(CK_ERR_OVERFLOW, func, "initial capacity %zu is too large",
                    initial_capacity);
  }
  ck_pod_memblock *a = ck__calloc(1, sizeof *a, func);
  if (a == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  pthread_mutexattr_t attr;
  bool ok = pthread_mutexattr_init(&attr) == 0;
  ok = ok && pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) == 0;
  ok = ok && pthread_mutex_init(&a->writer, &attr) == 0;
  (void)pthread_mutexattr_destroy(&attr);
  if (!ok) {
    ck__free(a);
    return ck__error(CK_ERR_NO_MEMORY, func, "cannot create the arena's writer lock");
  }
  ck__memblock_init(&a->base, kind, &ck__arena_ops);
  a->initial_capacity = initial_capacity ? initial_capacity : CK_POD_DEFAULT_CAPACITY;
  *out = &a->base;
  return CK_OK;
}

ck_status ck_pod_memblock_new(size_t initial_capacity, ck_memblock **out) {
  return ck__arena_new(CK_MEMBLOCK_POD, initial_capacity, out, __func__);
}

ck_status ck_zeroinit_memblock_new(size_t initial_capacity, ck_memblock **out) {
  return ck__arena_new(CK_MEMBLOCK_ZEROINIT, initial_capacity, out, __func__);
}

static void ck__chunk_release(ck_pod_chunk *c) {
  if (c->mapped) {
    ck__unmap_spare(c, c->total); /* kept for the next arena's chunk, or unmapped */
  } else {
    ck__free(c);
  }
}

static void ck__pod_memblock_free(ck_memblock *mb) {
  ck_pod_memblock *a = (ck_pod_memblock *)mb;
  (void)pthread_mutex_destroy(&a->writer);
  ck_pod_chunk *c = a->head;
  while (c != NULL) {
    ck_pod_chunk *prev = c->prev;
    ck__chunk_release(c);
    c = prev;
  }
  a->head = NULL;
}

static void ck__pod_memblock_debug(const ck_memblock *mb, char *buf, size_t bufsize,
                                   size_t *pos) {
  ck_pod_stats st;
  if (ck_pod_memblock_stats(mb, &st) == CK_OK) {
    ck__appendf(buf, bufsize, pos,
                " capacity=%zu used=%zu chunks=%zu allocations=%zu%s", st.capacity,
                st.used, st.chunks, st.allocations, st.finalized ? " finalized" : "");
  }
}

static const ck__memblock_ops ck__arena_ops = {
    .release = ck__pod_memblock_free, .debug = ck__pod_memblock_debug};

/* Make a new head chunk able to hold `size` bytes at alignment `align`.
 * The old head keeps its contents (see the invariant above). */
static ck_status ck__arena_add_chunk(ck_pod_memblock *a, size_t size, size_t align,
                                    const char *func) {
  size_t needed, cap;
  /* Usable bytes start 16-byte aligned; larger alignments may need padding. */
  size_t pad = align > 16 ? align - 1 : 0;
  if (!ck__add_size(size, pad, &needed) ||
      !ck__add_size(needed, CK_CHUNK_HEADER, &cap) || cap > PTRDIFF_MAX) {
    return ck__error(CK_ERR_OVERFLOW, func, "size %zu is too large", size);
  }
  cap = a->head ? ck__chunk_capacity(a->head) : 0;
  if (cap <= PTRDIFF_MAX / 2) {
    cap *= 2;
  }
  if (cap < a->initial_capacity) {
    cap = a->initial_capacity;
  }
  if (cap < needed) {
    cap = needed;
  }
  size_t total = cap + CK_CHUNK_HEADER;
  bool zero = a->base.kind == CK_MEMBLOCK_ZEROINIT;
  ck_pod_chunk *c;
  uint32_t mapped = 0;
  if (total >= CK_POD_MAP_THRESHOLD) {
    size_t ps = ck__page_size();
    if (total > SIZE_MAX - ps) {
      return ck__error(CK_ERR_OVERFLOW, func, "size %zu is too large", size);
    }
    total = (total + ps - 1) & ~(ps - 1);
    if (zero) {
      c = ck__map(total, func); /* zero-filled pages */
    } else {
      /* pages another arena wrote before, if one of the right size was
       * released: no page faults (pod arenas hand out uninitialised bytes) */
      c = ck__map_spare(total, &total, func);
    }
    mapped = 1;
  } else {
    c = zero ? ck__calloc(1, total, func) : ck__malloc(total, func);
  }
  if (c == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  c->prev = a->head;
  c->total = total;
  c->used = 0;
  c->high = 0;
  c->mapped = mapped;
  c->pad_ = 0;
  if (a->head != NULL) {
    a->head->used = (size_t)(a->cur - ck__chunk_data(a->head));
    a->head->high = (size_t)(a->high - ck__chunk_data(a->head));
  }
  a->head = c;
  a->cur = a->high = ck__chunk_data(c);
  a->end = ck__chunk_data(c) + ck__chunk_capacity(c);
  return CK_OK;
}

static ck_status ck__check_arena(const ck_memblock *mb, const char *func) {
  if (mb == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "memblock is NULL");
  }
  if (!ck__is_arena(mb)) {
    return ck__error(CK_ERR_TYPE, func,
                     "memblock of kind '%s' has no pod allocator",
                     ck_memblock_kind_name(mb->kind));
  }
  return CK_OK;
}

/* Room for `size` bytes at `align` in the head chunk: the aligned start, or
 * NULL if it does not fit. */
static char *ck__head_fit(const ck_pod_memblock *a, size_t size, size_t align) {
  if (a->head == NULL) {
    return NULL;
  }
  uintptr_t p = ((uintptr_t)a->cur + (align - 1)) & ~(uintptr_t)(align - 1);
  if (p > (uintptr_t)a->end || size > (uintptr_t)a->end - p) {
    return NULL;
  }
  return (char *)p;
}

ck_status ck_pod_allocate(ck_memblock *mb, size_t size, size_t align,
                          char **out_begin, char **out_end) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (out_begin == NULL || out_end == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out_begin/out_end must not be NULL");
  }
  ck_pod_memblock *a = (ck_pod_memblock *)mb;
  if (a->finalized) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "memblock %p is finalized", (void *)mb);
  }
  if (!ck__is_pow2(align) || align > CK_POD_MAX_ALIGN) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "alignment %zu is not a power of two in [1, %d]", align,
                    CK_POD_MAX_ALIGN);
  }
  if (size > PTRDIFF_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "size %zu is too large", size);
  }
  char *p = ck__head_fit(a, size, align);
  if (p == NULL) {
    st = ck__arena_add_chunk(a, size, align, __func__);
    if (st != CK_OK) {
      return st;
    }
    p = ck__head_fit(a, size, align);
  }
  ck__set_cur(a, p + size);
  a->last_begin = p;
  a->last_end = p + size;
  a->last_align = align;
  a->allocations++;
  *out_begin = p;
  *out_end = p + size;
  return CK_OK;
}

ck_status ck_pod_resize(ck_memblock *mb, size_t size, char **inout_begin,
                        char **inout_end) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (inout_begin == NULL || inout_end == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "inout_begin/inout_end must not be NULL");
  }
  ck_pod_memblock *a = (ck_pod_memblock *)mb;
  if (a->finalized) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "memblock %p is finalized", (void *)mb);
  }
  if (a->last_begin == NULL || *inout_begin != a->last_begin ||
      *inout_end != a->last_end) {
    return CK_ERROR(CK_ERR_INVALID_STATE,
                    "[%p, %p) is not the most recent allocation of memblock %p; "
                    "only that one can be resized",
                    (void *)*inout_begin, (void *)*inout_end, (void *)mb);
  }
  if (size > PTRDIFF_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "size %zu is too large", size);
  }
  char *b = a->last_begin;
  size_t old_size = (size_t)(a->last_end - b);
  bool zero = mb->kind == CK_MEMBLOCK_ZEROINIT;
  if (size <= (size_t)(a->end - b)) {
    /* In place.  Keep the zero-init invariant: bytes past cur are zero. */
    if (zero && size < old_size) {
      memset(b + size, 0, old_size - size);
    }
  } else {
    /* Move to a fresh chunk; give the old bytes back to the old chunk. */
    /* Move to a fresh chunk; the old bytes stay where they are (readable
     * through stale views) but no longer count as used. */
    a->cur = b;
    st = ck__arena_add_chunk(a, size, a->last_align, __func__);
    if (st != CK_OK) {
      a->cur = a->last_end; /* unchanged on failure */
      return st;
    }
    char *nb = ck__head_fit(a, size, a->last_align);
    memcpy(nb, b, old_size);
    b = nb;
  }
  ck__set_cur(a, b + size);
  a->last_begin = b;
  a->last_end = b + size;
  *inout_begin = b;
  *inout_end = b + size;
  return CK_OK;
}

ck_status ck_pod_finalize(ck_memblock *mb) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_pod_memblock *a = (ck_pod_memblock *)mb;
  if (a->finalized) {
    return CK_OK; /* idempotent */
  }
  a->finalized = 1;
  a->last_begin = a->last_end = NULL;
  ck_pod_chunk *c = a->head;
  if (c == NULL) {
    return CK_OK;
  }
  c->used = (size_t)(a->cur - ck__chunk_data(c));
  c->high = (size_t)(a->high - ck__chunk_data(c));
  if (c->high == 0) {
    /* The head never handed out a byte: give it back whole. */
    a->head = c->prev;
    ck__chunk_release(c);
    a->cur = a->end = a->high = NULL;
    return CK_OK;
  }
  if (c->mapped) {
    size_t ps = ck__page_size();
    size_t keep = (CK_CHUNK_HEADER + c->high + ps - 1) & ~(ps - 1);
    if (keep < c->total) {
      ck__unmap((char *)c + keep, c->total - keep);
      c->total = keep;
    }
  }
  a->end = ck__chunk_data(c) + ck__chunk_capacity(c);
  return CK_OK;
}

ck_status ck_pod_trim(ck_memblock *mb) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_pod_memblock *a = (ck_pod_memblock *)mb;
  ck_pod_chunk *c = a->head;
  if (a->finalized || c == NULL) {
    return CK_OK; /* finalize trimmed already / nothing to trim */
  }
  size_t high = (size_t)(a->high - ck__chunk_data(c));
  if (high == 0) {
    /* The head never handed out a byte: give it back whole and go on in
     * what is left of the previous chunk. */
    ck_pod_chunk *prev = c->prev;
    ck__chunk_release(c);
    a->head = prev;
    if (prev == NULL) {
      a->cur = a->end = a->high = NULL;
    } else {
      a->cur = ck__chunk_data(prev) + prev->used;
      a->high = ck__chunk_data(prev) + prev->high;
      a->end = ck__chunk_data(prev) + ck__chunk_capacity(prev);
    }
    return CK_OK;
  }
  if (c->mapped) {
    size_t ps = ck__page_size();
    size_t keep = (CK_CHUNK_HEADER + high + ps - 1) & ~(ps - 1);
    if (keep < c->total) {
      ck__unmap((char *)c + keep, c->total - keep);
      c->total = keep;
      a->end = ck__chunk_data(c) + ck__chunk_capacity(c);
    }
  }
  return CK_OK;
}

ck_status ck_pod_memblock_adopt(ck_memblock *dst, ck_memblock *src) {
  ck_status st = ck__check_arena(dst, __func__);
  if (st == CK_OK) {
    st = ck__check_arena(src, __func__);
  }
  if (st != CK_OK) {
    return st;
  }
  if (dst == src) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "an arena cannot adopt its own chunks");
  }
  if (dst->kind != src->kind) {
    return CK_ERROR(CK_ERR_TYPE, "cannot adopt the chunks of a '%s' arena into a '%s' one",
                    ck_memblock_kind_name(src->kind), ck_memblock_kind_name(dst->kind));
  }
  ck_pod_memblock *d = (ck_pod_memblock *)dst;
  ck_pod_memblock *s = (ck_pod_memblock *)src;
  if (d->finalized) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "memblock %p is finalized", (void *)dst);
  }
  if (!s->finalized) {
    (void)ck_pod_trim(src); /* checked above: cannot fail */
  }
  ck_pod_chunk *sh = s->head;
  if (sh != NULL) {
    if (!s->finalized) { /* the head's marks live in the arena (finalize stored them) */
      sh->used = (size_t)(s->cur - ck__chunk_data(sh));
      sh->high = (size_t)(s->high - ck__chunk_data(sh));
    }
    if (d->head != NULL) {
      ck_pod_chunk *oldest = sh;
      while (oldest->prev != NULL) {
        oldest = oldest->prev;
      }
      oldest->prev = d->head->prev;
      d->head->prev = sh;
    } else {
      d->head = sh;
      d->cur = ck__chunk_data(sh) + sh->used;
      d->high = ck__chunk_data(sh) + sh->high;
      d->end = ck__chunk_data(sh) + ck__chunk_capacity(sh);
      d->last_begin = d->last_end = NULL;
    }
  }
  d->allocations += s->allocations;
  s->allocations = 0;
  s->head = NULL;
  s->cur = s->end = s->high = NULL;
  s->last_begin = s->last_end = NULL;
  return CK_OK;
}

static const ck_pod_allocator_api ck_arena_api = {
    ck_pod_allocate, ck_pod_resize, ck_pod_finalize};

const ck_pod_allocator_api *ck_memblock_pod_allocator_api(ck_memblock *mb) {
  if (ck__check_arena(mb, __func__) != CK_OK) {
    return NULL;
  }
  return &ck_arena_api;
}

ck_status ck_pod_memblock_stats(const ck_memblock *mb, ck_pod_stats *out) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  const ck_pod_memblock *a = (const ck_pod_memblock *)mb;
  memset(out, 0, sizeof *out);
  for (ck_pod_chunk *c = a->head; c != NULL; c = c->prev) {
    out->capacity += ck__chunk_capacity(c);
    bool live_head = c == a->head && !a->finalized;
    out->used += live_head ? (size_t)(a->cur - ck__chunk_data(c)) : c->used;
    out->chunks++;
  }
  out->allocations = a->allocations;
  out->finalized = a->finalized != 0;
  return CK_OK;
}

ck_status ck_pod_memblock_chunks(const ck_memblock *mb, ck_pod_chunk_info *out,
                                 size_t max, size_t *out_count) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (out_count == NULL || (out == NULL && max != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL out_count, or NULL out with max %zu",
                    max);
  }
  const ck_pod_memblock *a = (const ck_pod_memblock *)mb;
  size_t n = 0;
  for (const ck_pod_chunk *c = a->head; c != NULL; c = c->prev) {
    n++;
  }
  /* the list is newest first; entry i (oldest first) is list element n-1-i */
  size_t i = n;
  for (ck_pod_chunk *c = a->head; c != NULL; c = c->prev) {
    i--;
    if (i < max) {
      bool live_head = c == a->head && !a->finalized;
      out[i].begin = ck__chunk_data(c);
      out[i].capacity = ck__chunk_capacity(c);
      out[i].used = live_head ? (size_t)(a->cur - ck__chunk_data(c)) : c->used;
      out[i].mapped = c->mapped;
      out[i].reserved_ = 0;
    }
  }
  *out_count = n;
  return CK_OK;
}

/* ---- the writer lock ------------------------------------------------------ */

ck_status ck_pod_memblock_writer_lock(ck_memblock *mb) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  int rc = pthread_mutex_lock(&((ck_pod_memblock *)mb)->writer);
  if (rc != 0) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "cannot lock the arena (error %d)", rc);
  }
  return CK_OK;
}

ck_status ck_pod_memblock_writer_unlock(ck_memblock *mb) {
  ck_status st = ck__check_arena(mb, __func__);
  if (st != CK_OK) {
    return st;
  }
  int rc = pthread_mutex_unlock(&((ck_pod_memblock *)mb)->writer);
  if (rc != 0) {
    return CK_ERROR(CK_ERR_INVALID_STATE,
                    "the calling thread does not hold the arena's writer lock "
                    "(error %d)", rc);
  }
  return CK_OK;
}
