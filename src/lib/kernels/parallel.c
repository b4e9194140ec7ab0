/* parallel.c -- the pthread pool behind ck_parallel_for (see parallel.h). */
#include "core/core_internal.h"
#include "kernels/parallel_internal.h"

#include <pthread.h>
#include <sched.h>
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
  int64_t elem[CK_ERROR_MAX_INDEX]; /* its failing element (error.h), if any */
  size_t nelem;
  const void *elem_dst;
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
} ck__pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
             .job_lock = PTHREAD_MUTEX_INITIALIZER,
             .work_cv = PTHREAD_COND_INITIALIZER,
             .done_cv = PTHREAD_COND_INITIALIZER};

static atomic_uint ck__nthreads; /* 0 = not yet initialised */
static _Thread_local bool ck__in_worker;

/* CPUs this process may run on (its affinity mask, as taskset or a
 * container's cpuset sets it), else the online CPUs. */
static long ck__usable_cpus(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n >= 1) {
      return n;
    }
  }
  return sysconf(_SC_NPROCESSORS_ONLN);
}

/* The variables the default thread count reads, first found wins (see
 * parallel.h).  OpenMP's OMP_NUM_THREADS may list one count per nesting
 * level ("4,2"): the first one is the outer level's. */
static const char *const ck__thread_env[] = {"CK_NUM_THREADS", "OMP_NUM_THREADS",
                                             "NUMBA_NUM_THREADS"};

/* A positive decimal count (surrounding blanks allowed), clamped to
 * CK_MAX_THREADS; 0 when `text` is not one. */
static unsigned ck__parse_threads(const char *text, bool list) {
  while (*text == ' ' || *text == '\t') {
    text++;
  }
  if (*text < '0' || *text > '9') {
    return 0;
  }
  unsigned long v = 0;
  while (*text >= '0' && *text <= '9') {
    v = v * 10 + (unsigned long)(*text - '0');
    if (v > CK_MAX_THREADS) {
      v = CK_MAX_THREADS + 1; /* clamped below; stops the growth */
    }
    text++;
  }
  while (*text == ' ' || *text == '\t') {
    text++;
  }
  if (*text != '\0' && !(list && *text == ',')) {
    return 0;
  }
  if (v == 0) {
    return 0;
  }
  return v > CK_MAX_THREADS ? CK_MAX_THREADS : (unsigned)v;
}

ck_status ck_default_num_threads(unsigned *n, const char **source) {
  if (n == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "n is NULL");
  }
  const char *bad_name = NULL;
  const char *bad_value = NULL;
  for (size_t i = 0; i < sizeof ck__thread_env / sizeof ck__thread_env[0]; i++) {
    const char *env = getenv(ck__thread_env[i]);
    if (env == NULL || *env == '\0') {
      continue;
    }
    unsigned v = ck__parse_threads(env, i == 1);
    if (v >= 1) {
      *n = v;
      if (source != NULL) {
        *source = ck__thread_env[i];
      }
      goto done;
    }
    if (bad_name == NULL) {
      bad_name = ck__thread_env[i];
      bad_value = env;
    }
  }
  long cpus = ck__usable_cpus();
  if (cpus < 1) {
    cpus = 1;
  }
  *n = cpus > CK_MAX_THREADS ? CK_MAX_THREADS : (unsigned)cpus;
  if (source != NULL) {
    *source = "cpus";
  }
done:
  if (bad_name != NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "%s='%.40s' is not a positive whole number of threads; ignored "
                    "(the default is %u)",
                    bad_name, bad_value, *n);
  }
  return CK_OK;
}

static unsigned ck__default_threads(void) {
  unsigned n = 1;
  (void)ck_default_num_threads(&n, NULL); /* an ignored variable is not fatal */
  return n;
}

unsigned ck_get_num_threads(void) {
  unsigned n = atomic_load(&ck__nthreads);
  if (n == 0) {
    n = ck__default_threads();
    unsigned expected = 0;
    atomic_compare_exchange_strong(&ck__nthreads, &expected, n);
    n = atomic_load(&ck__nthreads);
  }
  return n;
}

ck_status ck_set_num_threads(unsigned n) {
  if (n > CK_MAX_THREADS) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "thread count %u is not in [1, %d]",
                    n, CK_MAX_THREADS);
  }
  atomic_store(&ck__nthreads, n == 0 ? ck__default_threads() : n);
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
        job->nelem = ck_last_error_element(job->elem, CK_ERROR_MAX_INDEX, &job->elem_dst);
      }
      atomic_store(&job->stop, true);
      return;
    }
  }
}

static void *ck__worker_main(void *arg) {
  unsigned index = (unsigned)(uintptr_t)arg; /* worker k is thread k + 1 */
  ck__in_worker = true;
  pthread_mutex_lock(&ck__pool.lock);
  /* Not ck__pool.generation: a job published after this worker was created
   * but before it got the lock must not be missed. */
  uint64_t seen = ck__pool.start_generation[index];
  for (;;) {
    while (!ck__pool.shutdown && ck__pool.generation == seen) {
      pthread_cond_wait(&ck__pool.work_cv, &ck__pool.lock);
    }
    if (ck__pool.shutdown) {
      break;
    }
    seen = ck__pool.generation;
    ck_job *job = ck__pool.job;
    /* A worker not taking part may wake after the job is already over. */
    if (job == NULL || index >= job->workers_wanted) {
      continue;
    }
    pthread_mutex_unlock(&ck__pool.lock);
    ck__job_run(job, index + 1);
    pthread_mutex_lock(&ck__pool.lock);
    if (--ck__pool.active == 0) {
      pthread_cond_signal(&ck__pool.done_cv);
    }
  }
  pthread_mutex_unlock(&ck__pool.lock);
  return NULL;
}

/*
 * Fork safety.  Only the forking thread exists in the child: the workers
 * are gone, and a lock another thread held stays held forever.  The prepare
 * handler therefore waits for the running job to end and takes both locks
 * (a fork from inside a parallel loop, on the thread that runs it, takes
 * none: it holds job_lock already); the parent releases them; the child
 * starts with no pool (fresh locks and condition variables, no workers), so
 * its first parallel loop creates new workers.  Registered once, when the
 * pool first starts workers.
 */
static bool ck__fork_locked; /* set by prepare, read by parent/child: one thread */

static void ck__fork_prepare(void) {
  ck__fork_locked = !ck__in_worker;
  if (ck__fork_locked) {
    pthread_mutex_lock(&ck__pool.job_lock);
    pthread_mutex_lock(&ck__pool.lock);
  }
}

static void ck__fork_parent(void) {
  if (ck__fork_locked) {
    pthread_mutex_unlock(&ck__pool.lock);
    pthread_mutex_unlock(&ck__pool.job_lock);
  }
}

static void ck__fork_child(void) {
  pthread_mutex_init(&ck__pool.lock, NULL);
  pthread_mutex_init(&ck__pool.job_lock, NULL);
  pthread_cond_init(&ck__pool.work_cv, NULL);
  pthread_cond_init(&ck__pool.done_cv, NULL);
  ck__pool.nworkers = 0;
  ck__pool.job = NULL;
  ck__pool.active = 0;
  ck__pool.shutdown = false;
  ck__in_worker = false;
}

static pthread_once_t ck__atfork_once = PTHREAD_ONCE_INIT;
static void ck__atfork_register(void) {
  (void)pthread_atfork(ck__fork_prepare, ck__fork_parent, ck__fork_child);
}

/* Start workers up to `want` (fewer if thread creation fails). Lock held. */
static void ck__pool_grow(unsigned want) {
  (void)pthread_once(&ck__atfork_once, ck__atfork_register);
  while (ck__pool.nworkers < want) {
    pthread_t t;
    ck__pool.start_generation[ck__pool.nworkers] = ck__pool.generation;
    if (pthread_create(&t, NULL, ck__worker_main,
                       (void *)(uintptr_t)ck__pool.nworkers) != 0) {
      return;
    }
    ck__pool.threads[ck__pool.nworkers++] = t;
  }
}

ck_status ck_parallel_for(size_t n, size_t min_chunk, ck_parallel_fn fn, void *ctx) {
  if (fn == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "fn must not be NULL");
  }
  return ck__parallel_for_threads(n, min_chunk, ck_get_num_threads(), fn, ctx);
}

ck_status ck__parallel_for_threads(size_t n, size_t min_chunk, unsigned max_threads,
                                   ck_parallel_fn fn, void *ctx) {
  if (fn == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_parallel_for", "fn must not be NULL");
  }
  if (n == 0) {
    return CK_OK;
  }
  if (min_chunk == 0) {
    min_chunk = 1;
  }
  unsigned nt = max_threads < CK_MAX_THREADS ? max_threads : CK_MAX_THREADS;
  size_t max_useful = n / min_chunk;
  if (max_useful < nt) {
    nt = (unsigned)(max_useful ? max_useful : 1);
  }
  if (nt <= 1 || ck__in_worker || pthread_mutex_trylock(&ck__pool.job_lock) != 0) {
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

  pthread_mutex_lock(&ck__pool.lock);
  ck__pool_grow(nt - 1);
  job.workers_wanted = ck__pool.nworkers < nt - 1 ? ck__pool.nworkers : nt - 1;
  ck__pool.job = &job;
  ck__pool.active = job.workers_wanted;
  ck__pool.generation++;
  pthread_cond_broadcast(&ck__pool.work_cv);
  pthread_mutex_unlock(&ck__pool.lock);

  ck__in_worker = true; /* nested calls from fn on this thread run serially */
  ck__job_run(&job, 0);
  ck__in_worker = false;

  pthread_mutex_lock(&ck__pool.lock);
  while (ck__pool.active != 0) {
    pthread_cond_wait(&ck__pool.done_cv, &ck__pool.lock);
  }
  ck__pool.job = NULL;
  pthread_mutex_unlock(&ck__pool.lock);
  pthread_mutex_unlock(&ck__pool.job_lock);

  ck_status st = (ck_status)atomic_load(&job.status);
  if (st != CK_OK) {
    ck_set_error(st, job.msg);
    size_t ne = job.nelem < CK_ERROR_MAX_INDEX ? job.nelem : CK_ERROR_MAX_INDEX;
    if (ne > 0) { /* the failing element travels with the message */
      ck_error_set_element(job.elem[ne - 1], job.elem_dst);
      for (size_t i = ne - 1; i > 0; i--) {
        ck_error_prepend_element(job.elem[i - 1]);
      }
    }
  }
  return st;
}

ck_status ck_thread_pool_shutdown(void) {
  if (ck__in_worker) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "called from inside a parallel loop");
  }
  pthread_mutex_lock(&ck__pool.job_lock);
  pthread_mutex_lock(&ck__pool.lock);
  ck__pool.shutdown = true;
  pthread_cond_broadcast(&ck__pool.work_cv);
  unsigned n = ck__pool.nworkers;
  pthread_mutex_unlock(&ck__pool.lock);
  for (unsigned i = 0; i < n; i++) {
    pthread_join(ck__pool.threads[i], NULL);
  }
  pthread_mutex_lock(&ck__pool.lock);
  ck__pool.nworkers = 0;
  ck__pool.shutdown = false;
  pthread_mutex_unlock(&ck__pool.lock);
  pthread_mutex_unlock(&ck__pool.job_lock);
  return CK_OK;
}

unsigned ck_thread_pool_size(void) {
  pthread_mutex_lock(&ck__pool.lock);
  unsigned n = ck__pool.nworkers;
  pthread_mutex_unlock(&ck__pool.lock);
  return n;
}
