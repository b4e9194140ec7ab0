/*
 * array_option.c -- constructors of option arrays over foreign memory
 * (ckernel/validity.h).  Above array.c and validity.c, which it combines.
 */
#include "types/type_internal.h"
#include "ckernel/validity.h"

#include <inttypes.h>

ck_status ck_array_view_external_option(ck_type type, char *data, const intptr_t *shape,
                                        size_t ndim, uint64_t flags, ck_memblock *owner,
                                        uint8_t *bits, int64_t bit_offset,
                                        ck_memblock *bits_owner, ck_array_preamble **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_type dtype = ck_type_dtype(type);
  char tb[128];
  if (!ck_type_is_valid(type) || !ck_type_is_option(dtype)) {
    return CK_ERROR(CK_ERR_TYPE, "type '%s' is not 'dims * ?T'",
                    ck__type_str(type, tb, sizeof tb));
  }
  for (ck_type t = type; t != dtype; t = t->element) {
    if (t->id == CK_TYPE_VAR_DIM) {
      return CK_ERROR(CK_ERR_TYPE, "type '%s' has a var dim: foreign values need fixed "
                      "or strided dims", ck__type_str(type, tb, sizeof tb));
    }
  }
  if (bit_offset < 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "negative bit offset %" PRId64, bit_offset);
  }
  ck_array_preamble *a;
  ck_status st = ck_array_view_external(type, data, shape, NULL, ndim, flags, owner, &a);
  if (st != CK_OK) {
    return st;
  }
  if (bits != NULL) {
    /* C-contiguous: the slots are consecutive elements of the option type */
    int64_t count = 1;
    size_t nd = ck_type_ndim(type);
    const char *m = ck_array_arrmeta(a);
    for (size_t i = 0; i < nd; i++) {
      count *= ((const ck_dim_arrmeta *)(const void *)m)->size;
      m += sizeof(ck_dim_arrmeta);
    }
    st = ck_option_attach_bitmap(dtype, ck_array_arrmeta(a) + nd * sizeof(ck_dim_arrmeta),
                                 bits, bits_owner, bit_offset, data,
                                 (intptr_t)ck_type_data_size(dtype), count);
    if (st != CK_OK) {
      ck_array_decref(a);
      return st;
    }
  }
  *out = a;
  return CK_OK;
}
