"""String results on devices: ``string(...)`` signatures over device arrays
(``f"item-{i}"`` over an int64 array, ``s + t`` over string arrays) build a
:class:`~ckernels.device.varlen.DeviceVarArray` of strings without a device
``malloc``, in three steps:

1. the *sizing* pass runs the function with counting sinks
   (:mod:`ckernels.jit.c_emit.string_results`) and writes each work item's
   result length in bytes (and, when the function stores intermediate text,
   its scratch length);
2. ``ck_device_scan_exclusive_i64`` turns the lengths into Arrow offsets on
   the device (the last one is the total: the size of the data buffer);
3. the *writing* pass runs the function again with sinks pointing at the
   work item's offset in the data buffer (and the scratch buffer) and writes
   the same bytes; a result that is a view (an argument, a slice, stored
   text) is copied into place.

Both passes are one kernel (one program build), told apart by an argument;
the function comes from the one emitter; the
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
from ..errors import CKTypeError
from .. import types as _t
from . import device_var as _dv
from .c_emit import EmittedKernel
from .c_emit import optionals as _opt
from .c_emit import string_results as _results
from .c_emit import strings as _strings
from .signature import element_type

__all__ = ["call", "build", "source", "scratch_of", "wants"]

_INT64 = element_type("int64")
_UINT8 = element_type("uint8")
_INT32 = element_type("int32")


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


def _extra(scratch: bool) -> tuple:
    """The kernel operands after the function's: the data buffer, (the
    scratch buffer, its lengths/offsets,) and the pass (0: sizing,
    1: writing, by value)."""
    return ((_UINT8, False),) + (((_UINT8, False), (_INT64, False)) if scratch else ()) + \
        ((_INT32, True),)


def _kernel(prog: EmittedKernel, layout, inputs, nulls=None) -> str:
    """The kernel of both passes around the entry (one program: one build).
    Sizing (``ck_mode`` 0): the sinks count; the result's length goes to
    ``out[i]`` (and the scratch length to the scratch operand).  Writing
    (``ck_mode`` 1): ``out[i]`` is the work item's offset in the data buffer
    (and the scratch operand its scratch offset); the sinks write there.
    ``nulls`` (:class:`ckernels.jit.device_null_strings.RowNulls`): the
    ``?T`` arguments' presence, the guard that skips null rows (length 0, as
    every null) and the presence bytes of a ``?string`` result, written by
    the sizing pass."""
    d = prog.dialect
    fe = prog.entry
    b = _results.builds(fe)
    scratch = b is not None and b.scratch
    i64, u8, i32, sk = d.int64, d.uint8, d.int32, _results.SINK_T
    n_in = len(inputs)
    params, arrays = kernel_parameters(d, tuple(inputs) + _extra(scratch))
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(params)})", "{"]
    lines += element_offsets(d, arrays)
    w = d.pointer(u8)
    mode = f"ck_in{n_in + (3 if scratch else 1)}_val"
    lines.append(f"  int ck_mode = {mode};")
    sp = None
    if scratch:
        so = n_in + 2
        sp = f"({d.pointer(i64)})(({w})ck_in{so} + o_in{so})"
    if nulls is not None:
        lines += nulls.guard_lines(d, [f"*({d.pointer(i64)})(ck_out + o_out) = 0;"] +
                                   ([f"*{sp} = 0;"] if sp else []), sizing="!ck_mode")
    cargs = _dv.row_arguments(prog, layout, inputs, lines,
                              nulls.oks if nulls is not None else None)
    lines += [f"  {i64} ck_off = ck_mode ? *({d.pointer(i64)})(ck_out + o_out) : 0;",
              f"  {sk} ck_r = {{ ({w})(ck_in{n_in} + o_in{n_in}) + ck_off, 0, ck_mode }};"]
    if scratch:
        sd = n_in + 1
        lines.append(f"  {sk} ck_s = {{ ({w})(ck_in{sd} + o_in{sd}) + "
                     f"(ck_mode ? *{sp} : 0), 0, ck_mode }};")
    else:
        lines.append(f"  {sk} ck_s = {{ ck_r.p, 0, 0 }};")
    opt = _opt.is_optional(fe.ret_type)
    lines += [f"  {i32} err = 0;",
              f"  {fe.ct(fe.ret_type)} ck_rv = "
              f"{fe.cname}({', '.join(cargs + ['&ck_s', '&ck_r', '&err'])});",
              error_return(d),
              f"  {_strings.c_type(fe)} r = ck_rv{'.v' if opt else ''};",
              "  if (ck_mode) {",
              "    if (r.n && r.p != ck_r.p) {",
              f"      for ({i64} j = 0; j < r.n; j++) ck_r.p[j] = r.p[j];",
              "    }",
              "  } else {",
              f"    *({d.pointer(i64)})(ck_out + o_out) = r.n;"]
    if scratch:
        lines.append(f"    *{sp} = ck_s.n;")
    if nulls is not None:
        lines += ["    " + ln for ln in nulls.present_lines(d, "ck_rv.ok" if opt else "1")]
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def source(tgt, kernel, comp, inputs=None, emitted=None, nulls=None) -> str:
    """The program of one string signature for ``tgt`` (its kernel runs
    both passes; ``nulls``: see :func:`_kernel`)."""
    prog, layout = emitted if emitted is not None else _program(tgt, kernel, comp)
    if inputs is None:
        inputs = layout.inputs([False] * len(layout.rows))
    text = _kernel(prog, layout, inputs, nulls)      # first: it may declare helpers
    return tgt.dialect.header(prog) + prog.text() + "\n" + text


def scratch_of(prog) -> bool:
    """Whether the program's function stores intermediate text (``ck_scr``)."""
    b = _results.builds(prog.entry)
    return b is not None and b.scratch


def _select(kernel, args, fname):
    for comp in kernel._compiled.values():
        if comp.sig.ret != "string" or len(comp.sig.args) != len(args):
            continue
        if _dv.row_args_fit(args, comp.sig.args, string_scalars=False):
            return comp
    return None


def call(kernel, args, out=None):
    """``kernel(*args)`` with a string result: a :class:`DeviceVarArray` of
    strings, one per row of the device arguments."""
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
    ctx, tgt, per, prog, layout = _dv.row_call_start(kernel, comp, args, out, fname, "string",
                                                     with_ret=False, make=_program)
    n, operands, layouts, scalars = _dv.row_operands(args, fname)
    offsets, values = build(kernel, comp, ctx, tgt, per, (prog, layout), n, operands, layouts,
                            scalars, fname)
    return DeviceVarArray(ctx, _t.Type("string"), offsets, values)


def build(kernel, comp, ctx, tgt, per, emitted, n, operands, layouts, scalars, fname,
          nulls=None):
    """Both passes over ``n`` rows: ``(offsets, values)`` of the strings.
    ``nulls`` (:class:`ckernels.jit.device_null_strings.RowNulls`): its
    operands follow the function's, its key is part of the plan's."""
    prog, layout = emitted
    scratch = scratch_of(prog)
    key = ("strings", n, tuple(layouts), tuple(scalars),
           None if nulls is None else nulls.key)
    inputs = layout.inputs(scalars)
    if nulls is not None:
        inputs += nulls.inputs
        operands = operands + nulls.operands
        layouts = layouts + nulls.layouts(n)
    plan = per.get(key)
    if plan is None:
        plan = launch.remember(per, key, launch.build_plan(
            ctx, source(tgt, kernel, comp, inputs, (prog, layout), nulls), prog.errors, fname,
            tgt.dialect.title, tuple(inputs) + _extra(scratch), operands + [0] * (
                4 if scratch else 2),
            np.int64, operand_layouts=layouts + [((), ())] + (
                [((), ()), ((n,), (8,))] if scratch else []) + [((), ())],
            out_layout=((n,), (8,))))
    offsets = DeviceArray.empty(ctx, (n + 1,), np.int64)
    offsets[n:] = 0
    one = DeviceArray.empty(ctx, (1,), np.uint8)
    s_offs = None
    if scratch:
        s_offs = DeviceArray.empty(ctx, (n + 1,), np.int64)
        s_offs[n:] = 0
        plan(offsets, operands + [one, one, s_offs, 0])
    else:
        plan(offsets, operands + [one, 0])
    total = _scan(offsets, n)
    data = DeviceArray.empty(ctx, (total,), np.uint8) if total else one
    if scratch:
        s_total = _scan(s_offs, n)
        s_data = DeviceArray.empty(ctx, (s_total,), np.uint8) if s_total else one
        plan(offsets, operands + [data, s_data, s_offs, 1])
    else:
        plan(offsets, operands + [data, 1])
    return offsets, (data if total else data[:0])


def _scan(offsets: DeviceArray, n: int) -> int:
    """Lengths -> offsets in place (``n + 1`` values, the last 0); the total."""
    check(lib.ck_device_scan_exclusive_i64(offsets.buffer._buf, offsets.offset, n + 1, ffi.NULL))
    return int(offsets.buffer.to_numpy(offsets.offset + 8 * n, np.int64, 1)[0])
