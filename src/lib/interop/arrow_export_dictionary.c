/*
 * arrow_export_dictionary.c -- dictionary columns (`strided *
 * dictionary[I, V]`) as Arrow dictionary-encoded arrays: the indices
 * exported as integers, the values as their dictionary
 * (arrow_export_internal.h; arrow_dictionary.c attaches the two).
 */
#include "interop/arrow_export_internal.h"
#include "ckernel/dictionary.h"

/* ---- dictionary columns ------------------------------------------------------------- */

/* A one-dim dictionary column (`strided * dictionary[I, V]`, `strided *
 * ?dictionary[...]`)? */
bool ck__xis_dictionary_column(const ck_array_preamble *a) {
  ck_type el = a != NULL && ck_type_ndim(a->type) == 1 ? ck_type_element(a->type) : NULL;
  if (ck_type_is_option(el)) {
    el = ck_type_element(el);
  }
  return ck_type_is_dictionary(el);
}

/* Its indices exported as an integer array whose dictionary is its values
 * exported (`requested`'s dictionary, if any, shapes the values). */
ck_status ck__xexport_dictionary(ck_array_preamble *a, const struct ArrowSchema *requested,
                                 struct ArrowSchema *out_schema,
                                 struct ArrowArray *out_array) {
  ck_array_preamble *idx = NULL, *vals = NULL, *empty = NULL;
  ck_status st = ck_dictionary_array_indices(a, &idx);
  if (st == CK_OK) {
    st = ck_dictionary_array_values(a, &vals);
  }
  ck_type dict = ck_type_dtype(a->type);
  dict = ck_type_is_option(dict) ? ck_type_element(dict) : dict;
  if (st == CK_OK && vals == NULL) { /* no values: an empty dictionary */
    ck_type t = NULL;
    intptr_t zero = 0;
    st = ck_strided_dim_type_new(ck_dictionary_value_type(dict), &t);
    if (st == CK_OK) {
      st = ck_array_empty(t, &zero, 1, CK_ARRAY_READ, &empty);
    }
    ck_type_decref(t);
    vals = empty;
  }
  struct ArrowSchema is = {0}, vs = {0};
  struct ArrowArray ia = {0}, va = {0};
  const struct ArrowSchema *vreq = requested != NULL ? requested->dictionary : NULL;
  /* neither is a dictionary column (dictionary values are not dictionaries) */
  if (st == CK_OK) {
    st = out_array != NULL ? ck__xarray_of(idx, NULL, &is, &ia)
                           : ck__xschema_of(idx, NULL, &is);
  }
  if (st == CK_OK) {
    st = ck__xcheck_request(vreq, out_array != NULL ? "ck_arrow_export"
                                                    : "ck_arrow_export_schema");
  }
  if (st == CK_OK) {
    st = out_array != NULL ? ck__xarray_of(vals, vreq, &vs, &va)
                           : ck__xschema_of(vals, vreq, &vs);
  }
  ck_array_decref(idx);
  ck_array_decref(empty);
  if (st == CK_OK) {
    st = ck__arrow_dictionary_attach(&is, out_array != NULL ? &ia : NULL, &vs,
                                     out_array != NULL ? &va : NULL,
                                     ck_dictionary_ordered(dict));
  } else {
    ck__arrow_schema_release(&is);
    ck__arrow_array_release(&ia);
    ck__arrow_schema_release(&vs);
    ck__arrow_array_release(&va);
  }
  if (st != CK_OK) {
    return st;
  }
  if (out_schema != NULL) *out_schema = is; else is.release(&is);
  if (out_array != NULL) *out_array = ia;
  return CK_OK;
}
