/* Allocation-failure paths: fail the k-th allocation, for every k, during a
 * sequence that touches every allocating path of the memory core; each run
 * must report CK_ERR_NO_MEMORY cleanly and leak nothing (the live counter
 * here, ASan/valgrind in `make sanitize`). */
#include "ck_test.h"

static int released;
static void on_release(void *obj) { (void)obj; released++; }

/* Returns the status of the first failing step; frees everything it made. */
static ck_status run_sequence(void) {
  ck_memblock *pod = NULL, *zero = NULL, *fixed = NULL, *ext = NULL;
  ck_status st;
  char *b, *e, *d;
  if ((st = ck_pod_memblock_new(64, &pod)) != CK_OK) goto done;
  if ((st = ck_pod_allocate(pod, 10, 8, &b, &e)) != CK_OK) goto done;
  for (size_t n = 20; n < 300000; n *= 3) { /* through a mapped chunk */
    if ((st = ck_pod_resize(pod, n, &b, &e)) != CK_OK) goto done;
  }
  if ((st = ck_pod_allocate(pod, 100, 1, &b, &e)) != CK_OK) goto done;
  if ((st = ck_pod_finalize(pod)) != CK_OK) goto done;
  if ((st = ck_zeroinit_memblock_new(0, &zero)) != CK_OK) goto done;
  for (int i = 0; i < 20; i++) {
    if ((st = ck_pod_allocate(zero, 1000, 64, &b, &e)) != CK_OK) goto done;
  }
  if ((st = ck_fixed_size_pod_memblock_new(128, 4096, &fixed, &d)) != CK_OK) goto done;
  if ((st = ck_external_memblock_new(&released, on_release, &ext)) != CK_OK) goto done;
done:
  ck_memblock_decref(pod);
  ck_memblock_decref(zero);
  ck_memblock_decref(fixed);
  ck_memblock_decref(ext);
  return st;
}

static void test_fail_every_allocation(void) {
  int64_t live = ck_memblock_live_count();
  ck_test_faults f = CK_TEST_FAULTS(1000);
  while (ck_test_faults_arm(&f)) {
    ck_status st = run_sequence();
    bool fired = ck_test_faults_fired(&f);
    CHECK(ck_memblock_live_count() == live);
    if (!fired) {
      CHECK(st == CK_OK);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    CHECK(strstr(ck_last_error(), "out of memory") != NULL);
  }
  CHECK(f.runs >= 10); /* the sequence really allocates that often */
  /* The hook disarmed: everything works again. */
  CHECK(run_sequence() == CK_OK);
}

static void test_alloc_count(void) {
  uint64_t before = ck_debug_alloc_count();
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_pod_memblock_new(64, &mb));
  CHECK(ck_debug_alloc_count() == before + 1);
  char *b, *e;
  REQUIRE_OK(ck_pod_allocate(mb, 8, 1, &b, &e)); /* first chunk */
  REQUIRE_OK(ck_pod_allocate(mb, 8, 1, &b, &e)); /* fits: no allocation */
  CHECK(ck_debug_alloc_count() == before + 2);
  ck_memblock_decref(mb);
}

CK_TEST_MAIN(CK_TEST(test_fail_every_allocation), CK_TEST(test_alloc_count))
