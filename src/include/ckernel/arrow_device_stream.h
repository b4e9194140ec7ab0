/*
 * ckernel/arrow_device_stream.h -- Arrow's C device stream interface
 * (ArrowDeviceArrayStream) over one device array.
 *
 * The device arrays of the Python layer describe their buffers as an
 * ArrowDeviceArray (ck_arrow_wrap, arrow_wrap.h); a consumer that reads
 * streams (`__arrow_c_device_stream__`) gets them through
 * ck_arrow_device_stream_of: a stream of that one array.  get_schema gives a
 * copy of the schema on every call; the first get_next moves the array out,
 * every later one marks the end (out->array.release == NULL); get_last_error
 * is the message of the last failed call, or NULL.  Ownership: the schema and
 * the array are moved into the stream (their release set to NULL) on
 * success; on failure nothing is moved.  The stream's release releases what
 * it still holds.
 */
#ifndef CKERNEL_ARROW_DEVICE_STREAM_H
#define CKERNEL_ARROW_DEVICE_STREAM_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/arrow.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DEVICE_STREAM_INTERFACE
#define ARROW_C_DEVICE_STREAM_INTERFACE

struct ArrowDeviceArrayStream {
  /* the device type of every array of the stream */
  ArrowDeviceType device_type;
  /* 0 or an errno value; the schema of every array of the stream */
  int (*get_schema)(struct ArrowDeviceArrayStream *, struct ArrowSchema *out);
  /* 0 or an errno value; out->array.release == NULL marks the end */
  int (*get_next)(struct ArrowDeviceArrayStream *, struct ArrowDeviceArray *out);
  /* the message of the last error (valid until the next call), or NULL */
  const char *(*get_last_error)(struct ArrowDeviceArrayStream *);
  /* Release callback */
  void (*release)(struct ArrowDeviceArrayStream *);
  /* Opaque producer-specific data */
  void *private_data;
};

#endif /* ARROW_C_DEVICE_STREAM_INTERFACE */

/*
 * Fill *out with a stream of the one array `array` (schema `schema`), both
 * moved in on success.  Errors: CK_ERR_INVALID_ARGUMENT for a NULL argument
 * or a released schema or array; CK_ERR_NO_MEMORY.
 */
CK_API ck_status ck_arrow_device_stream_of(struct ArrowSchema *schema,
                                           struct ArrowDeviceArray *array,
                                           struct ArrowDeviceArrayStream *out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ARROW_DEVICE_STREAM_H */
