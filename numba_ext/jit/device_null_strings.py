"""Null-aware strings on devices: ``?string`` arguments, ``?string`` results
and nulls propagating through string functions, on OpenCL and CUDA from the
one emitter (``docs/nulls.md`` "On devices").

A call lands here (from :mod:`ckernels.jit.device_nulls`) when strings meet
nulls:

* a null-aware signature (``?T`` arguments or a ``?R`` result) with a string
  among its arguments or as its result: ``?string(?string)``,
  ``int64(?string)``, ``?int64(?string)``, ``?string(int64)``...;
* a plain signature with a ``string`` result over option device arrays
  (``string(string)`` on strings with nulls): nulls propagate.

One work item per row, as :mod:`ckernels.jit.device_var` (number results)
and :mod:`ckernels.jit.device_strings` (string results: sizing -> scan ->
writing) run them, with the operands of :class:`RowNulls` after the
function's: per ``?T`` argument holding nulls its bitmap and bit offset (the
function gets ``None`` where the bit is 0: Numba's ``Optional``, in C
``ck_opt_<T>_t``, :mod:`ckernels.jit.c_emit.optionals`); the AND of the
bitmaps of option arrays passed for plain parameters (the *guard*: such a
row is null and the body never runs there: length 0, value 0); and for a
``?R`` result one presence byte per row, packed into Arrow's bitmap by one
small kernel (:data:`~ckernels.jit.c_emit.optionals.PACK_KERNEL`).  A null
string is a slot of length 0 in the offsets (Arrow's layout), so the sizing
pass gives 0 for it and the writing pass writes nothing.

The result is a :class:`~ckernels.device.nulls.DeviceOptionArray` (values
and bitmap) when a row can be null, else a plain device array.
"""

from __future__ import annotations

import numpy as np

from ..device import launch
from ..device.array import DeviceArray
from ..device.nulls import DeviceOptionArray, combine
from ..device.varlen import DeviceVarArray
from ..errors import CKTypeError, InvalidArgumentError, NotSupportedError
from .. import dialects
from .. import types as _t
from . import dims as _dims
from . import device_strings as _ds
from . import device_var as _dv
from .c_emit import EmittedKernel
from .c_emit import optionals as _opt
from ..context.device_program import KERNEL_NAME, element_offsets, error_return, \
    kernel_parameters
from .signature import element_type

__all__ = ["call", "RowNulls", "source", "program"]

_UINT8 = element_type("uint8")
_UINT64 = element_type("uint64")


def _strip(name: str) -> str:
    return name[1:] if name.startswith("?") else name


def _where(kernel) -> str:
    code = getattr(kernel.py_func, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    return f"(in {kernel.py_func.__qualname__}{where})"


def _aware(sig) -> bool:
    return bool(sig.ret and sig.ret.startswith("?")) or any(a.startswith("?")
                                                             for a in sig.args)


def _stringy(sig) -> bool:
    return "string" in (_strip(sig.ret or ""),) + tuple(_strip(a) for a in sig.args)


def _fits(args, names) -> bool:
    """Whether ``args`` (option arrays and ``None`` among them) fit the
    argument ``names`` of a signature (``?`` stripped) row by row."""
    vals = []
    for a, name in zip(args, names):
        if a is None:
            if not name.startswith("?") or _strip(name) == "string":
                return False
            vals.append(0)
        else:
            vals.append(a._values if isinstance(a, DeviceOptionArray) else a)
    return _dv.row_args_fit(vals, [_strip(n) for n in names], string_scalars=False)


def select(kernel, args):
    """The compiled signature this module runs for ``args``, or None: a
    null-aware one with strings, else (option arrays among ``args``) a plain
    one with a string result; the first that fits."""
    has_opt = any(isinstance(a, DeviceOptionArray) for a in args)
    for comp in kernel._compiled.values():
        sig = comp.sig
        if len(sig.args) != len(args):
            continue
        if _aware(sig) and _stringy(sig) or (has_opt and sig.ret == "string"):
            if _fits(args, sig.args):
                return comp
    return None


def wants(kernel, args) -> bool:
    """Whether a call of ``kernel`` with ``args`` is this module's (strings
    and nulls together)."""
    return any(_stringy(c.sig) and (_aware(c.sig) or c.sig.ret == "string")
               for c in kernel._compiled.values()) and \
        (any(isinstance(a, (DeviceOptionArray, DeviceVarArray)) or a is None for a in args) or
         any(_aware(c.sig) and _stringy(c.sig) for c in kernel._compiled.values()))


class RowNulls:
    """The null operands of a row kernel, after the function's ``n_in``
    operands: ``bitmaps`` (argument index -> its bitmap and bit offset),
    ``scalars`` (argument index -> whether a scalar for a ``?T`` parameter is
    present), ``guard`` (bitmap, bit offset) or None, ``present`` (whether
    the kernel writes a presence byte per row)."""

    def __init__(self, n_in: int, optional, bitmaps: dict, scalars: dict, guard, present: bool):
        self.inputs: tuple = ()
        self.operands: list = []
        self._layouts: list = []
        self.oks: dict = {}
        pos = n_in
        for k, opt in enumerate(optional):
            if not opt:
                continue
            if k in bitmaps:
                bits, off = bitmaps[k]
                self.inputs += ((_UINT8, False), (_UINT64, True))
                self.operands += [bits, int(off)]
                self._layouts += ["b", "v"]
                self.oks[k] = _bit(pos, "i")
                pos += 2
            else:
                self.oks[k] = "1" if scalars.get(k, True) else "0"
        self.guard = None
        if guard is not None:
            self.inputs += ((_UINT8, False), (_UINT64, True))
            self.operands += [guard[0], int(guard[1])]
            self._layouts += ["b", "v"]
            self.guard = pos
            pos += 2
        self.present = None
        if present:
            self.inputs += ((_UINT8, False),)
            self.operands.append(None)        # the presence bytes: set per call
            self._layouts.append("e")
            self.present = pos
        self.key = (tuple(sorted(self.oks.items())), self.guard, self.present)

    def layouts(self, n: int) -> list:
        """The ``(shape, strides)`` of the null operands over ``n`` rows."""
        return [((n,), (1,)) if x == "e" else ((), ()) for x in self._layouts]

    def guard_lines(self, d, stores, sizing: str = "1") -> list[str]:
        """A null row (the guard's bit 0): ``stores`` (C statements) and a
        presence byte 0 where ``sizing`` holds, then return."""
        if self.guard is None:
            return []
        body = list(stores) + self.present_lines(d, "0")
        return [f"  if (!{_bit(self.guard, 'i')}) {{",
                f"    if ({sizing}) {{ {' '.join(body)} }}",
                "    return;", "  }"]

    def present_lines(self, d, ok: str) -> list[str]:
        """The presence byte ``ok`` of the row (when the result is ``?R``)."""
        if self.present is None:
            return []
        p = self.present
        return [f"*({d.pointer(d.uint8)})(ck_in{p} + o_in{p}) = ({d.uint8})(({ok}) ? 1 : 0);"]


def _bit(k: int, i: str) -> str:
    """Bit ``off + i`` of bitmap operand ``k`` (its bit offset: ``k + 1``)."""
    b = f"(ck_in{k + 1}_val + {i})"
    return f"((ck_in{k}[o_in{k} + ({b} >> 3)] >> ({b} & 7)) & 1)"


def _number_kernel(prog: EmittedKernel, layout, inputs, nulls: RowNulls) -> str:
    """One work item per row with a number or bool result (``?R`` or
    ``R``): the guard, the arguments (``?T`` ones from their bits), the
    value (0 under a null) and its presence byte."""
    d = prog.dialect
    fe = prog.entry
    out = layout.ret_dtype
    st = d.uint8 if out.kind == "b" else d.ctype(out)
    params, arrays = kernel_parameters(d, inputs)
    store = f"*({d.pointer(st)})(ck_out + o_out)"
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(params)})", "{"]
    lines += element_offsets(d, arrays)
    lines += nulls.guard_lines(d, [f"{store} = ({st})0;"])
    cargs = _dv.row_arguments(prog, layout, inputs, lines, nulls.oks)
    opt = _opt.is_optional(fe.ret_type)
    lines += [f"  {d.int32} err = 0;",
              f"  {fe.ct(fe.ret_type)} r = {fe.cname}({', '.join(cargs + ['&err'])});",
              error_return(d)]
    val, ok = ("r.v", "r.ok") if opt else ("r", "1")
    conv = f"({val} ? 1 : 0)" if out.kind == "b" else f"({st}){val}"
    lines += [f"  {store} = ({ok}) ? {conv} : ({st})0;"]
    lines += ["  " + ln for ln in nulls.present_lines(d, ok)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _program(tgt, kernel, comp):
    layout = _dv.VarLayout(kernel, comp, string_result=_strip(comp.sig.ret) == "string")
    nb_args, nb_ret = layout.numba_types()
    prog = EmittedKernel(tgt.dialect, kernel.error_model)
    prog.string_entry = kernel.py_func
    prog.entry = prog.function(kernel.py_func, nb_args, nb_ret)
    return prog, layout


def source(tgt, kernel, comp, guard: bool = False) -> str:
    """The program of a null-aware string signature over device arrays, each
    ``?T`` argument with its bitmap (``f.source(target)``); ``guard``: with
    the guard of option arrays passed for plain parameters (as a call with
    nulls propagating builds it)."""
    return program(tgt, kernel, comp, guard)[0]


def program(tgt, kernel, comp, guard: bool = False) -> tuple:
    """``(source, inputs)`` of :func:`source`: the kernel's operands
    ``(DType row, by value)`` after the output (a string result's data,
    scratch and pass included)."""
    prog, layout = _program(tgt, kernel, comp)
    inputs = layout.inputs([False] * len(layout.rows))
    nulls = RowNulls(len(inputs), layout.optional,
                     {k: (None, 0) for k, o in enumerate(layout.optional) if o}, {},
                     (None, 0) if guard else None, layout.ret_optional)
    inputs += nulls.inputs
    if layout.string_result:
        src = _ds.source(tgt, kernel, comp, inputs, (prog, layout), nulls)
        return src, inputs + _ds._extra(_ds.scratch_of(prog))
    text = _number_kernel(prog, layout, inputs, nulls)
    return tgt.dialect.header(prog) + prog.text() + "\n" + text, inputs


def call(kernel, args, out=None):
    """``kernel(*args)`` where strings meet nulls (see the module
    docstring); NotImplemented when no signature of this module fits."""
    fname = kernel.__name__
    comp = select(kernel, args)
    if comp is None:      # another signature of the kernel may take them
        if all(_aware(c.sig) and _stringy(c.sig) for c in kernel._compiled.values()):
            have = ", ".join("None" if a is None else f"{a.type}" if isinstance(
                a, (DeviceVarArray, DeviceOptionArray)) else f"{a._element.name} array"
                if isinstance(a, DeviceArray) else type(a).__name__ for a in args)
            raise CKTypeError(f"{fname}: no signature fits the device arguments ({have}); "
                              f"signatures: {'; '.join(kernel.signatures)}")
        return NotImplemented
    sig = comp.sig
    if comp.core or _dims.is_dimensioned(_strip(sig.ret)):
        raise NotSupportedError(f"{fname}: {sig.text}: null-aware signatures with dims or "
                                f"dimensioned results on a device {_where(kernel)}")
    if out is not None:
        raise NotSupportedError(f"{fname}: out= with {sig.text} on a device (the result is "
                                "a new array)")
    for a in args:
        if isinstance(a, DeviceOptionArray) and a.ndim != 1:
            raise NotSupportedError(f"{fname}: {sig.text} over an option device array of "
                                    f"shape {a.shape} (one dim with strings) {_where(kernel)}")
    string_result = _strip(sig.ret) == "string"
    vals = [a._values if isinstance(a, DeviceOptionArray) else a for a in args]
    ctx, tgt, per, prog, layout = _dv.row_call_start(
        kernel, comp, [0 if v is None else v for v in vals], out, fname, sig.text,
        with_ret=not string_result, make=_program)
    if any(isinstance(v, (DeviceArray, DeviceVarArray)) and v.context != ctx for v in vals):
        raise InvalidArgumentError(f"{fname}: arguments in different contexts")
    n, operands, layouts, scalars = _dv.row_operands([0 if v is None else v for v in vals],
                                                     fname)
    bitmaps, present_scalars, guard = {}, {}, []
    for k, (a, opt) in enumerate(zip(args, layout.optional)):
        if isinstance(a, DeviceOptionArray):
            if opt:
                bitmaps[k] = (a._bits, a._bit_offset)
            else:
                guard.append((a._bits, a._bit_offset))
        elif a is None:
            present_scalars[k] = False
    gb = combine(ctx, guard, n) if guard else None
    nulls = RowNulls(len(layout.inputs(scalars)), layout.optional, bitmaps, present_scalars,
                     gb, layout.ret_optional)
    if not string_result and layout.ret_dtype.kind not in "biuf":
        raise NotSupportedError(f"{fname}: {sig.text}: a {layout.ret_dtype.name} result on "
                                f"a device {_where(kernel)}")
    ok = DeviceArray.empty(ctx, (max(n, 1),), np.uint8) if nulls.present is not None else None
    if ok is not None:
        nulls.operands[-1] = ok
    if string_result:
        offsets, data = _ds.build(kernel, comp, ctx, tgt, per, (prog, layout), n, operands,
                                  layouts, scalars, fname, nulls)
        res = DeviceVarArray(ctx, _t.Type("string"), offsets, data)
    else:
        res = _numbers(kernel, comp, ctx, tgt, per, prog, layout, n, operands, layouts,
                       scalars, nulls, fname)
    if ok is not None:
        return DeviceOptionArray(res, _pack(ctx, ok, n), 0)
    if gb is not None:
        return DeviceOptionArray(res, gb[0], gb[1])
    return res


def _numbers(kernel, comp, ctx, tgt, per, prog, layout, n, operands, layouts, scalars, nulls,
             fname):
    key = ("null_rows", n, tuple(layouts), tuple(scalars), nulls.key)
    inputs = layout.inputs(scalars) + nulls.inputs
    plan = per.get(key)
    if plan is None:
        src = _number_kernel(prog, layout, inputs, nulls)
        src = tgt.dialect.header(prog) + prog.text() + "\n" + src
        plan = launch.remember(per, key, launch.build_plan(
            ctx, src, prog.errors, fname, tgt.dialect.title, inputs,
            operands + nulls.operands, layout.ret_dtype.numpy,
            operand_layouts=layouts + nulls.layouts(n),
            out_layout=((n,), (layout.ret_dtype.numpy.itemsize,))))
    res = DeviceArray.empty(ctx, (n,), layout.ret_dtype.numpy)
    plan(res, operands + nulls.operands)
    return res


def _pack(ctx, ok: DeviceArray, n: int) -> DeviceArray:
    """Arrow's bitmap (bit offset 0) of ``n`` presence bytes, on the device."""
    bits = DeviceArray.empty(ctx, (max((n + 7) // 8, 1),), np.uint8)
    if n:
        d = dialects.device(ctx.kind)
        prog = ctx.build_program(_opt.pack_kernel(d))
        prog.launch(_opt.PACK_KERNEL, (n + 7) // 8, (bits.buffer, 0), np.uint64(bits.offset),
                    (ok.buffer, 0), np.uint64(ok.offset), np.uint64(n),
                    local_size=launch.LOCAL_SIZE)
    return bits
