/*
 * varlen_element.c -- setting one variable-length element (string, bytes,
 * var dim) in the arena that the element's arrmeta references (see
 * ckernel/varlen_element.h).
 */
#include "types/type_internal.h"

#include <inttypes.h>
#include <string.h>

static ck_status ck__assign_bytes(const char *func, char *data, const char *arrmeta,
                                 const char *bytes, size_t len, size_t align) {
  if (data == NULL || arrmeta == NULL || (bytes == NULL && len != 0)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "data, arrmeta and bytes must not be NULL");
  }
  ck_memblock *mb = ((const ck_string_arrmeta *)arrmeta)->blockref;
  if (mb == NULL) {
    return ck__error(CK_ERR_INVALID_STATE, func, "the arrmeta has no blockref arena");
  }
  char *b, *e;
  ck_status st = ck_pod_allocate(mb, len, align, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  if (len != 0) {
    memcpy(b, bytes, len);
  }
  ck_string *s = (ck_string *)data;
  s->begin = b;
  s->end = e;
  return CK_OK;
}

ck_status ck_string_assign(char *data, const char *arrmeta, const char *bytes,
                           size_t len) {
  return ck__assign_bytes(__func__, data, arrmeta, bytes, len, 1);
}

ck_status ck_bytes_assign(ck_type bytes_type, char *data, const char *arrmeta,
                          const char *bytes, size_t len) {
  if (!ck__is_desc(bytes_type) || bytes_type->id != CK_TYPE_BYTES) {
    return CK_ERROR(CK_ERR_TYPE, "type is not bytes");
  }
  return ck__assign_bytes(__func__, data, arrmeta, bytes, len,
                         bytes_type->target_alignment);
}

ck_status ck_var_dim_alloc(ck_type var_type, char *data, const char *arrmeta,
                           size_t count) {
  if (data == NULL || arrmeta == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "data and arrmeta must not be NULL");
  }
  if (!ck__is_desc(var_type) || var_type->id != CK_TYPE_VAR_DIM) {
    return CK_ERROR(CK_ERR_TYPE, "type is not a var dim");
  }
  const ck_var_dim_arrmeta *m = (const ck_var_dim_arrmeta *)arrmeta;
  size_t esize = ck_type_data_size(var_type->element);
  if (m->offset != 0 || m->stride < 0 || (size_t)m->stride < esize) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "cannot allocate through a var dim view (offset %" PRIdPTR
                    ", stride %" PRIdPTR ", element size %zu)",
                    m->offset, m->stride, esize);
  }
  if (m->blockref == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "the var dim arrmeta has no blockref arena");
  }
  size_t total;
  if (!ck__mul_size(count, (size_t)m->stride, &total) || total > PTRDIFF_MAX ||
      count > (size_t)INTPTR_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "%zu elements of stride %" PRIdPTR " overflow",
                    count, m->stride);
  }
  char *b, *e;
  ck_status st = ck_pod_allocate(m->blockref, total,
                                 ck_type_data_alignment(var_type->element), &b, &e);
  if (st != CK_OK) {
    return st;
  }
  memset(b, 0, total); /* elements holding strings must read as empty */
  ck_var_dim_data *v = (ck_var_dim_data *)data;
  v->begin = b;
  v->size = count;
  return CK_OK;
}

