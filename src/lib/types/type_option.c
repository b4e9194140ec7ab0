/* type_option.c -- the option type `?T` (see ckernel/types.h; validity
 * accessors in ckernel/validity.h). */
#include "types/type_internal.h"

#include <inttypes.h>
#include <string.h>

/* Constructed arrmeta has no bitmap: every slot is valid (Arrow's absent
 * validity buffer).  ck_array_empty attaches one afterwards, because only
 * the array knows the data address the bitmap is keyed by. */
static ck_status ck__option_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                      size_t ndim) {
  ck_option_arrmeta *m = (ck_option_arrmeta *)arrmeta;
  ck_status st = ck_type_arrmeta_construct(self->element, arrmeta + sizeof *m, shape, ndim);
  if (st != CK_OK) {
    return st;
  }
  memset(m, 0, sizeof *m);
  return CK_OK;
}

static void ck__option_destruct(ck_type self, char *arrmeta) {
  ck_option_arrmeta *m = (ck_option_arrmeta *)arrmeta;
  ck_type_arrmeta_destruct(self->element, arrmeta + sizeof *m);
  ck_memblock_decref(m->blockref);
  m->blockref = NULL;
  m->bits = NULL;
}

static void ck__option_copy(ck_type self, char *dst, const char *src) {
  memcpy(dst, src, sizeof(ck_option_arrmeta));
  ck_memblock_incref(((ck_option_arrmeta *)dst)->blockref);
  ck_type_arrmeta_copy(self->element, dst + sizeof(ck_option_arrmeta),
                       src + sizeof(ck_option_arrmeta));
}

static void ck__option_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "?");
  ck__type_append(self->element, buf, bufsize, pos);
}

static void ck__option_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                             size_t *pos, int indent) {
  const ck_option_arrmeta *m = (const ck_option_arrmeta *)arrmeta;
  if (m->bits == NULL) {
    ck__appendf(buf, bufsize, pos, "%*soption arrmeta\n%*sbits: none (all valid)\n",
                indent, "", indent + 1, "");
  } else {
    ck__appendf(buf, bufsize, pos,
                "%*soption arrmeta\n%*sbits: %p\n%*sbit_offset: %" PRIdPTR
                "\n%*sorigin: %p\n%*sstep: %" PRIdPTR "\n%*slength: %" PRIdPTR "\n",
                indent, "", indent + 1, "", (const void *)m->bits, indent + 1, "",
                m->bit_offset, indent + 1, "", (const void *)m->origin, indent + 1, "",
                m->step, indent + 1, "", m->length);
    ck__blockref_append(m->blockref, buf, bufsize, pos, indent + 1);
  }
  ck__arrmeta_debug_append(self->element, arrmeta + sizeof *m, buf, bufsize, pos,
                           indent + 1);
}

static const ck_type_vtable ck__option_vtable = {
    .name = "option",
    .arrmeta_construct = ck__option_construct,
    .arrmeta_destruct = ck__option_destruct,
    .arrmeta_copy = ck__option_copy,
    .print = ck__option_print,
    .arrmeta_debug_print = ck__option_debug,
    .equal = ck__elem_equal,
    .hash = ck__elem_hash,
};

ck_status ck_option_type_new(ck_type value, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck__check_elem(value, "the value type of an option", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  char tb[96];
  if (ck_type_is_option(value)) {
    return CK_ERROR(CK_ERR_TYPE, "'?%s': an option of an option has no meaning (one "
                    "validity bit per slot); use '%s'",
                    ck__type_str(value, tb, sizeof tb), ck__type_str(value, tb, sizeof tb));
  }
  bool pattern = (ck_type_flags(value) & CK_TYPE_FLAG_PATTERN) != 0;
  if (!pattern && ck_type_data_size(value) == 0) {
    return CK_ERROR(CK_ERR_TYPE, "the value type of an option needs a nonzero data size "
                    "(validity bits are found by data address), but '%s' has none",
                    ck__type_str(value, tb, sizeof tb));
  }
  struct ck_type_desc *d;
  st = ck__elem_type_new(CK_TYPE_OPTION, &ck__option_vtable, value,
                         sizeof(ck_option_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_BLOCKREF | CK_TYPE_FLAG_OPTION;
  d->data_size = ck_type_data_size(value);
  d->data_alignment = ck_type_data_alignment(value);
  *out = ck__desc_finish(d);
  return CK_OK;
}

bool ck_type_is_option(ck_type t) {
  return ck__is_desc(t) && t->id == CK_TYPE_OPTION;
}
