/* The parallel outer loop: coverage, thread indices, error propagation with
 * early stop, nesting, concurrent callers, thread-count control, shutdown. */
#include "ck_test.h"

#include "ckernel/parallel.h"

#include <pthread.h>
#include <stdatomic.h>

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

CK_TEST_MAIN(CK_TEST(test_every_index_once), CK_TEST(test_thread_index_exclusive),
             CK_TEST(test_error_reaches_caller), CK_TEST(test_nested_runs_serially),
             CK_TEST(test_concurrent_callers), CK_TEST(test_thread_count_and_shutdown))
