/*
 * assign.c -- the builtin assignment factories (see ckernel/assign.h): the
 * dispatch into the generated tables (assign_to_*.c), the POD copy kernel,
 * and the builtin table of kernel descriptions (registered with the
 * builder on first use, like every factory's).  The messages of failing
 * assignments are in assign_errors.c.
 */
#include "kernels/assign_internal.h"
#include "kernels/builder_internal.h"

#include <pthread.h>


static void ck__assign_describe(void);

/* tables[dst][src][mode] */
static const ck_kernel_info (*const ck__assign_tables[CK_BUILTIN_TYPE_COUNT])[4] = {
#define CK__TABLE_ENTRY(DN, DS, DID, DT, DK, unused) [DID] = ck__assign_info_##DN,
    CK__BUILTIN_TYPES(CK__TABLE_ENTRY, 0)
#undef CK__TABLE_ENTRY
};

const char *ck_errmode_name(ck_errmode mode) {
  switch (mode) {
  case CK_ERRMODE_NOCHECK: return "nocheck";
  case CK_ERRMODE_OVERFLOW: return "overflow";
  case CK_ERRMODE_FRACTIONAL: return "fractional";
  case CK_ERRMODE_INEXACT: return "inexact";
  case CK_ERRMODE_DEFAULT: return "default";
  }
  return NULL;
}

ck_status ck_errmode_from_name(const char *name, ck_errmode *out) {
  if (name == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  for (int m = CK_ERRMODE_NOCHECK; m <= CK_ERRMODE_DEFAULT; m++) {
    if (strcmp(name, ck_errmode_name((ck_errmode)m)) == 0) {
      *out = (ck_errmode)m;
      return CK_OK;
    }
  }
  return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                  "unknown error mode '%s' (expected nocheck, overflow, "
                  "fractional, inexact or default)",
                  name);
}


/* The table entry for (dst, src, mode), validating them. */
static ck_status ck__assign_lookup(const char *func, ck_type_id dst,
                                   ck_type_id src, ck_errmode mode,
                                   const ck_kernel_info **out) {
  if (!ck__is_builtin_id((int)dst) || !ck__is_builtin_id((int)src)) {
    return ck__error(CK_ERR_TYPE, func,
                     "type id %d is not a builtin scalar type (1..%d)",
                     ck__is_builtin_id((int)dst) ? (int)src : (int)dst,
                     (int)CK_TYPE_COMPLEX128);
  }
  if ((int)mode < CK_ERRMODE_NOCHECK || (int)mode > CK_ERRMODE_DEFAULT) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "unknown error mode %d",
                     (int)mode);
  }
  int m = mode == CK_ERRMODE_DEFAULT ? CK_ERRMODE_FRACTIONAL : (int)mode;
  *out = &ck__assign_tables[dst][src][m];
  return CK_OK;
}

ck_status ck_make_builtin_assignment_kernel(ck_kernel_builder *ckb,
                                            size_t offset, ck_type_id dst,
                                            ck_type_id src,
                                            ck_kernel_request req,
                                            ck_errmode mode,
                                            size_t *out_end_offset) {
  const ck_kernel_info *info = NULL;
  ck_status st = ck__check_kernel_args(__func__, ckb, offset, req);
  if (st == CK_OK) {
    st = ck__assign_lookup(__func__, dst, src, mode, &info);
  }
  size_t end;
  if (st == CK_OK && !ck__add_size(offset, sizeof(ck_prefix), &end)) {
    st = CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu overflows", offset);
  }
  if (st == CK_OK) {
    /* usually a no-op: the parent reserved this prefix */
    st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  }
  if (st != CK_OK) {
    return st;
  }
  ck__assign_describe();
  ck_prefix *self = ck_kernel_builder_get(ckb, offset);
  (void)ck_prefix_set_function(self, req, info->single, info->strided);
  if (out_end_offset != NULL) {
    *out_end_offset = end;
  }
  return CK_OK;
}

ck_status ck_assign_builtin_value(ck_type_id dst, void *dst_ptr, ck_type_id src,
                                  const void *src_ptr, ck_errmode mode) {
  const ck_kernel_info *info = NULL;
  if (dst_ptr == NULL || src_ptr == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL value pointer");
  }
  ck_status st = ck__assign_lookup(__func__, dst, src, mode, &info);
  if (st != CK_OK) {
    return st;
  }
  ck_prefix self = {NULL, NULL};
  (void)ck_prefix_set_function(&self, CK_KERNEL_REQUEST_SINGLE, info->single,
                               info->strided);
  const char *srcs[1] = {(const char *)src_ptr};
  return (ck_status)info->single((char *)dst_ptr, srcs, &self);
}

/* ---- POD copy ---- */

/* Fixed sizes: memcpy with a constant size compiles to plain moves. */
#define CK__POD_COPY_FUNCS(N)                                                  \
  static int ck__pod_copy1_##N(char *dst, const char *const *src,             \
                               ck_prefix *self) {                              \
    (void)self;                                                                \
    memcpy(dst, src[0], N);                                                    \
    return 0;                                                                  \
  }                                                                            \
  static int ck__pod_copyN_##N(char *dst, intptr_t dst_stride,                 \
                               const char *const *src,                         \
                               const intptr_t *src_stride, size_t count,       \
                               ck_prefix *self) {                              \
    (void)self;                                                                \
    const char *s = src[0];                                                    \
    intptr_t ss = src_stride[0];                                               \
    if (dst_stride == N && ss == N) {                                          \
      memcpy(dst, s, count * N);                                               \
      return 0;                                                                \
    }                                                                          \
    intptr_t doff = 0, soff = 0;                                               \
    for (size_t i = 0; i < count; i++, doff += dst_stride, soff += ss) {       \
      memcpy(dst + doff, s + soff, N);                                         \
    }                                                                          \
    return 0;                                                                  \
  }
CK__POD_COPY_FUNCS(1)
CK__POD_COPY_FUNCS(2)
CK__POD_COPY_FUNCS(4)
CK__POD_COPY_FUNCS(8)
CK__POD_COPY_FUNCS(16)

static int ck__pod_copy1_any(char *dst, const char *const *src,
                             ck_prefix *self) {
  memcpy(dst, src[0], ((const ck_pod_copy_kernel *)(void *)self)->data_size);
  return 0;
}

static int ck__pod_copyN_any(char *dst, intptr_t dst_stride,
                             const char *const *src, const intptr_t *src_stride,
                             size_t count, ck_prefix *self) {
  size_t n = ((const ck_pod_copy_kernel *)(void *)self)->data_size;
  const char *s = src[0];
  intptr_t ss = src_stride[0];
  if (n == 0 || count == 0) {
    return 0;
  }
  if (dst_stride == (intptr_t)n && ss == (intptr_t)n) {
    memcpy(dst, s, count * n);
    return 0;
  }
  intptr_t doff = 0, soff = 0;
  for (size_t i = 0; i < count; i++, doff += dst_stride, soff += ss) {
    memcpy(dst + doff, s + soff, n);
  }
  return 0;
}

#define CK__POD_INFO(N)                                                        \
  {"pod_copy_" #N, ck__pod_copy1_##N, ck__pod_copyN_##N,                       \
   sizeof(ck_pod_copy_kernel), NULL}
static const ck_kernel_info ck__pod_copy_info[] = {
    CK__POD_INFO(1),  CK__POD_INFO(2),  CK__POD_INFO(4),
    CK__POD_INFO(8),  CK__POD_INFO(16), CK__POD_INFO(any),
};

ck_status ck_make_pod_copy_kernel(ck_kernel_builder *ckb, size_t offset,
                                  size_t data_size, ck_kernel_request req,
                                  size_t *out_end_offset) {
  ck_status st = ck__check_kernel_args(__func__, ckb, offset, req);
  size_t end;
  if (st == CK_OK && !ck__add_size(offset, sizeof(ck_pod_copy_kernel), &end)) {
    st = CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu overflows", offset);
  }
  if (st == CK_OK) {
    st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  }
  if (st != CK_OK) {
    return st;
  }
  ck__assign_describe();
  size_t which;
  switch (data_size) {
  case 1: which = 0; break;
  case 2: which = 1; break;
  case 4: which = 2; break;
  case 8: which = 3; break;
  case 16: which = 4; break;
  default: which = 5; break;
  }
  ck_pod_copy_kernel *self =
      (ck_pod_copy_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  self->data_size = data_size;
  (void)ck_prefix_set_function(&self->base, req, ck__pod_copy_info[which].single,
                               ck__pod_copy_info[which].strided);
  if (out_end_offset != NULL) {
    *out_end_offset = end;
  }
  return CK_OK;
}

/* ---- self-description ---- */

/* A builtin assignment leaf has no data: its types and error mode are
 * implied by where its description sits in the tables. */
static size_t ck__assign_fields(const ck_prefix *self, const ck_kernel_info *info,
                                ck_kernel_field *out, size_t max) {
  (void)self;
  ck__fields f = {out, max, 0};
  for (int d = CK_TYPE_BOOL; d <= CK_TYPE_COMPLEX128; d++) {
    const ck_kernel_info *base = &ck__assign_tables[d][0][0];
    if (info >= base && info < base + (size_t)CK_BUILTIN_TYPE_COUNT * 4) {
      size_t at = (size_t)(info - base);
      CK__FIELD_IMPLIED(&f, "dst_type", ck_type_id_name((ck_type_id)d));
      CK__FIELD_IMPLIED(&f, "src_type", ck_type_id_name((ck_type_id)(at / 4)));
      CK__FIELD_IMPLIED(&f, "errmode", ck_errmode_name((ck_errmode)(at % 4)));
    }
  }
  return f.n;
}

static size_t ck__pod_copy_fields(const ck_prefix *self, const ck_kernel_info *info,
                                  ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck_pod_copy_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_INT(&f, K, k, data_size);
  return f.n;
}

/* The descriptions of every kernel made here, registered for dumps before
 * the first one is built. */
static pthread_once_t ck__assign_info_once = PTHREAD_ONCE_INIT;
static void ck__assign_info_init(void) {
  ck__kernel_info_register_decoded(ck__pod_copy_info,
                                   sizeof ck__pod_copy_info / sizeof ck__pod_copy_info[0],
                                   ck__pod_copy_fields);
  for (int d = CK_TYPE_BOOL; d <= CK_TYPE_COMPLEX128; d++) {
    ck__kernel_info_register_decoded(&ck__assign_tables[d][0][0],
                                     (size_t)CK_BUILTIN_TYPE_COUNT * 4, ck__assign_fields);
  }
}

static void ck__assign_describe(void) {
  (void)pthread_once(&ck__assign_info_once, ck__assign_info_init);
}
