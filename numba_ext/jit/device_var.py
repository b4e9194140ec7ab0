"""Var-dim arguments on devices: row reductions such as ``float64(var *
float64)`` over a :class:`~ckernels.device.varlen.DeviceVarArray`.

The function is emitted by the one emitter (:mod:`ckernels.jit.c_emit`) as on
the core-dims path (:mod:`ckernels.jit.device_dims`): a var argument is the
one-dimensional Numba array the CPU function sees, in C a view struct.  The
kernel gives each work item one row: it reads the row's bounds from the
Arrow offsets (``offsets[i]``, ``offsets[i + 1]``), points the view at the
row's first value, and writes the function's number to ``out[i]``.  The
launch is the shared plan (:func:`ckernels.device.launch.build_plan`): the
offsets enter as two views (``offsets[:-1]``, ``offsets[1:]``), the values as
an operand broadcast to every row (the kernel adds the row's start itself).

A string argument (a :class:`DeviceVarArray` of strings) is the same: the
work item reads its row's byte bounds from the offsets and hands the function
a view of its UTF-8 bytes (``ck_str_t``, :mod:`ckernels.jit.c_emit.strings`).

A ``var * string`` argument enters as four operands: the row bounds, the
strings' offsets and their bytes (a row of ``ck_strlist_t``).

Taken: signatures whose arguments are ``var * T`` (T a number or bool),
``string``, ``var * string`` or numbers, with a number result.  Refused with one line
(``NotSupportedError``): var dims under other dims or holding strings,
dimensioned or string results (``out.append``, returned lists, ``str``: a
result of unknown size needs the sizing pass of ``docs/device-code.md``).
"""

from __future__ import annotations

import numpy as np

from ..context.device_program import (KERNEL_NAME, element_offsets, kernel_parameters,
                                      store_result)
from ..context.device_validity import guard_lines
from ..device import launch
from ..device.array import DeviceArray
from ..device.varlen import DeviceVarArray
from ..errors import CKTypeError, InvalidArgumentError, NotSupportedError
from . import dims as _dims
from .c_emit import EmittedKernel
from .c_emit.numba_types import _is_bool
from .signature import element_type


__all__ = ["call", "source"]

_INT64 = element_type("int64")
_UINT8 = element_type("uint8")
_STRLIST = "var * string"


def _var_row(name):
    """The element dtype name of a ``var * T`` signature part (T a number or
    bool), None for a part without dims; refuses other dimensioned parts."""
    if name == "string":
        return "string"
    if not _dims.is_dimensioned(name):
        return None
    c = _dims.core(name)
    if c.ndim == 1 and c.has_var and c.dtype == "string":
        return _STRLIST
    if c.ndim == 1 and c.has_var and element_type(c.dtype).kind in "biuf":
        return c.dtype
    raise NotSupportedError(f"{name}: on devices a var-dim argument is one var dim of "
                            "numbers or bools (var * T)")


class VarLayout:
    """Per argument the element dtype of its rows (``var * T``) or None (a
    scalar), and the result's element type."""

    def __init__(self, kernel, comp, string_result=False, var_result=None):
        sig = comp.sig
        self.string_result = string_result
        fname = kernel.__name__
        # ``?T`` parts (null-aware signatures, jit.device_null_strings): the
        # function sees Optional(T); the rows are those of T
        args = tuple(a[1:] if a.startswith("?") else a for a in sig.args)
        self.optional = tuple(a != b for a, b in zip(args, sig.args))
        ret = sig.ret[1:] if sig.ret and sig.ret.startswith("?") else sig.ret
        self.ret_optional = ret != sig.ret
        try:
            self.rows = tuple(_var_row(a) for a in args)
        except NotSupportedError as exc:
            raise NotSupportedError(f"{fname}: {sig.text}: {exc}") from None
        for r, o, a in zip(self.rows, self.optional, sig.args):
            if o and r not in (None, "string"):
                raise NotSupportedError(f"{fname}: {sig.text}: a {a} argument on a device "
                                        "(null rows: ?string and ?numbers only)")
        if var_result is None and (_dims.is_dimensioned(ret) or
                                   kernel._out_param is not None):
            raise NotSupportedError(
                f"{fname}: {sig.text}: a dimensioned result of var-dim arguments on a device "
                "(results of unknown size are built on the CPU; reduce each row to a number)")
        if ret == "string" and not string_result:
            raise NotSupportedError(
                f"{fname}: {sig.text}: string results on a device (results of unknown size "
                "are built on the CPU; .get() the strings)")
        self.dtypes = tuple(_UINT8 if r in ("string", _STRLIST) else element_type(r if r is not None else a)
                            for r, a in zip(self.rows, args))
        # a string result: the kernels of jit.device_strings write it; a var
        # result (var_result: its element dtype name): jit.device_append's
        self.ret_dtype = _UINT8 if string_result else element_type(var_result or ret)
        for dt in self.dtypes + (self.ret_dtype,):
            if dt.kind not in "biuf":
                raise NotSupportedError(f"{fname}: {sig.text}: {dt.name} arguments next to "
                                        "var dims on a device (numbers and bools only)")

    def numba_types(self):
        from numba.core import types
        nb = tuple(dt.numba if r is None else types.unicode_type if r == "string" else
                   types.List(types.unicode_type) if r == _STRLIST else
                   types.Array(dt.numba, 1, "A", readonly=True)
                   for r, dt in zip(self.rows, self.dtypes))
        nb = tuple(types.Optional(t) if o else t for t, o in zip(nb, self.optional))
        ret = types.unicode_type if self.string_result else self.ret_dtype.numba
        return nb, types.Optional(ret) if self.ret_optional else ret

    def inputs(self, scalars):
        """The kernel operands' ``(DType row, by_value)``: per var argument its
        row starts, row ends and values; per other argument its value or
        array."""
        out = []
        for r, dt, by_value in zip(self.rows, self.dtypes, scalars):
            if r == _STRLIST:     # row bounds, the strings' offsets, their bytes
                out += [(_INT64, False), (_INT64, False), (_INT64, False), (dt, False)]
            elif r is not None:
                out += [(_INT64, False), (_INT64, False), (dt, False)]
            else:
                out.append((dt, by_value))
        return tuple(out)


def _program(tgt, kernel, comp):
    layout = VarLayout(kernel, comp)
    nb_args, nb_ret = layout.numba_types()
    prog = EmittedKernel(tgt.dialect, kernel.error_model)
    prog.entry = prog.function(kernel.py_func, nb_args, nb_ret)
    return prog, layout


def var_kernel(prog: EmittedKernel, layout: VarLayout, inputs, validity=None) -> str:
    """The kernel: one work item per row (see the module docstring);
    ``validity``: the index of the result bitmap among ``inputs`` (null rows
    skipped, :func:`ckernels.context.device_validity.guard_lines`)."""
    d = prog.dialect
    fe = prog.entry
    i32 = d.int32
    params, arrays = kernel_parameters(d, inputs)
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(params)})", "{"]
    lines += element_offsets(d, arrays)
    if validity is not None:
        lines += guard_lines(d, validity, layout.ret_dtype)
    cargs = row_arguments(prog, layout, inputs, lines)
    lines.append(f"  {i32} err = 0;")
    lines += store_result(d, fe.ct(fe.ret_type), layout.ret_dtype,
                          f"{fe.cname}({', '.join(cargs + ['&err'])})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def row_arguments(prog: EmittedKernel, layout: VarLayout, inputs, lines, oks=None) -> list:
    """The kernel lines reading the work item's arguments (appended to
    ``lines``): its rows' views and numbers; their C names.  ``oks``: per
    ``?T`` argument its presence (a C condition): the function gets ``None``
    where it is false (:mod:`ckernels.jit.device_null_strings`)."""
    fe = prog.entry
    cargs, pos = [], 0
    for k, (r, dt) in enumerate(zip(layout.rows, layout.dtypes)):
        opt = oks is not None and k in oks
        pos = _row_argument(prog, layout, inputs, lines, k, r, dt, pos, f"x{k}v" if opt else
                            f"x{k}")
        if opt:
            from .c_emit import optionals as _opt
            pt = fe.arg_types[k]
            lines.append(f"  {fe.ct(pt)} x{k} = {_opt.present(fe, pt, oks[k], f'x{k}v')};")
        cargs.append(f"x{k}")
    return cargs


def _row_argument(prog, layout, inputs, lines, k, r, dt, pos, x) -> int:
    """The lines reading argument ``k`` into the C variable ``x`` (an
    optional's value: of its value type); the next operand's position."""
    d = prog.dialect
    fe = prog.entry
    i64, u8 = d.int64, d.uint8
    pt = fe.arg_types[k]
    if layout.optional[k]:
        pt = pt.type
    pct = fe.ct(pt)
    if r == _STRLIST:
        lo, hi, so, sd = pos, pos + 1, pos + 2, pos + 3
        lines += [f"  {i64} lo{k} = *({d.pointer(i64, True)})(ck_in{lo} + o_in{lo});",
                  f"  {i64} hi{k} = *({d.pointer(i64, True)})(ck_in{hi} + o_in{hi});",
                  f"  {pct} {x};",
                  f"  {x}.o = ({d.pointer(i64, True)})(ck_in{so} + o_in{so}) + lo{k};",
                  f"  {x}.d = ck_in{sd} + o_in{sd}; {x}.n = hi{k} - lo{k};"]
        return pos + 4
    if r is not None:
        lo, hi, vals = pos, pos + 1, pos + 2
        size = dt.numpy.itemsize
        lines += [f"  {i64} lo{k} = *({d.pointer(i64, True)})(ck_in{lo} + o_in{lo});",
                  f"  {i64} hi{k} = *({d.pointer(i64, True)})(ck_in{hi} + o_in{hi});",
                  f"  {pct} {x};"]
        if r == "string":
            lines += [f"  {x}.p = ck_in{vals} + o_in{vals} + lo{k}; {x}.n = hi{k} - lo{k};"]
        else:
            lines += [f"  {x}.p = ck_in{vals} + o_in{vals} + lo{k} * {size};",
                      f"  {x}.n[0] = hi{k} - lo{k}; {x}.s[0] = {size};"]
        return pos + 3
    dt_in, by_value = inputs[pos]
    if by_value:
        v = f"ck_in{pos}_val"
    else:
        st = u8 if dt_in.kind == "b" else d.ctype(dt_in)
        v = f"*({d.pointer(st, True)})(ck_in{pos} + o_in{pos})"
    v = f"({v} != 0)" if dt_in.kind == "b" or _is_bool(pt) else f"({pct}){v}"
    lines.append(f"  {pct} {x} = {v};")
    return pos + 1


def source(tgt, kernel, comp, inputs=None, emitted=None, validity=None) -> str:
    """The whole program of one var-dim signature for ``tgt`` (``emitted``:
    ``(program, layout)`` already made; ``validity``: see :func:`var_kernel`)."""
    prog, layout = emitted if emitted is not None else _program(tgt, kernel, comp)
    if inputs is None:
        inputs = layout.inputs([False] * len(layout.rows))
    return tgt.dialect.header(prog) + prog.text() + "\n" + var_kernel(prog, layout, inputs,
                                                                      validity)


def _select(kernel, args, fname):
    for comp in kernel._compiled.values():
        if (not comp.core and "string" not in comp.sig.args) or len(comp.sig.args) != len(args):
            continue
        if row_args_fit(args, comp.sig.args):
            return comp
    have = ", ".join(f"{a.type}" if isinstance(a, DeviceVarArray) else
                     f"{a._element.name} array" if isinstance(a, DeviceArray) else
                     type(a).__name__ for a in args)
    raise CKTypeError(f"{fname}: no signature fits the device arguments ({have}); "
                      f"signatures: {'; '.join(kernel.signatures)}")


def call(kernel, args, out=None, validity=None):
    """``kernel(*args)`` with :class:`DeviceVarArray` arguments: one result per
    row, a :class:`DeviceArray` of the rows' count.  ``validity``: ``(bitmap,
    bit offset)`` of the result (:mod:`ckernels.jit.device_nulls`): rows whose
    bit is 0 are skipped (their result 0)."""
    from . import device
    fname = kernel.__name__
    if out is not None:
        raise NotSupportedError(f"{fname}: out= with var-dim device arguments")
    ctx = launch.context_of(fname, [a.offsets if isinstance(a, DeviceVarArray) else a
                                    for a in args])
    tgt = device.target(ctx.kind)
    comp = _select(kernel, args, fname)
    per, prog, layout = checked_program(tgt, kernel, comp, ctx, fname, with_ret=True)
    n, operands, layouts, scalars = row_operands(args, fname)
    res = DeviceArray.empty(ctx, (n,), layout.ret_dtype.numpy)
    key = ("var", n, tuple(lay for lay in layouts), tuple(scalars), validity is not None)
    plan = per.get(key)
    vk = None
    if validity is not None:   # the result bitmap (broadcast) and its bit offset
        operands += list(validity)
        layouts += [((), ()), ((), ())]
    if plan is None:
        inputs = layout.inputs(scalars)
        if validity is not None:
            vk = len(inputs)
            inputs += ((_UINT8, False), (element_type("uint64"), True))
        plan = launch.remember(per, key, launch.build_plan(
            ctx, source(tgt, kernel, comp, inputs, (prog, layout), vk), prog.errors, fname, tgt.dialect.title,
            inputs, operands, layout.ret_dtype.numpy, operand_layouts=layouts,
            out_layout=((n,), (layout.ret_dtype.numpy.itemsize,))))
    plan(res, operands)
    return res


def row_call_start(kernel, comp, args, out, fname, result: str, with_ret: bool, make):
    """The start of a call whose work items are the rows of the device
    arguments and whose result is a ``result`` (the string, split and append
    paths): ``out=`` refused, the arguments' context and its target, and
    ``comp``'s program checked against them (:func:`checked_program`, made by
    ``make``): ``(ctx, tgt, per, prog, layout)``."""
    from . import device
    if out is not None:
        raise NotSupportedError(f"{fname}: out= with a {result} result on a device")
    ctx = launch.context_of(fname, [a.offsets if isinstance(a, DeviceVarArray) else a
                                    for a in args])
    tgt = device.target(ctx.kind)
    per, prog, layout = checked_program(tgt, kernel, comp, ctx, fname, with_ret=with_ret,
                                        make=make)
    return ctx, tgt, per, prog, layout


def checked_program(tgt, kernel, comp, ctx, fname, with_ret: bool, make=None):
    """The per-context plans of ``comp``, its emitted program and layout (made
    once, by ``make(tgt, kernel, comp)``: this module's program by default),
    checked against ``ctx``: every element type (the result's too when
    ``with_ret``) has a C type on the target, float64 only where supported."""
    per = tgt.plans(comp, ctx)
    got = per.get("program")
    if got is None:
        got = per.setdefault("program", (make or _program)(tgt, kernel, comp))
    prog, layout = got
    tgt.check_device(ctx, prog.fp64_user, fname)
    for dt in layout.dtypes + ((layout.ret_dtype,) if with_ret else ()):
        if tgt.dialect.ctype(dt) is None:
            raise NotSupportedError(f"{fname}: element type {dt.name} is not supported on "
                                    f"{tgt.kind} devices")
        if dt.name == "float64" and not ctx.supports_fp64:
            raise NotSupportedError(f"{fname}: float64 operands on a device without fp64 "
                                    f"support ({ctx.describe()})")
    return per, prog, layout


def row_operands(args, fname):
    """The kernel operands of one-row-per-work-item arguments: the row count
    ``n`` (one for all), the operands (a var-dim argument's row starts and
    ends as two offset views, then its values -- for strings per row, their
    offsets and bytes), their ``(shape, strides)`` layouts, and which
    arguments are scalars."""
    lengths = {len(a) for a in args if isinstance(a, (DeviceVarArray, DeviceArray))}
    if len(lengths) != 1:
        raise InvalidArgumentError(f"{fname}: the device arguments have {sorted(lengths)} "
                                   "rows (one count for all)")
    n = lengths.pop()
    operands, layouts = [], []
    for a in args:
        if isinstance(a, DeviceVarArray) and str(a.element) == _STRLIST:
            offs = a.offsets
            operands += [offs[:-1], offs[1:], a.values.offsets, a.values.values]
            layouts += [((n,), (8,)), ((n,), (8,)), ((), ()), ((), ())]
        elif isinstance(a, DeviceVarArray):
            offs = a.offsets
            operands += [offs[:-1], offs[1:], a.values]
            layouts += [((n,), (8,)), ((n,), (8,)), ((), ())]
        elif isinstance(a, DeviceArray):
            operands.append(a)
            layouts.append((a.shape, a.strides))
        else:
            operands.append(a.item() if isinstance(a, np.generic) else a)
            layouts.append(((), ()))
    scalars = [not isinstance(a, (DeviceVarArray, DeviceArray)) for a in args]
    return n, operands, layouts, scalars


def row_args_fit(args, names, string_scalars: bool = True) -> bool:
    """Whether one-row-per-work-item ``args`` fit the signature's argument
    ``names``: device strings a ``string``, var-dim arrays their var dims,
    1-d device arrays their element type, scalars a name without dims (not
    ``string`` unless ``string_scalars``)."""
    for a, name in zip(args, names):
        c = _dims.core(name) if _dims.is_dimensioned(name) else None
        if isinstance(a, DeviceVarArray) and str(a.element) == "string":
            ok = name == "string"
        elif isinstance(a, DeviceVarArray):
            ok = c is not None and c.has_var and str(a.element) == " * ".join(
                ["var"] * c.ndim + [c.dtype])
        elif isinstance(a, DeviceArray):
            ok = c is None and a.ndim == 1 and a._element.name == name
        else:
            ok = c is None and (string_scalars or name != "string") and launch._is_scalar(a)
        if not ok:
            return False
    return True
