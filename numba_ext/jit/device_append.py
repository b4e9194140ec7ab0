"""Var results of unknown length on devices: ``var * T(var * U)``,
``var * T(T)`` and the like, whose function builds its row by
``out.append(x)`` in a loop whose count depends on the data (keep the
positive values of a row, the digits of a number), or returns a list it
builds (``return [x * 2.0 for x in row if x > 0]``: the list is the row,
:mod:`ckernels.jit.c_emit.out_lists`).  No sizing pass can run
ahead of such a loop, so the rows go through a device arena
(``ckernel/device_arena.h``):

1. one kernel, one work item per row: the function runs with its output
   parameter a row state in the arena (:mod:`ckernels.jit.c_emit.arena`);
   each append past the row's chunk reserves a chunk twice as large with an
   atomic add on the arena's counter and moves the row there; the work item
   stores its row's start and length;
2. the counter after the launch is the room the rows reserved, whatever the
   order the work items ran in (a row's reservations depend on its length
   only): above the arena's capacity, the rows that overflowed stored
   nothing and the launch runs once more with an arena of exactly that
   capacity (the per-row room of the last call sizes the next first arena);
3. ``ck_device_scan_exclusive_i64`` turns the lengths into Arrow offsets and
   ``ck_device_arena_compact`` copies each row from its chunk to its offset:
   a :class:`~ckernels.device.varlen.DeviceVarArray` (offsets + values), the
   layout an upload makes.

A ``var * ?T`` result (``out.append(None if x < 0 else x * 2.0)``, ``return
[None if x % 2 else x // 2 for x in r]``) runs the same kernel with the
CPU's ``var * ?T`` builder type: the row is a ``ck_aorow_<T>_t``
(``CK_DEVICE_ARENA_OPTION_ROW``) with one presence byte per item in a byte
arena of the same capacity at the item's index; the bytes are compacted as
the values are (element size 1, the same starts and offsets) and packed into
the child's bitmap by ``device_null_strings``' packing kernel: the values of
the :class:`DeviceVarArray` are a :class:`~ckernels.device.nulls.DeviceOptionArray`.

Arguments are read as :mod:`ckernels.jit.device_var` reads them (numbers,
1-d device arrays, ``var * T`` rows, strings); errors raised by the function
come back as on the CPU.  Refused with one line: results other than one var
dim of numbers or bools, optional or not (``var * var * T``; ``var * string``
and ``var * ?string`` are :mod:`.device_split`'s), ``out=``.
"""

from __future__ import annotations

import numpy as np

from .._native import check, lib
from ..context.device_program import KERNEL_NAME, element_offsets, error_return, \
    kernel_parameters
from ..device import launch
from ..device.array import DeviceArray
from ..device.nulls import DeviceOptionArray
from ..device.varlen import DeviceVarArray
from ..errors import NotSupportedError
from .. import types as _t
from . import device_var as _dv
from . import dims as _dims
from .c_emit import EmittedKernel
from .device_null_strings import _pack
from .device_strings import _scan
from .signature import element_type

__all__ = ["call", "source", "wants"]

_INT64 = element_type("int64")
_UINT8 = element_type("uint8")
_FIRST = 8          # CK_DEVICE_ARENA_FIRST: the room of a row's first chunk


def _var_result(comp) -> str | None:
    """The element dtype name of a ``var * T`` result, None for other results."""
    ret = comp.sig.ret
    if not ret or not _dims.is_dimensioned(ret):
        return None
    c = _dims.core(ret)
    return c.dtype if c.has_var else None


def wants(kernel=None, comp=None) -> bool:
    """Whether ``kernel`` has a signature with a var result (or the compiled
    signature ``comp`` is one)."""
    if comp is not None:
        return _var_result(comp) is not None
    return any(_var_result(c) is not None for c in kernel._compiled.values())


def _element(comp, kernel):
    """The result's item dtype name (``float64``, ``?float64``)."""
    ret = comp.sig.ret
    c = _dims.core(ret)
    if c.ndim != 1 or c.dtype in ("string", "?string") or \
            element_type(c.dtype.lstrip("?")).kind not in "biuf":
        code = kernel.py_func.__code__
        where = f" at {code.co_filename}:{code.co_firstlineno}"
        raise NotSupportedError(f"{kernel.__name__}: {comp.sig.text}: a {ret} result on a device is not "
                                f"supported{where} (var * T and var * ?T of numbers or bools, "
                                "var * string and var * ?string results are built on devices; "
                                ".get() the arguments for others)")
    return c.dtype


def _program(tgt, kernel, comp):
    from .._numba.varbuilder import VarBuilderType
    el = _element(comp, kernel)
    layout = _dv.VarLayout(kernel, comp, var_result=el.lstrip("?"))
    #: a ``var * ?T`` result: per item a presence byte (the arena's byte twin)
    layout.option = el.startswith("?")
    nb_args, _ = layout.numba_types()
    prog = EmittedKernel(tgt.dialect, kernel.error_model)
    if layout.option:   # the CPU's builder of the same result: out.append(None) types
        from .cpu_dims_results import var_option_builder
        builder = var_option_builder(el)
    else:
        builder = VarBuilderType(element_type(el).numba)
    if kernel._out_param is None:
        # a returned list: the row (jit.c_emit.out_lists), the same C function
        prog.out_list = (kernel.py_func, builder)
        prog.entry = prog.function(kernel.py_func, nb_args, None)
    else:
        prog.entry = prog.function(kernel.py_func, nb_args + (builder,), None)
    return prog, layout


def _kernel(prog: EmittedKernel, layout, inputs) -> str:
    d = prog.dialect
    fe = prog.entry
    i64, i32 = d.int64, d.int32
    n_in = len(inputs) - 4 - (1 if layout.option else 0)
    params, arrays = kernel_parameters(d, inputs)
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(params)})", "{"]
    lines += element_offsets(d, arrays)
    cargs = _dv.row_arguments(prog, layout, inputs[:n_in], lines)
    builder = fe.out_list.builder if fe.out_list is not None else fe.arg_types[-1]
    row_t = fe.ct(builder).rstrip(" *")
    pre = "ck_aorow_" if layout.option else "ck_arow_"
    key = row_t[len(pre):-len("_t")]
    el = d.pointer(d.ctype(layout.ret_dtype) if layout.ret_dtype.kind != "b" else d.uint8)
    a, c, cap, s = n_in, n_in + 1, n_in + 2, n_in + 3
    p = n_in + 4
    present = f"({d.pointer(d.uint8)})(ck_in{p} + o_in{p}), " if layout.option else ""
    lines += [f"  {row_t} ck_row;",
              f"  {pre}init_{key}(&ck_row, ({el})(ck_in{a} + o_in{a}), {present}"
              f"({d.pointer(i64)})(ck_in{c} + o_in{c}), ck_in{cap}_val);",
              f"  {i32} err = 0;",
              f"  {fe.cname}({', '.join(cargs + ['&ck_row', '&err'])});",
              error_return(d),
              f"  *({d.pointer(i64)})(ck_out + o_out) = ck_row.len;",
              f"  *({d.pointer(i64)})(ck_in{s} + o_in{s}) = ck_row.start;",
              "}"]
    return "\n".join(lines) + "\n"


def _inputs(layout, scalars) -> tuple:
    """The kernel operands: the function's (:meth:`VarLayout.inputs`), then
    the arena (result elements), its counter, its capacity (by value), the
    rows' starts and, for a ``var * ?T`` result, the arena's presence bytes."""
    return tuple(layout.inputs(scalars)) + ((layout.ret_dtype, False), (_INT64, False),
                                            (_INT64, True), (_INT64, False)) + (
        ((_UINT8, False),) if layout.option else ())


def source(tgt, kernel, comp, inputs=None, emitted=None) -> str:
    """The program of one var-result signature for ``tgt``."""
    prog, layout = emitted if emitted is not None else _program(tgt, kernel, comp)
    if inputs is None:
        inputs = _inputs(layout, [False] * len(layout.rows))
    return tgt.dialect.header(prog) + prog.text() + "\n" + _kernel(prog, layout, inputs)


def _select(kernel, args):
    for comp in kernel._compiled.values():
        if _var_result(comp) is None or len(comp.sig.args) != len(args):
            continue
        if _dv.row_args_fit(args, comp.sig.args, string_scalars=False):
            return comp
    return None


def call(kernel, args, out=None):
    """``kernel(*args)`` with a var result: a :class:`DeviceVarArray` of
    rows, one per row of the device arguments; None when no var-result
    signature takes these arguments (another signature may)."""
    fname = kernel.__name__
    comp = _select(kernel, args)
    if comp is None:
        return None     # the other device paths take or refuse these arguments
    ctx, tgt, per, prog, layout = _dv.row_call_start(kernel, comp, args, out, fname, "var",
                                                     with_ret=True, make=_program)
    n, operands, layouts, scalars = _dv.row_operands(args, fname)
    el = layout.ret_dtype
    key = ("append", n, tuple(layouts), tuple(scalars))
    plan = per.get(key)
    if plan is None:
        inputs = _inputs(layout, scalars)
        plan = launch.remember(per, key, launch.build_plan(
            ctx, source(tgt, kernel, comp, inputs, (prog, layout)), prog.errors, fname,
            tgt.dialect.title, inputs, operands + [0] * (len(inputs) - len(operands)), np.int64,
            operand_layouts=layouts + [((), ()), ((), ()), ((), ()), ((n,), (8,))] + (
                [((), ())] if layout.option else []),
            out_layout=((n,), (8,))))
    lens = DeviceArray.empty(ctx, (n + 1,), np.int64)
    lens[n:] = 0
    starts = DeviceArray.empty(ctx, (max(n, 1),), np.int64)
    counter = DeviceArray.empty(ctx, (1,), np.int64)
    # the first arena: the room per row the last call needed, else 8 per row
    # and as much again as the var arguments' values
    per_row = per.get("arena_per_row")
    given = sum(int(a.offsets[-1:].get()[0]) for a in args if isinstance(a, DeviceVarArray)
                and str(a.element) != "string") if per_row is None else 0
    capacity = max(64, _FIRST * n + given if per_row is None else int(per_row * n) + _FIRST)
    for _ in range(2):
        arena = DeviceArray.empty(ctx, (capacity,), el.numpy)
        # var * ?T: the arena's byte twin, per item its presence byte
        present = [DeviceArray.empty(ctx, (capacity,), np.uint8)] if layout.option else []
        counter[:] = 0
        plan(lens, operands + [arena, counter, capacity, starts] + present)
        need = int(counter.get()[0])
        if need <= capacity:
            break
        capacity = need     # the rows' reservations do not depend on the order
    else:
        raise NotSupportedError(f"{fname}: the device arena overflowed twice ({need} elements "
                                f"reserved): the function's appends depend on more than "
                                "its row")
    per["arena_per_row"] = need / max(n, 1)
    total = _scan(lens, n)
    values = DeviceArray.empty(ctx, (max(total, 1),), el.numpy)
    size = el.numpy.itemsize
    check(lib.ck_device_arena_compact(arena.buffer._buf, arena.offset, starts.buffer._buf,
                                      starts.offset, lens.buffer._buf, lens.offset, n, size,
                                      values.buffer._buf, values.offset))
    if not layout.option:
        return DeviceVarArray(ctx, _t.Type(f"var * {el.name}"), lens, values[:total])
    # the presence bytes: compacted as the values are, packed into the child's bitmap
    ok = DeviceArray.empty(ctx, (max(total, 1),), np.uint8)
    check(lib.ck_device_arena_compact(present[0].buffer._buf, present[0].offset,
                                      starts.buffer._buf, starts.offset, lens.buffer._buf,
                                      lens.offset, n, 1, ok.buffer._buf, ok.offset))
    items = DeviceOptionArray(values[:total], _pack(ctx, ok, total), 0)
    return DeviceVarArray(ctx, _t.Type(f"var * ?{el.name}"), lens, items)
