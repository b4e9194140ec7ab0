/* apply_op.c -- registry operations over arrays (see ckernel/ops.h). */
#include "core/core_internal.h"

#include "ckernel/apply.h"
#include "ckernel/ops.h"
#include "ckernel/registry.h"
#include "ckernel/datetime.h"

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

/* Time types: the child is ck_make_time_op_kernel (child_data: the name). */
static ck_status ck__time_op_child_factory(void *child_data, ck_kernel_builder *ckb,
                                           size_t offset, ck_type dst_type,
                                           const char *dst_arrmeta, size_t nsrc,
                                           const ck_type *src_types,
                                           const char *const *src_arrmeta,
                                           ck_kernel_request req, size_t *out_end) {
  (void)dst_arrmeta;
  (void)src_arrmeta;
  ck_type ret = NULL;
  ck_status st = ck_make_time_op_kernel((const char *)child_data, ckb, offset, req, nsrc,
                                        src_types, &ret, out_end);
  if (st == CK_OK && !ck_type_equal(ret, dst_type)) {
    st = CK_ERROR(CK_ERR_TYPE, "%s produces another type than its destination holds",
                  (const char *)child_data);
  }
  ck_type_decref(ret);
  return st;
}

/* ck_array_apply_op when an operand holds a time type: the result type from
 * a probe build, then the time kernels (nulls propagate as for numbers). */
static ck_status ck__apply_time_op(const char *op_name, size_t nsrc,
                                   ck_array_preamble *const *srcs, const ck_type *dts,
                                   bool options, ck_array_preamble *dst_or_null,
                                   ck_array_preamble **out) {
  ck_kernel_builder probe;
  ck_kernel_builder_init(&probe);
  ck_type ret = NULL;
  ck_status st = ck_make_time_op_kernel(op_name, &probe, 0, CK_KERNEL_REQUEST_SINGLE, nsrc,
                                        dts, &ret, NULL);
  ck_kernel_builder_destroy(&probe);
  if (st != CK_OK) {
    return st;
  }
  if (!options) {
    st = ck_array_apply(ck__time_op_child_factory, (void *)op_name, ret, nsrc, srcs,
                        dst_or_null, out);
  } else {
    ck_null_propagation np = {ck__time_op_child_factory, (void *)op_name,
                              CK_NULLS_PROPAGATE};
    ck_type rt;
    if ((st = ck_option_type_new(ret, &rt)) == CK_OK) {
      st = ck_array_apply(ck_null_propagating_child_factory, &np, rt, nsrc, srcs,
                          dst_or_null, out);
      ck_type_decref(rt);
    }
  }
  ck_type_decref(ret);
  return st;
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
  ck_type dts[CK_LIFT_MAX_NSRC];
  bool options = false, times = false;
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
    dts[i] = dt;
    times = times || ck_type_is_time(dt);
  }
  if (times) {
    return ck__apply_time_op(op_name, nsrc, srcs, dts, options, dst_or_null, out);
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
