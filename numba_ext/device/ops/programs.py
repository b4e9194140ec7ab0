"""What every built-in device kernel shares: the types the C registry
resolves for an operation (``ck_op_resolve``, NumPy's promotion), the
operands' element types (NEP 50 for Python scalars), the checks of what a
device holds (element types, fp64), and the cache of generated programs per
dialect and key."""

from __future__ import annotations

import threading

from ... import dialects, dtypes
from ..._cargs import c_text
from ..._native import check, ffi, lib
from ...errors import InvalidArgumentError, NotSupportedError
from ..base import DeviceArrayBase as DeviceArray

_lock = threading.Lock()


# ========================================================= resolving types ==
_RESOLVED: dict = {}


def resolve(op: str, names: tuple) -> tuple:
    """``(kernel argument types, result type)`` (names) of registry operation
    ``op`` for arguments of element types ``names`` (``ck_op_resolve``)."""
    key = (op, names)
    r = _RESOLVED.get(key)
    if r is None:
        cop = ffi.new("const ck_op **")
        check(lib.ck_op_find(c_text(op, "operation name"), cop))
        if lib.ck_op_arity(cop[0]) != len(names):
            raise InvalidArgumentError(f"{op} takes {lib.ck_op_arity(cop[0])} argument(s), "
                                       f"got {len(names)}")
        ids = ffi.new("ck_type_id[]", [dtypes.by_name[n].type_id for n in names])
        kargs = ffi.new("ck_type_id[]", len(names))
        ret = ffi.new("ck_type_id *")
        check(lib.ck_op_resolve(cop[0], len(names), ids, ret, kargs))
        r = (tuple(dtypes.by_id[int(kargs[i])].name for i in range(len(names))),
             dtypes.by_id[int(ret[0])].name)
        _RESOLVED[key] = r
    return r


def operand_types(args, fname):
    """Element type names of device arrays and scalars (NEP 50 for weak ones)."""
    refuse_time(fname, args)
    strong = [a._element.name for a in args if isinstance(a, DeviceArray)]
    strong += [dtypes.scalar_type(a) for a in args
               if not isinstance(a, DeviceArray) and not dtypes.is_weak(a)]
    names = []
    for a in args:
        if isinstance(a, DeviceArray):
            names.append(a._element.name)
        else:
            n = dtypes.weak_scalar_type(a, strong) if dtypes.is_weak(a) else \
                dtypes.scalar_type(a)
            names.append(n)
    return tuple(names)


def refuse_time(where, args) -> None:
    """A one-line NotSupportedError for device arrays of instants or durations
    among ``args``: the built-in device operations have no kernels for them
    (jitted functions do: ``docs/device-code.md``)."""
    for a in args:
        if isinstance(a, DeviceArray) and a._element.kind in ("M", "m"):
            raise NotSupportedError(
                f"{where}: no device kernel for {a.dtype} arrays; write the arithmetic or "
                "comparison as a @ckernels.jit function (time values compile for OpenCL "
                "and CUDA), or compute on the host (.get())")


def check_device_types(tgt, where, names):
    for n in names:
        if n not in tgt.types:
            held = ", ".join(d.name for d in tgt.element_types())
            raise NotSupportedError(f"{where}: the result or argument type {n} is not "
                                    f"supported on {tgt.name} devices ({held}); convert "
                                    "with .astype() first")


def check_fp64(ctx, where, names):
    if dialects.uses_fp64(names) and not ctx.supports_fp64:
        raise NotSupportedError(f"{where}: float64 on a device without fp64 support "
                                f"({ctx.describe()})")


_PROGRAMS: dict = {}


def dialect_of(ctx):
    """The dialect of ``ctx``'s device kind (NotSupportedError if none)."""
    d = dialects.device(ctx.kind)
    if d is None:
        raise NotSupportedError(f"ckernels: no device operations for '{ctx.kind}' contexts "
                                f"(device kinds: {', '.join(dialects.DEVICE_DIALECTS)})")
    return d


def cached_program(tgt, key, make):
    """An :class:`DeviceProgram` cached per target and ``key``."""
    k = (tgt.name,) + key
    prog = _PROGRAMS.get(k)
    if prog is None:
        prog = make()
        with _lock:
            prog = _PROGRAMS.setdefault(k, prog)
    return prog
