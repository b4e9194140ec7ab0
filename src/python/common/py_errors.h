/*
 * py_errors.h -- the one way the package's C extensions (ckernels._ufuncs,
 * ckernels._arrays) raise library errors: a ck_status and a message become
 * the ckernels.errors class of the status (ckernels.errors.error_class),
 * constructed as cls(message, status) -- the classes derive from the
 * matching built-in exceptions, so callers may catch either.
 *
 * Each extension module calls ckpy_errors_init() once from its exec slot
 * (this file is compiled into each module; the class lookup is module-
 * private).  Every function here returns NULL so that callers can write
 * `return ckpy_raisef(...)`.
 */
#ifndef CKERNELS_PY_ERRORS_H
#define CKERNELS_PY_ERRORS_H

#include <Python.h>

#include <ckernel/error.h>

/* Look up ckernels.errors.error_class; 0, or -1 with an exception set. */
int ckpy_errors_init(void);

/* Raise the ckernels.errors class of `status` with `message` (a str; the
 * reference is stolen; NULL: an exception is set already and stays).  GIL
 * held. */
PyObject *ckpy_raise(ck_status status, PyObject *message);

/* ckpy_raise with a PyUnicode_FromFormat message.  GIL held. */
PyObject *ckpy_raisef(ck_status status, const char *format, ...);

/* A library call failed with `status`: raise with ck_last_error()'s message
 * (undecodable bytes replaced).  The message is read on the calling thread,
 * where the library recorded it; the GIL is taken if not held, so kernels'
 * loops running without it may call this. */
PyObject *ckpy_raise_last(ck_status status);

/* Whether the last ckpy_raise_last on this thread raised a failure located
 * at an element of a kernel's strided call (ck_last_error_element, error.h);
 * reading it forgets it.  A ufunc loop knows the element's index within
 * NumPy's call only: whoever made the call may run it again on a path that
 * names the element in the operands' dims. */
int ckpy_take_located(void);

#endif /* CKERNELS_PY_ERRORS_H */
