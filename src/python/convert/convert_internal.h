/*
 * convert_internal.h -- what the files of ckernels._convert share (private
 * to the module; nothing here is ABI).
 *
 * ckernels._convert moves values of any ckernel type between C arrays and
 * Python objects / NumPy string arrays in one C pass each way.  One file per
 * concept (the module's functions are listed in module.c):
 *
 *   module.c             the module: its functions, set-up (exec), setup()
 *   errors.c             raising the ckernels.errors classes with messages
 *                        that name types (ck_type_print)
 *   utf8.c               UTF-8 of Python str and NumPy UCS4 text without
 *                        intermediate objects; the errors of text UTF-8
 *                        cannot hold (surrogates, invalid bytes)
 *   ck_to_python.c       C values -> Python objects (tolist, read)
 *   walk.c               the leading fixed/strided dims of a C array and the
 *                        walk over their elements in C order (what the
 *                        NumPy conversions iterate with)
 *   ck_to_numpy.c        C arrays -> new NumPy arrays: StringDType through
 *                        NpyString_pack (to_strings), objects (to_objects)
 *   missing.c            missing values (None, NaN, pandas.NA, StringDType
 *                        nulls): recognised, counted, the one error
 *   python_to_ck.c       Python values -> a new C array (write, write_at):
 *                        the measure pass, one arena allocation each, the
 *                        write pass with the Python path's checks
 *   inference.c          the type ckernels.array infers from nested lists,
 *                        in one C pass (scan)
 *   numpy_to_ck.c        NumPy text (StringDType, 'U', 'S', object) -> a
 *                        new C array (from_numpy) or a new StringDType
 *                        array (to_stringdtype, for the string ufuncs)
 *
 * Library errors are raised through py_errors.h (the ckernels.errors class of
 * a status), as in ckernels._ufuncs and ckernels._arrays.
 *
 * NumPy's C API table: module.c defines and imports it
 * (CKC_MODULE_C), the other files use it.
 */
#ifndef CKERNELS_CONVERT_INTERNAL_H
#define CKERNELS_CONVERT_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL ckernels_convert_ARRAY_API
#ifndef CKC_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <numpy/dtype_api.h>

#include <stdint.h>

#include "ckernel/ckernel.h"
#include "py_errors.h"

/* most nesting levels of a value (a ckernel type nests at most
 * CK_TYPE_MAX_DEPTH levels, the element included) */
#define CKC_MAX_DEPTH (CK_TYPE_MAX_DEPTH - 1)
/* arenas whose allocations are summed up front (more go one by one) */
#define CKC_MAX_ARENAS 32

/* ---- module.c: the module's state --------------------------------------- */

extern PyObject *ckc_check_scalar; /* (type_id, value) -> scalar; setup()  */
extern PyObject *ckc_unsupported;  /* _convert.Unsupported                 */

/* The `ck_array_preamble *` a module function got as an address (an int);
 * NULL with an exception set. */
static inline ck_array_preamble *ckc_array_arg(PyObject *o) {
  void *p = PyLong_AsVoidPtr(o);
  if (p == NULL && !PyErr_Occurred()) {
    PyErr_SetString(PyExc_ValueError, "_convert: the array address is NULL");
  }
  return p;
}

/* ---- type facts read from the descriptors (types.h: public) -------------- */

static inline int ckc_is_builtin(ck_type t) { return ck_type_is_builtin(t); }

static inline uint32_t ckc_id(ck_type t) {
  return ckc_is_builtin(t) ? (uint32_t)(uintptr_t)t : t->id;
}

static inline int ckc_is_regular_dim(uint32_t id) {
  return id == CK_TYPE_FIXED_DIM || id == CK_TYPE_STRIDED_DIM;
}

static inline size_t ckc_round_up(size_t n, size_t align) {
  return (n + align - 1) & ~(align - 1);
}

/* A list or tuple (exact types: their length cannot lie). */
static inline int ckc_is_seq(PyObject *o) {
  return PyList_CheckExact(o) || PyTuple_CheckExact(o);
}

/* ---- errors.c ----------------------------------------------------------- */
/* Each raises and returns -1 (for the int-returning functions of the module). */

/* `status` (a ck_status) with `message` (a new str, stolen; NULL: the
 * exception already set while making it stays). */
int ckc_raise(int status, PyObject *message);
#define ckc_raisef(status, ...) ckc_raise((status), PyUnicode_FromFormat(__VA_ARGS__))
/* The library failed with `status`: its ck_last_error() message. */
int ckc_raise_status(ck_status status);
/* _convert.Unsupported: `value` is for the Python path to read. */
int ckc_unsupported_value(PyObject *value);
/* The canonical text of a type, for messages (a new str, or NULL). */
PyObject *ckc_type_str(ck_type t);
/* `status` with "<before>'<type>'<after>" where `after` may hold one %R for
 * `value`. */
int ckc_raise_typed(int status, const char *before, ck_type t, const char *after,
                    PyObject *value);

/* ---- utf8.c ------------------------------------------------------------- */

/* Bytes of the UTF-8 encoding of `s`; -1 (no exception set) when `s` holds
 * a surrogate, which UTF-8 cannot encode. */
Py_ssize_t ckc_utf8_size(PyObject *s);
/* Encode `s` (no surrogates: ckc_utf8_size said so) at `out`. */
void ckc_utf8_encode(PyObject *s, char *out);
/* The UTF-8 size of UCS4 text (a NumPy 'U' element, trailing NULs trimmed
 * by the caller), or -1 for a code point UTF-8 cannot hold. */
Py_ssize_t ckc_ucs4_utf8_size(const Py_UCS4 *p, Py_ssize_t n);
/* The error a surrogate in `s` gives, with Python's own message. */
int ckc_raise_unencodable(PyObject *s);
/* The error invalid UTF-8 bytes give: Python's decoder message, with
 * `where` (may be NULL) telling which element. */
int ckc_raise_bad_utf8(const char *b, Py_ssize_t n, PyObject *where);

/* One code point as UTF-8 at `o`; returns the end. */
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

/* ---- ck_to_python.c ----------------------------------------------------- */

/* Struct field names as Python str, made once per struct type in a call. */
typedef struct {
  ck_type type;
  PyObject *names; /* tuple of str */
} ckc_names;

/* What one read call keeps (zero-initialise; ckc_rctx_clear at the end). */
typedef struct {
  ckc_names names[8];
  int nnames;
} ckc_rctx;

void ckc_rctx_clear(ckc_rctx *r);
/* The value of type `t` at `data` with `arrmeta` as Python objects (nested
 * lists, scalars, str, bytes, dicts, None); NULL with an exception. */
PyObject *ckc_read(ckc_rctx *r, ck_type t, const char *data, const char *arrmeta);

PyObject *ckc_tolist(PyObject *mod, PyObject *addr);
PyObject *ckc_read_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

/* ---- walk.c ------------------------------------------------------------- */

/* The leading fixed/strided dims of `t` from `arrmeta`: shape, strides, and
 * the element type and its arrmeta.  -1 (exception set) if a var dim comes
 * first or there are too many. */
int ckc_regular_dims(ck_type t, const char *arrmeta, int *ndim, npy_intp *shape,
                     intptr_t *strides, ck_type *el, const char **el_arrmeta);

/* Calls visit(ctx, element data, k) for every element of the regular dims
 * (C order, k counting from 0); stops at the first nonzero return, which it
 * returns. */
typedef int (*ckc_visit_fn)(void *ctx, const char *el, npy_intp k);
int ckc_walk(const char *data, int ndim, const npy_intp *shape, const intptr_t *strides,
             ckc_visit_fn visit, void *ctx);

/* ---- ck_to_numpy.c ------------------------------------------------------ */

PyObject *ckc_to_strings(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
PyObject *ckc_to_objects(PyObject *mod, PyObject *addr);

/* ---- missing.c ---------------------------------------------------------- */

/* Counting missing values and remembering where the first one was. */
typedef struct {
  Py_ssize_t count;
  PyObject *first; /* a str describing the first one's index, or NULL */
} ckc_missing;

/* pandas.NA when pandas is imported (a new reference), else NULL: no object
 * is pandas.NA before pandas is imported. */
PyObject *ckc_pandas_na(void);
/* None, a float NaN or pandas.NA (`pd_na`, may be NULL). */
int ckc_is_na_object(PyObject *o, PyObject *pd_na);
/* The CKValueError of `m`'s missing values (`what`: which kind). */
int ckc_missing_error(const ckc_missing *m, const char *what);

/* ---- python_to_ck.c ----------------------------------------------------- */

/* Arena reservations: the measure pass sums what each arena needs, which
 * then gets one allocation; the write pass takes from it. */
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

/* One write (or scan) of a Python value: the fill value, the missing values
 * met, the arenas, and the path of the value being visited (for messages). */
typedef struct {
  PyObject *na;        /* borrowed; NULL: missing values are errors */
  ckc_missing missing;
  ckc_arenas arenas;
  int depth;
  PyObject *path[CKC_MAX_DEPTH + 2]; /* borrowed index objects (ints, keys) */
  Py_ssize_t ipath[CKC_MAX_DEPTH + 2];
  int path_is_key[CKC_MAX_DEPTH + 2];
} ckc_wctx;

/* "[1][2]['name']" for the current path (a new str; "()" at the top). */
PyObject *ckc_path_text(const ckc_wctx *w);

PyObject *ckc_write_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
PyObject *ckc_write_at(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

/* ---- inference.c -------------------------------------------------------- */

PyObject *ckc_scan_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

/* ---- numpy_to_ck.c ------------------------------------------------------ */

PyObject *ckc_from_numpy(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
PyObject *ckc_to_stringdtype(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

#endif /* CKERNELS_CONVERT_INTERNAL_H */
