/* type_dims.c -- fixed, strided and var dimension types (see ckernel/types.h). */
#include "types/type_internal.h"

#include <inttypes.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

/* ---- fixed and strided dims ------------------------------------------------------ */

static ck_status ck__dim_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                               size_t ndim) {
  ck_dim_arrmeta *m = (ck_dim_arrmeta *)arrmeta;
  bool fixed = self->id == CK_TYPE_FIXED_DIM;
  intptr_t size;
  if (ndim > 0) {
    size = shape[0];
    if (size < 0) {
      return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT, "negative dimension size %" PRIdPTR,
                           size);
    }
    if (fixed && size != self->fixed_size) {
      return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT,
                           "shape entry %" PRIdPTR " does not match the fixed dim "
                           "of size %" PRIdPTR, size, self->fixed_size);
    }
    shape++;
    ndim--;
  } else if (fixed) {
    size = self->fixed_size;
  } else {
    return ARRMETA_ERROR(CK_ERR_INVALID_ARGUMENT,
                         "the shape has no entry for a strided dim");
  }
  char *elem_meta = arrmeta + sizeof(ck_dim_arrmeta);
  ck_status st = ck_type_arrmeta_construct(self->element, elem_meta, shape, ndim);
  if (st != CK_OK) {
    return st;
  }
  intptr_t stride = ck__default_extent(self->element, elem_meta), extent;
  if (__builtin_mul_overflow(size, stride, &extent)) {
    ck_type_arrmeta_destruct(self->element, elem_meta);
    return ARRMETA_ERROR(CK_ERR_OVERFLOW, "dimension size %" PRIdPTR " times stride %"
                         PRIdPTR " overflows", size, stride);
  }
  m->size = size;
  m->stride = stride;
  return CK_OK;
}

static void ck__dim_destruct(ck_type self, char *arrmeta) {
  ck_type_arrmeta_destruct(self->element, arrmeta + sizeof(ck_dim_arrmeta));
}

static void ck__dim_copy(ck_type self, char *dst, const char *src) {
  memcpy(dst, src, sizeof(ck_dim_arrmeta));
  ck_type_arrmeta_copy(self->element, dst + sizeof(ck_dim_arrmeta),
                       src + sizeof(ck_dim_arrmeta));
}

static void ck__dim_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  switch (self->id) {
  case CK_TYPE_FIXED_DIM:
    ck__appendf(buf, bufsize, pos, "%" PRIdPTR " * ", self->fixed_size);
    break;
  case CK_TYPE_STRIDED_DIM:
    ck__appendf(buf, bufsize, pos, "strided * ");
    break;
  default:
    ck__appendf(buf, bufsize, pos, "var * ");
    break;
  }
  ck__type_append(self->element, buf, bufsize, pos);
}

static void ck__dim_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                      size_t *pos, int indent) {
  const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)arrmeta;
  ck__appendf(buf, bufsize, pos,
              "%*s%s arrmeta\n%*sstride: %" PRIdPTR "\n%*ssize: %" PRIdPTR "\n",
              indent, "", self->vtable->name, indent + 1, "", m->stride, indent + 1,
              "", m->size);
  ck__arrmeta_debug_append(self->element, arrmeta + sizeof(ck_dim_arrmeta), buf,
                           bufsize, pos, indent + 1);
}

bool ck__elem_equal(ck_type a, ck_type b) {
  return a->fixed_size == b->fixed_size && ck_type_equal(a->element, b->element);
}

uint64_t ck__elem_hash(ck_type self) {
  return ck__hmix(ck__hmix(self->id, (uint64_t)self->fixed_size),
                 ck_type_hash(self->element));
}

static const ck_type_vtable ck__fixed_dim_vtable = {
    .name = "fixed_dim",
    .arrmeta_construct = ck__dim_construct,
    .arrmeta_destruct = ck__dim_destruct,
    .arrmeta_copy = ck__dim_copy,
    .print = ck__dim_print,
    .arrmeta_debug_print = ck__dim_debug,
    .equal = ck__elem_equal,
    .hash = ck__elem_hash,
};
static const ck_type_vtable ck__strided_dim_vtable = {
    .name = "strided_dim",
    .arrmeta_construct = ck__dim_construct,
    .arrmeta_destruct = ck__dim_destruct,
    .arrmeta_copy = ck__dim_copy,
    .print = ck__dim_print,
    .arrmeta_debug_print = ck__dim_debug,
    .equal = ck__elem_equal,
    .hash = ck__elem_hash,
};

ck_status ck__elem_type_new(ck_type_id id, const ck_type_vtable *vt,
                                  ck_type elem, size_t own_arrmeta,
                                  struct ck_type_desc **out, const char *func) {
  *out = NULL;
  size_t arrmeta_size;
  if (!ck__add_size(own_arrmeta, ck_type_arrmeta_size(elem), &arrmeta_size)) {
    return ck__error(CK_ERR_OVERFLOW, func, "arrmeta size overflows");
  }
  struct ck_type_desc *d = ck__desc_alloc(0, id, vt, func);
  if (d == NULL) {
    return ck_last_status();
  }
  ck_type_incref(elem);
  d->element = elem;
  d->depth = ck__type_depth(elem) + 1;
  d->arrmeta_size = arrmeta_size;
  d->flags = ck_type_flags(elem) &
             (CK_TYPE_FLAG_BLOCKREF | CK_TYPE_FLAG_PATTERN | CK_TYPE_FLAG_OPTION);
  *out = d;
  return CK_OK;
}

ck_status ck_fixed_dim_type_new(intptr_t size, ck_type elem, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (size < 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "negative dimension size %" PRIdPTR, size);
  }
  ck_status st = ck__check_elem(elem, "the element of a fixed dim", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  size_t data_size = 0;
  if (!ck__mul_size((size_t)size, ck_type_data_size(elem), &data_size) ||
      data_size > PTRDIFF_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "data size of %" PRIdPTR " elements of %zu "
                    "bytes overflows", size, ck_type_data_size(elem));
  }
  struct ck_type_desc *d;
  st = ck__elem_type_new(CK_TYPE_FIXED_DIM, &ck__fixed_dim_vtable, elem,
                        sizeof(ck_dim_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_DIM;
  d->fixed_size = size;
  d->data_size = data_size;
  d->data_alignment = ck_type_data_alignment(elem);
  *out = ck__desc_finish(d);
  return CK_OK;
}

ck_status ck_strided_dim_type_new(ck_type elem, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck__check_elem(elem, "the element of a strided dim", false, __func__);
  if (st != CK_OK) {
    return st;
  }
  struct ck_type_desc *d;
  st = ck__elem_type_new(CK_TYPE_STRIDED_DIM, &ck__strided_dim_vtable, elem,
                        sizeof(ck_dim_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_DIM | CK_TYPE_FLAG_ARRMETA_SIZED;
  d->data_size = 0;
  d->data_alignment = ck_type_data_alignment(elem);
  *out = ck__desc_finish(d);
  return CK_OK;
}

/* ---- var dims ----------------------------------------------------------------------- */

static ck_status ck__var_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                               size_t ndim) {
  (void)shape;
  if (ndim > 0) {
    return ck__extra_shape(ndim);
  }
  ck_var_dim_arrmeta *m = (ck_var_dim_arrmeta *)arrmeta;
  ck_memblock *mb;
  ck_status st = ck_pod_memblock_new(0, &mb);
  if (st != CK_OK) {
    return st;
  }
  st = ck_type_arrmeta_construct(self->element, arrmeta + sizeof *m, NULL, 0);
  if (st != CK_OK) {
    ck_memblock_decref(mb);
    return st;
  }
  m->blockref = mb;
  m->stride = (intptr_t)ck_type_data_size(self->element);
  m->offset = 0;
  return CK_OK;
}

static void ck__var_destruct(ck_type self, char *arrmeta) {
  ck_var_dim_arrmeta *m = (ck_var_dim_arrmeta *)arrmeta;
  ck_type_arrmeta_destruct(self->element, arrmeta + sizeof *m);
  ck_memblock_decref(m->blockref);
  m->blockref = NULL;
}

static void ck__var_copy(ck_type self, char *dst, const char *src) {
  memcpy(dst, src, sizeof(ck_var_dim_arrmeta));
  ck_memblock_incref(((ck_var_dim_arrmeta *)dst)->blockref);
  ck_type_arrmeta_copy(self->element, dst + sizeof(ck_var_dim_arrmeta),
                       src + sizeof(ck_var_dim_arrmeta));
}

static void ck__var_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                      size_t *pos, int indent) {
  const ck_var_dim_arrmeta *m = (const ck_var_dim_arrmeta *)arrmeta;
  ck__appendf(buf, bufsize, pos,
              "%*svar_dim arrmeta\n%*sstride: %" PRIdPTR "\n%*soffset: %" PRIdPTR "\n",
              indent, "", indent + 1, "", m->stride, indent + 1, "", m->offset);
  ck__blockref_append(m->blockref, buf, bufsize, pos, indent + 1);
  ck__arrmeta_debug_append(self->element, arrmeta + sizeof *m, buf, bufsize, pos,
                           indent + 1);
}

static const ck_type_vtable ck__var_dim_vtable = {
    .name = "var_dim",
    .arrmeta_construct = ck__var_construct,
    .arrmeta_destruct = ck__var_destruct,
    .arrmeta_copy = ck__var_copy,
    .print = ck__dim_print,
    .arrmeta_debug_print = ck__var_debug,
    .equal = ck__elem_equal,
    .hash = ck__elem_hash,
};

ck_status ck_var_dim_type_new(ck_type elem, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck__check_elem(elem, "the element of a var dim", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  struct ck_type_desc *d;
  st = ck__elem_type_new(CK_TYPE_VAR_DIM, &ck__var_dim_vtable, elem,
                        sizeof(ck_var_dim_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_DIM | CK_TYPE_FLAG_BLOCKREF;
  d->data_size = sizeof(ck_var_dim_data);
  d->data_alignment = alignof(ck_var_dim_data);
  *out = ck__desc_finish(d);
  return CK_OK;
}


/* ---- symbolic dims (dimension variables: pattern types) ---------------------------- */

static ck_status ck__symbolic_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                       size_t ndim) {
  (void)arrmeta;
  (void)shape;
  (void)ndim;
  return ck__pattern_error(self, "ck_type_arrmeta_construct");
}

static void ck__symbolic_destruct(ck_type self, char *arrmeta) {
  (void)self; /* never constructed */
  (void)arrmeta;
}

static void ck__symbolic_copy(ck_type self, char *dst, const char *src) {
  (void)self; /* never constructed */
  (void)dst;
  (void)src;
}

static void ck__symbolic_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "%s * ", self->dim_name);
  ck__type_append(self->element, buf, bufsize, pos);
}

static void ck__symbolic_debug(ck_type self, const char *arrmeta, char *buf,
                               size_t bufsize, size_t *pos, int indent) {
  (void)arrmeta;
  ck__appendf(buf, bufsize, pos, "%*ssymbolic_dim %s (a pattern: no arrmeta)\n", indent, "",
              self->dim_name);
}

static bool ck__symbolic_equal(ck_type a, ck_type b) {
  return strcmp(a->dim_name, b->dim_name) == 0 && ck_type_equal(a->element, b->element);
}

static uint64_t ck__symbolic_hash(ck_type self) {
  return ck__hmix(ck__hmix(self->id, ck__hash_cstr(self->dim_name)),
                  ck_type_hash(self->element));
}

static const ck_type_vtable ck__symbolic_dim_vtable = {
    .name = "symbolic_dim",
    .arrmeta_construct = ck__symbolic_construct,
    .arrmeta_destruct = ck__symbolic_destruct,
    .arrmeta_copy = ck__symbolic_copy,
    .print = ck__symbolic_print,
    .arrmeta_debug_print = ck__symbolic_debug,
    .equal = ck__symbolic_equal,
    .hash = ck__symbolic_hash,
};

bool ck__is_dim_name(const char *name, size_t len) {
  return len > 0 && len < CK_DIM_NAME_MAX && name[0] >= 'A' && name[0] <= 'Z' &&
         ck__is_identifier(name, len);
}

ck_status ck_symbolic_dim_type_new(const char *name, ck_type elem, ck_type *out) {
  if (out == NULL || name == NULL) {
    if (out != NULL) {
      *out = NULL;
    }
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "name and out must not be NULL");
  }
  *out = NULL;
  size_t len = strnlen(name, CK_DIM_NAME_MAX);
  if (!ck__is_dim_name(name, len)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "'%.*s' is not a dimension variable: an upper-case identifier "
                    "([A-Z][A-Za-z0-9_]*) of at most %d bytes",
                    (int)(len < 40 ? len : 40), name, CK_DIM_NAME_MAX - 1);
  }
  ck_status st = ck__check_elem(elem, "the element of a symbolic dim", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  size_t arrmeta_size;
  if (!ck__add_size(sizeof(ck_dim_arrmeta), ck_type_arrmeta_size(elem), &arrmeta_size)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "arrmeta size overflows");
  }
  /* the name lives right after the descriptor: one allocation, one free */
  struct ck_type_desc *d =
      ck__desc_alloc(len + 1, CK_TYPE_SYMBOLIC_DIM, &ck__symbolic_dim_vtable, __func__);
  if (d == NULL) {
    return ck_last_status();
  }
  char *copy = (char *)(d + 1);
  memcpy(copy, name, len);
  copy[len] = '\0';
  d->dim_name = copy;
  ck_type_incref(elem);
  d->element = elem;
  d->depth = ck__type_depth(elem) + 1;
  d->arrmeta_size = arrmeta_size;
  d->flags = ck_type_flags(elem) & (CK_TYPE_FLAG_BLOCKREF | CK_TYPE_FLAG_OPTION);
  d->flags |= CK_TYPE_FLAG_DIM | CK_TYPE_FLAG_PATTERN | CK_TYPE_FLAG_ARRMETA_SIZED;
  d->data_size = 0;
  d->data_alignment = ck_type_data_alignment(elem);
  *out = ck__desc_finish(d);
  return CK_OK;
}
