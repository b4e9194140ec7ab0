"""Running ``@ckernels.jit`` functions on OpenCL devices: device arrays.

>>> import numpy as np, ckernels
>>> from ckernels.opencl import to_device
>>> ctx = ckernels.Context("opencl")
>>> @ckernels.jit("float32(float32, float32)")
... def axpy(x, y):
...     return 2.0 * x + y
>>> axpy(to_device(ctx, np.ones(4, np.float32)), np.float32(1)).to_numpy()
array([3., 3., 3., 3.], dtype=float32)

A :class:`DeviceArray` is a C-contiguous array in its own buffer of one
OpenCL :class:`~ckernels.Context`.  Calling a jitted function on device arrays
(Python/NumPy scalars are broadcast alongside) emits OpenCL C from the
function's typed Numba IR (:mod:`ckernels._numba.opencl_emit`), builds it
through :meth:`Context.build_program` (cached per context and source), runs
one launch over the broadcast shape and returns a new device array in the
same context.  Errors raised in the device code (division by zero,
``raise ValueError("...")``) come back as the matching ckernel exception.
"""

from __future__ import annotations

import threading

import numpy as np

from .context import Context
from ..errors import (CKIndexError, CKOverflowError, CKTypeError, CKValueError,
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
            raise InvalidArgumentError(f"DeviceArray needs a ckernels.Context, not "
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
        out = np.empty(self.shape, self.dtype)
        self.buffer.read_into(self.offset, out)
        return out

    def __array__(self, dtype=None, copy=None):
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def to(self, ctx: Context):
        """This array in ``ctx``: a host :class:`ckernels.Array` for a ``"cpu"``
        context (device to host copy), ``self`` for its own context (no copy),
        a new device array for another OpenCL context (copied through the host:
        two OpenCL contexts share no memory)."""
        _check_context(ctx, "DeviceArray.to")
        if ctx.kind == "cpu":
            from ..array import asarray
            return asarray(self.to_numpy())
        if ctx.kind != "opencl":
            raise NotSupportedError(f"DeviceArray.to: '{ctx.kind}' contexts")
        if same_context(ctx, self.context):
            return self
        return DeviceArray(ctx, self.to_numpy())

    def copy(self) -> "DeviceArray":
        """A device-side copy in the same context."""
        new = DeviceArray(self.context, shape=self.shape, dtype=self.dtype)
        if self.nbytes:
            new.buffer.copy_from(new.offset, self.buffer, self.offset, self.nbytes)
        return new

    def __repr__(self) -> str:
        return (f"<ckernels.opencl.DeviceArray shape={self.shape} dtype={self.dtype} "
                f"context={self.context.describe()}>")


def _check_context(ctx, where: str) -> None:
    if not isinstance(ctx, Context):
        raise InvalidArgumentError(f"{where}: expected a ckernels.Context, not "
                                   f"{type(ctx).__name__}")


def same_context(a: Context, b: Context) -> bool:
    """Whether two :class:`Context` objects wrap the same C context."""
    return a._ctx == b._ctx


def _type_shape_dtype(type, shape=None, where="array"):
    """``(shape, numpy dtype)`` of a ckernel type (a ``Type``, a type string
    such as ``"float32"`` or ``"3 * 4 * float32"``, or a NumPy dtype).  Fixed
    dims give their sizes; other (strided) dims take theirs from ``shape``."""
    from ..types import Type
    if isinstance(type, (np.dtype, np.generic)) or (isinstance(type, builtins_type) and
                                                   issubclass(type, np.generic)):
        return (tuple(shape) if shape is not None else None), np.dtype(type)
    t = type if isinstance(type, Type) else Type(type)
    if "var" in str(t):
        raise NotSupportedError(f"{where}: var dims ({t}) cannot live on an OpenCL device")
    dims, rest = [], list(shape) if shape is not None else None
    while t.ndim:
        n = t.fixed_size
        if n is None:
            if not rest:
                raise InvalidArgumentError(f"{where}: type {t} has a dim without a size; "
                                           "pass shape=")
            n = rest.pop(0)
        dims.append(int(n))
        t = t.element
    if rest:
        if dims:
            raise InvalidArgumentError(f"{where}: shape {tuple(shape)} does not fit type {type}")
        dims = [int(x) for x in rest]
    if not t.is_builtin:
        raise NotSupportedError(f"{where}: element type {t} is not supported on OpenCL devices")
    dt = t.to_numpy_dtype()
    return (tuple(dims) if (dims or shape is not None) else None), dt


builtins_type = type


def array(ctx: Context, obj, type=None):
    """``ctx.array(obj, type=None)``: a copy of host data (anything
    ``np.asarray`` accepts, a ``ckernels.Array`` of a builtin type, a
    :class:`DeviceArray`) in ``ctx``: a :class:`DeviceArray` for an OpenCL
    context, a host ``ckernels.Array`` for a ``"cpu"`` context.  ``type`` is a
    dtype (``"float32"``) or a full type (``"2 * 3 * float32"``, whose shape
    must match the data's)."""
    _check_context(ctx, "Context.array")
    if ctx.kind == "cpu":
        from ..array import array as host_array
        from ..types import Type
        if isinstance(obj, DeviceArray):
            obj = obj.to_numpy()
        if type is not None:
            t = type if isinstance(type, Type) else Type(type)
            if t.ndim == 0 and t.is_builtin and np.ndim(obj) > 0:
                # a dtype for array data (as for OpenCL contexts): the shape is the data's
                return host_array(np.asarray(obj, dtype=t.to_numpy_dtype()))
        return host_array(obj, type=type)
    if ctx.kind != "opencl":
        raise NotSupportedError(f"Context.array: '{ctx.kind}' contexts")
    host = obj.to_numpy() if isinstance(obj, DeviceArray) else obj
    if type is None:
        host = np.asarray(host)
        if host.dtype.kind not in "biuf":
            raise NotSupportedError(f"Context.array: data of NumPy dtype {host.dtype} cannot "
                                    "live on an OpenCL device (bool, ints, float32/64 only)")
        return DeviceArray(ctx, host)
    shape, dt = _type_shape_dtype(type, where="Context.array")
    host = np.asarray(host, dtype=dt)
    if shape is not None and host.shape != shape:
        raise InvalidArgumentError(f"Context.array: data of shape {host.shape} does not match "
                                   f"type {type}")
    return DeviceArray(ctx, host)


def empty_in(ctx: Context, a=(), b=None):
    """``ctx.empty(shape, dtype=float64)`` or ``ctx.empty(type, shape=())``."""
    _check_context(ctx, "Context.empty")
    from ..types import Type
    if isinstance(a, (str, Type, np.dtype)) or (isinstance(a, builtins_type) and
                                                issubclass(a, np.generic)):
        typ, shape = a, b
    else:
        shape, typ = a, (b if b is not None else "float64")
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    if ctx.kind == "cpu":
        from ..array import empty as host_empty
        if isinstance(typ, builtins_type):
            typ = np.dtype(typ)
        t = typ if isinstance(typ, Type) else Type(typ)
        shape = tuple(shape) if shape is not None else ()
        if t.ndim == 0 and shape:
            # a dtype and a shape (as for OpenCL contexts): fixed dims of that shape
            t = Type(" * ".join(str(int(n)) for n in shape) + f" * {t}")
            shape = ()
        return host_empty(t, shape)
    if ctx.kind != "opencl":
        raise NotSupportedError(f"Context.empty: '{ctx.kind}' contexts")
    shp, dt = _type_shape_dtype(typ, tuple(shape) if shape is not None else None,
                                where="Context.empty")
    return DeviceArray(ctx, shape=shp or (), dtype=dt)


def to(ctx: Context, obj):
    """``obj`` (a host array: NumPy, ``ckernels.Array``, anything ``np.asarray``
    accepts; or a :class:`DeviceArray`) in ``ctx``.  Host data is copied; a
    device array follows :meth:`DeviceArray.to`."""
    _check_context(ctx, "ckernels.opencl.to")
    if isinstance(obj, DeviceArray):
        return obj.to(ctx)
    if ctx.kind == "cpu":
        from ..array import Array, asarray
        return obj if isinstance(obj, Array) else asarray(np.array(obj, copy=True))
    return array(ctx, np.asarray(obj))


def from_pyopencl(ctx: Context, arr) -> DeviceArray:
    """A :class:`DeviceArray` of ``ctx`` holding a copy of a ``pyopencl.array.Array``
    (or of a ``(pyopencl.Buffer, shape, dtype)`` triple when given as ``arr`` with
    a ``queue``: see :func:`from_pyopencl_buffer`).

    This copies through the host: a ckernel buffer owns its ``cl_mem`` (the C
    layer has no call to adopt a foreign one) and pyopencl's context is a
    different ``cl_context``, so a device-to-device copy is not possible."""
    _check_context(ctx, "from_pyopencl")
    if not hasattr(arr, "get") or not hasattr(arr, "queue"):
        raise InvalidArgumentError(f"from_pyopencl: expected a pyopencl.array.Array, not "
                                   f"{type(arr).__name__}")
    return to(ctx, arr.get())


def from_pyopencl_buffer(ctx: Context, queue, buf, shape, dtype) -> DeviceArray:
    """A :class:`DeviceArray` of ``ctx`` holding a copy of a raw ``pyopencl.Buffer``
    read as a C-contiguous array of ``shape`` and ``dtype`` (through the host)."""
    import pyopencl as cl
    host = np.empty(shape, dtype)
    if host.nbytes > buf.size:
        raise InvalidArgumentError(f"from_pyopencl_buffer: {host.nbytes} bytes requested but "
                                   f"the buffer holds {buf.size}")
    cl.enqueue_copy(queue, host, buf)
    return to(ctx, host)


def to_pyopencl(arr: DeviceArray, queue):
    """A ``pyopencl.array.Array`` on ``queue`` holding a copy of ``arr`` (through
    the host, for the same reason as :func:`from_pyopencl`)."""
    import pyopencl.array as cla
    if not isinstance(arr, DeviceArray):
        raise InvalidArgumentError(f"to_pyopencl: expected a DeviceArray, not "
                                   f"{type(arr).__name__}")
    return cla.to_device(queue, arr.to_numpy())


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
    from ..jit import cpu_codegen as cg
    from ..jit.c_emit import emit_kernel
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
    from ..jit import Signature
    ctx = None
    ops = []   # (kind, name, value)
    for i, a in enumerate(args):
        if isinstance(a, DeviceArray):
            if ctx is None:
                ctx = a.context
            elif not same_context(a.context, ctx):
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
                "(copy host arrays with ckernels.opencl.to_device)")
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
    if out is None:
        res = empty(ctx, shape, rdt)
    else:
        if not isinstance(out, DeviceArray):
            raise InvalidArgumentError(
                f"{kernel.__name__}: out= must be a DeviceArray of the arguments' context "
                f"when they live on a device, not {type(out).__name__}")
        if not same_context(out.context, ctx):
            raise InvalidArgumentError(
                f"{kernel.__name__}: out= lives in a different context "
                f"({out.context.describe()}) than the arguments ({ctx.describe()})")
        if out.shape != tuple(shape):
            raise InvalidArgumentError(
                f"{kernel.__name__}: out= has shape {out.shape}, the result has shape "
                f"{tuple(shape)}")
        if out.dtype != rdt:
            raise CKTypeError(f"{kernel.__name__}: out= has dtype {out.dtype}, the result "
                              f"({comp.sig.text}) has dtype {rdt}")
        res = out
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
    from ..jit.c_emit import KERNEL_NAME
    built.launch(KERNEL_NAME, n, *largs)
    code = int(err.to_numpy(0, np.int32, 1)[0])
    if code:
        _raise_device_error(prog, code, kernel.__name__)
    return res


__all__ = ["DeviceArray", "to_device", "empty", "call", "emitted", "array", "to",
           "same_context", "from_pyopencl", "from_pyopencl_buffer", "to_pyopencl"]
