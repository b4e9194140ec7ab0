/*
 * dispatch.c -- ckernels._dispatch: NumPy ufuncs whose inner loops are
 * ckernels (the CPython / NumPy C-API fast path of the Python package).
 *
 * What it makes
 *   A real `numpy.ufunc` (nout = 1) with no legacy loops.  Each loop is a
 *   NumPy 2 ArrayMethod (PyUFunc_AddLoopFromSpec) for one DType signature,
 *   whose strided loop calls one built ckernel -- a `ck_prefix *` built for
 *   CK_KERNEL_REQUEST_STRIDED -- through ck_prefix_strided(k)(dst, ds, src,
 *   ss, n, k).  Two kernel sources:
 *     - a jitted function's compiled signature (`ck_jit_kernel_desc`, built
 *       with ck_jit_make_kernel);
 *     - a registry operation's kernel for one argument-type tuple
 *       (ck_op_make_kernel).
 *   Everything else a ufunc does -- broadcasting, casting and buffering,
 *   `out=`, `where=`, `dtype=`, `casting=`, reduce / accumulate / outer /
 *   at, `__array_ufunc__` overrides -- is NumPy's own machinery.
 *
 * Ownership
 *   Each ufunc owns one `UFuncData` object (stored in the ufunc's `obj`
 *   field, which NumPy decrefs and GC-visits).  UFuncData owns the loops;
 *   a loop (ckd_loop, one heap block that never moves) owns its kernel
 *   builder, hence the kernel tree and -- for jitted kernels -- a reference
 *   to the code memblock that keeps the compiled code alive.  NumPy's loops
 *   get the ckd_loop as their auxdata; its free/clone are no-ops because the
 *   loop outlives every call (the caller holds the ufunc).
 *
 * Type resolution (a promoter registered for every operand, used when no
 *   loop matches the operand DTypes exactly)
 *   Python int / float / complex operands arrive as NumPy's abstract
 *   PyLong/PyFloat/PyComplex DTypes (NEP 50 "weak" scalars); when every input
 *   is one, they take NumPy's default dtypes (int64 / float64 / complex128).
 *   - jit ufuncs (explicit signatures): the first loop, in registration
 *     order, whose inputs match exactly (equivalent dtypes; a weak scalar
 *     matches any loop type of its kind or above: int -> i/u/f/c, float ->
 *     f/c, complex -> c; when every input is a Python scalar, a loop of
 *     their default dtypes first, else the first each fits by kind); else
 *     the first loop every input casts to safely (numpy.can_cast(...,
 *     "safe")); else NumPy's "no loop" TypeError.
 *     Types fixed by `signature=` / `dtype=` must match exactly; with such
 *     types the inputs may also reach the loop by same-kind casts (else any
 *     cast: NumPy then applies `casting=` and names the cast that failed),
 *     as NumPy's `np.add(f8, f8, dtype=f4)` does.
 *   - jit ufuncs compiled lazily (a `compile` callback): the exact match as
 *     above; else `compile(input_dtypes, out_dtype_or_None)` is called
 *     (weak scalars as NumPy's default dtypes) and must add the loop for
 *     those types (add_jit_loop); the search is then repeated.  With types
 *     fixed by `dtype=` / `signature=` the callback may instead add a loop
 *     of the fixed types (the inputs already have a loop with another
 *     result): the search then goes on as for explicit loops.  Loops are
 *     only ever appended and the answer for given DTypes never depends on
 *     later loops, so NumPy's dispatch cache stays right.  A ufunc without a
 *     compile callback refuses new loops once it has resolved a call (its
 *     cached answers could go stale): make a new ufunc instead.
 *   - registry ufuncs: exactly the kernel ck_op_resolve picks for the
 *     operand types (weak scalars: NumPy's common DType with the other
 *     inputs), so the results match ckernels.ops and NumPy's own tables.
 *
 * Threads
 *   Loops run without the GIL (no NPY_METH_REQUIRES_PYAPI).  NumPy hands a
 *   loop one long run for contiguous (or coalescable) operands.  A run whose
 *   output elements are independent (output stride != 0, no input
 *   overlapping the output except exactly in place: not a reduction or an
 *   accumulation) and that has more than one library thread
 *   (ck_set_num_threads / CK_NUM_THREADS) is timed on its first
 *   CKD_PROBE_ELEMENTS elements; if the rest would take at least the
 *   parallel threshold (set_parallel_min_time, default 100 us) it is split
 *   over the library's pool (ck_parallel_for) in chunks of about 20 us of
 *   work, otherwise it runs on.  So cheap kernels on mid-sized arrays do not
 *   pay for waking threads and costly kernels are split early.
 *   Floating-point flags raised on the workers are re-raised on the calling
 *   thread, so NumPy's errstate sees them as in a serial run.
 *
 * Errors
 *   A kernel that fails returns a ck_status after ck_set_error; the loop
 *   takes the GIL, raises `ckernels.errors.error_class(status)(message,
 *   status)` with ck_last_error()'s message, and returns -1: NumPy stops
 *   (also between buffered chunks) and propagates the exception.  Errors of
 *   this module are ckernels.errors classes too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL ckd_ARRAY_API
#define PY_UFUNC_UNIQUE_SYMBOL ckd_UFUNC_API
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>
#include <numpy/dtype_api.h>

#include <fenv.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <ckernel/ckernel.h>

/* Most inputs a loop may have: the jit's limit (the registry's is lower). */
#define CKD_MAX_NIN CK_LIFT_MAX_NSRC
#define CKD_MAX_ARGS (CKD_MAX_NIN + 1)
/* Most entries in a registry ufunc's type table (the builtin scalars). */
#define CKD_MAX_TYPES 32

_Static_assert(sizeof(npy_intp) == sizeof(intptr_t),
               "NumPy strides are passed to kernels as intptr_t");
_Static_assert(CKD_MAX_ARGS <= NPY_MAXARGS, "NumPy limits the operand count");

/* ckernels.errors.error_class: status -> exception class. */
static PyObject *ckd_error_class = NULL;

/* ------------------------------------------------------------------------ */
/* errors                                                                   */
/* ------------------------------------------------------------------------ */

/* Raise the ckernels.errors class of `status` with `message` (GIL held).
 * Returns NULL for convenience. */
static PyObject *ckd_raise(int status, PyObject *message) {
  if (message == NULL) {
    return NULL; /* an exception is set already */
  }
  PyObject *cls = PyObject_CallFunction(ckd_error_class, "i", status);
  if (cls != NULL) {
    PyObject *exc = PyObject_CallFunction(cls, "Oi", message, status);
    if (exc != NULL) {
      PyErr_SetObject(cls, exc);
      Py_DECREF(exc);
    }
    Py_DECREF(cls);
  }
  Py_DECREF(message);
  return NULL;
}

#define ckd_raisef(status, ...) ckd_raise((status), PyUnicode_FromFormat(__VA_ARGS__))

/* A kernel failed with `status`: raise with ck_last_error()'s message.  May
 * be called without the GIL (it takes it); the message is read on the
 * calling thread, where the kernel (or ck_parallel_for) recorded it. */
static void ckd_raise_kernel_error(int status) {
  PyGILState_STATE g = PyGILState_Ensure();
  const char *msg = ck_last_error();
  ckd_raise(status, PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace"));
  PyGILState_Release(g);
}

/* ------------------------------------------------------------------------ */
/* loops                                                                    */
/* ------------------------------------------------------------------------ */

/* One loop: an ArrayMethod's kernel.  Allocated once, never moved (NumPy
 * holds `&aux` during calls), freed with its UFuncData. */
typedef struct ckd_loop {
  NpyAuxData aux;                         /* must stay first               */
  int nin;
  PyArray_DTypeMeta *dtypes[CKD_MAX_ARGS]; /* owned: inputs..., output     */
  ck_type_id ids[CKD_MAX_ARGS];           /* ckernel type ids, same order   */
  npy_intp itemsize[CKD_MAX_ARGS];
  ck_kernel_builder ckb;                  /* owns the kernel tree           */
  ck_prefix *kernel;                      /* root of ckb (strided request)  */
  ck_expr_strided_t strided;
  char name[CK_JIT_NAME_MAX + 32];
} ckd_loop;

static void ckd_aux_free(NpyAuxData *aux) { (void)aux; }
static NpyAuxData *ckd_aux_clone(NpyAuxData *aux) { return aux; }

static void ckd_loop_free(ckd_loop *L) {
  if (L == NULL) {
    return;
  }
  ck_kernel_builder_destroy(&L->ckb); /* may release compiled code (GIL held) */
  for (int i = 0; i <= L->nin; i++) {
    Py_XDECREF(L->dtypes[i]);
  }
  PyMem_Free(L);
}

/* ---- running a kernel, possibly on the pool ------------------------------ */

typedef struct {
  ckd_loop *loop;
  char *dst;
  intptr_t dst_stride;
  const char *const *src;
  const intptr_t *src_stride;
  atomic_int fpe; /* FE_* flags raised on worker threads */
} ckd_par;

static ck_status ckd_par_chunk(void *vctx, size_t begin, size_t end, unsigned thread) {
  ckd_par *c = vctx;
  ckd_loop *L = c->loop;
  const char *src[CKD_MAX_NIN];
  for (int j = 0; j < L->nin; j++) {
    src[j] = c->src[j] + (intptr_t)begin * c->src_stride[j];
  }
  if (thread != 0) {
    feclearexcept(FE_ALL_EXCEPT);
  }
  ck_status st = L->strided(c->dst + (intptr_t)begin * c->dst_stride, c->dst_stride,
                            src, c->src_stride, end - begin, L->kernel);
  if (thread != 0) {
    int flags = fetestexcept(FE_ALL_EXCEPT);
    if (flags != 0) {
      atomic_fetch_or(&c->fpe, flags);
    }
  }
  return st;
}

/* Do [lo, hi) byte ranges of a strided run overlap? */
static void ckd_span(const char *p, intptr_t stride, npy_intp n, npy_intp itemsize,
                     uintptr_t *lo, uintptr_t *hi) {
  intptr_t ext = stride * (intptr_t)(n - 1);
  uintptr_t a = (uintptr_t)p, b = (uintptr_t)(p + ext);
  *lo = a < b ? a : b;
  *hi = (a < b ? b : a) + (uintptr_t)itemsize;
}

/* May the run be split into independent pieces?  Not when every element
 * writes one place (reductions) or when an input overlaps the output other
 * than exactly in place (accumulate reads what the previous element wrote). */
static int ckd_splittable(const ckd_loop *L, char *const *data, const npy_intp *strides,
                          npy_intp n) {
  int nin = L->nin;
  if (strides[nin] == 0) {
    return 0;
  }
  uintptr_t dlo, dhi;
  ckd_span(data[nin], strides[nin], n, L->itemsize[nin], &dlo, &dhi);
  for (int j = 0; j < nin; j++) {
    if (data[j] == data[nin] && strides[j] == strides[nin] &&
        L->itemsize[j] == L->itemsize[nin]) {
      continue; /* in place */
    }
    uintptr_t lo, hi;
    ckd_span(data[j], strides[j], n, L->itemsize[j], &lo, &hi);
    if (lo < dhi && dlo < hi) {
      return 0;
    }
  }
  return 1;
}

/* Elements timed before deciding to split a run (runs shorter than twice
 * this are never split), and the work per chunk of a split run. */
#define CKD_PROBE_ELEMENTS 2048
#define CKD_CHUNK_NS 20000.0

/* Split a run when its estimated serial time is at least this (ns). */
static _Atomic int64_t ckd_parallel_min_ns = 100000;

static int64_t ckd_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Run the rest of a probed run, [CKD_PROBE_ELEMENTS, n), on the pool. */
static ck_status ckd_run_parallel(ckd_loop *L, char *const *data, const intptr_t *ss,
                                  size_t n, double ns_per_element, int64_t min_ns) {
  int nin = L->nin;
  const char *src[CKD_MAX_NIN];
  for (int j = 0; j < nin; j++) {
    src[j] = data[j] + CKD_PROBE_ELEMENTS * ss[j];
  }
  double chunk_ns = (double)min_ns / 4 < CKD_CHUNK_NS ? (double)min_ns / 4 : CKD_CHUNK_NS;
  double chunk = chunk_ns / ns_per_element;
  size_t min_chunk = chunk < 256.0 ? 256 : chunk > (double)n ? n : (size_t)chunk;
  ckd_par c = {L, data[nin] + CKD_PROBE_ELEMENTS * ss[nin], ss[nin], src, ss, 0};
  atomic_init(&c.fpe, 0);
  ck_status st = ck_parallel_for(n - CKD_PROBE_ELEMENTS, min_chunk, ckd_par_chunk, &c);
  int flags = atomic_load(&c.fpe);
  if (flags != 0) {
    feraiseexcept(flags);
  }
  return st;
}

/* The strided loop of every ArrayMethod made here. */
static int ckd_strided_loop(PyArrayMethod_Context *context, char *const *data,
                            const npy_intp *dimensions, const npy_intp *strides,
                            NpyAuxData *aux) {
  (void)context;
  ckd_loop *L = (ckd_loop *)aux;
  npy_intp n = dimensions[0];
  if (n <= 0) {
    return 0;
  }
  int nin = L->nin;
  const char *const *src = (const char *const *)data;
  const intptr_t *ss = (const intptr_t *)strides;
  ck_status st;
  if (n >= 2 * CKD_PROBE_ELEMENTS && ck_get_num_threads() > 1 &&
      ckd_splittable(L, data, strides, n)) {
    /* Time the first elements, then decide whether the rest is worth the
     * pool. */
    int64_t t0 = ckd_now_ns();
    st = L->strided(data[nin], strides[nin], src, ss, CKD_PROBE_ELEMENTS, L->kernel);
    int64_t dt = ckd_now_ns() - t0;
    if (st == CK_OK) {
      double per = (double)(dt > 0 ? dt : 1) / CKD_PROBE_ELEMENTS;
      int64_t min_ns = atomic_load_explicit(&ckd_parallel_min_ns, memory_order_relaxed);
      size_t rest = (size_t)n - CKD_PROBE_ELEMENTS;
      if (per * (double)rest >= (double)min_ns) {
        st = ckd_run_parallel(L, data, ss, (size_t)n, per, min_ns);
      } else {
        const char *rsrc[CKD_MAX_NIN];
        for (int j = 0; j < nin; j++) {
          rsrc[j] = data[j] + CKD_PROBE_ELEMENTS * ss[j];
        }
        st = L->strided(data[nin] + CKD_PROBE_ELEMENTS * ss[nin], ss[nin], rsrc, ss, rest,
                        L->kernel);
      }
    }
  } else {
    st = L->strided(data[nin], strides[nin], src, ss, (size_t)n, L->kernel);
  }
  if (st != CK_OK) {
    ckd_raise_kernel_error((int)st);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* UFuncData: what a ufunc made here owns                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  PyObject *name;      /* bytes: ufunc->name points into it                */
  PyObject *doc;       /* bytes or NULL: ufunc->doc points into it         */
  PyObject *identity;  /* Py_None: no identity                             */
  PyObject *compile;   /* lazily compiled functions' callback, or NULL     */
  const ck_op *op;     /* registry ufuncs: the operation, else NULL        */
  int ntypes;          /* registry ufuncs: NumPy DType <-> ckernel id      */
  PyArray_DTypeMeta *type_dt[CKD_MAX_TYPES];  /* owned                     */
  ck_type_id type_id[CKD_MAX_TYPES];
  int nin;
  int reorderable;
  int resolved;        /* the promoter has answered a call                 */
  Py_ssize_t nloops, cap;
  ckd_loop **loops;
} ckd_data;

static PyTypeObject ckd_data_type;

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
  for (Py_ssize_t i = 0; i < self->nloops; i++) {
    ckd_loop_free(self->loops[i]);
  }
  PyMem_Free(self->loops);
  for (int i = 0; i < self->ntypes; i++) {
    Py_DECREF(self->type_dt[i]);
  }
  Py_XDECREF(self->name);
  Py_XDECREF(self->doc);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *ckd_data_repr(ckd_data *self) {
  return PyUnicode_FromFormat("<ckernels._dispatch.UFuncData '%s': %zd loop(s)%s%s>",
                              PyBytes_AS_STRING(self->name), self->nloops,
                              self->op ? ", registry operation" : "",
                              self->compile ? ", compiled lazily" : "");
}

static PyTypeObject ckd_data_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ckernels._dispatch.UFuncData",
    .tp_doc = "What a ufunc made by ckernels._dispatch owns (its loops and kernels).",
    .tp_basicsize = sizeof(ckd_data),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)ckd_data_traverse,
    .tp_clear = (inquiry)ckd_data_clear,
    .tp_dealloc = (destructor)ckd_data_dealloc,
    .tp_repr = (reprfunc)ckd_data_repr,
};

/* The UFuncData of a ufunc made here, else NULL (no exception set). */
static ckd_data *ckd_data_of(PyObject *ufunc) {
  if (ufunc == NULL || !PyObject_TypeCheck(ufunc, &PyUFunc_Type)) {
    return NULL;
  }
  PyObject *obj = ((PyUFuncObject *)ufunc)->obj;
  if (obj == NULL || Py_TYPE(obj) != &ckd_data_type) {
    return NULL;
  }
  return (ckd_data *)obj;
}

static ckd_data *ckd_data_of_arg(PyObject *ufunc) {
  ckd_data *d = ckd_data_of(ufunc);
  if (d == NULL) {
    ckd_raisef(CK_ERR_TYPE, "expected a ufunc made by ckernels._dispatch, not %R", ufunc);
  }
  return d;
}

/* ------------------------------------------------------------------------ */
/* ArrayMethod hooks                                                        */
/* ------------------------------------------------------------------------ */

static ckd_loop *ckd_find_loop(ckd_data *d, PyArray_Descr *const *descrs) {
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    int ok = 1;
    for (int k = 0; k <= d->nin && ok; k++) {
      ok = (PyArray_DTypeMeta *)Py_TYPE(descrs[k]) == L->dtypes[k];
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
    ckd_raisef(CK_ERR_INVALID_STATE,
               "a ckernels loop was called by %R, not by the ufunc that owns it",
               context->caller ? context->caller : Py_None);
    return -1;
  }
  if (!aligned) {
    /* Not reachable: the methods do not claim NPY_METH_SUPPORTS_UNALIGNED,
     * so NumPy aligns (buffers) the operands. */
    ckd_raisef(CK_ERR_INVALID_STATE, "%s: unaligned operands reached a ckernels loop",
               PyBytes_AS_STRING(d->name));
    return -1;
  }
  ckd_loop *L = ckd_find_loop(d, context->descriptors);
  if (L == NULL) {
    ckd_raisef(CK_ERR_INVALID_STATE, "%s: no ckernels loop for the resolved dtypes",
               PyBytes_AS_STRING(d->name));
    return -1;
  }
  *out_loop = &ckd_strided_loop;
  *out_transferdata = &L->aux;
  *flags = 0; /* no Python API needed; floating-point flags are checked */
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

/* ---- the promoter ------------------------------------------------------- */

enum { CKD_STRONG = 0, CKD_WEAK_INT, CKD_WEAK_FLOAT, CKD_WEAK_COMPLEX };

static int ckd_weak_kind(PyArray_DTypeMeta *dt) {
  if (dt == &PyArray_PyLongDType) {
    return CKD_WEAK_INT;
  }
  if (dt == &PyArray_PyFloatDType) {
    return CKD_WEAK_FLOAT;
  }
  if (dt == &PyArray_PyComplexDType) {
    return CKD_WEAK_COMPLEX;
  }
  return CKD_STRONG;
}

static PyArray_DTypeMeta *ckd_weak_default(int weak) {
  switch (weak) {
  case CKD_WEAK_INT: return &PyArray_DefaultIntDType;
  case CKD_WEAK_FLOAT: return &PyArray_DoubleDType;
  default: return &PyArray_CDoubleDType;
  }
}

static int ckd_is_numeric(PyArray_DTypeMeta *dt) {
  int t = dt->type_num;
  return dt->singleton != NULL && (PyTypeNum_ISBOOL(t) || PyTypeNum_ISNUMBER(t));
}

/* Does a weak Python scalar of kind `weak` fit a loop type (same kind or
 * above, as NEP 50 lets it)? */
static int ckd_weak_ok(int weak, PyArray_DTypeMeta *to) {
  if (!ckd_is_numeric(to)) {
    return 0;
  }
  char k = to->singleton->kind;
  switch (weak) {
  case CKD_WEAK_INT: return k == 'i' || k == 'u' || k == 'f' || k == 'c';
  case CKD_WEAK_FLOAT: return k == 'f' || k == 'c';
  default: return k == 'c';
  }
}

static int ckd_equiv(PyArray_DTypeMeta *from, PyArray_DTypeMeta *to) {
  return from == to || (ckd_is_numeric(from) && ckd_is_numeric(to) &&
                        PyArray_EquivTypenums(from->type_num, to->type_num));
}

static int ckd_safe(PyArray_DTypeMeta *from, PyArray_DTypeMeta *to) {
  return ckd_equiv(from, to) || (ckd_is_numeric(from) && ckd_is_numeric(to) &&
                                 PyArray_CanCastSafely(from->type_num, to->type_num));
}

/* The operand types the promoter works with. */
typedef struct {
  int nin;
  PyArray_DTypeMeta *in[CKD_MAX_NIN]; /* borrowed */
  int weak[CKD_MAX_NIN];
  int all_weak;                       /* only Python scalars: in[] holds   */
  int weak_kind[CKD_MAX_NIN];         /* their defaults, these their kinds */
} ckd_operands;

static void ckd_operands_init(ckd_operands *ops, int nin, PyArray_DTypeMeta *const op_dtypes[]) {
  ops->nin = nin;
  int strong = 0;
  for (int i = 0; i < nin; i++) {
    /* Reductions leave the first operand open: it is the accumulator, of the
     * reduced array's type unless given. */
    PyArray_DTypeMeta *dt = op_dtypes[i] != NULL ? op_dtypes[i] : op_dtypes[nin - 1];
    ops->in[i] = dt;
    ops->weak[i] = dt != NULL ? ckd_weak_kind(dt) : CKD_STRONG;
    strong += ops->weak[i] == CKD_STRONG;
  }
  ops->all_weak = strong == 0;
  if (strong == 0) { /* only Python scalars: NumPy's default dtypes */
    for (int i = 0; i < nin; i++) {
      ops->weak_kind[i] = ops->weak[i];
      ops->in[i] = ckd_weak_default(ops->weak[i]);
      ops->weak[i] = CKD_STRONG;
    }
  }
}

/* How an operand may reach a loop's type. */
enum { CKD_EXACT = 0, CKD_SAFE, CKD_SAME_KIND, CKD_ANY };

static int ckd_castable(PyArray_DTypeMeta *from, PyArray_DTypeMeta *to, int how) {
  switch (how) {
  case CKD_EXACT: return ckd_equiv(from, to);
  case CKD_SAFE: return ckd_safe(from, to);
  case CKD_SAME_KIND:
    return ckd_equiv(from, to) || (ckd_is_numeric(from) && ckd_is_numeric(to) &&
                                   PyArray_CanCastTypeTo(from->singleton, to->singleton,
                                                         NPY_SAME_KIND_CASTING));
  default: return 1;
  }
}

/* Does loop L fit the operands, each input reaching L's type `how`?  Types
 * fixed by the signature must be L's; weak scalars need a loop type of their
 * kind or above (except for CKD_ANY). */
static int ckd_loop_fits(const ckd_data *d, const ckd_loop *L, const ckd_operands *ops,
                         PyArray_DTypeMeta *const signature[], int how) {
  for (int i = 0; i <= d->nin; i++) {
    if (signature[i] != NULL && signature[i] != L->dtypes[i]) {
      return 0;
    }
  }
  for (int i = 0; i < d->nin; i++) {
    if (signature[i] != NULL) {
      continue;
    }
    PyArray_DTypeMeta *dt = ops->in[i];
    if (dt == NULL) {
      return 0;
    }
    int ok = how == CKD_ANY                 ? 1
             : ops->weak[i] != CKD_STRONG ? ckd_weak_ok(ops->weak[i], L->dtypes[i])
                                          : ckd_castable(dt, L->dtypes[i], how);
    if (!ok) {
      return 0;
    }
  }
  return 1;
}

static ckd_loop *ckd_first_fit(const ckd_data *d, const ckd_operands *ops,
                               PyArray_DTypeMeta *const signature[], int how) {
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    if (ckd_loop_fits(d, d->loops[i], ops, signature, how)) {
      return d->loops[i];
    }
  }
  return NULL;
}

/* Explicit loops: exactly (only Python scalars: of their default types,
 * else by kind), else by safe casts; with types fixed by
 * `dtype=` / `signature=`, else the first loop with those types that the
 * inputs reach by same-kind casts, else the first with those types at all
 * (NumPy then applies `casting=` to the inputs and says what failed). */
static ckd_loop *ckd_best_fit(const ckd_data *d, const ckd_operands *ops,
                              PyArray_DTypeMeta *const signature[], int fixed) {
  ckd_loop *L = ckd_first_fit(d, ops, signature, CKD_EXACT);
  if (L == NULL && ops->all_weak) {
    /* Only Python scalars and no loop of their default types: the first loop
     * each fits by kind, as when a strong operand is present (two Python
     * ints call a uint32 loop; NumPy converts and checks the values). */
    ckd_operands w = *ops;
    memcpy(w.weak, ops->weak_kind, sizeof w.weak);
    L = ckd_first_fit(d, &w, signature, CKD_EXACT);
  }
  if (L == NULL) {
    L = ckd_first_fit(d, ops, signature, CKD_SAFE);
  }
  if (L == NULL && fixed) {
    L = ckd_first_fit(d, ops, signature, CKD_SAME_KIND);
    if (L == NULL) {
      L = ckd_first_fit(d, ops, signature, CKD_ANY);
    }
  }
  return L;
}

/* ckernel type id of a concrete DType (registry ufuncs' type table). */
static int ckd_id_of(const ckd_data *d, PyArray_DTypeMeta *dt, ck_type_id *out) {
  for (int i = 0; i < d->ntypes; i++) {
    if (ckd_equiv(dt, d->type_dt[i])) {
      *out = d->type_id[i];
      return 1;
    }
  }
  return 0;
}

/* Registry ufuncs: the loop of the kernel ck_op_resolve picks.  Returns -1
 * with an exception set, 0 (none) or 1 (*out set). */
static int ckd_registry_fit(const ckd_data *d, const ckd_operands *ops, ckd_loop **out) {
  int nin = d->nin;
  ck_type_id ids[CKD_MAX_NIN], kargs[CKD_MAX_NIN], ret;
  PyArray_DTypeMeta *strong[CKD_MAX_NIN];
  int nstrong = 0;
  for (int i = 0; i < nin; i++) {
    if (ops->in[i] == NULL) {
      return 0;
    }
    if (ops->weak[i] == CKD_STRONG) {
      strong[nstrong++] = ops->in[i];
    }
  }
  PyArray_DTypeMeta *common = NULL;
  if (nstrong < nin) { /* weak scalars take NumPy's common DType with the rest */
    common = PyArray_PromoteDTypeSequence(nstrong, strong);
    if (common == NULL) {
      PyErr_Clear(); /* no common type: no loop */
      return 0;
    }
  }
  int found = 1;
  for (int i = 0; i < nin && found; i++) {
    PyArray_DTypeMeta *dt = ops->in[i];
    if (ops->weak[i] != CKD_STRONG) {
      PyArray_DTypeMeta *c = PyArray_CommonDType(common, dt);
      if (c == NULL) {
        PyErr_Clear();
        found = 0;
        break;
      }
      found = ckd_id_of(d, c, &ids[i]);
      Py_DECREF(c);
    } else {
      found = ckd_id_of(d, dt, &ids[i]);
    }
  }
  Py_XDECREF(common);
  if (!found || ck_op_resolve(d->op, (size_t)nin, ids, &ret, kargs) != CK_OK) {
    return 0;
  }
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    if (L->ids[nin] == ret && memcmp(L->ids, kargs, (size_t)nin * sizeof(ck_type_id)) == 0) {
      *out = L;
      return 1;
    }
  }
  return 0;
}

/* Lazily compiled functions: compile(input dtypes, out dtype or None). */
static int ckd_compile_for(ckd_data *d, const ckd_operands *ops,
                           PyArray_DTypeMeta *const signature[]) {
  PyObject *in = PyTuple_New(d->nin);
  if (in == NULL) {
    return -1;
  }
  for (int i = 0; i < d->nin; i++) {
    PyArray_DTypeMeta *dt = ops->in[i];
    if (ops->weak[i] != CKD_STRONG) {
      dt = ckd_weak_default(ops->weak[i]);
    }
    if (dt == NULL || dt->singleton == NULL) {
      Py_DECREF(in);
      return 0; /* nothing to compile for (an abstract or unknown type) */
    }
    Py_INCREF(dt->singleton);
    PyTuple_SET_ITEM(in, i, (PyObject *)dt->singleton);
  }
  PyArray_DTypeMeta *sout = signature[d->nin];
  PyObject *out = sout != NULL && sout->singleton != NULL ? (PyObject *)sout->singleton
                                                          : Py_None;
  PyObject *r = PyObject_CallFunctionObjArgs(d->compile, in, out, NULL);
  Py_DECREF(in);
  if (r == NULL) {
    return -1;
  }
  Py_DECREF(r);
  return 0;
}

/* Is L the only loop with its input DTypes? */
static int ckd_only_loop_for_inputs(const ckd_data *d, const ckd_loop *L) {
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    const ckd_loop *M = d->loops[i];
    if (M != L && memcmp(M->dtypes, L->dtypes, (size_t)d->nin * sizeof L->dtypes[0]) == 0) {
      return 0;
    }
  }
  return 1;
}

static int ckd_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                        PyArray_DTypeMeta *const signature[],
                        PyArray_DTypeMeta *new_op_dtypes[]) {
  ckd_data *d = ckd_data_of(ufunc);
  if (d == NULL) {
    ckd_raisef(CK_ERR_INVALID_STATE, "ckernels promoter called for %R", ufunc);
    return -1;
  }
  int nargs = d->nin + 1;
  d->resolved = 1;
  ckd_operands ops;
  ckd_operands_init(&ops, d->nin, op_dtypes);

  int fixed = 0;
  for (int i = 0; i < nargs; i++) {
    fixed |= signature[i] != NULL;
  }
  ckd_loop *L = NULL;
  if (d->op != NULL && !fixed) {
    if (ckd_registry_fit(d, &ops, &L) < 0) {
      return -1;
    }
  } else {
    if (d->compile == NULL) {
      L = ckd_best_fit(d, &ops, signature, fixed);
    } else {
      L = ckd_first_fit(d, &ops, signature, CKD_EXACT);
      if (L == NULL) {
        if (ckd_compile_for(d, &ops, signature) < 0) {
          return -1;
        }
        L = ckd_first_fit(d, &ops, signature, CKD_EXACT);
        if (L == NULL && fixed) {
          /* The callback compiled another loop for the fixed types (the
           * inputs have a loop with another result: NumPy's answer to
           * dtype= is then the loop of the result type, inputs cast). */
          L = ckd_best_fit(d, &ops, signature, fixed);
        }
      }
    }
  }
  int unchanged = 1;
  for (int i = 0; i < nargs; i++) {
    /* No loop: the DTypes unchanged, and NumPy reports "no loop found". */
    PyArray_DTypeMeta *dt = signature[i] != NULL ? signature[i]
                            : L != NULL          ? L->dtypes[i]
                                                 : op_dtypes[i];
    Py_XINCREF(dt);
    new_op_dtypes[i] = dt;
    unchanged &= dt == op_dtypes[i];
  }
  if (L != NULL && unchanged && ckd_only_loop_for_inputs(d, L)) {
    /* Only after a lazy compile: the loop just added has exactly the DTypes
     * asked for (the output fixed by dtype= / signature=), but NumPy takes
     * an unchanged answer as "no loop".  Leave the output open instead:
     * NumPy then finds L (the only loop for these inputs, so also the right
     * answer for the open output, which NumPy caches too) and checks it
     * against the fixed output. */
    Py_CLEAR(new_op_dtypes[d->nin]);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* making ufuncs and loops                                                  */
/* ------------------------------------------------------------------------ */

/* The ckernel kind of a builtin id ('b', 'i', 'u', 'f', 'c'), 0 if none. */
static char ckd_id_kind(ck_type_id id) {
  if (id == CK_TYPE_BOOL) return 'b';
  if (id >= CK_TYPE_INT8 && id <= CK_TYPE_INT64) return 'i';
  if (id >= CK_TYPE_UINT8 && id <= CK_TYPE_UINT64) return 'u';
  if (id >= CK_TYPE_FLOAT16 && id <= CK_TYPE_FLOAT64) return 'f';
  if (id >= CK_TYPE_COMPLEX64 && id <= CK_TYPE_COMPLEX128) return 'c';
  return 0;
}

/* Is `descr` a native NumPy dtype holding ckernel type `id` (same kind and
 * size)?  -1 with an exception if not. */
static int ckd_check_descr(const ckd_data *d, PyArray_Descr *descr, ck_type_id id) {
  char kind = ckd_id_kind(id);
  int ok = kind != 0 && kind == descr->kind && PyArray_ISNBO(descr->byteorder) &&
           (PyTypeNum_ISBOOL(descr->type_num) || PyTypeNum_ISNUMBER(descr->type_num)) &&
           (size_t)PyDataType_ELSIZE(descr) == ck_type_data_size(CK_BUILTIN(id));
  if (!ok) {
    ckd_raisef(CK_ERR_TYPE, "%s: dtype %R does not hold ckernel type '%s'",
               PyBytes_AS_STRING(d->name), (PyObject *)descr, ck_type_id_name(id));
    return -1;
  }
  return 0;
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
    ckd_raisef(CK_ERR_INVALID_ARGUMENT, "%s: %d dtypes expected (inputs, then the output), "
               "got %zd", PyBytes_AS_STRING(d->name), nargs, PySequence_Fast_GET_SIZE(seq));
    Py_DECREF(seq);
    return NULL;
  }
  ckd_loop *L = PyMem_Calloc(1, sizeof *L);
  if (L == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return NULL;
  }
  L->aux.free = &ckd_aux_free;
  L->aux.clone = &ckd_aux_clone;
  L->nin = d->nin;
  ck_kernel_builder_init(&L->ckb);
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
    Py_DECREF(descr);
  }
  Py_DECREF(seq);
  return L;
fail:
  Py_DECREF(seq);
  ckd_loop_free(L);
  return NULL;
}

/* Register L as an ArrayMethod of `ufunc` and keep it in d (takes L).  The
 * same kernel for the same dtypes again is a no-op (two threads compiling
 * the same types lazily); another kernel for them is an error. */
static int ckd_add_loop(PyObject *ufunc, ckd_data *d, ckd_loop *L) {
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    if (memcmp(d->loops[i]->dtypes, L->dtypes, (size_t)(d->nin + 1) * sizeof L->dtypes[0]) == 0) {
      int same = d->loops[i]->strided == L->strided;
      if (!same) {
        ckd_raisef(CK_ERR_INVALID_ARGUMENT, "%s: there is a loop for these dtypes already "
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
  PyType_Slot slots[] = {
      {NPY_METH_get_loop, (void *)&ckd_get_loop},
      {NPY_METH_get_reduction_initial, (void *)&ckd_get_reduction_initial},
      {0, NULL},
  };
  if (d->nin != 2) {
    slots[1].slot = 0; /* only binary functions reduce */
    slots[1].pfunc = NULL;
  }
  PyArrayMethod_Spec spec = {
      .name = L->name,
      .nin = d->nin,
      .nout = 1,
      .casting = NPY_NO_CASTING,
      .flags = d->reorderable ? NPY_METH_IS_REORDERABLE : 0,
      .dtypes = L->dtypes,
      .slots = slots,
  };
  if (PyUFunc_AddLoopFromSpec(ufunc, &spec) < 0) {
    ckd_loop_free(L);
    return -1;
  }
  d->loops[d->nloops++] = L;
  return 0;
}

static int ckd_check_open(const ckd_data *d) {
  if (d->resolved && d->compile == NULL) {
    ckd_raisef(CK_ERR_INVALID_STATE,
               "%s: cannot add a loop to a ufunc that has resolved calls (NumPy caches "
               "its answers); make a new ufunc", PyBytes_AS_STRING(d->name));
    return -1;
  }
  return 0;
}

static int ckd_identity_converter(PyObject *obj, void *out) {
  *(PyObject **)out = obj;
  return 1;
}

/* A new ufunc with its UFuncData; the promoter is installed. */
static PyObject *ckd_new_ufunc(const char *name, int nin, PyObject *doc, PyObject *identity,
                               PyObject *reorderable_obj, PyObject *compile, const ck_op *op) {
  if (nin < 1 || nin > CKD_MAX_NIN) {
    return ckd_raisef(CK_ERR_INVALID_ARGUMENT, "%s: nin must be 1..%d, not %d", name,
                      CKD_MAX_NIN, nin);
  }
  if (compile != NULL && compile != Py_None && !PyCallable_Check(compile)) {
    return ckd_raisef(CK_ERR_TYPE, "%s: compile must be callable, not %R", name, compile);
  }
  if (doc != NULL && doc != Py_None && !PyUnicode_Check(doc)) {
    return ckd_raisef(CK_ERR_TYPE, "%s: doc must be a str, not %R", name, doc);
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
  d->resolved = 0;
  d->ntypes = 0;
  d->nloops = d->cap = 0;
  d->loops = NULL;
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

/* ------------------------------------------------------------------------ */
/* Function: a callable that sends ufunc-able calls straight to its ufunc   */
/* ------------------------------------------------------------------------ */

/*
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
/* ckernels._dispatch.Fallback: raised (by a compile hook) when a call can
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
      return ckd_raisef(CK_ERR_INVALID_STATE, "%R has neither a ufunc nor a fallback",
                        (PyObject *)f);
    }
    return PyObject_Vectorcall(f->ufunc, args, nargsf, kwnames); /* NumPy says why not */
  }
  return ckd_call_hook(f, f->fallback, args, nargsf, kwnames);
}

/* A unary jitted function called on one Python int / float / complex: NumPy
 * hands the promoter the scalar's default DType, not the weak one (it does
 * so for several operands), so the rule of ckd_best_fit for "only Python
 * scalars" is applied here: with no loop of the default type, the first
 * loop the scalar fits by kind, through signature=.  NULL (no exception)
 * when the ordinary call does the same. */
static PyObject *ckd_call_weak_unary(PyObject *ufunc, PyObject *arg) {
  ckd_data *d = ckd_data_of(ufunc);
  if (d == NULL || d->op != NULL || d->compile != NULL) {
    return NULL;
  }
  int weak = PyFloat_CheckExact(arg) ? CKD_WEAK_FLOAT
             : PyLong_CheckExact(arg) ? CKD_WEAK_INT
                                      : CKD_WEAK_COMPLEX;
  PyArray_DTypeMeta *def = ckd_weak_default(weak);
  ckd_loop *fit = NULL;
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    if (ckd_equiv(def, L->dtypes[0])) {
      return NULL;
    }
    if (fit == NULL && ckd_weak_ok(weak, L->dtypes[0])) {
      fit = L;
    }
  }
  if (fit == NULL) {
    return NULL;
  }
  PyObject *r = NULL;
  PyObject *argt = PyTuple_Pack(1, arg);
  PyObject *sig = PyTuple_Pack(2, (PyObject *)fit->dtypes[0]->singleton,
                               (PyObject *)fit->dtypes[1]->singleton);
  PyObject *kw = sig ? Py_BuildValue("{sO}", "signature", sig) : NULL;
  if (argt != NULL && kw != NULL) {
    r = PyObject_Call(ufunc, argt, kw);
  }
  Py_XDECREF(argt);
  Py_XDECREF(sig);
  Py_XDECREF(kw);
  if (r == NULL && !PyErr_Occurred()) {
    PyErr_SetString(PyExc_SystemError, "ckernels: a weak unary call failed");
  }
  return r;
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
  r = PyObject_Vectorcall(f->ufunc, args, nargsf, kwnames);
done:
  if (r == NULL && f->fallback != NULL && PyErr_ExceptionMatches(ckd_fallback_exc)) {
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
      ckd_raisef(CK_ERR_INVALID_ARGUMENT, "fallback_kinds must be a str of at most %d dtype "
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
    ckd_raisef(CK_ERR_TYPE, "Function: wrappers must be callable or None, not %R", wrappers);
    return -1;
  }
  if (ckd_set_kinds(self, kinds) < 0) {
    return -1;
  }
  if (ufunc != Py_None && !PyObject_TypeCheck(ufunc, &PyUFunc_Type)) {
    ckd_raisef(CK_ERR_TYPE, "Function: ufunc must be a numpy.ufunc or None, not %R", ufunc);
    return -1;
  }
  if (fallback != Py_None && !PyCallable_Check(fallback)) {
    ckd_raisef(CK_ERR_TYPE, "Function: fallback must be callable or None, not %R", fallback);
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
    ckd_raisef(CK_ERR_TYPE, "ufunc must be a numpy.ufunc or None, not %R", value);
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
    ckd_raisef(CK_ERR_TYPE, "fallback must be callable or None, not %R", value);
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
    ckd_raisef(CK_ERR_TYPE, "wrappers must be callable or None, not %R", value);
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
    .tp_name = "ckernels._dispatch.Function",
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

/* ---- module functions ----------------------------------------------------- */

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
    return ckd_raisef(CK_ERR_INVALID_STATE, "%s: a registry ufunc takes no jitted loops",
                      PyBytes_AS_STRING(d->name));
  }
  const ck_jit_kernel_desc *desc = (const ck_jit_kernel_desc *)(uintptr_t)addr;
  if (desc == NULL) {
    return ckd_raisef(CK_ERR_INVALID_ARGUMENT, "add_jit_loop: desc must not be NULL");
  }
  if ((int)desc->nsrc != d->nin) {
    return ckd_raisef(CK_ERR_INVALID_ARGUMENT, "%s: the kernel takes %u argument(s), the "
                      "ufunc %d", PyBytes_AS_STRING(d->name), desc->nsrc, d->nin);
  }
  ck_type_id ids[CKD_MAX_ARGS];
  memcpy(ids, desc->src_ids, (size_t)d->nin * sizeof ids[0]);
  ids[d->nin] = desc->dst_id;
  ckd_loop *L = ckd_loop_new(d, dtypes, ids);
  if (L == NULL) {
    return NULL;
  }
  snprintf(L->name, sizeof L->name, "%.*s", (int)CK_JIT_NAME_MAX, desc->name);
  ck_status st = ck_jit_make_kernel(&L->ckb, 0, desc, NULL, CK_KERNEL_REQUEST_STRIDED, NULL);
  if (st != CK_OK) {
    ckd_raise_kernel_error((int)st);
    ckd_loop_free(L);
    return NULL;
  }
  L->kernel = ck_kernel_builder_get(&L->ckb, 0);
  L->strided = ck_prefix_strided(L->kernel);
  if (ckd_add_loop(ufunc, d, L) < 0) {
    return NULL;
  }
  Py_RETURN_NONE;
}

/* d's DType <-> ckernel id table from a mapping id -> dtype (builtin
 * numeric dtypes only; each checked like a loop's). */
static int ckd_read_type_table(ckd_data *d, PyObject *dtype_of_id) {
  PyObject *items = PyMapping_Items(dtype_of_id);
  if (items == NULL) {
    return -1;
  }
  int rc = -1;
  Py_ssize_t n = PyList_GET_SIZE(items);
  if (n > CKD_MAX_TYPES) {
    ckd_raisef(CK_ERR_INVALID_ARGUMENT, "op_ufunc: at most %d types, got %zd",
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
    return ckd_raisef(CK_ERR_TYPE, "op_ufunc: dtype_of_id must be a mapping, not %R",
                      dtype_of_id);
  }
  const ck_op *op = NULL;
  ck_status st = ck_op_find(op_name, &op);
  if (st != CK_OK) {
    ckd_raise_kernel_error((int)st);
    return NULL;
  }
  int nin = (int)ck_op_arity(op);
  PyObject *uf = ckd_new_ufunc(name ? name : op_name, nin, doc, identity, reorderable, NULL, op);
  if (uf == NULL) {
    return NULL;
  }
  ckd_data *d = ckd_data_of(uf);
  if (ckd_read_type_table(d, dtype_of_id) < 0) {
    goto fail;
  }
  size_t count = ck_op_kernel_count(op);
  for (size_t k = 0; k < count; k++) {
    ck_type_id ids[CKD_MAX_ARGS], ret;
    if (ck_op_kernel_signature(op, k, &ret, ids, CKD_MAX_NIN) != CK_OK) {
      continue; /* dropped meanwhile */
    }
    ids[nin] = ret;
    PyObject *dts = PyTuple_New(nin + 1);
    if (dts == NULL) {
      goto fail;
    }
    int mapped = 1;
    for (int i = 0; i <= nin; i++) {
      PyObject *key = PyLong_FromLong((long)ids[i]);
      PyObject *dt = key ? PyObject_GetItem(dtype_of_id, key) : NULL;
      Py_XDECREF(key);
      if (dt == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError)) {
          Py_DECREF(dts);
          goto fail;
        }
        PyErr_Clear();
        mapped = 0; /* a type NumPy has no dtype for (string, ...): no loop */
        break;
      }
      PyTuple_SET_ITEM(dts, i, dt);
    }
    if (!mapped) {
      Py_DECREF(dts);
      continue;
    }
    ckd_loop *L = ckd_loop_new(d, dts, ids);
    Py_DECREF(dts);
    if (L == NULL) {
      goto fail;
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
    st = ck_op_make_kernel(op, &L->ckb, 0, CK_KERNEL_REQUEST_STRIDED, (size_t)nin, ids, &got,
                           NULL);
    if (st == CK_OK && got != ret) {
      st = ck_set_error(CK_ERR_INVALID_STATE, "op_ufunc: the registry changed meanwhile");
    }
    if (st != CK_OK) {
      ckd_raise_kernel_error((int)st);
      ckd_loop_free(L);
      goto fail;
    }
    L->kernel = ck_kernel_builder_get(&L->ckb, 0);
    L->strided = ck_prefix_strided(L->kernel);
    if (ckd_add_loop(uf, d, L) < 0) {
      goto fail;
    }
  }
  return uf;
fail:
  Py_DECREF(uf);
  return NULL;
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
    return ckd_raisef(CK_ERR_INVALID_ARGUMENT,
                      "set_parallel_min_time: seconds must be in [0, 3600], not %R", arg);
  }
  atomic_store(&ckd_parallel_min_ns, (int64_t)(sec * 1e9));
  Py_RETURN_NONE;
}

PyDoc_STRVAR(ckd_get_parallel_min_time_doc,
"get_parallel_min_time() -> float\n"
"--\n\n"
"The threshold set by set_parallel_min_time, in seconds.");

static PyObject *ckd_py_get_parallel_min_time(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyFloat_FromDouble((double)atomic_load(&ckd_parallel_min_ns) / 1e9);
}

static PyMethodDef ckd_methods[] = {
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
  if (PyArray_ImportNumPyAPI() < 0 || PyUFunc_ImportUFuncAPI() < 0) {
    return -1;
  }
  PyObject *errors = PyImport_ImportModule("ckernels.errors");
  if (errors == NULL) {
    return -1;
  }
  ckd_error_class = PyObject_GetAttrString(errors, "error_class");
  Py_DECREF(errors);
  if (ckd_error_class == NULL) {
    return -1;
  }
  ckd_str_array_ufunc = PyUnicode_InternFromString("__array_ufunc__");
  ckd_str_out = PyUnicode_InternFromString("out");
  if (ckd_str_array_ufunc == NULL || ckd_str_out == NULL) {
    return -1;
  }
  if (PyType_Ready(&ckd_data_type) < 0 || PyType_Ready(&ckd_function_type) < 0) {
    return -1;
  }
  ckd_fallback_exc = PyErr_NewExceptionWithDoc(
      "ckernels._dispatch.Fallback",
      "Raised while a ufunc resolves a call (by a compile hook) when the call can\n"
      "only run on the general path (e.g. a result type NumPy has no dtype for):\n"
      "a Function that sent the call to its ufunc then calls its fallback.",
      PyExc_TypeError, NULL);
  if (ckd_fallback_exc == NULL || PyModule_AddObjectRef(m, "Fallback", ckd_fallback_exc) < 0) {
    return -1;
  }
  if (PyModule_AddObjectRef(m, "UFuncData", (PyObject *)&ckd_data_type) < 0 ||
      PyModule_AddObjectRef(m, "Function", (PyObject *)&ckd_function_type) < 0 ||
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
    .m_name = "ckernels._dispatch",
    .m_doc = "NumPy ufuncs whose inner loops are ckernels (see src/python/dispatch.c).",
    .m_size = 0,
    .m_methods = ckd_methods,
    .m_slots = ckd_slots,
};

PyMODINIT_FUNC PyInit__dispatch(void);
PyMODINIT_FUNC PyInit__dispatch(void) { return PyModuleDef_Init(&ckd_module); }
