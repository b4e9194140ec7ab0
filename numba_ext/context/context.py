"""Contexts and buffers: CPU memory and OpenCL devices behind one interface.

>>> import ckernels
>>> ctx = ckernels.Context("cpu")            # or "opencl" (CK_OPENCL_DEVICE="p:d")
>>> buf = ctx.new_buffer(1024)
>>> off = buf.allocate(16, align=8)
>>> buf.write(off, b"0123456789abcdef"); bytes(buf.read(off, 4))
b'0123'

A :class:`Context` owns one reference to a C ``ck_context``; a :class:`Buffer` one
reference to a ``ck_buffer`` (which keeps its context alive).  Buffers allocate
first-fit with merging of freed neighbours and grow (preserving contents) when
nothing fits.  Running ``@ckernels.jit`` kernels on OpenCL comes with the OpenCL C
emitter (not built yet); this module is the memory and program layer.
"""

from __future__ import annotations

import html
import weakref

import numpy as np

from .._native import check, ffi, lib
from ..errors import InvalidArgumentError


class Context:
    """A compute context: ``Context("cpu")``, ``Context("opencl")`` or
    ``Context("opencl", platform=0, device=0)``."""

    __slots__ = ("_ctx", "_finalizer", "__weakref__")

    def __init__(self, kind: str = "cpu", platform: int | None = None,
                 device: int | None = None):
        out = ffi.new("ck_context **")
        if platform is not None or device is not None:
            if kind != "opencl":
                raise InvalidArgumentError("platform/device select an OpenCL device")
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
    def supports_fp64(self) -> bool:
        return bool(lib.ck_context_supports_fp64(self._ctx))

    def describe(self) -> str:
        n = ffi.new("size_t *")
        check(lib.ck_context_describe(self._ctx, ffi.NULL, 0, n))
        buf = ffi.new("char[]", n[0] + 1)
        check(lib.ck_context_describe(self._ctx, buf, n[0] + 1, n))
        return ffi.string(buf).decode()

    def new_buffer(self, capacity: int = 1024) -> "Buffer":
        out = ffi.new("ck_buffer **")
        check(lib.ck_buffer_new(self._ctx, int(capacity), out))
        return Buffer._own(out[0])

    def build_program(self, source: str, options: str = "") -> "Program":
        """Build (or fetch from the context's cache) a device program."""
        out = ffi.new("ck_program **")
        check(lib.ck_context_build_program(self._ctx, source.encode(), options.encode(), out))
        return Program(out[0])

    def finish(self) -> None:
        check(lib.ck_context_finish(self._ctx))

    def array(self, obj, type=None):
        """A copy of ``obj`` in this context: a ``ckernels.opencl.DeviceArray``
        for an OpenCL context, a host ``ckernels.Array`` for a ``"cpu"`` one.
        ``type`` is a dtype (``"float32"``) or a full type (``"2 * 3 * int64"``)."""
        from .device_array import array
        return array(self, obj, type)

    def empty(self, shape_or_type=(), dtype_or_shape=None):
        """An uninitialised array in this context: ``ctx.empty(shape, dtype)``
        (dtype defaults to float64) or ``ctx.empty(type, shape=())``."""
        from .device_array import empty_in
        return empty_in(self, shape_or_type, dtype_or_shape)

    def to(self, obj):
        """``obj`` (host or device array) in this context; see ``ckernels.opencl.to``."""
        from .device_array import to
        return to(self, obj)

    def __eq__(self, other) -> bool:
        return isinstance(other, Context) and self._ctx == other._ctx

    def __hash__(self) -> int:
        return hash(int(ffi.cast("uintptr_t", self._ctx)))

    def __repr__(self) -> str:
        return f"<ckernels.Context {self.describe()}>"

    def _repr_html_(self) -> str:
        return f"<b>ckernels.Context</b> <code>{html.escape(self.describe())}</code>"


class Program:
    """A built device program (from the context's program cache)."""

    __slots__ = ("_prog", "_finalizer", "__weakref__")

    def __init__(self, ptr):
        self._prog = ptr
        self._finalizer = weakref.finalize(self, lib.ck_program_decref, ptr)

    def launch(self, kernel_name: str, global_size: int, *args) -> None:
        """Run ``kernel_name`` over ``global_size`` work items.  Each argument
        is a ``(Buffer, offset)`` pair or a NumPy scalar (passed by value)."""
        cargs = ffi.new("ck_kernel_arg[]", max(len(args), 1))
        keep = []
        for i, a in enumerate(args):
            if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], Buffer):
                cargs[i].kind = lib.CK_KERNEL_ARG_BUFFER
                cargs[i].buffer = a[0]._buf
                cargs[i].offset = int(a[1])
            elif isinstance(a, np.generic):
                raw = ffi.new("char[]", a.tobytes())
                keep.append(raw)
                cargs[i].kind = lib.CK_KERNEL_ARG_SCALAR
                cargs[i].value = raw
                cargs[i].size = a.itemsize
            else:
                raise InvalidArgumentError(
                    f"kernel argument {i} must be (Buffer, offset) or a NumPy scalar, "
                    f"not {type(a).__name__}")
        ctx = lib.ck_program_context(self._prog)
        check(lib.ck_context_launch(ctx, self._prog, kernel_name.encode(), len(args), cargs,
                                    int(global_size)))


class Buffer:
    """Memory of a context, managed by offsets."""

    __slots__ = ("_buf", "_finalizer", "__weakref__")

    @classmethod
    def _own(cls, ptr) -> "Buffer":
        self = object.__new__(cls)
        self._buf = ptr
        self._finalizer = weakref.finalize(self, lib.ck_buffer_decref, ptr)
        return self

    @property
    def capacity(self) -> int:
        return lib.ck_buffer_capacity(self._buf)

    @property
    def used(self) -> int:
        return lib.ck_buffer_used(self._buf)

    def allocate(self, size: int, align: int = 8) -> int:
        """Offset of a new block of ``size`` bytes (grows the buffer if needed)."""
        off = ffi.new("size_t *")
        check(lib.ck_buffer_allocate(self._buf, int(size), int(align), off))
        return off[0]

    def free(self, offset: int, size: int) -> None:
        check(lib.ck_buffer_free(self._buf, int(offset), int(size)))

    def grow(self, capacity: int) -> None:
        check(lib.ck_buffer_grow(self._buf, int(capacity)))

    def write(self, offset: int, data) -> None:
        """Copy host bytes (bytes, bytearray, memoryview, NumPy array) in."""
        mv = memoryview(data).cast("B")
        src = ffi.from_buffer(mv)
        check(lib.ck_buffer_write(self._buf, int(offset), src, len(mv)))

    def read(self, offset: int, nbytes: int) -> bytearray:
        out = bytearray(int(nbytes))
        check(lib.ck_buffer_read(self._buf, int(offset), ffi.from_buffer(out), len(out)))
        return out

    def read_into(self, offset: int, out) -> None:
        """Copy ``len(out)`` bytes at ``offset`` into a writable host buffer
        (bytearray, memoryview, C-contiguous NumPy array): no allocation."""
        mv = memoryview(out).cast("B")
        if mv.readonly:
            raise InvalidArgumentError("Buffer.read_into: the destination is read-only")
        if len(mv):
            check(lib.ck_buffer_read(self._buf, int(offset), ffi.from_buffer(mv), len(mv)))

    def to_numpy(self, offset: int, dtype, count: int) -> np.ndarray:
        """A host copy of ``count`` elements of ``dtype`` at ``offset``."""
        dt = np.dtype(dtype)
        return np.frombuffer(self.read(offset, dt.itemsize * int(count)), dtype=dt)

    def copy_from(self, dst_offset: int, src: "Buffer", src_offset: int, nbytes: int) -> None:
        """Device-side copy (both buffers in the same context)."""
        check(lib.ck_buffer_copy(self._buf, int(dst_offset), src._buf, int(src_offset),
                                 int(nbytes)))

    def fill(self, offset: int, pattern: bytes, nbytes: int) -> None:
        check(lib.ck_buffer_fill(self._buf, int(offset), pattern, len(pattern), int(nbytes)))

    def __repr__(self) -> str:
        return f"<ckernels.Buffer capacity={self.capacity} used={self.used}>"


__all__ = ["Context", "Buffer", "Program"]
