/* broadcast.c -- broadcasting strided operands for one loop (ckernel/broadcast.h). */
#include "core/core_internal.h"

#include <inttypes.h>

static void ck__append_dims(const intptr_t *shape, size_t nd, char *buf, size_t bufsize,
                            size_t *pos) {
  ck__appendf(buf, bufsize, pos, "(");
  for (size_t i = 0; i < nd; i++) {
    ck__appendf(buf, bufsize, pos, "%s%" PRIdPTR, i ? ", " : "", shape[i]);
  }
  ck__appendf(buf, bufsize, pos, nd == 1 ? ",)" : ")");
}

static ck_status ck__cannot_broadcast(const ck_strided_operand *s,
                                      const ck_strided_operand *d) {
  char a[256], b[256];
  size_t pa = 0, pb = 0;
  ck__append_dims(s->shape, s->ndim, a, sizeof a, &pa);
  ck__append_dims(d->shape, d->ndim, b, sizeof b, &pb);
  return ck__error(CK_ERR_VALUE, "ck_broadcast_strides",
                   "cannot broadcast shape %s to %s", a, b);
}

static ck_status ck__check_operand(const ck_strided_operand *op, const char *what,
                                   size_t j) {
  if (op->ndim > 0 && (op->shape == NULL || op->strides == NULL)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_broadcast_strides",
                     "%s %zu has NULL shape or strides", what, j);
  }
  for (size_t k = 0; k < op->ndim; k++) {
    if (op->shape[k] < 0) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_broadcast_strides",
                       "negative size %" PRIdPTR " in %s %zu", op->shape[k], what, j);
    }
  }
  return CK_OK;
}

ck_status ck_broadcast_strides(const ck_strided_operand *dst, size_t nsrc,
                               const ck_strided_operand *src, size_t max,
                               size_t *out_ndim, intptr_t *out_shape,
                               intptr_t *out_strides) {
  if (dst == NULL || (nsrc > 0 && src == NULL) || out_ndim == NULL ||
      (max > 0 && (out_shape == NULL || out_strides == NULL))) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  ck_status st = ck__check_operand(dst, "destination", 0);
  for (size_t j = 0; st == CK_OK && j < nsrc; j++) {
    st = ck__check_operand(&src[j], "source", j);
  }
  if (st != CK_OK) {
    return st;
  }
  size_t nd = dst->ndim;
  *out_ndim = nd;
  if (nd > max) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the destination has %zu dims, room for %zu",
                    nd, max);
  }
  for (size_t a = 0; a < nd; a++) {
    out_shape[a] = dst->shape[a];
    out_strides[a] = dst->strides[a];
  }
  for (size_t j = 0; j < nsrc; j++) {
    const ck_strided_operand *s = &src[j];
    intptr_t *row = out_strides + (j + 1) * max;
    /* extra leading source dims must have size 1 */
    size_t skip = 0;
    while (s->ndim - skip > nd) {
      if (s->shape[skip] != 1) {
        return ck__cannot_broadcast(s, dst);
      }
      skip++;
    }
    size_t sn = s->ndim - skip, lead = nd - sn;
    for (size_t a = 0; a < lead; a++) {
      row[a] = 0;
    }
    for (size_t k = 0; k < sn; k++) {
      intptr_t size = s->shape[skip + k], want = dst->shape[lead + k];
      if (size == want && size != 1) {
        row[lead + k] = s->strides[skip + k];
      } else if (size == 1) {
        row[lead + k] = 0;
      } else {
        return ck__cannot_broadcast(s, dst);
      }
    }
  }
  return CK_OK;
}

ck_status ck_coalesce_dims(size_t noperands, size_t *ndim, intptr_t *shape,
                           intptr_t *strides, size_t pitch) {
  if (ndim == NULL || (*ndim > 0 && (shape == NULL || (noperands > 0 && strides == NULL)))) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  size_t nd = *ndim;
  if (nd > pitch) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "%zu dims in rows of %zu", nd, pitch);
  }
  for (size_t a = 0; a < nd; a++) {
    if (shape[a] < 0) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "negative size %" PRIdPTR, shape[a]);
    }
    if (shape[a] == 0) { /* no elements: one empty dim */
      shape[0] = 0;
      for (size_t k = 0; k < noperands; k++) {
        strides[k * pitch] = 0;
      }
      *ndim = 1;
      return CK_OK;
    }
  }
  /* drop size-1 dims */
  size_t n = 0;
  for (size_t a = 0; a < nd; a++) {
    if (shape[a] == 1) {
      continue;
    }
    shape[n] = shape[a];
    for (size_t k = 0; k < noperands; k++) {
      strides[k * pitch + n] = strides[k * pitch + a];
    }
    n++;
  }
  /* merge from the innermost dim outwards: dim a folds into the kept dim
   * below it when every operand steps over it as one run */
  if (n > 1) {
    size_t out = n - 1; /* the innermost kept dim */
    for (size_t a = n - 1; a-- > 0;) {
      /* shape[out] >= 1 and shape[a] >= 2 here (no 0 or 1 sizes left) */
      bool merge = shape[a] <= INTPTR_MAX / shape[out];
      for (size_t k = 0; k < noperands && merge; k++) {
        const intptr_t *r = strides + k * pitch;
        merge = r[a] == r[out] * shape[out];
      }
      if (merge) {
        shape[out] *= shape[a];
      } else {
        out--;
        shape[out] = shape[a];
        for (size_t k = 0; k < noperands; k++) {
          strides[k * pitch + out] = strides[k * pitch + a];
        }
      }
    }
    /* the kept dims are shape[out..n-1]: move them to the front */
    size_t m = n - out;
    for (size_t a = 0; a < m; a++) {
      shape[a] = shape[out + a];
      for (size_t k = 0; k < noperands; k++) {
        strides[k * pitch + a] = strides[k * pitch + out + a];
      }
    }
    n = m;
  }
  *ndim = n;
  return CK_OK;
}
