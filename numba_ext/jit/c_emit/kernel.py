"""The kernel around an entry function: one work item per element of the
flattened broadcast index space (per-operand byte strides in a metadata
buffer; a strided 1-d fast path), the first error code kept in an error
buffer; :func:`emit_kernel` makes the whole program for a jitted function."""

from __future__ import annotations

from ... import dtypes
from ...errors import NotSupportedError
from .. import structs as _structs
from ...dialects import Dialect
from .numba_types import _unlit, _is_bool
from .program import EmittedKernel


KERNEL_NAME = "ck_kernel"


def emit_kernel(py_func, arg_types, return_type, dialect: Dialect,
                error_model: str = "python") -> EmittedKernel:
    """The program for one kernel over ``arg_types`` -> ``return_type`` (Numba
    types) in ``dialect``, with the kernel of :func:`kernel_wrapper` around
    its entry function (every operand an array of the signature's types;
    ``EmittedKernel.entry`` and :func:`kernel_wrapper` make others)."""
    d = dialect
    prog = EmittedKernel(d, error_model)
    ret = _unlit(return_type)
    fe = prog.function(py_func, tuple(_unlit(a) for a in arg_types), ret)
    prog.entry = fe
    prog.kernel_text = entry_wrapper(prog, [(_element_of(t), False) for t in arg_types],
                                     _element_of(ret))
    prog.source = d.header(prog) + prog.text() + "\n" + prog.kernel_text
    return prog


def _element_of(t):
    """The element type (a ``dtypes`` row or a struct) of a Numba type."""
    from numba.core import types
    t = _unlit(t)
    if isinstance(t, types.Record):
        return _structs.of_record(t)
    return dtypes.of_numba(t)


def entry_wrapper(prog: EmittedKernel, inputs, out) -> str:
    """:func:`kernel_wrapper` around ``prog.entry`` (a jitted function)."""
    fe = prog.entry
    params = [(fe.ct(t), _is_bool(t)) for t in fe.arg_types]
    return kernel_wrapper(prog.dialect, fe.cname, params,
                          (fe.ct(fe.ret_type), _is_bool(fe.ret_type)),
                          inputs, out)


def kernel_wrapper(d: Dialect, entry: str, params, ret, inputs, out) -> str:
    """The kernel calling ``entry`` once per element.

    ``entry`` is a device function ``R entry(P0 x0, ..., int *err)``;
    ``params`` its parameters' ``(C type, is_bool)``, ``ret`` its result's.
    ``inputs`` says what each operand is: ``(DType row, by_value)`` -- the
    element type in memory (converted to the parameter's type as it is read:
    a safe cast) and whether it is passed by value instead of as an array.
    ``out`` is the element type written (the result converted to it).

    Kernel arguments, in order: the output buffer, its byte offset and byte
    stride; per input, the same triple for an array operand (stride 0:
    broadcast) or its value (one argument; bool as uchar, since kernels may not
    take bool); the N-d metadata buffer (int64: shape[ndim], then byte
    strides[ndim] of the output and of each *array* input), ``ndim`` (<= 1: the
    strided fast path, no metadata reads), the element count ``n`` and the
    error buffer (one int32: the first error code)."""
    i64, u64, u8, i32 = d.int64, d.uint64, d.uint8, d.int32
    args = [f"{d.pointer(u8)}ck_out", f"{u64} ck_out_off", f"{i64} ck_out_stride"]
    arrays = []
    for k, (dt, by_value) in enumerate(inputs):
        if by_value:
            ct = u8 if dt.kind == "b" else d.ctype(dt)
            args.append(f"{ct} ck_in{k}_val")
        else:
            arrays.append(k)
            args += [f"{d.pointer(u8, True)}ck_in{k}", f"{u64} ck_in{k}_off",
                     f"{i64} ck_in{k}_stride"]
    args += [f"{d.pointer(i64, True)}ck_meta", f"{i32} ck_ndim", f"{u64} ck_n",
             f"{d.pointer(i32)}ck_errbuf"]
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(args)})", "{",
             f"  {u64} i = {d.thread_index};",
             "  if (i >= ck_n) return;",
             f"  {u64} o_out = ck_out_off;"]
    lines += [f"  {u64} o_in{k} = ck_in{k}_off;" for k in arrays]
    lines += ["  if (ck_ndim <= 1) {",
              "    o_out += i * ck_out_stride;"]
    lines += [f"    o_in{k} += i * ck_in{k}_stride;" for k in arrays]
    lines += ["  } else {",
              f"    {u64} rest = i;",
              "    for (int d = ck_ndim - 1; d >= 0; d--) {",
              f"      {u64} idx = rest % ({u64})ck_meta[d];",
              f"      rest /= ({u64})ck_meta[d];",
              "      o_out += idx * ck_meta[ck_ndim + d];"]
    lines += [f"      o_in{k} += idx * ck_meta[{j + 2} * ck_ndim + d];"
              for j, k in enumerate(arrays)]
    lines += ["    }", "  }"]
    cargs = []
    for k, ((dt, by_value), (pct, pbool)) in enumerate(zip(inputs, params)):
        if by_value:
            v = f"ck_in{k}_val"
        else:
            st = u8 if dt.kind == "b" else d.ctype(dt)
            v = f"*({d.pointer(st, True)})(ck_in{k} + o_in{k})"
        if dt.kind == "b" or pbool:
            v = f"({v} != 0)"
        elif dt.kind == "V":    # a struct: copied, never converted
            if by_value:
                raise NotSupportedError(f"{d.title}: a struct scalar argument (pass a device "
                                        "array of structs)")
            v = f"({v})"
        else:
            v = f"({pct}){v}"
        lines.append(f"  {pct} x{k} = {v};")
        cargs.append(f"x{k}")
    rct, rbool = ret
    lines += [f"  {i32} err = 0;",
              f"  {rct} r = {entry}({', '.join(cargs + ['&err'])});",
              f"  if (err) {{ {d.error_store('ck_errbuf', 'err')} return; }}"]
    if out.kind == "b":
        lines.append(f"  *({d.pointer(u8)})(ck_out + o_out) = r ? 1 : 0;")
    else:
        oct_ = d.ctype(out)
        r = "r" if oct_ == rct else f"({oct_})r"
        lines.append(f"  *({d.pointer(oct_)})(ck_out + o_out) = {r};")
    lines.append("}")
    return "\n".join(lines) + "\n"
