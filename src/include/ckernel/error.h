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

/* Library and ABI versions (see config.h). */
CK_API const char *ck_version_string(void);
CK_API int ck_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ERROR_H */
