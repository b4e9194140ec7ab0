/*
 * function.c -- ckernels._ufuncs.Function: the callable in front of a
 * ufunc (jitted functions and registry operations are Functions).
 *
 * The call path of a jitted function (or any object with a ufunc and a
 * general path), in C so that a call on NumPy operands costs about a ufunc
 * call.  A call goes to `ufunc` when every positional argument is an
 * ndarray, a NumPy scalar, a Python bool / int / float / complex, or an
 * object whose type implements __array_ufunc__ (pandas, xarray, dask, ...)
 * -- and none is an instance of `fallback_types` nor a NumPy array or scalar
 * whose dtype kind is in `fallback_kinds` (e.g. "OSUT" for strings) -- and
 * `out=` (if given) is one of those too or a tuple of them, and the number
 * of positional arguments is one the ufunc takes (nin, up to nin + nout
 * with the outputs).  Every other call (lists, str, other arrays, another
 * arity, no ufunc) goes to `fallback(self, *args, **kwargs)`, and so does
 * a call the ufunc refuses with `Fallback` (raised by a compile hook).
 * Calls with an operand that implements __array_ufunc__ but is no ndarray
 * go to `wrappers(self, *args, **kwargs)` when it is set (e.g. to give the
 * wrapping library the result dtype), else to the ufunc.
 * Subclassable (Python subclasses add their methods; the call stays in C).
 */
#include "ufuncs_internal.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *ufunc;          /* a numpy.ufunc or NULL                     */
  PyObject *fallback;       /* callable(self, *args, **kwargs) or NULL  */
  PyObject *fallback_types; /* tuple of types (possibly empty)          */
  PyObject *wrappers;       /* callable(self, *args, **kwargs) or NULL  */
  char fallback_kinds[16];  /* dtype kinds taking the fallback, NUL-ended */
} ckd_function;

static PyObject *ckd_str_array_ufunc = NULL; /* "__array_ufunc__" */
/* ckernels._ufuncs.Fallback: raised (by a compile hook) when a call can
 * only run on the general path; a Function then takes its fallback. */
static PyObject *ckd_fallback_exc = NULL;
static PyObject *ckd_str_out = NULL;         /* "out" */

/* 1: NumPy can take `a` as a ufunc operand here; 2: so can an object
 * implementing __array_ufunc__ that is no ndarray (pandas, xarray, dask);
 * 0: no; -1: error. */
static int ckd_ufunc_operand(ckd_function *f, PyObject *a) {
  PyTypeObject *t = Py_TYPE(a);
  if (t == &PyArray_Type) {
    return f->fallback_kinds[0] == 0 ||
           strchr(f->fallback_kinds, PyArray_DESCR((PyArrayObject *)a)->kind) == NULL;
  }
  if (t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type || t == &PyComplex_Type) {
    return 1;
  }
  if (PyTuple_GET_SIZE(f->fallback_types) > 0) {
    int r = PyObject_IsInstance(a, f->fallback_types);
    if (r != 0) {
      return r < 0 ? -1 : 0;
    }
  }
  if (PyArray_Check(a)) {
    return f->fallback_kinds[0] == 0 ||
           strchr(f->fallback_kinds, PyArray_DESCR((PyArrayObject *)a)->kind) == NULL;
  }
  if (PyArray_IsScalar(a, Generic)) {
    if (f->fallback_kinds[0] == 0) {
      return 1;
    }
    PyArray_Descr *descr = PyArray_DescrFromScalar(a);
    if (descr == NULL) {
      return -1;
    }
    int ok = strchr(f->fallback_kinds, descr->kind) == NULL;
    Py_DECREF(descr);
    return ok;
  }
  PyObject *m = PyObject_GetAttr((PyObject *)t, ckd_str_array_ufunc);
  if (m == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
      return -1;
    }
    PyErr_Clear();
    return 0;
  }
  int ok = m != Py_None;
  Py_DECREF(m);
  return ok ? 2 : 0;
}

static int ckd_ufunc_out(ckd_function *f, PyObject *out) {
  if (out == Py_None) {
    return 1;
  }
  if (PyTuple_Check(out)) {
    int wrapped = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(out); i++) {
      int r = ckd_ufunc_operand(f, PyTuple_GET_ITEM(out, i));
      if (r <= 0) {
        return r;
      }
      wrapped |= r == 2;
    }
    return wrapped ? 2 : 1;
  }
  return ckd_ufunc_operand(f, out);
}

/* hook(self, *args, **kwargs) */
static PyObject *ckd_call_hook(ckd_function *f, PyObject *hook, PyObject *const *args,
                               size_t nargsf, PyObject *kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject *small[8];
  PyObject **all = n + nkw + 1 <= 8 ? small : PyMem_Malloc((size_t)(n + nkw + 1) * sizeof *all);
  if (all == NULL) {
    return PyErr_NoMemory();
  }
  all[0] = (PyObject *)f;
  memcpy(all + 1, args, (size_t)(n + nkw) * sizeof *all);
  PyObject *r = PyObject_Vectorcall(hook, all, (size_t)(n + 1), kwnames);
  if (all != small) {
    PyMem_Free(all);
  }
  return r;
}

static PyObject *ckd_function_fallback(ckd_function *f, PyObject *const *args, size_t nargsf,
                                       PyObject *kwnames) {
  if (f->fallback == NULL) {
    if (f->ufunc == NULL) {
      return ckpy_raisef(CK_ERR_INVALID_STATE, "%R has neither a ufunc nor a fallback",
                         (PyObject *)f);
    }
    return PyObject_Vectorcall(f->ufunc, args, nargsf, kwnames); /* NumPy says why not */
  }
  return ckd_call_hook(f, f->fallback, args, nargsf, kwnames);
}

static PyObject *ckd_function_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                         PyObject *kwnames) {
  ckd_function *f = (ckd_function *)self;
  if (f->ufunc == NULL) {
    return ckd_function_fallback(f, args, nargsf, kwnames);
  }
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  PyUFuncObject *uf = (PyUFuncObject *)f->ufunc;
  if (n < uf->nin || n > uf->nargs) {
    /* Another arity (a function with defaults or several arities): the
     * fallback knows what to do or says what is wrong. */
    return ckd_function_fallback(f, args, nargsf, kwnames);
  }
  int wrapped = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    int r = ckd_ufunc_operand(f, args[i]);
    if (r <= 0) {
      return r < 0 ? NULL : ckd_function_fallback(f, args, nargsf, kwnames);
    }
    wrapped |= r == 2;
  }
  if (kwnames != NULL) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
      PyObject *name = PyTuple_GET_ITEM(kwnames, k);
      if (name == ckd_str_out || PyUnicode_Compare(name, ckd_str_out) == 0) {
        int r = ckd_ufunc_out(f, args[n + k]);
        if (r <= 0) {
          return r < 0 ? NULL : ckd_function_fallback(f, args, nargsf, kwnames);
        }
        wrapped |= r == 2;
      }
    }
  }
  if (wrapped && f->wrappers != NULL) {
    return ckd_call_hook(f, f->wrappers, args, nargsf, kwnames);
  }
  PyObject *r;
  if (n == 1 && kwnames == NULL && uf->nin == 1 &&
      (PyFloat_CheckExact(args[0]) || PyLong_CheckExact(args[0]) ||
       PyComplex_CheckExact(args[0]))) {
    r = ckd_call_weak_unary(f->ufunc, args[0]);
    if (r != NULL || PyErr_Occurred()) {
      goto done;
    }
  }
  (void)ckpy_take_located();
  r = PyObject_Vectorcall(f->ufunc, args, nargsf, kwnames);
done:
  if (r == NULL && f->fallback != NULL && PyErr_ExceptionMatches(ckd_fallback_exc)) {
    PyErr_Clear();
    return ckd_function_fallback(f, args, nargsf, kwnames);
  }
  if (r == NULL && f->fallback != NULL && ckpy_take_located()) {
    /* An element of the kernel failed inside NumPy's loop, which knows its
     * index within NumPy's call only (buffers, outer loops): the general
     * path runs the call again and names the element in the operands'
     * dims (error.h).  Its exception (or result) replaces NumPy's. */
    PyErr_Clear();
    return ckd_function_fallback(f, args, nargsf, kwnames);
  }
  return r;
}

static int ckd_set_kinds(ckd_function *self, PyObject *value) {
  const char *k = "";
  Py_ssize_t n = 0;
  if (value != NULL && value != Py_None) {
    k = PyUnicode_Check(value) ? PyUnicode_AsUTF8AndSize(value, &n) : NULL;
    if (k == NULL || n >= (Py_ssize_t)sizeof self->fallback_kinds) {
      PyErr_Clear();
      ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "fallback_kinds must be a str of at most %d dtype "
                  "kind characters, not %R", (int)sizeof self->fallback_kinds - 1, value);
      return -1;
    }
  }
  memcpy(self->fallback_kinds, k, (size_t)n);
  self->fallback_kinds[n] = 0;
  return 0;
}

static int ckd_function_init(ckd_function *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"ufunc", "fallback", "fallback_types", "fallback_kinds",
                           "wrappers", NULL};
  PyObject *ufunc = Py_None, *fallback = Py_None, *types = NULL, *kinds = NULL;
  PyObject *wrappers = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOO$O", kwlist, &ufunc, &fallback, &types,
                                   &kinds, &wrappers)) {
    return -1;
  }
  if (wrappers != Py_None && !PyCallable_Check(wrappers)) {
    ckpy_raisef(CK_ERR_TYPE, "Function: wrappers must be callable or None, not %R", wrappers);
    return -1;
  }
  if (ckd_set_kinds(self, kinds) < 0) {
    return -1;
  }
  if (ufunc != Py_None && !PyObject_TypeCheck(ufunc, &PyUFunc_Type)) {
    ckpy_raisef(CK_ERR_TYPE, "Function: ufunc must be a numpy.ufunc or None, not %R", ufunc);
    return -1;
  }
  if (fallback != Py_None && !PyCallable_Check(fallback)) {
    ckpy_raisef(CK_ERR_TYPE, "Function: fallback must be callable or None, not %R", fallback);
    return -1;
  }
  PyObject *tt = types ? PySequence_Tuple(types) : PyTuple_New(0);
  if (tt == NULL) {
    return -1;
  }
  Py_XSETREF(self->ufunc, ufunc != Py_None ? Py_NewRef(ufunc) : NULL);
  Py_XSETREF(self->fallback, fallback != Py_None ? Py_NewRef(fallback) : NULL);
  Py_XSETREF(self->fallback_types, tt);
  Py_XSETREF(self->wrappers, wrappers != Py_None ? Py_NewRef(wrappers) : NULL);
  return 0;
}

static PyObject *ckd_function_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)args;
  (void)kw;
  if (!(type->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL) && type->tp_call == &PyVectorcall_Call) {
    /* A Python subclass that keeps our call: let it use the vectorcall slot
     * too, as CPython >= 3.12 does by itself for such subclasses (3.10 and
     * 3.11 only pass the flag on to immutable types).  A subclass defining
     * __call__ has another tp_call and is left alone. */
    type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
  }
  ckd_function *self = (ckd_function *)type->tp_alloc(type, 0);
  if (self == NULL) {
    return NULL;
  }
  self->vectorcall = ckd_function_vectorcall;
  self->fallback_types = PyTuple_New(0);
  if (self->fallback_types == NULL) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static int ckd_function_traverse(ckd_function *self, visitproc visit, void *arg) {
  Py_VISIT(self->ufunc);
  Py_VISIT(self->fallback);
  Py_VISIT(self->fallback_types);
  Py_VISIT(self->wrappers);
  return 0; /* a Python subclass's type is visited (and decref'd) by CPython */
}

static int ckd_function_clear(ckd_function *self) {
  Py_CLEAR(self->ufunc);
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->fallback_types);
  Py_CLEAR(self->wrappers);
  return 0;
}

static void ckd_function_dealloc(ckd_function *self) {
  PyObject_GC_UnTrack(self);
  ckd_function_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *ckd_function_get_ufunc(ckd_function *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->ufunc ? self->ufunc : Py_None);
}

static int ckd_function_set_ufunc(ckd_function *self, PyObject *value, void *closure) {
  (void)closure;
  if (value != NULL && value != Py_None && !PyObject_TypeCheck(value, &PyUFunc_Type)) {
    ckpy_raisef(CK_ERR_TYPE, "ufunc must be a numpy.ufunc or None, not %R", value);
    return -1;
  }
  Py_XSETREF(self->ufunc, value != NULL && value != Py_None ? Py_NewRef(value) : NULL);
  return 0;
}

static PyObject *ckd_function_get_fallback(ckd_function *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->fallback ? self->fallback : Py_None);
}

static int ckd_function_set_fallback(ckd_function *self, PyObject *value, void *closure) {
  (void)closure;
  if (value != NULL && value != Py_None && !PyCallable_Check(value)) {
    ckpy_raisef(CK_ERR_TYPE, "fallback must be callable or None, not %R", value);
    return -1;
  }
  Py_XSETREF(self->fallback, value != NULL && value != Py_None ? Py_NewRef(value) : NULL);
  return 0;
}

static PyObject *ckd_function_get_wrappers(ckd_function *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->wrappers ? self->wrappers : Py_None);
}

static int ckd_function_set_wrappers(ckd_function *self, PyObject *value, void *closure) {
  (void)closure;
  if (value != NULL && value != Py_None && !PyCallable_Check(value)) {
    ckpy_raisef(CK_ERR_TYPE, "wrappers must be callable or None, not %R", value);
    return -1;
  }
  Py_XSETREF(self->wrappers, value != NULL && value != Py_None ? Py_NewRef(value) : NULL);
  return 0;
}

static PyObject *ckd_function_get_types(ckd_function *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->fallback_types);
}

static int ckd_function_set_types(ckd_function *self, PyObject *value, void *closure) {
  (void)closure;
  PyObject *tt = value != NULL ? PySequence_Tuple(value) : PyTuple_New(0);
  if (tt == NULL) {
    return -1;
  }
  Py_XSETREF(self->fallback_types, tt);
  return 0;
}

static PyObject *ckd_function_get_kinds(ckd_function *self, void *closure) {
  (void)closure;
  return PyUnicode_FromString(self->fallback_kinds);
}

static int ckd_function_set_kinds(ckd_function *self, PyObject *value, void *closure) {
  (void)closure;
  return ckd_set_kinds(self, value);
}

static PyGetSetDef ckd_function_getset[] = {
    {"fallback_kinds", (getter)ckd_function_get_kinds, (setter)ckd_function_set_kinds,
     "NumPy arrays and scalars of these dtype kinds always take the fallback.", NULL},
    {"ufunc", (getter)ckd_function_get_ufunc, (setter)ckd_function_set_ufunc,
     "The numpy.ufunc that calls on NumPy-like operands go to (None: none).", NULL},
    {"fallback", (getter)ckd_function_get_fallback, (setter)ckd_function_set_fallback,
     "Called as fallback(self, *args, **kwargs) for every other call.", NULL},
    {"fallback_types", (getter)ckd_function_get_types, (setter)ckd_function_set_types,
     "Operands of these types always take the fallback.", NULL},
    {"wrappers", (getter)ckd_function_get_wrappers, (setter)ckd_function_set_wrappers,
     "Called as wrappers(self, *args, **kwargs) instead of the ufunc for calls with\n"
     "an operand that implements __array_ufunc__ but is no ndarray (pandas,\n"
     "xarray, dask); None: those go to the ufunc too.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *ckd_function_repr(ckd_function *self) {
  return PyUnicode_FromFormat("<%s ufunc=%R>", Py_TYPE(self)->tp_name,
                              self->ufunc ? self->ufunc : Py_None);
}

static PyTypeObject ckd_function_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ckernels._ufuncs.Function",
    .tp_doc = PyDoc_STR(
        "Function(ufunc=None, fallback=None, fallback_types=(), fallback_kinds='', *,\n"
        "         wrappers=None)\n--\n\n"
        "A callable that sends calls whose operands NumPy takes (ndarrays, NumPy\n"
        "and Python numbers, objects implementing __array_ufunc__) straight to\n"
        "`ufunc`, in C, and every other call to fallback(self, *args, **kwargs).\n"
        "Operands that are instances of `fallback_types`, and NumPy arrays and\n"
        "scalars of the dtype kinds in `fallback_kinds`, always take the fallback,\n"
        "and so do calls with a number of positional arguments the ufunc does not\n"
        "take.  Calls with an operand that implements __array_ufunc__ but is no\n"
        "ndarray go to wrappers(self, *args, **kwargs) when that is set.\n"
        "Subclassable."),
    .tp_basicsize = sizeof(ckd_function),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(ckd_function, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = ckd_function_new,
    .tp_init = (initproc)ckd_function_init,
    .tp_traverse = (traverseproc)ckd_function_traverse,
    .tp_clear = (inquiry)ckd_function_clear,
    .tp_dealloc = (destructor)ckd_function_dealloc,
    .tp_getset = ckd_function_getset,
    .tp_repr = (reprfunc)ckd_function_repr,
};


int ckd_function_setup(PyObject *m) {
  ckd_str_array_ufunc = PyUnicode_InternFromString("__array_ufunc__");
  ckd_str_out = PyUnicode_InternFromString("out");
  if (ckd_str_array_ufunc == NULL || ckd_str_out == NULL) {
    return -1;
  }
  if (PyType_Ready(&ckd_function_type) < 0) {
    return -1;
  }
  ckd_fallback_exc = PyErr_NewExceptionWithDoc(
      "ckernels._ufuncs.Fallback",
      "Raised while a ufunc resolves a call (by a compile hook) when the call can\n"
      "only run on the general path (e.g. a result type NumPy has no dtype for):\n"
      "a Function that sent the call to its ufunc then calls its fallback.",
      PyExc_TypeError, NULL);
  if (ckd_fallback_exc == NULL || PyModule_AddObjectRef(m, "Fallback", ckd_fallback_exc) < 0 ||
      PyModule_AddObjectRef(m, "Function", (PyObject *)&ckd_function_type) < 0) {
    return -1;
  }
  return 0;
}
