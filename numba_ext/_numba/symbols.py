"""C symbols by name and the layout the lowering relies on.

Generated code never embeds cffi/ctypes function objects or raw addresses
(that would defeat ``cache=True``: a cached object file must not contain
addresses from the process that compiled it).  Instead it *declares* the C
functions by name (``cgutils.get_or_insert_function(module, fnty,
"ck_pod_allocate")``) and the JIT linker resolves them.  For that to work the
library must be in LLVM's symbol search path: :func:`load_symbols` calls
``llvmlite.binding.load_library_permanently`` on the ``libckernel.so`` that
lives next to ``ckernel/_ffi*.so`` (the very file the cffi module is linked
against, so both see the same process-wide state: live counters, the
thread-local error message).

:func:`check_layout` compares the struct offsets the lowering hard-codes
(:data:`ASSUMED_LAYOUT`) with the library's exported layout table and raises
``ImportError`` on any difference.
"""

from __future__ import annotations

import glob
import os

from llvmlite import binding as llvm
from llvmlite import ir

from numba.core import cgutils

from .. import _native

#: Every (struct, field) -> (offset, size) the Numba lowering assumes.  A
#: field of "" is the struct row: (alignment, sizeof).  Pointer-sized fields
#: assume a 64-bit target (asserted by check_layout as well).
ASSUMED_LAYOUT = {
    ("ck_memblock", ""): (4, 8),
    ("ck_memblock", "refcount"): (0, 4),
    ("ck_memblock", "kind"): (4, 4),
    ("ck_string", ""): (8, 16),
    ("ck_string", "begin"): (0, 8),
    ("ck_string", "end"): (8, 8),
    ("ck_string_arrmeta", ""): (8, 8),
    ("ck_string_arrmeta", "blockref"): (0, 8),
    # the result region the entry points write (jit/string_views.py)
    ("ck_str_region", ""): (8, 40),
    ("ck_str_region", "cur"): (0, 8),
    ("ck_str_region", "lim"): (8, 8),
    ("ck_str_region", "made_b"): (16, 8),
    ("ck_str_region", "made_e"): (24, 8),
    ("ck_str_region", "arena"): (32, 8),
}

#: offsets used by the code generators (derived from ASSUMED_LAYOUT)
MEMBLOCK_REFCOUNT_OFFSET = 0
MEMBLOCK_KIND_OFFSET = 4
STRING_BEGIN_OFFSET = 0
STRING_END_OFFSET = 8
STRING_SIZE = 16

#: functions the lowering calls, with the LLVM signature it declares.
#: ck_status is a C enum (int, i32); size_t / pointers are 64-bit.
_i8p = ir.IntType(8).as_pointer()
_i8pp = _i8p.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)
_void = ir.VoidType()

SIGNATURES = {
    "ck_memblock_free": ir.FunctionType(_void, [_i8p]),
    "ck_pod_memblock_new": ir.FunctionType(_i32, [_i64, _i8pp]),
    "ck_zeroinit_memblock_new": ir.FunctionType(_i32, [_i64, _i8pp]),
    "ck_fixed_size_pod_memblock_new": ir.FunctionType(_i32, [_i64, _i64, _i8pp, _i8pp]),
    "ck_fixed_size_pod_memblock_data": ir.FunctionType(_i32, [_i8p, _i8pp, _i64.as_pointer()]),
    "ck_pod_allocate": ir.FunctionType(_i32, [_i8p, _i64, _i64, _i8pp, _i8pp]),
    "ck_pod_resize": ir.FunctionType(_i32, [_i8p, _i64, _i8pp, _i8pp]),
    "ck_pod_finalize": ir.FunctionType(_i32, [_i8p]),
    "ck_last_error": ir.FunctionType(_i8p, []),
    "ck_memblock_live_count": ir.FunctionType(_i64, []),
}

_loaded_path: str | None = None


def library_path() -> str:
    """Path of the libckernel shared library next to ``ckernel/_ffi*.so``."""
    from .. import _ffi
    pkg_dir = os.path.dirname(os.path.abspath(_ffi.__file__))
    candidates = sorted(glob.glob(os.path.join(pkg_dir, "libckernel.so*")) +
                        glob.glob(os.path.join(pkg_dir, "libckernel.dylib")) +
                        glob.glob(os.path.join(pkg_dir, "ckernels.dll")))
    if not candidates:
        raise ImportError(f"ckernels._numba: no libckernel shared library next to "
                          f"{_ffi.__file__}; reinstall the package")
    # prefer the unversioned name (the one _ffi links against via its rpath)
    candidates.sort(key=len)
    return candidates[0]


def load_symbols() -> str:
    """Make every ``ck_*`` symbol of libckernel resolvable by LLVM by name.

    Idempotent; returns the library path.  Raises ImportError when the library
    cannot be loaded or a symbol the lowering declares is missing.
    """
    global _loaded_path
    if _loaded_path is not None:
        return _loaded_path
    path = library_path()
    try:
        llvm.load_library_permanently(path)
    except RuntimeError as exc:  # llvmlite reports dlopen failures this way
        raise ImportError(f"ckernels._numba: cannot load {path}: {exc}") from exc
    missing = [name for name in SIGNATURES if not llvm.address_of_symbol(name)]
    if missing:
        raise ImportError(f"ckernels._numba: {path} lacks {', '.join(missing)}")
    # the same library instance as the cffi module?
    import ctypes
    llvm_live = ctypes.CFUNCTYPE(ctypes.c_int64)(llvm.address_of_symbol("ck_memblock_live_count"))
    if not _native.same_instance(llvm_live):
        raise ImportError(f"ckernels._numba: LLVM resolved the ck_* symbols to a different "
                          f"copy of libckernel than the cffi module uses ({path})")
    _loaded_path = path
    return path


def layout_mismatches(assumed: dict | None = None) -> list[str]:
    """Differences between ``assumed`` ({(struct, field): (offset, size)}, default
    :data:`ASSUMED_LAYOUT`) and the library's ``ck_layout_table``."""
    ffi = _native.ffi
    rows = _native.layout_rows()
    problems = []
    if ffi.sizeof("void *") != 8:
        problems.append(f"pointer size is {ffi.sizeof('void *')}, the lowering assumes 8")
    for key, want in (ASSUMED_LAYOUT if assumed is None else assumed).items():
        actual = rows.get(key)
        name = key[0] + ("." + key[1] if key[1] else "")
        if actual is None:
            problems.append(f"{name}: missing from ck_layout_table")
        elif actual != want:
            what = "offset/size" if key[1] else "alignment/size"
            problems.append(f"{name}: {what} libckernel {actual} != lowering {want}")
    return problems


def check_layout(assumed: dict | None = None, who: str = "ckernels._numba") -> None:
    """Raise ImportError if the library's layout differs from the lowering's."""
    problems = layout_mismatches(assumed)
    if problems:
        raise ImportError(f"{who}: libckernel's struct layout differs from what "
                          "the Numba lowering assumes:\n  " + "\n  ".join(problems))


def declare(builder_or_module, name: str) -> ir.Function:
    """Declare (once per module) the C function ``name`` for a call by name."""
    module = getattr(builder_or_module, "module", builder_or_module)
    return cgutils.get_or_insert_function(module, SIGNATURES[name], name)


__all__ = ["ASSUMED_LAYOUT", "SIGNATURES", "library_path", "load_symbols",
           "layout_mismatches", "check_layout", "declare"]
