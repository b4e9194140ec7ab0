/*
 * loops.c -- the loops of ckernels._ufuncs's ufuncs.
 *
 * Each loop is a NumPy 2 ArrayMethod (PyUFunc_AddLoopFromSpec) for one DType
 * signature, whose strided loop calls one built ckernel -- a `ck_prefix *`
 * built for CK_KERNEL_REQUEST_STRIDED -- through ck_prefix_strided(k)(dst,
 * ds, src, ss, n, k) (parallel.c).  Two kernel sources:
 *   - a jitted function's compiled signature (`ck_jit_kernel_desc`, built
 *     with ck_jit_make_kernel): ckd_add_jit_loop;
 *   - a registry operation's kernel for one argument-type tuple
 *     (ck_op_make_kernel): ckd_add_op_loops.
 *
 * Loops run without the GIL (no NPY_METH_REQUIRES_PYAPI).  A kernel that
 * fails returns a ck_status after ck_set_error; the loop takes the GIL,
 * raises the ckernels.errors class of the status with ck_last_error()'s
 * message, and returns -1: NumPy stops (also between buffered chunks) and
 * propagates the exception.
 */
#include "ufuncs_internal.h"

#include <string.h>

static void ckd_aux_free(NpyAuxData *aux) { (void)aux; }
static NpyAuxData *ckd_aux_clone(NpyAuxData *aux) { return aux; }

void ckd_loop_free(ckd_loop *L) {
  if (L == NULL) {
    return;
  }
  ck_kernel_builder_destroy(&L->ckb); /* may release compiled code (GIL held) */
  for (int i = 0; i <= L->nin; i++) {
    Py_XDECREF(L->dtypes[i]);
    Py_XDECREF(L->descrs[i]);
  }
  PyMem_Free(L);
}

/* ---- the ArrayMethod ----------------------------------------------------- */

/* The strided loop of every ArrayMethod made here. */
static int ckd_strided_loop(PyArrayMethod_Context *context, char *const *data,
                            const npy_intp *dimensions, const npy_intp *strides,
                            NpyAuxData *aux) {
  ckd_loop *L = (ckd_loop *)aux;
  ck_status st;
  ckd_data *d = ckd_data_of(context->caller);
  if (ckd_pairwise_applies(d, L, data, strides)) { /* NumPy's float sums */
    st = ckd_pairwise_reduce(L, d->op != NULL, data, dimensions[0], strides);
  } else {
    st = ckd_run(L, data, dimensions[0], strides);
  }
  if (st != CK_OK) {
    ckpy_raise_last(st);
    return -1;
  }
  return 0;
}

/* The strided loop of the Python-int comparisons (they need the GIL). */
static int ckd_pyint_strided_loop(PyArrayMethod_Context *context, char *const *data,
                                  const npy_intp *dimensions, const npy_intp *strides,
                                  NpyAuxData *aux) {
  (void)context;
  return ckd_pyint_run((const ckd_loop *)aux, data, dimensions[0], strides);
}

void ckd_legacy_loop(char **args, npy_intp const *dimensions, npy_intp const *steps,
                     void *data) {
  const ckd_loop *L = data;
  if (L->pyint >= 0) {
    PyGILState_STATE g = PyGILState_Ensure();
    (void)ckd_pyint_run(L, args, dimensions[0], steps);
    PyGILState_Release(g);
    return;
  }
  ck_status st = ckd_run((ckd_loop *)L, args, dimensions[0], steps);
  if (st != CK_OK) {
    ckpy_raise_last(st); /* a legacy loop reports through the exception */
  }
}

static ckd_loop *ckd_find_loop(ckd_data *d, PyArray_Descr *const *descrs) {
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    int ok = 1;
    for (int k = 0; k <= d->nin && ok; k++) {
      ok = (PyArray_DTypeMeta *)Py_TYPE(descrs[k]) == L->dtypes[k];
    }
    if (ok && L->times) { /* a time loop of another unit is another loop */
      ok = ckd_time_loop_matches(L, descrs, d->nin + 1);
    }
    if (ok) {
      return L;
    }
  }
  return NULL;
}

static int ckd_get_loop(PyArrayMethod_Context *context, int aligned, int move_references,
                        const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,
                        NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags) {
  (void)move_references;
  (void)strides;
  ckd_data *d = ckd_data_of(context->caller);
  if (d == NULL) {
    ckpy_raisef(CK_ERR_INVALID_STATE,
                "a ckernels loop was called by %R, not by the ufunc that owns it",
                context->caller ? context->caller : Py_None);
    return -1;
  }
  if (!aligned) {
    /* Not reachable: the methods do not claim NPY_METH_SUPPORTS_UNALIGNED,
     * so NumPy aligns (buffers) the operands. */
    ckpy_raisef(CK_ERR_INVALID_STATE, "%s: unaligned operands reached a ckernels loop",
                PyBytes_AS_STRING(d->name));
    return -1;
  }
  ckd_loop *L = ckd_find_loop(d, context->descriptors);
  if (L == NULL) {
    ckpy_raisef(CK_ERR_INVALID_STATE, "%s: no ckernels loop for the resolved dtypes",
                PyBytes_AS_STRING(d->name));
    return -1;
  }
  *out_transferdata = &L->aux;
  if (L->pyint >= 0) {
    *out_loop = &ckd_pyint_strided_loop;
    *flags = NPY_METH_REQUIRES_PYAPI; /* reads Python ints */
  } else {
    *out_loop = L->strings ? &ckd_string_loop : &ckd_strided_loop;
    *flags = 0; /* no Python API needed; floating-point flags are checked */
  }
  return 0;
}

static int ckd_get_reduction_initial(PyArrayMethod_Context *context,
                                     npy_bool reduction_is_empty, void *initial) {
  (void)reduction_is_empty;
  ckd_data *d = ckd_data_of(context->caller);
  if (d == NULL || d->identity == NULL || d->identity == Py_None) {
    return 0; /* no identity: NumPy starts from the first element */
  }
  PyObject *ident = Py_NewRef(d->identity);
  if (PyLong_CheckExact(ident) && PyTypeNum_ISUNSIGNED(context->descriptors[0]->type_num)) {
    /* As NumPy does for its bitwise ufuncs: a Python -1 means all bits set,
     * which a Python int cannot say to an unsigned type; an int64 scalar
     * converts (modulo 2**n). */
    Py_SETREF(ident, PyObject_CallOneArg((PyObject *)&PyLongLongArrType_Type, ident));
    if (ident == NULL) {
      return -1;
    }
  }
  int rc = PyArray_Pack(context->descriptors[0], initial, ident);
  Py_DECREF(ident);
  return rc < 0 ? -1 : 1;
}

/* ---- making loops -------------------------------------------------------- */

int ckd_check_descr(const ckd_data *d, PyArray_Descr *descr, ck_type_id id) {
  if (id == CK_TYPE_STRING && descr->type_num == NPY_VSTRING) {
    return 0; /* NumPy's StringDType: string_loops.c */
  }
  if ((id == CK_TYPE_DATETIME && descr->type_num == NPY_DATETIME) ||
      (id == CK_TYPE_TIMEDELTA && descr->type_num == NPY_TIMEDELTA)) {
    if (PyArray_ISNBO(descr->byteorder)) {
      return 0; /* M8 / m8 of one unit: time_loops.c */
    }
  }
  if (id == CK_TYPE_UNINITIALIZED || ckpy_id_of_descr(descr) != id) {
    ckpy_raisef(CK_ERR_TYPE, "%s: dtype %R does not hold ckernel type '%s'",
                PyBytes_AS_STRING(d->name), (PyObject *)descr, ck_type_id_name(id));
    return -1;
  }
  return 0;
}

ckd_loop *ckd_loop_alloc(const ckd_data *d) {
  ckd_loop *L = PyMem_Calloc(1, sizeof *L);
  if (L == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  L->aux.free = &ckd_aux_free;
  L->aux.clone = &ckd_aux_clone;
  L->nin = d->nin;
  L->pyint = -1;
  L->cmp = -1;
  ck_kernel_builder_init(&L->ckb);
  return L;
}

/* A new loop (no kernel yet) for `dtypes` (a sequence of nin + 1 dtype-likes)
 * describing ckernel ids `ids`: checks that each is a native numeric NumPy
 * dtype of the same kind and size. */
static ckd_loop *ckd_loop_new(const ckd_data *d, PyObject *dtypes, const ck_type_id *ids) {
  int nargs = d->nin + 1;
  PyObject *seq = PySequence_Fast(dtypes, "dtypes must be a sequence of NumPy dtypes");
  if (seq == NULL) {
    return NULL;
  }
  if (PySequence_Fast_GET_SIZE(seq) != nargs) {
    ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "%s: %d dtypes expected (inputs, then the output), "
                "got %zd", PyBytes_AS_STRING(d->name), nargs, PySequence_Fast_GET_SIZE(seq));
    Py_DECREF(seq);
    return NULL;
  }
  ckd_loop *L = ckd_loop_alloc(d);
  if (L == NULL) {
    Py_DECREF(seq);
    return NULL;
  }
  for (int i = 0; i < nargs; i++) {
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter(PySequence_Fast_GET_ITEM(seq, i), &descr)) {
      goto fail;
    }
    if (ckd_check_descr(d, descr, ids[i]) < 0) {
      Py_DECREF(descr);
      goto fail;
    }
    L->dtypes[i] = NPY_DTYPE(descr);
    Py_INCREF(L->dtypes[i]);
    L->ids[i] = ids[i];
    L->itemsize[i] = PyDataType_ELSIZE(descr);
    if (ids[i] == CK_TYPE_STRING) {
      L->strings |= 1u << i;
    }
    if (descr->type_num == NPY_DATETIME || descr->type_num == NPY_TIMEDELTA) {
      L->times |= 1u << i;
    }
    L->descrs[i] = descr; /* takes the reference */
  }
  Py_DECREF(seq);
  return L;
fail:
  Py_DECREF(seq);
  ckd_loop_free(L);
  return NULL;
}

/* The same kernel for the same dtypes again is a no-op (two threads
 * compiling the same types lazily); another kernel for them is an error. */
int ckd_add_loop(PyObject *ufunc, ckd_data *d, ckd_loop *L) {
  const ckd_loop *primary = NULL; /* time loops: the one of these DTypes */
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    if (memcmp(d->loops[i]->dtypes, L->dtypes, (size_t)(d->nin + 1) * sizeof L->dtypes[0]) == 0) {
      if (L->times && d->loops[i]->times) {
        if (d->loops[i]->primary) {
          primary = d->loops[i];
        }
        if (!ckd_time_loop_matches(d->loops[i], L->descrs, d->nin + 1)) {
          continue; /* other units: another loop of the same ArrayMethod */
        }
      }
      int same = d->loops[i]->strided == L->strided;
      if (!same) {
        ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "%s: there is a loop for these dtypes already "
                    "(%s)", PyBytes_AS_STRING(d->name), d->loops[i]->name);
      }
      ckd_loop_free(L);
      return same ? 0 : -1;
    }
  }
  if (d->nloops == d->cap) {
    Py_ssize_t cap = d->cap ? 2 * d->cap : 8;
    ckd_loop **p = PyMem_Realloc(d->loops, (size_t)cap * sizeof *p);
    if (p == NULL) {
      ckd_loop_free(L);
      PyErr_NoMemory();
      return -1;
    }
    d->loops = p;
    d->cap = cap;
  }
  if (primary != NULL) {
    /* NumPy holds one ArrayMethod per DType signature: the primary's
     * resolver (time_loops.c) finds this loop by the operands' units */
    d->loops[d->nloops++] = L;
    return 0;
  }
  PyType_Slot slots[] = {
      {NPY_METH_get_loop, (void *)&ckd_get_loop},
      {NPY_METH_get_reduction_initial, (void *)&ckd_get_reduction_initial},
      {0, NULL},
  };
  if (L->strings) {
    /* StringDType is parametric: outputs get a new instance (string_loops.c);
     * no reduction identity (a Python identity is no string) */
    slots[1].slot = NPY_METH_resolve_descriptors;
    slots[1].pfunc = (void *)ckd_string_resolver(d->nin);
  } else if (d->nin != 2) {
    slots[1].slot = 0; /* only binary functions reduce */
    slots[1].pfunc = NULL;
  }
  PyType_Slot time_slots[] = {
      {NPY_METH_get_loop, (void *)&ckd_get_loop},
      {NPY_METH_resolve_descriptors, NULL},
      {d->nin == 2 ? NPY_METH_get_reduction_initial : 0,
       d->nin == 2 ? (void *)&ckd_get_reduction_initial : NULL},
      {0, NULL},
  };
  if (L->times) {
    /* units are parameters of M8 / m8: the resolver picks the loop of the
     * operands' units (and gives string outputs a new StringDType) */
    time_slots[1].pfunc = (void *)ckd_time_resolver(d);
    if (time_slots[1].pfunc == NULL) {
      ckd_loop_free(L);
      return -1;
    }
  }
  PyArrayMethod_Spec spec = {
      .name = L->name,
      .nin = d->nin,
      .nout = 1,
      .casting = NPY_NO_CASTING,
      .flags = d->reorderable ? NPY_METH_IS_REORDERABLE : 0,
      .dtypes = L->dtypes,
      .slots = L->times ? time_slots : slots,
  };
  if (PyUFunc_AddLoopFromSpec(ufunc, &spec) < 0) {
    ckd_loop_free(L);
    return -1;
  }
  L->primary = 1;
  d->loops[d->nloops++] = L;
  return ckd_update_types(ufunc, d);
}

/* L's kernel was built into L->ckb: keep its root and entry point. */
static void ckd_loop_built(ckd_loop *L) {
  L->kernel = ck_kernel_builder_get(&L->ckb, 0);
  L->strided = ck_prefix_strided(L->kernel);
}

int ckd_add_jit_loop(PyObject *ufunc, ckd_data *d, const ck_jit_kernel_desc *desc,
                     PyObject *dtypes) {
  if ((int)desc->nsrc != d->nin) {
    ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "%s: the kernel takes %u argument(s), the ufunc %d",
                PyBytes_AS_STRING(d->name), desc->nsrc, d->nin);
    return -1;
  }
  ck_type_id ids[CKD_MAX_ARGS];
  memcpy(ids, desc->src_ids, (size_t)d->nin * sizeof ids[0]);
  ids[d->nin] = desc->dst_id;
  ckd_loop *L = ckd_loop_new(d, dtypes, ids);
  if (L == NULL) {
    return -1;
  }
  snprintf(L->name, sizeof L->name, "%.*s", (int)CK_JIT_NAME_MAX, desc->name);
  L->desc = *desc;
  ck_status st = ck_jit_make_kernel(&L->ckb, 0, desc, NULL, CK_KERNEL_REQUEST_STRIDED, NULL);
  if (st != CK_OK) {
    ckpy_raise_last(st);
    ckd_loop_free(L);
    return -1;
  }
  ckd_loop_built(L);
  return ckd_add_loop(ufunc, d, L);
}

/* The NumPy dtypes of registry kernel types `ids` (nin + 1), through
 * `dtype_of_id`: a new tuple, Py_None (a type NumPy has no dtype for:
 * string, ...) or NULL with an exception. */
static PyObject *ckd_op_dtypes(PyObject *dtype_of_id, const ck_type_id *ids, int nin) {
  PyObject *dts = PyTuple_New(nin + 1);
  if (dts == NULL) {
    return NULL;
  }
  for (int i = 0; i <= nin; i++) {
    PyObject *key = PyLong_FromLong((long)ids[i]);
    PyObject *dt = key ? PyObject_GetItem(dtype_of_id, key) : NULL;
    Py_XDECREF(key);
    if (dt == NULL) {
      Py_DECREF(dts);
      if (!PyErr_ExceptionMatches(PyExc_KeyError)) {
        return NULL;
      }
      PyErr_Clear();
      return Py_NewRef(Py_None);
    }
    PyTuple_SET_ITEM(dts, i, dt);
  }
  return dts;
}

int ckd_add_op_loops(PyObject *ufunc, ckd_data *d, const char *op_name,
                     PyObject *dtype_of_id) {
  const ck_op *op = d->op;
  int nin = d->nin;
  size_t count = ck_op_kernel_count(op);
  for (size_t k = 0; k < count; k++) {
    ck_type_id ids[CKD_MAX_ARGS], ret;
    if (ck_op_kernel_signature(op, k, &ret, ids, CKD_MAX_NIN) != CK_OK) {
      continue; /* dropped meanwhile */
    }
    ids[nin] = ret;
    PyObject *dts = ckd_op_dtypes(dtype_of_id, ids, nin);
    if (dts == NULL) {
      return -1;
    }
    if (dts == Py_None) { /* not a NumPy loop */
      Py_DECREF(dts);
      continue;
    }
    ckd_loop *L = ckd_loop_new(d, dts, ids);
    Py_DECREF(dts);
    if (L == NULL) {
      return -1;
    }
    int n = snprintf(L->name, sizeof L->name, "%s(", op_name);
    for (int i = 0; i < nin && n < (int)sizeof L->name; i++) {
      n += snprintf(L->name + n, sizeof L->name - (size_t)n, "%s%s", i ? ", " : "",
                    ck_type_id_name(ids[i]));
    }
    if (n < (int)sizeof L->name) {
      snprintf(L->name + n, sizeof L->name - (size_t)n, ") -> %s", ck_type_id_name(ret));
    }
    ck_type_id got;
    ck_status st = ck_op_make_kernel(op, &L->ckb, 0, CK_KERNEL_REQUEST_STRIDED, (size_t)nin,
                                     ids, &got, NULL);
    if (st == CK_OK && got != ret) {
      st = ck_set_error(CK_ERR_INVALID_STATE, "op_ufunc: the registry changed meanwhile");
    }
    if (st != CK_OK) {
      ckpy_raise_last(st);
      ckd_loop_free(L);
      return -1;
    }
    ckd_loop_built(L);
    if (ckd_add_loop(ufunc, d, L) < 0) {
      return -1;
    }
  }
  return d->cmp >= 0 ? ckd_add_pyint_loops(ufunc, d) : 0;
}
