/*
 * pybuffer.c -- ckernels._pybuffer: the buffer protocol (PEP 3118) for host arrays.
 *
 * A Python class cannot export a buffer before Python 3.12 (`__buffer__`), so
 * ckernels.Array derives from the tiny C type here, BufferExporter, which has
 * no state of its own.  Its bf_getbuffer asks the instance for the memory it
 * describes by calling `self._buffer_info(writable)`, which returns
 *
 *     (address, shape, strides, format, itemsize, readonly)
 *
 * (a struct-module format string such as "d" or "Zf"; raising BufferError when
 * the array's type has no buffer form), checks the consumer's request against
 * it (writable, contiguity) and fills the Py_buffer.  The shape, strides and
 * format live in one block owned by the view (`internal`), freed by
 * bf_releasebuffer; `view->obj` holds a reference to the array, which holds
 * its memory, so the memory outlives every exported view.
 *
 * Not part of the C core: depends on CPython only (not on NumPy, not on
 * libckernel).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

typedef struct {
  Py_ssize_t ndim;
  char format[16];
  Py_ssize_t dims[]; /* shape[ndim] then strides[ndim] */
} ckb_internal;

static int ckb_is_contiguous(Py_ssize_t ndim, const Py_ssize_t *shape,
                             const Py_ssize_t *strides, Py_ssize_t itemsize, char order) {
  Py_ssize_t acc = itemsize;
  for (Py_ssize_t k = 0; k < ndim; k++) {
    if (shape[k] == 0) {
      return 1;
    }
  }
  for (Py_ssize_t i = 0; i < ndim; i++) {
    Py_ssize_t k = order == 'C' ? ndim - 1 - i : i;
    if (shape[k] != 1 && strides[k] != acc) {
      return 0;
    }
    acc *= shape[k];
  }
  return 1;
}

static int ckb_tuple_of_ssize(PyObject *t, Py_ssize_t n, Py_ssize_t *out, const char *what) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != n) {
    PyErr_Format(PyExc_BufferError, "_buffer_info: %s must be a tuple of %zd ints", what, n);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, i));
    if (out[i] == -1 && PyErr_Occurred()) {
      return -1;
    }
  }
  return 0;
}

static int ckb_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  int writable = (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE;
  PyObject *info = PyObject_CallMethod(self, "_buffer_info", "i", writable);
  if (info == NULL) {
    return -1;
  }
  PyObject *addr_o, *shape_o, *strides_o, *fmt_o, *isz_o, *ro_o;
  if (!PyTuple_Check(info) ||
      !PyArg_ParseTuple(info, "OOOOOO", &addr_o, &shape_o, &strides_o, &fmt_o, &isz_o,
                        &ro_o)) {
    Py_DECREF(info);
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_BufferError, "_buffer_info must return a 6-tuple");
    }
    return -1;
  }
  void *buf = PyLong_AsVoidPtr(addr_o);
  Py_ssize_t itemsize = PyLong_AsSsize_t(isz_o);
  int readonly = PyObject_IsTrue(ro_o);
  const char *fmt = PyUnicode_Check(fmt_o) ? PyUnicode_AsUTF8(fmt_o) : NULL;
  Py_ssize_t ndim = PyTuple_Check(shape_o) ? PyTuple_GET_SIZE(shape_o) : -1;
  if (PyErr_Occurred() || readonly < 0) {
    Py_DECREF(info);
    return -1;
  }
  if (fmt == NULL || strlen(fmt) >= sizeof(((ckb_internal *)0)->format) || ndim < 0 ||
      ndim > 64 || itemsize <= 0) {
    Py_DECREF(info);
    PyErr_SetString(PyExc_BufferError, "_buffer_info returned a malformed description");
    return -1;
  }
  ckb_internal *in = PyMem_Malloc(sizeof *in + 2 * (size_t)(ndim ? ndim : 1) *
                                                   sizeof(Py_ssize_t));
  if (in == NULL) {
    Py_DECREF(info);
    PyErr_NoMemory();
    return -1;
  }
  in->ndim = ndim;
  strcpy(in->format, fmt);
  Py_ssize_t *shape = in->dims, *strides = in->dims + ndim;
  if (ckb_tuple_of_ssize(shape_o, ndim, shape, "shape") < 0 ||
      ckb_tuple_of_ssize(strides_o, ndim, strides, "strides") < 0) {
    Py_DECREF(info);
    PyMem_Free(in);
    return -1;
  }
  Py_DECREF(info);
  if (writable && readonly) {
    PyMem_Free(in);
    PyErr_SetString(PyExc_BufferError, "the array is read-only");
    return -1;
  }
  Py_ssize_t len = itemsize;
  for (Py_ssize_t k = 0; k < ndim; k++) {
    len *= shape[k];
  }
  int c_contig = ckb_is_contiguous(ndim, shape, strides, itemsize, 'C');
  int f_contig = ckb_is_contiguous(ndim, shape, strides, itemsize, 'F');
  const char *refuse = NULL;
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_contig) {
    refuse = "the array is not C-contiguous";
  } else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f_contig) {
    refuse = "the array is not Fortran-contiguous";
  } else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_contig &&
             !f_contig) {
    refuse = "the array is not contiguous";
  } else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_contig) {
    refuse = "the array is not C-contiguous (request strides)";
  }
  if (refuse != NULL) {
    PyMem_Free(in);
    PyErr_SetString(PyExc_BufferError, refuse);
    return -1;
  }
  view->buf = buf;
  view->obj = Py_NewRef(self);
  view->len = len;
  view->readonly = readonly;
  view->itemsize = itemsize;
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? in->format : NULL;
  view->ndim = (int)ndim;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? strides : NULL;
  view->suboffsets = NULL;
  view->internal = in;
  return 0;
}

static void ckb_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)self;
  PyMem_Free(view->internal);
  view->internal = NULL;
}

static PyBufferProcs ckb_as_buffer = {
    .bf_getbuffer = ckb_getbuffer,
    .bf_releasebuffer = ckb_releasebuffer,
};

static PyTypeObject ckb_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ckernels._pybuffer.BufferExporter",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = PyDoc_STR("Base of ckernels.Array: exports the buffer protocol (PEP 3118) "
                        "from self._buffer_info(writable) -> (address, shape, strides, "
                        "format, itemsize, readonly)."),
    .tp_new = PyType_GenericNew,
    .tp_as_buffer = &ckb_as_buffer,
};

static struct PyModuleDef ckb_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ckernels._pybuffer",
    .m_doc = "The buffer protocol (PEP 3118) for ckernels host arrays.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__pybuffer(void);
PyMODINIT_FUNC PyInit__pybuffer(void) {
  if (PyType_Ready(&ckb_type) < 0) {
    return NULL;
  }
  PyObject *m = PyModule_Create(&ckb_module);
  if (m == NULL) {
    return NULL;
  }
  if (PyModule_AddObjectRef(m, "BufferExporter", (PyObject *)&ckb_type) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
