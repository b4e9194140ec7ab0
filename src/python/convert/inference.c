/*
 * inference.c -- the type ckernels.array infers from nested lists, tuples
 * and dicts, in one C pass (scan): per-level sizes, the kind, the int range,
 * struct fields, by the rules of the Python inference; anything it cannot
 * decide goes back to the Python path.
 */
#include "convert_internal.h"

#include <stddef.h>
#include <string.h>

enum { K_NONE = 0, K_BOOL, K_INT, K_FLOAT, K_COMPLEX, K_STRING, K_BYTES, K_STRUCT };
static const char *const ckc_kind_names[] = {NULL,      "bool",   "int",   "float",
                                              "complex", "string", "bytes", "struct"};

/* Scan failure modes: -1 an exception is set; -2 the Python path decides. */
#define CKC_PYTHON_PATH (-2)

typedef struct ckc_acc ckc_acc;

typedef struct {
  PyObject *name; /* owned str */
  ckc_acc *acc;   /* owned */
} ckc_field;

/* The merged facts of a multiset of values (Python's _merge_children over
 * their _Info): n values; per nesting level below them, the set of sizes
 * seen (0 none, 1 one value `val`, 2 several; a size -1 is "ragged"). */
struct ckc_acc {
  Py_ssize_t n, nonempty;
  int nd_min, nd_max;   /* depths of the nonempty values */
  int all_min, all_max; /* depths of all values           */
  uint8_t state[CKC_MAX_DEPTH + 1];
  intptr_t val[CKC_MAX_DEPTH + 1];
  int kind;
  int has_ints;
  long long lo, hi;
  ckc_field *fields;
  Py_ssize_t nfields;
};

/* One value's facts (Python's _Info): its sizes per level, kind, ints and
 * struct fields (accumulators over the field's values). */
typedef struct {
  int depth;
  intptr_t sizes[CKC_MAX_DEPTH + 1];
  int kind;
  int has_ints;
  long long lo, hi;
  int empty;
  ckc_field *fields; /* owned */
  Py_ssize_t nfields;
} ckc_info;

static void ckc_fields_free(ckc_field *f, Py_ssize_t n);

static void ckc_acc_init(ckc_acc *a) {
  memset(a, 0, offsetof(ckc_acc, state));
  a->nd_min = a->all_min = INT32_MAX;
  a->nd_max = a->all_max = -1;
  a->kind = K_NONE;
  a->has_ints = 0;
  a->fields = NULL;
  a->nfields = 0;
  memset(a->state, 0, sizeof a->state);
}

static void ckc_acc_free(ckc_acc *a) {
  if (a != NULL) {
    ckc_fields_free(a->fields, a->nfields);
    PyMem_Free(a);
  }
}

static void ckc_fields_free(ckc_field *f, Py_ssize_t n) {
  if (f == NULL) {
    return;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    Py_XDECREF(f[i].name);
    ckc_acc_free(f[i].acc);
  }
  PyMem_Free(f);
}

static int ckc_merge_kind(int a, int b) {
  if (a == K_NONE) {
    return b;
  }
  if (b == K_NONE || a == b) {
    return a;
  }
  if (a <= K_COMPLEX && b <= K_COMPLEX) {
    return a > b ? a : b;
  }
  return CKC_PYTHON_PATH; /* "cannot mix ...": the Python path raises it */
}

static inline void ckc_level_add(ckc_acc *a, int level, intptr_t v) {
  if (a->state[level] == 0) {
    a->state[level] = 1;
    a->val[level] = v;
  } else if (a->state[level] == 1 && a->val[level] != v) {
    a->state[level] = 2;
  }
}

static int ckc_acc_merge(ckc_acc *a, ckc_acc *b);

/* Merge struct fields `f` (taken over: freed here) into `a`'s. */
static int ckc_fields_merge(ckc_field **af, Py_ssize_t *an, ckc_field *f, Py_ssize_t n) {
  if (*af == NULL) {
    *af = f;
    *an = n;
    return 0;
  }
  int rc = 0;
  if (*an != n) {
    rc = CKC_PYTHON_PATH; /* different fields */
  }
  for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
    Py_ssize_t j = 0;
    while (j < *an && PyUnicode_Compare((*af)[j].name, f[i].name) != 0) {
      j++;
    }
    if (j == *an) {
      rc = PyErr_Occurred() ? -1 : CKC_PYTHON_PATH;
    } else {
      rc = ckc_acc_merge((*af)[j].acc, f[i].acc);
    }
  }
  ckc_fields_free(f, n);
  return rc;
}

static int ckc_ints_merge(int *has, long long *lo, long long *hi, int bhas, long long blo,
                          long long bhi) {
  if (!bhas) {
    return 0;
  }
  if (!*has) {
    *has = 1;
    *lo = blo;
    *hi = bhi;
  } else {
    *lo = blo < *lo ? blo : *lo;
    *hi = bhi > *hi ? bhi : *hi;
  }
  return 0;
}

/* Fold value facts `c` into `a` (c's fields are taken over). */
static int ckc_acc_add(ckc_acc *a, ckc_info *c) {
  a->n++;
  if (!c->empty) {
    a->nonempty++;
    a->nd_min = c->depth < a->nd_min ? c->depth : a->nd_min;
    a->nd_max = c->depth > a->nd_max ? c->depth : a->nd_max;
  }
  a->all_min = c->depth < a->all_min ? c->depth : a->all_min;
  a->all_max = c->depth > a->all_max ? c->depth : a->all_max;
  for (int l = 0; l < c->depth; l++) {
    ckc_level_add(a, l, c->sizes[l]);
  }
  int k = ckc_merge_kind(a->kind, c->kind);
  ckc_field *f = c->fields;
  Py_ssize_t nf = c->nfields;
  c->fields = NULL;
  c->nfields = 0;
  if (k < 0) {
    ckc_fields_free(f, nf);
    return k;
  }
  a->kind = k;
  ckc_ints_merge(&a->has_ints, &a->lo, &a->hi, c->has_ints, c->lo, c->hi);
  if (c->kind == K_STRUCT) {
    return ckc_fields_merge(&a->fields, &a->nfields, f, nf);
  }
  ckc_fields_free(f, nf);
  return 0;
}

/* Merge accumulator `b` into `a` (b's fields are taken over). */
static int ckc_acc_merge(ckc_acc *a, ckc_acc *b) {
  a->n += b->n;
  a->nonempty += b->nonempty;
  a->nd_min = b->nd_min < a->nd_min ? b->nd_min : a->nd_min;
  a->nd_max = b->nd_max > a->nd_max ? b->nd_max : a->nd_max;
  a->all_min = b->all_min < a->all_min ? b->all_min : a->all_min;
  a->all_max = b->all_max > a->all_max ? b->all_max : a->all_max;
  for (int l = 0; l <= CKC_MAX_DEPTH; l++) {
    if (b->state[l] == 1) {
      ckc_level_add(a, l, b->val[l]);
    } else if (b->state[l] == 2) {
      a->state[l] = 2;
    }
  }
  int k = ckc_merge_kind(a->kind, b->kind);
  ckc_field *f = b->fields;
  Py_ssize_t nf = b->nfields;
  b->fields = NULL;
  b->nfields = 0;
  if (k < 0) {
    ckc_fields_free(f, nf);
    return k;
  }
  a->kind = k;
  ckc_ints_merge(&a->has_ints, &a->lo, &a->hi, b->has_ints, b->lo, b->hi);
  if (f != NULL) {
    return ckc_fields_merge(&a->fields, &a->nfields, f, nf);
  }
  return 0;
}

/* The facts of the multiset as one value (Python's _merge_children):
 * a's fields move into `out`. */
static int ckc_acc_finish(ckc_acc *a, ckc_info *out) {
  int depth;
  if (a->nonempty > 0) {
    if (a->nd_min != a->nd_max) {
      return CKC_PYTHON_PATH; /* "inconsistent nesting depth" */
    }
    depth = a->nd_max;
  } else {
    depth = a->all_max < 0 ? 0 : a->all_max;
  }
  if (depth + 1 > CKC_MAX_DEPTH) {
    return CKC_PYTHON_PATH;
  }
  out->depth = depth + 1;
  out->sizes[0] = a->n;
  for (int l = 0; l < depth; l++) {
    int lacks = a->n > 0 && l >= a->all_min;
    out->sizes[l + 1] = (a->state[l] == 1 && a->val[l] >= 0 && !lacks) ? a->val[l] : -1;
  }
  out->kind = a->kind;
  out->has_ints = a->has_ints;
  out->lo = a->lo;
  out->hi = a->hi;
  out->empty = a->n == 0;
  out->fields = a->fields;
  out->nfields = a->nfields;
  a->fields = NULL;
  a->nfields = 0;
  return 0;
}

typedef struct {
  PyObject *na;
  ckc_missing missing;
  ckc_wctx *w; /* the path of the value being scanned (for messages) */
} ckc_sctx;

static int ckc_scan(ckc_sctx *s, PyObject *o, int depth, ckc_info *out);

static int ckc_scan_leaf(PyObject *o, ckc_info *out) {
  out->depth = 0;
  out->empty = 0;
  out->fields = NULL;
  out->nfields = 0;
  out->has_ints = 0;
  if (PyBool_Check(o)) {
    out->kind = K_BOOL;
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
      return -1;
    }
    if (overflow) {
      return CKC_PYTHON_PATH; /* uint64 or too large: the Python path decides */
    }
    out->kind = K_INT;
    out->has_ints = 1;
    out->lo = out->hi = v;
  } else if (PyFloat_Check(o)) {
    out->kind = K_FLOAT;
  } else if (PyComplex_Check(o)) {
    out->kind = K_COMPLEX;
  } else if (PyUnicode_Check(o)) {
    out->kind = K_STRING;
  } else if (PyBytes_Check(o)) {
    out->kind = K_BYTES;
  } else {
    return CKC_PYTHON_PATH;
  }
  return 0;
}

static int ckc_scan_dict(ckc_sctx *s, PyObject *o, int depth, ckc_info *out) {
  Py_ssize_t n = PyDict_GET_SIZE(o);
  out->depth = 0;
  out->empty = 0;
  out->kind = K_STRUCT;
  out->has_ints = 0;
  out->fields = PyMem_Calloc(n ? (size_t)n : 1, sizeof(ckc_field));
  out->nfields = 0;
  if (out->fields == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  ckc_info *ci = PyMem_Malloc(sizeof *ci);
  if (ci == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  int rc = 0;
  ckc_wctx *w = s->w;
  int d = w->depth++;
  w->path_is_key[d] = 1;
  while (rc == 0 && PyDict_Next(o, &pos, &k, &v)) {
    if (!PyUnicode_CheckExact(k)) {
      rc = CKC_PYTHON_PATH;
      break;
    }
    w->path[d] = k;
    ckc_acc *acc = PyMem_Malloc(sizeof *acc);
    if (acc == NULL) {
      PyErr_NoMemory();
      rc = -1;
      break;
    }
    ckc_acc_init(acc);
    ckc_field *f = &out->fields[out->nfields++];
    f->name = Py_NewRef(k);
    f->acc = acc;
    rc = ckc_scan(s, v, depth + 1, ci);
    if (rc == 1) { /* a missing value: counted, contributes nothing */
      rc = 0;
      acc->n++;
      acc->all_min = 0;
      acc->all_max = acc->all_max < 0 ? 0 : acc->all_max;
      continue;
    }
    if (rc == 0) {
      rc = ckc_acc_add(acc, ci);
    }
  }
  w->depth--;
  PyMem_Free(ci);
  return rc;
}

/* Scan `o` into `out`: 0 done, 1 a missing value (counted), -1 error,
 * CKC_PYTHON_PATH. */
static int ckc_scan(ckc_sctx *s, PyObject *o, int depth, ckc_info *out) {
  if (depth > CKC_MAX_DEPTH) {
    return CKC_PYTHON_PATH;
  }
  if (o == Py_None) {
    if (s->na == NULL) {
      ckc_wctx *w = s->w;
      if (s->missing.count++ == 0) {
        s->missing.first = ckc_path_text(w);
        if (s->missing.first == NULL) {
          return -1;
        }
      }
      return 1;
    }
    o = s->na;
  }
  if (ckc_is_seq(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject **items = PySequence_Fast_ITEMS(o);
    ckc_acc *acc = PyMem_Malloc(sizeof *acc);
    ckc_info *ci = PyMem_Malloc(sizeof *ci);
    if (acc == NULL || ci == NULL) {
      PyMem_Free(acc);
      PyMem_Free(ci);
      PyErr_NoMemory();
      return -1;
    }
    ckc_acc_init(acc);
    ckc_wctx *w = s->w;
    int d = w->depth++;
    w->path_is_key[d] = 0;
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
      PyObject *v = items[i];
      w->ipath[d] = i;
      if (depth + 1 <= CKC_MAX_DEPTH && v != Py_None && !ckc_is_seq(v) && !PyDict_Check(v)) {
        rc = ckc_scan_leaf(v, ci); /* the common case, without the call below */
      } else {
        rc = ckc_scan(s, v, depth + 1, ci);
      }
      if (rc == 1) {
        /* a missing value: a scalar of no kind (the error comes later) */
        rc = 0;
        ci->depth = 0;
        ci->empty = 0;
        ci->kind = K_NONE;
        ci->has_ints = 0;
        ci->fields = NULL;
        ci->nfields = 0;
      }
      if (rc == 0) {
        rc = ckc_acc_add(acc, ci);
      }
    }
    w->depth--;
    if (rc == 0) {
      rc = ckc_acc_finish(acc, out);
    }
    ckc_fields_free(acc->fields, acc->nfields);
    PyMem_Free(acc);
    PyMem_Free(ci);
    return rc;
  }
  if (PyDict_Check(o)) {
    int rc = ckc_scan_dict(s, o, depth, out);
    if (rc != 0) {
      ckc_fields_free(out->fields, out->nfields);
      out->fields = NULL;
      out->nfields = 0;
    }
    return rc;
  }
  return ckc_scan_leaf(o, out);
}

static PyObject *ckc_info_to_py(const ckc_info *c);

static PyObject *ckc_fields_to_py(ckc_field *f, Py_ssize_t n) {
  PyObject *d = PyDict_New();
  ckc_info *fi = PyMem_Malloc(sizeof *fi);
  if (d == NULL || fi == NULL) {
    Py_XDECREF(d);
    PyMem_Free(fi);
    return d == NULL ? NULL : PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    int rc = ckc_acc_finish(f[i].acc, fi);
    PyObject *v = NULL;
    if (rc == 0) {
      v = ckc_info_to_py(fi);
      ckc_fields_free(fi->fields, fi->nfields);
    } else if (rc == CKC_PYTHON_PATH) {
      v = Py_NewRef(Py_None); /* the caller takes the Python path */
    }
    if (v == NULL || PyDict_SetItem(d, f[i].name, v) < 0) {
      Py_XDECREF(v);
      Py_DECREF(d);
      PyMem_Free(fi);
      return NULL;
    }
    Py_DECREF(v);
  }
  PyMem_Free(fi);
  return d;
}

/* (sizes, kind, lo, hi, fields); scan adds the None count */
static PyObject *ckc_info_to_py(const ckc_info *c) {
  PyObject *sizes = PyList_New(c->depth);
  if (sizes == NULL) {
    return NULL;
  }
  for (int l = 0; l < c->depth; l++) {
    PyObject *v = c->sizes[l] >= 0 ? PyLong_FromSsize_t(c->sizes[l]) : Py_NewRef(Py_None);
    if (v == NULL) {
      Py_DECREF(sizes);
      return NULL;
    }
    PyList_SET_ITEM(sizes, l, v);
  }
  PyObject *fields = c->kind == K_STRUCT && c->fields != NULL
                         ? ckc_fields_to_py(c->fields, c->nfields)
                         : Py_NewRef(Py_None);
  if (fields == NULL) {
    Py_DECREF(sizes);
    return NULL;
  }
  const char *kind = ckc_kind_names[c->kind];
  PyObject *r;
  if (c->has_ints) {
    r = Py_BuildValue("(NzLLN)", sizes, kind, c->lo, c->hi, fields);
  } else {
    r = Py_BuildValue("(NzOON)", sizes, kind, Py_None, Py_None, fields);
  }
  return r;
}

/* A fields dict any of whose entries is None (a field the C scan could not
 * merge) sends the whole value to the Python path. */
static int ckc_has_none_field(PyObject *info) {
  PyObject *fields = PyTuple_GET_ITEM(info, 4);
  if (fields == Py_None) {
    return 0;
  }
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(fields, &pos, &k, &v)) {
    if (v == Py_None || ckc_has_none_field(v)) {
      return 1;
    }
  }
  return 0;
}

PyObject *ckc_scan_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "scan(obj, na)");
    return NULL;
  }
  ckc_sctx s = {.na = args[1] == Py_None ? NULL : args[1]};
  s.w = PyMem_Calloc(1, sizeof(ckc_wctx));
  ckc_info *info = PyMem_Malloc(sizeof *info);
  if (s.w == NULL || info == NULL) {
    PyMem_Free(s.w);
    PyMem_Free(info);
    return PyErr_NoMemory();
  }
  int rc = ckc_scan(&s, args[0], 0, info);
  PyObject *r = NULL;
  if (rc == 1) { /* the value itself is None */
    r = NULL;
    ckc_missing_error(&s.missing, "None");
  } else if (rc == 0) {
    if (s.missing.count > 0 && (s.na != NULL || info->kind == K_STRUCT)) {
      /* nulls inside struct fields: not an option type yet */
      ckc_missing_error(&s.missing, "None");
    } else {
      r = ckc_info_to_py(info);
      if (r != NULL && ckc_has_none_field(r)) {
        Py_SETREF(r, Py_NewRef(Py_None));
      } else if (r != NULL) { /* + the number of None leaves (an option type) */
        PyObject *n = PyLong_FromSsize_t(s.missing.count);
        PyObject *tail = n != NULL ? PyTuple_Pack(1, n) : NULL;
        Py_XDECREF(n);
        PyObject *r6 = tail != NULL ? PySequence_Concat(r, tail) : NULL;
        Py_XDECREF(tail);
        Py_SETREF(r, r6);
      }
    }
    ckc_fields_free(info->fields, info->nfields);
  } else if (rc == CKC_PYTHON_PATH) {
    r = Py_NewRef(Py_None);
  }
  Py_XDECREF(s.missing.first);
  PyMem_Free(s.w);
  PyMem_Free(info);
  return r;
}
