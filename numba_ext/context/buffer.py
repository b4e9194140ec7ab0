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


import numpy as np

from .. import _cargs
from .._cargs import c_size
from .._native import check, ffi, lib
from ..errors import InvalidArgumentError


class Buffer:
    """Memory of a context, managed by offsets."""

    __slots__ = ("_buf", "context", "__weakref__")

    @classmethod
    def _own(cls, ptr, context) -> "Buffer":
        """Wrap a new ``ck_buffer`` reference of ``context`` (a :class:`Context`);
        the reference is dropped when the buffer object dies (``ffi.gc``: a
        fraction of ``weakref.finalize``'s cost, which counts in every device
        call that makes a result)."""
        self = object.__new__(cls)
        self._buf = ffi.gc(ptr, lib.ck_buffer_decref)
        self.context = context
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
        check(lib.ck_buffer_allocate(self._buf, c_size(size, "Buffer.allocate: size"),
                                      c_size(align, "Buffer.allocate: align"), off))
        return off[0]

    def free(self, offset: int, size: int) -> None:
        check(lib.ck_buffer_free(self._buf, c_size(offset, "Buffer.free: offset"),
                                  c_size(size, "Buffer.free: size")))

    def grow(self, capacity: int) -> None:
        check(lib.ck_buffer_grow(self._buf, c_size(capacity, "Buffer.grow: capacity")))

    def write(self, offset: int, data) -> None:
        """Copy host bytes (bytes, bytearray, memoryview, NumPy array) in."""
        mv = memoryview(data).cast("B")
        src = ffi.from_buffer(mv)
        check(lib.ck_buffer_write(self._buf, c_size(offset, "Buffer.write: offset"), src, len(mv)))

    def read(self, offset: int, nbytes: int) -> bytearray:
        offset = c_size(offset, "Buffer.read: offset")
        out = bytearray(c_size(nbytes, "Buffer.read: nbytes", max=_cargs.INTPTR_MAX))
        check(lib.ck_buffer_read(self._buf, offset, ffi.from_buffer(out), len(out)))
        return out

    def read_into(self, offset: int, out) -> None:
        """Copy ``len(out)`` bytes at ``offset`` into a writable host buffer
        (bytearray, memoryview, C-contiguous NumPy array): no allocation."""
        if isinstance(out, np.ndarray) and out.dtype.kind in "Mm":
            out = out.view(np.int64)     # the buffer protocol has no datetime64 format
        mv = memoryview(out).cast("B")
        if mv.readonly:
            raise InvalidArgumentError("Buffer.read_into: the destination is read-only")
        if len(mv):
            check(lib.ck_buffer_read(self._buf, c_size(offset, "Buffer.read_into: offset"),
                                     ffi.from_buffer(mv), len(mv)))

    def to_numpy(self, offset: int, dtype, count: int) -> np.ndarray:
        """A host copy of ``count`` elements of ``dtype`` at ``offset``."""
        dt = np.dtype(dtype)
        count = c_size(count, "Buffer.to_numpy: count",
                       max=_cargs.INTPTR_MAX // max(dt.itemsize, 1))
        return np.frombuffer(self.read(offset, dt.itemsize * count), dtype=dt)

    def copy_from(self, dst_offset: int, src: "Buffer", src_offset: int, nbytes: int) -> None:
        """Device-side copy (both buffers in the same context)."""
        check(lib.ck_buffer_copy(self._buf, c_size(dst_offset, "Buffer.copy_from: dst_offset"),
                                 src._buf, c_size(src_offset, "Buffer.copy_from: src_offset"),
                                 c_size(nbytes, "Buffer.copy_from: nbytes")))

    def fill(self, offset: int, pattern: bytes, nbytes: int) -> None:
        check(lib.ck_buffer_fill(self._buf, c_size(offset, "Buffer.fill: offset"), pattern,
                                 len(pattern), c_size(nbytes, "Buffer.fill: nbytes")))

    def __repr__(self) -> str:
        return (f"<ckernels.Buffer capacity={self.capacity} used={self.used} "
                f"on {self.context.describe()}>")

    def _repr_html_(self) -> str:
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)


__all__ = ["Buffer"]
