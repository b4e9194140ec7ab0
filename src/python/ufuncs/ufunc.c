/*
 * ufunc.c -- the ufuncs ckernels._ufuncs makes and what each owns.
 *
 * Ownership
 *   Each ufunc owns one `UFuncData` object (stored in the ufunc's `obj`
 *   field, which NumPy decrefs and GC-visits).  UFuncData owns the loops
 *   (loops.c); NumPy's loops get a ckd_loop as their auxdata, whose
 *   free/clone are no-ops because the loop outlives every call (the caller
 *   holds the ufunc).  A ufunc and its compile callback may form a cycle;
 *   the GC collects it.
 */
#include "ufuncs_internal.h"

static int ckd_data_traverse(ckd_data *self, visitproc visit, void *arg) {
  Py_VISIT(self->identity);
  Py_VISIT(self->compile);
  return 0;
}

static int ckd_data_clear(ckd_data *self) {
  Py_CLEAR(self->compile);
  Py_CLEAR(self->identity);
  return 0;
}

static void ckd_data_dealloc(ckd_data *self) {
  PyObject_GC_UnTrack(self);
  ckd_data_clear(self);
  ckd_time_release(self);
  for (Py_ssize_t i = 0; i < self->nloops; i++) {
    ckd_loop_free(self->loops[i]);
  }
  PyMem_Free(self->loops);
  PyMem_Free(self->types);
  PyMem_Free(self->functions);
  PyMem_Free(self->data);
  for (int i = 0; i < self->ntypes; i++) {
    Py_DECREF(self->type_dt[i]);
  }
  Py_XDECREF(self->name);
  Py_XDECREF(self->doc);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *ckd_data_repr(ckd_data *self) {
  return PyUnicode_FromFormat("<ckernels._ufuncs.UFuncData '%s': %zd loop(s)%s%s>",
                              PyBytes_AS_STRING(self->name), self->nloops,
                              self->op ? ", registry operation" : "",
                              self->compile ? ", compiled lazily" : "");
}

PyTypeObject ckd_data_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ckernels._ufuncs.UFuncData",
    .tp_doc = "What a ufunc made by ckernels._ufuncs owns (its loops and kernels).",
    .tp_basicsize = sizeof(ckd_data),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)ckd_data_traverse,
    .tp_clear = (inquiry)ckd_data_clear,
    .tp_dealloc = (destructor)ckd_data_dealloc,
    .tp_repr = (reprfunc)ckd_data_repr,
};

ckd_data *ckd_data_of(PyObject *ufunc) {
  if (ufunc == NULL || !PyObject_TypeCheck(ufunc, &PyUFunc_Type)) {
    return NULL;
  }
  PyObject *obj = ((PyUFuncObject *)ufunc)->obj;
  if (obj == NULL || Py_TYPE(obj) != &ckd_data_type) {
    return NULL;
  }
  return (ckd_data *)obj;
}

ckd_data *ckd_data_of_arg(PyObject *ufunc) {
  ckd_data *d = ckd_data_of(ufunc);
  if (d == NULL) {
    ckpy_raisef(CK_ERR_TYPE, "expected a ufunc made by ckernels._ufuncs, not %R", ufunc);
  }
  return d;
}

int ckd_check_open(const ckd_data *d) {
  if (d->resolved && d->compile == NULL) {
    ckpy_raisef(CK_ERR_INVALID_STATE,
                "%s: cannot add a loop to a ufunc that has resolved calls (NumPy caches "
                "its answers); make a new ufunc", PyBytes_AS_STRING(d->name));
    return -1;
  }
  return 0;
}

PyObject *ckd_new_ufunc(const char *name, int nin, PyObject *doc, PyObject *identity,
                        PyObject *reorderable_obj, PyObject *compile, const ck_op *op) {
  if (nin < 1 || nin > CKD_MAX_NIN) {
    return ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "%s: nin must be 1..%d, not %d", name,
                       CKD_MAX_NIN, nin);
  }
  if (compile != NULL && compile != Py_None && !PyCallable_Check(compile)) {
    return ckpy_raisef(CK_ERR_TYPE, "%s: compile must be callable, not %R", name, compile);
  }
  if (doc != NULL && doc != Py_None && !PyUnicode_Check(doc)) {
    return ckpy_raisef(CK_ERR_TYPE, "%s: doc must be a str, not %R", name, doc);
  }
  int has_identity = identity != NULL && identity != Py_None;
  int reorderable = has_identity;
  if (reorderable_obj != NULL && reorderable_obj != Py_None) {
    reorderable = PyObject_IsTrue(reorderable_obj);
    if (reorderable < 0) {
      return NULL;
    }
  }
  ckd_data *d = PyObject_GC_New(ckd_data, &ckd_data_type);
  if (d == NULL) {
    return NULL;
  }
  d->name = PyBytes_FromString(name);
  d->doc = NULL;
  d->identity = Py_NewRef(has_identity ? identity : Py_None);
  d->compile = compile != NULL && compile != Py_None ? Py_NewRef(compile) : NULL;
  d->op = op;
  d->nin = nin;
  d->reorderable = reorderable;
  /* a sum (identity 0): NumPy's add reduces floats pairwise (pairwise.c) */
  d->pairwise = 0;
  if (reorderable && has_identity &&
      (PyLong_CheckExact(identity) || PyFloat_CheckExact(identity))) {
    int zero = PyObject_Not(identity);
    if (zero < 0) {
      PyErr_Clear();
    }
    d->pairwise = zero == 1 && (op == NULL || strcmp(name, "add") == 0);
  }
  d->resolved = 0;
  d->cmp = -1;
  d->time_slot = 0;
  d->ntypes = 0;
  d->nloops = d->cap = 0;
  d->loops = NULL;
  d->types = NULL;
  d->functions = NULL;
  d->data = NULL;
  PyObject_GC_Track(d);
  if (d->name == NULL) {
    Py_DECREF(d);
    return NULL;
  }
  if (doc != NULL && doc != Py_None) {
    d->doc = PyUnicode_AsUTF8String(doc);
    if (d->doc == NULL) {
      Py_DECREF(d);
      return NULL;
    }
  }
  int id_kind = has_identity ? PyUFunc_IdentityValue
                : reorderable ? PyUFunc_ReorderableNone
                              : PyUFunc_None;
  PyObject *uf = PyUFunc_FromFuncAndDataAndSignatureAndIdentity(
      NULL, NULL, NULL, 0, nin, 1, id_kind, PyBytes_AS_STRING(d->name),
      d->doc ? PyBytes_AS_STRING(d->doc) : NULL, 0, NULL, has_identity ? identity : NULL);
  if (uf == NULL) {
    Py_DECREF(d);
    return NULL;
  }
  /* The ufunc owns d (NumPy decrefs and GC-visits `obj`); like
   * numpy.frompyfunc, start tracking the ufunc now that it holds an object. */
  ((PyUFuncObject *)uf)->obj = (PyObject *)d;
  if (!PyObject_GC_IsTracked(uf)) {
    PyObject_GC_Track(uf);
  }
  /* No legacy type resolution: calls are resolved by the promoter below
   * only, although ufunc.types lists the loops (ckd_update_types). */
  ((PyUFuncObject *)uf)->type_resolver = NULL;

  PyObject *none_tuple = PyTuple_New(nin + 1);
  PyObject *capsule = PyCapsule_New((void *)&ckd_promoter, "numpy._ufunc_promoter", NULL);
  int rc = -1;
  if (none_tuple != NULL && capsule != NULL) {
    for (int i = 0; i <= nin; i++) {
      PyTuple_SET_ITEM(none_tuple, i, Py_NewRef(Py_None));
    }
    rc = PyUFunc_AddPromoter(uf, none_tuple, capsule);
  }
  Py_XDECREF(none_tuple);
  Py_XDECREF(capsule);
  if (rc < 0) {
    Py_DECREF(uf);
    return NULL;
  }
  return uf;
}

int ckd_update_types(PyObject *ufunc, ckd_data *d) {
  Py_ssize_t n = d->nloops;
  int nargs = d->nin + 1;
  char *types = PyMem_Malloc((size_t)(n * nargs) + 1);
  PyUFuncGenericFunction *functions = PyMem_Malloc((size_t)n * sizeof *functions + 1);
  void **data = PyMem_Malloc((size_t)n * sizeof *data + 1);
  if (types == NULL || functions == NULL || data == NULL) {
    PyMem_Free(types);
    PyMem_Free(functions);
    PyMem_Free(data);
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t listed = 0; /* loops of NumPy's legacy types (not StringDType) */
  for (Py_ssize_t i = 0; i < n; i++) {
    ckd_loop *L = d->loops[i];
    int legacy = 1;
    for (int k = 0; k < nargs; k++) {
      int t = L->dtypes[k]->type_num;
      legacy &= t >= 0 && t < NPY_NTYPES_LEGACY;
    }
    if (!legacy || !L->primary) { /* time loops: one entry per DType signature */
      continue;
    }
    for (int k = 0; k < nargs; k++) {
      types[listed * nargs + k] = (char)L->dtypes[k]->type_num;
    }
    functions[listed] = &ckd_legacy_loop;
    data[listed++] = L;
  }
  PyUFuncObject *uf = (PyUFuncObject *)ufunc;
  uf->types = types;
  uf->functions = functions;
  uf->data = data;
  uf->ntypes = (int)listed;
  PyMem_Free(d->types);
  PyMem_Free(d->functions);
  PyMem_Free(d->data);
  d->types = types;
  d->functions = functions;
  d->data = data;
  return 0;
}

int ckd_read_type_table(ckd_data *d, PyObject *dtype_of_id) {
  PyObject *items = PyMapping_Items(dtype_of_id);
  if (items == NULL) {
    return -1;
  }
  int rc = -1;
  Py_ssize_t n = PyList_GET_SIZE(items);
  if (n > CKD_MAX_TYPES) {
    ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "op_ufunc: at most %d types, got %zd",
                CKD_MAX_TYPES, n);
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *kv = PyList_GET_ITEM(items, i);
    long id = PyLong_AsLong(PyTuple_GET_ITEM(kv, 0));
    if (id == -1 && PyErr_Occurred()) {
      goto done;
    }
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter(PyTuple_GET_ITEM(kv, 1), &descr)) {
      goto done;
    }
    if (ckd_check_descr(d, descr, (ck_type_id)id) < 0) {
      Py_DECREF(descr);
      goto done;
    }
    d->type_dt[d->ntypes] = NPY_DTYPE(descr);
    Py_INCREF(d->type_dt[d->ntypes]);
    d->type_id[d->ntypes++] = (ck_type_id)id;
    Py_DECREF(descr);
  }
  rc = 0;
done:
  Py_DECREF(items);
  return rc;
}
