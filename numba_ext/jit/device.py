"""Calling jitted functions on device arrays: the device target of a context
kind (:class:`DeviceTarget`: the kind's dialect, a row of
:mod:`ckernels.dialects`, and the programs emitted for it) and :func:`call`.

1. operands: device arrays of one context and scalars (Python scalars are
   weak, by the one NEP 50 rule; NumPy scalars strong), anything else is an
   error naming the argument (:func:`ckernels.device.launch.context_of`);
2. the signature: exact matches first (a lazily compiled function compiles
   one), then -- as on the CPU -- the first signature every argument converts
   to safely: the kernel converts each element as it reads it;
3. the emitted program (cached per compiled signature, target and operand
   layout: which operands are arrays of which element type, which are scalars
   passed by value) built by the context (cached per source);
4. a launch plan per (compiled signature, context) and operand layout, run by
   the launch code every device call shares (:mod:`ckernels.device.launch`:
   broadcasting, ``out=``, the error flag).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from .. import dialects
from ..device.array import DeviceArray
from ..device.launch import PLAN_LIMIT, Plan, build_plan, context_of, device_error, remember, run
from ..errors import CKTypeError, InvalidArgumentError, NotSupportedError
from . import fastcall
from .fastcall import scalar_value
from . import operands as _operands
from .c_emit import Dialect, EmittedKernel, emit_kernel, entry_wrapper


def target(kind: str) -> "DeviceTarget":
    """The device target for contexts of ``kind`` (NotSupportedError if none)."""
    tgt = _TARGET_OBJECTS.get(kind)
    if tgt is None:
        dialect = dialects.device(kind)
        if dialect is None:
            raise NotSupportedError(f"ckernels.jit: no device target for '{kind}' contexts "
                                    f"(targets: {', '.join(dialects.DEVICE_DIALECTS)})")
        with _TARGETS_LOCK:
            tgt = _TARGET_OBJECTS.setdefault(kind, DeviceTarget(kind, dialect))
    return tgt


#: context kind -> its DeviceTarget (made on first use)
_TARGET_OBJECTS: dict = {}
_TARGETS_LOCK = threading.Lock()


class DeviceTarget:
    """One device target: the context kind it serves and its C dialect."""

    def __init__(self, kind: str, dialect: Dialect):
        self.kind = kind
        self.dialect = dialect
        self._programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def program(self, kernel, comp) -> EmittedKernel:
        """The emitted program of one compiled signature (cached while ``comp``
        lives); its ``source`` has every operand an array of the signature's
        types (see :func:`~ckernels.jit.c_emit.kernel_wrapper` for others)."""
        with self._lock:
            prog = self._programs.get(comp)
        if prog is None:
            prog = emit_kernel(kernel.py_func, comp.sig.numba_args, comp.sig.ret_element.numba,
                               self.dialect, kernel.error_model)
            with self._lock:
                prog = self._programs.setdefault(comp, prog)
        return prog

    def plans(self, comp, ctx) -> dict:
        """The launch plans of one compiled signature in one context."""
        per_ctx = self._plans.get(comp)
        if per_ctx is None:
            with self._lock:
                per_ctx = self._plans.setdefault(comp, weakref.WeakKeyDictionary())
        plans = per_ctx.get(ctx)
        if plans is None:
            with self._lock:
                plans = per_ctx.setdefault(ctx, {})
        return plans

    def check_device(self, ctx, fp64_user, fname: str) -> None:
        """Refuse what the device cannot run (double without fp64 support)."""
        if fp64_user is not None and not ctx.supports_fp64:
            raise NotSupportedError(f"{fname}: {fp64_user} uses float64 but the "
                                    f"device has no fp64 support ({ctx.describe()})")

    def __repr__(self) -> str:
        return f"<ckernels.jit device target {self.kind!r} ({self.dialect.title} C)>"


# ------------------------------------------------------------- per context --


_SELECT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def call(kernel, args, out=None, *, remember_call=False):
    """``kernel(*args, out=out)`` where at least one argument is a device array.
    ``remember_call``: keep the decision for repeated calls
    (:mod:`ckernels.jit.fastcall`; set by :func:`ckernels.jit.targets.call`
    when the call comes straight here)."""
    fname = kernel.__name__
    ctx = context_of(fname, args)
    tgt = target(ctx.kind)
    # the signature and the operand layout depend on the types only
    sel_key = (len(kernel._compiled),) + tuple(
        a._element.name if isinstance(a, DeviceArray) else type(a) if
        type(a) in (bool, int, float) else (a.dtype.name,) for a in args)
    cache = _SELECT.get(kernel)
    if cache is None:
        cache = _SELECT.setdefault(kernel, {})
    sel = cache.get(sel_key)
    if sel is None:
        sel = _select(kernel, args, fname)
        if len(cache) >= PLAN_LIMIT:
            cache.clear()
        cache[(len(kernel._compiled),) + sel_key[1:]] = sel
    sig_args, inputs, values = sel
    comp = kernel._compiled[sig_args]
    if values is not None:      # scalar operands: their values in the storage types
        operands = [scalar_value(a, e) if isinstance(a, np.generic) else a
                    for a, e in zip(args, comp.sig.arg_elements)]
    else:
        operands = args
    if out is not None:
        if not isinstance(out, DeviceArray):
            raise InvalidArgumentError(
                f"{fname}: out= must be a DeviceArray of the arguments' context when they "
                f"live on a device, not {type(out).__name__}")
        if out.context != ctx:
            raise InvalidArgumentError(
                f"{fname}: out= lives on {out.context.brief}, the arguments on "
                f"{ctx.brief} (a different context)")
        if out._element.name != comp.sig.ret:
            raise CKTypeError(f"{fname}: out= has dtype {out.dtype}, the result "
                              f"({comp.sig.text}) has dtype {comp.sig.ret}")
    plans = tgt.plans(comp, ctx)
    key = (out._key if out is not None else None,
           tuple(a._key if isinstance(a, DeviceArray) else None for a in args))
    plan = plans.get(key)
    if plan is None:
        plan = remember(plans, key, _jit_plan(tgt, kernel, comp, ctx, inputs, args, out, fname))
    if remember_call:
        fastcall.remember(kernel, args, out, plan,
                          None if values is None else tuple(comp.sig.arg_elements))
    return run(plan, ctx, out, operands)


def _select(kernel, args, fname):
    """``(signature key, inputs, has_scalars)`` for arguments of these types:
    the compiled signature (exact, else a safe cast as on the CPU) and per
    argument its element type in memory and whether it is a scalar."""
    ops = _operands.operands(args, fname)
    comp = _operands.select(kernel, ops, casts=True)
    if comp is None:
        raise CKTypeError(_operands.no_signature(kernel, ops, "the device argument types"))
    inputs = []
    scalars = False
    for o, a, e in zip(ops, args, comp.sig.arg_elements):
        if o.device and a._element.name != e.name and {a._element.kind, e.kind} & {"M", "m"}:
            raise CKTypeError(f"{fname}: a device array of {a._element.name} for a parameter of "
                              f"{e.name}: time units are not converted in device kernels "
                              f"(convert the array first: .astype('{e.numpy}'))")
        if o.device:   # a struct: exactly the signature's type (operands.select)
            inputs.append((e if e.kind == "V" else a._element, False))
        else:   # a scalar is passed by value in the parameter's type
            inputs.append((e, True))
            scalars = True
    # the signature by its key (the cache must not hold the compiled code,
    # which would keep the function alive through this weak-keyed cache)
    return comp.sig.args, tuple(inputs), (True if scalars else None)


def _jit_plan(tgt, kernel, comp, ctx, inputs, args, out, fname) -> Plan:
    prog = tgt.program(kernel, comp)
    tgt.check_device(ctx, prog.fp64_user, fname)
    ret = comp.sig.ret_element
    for dt, _ in inputs:
        if tgt.dialect.ctype(dt) is None:
            raise NotSupportedError(f"{fname}: element type {dt.name} is not supported on "
                                    f"{tgt.kind} devices")
    if tgt.dialect.ctype(ret) is None:
        raise NotSupportedError(f"{fname}: the result type {ret.name} is not supported on "
                                f"{tgt.kind} devices")
    if "float64" in [dt.name for dt, _ in inputs] and not ctx.supports_fp64:
        raise NotSupportedError(f"{fname}: float64 operands on a device without fp64 "
                                f"support ({ctx.describe()})")
    source = tgt.dialect.header(prog) + prog.text() + "\n" + entry_wrapper(prog, inputs, ret)
    return build_plan(ctx, source, prog.errors, fname, tgt.dialect.title, inputs, args,
                      ret.numpy, out=out, contiguous_kernel=True)





__all__ = ["DeviceTarget", "target", "call", "device_error"]
