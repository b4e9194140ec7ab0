/*
 * parallel.c -- running a loop's kernel on one run of elements, split over
 * the library's thread pool when that pays.
 *
 * NumPy hands a loop one long run for contiguous (or coalescable) operands.
 * A run whose output elements are independent (output stride != 0, no input
 * overlapping the output except exactly in place: not a reduction or an
 * accumulation) and that has more than one library thread
 * (ck_set_num_threads / CK_NUM_THREADS) is timed on its first
 * CKD_PROBE_ELEMENTS elements; if the rest would take at least the parallel
 * threshold (set_parallel_min_time, default 100 us) it is split over the
 * library's pool (ck_parallel_for) in chunks of about 20 us of work,
 * otherwise it runs on.  So cheap kernels on mid-sized arrays do not pay for
 * waking threads and costly kernels are split early.  Floating-point flags
 * raised on the workers are re-raised on the calling thread, so NumPy's
 * errstate sees them as in a serial run.
 */
#include "ufuncs_internal.h"

#include <fenv.h>
#include <stdatomic.h>
#include <time.h>

/* The work per chunk of a split run (ns). */
#define CKD_CHUNK_NS 20000.0

/* Split a run when its estimated serial time is at least this (ns). */
static _Atomic int64_t ckd_parallel_min_ns = 100000;

void ckd_set_parallel_min_ns(int64_t ns) { atomic_store(&ckd_parallel_min_ns, ns); }
int64_t ckd_get_parallel_min_ns(void) { return atomic_load(&ckd_parallel_min_ns); }

typedef struct {
  ckd_loop *loop;
  char *dst;
  intptr_t dst_stride;
  const char *const *src;
  const intptr_t *src_stride;
  atomic_int fpe; /* FE_* flags raised on worker threads */
} ckd_par;

static ck_status ckd_par_chunk(void *vctx, size_t begin, size_t end, unsigned thread) {
  ckd_par *c = vctx;
  ckd_loop *L = c->loop;
  const char *src[CKD_MAX_NIN];
  for (int j = 0; j < L->nin; j++) {
    src[j] = c->src[j] + (intptr_t)begin * c->src_stride[j];
  }
  if (thread != 0) {
    feclearexcept(FE_ALL_EXCEPT);
  }
  ck_status st = L->strided(c->dst + (intptr_t)begin * c->dst_stride, c->dst_stride,
                            src, c->src_stride, end - begin, L->kernel);
  if (st != CK_OK) {
    ck_error_offset_element((int64_t)begin); /* error.h: within the whole run */
  }
  if (thread != 0) {
    int flags = fetestexcept(FE_ALL_EXCEPT);
    if (flags != 0) {
      atomic_fetch_or(&c->fpe, flags);
    }
  }
  return st;
}

/* The [lo, hi) byte range of a strided run. */
static void ckd_span(const char *p, intptr_t stride, npy_intp n, npy_intp itemsize,
                     uintptr_t *lo, uintptr_t *hi) {
  intptr_t ext = stride * (intptr_t)(n - 1);
  uintptr_t a = (uintptr_t)p, b = (uintptr_t)(p + ext);
  *lo = a < b ? a : b;
  *hi = (a < b ? b : a) + (uintptr_t)itemsize;
}

/* May the run be split into independent pieces?  Not when every element
 * writes one place (reductions) or when an input overlaps the output other
 * than exactly in place (accumulate reads what the previous element wrote). */
int ckd_splittable(const ckd_loop *L, char *const *data, const npy_intp *strides,
                   npy_intp n) {
  int nin = L->nin;
  if (strides[nin] == 0) {
    return 0;
  }
  uintptr_t dlo, dhi;
  ckd_span(data[nin], strides[nin], n, L->itemsize[nin], &dlo, &dhi);
  for (int j = 0; j < nin; j++) {
    if (data[j] == data[nin] && strides[j] == strides[nin] &&
        L->itemsize[j] == L->itemsize[nin]) {
      continue; /* in place */
    }
    uintptr_t lo, hi;
    ckd_span(data[j], strides[j], n, L->itemsize[j], &lo, &hi);
    if (lo < dhi && dlo < hi) {
      return 0;
    }
  }
  return 1;
}

static int64_t ckd_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Run the rest of a probed run, [CKD_PROBE_ELEMENTS, n), on the pool. */
static ck_status ckd_run_parallel(ckd_loop *L, char *const *data, const intptr_t *ss,
                                  size_t n, double ns_per_element, int64_t min_ns) {
  int nin = L->nin;
  const char *src[CKD_MAX_NIN];
  for (int j = 0; j < nin; j++) {
    src[j] = data[j] + CKD_PROBE_ELEMENTS * ss[j];
  }
  double chunk_ns = (double)min_ns / 4 < CKD_CHUNK_NS ? (double)min_ns / 4 : CKD_CHUNK_NS;
  double chunk = chunk_ns / ns_per_element;
  size_t min_chunk = chunk < 256.0 ? 256 : chunk > (double)n ? n : (size_t)chunk;
  ckd_par c = {L, data[nin] + CKD_PROBE_ELEMENTS * ss[nin], ss[nin], src, ss, 0};
  atomic_init(&c.fpe, 0);
  ck_status st = ck_parallel_for(n - CKD_PROBE_ELEMENTS, min_chunk, ckd_par_chunk, &c);
  int flags = atomic_load(&c.fpe);
  if (flags != 0) {
    feraiseexcept(flags);
  }
  return st;
}

ck_status ckd_run(ckd_loop *L, char *const *data, npy_intp n, const npy_intp *strides) {
  if (n <= 0) {
    return CK_OK;
  }
  int nin = L->nin;
  const char *const *src = (const char *const *)data;
  const intptr_t *ss = (const intptr_t *)strides;
  if (n < 2 * CKD_PROBE_ELEMENTS || ck_get_num_threads() <= 1 ||
      !ckd_splittable(L, data, strides, n)) {
    return L->strided(data[nin], strides[nin], src, ss, (size_t)n, L->kernel);
  }
  /* Time the first elements, then decide whether the rest is worth the
   * pool. */
  int64_t t0 = ckd_now_ns();
  ck_status st = L->strided(data[nin], strides[nin], src, ss, CKD_PROBE_ELEMENTS, L->kernel);
  int64_t dt = ckd_now_ns() - t0;
  if (st != CK_OK) {
    return st;
  }
  double per = (double)(dt > 0 ? dt : 1) / CKD_PROBE_ELEMENTS;
  int64_t min_ns = atomic_load_explicit(&ckd_parallel_min_ns, memory_order_relaxed);
  size_t rest = (size_t)n - CKD_PROBE_ELEMENTS;
  if (per * (double)rest >= (double)min_ns) {
    return ckd_run_parallel(L, data, ss, (size_t)n, per, min_ns);
  }
  const char *rsrc[CKD_MAX_NIN];
  for (int j = 0; j < nin; j++) {
    rsrc[j] = data[j] + CKD_PROBE_ELEMENTS * ss[j];
  }
  st = L->strided(data[nin] + CKD_PROBE_ELEMENTS * ss[nin], ss[nin], rsrc, ss, rest,
                  L->kernel);
  if (st != CK_OK) {
    ck_error_offset_element(CKD_PROBE_ELEMENTS);
  }
  return st;
}
