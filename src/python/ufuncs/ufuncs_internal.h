/*
 * ufuncs_internal.h -- what the files of ckernels._ufuncs share (private
 * to the module; nothing here is ABI).
 *
 * ckernels._ufuncs makes real `numpy.ufunc`s whose loops are ckernels, and
 * the C call path in front of them.  One file per concept, as NumPy's own
 * umath is split (ufunc_object.c / legacy_array_method.c / dispatching.c /
 * umathmodule.c):
 *
 *   ufunc.c     UFuncData (what a ufunc made here owns) and making ufuncs:
 *               the ufunc object, its promoter installed, the type table of
 *               registry ufuncs
 *   loops.c     a loop (ckd_loop): its kernel (a jitted signature or a
 *               registry kernel), the ArrayMethod around it (get_loop, the
 *               reduction initial value, the strided loop), registration
 *   parallel.c  running a loop's kernel on one long run, split over the
 *               library's thread pool when the run is worth it
 *   pyint_compare.c  comparisons of integer arrays with Python ints of any
 *               size (NEP 50: answered, never an overflow), as NumPy's
 *               special_integer_comparisons
 *   string_loops.c  the loops of jitted signatures with `string` arguments
 *               or results, over NumPy's StringDType (the NpyString API)
 *   time_loops.c  loops over datetime64 / timedelta64 (M8 / m8): one
 *               ArrayMethod per DType signature whose resolve_descriptors
 *               picks the loop of the operands' units
 *   promoter.c  type resolution: which loop a call's DTypes take (NEP 50
 *               weak Python scalars, safe casts, ck_op_resolve, lazy
 *               compilation)
 *   function.c  Function: the callable in front of a ufunc (NumPy operands to
 *               the ufunc, everything else to the general path)
 *   gufunc.c    generalized ufuncs (core dims) over jitted kernels with core
 *               dims: their loops and how they are made
 *   module.c    the module: its functions, set-up (exec)
 *
 * Errors are raised through py_errors.h (the ckernels.errors class of a
 * status), as in ckernels._arrays.
 *
 * NumPy's C API tables: module.c defines and imports them (CKD_MODULE_C);
 * the other files use the same unique symbols (py_types.h names the array
 * API's).
 */
#ifndef CKERNELS_UFUNCS_INTERNAL_H
#define CKERNELS_UFUNCS_INTERNAL_H

#ifdef CKD_MODULE_C
#define CKPY_DEFINE_NUMPY_API
#endif
#include "py_types.h"

#define PY_UFUNC_UNIQUE_SYMBOL ckd_UFUNC_API
#ifndef CKD_MODULE_C
#define NO_IMPORT_UFUNC
#endif
#include <numpy/ufuncobject.h>
#include <numpy/dtype_api.h>

#include <stdint.h>

#include <ckernel/ckernel.h>

#include "py_errors.h"

/* Most inputs a loop may have: the jit's limit (the registry's is lower). */
#define CKD_MAX_NIN CK_LIFT_MAX_NSRC
#define CKD_MAX_ARGS (CKD_MAX_NIN + 1)
/* Most entries in a registry ufunc's type table (the builtin scalars). */
#define CKD_MAX_TYPES 32
/* Elements timed before deciding to split a run over the pool (runs shorter
 * than twice this are never split). */
#define CKD_PROBE_ELEMENTS 2048

_Static_assert(sizeof(npy_intp) == sizeof(intptr_t),
               "NumPy strides are passed to kernels as intptr_t");
_Static_assert(CKD_MAX_ARGS <= NPY_MAXARGS, "NumPy limits the operand count");

/* ---- loops.c ------------------------------------------------------------ */

/* One loop: an ArrayMethod's kernel.  Allocated once, never moved (NumPy
 * holds `&aux` during calls), freed with its UFuncData.  Owns its kernel
 * builder, hence the kernel tree and -- for jitted kernels -- a reference to
 * the code memblock that keeps the compiled code alive. */
typedef struct ckd_loop {
  NpyAuxData aux;                          /* must stay first              */
  int nin;
  PyArray_DTypeMeta *dtypes[CKD_MAX_ARGS]; /* owned: inputs..., output     */
  ck_type_id ids[CKD_MAX_ARGS];            /* ckernel type ids, same order */
  npy_intp itemsize[CKD_MAX_ARGS];
  ck_kernel_builder ckb;                   /* owns the kernel tree         */
  ck_prefix *kernel;                       /* root of ckb (strided request) */
  ck_expr_strided_t strided;
  /* Comparisons with a Python int (pyint_compare.c): the operand that is
   * the Python int (an object operand), else -1; the comparison (Py_LT ..
   * Py_GE) and the loop of the integer type with itself (not owned). */
  int pyint;
  int cmp;
  const struct ckd_loop *same;
  unsigned strings;                        /* bit i: operand i is a string */
  unsigned times;                          /* bit i: operand i is an instant
                                              or duration (M8 / m8)        */
  PyArray_Descr *descrs[CKD_MAX_ARGS];     /* owned: the dtypes the loop was
                                              made for (time loops: their
                                              units are the loop's)        */
  int primary;                             /* registered as the ArrayMethod
                                              of its DTypes (time loops of
                                              other units are not: the
                                              primary's resolver picks them) */
  ck_jit_kernel_desc desc;                 /* jitted loops: what kernels of
                                              a string result are built from
                                              (its `code` kept alive by ckb) */
  char name[CK_JIT_NAME_MAX + 32];
} ckd_loop;

/* ---- ufunc.c ------------------------------------------------------------ */

/* What a ufunc made here owns (the ufunc's `obj`, which NumPy decrefs and
 * GC-visits): its loops, name, doc, identity, compile hook and -- registry
 * ufuncs -- the operation and the DType <-> ckernel id table. */
typedef struct {
  PyObject_HEAD
  PyObject *name;      /* bytes: ufunc->name points into it                */
  PyObject *doc;       /* bytes or NULL: ufunc->doc points into it         */
  PyObject *identity;  /* Py_None: no identity                             */
  PyObject *compile;   /* lazily compiled functions' callback, or NULL     */
  const ck_op *op;     /* registry ufuncs: the operation, else NULL        */
  int ntypes;          /* registry ufuncs: NumPy DType <-> ckernel id      */
  PyArray_DTypeMeta *type_dt[CKD_MAX_TYPES]; /* owned                      */
  ck_type_id type_id[CKD_MAX_TYPES];
  int nin;
  int reorderable;
  int pairwise;        /* float reductions in NumPy's pairwise tree: a sum
                          (reorderable, identity 0; registry ufuncs: add)   */
  int resolved;        /* the promoter has answered a call                 */
  int cmp;             /* registry comparisons: Py_LT .. Py_GE, else -1    */
  int time_slot;       /* time_loops.c: 1 + the resolver slot, 0 if none   */
  Py_ssize_t nloops, cap;
  ckd_loop **loops;
  /* The loops as the ufunc's legacy tables say them (ufunc.types, .ntypes:
   * type numbers, and a legacy entry point per loop), rebuilt as loops are
   * added; the ufunc points into these. */
  char *types;
  PyUFuncGenericFunction *functions;
  void **data;
} ckd_data;

extern PyTypeObject ckd_data_type;

/* The UFuncData of a ufunc made here, else NULL (no exception set). */
ckd_data *ckd_data_of(PyObject *ufunc);
/* The same, raising CKTypeError for any other object. */
ckd_data *ckd_data_of_arg(PyObject *ufunc);
/* A new ufunc (nout = 1, no loops yet) owning a new UFuncData; the promoter
 * is installed.  `op`: a registry operation, else NULL. */
PyObject *ckd_new_ufunc(const char *name, int nin, PyObject *doc, PyObject *identity,
                        PyObject *reorderable, PyObject *compile, const ck_op *op);
/* -1 (InvalidStateError) when loops may no longer be added: the ufunc has
 * resolved calls and has no compile hook (NumPy caches its answers). */
int ckd_check_open(const ckd_data *d);
/* d's DType <-> ckernel id table from a mapping id -> dtype (builtin
 * numeric dtypes only, each checked like a loop's). */
int ckd_read_type_table(ckd_data *d, PyObject *dtype_of_id);
/* Point the ufunc's legacy tables (types, ntypes, functions, data) at d's
 * loops of NumPy's legacy dtypes (not the StringDType ones, which have no
 * type character): what `ufunc.types` lists.  NumPy never runs them (the ufunc has no
 * legacy type resolver); other C code reading the tables gets entry points
 * that work.  0, or -1 with an exception. */
int ckd_update_types(PyObject *ufunc, ckd_data *d);

/* ---- loops.c ------------------------------------------------------------ */

/* Is `descr` a native NumPy dtype holding ckernel type `id` (same kind and
 * size)?  0, or -1 with an exception. */
int ckd_check_descr(const ckd_data *d, PyArray_Descr *descr, ck_type_id id);
/* Add the loop of a jitted signature (the kernel built from `desc`) for the
 * NumPy dtypes `dtypes` (inputs, then output).  0, or -1 with an exception. */
int ckd_add_jit_loop(PyObject *ufunc, ckd_data *d, const ck_jit_kernel_desc *desc,
                     PyObject *dtypes);
/* Add one loop per kernel of the registry operation d->op whose types all
 * map through `dtype_of_id`.  0, or -1 with an exception. */
int ckd_add_op_loops(PyObject *ufunc, ckd_data *d, const char *op_name,
                     PyObject *dtype_of_id);
/* A zeroed loop of d's arity, no kernel, not a Python-int comparison. */
ckd_loop *ckd_loop_alloc(const ckd_data *d);
/* Register L as an ArrayMethod of `ufunc` and keep it in d (takes L). */
int ckd_add_loop(PyObject *ufunc, ckd_data *d, ckd_loop *L);
void ckd_loop_free(ckd_loop *L);
/* The loop as a legacy ufunc entry point (ckd_update_types). */
void ckd_legacy_loop(char **args, npy_intp const *dimensions, npy_intp const *steps,
                     void *data);

/* ---- parallel.c --------------------------------------------------------- */

/* Run L's kernel over n elements (NumPy's data / strides, inputs then the
 * output), split over the library's pool when worth it.  No GIL needed;
 * errors as the kernel's (ck_last_error on the calling thread). */
ck_status ckd_run(ckd_loop *L, char *const *data, npy_intp n, const npy_intp *strides);

/* ---- promoter.c ------------------------------------------------------------ */

/* No compiled signature takes the operands of an explicitly typed jitted
 * function's ufunc or gufunc (nothing fixed by dtype= / signature=): raise
 * the error ckernels.ufuncs.no_loop_error builds (naming the argument, its
 * type and the casting rule; a subclass of NumPy's no-loop error).
 * Returns -1. */
int ckd_raise_no_loop(PyObject *ufunc, int nin, PyArray_DTypeMeta *const op_dtypes[]);

/* ---- pairwise.c ------------------------------------------------------------ */

/* Is this call of L a float reduction that NumPy's add would sum pairwise
 * (a ufunc with d->pairwise, float32/float64 throughout, the binary-reduce
 * layout)?  ckd_pairwise_reduce then runs it in NumPy's pairwise tree with
 * L's kernel combining (`op_add`: the registry's add, summed directly). */
int ckd_pairwise_applies(const ckd_data *d, const ckd_loop *L, char *const *data,
                         const npy_intp *strides);
ck_status ckd_pairwise_reduce(const ckd_loop *L, int op_add, char *const *data, npy_intp n,
                              const npy_intp *strides);
/* May a run be split into independent pieces?  Not when every element writes
 * one place (reductions) or an input overlaps the output other than exactly
 * in place (accumulations read what the previous element wrote). */
int ckd_splittable(const ckd_loop *L, char *const *data, const npy_intp *strides,
                   npy_intp n);
/* The splitting threshold, in ns of estimated serial time. */
void ckd_set_parallel_min_ns(int64_t ns);
int64_t ckd_get_parallel_min_ns(void);

/* ---- string_loops.c ----------------------------------------------------- */

/* The strided loop of loops with string operands (L->strings != 0). */
int ckd_string_loop(PyArrayMethod_Context *context, char *const *data,
                    const npy_intp *dimensions, const npy_intp *strides, NpyAuxData *aux);
/* Their resolve_descriptors for `nin` inputs and one output: operands as
 * given (native byte order), a new StringDType for a string output that is
 * not given. */
PyArrayMethod_ResolveDescriptors *ckd_string_resolver(int nin);

/* ---- time_loops.c ------------------------------------------------------- */

/* The resolve_descriptors of d's time loops (one per ufunc: the method
 * object is opaque, so each ufunc with time loops takes one of a fixed pool
 * of resolvers, which knows d); NULL with an exception when the pool is
 * spent.  Released by ckd_time_release (UFuncData's dealloc). */
PyArrayMethod_ResolveDescriptors *ckd_time_resolver(ckd_data *d);
void ckd_time_release(ckd_data *d);
/* Does time loop L take operands of exactly these descriptors (units
 * equivalent; NULL entries match anything)? */
int ckd_time_loop_matches(const ckd_loop *L, PyArray_Descr *const *descrs, int nargs);
/* Registry ufuncs (d->op): a new loop (not added) of the operation's time
 * kernel (ck_make_time_op_kernel) for inputs of these descriptors, its
 * result the kernel's type; NULL with an exception (the kernel's error for
 * combinations the operation does not define). */
ckd_loop *ckd_time_op_loop(ckd_data *d, PyArray_Descr *const *in_descrs);

/* ---- promoter.c --------------------------------------------------------- */

/* NumPy's promoter hook (PyUFunc_AddPromoter) of every ufunc made here. */
int ckd_promoter(PyObject *ufunc, PyArray_DTypeMeta *const op_dtypes[],
                 PyArray_DTypeMeta *const signature[], PyArray_DTypeMeta *new_op_dtypes[]);
/* A unary jitted ufunc called on one Python int / float / complex `arg`:
 * the call through the loop the weak scalar takes, or NULL (no exception)
 * when the ordinary call does the same. */
PyObject *ckd_call_weak_unary(PyObject *ufunc, PyObject *arg);

/* ---- pyint_compare.c ---------------------------------------------------- */

/* The comparison (Py_LT .. Py_GE) a registry operation named `op_name` is
 * (less, less_equal, equal, not_equal, greater, greater_equal), else -1. */
int ckd_comparison_of(const char *op_name);
/* Registry comparisons (d->cmp >= 0): add the loops (T, object) -> bool and
 * (object, T) -> bool for every integer T with a (T, T) -> bool loop.
 * 0, or -1 with an exception. */
int ckd_add_pyint_loops(PyObject *ufunc, ckd_data *d);
/* The Python-int loop for integer type `id` with the Python int as operand
 * `pyint`, else NULL. */
ckd_loop *ckd_find_pyint_loop(const ckd_data *d, ck_type_id id, int pyint);
/* Run a Python-int loop (GIL held).  0, or -1 with an exception. */
int ckd_pyint_run(const ckd_loop *L, char *const *data, npy_intp n, const npy_intp *strides);
/* ---- gufunc.c ----------------------------------------------------------- */

/* A new gufunc `name` with NumPy signature `signature` ("(n),(n)->()") and
 * one loop per item of `loops`, a sequence of (address of a
 * ck_jit_kernel_desc with core dims, NumPy dtypes of inputs and output).
 * Each loop holds its own reference to the compiled code.  NULL with an
 * exception on failure. */
PyObject *ckg_new_gufunc(const char *name, const char *signature, PyObject *doc,
                         PyObject *loops);

/* ---- function.c --------------------------------------------------------- */

/* Ready the Function type and add Function and Fallback to the module. */
int ckd_function_setup(PyObject *module);

#endif /* CKERNELS_UFUNCS_INTERNAL_H */
