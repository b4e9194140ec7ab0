/* bench_memory.c -- the memory core against its plain-C alternatives.
 *
 *  1. incref+decref pair (inline, and through the exported symbol as FFI
 *     callers use it) vs a plain C11 atomic add+sub pair on a uint32.
 *  2. small-string building through the pod allocator (one arena, freed at
 *     once) vs malloc + free per string.
 * Ratios > 1 mean ckernel is slower than the baseline. */
#include "bench.h"
#include "ckernel/ckernel.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { REPS = 5 };

static void bench_refcount(void) {
  const long n = 50 * 1000 * 1000;
  ck_memblock *mb;
  if (ck_pod_memblock_new(0, &mb) != CK_OK) {
    exit(1);
  }
  static _Atomic uint32_t plain = 1;
  double t_plain, t_inline, t_symbol;
  BENCH_BEST(REPS, n, t_plain, {
    for (long i = 0; i < n; i++) {
      atomic_fetch_add_explicit(&plain, 1u, memory_order_relaxed);
      atomic_fetch_sub_explicit(&plain, 1u, memory_order_release);
    }
  });
  BENCH_BEST(REPS, n, t_inline, {
    for (long i = 0; i < n; i++) {
      ck_memblock_incref(mb);
      ck_memblock_decref(mb);
    }
  });
  void (*volatile inc)(ck_memblock *) = ck_memblock_incref;
  void (*volatile dec)(ck_memblock *) = ck_memblock_decref;
  BENCH_BEST(REPS, n, t_symbol, {
    for (long i = 0; i < n; i++) {
      inc(mb);
      dec(mb);
    }
  });
  bench_report("incref+decref (inline)", t_inline, "atomic add+sub", t_plain);
  bench_report("incref+decref (exported symbol)", t_symbol, "atomic add+sub", t_plain);
  ck_memblock_decref(mb);
}

static void bench_strings(void) {
  enum { N = 1000 * 1000 };
  static unsigned short lens[N];
  static char *ptrs[N];
  char text[64];
  memset(text, 'x', sizeof text);
  unsigned s = 12345;
  size_t payload = 0;
  for (int i = 0; i < N; i++) {
    s = s * 1103515245u + 12345u;
    lens[i] = (unsigned short)(1 + (s >> 16) % 40);
    payload += lens[i];
  }
  double t_pod, t_malloc;
  ck_pod_stats st = {0};
  BENCH_BEST(REPS, N, t_pod, {
    ck_memblock *mb;
    if (ck_pod_memblock_new(0, &mb) != CK_OK) exit(1);
    const ck_pod_allocator_api *api = ck_memblock_pod_allocator_api(mb);
    for (int i = 0; i < N; i++) {
      char *b, *e;
      if (api->allocate(mb, lens[i], 1, &b, &e) != CK_OK) exit(1);
      memcpy(b, text, lens[i]);
      ptrs[i] = b;
    }
    api->finalize(mb);
    ck_pod_memblock_stats(mb, &st);
    ck_memblock_decref(mb);
  });
  BENCH_BEST(REPS, N, t_malloc, {
    for (int i = 0; i < N; i++) {
      ptrs[i] = malloc(lens[i]);
      if (ptrs[i] == NULL) exit(1);
      memcpy(ptrs[i], text, lens[i]);
    }
    for (int i = 0; i < N; i++) {
      free(ptrs[i]);
    }
  });
  double t_pod_only, t_malloc_only;
  BENCH_BEST(REPS, N, t_pod_only, {
    ck_memblock *mb;
    if (ck_pod_memblock_new(0, &mb) != CK_OK) exit(1);
    for (int i = 0; i < N; i++) {
      char *b, *e;
      if (ck_pod_allocate(mb, lens[i], 1, &b, &e) != CK_OK) exit(1);
      ptrs[i] = b;
    }
    ck_memblock_decref(mb);
  });
  BENCH_BEST(REPS, N, t_malloc_only, {
    for (int i = 0; i < N; i++) {
      ptrs[i] = malloc(lens[i]);
      if (ptrs[i] == NULL) exit(1);
    }
    for (int i = 0; i < N; i++) {
      free(ptrs[i]);
    }
  });
  bench_report("1M small strings: pod alloc only", t_pod_only, "malloc+free",
               t_malloc_only);
  bench_report("1M small strings: pod alloc+copy", t_pod, "malloc+copy+free",
               t_malloc);
  printf("    pod arena: payload %zu B, used %zu B, capacity %zu B in %zu chunks "
         "(%.3f B held per payload byte)\n",
         payload, st.used, st.capacity, st.chunks, (double)st.capacity / (double)payload);
}

int main(void) {
  printf("ckernel %s memory-core benchmarks (best of %d)\n", ck_version_string(), REPS);
  bench_refcount();
  bench_strings();
  return 0;
}
