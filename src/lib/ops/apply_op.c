/* apply_op.c -- registry operations over arrays (see ckernel/ops.h). */
#include "core/core_internal.h"

#include "ckernel/apply.h"
#include "ckernel/ops.h"
#include "ckernel/registry.h"

#include <string.h>

ck_status ck_op_child_factory(void *child_data, ck_kernel_builder *ckb,
                              size_t offset, ck_type dst_type,
                              const char *dst_arrmeta, size_t nsrc,
                              const ck_type *src_types,
                              const char *const *src_arrmeta,
                              ck_kernel_request req, size_t *out_end) {
  (void)dst_arrmeta;
  (void)src_arrmeta;
  const ck_op *op = child_data;
  if (op == NULL || nsrc > CK_LIFT_MAX_NSRC) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "bad operation or source count");
  }
  ck_type_id ids[CK_LIFT_MAX_NSRC];
  for (size_t i = 0; i < nsrc; i++) {
    ids[i] = ck_type_id_of(src_types[i]);
  }
  ck_type_id ret;
  ck_status st = ck_op_make_kernel(op, ckb, offset, req, nsrc, ids, &ret, out_end);
  if (st != CK_OK) {
    return st;
  }
  if (ret != ck_type_id_of(dst_type)) {
    return CK_ERROR(CK_ERR_TYPE, "%s produces %s, the destination holds %s",
                    ck_op_name(op), ck_type_id_name(ret),
                    ck_type_id_name(ck_type_id_of(dst_type)));
  }
  return CK_OK;
}

ck_status ck_array_apply_op(const char *op_name, size_t nsrc,
                            ck_array_preamble *const *srcs,
                            ck_array_preamble *dst_or_null,
                            ck_array_preamble **out) {
  if (op_name == NULL || out == NULL || (nsrc > 0 && srcs == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  *out = NULL;
  const ck_op *op;
  ck_status st = ck_op_find(op_name, &op);
  if (st != CK_OK) {
    return st;
  }
  if (nsrc != ck_op_arity(op) || nsrc > CK_LIFT_MAX_NSRC) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "%s takes %zu argument(s), got %zu",
                    op_name, ck_op_arity(op), nsrc);
  }
  ck_type_id ids[CK_LIFT_MAX_NSRC];
  bool options = false;
  for (size_t i = 0; i < nsrc; i++) {
    if (srcs[i] == NULL) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "source %zu is NULL", i);
    }
    ck_type dt = ck_type_dtype(ck_array_type(srcs[i]));
    if (ck_type_is_option(dt)) { /* `?T`: the op runs on the values */
      options = true;
      dt = ck_type_element(dt);
    }
    ids[i] = ck_type_id_of(dt);
  }
  ck_type_id ret;
  st = ck_op_resolve(op, nsrc, ids, &ret, NULL);
  if (st != CK_OK) {
    return st;
  }
  if (!options) {
    /* a destination of another dtype is converted into by ck_array_apply */
    return ck_array_apply(ck_op_child_factory, (void *)op, CK_BUILTIN(ret), nsrc, srcs,
                          dst_or_null, out);
  }
  /* nulls propagate (Kleene logic for and/or of bools); the result is ?ret */
  ck_null_propagation np = {ck_op_child_factory, (void *)op, CK_NULLS_PROPAGATE};
  bool all_bool = ret == CK_TYPE_BOOL;
  for (size_t i = 0; i < nsrc; i++) {
    all_bool = all_bool && ids[i] == CK_TYPE_BOOL;
  }
  if (all_bool && strcmp(ck_op_name(op), "logical_and") == 0) {
    np.kleene = CK_NULLS_KLEENE_AND;
  } else if (all_bool && strcmp(ck_op_name(op), "logical_or") == 0) {
    np.kleene = CK_NULLS_KLEENE_OR;
  }
  ck_type rt;
  if ((st = ck_option_type_new(CK_BUILTIN(ret), &rt)) != CK_OK) {
    return st;
  }
  st = ck_array_apply(ck_null_propagating_child_factory, &np, rt, nsrc, srcs, dst_or_null,
                      out);
  ck_type_decref(rt);
  return st;
}
