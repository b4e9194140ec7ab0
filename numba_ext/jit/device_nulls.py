"""Jitted functions over option device arrays (``?T`` on OpenCL and CUDA):
nulls propagate, as on the CPU (``docs/nulls.md``).

A call with a :class:`~ckernels.device.nulls.DeviceOptionArray` among its
arguments runs the function on the values, as a call without nulls would
(:mod:`ckernels.jit.device` for numbers and bools, :mod:`ckernels.jit.device_var`
for strings), with two more kernel operands: the result's validity bitmap
(the AND of the option arguments', :func:`ckernels.device.nulls.combine`) and
its bit offset.  The kernel reads its element's bit before anything else and
on a null slot writes 0 and returns: the function's body never runs there,
so ``10 // x`` cannot raise on the 0 that Arrow leaves under a null.  The
result is a ``DeviceOptionArray`` over the new values and that bitmap.

Null-aware signatures (``?T`` arguments that see ``None``, ``?R`` results)
run on the CPU only: refused here with one line naming the function's
``file:line``.
"""

from __future__ import annotations

import numpy as np

from ..device import launch
from ..device.array import DeviceArray
from ..device.nulls import DeviceOptionArray, validity_operands
from ..device.varlen import DeviceVarArray
from ..errors import InvalidArgumentError, NotSupportedError
from .c_emit import entry_wrapper
from .signature import element_type

__all__ = ["call"]

_UINT8 = element_type("uint8")
_UINT64 = element_type("uint64")


def _where(kernel) -> str:
    code = getattr(kernel.py_func, "__code__", None)
    if code is None:
        return ""
    return f" at {code.co_filename}:{code.co_firstlineno}"


def call(kernel, args, out=None):
    """``kernel(*args)`` where some arguments are option device arrays."""
    fname = kernel.__name__
    if out is not None:
        raise NotSupportedError(f"{fname}: out= with option device arrays (the result is a "
                                "new ?T array)")
    sigs = [c.sig for c in kernel._compiled.values()] or None
    if sigs and all("?" in s.text for s in sigs):
        raise NotSupportedError(
            f"{fname}: null-aware signatures ({'; '.join(s.text for s in sigs)}) run on "
            f"the CPU only; on a device nulls propagate through plain T signatures "
            f"(in {kernel.py_func.__qualname__}{_where(kernel)})")
    values, bits, off, n = validity_operands(fname, args)
    if any(isinstance(v, DeviceVarArray) for v in values):
        from . import device_var
        res = device_var.call(kernel, values, None, validity=(bits, off))
        return DeviceOptionArray(res, bits, off)
    return DeviceOptionArray(_numbers(kernel, values, bits, off, n, fname), bits, off)


def _numbers(kernel, values, bits, off, n, fname) -> DeviceArray:
    """The element kernel over numbers and bools, null slots skipped."""
    from . import device
    ctx = launch.context_of(fname, values)
    tgt = device.target(ctx.kind)
    sig_args, inputs, has_scalars = device._select(kernel, values, fname)
    comp = kernel._compiled[sig_args]
    if "?" in comp.sig.text:
        raise NotSupportedError(f"{fname}: the null-aware signature {comp.sig.text} runs on "
                                f"the CPU only (in {kernel.py_func.__qualname__}"
                                f"{_where(kernel)})")
    if comp.core:
        raise NotSupportedError(f"{fname}: {comp.sig.text}: option arrays into signatures "
                                "with dims (fill the nulls first: .fill_null(v) on the host)")
    ret = comp.sig.ret_element
    plans = tgt.plans(comp, ctx)
    layouts = [(a._shape, a._strides) if isinstance(a, DeviceArray) else ((), ())
               for a in values]
    key = ("nulls", tuple(a._key if isinstance(a, DeviceArray) else None for a in values))
    plan = plans.get(key)
    if plan is None:
        prog = tgt.program(kernel, comp)
        tgt.check_device(ctx, prog.fp64_user, fname)
        for dt, _ in inputs:
            if tgt.dialect.ctype(dt) is None:
                raise NotSupportedError(f"{fname}: element type {dt.name} is not supported "
                                        f"on {tgt.kind} devices")
        if tgt.dialect.ctype(ret) is None or ret.kind not in "biuf":
            raise NotSupportedError(f"{fname}: the result type {ret.name} of option "
                                    f"arguments on {tgt.kind} devices (numbers and bools)")
        full = tuple(inputs) + ((_UINT8, False), (_UINT64, True))
        source = tgt.dialect.header(prog) + prog.text() + "\n" + \
            entry_wrapper(prog, full, ret, validity=len(inputs))
        plan = launch.remember(plans, key, launch.build_plan(
            ctx, source, prog.errors, fname, tgt.dialect.title, full, list(values) + [bits, 0],
            ret.numpy, operand_layouts=layouts + [((), ()), ((), ())],
            out_layout=((n,), (ret.numpy.itemsize,))))
    operands = [a.item() if isinstance(a, np.generic) else a for a in values] + [bits, off]
    if any(isinstance(a, DeviceArray) and a.context != ctx for a in values):
        raise InvalidArgumentError(f"{fname}: arguments in different contexts")
    res = DeviceArray.empty(ctx, (n,), ret.numpy)
    plan(res, operands)
    return res
