/* alloc.c -- the library's single allocation entry point (see debug.h). */
#include "core/core_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
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

/*
 * Retained mappings.  A page mapping written once is faulted in page by page
 * (a fault and a cleared page per 4 KiB); a kernel writing a large string
 * result into fresh arena chunks on every call spends a good part of its
 * time there.  The mappings of freed arena chunks whose bytes need not read
 * as zero (ck__unmap_retain) are kept, a few and a bounded total, for the
 * next such chunk (ck__map_reuse), as malloc keeps freed pages.  Their
 * bytes are whatever the last owner wrote.
 */
enum {
  CK__RETAIN_SLOTS = 8,
  CK__RETAIN_TOTAL = 32 << 20, /* bytes kept at most, all mappings together */
  CK__RETAIN_MAX = 16 << 20    /* a larger mapping is unmapped            */
};
static pthread_mutex_t ck__retain_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *p;
  size_t size;
} ck__retained[CK__RETAIN_SLOTS];
static size_t ck__retained_bytes;

void *ck__map_reuse(size_t need, size_t *size, const char *func) {
  size_t want = *size;
  void *p = NULL;
  pthread_mutex_lock(&ck__retain_lock);
  /* the smallest of those in [want, 2 want], else the largest of those in
   * [need, want): an arena's last chunk comes back trimmed to what it used,
   * which is what the same work needs of it next time */
  int best = -1;
  bool best_fits = false;
  for (int i = 0; i < CK__RETAIN_SLOTS; i++) {
    size_t n = ck__retained[i].size;
    if (ck__retained[i].p == NULL || n < need) {
      continue;
    }
    bool fits = n >= want && n / 2 <= want;
    if (fits ? !best_fits || n < ck__retained[best].size
             : !best_fits && n < want && (best < 0 || n > ck__retained[best].size)) {
      best = i;
      best_fits = fits;
    }
  }
  if (best >= 0) {
    p = ck__retained[best].p;
    *size = ck__retained[best].size;
    ck__retained_bytes -= *size;
    ck__retained[best].p = NULL;
    ck__retained[best].size = 0;
  }
  pthread_mutex_unlock(&ck__retain_lock);
  if (p != NULL) {
    if (ck__alloc_should_fail()) { /* counted as any allocation */
      ck__unmap_retain(p, *size);
      return ck_nomem(func, need);
    }
    return p;
  }
  return ck__map(want, func);
}

void ck__unmap_retain(void *p, size_t size) {
  if (p == NULL || size == 0) {
    return;
  }
  if (size <= CK__RETAIN_MAX) {
    pthread_mutex_lock(&ck__retain_lock);
    for (int i = 0; i < CK__RETAIN_SLOTS; i++) {
      if (ck__retained[i].p == NULL && ck__retained_bytes + size <= CK__RETAIN_TOTAL) {
        ck__retained[i].p = p;
        ck__retained[i].size = size;
        ck__retained_bytes += size;
        p = NULL;
        break;
      }
    }
    pthread_mutex_unlock(&ck__retain_lock);
  }
  if (p != NULL) {
    munmap(p, size);
  }
}

void ck__free(void *p) { free(p); }
