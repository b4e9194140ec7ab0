"""Device arrays, what they are: element data in a buffer of a device context.

A device array is ``(buffer, offset, shape, strides, dtype)`` over a
:class:`~ckernels.context.buffer.Buffer` -- nothing in it is specific to one
backend (OpenCL and CUDA go through the same buffer calls).  Its element types
are those of the context kind's dialect (:mod:`ckernels.dialects`); an aligned
NumPy structured dtype gives a :class:`StructElement`.

:class:`DeviceArrayBase` holds the memory and everything that needs no device
kernel: construction (every array is checked to address only bytes inside its
buffer, aligned for its element type: nothing can make a kernel read or write
outside its memory; the attributes describing memory are read-only), views
(basic indexing, reshapes, transposes: the primitives of
:class:`ckernels.arraylike.ArrayLike`), explicit host transfers of contiguous
data, and sharing with other libraries through the context kind's hooks
(:func:`ckernels.backends.hook`: DLPack on every device kind,
``__cuda_array_interface__`` on CUDA, ``to_pyopencl`` on OpenCL).  The
operations -- assignment, conversions, elementwise operations, reductions,
gathers -- are device kernels (:mod:`ckernels.device.ops`, which works
on any ``DeviceArrayBase``); :class:`ckernels.device.array.DeviceArray`
adds them.  New arrays are made by ``type(self)``, so every array a device
array makes is of its class.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import backends, dialects, dtypes
from .. import types as _t
from ..arraylike import ArrayLike, Flags, c_strides
from ..errors import (CKIndexError, CKTypeError, CKValueError, InvalidArgumentError,
                      NotSupportedError)
from ..backends import dlpack as _dl
from .._native import check as _check, ffi as _ffi, lib as _lib
from ..context.buffer import Buffer

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


class DeviceTimeElement:
    """The element type of a device array of instants or durations
    (``datetime[unit='s']``, ``timedelta[unit='ns']``: NumPy's
    ``datetime64``/``timedelta64`` of one of its units Y..ns): an int64 count
    on the device, the NumPy dtype on the host.  ``name`` is the type's
    canonical string (what jitted signatures call it), ``kind`` NumPy's
    (``"M"`` or ``"m"``), ``unit`` NumPy's unit name; one object per dtype
    (:func:`time_element`)."""

    __slots__ = ("name", "kind", "unit", "numpy", "type_id")
    size = 8
    alignment = 8
    cffi = "int64_t"
    builtin = False

    def __init__(self, dt: np.dtype):
        self.numpy = dt
        self.kind = dt.kind
        self.unit = np.datetime_data(dt)[0]
        t = _t.as_type(dt)
        self.name = str(t)
        self.type_id = int(t.type_id)

    def __repr__(self) -> str:
        return f"<ckernels device time element {self.name}>"


_TIME_ELEMENTS: dict = {}


def time_element(dt) -> "DeviceTimeElement | None":
    """The :class:`DeviceTimeElement` of a ``datetime64``/``timedelta64`` dtype of
    one unit Y..ns (native byte order), else None."""
    dt = np.dtype(dt)
    if dt.kind not in "Mm":
        return None
    el = _TIME_ELEMENTS.get(dt.str)
    if el is None:
        unit, count = np.datetime_data(dt)
        if unit not in _TIME_UNITS or count != 1:
            raise NotSupportedError(f"DeviceArray: dtype {dt} has no ckernels time type "
                                    f"(units {', '.join(_TIME_UNITS)}, no multiples)")
        el = _TIME_ELEMENTS.setdefault(dt.str, DeviceTimeElement(dt.newbyteorder("=")))
    return el


#: NumPy's units with a ckernels time type (docs/type-grammar.md, "Time types")
_TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns")


def element_of(kind: str, dtype, where: str = "DeviceArray") -> "dtypes.DType | StructElement":
    """The table row of ``dtype`` if devices of context kind ``kind`` hold it; a
    :class:`StructElement` for an aligned NumPy structured dtype; a
    :class:`DeviceTimeElement` for ``datetime64``/``timedelta64`` (int64 counts)."""
    if isinstance(dtype, DeviceTimeElement):
        return dtype
    if isinstance(dtype, _t.Type):
        if dtype.type_id in (_lib.CK_TYPE_DATETIME, _lib.CK_TYPE_TIMEDELTA):
            dtype = dtype.to_numpy_dtype()
        else:
            dtype = dtype.to_numpy_dtype() if dtype.is_builtin else str(dtype)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        try:     # a struct type string: its aligned NumPy layout
            dt = _t.as_type(dtype).to_numpy_dtype()
        except Exception:
            raise CKTypeError(f"{where}: {dtype!r} is not a dtype") from None
    if dt.fields is not None:
        return StructElement(dt)
    if dt.kind in "Mm":
        if dialects.device(kind) is None:
            raise NotSupportedError(f"{where}: '{kind}' contexts hold no device arrays")
        return time_element(dt)
    d = dtypes.of_numpy(dt)
    dialect = dialects.device(kind)
    if dialect is None:
        raise NotSupportedError(f"{where}: '{kind}' contexts hold no device arrays")
    if d is None or d.name not in dialect.types:
        names = ", ".join(x.name for x in dialect.element_types())
        raise NotSupportedError(f"{where}: dtype {dt} is not supported on {kind} devices "
                                f"({names})")
    return d


def _index(v, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise CKTypeError(f"DeviceArray: {what} must be integers, not "
                          f"{type(v).__name__}") from None


def _is_c_contiguous(shape, strides, itemsize) -> bool:
    acc = itemsize
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1 and st != acc:
            return False
        acc *= n
    return True


_NO_HOST_COPY = ("ckernels.DeviceArray lives on a device: NumPy cannot use it without a "
                 "copy to the host, which is never made implicitly; copy it explicitly "
                 "with .get() or .to_numpy()")


class DeviceArrayBase(ArrayLike):
    """An array in a buffer of a device context, without its operations (see the
    module docstring; :class:`~ckernels.device.array.DeviceArray` is the
    class of every device array)."""

    __slots__ = ("_buffer", "_offset", "_shape", "_strides", "_element", "_base", "_key",
                 "_readonly", "_type", "__weakref__")

    def __init__(self, buffer: Buffer, offset: int, shape, dtype, strides=None, *,
                 base=None, readonly: bool = False):
        if not isinstance(buffer, Buffer):
            raise InvalidArgumentError(f"DeviceArray needs a ckernels Buffer, not "
                                       f"{type(buffer).__name__}")
        element = element_of(buffer.context.kind, dtype)
        itemsize = element.size
        if isinstance(shape, (numbers.Integral, np.integer)):
            shape = (shape,)
        shape = tuple(_index(s, "shape entries") for s in shape)
        if any(s < 0 for s in shape):
            raise InvalidArgumentError(f"DeviceArray: negative dimension in {shape}")
        if strides is None:
            strides = c_strides(shape, itemsize)
        else:
            strides = tuple(_index(s, "strides") for s in strides)
            if len(strides) != len(shape):
                raise InvalidArgumentError(f"DeviceArray: {len(strides)} strides for "
                                           f"{len(shape)} dims")
            if any(s % itemsize for s in strides):
                raise InvalidArgumentError(
                    f"DeviceArray: strides {strides} are not multiples of the item size "
                    f"{itemsize} (device kernels need aligned elements)")
        offset = _index(offset, "offset")
        if offset < 0 or offset % itemsize:
            raise InvalidArgumentError(f"DeviceArray: offset {offset} is negative or not a "
                                       f"multiple of the item size {itemsize}")
        if all(shape):
            lo = offset + sum(st * (n - 1) for n, st in zip(shape, strides) if st < 0)
            hi = offset + sum(st * (n - 1) for n, st in zip(shape, strides) if st > 0) \
                + itemsize
            cap = buffer.capacity
            if lo < 0 or hi > cap:
                raise CKIndexError(
                    f"DeviceArray: shape {shape} with strides {strides} at offset {offset} "
                    f"addresses bytes [{lo}, {hi}) outside the buffer's capacity {cap}")
        init = object.__setattr__
        init(self, "_buffer", buffer)
        init(self, "_offset", offset)
        init(self, "_shape", shape)
        init(self, "_strides", strides)
        init(self, "_element", element)
        init(self, "_base", base)
        init(self, "_readonly", bool(readonly))
        init(self, "_type", None)
        # what a launch plan depends on (ckernels.jit.device)
        init(self, "_key", (element.name, shape, strides))

    def __setattr__(self, name, value):
        # the geometry was checked against the buffer at construction: nothing
        # may change it afterwards (a wrong shape must never reach a kernel)
        raise AttributeError(f"DeviceArray attributes are read-only ('{name}'); make a "
                             "view (reshape, indexing) or a copy instead")

    # ---- construction ------------------------------------------------------
    @classmethod
    def empty(cls, ctx, shape, dtype) -> "DeviceArrayBase":
        """A new C-contiguous array (uninitialised) in its own buffer of ``ctx``."""
        element = element_of(ctx.kind, dtype)
        if isinstance(shape, (numbers.Integral, np.integer)):
            shape = (shape,)
        shape = tuple(_index(s, "shape entries") for s in (shape or ()))
        n = 1
        for s in shape:
            if s < 0:
                raise InvalidArgumentError(f"DeviceArray: negative dimension in {shape}")
            n *= s
        nbytes = max(n * element.size, 8)
        buf = ctx.new_buffer(nbytes)
        off = buf.allocate(nbytes, align=max(getattr(element, "alignment", element.size), 8))
        return cls(buf, off, shape, element.numpy)

    @classmethod
    def _result(cls, ctx, shape, strides, element, key, nbytes, align) -> "DeviceArrayBase":
        """A new C-contiguous array as :meth:`empty` makes it, from what a
        launch plan knows of its result: ``shape``, ``strides`` (C order),
        ``element`` (the row :func:`element_of` gives), ``key`` (``(element
        name, shape, strides)``), ``nbytes`` and ``align`` as :meth:`empty`
        computes them.  Nothing is checked again (the repeated call of a
        jitted function: :mod:`ckernels.jit.fastcall`)."""
        out = _ffi.new("ck_buffer **")
        _check(_lib.ck_buffer_new(ctx._ctx, nbytes, out))
        buf = Buffer._own(out[0], ctx)
        off = _ffi.new("size_t *")
        _check(_lib.ck_buffer_allocate(out[0], nbytes, align, off))
        self = object.__new__(cls)
        init = object.__setattr__
        init(self, "_buffer", buf)
        init(self, "_offset", off[0])
        init(self, "_shape", shape)
        init(self, "_strides", strides)
        init(self, "_element", element)
        init(self, "_base", None)
        init(self, "_readonly", False)
        init(self, "_type", None)
        init(self, "_key", key)
        return self

    @classmethod
    def from_host(cls, ctx, obj, dtype=None) -> "DeviceArrayBase":
        """A new array in ``ctx`` holding a copy of host data."""
        host = np.asarray(obj, dtype=dtype)
        self = cls.empty(ctx, host.shape, host.dtype)
        if host.size:
            host = np.ascontiguousarray(host, dtype=self.dtype)
            self._buffer.write(self._offset, host.reshape(-1).view(np.uint8))
        return self

    def _derived(self, offset, shape, strides, readonly=False) -> "DeviceArrayBase":
        return type(self)(self._buffer, offset, shape, self.dtype, strides,
                           base=self._base if self._base is not None else self,
                           readonly=readonly or self._readonly)

    # ---- attributes (read-only) --------------------------------------------
    @property
    def buffer(self) -> Buffer:
        """The :class:`~ckernels.context.buffer.Buffer` holding the data."""
        return self._buffer

    @property
    def offset(self) -> int:
        """Byte offset of element ``[0, ..., 0]`` in :attr:`buffer`."""
        return self._offset

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def strides(self) -> tuple:
        """Byte strides (NumPy's convention; negative for reversed views, 0 for
        broadcast dims)."""
        return self._strides

    @property
    def dtype(self) -> np.dtype:
        return self._element.numpy

    @property
    def element(self) -> "dtypes.DType":
        """The element type's row of :mod:`ckernels.dtypes`."""
        return self._element

    @property
    def type(self) -> "_t.Type":
        """The ckernel type (``3 * 4 * float32``; the element type for 0-d)."""
        if self._type is None:
            t = _t.as_type(self._element.name)
            for n in reversed(self._shape):
                t = _t.fixed_dim(n, t)
            object.__setattr__(self, "_type", t)
        return self._type

    @property
    def context(self):
        """The :class:`ckernels.Context` holding the data."""
        return self._buffer.context

    @property
    def base(self):
        """The array this one is a view of (None if it owns its buffer region)."""
        return self._base

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self._element.size

    @property
    def is_contiguous(self) -> bool:
        """C-contiguous (dims of size 1 may have any stride, as in NumPy)."""
        return _is_c_contiguous(self._shape, self._strides, self._element.size)

    @property
    def flags(self) -> Flags:
        it = self._element.size
        w = not self._readonly
        return Flags(c_contiguous=_is_c_contiguous(self._shape, self._strides, it),
                     f_contiguous=_is_c_contiguous(self._shape[::-1], self._strides[::-1], it),
                     writeable=w, aligned=True, owndata=self._base is None, read=True,
                     write=w)

    # ---- host transfers (explicit only) ------------------------------------
    def to_numpy(self) -> np.ndarray:
        """A host copy (device to host), C-contiguous.  A non-contiguous array
        is first copied on the device, so only its elements travel."""
        src = self if self.is_contiguous else self.copy()
        out = np.empty(self._shape, self.dtype)
        if out.size:
            src._buffer.read_into(src._offset, out)
        return out

    get = to_numpy

    def to_host(self):
        """A host ``ckernels.Array`` of the same type (one device-to-host
        copy; a struct array comes back as a ckernels struct array)."""
        from ..host.creation import array
        return array(self.to_numpy())

    def to(self, ctx):
        """This array in ``ctx`` (see :meth:`ckernels.Context.to`): ``self`` in its
        own context, a host ``ckernels.Array`` for a ``"cpu"`` context, a copy
        through the host for another device context (two contexts share no
        memory)."""
        to = getattr(ctx, "to", None)
        if to is None or not hasattr(ctx, "is_device"):
            raise InvalidArgumentError(f"DeviceArray.to: expected a ckernels.Context, not "
                                       f"{type(ctx).__name__}")
        return to(self)

    def to_pyopencl(self, queue=None):
        """A ``pyopencl.array.Array`` sharing this array's memory: on the
        context's own queue, or on ``queue`` (any pyopencl queue of the same
        cl_context; a queue of another cl_context gets a copy, through the
        host, since OpenCL memory is not shared between contexts).  The
        pyopencl buffer retains the ``cl_mem`` and keeps this array alive
        (OpenCL contexts only; also :func:`ckernels.opencl.to_pyopencl`)."""
        if self.context.kind != "opencl":
            raise NotSupportedError(f"to_pyopencl: {self.context.brief} is not an OpenCL "
                                    "context")
        ocl = backends.BACKENDS["opencl"]
        cl_context = ocl.cl_context(self.context)
        if queue is None:
            queue = self.context.pyopencl_queue()
        elif queue.context.int_ptr != cl_context:
            import pyopencl.array as cla
            return cla.to_device(queue, self.to_numpy())
        return ocl.pyopencl_array(queue, self.buffer.native_handle, self.offset, self.shape,
                                  self.strides, self.dtype, owner=self)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_NO_HOST_COPY)

    # ---- primitives of the shared surface (ckernels.arraylike) -------------
    def _view(self, key: tuple) -> "DeviceArrayBase":
        offset = self._offset
        shape, strides = [], []
        for dim, k in enumerate(key):
            n, st = self._shape[dim], self._strides[dim]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                m = len(range(start, stop, step))
                if m:
                    offset += start * st
                shape.append(m)
                strides.append(st * step)
            else:
                i = _index(k, "indices")
                if not -n <= i < n:
                    raise CKIndexError(f"index {i} is out of bounds for axis {dim} with size "
                                       f"{n}")
                offset += (i % n) * st
        k = len(key)
        return self._derived(offset, tuple(shape) + self._shape[k:],
                             tuple(strides) + self._strides[k:])

    def _strided_view(self, k, shape, strides, offset=0, readonly=False) -> "DeviceArrayBase":
        return self._derived(self._offset + offset, tuple(shape) + self._shape[k:],
                             tuple(strides) + self._strides[k:], readonly)

    def _scalar(self):
        one = np.empty((1,), self.dtype)
        self._buffer.read_into(self._offset, one)
        return one[0]

    def _empty(self, shape, element) -> "DeviceArrayBase":
        t = element if isinstance(element, _t.Type) else _t.as_type(element)
        shape = tuple(shape)
        while t.is_dim:      # an element with dims of its own
            n = t.fixed_size
            if n is None:
                raise NotSupportedError(f"DeviceArray: element type {t} has a dim without "
                                        "a size")
            shape += (n,)
            t = t.element
        return type(self).empty(self.context, shape, t)

    def _numpy_view(self, writable: bool):
        raise TypeError(_NO_HOST_COPY)

    def _numpy_exact(self) -> bool:
        return False

    def _wrap_numpy(self, arr):
        if isinstance(arr, np.ndarray) and arr.dtype.kind in "biuf":
            return type(self).from_host(self.context, arr)
        return arr

    def _from_value(self, value) -> "DeviceArrayBase":
        if isinstance(value, DeviceArrayBase):
            return value
        return self.context.array(value)

    def _regular_ndim(self) -> int:
        return len(self._shape)

    def _element_below(self, k: int) -> "_t.Type":
        t = _t.as_type(self._element.name)
        for n in reversed(self._shape[k:]):
            t = _t.fixed_dim(n, t)
        return t

    def _is_scalar_type(self) -> bool:
        return False     # a fully indexed element stays a 0-d device array

    def _check_writable(self) -> None:
        if self._readonly:
            raise CKValueError("assignment destination is read-only")

    # ---- the surface, where the device does better or differs --------------

    # ---- sharing with other libraries (the context kind's hooks) -------------
    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3 of the CUDA Array Interface (CUDA device arrays only)."""
        if backends.hook(self.context.kind, "cuda_array_interface") is None:
            raise AttributeError(f"__cuda_array_interface__: {self.context.kind} device "
                                 "arrays are not CUDA memory")
        return cuda_array_interface(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        backend = backends.BACKENDS.get(self.context.kind)
        if backend is None or not hasattr(backend, "dlpack_device"):
            raise BufferError(f"__dlpack__: {self.context.kind} device arrays cannot "
                              "be shared through DLPack (copy with .to_numpy())")
        return export_dlpack(self, backend, stream=stream, max_version=max_version,
                             dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple:
        device = backends.hook(self.context.kind, "dlpack_device")
        if device is None:
            raise BufferError(f"__dlpack_device__: {self.context.kind} device arrays "
                              "cannot be shared through DLPack")
        return device(self.context)

    # ---- display -----------------------------------------------------------
    def __repr__(self) -> str:
        shape = "(" + ", ".join(map(str, self._shape)) + ("," if self.ndim == 1 else "") + ")"
        return f"<ckernels.DeviceArray {self.dtype} {shape} on {self.context.brief}>"

    def _repr_html_(self) -> str:
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)


# ------------------------------------------------- exports (interop) --
def cuda_array_interface(arr: DeviceArrayBase) -> dict:
    """``arr.__cuda_array_interface__`` (version 3), from the array's raw parts
    (:func:`ckernels.backends.cuda.cuda_array_interface`)."""
    ptr = arr.buffer.native_handle + arr.offset if arr.size else 0
    return backends.BACKENDS["cuda"].cuda_array_interface(
        ptr, arr.shape, arr.strides, arr.dtype, not arr.flags.writeable, arr.is_contiguous)


def export_dlpack(arr: DeviceArrayBase, backend, *, stream=None, max_version=None,
                  dl_device=None, copy=None):
    """``arr.__dlpack__(...)`` as ``backend`` (a module of
    :data:`ckernels.backends.BACKENDS`) exports its memory: the backend checks
    ``stream`` and says what goes in ``data`` and ``byte_offset``; a capsule
    over the device memory, over a device copy with ``copy=True``; a host
    copy only when ``dl_device`` asks for the CPU explicitly (and ``copy`` is
    not False)."""
    backend.dlpack_check_stream(stream)
    device = tuple(backend.dlpack_device(arr.context))
    if dl_device is not None and tuple(dl_device) != device:
        if tuple(dl_device) == (_dl.KDL_CPU, 0) and copy is not False:
            host = arr.to_numpy()
            return host.__dlpack__(max_version=max_version) if max_version is not None \
                else host.__dlpack__()
        raise BufferError(f"__dlpack__: the array is on {_dl.DEVICE_NAMES[device[0]]} "
                          f"device {device[1]}, dl_device={tuple(dl_device)} asks for another "
                          "device")
    src = arr.copy() if copy else arr
    versioned = max_version is not None and int(max_version[0]) >= 1
    data, byte_offset = backend.dlpack_data(src.buffer.native_handle, src.offset) \
        if src.size else (0, 0)
    return _dl.export(src, data, src.shape, src.strides, src.dtype, device, versioned,
                      readonly=not src.flags.writeable, byte_offset=byte_offset)


__all__ = ["DeviceArrayBase", "StructElement", "element_of", "DeviceTimeElement", "time_element",
           "cuda_array_interface",
           "export_dlpack"]
