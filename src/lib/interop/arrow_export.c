/*
 * arrow_export.c -- ck arrays as Arrow C data (ArrowSchema + ArrowArray),
 * as device arrays on the CPU (arrow.h): the entry points.  A dictionary
 * column goes to arrow_export_dictionary.c, any other array to the
 * recursion over its element type (arrow_export_format.c for the schema,
 * arrow_export_array.c for the array); arrow_export_internal.h maps the
 * export's files.
 */
#include "interop/arrow_export_internal.h"

#include <string.h>

ck_status ck_arrow_export_schema(const ck_array_preamble *a,
                                 const struct ArrowSchema *requested,
                                 struct ArrowSchema *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  memset(out, 0, sizeof *out);
  ck_status st = ck__xcheck_request(requested, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (ck__xis_dictionary_column(a)) {
    return ck__xexport_dictionary((ck_array_preamble *)a, requested, out, NULL);
  }
  return ck__xschema_of(a, requested, out);
}

ck_status ck_arrow_export(ck_array_preamble *a, const struct ArrowSchema *requested,
                          struct ArrowSchema *out_schema, struct ArrowArray *out_array) {
  if (out_schema != NULL) memset(out_schema, 0, sizeof *out_schema);
  if (out_array != NULL) memset(out_array, 0, sizeof *out_array);
  ck_status st = ck__xcheck_request(requested, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (ck__xis_dictionary_column(a)) {
    return ck__xexport_dictionary(a, requested, out_schema, out_array);
  }
  return ck__xarray_of(a, requested, out_schema, out_array);
}

ck_status ck_arrow_export_device(ck_array_preamble *a,
                                 const struct ArrowSchema *requested,
                                 struct ArrowSchema *out_schema,
                                 struct ArrowDeviceArray *out_array) {
  if (out_array == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out_array is NULL");
  }
  memset(out_array, 0, sizeof *out_array);
  ck_status st = ck_arrow_export(a, requested, out_schema, &out_array->array);
  out_array->device_id = -1;
  out_array->device_type = ARROW_DEVICE_CPU;
  out_array->sync_event = NULL;
  return st;
}
