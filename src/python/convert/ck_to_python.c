/*
 * ck_to_python.c -- C values -> Python objects in one recursive pass
 * (tolist, read): builtin scalars, str / bytes, lists of fixed, strided and
 * var dims, dicts of structs (field names made once per call), pointers.
 */
#include "convert_internal.h"

#include <datetime.h>
#include <math.h>

static double ckc_half_to_double(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = ldexp((double)man, -24);
  } else if (exp == 31) {
    v = man ? NAN : INFINITY;
  } else {
    v = ldexp((double)(man | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

void ckc_rctx_clear(ckc_rctx *r) {
  for (int i = 0; i < r->nnames; i++) {
    Py_DECREF(r->names[i].names);
  }
  r->nnames = 0;
}

/* Borrowed tuple of the field names of struct type `t`; NULL on error.
 * Past the cache's size the tuple is made anew (*owned set). */
static PyObject *ckc_field_names(ckc_rctx *r, ck_type t, int *owned) {
  *owned = 0;
  for (int i = 0; i < r->nnames; i++) {
    if (r->names[i].type == t) {
      return r->names[i].names;
    }
  }
  size_t n = t->field_count;
  PyObject *tup = PyTuple_New((Py_ssize_t)n);
  if (tup == NULL) {
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    PyObject *s = PyUnicode_FromString(t->field_names[i]);
    if (s == NULL) {
      Py_DECREF(tup);
      return NULL;
    }
    PyUnicode_InternInPlace(&s);
    PyTuple_SET_ITEM(tup, (Py_ssize_t)i, s);
  }
  if (r->nnames < (int)(sizeof r->names / sizeof r->names[0])) {
    r->names[r->nnames].type = t;
    r->names[r->nnames].names = tup;
    r->nnames++;
    return tup;
  }
  *owned = 1;
  return tup;
}

static PyObject *ckc_read_builtin(uint32_t id, const char *p) {
  switch (id) {
  case CK_TYPE_BOOL:
    return PyBool_FromLong(*(const uint8_t *)p != 0);
  case CK_TYPE_INT8:
    return PyLong_FromLong(*(const int8_t *)p);
  case CK_TYPE_INT16:
    return PyLong_FromLong(*(const int16_t *)p);
  case CK_TYPE_INT32:
    return PyLong_FromLong(*(const int32_t *)p);
  case CK_TYPE_INT64:
    return PyLong_FromLongLong(*(const int64_t *)p);
  case CK_TYPE_UINT8:
    return PyLong_FromUnsignedLong(*(const uint8_t *)p);
  case CK_TYPE_UINT16:
    return PyLong_FromUnsignedLong(*(const uint16_t *)p);
  case CK_TYPE_UINT32:
    return PyLong_FromUnsignedLong(*(const uint32_t *)p);
  case CK_TYPE_UINT64:
    return PyLong_FromUnsignedLongLong(*(const uint64_t *)p);
  case CK_TYPE_FLOAT16:
    return PyFloat_FromDouble(ckc_half_to_double(*(const uint16_t *)p));
  case CK_TYPE_FLOAT32:
    return PyFloat_FromDouble(*(const float *)p);
  case CK_TYPE_FLOAT64:
    return PyFloat_FromDouble(*(const double *)p);
  case CK_TYPE_COMPLEX64: {
    const float *c = (const float *)p;
    return PyComplex_FromDoubles(c[0], c[1]);
  }
  case CK_TYPE_COMPLEX128: {
    const double *c = (const double *)p;
    return PyComplex_FromDoubles(c[0], c[1]);
  }
  default:
    ckc_raisef(CK_ERR_TYPE, "cannot read values of builtin type id %u", (unsigned)id);
    return NULL;
  }
}

/* A str of the UTF-8 bytes b[0..n): ASCII text (the common case) is copied
 * into a new compact str directly, anything else is decoded (and checked)
 * by PyUnicode_DecodeUTF8. */
static inline PyObject *ckc_str(const char *b, Py_ssize_t n) {
  if (n == 0) {
    return PyUnicode_New(0, 0); /* the empty str singleton */
  }
  /* ASCII: no byte has its high bit; tested 8 bytes at a time */
  uint64_t any = 0;
  Py_ssize_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    any |= w;
  }
  for (; i < n; i++) {
    any |= (unsigned char)b[i];
  }
  if (any & UINT64_C(0x8080808080808080)) {
    return PyUnicode_DecodeUTF8(b, n, NULL);
  }
  PyObject *u = PyUnicode_New(n, 127);
  if (u != NULL) {
    memcpy(PyUnicode_1BYTE_DATA(u), b, (size_t)n);
  }
  return u;
}

static inline PyObject *ckc_read_string(const char *data, int is_bytes) {
  const ck_string *s = (const ck_string *)data;
  Py_ssize_t n = s->begin != NULL ? (Py_ssize_t)(s->end - s->begin) : 0;
  if (is_bytes) {
    return PyBytes_FromStringAndSize(n ? s->begin : "", n);
  }
  return ckc_str(s->begin, n);
}

/* The 64 validity bits of slots bit, bit + 1, ..., bit + 63 (bits past the
 * run's last slot are read only where the run covers their bytes: `left`
 * slots remain, so bytes past (bit + left - 1) / 8 are not touched). */
static inline uint64_t ckc_bits64(const uint8_t *bits, int64_t bit, Py_ssize_t left) {
  int64_t first = bit >> 3, last = (bit + (left < 64 ? left : 64) - 1) >> 3;
  int64_t top = last - first < 8 ? last : first + 7;
  uint64_t w = 0;
  for (int64_t k = first; k <= top; k++) {
    w |= (uint64_t)bits[k] << (8 * (k - first));
  }
  w >>= (bit & 7);
  if (last - first == 8) { /* a ninth byte: the high bits of the word */
    w |= (uint64_t)bits[last] << (64 - (bit & 7));
  }
  return w;
}

/* `n` ?string (or ?bytes) slots with consecutive validity bits from b0: the
 * bitmap read 64 slots a word at a time; a null is None, a full word of
 * valid slots runs without a test per slot. */
static int ckc_read_option_strings(PyObject *list, const uint8_t *bits, int64_t b0,
                                   const char *base, intptr_t stride, Py_ssize_t n,
                                   int is_bytes) {
  for (Py_ssize_t i = 0; i < n; i += 64) {
    Py_ssize_t m = n - i < 64 ? n - i : 64;
    uint64_t w = ckc_bits64(bits, b0 + (int64_t)i, n - i);
    bool full = m == 64 ? w == UINT64_MAX : (w & ((UINT64_C(1) << m) - 1)) ==
                                                ((UINT64_C(1) << m) - 1);
    for (Py_ssize_t k = 0; k < m; k++) {
      PyObject *v;
      if (!full && !((w >> k) & 1u)) {
        v = Py_NewRef(Py_None);
      } else {
        v = ckc_read_string(base + (i + k) * stride, is_bytes);
        if (v == NULL) {
          return -1;
        }
      }
      PyList_SET_ITEM(list, i + k, v);
    }
  }
  return 0;
}

/* `n` elements of type `el` at `base`, `stride` apart: a list. */
static PyObject *ckc_read_run(ckc_rctx *r, ck_type el, const char *base, intptr_t stride,
                              Py_ssize_t n, const char *el_arrmeta) {
  PyObject *list = PyList_New(n);
  if (list == NULL) {
    return NULL;
  }
  uint32_t id = ckc_id(el);
  /* a run of options: the slots' bits found once (a null reads as None) */
  const uint8_t *bits = NULL;
  int64_t b0 = -1, bstep = 0;
  if (id == CK_TYPE_OPTION && n > 0) {
    const ck_option_arrmeta *om = (const ck_option_arrmeta *)el_arrmeta;
    ck_status st = ck_option_slot_bits(om, base, stride, (size_t)n, &b0, &bstep);
    if (st != CK_OK) {
      Py_DECREF(list);
      ckc_raise_status(st);
      return NULL;
    }
    bits = b0 >= 0 ? om->bits : NULL;
    el = el->element;
    el_arrmeta += sizeof(ck_option_arrmeta);
    id = ckc_id(el);
  }
  if (bits != NULL && bstep == 1 && (id == CK_TYPE_STRING || id == CK_TYPE_BYTES)) {
    if (ckc_read_option_strings(list, bits, b0, base, stride, n, id == CK_TYPE_BYTES) < 0) {
      Py_DECREF(list);
      return NULL;
    }
    return list;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    const char *p = base + i * stride;
    PyObject *v;
    if (bits != NULL && !ck_bitmap_get(bits, b0 + (int64_t)i * bstep)) {
      v = Py_NewRef(Py_None);
    } else if (id < CK_BUILTIN_TYPE_COUNT) {
      v = ckc_read_builtin(id, p);
    } else if (id == CK_TYPE_STRING || id == CK_TYPE_BYTES) {
      v = ckc_read_string(p, id == CK_TYPE_BYTES);
    } else {
      v = ckc_read(r, el, p, el_arrmeta);
    }
    if (v == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, v);
  }
  return list;
}

/* A time value as NumPy's tolist() gives it: datetime.date for instants in
 * Y..D (and dates), datetime.datetime for h..us (aware, in UTC, when the
 * type has a zone), datetime.timedelta for durations in W..us,
 * datetime.time for times of day in s..us, the raw count (int) for ns and
 * calendar durations and for what Python's types cannot hold (years
 * outside 1..9999); NaT is None. */
static PyObject *ckc_read_time(ck_type t, const char *data) {
  if (PyDateTimeAPI == NULL) {
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL) {
      return NULL;
    }
  }
  int64_t v;
  if (t->data_size == 4) {
    int32_t w;
    memcpy(&w, data, 4);
    v = w == INT32_MIN ? CK_NAT : w;
  } else {
    memcpy(&v, data, 8);
  }
  if (v == CK_NAT) {
    Py_RETURN_NONE;
  }
  int unit = ck_time_type_unit(t);
  uint32_t id = t->id;
  if (unit == CK_UNIT_NS || (id == CK_TYPE_TIMEDELTA && unit <= CK_UNIT_M)) {
    return PyLong_FromLongLong((long long)v);
  }
  if (id == CK_TYPE_TIMEDELTA) {
    int64_t us;
    if (ck_time_convert(v, (ck_time_unit)unit, CK_UNIT_US, false, &us, NULL) != CK_OK) {
      return PyLong_FromLongLong((long long)v);
    }
    int64_t days = us / 86400000000LL, rem = us % 86400000000LL;
    if (rem < 0) {
      rem += 86400000000LL;
      days -= 1;
    }
    if (days < -999999999 || days > 999999999) {
      return PyLong_FromLongLong((long long)v);
    }
    return PyDelta_FromDSU((int)days, (int)(rem / 1000000), (int)(rem % 1000000));
  }
  if (id == CK_TYPE_TIME) {
    int64_t us;
    (void)ck_time_convert(v, (ck_time_unit)unit, CK_UNIT_US, false, &us, NULL);
    if (us < 0 || us >= 86400000000LL) {
      return PyLong_FromLongLong((long long)v);
    }
    int64_t s = us / 1000000;
    return PyTime_FromTime((int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60),
                           (int)(us % 1000000));
  }
  /* instants and dates */
  int64_t us = 0, days;
  bool date_only = id == CK_TYPE_DATE || unit <= CK_UNIT_D;
  if (date_only) {
    if (ck_time_convert(v, (ck_time_unit)unit, CK_UNIT_D, true, &days, NULL) != CK_OK) {
      return PyLong_FromLongLong((long long)v);
    }
  } else if (ck_time_convert(v, (ck_time_unit)unit, CK_UNIT_US, true, &us, NULL) != CK_OK) {
    return PyLong_FromLongLong((long long)v);
  } else {
    days = us / 86400000000LL;
    if (us % 86400000000LL < 0) {
      days -= 1;
    }
    us -= days * 86400000000LL;
  }
  int64_t y;
  int m, d;
  ck_civil_from_days(days, &y, &m, &d);
  if (y < 1 || y > 9999) {
    return PyLong_FromLongLong((long long)v);
  }
  if (date_only) {
    return PyDate_FromDate((int)y, m, d);
  }
  int64_t s = us / 1000000;
  PyObject *tz = ck_datetime_type_tz(t) != NULL ? PyDateTime_TimeZone_UTC : Py_None;
  return PyDateTimeAPI->DateTime_FromDateAndTime(
      (int)y, m, d, (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60), (int)(us % 1000000),
      tz, PyDateTimeAPI->DateTimeType);
}

PyObject *ckc_read(ckc_rctx *r, ck_type t, const char *data, const char *arrmeta) {
  uint32_t id = ckc_id(t);
  if (id < CK_BUILTIN_TYPE_COUNT) {
    return ckc_read_builtin(id, data);
  }
  switch (id) {
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    const ck_dim_arrmeta *am = (const ck_dim_arrmeta *)arrmeta;
    return ckc_read_run(r, t->element, data, am->stride, am->size,
                        arrmeta + sizeof(ck_dim_arrmeta));
  }
  case CK_TYPE_VAR_DIM: {
    const ck_var_dim_arrmeta *am = (const ck_var_dim_arrmeta *)arrmeta;
    const ck_var_dim_data *d = (const ck_var_dim_data *)data;
    if (d->size == 0 || d->begin == NULL) {
      return PyList_New(0);
    }
    return ckc_read_run(r, t->element, d->begin + am->offset, am->stride,
                        (Py_ssize_t)d->size, arrmeta + sizeof(ck_var_dim_arrmeta));
  }
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES:
    return ckc_read_string(data, id == CK_TYPE_BYTES);
  case CK_TYPE_STRUCT: {
    int owned;
    PyObject *names = ckc_field_names(r, t, &owned);
    if (names == NULL) {
      return NULL;
    }
    const uintptr_t *offsets = (const uintptr_t *)arrmeta;
    PyObject *dict = PyDict_New();
    for (size_t i = 0; dict != NULL && i < t->field_count; i++) {
      PyObject *v = ckc_read(r, t->field_types[i], data + offsets[i],
                             arrmeta + t->field_arrmeta_offsets[i]);
      if (v == NULL || PyDict_SetItem(dict, PyTuple_GET_ITEM(names, (Py_ssize_t)i), v) < 0) {
        Py_XDECREF(v);
        Py_CLEAR(dict);
        break;
      }
      Py_DECREF(v);
    }
    if (owned) {
      Py_DECREF(names);
    }
    return dict;
  }
  case CK_TYPE_OPTION: { /* a null reads as None, never the bytes under it */
    bool valid;
    ck_status st = ck_option_get_valid((const ck_option_arrmeta *)arrmeta, data, &valid);
    if (st != CK_OK) {
      ckc_raise_status(st);
      return NULL;
    }
    if (!valid) {
      Py_RETURN_NONE;
    }
    return ckc_read(r, t->element, data, arrmeta + sizeof(ck_option_arrmeta));
  }
  case CK_TYPE_POINTER: {
    const char *p = *(char *const *)data;
    if (p == NULL) {
      Py_RETURN_NONE;
    }
    const ck_pointer_arrmeta *am = (const ck_pointer_arrmeta *)arrmeta;
    return ckc_read(r, t->element, p + am->offset, arrmeta + sizeof(ck_pointer_arrmeta));
  }
  case CK_TYPE_DATETIME:
  case CK_TYPE_TIMEDELTA:
  case CK_TYPE_DATE:
  case CK_TYPE_TIME:
    return ckc_read_time(t, data);
  case CK_TYPE_DICTIONARY: { /* the value the index points at (ckernel/dictionary.h) */
    const ck_array_preamble *v =
        (const ck_array_preamble *)(const void *)((const ck_dictionary_arrmeta *)arrmeta)
            ->values;
    int64_t k = -1;
    switch (ck_dictionary_index_id(t)) {
    case CK_TYPE_INT8: k = *(const int8_t *)data; break;
    case CK_TYPE_INT16: k = *(const int16_t *)data; break;
    case CK_TYPE_INT32: k = *(const int32_t *)data; break;
    case CK_TYPE_INT64: k = *(const int64_t *)data; break;
    case CK_TYPE_UINT8: k = *(const uint8_t *)data; break;
    case CK_TYPE_UINT16: k = *(const uint16_t *)data; break;
    case CK_TYPE_UINT32: k = *(const uint32_t *)data; break;
    default: {
      uint64_t u = *(const uint64_t *)data;
      k = u > (uint64_t)INT64_MAX ? -1 : (int64_t)u;
    }
    }
    const ck_dim_arrmeta *vd =
        v != NULL ? (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(v) : NULL;
    if (vd == NULL || k < 0 || k >= vd->size) {
      ckc_raisef(CK_ERR_INDEX, "dictionary index %lld is out of range (the dictionary holds "
                 "%lld values)", (long long)k, (long long)(vd != NULL ? vd->size : 0));
      return NULL;
    }
    return ckc_read(r, ck_dictionary_value_type(t), v->data + k * vd->stride,
                    (const char *)(vd + 1));
  }
  default:
    ckc_raisef(CK_ERR_TYPE, "cannot read values of type id %u", (unsigned)id);
    return NULL;
  }
}

PyObject *ckc_tolist(PyObject *mod, PyObject *addr) {
  (void)mod;
  ck_array_preamble *a = ckc_array_arg(addr);
  if (a == NULL) {
    return NULL;
  }
  ckc_rctx r = {.nnames = 0};
  PyObject *v = ckc_read(&r, a->type, a->data, ck_array_arrmeta(a));
  ckc_rctx_clear(&r);
  return v;
}

/* read(type_address, data_address, arrmeta_address): the value at data. */
PyObject *ckc_read_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "read(type, data, arrmeta) (addresses)");
    return NULL;
  }
  ck_type t = (ck_type)PyLong_AsVoidPtr(args[0]);
  const char *data = PyLong_AsVoidPtr(args[1]);
  const char *arrmeta = PyLong_AsVoidPtr(args[2]);
  if (PyErr_Occurred()) {
    return NULL;
  }
  if (t == NULL || data == NULL) {
    PyErr_SetString(PyExc_ValueError, "_convert.read: a NULL type or data address");
    return NULL;
  }
  ckc_rctx r = {.nnames = 0};
  PyObject *v = ckc_read(&r, t, data, arrmeta);
  ckc_rctx_clear(&r);
  return v;
}
