/*
 * utf8.c -- UTF-8 of Python str and of NumPy UCS4 ('U') text, measured
 * and encoded without intermediate objects; the errors of text that UTF-8
 * cannot hold (lone surrogates) and of bytes that are not UTF-8.
 */
#include "convert_internal.h"

/* Bytes of the UTF-8 encoding of `s`; -1 (no exception set) when `s` holds
 * a surrogate, which UTF-8 cannot encode. */
Py_ssize_t ckc_utf8_size(PyObject *s) {
  Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  if (PyUnicode_IS_ASCII(s)) {
    return n;
  }
  const void *d = PyUnicode_DATA(s);
  int kind = PyUnicode_KIND(s);
  Py_ssize_t size = 0;
  if (kind == PyUnicode_1BYTE_KIND) {
    const Py_UCS1 *p = d;
    for (Py_ssize_t i = 0; i < n; i++) {
      size += 1 + (p[i] >= 0x80);
    }
  } else if (kind == PyUnicode_2BYTE_KIND) {
    const Py_UCS2 *p = d;
    for (Py_ssize_t i = 0; i < n; i++) {
      Py_UCS2 c = p[i];
      if (c < 0x80) {
        size += 1;
      } else if (c < 0x800) {
        size += 2;
      } else if (c >= 0xd800 && c <= 0xdfff) {
        return -1;
      } else {
        size += 3;
      }
    }
  } else {
    return ckc_ucs4_utf8_size(d, n); /* a str's code points are <= U+10FFFF */
  }
  return size;
}

/* Encode `s` (no surrogates: ckc_utf8_size said so) at `out`. */
void ckc_utf8_encode(PyObject *s, char *out) {
  Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  const void *d = PyUnicode_DATA(s);
  if (PyUnicode_IS_ASCII(s)) {
    memcpy(out, d, (size_t)n);
    return;
  }
  int kind = PyUnicode_KIND(s);
  for (Py_ssize_t i = 0; i < n; i++) {
    out = ckc_put_utf8(out, PyUnicode_READ(kind, d, i));
  }
}

/* The UTF-8 encoding of UCS4 text (a NumPy 'U' element, trailing NULs
 * trimmed by the caller): size, or -1 for a code point UTF-8 cannot hold. */
Py_ssize_t ckc_ucs4_utf8_size(const Py_UCS4 *p, Py_ssize_t n) {
  Py_ssize_t size = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    Py_UCS4 c = p[i];
    if (c < 0x80) {
      size += 1;
    } else if (c < 0x800) {
      size += 2;
    } else if (c < 0x10000) {
      if (c >= 0xd800 && c <= 0xdfff) {
        return -1;
      }
      size += 3;
    } else if (c <= 0x10ffff) {
      size += 4;
    } else {
      return -1;
    }
  }
  return size;
}

/* The error a surrogate gives, with Python's own message. */
int ckc_raise_unencodable(PyObject *s) {
  PyObject *b = PyUnicode_AsUTF8String(s);
  if (b != NULL) { /* not reached: ckc_utf8_size found a surrogate */
    Py_DECREF(b);
    return ckc_raisef(CK_ERR_VALUE, "string is not valid Unicode (UTF-8)");
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *msg = PyUnicode_FromFormat("string is not valid Unicode (UTF-8): %S", value);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return ckc_raise(CK_ERR_VALUE, msg);
}

/* The error invalid UTF-8 bytes give: Python's decoder message, with
 * `where` (may be NULL) telling which element. */
int ckc_raise_bad_utf8(const char *b, Py_ssize_t n, PyObject *where) {
  PyObject *s = PyUnicode_DecodeUTF8(b, n, "strict");
  if (s != NULL) { /* not reached: the caller's check failed */
    Py_DECREF(s);
    return ckc_raisef(CK_ERR_VALUE, "bytes are not valid UTF-8");
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *msg = where != NULL
      ? PyUnicode_FromFormat("bytes are not valid UTF-8 (element %S): %S", where, value)
      : PyUnicode_FromFormat("bytes are not valid UTF-8: %S", value);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return ckc_raise(CK_ERR_VALUE, msg);
}
