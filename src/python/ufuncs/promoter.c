/*
 * promoter.c -- type resolution of ckernels._ufuncs's ufuncs: a promoter
 * registered for every operand, which NumPy calls when no loop matches the
 * operand DTypes exactly (NumPy caches its answers per operand DTypes).
 *
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
 *     types the inputs may also reach the loop by same-kind casts (else,
 *     with the result type fixed, any cast: NumPy then applies `casting=`
 *     and names the cast that failed), as NumPy's `np.add(f8, f8,
 *     dtype=f4)` does.  (A reduction fixes the first input to the result's
 *     type: `equal.reduce(int64)` finds no loop, as in NumPy.)
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
 *     operand types (weak scalars: the NEP 50 rule, ck_weak_result, with
 *     the other inputs' promoted type), so the results match ckernels.ops
 *     and NumPy's own tables; comparisons of an integer array with a Python
 *     int take the loops of pyint_compare.c.
 */
#include "ufuncs_internal.h"

#include <string.h>

/* An operand is strong (0) or a weak Python scalar of a ck_weak_kind. */
enum { CKD_STRONG = 0 };

static int ckd_weak_kind(PyArray_DTypeMeta *dt) {
  if (dt == &PyArray_PyLongDType) {
    return CK_WEAK_INT;
  }
  if (dt == &PyArray_PyFloatDType) {
    return CK_WEAK_FLOAT;
  }
  if (dt == &PyArray_PyComplexDType) {
    return CK_WEAK_COMPLEX;
  }
  return CKD_STRONG;
}

static PyArray_DTypeMeta *ckd_weak_default(int weak) {
  switch (weak) {
  case CK_WEAK_INT: return &PyArray_DefaultIntDType;
  case CK_WEAK_FLOAT: return &PyArray_DoubleDType;
  default: return &PyArray_CDoubleDType;
  }
}

static int ckd_is_numeric(PyArray_DTypeMeta *dt) {
  int t = dt->type_num;
  return dt->singleton != NULL && (PyTypeNum_ISBOOL(t) || PyTypeNum_ISNUMBER(t));
}

static int ckd_equiv(PyArray_DTypeMeta *from, PyArray_DTypeMeta *to) {
  return from == to || (ckd_is_numeric(from) && ckd_is_numeric(to) &&
                        PyArray_EquivTypenums(from->type_num, to->type_num));
}

/* NumPy text ('U', and 'S' decoded as UTF-8, refused when invalid) reaches a
 * StringDType loop by NumPy's own cast (same_kind: the ufunc's default
 * casting allows it). */
static int ckd_text_to_string(PyArray_DTypeMeta *from, PyArray_DTypeMeta *to) {
  return to == &PyArray_StringDType &&
         (from == &PyArray_UnicodeDType || from == &PyArray_BytesDType);
}

static int ckd_safe(PyArray_DTypeMeta *from, PyArray_DTypeMeta *to) {
  return ckd_equiv(from, to) || ckd_text_to_string(from, to) ||
         (ckd_is_numeric(from) && ckd_is_numeric(to) &&
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
    return ckd_equiv(from, to) || ckd_text_to_string(from, to) ||
           (ckd_is_numeric(from) && ckd_is_numeric(to) &&
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
             : ops->weak[i] != CKD_STRONG ? ckpy_weak_fits(ops->weak[i], L->ids[i])
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
 * inputs reach by same-kind casts, else -- the result type fixed -- the
 * first with those types at all (NumPy then applies `casting=` to the
 * inputs and says what failed). */
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
    if (L == NULL && signature[d->nin] != NULL) {
      /* Only with the result type fixed (dtype=, signature=): any loop of
       * it, NumPy then applies casting=.  An input type alone is fixed by
       * NumPy for reductions (the accumulator's type, e.g. bool for
       * equal.reduce of integers): no loop then, as NumPy answers. */
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

/* Registry ufuncs: the loop of the kernel ck_op_resolve picks for the
 * operands' ckernel types: strong operands their own, weak Python scalars
 * the NEP 50 result with the strong operands' promoted type
 * (ck_weak_result over ck_promote_types: numpy.result_type's answer).
 * Returns -1 with an exception set, 0 (none) or 1 (*out set). */
static int ckd_registry_fit(const ckd_data *d, const ckd_operands *ops, ckd_loop **out) {
  int nin = d->nin;
  ck_type_id ids[CKD_MAX_NIN], kargs[CKD_MAX_NIN], ret;
  ck_type_id common = CK_TYPE_UNINITIALIZED;
  for (int i = 0; i < nin; i++) {
    if (ops->in[i] == NULL) {
      return 0;
    }
    if (ops->weak[i] != CKD_STRONG) {
      continue;
    }
    if (!ckd_id_of(d, ops->in[i], &ids[i])) {
      return 0; /* a type the operation has no kernels for */
    }
    if (common == CK_TYPE_UNINITIALIZED) {
      common = ids[i];
    } else if (ck_promote_types(common, ids[i], &common) != CK_OK) {
      return 0;
    }
  }
  if (d->cmp >= 0 && nin == 2 && ops->weak[0] + ops->weak[1] == CK_WEAK_INT) {
    /* an integer array compared with a Python int of any size: the loop
     * that looks at its value (pyint_compare.c) */
    int pyint = ops->weak[0] == CK_WEAK_INT ? 0 : 1;
    ckd_loop *L = ckd_find_pyint_loop(d, ids[1 - pyint], pyint);
    if (L != NULL) {
      *out = L;
      return 1;
    }
  }
  for (int i = 0; i < nin; i++) {
    if (ops->weak[i] != CKD_STRONG &&
        ck_weak_result(common, (ck_weak_kind)ops->weak[i], &ids[i]) != CK_OK) {
      return 0;
    }
  }
  if (ck_op_resolve(d->op, (size_t)nin, ids, &ret, kargs) != CK_OK) {
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

/* Registry ufuncs over datetime64 / timedelta64 (time_loops.c): the
 * primary time loop of these input DTypes, made on first use from the
 * operation's time kernel for seconds (every other unit is resolved per
 * call).  -1 with an exception, 0 (none: not a time call, or a combination
 * the operation does not define) or 1 (*out set). */
static int ckd_time_op_fit(PyObject *ufunc, ckd_data *d, const ckd_operands *ops,
                           ckd_loop **out) {
  int nin = d->nin, any_time = 0;
  PyArray_DTypeMeta *in[CKD_MAX_NIN];
  for (int i = 0; i < nin; i++) {
    in[i] = ops->weak[i] != CKD_STRONG ? ckd_weak_default(ops->weak[i]) : ops->in[i];
    if (in[i] == NULL) {
      return 0;
    }
    any_time |= in[i]->type_num == NPY_DATETIME || in[i]->type_num == NPY_TIMEDELTA;
  }
  if (!any_time) {
    return 0;
  }
  for (Py_ssize_t k = 0; k < d->nloops; k++) {
    ckd_loop *L = d->loops[k];
    if (L->times && L->primary &&
        memcmp(L->dtypes, in, (size_t)nin * sizeof L->dtypes[0]) == 0) {
      *out = L;
      return 1;
    }
  }
  PyArray_Descr *probe[CKD_MAX_NIN] = {0};
  int rc = 0;
  for (int i = 0; i < nin; i++) {
    int tn = in[i]->type_num;
    if (tn == NPY_DATETIME || tn == NPY_TIMEDELTA) {
      PyObject *spec = PyUnicode_FromString(tn == NPY_DATETIME ? "M8[s]" : "m8[s]");
      if (spec == NULL || !PyArray_DescrConverter(spec, &probe[i])) {
        probe[i] = NULL;
      }
      Py_XDECREF(spec);
    } else {
      probe[i] = in[i]->singleton;
      Py_XINCREF(probe[i]);
    }
    if (probe[i] == NULL) {
      PyErr_Clear();
      goto done; /* an abstract or unknown operand: no time loop */
    }
  }
  ckd_loop *L = ckd_time_op_loop(d, probe);
  if (L == NULL) {
    PyErr_Clear(); /* not defined for these kinds: NumPy's "no loop" */
    goto done;
  }
  if (ckd_add_loop(ufunc, d, L) < 0) {
    rc = -1;
    goto done;
  }
  *out = d->loops[d->nloops - 1];
  rc = 1;
done:
  for (int i = 0; i < nin; i++) {
    Py_XDECREF(probe[i]);
  }
  return rc;
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

int ckd_raise_no_loop(PyObject *ufunc, int nin, PyArray_DTypeMeta *const op_dtypes[]) {
  PyObject *dts = PyTuple_New(nin);
  if (dts == NULL) {
    return -1;
  }
  for (int i = 0; i < nin; i++) {
    PyTuple_SET_ITEM(dts, i, Py_NewRef(op_dtypes[i] ? (PyObject *)op_dtypes[i] : Py_None));
  }
  PyObject *mod = PyImport_ImportModule("ckernels.ufuncs");
  PyObject *exc = mod ? PyObject_CallMethod(mod, "no_loop_error", "OO", ufunc, dts) : NULL;
  if (exc != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
  }
  Py_XDECREF(exc);
  Py_XDECREF(mod);
  Py_DECREF(dts);
  return -1;
}

int ckd_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                 PyArray_DTypeMeta *const signature[], PyArray_DTypeMeta *new_op_dtypes[]) {
  ckd_data *d = ckd_data_of(ufunc);
  if (d == NULL) {
    ckpy_raisef(CK_ERR_INVALID_STATE, "ckernels promoter called for %R", ufunc);
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
    if (L == NULL && ckd_time_op_fit(ufunc, d, &ops, &L) < 0) {
      return -1;
    }
  } else {
    if (d->compile == NULL) {
      L = ckd_best_fit(d, &ops, signature, fixed);
      int all_in = d->nloops > 0;
      for (int i = 0; i < d->nin; i++) {
        all_in &= op_dtypes[i] != NULL;
      }
      if (L == NULL && !fixed && all_in) {
        return ckd_raise_no_loop(ufunc, d->nin, op_dtypes);
      }
    } else {
      L = ckd_first_fit(d, &ops, signature, CKD_EXACT);
      if (L == NULL) {
        if (ckd_compile_for(d, &ops, signature) < 0) {
          return -1;
        }
        L = ckd_first_fit(d, &ops, signature, CKD_EXACT);
        if (L == NULL && !fixed) {
          /* NumPy text ('U', 'S') compiled as `string`: its StringDType loop
           * is reached by NumPy's cast */
          L = ckd_first_fit(d, &ops, signature, CKD_SAFE);
        }
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

/* A unary jitted function called on one Python int / float / complex: NumPy
 * hands the promoter the scalar's default DType, not the weak one (it does
 * so for several operands), so the rule of ckd_best_fit for "only Python
 * scalars" is applied here: with no loop of the default type, the first
 * loop the scalar fits by kind, through signature=.  NULL (no exception)
 * when the ordinary call does the same. */
PyObject *ckd_call_weak_unary(PyObject *ufunc, PyObject *arg) {
  ckd_data *d = ckd_data_of(ufunc);
  if (d == NULL || d->op != NULL || d->compile != NULL) {
    return NULL;
  }
  int weak = ckpy_weak_kind(arg);
  PyArray_DTypeMeta *def = ckd_weak_default(weak);
  ckd_loop *fit = NULL;
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    if (ckd_equiv(def, L->dtypes[0])) {
      return NULL;
    }
    if (fit == NULL && ckpy_weak_fits(weak, L->ids[0])) {
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

