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
 *   ref(address) -> ArrayRef
 *       An ArrayRef taking over one reference to the C array at `address`:
 *       what an Array owns its C array through (slot `_r`; no Python __del__).
 *
 *   setup(Array, slots, ops, strided_of, error_class, strided_of_fn, general)
 *       Called once by ckernels.host.fastpath.install: the Array class, its
 *       slot descriptors ({name: member descriptor}; C reads the slots at
 *       their offsets, arrays_internal.h), the dict of registry operations by
 *       name, the dict (dtype, ndim) -> (element Type, strided Type, ck_type
 *       address) and the function filling it, ckernels.errors.CKernelError,
 *       and the general subscript methods (getitem, setitem, delitem) the
 *       C subscript falls back to.
 *
 *   Subscript
 *       The C base type giving Array its subscript (a[key], a[key] = value):
 *       subscript.c.
 *
 *   apply(name, out, *operands) -> Array, out, or NotImplemented
 *       The operators' and NumPy ufuncs' fast path (the Python version,
 *       ckernels.host.fastpath.fast_apply, documents the rules): operands are
 *       Arrays with a cached view (slot `_nd` an ndarray) or Python bool/int/float/
 *       complex; the registry operation `ops[name]` is called with the views
 *       (and `out=`'s view with casting="no"); an ndarray result becomes an
 *       Array (as wrap, its cached view the result).  NotImplemented: the
 *       fast path does not apply (an uncached or ineligible operand, no such
 *       entry yet, NumPy refused the call with an error that is no
 *       CKernelError): the caller takes the Python path.  CKernelErrors
 *       (kernel failures) and FloatingPointErrors (numpy.errstate "raise")
 *       propagate.
 *
 *   array_ufunc_method(ufunc_ops, general) -> method descriptor
 *       Array.__array_ufunc__ in C: plain calls of the ufuncs in `ufunc_ops`
 *       (ufunc -> registry operation name) with no keyword but a one-element
 *       out= go to apply(); the rest, and what apply() refuses, to the
 *       Python method `general`.
 *
 *   wrap_result(ndarray) -> Array
 *       An Array over a new ndarray nobody else holds (a ufunc's result).
 *
 *   stop()
 *       Called at interpreter exit: from then on releasing an external block
 *       made by wrap() leaves its ndarray alone (Python is being torn down).
 *
 * Errors of the library are raised as ckernels.errors.error_class(status)
 * with ck_last_error()'s message (py_errors.h, shared with _ufuncs); bad Python arguments as TypeError /
 * ValueError.  Not part of the C core: it depends on CPython and NumPy's C
 * API (as _ufuncs does) and links libckernel.
 */
#define CKPY_DEFINE_NUMPY_API /* this module's NumPy API table (py_types.h) */
#include "py_types.h"

#include "arrays_internal.h"

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h> /* T_OBJECT_EX: the kind of a __slots__ member */
#define CKA_T_OBJECT_EX T_OBJECT_EX
#else
#define CKA_T_OBJECT_EX Py_T_OBJECT_EX
#endif

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ckernel/ckernel.h"

#include "py_errors.h"

_Static_assert(sizeof(npy_intp) == sizeof(intptr_t), "NumPy and ckernels strides agree");

/* most dims a ckernel type has (CK_TYPE_MAX_DEPTH, the element included) */
#define CKA_MAX_DIMS 64

static volatile int cka_stopped = 0;     /* set by stop() at exit       */

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

static void cka_ref_dealloc(PyObject *self) {
  ck_array_decref(((cka_ref *)self)->array);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *cka_ref_repr(PyObject *self) {
  return PyUnicode_FromFormat("<ckernels._arrays.ArrayRef of the C array at %p>",
                              (void *)((cka_ref *)self)->array);
}

PyTypeObject cka_ref_type = {
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
    ckpy_raise_last(st);
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

/* A NumPy view of `a` (dims all fixed/strided, elements of `descr`), its
 * base an ArrayRef; writable when `writable` and the array is. */
static PyObject *cka_view_impl(ck_array_preamble *a, PyArray_Descr *descr, bool writable) {
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
  return cka_view_impl(a, (PyArray_Descr *)args[1], writable);
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

/* a new C array over arr's memory (NULL with an exception) */
static ck_array_preamble *cka_wrap_impl(PyArrayObject *arr, ck_type type) {
  int ndim = PyArray_NDIM(arr);
  uint64_t flags = CK_ARRAY_READ | (PyArray_ISWRITEABLE(arr) ? CK_ARRAY_WRITE : 0);
  ck_memblock *owner = NULL;
  Py_INCREF(arr); /* the external block's reference, dropped by cka_release */
  ck_status st = ck_external_memblock_new(arr, cka_release, &owner);
  if (st != CK_OK) {
    Py_DECREF(arr);
    ckpy_raise_last(st);
    return NULL;
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
    ckpy_raise_last(st);
    return NULL;
  }
  return out;
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
  ck_type type = (ck_type)cka_address(args[1], "the type");
  if (type == NULL) {
    return NULL;
  }
  ck_array_preamble *out = cka_wrap_impl((PyArrayObject *)args[0], type);
  return out ? PyLong_FromVoidPtr(out) : NULL;
}

/* ref(address) -> an ArrayRef taking over one reference to the C array */
static PyObject *cka_new_ref(PyObject *mod, PyObject *addr) {
  (void)mod;
  ck_array_preamble *a = cka_address(addr, "the array");
  if (a == NULL) {
    return NULL;
  }
  cka_ref *ref = PyObject_New(cka_ref, &cka_ref_type);
  if (ref == NULL) {
    return NULL; /* the caller still owns its reference */
  }
  ref->array = a;
  return (PyObject *)ref;
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
    return ckpy_raise_last(st);
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

/* ------------------------------------------------------------------------ */
/* the Array fast path                                                      */
/* ------------------------------------------------------------------------ */

static const char *const cka_slot_names[CKA_NSLOTS] = {"_r",  "_p",  "_tp", "_dt", "_ad",
                                                       "_sh", "_st", "_bi", "_nd"};

PyTypeObject *cka_array_type = NULL;
Py_ssize_t cka_slot_offset[CKA_NSLOTS];
static PyObject *cka_ops = NULL;          /* name -> ckernels.ops.<name>    */
static PyObject *cka_strided_of = NULL;   /* (dtype, ndim) -> (el, t, addr) */
static PyObject *cka_ckernel_error = NULL;
/* (dtype type number, ndim) -> the strided_of entry, for native builtin dtypes */
#define CKA_TYPE_NUMS 32
static PyObject *cka_type_table[CKA_TYPE_NUMS][CKA_MAX_DIMS + 1];
static PyObject *cka_strided_of_fn = NULL; /* (dtype, ndim) -> entry, on a miss */
static PyObject *cka_kwnames_out = NULL;  /* ("out", "casting")              */
static PyObject *cka_str_no = NULL;       /* "no"                            */
static PyObject *cka_str_fast_view = NULL; /* "_fast_view"                   */

/* new reference to slot `k` of an Array (NULL + AttributeError if unset) */
static PyObject *cka_get(PyObject *obj, int k) {
  PyObject *v = cka_slot(obj, k);
  if (v == NULL) {
    PyErr_Format(PyExc_AttributeError, "Array slot %s is not set", cka_slot_names[k]);
    return NULL;
  }
  return Py_NewRef(v);
}

/* store a new reference to `value` in slot `k` of a new Array */
static void cka_set(PyObject *obj, int k, PyObject *value) {
  PyObject **p = (PyObject **)((char *)obj + cka_slot_offset[k]);
  Py_XSETREF(*p, Py_NewRef(value));
}

/* Is `a` an array of strided dims over the builtin element of `descr`? */
static bool cka_strided_of_descr(const ck_array_preamble *a, const PyArray_Descr *descr) {
  ck_type_id want = ckpy_id_of_descr(descr);
  ck_type t = ck_array_type(a);
  while (ck_type_id_of(t) == CK_TYPE_STRIDED_DIM) {
    t = ck_type_element(t);
  }
  return want != CK_TYPE_UNINITIALIZED && ck_type_id_of(t) == want;
}

PyObject *cka_fast_view(PyObject *obj) {
  PyObject *nd = cka_slot(obj, CKA_ND);
  if (nd != NULL && nd != Py_None) {
    return Py_NewRef(nd);
  }
  /* an Array whose dtype is cached (views made by the subscript): in C, the
   * rule of Array._fast_view (strided dims over a native numeric type) */
  PyObject *dt = cka_slot(obj, CKA_DT);
  ck_array_preamble *a = cka_array_of(obj);
  if (nd != NULL && a != NULL && dt != NULL && PyArray_DescrCheck(dt) &&
      cka_strided_of_descr(a, (PyArray_Descr *)dt)) {
    nd = cka_view_impl(a, (PyArray_Descr *)dt, true);
    if (nd != NULL) {
      cka_set(obj, CKA_ND, nd);
    }
    return nd;
  }
  return PyObject_CallMethodNoArgs(obj, cka_str_fast_view);
}

static PyObject *cka_setup(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 7 || !PyType_Check(args[0]) || !PyDict_Check(args[1]) ||
      !PyDict_Check(args[2]) || !PyDict_Check(args[3])) {
    PyErr_SetString(PyExc_TypeError, "setup(Array, slots, ops, strided_of, error_class, "
                                     "strided_of_fn, (getitem, setitem, delitem))");
    return NULL;
  }
  Py_ssize_t offsets[CKA_NSLOTS];
  for (int k = 0; k < CKA_NSLOTS; k++) {
    PyObject *d = PyDict_GetItemString(args[1], cka_slot_names[k]); /* borrowed */
    if (d == NULL || Py_TYPE(d) != &PyMemberDescr_Type ||
        ((PyMemberDescrObject *)d)->d_member->type != CKA_T_OBJECT_EX ||
        ((PyMemberDescrObject *)d)->d_member->flags != 0) {
      PyErr_Format(PyExc_TypeError, "setup: no writable slot %s", cka_slot_names[k]);
      return NULL;
    }
    offsets[k] = ((PyMemberDescrObject *)d)->d_member->offset;
  }
  if (cks_setup(args[6]) < 0) {
    return NULL;
  }
  memcpy(cka_slot_offset, offsets, sizeof offsets);
  Py_XSETREF(cka_array_type, (PyTypeObject *)Py_NewRef(args[0]));
  Py_XSETREF(cka_ops, Py_NewRef(args[2]));
  Py_XSETREF(cka_strided_of, Py_NewRef(args[3]));
  Py_XSETREF(cka_ckernel_error, Py_NewRef(args[4]));
  Py_XSETREF(cka_strided_of_fn, Py_NewRef(args[5]));
  Py_RETURN_NONE;
}

/* NotImplemented unless the pending exception is a CKernelError or a
 * FloatingPointError (numpy.errstate(...="raise")): returns NULL then, the
 * exception still set */
static PyObject *cka_refused(void) {
  if (PyErr_ExceptionMatches(cka_ckernel_error) ||
      PyErr_ExceptionMatches(PyExc_FloatingPointError)) {
    return NULL;
  }
  PyErr_Clear();
  Py_RETURN_NOTIMPLEMENTED;
}

PyObject *cka_new_array(ck_array_preamble *a, PyObject *tp, PyObject *dt, PyObject *nd) {
  cka_ref *ref = PyObject_New(cka_ref, &cka_ref_type);
  if (ref == NULL) {
    ck_array_decref(a);
    return NULL;
  }
  ref->array = a;
  PyObject *address = PyLong_FromVoidPtr(a);
  PyObject *self = address ? cka_array_type->tp_alloc(cka_array_type, 0) : NULL;
  if (self == NULL) {
    Py_XDECREF(address);
    Py_DECREF(ref);
    return NULL;
  }
  cka_set(self, CKA_R, (PyObject *)ref);
  cka_set(self, CKA_P, Py_None);
  cka_set(self, CKA_AD, address);
  cka_set(self, CKA_TP, tp ? tp : Py_None);
  cka_set(self, CKA_DT, dt ? dt : Py_None);
  cka_set(self, CKA_SH, Py_None);
  cka_set(self, CKA_ST, Py_None);
  cka_set(self, CKA_BI, Py_None);
  cka_set(self, CKA_ND, nd ? nd : Py_None);
  Py_DECREF(ref);
  Py_DECREF(address);
  return self;
}

/* An Array over `arr` (a new ndarray nobody else holds): the C array is a
 * view of arr's memory whose external memblock owns a reference to arr; the
 * Array caches arr as its view, its type, dtype and address. */
static PyObject *cka_wrap_result_impl(PyArrayObject *arr) {
  if (cka_array_type == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "_arrays: setup() was not called");
    return NULL;
  }
  PyArray_Descr *descr = PyArray_DESCR(arr);
  int ndim = PyArray_NDIM(arr);
  /* native builtin dtypes: a table by type number and ndim (no dtype hash) */
  int fast = PyTypeNum_ISNUMBER(descr->type_num) && descr->type_num < CKA_TYPE_NUMS &&
             ndim <= CKA_MAX_DIMS && PyArray_ISNBO(descr->byteorder);
  PyObject *cached = fast ? cka_type_table[descr->type_num][ndim] : NULL;
  if (cached != NULL) {
    Py_INCREF(cached);
  } else {
    PyObject *key = Py_BuildValue("(Oi)", (PyObject *)descr, ndim);
    if (key == NULL) {
      return NULL;
    }
    cached = PyDict_GetItemWithError(cka_strided_of, key); /* borrowed */
    if (cached != NULL) {
      Py_INCREF(cached);
    } else if (!PyErr_Occurred()) { /* first of its kind: the Python side makes it */
      cached = PyObject_CallObject(cka_strided_of_fn, key);
    }
    Py_DECREF(key);
    if (cached == NULL) {
      return NULL;
    }
    if (!PyTuple_Check(cached) || PyTuple_GET_SIZE(cached) != 3) {
      Py_DECREF(cached);
      PyErr_SetString(PyExc_TypeError, "wrap_result: malformed strided type cache entry");
      return NULL;
    }
    if (fast) { /* kept for the process, as the dict's entries */
      cka_type_table[descr->type_num][ndim] = Py_NewRef(cached);
    }
  }
  ck_type type = (ck_type)PyLong_AsVoidPtr(PyTuple_GET_ITEM(cached, 2));
  ck_array_preamble *out = type ? cka_wrap_impl(arr, type) : NULL;
  PyObject *self = out ? cka_new_array(out, PyTuple_GET_ITEM(cached, 1), (PyObject *)descr,
                                       (PyObject *)arr)
                       : NULL;
  Py_DECREF(cached);
  return self;
}

static PyObject *cka_wrap_result(PyObject *mod, PyObject *arr) {
  (void)mod;
  if (!PyArray_CheckExact(arr)) {
    PyErr_SetString(PyExc_TypeError, "wrap_result: expected a numpy.ndarray");
    return NULL;
  }
  return cka_wrap_result_impl((PyArrayObject *)arr);
}

/* A Python bool / int / float / complex: the scalars apply() hands to the
 * ufunc as they are (int / float / complex are NEP 50 weak scalars). */
static bool cka_python_scalar(PyObject *x) {
  return Py_TYPE(x) == &PyBool_Type || ckpy_weak_kind(x) != 0;
}

/* May a Python scalar operand go with an out= of dtype `odt` under
 * casting="no"?  A bool: any builtin type; a weak scalar: when it passes as
 * an operand of out's type unchanged (the NEP 50 rule, ck_weak_result). */
static bool cka_scalar_fits_out(PyObject *x, const PyArray_Descr *odt) {
  ck_type_id id = ckpy_id_of_descr(odt);
  return Py_TYPE(x) == &PyBool_Type ? id != CK_TYPE_UNINITIALIZED
                                    : ckpy_weak_fits(ckpy_weak_kind(x), id);
}

#define CKA_MAX_OPERANDS 8

static PyObject *cka_apply(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (cka_array_type == NULL || nargs < 3 || nargs > 2 + CKA_MAX_OPERANDS) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject *op = PyDict_GetItemWithError(cka_ops, args[0]); /* borrowed */
  if (op == NULL) {
    if (PyErr_Occurred()) {
      return NULL;
    }
    Py_RETURN_NOTIMPLEMENTED;
  }
  Py_ssize_t n = nargs - 2;
  PyObject *call[CKA_MAX_OPERANDS + 3]; /* operands, then out and casting */
  Py_ssize_t held = 0;                  /* call[0..held) are owned views */
  PyObject *result = NULL;
  PyObject *out = args[1];
  PyObject *ond = NULL;
  int arrays = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = args[2 + i];
    if (Py_TYPE(x) == cka_array_type) {
      arrays++;
      PyObject *nd = cka_get(x, CKA_ND);
      if (nd == NULL) {
        goto refuse;
      }
      if (!PyArray_CheckExact(nd)) { /* None: not made yet; False: none */
        Py_DECREF(nd);
        goto not_fast;
      }
      call[i] = nd;
    } else if (cka_python_scalar(x)) {
      call[i] = Py_NewRef(x);
    } else {
      goto not_fast;
    }
    held = i + 1;
  }
  if (arrays == 0) { /* only Python scalars: not an operation on host arrays */
    goto not_fast;
  }
  if (out == Py_None) {
    result = PyObject_Vectorcall(op, call, (size_t)n, NULL);
    if (result == NULL) {
      goto refuse;
    }
    if (PyArray_CheckExact(result)) {
      Py_SETREF(result, cka_wrap_result_impl((PyArrayObject *)result));
    } else if (PyArray_IsScalar(result, Generic)) { /* a 0-d result */
      Py_SETREF(result, PyArray_FromScalar(result, NULL));
      if (result != NULL) {
        Py_SETREF(result, cka_wrap_result_impl((PyArrayObject *)result));
      }
    } else if (Py_TYPE(result) != cka_array_type) {
      Py_CLEAR(result);
      goto not_fast_after;
    }
    goto done;
  }
  if (Py_TYPE(out) != cka_array_type) {
    goto not_fast;
  }
  ond = cka_get(out, CKA_ND);
  if (ond == NULL) {
    goto refuse;
  }
  if (!PyArray_CheckExact(ond) || !PyArray_ISWRITEABLE((PyArrayObject *)ond)) {
    goto not_fast;
  }
  {
    PyArray_Descr *odt = PyArray_DESCR((PyArrayObject *)ond);
    for (Py_ssize_t i = 0; i < n; i++) {
      if (cka_python_scalar(call[i])) {
        if (!cka_scalar_fits_out(call[i], odt)) {
          goto not_fast;
        }
      } else if (!PyArray_EquivTypes(PyArray_DESCR((PyArrayObject *)call[i]), odt)) {
        goto not_fast;
      }
    }
  }
  call[n] = ond;
  call[n + 1] = cka_str_no;
  result = PyObject_Vectorcall(op, call, (size_t)n, cka_kwnames_out);
  if (result == NULL) {
    goto refuse;
  }
  Py_SETREF(result, Py_NewRef(out));
  goto done;
refuse:
  result = cka_refused();
  goto done;
not_fast:
not_fast_after:
  result = Py_NewRef(Py_NotImplemented);
done:
  for (Py_ssize_t i = 0; i < held; i++) {
    Py_DECREF(call[i]);
  }
  Py_XDECREF(ond);
  return result;
}

/* Array.__array_ufunc__ (a method descriptor of the Array type, made by
 * array_ufunc_method): plain calls of ufuncs in `ufunc_ops` (ufunc -> registry
 * operation name) with no keyword but a one-element out= take apply();
 * everything else, and what apply() refuses, the Python method `general`. */
static PyObject *cka_ufunc_ops = NULL;
static PyObject *cka_ufunc_general = NULL;
static PyObject *cka_str_call = NULL;
static PyObject *cka_str_out = NULL;

static PyObject *cka_array_ufunc(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs >= 3 && nargs - 2 <= CKA_MAX_OPERANDS && nkw <= 1 &&
      (args[1] == cka_str_call ||
       (PyUnicode_Check(args[1]) && PyUnicode_Compare(args[1], cka_str_call) == 0))) {
    PyObject *name = PyDict_GetItemWithError(cka_ufunc_ops, args[0]); /* borrowed */
    if (name == NULL && PyErr_Occurred()) {
      return NULL;
    }
    PyObject *out = Py_None;
    int ok = name != NULL;
    if (ok && nkw == 1) {
      PyObject *o = args[nargs];
      ok = PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, 0), cka_str_out) == 0 &&
           PyTuple_CheckExact(o) && PyTuple_GET_SIZE(o) == 1;
      if (ok) {
        out = PyTuple_GET_ITEM(o, 0);
      }
    }
    if (ok) {
      PyObject *call[CKA_MAX_OPERANDS + 2];
      call[0] = name;
      call[1] = out;
      for (Py_ssize_t i = 2; i < nargs; i++) {
        call[i] = args[i];
      }
      PyObject *r = cka_apply(NULL, call, nargs);
      if (r != Py_NotImplemented) {
        return r;
      }
      Py_DECREF(r);
    }
  }
  /* the general method: general(self, *args, **kwargs) */
  Py_ssize_t total = 1 + nargs + nkw;
  PyObject *small[16];
  PyObject **full = total <= 16 ? small : PyMem_Malloc((size_t)total * sizeof(PyObject *));
  if (full == NULL) {
    return PyErr_NoMemory();
  }
  full[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; i++) {
    full[1 + i] = args[i];
  }
  PyObject *r = PyObject_Vectorcall(cka_ufunc_general, full, (size_t)(1 + nargs), kwnames);
  if (full != small) {
    PyMem_Free(full);
  }
  return r;
}

static PyMethodDef cka_array_ufunc_def = {
    "__array_ufunc__", (PyCFunction)(void (*)(void))cka_array_ufunc,
    METH_FASTCALL | METH_KEYWORDS,
    "NumPy ufuncs on host arrays: plain calls of ufuncs the kernel registry runs take the "
    "C fast path (ckernels._arrays.apply), every other call ArrayLike.__array_ufunc__."};

/* array_ufunc_method(ufunc_ops, general) -> the method descriptor for
 * Array.__array_ufunc__ (after setup) */
static PyObject *cka_array_ufunc_method(PyObject *mod, PyObject *const *args,
                                        Py_ssize_t nargs) {
  (void)mod;
  if (cka_array_type == NULL || nargs != 2 || !PyDict_Check(args[0]) ||
      !PyCallable_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError,
                    "array_ufunc_method(ufunc_ops: dict, general) after setup()");
    return NULL;
  }
  Py_XSETREF(cka_ufunc_ops, Py_NewRef(args[0]));
  Py_XSETREF(cka_ufunc_general, Py_NewRef(args[1]));
  return PyDescr_NewMethod(cka_array_type, &cka_array_ufunc_def);
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
    {"setup", (PyCFunction)(void (*)(void))cka_setup, METH_FASTCALL,
     "setup(Array, slots, ops, strided_of, error_class, strided_of_fn, (getitem, setitem, "
     "delitem))"},
    {"apply", (PyCFunction)(void (*)(void))cka_apply, METH_FASTCALL,
     "apply(name, out, *operands) -> the fast path of an operation on host arrays, or "
     "NotImplemented (take the general path)."},
    {"ref", cka_new_ref, METH_O,
     "ref(address) -> an ArrayRef that takes over one reference to the C array."},
    {"array_ufunc_method", (PyCFunction)(void (*)(void))cka_array_ufunc_method,
     METH_FASTCALL,
     "array_ufunc_method(ufunc_ops, general) -> the C Array.__array_ufunc__ (after setup)."},
    {"wrap_result", cka_wrap_result, METH_O,
     "wrap_result(ndarray) -> an Array over a new ndarray nobody else holds."},
    {"stop", cka_stop, METH_NOARGS,
     "Interpreter exit: releases of wrap()'s blocks no longer touch Python objects."},
    {NULL, NULL, 0, NULL},
};

static int cka_exec(PyObject *m) {
  if (PyArray_ImportNumPyAPI() < 0) {
    return -1;
  }
  if (ckpy_errors_init() < 0 || ckpy_types_init() < 0) {
    return -1;
  }
  cka_kwnames_out = Py_BuildValue("(ss)", "out", "casting");
  cka_str_no = PyUnicode_InternFromString("no");
  cka_str_call = PyUnicode_InternFromString("__call__");
  cka_str_out = PyUnicode_InternFromString("out");
  cka_str_fast_view = PyUnicode_InternFromString("_fast_view");
  if (cka_kwnames_out == NULL || cka_str_no == NULL || cka_str_call == NULL ||
      cka_str_out == NULL || cka_str_fast_view == NULL) {
    return -1;
  }
  if (PyType_Ready(&cka_ref_type) < 0 ||
      PyModule_AddObjectRef(m, "ArrayRef", (PyObject *)&cka_ref_type) < 0) {
    return -1;
  }
  if (cks_init() < 0 ||
      PyModule_AddObjectRef(m, "Subscript", (PyObject *)&cks_subscript_type) < 0) {
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
             "(see src/python/arrays/arrays.c).",
    .m_size = 0,
    .m_methods = cka_methods,
    .m_slots = cka_slots,
};

PyMODINIT_FUNC PyInit__arrays(void);
PyMODINIT_FUNC PyInit__arrays(void) { return PyModuleDef_Init(&cka_module); }
