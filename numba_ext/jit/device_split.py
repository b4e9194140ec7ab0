"""Rows of strings as results on devices: ``var * string(...)`` signatures
whose function returns a split (``return s.split(sep)``, ``rsplit``,
``splitlines``) or a row argument, or appends views to its output parameter
(``out.append(w)`` of arguments, slices, pieces of splits, a row's strings),
build a ``N * var * string`` :class:`~ckernels.device.varlen.DeviceVarArray`
without a device ``malloc``, as :mod:`ckernels.jit.device_strings` builds
strings:

1. the *sizing* pass runs the function and counts, per work item, its pieces
   and their bytes (the list is a lazy list of views: nothing is copied);
2. ``ck_device_scan_exclusive_i64`` of the counts gives the outer offsets
   (the last: the number of strings), of the byte counts each row's start in
   the data buffer (the last: its size);
3. the *writing* pass runs the function again and writes, per piece, its
   start into the strings' offsets (at the row's first piece) and its bytes
   into the data buffer.

A ``var * ?string`` signature (``out.append(None)``, ``return [None if w ==
"x" else w for w in s.split()]``) runs the same kernel; its row is a
``ck_srow_t`` with presence bytes: the writing pass also writes, per string,
1 (a value) or 0 (``None``: a slot of length 0), and one small kernel packs
them into Arrow's bitmap (``device_null_strings``' packing, the one of
``?string`` results).  The result's values are then a
:class:`~ckernels.device.nulls.DeviceOptionArray` of the strings.

One kernel, one program build (the pass is an argument); the function comes
from the one emitter.  Errors raised by the function come back from the
sizing pass as on the CPU.
"""

from __future__ import annotations

import numpy as np

from ..context.device_program import KERNEL_NAME, element_offsets, error_return, \
    kernel_parameters
from ..device import launch
from ..device.array import DeviceArray
from ..device.nulls import DeviceOptionArray
from ..device.varlen import DeviceVarArray
from ..errors import NotSupportedError
from .. import types as _t
from . import device_var as _dv
from .c_emit import EmittedKernel
from .c_emit import string_results as _results
from .c_emit import strings as _strings
from .device_null_strings import _pack
from .device_strings import _scan, scratch_of
from .signature import element_type

__all__ = ["call", "source", "RESULT", "RESULTS"]

RESULT = "var * string"
#: the results built here: rows of strings, rows of optional strings
RESULTS = (RESULT, "var * ?string")
_INT64 = element_type("int64")
_UINT8 = element_type("uint8")
_INT32 = element_type("int32")


class _Layout(_dv.VarLayout):
    """The arguments as :class:`~ckernels.jit.device_var.VarLayout` reads
    them; the result a row of strings (Numba's ``List(unicode_type)``)."""

    def __init__(self, kernel, comp):
        sig = comp.sig
        fname = kernel.__name__
        try:
            self.rows = tuple(_dv._var_row(a) for a in sig.args)
        except NotSupportedError as exc:
            raise NotSupportedError(f"{fname}: {sig.text}: {exc}") from None
        #: the function appends to an output parameter (``out.append(s)``)
        #: instead of returning a list
        self.appends = kernel._out_param is not None
        #: a ``var * ?string`` result: items may be None (presence bytes)
        self.option = sig.ret == RESULTS[1]
        self.string_result = False
        self.optional, self.ret_optional = (False,) * len(self.rows), False
        self.dtypes = tuple(_UINT8 if r in ("string", _dv._STRLIST) else
                            element_type(r if r is not None else a)
                            for r, a in zip(self.rows, sig.args))
        self.ret_dtype = _UINT8
        for dt in self.dtypes:
            if dt.kind not in "biuf":
                raise NotSupportedError(f"{fname}: {sig.text}: {dt.name} arguments next to "
                                        "var dims on a device (numbers and bools only)")

    def numba_types(self):
        from numba.core import types
        from .._numba.varstrings import var_string_builder_type
        nb, _ = super().numba_types()
        if self.appends:
            return nb + (self.builder(),), None
        return nb, types.List(types.unicode_type)

    def builder(self):
        """The Numba type of the row's output parameter: the CPU's builder
        of the same result (``out.append(None)`` types with a ``var *
        ?string`` one)."""
        from .._numba.varstrings import var_string_builder_type
        if self.option:
            from .cpu_dims_results import var_option_builder
            return var_option_builder("?string")
        return var_string_builder_type


def _program(tgt, kernel, comp):
    layout = _Layout(kernel, comp)
    nb_args, nb_ret = layout.numba_types()
    prog = EmittedKernel(tgt.dialect, kernel.error_model)
    if not layout.appends:
        # a list the function builds and returns is the row (jit.c_emit.out_lists);
        # typed as Numba infers it (a list of ?str items, say: appended as strings)
        prog.out_list = (kernel.py_func, layout.builder())
        nb_ret = None
    prog.entry = prog.function(kernel.py_func, nb_args, nb_ret)
    if prog.entry.out_list is None and not layout.appends and \
            not _strings.is_list(prog.entry.ret_type):
        raise NotSupportedError(f"{kernel.__name__}: {comp.sig.text}: the function returns "
                                f"{prog.entry.ret_type}, not a list of strings")
    if prog.entry.out_list is not None:
        layout.appends = True       # the kernel of the out.append form
    return prog, layout


#: the operands after the function's: per row its byte count / start, the
#: strings' offsets, the data buffer, the pass (0: sizing, 1: writing)
_EXTRA = ((_INT64, False), (_INT64, False), (_UINT8, False), (_INT32, True))
#: then, for a function storing built text: the scratch buffer and per row
#: its scratch length / offset
_SCRATCH = ((_UINT8, False), (_INT64, False))
#: then, for a ``var * ?string`` result: per string its presence byte
_PRESENT = ((_UINT8, False),)


def _extra(prog, layout) -> tuple:
    return _EXTRA + (_SCRATCH if scratch_of(prog) else ()) + \
        (_PRESENT if layout.option else ())


def _present_index(prog, n_in) -> int:
    return n_in + 4 + (2 if scratch_of(prog) else 0)


def _kernel(prog: EmittedKernel, layout, inputs) -> str:
    d = prog.dialect
    fe = prog.entry
    i64, u8, i32 = d.int64, d.uint8, d.int32
    n_in = len(inputs)
    params, arrays = kernel_parameters(d, tuple(inputs) + _extra(prog, layout))
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(params)})", "{"]
    lines += element_offsets(d, arrays)
    cargs = _dv.row_arguments(prog, layout, inputs, lines)
    w, pi = d.pointer(u8), d.pointer(i64)
    nb, no, nd, nm = n_in, n_in + 1, n_in + 2, n_in + 3
    it, st = _strings.ITER_T, _strings.STR_T
    if layout.appends:
        return "\n".join(lines + _append_body(prog, layout, cargs, n_in)) + "\n"
    np_ = _present_index(prog, n_in)
    mark = "      ck_p[k] = 1;" if layout.option else ""
    lines += [f"  int ck_mode = ck_in{nm}_val;",
              f"  {pi}ck_cnt = ({pi})(ck_out + o_out);",
              f"  {pi}ck_byt = ({pi})(ck_in{nb} + o_in{nb});",
              f"  {i32} err = 0;",
              f"  {fe.ct(fe.ret_type)} r = {fe.cname}({', '.join(cargs + ['&err'])});",
              error_return(d),
              f"  {it} ck_it; ck_it.l = r; ck_it.i = 0; ck_it.pos = 0; {st} ck_s;",
              "  if (!ck_mode) {",
              f"    {i64} c = 0, b = 0;",
              "    while (ck_strlist_next(&ck_it, &ck_s)) { c++; b += ck_s.n; }",
              "    *ck_cnt = c; *ck_byt = b;",
              "  } else {",
              f"    {pi}ck_o = ({pi})(ck_in{no} + o_in{no});",
              f"    {w}ck_d = ({w})(ck_in{nd} + o_in{nd});",
              f"    {i64} k = *ck_cnt, at = *ck_byt;"] + (
              [f"    {w}ck_p = ({w})(ck_in{np_} + o_in{np_});"] if layout.option else []) + [
              "    while (ck_strlist_next(&ck_it, &ck_s)) {"] + ([mark] if mark else []) + [
              f"      ck_o[k++] = at;",
              f"      for ({i64} j = 0; j < ck_s.n; j++) ck_d[at + j] = ck_s.p[j];",
              "      at += ck_s.n;",
              "    }",
              "  }",
              "}"]
    return "\n".join(lines) + "\n"


def _append_body(prog, layout, cargs, n_in) -> list[str]:
    """The kernel's body when the function appends to its output parameter
    (``ck_srow_t``, :mod:`ckernels.jit.c_emit.arena`): the sizing pass counts,
    the writing pass writes from the row's first string and byte (and, for
    ``var * ?string``, each string's presence byte)."""
    from .c_emit.arena import SROW_T
    d = prog.dialect
    fe = prog.entry
    i64, u8, i32 = d.int64, d.uint8, d.int32
    w, pi = d.pointer(u8), d.pointer(i64)
    nb, no, nd, nm = n_in, n_in + 1, n_in + 2, n_in + 3
    scratch = scratch_of(prog)
    lines = [f"  int ck_mode = ck_in{nm}_val;",
             f"  {pi}ck_cnt = ({pi})(ck_out + o_out);",
             f"  {pi}ck_byt = ({pi})(ck_in{nb} + o_in{nb});",
             f"  {SROW_T} ck_row; ck_row.w = ck_mode; ck_row.cnt = 0; ck_row.at = 0;",
             f"  ck_row.o = ({pi})(ck_in{no} + o_in{no}); ck_row.d = ({w})(ck_in{nd} + o_in{nd});",
             "  if (ck_mode) { ck_row.cnt = *ck_cnt; ck_row.at = *ck_byt; }",
             "  ck_row.c0 = ck_row.cnt; ck_row.a0 = ck_row.at;"]
    if layout.option:
        k = _present_index(prog, n_in)
        lines.append(f"  ck_row.pr = ({w})(ck_in{k} + o_in{k});")
    else:
        lines.append("  ck_row.pr = 0;")
    cargs = cargs + ["&ck_row"]
    if fe.builds_rows:      # built text: the sinks of jit.c_emit.string_results
        sk = _results.SINK_T
        if scratch:
            sd, so = n_in + 4, n_in + 5
            sp = f"({pi})(ck_in{so} + o_in{so})"
            lines.append(f"  {sk} ck_s = {{ ({w})(ck_in{sd} + o_in{sd}) + (ck_mode ? *{sp} : 0), "
                         "0, ck_mode };")
        else:
            lines.append(f"  {sk} ck_s = {{ ck_row.d, 0, 0 }};")
        cargs.append("&ck_s")
    lines += [f"  {i32} err = 0;",
              f"  {fe.cname}({', '.join(cargs + ['&err'])});",
              error_return(d),
              "  if (!ck_mode) { *ck_cnt = ck_row.cnt; *ck_byt = ck_row.at;" +
              (f" *{sp} = ck_s.n;" if scratch else "") + " }",
              "}"]
    return lines


def source(tgt, kernel, comp, inputs=None, emitted=None) -> str:
    """The program of one ``var * string`` or ``var * ?string`` signature
    for ``tgt`` (its kernel runs both passes)."""
    prog, layout = emitted if emitted is not None else _program(tgt, kernel, comp)
    if inputs is None:
        inputs = layout.inputs([False] * len(layout.rows))
    return tgt.dialect.header(prog) + prog.text() + "\n" + _kernel(prog, layout, inputs)


def _select(kernel, args):
    for comp in kernel._compiled.values():
        if comp.sig.ret in RESULTS and len(comp.sig.args) == len(args) and \
                _dv.row_args_fit(args, comp.sig.args, string_scalars=False):
            return comp
    return None


def call(kernel, args, out=None):
    """``kernel(*args)`` with a ``var * string`` (``var * ?string``) result:
    a :class:`DeviceVarArray` of rows of strings (with an option child:
    strings and their bitmap), one per row of the device arguments; None
    when no such signature fits."""
    fname = kernel.__name__
    comp = _select(kernel, args)
    if comp is None:
        return None
    ctx, tgt, per, prog, layout = _dv.row_call_start(kernel, comp, args, out, fname,
                                                     comp.sig.ret, with_ret=False,
                                                     make=_program)
    n, operands, layouts, scalars = _dv.row_operands(args, fname)
    scratch = scratch_of(prog)
    key = ("split", n, tuple(layouts), tuple(scalars))
    plan = per.get(key)
    if plan is None:
        inputs = layout.inputs(scalars)
        plan = launch.remember(per, key, launch.build_plan(
            ctx, source(tgt, kernel, comp, inputs, (prog, layout)), prog.errors, fname,
            tgt.dialect.title, tuple(inputs) + _extra(prog, layout),
            operands + [0] * (len(_extra(prog, layout))), np.int64,
            operand_layouts=layouts + [((n,), (8,)), ((), ()), ((), ()), ((), ())] + (
                [((), ()), ((n,), (8,))] if scratch else []) + (
                [((), ())] if layout.option else []),
            out_layout=((n,), (8,))))
    outer = DeviceArray.empty(ctx, (n + 1,), np.int64)
    outer[n:] = 0
    starts = DeviceArray.empty(ctx, (n + 1,), np.int64)
    starts[n:] = 0
    one = DeviceArray.empty(ctx, (1,), np.uint8)
    one64 = DeviceArray.empty(ctx, (1,), np.int64)
    s_offs = s_data = None
    if scratch:     # per row the bytes of its stored built text
        s_offs = DeviceArray.empty(ctx, (n + 1,), np.int64)
        s_offs[n:] = 0
    present = [one] if layout.option else []
    plan(outer, operands + [starts, one64, one, 0] + ([one, s_offs] if scratch else []) +
         present)
    count = _scan(outer, n)
    total = _scan(starts, n)
    if scratch:
        s_total = _scan(s_offs, n)
        s_data = DeviceArray.empty(ctx, (s_total,), np.uint8) if s_total else one
    inner = DeviceArray.empty(ctx, (count + 1,), np.int64)
    inner[count:] = total
    data = DeviceArray.empty(ctx, (total,), np.uint8) if total else one
    if layout.option:      # per string its presence byte, written by the writing pass
        ok = DeviceArray.empty(ctx, (max(count, 1),), np.uint8)
        present = [ok]
    if n:
        plan(outer, operands + [starts, inner, data, 1] + ([s_data, s_offs] if scratch else []) +
             present)
    strings = DeviceVarArray(ctx, _t.Type("string"), inner, data if total else data[:0])
    if layout.option:
        strings = DeviceOptionArray(strings, _pack(ctx, ok, count), 0)
    return DeviceVarArray(ctx, _t.Type(comp.sig.ret), outer, strings)
