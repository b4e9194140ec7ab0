/*
 * python_to_ck.c -- Python values -> a new C array (write, write_at).  Two
 * passes: the measure pass sums the bytes of strings and var dim elements
 * per arena (arena reservations: one allocation each), the write pass stores
 * values with the checks and messages of the Python path (exact numbers in
 * range here, everything else through the check_scalar callback).
 */
#include "convert_internal.h"

#include <math.h>
#include <string.h>

static ckc_arena *ckc_arena_find(ckc_arenas *as, ck_memblock *mb, int add) {
  if (as->n > 0 && as->a[as->last].mb == mb) {
    return &as->a[as->last];
  }
  for (int i = 0; i < as->n; i++) {
    if (as->a[i].mb == mb) {
      as->last = i;
      return &as->a[i];
    }
  }
  if (!add || as->n == CKC_MAX_ARENAS) {
    return NULL;
  }
  ckc_arena *e = &as->a[as->n];
  memset(e, 0, sizeof *e);
  e->mb = mb;
  e->align = 1;
  as->last = as->n++;
  return e;
}

/* Count `size` bytes aligned to `align` for the arena `mb` (measure pass). */
static void ckc_arena_need(ckc_arenas *as, ck_memblock *mb, size_t size, size_t align) {
  ckc_arena *e = ckc_arena_find(as, mb, 1);
  if (e != NULL) {
    if (align > e->align) {
      e->align = align;
    }
    e->need = ckc_round_up(e->need, align) + size;
  }
}

/* One allocation per arena of what the measure pass counted. */
static int ckc_arenas_reserve(ckc_arenas *as) {
  for (int i = 0; i < as->n; i++) {
    ckc_arena *e = &as->a[i];
    if (e->need == 0) {
      continue;
    }
    ck_status st = ck_pod_allocate(e->mb, e->need, e->align, &e->cur, &e->end);
    if (st != CK_OK) {
      return ckc_raise_status(st);
    }
  }
  return 0;
}

/* `size` bytes aligned to `align` from the reservation of `mb`, else a new
 * allocation from the arena. */
static int ckc_arena_take(ckc_arenas *as, ck_memblock *mb, size_t size, size_t align,
                          char **out) {
  ckc_arena *e = ckc_arena_find(as, mb, 0);
  if (e != NULL && e->cur != NULL) {
    char *p = (char *)ckc_round_up((size_t)e->cur, align);
    if (p <= e->end && size <= (size_t)(e->end - p)) {
      e->cur = p + size;
      *out = p;
      return 0;
    }
  }
  char *b, *end;
  ck_status st = ck_pod_allocate(mb, size, align, &b, &end);
  if (st != CK_OK) {
    return ckc_raise_status(st);
  }
  *out = b;
  return 0;
}

/* "[1][2]['name']" for the current path (a new str). */
PyObject *ckc_path_text(const ckc_wctx *w) {
  PyObject *parts = PyList_New(0);
  if (parts == NULL) {
    return NULL;
  }
  for (int i = 0; i < w->depth; i++) {
    PyObject *p = w->path_is_key[i] ? PyUnicode_FromFormat("[%R]", w->path[i])
                                    : PyUnicode_FromFormat("[%zd]", w->ipath[i]);
    if (p == NULL || PyList_Append(parts, p) < 0) {
      Py_XDECREF(p);
      Py_DECREF(parts);
      return NULL;
    }
    Py_DECREF(p);
  }
  PyObject *empty = PyUnicode_FromString("");
  PyObject *r = empty != NULL ? PyUnicode_Join(empty, parts) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(parts);
  if (r != NULL && PyUnicode_GET_LENGTH(r) == 0) {
    Py_DECREF(r);
    r = PyUnicode_FromString("()");
  }
  return r;
}

static int ckc_note_missing(ckc_wctx *w) {
  if (w->missing.count++ == 0) {
    w->missing.first = ckc_path_text(w);
    if (w->missing.first == NULL) {
      return -1;
    }
  }
  return 0;
}

/* One exact Python number into builtin `id` at `p`: 1 stored, 0 not handled
 * here (the Python check decides), -1 error. */
static int ckc_fast_scalar(uint32_t id, char *p, PyObject *o) {
  if (id == CK_TYPE_BOOL) {
    if (o == Py_True || o == Py_False) {
      *(uint8_t *)p = o == Py_True;
      return 1;
    }
    return 0;
  }
  if (id <= CK_TYPE_UINT64) {
    if (!PyLong_Check(o)) {
      return 0;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
      return -1;
    }
    if (overflow) {
      return 0;
    }
    switch (id) {
    case CK_TYPE_INT8:
      if (v < INT8_MIN || v > INT8_MAX) return 0;
      *(int8_t *)p = (int8_t)v;
      return 1;
    case CK_TYPE_INT16:
      if (v < INT16_MIN || v > INT16_MAX) return 0;
      *(int16_t *)p = (int16_t)v;
      return 1;
    case CK_TYPE_INT32:
      if (v < INT32_MIN || v > INT32_MAX) return 0;
      *(int32_t *)p = (int32_t)v;
      return 1;
    case CK_TYPE_INT64:
      *(int64_t *)p = (int64_t)v;
      return 1;
    case CK_TYPE_UINT8:
      if (v < 0 || v > UINT8_MAX) return 0;
      *(uint8_t *)p = (uint8_t)v;
      return 1;
    case CK_TYPE_UINT16:
      if (v < 0 || v > UINT16_MAX) return 0;
      *(uint16_t *)p = (uint16_t)v;
      return 1;
    case CK_TYPE_UINT32:
      if (v < 0 || v > (long long)UINT32_MAX) return 0;
      *(uint32_t *)p = (uint32_t)v;
      return 1;
    case CK_TYPE_UINT64:
      if (v < 0) return 0;
      *(uint64_t *)p = (uint64_t)v;
      return 1;
    default:
      return 0;
    }
  }
  if (id == CK_TYPE_FLOAT64 && PyFloat_CheckExact(o)) {
    *(double *)p = PyFloat_AS_DOUBLE(o);
    return 1;
  }
  if (id == CK_TYPE_FLOAT32 && PyFloat_CheckExact(o)) {
    double d = PyFloat_AS_DOUBLE(o);
    float f = (float)d;
    if (isinf(f) && isfinite(d)) {
      return 0; /* overflow: the Python check raises */
    }
    *(float *)p = f;
    return 1;
  }
  if ((id == CK_TYPE_COMPLEX128 || id == CK_TYPE_COMPLEX64) && PyComplex_CheckExact(o)) {
    Py_complex c = PyComplex_AsCComplex(o);
    if (id == CK_TYPE_COMPLEX128) {
      ((double *)p)[0] = c.real;
      ((double *)p)[1] = c.imag;
    } else {
      ((float *)p)[0] = (float)c.real;
      ((float *)p)[1] = (float)c.imag;
    }
    return 1;
  }
  return 0;
}

static int ckc_write_scalar(uint32_t id, char *p, PyObject *o) {
  int r = ckc_fast_scalar(id, p, o);
  if (r != 0) {
    return r < 0 ? -1 : 0;
  }
  if (PyList_Check(o) || PyTuple_Check(o) || PyDict_Check(o)) {
    /* a sequence where a scalar goes: the Python path names the problem
     * (its snapshot bounds the depth of what it prints) */
    return ckc_unsupported_value(o);
  }
  PyObject *scalar = PyObject_CallFunction(ckc_check_scalar, "IO", (unsigned)id, o);
  if (scalar == NULL) {
    return -1;
  }
  if (!PyArray_IsScalar(scalar, Generic)) {
    Py_DECREF(scalar);
    PyErr_SetString(PyExc_TypeError, "_convert: check_scalar must return a NumPy scalar");
    return -1;
  }
  PyArray_Descr *descr = PyArray_DescrFromScalar(scalar);
  if (descr == NULL) {
    Py_DECREF(scalar);
    return -1;
  }
  npy_intp size = PyDataType_ELSIZE(descr);
  Py_DECREF(descr);
  char buf[32];
  if (size > (npy_intp)sizeof buf) {
    Py_DECREF(scalar);
    PyErr_SetString(PyExc_TypeError, "_convert: scalar too large");
    return -1;
  }
  PyArray_ScalarAsCtype(scalar, buf);
  memcpy(p, buf, (size_t)size);
  Py_DECREF(scalar);
  return 0;
}

/* Values that are no sequence and that the Python path would not turn into
 * one (a clear error where dims are needed); anything else there (a NumPy
 * array, another sequence type) is Unsupported: the Python path reads it. */
static int ckc_is_plain_value(PyObject *o) {
  return o == Py_None || PyUnicode_Check(o) || PyBytes_Check(o) || PyDict_Check(o) ||
         PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o);
}

/* Measure pass: sum the arena bytes `o` needs as a value of type `t` whose
 * arrmeta is `am` (the data does not exist yet).  Never fails: values that
 * do not fit are skipped (the write pass reports them). */
static void ckc_measure(ckc_wctx *w, ck_type t, const char *am, PyObject *o) {
  uint32_t id = ckc_id(t);
  if (id < CK_BUILTIN_TYPE_COUNT) {
    return;
  }
  if (o == Py_None && w->na != NULL) {
    o = w->na;
  }
  switch (id) {
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM:
  case CK_TYPE_VAR_DIM: {
    if (!ckc_is_seq(o)) {
      return;
    }
    ck_type el = t->element;
    if (ckc_is_builtin(el) && id != CK_TYPE_VAR_DIM) {
      return;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject **items = PySequence_Fast_ITEMS(o);
    const char *el_am;
    if (id == CK_TYPE_VAR_DIM) {
      const ck_var_dim_arrmeta *vam = (const ck_var_dim_arrmeta *)am;
      size_t esize = ck_type_data_size(el);
      if (vam->offset == 0 && vam->stride >= 0 && (size_t)vam->stride >= esize &&
          vam->blockref != NULL && (size_t)n <= SIZE_MAX / ((size_t)vam->stride + 1)) {
        ckc_arena_need(&w->arenas, vam->blockref, (size_t)n * (size_t)vam->stride,
                       ck_type_data_alignment(el));
      }
      if (ckc_is_builtin(el)) {
        return;
      }
      el_am = am + sizeof(ck_var_dim_arrmeta);
    } else {
      el_am = am + sizeof(ck_dim_arrmeta);
    }
    uint32_t eid = ckc_id(el);
    if (eid == CK_TYPE_STRING) {
      ck_memblock *mb = ((const ck_string_arrmeta *)el_am)->blockref;
      size_t total = 0;
      for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = items[i];
        if (s == Py_None && w->na != NULL) {
          s = w->na;
        }
        if (PyUnicode_Check(s)) {
          Py_ssize_t k = ckc_utf8_size(s);
          total += k > 0 ? (size_t)k : 0;
        } else if (PyBytes_Check(s)) {
          total += (size_t)PyBytes_GET_SIZE(s);
        }
      }
      if (mb != NULL) {
        ckc_arena_need(&w->arenas, mb, total, 1);
      }
      return;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      ckc_measure(w, el, el_am, items[i]);
    }
    return;
  }
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES: {
    ck_memblock *mb = ((const ck_string_arrmeta *)am)->blockref;
    size_t align = id == CK_TYPE_BYTES ? ck_bytes_type_alignment(t) : 1;
    Py_ssize_t k = -1;
    if (PyUnicode_Check(o) && id == CK_TYPE_STRING) {
      k = ckc_utf8_size(o);
    } else if (PyBytes_Check(o)) {
      k = PyBytes_GET_SIZE(o);
    } else if (PyByteArray_Check(o)) {
      k = PyByteArray_GET_SIZE(o);
    }
    if (k > 0 && mb != NULL) {
      ckc_arena_need(&w->arenas, mb, (size_t)k, align);
    }
    return;
  }
  case CK_TYPE_OPTION:
    if (o != Py_None) {
      ckc_measure(w, t->element, am + sizeof(ck_option_arrmeta), o);
    }
    return;
  case CK_TYPE_STRUCT: {
    size_t nf = t->field_count;
    if (PyDict_Check(o)) {
      for (size_t i = 0; i < nf; i++) {
        PyObject *v = PyDict_GetItemString(o, t->field_names[i]);
        if (v != NULL) {
          ckc_measure(w, t->field_types[i], am + t->field_arrmeta_offsets[i], v);
        }
      }
    } else if (ckc_is_seq(o) && (size_t)PySequence_Fast_GET_SIZE(o) == nf) {
      for (size_t i = 0; i < nf; i++) {
        ckc_measure(w, t->field_types[i], am + t->field_arrmeta_offsets[i],
                    PySequence_Fast_GET_ITEM(o, (Py_ssize_t)i));
      }
    }
    return;
  }
  default:
    return;
  }
}

static int ckc_write(ckc_wctx *w, ck_type t, char *data, const char *am, PyObject *o);

/* A str / bytes value into a string or bytes slot. */
static int ckc_write_text(ckc_wctx *w, ck_type t, uint32_t id, char *data, const char *am,
                          PyObject *o) {
  ck_memblock *mb = ((const ck_string_arrmeta *)am)->blockref;
  ck_string *s = (ck_string *)data;
  const char *src = NULL;
  Py_ssize_t n;
  size_t align = 1;
  if (mb == NULL) {
    return ckc_raisef(CK_ERR_INVALID_STATE, "the string arrmeta has no blockref arena");
  }
  if (id == CK_TYPE_STRING) {
    if (PyUnicode_Check(o)) {
      n = ckc_utf8_size(o);
      if (n < 0) {
        return ckc_raise_unencodable(o);
      }
      if (n == 0) {
        s->begin = s->end = NULL;
        return 0;
      }
      char *dst;
      if (ckc_arena_take(&w->arenas, mb, (size_t)n, 1, &dst) < 0) {
        return -1;
      }
      ckc_utf8_encode(o, dst);
      s->begin = dst;
      s->end = dst + n;
      return 0;
    }
    if (PyBytes_Check(o) || PyByteArray_Check(o)) {
      src = PyBytes_Check(o) ? PyBytes_AS_STRING(o) : PyByteArray_AS_STRING(o);
      n = PyBytes_Check(o) ? PyBytes_GET_SIZE(o) : PyByteArray_GET_SIZE(o);
      if (!ck_utf8_validate(src, (size_t)n)) {
        PyObject *where = w->depth > 0 ? ckc_path_text(w) : NULL;
        int rc = ckc_raise_bad_utf8(src, n, where);
        Py_XDECREF(where);
        return rc;
      }
    } else if (PyMemoryView_Check(o)) {
      return ckc_unsupported_value(o);
    } else {
      PyObject *msg = PyUnicode_FromFormat("cannot assign %s value %R to string",
                                           Py_TYPE(o)->tp_name, o);
      return ckc_raise(CK_ERR_TYPE, msg);
    }
  } else {
    if (PyBytes_Check(o)) {
      src = PyBytes_AS_STRING(o);
      n = PyBytes_GET_SIZE(o);
    } else if (PyByteArray_Check(o)) {
      src = PyByteArray_AS_STRING(o);
      n = PyByteArray_GET_SIZE(o);
    } else if (PyMemoryView_Check(o)) {
      return ckc_unsupported_value(o);
    } else {
      PyObject *ts = ckc_type_str(t);
      PyObject *msg = ts != NULL ? PyUnicode_FromFormat("cannot assign %s value to '%U'",
                                                        Py_TYPE(o)->tp_name, ts)
                                 : NULL;
      Py_XDECREF(ts);
      return ckc_raise(CK_ERR_TYPE, msg);
    }
    align = ck_bytes_type_alignment(t);
  }
  char *dst;
  if (ckc_arena_take(&w->arenas, mb, (size_t)n, align, &dst) < 0) {
    return -1;
  }
  if (n) {
    memcpy(dst, src, (size_t)n);
  }
  s->begin = dst;
  s->end = dst + n;
  return 0;
}

static int ckc_write_items(ckc_wctx *w, ck_type t, ck_type el, char *base, intptr_t stride,
                           const char *el_am, PyObject *o) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject **items = PySequence_Fast_ITEMS(o);
  uint32_t eid = ckc_id(el);
  (void)t;
  if (w->depth > CKC_MAX_DEPTH) {
    return ckc_raisef(CK_ERR_VALUE, "the value nests too deeply");
  }
  int d = w->depth++;
  w->path_is_key[d] = 0;
  int rc = 0;
  for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
    w->ipath[d] = i;
    PyObject *v = items[i];
    char *p = base + i * stride;
    if (eid < CK_BUILTIN_TYPE_COUNT && v != Py_None) {
      rc = ckc_write_scalar(eid, p, v);
    } else {
      rc = ckc_write(w, el, p, el_am, v);
    }
  }
  w->depth--;
  return rc;
}

static int ckc_write_struct(ckc_wctx *w, ck_type t, char *data, const char *am,
                            PyObject *o) {
  size_t nf = t->field_count;
  const uintptr_t *offsets = (const uintptr_t *)am;
  PyObject *items[64];
  PyObject **vals = items;
  if (nf > 64) {
    vals = PyMem_Malloc(nf * sizeof(PyObject *));
    if (vals == NULL) {
      PyErr_NoMemory();
      return -1;
    }
  }
  int rc = 0;
  int by_key = PyDict_Check(o);
  if (by_key) {
    size_t found = 0;
    for (size_t i = 0; i < nf; i++) {
      vals[i] = PyDict_GetItemString(o, t->field_names[i]); /* borrowed */
      found += vals[i] != NULL;
    }
    if (found != nf || (size_t)PyDict_GET_SIZE(o) != nf) {
      /* the Python path's message: names in order, the keys sorted */
      PyObject *names = PyList_New((Py_ssize_t)nf);
      for (size_t i = 0; names != NULL && i < nf; i++) {
        PyObject *s = PyUnicode_FromString(t->field_names[i]);
        if (s == NULL) {
          Py_CLEAR(names);
          break;
        }
        PyList_SET_ITEM(names, (Py_ssize_t)i, s);
      }
      PyObject *keys = PyList_New(0);
      PyObject *k, *v;
      Py_ssize_t pos = 0;
      while (keys != NULL && PyDict_Next(o, &pos, &k, &v)) {
        PyObject *ks = PyObject_Str(k);
        if (ks == NULL || PyList_Append(keys, ks) < 0) {
          Py_XDECREF(ks);
          Py_CLEAR(keys);
          break;
        }
        Py_DECREF(ks);
      }
      if (keys != NULL && PyList_Sort(keys) < 0) {
        Py_CLEAR(keys);
      }
      PyObject *ts = names != NULL && keys != NULL ? ckc_type_str(t) : NULL;
      PyObject *msg = ts != NULL ? PyUnicode_FromFormat(
                                       "struct '%U' needs exactly the fields %R, got %R", ts,
                                       names, keys)
                                 : NULL;
      Py_XDECREF(ts);
      Py_XDECREF(names);
      Py_XDECREF(keys);
      rc = ckc_raise(CK_ERR_VALUE, msg);
    }
  } else if (PyList_CheckExact(o) && (size_t)PyList_GET_SIZE(o) == nf) {
    for (size_t i = 0; i < nf; i++) {
      vals[i] = PyList_GET_ITEM(o, (Py_ssize_t)i);
    }
  } else if (PyTuple_CheckExact(o) && (size_t)PyTuple_GET_SIZE(o) == nf) {
    for (size_t i = 0; i < nf; i++) {
      vals[i] = PyTuple_GET_ITEM(o, (Py_ssize_t)i);
    }
  } else if ((ckc_is_plain_value(o) && !PyDict_Check(o)) || ckc_is_seq(o)) {
    PyObject *ts = ckc_type_str(t);
    PyObject *msg = ts != NULL ? PyUnicode_FromFormat("cannot assign %R to struct '%U'", o, ts)
                               : NULL;
    Py_XDECREF(ts);
    rc = ckc_raise(CK_ERR_TYPE, msg);
  } else {
    rc = ckc_unsupported_value(o); /* np.void, other sequences: the Python path */
  }
  if (rc == 0) {
    if (w->depth > CKC_MAX_DEPTH) {
      rc = ckc_raisef(CK_ERR_VALUE, "the value nests too deeply");
    } else {
      int d = w->depth++;
      for (size_t i = 0; i < nf && rc == 0; i++) {
        if (by_key) {
          w->path_is_key[d] = 1;
          w->path[d] = PyUnicode_FromString(t->field_names[i]);
          if (w->path[d] == NULL) {
            rc = -1;
            break;
          }
        } else {
          w->path_is_key[d] = 0;
          w->ipath[d] = (Py_ssize_t)i;
        }
        rc = ckc_write(w, t->field_types[i], data + offsets[i],
                       am + t->field_arrmeta_offsets[i], vals[i]);
        if (by_key) {
          Py_CLEAR(w->path[d]);
        }
      }
      w->depth--;
    }
  }
  if (vals != items) {
    PyMem_Free(vals);
  }
  return rc;
}

static int ckc_write(ckc_wctx *w, ck_type t, char *data, const char *am, PyObject *o) {
  uint32_t id = ckc_id(t);
  if (o == Py_None && (id < CK_BUILTIN_TYPE_COUNT || id == CK_TYPE_STRING ||
                       id == CK_TYPE_BYTES)) {
    if (w->na == NULL) {
      return ckc_note_missing(w);
    }
    o = w->na;
  }
  if (id < CK_BUILTIN_TYPE_COUNT) {
    return ckc_write_scalar(id, data, o);
  }
  switch (id) {
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    const ck_dim_arrmeta *dam = (const ck_dim_arrmeta *)am;
    if (!ckc_is_seq(o)) {
      if (ckc_is_plain_value(o)) {
        PyObject *ts = ckc_type_str(t);
        PyObject *msg = ts != NULL
            ? PyUnicode_FromFormat("expected a sequence of %zd for '%U', got %R", dam->size,
                                   ts, o)
            : NULL;
        Py_XDECREF(ts);
        return ckc_raise(CK_ERR_TYPE, msg);
      }
      return ckc_unsupported_value(o);
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (n != dam->size) {
      PyObject *ts = ckc_type_str(t);
      PyObject *msg = ts != NULL
          ? PyUnicode_FromFormat("expected %zd elements for '%U', got %zd", dam->size, ts, n)
          : NULL;
      Py_XDECREF(ts);
      return ckc_raise(CK_ERR_VALUE, msg);
    }
    return ckc_write_items(w, t, t->element, data, dam->stride,
                           am + sizeof(ck_dim_arrmeta), o);
  }
  case CK_TYPE_VAR_DIM: {
    if (!ckc_is_seq(o)) {
      return ckc_is_plain_value(o)
                 ? ckc_raise_typed(CK_ERR_TYPE, "expected a sequence for ", t, ", got %R", o)
                 : ckc_unsupported_value(o);
    }
    const ck_var_dim_arrmeta *vam = (const ck_var_dim_arrmeta *)am;
    ck_type el = t->element;
    size_t esize = ck_type_data_size(el);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    ck_var_dim_data *vd = (ck_var_dim_data *)data;
    if (vam->offset != 0 || vam->stride < 0 || (size_t)vam->stride < esize ||
        vam->blockref == NULL) {
      ck_status st = ck_var_dim_alloc(t, data, am, (size_t)n); /* reports the problem */
      if (st != CK_OK) {
        return ckc_raise_status(st);
      }
    } else if ((size_t)n > (size_t)PTRDIFF_MAX / ((size_t)vam->stride + 1)) {
      return ckc_raisef(CK_ERR_OVERFLOW, "%zd elements of stride %zd overflow", n,
                        (Py_ssize_t)vam->stride);
    } else {
      size_t total = (size_t)n * (size_t)vam->stride;
      char *b;
      if (ckc_arena_take(&w->arenas, vam->blockref, total, ck_type_data_alignment(el), &b) <
          0) {
        return -1;
      }
      memset(b, 0, total); /* elements holding strings must read as empty */
      vd->begin = b;
      vd->size = (size_t)n;
    }
    if (n == 0) {
      return 0;
    }
    return ckc_write_items(w, t, el, vd->begin + vam->offset, vam->stride,
                           am + sizeof(ck_var_dim_arrmeta), o);
  }
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES:
    return ckc_write_text(w, t, id, data, am, o);
  case CK_TYPE_STRUCT:
    return ckc_write_struct(w, t, data, am, o);
  case CK_TYPE_OPTION: {
    /* None is a null (its bit cleared; the value bytes stay as made: zero);
     * anything else is the value, its bit set. */
    const ck_option_arrmeta *oam = (const ck_option_arrmeta *)am;
    ck_status st = ck_option_set_valid(oam, data, o != Py_None);
    if (st != CK_OK) {
      return ckc_raise_status(st);
    }
    if (o == Py_None) {
      return 0;
    }
    return ckc_write(w, t->element, data, am + sizeof(ck_option_arrmeta), o);
  }
  case CK_TYPE_POINTER:
    return ckc_raise_typed(CK_ERR_NOT_SUPPORTED,
                           "pointer values cannot be built from Python objects (", t, ")",
                           NULL);
  case CK_TYPE_DATETIME:
  case CK_TYPE_TIMEDELTA:
  case CK_TYPE_DATE:
  case CK_TYPE_TIME:
    /* instants, durations, dates and times of day (datetime64, datetime.datetime,
     * datetime.date, ...): NumPy converts their units, on the Python path
     * (host/convert.py time_scalar, _write_date) */
    return ckc_unsupported_value(o);
  default:
    return ckc_raise_typed(CK_ERR_TYPE, "cannot write values of type ", t, "", NULL);
  }
}

/* Options under a var dim have no bitmap until one is attached (validity.h):
 * after the reservations, each such option without one gets a bitmap over
 * the whole reservation of its var dim's arena, all null until the write
 * pass sets each slot's bit.  Every element allocation is aligned to the
 * element's alignment from the aligned reservation, so the slot at address
 * p has bit (p - begin) / alignment.  `e`: the reservation of the nearest
 * var dim above (NULL: none, or nothing reserved). */
static int ckc_attach_var_bitmaps(ckc_wctx *w, ck_type t, const char *am, const ckc_arena *e) {
  switch (ckc_id(t)) {
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM:
    return ckc_attach_var_bitmaps(w, t->element, am + sizeof(ck_dim_arrmeta), e);
  case CK_TYPE_VAR_DIM: {
    const ck_var_dim_arrmeta *vam = (const ck_var_dim_arrmeta *)am;
    const ckc_arena *own =
        vam->blockref != NULL ? ckc_arena_find(&w->arenas, vam->blockref, 0) : NULL;
    return ckc_attach_var_bitmaps(w, t->element, am + sizeof(ck_var_dim_arrmeta),
                                  own != NULL && own->cur != NULL ? own : NULL);
  }
  case CK_TYPE_OPTION: {
    const ck_option_arrmeta *oam = (const ck_option_arrmeta *)am;
    if (e != NULL && oam->bits == NULL) {
      size_t step = ck_type_data_alignment(t);
      int64_t length = (int64_t)((size_t)(e->end - e->cur) / step);
      ck_memblock *mb;
      char *bits;
      ck_status st = ck_fixed_size_pod_memblock_new(((size_t)length + 7) / 8 + 1, 8, &mb,
                                                    &bits);
      if (st == CK_OK) {
        st = ck_option_attach_bitmap(t, (char *)am, (uint8_t *)bits, mb, 0, e->cur,
                                     (intptr_t)step, length);
        ck_memblock_decref(mb); /* the arrmeta holds its own reference */
      }
      if (st != CK_OK) {
        return ckc_raise_status(st);
      }
    }
    return ckc_attach_var_bitmaps(w, t->element, am + sizeof(ck_option_arrmeta), NULL);
  }
  default:
    return 0;
  }
}

/* Write `o` as a value of type `t` at data/arrmeta (just made). */
static PyObject *ckc_write_value(ck_type t, char *data, const char *am, PyObject *o,
                                 PyObject *na) {
  if (ckc_check_scalar == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "_convert.setup() was not called");
    return NULL;
  }
  ckc_wctx *w = PyMem_Calloc(1, sizeof *w);
  if (w == NULL) {
    return PyErr_NoMemory();
  }
  w->na = na == Py_None ? NULL : na;
  ckc_measure(w, t, am, o);
  int rc = ckc_arenas_reserve(&w->arenas);
  if (rc == 0 && (ck_type_flags(t) & CK_TYPE_FLAG_OPTION)) {
    rc = ckc_attach_var_bitmaps(w, t, am, NULL);
  }
  if (rc == 0) {
    rc = ckc_write(w, t, data, am, o);
  }
  if (rc == 0 && w->missing.count > 0) {
    rc = ckc_missing_error(&w->missing, "None");
  }
  Py_XDECREF(w->missing.first);
  PyMem_Free(w);
  if (rc < 0) {
    return NULL;
  }
  Py_RETURN_NONE;
}

PyObject *ckc_write_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "write(address, obj, na)");
    return NULL;
  }
  ck_array_preamble *a = ckc_array_arg(args[0]);
  if (a == NULL) {
    return NULL;
  }
  return ckc_write_value(a->type, a->data, ck_array_arrmeta(a), args[1], args[2]);
}

/* write_at(type, data, arrmeta, obj, na) (addresses) */
PyObject *ckc_write_at(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "write_at(type, data, arrmeta, obj, na)");
    return NULL;
  }
  ck_type t = (ck_type)PyLong_AsVoidPtr(args[0]);
  char *data = PyLong_AsVoidPtr(args[1]);
  const char *arrmeta = PyLong_AsVoidPtr(args[2]);
  if (PyErr_Occurred()) {
    return NULL;
  }
  if (t == NULL || data == NULL) {
    PyErr_SetString(PyExc_ValueError, "_convert.write_at: a NULL type or data address");
    return NULL;
  }
  return ckc_write_value(t, data, arrmeta, args[3], args[4]);
}
