/*
 * gufunc.c -- generalized ufuncs (NumPy's core dims) whose loops are jitted
 * kernels with core dims (jit.h: ck_jit_core_kernel, docs/dims.md).
 *
 * A jitted function whose signatures have fixed and symbolic core dims only
 * (`float64(N * float64, N * float64)`) gets a real NumPy gufunc with the
 * signature "(n),(n)->()": NumPy does the outer-dim broadcasting, `axes=` /
 * `axis=` / `keepdims=`, `out=`, casting and `__array_ufunc__` overrides
 * (pandas, xarray, dask), and checks the core dim sizes.  Each loop is a
 * NumPy 2 ArrayMethod (PyUFunc_AddLoopFromSpec) for one DType signature.
 * Its strided loop gets NumPy's gufunc arguments -- `dimensions` = {outer
 * count, core dim sizes...}, `strides` = {outer strides per operand, core
 * strides per operand's core dims} -- lays them out as a ck_jit_core_kernel
 * on the stack (the result's core dims first, then each argument's, as
 * ck_jit_make_core_kernel does from arrmeta) and calls the compiled strided
 * entry point over the outer elements; long runs are split over the
 * library's thread pool (the kernel data is read-only).
 *
 * Errors: a failing kernel's status and message are raised as the
 * ckernels.errors class (py_errors.h), as for every loop of this module.
 */
#include "ufuncs_internal.h"

#include <string.h>

/* Most core dims over all operands of one loop. */
#define CKG_MAX_CORE 32
/* Outer elements from which a run is split over the pool, and the least
 * each chunk gets. */
#define CKG_PARALLEL_MIN 8192
#define CKG_PARALLEL_CHUNK 2048

/* One loop (never moved while its gufunc lives: NumPy holds &aux). */
typedef struct ckg_loop {
  NpyAuxData aux;                          /* must stay first               */
  ck_expr_strided_t strided;
  ck_memblock *code;                       /* owned reference               */
  int nin;
  PyArray_DTypeMeta *dtypes[CKD_MAX_ARGS]; /* owned: inputs..., output      */
  int ndims;                               /* core dim records              */
  /* record r reads NumPy's core dim size dim_ix[r] and core stride
   * stride_ix[r] (indices into dimensions[1:] and strides[nargs:]) */
  int dim_ix[CKG_MAX_CORE];
  int stride_ix[CKG_MAX_CORE];
  char name[CK_JIT_NAME_MAX];
} ckg_loop;

/* What a gufunc made here owns (its `obj`, a capsule): name, doc, loops. */
typedef struct ckg_data {
  PyObject *name; /* bytes */
  PyObject *doc;  /* bytes or NULL */
  /* what `ufunc.types` lists (loops of NumPy's legacy types, as
   * numba.guvectorize's do; ckg_list_types): owned, PyMem */
  char *types;
  PyUFuncGenericFunction *functions;
  void **data;
  Py_ssize_t nloops;
  ckg_loop *loops[];
} ckg_data;

static const char *const ckg_capsule_name = "ckernels._ufuncs.gufunc_data";

static void ckg_aux_free(NpyAuxData *aux) { (void)aux; }
static NpyAuxData *ckg_aux_clone(NpyAuxData *aux) { return aux; }

static void ckg_loop_free(ckg_loop *L) {
  if (L == NULL) {
    return;
  }
  ck_memblock_decref(L->code); /* may release compiled code (GIL held) */
  for (int i = 0; i <= L->nin; i++) {
    Py_XDECREF(L->dtypes[i]);
  }
  PyMem_Free(L);
}

static void ckg_data_free(PyObject *capsule) {
  ckg_data *d = PyCapsule_GetPointer(capsule, ckg_capsule_name);
  if (d == NULL) {
    PyErr_Clear();
    return;
  }
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckg_loop_free(d->loops[i]);
  }
  Py_XDECREF(d->name);
  Py_XDECREF(d->doc);
  PyMem_Free(d->types);
  PyMem_Free(d->functions);
  PyMem_Free(d->data);
  PyMem_Free(d);
}

/* ---- running ------------------------------------------------------------- */

typedef struct ckg_kernel {
  ck_jit_core_kernel k;
  ck_jit_core_dim dims[CKG_MAX_CORE];
} ckg_kernel;

typedef struct ckg_run {
  const ckg_loop *L;
  ck_prefix *self;
  char *const *data;
  const npy_intp *strides;
} ckg_run;

static ck_status ckg_rows(void *ctx, size_t begin, size_t end, unsigned thread_index) {
  (void)thread_index;
  const ckg_run *r = ctx;
  const char *src[CKD_MAX_NIN];
  int nin = r->L->nin;
  for (int j = 0; j < nin; j++) {
    src[j] = r->data[j] + (npy_intp)begin * r->strides[j];
  }
  ck_status st = (ck_status)r->L->strided(r->data[nin] + (npy_intp)begin * r->strides[nin],
                                          r->strides[nin], src, r->strides, end - begin,
                                          r->self);
  if (st != CK_OK) {
    ck_error_offset_element((int64_t)begin); /* error.h: within the whole run */
  }
  return st;
}

static int ckg_strided_loop(PyArrayMethod_Context *context, char *const *data,
                            const npy_intp *dimensions, const npy_intp *strides,
                            NpyAuxData *aux) {
  (void)context;
  const ckg_loop *L = (const ckg_loop *)aux;
  int nargs = L->nin + 1;
  ckg_kernel kd;
  memset(&kd, 0, sizeof kd);
  kd.k.base.code = L->code; /* borrowed: the kernel lives on this stack */
  kd.k.ndims = L->ndims;
  for (int r = 0; r < L->ndims; r++) {
    kd.k.dims[r].kind = CK_JIT_DIM_STRIDED;
    kd.k.dims[r].size = dimensions[1 + L->dim_ix[r]];
    kd.k.dims[r].stride = strides[nargs + L->stride_ix[r]];
  }
  (void)ck_prefix_set_function(&kd.k.base.base, CK_KERNEL_REQUEST_STRIDED, NULL, L->strided);
  npy_intp n = dimensions[0];
  ckg_run run = {L, &kd.k.base.base, data, strides};
  ck_status st;
  if (n >= CKG_PARALLEL_MIN && ck_get_num_threads() > 1) {
    st = ck_parallel_for((size_t)n, CKG_PARALLEL_CHUNK, ckg_rows, &run);
  } else {
    st = n > 0 ? ckg_rows(&run, 0, (size_t)n, 0) : CK_OK;
  }
  if (st != CK_OK) {
    ckpy_raise_last(st);
    return -1;
  }
  return 0;
}

static ckg_data *ckg_data_of(PyObject *ufunc) {
  PyObject *obj = ((PyUFuncObject *)ufunc)->obj;
  if (obj == NULL || !PyCapsule_IsValid(obj, ckg_capsule_name)) {
    return NULL;
  }
  return PyCapsule_GetPointer(obj, ckg_capsule_name);
}

static int ckg_get_loop(PyArrayMethod_Context *context, int aligned, int move_references,
                        const npy_intp *strides, PyArrayMethod_StridedLoop **out_loop,
                        NpyAuxData **out_transferdata, NPY_ARRAYMETHOD_FLAGS *flags) {
  (void)move_references;
  (void)strides;
  ckg_data *d = ckg_data_of(context->caller);
  if (d == NULL || !aligned) {
    ckpy_raisef(CK_ERR_INVALID_STATE, "a ckernels gufunc loop was called by %R unaligned "
                "or not by the gufunc that owns it",
                context->caller ? context->caller : Py_None);
    return -1;
  }
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckg_loop *L = d->loops[i];
    int ok = 1;
    for (int k = 0; k <= L->nin && ok; k++) {
      ok = (PyArray_DTypeMeta *)Py_TYPE(context->descriptors[k]) == L->dtypes[k];
    }
    if (ok) {
      *out_loop = &ckg_strided_loop;
      *out_transferdata = &L->aux;
      *flags = 0;
      return 0;
    }
  }
  ckpy_raisef(CK_ERR_INVALID_STATE, "%s: no ckernels loop for the resolved dtypes",
              PyBytes_AS_STRING(d->name));
  return -1;
}

/* ---- type resolution --------------------------------------------------------- */

/* Does an operand of DType `op` pass safely to `to`?  Python int / float /
 * complex (NEP 50 weak scalars) by kind, concrete DTypes by NumPy's safe
 * casting. */
static int ckg_castable(PyArray_DTypeMeta *op, PyArray_DTypeMeta *to) {
  if (op == to) {
    return 1;
  }
  PyArray_Descr *t = PyArray_DescrFromType(to->type_num);
  if (t == NULL) {
    PyErr_Clear();
    return 0;
  }
  char k = t->kind;
  int ok = 0;
  if (op->scalar_type == &PyLong_Type && op->type_num < 0) {
    ok = k == 'i' || k == 'u' || k == 'f' || k == 'c';
  } else if (op->scalar_type == &PyFloat_Type && op->type_num < 0) {
    ok = k == 'f' || k == 'c';
  } else if (op->scalar_type == &PyComplex_Type && op->type_num < 0) {
    ok = k == 'c';
  } else if (op->type_num >= 0) {
    PyArray_Descr *f = PyArray_DescrFromType(op->type_num);
    if (f != NULL) {
      ok = PyArray_CanCastTypeTo(f, t, NPY_SAFE_CASTING);
      Py_DECREF(f);
    } else {
      PyErr_Clear();
    }
  }
  Py_DECREF(t);
  return ok;
}

/* NumPy asks when no loop matches the operands' DTypes exactly: the first
 * loop (signature order) every input converts to safely, NumPy then casts
 * the inputs (as numba.guvectorize's gufuncs do). */
static int ckg_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                        PyArray_DTypeMeta *const signature[],
                        PyArray_DTypeMeta *new_op_dtypes[]) {
  ckg_data *d = ckg_data_of(ufunc);
  int nin = ((PyUFuncObject *)ufunc)->nin;
  const ckg_loop *L = NULL;
  for (Py_ssize_t i = 0; d != NULL && i < d->nloops && L == NULL; i++) {
    int ok = 1;
    for (int k = 0; k <= nin && ok; k++) {
      if (signature[k] != NULL) {
        ok = signature[k] == d->loops[i]->dtypes[k];
      } else if (k < nin && op_dtypes[k] != NULL) {
        ok = ckg_castable(op_dtypes[k], d->loops[i]->dtypes[k]);
      }
    }
    L = ok ? d->loops[i] : NULL;
  }
  int open = L == NULL && d != NULL && d->nloops > 0;
  for (int k = 0; k <= nin && open; k++) {
    open = signature[k] == NULL && (k == nin || op_dtypes[k] != NULL);
  }
  if (open) { /* no loop takes the inputs: say which and why (promoter.c) */
    return ckd_raise_no_loop(ufunc, nin, op_dtypes);
  }
  for (int k = 0; k <= nin; k++) {
    PyArray_DTypeMeta *dt = signature[k] != NULL ? signature[k]
                            : L != NULL          ? L->dtypes[k]
                                                 : op_dtypes[k];
    Py_XINCREF(dt);
    new_op_dtypes[k] = dt;
  }
  return 0;
}

/* ---- ufunc.types -------------------------------------------------------------- */

/* The legacy form of a loop (what uf->functions lists; NumPy never calls it:
 * the gufunc has no legacy type resolver, as ufunc.c's ufuncs). */
static void ckg_legacy_loop(char **args, npy_intp const *dimensions, npy_intp const *steps,
                            void *data) {
  (void)ckg_strided_loop(NULL, args, dimensions, steps, &((ckg_loop *)data)->aux);
}

/* List the loops whose dtypes are all NumPy legacy types in uf->types /
 * ntypes (`ufunc.types`: ["dd->d"], as numba.guvectorize's gufuncs), owned
 * by d; calls are still resolved by the promoter only. */
static int ckg_list_types(PyUFuncObject *uf, ckg_data *d) {
  int nargs = uf->nargs;
  Py_ssize_t n = d->nloops;
  d->types = PyMem_Malloc((size_t)(n * nargs) + 1);
  d->functions = PyMem_Malloc((size_t)n * sizeof *d->functions + 1);
  d->data = PyMem_Malloc((size_t)n * sizeof *d->data + 1);
  if (d->types == NULL || d->functions == NULL || d->data == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  int listed = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    ckg_loop *L = d->loops[i];
    int legacy = 1;
    for (int k = 0; k < nargs; k++) {
      int t = L->dtypes[k]->type_num;
      legacy &= t >= 0 && t < NPY_NTYPES_LEGACY;
    }
    if (!legacy) {
      continue;
    }
    for (int k = 0; k < nargs; k++) {
      d->types[listed * nargs + k] = (char)L->dtypes[k]->type_num;
    }
    d->functions[listed] = &ckg_legacy_loop;
    d->data[listed++] = L;
  }
  uf->type_resolver = NULL;
  uf->types = d->types;
  uf->functions = d->functions;
  uf->data = d->data;
  uf->ntypes = listed;
  return 0;
}

/* ---- making gufuncs -------------------------------------------------------- */

/* The loop of `desc` for `dtypes` (a sequence of nin + 1 NumPy dtypes) in the
 * gufunc `uf` (whose core-dim tables map NumPy's arguments). */
static ckg_loop *ckg_loop_new(PyUFuncObject *uf, const ck_jit_kernel_desc *desc,
                              PyObject *dtypes) {
  int nin = uf->nin, nargs = uf->nargs;
  if ((int)desc->nsrc != nin || desc->dst_pattern == NULL) {
    ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "gufunc: '%s' is not a kernel with core dims of %d "
                "argument(s)", desc->name, nin);
    return NULL;
  }
  PyObject *seq = PySequence_Fast(dtypes, "gufunc: dtypes must be a sequence");
  if (seq == NULL) {
    return NULL;
  }
  if (PySequence_Fast_GET_SIZE(seq) != nargs) {
    Py_DECREF(seq);
    ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "gufunc: %d dtypes needed", nargs);
    return NULL;
  }
  ckg_loop *L = PyMem_Calloc(1, sizeof *L);
  if (L == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return NULL;
  }
  L->aux.free = ckg_aux_free;
  L->aux.clone = ckg_aux_clone;
  L->nin = nin;
  L->strided = desc->strided;
  snprintf(L->name, sizeof L->name, "%.*s", CK_JIT_NAME_MAX - 1, desc->name);
  for (int k = 0; k < nargs; k++) {
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter(PySequence_Fast_GET_ITEM(seq, k), &descr)) {
      Py_DECREF(seq);
      ckg_loop_free(L);
      return NULL;
    }
    L->dtypes[k] = (PyArray_DTypeMeta *)Py_NewRef(Py_TYPE(descr));
    Py_DECREF(descr);
  }
  Py_DECREF(seq);
  /* records: the output's core dims, then each input's (jit.h order) */
  int r = 0;
  for (int step = 0; step < nargs; step++) {
    int op = step == 0 ? nin : step - 1;
    int nd = uf->core_num_dims[op];
    for (int i = 0; i < nd; i++) {
      if (r == CKG_MAX_CORE) {
        ckpy_raisef(CK_ERR_NOT_SUPPORTED, "gufunc: more than %d core dims", CKG_MAX_CORE);
        ckg_loop_free(L);
        return NULL;
      }
      L->dim_ix[r] = uf->core_dim_ixs[uf->core_offsets[op] + i];
      L->stride_ix[r] = uf->core_offsets[op] + i;
      r++;
    }
  }
  L->ndims = r;
  ck_memblock_incref(desc->code);
  L->code = desc->code;
  return L;
}

PyObject *ckg_new_gufunc(const char *name, const char *signature, PyObject *doc,
                         PyObject *loops) {
  PyObject *seq = PySequence_Fast(loops, "gufunc: loops must be a sequence of "
                                         "(desc address, dtypes)");
  if (seq == NULL) {
    return NULL;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  ckg_data *d = PyMem_Calloc(1, sizeof *d + (size_t)n * sizeof(ckg_loop *));
  PyObject *capsule = NULL, *uf = NULL;
  if (d == NULL) {
    PyErr_NoMemory();
    goto fail;
  }
  capsule = PyCapsule_New(d, ckg_capsule_name, ckg_data_free);
  if (capsule == NULL) {
    PyMem_Free(d);
    goto fail;
  }
  d->name = PyBytes_FromString(name);
  if (d->name == NULL) {
    goto fail;
  }
  if (doc != NULL && doc != Py_None) {
    d->doc = PyUnicode_AsUTF8String(doc);
    if (d->doc == NULL) {
      goto fail;
    }
  }
  int nin = 0;
  if (n > 0) {
    PyObject *first = PySequence_Fast_GET_ITEM(seq, 0);
    unsigned long long addr = 0;
    PyObject *dts = NULL;
    if (!PyArg_ParseTuple(first, "KO", &addr, &dts)) {
      goto fail;
    }
    nin = (int)((const ck_jit_kernel_desc *)(uintptr_t)addr)->nsrc;
  }
  if (nin < 1 || nin > CKD_MAX_NIN) {
    ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "gufunc: 1..%d inputs, not %d", CKD_MAX_NIN, nin);
    goto fail;
  }
  uf = PyUFunc_FromFuncAndDataAndSignature(
      NULL, NULL, NULL, 0, nin, 1, PyUFunc_None, PyBytes_AS_STRING(d->name),
      d->doc ? PyBytes_AS_STRING(d->doc) : NULL, 0, signature);
  if (uf == NULL) {
    goto fail;
  }
  ((PyUFuncObject *)uf)->obj = capsule; /* the gufunc owns it from here */
  capsule = NULL;
  /* As ufunc.c does: tracked by the GC, so that the cycle gufunc -> owner
   * (its __dict__) -> gufunc is collected and the loops' code released. */
  if (!PyObject_GC_IsTracked(uf)) {
    PyObject_GC_Track(uf);
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    unsigned long long addr = 0;
    PyObject *dts = NULL;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "KO", &addr, &dts)) {
      goto fail;
    }
    const ck_jit_kernel_desc *desc = (const ck_jit_kernel_desc *)(uintptr_t)addr;
    if (desc == NULL) {
      ckpy_raisef(CK_ERR_INVALID_ARGUMENT, "gufunc: a desc address is 0");
      goto fail;
    }
    ckg_loop *L = ckg_loop_new((PyUFuncObject *)uf, desc, dts);
    if (L == NULL) {
      goto fail;
    }
    d->loops[d->nloops++] = L;
    PyType_Slot slots[] = {{NPY_METH_get_loop, (void *)&ckg_get_loop}, {0, NULL}};
    PyArrayMethod_Spec spec = {
        .name = L->name,
        .nin = nin,
        .nout = 1,
        .casting = NPY_NO_CASTING,
        .flags = 0,
        .dtypes = L->dtypes,
        .slots = slots,
    };
    if (PyUFunc_AddLoopFromSpec(uf, &spec) < 0) {
      goto fail;
    }
  }
  if (ckg_list_types((PyUFuncObject *)uf, d) < 0) {
    goto fail;
  }
  PyObject *nones = PyTuple_New(nin + 1), *cap = NULL;
  int rc = -1;
  if (nones != NULL) {
    for (int i = 0; i <= nin; i++) {
      PyTuple_SET_ITEM(nones, i, Py_NewRef(Py_None));
    }
    cap = PyCapsule_New((void *)&ckg_promoter, "numpy._ufunc_promoter", NULL);
    if (cap != NULL) {
      rc = PyUFunc_AddPromoter(uf, nones, cap);
    }
  }
  Py_XDECREF(nones);
  Py_XDECREF(cap);
  if (rc < 0) {
    goto fail;
  }
  Py_DECREF(seq);
  return uf;
fail:
  Py_XDECREF(capsule);
  Py_XDECREF(uf);
  Py_DECREF(seq);
  return NULL;
}
