/* A one-array ArrowDeviceArrayStream (ckernel/arrow_device_stream.h). */
#include "ckernel/arrow_device_stream.h"

#include <stdio.h>
#include <string.h>

#include "interop/arrow_internal.h"

typedef struct dstream {
  struct ArrowSchema schema;
  struct ArrowDeviceArray array; /* its release NULL once handed out */
  char error[256];
} dstream;

static int dstream_get_schema(struct ArrowDeviceArrayStream *s, struct ArrowSchema *out) {
  if (s == NULL || s->release == NULL || out == NULL) {
    return 22; /* EINVAL */
  }
  dstream *p = s->private_data;
  if (ck__arrow_schema_copy(&p->schema, out) != CK_OK) {
    snprintf(p->error, sizeof p->error, "%s", ck_last_error());
    return 12; /* ENOMEM */
  }
  return 0;
}

static int dstream_get_next(struct ArrowDeviceArrayStream *s, struct ArrowDeviceArray *out) {
  if (s == NULL || s->release == NULL || out == NULL) {
    return 22;
  }
  dstream *p = s->private_data;
  /* moved out; after the first call a released array (the end) on the
   * stream's device */
  *out = p->array;
  p->array.array.release = NULL;
  return 0;
}

static const char *dstream_get_last_error(struct ArrowDeviceArrayStream *s) {
  if (s == NULL || s->release == NULL) {
    return NULL;
  }
  dstream *p = s->private_data;
  return p->error[0] != '\0' ? p->error : NULL;
}

static void dstream_release(struct ArrowDeviceArrayStream *s) {
  if (s == NULL || s->release == NULL) {
    return;
  }
  dstream *p = s->private_data;
  ck__arrow_schema_release(&p->schema);
  ck__arrow_array_release(&p->array.array);
  ck__free(p);
  s->release = NULL;
}

ck_status ck_arrow_device_stream_of(struct ArrowSchema *schema,
                                    struct ArrowDeviceArray *array,
                                    struct ArrowDeviceArrayStream *out) {
  if (out == NULL || schema == NULL || array == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "ck_arrow_device_stream_of: a NULL argument");
  }
  if (schema->release == NULL || array->array.release == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "ck_arrow_device_stream_of: a released schema or array");
  }
  memset(out, 0, sizeof *out);
  dstream *p = CK_CALLOC(1, sizeof *p);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  p->schema = *schema;
  schema->release = NULL;
  p->array = *array;
  array->array.release = NULL;
  out->device_type = p->array.device_type;
  out->get_schema = dstream_get_schema;
  out->get_next = dstream_get_next;
  out->get_last_error = dstream_get_last_error;
  out->release = dstream_release;
  out->private_data = p;
  return CK_OK;
}
