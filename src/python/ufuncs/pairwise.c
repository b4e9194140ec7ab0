/*
 * pairwise.c -- float reductions of ckernels ufuncs summed as NumPy sums.
 *
 * NumPy's float32 / float64 `add` loops, called for a reduction (the
 * binary-reduce layout: out == in0, both strides 0), do not add the n
 * elements one after the other: they add the pairwise sum of the n elements
 * (numpy/_core/src/umath/loops_utils.h.src, `pairwise_sum`: fewer than 8
 * elements one by one; up to 128 in eight interleaved accumulators combined
 * as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest; more split in two
 * at a multiple of 8 below n/2) to the accumulator, in the element type.
 * A ufunc made here that is a sum -- reorderable (the function is
 * associative) with identity 0; of the registry operations, `add` (hypot
 * has identity 0 too, and NumPy reduces it one by one) -- and whose loop
 * has one float32 or float64 type for all three operands reduces in the
 * same tree with its own kernel as the combining function, so that `ops.add.ufunc.reduce(x)` and `f.ufunc.reduce`
 * of a jitted `a + b` give np.add.reduce's bits.  The registry's add sums
 * directly (its kernels are `a + b`); for a jitted function every combining
 * step is a call of the loop's strided kernel (several at once where the
 * tree allows: the eight accumulators run as eight strided reductions).
 */
#include "ufuncs_internal.h"

#include <string.h>

#define CKD_PW_BLOCK 128 /* NumPy's PW_BLOCKSIZE */

typedef struct ckd_pw {
  const ckd_loop *L;
  npy_intp es; /* element size */
} ckd_pw;

/* dst[i*ds] = f(a[i*as], b[i*bs]) for i < n */
static ck_status ckd_pw_call(const ckd_pw *p, char *dst, npy_intp ds, const char *a,
                             npy_intp as, const char *b, npy_intp bs, npy_intp n) {
  if (n <= 0) {
    return CK_OK;
  }
  const char *src[2] = {a, b};
  intptr_t ss[2] = {(intptr_t)as, (intptr_t)bs};
  return p->L->strided(dst, (intptr_t)ds, src, ss, (size_t)n, p->L->kernel);
}

/* *acc = f(... f(f(*acc, a[0]), a[s]) ..., a[(n-1)*s]) */
static ck_status ckd_pw_seq(const ckd_pw *p, char *acc, const char *a, npy_intp s,
                            npy_intp n) {
  return ckd_pw_call(p, acc, 0, acc, 0, a, s, n);
}

/* The pairwise reduction of n >= 1 elements at a (stride s) into out. */
static ck_status ckd_pw_sum(const ckd_pw *p, char *out, const char *a, npy_intp n,
                            npy_intp s) {
  npy_intp es = p->es;
  ck_status st;
  if (n < 8) {
    /* NumPy starts from -0.0, which `-0.0 + x` leaves as x: the first element */
    memcpy(out, a, (size_t)es);
    return ckd_pw_seq(p, out, a + s, s, n - 1);
  }
  if (n <= CKD_PW_BLOCK) {
    _Alignas(16) char r[8 * 16];
    for (int j = 0; j < 8; j++) {
      memcpy(r + j * es, a + j * s, (size_t)es);
    }
    npy_intp full = n - n % 8;
    for (int j = 0; j < 8; j++) { /* r[j] accumulates a[j + 8k], k >= 1 */
      st = ckd_pw_seq(p, r + j * es, a + (8 + j) * s, 8 * s, full / 8 - 1);
      if (st != CK_OK) {
        return st;
      }
    }
    /* ((r0+r1)+(r2+r3)) + ((r4+r5)+(r6+r7)) */
    if ((st = ckd_pw_call(p, r, 2 * es, r, 2 * es, r + es, 2 * es, 4)) != CK_OK ||
        (st = ckd_pw_call(p, r, 4 * es, r, 4 * es, r + 2 * es, 4 * es, 2)) != CK_OK ||
        (st = ckd_pw_call(p, r, 0, r, 0, r + 4 * es, 0, 1)) != CK_OK) {
      return st;
    }
    memcpy(out, r, (size_t)es);
    return ckd_pw_seq(p, out, a + full * s, s, n - full);
  }
  npy_intp n2 = n / 2;
  n2 -= n2 % 8;
  _Alignas(16) char right[16];
  if ((st = ckd_pw_sum(p, out, a, n2, s)) != CK_OK ||
      (st = ckd_pw_sum(p, right, a + n2 * s, n - n2, s)) != CK_OK) {
    return st;
  }
  return ckd_pw_call(p, out, 0, out, 0, right, 0, 1);
}

/* The registry's add (its kernels are `a + b` in the element type): NumPy's
 * pairwise_sum itself, without a kernel call per step. */
#define CKD_PW_DIRECT(NAME, T)                                                         \
  static T NAME(const char *a, npy_intp n, npy_intp s) {                              \
    if (n < 8) {                                                                       \
      T res = -0.0;                                                                    \
      for (npy_intp i = 0; i < n; i++) {                                               \
        res += *(const T *)(const void *)(a + i * s);                                  \
      }                                                                                \
      return res;                                                                      \
    }                                                                                  \
    if (n <= CKD_PW_BLOCK) {                                                           \
      T r[8];                                                                          \
      for (int j = 0; j < 8; j++) {                                                    \
        r[j] = *(const T *)(const void *)(a + j * s);                                  \
      }                                                                                \
      npy_intp i;                                                                      \
      for (i = 8; i < n - (n % 8); i += 8) {                                           \
        for (int j = 0; j < 8; j++) {                                                  \
          r[j] += *(const T *)(const void *)(a + (i + j) * s);                         \
        }                                                                              \
      }                                                                                \
      T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));       \
      for (; i < n; i++) {                                                             \
        res += *(const T *)(const void *)(a + i * s);                                  \
      }                                                                                \
      return res;                                                                      \
    }                                                                                  \
    npy_intp n2 = n / 2;                                                               \
    n2 -= n2 % 8;                                                                      \
    return NAME(a, n2, s) + NAME(a + n2 * s, n - n2, s);                               \
  }
CKD_PW_DIRECT(ckd_pw_add_f32, float)
CKD_PW_DIRECT(ckd_pw_add_f64, double)

int ckd_pairwise_applies(const ckd_data *d, const ckd_loop *L, char *const *data,
                         const npy_intp *strides) {
  if (d == NULL || !d->pairwise || L->nin != 2 || L->pyint >= 0 || L->strings != 0 ||
      data[0] != data[2] || strides[0] != 0 || strides[2] != 0) {
    return 0;
  }
  ck_type_id t = L->ids[2];
  return (t == CK_TYPE_FLOAT32 || t == CK_TYPE_FLOAT64) && L->ids[0] == t && L->ids[1] == t;
}

ck_status ckd_pairwise_reduce(const ckd_loop *L, int op_add, char *const *data, npy_intp n,
                              const npy_intp *strides) {
  if (n <= 0) {
    return CK_OK;
  }
  if (op_add) {
    if (L->ids[2] == CK_TYPE_FLOAT32) {
      *(float *)(void *)data[0] += ckd_pw_add_f32(data[1], n, strides[1]);
    } else {
      *(double *)(void *)data[0] += ckd_pw_add_f64(data[1], n, strides[1]);
    }
    return CK_OK;
  }
  ckd_pw p = {L, L->ids[2] == CK_TYPE_FLOAT32 ? 4 : 8};
  _Alignas(16) char sum[16];
  ck_status st = ckd_pw_sum(&p, sum, data[1], n, strides[1]);
  if (st != CK_OK) {
    return st;
  }
  /* out = f(out, pairwise sum), as NumPy's `*iop1 += pairwise_sum(...)` */
  return ckd_pw_call(&p, data[0], 0, data[0], 0, sum, 0, 1);
}
