/*
 * apply.c -- applying a kernel to whole arrays (see ckernel/apply.h):
 * ck_array_apply (any child factory, lifted with broadcasting; a new result
 * or a given destination, converting into it when its dtype differs) and
 * ck_array_assign; both run the outermost dimension on the thread pool when
 * the work is large.
 */
#include "kernels/lift_internal.h"
#include "types/type_internal.h"

#include <string.h>

/* ---- running, maybe in parallel ------------------------------------------- */

typedef struct ck__par_ctx {
  ck_prefix *child;
  char *dst;
  intptr_t dst_stride;
  const char *const *src;
  const intptr_t *src_stride;
  size_t nsrc;
} ck__par_ctx;

static ck_status ck__par_rows(void *ctx, size_t begin, size_t end,
                              unsigned thread_index) {
  (void)thread_index;
  const ck__par_ctx *c = ctx;
  const char *s[CK_LIFT_MAX_NSRC];
  for (size_t j = 0; j < c->nsrc; j++) {
    s[j] = c->src[j] + (intptr_t)begin * c->src_stride[j];
  }
  return (ck_status)ck_prefix_strided(c->child)(
      c->dst + (intptr_t)begin * c->dst_stride, c->dst_stride, s, c->src_stride,
      end - begin, c->child);
}

static ck_status ck__run_single_maybe_parallel(ck_kernel_builder *ckb,
                                        ck_type dst_type,
                                        const char *dst_arrmeta, char *dst,
                                        const char *const *src, size_t nsrc) {
  ck_prefix *root = ck_kernel_builder_get(ckb, 0);
  if (ck__is_strided_dim_kernel(root) &&
      !(ck_type_flags(dst_type) & CK_TYPE_FLAG_BLOCKREF) && ck__is_dim(dst_type)) {
    /* elements per outermost row: product of the inner fixed/strided dims */
    const ck__strided_dim_kernel *k = (const ck__strided_dim_kernel *)(void *)root;
    size_t inner = 1;
    ck_type t = dst_type->element;
    const char *m = dst_arrmeta + sizeof(ck_dim_arrmeta);
    bool ok = true;
    while (ck__is_dim(t) && ok) {
      intptr_t n = ((const ck_dim_arrmeta *)(const void *)m)->size;
      ok = t->id != CK_TYPE_VAR_DIM && ck__mul_size(inner, (size_t)n, &inner);
      m += ck__dim_header_size(t);
      t = t->element;
    }
    size_t rows = (size_t)k->size, total;
    if (ok && inner > 0 && ck__mul_size(rows, inner, &total) &&
        total >= CK_PARALLEL_MIN_ELEMENTS && ck_get_num_threads() > 1) {
      size_t min_chunk = (CK_PARALLEL_MIN_CHUNK_ELEMENTS + inner - 1) / inner;
      if (rows >= 2 * min_chunk) {
        ck__par_ctx c = {ck_prefix_child(root, k->child_offset), dst,
                         k->dst_stride, src, k->src_stride, nsrc};
        return ck_parallel_for(rows, min_chunk, ck__par_rows, &c);
      }
    }
  }
  return (ck_status)ck_prefix_single(root)(dst, src, root);
}

/* ---- array-level entry points ---------------------------------------------------- */

static ck_status ck__check_array(const ck_array_preamble *a, const char *what) {
  if (a == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_array", "%s is NULL", what);
  }
  if (a->memblock.kind != CK_MEMBLOCK_ARRAY) {
    return ck__error(CK_ERR_TYPE, "ck_array", "%s is not an array memblock", what);
  }
  return CK_OK;
}

ck_status ck_array_assign(ck_array_preamble *dst, const ck_array_preamble *src,
                          ck_errmode mode) {
  ck_status st = ck__check_array(dst, "dst");
  if (st == CK_OK) {
    st = ck__check_array(src, "src");
  }
  if (st != CK_OK) {
    return st;
  }
  char *dst_data;
  if ((st = ck_array_writable_data(dst, &dst_data)) != CK_OK) {
    return st;
  }
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  st = ck_make_assignment_kernel(&kb, 0, dst->type, ck_array_arrmeta(dst),
                                 src->type, ck_array_arrmeta(src),
                                 CK_KERNEL_REQUEST_SINGLE, mode, NULL);
  if (st == CK_OK) {
    const char *s = src->data;
    st = ck__run_single_maybe_parallel(&kb, dst->type, ck_array_arrmeta(dst),
                                       dst_data, &s, 1);
  }
  ck_kernel_builder_destroy(&kb);
  return st;
}

ck_status ck_array_apply(ck_child_kernel_factory child, void *child_data,
                         ck_type dst_dtype, size_t nsrc,
                         ck_array_preamble *const *srcs,
                         ck_array_preamble *dst_or_null,
                         ck_array_preamble **out) {
  if (out != NULL) {
    *out = NULL;
  }
  if (child == NULL || (nsrc > 0 && srcs == NULL) ||
      (dst_or_null == NULL && out == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (nsrc > CK_LIFT_MAX_NSRC) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "%zu sources (at most %d)", nsrc,
                    CK_LIFT_MAX_NSRC);
  }
  ck_type types[CK_LIFT_MAX_NSRC];
  const char *meta[CK_LIFT_MAX_NSRC];
  const char *data[CK_LIFT_MAX_NSRC];
  ck_status st;
  for (size_t j = 0; j < nsrc; j++) {
    if ((st = ck__check_array(srcs[j], "source")) != CK_OK) {
      return st;
    }
    types[j] = srcs[j]->type;
    meta[j] = ck_array_arrmeta(srcs[j]);
    data[j] = srcs[j]->data;
  }
  ck_array_preamble *dst = dst_or_null;
  if (dst == NULL) {
    ck_type rt;
    intptr_t shape[CK_TYPE_MAX_DEPTH];
    size_t nstrided = 0;
    st = ck_elementwise_result_type(dst_dtype, nsrc, types, meta, &rt, shape,
                                    CK_TYPE_MAX_DEPTH, &nstrided);
    if (st != CK_OK) {
      return st;
    }
    st = ck_array_empty(rt, shape, nstrided, CK_ARRAY_DEFAULT_FLAGS, &dst);
    ck_type_decref(rt);
    if (st != CK_OK) {
      return st;
    }
  } else {
    ck_array_incref(dst);
    if ((st = ck__check_array(dst, "dst")) != CK_OK) {
      ck_array_decref(dst);
      return st;
    }
  }
  char *dst_data = NULL;
  st = ck_array_writable_data(dst, &dst_data);
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  if (st == CK_OK) {
    st = ck_make_elementwise_kernel(&kb, 0, dst->type, ck_array_arrmeta(dst), nsrc,
                                    types, meta, CK_KERNEL_REQUEST_SINGLE, child,
                                    child_data, NULL);
  }
  if (st == CK_OK) {
    st = ck__run_single_maybe_parallel(&kb, dst->type, ck_array_arrmeta(dst),
                                       dst_data, data, nsrc);
  }
  ck_kernel_builder_destroy(&kb);
  if (st != CK_OK || out == NULL) {
    ck_array_decref(dst);
  } else {
    *out = dst;
  }
  return st;
}
