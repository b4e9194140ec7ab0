/*
 * assign_array.c -- the general assignment factory (dispatch over type
 * kinds), the struct assignment kernel, and the array-level entry points
 * ck_array_assign / ck_array_apply (see ckernel/assign_array.h).
 */
#include "kernels/lift_internal.h"
#include "types/type_internal.h"

#include <pthread.h>
#include <string.h>

ck_status ck__assign_type_error(const char *func, ck_type dst, ck_type src) {
  char d[160], s[160];
  size_t pd = 0, ps = 0;
  ck__type_append(dst, d, sizeof d, &pd);
  ck__type_append(src, s, sizeof s, &ps);
  return ck__error(CK_ERR_TYPE, func, "cannot assign from '%s' to '%s'", s, d);
}

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

static const ck_kernel_info ck__struct_info = {
    "struct_assign", ck__struct1, ck__structN, sizeof(ck__struct_kernel),
    ck__struct_children};
static pthread_once_t ck__struct_info_once = PTHREAD_ONCE_INIT;
static void ck__struct_info_init(void) {
  (void)ck_kernel_info_register(&ck__struct_info);
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
  if (ck_type_is_builtin(dt) && ck_type_is_builtin(st)) {
    return ck_make_builtin_assignment_kernel(ckb, offset, ck_type_id_of(dt),
                                             ck_type_id_of(st), req, mode, out_end);
  }
  ck_type_id did = ck_type_id_of(dt), sid = ck_type_id_of(st);
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
    return ck_make_elementwise_kernel(ckb, offset, dst_type, dst_arrmeta, 1,
                                      &src_type, &src_arrmeta, req,
                                      ck_assignment_child_factory, &mode, out_end);
  }
  return ck__make_scalar_assign(ckb, offset, dst_type, dst_arrmeta, src_type,
                                src_arrmeta, req, mode, out_end);
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
