/*
 * py_types.h -- NumPy dtypes as ckernel builtin type ids, and NEP 50 weak
 * Python scalars, for the package's NumPy C-API extensions (_ufuncs,
 * _arrays).  Everything here asks the library (ck_type_id_kind,
 * ck_type_data_size, ck_weak_result): no table of our own.
 *
 * Both modules name NumPy's C-API table ckpy_ARRAY_API (PY_ARRAY_UNIQUE_SYMBOL,
 * set here); each module's main file defines it (includes this header with
 * CKPY_DEFINE_NUMPY_API defined, before anything else) and imports it, the
 * other files -- this one's included -- use it.
 */
#ifndef CKERNELS_PY_TYPES_H
#define CKERNELS_PY_TYPES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL ckpy_ARRAY_API
#ifndef CKPY_DEFINE_NUMPY_API
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <stdbool.h>

#include <ckernel/ckernel.h>

/* Fill the type-number table (after NumPy's API is imported).  0, or -1
 * with an exception. */
int ckpy_types_init(void);

/* The ckernel builtin id of a native-byte-order NumPy bool or number dtype
 * of the same kind and size; 0 for any other dtype. */
ck_type_id ckpy_id_of_descr(const PyArray_Descr *descr);

/* The NEP 50 kind of a Python scalar: CK_WEAK_INT / _FLOAT / _COMPLEX for
 * exactly int / float / complex; 0 for anything else (bool, NumPy scalars,
 * subclasses are strong). */
static inline int ckpy_weak_kind(PyObject *x) {
  PyTypeObject *t = Py_TYPE(x);
  return t == &PyLong_Type      ? CK_WEAK_INT
         : t == &PyFloat_Type   ? CK_WEAK_FLOAT
         : t == &PyComplex_Type ? CK_WEAK_COMPLEX
                                : 0;
}

/* Does a weak Python scalar of kind `weak` pass as an operand of builtin
 * type `id` unchanged (ck_weak_result(id, weak) == id)? */
bool ckpy_weak_fits(int weak, ck_type_id id);

#endif /* CKERNELS_PY_TYPES_H */
