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

Null-aware signatures (``?T`` arguments that see ``None``, ``?R`` results,
numbers and bools) run as their own kernel (:func:`aware_call`,
:func:`ckernels.jit.c_emit.optionals.aware_kernels`): each option argument's
bitmap goes in as it is, the function gets ``None`` or the value (Numba's
``Optional``), and its result's presence is written one byte per element,
then packed into the result's bitmap.
"""

from __future__ import annotations

import numpy as np

from ..device import launch
from ..device.array import DeviceArray
from ..device.nulls import (DeviceOptionArray, combine, flat_values, result_shape,
                            validity_operands)
from ..device.varlen import DeviceVarArray
from ..errors import InvalidArgumentError, NotSupportedError
from . import operands as _operands
from .c_emit import entry_wrapper
from .c_emit import optionals as _opt
from .c_emit.program import EmittedKernel
from .signature import element_type

__all__ = ["call", "is_null_aware", "aware_call", "source"]

_UINT8 = element_type("uint8")
_UINT64 = element_type("uint64")


def _where(kernel) -> str:
    code = getattr(kernel.py_func, "__code__", None)
    if code is None:
        return ""
    return f" at {code.co_filename}:{code.co_firstlineno}"


def is_null_aware(sig) -> bool:
    """Whether a signature has a ``?T`` argument or result."""
    return bool(sig.ret and sig.ret.startswith("?")) or any(a.startswith("?")
                                                             for a in sig.args)


def call(kernel, args, out=None):
    """``kernel(*args)`` where some arguments are option device arrays or the
    function has null-aware signatures; NotImplemented when neither applies
    (a plain call)."""
    fname = kernel.__name__
    if any(isinstance(a, DeviceOptionArray) for a in args) and kernel._compiled and all(
            (c.sig.ret or "").startswith("var * ") for c in kernel._compiled.values()):
        what = "rows of strings" if all(c.sig.ret in ("var * string", "var * ?string")
                                        for c in kernel._compiled.values()) else "var results"
        raise NotSupportedError(
            f"{fname}: {what} from option device arrays{_where(kernel)} (a null "
            "input row would be a null row, ?var, which devices do not build: fill_null() "
            "the arguments, or .get() them and run on the CPU)")
    from . import device_null_strings as _dns
    if _dns.wants(kernel, args):       # strings meet nulls: ?string arguments, results
        res = _dns.call(kernel, args, out)
        if res is not NotImplemented:
            return res
    comp = None
    if any(is_null_aware(c.sig) for c in kernel._compiled.values()):
        vals = [a._values if isinstance(a, DeviceOptionArray) else a for a in args]
        if any(isinstance(v, DeviceVarArray) for v in vals):   # strings: refused below
            comp = next((c for c in kernel._compiled.values() if is_null_aware(c.sig)
                         and len(c.sig.args) == len(args)), None)
        else:
            comp = _operands.select(kernel, _operands.operands(vals, fname), casts=True)
    has_opt = any(isinstance(a, DeviceOptionArray) for a in args)
    if comp is not None and is_null_aware(comp.sig):
        if out is not None:
            raise NotSupportedError(f"{fname}: out= with a null-aware signature on a device "
                                    "(the result is a new array)")
        return aware_call(kernel, comp, args, fname)
    if not has_opt:
        return NotImplemented
    if out is not None:
        raise NotSupportedError(f"{fname}: out= with option device arrays (the result is a "
                                "new ?T array)")
    values, bits, off, n = validity_operands(fname, args)
    if any(isinstance(v, DeviceVarArray) for v in values):
        from . import device_var
        res = device_var.call(kernel, values, None, validity=(bits, off))
        return DeviceOptionArray(res, bits, off)
    return DeviceOptionArray(_numbers(kernel, values, bits, off, n, fname), bits, off,
                             shape=result_shape(args))


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


# ------------------------------------------------------------ null-aware --
_AWARE: dict = {}      # (compiled signature id, target, specs) -> (program, n guard)


def aware_call(kernel, comp, args, fname):
    """A null-aware signature over device arrays (options or not) and
    scalars (``None`` among them): one launch of the function with its
    ``Optional`` arguments, one packing the result's presence bits.  The
    result is a ``DeviceOptionArray`` when the result type is ``?R`` or a
    null propagates through a plain ``T`` parameter, else a ``DeviceArray``."""
    from . import device
    where = f"(in {kernel.py_func.__qualname__}{_where(kernel)})"
    if comp.core:
        raise NotSupportedError(f"{fname}: {comp.sig.text}: null-aware signatures with dims "
                                f"on a device {where}")
    vals = [a._values if isinstance(a, DeviceOptionArray) else a for a in args]
    var = [v for v in vals if isinstance(v, DeviceVarArray)]     # strings: refused below
    ctx = var[0].context if var else \
        launch.context_of(fname, [0 if v is None else v for v in vals])   # None: a null
    tgt = device.target(ctx.kind)
    els = comp.sig.arg_elements
    ret = comp.sig.ret_element
    rv = ret.value if getattr(ret, "option", False) else ret
    for e in tuple(els) + (ret,):
        v = e.value if getattr(e, "option", False) else e
        if v.kind not in "biuf" or tgt.dialect.ctype(v) is None:
            raise NotSupportedError(f"{fname}: {comp.sig.text}: ?{v.name} in a null-aware "
                                    f"signature on {tgt.kind} devices (numbers and bools) "
                                    f"{where}")
    shapes = {tuple(a.shape) for a in args
              if isinstance(a, (DeviceArray, DeviceVarArray, DeviceOptionArray))}
    if any(isinstance(a, DeviceVarArray) for a in vals) or len(shapes) != 1:
        raise NotSupportedError(
            f"{fname}: a null-aware signature ({comp.sig.text}) on a device takes arrays of "
            f"numbers and bools of one shape and scalars, not shapes {sorted(shapes)} "
            f"{where}")
    if any(isinstance(a, DeviceArray) and a.context != ctx for a in vals):
        raise InvalidArgumentError(f"{fname}: arguments in different contexts")
    shape = next(iter(shapes))
    n = int(np.prod(shape))
    specs, operands, guard = [], [], []
    for k, (a, e) in enumerate(zip(args, els)):
        aware = getattr(e, "option", False)
        if isinstance(a, DeviceOptionArray):
            v = a._values if a._values.is_contiguous else a._values.copy()
            if aware:
                specs.append((v._element, False, True))
                operands += [*_whole(v), *_whole(a._bits), np.uint64(a._bit_offset)]
            else:
                specs.append((v._element, False, False))
                operands += _whole(v)
                guard.append((a._bits, a._bit_offset))
        elif isinstance(a, DeviceArray):
            v = flat_values(a)
            specs.append((v._element, False, False))
            operands += _whole(v)
        else:
            val = e.value if aware else e
            if a is None and not aware:
                raise InvalidArgumentError(f"{fname}: None for the plain {e.name} argument "
                                           f"{k} of {comp.sig.text}")
            specs.append((val, True, False))
            x = False if a is None else (a.item() if isinstance(a, np.generic) else a)
            operands += [np.uint8(bool(x)) if val.kind == "b" else val.numpy.type(x),
                         np.uint8(a is not None)]
    gbits = None
    if guard:
        gbits, goff = combine(ctx, guard, n)
        operands += [*_whole(gbits), np.uint64(goff)]
    prog = _aware_program(tgt, kernel, comp, specs, rv, bool(guard))
    tgt.check_device(ctx, prog.fp64_user, fname)
    built = ctx.build_program(prog.source)
    res = DeviceArray.empty(ctx, (n,), rv.numpy)
    ok = DeviceArray.empty(ctx, (max(n, 1),), np.uint8)
    if n == 0:
        return _result(ctx, res, None, ret, gbits, shape)
    st = launch.state(ctx)
    with st.lock:
        built.launch(_opt.AWARE_KERNEL, n, *_whole(res), *_whole(ok), *operands, np.uint64(n), (st.flag, 0), local_size=launch.LOCAL_SIZE)
        code = st.read_flag()
        if code:
            offset = st.read_offset()
            st.reset_flag()
    if code:
        raise launch.device_error(prog.errors, code, fname, tgt.dialect.title,
                                  launch.element_at(offset, (n,), (rv.numpy.itemsize,)))
    return _result(ctx, res, (built, ok), ret, gbits, shape)


def _whole(a) -> tuple:
    """A device array as a kernel's (whole buffer, byte offset) pair of
    arguments."""
    return (a.buffer, 0), np.uint64(a.offset)


def _aware_program(tgt, kernel, comp, specs, rv, guard: bool) -> EmittedKernel:
    """The emitted program of a null-aware call of this layout (cached)."""
    key = (id(comp), kernel.py_func, tgt.kind, tuple((d.name, b, m) for d, b, m in specs),
           guard)
    got = _AWARE.get(key)
    if got is None:
        prog = EmittedKernel(tgt.dialect, kernel.error_model)
        prog.entry = prog.function(kernel.py_func, comp.sig.numba_args,
                                   comp.sig.ret_element.numba)
        prog.finish(_opt.aware_kernels(prog, specs, rv, guard))
        if len(_AWARE) >= launch.PLAN_LIMIT:
            _AWARE.clear()
        got = _AWARE[key] = (comp, prog)     # comp kept: its id stays its own
    return got[1]


def source(tgt, kernel, comp) -> str:
    """The program of a null-aware signature over arrays of its value
    types, each ``?T`` argument with its bitmap (``f.source(target)``)."""
    if "string" in comp.sig.text:
        from . import device_null_strings
        return device_null_strings.source(tgt, kernel, comp)
    specs = []
    for e in comp.sig.arg_elements:
        aware = getattr(e, "option", False)
        specs.append((e.value if aware else e, False, aware))
    ret = comp.sig.ret_element
    rv = ret.value if getattr(ret, "option", False) else ret
    return _aware_program(tgt, kernel, comp, specs, rv, False).source


def _result(ctx, res, packing, ret, gbits, shape):
    """The result: values alone when nothing can be null, else with the
    bitmap packed from the presence bytes (which cover the guard's nulls)."""
    if not getattr(ret, "option", False) and gbits is None:
        return res.reshape(shape)
    n = res.size
    bits = DeviceArray.empty(ctx, (max((n + 7) // 8, 1),), np.uint8)
    if packing is not None:
        built, ok = packing
        built.launch(_opt.PACK_KERNEL, (n + 7) // 8, *_whole(bits), *_whole(ok), np.uint64(n),
                     local_size=launch.LOCAL_SIZE)
    return DeviceOptionArray(res, bits, 0, shape=shape)
