"""String results on devices: ``string(...)`` signatures over device arrays
(``f"item-{i}"`` over an int64 array, ``s + t`` over string arrays) build a
:class:`~ckernels.device.varlen.DeviceVarArray` of strings without a device
``malloc``, in three steps:

1. the *sizing* kernel runs the function with counting sinks
   (:mod:`ckernels.jit.c_emit.string_results`) and writes each work item's
   result length in bytes (and, when the function stores intermediate text,
   its scratch length);
2. ``ck_device_scan_exclusive_i64`` turns the lengths into Arrow offsets on
   the device (the last one is the total: the size of the data buffer);
3. the *writing* kernel runs the function again with sinks pointing at the
   work item's offset in the data buffer (and the scratch buffer) and writes
   the same bytes; a result that is a view (an argument, a slice, stored
   text) is copied into place.

Both kernels come from the one emitter and the same emitted function; the
arguments are read as :mod:`ckernels.jit.device_var` reads them (numbers,
``string`` and ``var * T`` rows).  Errors raised by the function come back
from the sizing pass as on the CPU.
"""

from __future__ import annotations

import numpy as np

from .._native import check, ffi, lib
from ..context.device_program import KERNEL_NAME, element_offsets, error_return, \
    kernel_parameters
from ..device import launch
from ..device.array import DeviceArray
from ..device.varlen import DeviceVarArray
from ..errors import CKTypeError, InvalidArgumentError, NotSupportedError
from .. import types as _t
from . import device_var as _dv
from . import dims as _dims
from .c_emit import EmittedKernel
from .c_emit import string_results as _results
from .signature import element_type

__all__ = ["call", "source", "sources", "wants"]

_INT64 = element_type("int64")
_UINT8 = element_type("uint8")


def wants(kernel) -> bool:
    """Whether ``kernel`` has a ``string`` result signature."""
    return any(c.sig.ret == "string" for c in kernel._compiled.values())


def _program(tgt, kernel, comp):
    layout = _dv.VarLayout(kernel, comp, string_result=True)
    nb_args, nb_ret = layout.numba_types()
    prog = EmittedKernel(tgt.dialect, kernel.error_model)
    prog.string_entry = kernel.py_func
    prog.entry = prog.function(kernel.py_func, nb_args, nb_ret)
    return prog, layout


def _kernel(prog: EmittedKernel, layout, inputs, writing: bool) -> str:
    """The sizing (``writing`` False) or writing kernel around the entry."""
    d = prog.dialect
    fe = prog.entry
    b = _results.builds(fe)
    scratch = b is not None and b.scratch
    i64, u8, i32, sk = d.int64, d.uint8, d.int32, _results.SINK_T
    n_in = len(inputs)
    extra = []
    if writing:
        extra.append((_UINT8, False))                # the data buffer
        if scratch:
            extra += [(_UINT8, False), (_INT64, False)]   # scratch, its offsets
    elif scratch:
        extra.append((_INT64, False))                # the scratch lengths (written)
    params, arrays = kernel_parameters(d, tuple(inputs) + tuple(extra))
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(params)})", "{"]
    lines += element_offsets(d, arrays)
    cargs = _dv.row_arguments(prog, layout, inputs, lines)
    w = d.pointer(u8)
    if writing:
        lines += [f"  {i64} ck_off = *({d.pointer(i64)})(ck_out + o_out);",
                  f"  {sk} ck_r = {{ ({w})(ck_in{n_in} + o_in{n_in}) + ck_off, 0, 1 }};"]
        if scratch:
            s, so = n_in + 1, n_in + 2
            lines.append(f"  {sk} ck_s = {{ ({w})(ck_in{s} + o_in{s}) + "
                         f"*({d.pointer(i64, True)})(ck_in{so} + o_in{so}), 0, 1 }};")
        else:
            lines.append(f"  {sk} ck_s = {{ 0, 0, 0 }};")
    else:
        lines.append(f"  {sk} ck_r = {{ 0, 0, 0 }}, ck_s = {{ 0, 0, 0 }};")
    lines += [f"  {i32} err = 0;",
              f"  {fe.ct(fe.ret_type)} r = {fe.cname}({', '.join(cargs + ['&ck_s', '&ck_r', '&err'])});",
              error_return(d)]
    if writing:
        lines += ["  if (r.n && r.p != ck_r.p) {",
                  f"    for ({i64} j = 0; j < r.n; j++) ck_r.p[j] = r.p[j];",
                  "  }"]
    else:
        lines.append(f"  *({d.pointer(i64)})(ck_out + o_out) = r.n;")
        if scratch:
            lines.append(f"  *({d.pointer(i64)})(({w})ck_in{n_in} + o_in{n_in}) = ck_s.n;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def sources(tgt, kernel, comp, inputs=None, emitted=None) -> tuple[str, str]:
    """The sizing and the writing program of one string signature for
    ``tgt``."""
    prog, layout = emitted if emitted is not None else _program(tgt, kernel, comp)
    if inputs is None:
        inputs = layout.inputs([False] * len(layout.rows))
    head = tgt.dialect.header(prog) + prog.text() + "\n"
    return (head + _kernel(prog, layout, inputs, False),
            head + _kernel(prog, layout, inputs, True))


def source(tgt, kernel, comp) -> str:
    """Both programs, the sizing one first (for ``f.source(target)``)."""
    sizing, writing = sources(tgt, kernel, comp)
    return (f"/* ---- sizing pass: each work item's result length ---- */\n{sizing}\n"
            f"/* ---- writing pass: the text at the scanned offsets ---- */\n{writing}")


def _select(kernel, args, fname):
    for comp in kernel._compiled.values():
        if comp.sig.ret != "string" or len(comp.sig.args) != len(args):
            continue
        ok = True
        for a, name in zip(args, comp.sig.args):
            c = _dims.core(name) if _dims.is_dimensioned(name) else None
            if isinstance(a, DeviceVarArray) and str(a.element) == "string":
                ok = name == "string"
            elif isinstance(a, DeviceVarArray):
                ok = c is not None and c.has_var and str(a.element) == " * ".join(
                    ["var"] * c.ndim + [c.dtype])
            elif isinstance(a, DeviceArray):
                ok = c is None and a.ndim == 1 and a._element.name == name
            else:
                ok = c is None and name != "string" and launch._is_scalar(a)
            if not ok:
                break
        if ok:
            return comp
    return None


def call(kernel, args, out=None):
    """``kernel(*args)`` with a string result: a :class:`DeviceVarArray` of
    strings, one per row of the device arguments."""
    from . import device
    fname = kernel.__name__
    comp = _select(kernel, args, fname)
    if comp is None:
        if any(c.sig.ret != "string" for c in kernel._compiled.values()):
            return None         # another signature of the kernel may take them
        have = ", ".join(f"{a.type}" if isinstance(a, DeviceVarArray) else
                         f"{a._element.name} array" if isinstance(a, DeviceArray) else
                         type(a).__name__ for a in args)
        raise CKTypeError(f"{fname}: no signature fits the device arguments ({have}); "
                          f"signatures: {'; '.join(kernel.signatures)}")
    if out is not None:
        raise NotSupportedError(f"{fname}: out= with a string result on a device")
    ctx = launch.context_of(fname, [a.offsets if isinstance(a, DeviceVarArray) else a
                                    for a in args])
    tgt = device.target(ctx.kind)
    per = tgt.plans(comp, ctx)
    got = per.get("program")
    if got is None:
        got = per.setdefault("program", _program(tgt, kernel, comp))
    prog, layout = got
    tgt.check_device(ctx, prog.fp64_user, fname)
    for dt in layout.dtypes:
        if tgt.dialect.ctype(dt) is None:
            raise NotSupportedError(f"{fname}: element type {dt.name} is not supported on "
                                    f"{tgt.kind} devices")
        if dt.name == "float64" and not ctx.supports_fp64:
            raise NotSupportedError(f"{fname}: float64 operands on a device without fp64 "
                                    f"support ({ctx.describe()})")
    lengths = {len(a) for a in args if isinstance(a, (DeviceVarArray, DeviceArray))}
    if len(lengths) != 1:
        raise InvalidArgumentError(f"{fname}: the device arguments have {sorted(lengths)} "
                                   "rows (one count for all)")
    n = lengths.pop()
    operands, layouts = [], []
    for a in args:
        if isinstance(a, DeviceVarArray) and str(a.element) == _dv._STRLIST:
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
    scratch = _results.builds(prog.entry) is not None and _results.builds(prog.entry).scratch
    key = ("strings", n, tuple(layouts), tuple(scalars))
    plans = per.get(key)
    if plans is None:
        inputs = layout.inputs(scalars)
        size_src, write_src = sources(tgt, kernel, comp, inputs, got)
        size_in = tuple(inputs) + (((_INT64, False),) if scratch else ())
        write_in = tuple(inputs) + ((_UINT8, False),) + \
            (((_UINT8, False), (_INT64, False)) if scratch else ())
        size_lay = layouts + ([((n,), (8,))] if scratch else [])
        write_lay = layouts + [((), ())] + ([((), ()), ((n,), (8,))] if scratch else [])
        title = tgt.dialect.title
        plans = launch.remember(per, key, (
            launch.build_plan(ctx, size_src, prog.errors, fname, title, size_in, operands,
                              np.int64, operand_layouts=size_lay, out_layout=((n,), (8,))),
            launch.build_plan(ctx, write_src, prog.errors, fname, title, write_in, operands,
                              np.int64, operand_layouts=write_lay, out_layout=((n,), (8,)))))
    size_plan, write_plan = plans
    offsets = DeviceArray.empty(ctx, (n + 1,), np.int64)
    offsets[n:] = 0
    extra = []
    if scratch:
        s_offs = DeviceArray.empty(ctx, (n + 1,), np.int64)
        s_offs[n:] = 0
        extra = [s_offs]
    size_plan(offsets, operands + extra)
    total = _scan(offsets, n)
    data = DeviceArray.empty(ctx, (max(total, 1),), np.uint8)
    if scratch:
        s_total = _scan(s_offs, n)
        s_data = DeviceArray.empty(ctx, (max(s_total, 1),), np.uint8)
        extra = [s_data, s_offs]
    write_plan(offsets, operands + [data] + extra)
    values = data if total else data[:0]
    return DeviceVarArray(ctx, _t.Type("string"), offsets, values)


def _scan(offsets: DeviceArray, n: int) -> int:
    """Lengths -> offsets in place (``n + 1`` values, the last 0); the total."""
    check(lib.ck_device_scan_exclusive_i64(offsets.buffer._buf, offsets.offset, n + 1, ffi.NULL))
    return int(offsets.buffer.to_numpy(offsets.offset + 8 * n, np.int64, 1)[0])
