"""Contexts: CPU memory and devices (OpenCL, CUDA) behind one interface.

>>> import ckernels
>>> ctx = ckernels.Context("cpu")    # or "opencl" (CK_OPENCL_DEVICE="p:d"), "cuda"
>>> buf = ctx.new_buffer(1024)
>>> off = buf.allocate(16, align=8)
>>> buf.write(off, b"0123456789abcdef"); bytes(buf.read(off, 4))
b'0123'

A :class:`Context` owns one reference to a C ``ck_context``.  It makes
:class:`~ckernels.context.buffer.Buffer` objects (memory managed by offsets),
builds :class:`~ckernels.context.program.Program` objects (device code, cached
per context and source) and places arrays: :meth:`Context.array`,
:meth:`Context.empty` and :meth:`Context.to` give a host ``ckernels.Array`` in a
``"cpu"`` context and a :class:`~ckernels.device.array.DeviceArray`
in a device context.  Running ``@ckernels.jit`` functions on device arrays is
``ckernels.jit``'s business (one module per target).
"""

from __future__ import annotations

import builtins
import re
import threading
import weakref

import numpy as np

from .._cargs import c_size, c_text
from .._native import check, ffi, lib
from ..host.array import Array
from ..host.array import array as _host_array
from ..host.array import asarray as _host_asarray
from ..host.array import empty as _host_empty
from ..errors import InvalidArgumentError, NotSupportedError
from ..types import Type
from .. import dialects
from ..user_kernels import build as _kernels
from .buffer import Buffer
from ..device.array import DeviceArray
from .program import Program


class Context:
    """A compute context: ``Context("cpu")``, ``Context("opencl")``,
    ``Context("opencl", platform=0, device=0)``, ``Context("cuda")`` or
    ``Context("cuda", device=1)``; over OpenCL objects made elsewhere:
    :meth:`from_opencl`, :meth:`from_pyopencl`."""

    __slots__ = ("_ctx", "_kind", "_finalizer", "_brief", "_pyopencl", "__weakref__")

    def __init__(self, kind: str = "cpu", platform: int | None = None,
                 device: int | None = None):
        out = ffi.new("ck_context **")
        prepare = dialects.hook(kind, "prepare") if isinstance(kind, str) else None
        if prepare is not None:
            prepare()
        make = dialects.hook(kind, "new_context") if isinstance(kind, str) else None
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
            check(lib.ck_context_new(c_text(kind, "context kind"), out))
        self._own(out[0])

    def _own(self, ptr) -> None:
        self._ctx = ptr
        self._kind = ffi.string(lib.ck_context_kind(ptr)).decode()
        self._brief = None
        self._pyopencl = None
        self._finalizer = weakref.finalize(self, lib.ck_context_decref, ptr)

    @classmethod
    def from_opencl(cls, cl_context: int, cl_device: int, cl_queue: int | None = None
                    ) -> "Context":
        """An OpenCL context over a ``cl_context``, one of its ``cl_device_id``
        and (optionally) a ``cl_command_queue`` made elsewhere, given as
        integer addresses (``ck_context_new_opencl_wrap``: the objects are
        retained, nothing is copied).  Buffers of the two sides can then be
        shared: see :func:`ckernels.from_pyopencl`."""
        handles = []
        for name, v in (("cl_context", cl_context), ("cl_device", cl_device),
                        ("cl_queue", cl_queue)):
            if v is None:
                handles.append(ffi.NULL)
                continue
            try:
                v = int(v)
            except (TypeError, ValueError):
                raise InvalidArgumentError(f"Context.from_opencl: {name} must be an integer "
                                           f"address, not {type(v).__name__}") from None
            if not 0 < v < 2**64:
                raise InvalidArgumentError(f"Context.from_opencl: {name}={v} is not an "
                                           "address")
            handles.append(ffi.cast("void *", v))
        out = ffi.new("ck_context **")
        check(lib.ck_context_new_opencl_wrap(*handles, out))
        self = object.__new__(cls)
        self._own(out[0])
        return self

    @classmethod
    def from_pyopencl(cls, queue) -> "Context":
        """The context over a ``pyopencl.CommandQueue``'s cl_context, device and
        queue (one per queue: asking again gives the same object while it
        lives), so that pyopencl arrays on that queue and device arrays of
        this context share memory."""
        from ..backends.cl_interop import queue_handles
        key = queue_handles(queue)
        with _WRAPPED_LOCK:
            ref = _WRAPPED.get(key)
            ctx = ref() if ref is not None else None
            if ctx is None:
                ctx = cls.from_opencl(*key)
                ctx._pyopencl = queue
                _WRAPPED[key] = weakref.ref(ctx)
        return ctx

    @classmethod
    def default(cls, kind: str = "cpu") -> "Context":
        """The process's shared context of ``kind`` (:func:`default_context`)."""
        return default_context(kind)

    def native_handles(self) -> tuple:
        """``(cl_context, cl_device_id, cl_command_queue)`` as integer
        addresses, borrowed (valid while the context lives; opencl only)."""
        c, d, q = ffi.new("void **"), ffi.new("void **"), ffi.new("void **")
        check(lib.ck_context_native_handles(self._ctx, c, d, q))
        return tuple(int(ffi.cast("uintptr_t", x[0])) for x in (c, d, q))

    def pyopencl_queue(self):
        """A ``pyopencl.CommandQueue`` over this context's own queue (made once;
        for a context from :meth:`from_pyopencl`, that queue)."""
        if self._pyopencl is None:
            from ..backends.cl_interop import pyopencl_queue
            self._pyopencl = pyopencl_queue(*self.native_handles())
        return self._pyopencl

    def wrap_buffer(self, native: int, nbytes: int, owner=None) -> Buffer:
        """A :class:`Buffer` over ``nbytes`` of memory someone else allocated in
        this context (a ``cl_mem`` of this cl_context for OpenCL, a device
        pointer for CUDA, as an integer; :meth:`Buffer.wrap`), without a copy.
        ``owner`` (any Python object) is kept alive until the buffer dies."""
        return Buffer.wrap(self, native, nbytes, owner)

    def from_dlpack(self, x):
        """The memory of a DLPack producer ``x`` on this context's device as a
        device array, without a copy (OpenCL: its ``cl_mem`` must belong to
        this cl_context; CUDA: to this context's device); in a ``"cpu"``
        context, a host ``ckernels.Array`` sharing ``x``'s host memory.  See
        :mod:`ckernels.backends.dlpack`."""
        from ..backends.dlpack import import_array
        return import_array(self, x)

    @property
    def brief(self) -> str:
        """Kind and device in a few words (``"opencl: pthread-haswell-AMD EPYC"``),
        as array reprs name their context."""
        if self._brief is None:
            d = self.describe()
            m = _BRIEF.match(d)
            self._brief = f"{m.group(1)}: {m.group(2)}" if m else d
        return self._brief

    @property
    def kind(self) -> str:
        return self._kind

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
        check(lib.ck_buffer_new(self._ctx, c_size(capacity, "Context.new_buffer: capacity"),
                                out))
        return Buffer._own(out[0], self)

    def build_program(self, source: str, options: str = "") -> Program:
        """Build (or fetch from the context's cache) a device program."""
        out = ffi.new("ck_program **")
        check(lib.ck_context_build_program(self._ctx, c_text(source, "program source"),
                                           c_text(options, "build options"), out))
        return Program(out[0])

    def finish(self) -> None:
        check(lib.ck_context_finish(self._ctx))

    # ---- hand-written kernels (ckernels.user_kernels.build) --------------
    def build_kernels(self, source, kernels, types=None, filename=None):
        """Compile hand-written C (CPU), OpenCL C or CUDA C kernels that use the
        generated C API of ``types`` (see :func:`ckernels.c_api`); returns a
        :class:`~ckernels.user_kernels.build.ContextKernels` namespace whose attributes
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

    def empty(self, shape_or_type=(), dtype_or_shape=None, *, dtype=None, shape=None):
        """An uninitialised array in this context, with NumPy's signature:
        ``ctx.empty(shape, dtype)`` or ``ctx.empty(shape, dtype=...)`` (dtype
        defaults to float64); also ``ctx.empty(type, shape)``."""
        if dtype is not None:
            if dtype_or_shape is not None:
                raise InvalidArgumentError("Context.empty: dtype given twice")
            dtype_or_shape = dtype
        if shape is not None:
            if shape_or_type != ():
                raise InvalidArgumentError("Context.empty: shape given twice")
            shape_or_type = shape
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

    def zeros(self, shape=(), dtype=None):
        """An array of zeros in this context (``numpy.zeros``' signature)."""
        return self.full(shape, 0, dtype)

    def ones(self, shape=(), dtype=None):
        """An array of ones in this context (``numpy.ones``' signature)."""
        return self.full(shape, 1, dtype)

    def full(self, shape, fill_value, dtype=None):
        """An array with every element ``fill_value`` in this context
        (``numpy.full``' signature; dtype defaults to float64)."""
        a = self.empty(shape, dtype=dtype if dtype is not None else "float64")
        a._assign(fill_value)
        return a

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
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)


def _adopt(ctx: Context, obj):
    """``obj`` (another library's array in this context's device memory) as a
    DeviceArray sharing its memory, or None (the kind's ``adopt`` hook)."""
    adopt = dialects.hook(ctx.kind, "adopt")
    return adopt(ctx, obj) if adopt is not None else None


_BRIEF = re.compile(r"^(\w+):\s*([^\[(,]+?)\s*(?:\[|\(|,|$)")
# (cl_context, device, queue) addresses -> the Context wrapping them
_WRAPPED: dict = {}
_WRAPPED_LOCK = threading.Lock()
_DEFAULT: dict = {}


def default_context(kind: str) -> Context:
    """One shared context per kind (``Context(kind)``, made on first use):
    where unpickled device arrays go."""
    with _WRAPPED_LOCK:
        ctx = _DEFAULT.get(kind)
        if ctx is None:
            ctx = _DEFAULT[kind] = Context(kind)
    return ctx




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


__all__ = ["Context", "check_context", "same_context", "default_context"]
