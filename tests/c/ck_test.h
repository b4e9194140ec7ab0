/*
 * ck_test.h -- the minimal test harness of the C suite.
 *
 * Each test program defines `static void test_xxx(void)` functions and lists
 * them in CK_TEST_MAIN.  CHECK records a failure (file:line, expression) and
 * goes on; REQUIRE returns from the test function.  The program exits 1 if
 * any check failed, so ctest sees it.
 */
#ifndef CK_TEST_H
#define CK_TEST_H

#include "ckernel/ckernel.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ck_test_failures;
static int ck_test_checks;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ck_test_checks++;                                                          \
    if (!(cond)) {                                                             \
      ck_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
    }                                                                          \
  } while (0)

#define REQUIRE(cond)                                                          \
  do {                                                                         \
    ck_test_checks++;                                                          \
    if (!(cond)) {                                                             \
      ck_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__,       \
              #cond);                                                          \
      return;                                                                  \
    }                                                                          \
  } while (0)

/* A call that must succeed; prints the library's message if it does not. */
#define CHECK_OK(call)                                                         \
  do {                                                                         \
    ck_status ck_test_st_ = (call);                                            \
    ck_test_checks++;                                                          \
    if (ck_test_st_ != CK_OK) {                                                \
      ck_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__,       \
              #call, ck_status_name(ck_test_st_), ck_last_error());            \
    }                                                                          \
  } while (0)

#define REQUIRE_OK(call)                                                       \
  do {                                                                         \
    ck_status ck_test_st_ = (call);                                            \
    ck_test_checks++;                                                          \
    if (ck_test_st_ != CK_OK) {                                                \
      ck_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__,       \
              #call, ck_status_name(ck_test_st_), ck_last_error());            \
      return;                                                                  \
    }                                                                          \
  } while (0)

/* A call that must fail with `code` and a message containing `text`. */
#define CHECK_ERR(call, code, text)                                            \
  do {                                                                         \
    ck_clear_error();                                                          \
    ck_status ck_test_st_ = (call);                                            \
    ck_test_checks++;                                                          \
    if (ck_test_st_ != (code) || strstr(ck_last_error(), (text)) == NULL) {    \
      ck_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s: expected %s containing '%s', got %s '%s'\n", \
              __FILE__, __LINE__, #call, ck_status_name(code), (text),         \
              ck_status_name(ck_test_st_), ck_last_error());                   \
    }                                                                          \
  } while (0)

/* Iteration counts of heavy tests are divided by CK_TEST_SCALE (set when the
 * suite runs under valgrind, which is ~50x slower). */
static inline long ck_test_scaled(long n) {
  const char *s = getenv("CK_TEST_SCALE");
  long d = s ? strtol(s, NULL, 10) : 1;
  if (d < 1) {
    d = 1;
  }
  return n / d > 0 ? n / d : 1;
}

/* Fault injection (ckernel/debug.h): the fail-every-allocation loop, once.
 * Each run makes the k-th allocation fail (k = 1, 2, ...) until a run
 * completes without reaching it (the clean run, which ends the loop):
 *
 *   ck_test_faults f = CK_TEST_FAULTS(1000);
 *   while (ck_test_faults_arm(&f)) {       // arms allocation f.k, clears the error
 *     ck_status st = the_call(...);
 *     if (!ck_test_faults_fired(&f)) {     // disarms; false: the clean run
 *       CHECK(st == CK_OK);  ...           // the result; the loop ends here
 *       break;
 *     }
 *     CHECK(st == CK_ERR_NO_MEMORY);  ...  // and nothing leaked
 *   }
 *   CHECK(f.runs >= expected);             // runs in which the failure fired
 *
 * Reaching `limit` runs without a clean one is a failed check (the loop was
 * too short to prove anything about the success path).  A test may step f.k
 * itself to stride over a long sequence. */
typedef struct {
  uint64_t k;     /* the allocation failing in this run (1, 2, ...) */
  uint64_t limit; /* most runs before the clean one */
  int runs;       /* runs in which the armed failure fired */
  bool done;      /* the clean run happened */
} ck_test_faults;

#define CK_TEST_FAULTS(limit) {0, (uint64_t)(limit), 0, false}

static inline bool ck_test_faults_arm(ck_test_faults *f) {
  if (f->done) {
    return false;
  }
  if (f->k >= f->limit) {
    ck_test_checks++;
    ck_test_failures++;
    fprintf(stderr, "fault injection: no clean run within %llu runs\n",
            (unsigned long long)f->limit);
    return false;
  }
  f->k++;
  ck_clear_error();
  ck_debug_fail_alloc_after(f->k);
  return true;
}

static inline bool ck_test_faults_fired(ck_test_faults *f) {
  bool fired = ck_debug_fail_alloc_fired();
  ck_debug_fail_alloc_after(0);
  if (fired) {
    f->runs++;
  } else {
    f->done = true;
  }
  return fired;
}

/* Helpers for tests that build types and arrays (inline: unused ones cost
 * nothing).  P parses a type string (NULL and a message on failure); tstr
 * prints a type into a static buffer; arr makes an empty array. */
static inline ck_type P(const char *s) {
  ck_type t = NULL;
  if (ck_type_parse(s, &t) != CK_OK) {
    fprintf(stderr, "parse '%s' failed: %s\n", s, ck_last_error());
  }
  return t;
}

static char ck_test_tbuf[512];
static inline const char *tstr(ck_type t) {
  return ck_type_print(t, ck_test_tbuf, sizeof ck_test_tbuf, NULL) == CK_OK
             ? ck_test_tbuf
             : "<failed>";
}

static inline ck_array_preamble *arr(const char *type, size_t nd,
                                     const intptr_t *shape) {
  ck_type t = P(type);
  ck_array_preamble *a = NULL;
  if (ck_array_empty(t, shape, nd, CK_ARRAY_DEFAULT_FLAGS, &a) != CK_OK) {
    fprintf(stderr, "ck_array_empty(%s): %s\n", type, ck_last_error());
  }
  ck_type_decref(t);
  return a;
}

typedef struct {
  const char *name;
  void (*fn)(void);
} ck_test_case;

#define CK_TEST(fn) {#fn, fn}

#define CK_TEST_MAIN(...)                                                      \
  int main(int argc, char **argv) {                                            \
    static const ck_test_case cases[] = {__VA_ARGS__};                         \
    int64_t live0 = ck_memblock_live_count();                                  \
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {              \
      if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) {                   \
        continue;                                                              \
      }                                                                        \
      int before = ck_test_failures;                                           \
      int64_t live = ck_memblock_live_count();                                 \
      cases[i].fn();                                                           \
      if (ck_memblock_live_count() != live) {                                  \
        ck_test_failures++;                                                    \
        fprintf(stderr, "%s: leaked %" PRId64 " memblocks\n", cases[i].name,   \
                ck_memblock_live_count() - live);                              \
      }                                                                        \
      printf("%-48s %s\n", cases[i].name,                                      \
             ck_test_failures == before ? "ok" : "FAILED");                    \
    }                                                                          \
    if (ck_memblock_live_count() != live0) {                                   \
      ck_test_failures++;                                                      \
    }                                                                          \
    printf("%d checks, %d failures\n", ck_test_checks, ck_test_failures);      \
    return ck_test_failures ? 1 : 0;                                           \
  }

#endif /* CK_TEST_H */
