/*
 * walk.c -- the leading fixed/strided dims of a C array (its NumPy
 * shape) and the walk over their elements in C order, which the NumPy
 * conversions both ways iterate with.
 */
#include "convert_internal.h"

/* The leading fixed/strided dims of `t` from `arrmeta`: shape, strides, and
 * the element type and its arrmeta.  -1 (exception set) if a var dim comes
 * first or there are too many. */
int ckc_regular_dims(ck_type t, const char *arrmeta, int *ndim, npy_intp *shape,
                     intptr_t *strides, ck_type *el, const char **el_arrmeta) {
  int n = 0;
  while (!ckc_is_builtin(t) && ckc_is_regular_dim(t->id)) {
    if (n >= NPY_MAXDIMS) {
      ckc_raisef(CK_ERR_NOT_SUPPORTED, "an array of more than %d dims has no NumPy form",
                 NPY_MAXDIMS);
      return -1;
    }
    const ck_dim_arrmeta *am = (const ck_dim_arrmeta *)arrmeta;
    shape[n] = am->size;
    strides[n] = am->stride;
    n++;
    arrmeta += sizeof(ck_dim_arrmeta);
    t = t->element;
  }
  if (!ckc_is_builtin(t) && t->id == CK_TYPE_VAR_DIM) {
    ckc_raise_typed(CK_ERR_TYPE, "an array of type ", t,
                    " has var dims, which NumPy cannot hold; use .tolist()", NULL);
    return -1;
  }
  *ndim = n;
  *el = t;
  *el_arrmeta = arrmeta;
  return 0;
}

/* Calls visit(ctx, element data, k) for every element of the regular dims
 * (C order, k counting from 0); stops at the first nonzero return. */
int ckc_walk(const char *data, int ndim, const npy_intp *shape, const intptr_t *strides,
             ckc_visit_fn visit, void *ctx) {
  if (ndim == 0) {
    return visit(ctx, data, 0);
  }
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 0) {
      return 0;
    }
  }
  npy_intp idx[NPY_MAXDIMS] = {0};
  npy_intp inner = shape[ndim - 1], k = 0;
  intptr_t istride = strides[ndim - 1];
  const char *p = data; /* the current innermost row */
  for (;;) {
    for (npy_intp i = 0; i < inner; i++, k++) {
      int rc = visit(ctx, p + i * istride, k);
      if (rc != 0) {
        return rc;
      }
    }
    int d = ndim - 2;
    for (; d >= 0; d--) { /* the odometer over the outer dims */
      if (++idx[d] < shape[d]) {
        p += strides[d];
        break;
      }
      p -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) {
      return 0;
    }
  }
}
