/*
 * errors.c -- raising the ckernels.errors classes (py_errors.h) for
 * ckernels._convert, with messages that name ckernel types.
 */
#include "convert_internal.h"

/* py_errors.h raises; these return -1 for the int-returning functions here. */
int ckc_raise(int status, PyObject *message) {
  ckpy_raise((ck_status)status, message);
  return -1;
}

/* The library failed with `status`: raise with ck_last_error()'s message. */
int ckc_raise_status(ck_status status) {
  ckpy_raise_last(status);
  return -1;
}

int ckc_unsupported_value(PyObject *value) {
  PyErr_Format(ckc_unsupported, "a %.100s value is read by the Python path",
               Py_TYPE(value)->tp_name);
  return -1;
}

/* The canonical text of a type, for messages (a new str, or NULL). */
PyObject *ckc_type_str(ck_type t) {
  char buf[256];
  size_t n = 0;
  ck_status st = ck_type_print(t, buf, sizeof buf, &n);
  if (st != CK_OK) {
    ckc_raise_status(st);
    return NULL;
  }
  if (n < sizeof buf) {
    return PyUnicode_DecodeUTF8(buf, (Py_ssize_t)n, "replace");
  }
  char *big = PyMem_Malloc(n + 1);
  if (big == NULL) {
    return PyErr_NoMemory();
  }
  st = ck_type_print(t, big, n + 1, NULL);
  PyObject *r = st == CK_OK ? PyUnicode_DecodeUTF8(big, (Py_ssize_t)n, "replace") : NULL;
  PyMem_Free(big);
  if (st != CK_OK) {
    ckc_raise_status(st);
  }
  return r;
}

/* Raise `status` with "<before>'<type>'<after>" where `after` may hold one
 * %R for `value`. */
int ckc_raise_typed(int status, const char *before, ck_type t, const char *after,
                    PyObject *value) {
  PyObject *ts = ckc_type_str(t);
  if (ts == NULL) {
    return -1;
  }
  PyObject *tail = value != NULL ? PyUnicode_FromFormat(after, value)
                                 : PyUnicode_FromString(after);
  PyObject *msg = tail != NULL ? PyUnicode_FromFormat("%s'%U'%U", before, ts, tail) : NULL;
  Py_DECREF(ts);
  Py_XDECREF(tail);
  return ckc_raise(status, msg);
}
