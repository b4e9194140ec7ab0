/*
 * ckernels._arrow -- the Arrow PyCapsule interface over ckernel/arrow.h.
 *
 * Export: the structs made by ck_arrow_export* go into capsules named as
 * the PyCapsule interface says ("arrow_schema", "arrow_array",
 * "arrow_array_stream", "arrow_device_array").  Each capsule's destructor
 * (C, so it works whoever drops the capsule, imported or not) calls the
 * struct's release when it is not NULL -- a consumer that imported the
 * struct moved it and set release to NULL -- then frees the struct.
 *
 * Import: the struct is read from the consumer side's capsule and moved
 * (ck_arrow_import* set its release to NULL, the capsule's destructor then
 * frees only the struct); a capsule already consumed is an error, never a
 * crash.  The result is the address of a new C array reference, which the
 * caller wraps (ckernels.Array._own_address).
 *
 * Arrays are passed in by address (an int): the caller keeps the Array alive
 * during the call.  Errors are the ckernels.errors classes (py_errors.h).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "ckernel/ckernel.h"
#include "py_errors.h"

static const char SCHEMA[] = "arrow_schema";
static const char ARRAY[] = "arrow_array";
static const char STREAM[] = "arrow_array_stream";
static const char DEVICE_ARRAY[] = "arrow_device_array";
static const char DEVICE_STREAM[] = "arrow_device_array_stream";

/* ---- capsule destructors -------------------------------------------------------- */

static void free_schema_capsule(PyObject *capsule) {
  struct ArrowSchema *s = PyCapsule_GetPointer(capsule, SCHEMA);
  if (s != NULL) {
    if (s->release != NULL) {
      s->release(s);
    }
    free(s);
  }
}

static void free_array_capsule(PyObject *capsule) {
  struct ArrowArray *a = PyCapsule_GetPointer(capsule, ARRAY);
  if (a != NULL) {
    if (a->release != NULL) {
      a->release(a);
    }
    free(a);
  }
}

static void free_device_array_capsule(PyObject *capsule) {
  struct ArrowDeviceArray *a = PyCapsule_GetPointer(capsule, DEVICE_ARRAY);
  if (a != NULL) {
    if (a->array.release != NULL) {
      a->array.release(&a->array);
    }
    free(a);
  }
}

static void free_stream_capsule(PyObject *capsule) {
  struct ArrowArrayStream *s = PyCapsule_GetPointer(capsule, STREAM);
  if (s != NULL) {
    if (s->release != NULL) {
      s->release(s);
    }
    free(s);
  }
}

static void free_device_stream_capsule(PyObject *capsule) {
  struct ArrowDeviceArrayStream *s = PyCapsule_GetPointer(capsule, DEVICE_STREAM);
  if (s != NULL) {
    if (s->release != NULL) {
      s->release(s);
    }
    free(s);
  }
}

/* A zeroed (released) struct of `size` bytes in a new capsule: the capsule
 * owns it from the start, so no path leaks it. */
static PyObject *new_capsule(size_t size, const char *name, PyCapsule_Destructor d,
                             void **out) {
  void *p = calloc(1, size);
  if (p == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  PyObject *cap = PyCapsule_New(p, name, d);
  if (cap == NULL) {
    free(p);
    return NULL;
  }
  *out = p;
  return cap;
}

/* ---- arguments -------------------------------------------------------------------- */

static ck_array_preamble *array_arg(PyObject *o) {
  void *p = PyLong_AsVoidPtr(o);
  if (p == NULL) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_ValueError, "the array address is 0");
    }
    return NULL;
  }
  return p;
}

/* The struct inside a capsule of `name`, or NULL with TypeError (another
 * object or capsule) -- `what` names the argument. */
static void *capsule_arg(PyObject *o, const char *name, const char *what) {
  if (!PyCapsule_IsValid(o, name)) {
    PyErr_Format(PyExc_TypeError, "%s must be a PyCapsule named '%s', not %s%s%s", what,
                 name, PyCapsule_CheckExact(o) ? "a capsule named '" : Py_TYPE(o)->tp_name,
                 PyCapsule_CheckExact(o) ? (PyCapsule_GetName(o) ? PyCapsule_GetName(o) : "")
                                         : "",
                 PyCapsule_CheckExact(o) ? "'" : "");
    return NULL;
  }
  return PyCapsule_GetPointer(o, name);
}

/* The requested schema (None or an "arrow_schema" capsule). */
static int requested_arg(PyObject *o, const struct ArrowSchema **out) {
  *out = NULL;
  if (o == NULL || o == Py_None) {
    return 0;
  }
  const struct ArrowSchema *s = capsule_arg(o, SCHEMA, "requested_schema");
  if (s == NULL) {
    return -1;
  }
  *out = s;
  return 0;
}

static int fill_arg(PyObject *o, const ck_array_preamble **out) {
  *out = NULL;
  if (o == NULL || o == Py_None) {
    return 0;
  }
  *out = array_arg(o);
  return *out == NULL ? -1 : 0;
}

/* The arguments (address, requested=None) of the export functions. */
static int export_args(PyObject *const *args, Py_ssize_t n, const char *name,
                       ck_array_preamble **a, const struct ArrowSchema **req) {
  if (n < 1 || n > 2) {
    PyErr_Format(PyExc_TypeError, "%s(address, requested=None)", name);
    return -1;
  }
  *a = array_arg(args[0]);
  if (*a == NULL || requested_arg(n > 1 ? args[1] : NULL, req) < 0) {
    return -1;
  }
  return 0;
}

/* ---- export ------------------------------------------------------------------------- */

static PyObject *py_export_schema(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  const struct ArrowSchema *req;
  ck_array_preamble *a;
  if (export_args(args, n, "export_schema", &a, &req) < 0) {
    return NULL;
  }
  struct ArrowSchema *s;
  PyObject *cap = new_capsule(sizeof *s, SCHEMA, free_schema_capsule, (void **)&s);
  if (cap == NULL) {
    return NULL;
  }
  ck_status st = ck_arrow_export_schema(a, req, s);
  if (st != CK_OK) {
    Py_DECREF(cap);
    return ckpy_raise_last(st);
  }
  return cap;
}

/* (schema capsule, array capsule) of `a`, the array a device array when
 * `device`. */
static PyObject *export_pair(PyObject *const *args, Py_ssize_t n, bool device) {
  const struct ArrowSchema *req;
  ck_array_preamble *a;
  if (export_args(args, n, device ? "export_device_array" : "export_array", &a, &req) < 0) {
    return NULL;
  }
  struct ArrowSchema *s;
  void *x;
  PyObject *scap = new_capsule(sizeof *s, SCHEMA, free_schema_capsule, (void **)&s);
  PyObject *acap = scap == NULL ? NULL
                   : device ? new_capsule(sizeof(struct ArrowDeviceArray), DEVICE_ARRAY,
                                          free_device_array_capsule, &x)
                            : new_capsule(sizeof(struct ArrowArray), ARRAY,
                                          free_array_capsule, &x);
  if (acap == NULL) {
    Py_XDECREF(scap);
    return NULL;
  }
  ck_status st = device ? ck_arrow_export_device(a, req, s, x) : ck_arrow_export(a, req, s, x);
  if (st != CK_OK) {
    Py_DECREF(scap);
    Py_DECREF(acap);
    return ckpy_raise_last(st);
  }
  PyObject *pair = PyTuple_Pack(2, scap, acap);
  Py_DECREF(scap);
  Py_DECREF(acap);
  return pair;
}

static PyObject *py_export_array(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  return export_pair(args, n, false);
}

static PyObject *py_export_device_array(PyObject *self, PyObject *const *args,
                                        Py_ssize_t n) {
  (void)self;
  return export_pair(args, n, true);
}

static PyObject *py_export_stream(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  const struct ArrowSchema *req;
  ck_array_preamble *a;
  if (export_args(args, n, "export_stream", &a, &req) < 0) {
    return NULL;
  }
  struct ArrowArrayStream *s;
  PyObject *cap = new_capsule(sizeof *s, STREAM, free_stream_capsule, (void **)&s);
  if (cap == NULL) {
    return NULL;
  }
  ck_status st = ck_arrow_export_stream(a, req, s);
  if (st != CK_OK) {
    Py_DECREF(cap);
    return ckpy_raise_last(st);
  }
  return cap;
}

/* ---- import -------------------------------------------------------------------------- */

static PyObject *imported(ck_status st, ck_array_preamble *const *out) {
  if (st != CK_OK) {
    return ckpy_raise_last(st);
  }
  return PyLong_FromVoidPtr(*out);
}

static PyObject *py_import_array(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 3) {
    PyErr_SetString(PyExc_TypeError, "import_array(schema, array, fill)");
    return NULL;
  }
  const ck_array_preamble *fill;
  struct ArrowSchema *s = capsule_arg(args[0], SCHEMA, "the schema");
  if (s == NULL || fill_arg(args[2], &fill) < 0) {
    return NULL;
  }
  ck_array_preamble *out = NULL;
  if (PyCapsule_IsValid(args[1], DEVICE_ARRAY)) {
    struct ArrowDeviceArray *d = PyCapsule_GetPointer(args[1], DEVICE_ARRAY);
    ck_status st = ck_arrow_import_device(s, d, fill, &out);
    return imported(st, &out);
  }
  struct ArrowArray *a = capsule_arg(args[1], ARRAY, "the array");
  if (a == NULL) {
    return NULL;
  }
  ck_status st = ck_arrow_import(s, a, fill, &out);
  return imported(st, &out);
}

static PyObject *py_import_stream(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "import_stream(stream, fill)");
    return NULL;
  }
  const ck_array_preamble *fill;
  struct ArrowArrayStream *s = capsule_arg(args[0], STREAM, "the stream");
  if (s == NULL || fill_arg(args[1], &fill) < 0) {
    return NULL;
  }
  ck_array_preamble *out = NULL;
  ck_status st = ck_arrow_import_stream(s, fill, &out);
  return imported(st, &out);
}

/* The schema a capsule holds, NULL with the exception set when it is not an
 * 'arrow_schema' capsule or its schema is released. */
static const struct ArrowSchema *live_schema(PyObject *capsule) {
  const struct ArrowSchema *s = capsule_arg(capsule, SCHEMA, "the schema");
  if (s != NULL && s->release == NULL) {
    ckpy_raisef(CK_ERR_INVALID_STATE, "the schema is released");
    return NULL;
  }
  return s;
}

static PyObject *py_schema_format(PyObject *self, PyObject *capsule) {
  (void)self;
  const struct ArrowSchema *s = live_schema(capsule);
  if (s == NULL) {
    return NULL;
  }
  return PyUnicode_FromString(s->format != NULL ? s->format : "");
}

/* The builtin element type id an Arrow schema imports as (its top level a
 * primitive: bool, integers, floats), None for any other schema (nested,
 * strings, formats ckernels does not import). */
static PyObject *py_schema_element(PyObject *self, PyObject *capsule) {
  (void)self;
  const struct ArrowSchema *s = live_schema(capsule);
  if (s == NULL) {
    return NULL;
  }
  ck_type t = NULL;
  if (ck_arrow_schema_type(s, &t) != CK_OK) {
    Py_RETURN_NONE; /* not a type ckernels imports: nothing to convert to */
  }
  if (!ck_type_is_builtin(t)) {
    ck_type_decref(t);
    Py_RETURN_NONE;
  }
  return PyLong_FromUnsignedLong((unsigned long)((uintptr_t)t & CK_BUILTIN_TYPE_ID_MASK));
}

/* wrap_device_array(schema_address, array_address) -> ('arrow_schema',
 * 'arrow_device_array') capsules holding the structs at those addresses,
 * moved (the sources are left released): the device arrays of the Python
 * layer fill them with ck_arrow_export_schema and ck_arrow_wrap. */
static PyObject *py_wrap_device_array(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "wrap_device_array takes 2 arguments");
    return NULL;
  }
  struct ArrowSchema *src_s = PyLong_AsVoidPtr(args[0]);
  if (src_s == NULL && PyErr_Occurred()) {
    return NULL;
  }
  struct ArrowDeviceArray *src_a = PyLong_AsVoidPtr(args[1]);
  if (src_a == NULL && PyErr_Occurred()) {
    return NULL;
  }
  if (src_s == NULL || src_a == NULL || src_s->release == NULL ||
      src_a->array.release == NULL) {
    PyErr_SetString(PyExc_ValueError, "wrap_device_array: a NULL or released struct");
    return NULL;
  }
  struct ArrowSchema *s;
  struct ArrowDeviceArray *x;
  PyObject *scap = new_capsule(sizeof *s, SCHEMA, free_schema_capsule, (void **)&s);
  PyObject *acap = scap == NULL ? NULL
                                : new_capsule(sizeof *x, DEVICE_ARRAY,
                                              free_device_array_capsule, (void **)&x);
  if (acap == NULL) {
    Py_XDECREF(scap);
    return NULL;
  }
  *s = *src_s;
  src_s->release = NULL;
  *x = *src_a;
  src_a->array.release = NULL;
  PyObject *pair = PyTuple_Pack(2, scap, acap);
  Py_DECREF(scap);
  Py_DECREF(acap);
  return pair;
}

/* wrap_device_stream(schema, device_array) -> an 'arrow_device_array_stream'
 * capsule: a stream of that one device array (ck_arrow_device_stream_of),
 * the structs moved out of the two capsules (left released on success,
 * untouched on failure). */
static PyObject *py_wrap_device_stream(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "wrap_device_stream(schema, device_array)");
    return NULL;
  }
  struct ArrowSchema *src_s = capsule_arg(args[0], SCHEMA, "the schema");
  if (src_s == NULL) {
    return NULL;
  }
  struct ArrowDeviceArray *src_a = capsule_arg(args[1], DEVICE_ARRAY, "the device array");
  if (src_a == NULL) {
    return NULL;
  }
  struct ArrowDeviceArrayStream *s;
  PyObject *cap = new_capsule(sizeof *s, DEVICE_STREAM, free_device_stream_capsule, (void **)&s);
  if (cap == NULL) {
    return NULL;
  }
  ck_status st = ck_arrow_device_stream_of(src_s, src_a, s);
  if (st != CK_OK) {
    Py_DECREF(cap);
    return ckpy_raise_last(st);
  }
  return cap;
}

static PyMethodDef arrow_methods[] = {
    {"wrap_device_stream", (PyCFunction)(void (*)(void))py_wrap_device_stream, METH_FASTCALL,
     "wrap_device_stream(schema, device_array) -> an 'arrow_device_array_stream' capsule "
     "of that one device array, the structs moved out of the capsules."},
    {"export_schema", (PyCFunction)(void (*)(void))py_export_schema, METH_FASTCALL,
     "export_schema(address, requested=None) -> an 'arrow_schema' capsule."},
    {"export_array", (PyCFunction)(void (*)(void))py_export_array, METH_FASTCALL,
     "export_array(address, requested=None) -> ('arrow_schema', 'arrow_array') capsules."},
    {"export_device_array", (PyCFunction)(void (*)(void))py_export_device_array,
     METH_FASTCALL,
     "export_device_array(address, requested=None) -> ('arrow_schema', "
     "'arrow_device_array') capsules (CPU)."},
    {"wrap_device_array", (PyCFunction)(void (*)(void))py_wrap_device_array, METH_FASTCALL,
     "wrap_device_array(schema_address, array_address) -> ('arrow_schema', "
     "'arrow_device_array') capsules, the structs moved in."},
    {"export_stream", (PyCFunction)(void (*)(void))py_export_stream, METH_FASTCALL,
     "export_stream(address, requested=None) -> an 'arrow_array_stream' capsule."},
    {"import_array", (PyCFunction)(void (*)(void))py_import_array, METH_FASTCALL,
     "import_array(schema, array, fill) -> the address of a new C array (one reference); "
     "the array capsule may be an 'arrow_device_array' on the CPU; fill: an address or "
     "None."},
    {"import_stream", (PyCFunction)(void (*)(void))py_import_stream, METH_FASTCALL,
     "import_stream(stream, fill) -> the address of a new C array (one reference)."},
    {"schema_format", py_schema_format, METH_O,
     "schema_format(schema capsule) -> its top-level format string."},
    {"schema_element", py_schema_element, METH_O,
     "schema_element(schema capsule) -> the builtin type id it imports as, or None."},
    {NULL, NULL, 0, NULL},
};

static int arrow_exec(PyObject *m) {
  (void)m;
  return ckpy_errors_init();
}

static PyModuleDef_Slot arrow_slots[] = {
    {Py_mod_exec, (void *)arrow_exec},
    {0, NULL},
};

static struct PyModuleDef arrow_module = {
    PyModuleDef_HEAD_INIT,
    "ckernels._arrow",
    "The Arrow PyCapsule interface (C data, stream and device interfaces) of ckernels "
    "arrays.",
    0,
    arrow_methods,
    arrow_slots,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__arrow(void);
PyMODINIT_FUNC PyInit__arrow(void) { return PyModuleDef_Init(&arrow_module); }
