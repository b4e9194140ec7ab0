/* type_string.c -- the string and bytes types, UTF-8 validation (see
 * ckernel/types.h). */
#include "types/type_internal.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

/* ---- strings and bytes ------------------------------------------------------------------ */

static ck_status ck__string_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                  size_t ndim) {
  (void)self;
  (void)shape;
  if (ndim > 0) {
    return ck__extra_shape(ndim);
  }
  ck_memblock *mb;
  ck_status st = ck_pod_memblock_new(0, &mb);
  if (st != CK_OK) {
    return st;
  }
  ((ck_string_arrmeta *)arrmeta)->blockref = mb;
  return CK_OK;
}

static void ck__string_destruct(ck_type self, char *arrmeta) {
  (void)self;
  ck_string_arrmeta *m = (ck_string_arrmeta *)arrmeta;
  ck_memblock_decref(m->blockref);
  m->blockref = NULL;
}

static void ck__string_copy(ck_type self, char *dst, const char *src) {
  (void)self;
  memcpy(dst, src, sizeof(ck_string_arrmeta));
  ck_memblock_incref(((ck_string_arrmeta *)dst)->blockref);
}

static void ck__string_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  if (self->id == CK_TYPE_STRING) {
    ck__appendf(buf, bufsize, pos, "string");
  } else if (self->target_alignment == 1) {
    ck__appendf(buf, bufsize, pos, "bytes");
  } else {
    ck__appendf(buf, bufsize, pos, "bytes[align=%zu]", self->target_alignment);
  }
}

static void ck__string_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                         size_t *pos, int indent) {
  ck__appendf(buf, bufsize, pos, "%*s%s arrmeta\n", indent, "", self->vtable->name);
  ck__blockref_append(((const ck_string_arrmeta *)arrmeta)->blockref, buf, bufsize,
                     pos, indent + 1);
}

static bool ck__string_equal(ck_type a, ck_type b) {
  return a->target_alignment == b->target_alignment;
}

static uint64_t ck__string_hash(ck_type self) {
  return ck__hmix(self->id, self->target_alignment);
}

static const ck_type_vtable ck__string_vtable = {
    .name = "string",
    .arrmeta_construct = ck__string_construct,
    .arrmeta_destruct = ck__string_destruct,
    .arrmeta_copy = ck__string_copy,
    .print = ck__string_print,
    .arrmeta_debug_print = ck__string_debug,
    .equal = ck__string_equal,
    .hash = ck__string_hash,
};
static const ck_type_vtable ck__bytes_vtable = {
    .name = "bytes",
    .arrmeta_construct = ck__string_construct,
    .arrmeta_destruct = ck__string_destruct,
    .arrmeta_copy = ck__string_copy,
    .print = ck__string_print,
    .arrmeta_debug_print = ck__string_debug,
    .equal = ck__string_equal,
    .hash = ck__string_hash,
};

static ck_status ck__stringlike_new(ck_type_id id, const ck_type_vtable *vt,
                                   size_t align, ck_type *out, const char *func) {
  struct ck_type_desc *d = ck__desc_alloc(0, id, vt, func);
  if (d == NULL) {
    return ck_last_status();
  }
  d->flags = CK_TYPE_FLAG_BLOCKREF;
  d->depth = 2;
  d->data_size = sizeof(ck_string);
  d->data_alignment = alignof(ck_string);
  d->arrmeta_size = sizeof(ck_string_arrmeta);
  d->target_alignment = align;
  *out = ck__desc_finish(d);
  return CK_OK;
}

ck_status ck_string_type_new(ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  return ck__stringlike_new(CK_TYPE_STRING, &ck__string_vtable, 1, out, __func__);
}

ck_status ck_bytes_type_new(size_t align, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (!ck__is_pow2(align) || align > CK_BYTES_MAX_ALIGN) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "alignment %zu is not a power of two in [1, %d]", align,
                    CK_BYTES_MAX_ALIGN);
  }
  return ck__stringlike_new(CK_TYPE_BYTES, &ck__bytes_vtable, align, out, __func__);
}

/* ck_utf8_validate: utf8_validate.c */

