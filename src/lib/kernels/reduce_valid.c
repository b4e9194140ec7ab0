/*
 * reduce_valid.c -- the direct path of ck_array_reduce_nulls (reduce.h):
 * sum, mean and count of a one-dimensional `?float64` / `?float32` array
 * whose slots step one bit per element, read straight from the values and
 * the validity bitmap, with no temporary array.
 *
 * The sum is NumPy's pairwise summation (the recursion of reduce.c: blocks
 * of 128 with eight accumulators, halves rounded down to a multiple of 8) in
 * which a null slot adds 0.0 -- a select, so whatever bytes lie under a null
 * (NaN, inf) never reach the sum.  That is the very sum the general path
 * computes (nulls replaced by the identity 0, then the pairwise sum), and on
 * the thread pool it is split along the same recursion (16 subtrees whose
 * sums combine in the same tree), so the result does not depend on the
 * thread count.  The count is a popcount of the bitmap.
 */
#include "kernels/reduce_internal.h"
#include "ckernel/apply.h"
#include "ckernel/parallel.h"
#include "ckernel/validity.h"

#include <string.h>

enum { CK__RV_BLOCK = 128, CK__RV_DEPTH = 4, CK__RV_LEAVES = 1 << CK__RV_DEPTH };

/* `len` (1..64) bits of `bits` from bit `off`, bit 0 of the result first;
 * reads only the bytes that hold them. */
static inline uint64_t ck__rv_bits(const uint8_t *bits, int64_t off, size_t len) {
  const uint8_t *p = bits + (off >> 3);
  unsigned sh = (unsigned)(off & 7);
  size_t nbytes = (sh + len + 7) / 8; /* at most 9 */
  uint64_t w = 0;
  for (size_t i = 0; i < nbytes && i < 8; i++) {
    w |= (uint64_t)p[i] << (8 * i);
  }
  w >>= sh;
  if (nbytes == 9) {
    w |= (uint64_t)p[8] << (64 - sh);
  }
  return len == 64 ? w : w & ((UINT64_C(1) << len) - 1);
}

/* The pairwise sum of p[0..n) where bit b + i of `bits` is set (NULL: all). */
#define CK__RV_DEFINE(NAME, T)                                                   \
  static double NAME(const T *p, const uint8_t *bits, int64_t b, size_t n) {     \
    if (n <= CK__RV_BLOCK) {                                                     \
      uint64_t w0 = ~UINT64_C(0), w1 = ~UINT64_C(0);                             \
      if (bits != NULL && n > 0) {                                               \
        w0 = ck__rv_bits(bits, b, n < 64 ? n : 64);                              \
        w1 = n > 64 ? ck__rv_bits(bits, b + 64, n - 64) : 0;                     \
      }                                                                          \
      if (n < 8) {                                                               \
        double r = 0.0;                                                          \
        for (size_t i = 0; i < n; i++) {                                         \
          r += (w0 >> i & 1) ? (double)p[i] : 0.0;                               \
        }                                                                        \
        return r;                                                                \
      }                                                                          \
      double r[8];                                                               \
      for (size_t k = 0; k < 8; k++) {                                           \
        r[k] = (w0 >> k & 1) ? (double)p[k] : 0.0;                               \
      }                                                                          \
      size_t i;                                                                  \
      for (i = 8; i < n - (n % 8); i += 8) {                                     \
        uint64_t w = i < 64 ? w0 >> i : w1 >> (i - 64);                          \
        for (size_t k = 0; k < 8; k++) {                                         \
          r[k] += (w >> k & 1) ? (double)p[i + k] : 0.0;                         \
        }                                                                        \
      }                                                                          \
      double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
      for (; i < n; i++) {                                                       \
        uint64_t w = i < 64 ? w0 >> i : w1 >> (i - 64);                          \
        res += (w & 1) ? (double)p[i] : 0.0;                                     \
      }                                                                          \
      return res;                                                                \
    }                                                                            \
    size_t n2 = n / 2;                                                           \
    n2 -= n2 % 8;                                                                \
    return NAME(p, bits, b, n2) + NAME(p + n2, bits, b + (int64_t)n2, n - n2);   \
  }
CK__RV_DEFINE(ck__rv_f64, double)
CK__RV_DEFINE(ck__rv_f32, float)

typedef struct ck__rv_job {
  const char *data;
  const uint8_t *bits;
  int64_t b0;
  bool f32;
  size_t nleaves;
  size_t off[CK__RV_LEAVES], len[CK__RV_LEAVES];
  double part[CK__RV_LEAVES];
} ck__rv_job;

static double ck__rv_sum(const ck__rv_job *j, size_t at, size_t n) {
  const uint8_t *bits = j->bits;
  int64_t b = j->b0 + (int64_t)at;
  return j->f32 ? ck__rv_f32((const float *)(const void *)j->data + at, bits, b, n)
                : ck__rv_f64((const double *)(const void *)j->data + at, bits, b, n);
}

static ck_status ck__rv_task(void *ctx, size_t b, size_t e, unsigned t) {
  (void)t;
  ck__rv_job *j = ctx;
  for (size_t c = b; c < e; c++) {
    j->part[c] = ck__rv_sum(j, j->off[c], j->len[c]);
  }
  return CK_OK;
}

/* The pairwise recursion over [at, at + n) cut at `depth`: leaves in order. */
static size_t ck__rv_leaves(size_t at, size_t n, int depth, ck__rv_job *j, size_t k) {
  if (depth == 0 || n <= CK__RV_BLOCK) {
    j->off[k] = at;
    j->len[k] = n;
    return k + 1;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  k = ck__rv_leaves(at, n2, depth - 1, j, k);
  return ck__rv_leaves(at + n2, n - n2, depth - 1, j, k);
}

static double ck__rv_combine(size_t n, int depth, const double *leaf, size_t *k) {
  if (depth == 0 || n <= CK__RV_BLOCK) {
    return leaf[(*k)++];
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  double a = ck__rv_combine(n2, depth - 1, leaf, k);
  return a + ck__rv_combine(n - n2, depth - 1, leaf, k);
}

/* A new 0-d array of `t` holding `value` (`valid`) or a null. */
static ck_status ck__rv_result(ck_type t, bool option, const void *value, bool valid,
                               ck_array_preamble **out) {
  ck_type rt = t;
  ck_status st = CK_OK;
  if (option && (st = ck_option_type_new(t, &rt)) != CK_OK) {
    return st;
  }
  ck_array_preamble *res = NULL;
  char *d = NULL;
  size_t es = ck_type_data_size(t);
  if ((st = ck_array_empty(rt, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &res)) == CK_OK &&
      (st = ck_array_writable_data(res, &d)) == CK_OK) {
    if (valid) {
      memcpy(d, value, es);
    } else {
      memset(d, 0, es);
    }
    if (option) {
      st = ck_option_set_valid((const ck_option_arrmeta *)(const void *)ck_array_arrmeta(res),
                               d, valid);
    }
  }
  if (option) {
    ck_type_decref(rt);
  }
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}

ck_status ck__reduce_valid_1d(int kind, const ck_array_preamble *src, const size_t *axes,
                              size_t naxes, bool keepdims, bool skip_nulls,
                              ck_array_preamble **out, bool *done) {
  *done = false;
  ck_type t = src->type;
  if (keepdims || !ck__rv_is_1d_dim(t) || !ck_type_is_option(t->element) ||
      (axes != NULL && !(naxes == 1 && axes[0] == 0))) {
    return CK_OK;
  }
  ck_type vt = t->element->element;
  ck_type_id vid = ck_type_id_of(vt);
  if (kind != CK__RV_COUNT && vid != CK_TYPE_FLOAT64 && vid != CK_TYPE_FLOAT32) {
    return CK_OK;
  }
  const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(src);
  const ck_option_arrmeta *om =
      (const ck_option_arrmeta *)(const void *)((const char *)dm + sizeof *dm);
  size_t n = (size_t)dm->size;
  if (kind != CK__RV_COUNT && dm->stride != (intptr_t)ck_type_data_size(vt)) {
    return CK_OK; /* not contiguous values */
  }
  int64_t b0 = -1, bstep = 1;
  ck_status st = ck_option_slot_bits(om, src->data, dm->stride, n, &b0, &bstep);
  if (st != CK_OK) {
    return st;
  }
  if (b0 >= 0 && bstep != 1) {
    return CK_OK;
  }
  const uint8_t *bits = b0 >= 0 ? om->bits : NULL;
  int64_t valid = bits != NULL ? ck_bitmap_count_set(bits, b0, (int64_t)n) : (int64_t)n;
  *done = true;
  if (kind == CK__RV_COUNT) {
    return ck__rv_result(CK_BUILTIN(CK_TYPE_INT64), false, &valid, true, out);
  }
  bool ok = skip_nulls ? valid > 0 : valid == (int64_t)n;
  if (!ok) {
    double zero = 0.0;
    return ck__rv_result(kind == CK__RV_MEAN ? CK_BUILTIN(CK_TYPE_FLOAT64) : vt, true, &zero,
                         false, out);
  }
  ck__rv_job j;
  memset(&j, 0, sizeof j);
  j.data = src->data;
  j.bits = bits;
  j.b0 = b0 >= 0 ? b0 : 0;
  j.f32 = vid == CK_TYPE_FLOAT32;
  double sum;
  if (n >= CK_PARALLEL_MIN_ELEMENTS && ck_get_num_threads() > 1) {
    j.nleaves = ck__rv_leaves(0, n, CK__RV_DEPTH, &j, 0);
    if ((st = ck_parallel_for(j.nleaves, 1, ck__rv_task, &j)) != CK_OK) {
      *done = false;
      return st;
    }
    size_t k = 0;
    sum = ck__rv_combine(n, CK__RV_DEPTH, j.part, &k);
  } else {
    sum = ck__rv_sum(&j, 0, n);
  }
  if (kind == CK__RV_MEAN) {
    double mean = sum / (double)valid;
    return ck__rv_result(CK_BUILTIN(CK_TYPE_FLOAT64), true, &mean, true, out);
  }
  if (j.f32) {
    float f = (float)sum;
    return ck__rv_result(vt, true, &f, true, out);
  }
  return ck__rv_result(vt, true, &sum, true, out);
}
