/* bench_kernels.c -- ckernels against their plain-C alternatives.
 *
 *  1. contiguous int32 copy through the assignment kernel vs memcpy;
 *  2. int32 -> float64 conversion kernel vs a plain C loop;
 *  3. building + calling + destroying a small kernel (no heap allocation)
 *     vs calling the same entry point directly.
 * Ratios > 1 mean the ckernel path is slower than the baseline. */
#include "bench.h"
#include "ckernel/ckernel.h"

#include <stdlib.h>
#include <string.h>

enum { REPS = 7, N = 10 * 1000 * 1000 };

static ck_prefix *build(ck_kernel_builder *ckb, ck_type_id dst, ck_type_id src) {
  size_t end;
  ck_kernel_builder_init(ckb);
  if (ck_make_builtin_assignment_kernel(ckb, 0, dst, src, CK_KERNEL_REQUEST_STRIDED,
                                        CK_ERRMODE_NOCHECK, &end) != CK_OK) {
    fprintf(stderr, "%s\n", ck_last_error());
    exit(1);
  }
  return ck_kernel_builder_get(ckb, 0);
}

int main(void) {
  printf("ckernel %s kernel benchmarks (best of %d, %d elements)\n", ck_version_string(),
         REPS, N);
  int32_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  double *d = malloc(N * sizeof *d);
  if (!a || !b || !d) return 1;
  for (int i = 0; i < N; i++) a[i] = i * 7;
  memset(b, 0, N * sizeof *b);
  memset(d, 0, N * sizeof *d);

  ck_kernel_builder ckb;
  ck_prefix *k = build(&ckb, CK_TYPE_INT32, CK_TYPE_INT32);
  ck_expr_strided_t fn = ck_prefix_strided(k);
  const char *src[1] = {(const char *)a};
  intptr_t ss[1] = {4};
  double t_k, t_memcpy;
  BENCH_BEST(REPS, N, t_k, fn((char *)b, 4, src, ss, N, k));
  BENCH_BEST(REPS, N, t_memcpy, memcpy(b, a, N * sizeof *a));
  bench_report("int32 copy kernel (contiguous)", t_k, "memcpy", t_memcpy);
  ck_kernel_builder_destroy(&ckb);

  k = build(&ckb, CK_TYPE_FLOAT64, CK_TYPE_INT32);
  fn = ck_prefix_strided(k);
  double t_conv, t_loop;
  BENCH_BEST(REPS, N, t_conv, fn((char *)d, 8, src, ss, N, k));
  BENCH_BEST(REPS, N, t_loop, {
    for (int i = 0; i < N; i++) d[i] = (double)a[i];
    __asm__ volatile("" ::"r"(d) : "memory");
  });
  bench_report("int32->float64 kernel", t_conv, "plain C loop", t_loop);
  ck_kernel_builder_destroy(&ckb);

  /* Build + call + destroy on one element, vs calling the leaf directly. */
  enum { M = 2 * 1000 * 1000 };
  uint64_t allocs = ck_debug_alloc_count();
  double t_build, t_direct;
  BENCH_BEST(REPS, M, t_build, {
    for (int i = 0; i < M; i++) {
      ck_kernel_builder kb;
      ck_prefix *p = build(&kb, CK_TYPE_FLOAT64, CK_TYPE_INT32);
      ck_prefix_strided(p)((char *)d, 8, src, ss, 1, p);
      ck_kernel_builder_destroy(&kb);
    }
  });
  k = build(&ckb, CK_TYPE_FLOAT64, CK_TYPE_INT32);
  fn = ck_prefix_strided(k);
  ck_expr_strided_t volatile vfn = fn;
  BENCH_BEST(REPS, M, t_direct, {
    for (int i = 0; i < M; i++) vfn((char *)d, 8, src, ss, 1, k);
  });
  ck_kernel_builder_destroy(&ckb);
  bench_report("build+call+destroy small kernel", t_build, "call only", t_direct);
  printf("    heap allocations while building %d kernels: %llu\n", REPS * M + 1,
         (unsigned long long)(ck_debug_alloc_count() - allocs));
  free(a);
  free(b);
  free(d);
  return 0;
}
