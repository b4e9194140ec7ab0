/*
 * reduce.c -- reductions (see ckernel/reduce.h): the typed accumulate
 * leaves, pairwise float summation, the binary-kernel adapter, and the
 * driver that builds one strided dim kernel per source axis (destination
 * stride 0 on reduced axes) over a leaf.
 *
 * Over 1000 lines and one concept: the leaves are instantiated per type from
 * the element access at the top (static inline, S constant at each call), and
 * the driver picks among them; split across files the leaves would need their
 * access helpers in a private header and an exported table of leaf makers,
 * for no reader's gain.
 */
#include "kernels/assign_internal.h"
#include "kernels/lift_internal.h"
#include "types/type_internal.h"

#include "ckernel/reduce.h"

#include <stdalign.h>
#include <string.h>

/* ---- element access (S is a constant at every call) -------------------------- */

static CK__ALWAYS_INLINE uint64_t ck__ld_int(int S, const char *p) {
  switch (S) {
  case CK_TYPE_BOOL: return p[0] != 0;
  case CK_TYPE_INT8: { int8_t x; memcpy(&x, p, 1); return (uint64_t)(int64_t)x; }
  case CK_TYPE_INT16: { int16_t x; memcpy(&x, p, 2); return (uint64_t)(int64_t)x; }
  case CK_TYPE_INT32: { int32_t x; memcpy(&x, p, 4); return (uint64_t)(int64_t)x; }
  case CK_TYPE_INT64: { int64_t x; memcpy(&x, p, 8); return (uint64_t)x; }
  case CK_TYPE_UINT8: { uint8_t x; memcpy(&x, p, 1); return x; }
  case CK_TYPE_UINT16: { uint16_t x; memcpy(&x, p, 2); return x; }
  case CK_TYPE_UINT32: { uint32_t x; memcpy(&x, p, 4); return x; }
  default: { uint64_t x; memcpy(&x, p, 8); return x; }
  }
}

/* Store the low bits of v as integer type S. */
static CK__ALWAYS_INLINE void ck__st_int(int S, char *p, uint64_t v) {
  switch (ck__builtin_size(S)) {
  case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
  default: memcpy(p, &v, 8); break;
  }
}

static CK__ALWAYS_INLINE double ck__ld_f(int S, const char *p) {
  switch (S) {
  case CK_TYPE_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return ck__f16_to_f64(h); }
  case CK_TYPE_FLOAT32: case CK_TYPE_COMPLEX64: { float f; memcpy(&f, p, 4); return f; }
  default: { double d; memcpy(&d, p, 8); return d; }
  }
}

static CK__ALWAYS_INLINE void ck__st_f(int S, char *p, double v) {
  switch (S) {
  case CK_TYPE_FLOAT16: { uint16_t h = ck__f64_to_f16(v); memcpy(p, &h, 2); break; }
  case CK_TYPE_FLOAT32: case CK_TYPE_COMPLEX64: { float f = (float)v; memcpy(p, &f, 4); break; }
  default: memcpy(p, &v, 8); break;
  }
}

/* Component size of a complex type. */
static CK__ALWAYS_INLINE size_t ck__csz(int S) {
  return S == CK_TYPE_COMPLEX64 ? 4 : 8;
}

static CK__ALWAYS_INLINE bool ck__truth(int S, const char *p) {
  switch (ck__cls(S)) {
  case CK__CLS_F: { double d = ck__ld_f(S, p); return d != 0.0; }
  case CK__CLS_C:
    return ck__ld_f(S, p) != 0.0 || ck__ld_f(S, p + ck__csz(S)) != 0.0;
  default:
    return ck__ld_int(S, p) != 0;
  }
}

/* ---- pairwise summation (NumPy's scheme) --------------------------------------- */

#define CK__PW_BLOCK 128
/* How far ahead (bytes) the contiguous versions prefetch: a sum reads each
 * byte once, so it runs at memory bandwidth, and one core keeps too few reads
 * in flight without help (1e8 float64: 14 -> 16.5 GB/s on one thread, 24.5 ->
 * 29.5 GB/s on two, measured on this project's 2-core machine). */
#define CK__PW_PREFETCH_BYTES 1024
#if defined(__GNUC__) || defined(__clang__)
#define CK__PW_PREFETCH(addr) __builtin_prefetch((addr), 0, 0)
#else
#define CK__PW_PREFETCH(addr) ((void)(addr))
#endif
/* NAME(p, stride, n); STRIDE is the stride the body uses: `stride_arg` in
 * general, or a constant (the element size) for the contiguous version, in
 * which the eight accumulators vectorise; PREFETCH: 1 for the contiguous
 * versions (prefetching changes no addition, so the sums stay the same). */
#define CK__DEFINE_PAIRWISE(NAME, S, STRIDE, PREFETCH)                         \
  static double NAME(const char *p, intptr_t stride_arg, size_t n) {           \
    const intptr_t s = (STRIDE);                                               \
    (void)stride_arg;                                                          \
    if (n < 8) {                                                               \
      double r = 0.0;                                                          \
      for (size_t i = 0; i < n; i++) {                                         \
        r += ck__ld_f(S, p + (intptr_t)i * s);                                 \
      }                                                                        \
      return r;                                                                \
    }                                                                          \
    if (n <= CK__PW_BLOCK) {                                                   \
      double r[8];                                                             \
      for (size_t k = 0; k < 8; k++) {                                         \
        r[k] = ck__ld_f(S, p + (intptr_t)k * s);                               \
      }                                                                        \
      size_t i;                                                                \
      for (i = 8; i < n - (n % 8); i += 8) {                                   \
        if (PREFETCH) {                                                        \
          CK__PW_PREFETCH(p + (intptr_t)i * s + CK__PW_PREFETCH_BYTES);        \
        }                                                                      \
        for (size_t k = 0; k < 8; k++) {                                       \
          r[k] += ck__ld_f(S, p + (intptr_t)(i + k) * s);                      \
        }                                                                      \
      }                                                                        \
      double res = ((r[0] + r[1]) + (r[2] + r[3])) +                           \
                   ((r[4] + r[5]) + (r[6] + r[7]));                            \
      for (; i < n; i++) {                                                     \
        res += ck__ld_f(S, p + (intptr_t)i * s);                               \
      }                                                                        \
      return res;                                                              \
    }                                                                          \
    size_t n2 = n / 2;                                                         \
    n2 -= n2 % 8;                                                              \
    return NAME(p, stride_arg, n2) +                                           \
           NAME(p + (intptr_t)n2 * s, stride_arg, n - n2);                     \
  }
CK__DEFINE_PAIRWISE(ck__pw_f16, CK_TYPE_FLOAT16, stride_arg, 0)
CK__DEFINE_PAIRWISE(ck__pw_f32, CK_TYPE_FLOAT32, stride_arg, 0)
CK__DEFINE_PAIRWISE(ck__pw_f64, CK_TYPE_FLOAT64, stride_arg, 0)
CK__DEFINE_PAIRWISE(ck__pw_f32_unit, CK_TYPE_FLOAT32, (intptr_t)sizeof(float), 1)
CK__DEFINE_PAIRWISE(ck__pw_f64_unit, CK_TYPE_FLOAT64, (intptr_t)sizeof(double), 1)

/* The same sums (same order of additions) whatever the version. */
static CK__ALWAYS_INLINE double ck__pairwise(int S, const char *p, intptr_t s,
                                             size_t n) {
  switch (S) {
  case CK_TYPE_FLOAT16: return ck__pw_f16(p, s, n);
  case CK_TYPE_FLOAT32:
  case CK_TYPE_COMPLEX64:
    return s == (intptr_t)sizeof(float) ? ck__pw_f32_unit(p, s, n) : ck__pw_f32(p, s, n);
  default:
    return s == (intptr_t)sizeof(double) ? ck__pw_f64_unit(p, s, n) : ck__pw_f64(p, s, n);
  }
}

/* ---- the accumulate loops ---------------------------------------------------------- */

static CK__ALWAYS_INLINE bool ck__c_isnan(double re, double im) {
  return re != re || im != im;
}

/* Is (ar, ai) before (br, bi) lexicographically (no NaNs)? */
static CK__ALWAYS_INLINE bool ck__c_lt(double ar, double ai, double br, double bi) {
  return ar < br || (ar == br && ai < bi);
}

/* dst[i] op= src[i] for i < n; with ds == 0 the run folds into dst[0]. */
static CK__ALWAYS_INLINE int ck__red_run(int OP, int S, char *dst, intptr_t ds,
                                         const char *src, intptr_t ss, size_t n) {
  const int cls = ck__cls(S);
  if (OP == CK_REDUCE_ANY || OP == CK_REDUCE_ALL) {
    const bool want = OP == CK_REDUCE_ANY; /* the value that decides */
    if (ds == 0) {
      if ((dst[0] != 0) == want) {
        return 0;
      }
      for (size_t i = 0; i < n; i++) {
        if (ck__truth(S, src + (intptr_t)i * ss) == want) {
          dst[0] = (char)want;
          return 0;
        }
      }
      return 0;
    }
    for (size_t i = 0; i < n; i++) {
      char *d = dst + (intptr_t)i * ds;
      if ((d[0] != 0) != want && ck__truth(S, src + (intptr_t)i * ss) == want) {
        d[0] = (char)want;
      }
    }
    return 0;
  }
  if (cls == CK__CLS_I || cls == CK__CLS_U || cls == CK__CLS_B) {
    if (OP == CK_REDUCE_SUM || OP == CK_REDUCE_PRODUCT) {
      /* the result is 64-bit; wrap-around arithmetic on the bits */
      if (ds == 0) {
        uint64_t acc;
        memcpy(&acc, dst, 8);
        for (size_t i = 0; i < n; i++) {
          uint64_t x = ck__ld_int(S, src + (intptr_t)i * ss);
          acc = OP == CK_REDUCE_SUM ? acc + x : acc * x;
        }
        memcpy(dst, &acc, 8);
        return 0;
      }
      for (size_t i = 0; i < n; i++) {
        char *d = dst + (intptr_t)i * ds;
        uint64_t acc;
        memcpy(&acc, d, 8);
        uint64_t x = ck__ld_int(S, src + (intptr_t)i * ss);
        acc = OP == CK_REDUCE_SUM ? acc + x : acc * x;
        memcpy(d, &acc, 8);
      }
      return 0;
    }
    /* min / max in the source type */
    const bool is_signed = cls == CK__CLS_I;
    for (size_t i = 0; i < n; i++) {
      char *d = dst + (intptr_t)i * ds;
      uint64_t a = ck__ld_int(S, d), x = ck__ld_int(S, src + (intptr_t)i * ss);
      bool take;
      if (is_signed) {
        take = OP == CK_REDUCE_MIN ? (int64_t)x < (int64_t)a : (int64_t)x > (int64_t)a;
      } else {
        take = OP == CK_REDUCE_MIN ? x < a : x > a;
      }
      if (take) {
        ck__st_int(S, d, x);
      }
    }
    return 0;
  }
  if (cls == CK__CLS_F) {
    if (ds == 0) {
      double acc = ck__ld_f(S, dst);
      if (OP == CK_REDUCE_SUM) {
        acc += ck__pairwise(S, src, ss, n);
      } else {
        for (size_t i = 0; i < n; i++) {
          double x = ck__ld_f(S, src + (intptr_t)i * ss);
          if (OP == CK_REDUCE_PRODUCT) {
            acc *= x;
          } else if (OP == CK_REDUCE_MIN) {
            acc = (acc < x || acc != acc) ? acc : x;
          } else {
            acc = (acc > x || acc != acc) ? acc : x;
          }
        }
      }
      ck__st_f(S, dst, acc); /* min/max: a value of the type, exact */
      return 0;
    }
    for (size_t i = 0; i < n; i++) {
      char *d = dst + (intptr_t)i * ds;
      double acc = ck__ld_f(S, d), x = ck__ld_f(S, src + (intptr_t)i * ss);
      if (OP == CK_REDUCE_SUM) {
        acc += x;
      } else if (OP == CK_REDUCE_PRODUCT) {
        acc *= x;
      } else if (OP == CK_REDUCE_MIN) {
        acc = (acc < x || acc != acc) ? acc : x;
      } else {
        acc = (acc > x || acc != acc) ? acc : x;
      }
      ck__st_f(S, d, acc);
    }
    return 0;
  }
  /* complex */
  const size_t cs = ck__csz(S);
  if (ds == 0 && OP == CK_REDUCE_SUM) {
    double re = ck__ld_f(S, dst) + ck__pairwise(S, src, ss, n);
    double im = ck__ld_f(S, dst + cs) + ck__pairwise(S, src + cs, ss, n);
    ck__st_f(S, dst, re);
    ck__st_f(S, dst + cs, im);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    char *d = dst + (intptr_t)i * ds;
    const char *s = src + (intptr_t)i * ss;
    double ar = ck__ld_f(S, d), ai = ck__ld_f(S, d + cs);
    double xr = ck__ld_f(S, s), xi = ck__ld_f(S, s + cs);
    if (OP == CK_REDUCE_SUM) {
      ar += xr;
      ai += xi;
    } else if (OP == CK_REDUCE_PRODUCT) {
      double r = ar * xr - ai * xi;
      ai = ar * xi + ai * xr;
      ar = r;
    } else if (!ck__c_isnan(ar, ai)) {
      bool take = ck__c_isnan(xr, xi) ||
                  (OP == CK_REDUCE_MIN ? ck__c_lt(xr, xi, ar, ai)
                                       : ck__c_lt(ar, ai, xr, xi));
      if (take) {
        ar = xr;
        ai = xi;
      }
    }
    ck__st_f(S, d, ar);
    ck__st_f(S, d + cs, ai);
  }
  return 0;
}

#define CK__RED_FUNCS(tok, name, SID, T, K, OPN, OP)                           \
  static int ck__red1_##OPN##_##tok(char *dst, const char *const *src,        \
                                    ck_prefix *self) {                         \
    (void)self;                                                                \
    return ck__red_run(OP, SID, dst, 0, src[0], 0, 1);                         \
  }                                                                            \
  static int ck__redN_##OPN##_##tok(char *dst, intptr_t ds,                    \
                                    const char *const *src,                    \
                                    const intptr_t *ss, size_t n,              \
                                    ck_prefix *self) {                         \
    (void)self;                                                                \
    return ck__red_run(OP, SID, dst, ds, src[0], ss[0], n);                    \
  }
#define CK__RED_OPS(X, ...)                                                    \
  X(sum, CK_REDUCE_SUM, __VA_ARGS__)                                           \
  X(product, CK_REDUCE_PRODUCT, __VA_ARGS__)                                   \
  X(minimum, CK_REDUCE_MIN, __VA_ARGS__)                                       \
  X(maximum, CK_REDUCE_MAX, __VA_ARGS__)                                       \
  X(any, CK_REDUCE_ANY, __VA_ARGS__)                                           \
  X(all, CK_REDUCE_ALL, __VA_ARGS__)
#define CK__RED_FUNCS_OP(OPN, OP, unused) CK__BUILTIN_TYPES(CK__RED_FUNCS, OPN, OP)
CK__RED_OPS(CK__RED_FUNCS_OP, 0)

#define CK__RED_INFO(tok, name, SID, T, K, OPN, OP)                            \
  [SID] = {"reduce_" #OPN "_" name, ck__red1_##OPN##_##tok,                    \
           ck__redN_##OPN##_##tok, sizeof(ck_prefix), NULL},
#define CK__RED_INFO_ROW(OPN, OP, unused)                                      \
  [OP] = {CK__BUILTIN_TYPES(CK__RED_INFO, OPN, OP)},
static const ck_kernel_info ck__red_infos[6][CK_BUILTIN_TYPE_COUNT] = {
    CK__RED_OPS(CK__RED_INFO_ROW, 0)};

/* An accumulate leaf is a bare prefix: its operation and type are implied by
 * its place in the table. */
static size_t ck__red_fields(const ck_prefix *self, const ck_kernel_info *info,
                             ck_kernel_field *out, size_t max);

/* ---- names, dtypes, the leaf factory -------------------------------------------- */

const char *ck_reduce_op_name(ck_reduce_op op) {
  switch (op) {
  case CK_REDUCE_SUM: return "sum";
  case CK_REDUCE_PRODUCT: return "product";
  case CK_REDUCE_MIN: return "minimum";
  case CK_REDUCE_MAX: return "maximum";
  case CK_REDUCE_ANY: return "any";
  case CK_REDUCE_ALL: return "all";
  }
  return NULL;
}

ck_status ck_reduce_op_from_name(const char *name, ck_reduce_op *out) {
  static const struct {
    const char *name;
    ck_reduce_op op;
  } names[] = {{"sum", CK_REDUCE_SUM},         {"add", CK_REDUCE_SUM},
               {"product", CK_REDUCE_PRODUCT}, {"prod", CK_REDUCE_PRODUCT},
               {"multiply", CK_REDUCE_PRODUCT}, {"min", CK_REDUCE_MIN},
               {"minimum", CK_REDUCE_MIN},     {"max", CK_REDUCE_MAX},
               {"maximum", CK_REDUCE_MAX},     {"any", CK_REDUCE_ANY},
               {"logical_or", CK_REDUCE_ANY},  {"all", CK_REDUCE_ALL},
               {"logical_and", CK_REDUCE_ALL}};
  if (name == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].op;
      return CK_OK;
    }
  }
  return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                  "unknown reduction '%s' (expected sum, product, min, max, any "
                  "or all)",
                  name);
}

static ck_type_id ck__reduce_dtype(ck_reduce_op op, int s) {
  switch (op) {
  case CK_REDUCE_SUM:
  case CK_REDUCE_PRODUCT:
    switch (ck__cls(s)) {
    case CK__CLS_B: case CK__CLS_I: return CK_TYPE_INT64;
    case CK__CLS_U: return CK_TYPE_UINT64;
    default: return (ck_type_id)s;
    }
  case CK_REDUCE_ANY:
  case CK_REDUCE_ALL:
    return CK_TYPE_BOOL;
  default:
    return (ck_type_id)s;
  }
}

ck_status ck_reduce_result_dtype(ck_reduce_op op, ck_type src_dtype, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (ck_reduce_op_name(op) == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown reduction %d", (int)op);
  }
  if (!ck_type_is_builtin(src_dtype) || !ck__is_builtin_id((int)ck_type_id_of(src_dtype))) {
    return CK_ERROR(CK_ERR_TYPE, "reductions need a builtin dtype");
  }
  *out = CK_BUILTIN(ck__reduce_dtype(op, (int)ck_type_id_of(src_dtype)));
  return CK_OK;
}

ck_status ck_make_reduce_accumulate_kernel(ck_kernel_builder *ckb, size_t offset,
                                           ck_reduce_op op, ck_type_id src_dtype,
                                           ck_kernel_request req, size_t *out_end) {
  ck_status st = ck__check_kernel_args(__func__, ckb, offset, req);
  if (st != CK_OK) {
    return st;
  }
  if (ck_reduce_op_name(op) == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown reduction %d", (int)op);
  }
  if (!ck__is_builtin_id((int)src_dtype)) {
    return CK_ERROR(CK_ERR_TYPE, "type id %d is not a builtin scalar type",
                    (int)src_dtype);
  }
  const ck_kernel_info *info = &ck__red_infos[op][src_dtype];
  ck__kernel_info_register_decoded(info, 1, ck__red_fields); /* for dumps; idempotent */
  size_t end = offset + sizeof(ck_prefix);
  if ((st = ck_kernel_builder_ensure_capacity_leaf(ckb, end)) != CK_OK) {
    return st;
  }
  ck_prefix *self = ck_kernel_builder_get(ckb, offset);
  (void)ck_prefix_set_function(self, req, info->single, info->strided);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}

/* ---- the binary adapter ----------------------------------------------------------- */

typedef struct ck__binacc_kernel {
  ck_prefix base;
  size_t child_offset; /* relative; 0 while not built */
} ck__binacc_kernel;

static int ck__binaccN(char *dst, intptr_t ds, const char *const *src,
                       const intptr_t *ss, size_t n, ck_prefix *self) {
  const ck__binacc_kernel *k = (const ck__binacc_kernel *)(void *)self;
  ck_prefix *child = ck_prefix_child(self, k->child_offset);
  const char *s[2] = {dst, src[0]};
  intptr_t st[2] = {ds, ss[0]};
  return ck_prefix_strided(child)(dst, ds, s, st, n, child);
}

static int ck__binacc1(char *dst, const char *const *src, ck_prefix *self) {
  intptr_t zero = 0;
  return ck__binaccN(dst, 0, src, &zero, 1, self);
}

static void ck__binacc_destruct(ck_prefix *self) {
  ck__binacc_kernel *k = (ck__binacc_kernel *)(void *)self;
  if (k->child_offset != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, k->child_offset));
  }
}

static size_t ck__red_fields(const ck_prefix *self, const ck_kernel_info *info,
                             ck_kernel_field *out, size_t max) {
  (void)self;
  ck__fields f = {out, max, 0};
  const ck_kernel_info *base = &ck__red_infos[0][0];
  if (info >= base && info < base + 6 * CK_BUILTIN_TYPE_COUNT) {
    size_t at = (size_t)(info - base);
    CK__FIELD_IMPLIED(&f, "op", ck_reduce_op_name((ck_reduce_op)(at / CK_BUILTIN_TYPE_COUNT)));
    CK__FIELD_IMPLIED(&f, "type",
                      ck_type_id_name((ck_type_id)(at % CK_BUILTIN_TYPE_COUNT)));
  }
  return f.n;
}

static size_t ck__binacc_children(const ck_prefix *self, const ck_kernel_info *info,
                                  size_t *rel, size_t max) {
  (void)info;
  const ck__binacc_kernel *k = (const ck__binacc_kernel *)(const void *)self;
  if (k->child_offset == 0) {
    return 0;
  }
  if (max > 0) {
    rel[0] = k->child_offset;
  }
  return 1;
}

static size_t ck__binacc_fields(const ck_prefix *self, const ck_kernel_info *info,
                                ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__binacc_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_CHILD(&f, K, k, child_offset);
  return f.n;
}

/* The adapter that folds with a binary kernel: child.strided(dst, ds, {dst,
 * src}, {ds, ss}, n). */
static const ck_kernel_info ck__binacc_info = {
    "reduce_binary_adapter", ck__binacc1, ck__binaccN, sizeof(ck__binacc_kernel),
    ck__binacc_children};

/* ---- the driver --------------------------------------------------------------------- */

typedef ck_status (*ck__leaf_fn)(void *data, ck_kernel_builder *ckb, size_t offset,
                                 ck_kernel_request req);

typedef struct ck__reduce_spec {
  const char *label;     /* for the no-identity message */
  ck_type_id res_id;
  const void *identity;  /* NULL: start from the first element */
  ck__leaf_fn leaf;
  void *leaf_data;
  int op;                /* a ck_reduce_op, or -1 (user binary kernel: serial) */
  ck_type_id src_id;
} ck__reduce_spec;

typedef struct ck__typed_leaf {
  ck_reduce_op op;
  ck_type_id src_id;
} ck__typed_leaf;

static ck_status ck__typed_leaf_fn(void *data, ck_kernel_builder *ckb, size_t offset,
                                   ck_kernel_request req) {
  const ck__typed_leaf *t = data;
  return ck_make_reduce_accumulate_kernel(ckb, offset, t->op, t->src_id, req, NULL);
}

typedef struct ck__copy_leaf {
  ck_type_id id;
} ck__copy_leaf;

static ck_status ck__copy_leaf_fn(void *data, ck_kernel_builder *ckb, size_t offset,
                                  ck_kernel_request req) {
  const ck__copy_leaf *c = data;
  return ck_make_builtin_assignment_kernel(ckb, offset, c->id, c->id, req,
                                           CK_ERRMODE_NOCHECK, NULL);
}

typedef struct ck__bin_leaf {
  ck_binary_kernel_factory factory;
  void *data;
  ck_type_id dtype;
} ck__bin_leaf;

static ck_status ck__bin_leaf_fn(void *data, ck_kernel_builder *ckb, size_t offset,
                                 ck_kernel_request req) {
  const ck__bin_leaf *b = data;
  size_t child = ck_kernel_align_offset(offset + sizeof(ck__binacc_kernel));
  ck_status st = ck_kernel_builder_ensure_capacity(ckb, child);
  if (st != CK_OK) {
    return st;
  }
  ck__kernel_info_register_decoded(&ck__binacc_info, 1, ck__binacc_fields);
  ck__binacc_kernel *k = (ck__binacc_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__binacc_destruct;
  (void)ck_prefix_set_function(&k->base, req, ck__binacc1, ck__binaccN);
  k->child_offset = child - offset;
  size_t end;
  return b->factory(b->data, ckb, child, b->dtype, CK_KERNEL_REQUEST_STRIDED, &end);
}

/*
 * Merge adjacent axes that walk memory as one (size[a+1] * stride[a+1] ==
 * stride[a] for the source and the destination alike) and drop size-1
 * axes, in place: a C-contiguous full reduction becomes one run (one leaf
 * call, summed pairwise over all of it as NumPy does), a contiguous
 * reduction over the last axes one run per output element.  Returns the new
 * number of axes (a size-0 axis is kept: no work).
 */
static size_t ck__coalesce_axes(size_t nd, intptr_t *size, intptr_t *sstr,
                                intptr_t *dstr) {
  size_t out = 0;
  for (size_t a = 0; a < nd; a++) {
    if (size[a] == 1 && nd > 1) {
      continue;
    }
    if (out > 0 && size[a] != 0 && size[out - 1] != 0 &&
        sstr[out - 1] == size[a] * sstr[a] && dstr[out - 1] == size[a] * dstr[a]) {
      size[out - 1] *= size[a]; /* the product is the size of an existing array */
      sstr[out - 1] = sstr[a];
      dstr[out - 1] = dstr[a];
      continue;
    }
    size[out] = size[a];
    sstr[out] = sstr[a];
    dstr[out] = dstr[a];
    out++;
  }
  if (out == 0) { /* every axis had size 1 */
    size[0] = 1;
    sstr[0] = 0;
    dstr[0] = 0;
    out = 1;
  }
  return out;
}

/* Build the tree (one strided dim kernel per axis, then the leaf) into a
 * fresh builder and run it once. */
static ck_status ck__run_tree(size_t nd, const intptr_t *size, const intptr_t *sstride,
                              const intptr_t *dstride, ck__leaf_fn leaf, void *leaf_data,
                              char *dst, const char *src) {
  intptr_t sz[CK_TYPE_MAX_DEPTH], ss[CK_TYPE_MAX_DEPTH], ds[CK_TYPE_MAX_DEPTH];
  memcpy(sz, size, nd * sizeof *sz);
  memcpy(ss, sstride, nd * sizeof *ss);
  memcpy(ds, dstride, nd * sizeof *ds);
  nd = nd > 0 ? ck__coalesce_axes(nd, sz, ss, ds) : 0;
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  size_t off = 0;
  ck_kernel_request req = CK_KERNEL_REQUEST_SINGLE;
  ck_status st = CK_OK;
  for (size_t a = 0; a < nd && st == CK_OK; a++) {
    size_t child;
    st = ck__make_strided_dim_kernel(&kb, off, sz[a], ds[a], 1, &ss[a], req, &child);
    off = child;
    req = CK_KERNEL_REQUEST_STRIDED;
  }
  if (st == CK_OK) {
    st = leaf(leaf_data, &kb, off, req);
  }
  if (st == CK_OK) {
    ck_prefix *root = ck_kernel_builder_get(&kb, 0);
    st = (ck_status)ck_prefix_single(root)(dst, &src, root);
  }
  ck_kernel_builder_destroy(&kb);
  return st;
}

/* ---- running on the thread pool ------------------------------------------------------ */

/*
 * A reduction runs on the thread pool when it is large (CK_PARALLEL_MIN_ELEMENTS
 * source elements, apply.h) and its result does not depend on the split, so
 * it is the same for every thread count:
 *   - an output axis (not reduced) is split: each thread owns whole output
 *     elements and accumulates them in the serial order;
 *   - a full reduction of one run (after coalescing) is split into chunks
 *     whose partial results combine exactly: integer/bool sums and products
 *     (wrap-around arithmetic), any/all, min/max; float and complex sums are
 *     split along NumPy's pairwise recursion and the partial sums (in double)
 *     combined in the same tree, which is the very sum the serial pairwise
 *     loop computes.  Float/complex products and user binary kernels stay
 *     serial.
 */
enum { CK__PW_SPLIT_DEPTH = 4 }; /* 16 pairwise subtrees */

typedef struct ck__axis_job {
  const ck__reduce_spec *sp;
  size_t nd, axis;
  const intptr_t *size, *sstr, *dstr;
  char *dst;
  const char *src;
} ck__axis_job;

static ck_status ck__axis_task(void *ctx, size_t b, size_t e, unsigned t) {
  (void)t;
  const ck__axis_job *j = ctx;
  intptr_t sz[CK_TYPE_MAX_DEPTH];
  memcpy(sz, j->size, j->nd * sizeof *sz);
  sz[j->axis] = (intptr_t)(e - b);
  return ck__run_tree(j->nd, sz, j->sstr, j->dstr, j->sp->leaf, j->sp->leaf_data,
                      j->dst + (intptr_t)b * j->dstr[j->axis],
                      j->src + (intptr_t)b * j->sstr[j->axis]);
}

/* NumPy's pairwise recursion over [0, n), cut at depth `depth` (or where it
 * stops splitting): the leaves' offsets and lengths, in order. */
static size_t ck__pw_leaves(size_t at, size_t n, int depth, size_t *off, size_t *len,
                            size_t k) {
  if (depth == 0 || n <= CK__PW_BLOCK) {
    off[k] = at;
    len[k] = n;
    return k + 1;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  k = ck__pw_leaves(at, n2, depth - 1, off, len, k);
  return ck__pw_leaves(at + n2, n - n2, depth - 1, off, len, k);
}

/* The same recursion, combining the leaves' sums (consumed from *k). */
static double ck__pw_combine(size_t n, int depth, const double *leaf, size_t *k) {
  if (depth == 0 || n <= CK__PW_BLOCK) {
    return leaf[(*k)++];
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  double a = ck__pw_combine(n2, depth - 1, leaf, k);
  return a + ck__pw_combine(n - n2, depth - 1, leaf, k);
}

enum { CK__PW_MAX_LEAVES = 1 << CK__PW_SPLIT_DEPTH, CK__CHUNKS = 64 };

typedef struct ck__run_job {
  int op, sid, rid;
  const char *src;
  intptr_t ss;
  size_t n;
  bool first_copy;            /* no identity: a chunk starts from its first element */
  size_t nchunks;
  size_t off[CK__CHUNKS], len[CK__CHUNKS];
  double part[2][CK__CHUNKS]; /* pairwise: real / imaginary partial sums */
  alignas(16) unsigned char acc[CK__CHUNKS][16]; /* exact: partial results */
} ck__run_job;

static ck_status ck__run_task(void *ctx, size_t b, size_t e, unsigned t) {
  (void)t;
  ck__run_job *j = ctx;
  for (size_t c = b; c < e; c++) {
    const char *p = j->src + (intptr_t)j->off[c] * j->ss;
    if (j->op < 0) { /* pairwise sum */
      j->part[0][c] = ck__pairwise(j->sid, p, j->ss, j->len[c]);
      if (ck__cls(j->sid) == CK__CLS_C) {
        j->part[1][c] = ck__pairwise(j->sid, p + ck__csz(j->sid), j->ss, j->len[c]);
      }
      continue;
    }
    size_t skip = 0;
    if (j->first_copy) { /* min/max: the result type is the source type */
      memcpy(j->acc[c], p, ck__builtin_size(j->sid));
      skip = 1;
    }
    const ck_kernel_info *leaf = &ck__red_infos[j->op][j->sid];
    const char *s = p + (intptr_t)skip * j->ss;
    int st = leaf->strided((char *)j->acc[c], 0, &s, &j->ss, j->len[c] - skip, NULL);
    if (st != 0) {
      return (ck_status)st;
    }
  }
  return CK_OK;
}

/* Can a full reduction with `op` over `sid` be split (see above)? -1: no;
 * 0: exact chunks; 1: pairwise subtrees. */
static int ck__split_kind(int op, int sid) {
  int cls = ck__cls(sid);
  bool real = cls == CK__CLS_F || cls == CK__CLS_C;
  if (op == CK_REDUCE_SUM) {
    return real ? 1 : 0;
  }
  if (op == CK_REDUCE_PRODUCT) {
    return real ? -1 : 0;
  }
  return 0; /* min, max, any, all: selections */
}

/* The main pass of ck__reduce: serial, or split as described above. */
static ck_status ck__run_reduction(const ck__reduce_spec *sp, size_t nd,
                                   const intptr_t *size, const intptr_t *sstride,
                                   const intptr_t *dstride, char *dst, const char *src) {
  intptr_t sz[CK_TYPE_MAX_DEPTH], ss[CK_TYPE_MAX_DEPTH], ds[CK_TYPE_MAX_DEPTH];
  memcpy(sz, size, nd * sizeof *sz);
  memcpy(ss, sstride, nd * sizeof *ss);
  memcpy(ds, dstride, nd * sizeof *ds);
  size_t cnd = nd > 0 ? ck__coalesce_axes(nd, sz, ss, ds) : 0;
  size_t total = 1;
  bool big = sp->op >= 0 && nd > 0 && ck_get_num_threads() > 1;
  for (size_t a = 0; a < cnd && big; a++) {
    big = ck__mul_size(total, (size_t)sz[a], &total);
  }
  big = big && total >= CK_PARALLEL_MIN_ELEMENTS;
  if (big) {
    /* an output axis to split: the outermost one */
    for (size_t a = 0; a < cnd; a++) {
      if (ds[a] != 0 && sz[a] >= 2) {
        size_t inner = total / (size_t)sz[a];
        size_t min_chunk = (CK_PARALLEL_MIN_CHUNK_ELEMENTS + inner - 1) / inner;
        if ((size_t)sz[a] < 2 * min_chunk) {
          break;
        }
        ck__axis_job j = {sp, cnd, a, sz, ss, ds, dst, src};
        return ck_parallel_for((size_t)sz[a], min_chunk, ck__axis_task, &j);
      }
    }
    int kind = cnd == 1 && ds[0] == 0 ? ck__split_kind(sp->op, (int)sp->src_id) : -1;
    if (kind >= 0) {
      ck__run_job *j = ck__calloc(1, sizeof *j, "ck_array_reduce");
      if (j == NULL) {
        return CK_ERR_NO_MEMORY;
      }
      j->op = kind == 1 ? -1 : sp->op;
      j->sid = (int)sp->src_id;
      j->rid = (int)sp->res_id;
      j->src = src;
      j->ss = ss[0];
      j->n = (size_t)sz[0];
      j->first_copy = sp->identity == NULL;
      if (kind == 1) {
        j->nchunks = ck__pw_leaves(0, j->n, CK__PW_SPLIT_DEPTH, j->off, j->len, 0);
      } else {
        size_t per = (j->n + CK__CHUNKS - 1) / CK__CHUNKS;
        per = per < CK_PARALLEL_MIN_CHUNK_ELEMENTS / 4 ? CK_PARALLEL_MIN_CHUNK_ELEMENTS / 4
                                                       : per;
        for (size_t at = 0; at < j->n; at += per) {
          j->off[j->nchunks] = at;
          j->len[j->nchunks] = j->n - at < per ? j->n - at : per;
          if (sp->identity != NULL) {
            memcpy(j->acc[j->nchunks], sp->identity, ck__builtin_size(j->rid));
          }
          j->nchunks++;
        }
      }
      ck_status st = ck_parallel_for(j->nchunks, 1, ck__run_task, j);
      if (st == CK_OK && kind == 1) {
        /* dst += the pairwise total, as the serial leaf does */
        size_t k = 0;
        double re = ck__pw_combine(j->n, CK__PW_SPLIT_DEPTH, j->part[0], &k);
        ck__st_f(j->sid, dst, ck__ld_f(j->sid, dst) + re);
        if (ck__cls(j->sid) == CK__CLS_C) {
          size_t cs = ck__csz(j->sid);
          k = 0;
          double im = ck__pw_combine(j->n, CK__PW_SPLIT_DEPTH, j->part[1], &k);
          ck__st_f(j->sid, dst + cs, ck__ld_f(j->sid, dst + cs) + im);
        }
      } else if (st == CK_OK) {
        /* fold the partial results (of the result type) into dst in order */
        const ck_kernel_info *fold = &ck__red_infos[sp->op][j->rid];
        const char *p = (const char *)j->acc;
        intptr_t stride = (intptr_t)sizeof j->acc[0];
        st = (ck_status)fold->strided(dst, 0, &p, &stride, j->nchunks, NULL);
      }
      ck__free(j);
      return st;
    }
  }
  return ck__run_tree(nd, size, sstride, dstride, sp->leaf, sp->leaf_data, dst, src);
}

static ck_status ck__axes_mask(size_t nd, const size_t *axes, size_t naxes, bool *red) {
  for (size_t a = 0; a < nd; a++) {
    red[a] = axes == NULL;
  }
  if (axes == NULL) {
    return CK_OK;
  }
  for (size_t i = 0; i < naxes; i++) {
    if (axes[i] >= nd) {
      return ck__error(CK_ERR_INDEX, "ck_array_reduce",
                       "axis %zu is out of bounds for array of dimension %zu",
                       axes[i], nd);
    }
    if (red[axes[i]]) {
      return ck__error(CK_ERR_VALUE, "ck_array_reduce", "duplicate value in 'axis'");
    }
    red[axes[i]] = true;
  }
  return CK_OK;
}

/* Checks common to the entry points: an array of builtin dtype without var
 * dims.  Writes ndim, shape, strides. */
static ck_status ck__reduce_check(const ck_array_preamble *src, size_t *nd,
                                  intptr_t *shape, intptr_t *strides) {
  if (src == NULL || src->memblock.kind != CK_MEMBLOCK_ARRAY) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_array_reduce",
                     "source is not an array");
  }
  ck_type t = src->type;
  size_t n = 0;
  const char *m = ck_array_arrmeta(src);
  while (ck__is_dim(t)) {
    if (t->id == CK_TYPE_VAR_DIM) {
      return ck__error(CK_ERR_NOT_SUPPORTED, "ck_array_reduce",
                       "reductions over var dims are not supported");
    }
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)m;
    shape[n] = dm->size;
    strides[n] = dm->stride;
    n++;
    m += sizeof(ck_dim_arrmeta);
    t = t->element;
  }
  if (!ck_type_is_builtin(t)) {
    char tb[128];
    size_t pos = 0;
    ck__type_append(src->type, tb, sizeof tb, &pos);
    return ck__error(CK_ERR_TYPE, "ck_array_reduce",
                     "reductions need a builtin dtype, not '%s'", tb);
  }
  *nd = n;
  return CK_OK;
}

static ck_status ck__reduce(const ck__reduce_spec *sp, const ck_array_preamble *src,
                            const bool *red, bool keepdims, ck_array_preamble **out) {
  size_t nd = 0;
  intptr_t shape[CK_TYPE_MAX_DEPTH], sstr[CK_TYPE_MAX_DEPTH];
  ck_status st = ck__reduce_check(src, &nd, shape, sstr);
  if (st != CK_OK) {
    return st;
  }
  intptr_t rshape[CK_TYPE_MAX_DEPTH];
  size_t rnd = 0, rtotal = 1, rcount = 1;
  for (size_t a = 0; a < nd; a++) {
    if (red[a]) {
      rcount *= (size_t)shape[a];
      if (keepdims) {
        rshape[rnd++] = 1;
      }
    } else {
      rtotal *= (size_t)shape[a];
      rshape[rnd++] = shape[a];
    }
  }
  ck_type rt = CK_BUILTIN(sp->res_id);
  for (size_t a = 0; a < rnd; a++) {
    ck_type nt;
    st = ck_strided_dim_type_new(rt, &nt);
    ck_type_decref(rt);
    if (st != CK_OK) {
      return st;
    }
    rt = nt;
  }
  ck_array_preamble *res = NULL;
  st = ck_array_empty(rt, rshape, rnd, CK_ARRAY_DEFAULT_FLAGS, &res);
  ck_type_decref(rt);
  if (st != CK_OK) {
    return st;
  }
  /* destination strides per source axis (0 on reduced axes) */
  intptr_t dstr[CK_TYPE_MAX_DEPTH], init_size[CK_TYPE_MAX_DEPTH];
  const ck_dim_arrmeta *rm = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(res);
  size_t r = 0;
  for (size_t a = 0; a < nd; a++) {
    if (red[a]) {
      dstr[a] = 0;
      init_size[a] = shape[a] > 0 ? 1 : 0;
      r += keepdims;
    } else {
      dstr[a] = rm[r++].stride;
      init_size[a] = shape[a];
    }
  }
  if (rtotal > 0) {
    size_t esize = ck__builtin_size((int)sp->res_id);
    if (sp->identity != NULL) {
      for (size_t i = 0; i < rtotal; i++) {
        memcpy(res->data + i * esize, sp->identity, esize);
      }
    } else if (rcount == 0) {
      st = ck__error(CK_ERR_VALUE, "ck_array_reduce",
                     "zero-size array to reduction operation %s which has no "
                     "identity",
                     sp->label);
    } else {
      ck__copy_leaf c = {sp->res_id};
      st = ck__run_tree(nd, init_size, sstr, dstr, ck__copy_leaf_fn, &c, res->data,
                        src->data);
    }
    if (st == CK_OK) {
      st = ck__run_reduction(sp, nd, shape, sstr, dstr, res->data, src->data);
    }
  }
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}

static ck_status ck__reduce_named(const char *op_name, const ck_array_preamble *src,
                                  const bool *red_or_null, const size_t *axes,
                                  size_t naxes, bool keepdims, ck_array_preamble **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_reduce_op op = CK_REDUCE_SUM;
  ck_status st = ck_reduce_op_from_name(op_name, &op);
  if (st != CK_OK) {
    return st;
  }
  size_t nd = 0;
  intptr_t shape[CK_TYPE_MAX_DEPTH], strides[CK_TYPE_MAX_DEPTH];
  if ((st = ck__reduce_check(src, &nd, shape, strides)) != CK_OK) {
    return st;
  }
  bool red[CK_TYPE_MAX_DEPTH];
  if (red_or_null != NULL) {
    memcpy(red, red_or_null, nd * sizeof(bool));
  } else if ((st = ck__axes_mask(nd, axes, naxes, red)) != CK_OK) {
    return st;
  }
  ck_type_id sid = ck_type_id_of(ck_type_dtype(src->type));
  ck__typed_leaf leaf = {op, sid};
  unsigned char identity[16];
  memset(identity, 0, sizeof identity);
  ck_type_id rid = ck__reduce_dtype(op, (int)sid);
  const void *idp = identity;
  switch (op) {
  case CK_REDUCE_PRODUCT: {
    /* 1 in the result type */
    uint64_t one = 1;
    st = ck_assign_builtin_value(rid, identity, CK_TYPE_UINT64, &one,
                                 CK_ERRMODE_NOCHECK);
    break;
  }
  case CK_REDUCE_ALL:
    identity[0] = 1;
    break;
  case CK_REDUCE_MIN:
  case CK_REDUCE_MAX:
    idp = NULL;
    break;
  default:
    break;
  }
  if (st != CK_OK) {
    return st;
  }
  ck__reduce_spec sp = {ck_reduce_op_name(op), rid, idp, ck__typed_leaf_fn, &leaf,
                        (int)op, sid};
  return ck__reduce(&sp, src, red, keepdims, out);
}

ck_status ck__reduce_values(const char *op_name, const ck_array_preamble *src,
                            const size_t *axes, size_t naxes, bool keepdims,
                            ck_array_preamble **out) {
  return ck__reduce_named(op_name, src, NULL, axes, naxes, keepdims, out);
}

ck_status ck__reduce_values_mask(const char *op_name, const ck_array_preamble *src,
                                 const bool *mask, size_t nmask, bool keepdims,
                                 ck_array_preamble **out) {
  if (mask == NULL && nmask > 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL mask");
  }
  size_t nd = src != NULL && src->memblock.kind == CK_MEMBLOCK_ARRAY
                  ? ck_array_ndim(src)
                  : 0;
  if (src != NULL && nmask != nd) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "mask has %zu entries for an array of dimension %zu", nmask, nd);
  }
  bool none[1] = {false};
  return ck__reduce_named(op_name, src, mask != NULL ? mask : none, NULL, 0,
                          keepdims, out);
}

ck_status ck_array_reduce_binary(ck_binary_kernel_factory factory, void *factory_data,
                                 const char *op_label, ck_type_id dtype,
                                 const void *identity, const ck_array_preamble *src,
                                 const size_t *axes, size_t naxes, bool keepdims,
                                 ck_array_preamble **out) {
  if (out == NULL || factory == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  *out = NULL;
  if (!ck__is_builtin_id((int)dtype)) {
    return CK_ERROR(CK_ERR_TYPE, "type id %d is not a builtin scalar type", (int)dtype);
  }
  size_t nd = 0;
  intptr_t shape[CK_TYPE_MAX_DEPTH], strides[CK_TYPE_MAX_DEPTH];
  ck_status st = ck__reduce_check(src, &nd, shape, strides);
  if (st != CK_OK) {
    return st;
  }
  bool red[CK_TYPE_MAX_DEPTH];
  if ((st = ck__axes_mask(nd, axes, naxes, red)) != CK_OK) {
    return st;
  }
  /* convert the source to dtype first when needed */
  ck_array_preamble *conv = NULL;
  if (ck_type_id_of(ck_type_dtype(src->type)) != dtype) {
    ck_type t = CK_BUILTIN(dtype);
    for (size_t a = 0; a < nd && st == CK_OK; a++) {
      ck_type nt = NULL;
      st = ck_strided_dim_type_new(t, &nt);
      ck_type_decref(t);
      t = nt;
    }
    if (st == CK_OK) {
      st = ck_array_empty(t, shape, nd, CK_ARRAY_DEFAULT_FLAGS, &conv);
    }
    ck_type_decref(t);
    if (st == CK_OK) {
      st = ck_array_assign(conv, src, CK_ERRMODE_DEFAULT);
    }
    if (st != CK_OK) {
      ck_array_decref(conv);
      return st;
    }
    src = conv;
  }
  ck__bin_leaf leaf = {factory, factory_data, dtype};
  ck__reduce_spec sp = {op_label != NULL ? op_label : "reduce", dtype, identity,
                        ck__bin_leaf_fn, &leaf, -1, dtype};
  st = ck__reduce(&sp, src, red, keepdims, out);
  ck_array_decref(conv);
  return st;
}
