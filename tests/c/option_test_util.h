/* Helpers shared by the C tests of option types (tests/c/kernels/
 * test_assign_option.c, test_reduce_nulls.c, tests/c/ops/test_ops_nulls.c):
 * a type from a string, a 1-d (or 0-d) array of it, its writable data, and
 * the validity of one slot.  Failures print the library's message and return
 * NULL / false, which the callers' REQUIRE/CHECK then report. */
#ifndef CK_OPTION_TEST_UTIL_H
#define CK_OPTION_TEST_UTIL_H

#include "ck_test.h"

static inline ck_type parse(const char *s) {
  ck_type t = NULL;
  if (ck_type_parse(s, &t) != CK_OK) {
    fprintf(stderr, "parse '%s': %s\n", s, ck_last_error());
  }
  return t;
}

/* An array of `type`: n elements when the type is `strided * ...`, else 0-d. */
static inline ck_array_preamble *empty(const char *type, intptr_t n) {
  ck_type t = parse(type);
  ck_array_preamble *a = NULL;
  ck_status st = ck_array_empty(t, &n, ck_type_id_of(t) == CK_TYPE_STRIDED_DIM ? 1 : 0,
                                CK_ARRAY_DEFAULT_FLAGS, &a);
  if (st != CK_OK) {
    fprintf(stderr, "empty '%s': %s\n", type, ck_last_error());
  }
  ck_type_decref(t);
  return a;
}

static inline char *wdata(ck_array_preamble *a) {
  char *d = NULL;
  (void)ck_array_writable_data(a, &d);
  return d;
}

static inline bool valid_at(const ck_array_preamble *a, intptr_t i) {
  bool v = false;
  if (ck_array_valid_at(a, i, &v) != CK_OK) {
    fprintf(stderr, "valid_at %d: %s\n", (int)i, ck_last_error());
  }
  return v;
}

#endif
