/*
 * arrays_internal.h -- what the files of ckernels._arrays share (arrays.c: the
 * module, views, wrapping, operations; subscript.c: the subscript of
 * ckernels.Array).  Internal to that module (symbols hidden).
 *
 * An Array is a Python object of the class ckernels.host.array.Array, whose
 * state is in __slots__ (documented there and in arrays.c).  setup() records
 * the class and each slot's offset in the instance, so C reads a slot as one
 * load: cka_slot() is a borrowed reference, NULL while the slot is unset.
 */
#ifndef CKERNELS_ARRAYS_INTERNAL_H
#define CKERNELS_ARRAYS_INTERNAL_H

#include "py_types.h"

#include <ckernel/ckernel.h>

/* One reference to a C array, owned (ArrayRef, the slot `_r` of an Array and
 * the base of view()'s ndarrays). */
typedef struct {
  PyObject_HEAD ck_array_preamble *array; /* owned reference */
} cka_ref;

extern PyTypeObject cka_ref_type;

/* The slots of Array, in this order (cka_slot_names in arrays.c). */
enum { CKA_R, CKA_P, CKA_TP, CKA_DT, CKA_AD, CKA_SH, CKA_ST, CKA_BI, CKA_ND, CKA_NSLOTS };

/* The Array class (NULL before setup()) and the byte offsets of its slots. */
extern PyTypeObject *cka_array_type;
extern Py_ssize_t cka_slot_offset[CKA_NSLOTS];

/* Slot `k` of `obj` (an instance of exactly cka_array_type): borrowed, NULL
 * when unset. */
static inline PyObject *cka_slot(PyObject *obj, int k) {
  return *(PyObject **)((char *)obj + cka_slot_offset[k]);
}

/* The C array an Array owns (borrowed; NULL when `_r` is not an ArrayRef,
 * which only a half-made Array has). */
static inline ck_array_preamble *cka_array_of(PyObject *obj) {
  PyObject *r = cka_slot(obj, CKA_R);
  return r != NULL && Py_TYPE(r) == &cka_ref_type ? ((cka_ref *)r)->array : NULL;
}

/* A new Array owning the reference `a` (dropped on failure too), with `tp`,
 * `dt`, `nd` cached when not NULL. */
PyObject *cka_new_array(ck_array_preamble *a, PyObject *tp, PyObject *dt, PyObject *nd);

/* The Array's cached NumPy view (slot `_nd`), made by the Python method
 * `_fast_view` on first use: a new reference to the ndarray, or to False
 * when the array has none (fixed/var dims, strings, structs); NULL with an
 * exception. */
PyObject *cka_fast_view(PyObject *obj);

/* subscript.c: the type Subscript (ready after cks_init) and the Python
 * general methods it falls back to, from setup(): a tuple (getitem, setitem,
 * delitem) of functions called as f(self, key[, value]).  0, or -1 with an
 * exception. */
extern PyTypeObject cks_subscript_type;
int cks_init(void);
int cks_setup(PyObject *general);

#endif /* CKERNELS_ARRAYS_INTERNAL_H */
