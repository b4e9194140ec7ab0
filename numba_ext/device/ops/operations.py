"""Registry operations on device arrays and scalars, element by element
(operators, ``ckernels.ops.<name>``, NumPy ufuncs), and ``numpy.where``: the
element function of the table wrapped into a kernel
(:func:`~ckernels.context.device_program.kernel_wrapper`), launched through
the plans of :mod:`ckernels.device.launch`; the operand rule of NumPy ufuncs
(no host operands)."""

from __future__ import annotations

import numpy as np

from ... import dialects, dtypes
from ...errors import CKTypeError, InvalidArgumentError, NotSupportedError
from .. import launch as _dev
from ..base import DeviceArrayBase as DeviceArray
from ...context.device_program import DeviceProgram, kernel_wrapper
from .element_functions import OPS, element_function
from .programs import (cached_program, check_device_types, check_fp64, dialect_of, operand_types,
                       resolve)


def _op_program(tgt, op, kargs, ret, inputs, out_name):
    def make():
        prog = DeviceProgram(tgt, "python")
        ts = [dtypes.by_name[n] for n in kargs]
        rt = dtypes.by_name[ret]
        if dialects.uses_fp64((*kargs, ret, out_name, *(dt.name for dt, _ in inputs))):
            prog.fp64_user = f"ckernels.ops.{op}"
        fn = element_function(prog, op, ts, rt, f"ckernels.ops.{op}")
        prog.finish(kernel_wrapper(
            tgt, fn, [(tgt.ctype(t), t.kind == "b") for t in ts],
            (tgt.ctype(rt), rt.kind == "b"), list(inputs),
            dtypes.by_name[out_name]))
        return prog
    return cached_program(tgt, ("op", op, kargs, ret, tuple((d.name, v) for d, v in inputs),
                          out_name), make)


def _scalar_value(v, name):
    """A scalar operand as the Python value stored into the kernel argument."""
    if isinstance(v, np.generic):
        v = v.item()
    if dtypes.by_name[name].kind == "b":
        return bool(v)
    return v


def elementwise(op: str, args, out: DeviceArray | None = None):
    """Registry operation ``op`` on device arrays and scalars, on the device;
    into ``out`` (same context, broadcast shape, a dtype the result casts to
    with NumPy's ``same_kind`` rule) when given.  A 0-d result stays 0-d."""
    where = f"ckernels.ops.{op}"
    if op not in OPS:
        raise NotSupportedError(f"{where}: no device kernel for this operation")
    ctx = _dev.context_of(where, list(args) + ([out] if out is not None else []),
                          "argument")
    tgt = dialect_of(ctx)
    names = operand_types(args, where)
    kargs, ret = resolve(op, names)
    check_device_types(tgt, where, kargs + (ret,))
    if out is not None:
        if not isinstance(out, DeviceArray):
            raise InvalidArgumentError(f"{where}: out= must be a DeviceArray, not "
                                       f"{type(out).__name__}")
        if not np.can_cast(dtypes.by_name[ret].numpy, out.dtype, "same_kind"):
            raise CKTypeError(f"{where}: cannot cast the result from dtype('{ret}') to "
                              f"out= dtype('{out.dtype}') with casting rule 'same_kind'")
        out_name = out._element.name
    else:
        out_name = ret
    inputs = tuple((a._element if isinstance(a, DeviceArray) else dtypes.by_name[n],
                    not isinstance(a, DeviceArray)) for a, n in zip(args, names))
    return _launch(ctx, where, ("op", op, inputs, out_name),
                   lambda: _op_program(tgt, op, kargs, ret, inputs, out_name),
                   kargs + (ret, out_name), args, names, inputs, out, ret, out_name)


def _launch(ctx, where, key, program, type_names, args, names, inputs, out, ret, out_name):
    """Run an elementwise program (``program()`` makes it) over ``args``
    through the plan cached per context, ``key`` and operand layout."""
    st = _dev.state(ctx)
    pkey = key + (out._key if out is not None else None,
                  tuple(a._key if isinstance(a, DeviceArray) else None for a in args))
    plan = st.plans.get(pkey)
    if plan is None:
        check_fp64(ctx, where, tuple(type_names) + tuple(d.name for d, _ in inputs))
        prog = program()
        plan = _dev.remember(st.plans, pkey, _dev.build_plan(
            ctx, prog.source, prog.errors, where, prog.dialect.title, inputs, args,
            dtypes.by_name[out_name].numpy, out=out), 4 * _dev.PLAN_LIMIT, st.lock)
    operands = [a if isinstance(a, DeviceArray) else _scalar_value(a, n)
                for a, n in zip(args, names)]
    return _dev.run(plan, ctx, out, operands)


def where(cond, x, y) -> DeviceArray:
    """``numpy.where(cond, x, y)`` on the device: ``x`` where ``cond`` is
    nonzero, else ``y``, broadcast; the result type is NumPy's promotion of
    ``x`` and ``y`` (NEP 50 for Python scalars)."""
    fname = "numpy.where"
    ctx = _dev.context_of(fname, [cond, x, y], "argument")
    tgt = dialect_of(ctx)
    ret = dtypes.promote(*operand_types((x, y), fname))
    cname = cond._element.name if isinstance(cond, DeviceArray) else "bool"
    names = (cname, x._element.name if isinstance(x, DeviceArray) else ret,
             y._element.name if isinstance(y, DeviceArray) else ret)
    check_device_types(tgt, fname, (ret,) + names)
    inputs = tuple((a._element if isinstance(a, DeviceArray) else dtypes.by_name[n],
                    not isinstance(a, DeviceArray)) for a, n in zip((cond, x, y), names))
    return _launch(ctx, fname, ("where", inputs, ret),
                   lambda: _where_program(tgt, inputs, ret, names),
                   (ret,), (cond, x, y), names, inputs, None, ret, ret)


def _where_program(tgt, inputs, ret, names):
    def make():
        d = tgt
        prog = DeviceProgram(d, "python")
        rt = dtypes.by_name[ret]
        if dialects.uses_fp64((ret, *names)):
            prog.fp64_user = "numpy.where"
        ct = d.ctype(rt)
        prog.order.append(f"{d.function_prefix} {ct} ck_where(bool c, {ct} a, {ct} b, "
                          f"{d.int32} *ck_err)\n{{\n  return c ? a : b;\n}}\n")
        prog.finish(kernel_wrapper(d, "ck_where", [("bool", True), (ct, rt.kind == "b"),
                                                          (ct, rt.kind == "b")],
                                          (ct, rt.kind == "b"), list(inputs), rt))
        return prog
    return cached_program(tgt, ("where", tuple((d.name, v) for d, v in inputs), ret), make)


# ================================================================== NumPy ==
def check_ufunc_operands(ufunc, inputs, kwargs) -> None:
    """NumPy ufuncs on device arrays take device arrays of one context and
    scalars, and write into device arrays: a NumPy array (or list) anywhere
    would need a silent copy between host and device, which is refused with
    a TypeError."""
    outs = kwargs.get("out") or ()
    outs = outs if isinstance(outs, tuple) else (outs,)
    named = [(f"operand {i}", x) for i, x in enumerate(inputs)] + \
        [("out=", x) for x in outs]
    for what, x in named:
        if x is None or isinstance(x, DeviceArray) or _dev._is_scalar(x):
            continue
        if isinstance(x, (np.ndarray, list, tuple)) or hasattr(x, "__array__"):
            raise TypeError(
                f"numpy.{ufunc.__name__}: {what} is a {type(x).__name__} on the host; "
                "device arrays combine only with device arrays of the same context and "
                "scalars (no implicit host<->device copies: move host data with "
                "ctx.array(x), device data with .get())")
