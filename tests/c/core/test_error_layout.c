/* The error model (thread-local messages, status names) and the exported
 * layout table. */
#include "ck_test.h"

#include <pthread.h>
#include <stdalign.h>

static void *other_thread(void *arg) {
  /* A fresh thread starts with no error, whatever other threads did. */
  int *ok = arg;
  *ok = ck_last_status() == CK_OK && ck_last_error()[0] == '\0';
  ck_set_error(CK_ERR_USER, "from the other thread");
  return NULL;
}

static void test_thread_local_errors(void) {
  ck_memblock *mb = NULL;
  CHECK_ERR(ck_pod_memblock_new(0, NULL), CK_ERR_INVALID_ARGUMENT,
            "ck_pod_memblock_new: out must not be NULL");
  (void)mb;
  int ok = 0;
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, other_thread, &ok) == 0);
  pthread_join(t, NULL);
  CHECK(ok);
  /* Our message is untouched by the other thread's failure. */
  CHECK(ck_last_status() == CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "out must not be NULL") != NULL);
  ck_clear_error();
  CHECK(ck_last_status() == CK_OK && ck_last_error()[0] == '\0');
}

static void test_set_error_truncates(void) {
  char big[5000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  CHECK(ck_set_error(CK_ERR_USER, big) == CK_ERR_USER);
  CHECK(strlen(ck_last_error()) < sizeof big - 1);
  CHECK(ck_last_status() == CK_ERR_USER);
  ck_set_error(CK_ERR_VALUE, NULL);
  CHECK(ck_last_error()[0] == '\0');
}

static void test_status_names(void) {
  CHECK(strcmp(ck_status_name(CK_OK), "CK_OK") == 0);
  CHECK(strcmp(ck_status_name(CK_ERR_NO_MEMORY), "CK_ERR_NO_MEMORY") == 0);
  CHECK(strcmp(ck_status_name(CK_ERR_USER), "CK_ERR_USER") == 0);
  CHECK(strcmp(ck_status_name((ck_status)999), "CK_ERR_UNKNOWN") == 0);
}

static const ck_layout_entry *find(const char *type, const char *field) {
  size_t n = 0;
  const ck_layout_entry *t = ck_layout_table(&n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(t[i].type, type) == 0 && strcmp(t[i].field, field) == 0) {
      return &t[i];
    }
  }
  return NULL;
}

static void test_layout_table(void) {
  size_t n = 0;
  CHECK(ck_layout_table(&n) != NULL && n >= 10);
  const ck_layout_entry *e = find("ck_memblock", "");
  REQUIRE(e != NULL);
  CHECK(e->size == 8 && e->offset == 4);
  e = find("ck_memblock", "kind");
  REQUIRE(e != NULL);
  CHECK(e->offset == 4 && e->size == 4);
  e = find("ck_pod_allocator_api", "finalize");
  REQUIRE(e != NULL);
  CHECK(e->offset == 2 * sizeof(void *));
  CHECK(find("ck_memblock", "nonexistent") == NULL);
}

static void test_versions(void) {
  CHECK(ck_abi_version() == CK_ABI_VERSION);
  CHECK(strcmp(ck_version_string(), "0.1.0") == 0);
}

CK_TEST_MAIN(CK_TEST(test_thread_local_errors), CK_TEST(test_set_error_truncates),
             CK_TEST(test_status_names), CK_TEST(test_layout_table),
             CK_TEST(test_versions))
