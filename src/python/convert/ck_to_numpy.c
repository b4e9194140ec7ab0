/*
 * ck_to_numpy.c -- C arrays -> new NumPy arrays: strings into a
 * StringDType array (to_strings: one NpyString_pack per element under one
 * allocator lock, without the GIL) and any element type into an object
 * array (to_objects: what tolist() gives per element).
 */
#include "convert_internal.h"

typedef struct {
  npy_string_allocator *alloc;
  char *out;
} ckc_pack_ctx;

static int ckc_pack_one(void *vctx, const char *el, npy_intp k) {
  ckc_pack_ctx *c = vctx;
  const ck_string *s = (const ck_string *)el;
  size_t n = s->begin != NULL ? (size_t)(s->end - s->begin) : 0;
  npy_packed_static_string *dst = (npy_packed_static_string *)(c->out + k * 16);
  return NpyString_pack(c->alloc, dst, n ? s->begin : "", n) < 0 ? -1 : 0;
}

PyObject *ckc_to_strings(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2 || !PyArray_DescrCheck(args[1]) ||
      ((PyArray_Descr *)args[1])->type_num != NPY_VSTRING) {
    PyErr_SetString(PyExc_TypeError, "to_strings(address, StringDType instance)");
    return NULL;
  }
  ck_array_preamble *a = ckc_array_arg(args[0]);
  if (a == NULL) {
    return NULL;
  }
  int ndim;
  npy_intp shape[NPY_MAXDIMS];
  intptr_t strides[NPY_MAXDIMS];
  ck_type el;
  const char *el_am;
  if (ckc_regular_dims(a->type, ck_array_arrmeta(a), &ndim, shape, strides, &el, &el_am) < 0) {
    return NULL;
  }
  if (ckc_id(el) != CK_TYPE_STRING) {
    ckc_raise_typed(CK_ERR_TYPE, "to_strings: an array of type ", a->type,
                    " has no string elements", NULL);
    return NULL;
  }
  PyArray_Descr *descr = (PyArray_Descr *)args[1];
  Py_INCREF(descr);
  PyArrayObject *arr = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim,
                                                             shape, NULL, NULL, 0, NULL);
  if (arr == NULL) {
    return NULL;
  }
  if (PyArray_ITEMSIZE(arr) != 16) {
    Py_DECREF(arr);
    PyErr_SetString(PyExc_RuntimeError, "_convert: unexpected StringDType item size");
    return NULL;
  }
  /* the new array's descriptor owns the allocator its strings go to */
  npy_string_allocator *alloc =
      NpyString_acquire_allocator((PyArray_StringDTypeObject *)PyArray_DESCR(arr));
  ckc_pack_ctx c = {alloc, PyArray_BYTES(arr)};
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = ckc_walk(a->data, ndim, shape, strides, ckc_pack_one, &c);
  Py_END_ALLOW_THREADS
  NpyString_release_allocator(alloc);
  if (rc != 0) {
    Py_DECREF(arr);
    PyErr_NoMemory();
    return NULL;
  }
  return (PyObject *)arr;
}

typedef struct {
  ckc_rctx r;
  ck_type el;
  const char *el_am;
  PyObject **out;
} ckc_obj_ctx;

static int ckc_object_one(void *vctx, const char *el, npy_intp k) {
  ckc_obj_ctx *c = vctx;
  PyObject *v = ckc_read(&c->r, c->el, el, c->el_am);
  if (v == NULL) {
    return -1;
  }
  PyObject *old = c->out[k];
  c->out[k] = v;
  Py_XDECREF(old);
  return 0;
}

PyObject *ckc_to_objects(PyObject *mod, PyObject *addr) {
  (void)mod;
  ck_array_preamble *a = ckc_array_arg(addr);
  if (a == NULL) {
    return NULL;
  }
  int ndim;
  npy_intp shape[NPY_MAXDIMS];
  intptr_t strides[NPY_MAXDIMS];
  ckc_obj_ctx c = {.r = {.nnames = 0}};
  if (ckc_regular_dims(a->type, ck_array_arrmeta(a), &ndim, shape, strides, &c.el,
                       &c.el_am) < 0) {
    return NULL;
  }
  PyArrayObject *arr = (PyArrayObject *)PyArray_SimpleNew(ndim, shape, NPY_OBJECT);
  if (arr == NULL) {
    return NULL;
  }
  c.out = (PyObject **)PyArray_BYTES(arr); /* filled with None by NumPy */
  int rc = ckc_walk(a->data, ndim, shape, strides, ckc_object_one, &c);
  ckc_rctx_clear(&c.r);
  if (rc != 0) {
    Py_DECREF(arr);
    return NULL;
  }
  return (PyObject *)arr;
}
