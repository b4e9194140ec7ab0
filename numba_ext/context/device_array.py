"""Device arrays: element data in a buffer of a device context.

A :class:`DeviceArray` is ``(buffer, offset, shape, strides, dtype)`` over a
:class:`~ckernels.context.buffer.Buffer`; nothing in it is specific to one
backend (OpenCL now, CUDA through the same buffer calls).  Its element types
are the rows of the one table (:mod:`ckernels.dtypes`) that have a C type in
the context's device dialect.  Arrays made here are C-contiguous; the strides
are stored so that kernels (and later views) address every operand the same
way.  ``ctx.array`` / ``ctx.empty`` / ``ctx.to`` (:class:`ckernels.Context`)
are the usual ways to make one.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError, NotSupportedError
from . import backends
from .buffer import Buffer


def _contiguous_strides(shape, itemsize: int) -> tuple:
    st, acc = [], itemsize
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


class StructElement:
    """The element type of a device array of structs: the ckernel struct type
    (``type``), its aligned NumPy structured dtype (``numpy``, for host
    transfers), ``size``, ``alignment`` and ``name`` (the type string).  Every
    struct of builtin scalars, fixed dims and structs (any aligned NumPy
    structured dtype) qualifies: no strings or var dims, whose data would point
    into host arenas."""

    __slots__ = ("type", "numpy", "size", "alignment", "name")

    def __init__(self, dt: np.dtype):
        from ..types import from_numpy_dtype
        self.type = from_numpy_dtype(dt)   # CKTypeError unless aligned (align=True)
        self.numpy = dt
        self.size = self.type.data_size
        self.alignment = self.type.data_alignment
        self.name = str(self.type)

    def __repr__(self) -> str:
        return f"<ckernels device struct element {self.name}>"


def element_of(kind: str, dtype, where: str = "DeviceArray") -> "dtypes.DType | StructElement":
    """The table row of ``dtype`` if devices of context kind ``kind`` hold it; a
    :class:`StructElement` for an aligned NumPy structured dtype."""
    dt = np.dtype(dtype)
    if dt.fields is not None:
        return StructElement(dt)
    d = dtypes.of_numpy(dt)
    try:
        ok = d is not None and d.c_type(kind) is not None
        names = ", ".join(x.name for x in dtypes.device_types(kind))
    except ValueError:
        raise NotSupportedError(f"{where}: '{kind}' contexts hold no device arrays") from None
    if not ok:
        raise NotSupportedError(f"{where}: dtype {dt} is not supported on {kind} devices "
                                f"({names})")
    return d


class DeviceArray:
    """An array in a buffer of a device context (see the module docstring)."""

    __slots__ = ("buffer", "offset", "shape", "strides", "dtype", "element", "__weakref__")

    def __init__(self, buffer: Buffer, offset: int, shape, dtype, strides=None):
        if not isinstance(buffer, Buffer):
            raise InvalidArgumentError(f"DeviceArray needs a ckernels Buffer, not "
                                       f"{type(buffer).__name__}")
        self.element = element_of(buffer.context.kind, dtype)
        self.dtype = self.element.numpy
        self.buffer = buffer
        self.offset = int(offset)
        self.shape = tuple(int(s) for s in shape)
        self.strides = (tuple(int(s) for s in strides) if strides is not None
                        else _contiguous_strides(self.shape, self.dtype.itemsize))
        if len(self.strides) != len(self.shape):
            raise InvalidArgumentError(f"DeviceArray: {len(self.strides)} strides for "
                                       f"{len(self.shape)} dims")

    @classmethod
    def empty(cls, ctx, shape, dtype) -> "DeviceArray":
        """A new C-contiguous array (uninitialised) in its own buffer of ``ctx``."""
        element = element_of(ctx.kind, dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape or ())
        n = 1
        for s in shape:
            if int(s) < 0:
                raise InvalidArgumentError(f"DeviceArray: negative dimension in {shape}")
            n *= int(s)
        nbytes = max(n * element.size, 8)
        buf = ctx.new_buffer(nbytes)
        off = buf.allocate(nbytes, align=max(getattr(element, "alignment", element.size), 8))
        return cls(buf, off, shape, element.numpy)

    @classmethod
    def from_host(cls, ctx, obj, dtype=None) -> "DeviceArray":
        """A new array in ``ctx`` holding a copy of host data."""
        host = np.ascontiguousarray(obj, dtype=dtype)
        self = cls.empty(ctx, host.shape, host.dtype)
        if host.size:
            self.buffer.write(self.offset,
                              host.astype(self.dtype, copy=False).reshape(-1).view(np.uint8))
        return self

    @property
    def context(self):
        """The :class:`ckernels.Context` holding the data."""
        return self.buffer.context

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
    def is_contiguous(self) -> bool:
        return self.strides == _contiguous_strides(self.shape, self.dtype.itemsize)

    def to_numpy(self) -> np.ndarray:
        """A host copy (device to host)."""
        out = np.empty(self.shape, self.dtype)
        if self.size == 0:
            return out
        if not self.is_contiguous:
            raise NotSupportedError("DeviceArray.to_numpy: non-contiguous device arrays")
        self.buffer.read_into(self.offset, out)
        return out

    def __array__(self, dtype=None, copy=None):
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def to(self, ctx):
        """This array in ``ctx`` (see :meth:`ckernels.Context.to`): ``self`` in its
        own context, a host ``ckernels.Array`` for a ``"cpu"`` context, a copy
        through the host for another device context (two contexts share no
        memory)."""
        if not isinstance(ctx, type(self.context)):
            raise InvalidArgumentError(f"DeviceArray.to: expected a ckernels.Context, not "
                                       f"{type(ctx).__name__}")
        return ctx.to(self)

    def copy(self) -> "DeviceArray":
        """A device-side copy in the same context."""
        new = DeviceArray.empty(self.context, self.shape, self.dtype)
        if self.nbytes:
            if not self.is_contiguous:
                raise NotSupportedError("DeviceArray.copy: non-contiguous device arrays")
            new.buffer.copy_from(new.offset, self.buffer, self.offset, self.nbytes)
        return new

    # ---- sharing with other libraries (the context kind's hooks) -------------
    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3 of the CUDA Array Interface (CUDA device arrays only)."""
        export = backends.hook(self.buffer.context.kind, "cuda_array_interface")
        if export is None:
            raise AttributeError(f"__cuda_array_interface__: {self.buffer.context.kind} device "
                                 "arrays are not CUDA memory")
        return export(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        export = backends.hook(self.buffer.context.kind, "dlpack")
        if export is None:
            raise BufferError(f"__dlpack__: {self.buffer.context.kind} device arrays cannot "
                              "be shared through DLPack (copy with .to_numpy())")
        return export(self, stream=stream, max_version=max_version, dl_device=dl_device,
                      copy=copy)

    def __dlpack_device__(self) -> tuple:
        device = backends.hook(self.buffer.context.kind, "dlpack_device")
        if device is None:
            raise BufferError(f"__dlpack_device__: {self.buffer.context.kind} device arrays "
                              "cannot be shared through DLPack")
        return device(self)

    def __repr__(self) -> str:
        return (f"<ckernels.DeviceArray shape={self.shape} dtype={self.dtype} "
                f"context={self.context.describe()}>")


__all__ = ["DeviceArray", "StructElement", "element_of"]
