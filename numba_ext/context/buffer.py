"""Buffers: memory of a context (host memory or a device allocation), managed
by offsets.

A :class:`Buffer` owns one reference to a C ``ck_buffer`` (which keeps its
context alive) and knows the :class:`~ckernels.Context` object it came from.
Blocks are allocated first-fit with merging of freed neighbours; the buffer
grows (preserving contents) when nothing fits.  Reads, writes, fills and
copies go through the context's backend, so this class is the same for every
backend.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._native import check, ffi, lib
from ..errors import InvalidArgumentError


class Buffer:
    """Memory of a context, managed by offsets."""

    __slots__ = ("_buf", "context", "_finalizer", "__weakref__")

    @classmethod
    def _own(cls, ptr, context) -> "Buffer":
        """Wrap a new ``ck_buffer`` reference of ``context`` (a :class:`Context`)."""
        self = object.__new__(cls)
        self._buf = ptr
        self.context = context
        self._finalizer = weakref.finalize(self, lib.ck_buffer_decref, ptr)
        return self

    @classmethod
    def wrap(cls, context, address: int, nbytes: int, owner) -> "Buffer":
        """A buffer of ``context`` over ``nbytes`` at ``address`` that someone else
        owns, without a copy (``ck_buffer_wrap``: a device pointer for ``"cuda"``,
        a ``cl_mem`` of the context's cl_context for ``"opencl"``, a host
        pointer for ``"cpu"``; the library checks it).  ``owner`` is kept
        alive until the buffer dies; the library never frees the memory, and the
        buffer cannot grow."""
        from ..memory import release_callback
        release, handle = release_callback(owner)
        out = ffi.new("ck_buffer **")
        status = lib.ck_buffer_wrap(context._ctx, ffi.cast("void *", int(address)), int(nbytes),
                                    release, handle, out)
        if status != 0:
            release(handle)     # a failed wrap does not call it
            check(status)
        return cls._own(out[0], context)

    @property
    def native_handle(self) -> int:
        """The backend's handle of the memory as an int (``CUdeviceptr`` for
        ``"cuda"``, the host address for ``"cpu"``, the ``cl_mem`` for
        ``"opencl"``; ``ck_buffer_native_handle``), borrowed: valid while the
        buffer lives and does not grow."""
        return int(ffi.cast("uintptr_t", lib.ck_buffer_native_handle(self._buf)))

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
        return (f"<ckernels.Buffer capacity={self.capacity} used={self.used} "
                f"on {self.context.describe()}>")


__all__ = ["Buffer"]
