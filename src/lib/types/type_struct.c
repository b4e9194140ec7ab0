/* type_struct.c -- the struct and pointer types (see ckernel/types.h). */
#include "types/type_internal.h"

#include <inttypes.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

/* ---- pointer ------------------------------------------------------------------------------ */

static ck_status ck__pointer_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                   size_t ndim) {
  (void)shape;
  if (ndim > 0) {
    return ck__extra_shape(ndim);
  }
  ck_pointer_arrmeta *m = (ck_pointer_arrmeta *)arrmeta;
  ck_status st = ck_type_arrmeta_construct(self->element, arrmeta + sizeof *m, NULL, 0);
  if (st != CK_OK) {
    return st;
  }
  m->blockref = NULL;
  m->offset = 0;
  return CK_OK;
}

static void ck__pointer_destruct(ck_type self, char *arrmeta) {
  ck_pointer_arrmeta *m = (ck_pointer_arrmeta *)arrmeta;
  ck_type_arrmeta_destruct(self->element, arrmeta + sizeof *m);
  ck_memblock_decref(m->blockref);
  m->blockref = NULL;
}

static void ck__pointer_copy(ck_type self, char *dst, const char *src) {
  memcpy(dst, src, sizeof(ck_pointer_arrmeta));
  ck_memblock_incref(((ck_pointer_arrmeta *)dst)->blockref);
  ck_type_arrmeta_copy(self->element, dst + sizeof(ck_pointer_arrmeta),
                       src + sizeof(ck_pointer_arrmeta));
}

static void ck__pointer_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "pointer[");
  ck__type_append(self->element, buf, bufsize, pos);
  ck__appendf(buf, bufsize, pos, "]");
}

static void ck__pointer_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                          size_t *pos, int indent) {
  const ck_pointer_arrmeta *m = (const ck_pointer_arrmeta *)arrmeta;
  ck__appendf(buf, bufsize, pos, "%*spointer arrmeta\n%*soffset: %" PRIdPTR "\n",
              indent, "", indent + 1, "", m->offset);
  ck__blockref_append(m->blockref, buf, bufsize, pos, indent + 1);
  ck__arrmeta_debug_append(self->element, arrmeta + sizeof *m, buf, bufsize, pos,
                           indent + 1);
}

static const ck_type_vtable ck__pointer_vtable = {
    .name = "pointer",
    .arrmeta_construct = ck__pointer_construct,
    .arrmeta_destruct = ck__pointer_destruct,
    .arrmeta_copy = ck__pointer_copy,
    .print = ck__pointer_print,
    .arrmeta_debug_print = ck__pointer_debug,
    .equal = ck__elem_equal,
    .hash = ck__elem_hash,
};

ck_status ck_pointer_type_new(ck_type target, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_status st = ck__check_elem(target, "the target of a pointer", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  struct ck_type_desc *d;
  st = ck__elem_type_new(CK_TYPE_POINTER, &ck__pointer_vtable, target,
                        sizeof(ck_pointer_arrmeta), &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  d->flags |= CK_TYPE_FLAG_BLOCKREF;
  d->data_size = sizeof(char *);
  d->data_alignment = alignof(char *);
  *out = ck__desc_finish(d);
  return CK_OK;
}

/* ---- struct ---------------------------------------------------------------------------------- */

static ck_status ck__struct_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                  size_t ndim) {
  (void)shape;
  if (ndim > 0) {
    return ck__extra_shape(ndim);
  }
  size_t n = self->field_count;
  if (n != 0) {
    memcpy(arrmeta, self->field_data_offsets, n * sizeof(uintptr_t));
  }
  for (size_t i = 0; i < n; i++) {
    ck_status st = ck_type_arrmeta_construct(
        self->field_types[i], arrmeta + self->field_arrmeta_offsets[i], NULL, 0);
    if (st != CK_OK) {
      while (i-- > 0) {
        ck_type_arrmeta_destruct(self->field_types[i],
                                 arrmeta + self->field_arrmeta_offsets[i]);
      }
      return st;
    }
  }
  return CK_OK;
}

static void ck__struct_destruct(ck_type self, char *arrmeta) {
  for (size_t i = 0; i < self->field_count; i++) {
    ck_type_arrmeta_destruct(self->field_types[i],
                             arrmeta + self->field_arrmeta_offsets[i]);
  }
}

static void ck__struct_copy(ck_type self, char *dst, const char *src) {
  size_t n = self->field_count;
  if (n != 0) {
    memcpy(dst, src, n * sizeof(uintptr_t));
  }
  for (size_t i = 0; i < n; i++) {
    ck_type_arrmeta_copy(self->field_types[i], dst + self->field_arrmeta_offsets[i],
                         src + self->field_arrmeta_offsets[i]);
  }
}

/* Field names print bare when they are identifiers, else single-quoted with
 * backslash escapes for ' and \ (the only ones the grammar defines). */
static void ck__name_append(const char *name, char *buf, size_t bufsize, size_t *pos) {
  if (ck__is_identifier(name, strlen(name))) {
    ck__appendf(buf, bufsize, pos, "%s", name);
    return;
  }
  ck__appendf(buf, bufsize, pos, "'");
  for (const char *s = name; *s; s++) {
    if (*s == '\'' || *s == '\\') {
      ck__appendf(buf, bufsize, pos, "\\%c", *s);
    } else {
      ck__appendf(buf, bufsize, pos, "%c", *s);
    }
  }
  ck__appendf(buf, bufsize, pos, "'");
}

static void ck__struct_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "{");
  for (size_t i = 0; i < self->field_count; i++) {
    if (i > 0) {
      ck__appendf(buf, bufsize, pos, ", ");
    }
    ck__name_append(self->field_names[i], buf, bufsize, pos);
    ck__appendf(buf, bufsize, pos, ": ");
    ck__type_append(self->field_types[i], buf, bufsize, pos);
  }
  ck__appendf(buf, bufsize, pos, "}");
}

static void ck__struct_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                         size_t *pos, int indent) {
  const uintptr_t *offs = (const uintptr_t *)arrmeta;
  ck__appendf(buf, bufsize, pos, "%*sstruct arrmeta\n%*sfield data offsets:", indent,
              "", indent + 1, "");
  for (size_t i = 0; i < self->field_count; i++) {
    ck__appendf(buf, bufsize, pos, "%s %" PRIuPTR, i ? "," : "", offs[i]);
  }
  ck__appendf(buf, bufsize, pos, "\n");
  for (size_t i = 0; i < self->field_count; i++) {
    if (ck_type_arrmeta_size(self->field_types[i]) == 0) {
      continue;
    }
    ck__appendf(buf, bufsize, pos, "%*sfield %zu (", indent + 1, "", i);
    ck__name_append(self->field_names[i], buf, bufsize, pos);
    ck__appendf(buf, bufsize, pos, "):\n");
    ck__arrmeta_debug_append(self->field_types[i],
                             arrmeta + self->field_arrmeta_offsets[i], buf, bufsize,
                             pos, indent + 2);
  }
}

static bool ck__struct_equal(ck_type a, ck_type b) {
  if (a->field_count != b->field_count) {
    return false;
  }
  for (size_t i = 0; i < a->field_count; i++) {
    if (strcmp(a->field_names[i], b->field_names[i]) != 0 ||
        !ck_type_equal(a->field_types[i], b->field_types[i])) {
      return false;
    }
  }
  return true;
}

static uint64_t ck__struct_hash(ck_type self) {
  uint64_t h = ck__hmix(self->id, self->field_count);
  for (size_t i = 0; i < self->field_count; i++) {
    h = ck__hmix(h, ck__hash_cstr(self->field_names[i]));
    h = ck__hmix(h, ck_type_hash(self->field_types[i]));
  }
  return h;
}

static const ck_type_vtable ck__struct_vtable = {
    .name = "struct",
    .arrmeta_construct = ck__struct_construct,
    .arrmeta_destruct = ck__struct_destruct,
    .arrmeta_copy = ck__struct_copy,
    .print = ck__struct_print,
    .arrmeta_debug_print = ck__struct_debug,
    .equal = ck__struct_equal,
    .hash = ck__struct_hash,
};

/* A valid field name: non-empty UTF-8 without control characters. */
static bool ck__valid_field_name(const char *name, size_t len) {
  if (len == 0 || !ck_utf8_validate(name, len)) {
    return false;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c < 0x20 || c == 0x7f) {
      return false;
    }
  }
  return true;
}

static size_t ck__round_up(size_t x, size_t align, bool *overflow) {
  size_t r;
  if (!ck__add_size(x, align - 1, &r)) {
    *overflow = true;
    return 0;
  }
  return r & ~(align - 1);
}

ck_status ck_struct_type_new(size_t nfields, const char *const *names,
                             const ck_type *types, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (nfields > 0 && (names == NULL || types == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "names and types must not be NULL");
  }
  /* Validate everything before allocating. */
  size_t name_bytes = 0;
  uint32_t depth = 1;
  ck__name_set seen; /* duplicate names in O(n) */
  ck__name_set_init(&seen);
  ck_status st = CK_OK;
  for (size_t i = 0; i < nfields && st == CK_OK; i++) {
    if (names[i] == NULL) {
      st = CK_ERROR(CK_ERR_INVALID_ARGUMENT, "name of field %zu is NULL", i);
      break;
    }
    size_t len = strlen(names[i]);
    if (!ck__valid_field_name(names[i], len)) {
      st = CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "name of field %zu is empty, not UTF-8 or has control "
                    "characters", i);
      break;
    }
    int added = ck__name_set_add(&seen, names[i], __func__);
    if (added <= 0) {
      st = added < 0 ? CK_ERR_NO_MEMORY
                     : CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                                "duplicate field name '%.64s'", names[i]);
      break;
    }
    st = ck__check_elem(types[i], "a struct field", true, __func__);
    if (st != CK_OK) {
      break;
    }
    if (ck__type_depth(types[i]) + 1 > depth) {
      depth = ck__type_depth(types[i]) + 1;
    }
    if (!ck__add_size(name_bytes, len + 1, &name_bytes)) {
      st = CK_ERROR(CK_ERR_OVERFLOW, "field names are too long");
    }
  }
  ck__name_set_free(&seen);
  if (st != CK_OK) {
    return st;
  }
  if (nfields == 0) {
    depth = 2;
  }
  /* Layout: C rules for data; arrmeta = offsets then each field's arrmeta. */
  bool ovf = false;
  size_t data_off = 0, align = 1, arrmeta_off = 0, inherited = 0; /* flags */
  if (!ck__mul_size(nfields, sizeof(uintptr_t), &arrmeta_off)) {
    ovf = true;
  }
  for (size_t i = 0; i < nfields && !ovf; i++) {
    size_t a = ck_type_data_alignment(types[i]);
    data_off = ck__round_up(data_off, a, &ovf);
    ovf |= !ck__add_size(data_off, ck_type_data_size(types[i]), &data_off);
    ovf |= !ck__add_size(arrmeta_off, ck_type_arrmeta_size(types[i]), &arrmeta_off);
    align = a > align ? a : align;
    inherited |= ck_type_flags(types[i]) &
                 (CK_TYPE_FLAG_BLOCKREF | CK_TYPE_FLAG_PATTERN | CK_TYPE_FLAG_OPTION);
  }
  size_t data_size = ck__round_up(data_off, align, &ovf);
  size_t per_field = sizeof(ck_type) + sizeof(uintptr_t) + sizeof(size_t) +
                     sizeof(const char *), extra = 0;
  ovf |= !ck__mul_size(nfields, per_field, &extra);
  ovf |= !ck__add_size(extra, name_bytes, &extra);
  if (ovf || data_size > PTRDIFF_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "struct of %zu fields is too large", nfields);
  }
  struct ck_type_desc *d = ck__desc_alloc(extra, CK_TYPE_STRUCT, &ck__struct_vtable,
                                         __func__);
  if (d == NULL) {
    return ck_last_status();
  }
  /* The arrays live right after the descriptor (one allocation). */
  ck_type *ftypes = (ck_type *)(d + 1);
  uintptr_t *doffs = (uintptr_t *)(ftypes + nfields);
  size_t *aoffs = (size_t *)(doffs + nfields);
  const char **fnames = (const char **)(aoffs + nfields);
  char *chars = (char *)(fnames + nfields);
  data_off = 0;
  arrmeta_off = nfields * sizeof(uintptr_t);
  for (size_t i = 0; i < nfields; i++) {
    size_t a = ck_type_data_alignment(types[i]);
    data_off = (data_off + a - 1) & ~(a - 1);
    doffs[i] = data_off;
    data_off += ck_type_data_size(types[i]);
    aoffs[i] = arrmeta_off;
    arrmeta_off += ck_type_arrmeta_size(types[i]);
    size_t len = strlen(names[i]);
    memcpy(chars, names[i], len + 1);
    fnames[i] = chars;
    chars += len + 1;
    ck_type_incref(types[i]);
    ftypes[i] = types[i];
  }
  d->flags = (uint32_t)inherited;
  d->depth = depth;
  d->data_size = data_size;
  d->data_alignment = align;
  d->arrmeta_size = arrmeta_off;
  d->field_count = nfields;
  d->field_names = fnames;
  d->field_types = ftypes;
  d->field_data_offsets = doffs;
  d->field_arrmeta_offsets = aoffs;
  *out = ck__desc_finish(d);
  return CK_OK;
}

