/*
 * module.c -- ckernels._convert: values of any ckernel type <->
 * Python objects and NumPy string arrays, one C pass each way (no
 * per-element Python or cffi work).  The module and what it offers; the
 * work is in the files convert_internal.h lists.
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
 *       the Python inference (`_info`): `(sizes, kind, lo, hi, fields, nulls)` with
 *       `sizes` the per-level sizes (None: ragged), `kind` a name or None
 *       (only empty lists), `lo`/`hi` the int range, `fields` None or
 *       {name: the same tuple over all of the field's values}.  None when
 *       `obj` holds anything else, or is not consistent (mixed kinds, depths,
 *       fields, too deep): the Python path then gives its exact error.
 *       `nulls` the number of None leaves (no `na`: the element type is an
 *       option `?T`).  None with `na` given, None inside struct fields, or
 *       the value itself None raise CKValueError with their count and the
 *       first one's index.
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
 * _ufuncs and _arrays do) and links libckernel.
 */
#define CKC_MODULE_C
#include "convert_internal.h"

PyObject *ckc_check_scalar = NULL;
PyObject *ckc_unsupported = NULL;

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
             "pass (see src/python/convert/module.c).",
    .m_size = 0,
    .m_methods = ckc_methods,
    .m_slots = ckc_slots,
};

PyMODINIT_FUNC PyInit__convert(void);
PyMODINIT_FUNC PyInit__convert(void) { return PyModuleDef_Init(&ckc_module); }
