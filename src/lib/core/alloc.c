/* alloc.c -- the library's single allocation entry point (see debug.h). */
#include "core/core_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Process-wide, atomic (documented in debug.h). */
static atomic_uint_fast64_t ck_alloc_attempts;
static atomic_uint_fast64_t ck_fail_countdown; /* 0 = disarmed */
static atomic_bool ck_fail_fired;

uint64_t ck_debug_alloc_count(void) {
  return (uint64_t)atomic_load_explicit(&ck_alloc_attempts, memory_order_relaxed);
}

void ck_debug_fail_alloc_after(uint64_t k) {
  atomic_store(&ck_fail_fired, false);
  atomic_store(&ck_fail_countdown, k);
}

bool ck_debug_fail_alloc_fired(void) { return atomic_load(&ck_fail_fired); }

/* Counts the attempt; true if this attempt must fail. */
static bool ck__alloc_should_fail(void) {
  atomic_fetch_add_explicit(&ck_alloc_attempts, 1, memory_order_relaxed);
  uint_fast64_t c = atomic_load_explicit(&ck_fail_countdown, memory_order_relaxed);
  while (c != 0) {
    if (atomic_compare_exchange_weak(&ck_fail_countdown, &c, c - 1)) {
      if (c == 1) {
        atomic_store(&ck_fail_fired, true);
        return true;
      }
      return false;
    }
  }
  return false;
}

static void *ck_nomem(const char *func, size_t size) {
  ck__error(CK_ERR_NO_MEMORY, func, "out of memory allocating %zu bytes", size);
  return NULL;
}

void *ck__malloc(size_t size, const char *func) {
  void *p = ck__alloc_should_fail() ? NULL : malloc(size ? size : 1);
  return p ? p : ck_nomem(func, size);
}

void *ck__calloc(size_t n, size_t size, const char *func) {
  void *p = ck__alloc_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
  return p ? p : ck_nomem(func, n * size);
}

void *ck__realloc(void *old, size_t size, const char *func) {
  void *p = ck__alloc_should_fail() ? NULL : realloc(old, size ? size : 1);
  return p ? p : ck_nomem(func, size);
}

void *ck__aligned_alloc(size_t align, size_t size, const char *func) {
  void *p = NULL;
  if (align < sizeof(void *)) {
    align = sizeof(void *);
  }
  if (!ck__alloc_should_fail() && posix_memalign(&p, align, size ? size : 1) != 0) {
    p = NULL;
  }
  return p ? p : ck_nomem(func, size);
}

size_t ck__page_size(void) {
  static atomic_size_t cached;
  size_t ps = atomic_load_explicit(&cached, memory_order_relaxed);
  if (ps == 0) {
    long v = sysconf(_SC_PAGESIZE);
    ps = v > 0 ? (size_t)v : 4096;
    atomic_store_explicit(&cached, ps, memory_order_relaxed);
  }
  return ps;
}

void *ck__map(size_t size, const char *func) {
  if (ck__alloc_should_fail()) {
    return ck_nomem(func, size);
  }
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    return ck_nomem(func, size);
  }
#ifdef MADV_HUGEPAGE
  /* large arena chunks (an imported column's string slots, say) are written
   * right away: transparent huge pages make that tens of page faults instead
   * of thousands (advice only, as for array data in array.c) */
  if (size >= ((size_t)4 << 20)) {
    (void)madvise(p, size, MADV_HUGEPAGE);
  }
#endif
  return p;
}

void ck__unmap(void *p, size_t size) {
  if (p != NULL && size != 0) {
    munmap(p, size);
  }
}

/* The spare mappings (see core_internal.h), guarded by ck__spare_lock. */
static pthread_mutex_t ck__spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *p;
  size_t size;
} ck__spares[CK__SPARE_SLOTS];
static size_t ck__spare_count;
static size_t ck__spare_total;

void *ck__map_spare(size_t size, size_t *got, const char *func) {
  void *p = NULL;
  size_t have = 0;
  if (ck__alloc_should_fail()) { /* counted and failed as ck__map is */
    return ck_nomem(func, size);
  }
  (void)pthread_mutex_lock(&ck__spare_lock);
  size_t best = CK__SPARE_SLOTS;
  for (size_t i = 0; i < ck__spare_count; i++) {
    size_t s = ck__spares[i].size;
    if (s >= size && s / 2 <= size &&
        (best == CK__SPARE_SLOTS || s < ck__spares[best].size)) {
      best = i;
    }
  }
  if (best != CK__SPARE_SLOTS) {
    p = ck__spares[best].p;
    have = ck__spares[best].size;
    ck__spare_total -= have;
    ck__spare_count--;
    memmove(&ck__spares[best], &ck__spares[best + 1],
            (ck__spare_count - best) * sizeof ck__spares[0]); /* oldest first */
  }
  (void)pthread_mutex_unlock(&ck__spare_lock);
  if (p != NULL) {
    *got = have;
    return p;
  }
  p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return ck_nomem(func, size);
  }
#ifdef MADV_HUGEPAGE
  if (size >= ((size_t)4 << 20)) {
    (void)madvise(p, size, MADV_HUGEPAGE); /* as in ck__map */
  }
#endif
  *got = size;
  return p;
}

void ck__unmap_spare(void *p, size_t size) {
  if (p == NULL || size == 0) {
    return;
  }
  if (size > CK__SPARE_BYTES / 2) {
    munmap(p, size);
    return;
  }
  /* The newest is kept: the oldest spares make room for it (a loop reuses
   * what it released last; sizes nobody asks for again age out). */
  struct {
    void *p;
    size_t size;
  } evicted[CK__SPARE_SLOTS];
  size_t n_evicted = 0;
  (void)pthread_mutex_lock(&ck__spare_lock);
  while (ck__spare_count == CK__SPARE_SLOTS || size > CK__SPARE_BYTES - ck__spare_total) {
    evicted[n_evicted].p = ck__spares[0].p;
    evicted[n_evicted].size = ck__spares[0].size;
    n_evicted++;
    ck__spare_total -= ck__spares[0].size;
    ck__spare_count--;
    memmove(&ck__spares[0], &ck__spares[1], ck__spare_count * sizeof ck__spares[0]);
  }
  ck__spares[ck__spare_count].p = p;
  ck__spares[ck__spare_count].size = size;
  ck__spare_count++;
  ck__spare_total += size;
  (void)pthread_mutex_unlock(&ck__spare_lock);
  for (size_t i = 0; i < n_evicted; i++) { /* outside the lock */
    munmap(evicted[i].p, evicted[i].size);
  }
}

void ck__free(void *p) { free(p); }
