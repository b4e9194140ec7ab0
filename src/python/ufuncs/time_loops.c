/*
 * time_loops.c -- the loops of ckernels._ufuncs's ufuncs over NumPy's
 * datetime64 / timedelta64 (M8 / m8).
 *
 * A unit is a parameter of the M8 and m8 DTypes (as a length is one of the
 * `U` DType), so NumPy keeps one ArrayMethod per DType signature -- one for
 * (M8, m8) -> M8 -- while a jitted function has one kernel per unit
 * signature: `datetime64[s](datetime64[s], timedelta64[s])` and
 * `datetime64[ms](datetime64[ms], timedelta64[ms])` are two kernels.  So the
 * first loop of a DType signature is registered (its `primary`) and the
 * loops of other units join the ufunc's loop list only; the primary's
 * resolve_descriptors picks, for the operands' descriptors:
 *
 *   1. the loop whose inputs have the operands' units (equivalent
 *      descriptors: byte order aside);
 *   2. functions compiled lazily: else the loop the compile callback adds
 *      for exactly these dtypes (`compile(input dtypes, None)`);
 *   3. else the first loop (in the order added) every input casts to under
 *      NumPy's "safe" rule (NumPy's own: a coarser unit to a finer one,
 *      M8[D] -> M8[s]; a unitless NaT to any unit), which NumPy then casts;
 *   4. else a TypeError naming the operands' units and the loops' (a finer
 *      unit to a coarser one loses digits: the caller casts first, as
 *      NumPy's astype says how).
 *
 * The result descriptor is the loop's (its unit); NumPy casts it into an
 * `out=` of another unit under the call's `casting=`, and for a reduction
 * checks that the loop's first input and result are the same
 * (`timedelta64[s](timedelta64[s], timedelta64[s])` reduces m8[s]).
 * get_loop (loops.c) then runs the kernel of that loop.  String operands of
 * a time loop (`string(datetime64[s])`) take their given descriptor, and a
 * string result a new StringDType.
 *
 * The method object handed to resolve_descriptors is opaque (NumPy's
 * struct is private), so it cannot say which ufunc it serves: each ufunc
 * with time loops takes one of a fixed pool of resolver functions, each
 * bound to one slot of `ckd_time_slots` that holds the ufunc's UFuncData
 * (borrowed: UFuncData's dealloc releases the slot, and NumPy drops the
 * method with the ufunc).
 */
#include "ufuncs_internal.h"

#include <string.h>

/* Ufuncs with time loops alive at once. */
#define CKD_TIME_SLOTS 512

static ckd_data *ckd_time_slots[CKD_TIME_SLOTS];

int ckd_time_loop_matches(const ckd_loop *L, PyArray_Descr *const *descrs, int nargs) {
  for (int i = 0; i < nargs; i++) {
    if (!(L->times & (1u << i)) || descrs[i] == NULL) {
      continue;
    }
    if (!PyArray_CanCastTypeTo(descrs[i], L->descrs[i], NPY_EQUIV_CASTING)) {
      return 0;
    }
  }
  return 1;
}

/* Do the inputs cast to L's under `casting` (outputs are NumPy's to cast)? */
static int ckd_time_inputs_cast(const ckd_loop *L, PyArray_Descr *const *given, int nin,
                                NPY_CASTING casting) {
  for (int i = 0; i < nin; i++) {
    if (given[i] != NULL && !PyArray_CanCastTypeTo(given[i], L->descrs[i], casting)) {
      return 0;
    }
  }
  return 1;
}

/* The first time loop of d with DTypes `dtypes` whose inputs take `given`
 * under `casting`. */
static ckd_loop *ckd_time_find(const ckd_data *d, PyArray_DTypeMeta *const *dtypes,
                               PyArray_Descr *const *given, NPY_CASTING casting) {
  int nargs = d->nin + 1;
  for (Py_ssize_t i = 0; i < d->nloops; i++) {
    ckd_loop *L = d->loops[i];
    if (!L->times ||
        memcmp(L->dtypes, dtypes, (size_t)nargs * sizeof L->dtypes[0]) != 0) {
      continue;
    }
    if (casting == NPY_EQUIV_CASTING ? ckd_time_loop_matches(L, given, d->nin)
                                     : ckd_time_inputs_cast(L, given, d->nin, casting)) {
      return L;
    }
  }
  return NULL;
}

/* Lazily compiled functions: compile(input dtypes, None) adds the loop of
 * these units (or raises).  0, or -1 with an exception. */
static int ckd_time_compile(ckd_data *d, PyArray_Descr *const *given) {
  PyObject *in = PyTuple_New(d->nin);
  if (in == NULL) {
    return -1;
  }
  for (int i = 0; i < d->nin; i++) {
    PyObject *g = given[i] != NULL ? (PyObject *)given[i] : Py_None;
    PyTuple_SET_ITEM(in, i, Py_NewRef(g));
  }
  PyObject *r = PyObject_CallFunctionObjArgs(d->compile, in, Py_None, NULL);
  Py_DECREF(in);
  if (r == NULL) {
    return -1;
  }
  Py_DECREF(r);
  return 0;
}

/* "(datetime64[s], timedelta64[s])": n descriptors as NumPy names them. */
static PyObject *ckd_descrs_text(PyArray_Descr *const *descrs, int n) {
  PyObject *parts = PyList_New(n);
  if (parts == NULL) {
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    PyObject *s = PyObject_Str(descrs[i] ? (PyObject *)descrs[i] : Py_None);
    if (s == NULL) {
      Py_DECREF(parts);
      return NULL;
    }
    PyList_SET_ITEM(parts, i, s);
  }
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
  Py_XDECREF(sep);
  Py_DECREF(parts);
  if (joined == NULL) {
    return NULL;
  }
  Py_SETREF(joined, PyUnicode_FromFormat("(%U)", joined));
  return joined;
}

/* The TypeError of operands whose units no loop takes. */
static void ckd_time_raise_no_loop(const ckd_data *d, PyArray_DTypeMeta *const *dtypes,
                                   PyArray_Descr *const *given) {
  int nargs = d->nin + 1;
  PyObject *got = ckd_descrs_text(given, d->nin);
  PyObject *have = PyList_New(0);
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *loops = NULL;
  if (got == NULL || have == NULL || sep == NULL) {
    goto done;
  }
  for (Py_ssize_t k = 0; k < d->nloops; k++) {
    const ckd_loop *L = d->loops[k];
    if (!L->times || memcmp(L->dtypes, dtypes, (size_t)nargs * sizeof L->dtypes[0]) != 0) {
      continue;
    }
    PyObject *t = ckd_descrs_text(L->descrs, d->nin);
    if (t == NULL) {
      goto done;
    }
    int rc = PyList_Append(have, t);
    Py_DECREF(t);
    if (rc < 0) {
      goto done;
    }
  }
  loops = PyUnicode_Join(sep, have);
  if (loops == NULL) {
    goto done;
  }
  ckpy_raisef(CK_ERR_TYPE,
              "%s: no loop takes operands of dtypes %U: its loops take %U, and these "
              "operands do not cast to one under NumPy's 'safe' rule (a finer time unit "
              "does not cast to a coarser one): cast them first (.astype(...)) or "
              "compile a signature of their units",
              PyBytes_AS_STRING(d->name), got, loops);
done:
  Py_XDECREF(got);
  Py_XDECREF(have);
  Py_XDECREF(sep);
  Py_XDECREF(loops);
}

/* ---- registry operations -------------------------------------------------- */

/* The ckernel type of an operand descriptor of a registry time loop (a new
 * reference in *out): M8 / m8 of one unit, or a builtin number. */
static int ckd_time_ck_type(const ckd_data *d, PyArray_Descr *descr, ck_type *out) {
  if (descr->type_num == NPY_DATETIME || descr->type_num == NPY_TIMEDELTA) {
    PyArray_DatetimeDTypeMetaData *md =
        (PyArray_DatetimeDTypeMetaData *)PyDataType_C_METADATA(descr);
    int unit = md != NULL ? (int)md->meta.base : -1;
    if (md == NULL || md->meta.num != 1 || unit < 0 || unit > NPY_FR_ns ||
        ck_time_unit_name((ck_time_unit)unit) == NULL) {
      ckpy_raisef(CK_ERR_TYPE, "%s: dtype %S has no ckernels time type (units Y, M, W, D, "
                  "h, m, s, ms, us, ns without multiples)", PyBytes_AS_STRING(d->name),
                  (PyObject *)descr);
      return -1;
    }
    ck_status st = descr->type_num == NPY_DATETIME
                       ? ck_datetime_type_new((ck_time_unit)unit, NULL, out)
                       : ck_timedelta_type_new((ck_time_unit)unit, out);
    if (st != CK_OK) {
      ckpy_raise_last(st);
      return -1;
    }
    return 0;
  }
  ck_type_id id = ckpy_id_of_descr(descr);
  if (id == CK_TYPE_UNINITIALIZED) {
    ckpy_raisef(CK_ERR_TYPE, "%s: no time kernel takes dtype %S", PyBytes_AS_STRING(d->name),
                (PyObject *)descr);
    return -1;
  }
  *out = CK_BUILTIN(id);
  return 0;
}

/* The NumPy descriptor of a time kernel's result type (a new reference). */
static PyArray_Descr *ckd_time_result_descr(ck_type t) {
  ck_type_id id = ck_type_id_of(t);
  if (id == CK_TYPE_DATETIME || id == CK_TYPE_TIMEDELTA) {
    PyObject *spec = PyUnicode_FromFormat("%s8[%s]", id == CK_TYPE_DATETIME ? "M" : "m",
                                          ck_time_unit_name((ck_time_unit)ck_time_type_unit(t)));
    PyArray_Descr *descr = NULL;
    if (spec != NULL && !PyArray_DescrConverter(spec, &descr)) {
      descr = NULL;
    }
    Py_XDECREF(spec);
    return descr;
  }
  int typenum = id == CK_TYPE_BOOL ? NPY_BOOL : id == CK_TYPE_INT64 ? NPY_INT64
              : id == CK_TYPE_FLOAT64 ? NPY_FLOAT64 : -1;
  if (typenum < 0) {
    ckpy_raisef(CK_ERR_TYPE, "a time kernel's result '%s' has no NumPy dtype",
                ck_type_id_name(id));
    return NULL;
  }
  return PyArray_DescrFromType(typenum);
}

ckd_loop *ckd_time_op_loop(ckd_data *d, PyArray_Descr *const *in_descrs) {
  int nin = d->nin;
  const char *op_name = ck_op_name(d->op);
  ck_type types[CKD_MAX_NIN] = {0};
  ck_type ret = NULL;
  ckd_loop *L = ckd_loop_alloc(d);
  if (L == NULL) {
    return NULL;
  }
  int ok = 0;
  for (int i = 0; i < nin; i++) {
    if (ckd_time_ck_type(d, in_descrs[i], &types[i]) < 0) {
      goto done;
    }
  }
  ck_status st = ck_make_time_op_kernel(op_name, &L->ckb, 0, CK_KERNEL_REQUEST_STRIDED,
                                        (size_t)nin, types, &ret, NULL);
  if (st != CK_OK) {
    ckpy_raise_last(st);
    goto done;
  }
  L->kernel = ck_kernel_builder_get(&L->ckb, 0);
  L->strided = ck_prefix_strided(L->kernel);
  for (int i = 0; i <= nin; i++) {
    PyArray_Descr *descr = i < nin ? (PyArray_Descr *)Py_NewRef((PyObject *)in_descrs[i])
                                   : ckd_time_result_descr(ret);
    if (descr == NULL) {
      goto done;
    }
    if (!PyArray_ISNBO(descr->byteorder)) {
      Py_SETREF(descr, PyArray_DescrNewByteorder(descr, NPY_NATIVE));
      if (descr == NULL) {
        goto done;
      }
    }
    L->descrs[i] = descr;
    L->dtypes[i] = (PyArray_DTypeMeta *)Py_NewRef((PyObject *)NPY_DTYPE(descr));
    L->ids[i] = i < nin ? ck_type_id_of(types[i]) : ck_type_id_of(ret);
    L->itemsize[i] = PyDataType_ELSIZE(descr);
    if (descr->type_num == NPY_DATETIME || descr->type_num == NPY_TIMEDELTA) {
      L->times |= 1u << i;
    }
  }
  snprintf(L->name, sizeof L->name, "%s(time)", op_name);
  ok = 1;
done:
  for (int i = 0; i < nin; i++) {
    ck_type_decref(types[i]);
  }
  ck_type_decref(ret);
  if (!ok) {
    ckd_loop_free(L);
    return NULL;
  }
  return L;
}

static NPY_CASTING ckd_time_resolve(ckd_data *d, PyArray_DTypeMeta *const *dtypes,
                                    PyArray_Descr *const *given,
                                    PyArray_Descr **loop_descrs) {
  if (d == NULL) {
    ckpy_raisef(CK_ERR_INVALID_STATE, "a ckernels time loop outlived its ufunc");
    return (NPY_CASTING)-1;
  }
  int nargs = d->nin + 1;
  ckd_loop *L = ckd_time_find(d, dtypes, given, NPY_EQUIV_CASTING);
  if (L == NULL && d->compile != NULL) {
    if (ckd_time_compile(d, given) < 0) {
      return (NPY_CASTING)-1;
    }
    L = ckd_time_find(d, dtypes, given, NPY_EQUIV_CASTING);
  }
  if (L == NULL && d->op != NULL) {
    /* a registry operation: the time kernel of exactly these units, beside
     * the primary (NumPy's result unit: the finer of the two) */
    ckd_loop *M = ckd_time_op_loop(d, given);
    if (M == NULL) {
      /* no kernel of these dtypes (a multiple of a unit, a unitless NaT):
       * a loop they cast to safely, else the kernel's error */
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      L = ckd_time_find(d, dtypes, given, NPY_SAFE_CASTING);
      if (L == NULL) {
        PyErr_Restore(type, value, tb);
        return (NPY_CASTING)-1;
      }
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
      goto found;
    }
    if (memcmp(M->dtypes, dtypes, (size_t)nargs * sizeof M->dtypes[0]) != 0) {
      ckpy_raisef(CK_ERR_INVALID_STATE, "%s: the time kernel of %s changed its result kind",
                  PyBytes_AS_STRING(d->name), M->name);
      ckd_loop_free(M);
      return (NPY_CASTING)-1;
    }
    if (ckd_add_loop(NULL, d, M) < 0) {
      return (NPY_CASTING)-1;
    }
    L = ckd_time_find(d, dtypes, given, NPY_EQUIV_CASTING);
  }
  if (L == NULL) {
    L = ckd_time_find(d, dtypes, given, NPY_SAFE_CASTING);
  }
  if (L == NULL) {
    ckd_time_raise_no_loop(d, dtypes, given);
    return (NPY_CASTING)-1;
  }
found:
  for (int i = 0; i < nargs; i++) {
    PyArray_Descr *r;
    if (L->strings & (1u << i)) {
      r = given[i] != NULL
              ? (PyArray_Descr *)Py_NewRef((PyObject *)given[i])
              : (PyArray_Descr *)PyObject_CallNoArgs((PyObject *)&PyArray_StringDType);
    } else {
      r = (PyArray_Descr *)Py_NewRef((PyObject *)L->descrs[i]);
    }
    if (r == NULL) {
      for (int k = 0; k < i; k++) {
        Py_CLEAR(loop_descrs[k]);
      }
      return (NPY_CASTING)-1;
    }
    loop_descrs[i] = r;
  }
  return NPY_NO_CASTING;
}

/* ---- the pool of resolvers ----------------------------------------------- */

#define CKD_TR(n, i)                                                                     \
  static NPY_CASTING ckd_tr_##n(struct PyArrayMethodObject_tag *method,                  \
                                PyArray_DTypeMeta *const *dtypes,                        \
                                PyArray_Descr *const *given, PyArray_Descr **loop_descrs, \
                                npy_intp *view_offset) {                                 \
    (void)method;                                                                        \
    (void)view_offset;                                                                   \
    return ckd_time_resolve(ckd_time_slots[i], dtypes, given, loop_descrs);              \
  }
#define CKD_TR16(g, b)                                                                   \
  CKD_TR(g##_0, (b) + 0) CKD_TR(g##_1, (b) + 1) CKD_TR(g##_2, (b) + 2)                  \
  CKD_TR(g##_3, (b) + 3) CKD_TR(g##_4, (b) + 4) CKD_TR(g##_5, (b) + 5)                  \
  CKD_TR(g##_6, (b) + 6) CKD_TR(g##_7, (b) + 7) CKD_TR(g##_8, (b) + 8)                  \
  CKD_TR(g##_9, (b) + 9) CKD_TR(g##_10, (b) + 10) CKD_TR(g##_11, (b) + 11)              \
  CKD_TR(g##_12, (b) + 12) CKD_TR(g##_13, (b) + 13) CKD_TR(g##_14, (b) + 14)            \
  CKD_TR(g##_15, (b) + 15)
#define CKD_TN16(g)                                                                      \
  &ckd_tr_##g##_0, &ckd_tr_##g##_1, &ckd_tr_##g##_2, &ckd_tr_##g##_3, &ckd_tr_##g##_4,  \
      &ckd_tr_##g##_5, &ckd_tr_##g##_6, &ckd_tr_##g##_7, &ckd_tr_##g##_8,               \
      &ckd_tr_##g##_9, &ckd_tr_##g##_10, &ckd_tr_##g##_11, &ckd_tr_##g##_12,            \
      &ckd_tr_##g##_13, &ckd_tr_##g##_14, &ckd_tr_##g##_15

CKD_TR16(g0, 0) CKD_TR16(g1, 16) CKD_TR16(g2, 32) CKD_TR16(g3, 48)
CKD_TR16(g4, 64) CKD_TR16(g5, 80) CKD_TR16(g6, 96) CKD_TR16(g7, 112)
CKD_TR16(g8, 128) CKD_TR16(g9, 144) CKD_TR16(g10, 160) CKD_TR16(g11, 176)
CKD_TR16(g12, 192) CKD_TR16(g13, 208) CKD_TR16(g14, 224) CKD_TR16(g15, 240)
CKD_TR16(g16, 256) CKD_TR16(g17, 272) CKD_TR16(g18, 288) CKD_TR16(g19, 304)
CKD_TR16(g20, 320) CKD_TR16(g21, 336) CKD_TR16(g22, 352) CKD_TR16(g23, 368)
CKD_TR16(g24, 384) CKD_TR16(g25, 400) CKD_TR16(g26, 416) CKD_TR16(g27, 432)
CKD_TR16(g28, 448) CKD_TR16(g29, 464) CKD_TR16(g30, 480) CKD_TR16(g31, 496)

static PyArrayMethod_ResolveDescriptors *const ckd_time_resolvers[CKD_TIME_SLOTS] = {
    CKD_TN16(g0),  CKD_TN16(g1),  CKD_TN16(g2),  CKD_TN16(g3),  CKD_TN16(g4),
    CKD_TN16(g5),  CKD_TN16(g6),  CKD_TN16(g7),  CKD_TN16(g8),  CKD_TN16(g9),
    CKD_TN16(g10), CKD_TN16(g11), CKD_TN16(g12), CKD_TN16(g13), CKD_TN16(g14),
    CKD_TN16(g15), CKD_TN16(g16), CKD_TN16(g17), CKD_TN16(g18), CKD_TN16(g19),
    CKD_TN16(g20), CKD_TN16(g21), CKD_TN16(g22), CKD_TN16(g23), CKD_TN16(g24),
    CKD_TN16(g25), CKD_TN16(g26), CKD_TN16(g27), CKD_TN16(g28), CKD_TN16(g29),
    CKD_TN16(g30), CKD_TN16(g31),
};

PyArrayMethod_ResolveDescriptors *ckd_time_resolver(ckd_data *d) {
  if (d->time_slot == 0) {
    /* slots are taken and released with the GIL held */
    for (int i = 0; i < CKD_TIME_SLOTS; i++) {
      if (ckd_time_slots[i] == NULL) {
        ckd_time_slots[i] = d;
        d->time_slot = i + 1;
        break;
      }
    }
  }
  if (d->time_slot == 0) {
    ckpy_raisef(CK_ERR_INVALID_STATE,
                "%s: more than %d ufuncs with datetime64 / timedelta64 loops are alive at "
                "once; drop some (their jitted functions) first",
                PyBytes_AS_STRING(d->name), CKD_TIME_SLOTS);
    return NULL;
  }
  return ckd_time_resolvers[d->time_slot - 1];
}

void ckd_time_release(ckd_data *d) {
  if (d->time_slot != 0) {
    ckd_time_slots[d->time_slot - 1] = NULL;
    d->time_slot = 0;
  }
}
