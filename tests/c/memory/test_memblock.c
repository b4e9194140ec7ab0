/* Memblocks: refcounting, every kind, external release, debug printing, and
 * a concurrency storm of increfs/decrefs from several threads. */
#include "ck_test.h"

#include <pthread.h>
#include <stdatomic.h>

static void test_refcount_semantics(void) {
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &mb));
  CHECK(ck_memblock_refcount(mb) == 1);
  CHECK(mb->kind == CK_MEMBLOCK_POD);
  int64_t live = ck_memblock_live_count();
  ck_memblock_incref(mb);
  ck_memblock_incref(mb);
  CHECK(ck_memblock_refcount(mb) == 3);
  ck_memblock_decref(mb);
  CHECK(ck_memblock_refcount(mb) == 2);
  CHECK(ck_memblock_live_count() == live);
  ck_memblock_decref(mb);
  CHECK(ck_memblock_live_count() == live);
  ck_memblock_decref(mb); /* frees */
  CHECK(ck_memblock_live_count() == live - 1);
  /* NULL is a no-op for both. */
  ck_memblock_incref(NULL);
  ck_memblock_decref(NULL);
  CHECK(ck_memblock_refcount(NULL) == 0);
}

/* The exported symbols behave like the inline versions (FFI path). */
typedef void (*mb_fn)(ck_memblock *);
static void test_exported_symbols(void) {
  volatile mb_fn inc = ck_memblock_incref;
  volatile mb_fn dec = ck_memblock_decref;
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_zeroinit_memblock_new(16, &mb));
  inc(mb);
  CHECK(ck_memblock_refcount(mb) == 2);
  dec(mb);
  dec(mb);
}

static void test_fixed_size_pod(void) {
  for (size_t align = 1; align <= 4096; align *= 2) {
    ck_memblock *mb = NULL;
    char *data = NULL;
    REQUIRE_OK(ck_fixed_size_pod_memblock_new(100, align, &mb, &data));
    CHECK(mb->kind == CK_MEMBLOCK_FIXED_SIZE_POD);
    CHECK(((uintptr_t)data & (align - 1)) == 0);
    CHECK(data > (char *)mb); /* one allocation: data follows the header */
    int zero = 1;
    for (int i = 0; i < 100; i++) {
      zero &= data[i] == 0;
    }
    CHECK(zero);
    memset(data, 0xAB, 100);
    char *d2;
    size_t sz;
    CHECK_OK(ck_fixed_size_pod_memblock_data(mb, &d2, &sz));
    CHECK(d2 == data && sz == 100);
    ck_memblock_decref(mb);
  }
  ck_memblock *mb = NULL;
  char *data = NULL;
  REQUIRE_OK(ck_fixed_size_pod_memblock_new(0, 8, &mb, &data));
  CHECK(data != NULL);
  ck_memblock_decref(mb);
  CHECK_ERR(ck_fixed_size_pod_memblock_new(8, 3, &mb, &data),
            CK_ERR_INVALID_ARGUMENT, "alignment 3");
  CHECK(mb == NULL && data == NULL);
  CHECK_ERR(ck_fixed_size_pod_memblock_new(8, 8192, &mb, &data),
            CK_ERR_INVALID_ARGUMENT, "alignment 8192");
  CHECK_ERR(ck_fixed_size_pod_memblock_new(SIZE_MAX, 8, &mb, &data),
            CK_ERR_OVERFLOW, "too large");
  CHECK_ERR(ck_fixed_size_pod_memblock_new(8, 8, NULL, &data),
            CK_ERR_INVALID_ARGUMENT, "must not be NULL");
}

static atomic_int release_calls;
static void *release_seen;
static void count_release(void *obj) {
  atomic_fetch_add(&release_calls, 1);
  release_seen = obj;
}

static void test_external(void) {
  int payload = 42;
  ck_memblock *mb = NULL;
  atomic_store(&release_calls, 0);
  REQUIRE_OK(ck_external_memblock_new(&payload, count_release, &mb));
  CHECK(mb->kind == CK_MEMBLOCK_EXTERNAL);
  void *obj = NULL;
  CHECK_OK(ck_external_memblock_object(mb, &obj));
  CHECK(obj == &payload);
  ck_memblock_incref(mb);
  ck_memblock_decref(mb);
  CHECK(atomic_load(&release_calls) == 0);
  ck_memblock_decref(mb);
  CHECK(atomic_load(&release_calls) == 1);
  CHECK(release_seen == &payload);
  /* A NULL release callback is allowed. */
  REQUIRE_OK(ck_external_memblock_new(&payload, NULL, &mb));
  ck_memblock_decref(mb);
  /* Wrong kind. */
  REQUIRE_OK(ck_pod_memblock_new(0, &mb));
  CHECK_ERR(ck_external_memblock_object(mb, &obj), CK_ERR_TYPE, "not external");
  char *d;
  size_t s;
  CHECK_ERR(ck_fixed_size_pod_memblock_data(mb, &d, &s), CK_ERR_TYPE,
            "not fixed_size_pod");
  ck_memblock_decref(mb);
}

static void test_debug_print(void) {
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_pod_memblock_new(64, &mb));
  char *b, *e;
  REQUIRE_OK(ck_pod_allocate(mb, 10, 1, &b, &e));
  char buf[256];
  size_t len = 0;
  CHECK_OK(ck_memblock_debug_print(mb, buf, sizeof buf, &len));
  CHECK(strstr(buf, "kind=pod") != NULL);
  CHECK(strstr(buf, "refcount=1") != NULL);
  CHECK(strstr(buf, "capacity=64") != NULL);
  CHECK(strstr(buf, "used=10") != NULL);
  CHECK(len == strlen(buf));
  /* Too small a buffer: truncated, NUL-terminated, full length reported. */
  char small[8];
  size_t len2 = 0;
  CHECK_OK(ck_memblock_debug_print(mb, small, sizeof small, &len2));
  CHECK(len2 == len);
  CHECK(strlen(small) == sizeof small - 1);
  /* Size query with no buffer. */
  CHECK_OK(ck_memblock_debug_print(mb, NULL, 0, &len2));
  CHECK(len2 == len);
  ck_memblock_decref(mb);

  const char *names[] = {"invalid", "array", "external", "fixed_size_pod", "pod",
                         "zeroinit", "invalid"};
  for (uint32_t k = 0; k <= 6; k++) {
    CHECK(strcmp(ck_memblock_kind_name(k), names[k]) == 0);
  }
}

/* ---- concurrency storm ------------------------------------------------- */

enum { STORM_THREADS = 8, STORM_BLOCKS = 4 };
static ck_memblock *storm_blocks[STORM_BLOCKS];
static long storm_iters;

static void *storm_worker(void *arg) {
  (void)arg;
  for (long i = 0; i < storm_iters; i++) {
    ck_memblock *mb = storm_blocks[i % STORM_BLOCKS];
    ck_memblock_incref(mb);
    ck_memblock_incref(mb);
    ck_memblock_decref(mb);
    ck_memblock_decref(mb);
  }
  /* Each thread owns one reference to every block; drop it. */
  for (int b = 0; b < STORM_BLOCKS; b++) {
    ck_memblock_decref(storm_blocks[b]);
  }
  return NULL;
}

static void test_concurrency_storm(void) {
  storm_iters = ck_test_scaled(2000000);
  int payloads[STORM_BLOCKS];
  int64_t live = ck_memblock_live_count();
  atomic_store(&release_calls, 0);
  for (int b = 0; b < STORM_BLOCKS; b++) {
    if (b % 2 == 0) {
      REQUIRE_OK(ck_external_memblock_new(&payloads[b], count_release,
                                          &storm_blocks[b]));
    } else {
      REQUIRE_OK(ck_pod_memblock_new(0, &storm_blocks[b]));
    }
    /* One reference per thread; the creator's reference goes with it. */
    for (int t = 1; t < STORM_THREADS; t++) {
      ck_memblock_incref(storm_blocks[b]);
    }
    CHECK(ck_memblock_refcount(storm_blocks[b]) == STORM_THREADS);
  }
  pthread_t th[STORM_THREADS];
  for (int t = 0; t < STORM_THREADS; t++) {
    REQUIRE(pthread_create(&th[t], NULL, storm_worker, NULL) == 0);
  }
  for (int t = 0; t < STORM_THREADS; t++) {
    pthread_join(th[t], NULL);
  }
  /* Every block freed exactly once; each external release ran exactly once. */
  CHECK(ck_memblock_live_count() == live);
  CHECK(atomic_load(&release_calls) == STORM_BLOCKS / 2);
}

CK_TEST_MAIN(CK_TEST(test_refcount_semantics), CK_TEST(test_exported_symbols),
             CK_TEST(test_fixed_size_pod), CK_TEST(test_external),
             CK_TEST(test_debug_print), CK_TEST(test_concurrency_storm))
