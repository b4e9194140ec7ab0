"""Python objects over the memory core: :class:`MemBlock` and :class:`PodAllocator`.

A :class:`MemBlock` owns exactly one reference to a C ``ck_memblock``; it drops
it on :meth:`MemBlock.close`, on leaving a ``with`` block, or when garbage
collected, whichever comes first (exactly once).  Using a closed block raises
:class:`~ckernels.errors.InvalidStateError` instead of touching freed memory.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from typing import Any, NamedTuple

from ._cargs import c_address, c_size
from ._native import c_text_out, check, ffi, lib
from .errors import CKTypeError, InvalidArgumentError, InvalidStateError

KIND_NAMES = {
    lib.CK_MEMBLOCK_ARRAY: "array",
    lib.CK_MEMBLOCK_EXTERNAL: "external",
    lib.CK_MEMBLOCK_FIXED_SIZE_POD: "fixed_size_pod",
    lib.CK_MEMBLOCK_POD: "pod",
    lib.CK_MEMBLOCK_ZEROINIT: "zeroinit",
}

# Python objects owned by live external memblocks, keyed by their cffi handle
# address.  The C release callback (any thread; cffi takes the GIL) pops them.
_external_owners: dict[int, Any] = {}
_external_lock = threading.Lock()


@ffi.def_extern()
def ck_py_release(handle):  # called by libckernel, exactly once per block
    with _external_lock:
        _external_owners.pop(int(ffi.cast("uintptr_t", handle)), None)


def release_callback(obj: Any):
    """``(release, handle)`` for C calls that take a release callback and its
    argument (``ck_external_memblock_new``, ``ck_buffer_wrap``): ``obj`` stays
    alive until the library calls ``release(handle)`` (once)."""
    handle = ffi.new_handle(obj)
    with _external_lock:
        _external_owners[int(ffi.cast("uintptr_t", handle))] = handle
    return _RELEASE, handle


#: the C guard around ck_py_release (see cffi_build/build_ffi.py)
_RELEASE = ffi.addressof(lib, "ck_py_release_guarded")
# at exit, blocks still held by C objects (ufunc loops, registered kernels) are
# released after cffi's callback state is gone: leave their owners alone then
atexit.register(lib.ck_py_release_stop)


def live_count() -> int:
    """Number of C memblocks alive in the process (all kinds)."""
    return lib.ck_memblock_live_count()


class PodStats(NamedTuple):
    capacity: int
    used: int
    chunks: int
    allocations: int
    finalized: bool


def _decref(ptr) -> None:
    lib.ck_memblock_decref(ptr)


def memblock_at(address, what: str, *, kind: int | None = None, size: int = 0):
    """The ``ck_memblock *`` at an address handed in from outside (an int or
    a cffi pointer), checked as far as can be done without trusting it: not
    NULL, pointer-aligned (every memblock is a heap allocation), its header
    (``size`` bytes, at least the 8 of the header) readable, a known kind
    (``kind`` if given) and a reference count of at least 1.

    What cannot be checked: a block that was freed and whose memory is still
    mapped, or foreign memory that happens to look like a header.  An address
    is only as good as the reference that keeps the block alive."""
    addr = c_address(address, what, align=ffi.alignof("void *"),
                     size=max(size, ffi.sizeof("ck_memblock")))
    ptr = ffi.cast("ck_memblock *", addr)
    if ptr.kind not in KIND_NAMES or (kind is not None and ptr.kind != kind):
        want = f"{KIND_NAMES[kind]} memblock" if kind is not None else "memblock"
        raise InvalidArgumentError(f"{what}: address {addr:#x} is not a live {want} "
                                   f"(kind field {ptr.kind})")
    if lib.ck_memblock_refcount(ptr) == 0:
        raise InvalidArgumentError(f"{what}: the memblock at {addr:#x} has a reference "
                                   "count of 0 (freed)")
    return ptr


class MemBlock:
    """One owned reference to a C memory block."""

    __slots__ = ("_ptr", "_finalizer", "__weakref__")

    def __init__(self, ptr, *, incref: bool = False):
        """Wrap ``ptr`` (a ``ck_memblock *`` as a cffi pointer or an integer
        address), taking ownership of one reference.

        With ``incref=True`` a new reference is added first (borrowing).  The
        address is checked (:func:`memblock_at`: not NULL, aligned, mapped, a
        live block of a known kind); a wrong one is ``InvalidArgumentError``.
        """
        self._init(memblock_at(ptr, "MemBlock"), incref)

    def _init(self, ptr, incref: bool) -> None:
        if incref:
            lib.ck_memblock_incref(ptr)
        self._ptr = ptr
        self._finalizer = weakref.finalize(self, _decref, ptr)

    @classmethod
    def _wrap(cls, ptr, *, incref: bool = False) -> "MemBlock":
        """Wrap a ``ck_memblock *`` the library just handed out (unchecked)."""
        self = object.__new__(cls)
        self._init(ptr, incref)
        return self

    # ---- constructors -------------------------------------------------
    @classmethod
    def pod(cls, initial_capacity: int = 0) -> "MemBlock":
        """A pod arena (see :class:`PodAllocator`)."""
        out = ffi.new("ck_memblock **")
        check(lib.ck_pod_memblock_new(c_size(initial_capacity, "MemBlock.pod: initial_capacity"),
                                      out))
        return cls._wrap(out[0])

    @classmethod
    def zeroinit(cls, initial_capacity: int = 0) -> "MemBlock":
        """A pod arena whose memory reads as zero."""
        out = ffi.new("ck_memblock **")
        check(lib.ck_zeroinit_memblock_new(
            c_size(initial_capacity, "MemBlock.zeroinit: initial_capacity"), out))
        return cls._wrap(out[0])

    @classmethod
    def fixed_size_pod(cls, size: int, align: int = 16) -> "MemBlock":
        """Header and ``size`` zeroed bytes (aligned to ``align``) in one allocation."""
        out = ffi.new("ck_memblock **")
        data = ffi.new("char **")
        check(lib.ck_fixed_size_pod_memblock_new(c_size(size, "MemBlock.fixed_size_pod: size"),
                                                 c_size(align, "MemBlock.fixed_size_pod: align"),
                                                 out, data))
        return cls._wrap(out[0])

    @classmethod
    def external(cls, obj: Any) -> "MemBlock":
        """A block that keeps the Python object ``obj`` alive until freed."""
        handle = ffi.new_handle(obj)
        key = int(ffi.cast("uintptr_t", handle))
        with _external_lock:
            _external_owners[key] = handle
        out = ffi.new("ck_memblock **")
        status = lib.ck_external_memblock_new(handle, _RELEASE, out)
        if status != 0:
            with _external_lock:
                _external_owners.pop(key, None)
            check(status)
        return cls._wrap(out[0])

    # ---- reference management -----------------------------------------
    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        """Drop this object's reference now (idempotent)."""
        self._finalizer()

    def __enter__(self) -> "MemBlock":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def ptr(self):
        """The ``ck_memblock *`` (cffi pointer); raises if closed."""
        if not self._finalizer.alive:
            raise InvalidStateError("MemBlock: the memblock was closed (reference dropped)")
        return self._ptr

    @property
    def address(self) -> int:
        """The ``ck_memblock *`` as an integer, for C and jitted code.  It is
        valid only while a reference keeps the block alive: this object (until
        :meth:`close`) or one taken with :meth:`new_reference`."""
        return int(ffi.cast("uintptr_t", self.ptr))

    def new_reference(self) -> "MemBlock":
        """Another owning Python object for the same block (refcount + 1)."""
        return MemBlock._wrap(self.ptr, incref=True)

    # ---- inspection ---------------------------------------------------
    @property
    def refcount(self) -> int:
        return lib.ck_memblock_refcount(self.ptr)

    @property
    def kind_id(self) -> int:
        return self.ptr.kind

    @property
    def kind(self) -> str:
        return KIND_NAMES.get(self.kind_id, "invalid")

    def debug_repr(self) -> str:
        return c_text_out(lib.ck_memblock_debug_print, self.ptr)

    @property
    def stats(self) -> PodStats:
        """Arena statistics (pod and zeroinit blocks only)."""
        st = ffi.new("ck_pod_stats *")
        check(lib.ck_pod_memblock_stats(self.ptr, st))
        return PodStats(st.capacity, st.used, st.chunks, st.allocations, bool(st.finalized))

    @property
    def data(self) -> memoryview:
        """Writable view of a fixed-size block's data (keeps the block alive)."""
        data = ffi.new("char **")
        size = ffi.new("size_t *")
        check(lib.ck_fixed_size_pod_memblock_data(self.ptr, data, size))
        return _owned_view(self, data[0], size[0])

    @property
    def object(self) -> Any:
        """The Python object an external block keeps alive."""
        obj = ffi.new("void **")
        check(lib.ck_external_memblock_object(self.ptr, obj))
        with _external_lock:
            if int(ffi.cast("uintptr_t", obj[0])) not in _external_owners:
                raise CKTypeError("MemBlock.object: external block not created from Python")
        return ffi.from_handle(obj[0])

    @property
    def allocator(self) -> "PodAllocator":
        return PodAllocator(self)

    def __repr__(self) -> str:
        if self.closed:
            return "<ckernels.MemBlock (closed)>"
        return f"<ckernels.MemBlock {self.debug_repr()}>"

    def _repr_html_(self) -> str:
        from .display import html  # the rich display (imported lazily: no cycle)
        return html(self)


def _owned_view(owner: MemBlock, ptr, size: int) -> memoryview:
    """A writable memoryview of ``size`` bytes at ``ptr`` that keeps a new
    reference to ``owner``'s block alive for as long as the view exists."""
    keep = owner.new_reference()
    cptr = ffi.gc(ffi.cast("char *", ptr), lambda _p: keep.close())
    return memoryview(ffi.buffer(cptr, size))


class Allocation:
    """One allocation of a pod arena: ``[begin, end)``."""

    __slots__ = ("allocator", "begin", "end", "_views")

    def __init__(self, allocator: "PodAllocator", begin: int, end: int):
        self.allocator = allocator
        self.begin = begin
        self.end = end
        self._views: list[memoryview] = []

    @property
    def size(self) -> int:
        return self.end - self.begin

    def view(self) -> memoryview:
        """A writable memoryview of the bytes.

        A resize may move the allocation, so :meth:`PodAllocator.resize`
        releases the views handed out here (using one afterwards raises
        ``ValueError``, never touches stale memory).  Like a C pointer, memory
        addresses copied out of a view by another library (``np.frombuffer``
        does this) are invalidated by a resize.
        """
        mv = _owned_view(self.allocator.memblock, self.begin, self.size)
        self._views.append(mv)
        return mv

    def _release_views(self) -> None:
        for mv in self._views:
            try:
                mv.release()
            except BufferError:
                raise InvalidStateError(
                    "cannot resize: a buffer of this allocation is still exported "
                    "(e.g. a NumPy array made from its view); delete it first") from None
        self._views.clear()

    def __repr__(self) -> str:
        return f"<ckernels.Allocation [{self.begin:#x}, {self.end:#x}) size={self.size}>"


class PodAllocator:
    """The pod allocator API of an arena memblock, for Python callers."""

    __slots__ = ("memblock", "_api", "_latest_span")

    def __init__(self, memblock: MemBlock):
        api = lib.ck_memblock_pod_allocator_api(memblock.ptr)
        if api == ffi.NULL:
            from ._native import last_error
            raise CKTypeError(last_error(), lib.CK_ERR_TYPE)
        self.memblock = memblock
        self._api = api
        self._latest_span: tuple[int, int] | None = None

    def allocate(self, size: int, align: int = 1) -> Allocation:
        b = ffi.new("char **")
        e = ffi.new("char **")
        check(self._api.allocate(self.memblock.ptr, c_size(size, "PodAllocator.allocate: size"),
                                 c_size(align, "PodAllocator.allocate: align"), b, e))
        alloc = Allocation(self, _addr(b[0]), _addr(e[0]))
        self._latest_span = (alloc.begin, alloc.end)
        return alloc

    def resize(self, alloc: Allocation, size: int) -> Allocation:
        """Resize ``alloc`` (must be the latest allocation); updates it in place.

        Views previously taken with :meth:`Allocation.view` are released,
        because the allocation may move.
        """
        size = c_size(size, "PodAllocator.resize: size")
        if not isinstance(alloc, Allocation):
            raise CKTypeError(f"PodAllocator.resize: expected an Allocation, not "
                              f"{type(alloc).__name__}")
        b = ffi.new("char **", ffi.cast("char *", alloc.begin))
        e = ffi.new("char **", ffi.cast("char *", alloc.end))
        if self._latest_span == (alloc.begin, alloc.end):
            alloc._release_views()  # only a resize that can succeed may move it
        check(self._api.resize(self.memblock.ptr, size, b, e))
        alloc.begin, alloc.end = _addr(b[0]), _addr(e[0])
        self._latest_span = (alloc.begin, alloc.end)
        return alloc

    def finalize(self) -> None:
        check(self._api.finalize(self.memblock.ptr))

    @property
    def stats(self) -> PodStats:
        return self.memblock.stats

    def __repr__(self) -> str:
        return f"<ckernels.PodAllocator of {self.memblock!r}>"


def _addr(p) -> int:
    return int(ffi.cast("uintptr_t", p))


__all__ = ["MemBlock", "PodAllocator", "Allocation", "PodStats", "live_count", "KIND_NAMES",
           "memblock_at"]
