"""Signatures with core dims on devices (OpenCL, CUDA): emission and calls.

A jitted function whose signature has fixed or symbolic core dims
(``"float64(N * float64, N * float64)"``, ``"3 * float64(3 * float64, 3 *
float64)"``, ``"M * float64(M * N * float64, N * float64)"``; ``docs/dims.md``)
runs on a device as it does on the CPU: the function sees each dimensioned
argument whole and the call maps it over the operands' outer dims.  Each work
item (thread) handles one outer element and loops over its core dims itself.

**Emission** (the same emitter, :mod:`ckernels.jit.c_emit`, for every
dialect).  A dimensioned argument is the Numba array the CPU function sees
(``types.Array(dtype, ndim, "A", readonly=True)``); in C a view struct
(:mod:`ckernels.jit.c_emit.arrays`).  A dimensioned result is written in
place through the function's output parameter (``def f(x, out)``,
``numba.guvectorize``'s style), which the function gets as a writable view;
the function then returns nothing.

**The kernel** (:func:`core_kernel`): the parameters of every device kernel
(:func:`~ckernels.jit.c_emit.kernel_parameters`) and its outer-element offsets
(:func:`~ckernels.jit.c_emit.element_offsets`: the 1-d strided path or the N-d
metadata); the core dims' sizes and byte strides follow the outer metadata in
the same metadata buffer (``ck_meta``), result first, then each dimensioned
argument, each operand's outermost core dim first, as ``(size, stride)``
pairs.  One built program serves every call with the same core layout.

**Calls** (:func:`call`): the operands' core dims are matched to the
signature and the dimension variables bound by the library
(``ck_core_result_type`` / ``ck_core_match``, the CPU path's functions: same
errors, e.g. ``dimension variable N is 3 in argument 0 and 4 in argument 1``);
the outer dims broadcast (``ck_broadcast_strides``) through the shared launch
plan (:class:`ckernels.device.launch.Plan`, whose metadata carries the core
dims).  The element types of dimensioned operands must be the signature's
(convert on the device first, ``x.astype(...)``); non-dimensioned arguments
may be scalars.  Var dims are CPU-only (``NotSupportedError``).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from .._native import check, ffi, lib
from ..device.array import DeviceArray
from ..errors import CKTypeError, InvalidArgumentError, NotSupportedError
from ..types import as_type
from . import dims as _dims
from ..device import launch
from ..context.device_program import (KERNEL_NAME, element_offsets, error_return,
                                      kernel_parameters, store_result)
from .c_emit import EmittedKernel
from .c_emit.numba_types import _is_bool

# ------------------------------------------------------------------ kernel --
class CoreLayout:
    """What the kernel of a compiled signature with core dims reads: per
    argument its :class:`~ckernels.jit.dims.CoreType` (None: a scalar
    argument), the result's, whether the function writes an output
    parameter, and the element types."""

    def __init__(self, kernel, comp):
        sig = comp.sig
        fname = kernel.__name__
        self.args = tuple(_dims.core(a) if _dims.is_dimensioned(a) else None for a in sig.args)
        self.ret = _dims.core(sig.ret) if _dims.is_dimensioned(sig.ret) else None
        for c in self.args + (self.ret,):
            if c is not None and c.has_var:
                raise NotSupportedError(f"{fname}: {sig.text}: var dims run on the CPU only "
                                        "(devices take fixed and symbolic core dims)")
        self.out_param = kernel._out_param is not None
        if self.ret is not None and not self.out_param:
            raise NotSupportedError(
                f"{fname}: {sig.text}: on devices a dimensioned result is written through "
                "the output parameter (def f(x, ..., out): out[i] = ...), not returned")
        self.dtypes = sig.arg_elements
        self.ret_dtype = sig.ret_element
        for dt in self.dtypes + (self.ret_dtype,):
            if dt.kind not in "biuf":
                raise NotSupportedError(f"{fname}: {sig.text}: element type {dt.name} under "
                                        "core dims runs on the CPU only")

    def numba_types(self):
        from numba.core import types
        nb = []
        for c, dt in zip(self.args, self.dtypes):
            nb.append(dt.numba if c is None else
                      types.Array(dt.numba, c.ndim, "A", readonly=True))
        if self.out_param:
            nb.append(types.Array(self.ret_dtype.numba, self.ret.ndim, "A"))
            return tuple(nb), types.none
        return tuple(nb), self.ret_dtype.numba


def emit(kernel, comp, dialect) -> tuple[EmittedKernel, CoreLayout]:
    """The program (device functions) of one compiled signature with core dims."""
    layout = CoreLayout(kernel, comp)
    nb_args, nb_ret = layout.numba_types()
    prog = EmittedKernel(dialect, kernel.error_model)
    prog.entry = prog.function(kernel.py_func, nb_args, nb_ret)
    return prog, layout


def core_kernel(prog: EmittedKernel, layout: CoreLayout, inputs) -> str:
    """The kernel calling ``prog.entry`` once per outer element (see the
    module docstring); ``inputs`` as for
    :func:`~ckernels.jit.c_emit.kernel_wrapper`."""
    d = prog.dialect
    fe = prog.entry
    i64, u8, i32 = d.int64, d.uint8, d.int32
    params, arrays = kernel_parameters(d, inputs)
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(params)})", "{"]
    lines += element_offsets(d, arrays)
    lines.append(f"  {d.pointer(i64, True)}ck_core = ck_meta + "
                 f"(ck_ndim <= 1 ? 0 : ck_ndim * {len(arrays) + 2});")
    pos = 0

    def view(name, ct, base, c):
        nonlocal pos
        out = [f"  {ct} {name};", f"  {name}.p = {base};"]
        for k in range(c.ndim):
            out.append(f"  {name}.n[{k}] = ck_core[{pos}]; {name}.s[{k}] = ck_core[{pos + 1}];")
            pos += 2
        return out

    nargs = len(layout.args)
    if layout.out_param:
        lines += view("y", fe.ct(fe.arg_types[nargs]), "ck_out + o_out", layout.ret)
    cargs = []
    for k, (c, (dt, by_value)) in enumerate(zip(layout.args, inputs)):
        pt = fe.arg_types[k]
        pct = fe.ct(pt)
        if c is not None:
            lines += view(f"x{k}", pct, f"ck_in{k} + o_in{k}", c)
        else:
            if by_value:
                v = f"ck_in{k}_val"
            else:
                st = u8 if dt.kind == "b" else d.ctype(dt)
                v = f"*({d.pointer(st, True)})(ck_in{k} + o_in{k})"
            v = f"({v} != 0)" if dt.kind == "b" or _is_bool(pt) else f"({pct}){v}"
            lines.append(f"  {pct} x{k} = {v};")
        cargs.append(f"x{k}")
    if layout.out_param:
        cargs.append("y")
    call = f"{fe.cname}({', '.join(cargs + ['&err'])})"
    lines.append(f"  {i32} err = 0;")
    if layout.out_param:
        lines += [f"  (void){call};", error_return(d)]
    else:
        lines += store_result(d, fe.ct(fe.ret_type), layout.ret_dtype, call)
    lines.append("}")
    return "\n".join(lines) + "\n"


def source(tgt, kernel, comp, inputs=None) -> str:
    """The whole program of one compiled signature with core dims for ``tgt``
    (every operand an array of the signature's types unless ``inputs`` says
    otherwise)."""
    prog, layout = tgt_program(tgt, kernel, comp)
    if inputs is None:
        inputs = tuple((dt, False) for dt in layout.dtypes)
    return tgt.dialect.header(prog) + prog.text() + "\n" + core_kernel(prog, layout, inputs)


_PROGRAMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def tgt_program(tgt, kernel, comp):
    """:func:`emit` for ``tgt``'s dialect, cached while ``comp`` lives."""
    per = _PROGRAMS.get(comp)
    if per is None:
        with _LOCK:
            per = _PROGRAMS.setdefault(comp, {})
    got = per.get(tgt.kind)
    if got is None:
        got = per.setdefault(tgt.kind, emit(kernel, comp, tgt.dialect))
    return got


# ------------------------------------------------------------------- calls --
def _strided_type(a: DeviceArray):
    """The library type (all dims strided) and arrmeta of a device array."""
    text = "strided * " * a.ndim + a._element.name
    meta = np.array([x for pair in zip(a._shape, a._strides) for x in pair] or [0],
                    dtype=np.intp)
    return as_type(text), meta


def _select(kernel, args, fname):
    """The first compiled signature with core dims these arguments fit:
    dimensioned arguments are device arrays of the signature's element type,
    the others device arrays of their type or scalars."""
    from ..device.launch import _is_scalar
    for comp in kernel._compiled.values():
        if not comp.core or len(comp.sig.args) != len(args):
            continue
        ok = True
        for a, name in zip(args, comp.sig.args):
            c = _dims.core(name) if _dims.is_dimensioned(name) else None
            if isinstance(a, DeviceArray):
                el = c.dtype if c is not None else name
                ok = a._element.name == el     # core ndims: checked by _bind
            else:
                ok = c is None and _is_scalar(a)
            if not ok:
                break
        if ok:
            return comp
    have = ", ".join(f"{a._element.name} array of {a.ndim} dims" if isinstance(a, DeviceArray)
                     else type(a).__name__ for a in args)
    raise CKTypeError(f"{fname}: no signature with dims fits the device arguments ({have}); "
                      f"signatures: {'; '.join(kernel.signatures)} (the element types of "
                      "dimensioned arguments must match: convert with .astype first)")


def _bind(comp, args, out):
    """Match the operands to the signature (the library's ck_core_result_type
    and, for ``out=``, ck_core_match): ``(result shape, per operand its core
    ndim)``; raises the library's errors (CKValueError naming the dimension
    variable and both sizes, ...)."""
    sig = comp.sig
    pats, types_, metas, keep = [], [], [], []
    for a, p in zip(args, sig.arg_types):
        if isinstance(a, DeviceArray):
            t, m = _strided_type(a)
        else:
            t, m = p, np.zeros(1, np.intp)
        keep += [t, m, p]
        pats.append(p._t)
        types_.append(t._t)
        metas.append(ffi.cast("const char *", ffi.from_buffer(m)))
    dst_pat = sig.ret_type
    res = ffi.new("ck_type *")
    shape = ffi.new("intptr_t[]", int(lib.CK_TYPE_MAX_DEPTH))
    nstr = ffi.new("size_t *")
    b = ffi.new("ck_dim_bindings *")
    n = len(args)
    check(lib.ck_core_result_type(dst_pat._t, n, ffi.new("ck_type[]", pats or [ffi.NULL]),
                                  ffi.new("ck_type[]", types_ or [ffi.NULL]),
                                  ffi.new("const char *[]", metas or [ffi.NULL]),
                                  res, shape, int(lib.CK_TYPE_MAX_DEPTH), nstr, b))
    lib.ck_type_decref(res[0])
    rshape = tuple(shape[i] for i in range(nstr[0]))
    if out is not None:
        t, m = _strided_type(out)
        check(lib.ck_core_match(dst_pat._t, t._t, ffi.cast("const char *", ffi.from_buffer(m)),
                                b"the result", b, ffi.NULL))
    return rshape


def call(kernel, args, out=None):
    """``kernel(*args, out=out)`` with device arrays, for a kernel with
    signatures with core dims."""
    from . import device
    fname = kernel.__name__
    ctx = launch.context_of(fname, args)
    tgt = device.target(ctx.kind)
    comp = _select(kernel, args, fname)
    prog, layout = tgt_program(tgt, kernel, comp)
    tgt.check_device(ctx, prog.fp64_user, fname)
    for dt in layout.dtypes + (layout.ret_dtype,):
        if tgt.dialect.ctype(dt) is None:
            raise NotSupportedError(f"{fname}: element type {dt.name} is not supported on "
                                    f"{tgt.kind} devices")
        if dt.name == "float64" and not ctx.supports_fp64:
            raise NotSupportedError(f"{fname}: float64 operands on a device without fp64 "
                                    f"support ({ctx.describe()})")
    if out is not None:
        if not isinstance(out, DeviceArray) or out.context != ctx:
            raise InvalidArgumentError(f"{fname}: out= must be a DeviceArray of the "
                                       "arguments' context")
        if out._element.name != layout.ret_dtype.name:
            raise CKTypeError(f"{fname}: out= has dtype {out.dtype}, the result "
                              f"({comp.sig.text}) has dtype {layout.ret_dtype.name}")
    rshape = _bind(comp, args, out)
    rnd = layout.ret.ndim if layout.ret is not None else 0
    if out is None:
        res = DeviceArray.empty(ctx, rshape, layout.ret_dtype.numpy)
    elif any(isinstance(a, DeviceArray) and launch.overlaps(out, a) for a in args):
        res = call(kernel, args)         # through a temporary, as NumPy does
        out._assign(res, "nocheck")
        return out
    else:
        res = out
    operands = [a.item() if isinstance(a, np.generic) else a for a in args]
    plans = tgt.plans(comp, ctx)
    key = (res._key, tuple(a._key if isinstance(a, DeviceArray) else type(a) for a in args))
    plan = plans.get(key)
    if plan is None:
        inputs = tuple((dt, not isinstance(a, DeviceArray))
                       for dt, a in zip(layout.dtypes, args))
        core = []
        for a, c in [(res, layout.ret)] + list(zip(args, layout.args)):
            if c is not None:
                core += [x for k in range(a.ndim - c.ndim, a.ndim)
                         for x in (a._shape[k], a._strides[k])]
        outer = [(a._shape[:a.ndim - c.ndim], a._strides[:a.ndim - c.ndim])
                 if isinstance(a, DeviceArray) and c is not None else
                 (a._shape, a._strides) if isinstance(a, DeviceArray) else ((), ())
                 for a, c in zip(args, layout.args)]
        plan = launch.remember(plans, key, launch.build_plan(
            ctx, source(tgt, kernel, comp, inputs), prog.errors, fname, tgt.dialect.title,
            inputs, args, layout.ret_dtype.numpy, operand_layouts=outer,
            out_layout=(res._shape[:res.ndim - rnd], res._strides[:res.ndim - rnd]),
            extra_meta=core))
    plan(res, operands)
    return res


__all__ = ["CoreLayout", "emit", "core_kernel", "source", "call"]
