/*
 * buffer.c -- buffers and their allocator.
 *
 * The allocator keeps two sorted arrays of [offset, offset+size) ranges:
 * the free blocks (disjoint, never adjacent: neighbours are merged) and the
 * live allocations.  Free blocks, allocations and alignment padding tile
 * [0, capacity) exactly.  allocate() is first fit; a block is split into
 * (leading padding, allocation, tail) and the padding and tail stay free.
 * Arrays are grown before they are changed, so a failed allocation leaves
 * the allocator as it was.
 */
#include "devices/backend_internal.h"
#include "ckernel/buffer.h"

#include <string.h>

typedef struct ck__range {
  size_t off;
  size_t size;
} ck__range;

typedef struct ck__ranges {
  ck__range *v;
  size_t n;
  size_t cap;
} ck__ranges;

struct ck_buffer {
  _Atomic(uint32_t) refcount;
  ck_context *ctx;
  ck__devmem mem;
  pthread_mutex_t lock;
  ck__ranges free_list;
  ck__ranges allocs;
  size_t used;
  bool wrapped;                /* ck_buffer_wrap: mem is not ours */
  void (*release)(void *arg);  /* wrapped: called when the buffer dies */
  void *release_arg;
};

static ck_status ck__ranges_reserve(ck__ranges *r, size_t extra) {
  if (r->n + extra <= r->cap) {
    return CK_OK;
  }
  size_t cap = r->cap ? r->cap * 2 : 8;
  while (cap < r->n + extra) {
    cap *= 2;
  }
  ck__range *v = CK_REALLOC(r->v, cap * sizeof *v);
  if (v == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  r->v = v;
  r->cap = cap;
  return CK_OK;
}

static void ck__ranges_insert(ck__ranges *r, size_t at, ck__range x) {
  memmove(r->v + at + 1, r->v + at, (r->n - at) * sizeof *r->v);
  r->v[at] = x;
  r->n++;
}

static void ck__ranges_erase(ck__ranges *r, size_t at) {
  memmove(r->v + at, r->v + at + 1, (r->n - at - 1) * sizeof *r->v);
  r->n--;
}

/* First index whose offset is >= off. */
static size_t ck__ranges_lower(const ck__ranges *r, size_t off) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->v[mid].off < off) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/* Add [off, off+size) to the free list, merging with neighbours.  Needs room
 * for one more entry (reserved by the caller). */
static void ck__free_insert(ck__ranges *fl, size_t off, size_t size) {
  size_t i = ck__ranges_lower(fl, off);
  bool merge_prev = i > 0 && fl->v[i - 1].off + fl->v[i - 1].size == off;
  bool merge_next = i < fl->n && off + size == fl->v[i].off;
  if (merge_prev && merge_next) {
    fl->v[i - 1].size += size + fl->v[i].size;
    ck__ranges_erase(fl, i);
  } else if (merge_prev) {
    fl->v[i - 1].size += size;
  } else if (merge_next) {
    fl->v[i].off = off;
    fl->v[i].size += size;
  } else {
    ck__ranges_insert(fl, i, (ck__range){off, size});
  }
}

_Static_assert(offsetof(struct ck_buffer, ctx) == offsetof(ck__buffer_head, ctx) &&
                   offsetof(struct ck_buffer, mem) == offsetof(ck__buffer_head, mem),
               "struct ck_buffer starts with a ck__buffer_head");

/* ck_buffer_new, or ck_buffer_wrap when `native` is not NULL. */
static ck_status ck__buffer_make(ck_context *ctx, void *native, size_t capacity,
                                 ck_buffer **out) {
  ck_buffer *buf = CK_CALLOC(1, sizeof *buf);
  if (buf == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  ck_status st = ck__ranges_reserve(&buf->free_list, 8);
  if (st == CK_OK) {
    st = ck__ranges_reserve(&buf->allocs, 8);
  }
  if (st == CK_OK) {
    if (native != NULL) {
      st = ctx->vt->wrap(ctx, native, capacity, &buf->mem);
    } else if (!ck__pool_take(ctx, capacity, &buf->mem)) {
      st = ctx->vt->alloc(ctx, capacity, &buf->mem);
    }
  }
  if (st == CK_OK && pthread_mutex_init(&buf->lock, NULL) != 0) {
    if (native == NULL) {
      ctx->vt->free(ctx, &buf->mem);
    } else if (ctx->vt->unwrap != NULL) {
      ctx->vt->unwrap(ctx, &buf->mem);
    }
    st = CK_ERROR(CK_ERR_NO_MEMORY, "pthread_mutex_init failed");
  }
  if (st != CK_OK) {
    ck__free(buf->free_list.v);
    ck__free(buf->allocs.v);
    ck__free(buf);
    return st;
  }
  if (capacity != 0) {
    ck__free_insert(&buf->free_list, 0, capacity);
  }
  atomic_init(&buf->refcount, 1u);
  ck_context_incref(ctx);
  buf->ctx = ctx;
  buf->wrapped = native != NULL;
  *out = buf;
  return CK_OK;
}

ck_status ck_buffer_new(ck_context *ctx, size_t capacity, ck_buffer **out) {
  if (ctx == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  *out = NULL;
  return ck__buffer_make(ctx, NULL, capacity, out);
}

ck_status ck_buffer_wrap(ck_context *ctx, void *native, size_t capacity,
                         void (*release)(void *arg), void *release_arg,
                         ck_buffer **out) {
  if (ctx == NULL || native == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  *out = NULL;
  if (capacity == 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "capacity must be > 0");
  }
  if (ctx->vt->wrap == NULL) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "%s contexts cannot wrap foreign memory (copy it into a "
                    "buffer instead)", ctx->vt->kind);
  }
  ck_status st = ck__buffer_make(ctx, native, capacity, out);
  if (st == CK_OK) {
    (*out)->release = release;
    (*out)->release_arg = release_arg;
  }
  return st;
}

void ck_buffer_incref(ck_buffer *buf) {
  if (buf != NULL) {
    atomic_fetch_add_explicit(&buf->refcount, 1u, memory_order_relaxed);
  }
}

void ck_buffer_decref(ck_buffer *buf) {
  if (buf != NULL &&
      atomic_fetch_sub_explicit(&buf->refcount, 1u, memory_order_release) == 1u) {
    atomic_thread_fence(memory_order_acquire);
    if (!buf->wrapped) {
      if (!ck__pool_give(buf->ctx, &buf->mem)) {
        buf->ctx->vt->free(buf->ctx, &buf->mem);
      }
    } else {
      if (buf->ctx->vt->unwrap != NULL) {
        buf->ctx->vt->unwrap(buf->ctx, &buf->mem);
      }
      if (buf->release != NULL) {
        buf->release(buf->release_arg);
      }
    }
    pthread_mutex_destroy(&buf->lock);
    ck__free(buf->free_list.v);
    ck__free(buf->allocs.v);
    ck_context_decref(buf->ctx);
    ck__free(buf);
  }
}

uint32_t ck_buffer_refcount(const ck_buffer *buf) {
  return buf == NULL ? 0u
                     : atomic_load_explicit(&((ck_buffer *)(uintptr_t)buf)->refcount,
                                            memory_order_relaxed);
}

ck_context *ck_buffer_context(const ck_buffer *buf) {
  return buf == NULL ? NULL : buf->ctx;
}

size_t ck_buffer_capacity(const ck_buffer *buf) {
  return buf == NULL ? 0 : buf->mem.size;
}

size_t ck_buffer_used(const ck_buffer *buf) { return buf == NULL ? 0 : buf->used; }

size_t ck_buffer_allocation_count(const ck_buffer *buf) {
  return buf == NULL ? 0 : buf->allocs.n;
}

size_t ck_buffer_free_block_count(const ck_buffer *buf) {
  return buf == NULL ? 0 : buf->free_list.n;
}

ck_status ck_buffer_ranges(ck_buffer *buf, ck_buffer_range_kind kind,
                           ck_buffer_range *out, size_t max, size_t *out_count) {
  if (buf == NULL || out_count == NULL || (out == NULL && max != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL buffer or output");
  }
  if (kind != CK_BUFFER_RANGES_ALLOCATED && kind != CK_BUFFER_RANGES_FREE) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "unknown range kind %d (CK_BUFFER_RANGES_ALLOCATED or _FREE)",
                    (int)kind);
  }
  pthread_mutex_lock(&buf->lock);
  const ck__ranges *r = kind == CK_BUFFER_RANGES_FREE ? &buf->free_list : &buf->allocs;
  for (size_t i = 0; i < r->n && i < max; i++) {
    out[i].offset = r->v[i].off;
    out[i].size = r->v[i].size;
  }
  *out_count = r->n;
  pthread_mutex_unlock(&buf->lock);
  return CK_OK;
}

void *ck_buffer_native_handle(const ck_buffer *buf) {
  return buf == NULL ? NULL : buf->mem.handle;
}

/* Grow with the lock held. */
static ck_status ck__grow_locked(ck_buffer *buf, size_t new_capacity) {
  size_t old = buf->mem.size;
  if (new_capacity == old) {
    return CK_OK;
  }
  if (buf->wrapped) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "a wrapped buffer cannot grow (capacity %zu, %zu needed)",
                    old, new_capacity);
  }
  ck_status st = ck__ranges_reserve(&buf->free_list, 1);
  if (st != CK_OK) {
    return st;
  }
  ck__devmem nm = {NULL, NULL, 0, false};
  st = buf->ctx->vt->alloc(buf->ctx, new_capacity, &nm);
  if (st != CK_OK) {
    return st;
  }
  if (old != 0) {
    st = buf->ctx->vt->copy_d2d(buf->ctx, &nm, 0, &buf->mem, 0, old);
    if (st != CK_OK) {
      buf->ctx->vt->free(buf->ctx, &nm);
      return st;
    }
  }
  buf->ctx->vt->free(buf->ctx, &buf->mem);
  buf->mem = nm;
  ck__free_insert(&buf->free_list, old, new_capacity - old);
  return CK_OK;
}

ck_status ck_buffer_grow(ck_buffer *buf, size_t new_capacity) {
  if (buf == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "buf must not be NULL");
  }
  pthread_mutex_lock(&buf->lock);
  ck_status st;
  if (new_capacity < buf->mem.size) {
    st = CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                  "new capacity %zu is smaller than the capacity %zu",
                  new_capacity, buf->mem.size);
  } else {
    st = ck__grow_locked(buf, new_capacity);
  }
  pthread_mutex_unlock(&buf->lock);
  return st;
}

/* First fit: index of the free block and the aligned start, or false. */
static bool ck__first_fit(const ck_buffer *buf, size_t size, size_t align,
                          size_t *out_i, size_t *out_start) {
  for (size_t i = 0; i < buf->free_list.n; i++) {
    const ck__range *r = &buf->free_list.v[i];
    size_t start = (r->off + align - 1) & ~(align - 1);
    if (start >= r->off && start - r->off <= r->size &&
        r->size - (start - r->off) >= size) {
      *out_i = i;
      *out_start = start;
      return true;
    }
  }
  return false;
}

ck_status ck_buffer_allocate(ck_buffer *buf, size_t size, size_t align,
                             size_t *out_offset) {
  if (buf == NULL || out_offset == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  if (size == 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "size must be > 0");
  }
  if (!ck__is_pow2(align) || align > CK_BUFFER_MAX_ALIGN) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "alignment %zu is not a power of two in [1, %d]", align,
                    CK_BUFFER_MAX_ALIGN);
  }
  size_t need;
  if (!ck__add_size(size, align, &need) || need > (SIZE_MAX >> 2)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "size %zu too large", size);
  }
  pthread_mutex_lock(&buf->lock);
  ck_status st = ck__ranges_reserve(&buf->free_list, 1);
  if (st == CK_OK) {
    st = ck__ranges_reserve(&buf->allocs, 1);
  }
  size_t i = 0, start = 0;
  if (st == CK_OK && !ck__first_fit(buf, size, align, &i, &start)) {
    size_t cap = buf->mem.size ? buf->mem.size : 64;
    do {
      if (cap > (SIZE_MAX >> 2)) {
        st = CK_ERROR(CK_ERR_OVERFLOW, "buffer cannot grow past %zu bytes", cap);
        break;
      }
      cap *= 2;
    } while (cap - buf->mem.size < need);
    if (st == CK_OK) {
      st = ck__grow_locked(buf, cap);
    }
    if (st == CK_OK && !ck__first_fit(buf, size, align, &i, &start)) {
      st = CK_ERROR(CK_ERR_INVALID_STATE, "no fit after growing (internal)");
    }
  }
  if (st == CK_OK) {
    /* Room: reserve guaranteed one extra free entry (split adds at most one). */
    ck__range r = buf->free_list.v[i];
    size_t pad = start - r.off;
    size_t tail = r.size - pad - size;
    if (pad != 0 && tail != 0) {
      buf->free_list.v[i].size = pad;
      ck__ranges_insert(&buf->free_list, i + 1, (ck__range){start + size, tail});
    } else if (pad != 0) {
      buf->free_list.v[i].size = pad;
    } else if (tail != 0) {
      buf->free_list.v[i] = (ck__range){start + size, tail};
    } else {
      ck__ranges_erase(&buf->free_list, i);
    }
    ck__ranges_insert(&buf->allocs, ck__ranges_lower(&buf->allocs, start),
                      (ck__range){start, size});
    buf->used += size;
    *out_offset = start;
  }
  pthread_mutex_unlock(&buf->lock);
  return st;
}

ck_status ck_buffer_free(ck_buffer *buf, size_t offset, size_t size) {
  if (buf == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "buf must not be NULL");
  }
  if (size == 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "size must be > 0");
  }
  pthread_mutex_lock(&buf->lock);
  ck_status st = CK_OK;
  size_t end;
  if (!ck__add_size(offset, size, &end) || end > buf->mem.size) {
    st = CK_ERROR(CK_ERR_INDEX,
                  "range [%zu, %zu + %zu) is outside the buffer's capacity %zu",
                  offset, offset, size, buf->mem.size);
    goto done;
  }
  size_t i = ck__ranges_lower(&buf->allocs, offset);
  if (i < buf->allocs.n && buf->allocs.v[i].off == offset &&
      buf->allocs.v[i].size == size) {
    st = ck__ranges_reserve(&buf->free_list, 1);
    if (st != CK_OK) {
      goto done;
    }
    ck__ranges_erase(&buf->allocs, i);
    ck__free_insert(&buf->free_list, offset, size);
    buf->used -= size;
    goto done;
  }
  /* Not an allocation: explain. */
  size_t f = ck__ranges_lower(&buf->free_list, offset + 1);
  if (f > 0) {
    const ck__range *r = &buf->free_list.v[f - 1];
    if (offset >= r->off && end <= r->off + r->size) {
      st = CK_ERROR(CK_ERR_INVALID_STATE,
                    "range [%zu, %zu) is already free (double free?)", offset,
                    end);
      goto done;
    }
  }
  st = CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                "range [%zu, %zu) is not an allocation of this buffer "
                "(free takes the exact offset and size allocated)",
                offset, end);
done:
  pthread_mutex_unlock(&buf->lock);
  return st;
}

static ck_status ck__check_range(const ck_buffer *buf, size_t offset, size_t n,
                                 const char *func) {
  size_t end;
  if (!ck__add_size(offset, n, &end) || end > buf->mem.size) {
    return ck__error(CK_ERR_INDEX, func,
                     "range [%zu, %zu + %zu) is outside the buffer's capacity %zu",
                     offset, offset, n, buf->mem.size);
  }
  return CK_OK;
}

ck_status ck_buffer_write(ck_buffer *buf, size_t offset, const void *host_src,
                          size_t n) {
  if (buf == NULL || (host_src == NULL && n != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  pthread_mutex_lock(&buf->lock);
  ck_status st = ck__check_range(buf, offset, n, __func__);
  if (st == CK_OK && n != 0) {
    st = buf->ctx->vt->copy_h2d(buf->ctx, &buf->mem, offset, host_src, n);
  }
  pthread_mutex_unlock(&buf->lock);
  return st;
}

ck_status ck_buffer_read(ck_buffer *buf, size_t offset, void *host_dst,
                         size_t n) {
  if (buf == NULL || (host_dst == NULL && n != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  pthread_mutex_lock(&buf->lock);
  ck_status st = ck__check_range(buf, offset, n, __func__);
  if (st == CK_OK && n != 0) {
    st = buf->ctx->vt->copy_d2h(buf->ctx, host_dst, &buf->mem, offset, n);
  }
  pthread_mutex_unlock(&buf->lock);
  return st;
}

ck_status ck_buffer_copy(ck_buffer *dst, size_t dst_offset, ck_buffer *src,
                         size_t src_offset, size_t n) {
  if (dst == NULL || src == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "buffers must not be NULL");
  }
  if (dst->ctx != src->ctx) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "buffers belong to different contexts (%s and %s); copy "
                    "through the host", ck_context_kind(dst->ctx),
                    ck_context_kind(src->ctx));
  }
  /* Lock order: by address. */
  ck_buffer *first = dst < src ? dst : src, *second = dst < src ? src : dst;
  pthread_mutex_lock(&first->lock);
  if (second != first) {
    pthread_mutex_lock(&second->lock);
  }
  ck_status st = ck__check_range(dst, dst_offset, n, __func__);
  if (st == CK_OK) {
    st = ck__check_range(src, src_offset, n, __func__);
  }
  if (st == CK_OK && dst == src && n != 0 && dst_offset < src_offset + n &&
      src_offset < dst_offset + n) {
    st = CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                  "source [%zu, %zu) and destination [%zu, %zu) overlap in one "
                  "buffer", src_offset, src_offset + n, dst_offset,
                  dst_offset + n);
  }
  if (st == CK_OK && n != 0) {
    st = dst->ctx->vt->copy_d2d(dst->ctx, &dst->mem, dst_offset, &src->mem,
                                src_offset, n);
  }
  if (second != first) {
    pthread_mutex_unlock(&second->lock);
  }
  pthread_mutex_unlock(&first->lock);
  return st;
}

ck_status ck_buffer_fill(ck_buffer *buf, size_t offset, const void *pattern,
                         size_t pattern_size, size_t n) {
  if (buf == NULL || pattern == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  if (!ck__is_pow2(pattern_size) || pattern_size > 128) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "pattern size %zu is not one of 1, 2, 4, ..., 128",
                    pattern_size);
  }
  if (offset % pattern_size != 0 || n % pattern_size != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "offset %zu and size %zu must be multiples of the pattern "
                    "size %zu", offset, n, pattern_size);
  }
  pthread_mutex_lock(&buf->lock);
  ck_status st = ck__check_range(buf, offset, n, __func__);
  if (st == CK_OK && n != 0) {
    st = buf->ctx->vt->fill(buf->ctx, &buf->mem, offset, pattern, pattern_size,
                            n);
  }
  pthread_mutex_unlock(&buf->lock);
  return st;
}

ck_status ck_buffer_host_pointer(ck_buffer *buf, void **out) {
  if (buf == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  *out = NULL;
  if (!buf->ctx->host_accessible) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "buffers of this %s context are not host accessible (use "
                    "ck_buffer_read/write)", ck_context_kind(buf->ctx));
  }
  pthread_mutex_lock(&buf->lock);
  ck_status st = buf->ctx->vt->finish(buf->ctx);
  *out = buf->mem.host;
  pthread_mutex_unlock(&buf->lock);
  return st;
}

static void ck__buffer_release_cb(void *object) { ck_buffer_decref(object); }

ck_status ck_buffer_memblock(ck_buffer *buf, ck_memblock **out) {
  if (buf == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  ck_status st = ck_external_memblock_new(buf, ck__buffer_release_cb, out);
  if (st == CK_OK) {
    ck_buffer_incref(buf);
  }
  return st;
}
