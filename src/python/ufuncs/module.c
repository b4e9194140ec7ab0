/*
 * module.c -- ckernels._ufuncs: NumPy ufuncs whose inner loops are
 * ckernels (the CPython / NumPy C-API fast path of the Python package).
 *
 * A real `numpy.ufunc` (nout = 1) with no legacy loops; each loop a NumPy 2
 * ArrayMethod running one built ckernel.  Everything else a ufunc does --
 * broadcasting, casting and buffering, `out=`, `where=`, `dtype=`,
 * `casting=`, reduce / accumulate / outer / at, `__array_ufunc__` overrides
 * -- is NumPy's own machinery.  The files of the module and what each holds:
 * ufuncs_internal.h.  This file: the module's functions and its set-up.
 *
 * Errors of this module are ckernels.errors classes (py_errors.h).
 */
#define CKD_MODULE_C
#include "ufuncs_internal.h"

static int ckd_identity_converter(PyObject *obj, void *out) {
  *(PyObject **)out = obj;
  return 1;
}

PyDoc_STRVAR(ckd_ufunc_doc,
"ufunc(name, nin, *, doc=None, identity=None, reorderable=None, compile=None)\n"
"--\n\n"
"A new numpy.ufunc with `nin` inputs and one output and no loops yet; add\n"
"them with add_jit_loop().  `identity`: the reduction identity (None: none);\n"
"`reorderable` (default: an identity was given) lets reductions run over\n"
"several axes.  `compile(input_dtypes, out_dtype_or_None)`, for lazily\n"
"compiled functions, is called when a call's input types match no loop\n"
"exactly; it must add the loop for those types (or, when the output type is\n"
"fixed and the inputs have a loop with another result, a loop of the fixed\n"
"types) or raise.");

static PyObject *ckd_py_ufunc(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  static char *kwlist[] = {"name", "nin", "doc", "identity", "reorderable", "compile", NULL};
  const char *name;
  int nin;
  PyObject *doc = NULL, *identity = NULL, *reorderable = NULL, *compile = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "si|$OO&OO", kwlist, &name, &nin, &doc,
                                   ckd_identity_converter, &identity, &reorderable,
                                   &compile)) {
    return NULL;
  }
  return ckd_new_ufunc(name, nin, doc, identity, reorderable, compile, NULL);
}

PyDoc_STRVAR(ckd_add_jit_loop_doc,
"add_jit_loop(ufunc, desc, dtypes)\n"
"--\n\n"
"Add the loop of one compiled signature of a jitted function: `desc` is the\n"
"address (int) of its ck_jit_kernel_desc, `dtypes` the NumPy dtypes of its\n"
"inputs and result (same kinds and sizes as the descriptor's ckernel types).\n"
"The kernel is built now (ck_jit_make_kernel, strided request) and holds its\n"
"own reference to the compiled code; the descriptor is not kept.");

static PyObject *ckd_py_add_jit_loop(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *ufunc, *dtypes;
  unsigned long long addr;
  if (!PyArg_ParseTuple(args, "OKO", &ufunc, &addr, &dtypes)) {
    return NULL;
  }
  ckd_data *d = ckd_data_of_arg(ufunc);
  if (d == NULL || ckd_check_open(d) < 0) {
    return NULL;
  }
  if (d->op != NULL) {
    return ckpy_raisef(CK_ERR_INVALID_STATE, "%s: a registry ufunc takes no jitted loops",
                       PyBytes_AS_STRING(d->name));
  }
  const ck_jit_kernel_desc *desc = (const ck_jit_kernel_desc *)(uintptr_t)addr;
  if (desc == NULL) {
    return ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "add_jit_loop: desc must not be NULL");
  }
  if (ckd_add_jit_loop(ufunc, d, desc, dtypes) < 0) {
    return NULL;
  }
  Py_RETURN_NONE;
}

PyDoc_STRVAR(ckd_op_ufunc_doc,
"op_ufunc(op_name, dtype_of_id, *, name=None, doc=None, identity=None,\n"
"         reorderable=None)\n"
"--\n\n"
"A numpy.ufunc for the registry operation `op_name`: one loop per kernel the\n"
"operation holds now (registry order) whose ckernel types all have a NumPy\n"
"dtype in `dtype_of_id` (a mapping ckernel type id -> dtype); each loop runs\n"
"the registry's kernel (ck_op_make_kernel).  Types resolve as ck_op_resolve\n"
"does.  Kernels registered later are not seen: make a new ufunc.");

static PyObject *ckd_py_op_ufunc(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  static char *kwlist[] = {"op_name", "dtype_of_id", "name", "doc", "identity",
                           "reorderable", NULL};
  const char *op_name, *name = NULL;
  PyObject *dtype_of_id, *doc = NULL, *identity = NULL, *reorderable = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sO|$zOO&O", kwlist, &op_name, &dtype_of_id,
                                   &name, &doc, ckd_identity_converter, &identity,
                                   &reorderable)) {
    return NULL;
  }
  if (!PyMapping_Check(dtype_of_id)) {
    return ckpy_raisef(CK_ERR_TYPE, "op_ufunc: dtype_of_id must be a mapping, not %R",
                       dtype_of_id);
  }
  const ck_op *op = NULL;
  ck_status st = ck_op_find(op_name, &op);
  if (st != CK_OK) {
    return ckpy_raise_last(st);
  }
  int nin = (int)ck_op_arity(op);
  PyObject *uf = ckd_new_ufunc(name ? name : op_name, nin, doc, identity, reorderable, NULL, op);
  if (uf == NULL) {
    return NULL;
  }
  ckd_data *d = ckd_data_of(uf);
  d->cmp = nin == 2 ? ckd_comparison_of(op_name) : -1;
  if (ckd_read_type_table(d, dtype_of_id) < 0 ||
      ckd_add_op_loops(uf, d, op_name, dtype_of_id) < 0) {
    Py_DECREF(uf);
    return NULL;
  }
  return uf;
}

PyDoc_STRVAR(ckd_loops_doc,
"loops(ufunc) -> list of (dtypes, name)\n"
"--\n\n"
"The loops of a ufunc made here, in registration (= resolution) order: the\n"
"NumPy dtypes (inputs..., output) and the kernel's name.");

static PyObject *ckd_py_loops(PyObject *mod, PyObject *ufunc) {
  (void)mod;
  ckd_data *d = ckd_data_of_arg(ufunc);
  if (d == NULL) {
    return NULL;
  }
  PyObject *list = PyList_New(d->nloops);
  if (list == NULL) {
    return NULL;
  }
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    PyObject *dts = PyTuple_New(d->nin + 1);
    if (dts == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    for (int k = 0; k <= d->nin; k++) {
      PyTuple_SET_ITEM(dts, k, Py_NewRef((PyObject *)L->dtypes[k]->singleton));
    }
    PyObject *item = Py_BuildValue("(Ns)", dts, L->name);
    if (item == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyDoc_STRVAR(ckd_data_of_doc,
"data_of(obj) -> UFuncData or None\n"
"--\n\n"
"What a ufunc made here owns (None for any other object).");

static PyObject *ckd_py_data_of(PyObject *mod, PyObject *obj) {
  (void)mod;
  ckd_data *d = ckd_data_of(obj);
  return Py_NewRef(d ? (PyObject *)d : Py_None);
}

PyDoc_STRVAR(ckd_set_parallel_min_time_doc,
"set_parallel_min_time(seconds)\n"
"--\n\n"
"Split a loop's run over the library's threads when its estimated serial\n"
"time (measured on its first elements) is at least `seconds` (default 1e-4);\n"
"0 splits every run long enough to measure.  Process-wide.");

static PyObject *ckd_py_set_parallel_min_time(PyObject *mod, PyObject *arg) {
  (void)mod;
  double sec = PyFloat_AsDouble(arg);
  if (sec == -1.0 && PyErr_Occurred()) {
    return NULL;
  }
  if (!(sec >= 0.0 && sec <= 3600.0)) {
    return ckpy_raisef(CK_ERR_INVALID_ARGUMENT,
                       "set_parallel_min_time: seconds must be in [0, 3600], not %R", arg);
  }
  ckd_set_parallel_min_ns((int64_t)(sec * 1e9));
  Py_RETURN_NONE;
}

PyDoc_STRVAR(ckd_get_parallel_min_time_doc,
"get_parallel_min_time() -> float\n"
"--\n\n"
"The threshold set by set_parallel_min_time, in seconds.");

static PyObject *ckd_py_get_parallel_min_time(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyFloat_FromDouble((double)ckd_get_parallel_min_ns() / 1e9);
}

PyDoc_STRVAR(ckd_gufunc_doc,
"gufunc(name, signature, loops, *, doc=None)\n"
"--\n\n"
"A new generalized numpy.ufunc (one output) with NumPy signature `signature`\n"
"(\"(n),(n)->()\") whose loops are jitted kernels with core dims: `loops` is a\n"
"sequence of (address of a ck_jit_kernel_desc, NumPy dtypes of the inputs and\n"
"the output).  Each loop keeps its own reference to the compiled code.");

static PyObject *ckd_py_gufunc(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  static char *kwlist[] = {"name", "signature", "loops", "doc", NULL};
  const char *name, *signature;
  PyObject *loops, *doc = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "ssO|$O", kwlist, &name, &signature, &loops,
                                   &doc)) {
    return NULL;
  }
  return ckg_new_gufunc(name, signature, doc, loops);
}

static PyMethodDef ckd_methods[] = {
    {"gufunc", (PyCFunction)(void (*)(void))ckd_py_gufunc, METH_VARARGS | METH_KEYWORDS,
     ckd_gufunc_doc},
    {"set_parallel_min_time", ckd_py_set_parallel_min_time, METH_O,
     ckd_set_parallel_min_time_doc},
    {"get_parallel_min_time", ckd_py_get_parallel_min_time, METH_NOARGS,
     ckd_get_parallel_min_time_doc},
    {"ufunc", (PyCFunction)(void (*)(void))ckd_py_ufunc, METH_VARARGS | METH_KEYWORDS,
     ckd_ufunc_doc},
    {"add_jit_loop", ckd_py_add_jit_loop, METH_VARARGS, ckd_add_jit_loop_doc},
    {"op_ufunc", (PyCFunction)(void (*)(void))ckd_py_op_ufunc, METH_VARARGS | METH_KEYWORDS,
     ckd_op_ufunc_doc},
    {"loops", ckd_py_loops, METH_O, ckd_loops_doc},
    {"data_of", ckd_py_data_of, METH_O, ckd_data_of_doc},
    {NULL, NULL, 0, NULL},
};

static int ckd_exec(PyObject *m) {
  if (PyArray_ImportNumPyAPI() < 0 || PyUFunc_ImportUFuncAPI() < 0 ||
      ckpy_errors_init() < 0 || ckpy_types_init() < 0) {
    return -1;
  }
  if (PyType_Ready(&ckd_data_type) < 0 || ckd_function_setup(m) < 0) {
    return -1;
  }
  if (PyModule_AddObjectRef(m, "UFuncData", (PyObject *)&ckd_data_type) < 0 ||
      PyModule_AddIntConstant(m, "MAX_NIN", CKD_MAX_NIN) < 0 ||
      PyModule_AddIntConstant(m, "PROBE_ELEMENTS", CKD_PROBE_ELEMENTS) < 0) {
    return -1;
  }
  return 0;
}

static PyModuleDef_Slot ckd_slots[] = {
    {Py_mod_exec, (void *)ckd_exec},
    {0, NULL},
};

static struct PyModuleDef ckd_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ckernels._ufuncs",
    .m_doc = "NumPy ufuncs whose inner loops are ckernels (see src/python/ufuncs/module.c).",
    .m_size = 0,
    .m_methods = ckd_methods,
    .m_slots = ckd_slots,
};

PyMODINIT_FUNC PyInit__ufuncs(void);
PyMODINIT_FUNC PyInit__ufuncs(void) { return PyModuleDef_Init(&ckd_module); }
