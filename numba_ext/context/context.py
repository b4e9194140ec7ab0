"""Contexts: CPU memory and devices (OpenCL now) behind one interface.

>>> import ckernels
>>> ctx = ckernels.Context("cpu")            # or "opencl" (CK_OPENCL_DEVICE="p:d")
>>> buf = ctx.new_buffer(1024)
>>> off = buf.allocate(16, align=8)
>>> buf.write(off, b"0123456789abcdef"); bytes(buf.read(off, 4))
b'0123'

A :class:`Context` owns one reference to a C ``ck_context``.  It makes
:class:`~ckernels.context.buffer.Buffer` objects (memory managed by offsets),
builds :class:`~ckernels.context.program.Program` objects (device code, cached
per context and source) and places arrays: :meth:`Context.array`,
:meth:`Context.empty` and :meth:`Context.to` give a host ``ckernels.Array`` in a
``"cpu"`` context and a :class:`~ckernels.context.device_array.DeviceArray`
in a device context.  Running ``@ckernels.jit`` functions on device arrays is
``ckernels.jit``'s business (one module per target).
"""

from __future__ import annotations

import builtins
import html
import weakref

import numpy as np

from .._native import check, ffi, lib
from ..array import Array
from ..array import array as _host_array
from ..array import asarray as _host_asarray
from ..array import empty as _host_empty
from ..errors import InvalidArgumentError, NotSupportedError
from ..types import Type
from . import backends
from . import kernels as _kernels
from .buffer import Buffer
from .device_array import DeviceArray
from .program import Program


class Context:
    """A compute context: ``Context("cpu")``, ``Context("opencl")``,
    ``Context("opencl", platform=0, device=0)``, ``Context("cuda")`` or
    ``Context("cuda", device=1)``."""

    __slots__ = ("_ctx", "_finalizer", "__weakref__")

    def __init__(self, kind: str = "cpu", platform: int | None = None,
                 device: int | None = None):
        out = ffi.new("ck_context **")
        prepare = backends.hook(kind, "prepare") if isinstance(kind, str) else None
        if prepare is not None:
            prepare()
        make = backends.hook(kind, "new_context") if isinstance(kind, str) else None
        if make is not None and (platform is not None or device is not None):
            out[0] = make(platform, device)
        elif platform is not None or device is not None:
            if kind != "opencl":
                raise InvalidArgumentError("platform/device select an OpenCL device "
                                           "(device= also selects a CUDA device)")
            check(lib.ck_context_new_opencl(platform or 0, device or 0, out))
        else:
            if not isinstance(kind, str):
                raise InvalidArgumentError(f"context kind must be a string, not {kind!r}")
            check(lib.ck_context_new(kind.encode(), out))
        self._ctx = out[0]
        self._finalizer = weakref.finalize(self, lib.ck_context_decref, self._ctx)

    @property
    def kind(self) -> str:
        return ffi.string(lib.ck_context_kind(self._ctx)).decode()

    @property
    def is_device(self) -> bool:
        """Whether arrays of this context are device arrays (not host memory)."""
        return self.kind != "cpu"

    @property
    def supports_fp64(self) -> bool:
        return bool(lib.ck_context_supports_fp64(self._ctx))

    def describe(self) -> str:
        n = ffi.new("size_t *")
        check(lib.ck_context_describe(self._ctx, ffi.NULL, 0, n))
        buf = ffi.new("char[]", n[0] + 1)
        check(lib.ck_context_describe(self._ctx, buf, n[0] + 1, n))
        return ffi.string(buf).decode()

    def new_buffer(self, capacity: int = 1024) -> Buffer:
        out = ffi.new("ck_buffer **")
        check(lib.ck_buffer_new(self._ctx, int(capacity), out))
        return Buffer._own(out[0], self)

    def build_program(self, source: str, options: str = "") -> Program:
        """Build (or fetch from the context's cache) a device program."""
        out = ffi.new("ck_program **")
        check(lib.ck_context_build_program(self._ctx, source.encode(), options.encode(), out))
        return Program(out[0])

    def finish(self) -> None:
        check(lib.ck_context_finish(self._ctx))

    # ---- hand-written kernels (ckernels.context.kernels) -------------------
    def build_kernels(self, source, kernels, types=None, filename=None):
        """Compile hand-written C (CPU), OpenCL C or CUDA C kernels that use the
        generated C API of ``types`` (see :func:`ckernels.c_api`); returns a
        :class:`~ckernels.context.kernels.ContextKernels` namespace whose attributes
        launch them, and adds them to :attr:`kernels`.  ``kernels`` is
        ``{"name": {"arg": "float64" | "Particle[]" | "const float64[]", ...}}``.
        See docs/c-api.md."""
        return _kernels.build_kernels(self, source, kernels, types, filename)

    @property
    def kernels(self):
        """Every kernel built in this context by :meth:`build_kernels`
        (``ctx.kernels.name(a=arr, n=10)``)."""
        return _kernels.namespace(self)

    # ---- placing arrays ----------------------------------------------------
    def array(self, obj, type=None):
        """A copy of ``obj`` in this context (anything ``np.asarray`` accepts, a
        ``ckernels.Array`` of a builtin type, a device array): a
        :class:`DeviceArray` in a device context, a host ``ckernels.Array`` in
        a ``"cpu"`` one.  ``type`` is a dtype (``"float32"``) or a full type
        (``"2 * 3 * float32"``, whose shape must match the data's)."""
        if not self.is_device:
            if isinstance(obj, DeviceArray):
                obj = obj.to_numpy()
            if type is not None:
                t = type if isinstance(type, Type) else Type(type)
                if t.ndim == 0 and t.is_builtin and np.ndim(obj) > 0:
                    # a dtype for array data (as for device contexts): the shape is the data's
                    return _host_array(np.asarray(obj, dtype=t.to_numpy_dtype()))
            return _host_array(obj, type=type)
        if not isinstance(obj, DeviceArray):
            shared = _adopt(self, obj)          # another library's device array
            if shared is not None:
                if type is None:
                    return shared.copy()
                obj = shared
        host = obj.to_numpy() if isinstance(obj, DeviceArray) else obj
        if type is None:
            host = np.asarray(host)
            if host.dtype.kind not in "biuf" and host.dtype.fields is None:
                raise NotSupportedError(f"Context.array: data of NumPy dtype {host.dtype} "
                                        f"cannot live on a {self.kind} device (bool, ints, "
                                        "float32/64 and aligned structs of them only)")
            return DeviceArray.from_host(self, host)
        shape, dt = _type_shape_dtype(type, None, "Context.array", self.kind)
        host = np.asarray(host, dtype=dt)
        if shape is not None and host.shape != shape:
            raise InvalidArgumentError(f"Context.array: data of shape {host.shape} does not "
                                       f"match type {type}")
        return DeviceArray.from_host(self, host)

    def empty(self, shape_or_type=(), dtype_or_shape=None):
        """An uninitialised array in this context: ``ctx.empty(shape, dtype)``
        (dtype defaults to float64) or ``ctx.empty(type, shape=())``."""
        a, b = shape_or_type, dtype_or_shape
        if isinstance(a, (str, Type, np.dtype)) or (isinstance(a, builtins.type) and
                                                    issubclass(a, np.generic)):
            typ, shape = a, b
        else:
            shape, typ = a, (b if b is not None else "float64")
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        if not self.is_device:
            if isinstance(typ, builtins.type):
                typ = np.dtype(typ)
            t = typ if isinstance(typ, Type) else Type(typ)
            shape = tuple(shape) if shape is not None else ()
            if t.ndim == 0 and shape:
                # a dtype and a shape (as for device contexts): fixed dims of that shape
                t = Type(" * ".join(str(int(n)) for n in shape) + f" * {t}")
                shape = ()
            return _host_empty(t, shape)
        shp, dt = _type_shape_dtype(typ, tuple(shape) if shape is not None else None,
                                    "Context.empty", self.kind)
        return DeviceArray.empty(self, shp or (), dt)

    def to(self, obj):
        """``obj`` in this context: a host array (NumPy, ``ckernels.Array``,
        anything ``np.asarray`` accepts) is copied in; a device array of this
        context is returned as it is, one of another context is copied (through
        the host: two contexts share no memory), and in a ``"cpu"`` context a
        device array becomes a host ``ckernels.Array``."""
        if isinstance(obj, DeviceArray):
            if not self.is_device:
                return _host_asarray(obj.to_numpy())
            if obj.context == self:
                return obj
            return DeviceArray.from_host(self, obj.to_numpy())
        if self.is_device:
            shared = _adopt(self, obj)          # another library's device array: no copy
            if shared is not None:
                return shared
        if not self.is_device:
            return obj if isinstance(obj, Array) else _host_asarray(np.array(obj, copy=True))
        return self.array(np.asarray(obj))

    # ---- protocol ----------------------------------------------------------
    def __eq__(self, other) -> bool:
        return isinstance(other, Context) and self._ctx == other._ctx

    def __hash__(self) -> int:
        return hash(int(ffi.cast("uintptr_t", self._ctx)))

    def __repr__(self) -> str:
        return f"<ckernels.Context {self.describe()}>"

    def _repr_html_(self) -> str:
        return f"<b>ckernels.Context</b> <code>{html.escape(self.describe())}</code>"


def _adopt(ctx: Context, obj):
    """``obj`` (another library's array in this context's device memory) as a
    DeviceArray sharing its memory, or None (the kind's ``adopt`` hook)."""
    adopt = backends.hook(ctx.kind, "adopt")
    return adopt(ctx, obj) if adopt is not None else None


def check_context(ctx, where: str) -> Context:
    """``ctx`` if it is a :class:`Context`, else InvalidArgumentError."""
    if not isinstance(ctx, Context):
        raise InvalidArgumentError(f"{where}: expected a ckernels.Context, not "
                                   f"{type(ctx).__name__}")
    return ctx


def same_context(a: Context, b: Context) -> bool:
    """Whether two :class:`Context` objects wrap the same C context."""
    return a == b


def _type_shape_dtype(type, shape, where, kind):
    """``(shape, numpy dtype)`` of a ckernel type (a ``Type``, a type string
    such as ``"float32"`` or ``"3 * 4 * float32"``, or a NumPy dtype).  Fixed
    dims give their sizes; other (strided) dims take theirs from ``shape``."""
    if isinstance(type, (np.dtype, np.generic)) or (isinstance(type, builtins.type) and
                                                   issubclass(type, np.generic)):
        return (tuple(shape) if shape is not None else None), np.dtype(type)
    t = type if isinstance(type, Type) else Type(type)
    if "var" in str(t):
        raise NotSupportedError(f"{where}: var dims ({t}) cannot live on a {kind} device")
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
        raise NotSupportedError(f"{where}: element type {t} is not supported on {kind} "
                                "devices")
    dt = t.to_numpy_dtype()
    return (tuple(dims) if (dims or shape is not None) else None), dt


__all__ = ["Context", "check_context", "same_context"]
