/*
 * subscript.c -- ckernels._arrays.Subscript: the subscript of ckernels.Array
 * in C (`a[key]`, `a[key] = value`, `del a[key]`).
 *
 * Subscript is a stateless C base type of Array (as _pybuffer.BufferExporter
 * is): its mp_subscript / mp_ass_subscript become Array's, so a subscript
 * costs one C call, not a Python method call.  It handles the common cases,
 * each with exactly the result of the general path:
 *
 *   a[i:j:k]         any host array: ck_array_slice along axis 0, the view
 *                    made into an Array in C.
 *   a[i], a[i, j], a[i, 1:3], a[::2, 0] ...
 *                    keys of ints (Python ints, NumPy integer scalars) and
 *                    slices on numeric strided arrays (those with the fast
 *                    path's cached NumPy view `_nd`): with an int for every
 *                    dim, the NumPy scalar of the element; else a view
 *                    (ck_array_index / ck_array_slice per entry, as
 *                    ArrayLike._view: the same C array and Array).
 *   a[key] = value   the same keys (slices with any bounds) on writable
 *                    numeric strided arrays, through the cached NumPy view,
 *                    when NumPy's conversion of `value` is the library's
 *                    checked one (cks_scalar_fits): a float into float64 or
 *                    complex128, an int into an integer array (out of range:
 *                    NumPy's OverflowError sends it to the checked path), an
 *                    int within int64 into float64 or complex128, a complex
 *                    into complex128, a bool into bool, a NumPy scalar of
 *                    the array's dtype; or, for a key selecting a sub-array,
 *                    an Array or ndarray of the array's dtype with no more
 *                    dims (no conversion, NumPy's broadcasting and overlap
 *                    handling, which the general path shares).
 *
 * Everything else -- other keys (None, ..., bools, index arrays, masks, field
 * names, indices past intptr_t), other arrays (fixed/var dims, strings,
 * structs, non-native byte order), read-only arrays, indices out of range,
 * values needing a checked conversion, deletion, and any refusal by the
 * library or NumPy -- calls the general Python methods given to setup()
 * (ArrayLike.__getitem__ / __setitem__ / __delitem__), which raise the
 * errors they always raised.  A failed fast attempt writes nothing: NumPy
 * checks the key and converts a scalar before it stores.
 */
#include "py_types.h"

#include "arrays_internal.h"

#include <stdbool.h>

static PyObject *cks_general[3]; /* getitem, setitem, delitem (setup) */
enum { CKS_GET, CKS_SET, CKS_DEL };

/* most entries of a key handled here (ckernel types have fewer dims) */
#define CKS_MAX_ENTRIES 64

static PyObject *cks_call_general(int which, PyObject *self, PyObject *key,
                                  PyObject *value) {
  if (cks_general[which] == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "ckernels._arrays: setup() was not called");
    return NULL;
  }
  PyObject *args[3] = {self, key, value};
  return PyObject_Vectorcall(cks_general[which], args, value != NULL ? 3 : 2, NULL);
}

/* An integer entry of a key: a Python int or a NumPy integer scalar (not a
 * timedelta).  1 with *out set; 0 for anything else, including values past
 * intptr_t (the general path explains them). */
static int cks_int(PyObject *k, Py_ssize_t *out) {
  Py_ssize_t v;
  if (PyLong_CheckExact(k)) {
    v = PyLong_AsSsize_t(k);
  } else if (PyArray_IsScalar(k, Integer) && !PyArray_IsScalar(k, Timedelta)) {
    PyObject *i = PyNumber_Index(k);
    if (i == NULL) {
      PyErr_Clear();
      return 0;
    }
    v = PyLong_AsSsize_t(i);
    Py_DECREF(i);
  } else {
    return 0;
  }
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  *out = v;
  return 1;
}

/* A key split into entries: an int, a slice, or a tuple of ints and slices
 * (1 to CKS_MAX_ENTRIES of them). */
typedef struct {
  Py_ssize_t n;             /* entries                          */
  Py_ssize_t nint;          /* of which ints                    */
  PyObject *const *entry;   /* borrowed: the tuple's, or &key   */
  Py_ssize_t index[CKS_MAX_ENTRIES]; /* the ints' values (by entry) */
} cks_key;

/* 1: `key` is such a key (parsed into *k); 0: the general path's. */
static int cks_parse(PyObject *const *key, cks_key *k) {
  PyObject *const *entry = key;
  Py_ssize_t n = 1;
  if (PyTuple_CheckExact(*key)) {
    n = PyTuple_GET_SIZE(*key);
    if (n == 0 || n > CKS_MAX_ENTRIES) {
      return 0;
    }
    entry = &PyTuple_GET_ITEM(*key, 0);
  }
  k->n = n;
  k->nint = 0;
  k->entry = entry;
  for (Py_ssize_t i = 0; i < n; i++) {
    if (Py_TYPE(entry[i]) == &PySlice_Type) {
      continue;
    }
    if (!cks_int(entry[i], &k->index[i])) {
      return 0;
    }
    k->nint++;
  }
  return 1;
}

/* A slice's bounds for ck_array_slice: ints or None (CK_SLICE_NONE; step 1).
 * 0 for other bounds or bounds past intptr_t (the general path clamps). */
static int cks_bounds(PyObject *s, intptr_t bound[3]) {
  PySliceObject *sl = (PySliceObject *)s;
  PyObject *b[3] = {sl->start, sl->stop, sl->step};
  for (int j = 0; j < 3; j++) {
    if (b[j] == Py_None) {
      bound[j] = j == 2 ? 1 : CK_SLICE_NONE;
    } else if (PyLong_CheckExact(b[j])) {
      bound[j] = PyLong_AsSsize_t(b[j]);
      if (bound[j] == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
      }
      if (bound[j] == CK_SLICE_NONE) {
        return 0; /* INTPTR_MIN is the library's "omitted" */
      }
    } else {
      return 0;
    }
  }
  return 1;
}

/* The address of the element an int for every dim selects; NULL when one is
 * out of range. */
static char *cks_element(PyArrayObject *nd, const cks_key *k) {
  char *p = PyArray_BYTES(nd);
  for (Py_ssize_t i = 0; i < k->n; i++) {
    Py_ssize_t size = PyArray_DIM(nd, (int)i);
    Py_ssize_t j = k->index[i];
    if (j < 0) {
      j += size;
    }
    if (j < 0 || j >= size) {
      return NULL;
    }
    p += j * PyArray_STRIDE(nd, (int)i);
  }
  return p;
}

/* The view of `a` the key selects (ints and slices, not all ints): a new
 * reference, or NULL when the library refuses (its error is left to the
 * general path, which makes the same calls). */
static ck_array_preamble *cks_view(ck_array_preamble *a, const cks_key *k) {
  ck_array_preamble *cur = a;
  size_t axis = 0;
  for (Py_ssize_t i = 0; i < k->n; i++) {
    ck_array_preamble *out = NULL;
    ck_status st;
    if (Py_TYPE(k->entry[i]) == &PySlice_Type) {
      intptr_t b[3];
      st = cks_bounds(k->entry[i], b)
               ? ck_array_slice(cur, axis, b[0], b[1], b[2], &out)
               : CK_ERR_NOT_SUPPORTED;
      axis++;
    } else {
      st = ck_array_index(cur, axis, k->index[i], &out);
    }
    if (cur != a) {
      ck_array_decref(cur);
    }
    if (st != CK_OK) {
      return NULL;
    }
    cur = out;
  }
  return cur;
}

/* a slot's value when it is set and not None (borrowed), else NULL */
static PyObject *cks_cached(PyObject *self, int slot) {
  PyObject *v = cka_slot(self, slot);
  return v == Py_None ? NULL : v;
}

static PyObject *cks_subscript(PyObject *self, PyObject *key) {
  if (Py_TYPE(self) != cka_array_type) {
    return cks_call_general(CKS_GET, self, key, NULL);
  }
  ck_array_preamble *a = cka_array_of(self);
  if (a == NULL) {
    return cks_call_general(CKS_GET, self, key, NULL);
  }
  if (Py_TYPE(key) == &PySlice_Type) { /* a[i:j:k], any array */
    intptr_t b[3];
    ck_array_preamble *out = NULL;
    if (cks_bounds(key, b) && ck_array_slice(a, 0, b[0], b[1], b[2], &out) == CK_OK) {
      /* a numeric strided array keeps its type and dtype */
      PyObject *nd = cka_slot(self, CKA_ND);
      bool same = nd != NULL && PyArray_CheckExact(nd);
      return cka_new_array(out, same ? cks_cached(self, CKA_TP) : NULL,
                           same ? cks_cached(self, CKA_DT) : NULL, NULL);
    }
    return cks_call_general(CKS_GET, self, key, NULL);
  }
  cks_key k;
  if (!cks_parse(&key, &k)) {
    return cks_call_general(CKS_GET, self, key, NULL);
  }
  PyObject *nd = cka_fast_view(self);
  if (nd == NULL) {
    return NULL;
  }
  PyObject *result = NULL;
  if (!PyArray_CheckExact(nd) || k.n > PyArray_NDIM((PyArrayObject *)nd)) {
    goto general;
  }
  PyArrayObject *arr = (PyArrayObject *)nd;
  if (k.nint == PyArray_NDIM(arr)) { /* an element: its NumPy scalar */
    char *p = cks_element(arr, &k);
    if (p == NULL) {
      goto general;
    }
    /* PyArray_Scalar copies the element (aligned or not) */
    result = PyArray_Scalar(p, PyArray_DESCR(arr), NULL);
    Py_DECREF(nd);
    return result;
  }
  {
    ck_array_preamble *out = cks_view(a, &k);
    if (out == NULL) {
      goto general;
    }
    Py_DECREF(nd);
    /* only slices: a strided array keeps its type; any view keeps the dtype */
    return cka_new_array(out, k.nint == 0 ? cks_cached(self, CKA_TP) : NULL,
                         cks_cached(self, CKA_DT), NULL);
  }
general:
  Py_DECREF(nd);
  return cks_call_general(CKS_GET, self, key, NULL);
}

/* Does NumPy store the Python or NumPy scalar `v` into an element of `descr`
 * exactly as the library's checked conversion does (or refuse it with an
 * error, leaving the checked path to explain)? */
static bool cks_scalar_fits(PyObject *v, PyArray_Descr *descr) {
  PyTypeObject *t = Py_TYPE(v);
  int num = descr->type_num;
  bool wide = num == NPY_DOUBLE || num == NPY_CDOUBLE;
  if (t == &PyFloat_Type) {
    return wide;
  }
  if (t == &PyLong_Type) {
    if (PyTypeNum_ISINTEGER(num)) {
      return true; /* out of range: NumPy's OverflowError */
    }
    if (!wide) {
      return false;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return overflow == 0; /* rounded as the library rounds int64 */
  }
  if (t == &PyComplex_Type) {
    return num == NPY_CDOUBLE;
  }
  if (t == &PyBool_Type) {
    return num == NPY_BOOL;
  }
  if (PyArray_IsScalar(v, Generic)) {
    PyArray_Descr *d = PyArray_DescrFromScalar(v);
    bool same = d != NULL && PyArray_EquivTypes(d, descr);
    Py_XDECREF(d);
    return same;
  }
  return false;
}

/* The array NumPy may assign unchanged to `ndim` dims of `descr`: an Array
 * with a cached view or an ndarray, of that dtype, with at most `ndim` dims.
 * A new reference, or NULL (no exception: the general path then). */
static PyObject *cks_array_value(PyObject *v, PyArray_Descr *descr, int ndim) {
  PyObject *nd;
  if (Py_TYPE(v) == cka_array_type) {
    nd = cka_fast_view(v);
    if (nd == NULL) {
      PyErr_Clear();
      return NULL;
    }
  } else if (PyArray_CheckExact(v)) {
    nd = Py_NewRef(v);
  } else {
    return NULL;
  }
  if (!PyArray_CheckExact(nd) || PyArray_NDIM((PyArrayObject *)nd) > ndim ||
      !PyArray_EquivTypes(PyArray_DESCR((PyArrayObject *)nd), descr)) {
    Py_DECREF(nd);
    return NULL;
  }
  return nd;
}

static int cks_general_set(PyObject *self, PyObject *key, PyObject *value) {
  PyObject *r = cks_call_general(CKS_SET, self, key, value);
  Py_XDECREF(r);
  return r != NULL ? 0 : -1;
}

static int cks_ass_subscript(PyObject *self, PyObject *key, PyObject *value) {
  if (value == NULL) {
    PyObject *r = cks_call_general(CKS_DEL, self, key, NULL);
    Py_XDECREF(r);
    return r != NULL ? 0 : -1;
  }
  cks_key k;
  if (Py_TYPE(self) != cka_array_type || !cks_parse(&key, &k)) {
    return cks_general_set(self, key, value);
  }
  PyObject *nd = cka_fast_view(self);
  if (nd == NULL) {
    return -1;
  }
  if (!PyArray_CheckExact(nd) || !PyArray_ISWRITEABLE((PyArrayObject *)nd) ||
      k.n > PyArray_NDIM((PyArrayObject *)nd)) {
    goto general;
  }
  PyArrayObject *arr = (PyArrayObject *)nd;
  PyArray_Descr *descr = PyArray_DESCR(arr);
  if (k.nint == PyArray_NDIM(arr)) { /* one element */
    char *p = cks_scalar_fits(value, descr) ? cks_element(arr, &k) : NULL;
    if (p == NULL || PyArray_Pack(descr, p, value) < 0) {
      PyErr_Clear();
      goto general;
    }
    Py_DECREF(nd);
    return 0;
  }
  {
    PyObject *src = cks_scalar_fits(value, descr)
                        ? Py_NewRef(value)
                        : cks_array_value(value, descr,
                                          PyArray_NDIM(arr) - (int)k.nint);
    if (src == NULL) {
      goto general;
    }
    int rc = PyObject_SetItem(nd, key, src);
    Py_DECREF(src);
    if (rc < 0) {
      PyErr_Clear();
      goto general;
    }
    Py_DECREF(nd);
    return 0;
  }
general:
  Py_DECREF(nd);
  return cks_general_set(self, key, value);
}

static PyMappingMethods cks_mapping = {
    .mp_subscript = cks_subscript,
    .mp_ass_subscript = cks_ass_subscript,
};

PyTypeObject cks_subscript_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ckernels._arrays.Subscript",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = PyDoc_STR("Base of ckernels.Array: its subscript in C (ints, slices and "
                        "tuples of them on numeric strided arrays; see "
                        "src/python/arrays/subscript.c), every other key through the general "
                        "methods ArrayLike.__getitem__ / __setitem__ / __delitem__."),
    .tp_new = PyType_GenericNew,
    .tp_as_mapping = &cks_mapping,
};

int cks_init(void) { return PyType_Ready(&cks_subscript_type); }

int cks_setup(PyObject *general) {
  if (!PyTuple_Check(general) || PyTuple_GET_SIZE(general) != 3) {
    PyErr_SetString(PyExc_TypeError,
                    "setup: the general subscript methods are a tuple (getitem, setitem, "
                    "delitem)");
    return -1;
  }
  for (int i = 0; i < 3; i++) {
    if (!PyCallable_Check(PyTuple_GET_ITEM(general, i))) {
      PyErr_SetString(PyExc_TypeError, "setup: a general subscript method is not callable");
      return -1;
    }
  }
  for (int i = 0; i < 3; i++) {
    Py_XSETREF(cks_general[i], Py_NewRef(PyTuple_GET_ITEM(general, i)));
  }
  return 0;
}
