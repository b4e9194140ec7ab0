/*
 * ckernel/parallel.h -- the library's parallel outer loop.
 *
 * A small pthread pool splits a range [0, n) into chunks that the calling
 * thread and up to (num_threads - 1) workers claim dynamically.  Lifted
 * kernels use it for their outermost dimension; user code may call it too.
 *
 * Rules
 *   - `fn(ctx, begin, end, thread_index)` processes [begin, end).  The same
 *     `thread_index` (0 = the calling thread, < the thread count) is never
 *     used by two threads at once during one call, so per-thread scratch
 *     (e.g. one string arena per thread) can be indexed by it.
 *   - If any call of `fn` fails, the first failure's status and message are
 *     returned to the caller (its message is set in the caller's
 *     ck_last_error), and the other threads stop claiming chunks.
 *   - Calls made from inside a worker (nested parallelism), calls made while
 *     another thread is using the pool, and ranges smaller than 2*min_chunk
 *     run serially on the calling thread (thread_index 0): correct, never a
 *     deadlock.
 *
 * Process-wide state: the pool (created lazily, protected by a mutex) and the
 * thread count (atomic; initialised by ck_default_num_threads: the first of
 * CK_NUM_THREADS, OMP_NUM_THREADS, NUMBA_NUM_THREADS that holds a positive
 * whole number, else the number of CPUs the process may run on: its affinity
 * mask, as `taskset` or a container's cpuset sets it).
 *
 * Fork safety (pthread_atfork): fork() waits for a parallel loop running on
 * another thread to finish; the child starts with no worker threads and
 * creates new ones for its first parallel loop; the parent's pool goes on
 * unchanged.  (os.fork, multiprocessing's fork start method.)
 */
#ifndef CKERNEL_PARALLEL_H
#define CKERNEL_PARALLEL_H

#include "ckernel/config.h"
#include "ckernel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CK_MAX_THREADS = 64 };

typedef ck_status (*ck_parallel_fn)(void *ctx, size_t begin, size_t end,
                                    unsigned thread_index);

/* Run fn over [0, n) in chunks of at least `min_chunk` (0 means 1). */
CK_API ck_status ck_parallel_for(size_t n, size_t min_chunk, ck_parallel_fn fn,
                                 void *ctx);

/* The number of threads (caller included) a parallel loop may use. */
CK_API unsigned ck_get_num_threads(void);

/* Set it: 1..CK_MAX_THREADS; 0 restores the default (ck_default_num_threads). */
CK_API ck_status ck_set_num_threads(unsigned n);

/* The default thread count, read now: the first of the environment variables
 * CK_NUM_THREADS, OMP_NUM_THREADS (its first entry: "4,2" is 4) and
 * NUMBA_NUM_THREADS that holds a positive whole number (blanks around it
 * allowed; above CK_MAX_THREADS means CK_MAX_THREADS), else the number of
 * CPUs in the affinity mask.  `*source` (may be NULL) is set to the name of
 * the variable used, or "cpus" (a static string).  A variable that is set
 * but not such a number ("abc", "2x", "1e3", "0") is skipped: *n and *source
 * are still the default, and the status is CK_ERR_INVALID_ARGUMENT with a
 * message naming the first skipped variable and its value, for the caller
 * to show (the library never prints). */
CK_API ck_status ck_default_num_threads(unsigned *n, const char **source);

/* Stop and join the pool's worker threads (they restart on demand).  Must not
 * be called from inside a parallel loop. */
CK_API ck_status ck_thread_pool_shutdown(void);

/* Worker threads currently running (for tests). */
CK_API unsigned ck_thread_pool_size(void);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_PARALLEL_H */
