/*
 * test_jit_runtime.c -- jit.h's runtime of natively cached code: headers laid
 * out as Numba's MemInfo, data aligned, destructors run once, allocation
 * failures reported (fault injection), nothing leaked.
 */
#include "ck_test.h"

#include <stdatomic.h>

static int dtor_calls;
static size_t dtor_size;

static void count_dtor(void *data, size_t size, void *info) {
  (void)data;
  dtor_calls += info == NULL;
  dtor_size = size;
}

static void test_alloc_and_free(void) {
  uint64_t before = ck_debug_alloc_count();
  ck_jit_meminfo *mi = ck_jit_meminfo_alloc(10);
  REQUIRE(mi != NULL);
  CHECK(atomic_load(&mi->refct) == 1);
  CHECK(mi->size == 10 && mi->dtor == NULL && mi->external == NULL);
  CHECK((char *)mi->data == (char *)mi + sizeof *mi);
  memset(mi->data, 0xAB, 10);
  ck_jit_meminfo_call_dtor(mi);
  ck_jit_meminfo_call_dtor(NULL);
  void *p = ck_jit_allocate(0);
  CHECK(p != NULL);
  ck_jit_free(p);
  CHECK(ck_debug_alloc_count() == before + 2); /* every allocation is the library's */
}

static void test_aligned(void) {
  for (unsigned align = 1; align <= 4096; align *= 2) {
    ck_jit_meminfo *mi = ck_jit_meminfo_alloc_aligned(3, align);
    REQUIRE(mi != NULL);
    CHECK((uintptr_t)mi->data % align == 0);
    CHECK((char *)mi->data >= (char *)(mi + 1));
    ck_jit_meminfo_call_dtor(mi);
  }
  CHECK(ck_jit_meminfo_alloc_aligned(3, 24) == NULL);
  CHECK(ck_last_status() == CK_ERR_INVALID_ARGUMENT);
}

static void test_destructor(void) {
  dtor_calls = 0;
  ck_jit_meminfo *mi = ck_jit_meminfo_alloc_dtor(7, count_dtor);
  REQUIRE(mi != NULL);
  ck_jit_meminfo_call_dtor(mi);
  CHECK(dtor_calls == 1 && dtor_size == 7);
}

static int elem_calls;
static void elem_dtor(void *data) { elem_calls += data != NULL; }

static void test_varsize(void) {
  uint64_t before = ck_debug_alloc_count();
  ck_jit_meminfo *mi = ck_jit_meminfo_new_varsize_dtor(16, elem_dtor);
  REQUIRE(mi != NULL);
  memset(mi->data, 1, 16);
  char *p = ck_jit_meminfo_varsize_realloc(mi, 4096);
  REQUIRE(p != NULL);
  CHECK(p[15] == 1 && mi->data == p && mi->size == 4096);
  void *extra = ck_jit_meminfo_varsize_alloc(mi, 8); /* replaces the data pointer */
  CHECK(extra != NULL && mi->data == extra);
  ck_jit_meminfo_varsize_free(mi, p);                /* not the data: kept */
  CHECK(mi->data == extra);
  elem_calls = 0;
  ck_jit_meminfo_call_dtor(mi);
  CHECK(elem_calls == 1);
  CHECK(ck_debug_alloc_count() >= before + 3);
  /* only varsize headers grow */
  ck_jit_meminfo *plain = ck_jit_meminfo_alloc(4);
  REQUIRE(plain != NULL);
  CHECK(ck_jit_meminfo_varsize_realloc(plain, 8) == NULL);
  CHECK(ck_last_status() == CK_ERR_INVALID_STATE);
  ck_jit_meminfo_call_dtor(plain);
}

static void test_out_of_memory(void) {
  ck_debug_fail_alloc_after(1);
  CHECK(ck_jit_meminfo_alloc(8) == NULL);
  CHECK(ck_last_status() == CK_ERR_NO_MEMORY);
  CHECK(ck_debug_fail_alloc_fired());
  ck_debug_fail_alloc_after(0);
  CHECK(ck_jit_meminfo_alloc(SIZE_MAX - 8) == NULL);
  CHECK(ck_last_status() == CK_ERR_NO_MEMORY);
}

static void test_layout_rows(void) {
  size_t n = 0;
  const ck_layout_entry *t = ck_layout_table(&n);
  int found = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(t[i].type, "ck_jit_meminfo") == 0 && strcmp(t[i].field, "data") == 0) {
      CHECK(t[i].offset == 24);
      found++;
    }
  }
  CHECK(found == 1);
}

CK_TEST_MAIN(CK_TEST(test_alloc_and_free), CK_TEST(test_aligned), CK_TEST(test_destructor), CK_TEST(test_varsize),
             CK_TEST(test_out_of_memory), CK_TEST(test_layout_rows))
