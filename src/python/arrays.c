/*
 * arrays.c -- ckernels._arrays: cheap conversions between ckernels host arrays
 * and NumPy arrays, the small-call path of ckernels.Array.
 *
 * Each conversion here is one C call where the Python version needed a dozen
 * cffi calls and several Python objects:
 *
 *   view(address, dtype, writable) -> ndarray
 *       A NumPy array over the memory of the C array at `address` (a
 *       `ck_array_preamble *` whose dims are all fixed/strided and whose
 *       element type is `dtype`).  Its base is an `ArrayRef`, which owns one
 *       reference to the C array, so the view keeps the memory alive however
 *       long it lives, and it does not keep the Python `Array` alive (the
 *       Array may cache the view without a reference cycle).  Writable only
 *       when `writable` and the C array has CK_ARRAY_WRITE.
 *
 *   wrap(ndarray, type_address) -> address
 *       A new C array (`ck_array_view_external`) of type `type_address` (the
 *       strided type of the ndarray's dtype and ndim) over the ndarray's data,
 *       shape and strides; an external memblock owns a reference to the
 *       ndarray, dropped (with the GIL taken) when the C array's last
 *       reference goes.  READ always, WRITE when the ndarray is writeable.
 *       The caller owns the returned reference (`Array._own`).
 *
 *   dims(address) -> (shape, strides)
 *       The C array's ck_array_shape / ck_array_strides as tuples.
 *
 *   reduce_all(name, address, dtypes) -> NumPy scalar
 *       The reduction `name` (bytes: b"sum", b"min", ...) of every element of
 *       the C array at `address` (ck_array_reduce over all axes), as the
 *       NumPy scalar of the result's element type (`dtypes`: ck_type_id ->
 *       numpy.dtype); the 0-d result array is released here.  None when the
 *       result type has no entry in `dtypes`.
 *
 *   stop()
 *       Called at interpreter exit: from then on releasing an external block
 *       made by wrap() leaves its ndarray alone (Python is being torn down).
 *
 * Errors of the library are raised as ckernels.errors.error_class(status)
 * with ck_last_error()'s message; bad Python arguments as TypeError /
 * ValueError.  Not part of the C core: it depends on CPython and NumPy's C
 * API (as _dispatch does) and links libckernel.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL ckernels_arrays_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ckernel/ckernel.h"

_Static_assert(sizeof(npy_intp) == sizeof(intptr_t), "NumPy and ckernels strides agree");

/* most dims a ckernel type has (CK_TYPE_MAX_DEPTH, the element included) */
#define CKA_MAX_DIMS 64

static PyObject *cka_error_class = NULL; /* ckernels.errors.error_class */
static volatile int cka_stopped = 0;     /* set by stop() at exit       */

static PyObject *cka_raise_status(ck_status status) {
  const char *msg = ck_last_error();
  PyObject *message = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
  if (message == NULL) {
    return NULL;
  }
  PyObject *cls = PyObject_CallFunction(cka_error_class, "i", (int)status);
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

static void *cka_address(PyObject *o, const char *what) {
  void *p = PyLong_AsVoidPtr(o);
  if (p == NULL && !PyErr_Occurred()) {
    PyErr_Format(PyExc_ValueError, "_arrays: %s is NULL", what);
  }
  return p;
}

/* ------------------------------------------------------------------------ */
/* ArrayRef: one reference to a C array, the base of view()'s ndarrays      */
/* ------------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD ck_array_preamble *array; /* owned reference */
} cka_ref;

static void cka_ref_dealloc(PyObject *self) {
  ck_array_decref(((cka_ref *)self)->array);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *cka_ref_repr(PyObject *self) {
  return PyUnicode_FromFormat("<ckernels._arrays.ArrayRef of the C array at %p>",
                              (void *)((cka_ref *)self)->array);
}

static PyTypeObject cka_ref_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ckernels._arrays.ArrayRef",
    .tp_basicsize = sizeof(cka_ref),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = PyDoc_STR("One reference to a ckernels C array: the base of the NumPy views "
                        "of ckernels._arrays.view (keeps their memory alive)."),
    .tp_dealloc = cka_ref_dealloc,
    .tp_repr = cka_ref_repr,
};

/* ------------------------------------------------------------------------ */
/* dims / view                                                              */
/* ------------------------------------------------------------------------ */

/* shape and strides of `a` into the caller's arrays; -1 with an exception */
static int cka_read_dims(const ck_array_preamble *a, intptr_t *shape, intptr_t *strides,
                         size_t *ndim) {
  size_t n = 0;
  ck_status st = ck_array_shape(a, shape, CKA_MAX_DIMS, &n);
  if (st == CK_OK) {
    st = ck_array_strides(a, strides, CKA_MAX_DIMS, NULL);
  }
  if (st != CK_OK) {
    cka_raise_status(st);
    return -1;
  }
  if (n > CKA_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "_arrays: %zu dims (at most %d)", n, CKA_MAX_DIMS);
    return -1;
  }
  *ndim = n;
  return 0;
}

static PyObject *cka_tuple(const intptr_t *v, size_t n) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  if (t == NULL) {
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    PyObject *x = PyLong_FromSsize_t(v[i]);
    if (x == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
  }
  return t;
}

static PyObject *cka_dims(PyObject *mod, PyObject *addr) {
  (void)mod;
  ck_array_preamble *a = cka_address(addr, "the array");
  if (a == NULL) {
    return NULL;
  }
  intptr_t shape[CKA_MAX_DIMS], strides[CKA_MAX_DIMS];
  size_t n;
  if (cka_read_dims(a, shape, strides, &n) < 0) {
    return NULL;
  }
  PyObject *s = cka_tuple(shape, n);
  PyObject *t = s ? cka_tuple(strides, n) : NULL;
  if (t == NULL) {
    Py_XDECREF(s);
    return NULL;
  }
  return Py_BuildValue("(NN)", s, t);
}

static PyObject *cka_view(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "view(address, dtype, writable) takes 3 arguments");
    return NULL;
  }
  ck_array_preamble *a = cka_address(args[0], "the array");
  if (a == NULL) {
    return NULL;
  }
  if (!PyArray_DescrCheck(args[1])) {
    PyErr_SetString(PyExc_TypeError, "view: dtype must be a numpy.dtype");
    return NULL;
  }
  int writable = PyObject_IsTrue(args[2]);
  if (writable < 0) {
    return NULL;
  }
  intptr_t shape[CKA_MAX_DIMS], strides[CKA_MAX_DIMS];
  size_t n;
  if (cka_read_dims(a, shape, strides, &n) < 0) {
    return NULL;
  }
  if (n > NPY_MAXDIMS) {
    PyErr_Format(PyExc_ValueError, "view: %zu dims; NumPy holds at most %d", n,
                 NPY_MAXDIMS);
    return NULL;
  }
  cka_ref *ref = PyObject_New(cka_ref, &cka_ref_type);
  if (ref == NULL) {
    return NULL;
  }
  ck_array_incref(a);
  ref->array = a;
  int flags = (writable && (ck_array_flags(a) & CK_ARRAY_WRITE)) ? NPY_ARRAY_WRITEABLE : 0;
  PyArray_Descr *descr = (PyArray_Descr *)args[1];
  Py_INCREF(descr); /* stolen */
  PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, (int)n, (npy_intp *)shape,
                                       (npy_intp *)strides, (void *)ck_array_data(a), flags,
                                       NULL);
  if (arr == NULL) {
    Py_DECREF(ref);
    return NULL;
  }
  if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)ref) < 0) { /* steals ref */
    Py_DECREF(arr);
    return NULL;
  }
  return arr;
}

/* ------------------------------------------------------------------------ */
/* wrap                                                                     */
/* ------------------------------------------------------------------------ */

/* Release callback of the external blocks made by wrap(): any thread. */
static void cka_release(void *object) {
  if (cka_stopped || !Py_IsInitialized()) {
    return; /* interpreter teardown: leave Python objects alone */
  }
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)object);
  PyGILState_Release(g);
}

static PyObject *cka_wrap(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "wrap(ndarray, type_address) takes 2 arguments");
    return NULL;
  }
  if (!PyArray_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "wrap: the first argument must be a numpy.ndarray");
    return NULL;
  }
  PyArrayObject *arr = (PyArrayObject *)args[0];
  ck_type type = (ck_type)cka_address(args[1], "the type");
  if (type == NULL) {
    return NULL;
  }
  int ndim = PyArray_NDIM(arr);
  uint64_t flags = CK_ARRAY_READ | (PyArray_ISWRITEABLE(arr) ? CK_ARRAY_WRITE : 0);
  ck_memblock *owner = NULL;
  Py_INCREF(arr); /* the external block's reference, dropped by cka_release */
  ck_status st = ck_external_memblock_new(arr, cka_release, &owner);
  if (st != CK_OK) {
    Py_DECREF(arr);
    return cka_raise_status(st);
  }
  char *data = PyArray_BYTES(arr);
  intptr_t zero = 0;
  ck_array_preamble *out = NULL;
  st = ck_array_view_external(type, data != NULL ? data : (char *)owner,
                              ndim ? (const intptr_t *)PyArray_DIMS(arr) : &zero,
                              ndim ? (const intptr_t *)PyArray_STRIDES(arr) : &zero,
                              (size_t)ndim, flags, owner, &out);
  ck_memblock_decref(owner); /* the view holds its own reference */
  if (st != CK_OK) {
    return cka_raise_status(st);
  }
  return PyLong_FromVoidPtr(out);
}

static PyObject *cka_reduce_all(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3 || !PyBytes_Check(args[0]) || !PyDict_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "reduce_all(name: bytes, address, dtypes: dict)");
    return NULL;
  }
  ck_array_preamble *a = cka_address(args[1], "the array");
  if (a == NULL) {
    return NULL;
  }
  ck_array_preamble *out = NULL;
  ck_status st = ck_array_reduce(PyBytes_AS_STRING(args[0]), a, NULL, 0, false, &out);
  if (st != CK_OK) {
    return cka_raise_status(st);
  }
  PyObject *result = NULL;
  PyObject *key = PyLong_FromLong((long)ck_type_id_of(ck_array_type(out)));
  if (key != NULL) {
    PyObject *descr = PyDict_GetItemWithError(args[2], key); /* borrowed */
    Py_DECREF(key);
    if (descr != NULL && PyArray_DescrCheck(descr) && ck_array_ndim(out) == 0) {
      /* PyArray_Scalar copies the element (aligned or not) */
      result = PyArray_Scalar((void *)ck_array_data(out), (PyArray_Descr *)descr, NULL);
    } else if (!PyErr_Occurred()) {
      result = Py_NewRef(Py_None);
    }
  }
  ck_array_decref(out);
  return result;
}

static PyObject *cka_stop(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  cka_stopped = 1;
  Py_RETURN_NONE;
}

static PyMethodDef cka_methods[] = {
    {"view", (PyCFunction)(void (*)(void))cka_view, METH_FASTCALL,
     "view(address, dtype, writable) -> a NumPy view of the C array at address (fixed/"
     "strided dims over dtype); its base owns a reference to the C array."},
    {"wrap", (PyCFunction)(void (*)(void))cka_wrap, METH_FASTCALL,
     "wrap(ndarray, type_address) -> address of a new C array of that type over the "
     "ndarray's memory (an external memblock keeps the ndarray alive)."},
    {"dims", cka_dims, METH_O,
     "dims(address) -> (shape, strides) of the C array at address."},
    {"reduce_all", (PyCFunction)(void (*)(void))cka_reduce_all, METH_FASTCALL,
     "reduce_all(name, address, dtypes) -> the NumPy scalar of the reduction `name` over "
     "every element of the C array at address (None: no dtype for the result type)."},
    {"stop", cka_stop, METH_NOARGS,
     "Interpreter exit: releases of wrap()'s blocks no longer touch Python objects."},
    {NULL, NULL, 0, NULL},
};

static int cka_exec(PyObject *m) {
  if (PyArray_ImportNumPyAPI() < 0) {
    return -1;
  }
  PyObject *errors = PyImport_ImportModule("ckernels.errors");
  if (errors == NULL) {
    return -1;
  }
  cka_error_class = PyObject_GetAttrString(errors, "error_class");
  Py_DECREF(errors);
  if (cka_error_class == NULL || PyType_Ready(&cka_ref_type) < 0 ||
      PyModule_AddObjectRef(m, "ArrayRef", (PyObject *)&cka_ref_type) < 0) {
    return -1;
  }
  return 0;
}

static PyModuleDef_Slot cka_slots[] = {
    {Py_mod_exec, (void *)cka_exec},
    {0, NULL},
};

static struct PyModuleDef cka_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ckernels._arrays",
    .m_doc = "Cheap conversions between ckernels host arrays and NumPy arrays "
             "(see src/python/arrays.c).",
    .m_size = 0,
    .m_methods = cka_methods,
    .m_slots = cka_slots,
};

PyMODINIT_FUNC PyInit__arrays(void);
PyMODINIT_FUNC PyInit__arrays(void) { return PyModuleDef_Init(&cka_module); }
