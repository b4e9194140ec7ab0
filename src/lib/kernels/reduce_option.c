/*
 * reduce_option.c -- reductions that know about nulls (ck_array_reduce_nulls,
 * ckernel/reduce.h), and the public ck_array_reduce / ck_array_reduce_mask,
 * which send option dtypes here (nulls skipped) and builtin dtypes to
 * reduce.c.
 *
 * The null-aware reduction is built from the value reduction: the values
 * with every null replaced by the operation's identity (ck_array_assign_fill:
 * 0 for sum/any/mean, 1 for product/all, the largest value for min, the
 * smallest for max) reduce exactly as the valid values alone would (pairwise
 * float sums, threads and all), and a sum of the validity (as bools) gives
 * the number of valid values of each output element, which decides where
 * the result is null.  Sum, mean and count of a one-dimensional float array
 * take the direct path of reduce_valid.c instead (no temporaries; the same
 * sums).
 */
#include "kernels/lift_internal.h"
#include "kernels/reduce_internal.h"
#include "types/type_internal.h"
#include "ckernel/reduce.h"
#include "ckernel/validity.h"

#include <math.h>
#include <string.h>

enum { CK__RN_VALUES = 0, CK__RN_MEAN = 1, CK__RN_COUNT = 2 };

/* `strided^nd * dtype`. */
static ck_status ck__strided_type(ck_type dtype, size_t nd, ck_type *out) {
  ck_type t = dtype;
  ck_type_incref(t);
  for (size_t i = 0; i < nd; i++) {
    ck_type nt = NULL;
    ck_status st = ck_strided_dim_type_new(t, &nt);
    ck_type_decref(t);
    if (st != CK_OK) {
      return st;
    }
    t = nt;
  }
  *out = t;
  return CK_OK;
}

/* Write the validity of every slot of `a` (fixed/strided dims over `?T` or
 * T) as bools in C order at *out. */
static ck_status ck__valid_walk(ck_type t, const char *meta, const char *data, char **out) {
  if (ck__is_dim(t)) {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)meta;
    if (ck_type_is_option(t->element)) { /* the innermost dim: its bits at once */
      const ck_option_arrmeta *om =
          (const ck_option_arrmeta *)(const void *)(meta + sizeof *dm);
      int64_t b0, bstep;
      ck_status st = ck_option_slot_bits(om, data, dm->stride, (size_t)dm->size, &b0,
                                         &bstep);
      if (st != CK_OK) {
        return st;
      }
      char *w = *out;
      if (b0 < 0) {
        memset(w, 1, (size_t)dm->size);
      } else {
        for (intptr_t i = 0; i < dm->size; i++) {
          w[i] = (char)ck_bitmap_get(om->bits, b0 + (int64_t)i * bstep);
        }
      }
      *out = w + dm->size;
      return CK_OK;
    }
    for (intptr_t i = 0; i < dm->size; i++) {
      ck_status st = ck__valid_walk(t->element, meta + sizeof *dm,
                                    (const char *)((uintptr_t)data +
                                                   (uintptr_t)(i * dm->stride)), out);
      if (st != CK_OK) {
        return st;
      }
    }
    return CK_OK;
  }
  bool v = true;
  if (ck_type_is_option(t)) {
    ck_status st = ck_option_get_valid((const ck_option_arrmeta *)(const void *)meta, data, &v);
    if (st != CK_OK) {
      return st;
    }
  }
  *(*out)++ = (char)v;
  return CK_OK;
}

/* The identity that replaces a null for `op` in the value type `vid`, into
 * 16 bytes at `out`. */
static ck_status ck__null_identity(const char *op, ck_type_id vid, void *out) {
  memset(out, 0, 16);
  double v;
  if (strcmp(op, "product") == 0 || strcmp(op, "all") == 0) {
    v = 1.0;
  } else if (strcmp(op, "minimum") == 0) {
    v = INFINITY;
  } else if (strcmp(op, "maximum") == 0) {
    v = -INFINITY;
  } else {
    return CK_OK;
  }
  if (vid == CK_TYPE_BOOL) {
    *(unsigned char *)out = v > 0; /* min: true, max: false */
    return CK_OK;
  }
  if (vid == CK_TYPE_COMPLEX64 || vid == CK_TYPE_COMPLEX128) {
    double c[2] = {v, isinf(v) ? v : 0.0}; /* lexicographic: (inf, inf) is largest */
    return ck_assign_builtin_value(vid, out, CK_TYPE_COMPLEX128, c, CK_ERRMODE_NOCHECK);
  }
  /* NOCHECK saturates +-inf at an integer type's max/min */
  return ck_assign_builtin_value(vid, out, CK_TYPE_FLOAT64, &v, CK_ERRMODE_NOCHECK);
}

ck_status ck_array_reduce_nulls(const char *op_name, const ck_array_preamble *src,
                                const size_t *axes, size_t naxes, bool keepdims,
                                bool skip_nulls, ck_array_preamble **out) {
  if (out == NULL || op_name == NULL || src == NULL ||
      src->memblock.kind != CK_MEMBLOCK_ARRAY) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  *out = NULL;
  int kind = CK__RN_VALUES;
  const char *op = op_name;
  ck_reduce_op rop = CK_REDUCE_SUM;
  ck_status st = CK_OK;
  if (strcmp(op_name, "mean") == 0) {
    kind = CK__RN_MEAN;
    op = "sum";
  } else if (strcmp(op_name, "count") == 0) {
    kind = CK__RN_COUNT;
    op = "sum";
  } else if ((st = ck_reduce_op_from_name(op_name, &rop)) != CK_OK) {
    return ck__error_context(st, __func__, "the operations are sum, product, min, max, "
                             "any, all, mean and count");
  } else {
    op = ck_reduce_op_name(rop);
  }
  ck_type dtype = ck_type_dtype(src->type);
  ck_type vt = ck_type_is_option(dtype) ? dtype->element : dtype;
  char tb[96];
  if (!ck_type_is_builtin(vt)) {
    return CK_ERROR(CK_ERR_TYPE, "%s of '%s': the values must be numbers or bools",
                    op_name, ck__type_str(src->type, tb, sizeof tb));
  }
  ck_type_id vid = ck_type_id_of(vt);
  if (kind == CK__RN_MEAN && (vid == CK_TYPE_COMPLEX64 || vid == CK_TYPE_COMPLEX128)) {
    return CK_ERROR(CK_ERR_TYPE, "mean of complex values is not supported");
  }
  for (ck_type t = src->type; ck__is_dim(t); t = t->element) {
    if (t->id == CK_TYPE_VAR_DIM) {
      return CK_ERROR(CK_ERR_NOT_SUPPORTED, "%s over var dims is not supported", op_name);
    }
  }
  if (kind != CK__RN_VALUES || rop == CK_REDUCE_SUM) {
    bool done = false;
    int rv = kind == CK__RN_MEAN ? CK__RV_MEAN : kind == CK__RN_COUNT ? CK__RV_COUNT : CK__RV_SUM;
    st = ck__reduce_valid_1d(rv, src, axes, naxes, keepdims, skip_nulls, out, &done);
    if (st != CK_OK || done) {
      return st;
    }
  }
  size_t nd = 0;
  intptr_t shape[CK_TYPE_MAX_DEPTH];
  if ((st = ck_array_shape(src, shape, CK_TYPE_MAX_DEPTH, &nd)) != CK_OK) {
    return st;
  }
  ck_type tv = NULL, tb_ = NULL;
  ck_array_preamble *vals = NULL, *valid = NULL, *fill = NULL, *red = NULL, *cnt = NULL;
  ck_array_preamble *res = NULL;
  if ((st = ck__strided_type(vt, nd, &tv)) != CK_OK ||
      (st = ck__strided_type(CK_BUILTIN(CK_TYPE_BOOL), nd, &tb_)) != CK_OK ||
      (st = ck_array_empty(tb_, shape, nd, CK_ARRAY_DEFAULT_FLAGS, &valid)) != CK_OK) {
    goto done;
  }
  {
    char *w = NULL;
    if ((st = ck_array_writable_data(valid, &w)) != CK_OK ||
        (st = ck__valid_walk(src->type, ck_array_arrmeta(src), src->data, &w)) != CK_OK ||
        (st = ck__reduce_values("sum", valid, axes, naxes, keepdims, &cnt)) != CK_OK) {
      goto done;
    }
  }
  if (kind == CK__RN_COUNT) { /* the number of valid values: never null */
    *out = cnt;
    cnt = NULL;
    goto done;
  }
  /* the values, nulls replaced by the identity */
  if ((st = ck_array_empty(tv, shape, nd, CK_ARRAY_DEFAULT_FLAGS, &vals)) != CK_OK ||
      (st = ck_array_empty(vt, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &fill)) != CK_OK) {
    goto done;
  }
  {
    char *fd = NULL;
    _Alignas(16) unsigned char idv[16];
    if ((st = ck_array_writable_data(fill, &fd)) != CK_OK ||
        (st = ck__null_identity(op, vid, idv)) != CK_OK ||
        (memcpy(fd, idv, ck_type_data_size(vt)), false) ||
        (st = ck_array_assign_fill(vals, src, fill, CK_ERRMODE_NOCHECK)) != CK_OK ||
        (st = ck__reduce_values(op, vals, axes, naxes, keepdims, &red)) != CK_OK) {
      goto done;
    }
  }
  /* the result: ?R (?float64 for mean) of the reduced shape */
  {
    size_t rnd = 0;
    intptr_t rshape[CK_TYPE_MAX_DEPTH];
    if ((st = ck_array_shape(red, rshape, CK_TYPE_MAX_DEPTH, &rnd)) != CK_OK) {
      goto done;
    }
    ck_type rdt = kind == CK__RN_MEAN ? CK_BUILTIN(CK_TYPE_FLOAT64) : ck_type_dtype(red->type);
    ck_type ot = NULL, rt = NULL;
    if ((st = ck_option_type_new(rdt, &ot)) == CK_OK &&
        (st = ck__strided_type(ot, rnd, &rt)) == CK_OK) {
      st = ck_array_empty(rt, rshape, rnd, CK_ARRAY_DEFAULT_FLAGS, &res);
    }
    ck_type_decref(ot);
    ck_type_decref(rt);
    if (st != CK_OK || (st = ck_array_assign(res, red, CK_ERRMODE_NOCHECK)) != CK_OK) {
      goto done;
    }
    intptr_t nout = 1, total = 1;
    for (size_t i = 0; i < rnd; i++) {
      nout *= rshape[i];
    }
    for (size_t i = 0; i < nd; i++) {
      total *= shape[i];
    }
    total = nout > 0 ? total / nout : 0; /* source values per output */
    /* res, red and cnt are C-contiguous: output k is element k of each, and
     * bit k of res's bitmap */
    const ck_option_arrmeta *om = (const ck_option_arrmeta *)(const void *)(
        ck_array_arrmeta(res) + rnd * sizeof(ck_dim_arrmeta));
    char *rd = NULL;
    if ((st = ck_array_writable_data(res, &rd)) != CK_OK) {
      goto done;
    }
    size_t es = ck_type_data_size(rdt);
    const int64_t *c = (const int64_t *)(const void *)cnt->data;
    size_t ves = ck_type_data_size(ck_type_dtype(red->type));
    for (intptr_t k = 0; k < nout; k++) {
      bool ok = skip_nulls ? c[k] > 0 : c[k] == total;
      if (!skip_nulls && !ok && (rop == CK_REDUCE_ANY || rop == CK_REDUCE_ALL) &&
          kind == CK__RN_VALUES) {
        /* Kleene: a true decides any, a false decides all */
        bool r = red->data[(size_t)k * ves] != 0;
        ok = rop == CK_REDUCE_ANY ? r : !r;
      }
      char *slot = rd + (size_t)k * es;
      if (ok && kind == CK__RN_MEAN) {
        double sum = *(const double *)(const void *)slot;
        *(double *)(void *)slot = sum / (double)c[k];
      }
      if (!ok) {
        memset(slot, 0, es); /* no identity value under a null */
        if ((st = ck_option_set_valid(om, slot, false)) != CK_OK) {
          goto done;
        }
      }
    }
  }
  *out = res;
  res = NULL;
done:
  ck_type_decref(tv);
  ck_type_decref(tb_);
  ck_array_decref(vals);
  ck_array_decref(valid);
  ck_array_decref(fill);
  ck_array_decref(red);
  ck_array_decref(cnt);
  ck_array_decref(res);
  return st;
}

ck_status ck_array_reduce(const char *op_name, const ck_array_preamble *src,
                          const size_t *axes, size_t naxes, bool keepdims,
                          ck_array_preamble **out) {
  if (src != NULL && src->memblock.kind == CK_MEMBLOCK_ARRAY &&
      ck_type_is_option(ck_type_dtype(src->type))) {
    return ck_array_reduce_nulls(op_name, src, axes, naxes, keepdims, true, out);
  }
  return ck__reduce_values(op_name, src, axes, naxes, keepdims, out);
}

ck_status ck_array_reduce_mask(const char *op_name, const ck_array_preamble *src,
                               const bool *mask, size_t nmask, bool keepdims,
                               ck_array_preamble **out) {
  if (src != NULL && src->memblock.kind == CK_MEMBLOCK_ARRAY &&
      ck_type_is_option(ck_type_dtype(src->type)) && (mask != NULL || nmask == 0)) {
    size_t axes[CK_TYPE_MAX_DEPTH], n = 0;
    if (nmask != ck_array_ndim(src) || nmask > CK_TYPE_MAX_DEPTH) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "mask has %zu entries for an array of dimension %zu", nmask,
                      ck_array_ndim(src));
    }
    for (size_t i = 0; i < nmask; i++) {
      if (mask[i]) {
        axes[n++] = i;
      }
    }
    return ck_array_reduce_nulls(op_name, src, axes, n, keepdims, true, out);
  }
  return ck__reduce_values_mask(op_name, src, mask, nmask, keepdims, out);
}
