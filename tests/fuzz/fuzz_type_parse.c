/* libFuzzer target for the type-string parser.
 *
 * Properties checked on every input (abort() = finding):
 *   - parsing never crashes, leaks or trips a sanitizer;
 *   - a failure is CK_ERR_PARSE with a "ck_type_parse: at column N: ..."
 *     message, N within the input;
 *   - on success, the printed form parses again to an equal type with the
 *     same hash and an identical printed form (print is canonical);
 *   - arrays of the type can be made (strided dims get size 2), viewed,
 *     described, and freed, and every descriptor and memblock is released;
 *     a pattern type (one with a dimension variable) is refused with
 *     CK_ERR_TYPE instead.
 *
 * Build and run: see tests/fuzz/CMakeLists.txt. */
#include "ckernel/ckernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *print_alloc(ck_type t) {
  size_t n = 0, n2 = 0;
  if (ck_type_print(t, NULL, 0, &n) != CK_OK) abort();
  char *s = malloc(n + 1);
  if (s == NULL) abort();
  if (ck_type_print(t, s, n + 1, &n2) != CK_OK || n2 != n || strlen(s) != n) abort();
  return s;
}

static void exercise_array(ck_type t) {
  if (ck_type_flags(t) & CK_TYPE_FLAG_PATTERN) {
    ck_array_preamble *p = NULL;
    if (ck_array_empty(t, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &p) != CK_ERR_TYPE || p != NULL ||
        strstr(ck_last_error(), "is a pattern type") == NULL) {
      abort();
    }
    return;
  }
  intptr_t shape[CK_TYPE_MAX_DEPTH];
  size_t ndim = 0;
  size_t bytes = 1;
  ck_type d = t;
  while (ck_type_flags(d) & CK_TYPE_FLAG_ARRMETA_SIZED) {
    shape[ndim++] = 2;
    bytes *= 2;
    d = ck_type_element(d);
  }
  if (ck_type_data_size(d) > ((size_t)1 << 20) / bytes) {
    return; /* keep each run small */
  }
  ck_array_preamble *a = NULL, *v = NULL;
  if (ck_array_empty(t, shape, ndim, CK_ARRAY_DEFAULT_FLAGS, &a) != CK_OK) abort();
  char buf[256];
  size_t n;
  if (ck_array_debug_repr(a, buf, sizeof buf, &n) != CK_OK) abort();
  size_t nd = ck_array_ndim(a);
  for (size_t axis = 0; axis < nd && axis < 4; axis++) {
    ck_status st = ck_array_index(a, axis, -1, &v);
    if (st == CK_OK) {
      ck_array_decref(v);
    } else if (st != CK_ERR_INDEX && st != CK_ERR_NOT_SUPPORTED) {
      abort();
    }
    st = ck_array_slice(a, axis, CK_SLICE_NONE, CK_SLICE_NONE, -1, &v);
    if (st == CK_OK) {
      if (!ck_type_equal(ck_type_dtype(v->type), ck_type_dtype(a->type))) abort();
      ck_array_decref(v);
    } else if (st != CK_ERR_NOT_SUPPORTED) {
      abort();
    }
  }
  ck_array_decref(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t types = ck_type_live_count(), blocks = ck_memblock_live_count();
  ck_type t = NULL;
  ck_clear_error();
  ck_status st = ck_type_parse_n((const char *)data, size, &t);
  if (st != CK_OK) {
    const char *msg = ck_last_error();
    unsigned long col;
    if (st != CK_ERR_PARSE || t != NULL) abort();
    if (sscanf(msg, "ck_type_parse: at column %lu: ", &col) != 1 || col > size) abort();
  } else {
    char *s1 = print_alloc(t);
    ck_type u = NULL;
    if (ck_type_parse(s1, &u) != CK_OK) {
      fprintf(stderr, "canonical form '%s' does not parse: %s\n", s1, ck_last_error());
      abort();
    }
    if (!ck_type_equal(t, u) || ck_type_hash(t) != ck_type_hash(u)) abort();
    char *s2 = print_alloc(u);
    if (strcmp(s1, s2) != 0) abort();
    exercise_array(t);
    free(s1);
    free(s2);
    ck_type_decref(u);
    ck_type_decref(t);
  }
  if (ck_type_live_count() != types || ck_memblock_live_count() != blocks) abort();
  return 0;
}
