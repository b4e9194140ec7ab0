/*
 * pyint_compare.c -- comparisons of integer arrays with Python ints of any
 * size, as NumPy 2 answers them (NEP 50): `less(uint8 [1], -1)` is False,
 * `equal(int8 [1], 1000)` False -- never "Python integer out of bounds".
 *
 * NumPy does this with a private resolver that sees the Python int's value
 * (numpy/_core/src/umath/special_integer_comparisons.cpp).  Here, with the
 * public API only: a registry comparison ufunc gets, for every integer type
 * T that has a (T, T) -> bool loop, two more loops (T, object) -> bool and
 * (object, T) -> bool, and the promoter sends (T, Python int) calls to them
 * (promoter.c), so NumPy hands the Python int over unconverted (a 0-d object
 * operand).  The loop looks at the value once per run: in T's range, it is
 * stored as a T and the (T, T) kernel runs (stride 0); outside, every
 * element compares the same way (int8 values are all < 1000) and the result
 * is filled in.  An object operand that is not one Python int (a real object
 * array reaching the loop through an exact match) is compared element by
 * element as Python objects.  The loops need the GIL (they read objects).
 */
#include "ufuncs_internal.h"

#include <string.h>

int ckd_comparison_of(const char *op_name) {
  static const struct {
    const char *name;
    int op;
  } table[] = {{"less", Py_LT},    {"less_equal", Py_LE},    {"equal", Py_EQ},
               {"not_equal", Py_NE}, {"greater", Py_GT}, {"greater_equal", Py_GE}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (strcmp(op_name, table[i].name) == 0) {
      return table[i].op;
    }
  }
  return -1;
}

static int ckd_is_integer(ck_type_id id) {
  char k = ck_type_id_kind(id);
  return k == 'i' || k == 'u';
}

ckd_loop *ckd_find_pyint_loop(const ckd_data *d, ck_type_id id, int pyint) {
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    if (L->pyint == pyint && L->ids[1 - pyint] == id) {
      return L;
    }
  }
  return NULL;
}

int ckd_add_pyint_loops(PyObject *ufunc, ckd_data *d) {
  Py_ssize_t n = d->nloops; /* the registry's loops; the new ones follow */
  for (Py_ssize_t i = 0; i < n; i++) {
    const ckd_loop *same = d->loops[i];
    ck_type_id t = same->ids[0];
    if (same->pyint >= 0 || same->ids[1] != t || same->ids[2] != CK_TYPE_BOOL ||
        !ckd_is_integer(t)) {
      continue;
    }
    for (int pyint = 0; pyint < 2; pyint++) {
      ckd_loop *L = ckd_loop_alloc(d);
      if (L == NULL) {
        return -1;
      }
      L->pyint = pyint;
      L->cmp = d->cmp;
      L->same = same;
      for (int k = 0; k < 3; k++) {
        PyArray_DTypeMeta *dt = k == pyint ? &PyArray_ObjectDType : same->dtypes[k];
        L->dtypes[k] = (PyArray_DTypeMeta *)Py_NewRef((PyObject *)dt);
        L->ids[k] = k == pyint ? CK_TYPE_UNINITIALIZED : same->ids[k];
        L->itemsize[k] = k == pyint ? (npy_intp)sizeof(PyObject *) : same->itemsize[k];
      }
      snprintf(L->name, sizeof L->name, "%s(%s, %s) -> bool", PyBytes_AS_STRING(d->name),
               pyint == 0 ? "Python int" : ck_type_id_name(t),
               pyint == 0 ? ck_type_id_name(t) : "Python int");
      if (ckd_add_loop(ufunc, d, L) < 0) {
        return -1;
      }
    }
  }
  return 0;
}

/* Where the Python int `v` lies against integer type `id`: -1 below its
 * range, 1 above, 0 inside (then *buf holds it as an `id`).  -1 with an
 * exception on errors, else 0. */
static int ckd_pyint_range(PyObject *v, ck_type_id id, int *range, char *buf) {
  int is_unsigned = ck_type_id_kind(id) == 'u';
  size_t size = ck_type_data_size(CK_BUILTIN(id));
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && overflow == 0 && PyErr_Occurred()) {
    return -1;
  }
  *range = overflow;
  if (overflow > 0 && is_unsigned && size == 8) {
    unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
        return -1;
      }
      PyErr_Clear(); /* above uint64 */
      return 0;
    }
    memcpy(buf, &u, 8);
    *range = 0;
    return 0;
  }
  if (overflow != 0) {
    return 0;
  }
  if (is_unsigned) {
    unsigned long long max = size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
    *range = x < 0 ? -1 : (unsigned long long)x > max ? 1 : 0;
  } else {
    long long max = size == 8 ? 0x7fffffffffffffffll : (1ll << (8 * size - 1)) - 1;
    *range = x < -max - 1 ? -1 : x > max ? 1 : 0;
  }
  if (*range == 0) {
    switch (size) {
    case 1: { int8_t b = (int8_t)x; memcpy(buf, &b, 1); break; }
    case 2: { int16_t b = (int16_t)x; memcpy(buf, &b, 2); break; }
    case 4: { int32_t b = (int32_t)x; memcpy(buf, &b, 4); break; }
    default: memcpy(buf, &x, 8); break;
    }
  }
  return 0;
}

/* An integer element as a Python int. */
static PyObject *ckd_int_object(const char *p, ck_type_id id) {
  size_t size = ck_type_data_size(CK_BUILTIN(id));
  if (ck_type_id_kind(id) == 'u') {
    uint64_t u = 0;
    switch (size) {
    case 1: { uint8_t b; memcpy(&b, p, 1); u = b; break; }
    case 2: { uint16_t b; memcpy(&b, p, 2); u = b; break; }
    case 4: { uint32_t b; memcpy(&b, p, 4); u = b; break; }
    default: memcpy(&u, p, 8); break;
    }
    return PyLong_FromUnsignedLongLong(u);
  }
  int64_t x = 0;
  switch (size) {
  case 1: { int8_t b; memcpy(&b, p, 1); x = b; break; }
  case 2: { int16_t b; memcpy(&b, p, 2); x = b; break; }
  case 4: { int32_t b; memcpy(&b, p, 4); x = b; break; }
  default: memcpy(&x, p, 8); break;
  }
  return PyLong_FromLongLong(x);
}

int ckd_pyint_run(const ckd_loop *L, char *const *data, npy_intp n, const npy_intp *strides) {
  if (n <= 0) {
    return 0;
  }
  int p = L->pyint, a = 1 - p;
  ck_type_id t = L->ids[a];
  PyObject *v = *(PyObject *const *)data[p];
  if (strides[p] == 0 && v != NULL && PyLong_Check(v)) {
    int range = 0;
    char buf[8];
    if (ckd_pyint_range(v, t, &range, buf) < 0) {
      return -1;
    }
    if (range == 0) { /* in T's range: the (T, T) kernel */
      char *d3[3] = {data[0], data[1], data[2]};
      npy_intp s3[3] = {strides[0], strides[1], strides[2]};
      d3[p] = buf;
      s3[p] = 0;
      ck_status st = ckd_run((ckd_loop *)L->same, d3, n, s3);
      if (st != CK_OK) {
        ckpy_raise_last(st);
        return -1;
      }
      return 0;
    }
    /* the sign of (left - right) for every element */
    int s = p == 1 ? -range : range;
    npy_bool r;
    switch (L->cmp) {
    case Py_LT: r = s < 0; break;
    case Py_LE: r = s < 0; break;
    case Py_GT: r = s > 0; break;
    case Py_GE: r = s > 0; break;
    case Py_NE: r = 1; break;
    default: r = 0; break; /* Py_EQ */
    }
    for (npy_intp i = 0; i < n; i++) {
      *(npy_bool *)(data[2] + i * strides[2]) = r;
    }
    return 0;
  }
  /* Any objects: compared as Python objects, element by element. */
  for (npy_intp i = 0; i < n; i++) {
    PyObject *obj = *(PyObject *const *)(data[p] + i * strides[p]);
    PyObject *x = ckd_int_object(data[a] + i * strides[a], t);
    if (x == NULL) {
      return -1;
    }
    obj = obj != NULL ? obj : Py_None;
    int r = p == 1 ? PyObject_RichCompareBool(x, obj, L->cmp)
                   : PyObject_RichCompareBool(obj, x, L->cmp);
    Py_DECREF(x);
    if (r < 0) {
      return -1;
    }
    *(npy_bool *)(data[2] + i * strides[2]) = (npy_bool)r;
  }
  return 0;
}
