/*
 * assign_array.c -- the general assignment factory (dispatch over type
 * kinds) and the struct assignment kernel (see ckernel/assign_array.h).
 * Applying it to whole arrays (ck_array_assign) is in apply.c.
 */
#include "kernels/lift_internal.h"
#include "types/type_internal.h"

#include <pthread.h>
#include <string.h>

/* ---- struct assignment -------------------------------------------------------- */

typedef struct ck__field_assign {
  size_t dst_offset;   /* data offsets of the field */
  size_t src_offset;
  size_t child_offset; /* relative to the kernel; 0 while not built */
} ck__field_assign;

typedef struct ck__struct_kernel {
  ck_prefix base;
  size_t nfields;
  ck__field_assign f[];
} ck__struct_kernel;

static int ck__struct_one(const ck__struct_kernel *k, ck_prefix *self, char *dst,
                          const char *src) {
  for (size_t i = 0; i < k->nfields; i++) {
    ck_prefix *child = ck_prefix_child(self, k->f[i].child_offset);
    const char *s = src + k->f[i].src_offset;
    int st = ck_prefix_single(child)(dst + k->f[i].dst_offset, &s, child);
    if (st != 0) {
      return st;
    }
  }
  return 0;
}

static int ck__struct1(char *dst, const char *const *src, ck_prefix *self) {
  return ck__struct_one((const ck__struct_kernel *)(void *)self, self, dst, src[0]);
}

static int ck__structN(char *dst, intptr_t dst_stride, const char *const *src,
                       const intptr_t *src_stride, size_t count, ck_prefix *self) {
  const ck__struct_kernel *k = (const ck__struct_kernel *)(void *)self;
  for (size_t i = 0; i < count; i++) {
    int st = ck__struct_one(k, self, dst + (intptr_t)i * dst_stride,
                            src[0] + (intptr_t)i * src_stride[0]);
    if (st != 0) {
      return st;
    }
  }
  return 0;
}

static void ck__struct_destruct(ck_prefix *self) {
  ck__struct_kernel *k = (ck__struct_kernel *)(void *)self;
  for (size_t i = 0; i < k->nfields; i++) {
    if (k->f[i].child_offset != 0) {
      ck_prefix_destroy_child(ck_prefix_child(self, k->f[i].child_offset));
    }
  }
}

static size_t ck__struct_children(const ck_prefix *self, const ck_kernel_info *info,
                                  size_t *rel, size_t max) {
  (void)info;
  const ck__struct_kernel *k = (const ck__struct_kernel *)(const void *)self;
  size_t n = 0;
  for (size_t i = 0; i < k->nfields; i++) {
    if (k->f[i].child_offset != 0) {
      if (n < max) {
        rel[n] = k->f[i].child_offset;
      }
      n++;
    }
  }
  return n;
}

static size_t ck__struct_fields(const ck_prefix *self, const ck_kernel_info *info,
                                ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__struct_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_INT(&f, K, k, nfields);
  for (size_t i = 0; i < k->nfields && i < (size_t)INT32_MAX; i++) {
    intptr_t at = (intptr_t)(offsetof(K, f) + i * sizeof(ck__field_assign));
    const ck__field_assign *x = &k->f[i];
    ck__field(&f, "dst_offset", (int32_t)i, CK_KERNEL_FIELD_INT,
              at + (intptr_t)offsetof(ck__field_assign, dst_offset),
              (int64_t)x->dst_offset, NULL, NULL);
    ck__field(&f, "src_offset", (int32_t)i, CK_KERNEL_FIELD_INT,
              at + (intptr_t)offsetof(ck__field_assign, src_offset),
              (int64_t)x->src_offset, NULL, NULL);
    ck__field(&f, "child_offset", (int32_t)i, CK_KERNEL_FIELD_CHILD,
              at + (intptr_t)offsetof(ck__field_assign, child_offset),
              (int64_t)x->child_offset, NULL, NULL);
  }
  return f.n;
}

static const ck_kernel_info ck__struct_info = {
    "struct_assign", ck__struct1, ck__structN, sizeof(ck__struct_kernel),
    ck__struct_children};
static pthread_once_t ck__struct_info_once = PTHREAD_ONCE_INIT;
static void ck__struct_info_init(void) {
  ck__kernel_info_register_decoded(&ck__struct_info, 1, ck__struct_fields);
}

static ck_status ck__make_struct_assign(ck_kernel_builder *ckb, size_t offset,
                                        ck_type dt, const char *dm, ck_type st,
                                        const char *sm, ck_kernel_request req,
                                        ck_errmode mode, size_t *out_end) {
  const char *func = "ck_make_assignment_kernel";
  size_t n = dt->field_count;
  if (n != st->field_count) {
    return ck__error_context(ck__assign_type_error(func, dt, st), func,
                             "structs have %zu and %zu fields", n, st->field_count);
  }
  for (size_t i = 0; i < n; i++) {
    if (strcmp(dt->field_names[i], st->field_names[i]) != 0) {
      return ck__error_context(ck__assign_type_error(func, dt, st), func,
                               "field %zu is named '%s' and '%s'", i,
                               st->field_names[i], dt->field_names[i]);
    }
  }
  if (n > 0 && (dm == NULL || sm == NULL)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL struct arrmeta");
  }
  (void)pthread_once(&ck__struct_info_once, ck__struct_info_init);
  size_t cur = offset + sizeof(ck__struct_kernel) + n * sizeof(ck__field_assign);
  cur = ck_kernel_align_offset(cur);
  ck_status s = ck_kernel_builder_ensure_capacity(ckb, cur);
  if (s != CK_OK) {
    return s;
  }
  ck__struct_kernel *k = (ck__struct_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__struct_destruct;
  (void)ck_prefix_set_function(&k->base, req, ck__struct1, ck__structN);
  k->nfields = n;
  /* struct arrmeta starts with n data offsets (uintptr_t) */
  const uintptr_t *doffs = (const uintptr_t *)(const void *)dm;
  const uintptr_t *soffs = (const uintptr_t *)(const void *)sm;
  for (size_t i = 0; i < n; i++) {
    k->f[i].dst_offset = doffs[i];
    k->f[i].src_offset = soffs[i];
  }
  for (size_t i = 0; i < n; i++) {
    /* the child's prefix must exist (zeroed) before the destructor sees it */
    if ((s = ck_kernel_builder_ensure_capacity_leaf(ckb, cur + sizeof(ck_prefix))) !=
        CK_OK) {
      return s;
    }
    k = (ck__struct_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
    k->f[i].child_offset = cur - offset;
    size_t end;
    s = ck_make_assignment_kernel(ckb, cur, dt->field_types[i],
                                  dm + dt->field_arrmeta_offsets[i],
                                  st->field_types[i],
                                  sm + st->field_arrmeta_offsets[i],
                                  CK_KERNEL_REQUEST_SINGLE, mode, &end);
    if (s != CK_OK) {
      return ck__error_context(s, func, "field '%s'", dt->field_names[i]);
    }
    cur = ck_kernel_align_offset(end);
  }
  if (out_end != NULL) {
    *out_end = cur;
  }
  return CK_OK;
}

/* ---- dispatch ------------------------------------------------------------------ */

static ck_status ck__make_scalar_assign(ck_kernel_builder *ckb, size_t offset,
                                        ck_type dt, const char *dm, ck_type st,
                                        const char *sm, ck_kernel_request req,
                                        ck_errmode mode, size_t *out_end) {
  const char *func = "ck_make_assignment_kernel";
  if (ck_type_is_option(dt) || ck_type_is_option(st)) {
    return ck__make_option_assign(ckb, offset, dt, dm, st, sm, req, mode, NULL,
                                  ck__assignment_any_factory, out_end);
  }
  if (ck_type_is_builtin(dt) && ck_type_is_builtin(st)) {
    return ck_make_builtin_assignment_kernel(ckb, offset, ck_type_id_of(dt),
                                             ck_type_id_of(st), req, mode, out_end);
  }
  ck_type_id did = ck_type_id_of(dt), sid = ck_type_id_of(st);
  if (ck__is_time_assignment(dt, st)) {
    return ck__make_time_assignment_kernel(ckb, offset, dt, dm, st, req, mode, out_end);
  }
  if (did == CK_TYPE_STRING || sid == CK_TYPE_STRING ||
      (did == CK_TYPE_BYTES && sid == CK_TYPE_BYTES)) {
    return ck__make_string_assignment_kernel(ckb, offset, dt, dm, st, sm, req,
                                             mode, out_end);
  }
  if (did == CK_TYPE_STRUCT && sid == CK_TYPE_STRUCT &&
      !(ck_type_equal(dt, st) && !(ck_type_flags(dt) & CK_TYPE_FLAG_BLOCKREF))) {
    return ck__make_struct_assign(ckb, offset, dt, dm, st, sm, req, mode, out_end);
  }
  if (ck_type_equal(dt, st) && !(ck_type_flags(dt) & CK_TYPE_FLAG_BLOCKREF) &&
      ck_type_data_size(dt) > 0) {
    return ck_make_pod_copy_kernel(ckb, offset, ck_type_data_size(dt), req, out_end);
  }
  if (ck_type_equal(dt, st) && did == CK_TYPE_STRUCT) {
    /* empty struct */
    return ck__make_struct_assign(ckb, offset, dt, dm, st, sm, req, mode, out_end);
  }
  return ck__assign_type_error(func, dt, st);
}

ck_status ck_assignment_child_factory(void *child_data, ck_kernel_builder *ckb,
                                      size_t offset, ck_type dst_type,
                                      const char *dst_arrmeta, size_t nsrc,
                                      const ck_type *src_types,
                                      const char *const *src_arrmeta,
                                      ck_kernel_request req, size_t *out_end) {
  if (nsrc != 1 || child_data == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "assignment takes one source and an error mode (got %zu)", nsrc);
  }
  ck_errmode mode = *(const ck_errmode *)child_data;
  return ck__make_scalar_assign(ckb, offset, dst_type, dst_arrmeta, src_types[0],
                                src_arrmeta[0], req, mode, out_end);
}

ck_status ck__assignment_any_factory(void *child_data, ck_kernel_builder *ckb,
                                     size_t offset, ck_type dst_type,
                                     const char *dst_arrmeta, size_t nsrc,
                                     const ck_type *src_types,
                                     const char *const *src_arrmeta,
                                     ck_kernel_request req, size_t *out_end) {
  if (nsrc != 1 || child_data == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "assignment takes one source and an error mode (got %zu)", nsrc);
  }
  return ck_make_assignment_kernel(ckb, offset, dst_type, dst_arrmeta, src_types[0],
                                   src_arrmeta[0], req, *(const ck_errmode *)child_data,
                                   out_end);
}

ck_status ck_make_assignment_kernel(ck_kernel_builder *ckb, size_t offset,
                                    ck_type dst_type, const char *dst_arrmeta,
                                    ck_type src_type, const char *src_arrmeta,
                                    ck_kernel_request req, ck_errmode mode,
                                    size_t *out_end) {
  ck_status st = ck__check_kernel_args(__func__, ckb, offset, req);
  if (st != CK_OK) {
    return st;
  }
  if (!ck_type_is_valid(dst_type) || !ck_type_is_valid(src_type)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid type");
  }
  if ((int)mode < CK_ERRMODE_NOCHECK || (int)mode > CK_ERRMODE_DEFAULT) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown error mode %d", (int)mode);
  }
  if (ck_type_ndim(dst_type) > 0 || ck_type_ndim(src_type) > 0) {
    return ck__make_assignment_lifted(ckb, offset, dst_type, dst_arrmeta, &src_type,
                                      &src_arrmeta, req, ck_assignment_child_factory, &mode,
                                      out_end);
  }
  return ck__make_scalar_assign(ckb, offset, dst_type, dst_arrmeta, src_type,
                                src_arrmeta, req, mode, out_end);
}
