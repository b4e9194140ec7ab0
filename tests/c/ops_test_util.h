/*
 * ops_test_util.h -- helpers shared by the registry/ops tests: call a
 * registry operation on one element (through its single entry point AND its
 * strided entry point, checking that both agree bit for bit), float
 * comparisons in ulps, and float16 bit helpers.
 */
#ifndef CK_OPS_TEST_UTIL_H
#define CK_OPS_TEST_UTIL_H

#include "ck_test.h"

#include <math.h>

static inline const ck_op *ot_op(const char *name) {
  const ck_op *op = NULL;
  if (ck_op_find(name, &op) != CK_OK) {
    fprintf(stderr, "no operation %s: %s\n", name, ck_last_error());
  }
  return op;
}

static inline size_t ot_size(ck_type_id t) { return ck_type_data_size((ck_type)(uintptr_t)t); }

/* Call `name` on one element of each argument.  Builds the single kernel
 * and calls it, then the strided kernel on a 3-element copy with element 1
 * the real one (count 1 at an offset; dst and src strides as given by the
 * element sizes), and checks both give the same bytes and status.  *out_ret
 * receives the result type.  Returns the kernel's status. */
static inline int ot_call(const char *name, size_t n, const ck_type_id *types,
                   const void *const *args, void *out, ck_type_id *out_ret) {
  const ck_op *op = ot_op(name);
  if (op == NULL) {
    return CK_ERR_INDEX;
  }
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type_id ret = CK_TYPE_UNINITIALIZED;
  ck_status st = ck_op_make_kernel(op, &kb, 0, CK_KERNEL_REQUEST_SINGLE, n, types,
                                   &ret, NULL);
  if (st != CK_OK) {
    ck_kernel_builder_destroy(&kb);
    return st;
  }
  if (out_ret != NULL) {
    *out_ret = ret;
  }
  ck_prefix *k = ck_kernel_builder_get(&kb, 0);
  int r1 = ck_prefix_single(k)((char *)out, (const char *const *)args, k);
  ck_kernel_builder_destroy(&kb);

  /* strided, count 1, from the middle of 3-element buffers */
  char sbuf[CK_OP_MAX_ARGS][48];
  const char *sp[CK_OP_MAX_ARGS];
  intptr_t ss[CK_OP_MAX_ARGS];
  for (size_t i = 0; i < n; i++) {
    size_t sz = ot_size(types[i]);
    memset(sbuf[i], 0x5a, sizeof sbuf[i]);
    memcpy(sbuf[i] + sz, args[i], sz);
    sp[i] = sbuf[i] + sz;
    ss[i] = (intptr_t)sz;
  }
  char dbuf[48];
  memset(dbuf, 0x77, sizeof dbuf);
  size_t rsz = ot_size(ret);
  st = ck_op_make_kernel(op, &kb, 0, CK_KERNEL_REQUEST_STRIDED, n, types, NULL, NULL);
  if (st != CK_OK) {
    ck_kernel_builder_destroy(&kb);
    return st;
  }
  k = ck_kernel_builder_get(&kb, 0);
  int r2 = ck_prefix_strided(k)(dbuf + rsz, (intptr_t)rsz, sp, ss, 1, k);
  ck_kernel_builder_destroy(&kb);
  if (r1 != r2 || (r1 == 0 && memcmp(dbuf + rsz, out, rsz) != 0)) {
    fprintf(stderr, "%s: single and strided entry points disagree (%d, %d)\n", name,
            r1, r2);
    ck_test_failures++;
  }
  return r1;
}

static inline int ot_call1(const char *name, ck_type_id t, const void *a, void *out,
                    ck_type_id *ret) {
  const void *args[1] = {a};
  return ot_call(name, 1, &t, args, out, ret);
}

static inline int ot_call2(const char *name, ck_type_id ta, const void *a, ck_type_id tb,
                    const void *b, void *out, ck_type_id *ret) {
  const void *args[2] = {a, b};
  ck_type_id t[2] = {ta, tb};
  return ot_call(name, 2, t, args, out, ret);
}

/* Distance in units in the last place between two doubles (0 if both NaN
 * or equal; huge for a sign/NaN mismatch). */
static inline double ot_ulps(double got, double want) {
  if (isnan(got) || isnan(want)) {
    return isnan(got) && isnan(want) ? 0 : 1e300;
  }
  if (got == want) {
    return 0;
  }
  if (isinf(got) || isinf(want)) {
    return 1e300;
  }
  int e;
  frexp(want, &e);
  double ulp = ldexp(1.0, e - 53);
  if (ulp == 0) {
    ulp = 0x1p-1074;
  }
  return fabs(got - want) / ulp;
}

static inline double ot_ulpsf(float got, double want) {
  if (isnan(got) || isnan(want)) {
    return isnan(got) && isnan(want) ? 0 : 1e300;
  }
  if ((double)got == want) {
    return 0;
  }
  if (isinf(got) || isinf(want)) {
    return isinf(got) && (float)want == got ? 0 : 1e300;
  }
  int e;
  frexp(want, &e);
  return fabs((double)got - want) / ldexp(1.0, e - 24);
}

/* Same bits (so -0.0 != 0.0 and NaN == NaN). */
static inline bool ot_same_f64(double a, double b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}
static inline bool ot_same_f32(float a, float b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

typedef struct {
  float re, im;
} ot_c64;
typedef struct {
  double re, im;
} ot_c128;

#endif /* CK_OPS_TEST_UTIL_H */
