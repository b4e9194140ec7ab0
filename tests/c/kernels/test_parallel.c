/* The parallel outer loop: coverage, thread indices, error propagation with
 * early stop, nesting, concurrent callers, thread-count control, shutdown,
 * fork safety, CPU affinity. */
#define _GNU_SOURCE /* sched_setaffinity */
#include "ck_test.h"

#include "ckernel/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N = 100000 };
static atomic_uchar hits[N];
static atomic_uint max_index;

static ck_status mark(void *ctx, size_t b, size_t e, unsigned t) {
  (void)ctx;
  for (size_t i = b; i < e; i++) {
    atomic_fetch_add(&hits[i], 1);
  }
  unsigned m = atomic_load(&max_index);
  while (t > m && !atomic_compare_exchange_weak(&max_index, &m, t)) {
  }
  return CK_OK;
}

static void test_every_index_once(void) {
  for (unsigned nt = 1; nt <= 4; nt++) {
    REQUIRE_OK(ck_set_num_threads(nt));
    memset(hits, 0, sizeof hits);
    atomic_store(&max_index, 0);
    REQUIRE_OK(ck_parallel_for(N, 100, mark, NULL));
    int once = 1;
    for (size_t i = 0; i < N; i++) {
      once &= atomic_load(&hits[i]) == 1;
    }
    CHECK(once);
    CHECK(atomic_load(&max_index) < nt);
  }
  /* Small ranges stay on the caller. */
  atomic_store(&max_index, 0);
  REQUIRE_OK(ck_parallel_for(150, 100, mark, NULL));
  CHECK(atomic_load(&max_index) == 0);
  CHECK_OK(ck_parallel_for(0, 1, mark, NULL));
  CHECK_ERR(ck_parallel_for(10, 1, NULL, NULL), CK_ERR_INVALID_ARGUMENT, "fn");
  REQUIRE_OK(ck_set_num_threads(0));
}

/* Sum with per-thread partials indexed by thread_index (no atomics needed if
 * indices are exclusive). */
static ck_status sum_fn(void *ctx, size_t b, size_t e, unsigned t) {
  uint64_t *partial = ctx; /* one slot per thread index */
  for (size_t i = b; i < e; i++) {
    partial[t] += i;
  }
  return CK_OK;
}

static uint64_t parallel_sum(size_t n, size_t min_chunk, ck_status *st) {
  uint64_t partial[CK_MAX_THREADS] = {0};
  *st = ck_parallel_for(n, min_chunk, sum_fn, partial);
  uint64_t total = 0;
  for (int t = 0; t < CK_MAX_THREADS; t++) {
    total += partial[t];
  }
  return total;
}

static void test_thread_index_exclusive(void) {
  REQUIRE_OK(ck_set_num_threads(4));
  long reps = ck_test_scaled(50);
  for (long r = 0; r < reps; r++) {
    ck_status st;
    uint64_t total = parallel_sum(1000000, 1000, &st);
    CHECK_OK(st);
    CHECK(total == (uint64_t)999999 * 1000000 / 2);
  }
  REQUIRE_OK(ck_set_num_threads(0));
}

static atomic_size_t processed;
static ck_status fail_at_5000(void *ctx, size_t b, size_t e, unsigned t) {
  (void)ctx;
  (void)t;
  if (b <= 5000 && 5000 < e) {
    return ck_set_error(CK_ERR_VALUE, "element 5000 is bad");
  }
  atomic_fetch_add(&processed, e - b);
  return CK_OK;
}

static void test_error_reaches_caller(void) {
  REQUIRE_OK(ck_set_num_threads(4));
  atomic_store(&processed, 0);
  CHECK_ERR(ck_parallel_for(10000000, 1000, fail_at_5000, NULL), CK_ERR_VALUE,
            "element 5000 is bad");
  CHECK(atomic_load(&processed) < 10000000 - 1000); /* others stopped early */
  /* Serial path reports the same way. */
  REQUIRE_OK(ck_set_num_threads(1));
  CHECK_ERR(ck_parallel_for(10000, 1000, fail_at_5000, NULL), CK_ERR_VALUE,
            "element 5000");
  REQUIRE_OK(ck_set_num_threads(0));
}

static ck_status nested_outer(void *ctx, size_t b, size_t e, unsigned t) {
  (void)ctx;
  (void)t;
  for (size_t i = b; i < e; i++) {
    ck_status st = ck_parallel_for(10, 1, mark, NULL); /* runs serially */
    if (st != CK_OK) {
      return st;
    }
  }
  return CK_OK;
}

static void test_nested_runs_serially(void) {
  REQUIRE_OK(ck_set_num_threads(3));
  memset(hits, 0, sizeof hits);
  REQUIRE_OK(ck_parallel_for(30, 1, nested_outer, NULL));
  int all = 1;
  for (size_t i = 0; i < 10; i++) {
    all &= atomic_load(&hits[i]) == 30;
  }
  CHECK(all);
  REQUIRE_OK(ck_set_num_threads(0));
}

static void *concurrent_caller(void *arg) {
  int *good = arg;
  for (int r = 0; r < 20; r++) {
    ck_status st;
    uint64_t total = parallel_sum(100000, 100, &st);
    *good += st == CK_OK && total == (uint64_t)99999 * 100000 / 2;
  }
  return NULL;
}

static void test_concurrent_callers(void) {
  REQUIRE_OK(ck_set_num_threads(2));
  int a = 0, b = 0;
  pthread_t ta, tb;
  REQUIRE(pthread_create(&ta, NULL, concurrent_caller, &a) == 0);
  REQUIRE(pthread_create(&tb, NULL, concurrent_caller, &b) == 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK(a == 20 && b == 20); /* every call right, none deadlocked */
  REQUIRE_OK(ck_set_num_threads(0));
}

static void test_thread_count_and_shutdown(void) {
  CHECK_ERR(ck_set_num_threads(CK_MAX_THREADS + 1), CK_ERR_INVALID_ARGUMENT,
            "thread count");
  CHECK_OK(ck_thread_pool_shutdown());
  REQUIRE_OK(ck_set_num_threads(3));
  CHECK(ck_get_num_threads() == 3);
  REQUIRE_OK(ck_parallel_for(N, 10, mark, NULL));
  CHECK(ck_thread_pool_size() == 2);
  CHECK_OK(ck_thread_pool_shutdown());
  CHECK(ck_thread_pool_size() == 0);
  memset(hits, 0, sizeof hits);
  REQUIRE_OK(ck_parallel_for(N, 10, mark, NULL)); /* restarts on demand */
  CHECK(atomic_load(&hits[N - 1]) == 1);
  REQUIRE_OK(ck_set_num_threads(0));
  CHECK(ck_get_num_threads() >= 1);
  CHECK_OK(ck_thread_pool_shutdown());
}

/* A parallel loop over N that must mark every index once, in a child
 * process: 0 if it did.  SIGALRM ends a child that hangs. */
static int child_parallel_loop(void) {
  alarm(30);
  memset(hits, 0, sizeof hits);
  if (ck_parallel_for(N, 10, mark, NULL) != CK_OK) {
    return 2;
  }
  for (size_t i = 0; i < N; i++) {
    if (atomic_load(&hits[i]) != 1) {
      return 3;
    }
  }
  return ck_thread_pool_size() == ck_get_num_threads() - 1 ? 0 : 4;
}

/* Run fn in a forked child.  The verdict travels through a pipe, not the
 * exit status: under valgrind a child reports the parent's worker threads'
 * stacks (unreachable after fork, not a leak of the library) and exits 1.
 * True if the child reported 0; a crash, a hang (SIGALRM) or any other
 * value is a failure. */
static bool in_child(int (*fn)(void)) {
  int fds[2];
  if (pipe(fds) != 0) {
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    unsigned char verdict = (unsigned char)fn();
    if (write(fds[1], &verdict, 1) != 1) {
      _exit(99);
    }
    _exit(verdict);
  }
  close(fds[1]);
  unsigned char verdict = 255;
  ssize_t got = read(fds[0], &verdict, 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != 1 || verdict != 0) {
    fprintf(stderr, "child %d: verdict %d, %s %d\n", (int)pid, got == 1 ? verdict : -1,
            WIFEXITED(status) ? "exit status" : "killed by signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return false;
  }
  return true;
}

/* Fork after the pool has workers: the child starts without them and makes
 * new ones for its first parallel loop (it used to wait forever for the
 * parent's workers). */
static void test_fork_after_parallel_loop(void) {
  REQUIRE_OK(ck_set_num_threads(3));
  REQUIRE_OK(ck_parallel_for(N, 10, mark, NULL));
  REQUIRE(ck_thread_pool_size() == 2);
  for (int round = 0; round < 3; round++) {
    CHECK(in_child(child_parallel_loop));
    memset(hits, 0, sizeof hits);
    REQUIRE_OK(ck_parallel_for(N, 10, mark, NULL)); /* the parent's pool works */
    CHECK(atomic_load(&hits[N / 2]) == 1);
  }
  REQUIRE_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown());
}

static atomic_bool stop_looping;

static ck_status count_fn(void *ctx, size_t b, size_t e, unsigned t) {
  (void)t;
  atomic_fetch_add((atomic_size_t *)ctx, e - b);
  return CK_OK;
}

static void *loop_parallel(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_looping)) {
    atomic_size_t count;
    atomic_init(&count, 0);
    if (ck_parallel_for(20000, 10, count_fn, &count) != CK_OK ||
        atomic_load(&count) != 20000) {
      return (void *)1;
    }
  }
  return NULL;
}

/* Fork while another thread keeps running parallel loops: the fork waits for
 * the running loop (the child never inherits a held lock or a half-done
 * job), and each child runs its own loops. */
static void test_fork_during_parallel_loops(void) {
  REQUIRE_OK(ck_set_num_threads(3));
  atomic_store(&stop_looping, false);
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, loop_parallel, NULL) == 0);
  long rounds = ck_test_scaled(20) + 2;
  for (long round = 0; round < rounds; round++) {
    CHECK(in_child(child_parallel_loop));
  }
  atomic_store(&stop_looping, true);
  void *res = NULL;
  pthread_join(th, &res);
  CHECK(res == NULL);
  REQUIRE_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown());
}

/* The default thread count is the number of CPUs the process may run on
 * (taskset / cpusets), not the number online. */
static int child_one_cpu(void) {
  alarm(30);
  unsetenv("CK_NUM_THREADS");
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    return 0; /* not allowed here: nothing to check */
  }
  if (ck_set_num_threads(0) != CK_OK || ck_get_num_threads() != 1) {
    fprintf(stderr, "one CPU allowed, default thread count %u\n", ck_get_num_threads());
    return 1;
  }
  return 0;
}

static void test_default_threads_follow_affinity(void) {
  CHECK(in_child(child_one_cpu));
}

/* The default's environment variables: CK_NUM_THREADS, then OMP_NUM_THREADS
 * (first entry of a list), then NUMBA_NUM_THREADS; a set but invalid value
 * is skipped and reported through the status. */
static int child_thread_env(void) {
  alarm(30);
  static const char *const names[] = {"CK_NUM_THREADS", "OMP_NUM_THREADS",
                                       "NUMBA_NUM_THREADS"};
  for (int i = 0; i < 3; i++) {
    unsetenv(names[i]);
  }
  unsigned n = 0, cpus = 0;
  const char *src = NULL;
  int bad = 0;
#define EXPECT(status_ok, want_n, want_src)                                         \
  do {                                                                              \
    ck_status st_ = ck_default_num_threads(&n, &src);                               \
    if ((st_ == CK_OK) != (status_ok) || n != (want_n) || strcmp(src, want_src)) {  \
      fprintf(stderr, "line %d: status %d n %u source %s (%s)\n", __LINE__, st_, n, \
              src, ck_last_error());                                                \
      bad = 1;                                                                      \
    }                                                                               \
  } while (0)
  if (ck_default_num_threads(&cpus, &src) != CK_OK || strcmp(src, "cpus") != 0) {
    return 1;
  }
  setenv("NUMBA_NUM_THREADS", "5", 1);
  EXPECT(true, 5, "NUMBA_NUM_THREADS");
  setenv("OMP_NUM_THREADS", "3,2", 1);
  EXPECT(true, 3, "OMP_NUM_THREADS");
  setenv("CK_NUM_THREADS", " 2 ", 1);
  EXPECT(true, 2, "CK_NUM_THREADS");
  if (ck_set_num_threads(0) != CK_OK || ck_get_num_threads() != 2) {
    bad = 1;
  }
  static const char *const invalid[] = {"abc", "2x", "1e3", "0", "-1", "3,2", ""};
  for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
    setenv("CK_NUM_THREADS", invalid[i], 1);
    EXPECT(*invalid[i] == '\0', 3, "OMP_NUM_THREADS");  /* "" counts as unset */
    if (*invalid[i] && !strstr(ck_last_error(), "CK_NUM_THREADS")) {
      bad = 1;
    }
  }
  setenv("OMP_NUM_THREADS", "many", 1);
  setenv("CK_NUM_THREADS", "1e3", 1);
  EXPECT(false, 5, "NUMBA_NUM_THREADS");   /* the first skipped one is named */
  if (!strstr(ck_last_error(), "CK_NUM_THREADS='1e3'")) {
    bad = 1;
  }
  setenv("NUMBA_NUM_THREADS", "100000000000000000000000", 1);
  unsetenv("CK_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  EXPECT(true, CK_MAX_THREADS, "NUMBA_NUM_THREADS");
  unsetenv("NUMBA_NUM_THREADS");
  EXPECT(true, cpus, "cpus");
  if (ck_default_num_threads(NULL, NULL) == CK_OK) {
    bad = 1;
  }
#undef EXPECT
  return bad;
}

static void test_default_threads_environment(void) {
  CHECK(in_child(child_thread_env));
}

CK_TEST_MAIN(CK_TEST(test_every_index_once), CK_TEST(test_thread_index_exclusive),
             CK_TEST(test_error_reaches_caller), CK_TEST(test_nested_runs_serially),
             CK_TEST(test_concurrent_callers), CK_TEST(test_thread_count_and_shutdown),
             CK_TEST(test_fork_after_parallel_loop),
             CK_TEST(test_fork_during_parallel_loops),
             CK_TEST(test_default_threads_follow_affinity),
             CK_TEST(test_default_threads_environment))
