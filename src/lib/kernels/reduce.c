/*
 * reduce.c -- reductions (see ckernel/reduce.h): the typed accumulate
 * leaves, pairwise float summation, the binary-kernel adapter, and the
 * driver that builds one strided dim kernel per source axis (destination
 * stride 0 on reduced axes) over a leaf.
 */
#include "kernels/assign_internal.h"
#include "kernels/lift_internal.h"
#include "types/type_internal.h"

#include "ckernel/reduce.h"

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
#define CK__DEFINE_PAIRWISE(NAME, S)                                            \
  static double NAME(const char *p, intptr_t s, size_t n) {                    \
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
    return NAME(p, s, n2) + NAME(p + (intptr_t)n2 * s, s, n - n2);             \
  }
CK__DEFINE_PAIRWISE(ck__pw_f16, CK_TYPE_FLOAT16)
CK__DEFINE_PAIRWISE(ck__pw_f32, CK_TYPE_FLOAT32)
CK__DEFINE_PAIRWISE(ck__pw_f64, CK_TYPE_FLOAT64)

static CK__ALWAYS_INLINE double ck__pairwise(int S, const char *p, intptr_t s,
                                             size_t n) {
  switch (S) {
  case CK_TYPE_FLOAT16: return ck__pw_f16(p, s, n);
  case CK_TYPE_FLOAT32: case CK_TYPE_COMPLEX64: return ck__pw_f32(p, s, n);
  default: return ck__pw_f64(p, s, n);
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

#define CK__RED_FUNCS(tok, name, SID, T, OPN, OP)                              \
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

#define CK__RED_INFO(tok, name, SID, T, OPN, OP)                               \
  [SID] = {"reduce_" #OPN "_" name, ck__red1_##OPN##_##tok,                    \
           ck__redN_##OPN##_##tok, sizeof(ck_prefix), NULL},
#define CK__RED_INFO_ROW(OPN, OP, unused)                                      \
  [OP] = {CK__BUILTIN_TYPES(CK__RED_INFO, OPN, OP)},
static const ck_kernel_info ck__red_infos[6][CK_BUILTIN_TYPE_COUNT] = {
    CK__RED_OPS(CK__RED_INFO_ROW, 0)};

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
  ck__kernel_info_register_table(info, 1); /* for dumps; idempotent */
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

/* ---- the driver --------------------------------------------------------------------- */

typedef ck_status (*ck__leaf_fn)(void *data, ck_kernel_builder *ckb, size_t offset,
                                 ck_kernel_request req);

typedef struct ck__reduce_spec {
  const char *label;     /* for the no-identity message */
  ck_type_id res_id;
  const void *identity;  /* NULL: start from the first element */
  ck__leaf_fn leaf;
  void *leaf_data;
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
  ck__binacc_kernel *k = (ck__binacc_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__binacc_destruct;
  (void)ck_prefix_set_function(&k->base, req, ck__binacc1, ck__binaccN);
  k->child_offset = child - offset;
  size_t end;
  return b->factory(b->data, ckb, child, b->dtype, CK_KERNEL_REQUEST_STRIDED, &end);
}

/* Build the tree (one strided dim kernel per axis, then the leaf) into a
 * fresh builder and run it once. */
static ck_status ck__run_tree(size_t nd, const intptr_t *size, const intptr_t *sstride,
                              const intptr_t *dstride, ck__leaf_fn leaf, void *leaf_data,
                              char *dst, const char *src) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  size_t off = 0;
  ck_kernel_request req = CK_KERNEL_REQUEST_SINGLE;
  ck_status st = CK_OK;
  for (size_t a = 0; a < nd && st == CK_OK; a++) {
    size_t child;
    st = ck__make_strided_dim_kernel(&kb, off, size[a], dstride[a], 1, &sstride[a],
                                     req, &child);
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
      st = ck__run_tree(nd, shape, sstr, dstr, sp->leaf, sp->leaf_data, res->data,
                        src->data);
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
  ck__reduce_spec sp = {ck_reduce_op_name(op), rid, idp, ck__typed_leaf_fn, &leaf};
  return ck__reduce(&sp, src, red, keepdims, out);
}

ck_status ck_array_reduce(const char *op_name, const ck_array_preamble *src,
                          const size_t *axes, size_t naxes, bool keepdims,
                          ck_array_preamble **out) {
  return ck__reduce_named(op_name, src, NULL, axes, naxes, keepdims, out);
}

ck_status ck_array_reduce_mask(const char *op_name, const ck_array_preamble *src,
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
                        ck__bin_leaf_fn, &leaf};
  st = ck__reduce(&sp, src, red, keepdims, out);
  ck_array_decref(conv);
  return st;
}
