/*
 * lift_internal.h -- links between lift.c, apply.c, assign_array.c,
 * assign_string.c and reduce.c.  Private; nothing here is ABI.
 */
#ifndef CKERNEL_LIFT_INTERNAL_H
#define CKERNEL_LIFT_INTERNAL_H

#include "core/core_internal.h"
#include "kernels/builder_internal.h"

#include "ckernel/assign_array.h"
#include "ckernel/lift.h"

/* The fast dim kernel: a fixed/strided destination dim whose sources are
 * fixed/strided dims (sizes checked at build time) or broadcast (stride 0).
 *   single(dst, src)  = child.strided(dst, dst_stride, src, src_stride, size)
 *   strided(...)      = the same once per outer element
 * `nsrc` strides follow the struct; the child is at self + child_offset. */
typedef struct ck__strided_dim_kernel {
  ck_prefix base;
  intptr_t size;
  intptr_t dst_stride;
  size_t nsrc;
  size_t child_offset; /* relative to self; 0 while not built */
  intptr_t src_stride[];
} ck__strided_dim_kernel;

/* Build a ck__strided_dim_kernel at `offset` (entry point for `req`) and
 * store in *out_child the offset where its child kernel must be built
 * (already reserved, zeroed and recorded in the kernel). */
ck_status ck__make_strided_dim_kernel(ck_kernel_builder *ckb, size_t offset,
                                      intptr_t size, intptr_t dst_stride,
                                      size_t nsrc, const intptr_t *src_stride,
                                      ck_kernel_request req,
                                      size_t *out_child);

/* True if `root` is a ck__strided_dim_kernel (either entry point). */
bool ck__is_strided_dim_kernel(const ck_prefix *root);

/* "(3, 4)" / "(3,)" / "()" / "(var, 2)" for a type's leading dims (sizes
 * from arrmeta; NULL arrmeta prints fixed sizes and "?" for strided). */
void ck__append_shape(ck_type t, const char *arrmeta, char *buf, size_t bufsize,
                      size_t *pos);

/* `dims * dtype` for the `n` dim sizes `sizes` (outermost first;
 * CK_VAR_DIM_SIZE: a var dim): strided dims before `first_var`, then var or
 * fixed ones.  New reference in *out. */
ck_status ck__dims_type_new(ck_type dtype, const intptr_t *sizes, size_t n, size_t first_var,
                            ck_type *out);

/* The scalar assignments between strings/bytes and strings/numbers
 * (assign_string.c).  CK_ERR_TYPE (message naming both types) if the pair
 * is not one of them. */
ck_status ck__make_string_assignment_kernel(ck_kernel_builder *ckb,
                                            size_t offset, ck_type dst_type,
                                            const char *dst_arrmeta,
                                            ck_type src_type,
                                            const char *src_arrmeta,
                                            ck_kernel_request req,
                                            ck_errmode mode, size_t *out_end);

/* Assignments where either side is an option type (assign_option.c):
 * `?U <- ?T`, `?U <- T`, `U <- ?T` (an error at a null unless `fill`, a 0-d
 * array, is given).  The value conversion (and the fill copy) are built by
 * `assign` (ck__assignment_any_factory: passed in, so that assign_option.c
 * and assign_array.c do not depend on each other) under `mode`. */
ck_status ck__make_option_assign(ck_kernel_builder *ckb, size_t offset, ck_type dt,
                                 const char *dm, ck_type st, const char *sm,
                                 ck_kernel_request req, ck_errmode mode,
                                 const ck_array_preamble *fill,
                                 ck_child_kernel_factory assign, size_t *out_end);

/* A ck_child_kernel_factory (child_data: a ck_errmode) building
 * ck_make_assignment_kernel for any pair, dims included (assign_array.c). */
ck_status ck__assignment_any_factory(void *child_data, ck_kernel_builder *ckb,
                                     size_t offset, ck_type dst_type,
                                     const char *dst_arrmeta, size_t nsrc,
                                     const ck_type *src_types,
                                     const char *const *src_arrmeta,
                                     ck_kernel_request req, size_t *out_end);

/* ck_array_reduce / ck_array_reduce_mask over builtin dtypes (reduce.c);
 * the public entry points (reduce_option.c) send option dtypes to
 * ck_array_reduce_nulls first. */
ck_status ck__reduce_values(const char *op_name, const ck_array_preamble *src,
                            const size_t *axes, size_t naxes, bool keepdims,
                            ck_array_preamble **out);
ck_status ck__reduce_values_mask(const char *op_name, const ck_array_preamble *src,
                                 const bool *mask, size_t nmask, bool keepdims,
                                 ck_array_preamble **out);

/* CK_ERR_TYPE "cannot assign from '<src>' to '<dst>'" (assign_errors.c). */
ck_status ck__assign_type_error(const char *func, ck_type dst, ck_type src);

/* Time types (assign_time.c): whether the scalar pair (neither an option)
 * involves a time type, and the kernel converting it (ckernel/datetime.h). */
bool ck__is_time_assignment(ck_type dst, ck_type src);
ck_status ck__make_time_assignment_kernel(ck_kernel_builder *ckb, size_t offset,
                                          ck_type dst_type, const char *dst_arrmeta,
                                          ck_type src_type, ck_kernel_request req,
                                          ck_errmode mode, size_t *out_end);

/* ck_make_elementwise_kernel for the assignment (assign_array.c): an option
 * over dims (`?var * T`) is a level of its own, where `child` (the
 * assignment dispatch) is called with the option and its dims, so that
 * `?var * T <- var * T` lines the rows up. */
ck_status ck__make_assignment_lifted(ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
                                     const char *dst_arrmeta, const ck_type *src_types,
                                     const char *const *src_arrmeta, ck_kernel_request req,
                                     ck_child_kernel_factory child, void *child_data,
                                     size_t *out_end);

/* Before an assignment into `N * var * ?T` / `N * ?var * ?T` rows that are
 * not allocated yet: lay the rows out in one allocation with one bitmap over
 * their elements, sized from the sources `parts` (which cover the N rows in
 * order).  A no-op for any other shape (assign_var_option.c). */
ck_status ck__var_option_rows_prepare(ck_array_preamble *dst, size_t nparts,
                                      const ck_array_preamble *const *parts);

#endif /* CKERNEL_LIFT_INTERNAL_H */
