/*
 * ckernel/error.h -- the one error model of the library.
 *
 * Every fallible public function returns a ck_status: CK_OK (0) on success,
 * one of the codes below otherwise.  On failure the function also records a
 * message in a thread-local buffer, readable with ck_last_error() on the same
 * thread until the next failing call on that thread overwrites it.  The
 * message names the function that failed and what was wrong ("ck_pod_allocate:
 * alignment 3 is not a power of two in [1, 4096]").
 *
 * The library never aborts and never prints.  Successful calls do not clear
 * the message; call ck_clear_error() to reset it explicitly.
 */
#ifndef CKERNEL_ERROR_H
#define CKERNEL_ERROR_H

#include "ckernel/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes.  Values are part of the ABI: new codes are only appended. */
typedef enum ck_status {
  CK_OK = 0,
  CK_ERR_INVALID_ARGUMENT = 1, /* a NULL, a bad size/alignment, a bad enum  */
  CK_ERR_NO_MEMORY = 2,        /* an allocation failed                       */
  CK_ERR_OVERFLOW = 3,         /* a size computation or a value overflowed   */
  CK_ERR_INVALID_STATE = 4,    /* the object is in the wrong state for this  */
  CK_ERR_TYPE = 5,             /* wrong type / kind of object                */
  CK_ERR_INDEX = 6,            /* index or axis out of range                 */
  CK_ERR_PARSE = 7,            /* malformed text (type strings, numbers)     */
  CK_ERR_VALUE = 8,            /* a value cannot be represented (assignment) */
  CK_ERR_ZERO_DIVISION = 9,    /* division by zero inside a kernel           */
  CK_ERR_NOT_SUPPORTED = 10,   /* valid request this build cannot serve      */
  CK_ERR_BACKEND = 11,         /* OpenCL / CUDA / foreign runtime failure    */
  CK_ERR_USER = 12             /* raised by a user (e.g. jitted) kernel      */
} ck_status;

/* The message of the most recent failure on the calling thread ("" if none).
 * The pointer stays valid until the next library call on this thread. */
CK_API const char *ck_last_error(void);

/* The status of the most recent failure on the calling thread (CK_OK if none
 * since the last ck_clear_error()). */
CK_API ck_status ck_last_status(void);

/* Forget the last failure on the calling thread. */
CK_API void ck_clear_error(void);

/* A short constant name for a status ("CK_ERR_NO_MEMORY"); never NULL. */
CK_API const char *ck_status_name(ck_status status);

/* Record a failure from outside the library (a user kernel, a binding).
 * `message` is copied (truncated to the buffer size).  Returns `status`. */
CK_API ck_status ck_set_error(ck_status status, const char *message);

/* ---- where an element-wise kernel failed ---------------------------------
 *
 * A kernel that fails at one element of a strided call (a jitted kernel's
 * entry point) records, after its message, that element's index within the
 * call and the address of its destination: ck_error_set_element.  Every
 * lifting layer above it (strided and var dim kernels, the runner of the
 * outermost dim) prepends its own index as the failure travels out
 * (ck_error_prepend_element; nothing happens when no element was recorded),
 * so the caller of an array-level function reads the failing element's
 * index in the destination's dims, outermost first, with
 * ck_last_error_element.  The location is thread-local like the message and
 * forgotten by every new failure (ck_set_error, the library's own errors)
 * and by ck_clear_error.  Indices beyond CK_ERROR_MAX_INDEX dims are
 * dropped from the outside. */
enum { CK_ERROR_MAX_INDEX = 32 };

/* Record that the failure just recorded happened at element `index` of a
 * strided call, whose destination is at `dst` (NULL when unknown). */
CK_API void ck_error_set_element(int64_t index, const void *dst);

/* A lifting layer: the failure came from its element `index`.  The runner
 * of a row range starting at row `add`: ck_error_offset_element adds `add`
 * to the first index.  Both are no-ops when no element was recorded. */
CK_API void ck_error_prepend_element(int64_t index);
CK_API void ck_error_offset_element(int64_t add);

/* The recorded location of the last failure: copies up to `max` indices,
 * outermost first, into `out` (may be NULL), and the destination address
 * into *out_dst (optional); returns how many indices there are (0: no
 * element was recorded). */
CK_API size_t ck_last_error_element(int64_t *out, size_t max, const void **out_dst);

/* Where in the user's source a jitted function failed: generated code calls
 * ck_error_set_source on its way out of a failing statement (the function's
 * name, its file and the statement's line; the texts are copied, truncated
 * to 255 bytes each).  ck_last_error_source reads it (false: none recorded;
 * the pointers stay valid until the next call on this thread); every new
 * failure recorded after it (ck_set_error, the library's errors) and
 * ck_clear_error forget it, so whoever reports the failure reads it first. */
CK_API void ck_error_set_source(const char *function, const char *file, int64_t line);
CK_API bool ck_last_error_source(const char **out_function, const char **out_file,
                                 int64_t *out_line);

/* Library and ABI versions (see config.h). */
CK_API const char *ck_version_string(void);
CK_API int ck_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ERROR_H */
