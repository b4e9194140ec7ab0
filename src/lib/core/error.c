/* error.c -- thread-local error messages (see ckernel/error.h). */
#include "core/core_internal.h"

#include <stdio.h>
#include <string.h>

enum { CK_ERROR_BUFSIZE = 1024 };

/* Per-thread state: no locking needed, nothing shared between threads. */
static _Thread_local char ck_errbuf[CK_ERROR_BUFSIZE];
static _Thread_local ck_status ck_errstatus = CK_OK;
/* the failing element (ck_error_set_element): indices, outermost first, in
 * ck_erridx[CK_ERROR_MAX_INDEX - ck_errdepth ...]; depth 0: none recorded */
static _Thread_local int64_t ck_erridx[CK_ERROR_MAX_INDEX];
static _Thread_local size_t ck_errdepth = 0;
static _Thread_local bool ck_errlocated = false;
static _Thread_local const void *ck_errdst = NULL;
/* the user's source line of a failing jitted function (ck_error_set_source) */
enum { CK_SOURCE_TEXT = 256 };
static _Thread_local char ck_srcfunc[CK_SOURCE_TEXT];
static _Thread_local char ck_srcfile[CK_SOURCE_TEXT];
static _Thread_local int64_t ck_srcline = 0;
static _Thread_local bool ck_srcset = false;

const char *ck_last_error(void) { return ck_errbuf; }

ck_status ck_last_status(void) { return ck_errstatus; }

static void ck__forget_element(void) {
  ck_errdepth = 0;
  ck_errlocated = false;
  ck_errdst = NULL;
  ck_srcset = false;
}

void ck_error_set_source(const char *function, const char *file, int64_t line) {
  snprintf(ck_srcfunc, sizeof ck_srcfunc, "%s", function ? function : "");
  snprintf(ck_srcfile, sizeof ck_srcfile, "%s", file ? file : "");
  ck_srcline = line;
  ck_srcset = true;
}

bool ck_last_error_source(const char **out_function, const char **out_file,
                          int64_t *out_line) {
  if (out_function != NULL) {
    *out_function = ck_srcset ? ck_srcfunc : "";
  }
  if (out_file != NULL) {
    *out_file = ck_srcset ? ck_srcfile : "";
  }
  if (out_line != NULL) {
    *out_line = ck_srcset ? ck_srcline : 0;
  }
  return ck_srcset;
}

void ck_clear_error(void) {
  ck_errbuf[0] = '\0';
  ck_errstatus = CK_OK;
  ck__forget_element();
}

void ck_error_set_element(int64_t index, const void *dst) {
  ck_erridx[CK_ERROR_MAX_INDEX - 1] = index;
  ck_errdepth = 1;
  ck_errlocated = true;
  ck_errdst = dst;
}

void ck_error_prepend_element(int64_t index) {
  if (ck_errlocated && ck_errdepth < CK_ERROR_MAX_INDEX) {
    ck_errdepth++;
    ck_erridx[CK_ERROR_MAX_INDEX - ck_errdepth] = index;
  }
}

void ck_error_offset_element(int64_t add) {
  if (ck_errlocated && ck_errdepth > 0) {
    ck_erridx[CK_ERROR_MAX_INDEX - ck_errdepth] += add;
  }
}

size_t ck_last_error_element(int64_t *out, size_t max, const void **out_dst) {
  if (out_dst != NULL) {
    *out_dst = ck_errlocated ? ck_errdst : NULL;
  }
  if (!ck_errlocated) {
    return 0;
  }
  for (size_t i = 0; i < ck_errdepth && i < max && out != NULL; i++) {
    out[i] = ck_erridx[CK_ERROR_MAX_INDEX - ck_errdepth + i];
  }
  return ck_errdepth;
}

const char *ck_status_name(ck_status status) {
  switch (status) {
  case CK_OK: return "CK_OK";
  case CK_ERR_INVALID_ARGUMENT: return "CK_ERR_INVALID_ARGUMENT";
  case CK_ERR_NO_MEMORY: return "CK_ERR_NO_MEMORY";
  case CK_ERR_OVERFLOW: return "CK_ERR_OVERFLOW";
  case CK_ERR_INVALID_STATE: return "CK_ERR_INVALID_STATE";
  case CK_ERR_TYPE: return "CK_ERR_TYPE";
  case CK_ERR_INDEX: return "CK_ERR_INDEX";
  case CK_ERR_PARSE: return "CK_ERR_PARSE";
  case CK_ERR_VALUE: return "CK_ERR_VALUE";
  case CK_ERR_ZERO_DIVISION: return "CK_ERR_ZERO_DIVISION";
  case CK_ERR_NOT_SUPPORTED: return "CK_ERR_NOT_SUPPORTED";
  case CK_ERR_BACKEND: return "CK_ERR_BACKEND";
  case CK_ERR_USER: return "CK_ERR_USER";
  }
  return "CK_ERR_UNKNOWN";
}

ck_status ck_set_error(ck_status status, const char *message) {
  ck__forget_element();
  ck_errstatus = status;
  snprintf(ck_errbuf, sizeof ck_errbuf, "%s", message ? message : "");
  return status;
}

static ck_status ck__verror(ck_status status, const char *func, const char *fmt,
                           va_list ap, bool keep_old) {
  if (!keep_old) {
    ck__forget_element(); /* a new failure; context added to one keeps it */
  }
  char old[CK_ERROR_BUFSIZE];
  if (keep_old) {
    memcpy(old, ck_errbuf, sizeof old);
  }
  int n = snprintf(ck_errbuf, sizeof ck_errbuf, "%s: ", func);
  if (n < 0 || (size_t)n >= sizeof ck_errbuf) {
    n = 0;
  }
  int m = vsnprintf(ck_errbuf + n, sizeof ck_errbuf - (size_t)n, fmt, ap);
  if (keep_old && m >= 0 && (size_t)(n + m) + 2 < sizeof ck_errbuf) {
    size_t at = (size_t)(n + m);
    size_t room = sizeof ck_errbuf - at - 2; /* after ": " */
    ck_errbuf[at] = ':';
    ck_errbuf[at + 1] = ' ';
    size_t len = strlen(old);
    if (len >= room) {
      len = room - 1; /* truncate the old message, keep the NUL */
    }
    memcpy(ck_errbuf + at + 2, old, len);
    ck_errbuf[at + 2 + len] = '\0';
  }
  ck_errstatus = status;
  return status;
}

ck_status ck__error(ck_status status, const char *func, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ck__verror(status, func, fmt, ap, false);
  va_end(ap);
  return status;
}

ck_status ck__error_context(ck_status status, const char *func,
                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ck__verror(status, func, fmt, ap, true);
  va_end(ap);
  return status;
}

void ck__appendf(char *buf, size_t bufsize, size_t *pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *dst = NULL;
  size_t room = 0;
  if (buf != NULL && *pos < bufsize) {
    dst = buf + *pos;
    room = bufsize - *pos;
  }
  int n = vsnprintf(dst, room, fmt, ap);
  va_end(ap);
  if (n > 0) {
    *pos += (size_t)n;
  }
}

#define CK_STR2(x) #x
#define CK_STR(x) CK_STR2(x)
const char *ck_version_string(void) {
  return CK_STR(CK_VERSION_MAJOR) "." CK_STR(CK_VERSION_MINOR) "." CK_STR(
      CK_VERSION_PATCH);
}

int ck_abi_version(void) { return CK_ABI_VERSION; }
