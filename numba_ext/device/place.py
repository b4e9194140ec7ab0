"""Placing arrays in a context: the public :class:`Context`.

>>> import ckernels
>>> ctx = ckernels.Context("cpu")    # or "opencl" (CK_OPENCL_DEVICE="p:d"), "cuda"
>>> a = ctx.array([1.0, 2.0]); b = ctx.zeros((2, 3), "float32")

:class:`Context` is the context handle (:class:`ckernels.context.handle.ContextHandle`:
buffers, programs, kind, description) plus the methods that place arrays in
it: :meth:`Context.array`, :meth:`Context.empty`, :meth:`zeros`, :meth:`ones`,
:meth:`full`, :meth:`Context.to` and :meth:`Context.from_dlpack` give a host
``ckernels.Array`` in a ``"cpu"`` context and a
:class:`~ckernels.device.array.DeviceArray` in a device context; and hand-written
kernels (:meth:`Context.build_kernels`, :mod:`ckernels.user_kernels`).  Running
``@ckernels.jit`` functions on device arrays is ``ckernels.jit``'s business.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..host.array import Array
from ..host import dictionary as _dictionary
from ..host.array import array as _host_array
from ..host.array import asarray as _host_asarray
from ..host.array import empty as _host_empty
from ..errors import InvalidArgumentError, NotSupportedError
from ..types import Type
from .._native import lib
from ..context.handle import ContextHandle, publish, shared
from ..user_kernels import build as _kernels
from . import arrow_import as _arrow_import
from . import interop
from . import nulls as _nulls
from . import varlen as _varlen
from .array import DeviceArray
from .base import DeviceArrayBase


class Context(ContextHandle):
    """A compute context: ``Context("cpu")``, ``Context("opencl")``,
    ``Context("opencl", platform=0, device=0)``, ``Context("cuda")`` or
    ``Context("cuda", device=1)``; over OpenCL objects made elsewhere:
    :meth:`from_opencl`, :meth:`from_pyopencl`.  What it owns (buffers,
    programs) is the handle's; this class adds placing arrays in it."""

    __slots__ = ()

    @classmethod
    def default(cls, kind: str = "cpu") -> "Context":
        """The process's shared context of ``kind`` (:func:`default_context`)."""
        return default_context(kind)

    def from_dlpack(self, x):
        """The memory of a DLPack producer ``x`` on this context's device as a
        device array, without a copy (OpenCL: its ``cl_mem`` must belong to
        this cl_context; CUDA: to this context's device); in a ``"cpu"``
        context, a host ``ckernels.Array`` sharing ``x``'s host memory.  See
        :func:`ckernels.device.interop.from_dlpack`."""
        return interop.from_dlpack(self, x)

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
        a ``"cpu"`` one.  Strings and var dims (host arrays of ``N * string`` /
        ``N * var * T``, lists of str, ragged lists, NumPy ``StringDType``,
        pyarrow arrays) become a :class:`~ckernels.device.varlen.DeviceVarArray`
        in Arrow's layout, one copy per buffer; data with nulls (option arrays
        ``N * ?T``, pyarrow arrays with nulls, lists with ``None``, NumPy
        ``StringDType`` with an ``na_object``) a
        :class:`~ckernels.device.nulls.DeviceOptionArray` (values + the validity
        bitmap).  Another producer's Arrow device array
        (``__arrow_c_device_array__`` / ``__arrow_c_device_stream__``) is copied
        from this context's device (:mod:`ckernels.device.arrow_import`).
        ``type`` is a dtype (``"float32"``) or a full type
        (``"2 * 3 * float32"``, whose shape must match the data's)."""
        if not self.is_device:
            if type is None and _arrow_import.is_device_producer(obj) and not isinstance(
                    obj, (DeviceArrayBase, _varlen.DeviceVarArray, _nulls.DeviceOptionArray)):
                return _arrow_import.import_device(self, obj)
            if isinstance(obj, (_varlen.DeviceVarArray, _nulls.DeviceOptionArray)):
                obj = obj.to_host()
            if isinstance(obj, DeviceArray):
                obj = obj.to_numpy()
            if type is not None:
                t = type if isinstance(type, Type) else Type(type)
                if t.ndim == 0 and t.is_builtin and np.ndim(obj) > 0:
                    # a dtype for array data (as for device contexts): the shape is the data's
                    return _host_array(np.asarray(obj, dtype=t.to_numpy_dtype()))
            return _host_array(obj, type=type)
        if isinstance(obj, _varlen.DeviceVarArray):
            return obj.copy() if obj.context == self else \
                _varlen.upload(self, obj.to_host(), option_leaf=_nulls.upload_leaf)
        if isinstance(obj, _nulls.DeviceOptionArray) and obj.context == self and type is None:
            return obj.copy()
        _refuse_dictionary(obj, self.kind)
        if type is None and _arrow_import.is_device_producer(obj) and not isinstance(
                obj, (DeviceArrayBase, _varlen.DeviceVarArray, _nulls.DeviceOptionArray)):
            return _arrow_import.import_device(self, obj)   # Arrow's C device interface
        host_option = _nulls.host_option(obj, type)     # ?T: values + validity bitmap
        if host_option is not None:
            return _nulls.upload(self, host_option)
        host_varlen = _varlen.host_varlen(obj, type)    # strings, var dims: Arrow's layout
        if host_varlen is not None:
            return _varlen.upload(self, host_varlen, option_leaf=_nulls.upload_leaf)
        if not isinstance(obj, DeviceArray):
            shared = _adopt(self, obj)          # another library's device array
            if shared is not None:
                if type is None:
                    return shared.copy()
                obj = shared
        host = obj.to_numpy() if isinstance(obj, DeviceArray) else obj
        if type is None:
            host = np.asarray(host)
            if host.dtype.kind not in "biufMm" and host.dtype.fields is None:
                raise NotSupportedError(f"Context.array: data of NumPy dtype {host.dtype} "
                                        f"cannot live on a {self.kind} device (bool, ints, "
                                        "float32/64, datetime64/timedelta64 and aligned "
                                        "structs of them only)")
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

    def arange(self, start, stop=None, step=None, dtype=None):
        """Evenly spaced values in ``[start, stop)`` in this context, with
        ``numpy.arange``'s signature and rules (the values, their count and the
        inferred dtype are NumPy's: ``ctx.arange(5)`` is int64, ``ctx.arange(0,
        1, 0.25)`` float64).  A device context gets one upload of the values;
        dtypes a device cannot hold are refused as :meth:`array` refuses them."""
        args = (start,) if stop is None else (start, stop) if step is None else \
            (start, stop, step)
        if dtype is not None and not isinstance(dtype, np.dtype):
            dtype = (dtype if isinstance(dtype, Type) else Type(dtype)).to_numpy_dtype()
        values = np.arange(*args, dtype=dtype)
        if not self.is_device:
            return _host_asarray(values)
        return self.array(values)

    def to(self, obj):
        """``obj`` in this context: a host array (NumPy, ``ckernels.Array``,
        anything ``np.asarray`` accepts) is copied in; a device array of this
        context is returned as it is, one of another context is copied (through
        the host: two contexts share no memory), and in a ``"cpu"`` context a
        device array becomes a host ``ckernels.Array``."""
        if isinstance(obj, (_varlen.DeviceVarArray, _nulls.DeviceOptionArray)):
            return obj.to(self)
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


def _adopt(ctx: Context, obj):
    """``obj`` (another library's array in this context's device memory) as a
    DeviceArray sharing its memory, or None (:func:`ckernels.device.interop.adopt`)."""
    return interop.adopt(ctx, obj)


publish(Context)     # Array.context (a lower layer) hands out this class


def default_context(kind: str) -> Context:
    """One shared context per kind (``Context(kind)``, made on first use):
    where unpickled device arrays go; the same C context as the host arrays'
    ``Array.context`` for ``"cpu"``."""
    return shared(kind, Context)


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
    if not t.is_builtin and not _is_time(t):
        raise NotSupportedError(f"{where}: element type {t} is not supported on {kind} "
                                "devices")
    dt = t.to_numpy_dtype()
    return (tuple(dims) if (dims or shape is not None) else None), dt


def _refuse_dictionary(obj, kind: str) -> None:
    """A one-line NotSupportedError for a dictionary-encoded column (a ckernels
    dictionary column, a pyarrow dictionary array, a pandas or polars
    Categorical): device arrays hold no dictionary type."""
    if isinstance(obj, (DeviceArray, _varlen.DeviceVarArray, _nulls.DeviceOptionArray)):
        return
    col = _dictionary.as_column(obj)
    if col is not None:
        raise NotSupportedError(
            f"Context.array: a dictionary-encoded column ({col.type.element}) cannot live on "
            f"a {kind} device; decode it first (ckernels.host.dictionary.decode(...), "
            "pyarrow's dictionary_decode()), or call the jitted function on the host, where "
            "it runs once per distinct value")


def _is_time(t: Type) -> bool:
    """Whether ``t`` is an instant or a duration (``datetime64``/``timedelta64``
    device arrays: int64 counts)."""
    return t.type_id in (lib.CK_TYPE_DATETIME, lib.CK_TYPE_TIMEDELTA)


__all__ = ["Context", "check_context", "same_context", "default_context"]
