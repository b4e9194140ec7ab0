"""Generate the API-mode cffi extension source for ``ckernels._ffi``.

The cdef is never written by hand: the public umbrella header is run through
the C preprocessor with ``-DCK_CFFI_CDEF`` (see ``src/include/ckernel/config.h``),
which strips system includes, ``_Atomic``, attributes and inline bodies, and the
result is handed to cffi.  ``emit_c_code`` writes the C source that CMake then
compiles and links against libckernel.

Usage: build_ffi.py --cc CC --include DIR --out FILE.c [--cdef-out FILE.h]
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

import cffi

# Declarations that belong to the binding, not to the C API: the release
# callback through which external memblocks drop their Python owner (called
# through a C guard that does nothing once the interpreter is shutting down:
# blocks still held by C objects are released after cffi's callback state is
# gone, and at exit there is no owner worth dropping), and the
# destructor of the DLPack capsules made by ckernels.context.dlpack, legacy and
# versioned (C, because a capsule destructor may run while an exception is
# pending, which a Python callback cannot survive; it sets the exception aside
# around the tensor's deleter).
# The ABI versions are also read from the headers this module is compiled
# against (``#define ... ...``: cffi takes the value from the C compiler), so
# ckernels._native can refuse a libckernel of another ABI at import.
BINDING_CDEF = """
#define CK_ABI_VERSION ...
#define CK_KERNEL_ABI_VERSION ...
extern "Python" void ck_py_release(void *handle);
void ck_py_release_guarded(void *handle);
void ck_py_release_stop(void);
void ck_py_dlpack_capsule_destructor(void *capsule);
"""

BINDING_SOURCE = r"""
static void ck_py_release(void *handle); /* cffi generates its extern "Python" body below */

/* Set by an atexit hook (ckernels.memory): from then on the release of an
 * external memblock leaves its Python owner alone -- the interpreter is being
 * torn down and cffi can no longer call into Python. */
static volatile int ck_py_release_stopped = 0;

void ck_py_release_stop(void) { ck_py_release_stopped = 1; }

void ck_py_release_guarded(void *handle) {
  if (!ck_py_release_stopped) {
    ck_py_release(handle);
  }
}

typedef struct ck_py_dlmanaged {
  struct {
    void *data;
    struct { int32_t device_type, device_id; } device;
    int32_t ndim;
    struct { uint8_t code, bits; uint16_t lanes; } dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
  } dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct ck_py_dlmanaged *self);
} ck_py_dlmanaged;

/* DLPack 1.x: the fields before dl_tensor are stable across versions */
typedef struct ck_py_dlmanaged_versioned {
  struct { uint32_t major, minor; } version;
  void *manager_ctx;
  void (*deleter)(struct ck_py_dlmanaged_versioned *self);
  uint64_t flags;
} ck_py_dlmanaged_versioned;

void ck_py_dlpack_capsule_destructor(void *obj) {
  /* a capsule renamed "used_..." was consumed: its consumer deletes it */
  PyObject *capsule = (PyObject *)obj;
  int legacy = PyCapsule_IsValid(capsule, "dltensor");
  if (!legacy && !PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    return;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (legacy) {
    ck_py_dlmanaged *m = (ck_py_dlmanaged *)PyCapsule_GetPointer(capsule, "dltensor");
    if (m != NULL && m->deleter != NULL) {
      m->deleter(m);
    }
  } else {
    ck_py_dlmanaged_versioned *m =
        (ck_py_dlmanaged_versioned *)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (m != NULL && m->deleter != NULL) {
      m->deleter(m);
    }
  }
  PyErr_Restore(type, value, tb);
}
"""


def preprocess(cc: str, include_dir: str) -> str:
    cmd = [*shlex.split(cc), "-E", "-P", "-DCK_CFFI_CDEF", f"-I{include_dir}",
           f"{include_dir}/ckernel/ckernel.h"]
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as exc:  # pragma: no cover - build time
        sys.exit(f"preprocessing the public headers failed: {' '.join(cmd)}\n{exc.stderr}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cdef-out")
    args = ap.parse_args()

    cdef = preprocess(args.cc, args.include)
    ffibuilder = cffi.FFI()
    ffibuilder.cdef(cdef + BINDING_CDEF)
    ffibuilder.set_source("ckernels._ffi", '#include "ckernel/ckernel.h"\n' + BINDING_SOURCE)
    ffibuilder.emit_c_code(args.out)
    if args.cdef_out:
        with open(args.cdef_out, "w") as f:
            f.write(cdef + BINDING_CDEF)


if __name__ == "__main__":
    main()
