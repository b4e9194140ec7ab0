/*
 * arrow_export_stream.c -- ck_arrow_export_stream: a ck array as an
 * ArrowArrayStream of one array (arrow.h; arrow_device_stream.c is the
 * device-array form).
 */
#include "interop/arrow_export_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- streams of one array ---------------------------------------------------------- */

typedef struct xstream {
  struct ArrowSchema schema;
  struct ArrowArray array;  /* released once handed out */
  char error[256];
} xstream;

static int xstream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  if (s == NULL || s->release == NULL || out == NULL) {
    return 22; /* EINVAL */
  }
  xstream *p = s->private_data;
  if (ck__arrow_schema_copy(&p->schema, out) != CK_OK) {
    snprintf(p->error, sizeof p->error, "%s", ck_last_error());
    return 12; /* ENOMEM */
  }
  return 0;
}

static int xstream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  if (s == NULL || s->release == NULL || out == NULL) {
    return 22;
  }
  xstream *p = s->private_data;
  *out = p->array; /* moved out; after the first call, a released array: the end */
  p->array.release = NULL;
  return 0;
}

static const char *xstream_get_last_error(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) {
    return NULL;
  }
  xstream *p = s->private_data;
  return p->error[0] != '\0' ? p->error : NULL;
}

static void xstream_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) {
    return;
  }
  xstream *p = s->private_data;
  ck__arrow_schema_release(&p->schema);
  ck__arrow_array_release(&p->array);
  ck__free(p);
  s->release = NULL;
}

ck_status ck_arrow_export_stream(ck_array_preamble *a,
                                 const struct ArrowSchema *requested,
                                 struct ArrowArrayStream *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  memset(out, 0, sizeof *out);
  xstream *p = CK_CALLOC(1, sizeof *p);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  ck_status st = ck_arrow_export(a, requested, &p->schema, &p->array);
  if (st != CK_OK) {
    ck__free(p);
    return st;
  }
  out->get_schema = xstream_get_schema;
  out->get_next = xstream_get_next;
  out->get_last_error = xstream_get_last_error;
  out->release = xstream_release;
  out->private_data = p;
  return CK_OK;
}
