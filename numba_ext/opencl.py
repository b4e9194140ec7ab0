"""Running ``@ckernel.jit`` functions on OpenCL devices: device arrays.

>>> import numpy as np, ckernel
>>> from ckernel.opencl import to_device
>>> ctx = ckernel.Context("opencl")
>>> @ckernel.jit("float32(float32, float32)")
... def axpy(x, y):
...     return 2.0 * x + y
>>> axpy(to_device(ctx, np.ones(4, np.float32)), np.float32(1)).to_numpy()
array([3., 3., 3., 3.], dtype=float32)

A :class:`DeviceArray` is a C-contiguous array in its own buffer of one
OpenCL :class:`~ckernel.Context`.  Calling a jitted function on device arrays
(Python/NumPy scalars are broadcast alongside) emits OpenCL C from the
function's typed Numba IR (:mod:`ckernel._numba.opencl_emit`), builds it
through :meth:`Context.build_program` (cached per context and source), runs
one launch over the broadcast shape and returns a new device array in the
same context.  Errors raised in the device code (division by zero,
``raise ValueError("...")``) come back as the matching ckernel exception.
"""

from __future__ import annotations

import threading

import numpy as np

from .context import Context
from .errors import (CKIndexError, CKOverflowError, CKTypeError, CKValueError,
                     CKZeroDivisionError, InvalidArgumentError, NotSupportedError,
                     UserKernelError)

_NAME_OF_DTYPE = {np.dtype(np.bool_): "bool", np.dtype(np.int8): "int8",
                  np.dtype(np.int16): "int16", np.dtype(np.int32): "int32",
                  np.dtype(np.int64): "int64", np.dtype(np.uint8): "uint8",
                  np.dtype(np.uint16): "uint16", np.dtype(np.uint32): "uint32",
                  np.dtype(np.uint64): "uint64", np.dtype(np.float32): "float32",
                  np.dtype(np.float64): "float64"}


class DeviceArray:
    """A C-contiguous array living in a buffer of an OpenCL context."""

    __slots__ = ("context", "shape", "dtype", "buffer", "offset", "__weakref__")

    def __init__(self, ctx: Context, obj=None, *, shape=None, dtype=None):
        if not isinstance(ctx, Context):
            raise InvalidArgumentError(f"DeviceArray needs a ckernel.Context, not "
                                       f"{type(ctx).__name__}")
        if obj is not None:
            host = np.ascontiguousarray(obj, dtype=dtype)
            shape, dtype = host.shape, host.dtype
        else:
            host = None
            dtype = np.dtype(dtype if dtype is not None else np.float64)
            shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape or ())
        dtype = np.dtype(dtype)
        if dtype not in _NAME_OF_DTYPE:
            raise NotSupportedError(f"DeviceArray: dtype {dtype} is not supported on devices "
                                    f"({', '.join(sorted(set(_NAME_OF_DTYPE.values())))})")
        if not dtype.isnative:
            dtype = dtype.newbyteorder("=")
        self.context = ctx
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        nbytes = max(self.nbytes, 8)
        self.buffer = ctx.new_buffer(nbytes)
        self.offset = self.buffer.allocate(nbytes, align=max(dtype.itemsize, 8))
        if host is not None and host.size:
            self.buffer.write(self.offset, host.astype(dtype, copy=False).reshape(-1).view(np.uint8))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        st, acc = [], self.dtype.itemsize
        for s in reversed(self.shape):
            st.append(acc)
            acc *= max(s, 1)
        return tuple(reversed(st))

    def to_numpy(self) -> np.ndarray:
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        data = self.buffer.read(self.offset, self.nbytes)
        return np.frombuffer(data, dtype=self.dtype).reshape(self.shape).copy()

    def __array__(self, dtype=None, copy=None):
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        return (f"<ckernel.opencl.DeviceArray shape={self.shape} dtype={self.dtype} "
                f"context={self.context.describe()}>")


def to_device(ctx: Context, array) -> DeviceArray:
    """A device copy of a host array (anything ``np.asarray`` accepts)."""
    return DeviceArray(ctx, array)


def empty(ctx: Context, shape, dtype=np.float64) -> DeviceArray:
    """An uninitialised device array."""
    return DeviceArray(ctx, shape=shape, dtype=dtype)


# ------------------------------------------------------------ launching --
_PROGRAMS: dict = {}            # (id(kernel), sig text) -> emitted Program
_PROG_LOCK = threading.Lock()

_EXC = {ZeroDivisionError: CKZeroDivisionError, ValueError: CKValueError,
        IndexError: CKIndexError, OverflowError: CKOverflowError, TypeError: CKTypeError}


def emitted(kernel, comp):
    """The emitted program for one compiled signature of a JitKernel (cached)."""
    from ._numba import jitcodegen as cg
    from ._numba.opencl_emit import emit_kernel
    key = (id(kernel), comp.sig.text)
    with _PROG_LOCK:
        prog = _PROGRAMS.get(key)
        if prog is None or prog[0] is not kernel.py_func:
            nb_args = tuple(cg.NUMBA_TYPES[a] for a in comp.sig.args)
            prog = (kernel.py_func, emit_kernel(kernel.py_func, nb_args,
                                                cg.NUMBA_TYPES[comp.sig.ret]))
            _PROGRAMS[key] = prog
        return prog[1]


def _raise_device_error(prog, code: int, fname: str):
    if code < 1 or code > len(prog.errors):
        raise UserKernelError(f"{fname}: the OpenCL kernel reported unknown error code {code}")
    cls, args = prog.errors[code - 1]
    msg = str(args[0]) if len(args) == 1 else (", ".join(map(str, args)) if args else "")
    for base, ck in _EXC.items():
        if issubclass(cls, base):
            raise ck(msg if cls is base else f"{cls.__name__}: {msg}")
    raise UserKernelError(f"{cls.__name__}: {msg}" if msg else cls.__name__)


def _weak_ok(kind: str, name: str) -> bool:
    if kind == "i":
        return name != "bool"
    if kind == "f":
        return name in ("float32", "float64")
    return False


def call(kernel, args, out=None):
    """``kernel(*args)`` where at least one argument is a :class:`DeviceArray`."""
    from .jit import Signature
    if out is not None:
        raise NotSupportedError(f"{kernel.__name__}: out= is not supported with device arrays")
    ctx = None
    ops = []   # (kind, name, value)
    for i, a in enumerate(args):
        if isinstance(a, DeviceArray):
            if ctx is None:
                ctx = a.context
            elif a.context._ctx != ctx._ctx:
                raise InvalidArgumentError(
                    f"{kernel.__name__}: argument {i} lives in a different context "
                    f"({a.context.describe()}) than argument 0's ({ctx.describe()}); "
                    "copy it first")
            ops.append(("array", _NAME_OF_DTYPE[a.dtype], a))
        elif isinstance(a, np.generic) and a.dtype in _NAME_OF_DTYPE:
            ops.append(("scalar", _NAME_OF_DTYPE[a.dtype], a))
        elif isinstance(a, bool):
            ops.append(("scalar", "bool", np.bool_(a)))
        elif isinstance(a, int):
            ops.append(("weak_i", "int64", a))
        elif isinstance(a, float):
            ops.append(("weak_f", "float64", a))
        else:
            raise InvalidArgumentError(
                f"{kernel.__name__}: argument {i} is a {type(a).__name__}; with device arrays "
                "the other arguments must be device arrays of the same context or scalars "
                "(copy host arrays with ckernel.opencl.to_device)")
    if ctx.kind != "opencl":
        raise NotSupportedError(f"{kernel.__name__}: device arrays of a '{ctx.kind}' context")
    # signature selection: device/NumPy scalar types exactly, Python numbers by kind
    comp = None
    for c in kernel._compiled.values():
        if len(c.sig.args) == len(ops) and all(
                (k.startswith("weak") and _weak_ok(k[-1], a)) or (n == a)
                for (k, n, _), a in zip(ops, c.sig.args)):
            comp = c
            break
    if comp is None:
        if kernel._explicit:
            raise CKTypeError(
                f"{kernel.__name__}: no signature matches the device argument types "
                f"({', '.join(n for _, n, _ in ops)}); compiled: "
                f"{'; '.join(kernel.signatures) or 'none'}")
        comp = kernel.compile(Signature(None, tuple(n for _, n, _ in ops)))
    prog = emitted(kernel, comp)
    if prog.fp64_user is not None and not ctx.supports_fp64:
        raise NotSupportedError(f"{kernel.__name__}: {prog.fp64_user} uses float64 but the "
                                f"device has no fp64 support ({ctx.describe()})")
    built = ctx.build_program(prog.source)
    # operands as device arrays (scalars: one-element arrays broadcast with stride 0)
    arrs = []
    for (k, n, v), tname in zip(ops, comp.sig.args):
        dt = np.dtype(tname if tname != "bool" else np.bool_)
        if k == "array":
            arrs.append(v)
        else:
            arrs.append(DeviceArray(ctx, np.asarray(v, dtype=dt).reshape(())))
    try:
        shape = np.broadcast_shapes(*[a.shape for a in arrs])
    except ValueError as exc:
        raise InvalidArgumentError(f"{kernel.__name__}: {exc}") from None
    rdt = np.dtype(comp.sig.ret if comp.sig.ret != "bool" else np.bool_)
    res = empty(ctx, shape, rdt)
    n = res.size
    if n == 0:
        return res
    # strides per operand, broadcast (0 where the operand's extent is 1 or missing)
    nd = len(shape)

    def bstrides(a):
        st = [0] * nd
        for d in range(a.ndim):
            dd = nd - a.ndim + d
            st[dd] = 0 if a.shape[d] == 1 and shape[dd] != 1 else a.strides[d]
        return st
    strides = [bstrides(a) for a in arrs]
    contiguous = all(a.shape == shape or a.size == 1 for a in arrs)
    meta_buf = ctx.new_buffer(8 * max(1, nd * (2 + len(arrs))))
    if contiguous or nd <= 1:
        ndim = 1
        one = [res.dtype.itemsize] + [(a.dtype.itemsize if a.shape == shape else 0)
                                      if contiguous else (s[0] if nd else 0)
                                      for a, s in zip(arrs, strides)]
        meta_buf.write(0, np.zeros(1, np.int64))
    else:
        ndim = nd
        meta = np.array(list(shape) + list(res.strides) + [x for s in strides for x in s],
                        dtype=np.int64)
        meta_buf.write(0, meta)
        one = [0] * (1 + len(arrs))
    err = ctx.new_buffer(8)
    err.write(0, np.zeros(2, np.int32))
    largs = [(res.buffer, 0), np.uint64(res.offset), np.int64(one[0])]
    for a, s in zip(arrs, one[1:]):
        largs += [(a.buffer, 0), np.uint64(a.offset), np.int64(s)]
    largs += [(meta_buf, 0), np.int32(ndim), np.uint64(n), (err, 0)]
    from ._numba.opencl_emit import KERNEL_NAME
    built.launch(KERNEL_NAME, n, *largs)
    code = int(err.to_numpy(0, np.int32, 1)[0])
    if code:
        _raise_device_error(prog, code, kernel.__name__)
    return res


__all__ = ["DeviceArray", "to_device", "empty", "call", "emitted"]
