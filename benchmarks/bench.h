/* bench.h -- timing helpers shared by the C benchmarks.
 * Each measurement is the best of `reps` runs (least disturbed by the rest
 * of the machine), in nanoseconds per operation. */
#ifndef CK_BENCH_H
#define CK_BENCH_H

#include <stdio.h>
#include <time.h>

static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best-of-`reps` ns/op of `body`, which performs `ops` operations. */
#define BENCH_BEST(reps, ops, result, ...)                                    \
  do {                                                                         \
    double best_ = 1e300;                                                      \
    for (int rep_ = 0; rep_ < (reps); rep_++) {                                \
      double t0_ = bench_now_ns();                                             \
      __VA_ARGS__;                                                             \
      double dt_ = (bench_now_ns() - t0_) / (double)(ops);                     \
      if (dt_ < best_) best_ = dt_;                                            \
    }                                                                          \
    (result) = best_;                                                          \
  } while (0)

static inline void bench_report(const char *name, double ns, const char *base_name,
                                double base_ns) {
  printf("%-44s %9.2f ns/op   %-28s %9.2f ns/op   ratio %.2fx\n", name, ns,
         base_name, base_ns, ns / base_ns);
}

#endif
