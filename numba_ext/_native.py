"""Loading the cffi module and checking it against libckernel.

``ckernels._ffi`` is compiled (API mode) from the same public headers as
libckernel, but the two are separate files: a stale or foreign libckernel on
the loader path would silently disagree about struct layouts.  At import we
compare every row of the library's exported layout table
(``ck_layout_table``) with what cffi was compiled with, and refuse to load on
any difference.
"""

from __future__ import annotations

from ._ffi import ffi, lib
from .errors import CKernelError, element_suffix, error_class


def last_error() -> str:
    """The calling thread's last libckernel error message."""
    return ffi.string(lib.ck_last_error()).decode("utf-8", "replace")


def check(status: int) -> None:
    """Raise the exception matching a non-zero ``ck_status``."""
    if status != 0:
        raise error_class(status)(element_suffix(last_error()), status)


def c_text_out(fn, *args, errors: str = "strict") -> str:
    """The text a C function writes by the library's "ask the size, then fill"
    convention, ``fn(*args, buf, capacity, &needed)``: asked once without a
    buffer for the size, then given a buffer of that size (plus the NUL).  The
    one implementation of the idiom: ``Type.__str__``, ``KernelBuilder.dump``,
    ``Context.describe`` and the displays of those objects all read through it."""
    n = ffi.new("size_t *")
    check(fn(*args, ffi.NULL, 0, n))
    buf = ffi.new("char[]", n[0] + 1)
    check(fn(*args, buf, n[0] + 1, n))
    return ffi.string(buf).decode("utf-8", errors)


def same_instance(live_count) -> bool:
    """Whether ``live_count`` -- ``ck_memblock_live_count`` reached some other
    way (through LLVM's symbol table, a ctypes handle) -- belongs to the
    libckernel instance the cffi module uses (otherwise the memory counters
    and the thread-local errors would be two copies).  cffi's API mode hides
    the real function addresses, so this compares behaviour: a block made
    through cffi must show in the count read through ``live_count``."""
    out = ffi.new("ck_memblock **")
    before = live_count()
    check(lib.ck_pod_memblock_new(0, out))
    after = live_count()
    lib.ck_memblock_decref(out[0])
    return after == before + 1


def layout_mismatches() -> list[str]:
    """Differences between cffi's view of the public structs and the library's."""
    count = ffi.new("size_t *")
    table = lib.ck_layout_table(count)
    problems = []
    for i in range(count[0]):
        row = table[i]
        tname = ffi.string(row.type).decode()
        fname = ffi.string(row.field).decode()
        try:
            ctype = ffi.typeof(tname)
        except ffi.error:
            problems.append(f"{tname}: not known to the cffi module")
            continue
        try:
            if not fname:
                mine = (ffi.alignof(ctype), ffi.sizeof(ctype))
                what = "alignment/size"
            fields = dict(ctype.fields)
        except ffi.error as exc:  # cffi's own compile-time check disagrees
            problems.append(f"{tname}: {exc}")
            continue
        if fname:
            if fname not in fields:
                problems.append(f"{tname}.{fname}: not known to the cffi module")
                continue
            field = fields[fname]
            ft = field.type   # a flexible array member: the size of one entry
            flexible = ft.kind == "array" and ft.length is None
            mine = (field.offset, ffi.sizeof(ft.item if flexible else ft))
            what = "offset/size"
        theirs = (row.offset, row.size)
        if mine != theirs:
            problems.append(f"{tname}{'.' + fname if fname else ''}: {what} "
                            f"cffi {mine} != libckernel {theirs}")
    return problems


_LAYOUT_ROWS: dict[tuple[str, str], tuple[int, int]] = {}


def layout_rows() -> dict[tuple[str, str], tuple[int, int]]:
    """The library's layout table: ``(struct, field) -> (offset, size)``; a
    field of ``""`` is the struct's row, ``(alignment, size)``.  The table is
    constant for the loaded library: read once, a fresh copy returned."""
    if not _LAYOUT_ROWS:
        count = ffi.new("size_t *")
        table = lib.ck_layout_table(count)
        _LAYOUT_ROWS.update({(ffi.string(table[i].type).decode(),
                              ffi.string(table[i].field).decode()):
                             (int(table[i].offset), int(table[i].size))
                             for i in range(count[0])})
    return dict(_LAYOUT_ROWS)


def layout_row(struct: str, field: str = "") -> tuple[int, int]:
    """One row of :func:`layout_rows` (KeyError naming it when absent)."""
    try:
        if not _LAYOUT_ROWS:
            layout_rows()
        return _LAYOUT_ROWS[(struct, field)]
    except KeyError:
        raise KeyError(f"{struct}{'.' + field if field else ''} is not in libckernel's "
                       "layout table") from None


def abi_mismatches(lib=None) -> list[str]:
    """Differences between the ABI versions the cffi module was compiled
    against (``CK_ABI_VERSION``, ``CK_KERNEL_ABI_VERSION`` of its headers) and
    those of the libckernel it loaded."""
    lib = globals()["lib"] if lib is None else lib
    problems = []
    for what, header, loaded in (("ABI", lib.CK_ABI_VERSION, lib.ck_abi_version()),
                                 ("kernel ABI", lib.CK_KERNEL_ABI_VERSION,
                                  lib.ck_kernel_abi_version())):
        if header != loaded:
            problems.append(f"{what} version: cffi module {header} != libckernel {loaded}")
    return problems


def verify_layout() -> None:
    problems = abi_mismatches() + layout_mismatches()
    if problems:
        raise ImportError(
            "ckernels: the cffi module and libckernel disagree on ABI versions or struct "
            "layouts "
            "(a stale or foreign libckernel?); reinstall the package.\n  "
            + "\n  ".join(problems))


__all__ = ["ffi", "lib", "check", "last_error", "c_text_out", "abi_mismatches", "layout_mismatches", "layout_rows",
           "layout_row", "verify_layout", "CKernelError"]
