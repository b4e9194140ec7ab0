/* parallel.c -- the pthread pool behind ck_parallel_for (see parallel.h). */
#include "core/core_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CK_JOB_MSG = 1024 };

typedef struct ck_job {
  ck_parallel_fn fn;
  void *ctx;
  size_t n;
  size_t chunk;
  unsigned workers_wanted;     /* workers with index < this take part      */
  atomic_size_t next;          /* first index not yet claimed              */
  atomic_bool stop;            /* set by the first failure                 */
  atomic_int status;           /* first failure's status (CK_OK if none)   */
  char msg[CK_JOB_MSG];        /* its message, written by the winner only  */
} ck_job;

/* The pool.  `lock` protects every field; `job_lock` serialises jobs (a
 * caller that cannot take it runs serially instead of waiting). */
static struct {
  pthread_mutex_t lock;
  pthread_mutex_t job_lock;
  pthread_cond_t work_cv;
  pthread_cond_t done_cv;
  pthread_t threads[CK_MAX_THREADS];
  uint64_t start_generation[CK_MAX_THREADS]; /* generation when started */
  unsigned nworkers;
  uint64_t generation;
  ck_job *job;
  unsigned active;
  bool shutdown;
} ck_pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
             .job_lock = PTHREAD_MUTEX_INITIALIZER,
             .work_cv = PTHREAD_COND_INITIALIZER,
             .done_cv = PTHREAD_COND_INITIALIZER};

static atomic_uint ck_num_threads; /* 0 = not yet initialised */
static _Thread_local bool ck_in_worker;

static unsigned ck__default_threads(void) {
  const char *env = getenv("CK_NUM_THREADS");
  if (env != NULL && *env != '\0') {
    char *endp;
    long v = strtol(env, &endp, 10);
    if (*endp == '\0' && v >= 1) {
      return v > CK_MAX_THREADS ? CK_MAX_THREADS : (unsigned)v;
    }
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) {
    cpus = 1;
  }
  return cpus > CK_MAX_THREADS ? CK_MAX_THREADS : (unsigned)cpus;
}

unsigned ck_get_num_threads(void) {
  unsigned n = atomic_load(&ck_num_threads);
  if (n == 0) {
    n = ck__default_threads();
    unsigned expected = 0;
    atomic_compare_exchange_strong(&ck_num_threads, &expected, n);
    n = atomic_load(&ck_num_threads);
  }
  return n;
}

ck_status ck_set_num_threads(unsigned n) {
  if (n > CK_MAX_THREADS) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "thread count %u is not in [1, %d]",
                    n, CK_MAX_THREADS);
  }
  atomic_store(&ck_num_threads, n == 0 ? ck__default_threads() : n);
  return CK_OK;
}

/* Claim and run chunks until the range is exhausted or a failure stops us. */
static void ck__job_run(ck_job *job, unsigned thread_index) {
  while (!atomic_load_explicit(&job->stop, memory_order_relaxed)) {
    size_t b = atomic_fetch_add_explicit(&job->next, job->chunk, memory_order_relaxed);
    if (b >= job->n) {
      return;
    }
    size_t e = job->n - b < job->chunk ? job->n : b + job->chunk;
    ck_status st = job->fn(job->ctx, b, e, thread_index);
    if (st != CK_OK) {
      int expected = CK_OK;
      if (atomic_compare_exchange_strong(&job->status, &expected, (int)st)) {
        snprintf(job->msg, sizeof job->msg, "%s", ck_last_error());
      }
      atomic_store(&job->stop, true);
      return;
    }
  }
}

static void *ck__worker_main(void *arg) {
  unsigned index = (unsigned)(uintptr_t)arg; /* worker k is thread k + 1 */
  ck_in_worker = true;
  pthread_mutex_lock(&ck_pool.lock);
  /* Not ck_pool.generation: a job published after this worker was created
   * but before it got the lock must not be missed. */
  uint64_t seen = ck_pool.start_generation[index];
  for (;;) {
    while (!ck_pool.shutdown && ck_pool.generation == seen) {
      pthread_cond_wait(&ck_pool.work_cv, &ck_pool.lock);
    }
    if (ck_pool.shutdown) {
      break;
    }
    seen = ck_pool.generation;
    ck_job *job = ck_pool.job;
    /* A worker not taking part may wake after the job is already over. */
    if (job == NULL || index >= job->workers_wanted) {
      continue;
    }
    pthread_mutex_unlock(&ck_pool.lock);
    ck__job_run(job, index + 1);
    pthread_mutex_lock(&ck_pool.lock);
    if (--ck_pool.active == 0) {
      pthread_cond_signal(&ck_pool.done_cv);
    }
  }
  pthread_mutex_unlock(&ck_pool.lock);
  return NULL;
}

/* Start workers up to `want` (fewer if thread creation fails). Lock held. */
static void ck__pool_grow(unsigned want) {
  while (ck_pool.nworkers < want) {
    pthread_t t;
    ck_pool.start_generation[ck_pool.nworkers] = ck_pool.generation;
    if (pthread_create(&t, NULL, ck__worker_main,
                       (void *)(uintptr_t)ck_pool.nworkers) != 0) {
      return;
    }
    ck_pool.threads[ck_pool.nworkers++] = t;
  }
}

ck_status ck_parallel_for(size_t n, size_t min_chunk, ck_parallel_fn fn, void *ctx) {
  if (fn == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "fn must not be NULL");
  }
  if (n == 0) {
    return CK_OK;
  }
  if (min_chunk == 0) {
    min_chunk = 1;
  }
  unsigned nt = ck_get_num_threads();
  size_t max_useful = n / min_chunk;
  if (max_useful < nt) {
    nt = (unsigned)(max_useful ? max_useful : 1);
  }
  if (nt <= 1 || ck_in_worker || pthread_mutex_trylock(&ck_pool.job_lock) != 0) {
    return fn(ctx, 0, n, 0);
  }

  ck_job job;
  memset(&job, 0, sizeof job);
  job.fn = fn;
  job.ctx = ctx;
  job.n = n;
  /* About 4 chunks per thread balances uneven work without much contention. */
  size_t chunk = n / ((size_t)nt * 4);
  job.chunk = chunk < min_chunk ? min_chunk : chunk;
  atomic_init(&job.next, 0);
  atomic_init(&job.stop, false);
  atomic_init(&job.status, CK_OK);

  pthread_mutex_lock(&ck_pool.lock);
  ck__pool_grow(nt - 1);
  job.workers_wanted = ck_pool.nworkers < nt - 1 ? ck_pool.nworkers : nt - 1;
  ck_pool.job = &job;
  ck_pool.active = job.workers_wanted;
  ck_pool.generation++;
  pthread_cond_broadcast(&ck_pool.work_cv);
  pthread_mutex_unlock(&ck_pool.lock);

  ck_in_worker = true; /* nested calls from fn on this thread run serially */
  ck__job_run(&job, 0);
  ck_in_worker = false;

  pthread_mutex_lock(&ck_pool.lock);
  while (ck_pool.active != 0) {
    pthread_cond_wait(&ck_pool.done_cv, &ck_pool.lock);
  }
  ck_pool.job = NULL;
  pthread_mutex_unlock(&ck_pool.lock);
  pthread_mutex_unlock(&ck_pool.job_lock);

  ck_status st = (ck_status)atomic_load(&job.status);
  if (st != CK_OK) {
    ck_set_error(st, job.msg);
  }
  return st;
}

ck_status ck_thread_pool_shutdown(void) {
  if (ck_in_worker) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "called from inside a parallel loop");
  }
  pthread_mutex_lock(&ck_pool.job_lock);
  pthread_mutex_lock(&ck_pool.lock);
  ck_pool.shutdown = true;
  pthread_cond_broadcast(&ck_pool.work_cv);
  unsigned n = ck_pool.nworkers;
  pthread_mutex_unlock(&ck_pool.lock);
  for (unsigned i = 0; i < n; i++) {
    pthread_join(ck_pool.threads[i], NULL);
  }
  pthread_mutex_lock(&ck_pool.lock);
  ck_pool.nworkers = 0;
  ck_pool.shutdown = false;
  pthread_mutex_unlock(&ck_pool.lock);
  pthread_mutex_unlock(&ck_pool.job_lock);
  return CK_OK;
}

unsigned ck_thread_pool_size(void) {
  pthread_mutex_lock(&ck_pool.lock);
  unsigned n = ck_pool.nworkers;
  pthread_mutex_unlock(&ck_pool.lock);
  return n;
}
