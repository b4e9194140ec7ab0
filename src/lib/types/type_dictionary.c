/* type_dictionary.c -- the dictionary type `dictionary[I, V]` (see
 * ckernel/dictionary.h; the arrays over it are in arrays/dictionary.c).
 *
 * The descriptor is an element type (ck__elem_type_new) whose element is V
 * and whose `fixed_size` field holds the index id plus 256 when ordered, so
 * that the shared element equality and hash cover I, V and the flag. */
#include "types/type_internal.h"
#include "ckernel/dictionary.h"

#include <string.h>

enum { CK__DICT_ORDERED = 256 };

static ck_status ck__dict_construct(ck_type self, char *arrmeta, const intptr_t *shape,
                                    size_t ndim) {
  (void)self;
  if (ndim > 0) {
    return ck__extra_shape(ndim);
  }
  (void)shape;
  memset(arrmeta, 0, sizeof(ck_dictionary_arrmeta)); /* no values yet */
  return CK_OK;
}

static void ck__dict_destruct(ck_type self, char *arrmeta) {
  (void)self;
  ck_dictionary_arrmeta *m = (ck_dictionary_arrmeta *)arrmeta;
  ck_memblock_decref(m->values);
  m->values = NULL;
}

static void ck__dict_copy(ck_type self, char *dst, const char *src) {
  (void)self;
  memcpy(dst, src, sizeof(ck_dictionary_arrmeta));
  ck_memblock_incref(((ck_dictionary_arrmeta *)dst)->values);
}

static void ck__dict_print(ck_type self, char *buf, size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "dictionary[");
  ck__type_append(CK_BUILTIN(ck_dictionary_index_id(self)), buf, bufsize, pos);
  ck__appendf(buf, bufsize, pos, ", ");
  ck__type_append(self->element, buf, bufsize, pos);
  ck__appendf(buf, bufsize, pos, "%s]", ck_dictionary_ordered(self) ? ", ordered" : "");
}

static void ck__dict_debug(ck_type self, const char *arrmeta, char *buf, size_t bufsize,
                           size_t *pos, int indent) {
  (void)self;
  const ck_dictionary_arrmeta *m = (const ck_dictionary_arrmeta *)arrmeta;
  ck__appendf(buf, bufsize, pos, "%*sdictionary arrmeta\n%*svalues: %p\n", indent, "",
              indent + 1, "", (const void *)m->values);
}

static const ck_type_vtable ck__dict_vtable = {
    .name = "dictionary",
    .arrmeta_construct = ck__dict_construct,
    .arrmeta_destruct = ck__dict_destruct,
    .arrmeta_copy = ck__dict_copy,
    .print = ck__dict_print,
    .arrmeta_debug_print = ck__dict_debug,
    .equal = ck__elem_equal,
    .hash = ck__elem_hash,
};

ck_status ck_dictionary_type_new(ck_type_id index, ck_type value, bool ordered,
                                 ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  char k = ck_type_id_kind(index);
  if (k != 'i' && k != 'u') {
    return CK_ERROR(CK_ERR_TYPE, "the index type of a dictionary must be an integer "
                    "(int8..int64, uint8..uint64), not %s", ck_type_id_name(index));
  }
  ck_status st = ck__check_elem(value, "the value type of a dictionary", true, __func__);
  if (st != CK_OK) {
    return st;
  }
  char tb[96];
  uint32_t fl = ck_type_flags(value);
  if (fl & CK_TYPE_FLAG_OPTION) {
    return CK_ERROR(CK_ERR_TYPE, "the values of a dictionary hold no nulls (a missing "
                    "value is a null index: '?dictionary[...]'), but the value type '%s' holds an option",
                    ck__type_str(value, tb, sizeof tb));
  }
  if ((fl & CK_TYPE_FLAG_PATTERN) || ck_type_is_dictionary(value) ||
      ck_type_data_size(value) == 0) {
    return CK_ERROR(CK_ERR_TYPE, "the value type of a dictionary needs a nonzero fixed data "
                    "size and must not be a pattern or a dictionary, but it is '%s'",
                    ck__type_str(value, tb, sizeof tb));
  }
  struct ck_type_desc *d;
  st = ck__elem_type_new(CK_TYPE_DICTIONARY, &ck__dict_vtable, value, 0, &d, __func__);
  if (st != CK_OK) {
    return st;
  }
  /* the values' own arrmeta lives in the values array, not here */
  d->arrmeta_size = sizeof(ck_dictionary_arrmeta);
  d->flags = CK_TYPE_FLAG_BLOCKREF;
  d->fixed_size = (intptr_t)index + (ordered ? CK__DICT_ORDERED : 0);
  d->data_size = ck_type_data_size(CK_BUILTIN(index));
  d->data_alignment = ck_type_data_alignment(CK_BUILTIN(index));
  *out = ck__desc_finish(d);
  return CK_OK;
}

bool ck_type_is_dictionary(ck_type t) {
  return ck__is_desc(t) && t->id == CK_TYPE_DICTIONARY;
}

ck_type_id ck_dictionary_index_id(ck_type t) {
  return ck_type_is_dictionary(t) ? (ck_type_id)(t->fixed_size % CK__DICT_ORDERED)
                                  : CK_TYPE_UNINITIALIZED;
}

ck_type ck_dictionary_value_type(ck_type t) {
  return ck_type_is_dictionary(t) ? t->element : NULL;
}

bool ck_dictionary_ordered(ck_type t) {
  return ck_type_is_dictionary(t) && t->fixed_size >= CK__DICT_ORDERED;
}
