"""Calling a jitted function on device arrays: the part every device target shares.

A device target is a :class:`DeviceTarget`: a name (the context kind it serves)
and a C :class:`~ckernels.jit.c_emit.Dialect`.  The modules listed in
:data:`TARGETS` provide one each (``ckernels.jit.opencl.TARGET``; a CUDA
target is ``ckernels.jit.cuda.TARGET`` with a CUDA dialect, plus one line
here).  Everything else is common:

1. operands: device arrays of one context and scalars (Python scalars are
   weak, by the one NEP 50 rule; NumPy scalars strong), anything else is an
   error naming the argument;
2. the signature: exact matches (a lazily compiled function compiles one);
   devices do not convert array element types (no safe-cast step);
3. the emitted program (cached per compiled signature and target) built by
   the context (cached per source);
4. broadcasting and ``out=`` through the library's one implementation
   (``ck_broadcast_shapes`` for the result shape, ``ck_broadcast_strides`` for
   per-operand byte strides, ``ck_coalesce_dims`` so that contiguous and
   scalar-broadcast calls take the kernel's 1-d path);
5. one launch over the result's elements, then the error buffer: a non-zero
   code is the exception the device code raised (``ckernels.errors``).
"""

from __future__ import annotations

import importlib
import threading
import weakref

import numpy as np

from .. import dtypes
from .._native import check, ffi, lib
from ..context.device_array import DeviceArray
from ..errors import (CKTypeError, InvalidArgumentError, NotSupportedError, UserKernelError,
                      exception_for)
from . import operands as _operands
from .c_emit import KERNEL_NAME, Dialect, EmittedKernel, emit_kernel

#: context kind -> module whose ``TARGET`` runs jitted functions there
TARGETS = {"opencl": "ckernels.jit.opencl", "cuda": "ckernels.jit.cuda"}

_MAXD = int(lib.CK_TYPE_MAX_DEPTH)


def target(kind: str) -> "DeviceTarget":
    """The device target for contexts of ``kind`` (NotSupportedError if none)."""
    mod = TARGETS.get(kind)
    if mod is None:
        raise NotSupportedError(f"ckernels.jit: no device target for '{kind}' contexts "
                                f"(targets: {', '.join(TARGETS)})")
    return importlib.import_module(mod).TARGET


class DeviceTarget:
    """One device target: the context kind it serves and its C dialect."""

    def __init__(self, kind: str, dialect: Dialect):
        self.kind = kind
        self.dialect = dialect
        self._programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def program(self, kernel, comp) -> EmittedKernel:
        """The emitted program of one compiled signature (cached while ``comp``
        lives)."""
        with self._lock:
            prog = self._programs.get(comp)
        if prog is None:
            nb_args = tuple(dtypes.by_name[a].numba for a in comp.sig.args)
            prog = emit_kernel(kernel.py_func, nb_args, dtypes.by_name[comp.sig.ret].numba,
                               self.dialect, kernel.error_model)
            with self._lock:
                prog = self._programs.setdefault(comp, prog)
        return prog

    def check_device(self, ctx, prog: EmittedKernel, fname: str) -> None:
        """Refuse what the device cannot run (double without fp64 support)."""
        if prog.fp64_user is not None and not ctx.supports_fp64:
            raise NotSupportedError(f"{fname}: {prog.fp64_user} uses float64 but the "
                                    f"device has no fp64 support ({ctx.describe()})")

    def __repr__(self) -> str:
        return f"<ckernels.jit device target {self.kind!r} ({self.dialect.title} C)>"


# ------------------------------------------------------------------ a call --
def _context_of(fname, args):
    ctx = None
    first = None
    for i, a in enumerate(args):
        if isinstance(a, DeviceArray):
            if ctx is None:
                ctx, first = a.context, i
            elif a.context != ctx:
                raise InvalidArgumentError(
                    f"{fname}: argument {i} lives in a different context "
                    f"({a.context.describe()}) than argument {first}'s ({ctx.describe()}); "
                    "copy it first")
        elif not _is_scalar(a):
            raise InvalidArgumentError(
                f"{fname}: argument {i} is a {type(a).__name__}; with device arrays the "
                "other arguments must be device arrays of the same context or scalars "
                "(copy host arrays with ctx.to(...) / ckernels.opencl.to_device)")
    return ctx


def _is_scalar(a) -> bool:
    return type(a) in (bool, int, float, complex) or isinstance(a, np.generic)


def broadcast_shape(shapes) -> tuple:
    """NumPy broadcasting of shapes (``ck_broadcast_shapes``)."""
    n = len(shapes)
    keep = [ffi.new("intptr_t[]", list(s) or [0]) for s in shapes]
    ptrs = ffi.new("intptr_t *[]", keep or [ffi.NULL])
    nds = ffi.new("size_t[]", [len(s) for s in shapes] or [0])
    out = ffi.new("intptr_t[]", _MAXD)
    nd = ffi.new("size_t *")
    check(lib.ck_broadcast_shapes(n, ptrs, nds, out, _MAXD, nd))
    return tuple(out[i] for i in range(nd[0]))


def iteration_space(dst: DeviceArray, srcs: list[DeviceArray]):
    """``(ndim, shape, rows)``: the coalesced index space of ``dst`` with every
    source broadcast to it (``rows[0]`` dst's byte strides, ``rows[1 + j]``
    source j's), from ``ck_broadcast_strides`` and ``ck_coalesce_dims``."""
    keep = []

    def operand(a, op):
        sh = ffi.new("intptr_t[]", list(a.shape) or [0])
        st = ffi.new("intptr_t[]", list(a.strides) or [0])
        keep.extend((sh, st))
        op.ndim, op.shape, op.strides = a.ndim, sh, st
    cdst = ffi.new("ck_strided_operand *")
    operand(dst, cdst)
    csrc = ffi.new("ck_strided_operand[]", max(len(srcs), 1))
    for j, a in enumerate(srcs):
        operand(a, csrc[j])
    pitch = max(dst.ndim, 1)
    nops = len(srcs) + 1
    nd = ffi.new("size_t *")
    shape = ffi.new("intptr_t[]", pitch)
    strides = ffi.new("intptr_t[]", nops * pitch)
    check(lib.ck_broadcast_strides(cdst, len(srcs), csrc, pitch, nd, shape, strides))
    check(lib.ck_coalesce_dims(nops, nd, shape, strides, pitch))
    n = nd[0]
    return n, [shape[a] for a in range(n)], [[strides[k * pitch + a] for a in range(n)]
                                            for k in range(nops)]


def call(kernel, args, out=None):
    """``kernel(*args, out=out)`` where at least one argument is a device array."""
    fname = kernel.__name__
    ctx = _context_of(fname, args)
    tgt = target(ctx.kind)
    ops = _operands.operands(args, fname)
    comp = _operands.select(kernel, ops, casts=False)
    if comp is None:
        raise CKTypeError(_operands.no_signature(kernel, ops, "the device argument types"))
    prog = tgt.program(kernel, comp)
    tgt.check_device(ctx, prog, fname)
    built = ctx.build_program(prog.source)
    # operands as device arrays (scalars: 0-d arrays, broadcast with stride 0)
    arrs = [o.value if o.device else
            DeviceArray.from_host(ctx, np.asarray(o.value, dtype=dtypes_numpy(a)).reshape(()))
            for o, a in zip(ops, comp.sig.args)]
    rdt = dtypes_numpy(comp.sig.ret)
    if out is None:
        res = DeviceArray.empty(ctx, broadcast_shape([a.shape for a in arrs]), rdt)
    else:
        if not isinstance(out, DeviceArray):
            raise InvalidArgumentError(
                f"{fname}: out= must be a DeviceArray of the arguments' context when they "
                f"live on a device, not {type(out).__name__}")
        if out.context != ctx:
            raise InvalidArgumentError(
                f"{fname}: out= lives in a different context ({out.context.describe()}) "
                f"than the arguments ({ctx.describe()})")
        if out.dtype != rdt:
            raise CKTypeError(f"{fname}: out= has dtype {out.dtype}, the result "
                              f"({comp.sig.text}) has dtype {rdt}")
        res = out
    ndim, shape, rows = iteration_space(res, arrs)
    n = res.size
    if n == 0:
        return res
    if ndim <= 1:
        one = [r[0] if ndim else 0 for r in rows]
        meta = ctx.new_buffer(8)
    else:
        one = [0] * len(rows)
        flat = np.array(list(shape) + [x for r in rows for x in r], dtype=np.int64)
        meta = ctx.new_buffer(flat.nbytes)
        meta.write(0, flat)
    err = ctx.new_buffer(8)
    err.write(0, np.zeros(2, np.int32))
    largs = [(res.buffer, 0), np.uint64(res.offset), np.int64(one[0])]
    for a, s in zip(arrs, one[1:]):
        largs += [(a.buffer, 0), np.uint64(a.offset), np.int64(s)]
    largs += [(meta, 0), np.int32(ndim), np.uint64(n), (err, 0)]
    built.launch(KERNEL_NAME, n, *largs)
    code = int(err.to_numpy(0, np.int32, 1)[0])
    if code:
        raise device_error(prog, code, fname)
    return res


def dtypes_numpy(name: str) -> np.dtype:
    return dtypes.by_name[name].numpy


def device_error(prog: EmittedKernel, code: int, fname: str) -> Exception:
    """The exception error code ``code`` of ``prog`` stands for: the one the CPU
    jit raises for the same Python exception (``ckernels.errors.classify``)."""
    if code < 1 or code > len(prog.errors):
        return UserKernelError(f"{fname}: the {prog.dialect.title} kernel reported unknown "
                               f"error code {code}")
    cls, args = prog.errors[code - 1]
    try:
        exc = cls(*args)
    except Exception:   # an exception class that does not take these arguments
        exc = None
    if exc is None:
        msg = ", ".join(map(str, args))
        return UserKernelError(f"{cls.__name__}: {msg}" if msg else cls.__name__)
    return exception_for(exc)


__all__ = ["DeviceTarget", "TARGETS", "target", "call", "broadcast_shape", "iteration_space",
           "device_error"]
