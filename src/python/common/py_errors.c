/*
 * py_errors.c -- library errors raised as ckernels.errors classes
 * (py_errors.h), shared by the package's C extensions.
 */
#include "py_errors.h"

#include <stdarg.h>
#include <string.h>

/* ckernels.errors.error_class: status -> exception class (owned). */
static PyObject *ckpy_error_class = NULL;

int ckpy_errors_init(void) {
  PyObject *errors = PyImport_ImportModule("ckernels.errors");
  if (errors == NULL) {
    return -1;
  }
  PyObject *cls = PyObject_GetAttrString(errors, "error_class");
  Py_DECREF(errors);
  if (cls == NULL) {
    return -1;
  }
  Py_XSETREF(ckpy_error_class, cls);
  return 0;
}

PyObject *ckpy_raise(ck_status status, PyObject *message) {
  if (message == NULL) {
    return NULL; /* an exception is set already */
  }
  if (ckpy_error_class == NULL) {
    PyErr_SetObject(PyExc_RuntimeError, message);
    Py_DECREF(message);
    return NULL;
  }
  PyObject *cls = PyObject_CallFunction(ckpy_error_class, "i", (int)status);
  if (cls != NULL) {
    PyObject *exc = PyObject_CallFunction(cls, "Oi", message, (int)status);
    if (exc != NULL) {
      PyErr_SetObject(cls, exc);
      Py_DECREF(exc);
    }
    Py_DECREF(cls);
  }
  Py_DECREF(message);
  return NULL;
}

PyObject *ckpy_raisef(ck_status status, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  PyObject *message = PyUnicode_FromFormatV(format, ap);
  va_end(ap);
  return ckpy_raise(status, message);
}

static _Thread_local int ckpy_located = 0;

int ckpy_take_located(void) {
  int r = ckpy_located;
  ckpy_located = 0;
  return r;
}

PyObject *ckpy_raise_last(ck_status status) {
  ckpy_located = ck_last_error_element(NULL, 0, NULL) > 0;
  PyGILState_STATE g = PyGILState_Ensure();
  const char *msg = ck_last_error();
  ckpy_raise(status, PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace"));
  PyGILState_Release(g);
  return NULL;
}
