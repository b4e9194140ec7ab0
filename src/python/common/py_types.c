/*
 * py_types.c -- NumPy dtypes as ckernel builtin ids, weak Python scalars
 * (py_types.h).
 */
#include "py_types.h"

/* type number -> ckernel builtin id (0: none), for NumPy's legacy types. */
static ck_type_id ckpy_id_of_typenum[NPY_NTYPES_LEGACY];

int ckpy_types_init(void) {
  for (int t = 0; t < NPY_NTYPES_LEGACY; t++) {
    ckpy_id_of_typenum[t] = CK_TYPE_UNINITIALIZED;
    if (!PyTypeNum_ISBOOL(t) && !PyTypeNum_ISNUMBER(t)) {
      continue;
    }
    PyArray_Descr *d = PyArray_DescrFromType(t);
    if (d == NULL) {
      return -1;
    }
    for (int id = CK_TYPE_BOOL; id < CK_BUILTIN_TYPE_COUNT; id++) {
      if (ck_type_id_kind((ck_type_id)id) == d->kind &&
          ck_type_data_size(CK_BUILTIN(id)) == (size_t)PyDataType_ELSIZE(d)) {
        ckpy_id_of_typenum[t] = (ck_type_id)id;
        break;
      }
    }
    Py_DECREF(d);
  }
  return 0;
}

ck_type_id ckpy_id_of_descr(const PyArray_Descr *descr) {
  int t = descr->type_num;
  if (t < 0 || t >= NPY_NTYPES_LEGACY || !PyArray_ISNBO(descr->byteorder)) {
    return CK_TYPE_UNINITIALIZED;
  }
  return ckpy_id_of_typenum[t];
}

bool ckpy_weak_fits(int weak, ck_type_id id) {
  ck_type_id r;
  return weak != 0 && id != CK_TYPE_UNINITIALIZED && ck_weak_result(id, (ck_weak_kind)weak, &r) == CK_OK && r == id;
}
