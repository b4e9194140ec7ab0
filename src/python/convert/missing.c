/*
 * missing.c -- missing values (None, float NaN, pandas.NA in Python
 * values and object arrays; StringDType nulls are found by NpyString_load):
 * recognised, and the one error with their count and the first one's index.
 */
#include "convert_internal.h"

#include <math.h>

PyObject *ckc_pandas_na(void) {
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

int ckc_is_na_object(PyObject *o, PyObject *pd_na) {
  if (o == Py_None || (pd_na != NULL && o == pd_na)) {
    return 1;
  }
  return PyFloat_Check(o) && isnan(PyFloat_AS_DOUBLE(o));
}

int ckc_missing_error(const ckc_missing *m, const char *what) {
  return ckc_raisef(CK_ERR_VALUE,
                    "%zd missing value%s (%s) where strings or numbers are needed, the first "
                    "at index %U; pass fill_value=... to use a value in their place",
                    m->count, m->count == 1 ? "" : "s", what, m->first);
}
