"""What a context owns: the handle arrays point at.

>>> from ckernels.context.handle import ContextHandle
>>> ctx = ContextHandle("cpu")    # or "opencl" (CK_OPENCL_DEVICE="p:d"), "cuda"
>>> buf = ctx.new_buffer(1024)
>>> off = buf.allocate(16, align=8)
>>> buf.write(off, b"0123456789abcdef"); bytes(buf.read(off, 4))
b'0123'

A :class:`ContextHandle` owns one reference to a C ``ck_context``.  It makes
:class:`~ckernels.context.buffer.Buffer` objects (memory managed by offsets)
and builds :class:`~ckernels.context.program.Program` objects (device code,
cached per context and source).  It makes no arrays: placing arrays in a
context is the public :class:`ckernels.Context`'s (:mod:`ckernels.device.place`,
a subclass of this handle).  Per-kind set-up (NVRTC, a CUDA device ordinal)
comes from the kind's backend (:func:`ckernels.backends.hook`).
"""

from __future__ import annotations

import re
import threading
import weakref

from .. import backends
from .._cargs import c_size, c_text
from .._native import c_text_out, check, ffi, lib
from ..errors import InvalidArgumentError
from .buffer import Buffer
from .program import Program


class ContextHandle:
    """What a compute context owns: one reference to a C ``ck_context``, its
    kind and description, and what it makes that is no array -- buffers
    (:meth:`new_buffer`, :meth:`wrap_buffer`), programs
    (:meth:`build_program`).  ``ContextHandle("cpu")``, ``("opencl")``,
    ``("opencl", platform=0, device=0)``, ``("cuda")``, ``("cuda", device=1)``;
    over OpenCL objects made elsewhere: :meth:`from_opencl`,
    :meth:`from_pyopencl`.  Arrays point at their context; the public
    :class:`ckernels.Context` (:mod:`ckernels.device.place`) is this handle
    plus the methods that place arrays in it."""

    __slots__ = ("_ctx", "_kind", "_finalizer", "_brief", "_pyopencl", "__weakref__")

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
                    ) -> "ContextHandle":
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
    def from_pyopencl(cls, queue) -> "ContextHandle":
        """The context over a ``pyopencl.CommandQueue``'s cl_context, device and
        queue (one per queue: asking again gives the same object while it
        lives), so that pyopencl arrays on that queue and device arrays of
        this context share memory."""
        from ..backends.cl_interop import queue_handles
        key = queue_handles(queue)
        with _WRAPPED_LOCK:
            ref = _WRAPPED.get((cls, key))
            ctx = ref() if ref is not None else None
            if ctx is None:
                ctx = cls.from_opencl(*key)
                ctx._pyopencl = queue
                _WRAPPED[(cls, key)] = weakref.ref(ctx)
        return ctx

    @classmethod
    def default(cls, kind: str = "cpu") -> "ContextHandle":
        """The process's shared context of ``kind`` as a ``cls`` (made on first
        use; every class's default of one kind wraps the same C context)."""
        return shared(kind, cls)

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
        return c_text_out(lib.ck_context_describe, self._ctx)

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

    # ---- protocol ----------------------------------------------------------
    def __eq__(self, other) -> bool:
        return isinstance(other, ContextHandle) and self._ctx == other._ctx

    def __hash__(self) -> int:
        return hash(int(ffi.cast("uintptr_t", self._ctx)))

    def __repr__(self) -> str:
        return f"<ckernels.{type(self).__name__} {self.describe()}>"

    def _repr_html_(self) -> str:
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)


_BRIEF = re.compile(r"^(\w+):\s*([^\[(,]+?)\s*(?:\[|\(|,|$)")
# (class, (cl_context, device, queue) addresses) -> the context wrapping them
_WRAPPED: dict = {}
_WRAPPED_LOCK = threading.Lock()
# (class, kind) -> the process's shared context of that kind as that class
_SHARED: dict = {}


#: the class :func:`shared` makes when none is named: the public
#: ``ckernels.Context`` once :mod:`ckernels.device.place` is imported (it
#: registers itself through :func:`publish`; ``import ckernels`` does), so
#: that ``Array.context`` is the full Context without an upward import
_PUBLIC: list = [ContextHandle]


def publish(cls) -> None:
    """Make ``cls`` (a subclass of :class:`ContextHandle`) the class of the
    shared contexts asked for without a class (``Array.context``)."""
    if not (isinstance(cls, type) and issubclass(cls, ContextHandle)):
        raise TypeError(f"publish: {cls!r} is not a ContextHandle class")
    _PUBLIC[0] = cls


def shared(kind: str, cls=None) -> ContextHandle:
    """The process's shared context of ``kind`` as a ``cls`` (a
    :class:`ContextHandle` or a subclass; by default the published public
    class), made on first use.  One C context per kind: the shared objects of
    every class wrap the same ``ck_context`` (each holding its own reference),
    so they compare equal (``==``)."""
    if cls is None:
        cls = _PUBLIC[0]
    with _WRAPPED_LOCK:
        ctx = _SHARED.get((cls, kind))
        if ctx is None:
            other = next((c for (_, k), c in _SHARED.items() if k == kind), None)
            if other is None:
                ctx = cls(kind)
            else:
                lib.ck_context_incref(other._ctx)
                ctx = object.__new__(cls)
                ctx._own(other._ctx)
            _SHARED[(cls, kind)] = ctx
    return ctx


__all__ = ["ContextHandle", "publish", "shared"]
