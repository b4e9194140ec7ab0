/*
 * numpy_to_ck.c -- NumPy text in: StringDType (NpyString_load), 'U'
 * (UCS4 encoded), 'S' and object (str, bytes) arrays into a new C array of
 * strings or bytes (from_numpy: sizes first, one arena allocation) or into
 * a new StringDType array for the string ufuncs (to_stringdtype); missing
 * values refused with their count, filled, or (a `?string` / `?bytes`
 * destination) nulls.
 */
#include "convert_internal.h"

#include <string.h>

typedef struct {
  char kind;                 /* 'T', 'U', 'S', 'O'                    */
  npy_intp itemsize;
  PyArray_StringDTypeObject *sdescr; /* 'T' */
  npy_string_allocator *alloc;       /* 'T', held during both passes  */
  int dst_bytes;             /* element type bytes (else string)      */
  size_t dst_align;
  const char *na;            /* UTF-8 of fill_value, or NULL           */
  Py_ssize_t na_len;
  ckc_missing missing;
  size_t total;              /* measure pass: bytes                   */
  char *cur, *end;           /* write pass: the reservation           */
  ck_memblock *mb;
  char *dst;                 /* write pass: next ck_string            */
  intptr_t dst_stride;
  PyArrayObject *arr;        /* for messages (indices)                */
  PyObject *pd_na;           /* pandas.NA, or NULL (pandas not imported) */
  const ck_option_arrmeta *opt; /* destination `?string`/`?bytes`: missing
                                 * values become nulls; else NULL       */
  int measuring;
  npy_intp bad_index;        /* first invalid UTF-8 / wrong object    */
} ckc_np_ctx;

/* "(i, j)" of the k-th element in C order (a new str) */
static PyObject *ckc_index_text(PyArrayObject *arr, npy_intp k) {
  int nd = PyArray_NDIM(arr);
  npy_intp idx[NPY_MAXDIMS];
  for (int d = nd - 1; d >= 0; d--) {
    npy_intp s = PyArray_DIM(arr, d);
    idx[d] = s ? k % s : 0;
    k = s ? k / s : 0;
  }
  PyObject *t = PyTuple_New(nd);
  for (int d = 0; t != NULL && d < nd; d++) {
    PyObject *v = PyLong_FromSsize_t(idx[d]);
    if (v == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, d, v);
  }
  if (t == NULL) {
    return NULL;
  }
  PyObject *r = PyObject_Repr(t);
  Py_DECREF(t);
  return r;
}

/* The bytes of element `el`: 1 and (*b, *n) when it has some, 0 missing,
 * -1 error (exception set). */
static int ckc_np_element(ckc_np_ctx *c, const char *el, npy_intp k, const char **b,
                          Py_ssize_t *n, PyObject **tmp) {
  *tmp = NULL;
  switch (c->kind) {
  case 'T': {
    npy_static_string s = {0, NULL};
    int r = NpyString_load(c->alloc, (const npy_packed_static_string *)el, &s);
    if (r < 0) {
      PyErr_SetString(PyExc_MemoryError, "NpyString_load failed");
      return -1;
    }
    if (r == 1) {
      if (!c->sdescr->has_string_na) {
        return 0;
      }
      s = c->sdescr->default_string;
    }
    *b = s.buf;
    *n = (Py_ssize_t)s.size;
    return 1;
  }
  case 'S': {
    Py_ssize_t len = c->itemsize;
    while (len > 0 && el[len - 1] == 0) {
      len--;
    }
    *b = el;
    *n = len;
    return 1;
  }
  case 'U': {
    const Py_UCS4 *u = (const Py_UCS4 *)el;
    Py_ssize_t len = c->itemsize / 4;
    while (len > 0 && u[len - 1] == 0) {
      len--;
    }
    /* unaligned 'U' data: NumPy aligns what it hands us (PyArray_FROM_OF) */
    Py_ssize_t size = ckc_ucs4_utf8_size(u, len);
    if (size < 0) {
      PyObject *where = ckc_index_text(c->arr, k);
      if (where != NULL) {
        ckc_raisef(CK_ERR_VALUE, "element %U holds a code point UTF-8 cannot encode", where);
        Py_DECREF(where);
      }
      return -1;
    }
    *b = (const char *)u; /* the caller encodes */
    *n = size;
    return 2;
  }
  default: { /* 'O' */
    PyObject *o = *(PyObject *const *)el;
    if (o == NULL || ckc_is_na_object(o, c->pd_na)) {
      return 0;
    }
    if (PyUnicode_Check(o)) {
      if (c->dst_bytes) {
        PyObject *where = ckc_index_text(c->arr, k);
        if (where != NULL) {
          ckc_raisef(CK_ERR_TYPE, "cannot assign str value to bytes (element %U)", where);
          Py_DECREF(where);
        }
        return -1;
      }
      Py_ssize_t size = ckc_utf8_size(o);
      if (size < 0) {
        return ckc_raise_unencodable(o);
      }
      *tmp = o;
      *n = size;
      return 3;
    }
    if (PyBytes_Check(o)) {
      *b = PyBytes_AS_STRING(o);
      *n = PyBytes_GET_SIZE(o);
      return 1;
    }
    if (PyByteArray_Check(o)) {
      *b = PyByteArray_AS_STRING(o);
      *n = PyByteArray_GET_SIZE(o);
      return 1;
    }
    PyObject *where = ckc_index_text(c->arr, k);
    if (where != NULL) {
      ckc_raisef(CK_ERR_TYPE, "cannot assign %s value %R to %s (element %U)",
                 Py_TYPE(o)->tp_name, o, c->dst_bytes ? "bytes" : "string", where);
      Py_DECREF(where);
    }
    return -1;
  }
  }
}

/* Element k's text, missing values handled: -1 error; 0 a missing value
 * (counted, the first one's index kept) when there is no fill value; else as
 * ckc_np_element, a missing value replaced by the fill value (kind 1).
 * Bytes into strings are checked UTF-8 when `check`. */
static int ckc_np_text(ckc_np_ctx *c, const char *el, npy_intp k, int check, const char **b,
                       Py_ssize_t *n, PyObject **str) {
  int r = ckc_np_element(c, el, k, b, n, str);
  if (r < 0) {
    return -1;
  }
  if (r == 0) {
    if (c->na == NULL && c->opt != NULL) {
      return 0; /* a null of the option destination */
    }
    if (c->na == NULL) {
      if (c->missing.count++ == 0) {
        c->missing.first = ckc_index_text(c->arr, k);
        if (c->missing.first == NULL) {
          return -1;
        }
      }
      return 0;
    }
    *b = c->na;
    *n = c->na_len;
    return 1;
  }
  if (check && r == 1 && !c->dst_bytes && c->kind != 'T' && !ck_utf8_validate(*b, (size_t)*n)) {
    PyObject *where = ckc_index_text(c->arr, k);
    int rc = where != NULL ? ckc_raise_bad_utf8(*b, *n, where) : -1;
    Py_XDECREF(where);
    return rc;
  }
  return r;
}

static int ckc_np_one(void *vctx, const char *el, npy_intp k) {
  ckc_np_ctx *c = vctx;
  const char *b = NULL;
  Py_ssize_t n = 0;
  PyObject *str = NULL;
  /* the measure pass counts and checks; the write pass sees the same values */
  int r = c->measuring ? ckc_np_text(c, el, k, 1, &b, &n, &str)
                       : ckc_np_element(c, el, k, &b, &n, &str);
  if (r < 0) {
    return -1;
  }
  if (r == 0 && !c->measuring) {
    if (c->na == NULL && c->opt != NULL) { /* a null: its bit cleared, the slot empty */
      ck_status st = ck_option_set_valid(c->opt, c->dst + k * c->dst_stride, false);
      return st == CK_OK ? 0 : ckc_raise_status(st);
    }
    if (c->na == NULL) {
      return 0; /* not reached: the measure pass raised */
    }
    b = c->na;
    n = c->na_len;
    r = 1;
  }
  if (r == 0) {
    return 0;
  }
  if (c->measuring) {
    c->total = ckc_round_up(c->total, c->dst_align) + (size_t)n;
    return 0;
  }
  ck_string *s = (ck_string *)(c->dst + k * c->dst_stride);
  if (n == 0) {
    s->begin = s->end = NULL;
    return 0;
  }
  char *p = (char *)ckc_round_up((size_t)c->cur, c->dst_align);
  if (p > c->end || (size_t)n > (size_t)(c->end - p)) {
    char *e;
    ck_status st = ck_pod_allocate(c->mb, (size_t)n, c->dst_align, &p, &e);
    if (st != CK_OK) {
      return ckc_raise_status(st);
    }
  } else {
    c->cur = p + n;
  }
  if (r == 1) {
    memcpy(p, b, (size_t)n);
  } else if (r == 2) {
    const Py_UCS4 *u = (const Py_UCS4 *)b;
    char *o = p;
    for (Py_ssize_t i = 0; o < p + n; i++) {
      o = ckc_put_utf8(o, u[i]);
    }
  } else {
    ckc_utf8_encode(str, p);
  }
  s->begin = p;
  s->end = p + n;
  return 0;
}

PyObject *ckc_from_numpy(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3 || !PyArray_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "from_numpy(address, ndarray, na)");
    return NULL;
  }
  ck_array_preamble *a = ckc_array_arg(args[0]);
  if (a == NULL) {
    return NULL;
  }
  PyArrayObject *src = (PyArrayObject *)args[1];
  ckc_np_ctx c;
  memset(&c, 0, sizeof c);
  c.kind = PyArray_DESCR(src)->kind;
  if (PyArray_DESCR(src)->type_num == NPY_VSTRING) {
    c.kind = 'T';
  }
  if (c.kind != 'T' && c.kind != 'U' && c.kind != 'S' && c.kind != 'O') {
    PyErr_SetString(PyExc_TypeError, "from_numpy: a StringDType, 'U', 'S' or object array");
    return NULL;
  }
  if (c.kind == 'U' && !PyArray_ISALIGNED(src)) {
    PyErr_SetString(PyExc_ValueError, "from_numpy: an aligned 'U' array");
    return NULL;
  }
  c.itemsize = PyArray_ITEMSIZE(src);
  c.arr = src;
  int ndim;
  npy_intp shape[NPY_MAXDIMS];
  intptr_t dstrides[NPY_MAXDIMS];
  ck_type el;
  const char *el_am;
  if (ckc_regular_dims(a->type, ck_array_arrmeta(a), &ndim, shape, dstrides, &el, &el_am) <
      0) {
    return NULL;
  }
  uint32_t eid = ckc_id(el);
  if (eid == CK_TYPE_OPTION) { /* `?string`: missing values are nulls */
    c.opt = (const ck_option_arrmeta *)el_am;
    el_am += sizeof(ck_option_arrmeta);
    el = el->element;
    eid = ckc_id(el);
  }
  if ((eid != CK_TYPE_STRING && eid != CK_TYPE_BYTES) || ndim != PyArray_NDIM(src)) {
    PyErr_SetString(PyExc_TypeError, "from_numpy: a string or bytes array of the same ndim");
    return NULL;
  }
  npy_intp total = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] != PyArray_DIM(src, d)) {
      PyErr_SetString(PyExc_ValueError, "from_numpy: the shapes differ");
      return NULL;
    }
    total *= shape[d];
  }
  /* the destination is C-contiguous (just made): element k at k * stride */
  c.dst_stride = ndim ? dstrides[ndim - 1] : 0;
  npy_intp want = c.dst_stride;
  for (int d = ndim - 1; d >= 0; d--) {
    if (shape[d] > 1 && dstrides[d] != want) {
      PyErr_SetString(PyExc_ValueError, "from_numpy: a C-contiguous destination");
      return NULL;
    }
    want *= shape[d];
  }
  if (ndim == 0) {
    c.dst_stride = 0;
  }
  c.dst_bytes = eid == CK_TYPE_BYTES;
  c.dst_align = c.dst_bytes ? ck_bytes_type_alignment(el) : 1;
  c.mb = ((const ck_string_arrmeta *)el_am)->blockref;
  if (c.mb == NULL) {
    return ckc_raisef(CK_ERR_INVALID_STATE, "the string arrmeta has no blockref arena"),
           NULL;
  }
  PyObject *na = args[2];
  if (na != Py_None) {
    if (PyUnicode_Check(na)) {
      c.na = PyUnicode_AsUTF8AndSize(na, &c.na_len);
      if (c.na == NULL) {
        return NULL;
      }
    } else if (PyBytes_Check(na)) {
      c.na = PyBytes_AS_STRING(na);
      c.na_len = PyBytes_GET_SIZE(na);
    } else {
      PyErr_Format(PyExc_TypeError, "fill_value must be a str or bytes for a %s array, not %.100s",
                   c.dst_bytes ? "bytes" : "string", Py_TYPE(na)->tp_name);
      return NULL;
    }
  }
  if (c.kind == 'U' && c.dst_bytes) {
    return ckc_raisef(CK_ERR_TYPE, "cannot assign str values (a NumPy '%c' array) to bytes",
                      'U'),
           NULL;
  }
  if (c.na != NULL && !c.dst_bytes && !ck_utf8_validate(c.na, (size_t)c.na_len)) {
    return ckc_raise_bad_utf8(c.na, c.na_len, NULL), NULL;
  }
  npy_intp sshape[NPY_MAXDIMS];
  intptr_t sstrides[NPY_MAXDIMS];
  for (int d = 0; d < ndim; d++) {
    sshape[d] = PyArray_DIM(src, d);
    sstrides[d] = PyArray_STRIDE(src, d);
  }
  if (c.kind == 'T') {
    c.sdescr = (PyArray_StringDTypeObject *)PyArray_DESCR(src);
    c.alloc = NpyString_acquire_allocator(c.sdescr);
  }
  c.pd_na = c.kind == 'O' ? ckc_pandas_na() : NULL;
  c.measuring = 1;
  int rc = total ? ckc_walk(PyArray_BYTES(src), ndim, sshape, sstrides, ckc_np_one, &c) : 0;
  if (rc == 0 && c.missing.count > 0) {
    rc = ckc_missing_error(&c.missing, c.kind == 'T' ? "StringDType nulls"
                                                      : "None, NaN or pandas.NA");
  }
  if (rc == 0 && c.total > 0) {
    ck_status st = ck_pod_allocate(c.mb, c.total, c.dst_align, &c.cur, &c.end);
    if (st != CK_OK) {
      rc = ckc_raise_status(st);
    }
  }
  if (rc == 0) {
    c.measuring = 0;
    c.dst = a->data;
    rc = total ? ckc_walk(PyArray_BYTES(src), ndim, sshape, sstrides, ckc_np_one, &c) : 0;
  }
  if (c.alloc != NULL) {
    NpyString_release_allocator(c.alloc);
  }
  Py_XDECREF(c.pd_na);
  Py_XDECREF(c.missing.first);
  if (rc != 0) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_RuntimeError, "from_numpy failed");
    }
    return NULL;
  }
  Py_RETURN_NONE;
}

/* ---- NumPy text -> StringDType, for string ufuncs ---------------------------- */

typedef struct {
  ckc_np_ctx c;
  npy_string_allocator *out_alloc;
  char *out;
  char *buf; /* UTF-8 of 'U' elements and str objects */
  size_t cap;
} ckc_sd_ctx;

static int ckc_sd_one(void *vctx, const char *el, npy_intp k) {
  ckc_sd_ctx *x = vctx;
  ckc_np_ctx *c = &x->c;
  const char *b = NULL;
  Py_ssize_t n = 0;
  PyObject *str = NULL;
  int r = ckc_np_text(c, el, k, 1, &b, &n, &str);
  if (r <= 0) {
    return r;
  }
  if (r != 1) { /* encode into the scratch buffer */
    if ((size_t)n > x->cap) {
      size_t cap = (size_t)n > 2 * x->cap ? (size_t)n : 2 * x->cap;
      char *p = PyMem_Realloc(x->buf, cap);
      if (p == NULL) {
        PyErr_NoMemory();
        return -1;
      }
      x->buf = p;
      x->cap = cap;
    }
    if (r == 2) {
      const Py_UCS4 *u = (const Py_UCS4 *)b;
      char *o = x->buf;
      for (Py_ssize_t i = 0; o < x->buf + n; i++) {
        o = ckc_put_utf8(o, u[i]);
      }
    } else {
      ckc_utf8_encode(str, x->buf);
    }
    b = x->buf;
  }
  npy_packed_static_string *dst = (npy_packed_static_string *)(x->out + k * 16);
  if (NpyString_pack(x->out_alloc, dst, n ? b : "", (size_t)n) < 0) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

PyObject *ckc_to_stringdtype(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3 || !PyArray_Check(args[0]) || !PyArray_DescrCheck(args[1]) ||
      ((PyArray_Descr *)args[1])->type_num != NPY_VSTRING) {
    PyErr_SetString(PyExc_TypeError, "to_stringdtype(ndarray, StringDType instance, na)");
    return NULL;
  }
  PyArrayObject *src = (PyArrayObject *)args[0];
  ckc_sd_ctx x;
  memset(&x, 0, sizeof x);
  ckc_np_ctx *c = &x.c;
  c->kind = PyArray_DESCR(src)->type_num == NPY_VSTRING ? 'T' : PyArray_DESCR(src)->kind;
  if (c->kind != 'T' && c->kind != 'U' && c->kind != 'S' && c->kind != 'O') {
    PyErr_SetString(PyExc_TypeError, "to_stringdtype: a StringDType, 'U', 'S' or object array");
    return NULL;
  }
  if (c->kind == 'U' && !PyArray_ISALIGNED(src)) {
    PyErr_SetString(PyExc_ValueError, "to_stringdtype: an aligned 'U' array");
    return NULL;
  }
  c->itemsize = PyArray_ITEMSIZE(src);
  c->arr = src;
  c->dst_align = 1;
  PyObject *na = args[2];
  if (na != Py_None) {
    if (!PyUnicode_Check(na)) {
      PyErr_Format(PyExc_TypeError, "fill_value must be a str, not %.100s", Py_TYPE(na)->tp_name);
      return NULL;
    }
    c->na = PyUnicode_AsUTF8AndSize(na, &c->na_len);
    if (c->na == NULL) {
      return NULL;
    }
  }
  int ndim = PyArray_NDIM(src);
  npy_intp shape[NPY_MAXDIMS];
  intptr_t strides[NPY_MAXDIMS];
  for (int d = 0; d < ndim; d++) {
    shape[d] = PyArray_DIM(src, d);
    strides[d] = PyArray_STRIDE(src, d);
  }
  PyArray_Descr *descr = (PyArray_Descr *)args[1];
  Py_INCREF(descr);
  PyArrayObject *out = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, shape,
                                                             NULL, NULL, 0, NULL);
  if (out == NULL) {
    return NULL;
  }
  x.out = PyArray_BYTES(out);
  PyArray_Descr *descrs[2] = {PyArray_DESCR(src), PyArray_DESCR(out)};
  npy_string_allocator *allocs[2] = {NULL, NULL};
  NpyString_acquire_allocators(2, descrs, allocs);
  if (c->kind == 'T') {
    c->sdescr = (PyArray_StringDTypeObject *)PyArray_DESCR(src);
    c->alloc = allocs[0];
  }
  x.out_alloc = allocs[1];
  c->pd_na = c->kind == 'O' ? ckc_pandas_na() : NULL;
  int rc = PyArray_SIZE(src) ? ckc_walk(PyArray_BYTES(src), ndim, shape, strides, ckc_sd_one, &x)
                             : 0;
  NpyString_release_allocators(2, allocs);
  Py_XDECREF(c->pd_na);
  PyMem_Free(x.buf);
  if (rc == 0 && c->missing.count > 0) {
    rc = ckc_missing_error(&c->missing, c->kind == 'T' ? "StringDType nulls"
                                                        : "None, NaN or pandas.NA");
  }
  Py_XDECREF(c->missing.first);
  if (rc != 0) {
    Py_DECREF(out);
    return NULL;
  }
  return (PyObject *)out;
}
