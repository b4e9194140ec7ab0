/*
 * convert.c -- ckernels._convert: values of any ckernel type <-> Python
 * objects and NumPy string arrays, one C pass each way (no per-element
 * Python or cffi work).
 *
 * Reading (a C array -> Python):
 *
 *   tolist(address) -> object
 *       The value of the C array at `address` (a `ck_array_preamble *`) as
 *       nested lists (fixed, strided and var dims), Python scalars (bool,
 *       int, float, complex; float16 as float), str (string), bytes, dicts
 *       (structs, fields in order), None (NULL pointers).  A 0-d array gives
 *       its scalar.
 *
 *   read(type, data, arrmeta) -> object
 *       The same for a value of type `type` at `data` with `arrmeta`
 *       (addresses: an element of a view, a field).
 *
 *   to_strings(address, dtype) -> ndarray
 *       A new NumPy array of `dtype` (a `StringDType` instance) holding the
 *       strings of the C array at `address`, whose dims are all fixed/strided
 *       and whose element type is `string`: one `NpyString_pack` per element,
 *       under one `NpyString_acquire_allocator`.
 *
 *   to_objects(address) -> ndarray
 *       A new object array with the C array's fixed/strided dims, each
 *       element what tolist() gives for it (bytes, dicts, lists of var dims).
 *
 * Writing (Python -> a new C array):
 *
 *   scan(obj, na) -> tuple or None
 *       What `ckernels.array(obj)` infers from `obj` (nested exact lists and
 *       tuples of bool / int (int64 range) / float / complex / str / bytes /
 *       dicts with str keys, and None where `na` is given), by the rules of
 *       the Python inference (`_info`): `(sizes, kind, lo, hi, fields)` with
 *       `sizes` the per-level sizes (None: ragged), `kind` a name or None
 *       (only empty lists), `lo`/`hi` the int range, `fields` None or
 *       {name: the same tuple over all of the field's values}.  None when
 *       `obj` holds anything else, or is not consistent (mixed kinds, depths,
 *       fields, too deep): the Python path then gives its exact error.
 *       Missing values (None) without `na` raise CKValueError with their
 *       count and the first one's index.
 *
 *   write(address, obj, na) -> None
 *       Write `obj` into the C array at `address`, which was just made (its
 *       strings and var dims empty, nobody else holding it).  Two passes: the
 *       first sums the bytes of the strings and var dim elements per arena,
 *       which then get one allocation each; the second writes.  Scalars are
 *       checked as `ckernels.array` checks them (exact Python numbers in
 *       range are stored here; everything else goes through the Python
 *       callback given to setup(), which raises the library's errors).
 *       Raises `Unsupported` (a TypeError) for values only the Python path
 *       reads (NumPy arrays inside lists, other sequence types, memoryviews):
 *       the caller discards the array and takes that path.  Other errors
 *       (shape mismatches, wrong types, invalid UTF-8, missing values) are
 *       raised with the Python path's classes and messages.
 *
 *   write_at(type, data, arrmeta, obj, na) -> None
 *       The same at `data` / `arrmeta` (addresses) for a value of `type`.
 *
 *   from_numpy(address, ndarray, na) -> None
 *       Write a NumPy `StringDType` ('T'), 'U', 'S' or object array into the
 *       C array at `address` (just made; same shape, C order; element type
 *       string or bytes).  Sizes first (one arena allocation), then the
 *       bytes.  'S' and object `bytes` into `string` are checked UTF-8;
 *       missing values (StringDType nulls, None / NaN / pandas.NA in object
 *       arrays) are an error with their count and first index unless `na`
 *       (a str or bytes) is given.
 *
 *   to_stringdtype(ndarray, dtype, na) -> ndarray
 *       A new array of `dtype` (a StringDType instance) with the text of a
 *       StringDType, 'U', 'S' (checked UTF-8) or object (str, bytes) array
 *       of any shape and strides: what string ufuncs take where NumPy's own
 *       cast would turn any object into text (None -> 'None').  Missing
 *       values as for from_numpy.
 *
 *   setup(check_scalar)
 *       Called once by the package: the callback `check_scalar(type_id,
 *       value) -> NumPy scalar` (the Python path's checked conversion of one
 *       value).
 *
 * Library errors are raised as ckernels.errors classes (py_errors.h).
 *
 * Not part of the C core: it depends on CPython and NumPy's C API (as
 * _dispatch and _arrays do) and links libckernel.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL ckernels_convert_ARRAY_API
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <numpy/dtype_api.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ckernel/ckernel.h"
#include "py_errors.h"

/* most nesting levels of a value (a ckernel type nests at most
 * CK_TYPE_MAX_DEPTH levels, the element included) */
#define CKC_MAX_DEPTH (CK_TYPE_MAX_DEPTH - 1)
/* arenas whose allocations are summed up front (more go one by one) */
#define CKC_MAX_ARENAS 32

static PyObject *ckc_check_scalar = NULL; /* (type_id, value) -> scalar   */
static PyObject *ckc_unsupported = NULL;  /* _convert.Unsupported         */

/* ------------------------------------------------------------------------ */
/* errors                                                                   */
/* ------------------------------------------------------------------------ */

/* py_errors.h raises; these return -1 for the int-returning functions here. */
static int ckc_raise(int status, PyObject *message) {
  ckpy_raise((ck_status)status, message);
  return -1;
}

#define ckc_raisef(status, ...) ckc_raise((status), PyUnicode_FromFormat(__VA_ARGS__))

/* The library failed with `status`: raise with ck_last_error()'s message. */
static int ckc_raise_status(ck_status status) {
  ckpy_raise_last(status);
  return -1;
}

static int ckc_unsupported_value(PyObject *value) {
  PyErr_Format(ckc_unsupported, "a %.100s value is read by the Python path",
               Py_TYPE(value)->tp_name);
  return -1;
}

/* The canonical text of a type, for messages (a new str, or NULL). */
static PyObject *ckc_type_str(ck_type t) {
  char buf[256];
  size_t n = 0;
  ck_status st = ck_type_print(t, buf, sizeof buf, &n);
  if (st != CK_OK) {
    ckc_raise_status(st);
    return NULL;
  }
  if (n < sizeof buf) {
    return PyUnicode_DecodeUTF8(buf, (Py_ssize_t)n, "replace");
  }
  char *big = PyMem_Malloc(n + 1);
  if (big == NULL) {
    return PyErr_NoMemory();
  }
  st = ck_type_print(t, big, n + 1, NULL);
  PyObject *r = st == CK_OK ? PyUnicode_DecodeUTF8(big, (Py_ssize_t)n, "replace") : NULL;
  PyMem_Free(big);
  if (st != CK_OK) {
    ckc_raise_status(st);
  }
  return r;
}

/* Raise `status` with "<before>'<type>'<after>" where `after` may hold one
 * %R for `value`. */
static int ckc_raise_typed(int status, const char *before, ck_type t, const char *after,
                           PyObject *value) {
  PyObject *ts = ckc_type_str(t);
  if (ts == NULL) {
    return -1;
  }
  PyObject *tail = value != NULL ? PyUnicode_FromFormat(after, value)
                                 : PyUnicode_FromString(after);
  PyObject *msg = tail != NULL ? PyUnicode_FromFormat("%s'%U'%U", before, ts, tail) : NULL;
  Py_DECREF(ts);
  Py_XDECREF(tail);
  return ckc_raise(status, msg);
}

/* ------------------------------------------------------------------------ */
/* type facts read from the descriptors (types.h: public for generated code) */
/* ------------------------------------------------------------------------ */

static inline int ckc_is_builtin(ck_type t) { return ck_type_is_builtin(t); }

static inline uint32_t ckc_id(ck_type t) {
  return ckc_is_builtin(t) ? (uint32_t)(uintptr_t)t : t->id;
}

static inline int ckc_is_regular_dim(uint32_t id) {
  return id == CK_TYPE_FIXED_DIM || id == CK_TYPE_STRIDED_DIM;
}

/* ------------------------------------------------------------------------ */
/* float16                                                                  */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* UTF-8 of Python str without intermediate objects                         */
/* ------------------------------------------------------------------------ */

/* Bytes of the UTF-8 encoding of `s`; -1 (no exception set) when `s` holds
 * a surrogate, which UTF-8 cannot encode. */
static Py_ssize_t ckc_utf8_size(PyObject *s) {
  Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  if (PyUnicode_IS_ASCII(s)) {
    return n;
  }
  const void *d = PyUnicode_DATA(s);
  int kind = PyUnicode_KIND(s);
  Py_ssize_t size = 0;
  if (kind == PyUnicode_1BYTE_KIND) {
    const Py_UCS1 *p = d;
    for (Py_ssize_t i = 0; i < n; i++) {
      size += 1 + (p[i] >= 0x80);
    }
  } else if (kind == PyUnicode_2BYTE_KIND) {
    const Py_UCS2 *p = d;
    for (Py_ssize_t i = 0; i < n; i++) {
      Py_UCS2 c = p[i];
      if (c < 0x80) {
        size += 1;
      } else if (c < 0x800) {
        size += 2;
      } else if (c >= 0xd800 && c <= 0xdfff) {
        return -1;
      } else {
        size += 3;
      }
    }
  } else {
    const Py_UCS4 *p = d;
    for (Py_ssize_t i = 0; i < n; i++) {
      Py_UCS4 c = p[i];
      if (c < 0x80) {
        size += 1;
      } else if (c < 0x800) {
        size += 2;
      } else if (c < 0x10000) {
        if (c >= 0xd800 && c <= 0xdfff) {
          return -1;
        }
        size += 3;
      } else {
        size += 4;
      }
    }
  }
  return size;
}

static inline char *ckc_put_utf8(char *o, Py_UCS4 c) {
  if (c < 0x80) {
    *o++ = (char)c;
  } else if (c < 0x800) {
    *o++ = (char)(0xc0 | (c >> 6));
    *o++ = (char)(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    *o++ = (char)(0xe0 | (c >> 12));
    *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
    *o++ = (char)(0x80 | (c & 0x3f));
  } else {
    *o++ = (char)(0xf0 | (c >> 18));
    *o++ = (char)(0x80 | ((c >> 12) & 0x3f));
    *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
    *o++ = (char)(0x80 | (c & 0x3f));
  }
  return o;
}

/* Encode `s` (no surrogates: ckc_utf8_size said so) at `out`. */
static void ckc_utf8_encode(PyObject *s, char *out) {
  Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  const void *d = PyUnicode_DATA(s);
  if (PyUnicode_IS_ASCII(s)) {
    memcpy(out, d, (size_t)n);
    return;
  }
  int kind = PyUnicode_KIND(s);
  for (Py_ssize_t i = 0; i < n; i++) {
    out = ckc_put_utf8(out, PyUnicode_READ(kind, d, i));
  }
}

/* The UTF-8 encoding of UCS4 text (a NumPy 'U' element, trailing NULs
 * trimmed by the caller): size, or -1 for a code point UTF-8 cannot hold. */
static Py_ssize_t ckc_ucs4_utf8_size(const Py_UCS4 *p, Py_ssize_t n) {
  Py_ssize_t size = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    Py_UCS4 c = p[i];
    if (c < 0x80) {
      size += 1;
    } else if (c < 0x800) {
      size += 2;
    } else if (c < 0x10000) {
      if (c >= 0xd800 && c <= 0xdfff) {
        return -1;
      }
      size += 3;
    } else if (c <= 0x10ffff) {
      size += 4;
    } else {
      return -1;
    }
  }
  return size;
}

/* The error a surrogate gives, with Python's own message. */
static int ckc_raise_unencodable(PyObject *s) {
  PyObject *b = PyUnicode_AsUTF8String(s);
  if (b != NULL) { /* not reached: ckc_utf8_size found a surrogate */
    Py_DECREF(b);
    return ckc_raisef(CK_ERR_VALUE, "string is not valid Unicode (UTF-8)");
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *msg = PyUnicode_FromFormat("string is not valid Unicode (UTF-8): %S", value);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return ckc_raise(CK_ERR_VALUE, msg);
}

/* The error invalid UTF-8 bytes give: Python's decoder message, with
 * `where` (may be NULL) telling which element. */
static int ckc_raise_bad_utf8(const char *b, Py_ssize_t n, PyObject *where) {
  PyObject *s = PyUnicode_DecodeUTF8(b, n, "strict");
  if (s != NULL) { /* not reached: the caller's check failed */
    Py_DECREF(s);
    return ckc_raisef(CK_ERR_VALUE, "bytes are not valid UTF-8");
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *msg = where != NULL
      ? PyUnicode_FromFormat("bytes are not valid UTF-8 (element %S): %S", where, value)
      : PyUnicode_FromFormat("bytes are not valid UTF-8: %S", value);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return ckc_raise(CK_ERR_VALUE, msg);
}

/* ------------------------------------------------------------------------ */
/* reading                                                                  */
/* ------------------------------------------------------------------------ */

/* Struct field names as Python str, made once per struct type in a call. */
typedef struct {
  ck_type type;
  PyObject *names; /* tuple of str */
} ckc_names;

typedef struct {
  ckc_names names[8];
  int nnames;
} ckc_rctx;

static void ckc_rctx_clear(ckc_rctx *r) {
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

static inline PyObject *ckc_read_string(const char *data, int is_bytes) {
  const ck_string *s = (const ck_string *)data;
  Py_ssize_t n = s->begin != NULL ? (Py_ssize_t)(s->end - s->begin) : 0;
  if (is_bytes) {
    return PyBytes_FromStringAndSize(n ? s->begin : "", n);
  }
  return PyUnicode_DecodeUTF8(n ? s->begin : "", n, NULL);
}

static PyObject *ckc_read(ckc_rctx *r, ck_type t, const char *data, const char *arrmeta);

/* `n` elements of type `el` at `base`, `stride` apart: a list. */
static PyObject *ckc_read_run(ckc_rctx *r, ck_type el, const char *base, intptr_t stride,
                              Py_ssize_t n, const char *el_arrmeta) {
  PyObject *list = PyList_New(n);
  if (list == NULL) {
    return NULL;
  }
  uint32_t id = ckc_id(el);
  for (Py_ssize_t i = 0; i < n; i++) {
    const char *p = base + i * stride;
    PyObject *v;
    if (id < CK_BUILTIN_TYPE_COUNT) {
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

static PyObject *ckc_read(ckc_rctx *r, ck_type t, const char *data, const char *arrmeta) {
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
  case CK_TYPE_POINTER: {
    const char *p = *(char *const *)data;
    if (p == NULL) {
      Py_RETURN_NONE;
    }
    const ck_pointer_arrmeta *am = (const ck_pointer_arrmeta *)arrmeta;
    return ckc_read(r, t->element, p + am->offset, arrmeta + sizeof(ck_pointer_arrmeta));
  }
  default:
    ckc_raisef(CK_ERR_TYPE, "cannot read values of type id %u", (unsigned)id);
    return NULL;
  }
}

static ck_array_preamble *ckc_array_arg(PyObject *o) {
  void *p = PyLong_AsVoidPtr(o);
  if (p == NULL && !PyErr_Occurred()) {
    PyErr_SetString(PyExc_ValueError, "_convert: the array address is NULL");
  }
  return p;
}

static PyObject *ckc_tolist(PyObject *mod, PyObject *addr) {
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
static PyObject *ckc_read_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
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

/* ---- NumPy arrays out ------------------------------------------------------ */

/* The leading fixed/strided dims of `t` from `arrmeta`: shape, strides, and
 * the element type and its arrmeta.  -1 (exception set) if a var dim comes
 * first or there are too many. */
static int ckc_regular_dims(ck_type t, const char *arrmeta, int *ndim, npy_intp *shape,
                            intptr_t *strides, ck_type *el, const char **el_arrmeta) {
  int n = 0;
  while (!ckc_is_builtin(t) && ckc_is_regular_dim(t->id)) {
    if (n >= NPY_MAXDIMS) {
      ckc_raisef(CK_ERR_NOT_SUPPORTED, "an array of more than %d dims has no NumPy form",
                 NPY_MAXDIMS);
      return -1;
    }
    const ck_dim_arrmeta *am = (const ck_dim_arrmeta *)arrmeta;
    shape[n] = am->size;
    strides[n] = am->stride;
    n++;
    arrmeta += sizeof(ck_dim_arrmeta);
    t = t->element;
  }
  if (!ckc_is_builtin(t) && t->id == CK_TYPE_VAR_DIM) {
    ckc_raise_typed(CK_ERR_TYPE, "an array of type ", t,
                    " has var dims, which NumPy cannot hold; use .tolist()", NULL);
    return -1;
  }
  *ndim = n;
  *el = t;
  *el_arrmeta = arrmeta;
  return 0;
}

/* Calls visit(ctx, element data, k) for every element of the regular dims
 * (C order, k counting from 0); stops at the first nonzero return. */
typedef int (*ckc_visit_fn)(void *ctx, const char *el, npy_intp k);

static int ckc_walk(const char *data, int ndim, const npy_intp *shape, const intptr_t *strides,
                    ckc_visit_fn visit, void *ctx) {
  if (ndim == 0) {
    return visit(ctx, data, 0);
  }
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 0) {
      return 0;
    }
  }
  npy_intp idx[NPY_MAXDIMS] = {0};
  npy_intp inner = shape[ndim - 1], k = 0;
  intptr_t istride = strides[ndim - 1];
  const char *p = data; /* the current innermost row */
  for (;;) {
    for (npy_intp i = 0; i < inner; i++, k++) {
      int rc = visit(ctx, p + i * istride, k);
      if (rc != 0) {
        return rc;
      }
    }
    int d = ndim - 2;
    for (; d >= 0; d--) { /* the odometer over the outer dims */
      if (++idx[d] < shape[d]) {
        p += strides[d];
        break;
      }
      p -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) {
      return 0;
    }
  }
}

typedef struct {
  npy_string_allocator *alloc;
  char *out;
} ckc_pack_ctx;

static int ckc_pack_one(void *vctx, const char *el, npy_intp k) {
  ckc_pack_ctx *c = vctx;
  const ck_string *s = (const ck_string *)el;
  size_t n = s->begin != NULL ? (size_t)(s->end - s->begin) : 0;
  npy_packed_static_string *dst = (npy_packed_static_string *)(c->out + k * 16);
  return NpyString_pack(c->alloc, dst, n ? s->begin : "", n) < 0 ? -1 : 0;
}

static PyObject *ckc_to_strings(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2 || !PyArray_DescrCheck(args[1]) ||
      ((PyArray_Descr *)args[1])->type_num != NPY_VSTRING) {
    PyErr_SetString(PyExc_TypeError, "to_strings(address, StringDType instance)");
    return NULL;
  }
  ck_array_preamble *a = ckc_array_arg(args[0]);
  if (a == NULL) {
    return NULL;
  }
  int ndim;
  npy_intp shape[NPY_MAXDIMS];
  intptr_t strides[NPY_MAXDIMS];
  ck_type el;
  const char *el_am;
  if (ckc_regular_dims(a->type, ck_array_arrmeta(a), &ndim, shape, strides, &el, &el_am) < 0) {
    return NULL;
  }
  if (ckc_id(el) != CK_TYPE_STRING) {
    ckc_raise_typed(CK_ERR_TYPE, "to_strings: an array of type ", a->type,
                    " has no string elements", NULL);
    return NULL;
  }
  PyArray_Descr *descr = (PyArray_Descr *)args[1];
  Py_INCREF(descr);
  PyArrayObject *arr = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim,
                                                             shape, NULL, NULL, 0, NULL);
  if (arr == NULL) {
    return NULL;
  }
  if (PyArray_ITEMSIZE(arr) != 16) {
    Py_DECREF(arr);
    PyErr_SetString(PyExc_RuntimeError, "_convert: unexpected StringDType item size");
    return NULL;
  }
  /* the new array's descriptor owns the allocator its strings go to */
  npy_string_allocator *alloc =
      NpyString_acquire_allocator((PyArray_StringDTypeObject *)PyArray_DESCR(arr));
  ckc_pack_ctx c = {alloc, PyArray_BYTES(arr)};
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = ckc_walk(a->data, ndim, shape, strides, ckc_pack_one, &c);
  Py_END_ALLOW_THREADS
  NpyString_release_allocator(alloc);
  if (rc != 0) {
    Py_DECREF(arr);
    PyErr_NoMemory();
    return NULL;
  }
  return (PyObject *)arr;
}

typedef struct {
  ckc_rctx r;
  ck_type el;
  const char *el_am;
  PyObject **out;
} ckc_obj_ctx;

static int ckc_object_one(void *vctx, const char *el, npy_intp k) {
  ckc_obj_ctx *c = vctx;
  PyObject *v = ckc_read(&c->r, c->el, el, c->el_am);
  if (v == NULL) {
    return -1;
  }
  PyObject *old = c->out[k];
  c->out[k] = v;
  Py_XDECREF(old);
  return 0;
}

static PyObject *ckc_to_objects(PyObject *mod, PyObject *addr) {
  (void)mod;
  ck_array_preamble *a = ckc_array_arg(addr);
  if (a == NULL) {
    return NULL;
  }
  int ndim;
  npy_intp shape[NPY_MAXDIMS];
  intptr_t strides[NPY_MAXDIMS];
  ckc_obj_ctx c = {.r = {.nnames = 0}};
  if (ckc_regular_dims(a->type, ck_array_arrmeta(a), &ndim, shape, strides, &c.el,
                       &c.el_am) < 0) {
    return NULL;
  }
  PyArrayObject *arr = (PyArrayObject *)PyArray_SimpleNew(ndim, shape, NPY_OBJECT);
  if (arr == NULL) {
    return NULL;
  }
  c.out = (PyObject **)PyArray_BYTES(arr); /* filled with None by NumPy */
  int rc = ckc_walk(a->data, ndim, shape, strides, ckc_object_one, &c);
  ckc_rctx_clear(&c.r);
  if (rc != 0) {
    Py_DECREF(arr);
    return NULL;
  }
  return (PyObject *)arr;
}

/* ------------------------------------------------------------------------ */
/* missing values                                                           */
/* ------------------------------------------------------------------------ */

/* Counting missing values and remembering where the first one was. */
typedef struct {
  Py_ssize_t count;
  PyObject *first; /* a str describing the first one's index, or NULL */
} ckc_missing;

/* pandas.NA when pandas is imported (a new reference), else NULL: no object
 * is pandas.NA before pandas is imported. */
static PyObject *ckc_pandas_na(void) {
  PyObject *name = PyUnicode_FromString("pandas");
  PyObject *pd = name != NULL ? PyImport_GetModule(name) : NULL;
  Py_XDECREF(name);
  PyObject *na = pd != NULL ? PyObject_GetAttrString(pd, "NA") : NULL;
  Py_XDECREF(pd);
  if (na == NULL) {
    PyErr_Clear(); /* no pandas: nothing is pandas.NA */
  }
  return na;
}

/* None, a float NaN or pandas.NA (`pd_na`, may be NULL). */
static int ckc_is_na_object(PyObject *o, PyObject *pd_na) {
  if (o == Py_None || (pd_na != NULL && o == pd_na)) {
    return 1;
  }
  return PyFloat_Check(o) && isnan(PyFloat_AS_DOUBLE(o));
}

static int ckc_missing_error(const ckc_missing *m, const char *what) {
  return ckc_raisef(CK_ERR_VALUE,
                    "%zd missing value%s (%s) where strings or numbers are needed, the first "
                    "at index %U; pass fill_value=... to use a value in their place",
                    m->count, m->count == 1 ? "" : "s", what, m->first);
}

/* ------------------------------------------------------------------------ */
/* arena reservations: one allocation per arena                            */
/* ------------------------------------------------------------------------ */

typedef struct {
  ck_memblock *mb;
  size_t need, align;
  char *cur, *end;
} ckc_arena;

typedef struct {
  ckc_arena a[CKC_MAX_ARENAS];
  int n;
  int last;
} ckc_arenas;

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

static inline size_t ckc_round_up(size_t n, size_t align) {
  return (n + align - 1) & ~(align - 1);
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

/* ------------------------------------------------------------------------ */
/* writing Python values                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  PyObject *na;        /* borrowed; NULL: missing values are errors */
  ckc_missing missing;
  ckc_arenas arenas;
  int depth;
  PyObject *path[CKC_MAX_DEPTH + 2]; /* borrowed index objects (ints, keys) */
  Py_ssize_t ipath[CKC_MAX_DEPTH + 2];
  int path_is_key[CKC_MAX_DEPTH + 2];
} ckc_wctx;

/* "[1][2]['name']" for the current path (a new str). */
static PyObject *ckc_path_text(const ckc_wctx *w) {
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

/* A list or tuple (exact types: their length cannot lie). */
static inline int ckc_is_seq(PyObject *o) {
  return PyList_CheckExact(o) || PyTuple_CheckExact(o);
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
  case CK_TYPE_POINTER:
    return ckc_raise_typed(CK_ERR_NOT_SUPPORTED,
                           "pointer values cannot be built from Python objects (", t, ")",
                           NULL);
  default:
    return ckc_raise_typed(CK_ERR_TYPE, "cannot write values of type ", t, "", NULL);
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

static PyObject *ckc_write_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
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
static PyObject *ckc_write_at(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
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

/* ------------------------------------------------------------------------ */
/* scan: the type ckernels.array infers, in one C pass                      */
/* ------------------------------------------------------------------------ */

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

/* (sizes, kind, lo, hi, fields) */
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

static PyObject *ckc_scan_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
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
    if (s.missing.count > 0) {
      ckc_missing_error(&s.missing, "None");
    } else {
      r = ckc_info_to_py(info);
      if (r != NULL && ckc_has_none_field(r)) {
        Py_SETREF(r, Py_NewRef(Py_None));
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

/* ------------------------------------------------------------------------ */
/* NumPy string arrays in                                                   */
/* ------------------------------------------------------------------------ */

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

static PyObject *ckc_from_numpy(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
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

static PyObject *ckc_to_stringdtype(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
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

/* ------------------------------------------------------------------------ */
/* module                                                                   */
/* ------------------------------------------------------------------------ */

static PyObject *ckc_setup(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 1 || !PyCallable_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "setup(check_scalar)");
    return NULL;
  }
  Py_XSETREF(ckc_check_scalar, Py_NewRef(args[0]));
  Py_RETURN_NONE;
}

static PyMethodDef ckc_methods[] = {
    {"tolist", ckc_tolist, METH_O,
     "tolist(address) -> the value of the C array at address as nested lists, Python "
     "scalars, str, bytes and dicts."},
    {"read", (PyCFunction)(void (*)(void))ckc_read_py, METH_FASTCALL,
     "read(type, data, arrmeta) -> the value of that type at data (addresses), as tolist()."},
    {"write_at", (PyCFunction)(void (*)(void))ckc_write_at, METH_FASTCALL,
     "write_at(type, data, arrmeta, obj, na): obj written at data (addresses) as write()."},
    {"to_strings", (PyCFunction)(void (*)(void))ckc_to_strings, METH_FASTCALL,
     "to_strings(address, dtype) -> a new StringDType array of the C array's strings."},
    {"to_objects", ckc_to_objects, METH_O,
     "to_objects(address) -> a new object array of the C array's elements."},
    {"scan", (PyCFunction)(void (*)(void))ckc_scan_py, METH_FASTCALL,
     "scan(obj, na) -> (sizes, kind, lo, hi, fields): what ckernels.array infers from obj, "
     "or None (the Python path decides)."},
    {"write", (PyCFunction)(void (*)(void))ckc_write_py, METH_FASTCALL,
     "write(address, obj, na): obj into the C array at address (just made)."},
    {"from_numpy", (PyCFunction)(void (*)(void))ckc_from_numpy, METH_FASTCALL,
     "from_numpy(address, ndarray, na): a StringDType/'U'/'S'/object array into the C "
     "array at address (just made, same shape)."},
    {"to_stringdtype", (PyCFunction)(void (*)(void))ckc_to_stringdtype, METH_FASTCALL,
     "to_stringdtype(ndarray, dtype, na) -> a new StringDType array (dtype) of the text of a "
     "StringDType / 'U' / 'S' (UTF-8) / object (str, bytes) array: missing values refused "
     "with their count unless na (a str) replaces them."},
    {"setup", (PyCFunction)(void (*)(void))ckc_setup, METH_FASTCALL,
     "setup(check_scalar): the Python check of one scalar value, (type_id, value) -> "
     "NumPy scalar."},
    {NULL, NULL, 0, NULL},
};

static int ckc_exec(PyObject *m) {
  if (PyArray_ImportNumPyAPI() < 0) {
    return -1;
  }
  if (ckpy_errors_init() < 0) {
    return -1;
  }
  ckc_unsupported = PyErr_NewExceptionWithDoc(
      "ckernels._convert.Unsupported",
      "A value only the Python conversion path reads (the caller takes that path).",
      PyExc_TypeError, NULL);
  if (ckc_unsupported == NULL || PyModule_AddObjectRef(m, "Unsupported", ckc_unsupported) < 0) {
    return -1;
  }
  return 0;
}

static PyModuleDef_Slot ckc_slots[] = {
    {Py_mod_exec, (void *)ckc_exec},
    {0, NULL},
};

static struct PyModuleDef ckc_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ckernels._convert",
    .m_doc = "Values of any ckernel type <-> Python objects and NumPy string arrays in one C "
             "pass (see src/python/convert.c).",
    .m_size = 0,
    .m_methods = ckc_methods,
    .m_slots = ckc_slots,
};

PyMODINIT_FUNC PyInit__convert(void);
PyMODINIT_FUNC PyInit__convert(void) { return PyModuleDef_Init(&ckc_module); }
