"""How a host array's memory is shared with other libraries, without a
copy where the layout allows: NumPy views (``__array__``, the array
interface), the buffer protocol's description (the exporter is the C base
type of ``src/python/pybuffer/pybuffer.c``), DLPack, and the Arrow PyCapsule exports
(``host/arrow.py``, ``docs/interop.md``).

:class:`Sharing` is a mixin of :class:`~ckernels.host.array.Array`; it holds
no state of its own (the caches ``_nd`` and ``_bi`` are the array's slots).
"""

from __future__ import annotations

import numpy as np

from .. import _arrays   # cheap NumPy <-> host array conversions (src/python/arrays/arrays.c)
from .. import _convert as _c_convert   # values <-> Python / NumPy text (src/python/convert/*.c)
from .. import dtypes as _dtypes
from ..errors import CKTypeError
from . import arrow as _arrow_io   # the Arrow PyCapsule interface (arrow.py)
from .arrmeta import (_FIXED, _STRIDED, all_strided, dim_kinds, interface, numpy_dims,
                     numpy_dims_struct, numpy_dtype, numpy_view)


class Sharing:
    """Mixin: NumPy views, ``__array__``/``__array_interface__``, buffer
    info, ``to_numpy``, DLPack and the Arrow capsules of a host array."""

    __slots__ = ()

    # ---- Arrow: the PyCapsule interface (host/arrow.py, docs/interop.md) ----
    def __arrow_c_schema__(self):
        """The Arrow schema of this array (an ``arrow_schema`` capsule)."""
        return _arrow_io.export_schema(self._ad)

    def __arrow_c_array__(self, requested_schema=None):
        """``(arrow_schema, arrow_array)`` capsules: numbers and the text of
        strings shared, the rest copied; a requested numeric type is a checked
        conversion first."""
        cast = _arrow_io.requested_cast(requested_schema, self.dtype)
        src = self if cast is None else self.astype(cast)
        return _arrow_io.export_array(src._ad, requested_schema)

    def __arrow_c_stream__(self, requested_schema=None):
        """An ``arrow_array_stream`` capsule holding this array as one chunk."""
        cast = _arrow_io.requested_cast(requested_schema, self.dtype)
        src = self if cast is None else self.astype(cast)
        return _arrow_io.export_stream(src._ad, requested_schema)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """``(arrow_schema, arrow_device_array)`` capsules on the CPU device
        (what pyarrow's ``pa.array`` asks for first), as ``__arrow_c_array__``."""
        cast = _arrow_io.requested_cast(requested_schema, self.dtype)
        src = self if cast is None else self.astype(cast)
        return _arrow_io.export_device_array(src._ad, requested_schema, **kwargs)

    # ---- NumPy / buffer / DLPack ----------------------------------------------
    def _fast_view(self):
        """The cached NumPy view of the fast path (``_nd``): made once, for
        arrays whose dims are all strided and whose element type is a native
        builtin numeric one (what ``asarray(ndarray)`` and operations give);
        False for every other array.  Internal: never handed out (callers
        get ``.view()`` of it), so nothing can change its shape or flags."""
        nd = False
        if all_strided(self._a):
            dt = self.dtype
            if dt.kind in "biufc" and dt.isnative:
                nd = _arrays.view(self.address, dt, True)
        self._nd = nd
        return nd

    def _numpy_exact(self) -> bool:
        t = self.type
        return self._regular_ndim() == t.ndim and numpy_dtype(t.dtype).kind in "biufcVMm"

    def _numpy_view(self, writable: bool) -> np.ndarray:
        if self._numpy_exact():
            return self._numpy(writable)
        if writable:
            raise TypeError(f"an array of type '{self.type}' has no NumPy view to write "
                            "through")
        return self.to_numpy()

    def _numpy(self, writable: bool) -> np.ndarray:
        nd = self._nd
        if nd is None:
            nd = self._fast_view()
        if nd is not False:   # a new view of the cached one: callers may change it
            v = nd.view()
            if not writable and v.flags.writeable:
                v.flags.writeable = False
            return v
        t = self.type
        if t.dtype.is_builtin and self._regular_ndim() == t.ndim:
            return _arrays.view(self.address, self.dtype, writable)
        view = numpy_dims(t, self._data, self._arrmeta)
        if view is None:
            dtype_t = t.dtype
            try:
                dt = dtype_t.to_numpy_dtype()
            except CKTypeError:
                raise CKTypeError(
                    f"an array of type '{t}' has no NumPy equivalent (element type "
                    f"'{dtype_t}'); use .tolist() or .to_numpy() for an explicit copy"
                ) from None
            if t.ndim and not all(k in (_FIXED, _STRIDED) for k in dim_kinds(t)):
                raise CKTypeError(f"an array of type '{t}' has var dims, which NumPy "
                                  "cannot hold; use .tolist()")
            view = numpy_dims_struct(t, self._data, self._arrmeta, dt)
        readonly = not (writable and self.writable)
        return numpy_view(self._data, view.shape, view.strides, view.dtype, readonly, self)

    def __array__(self, dtype=None, copy=None):
        if self.type.dtype.is_option:   # host/nulls.py: values, or a clear error
            if copy is False:
                raise ValueError(f"an array of type '{self.type}' has no zero-copy NumPy "
                                 "view (copy=False)")
            return self._option_numpy(None, dtype)
        if self._numpy_exact():
            arr = self._numpy(writable=True)
            if dtype is not None and np.dtype(dtype) != arr.dtype:
                if copy is False:
                    raise ValueError("a dtype change needs a copy")
                return arr.astype(dtype)
            return arr.copy() if copy else arr
        if copy is False:
            raise ValueError(f"an array of type '{self.type}' has no zero-copy NumPy view "
                             "(copy=False)")
        if dtype is not None and self.dtype.kind == "T":
            dt = np.dtype(dtype)
            if dt.kind == "T":      # straight into that StringDType (its na_object kept)
                self.to_numpy()      # the checks (var dims)
                return _c_convert.to_strings(self.address, dt)
            if dt.kind in "US" and dt.itemsize == 0:   # sized by NumPy from the values
                return np.array(self.tolist(), dtype=dt)
        arr = self.to_numpy()
        return arr if dtype is None else arr.astype(dtype)

    @property
    def __array_interface__(self) -> dict:
        """NumPy's array interface (version 3), for builtin and plain struct
        element types; the consumer keeps this array alive (NumPy does)."""
        if not self._numpy_exact():
            raise AttributeError(f"an array of type '{self.type}' has no __array_interface__ "
                                 "(strings, var dims and structs holding them have no "
                                 "NumPy layout)")
        v = self._numpy(True)
        return interface(self._data, v.shape, v.strides, v.dtype, not self.writable)

    def _buffer_info(self, writable: bool):
        """(address, shape, strides, format, itemsize, readonly) for the C
        buffer exporter (PEP 3118), builtin element types only (cached)."""
        bi = self._bi
        if bi is None:
            el = self.type.dtype
            fmt = _dtypes.BUFFER_FORMATS.get(str(el)) if el.is_builtin else None
            if fmt is None or self._regular_ndim() != self.ndim:
                raise BufferError(f"an array of type '{self.type}' does not export a "
                                  "buffer (builtin element types only)")
            bi = self._bi = (self._data, self.shape, self.strides, fmt, el.data_size,
                             not self.writable)
        if writable and bi[5]:
            raise BufferError("the array is read-only")
        return bi

    def to_numpy(self, na_value=None) -> np.ndarray:
        """A NumPy copy: builtin and plain struct types as they are, strings
        as ``StringDType``, other structs as ``object`` arrays of dicts.  An
        option array (``?T``): its values, the nulls as ``na_value`` (strings:
        ``StringDType(na_object=na_value)``; numbers with nulls need one)."""
        t = self.type
        if t.dtype.is_option:
            return self._option_numpy(na_value)
        k = self._regular_ndim()
        if k != t.ndim:
            raise CKTypeError(f"an array of type '{t}' has var dims, which NumPy cannot "
                              "hold; use .tolist()")
        dt = numpy_dtype(t.dtype)
        if dt.kind in "biufcVMm":
            return np.array(self._numpy(False), copy=True)
        if dt.kind == "T":   # one NpyString_pack per string (C)
            return _c_convert.to_strings(self.address, np.dtypes.StringDType())
        return _c_convert.to_objects(self.address)

    def __dlpack__(self, **kwargs):
        if not self._numpy_exact() or self.dtype.kind not in "biufc":
            raise BufferError(f"an array of type '{self.type}' has no DLPack form "
                              "(builtin element types only)")
        return self._numpy(writable=True).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: every ckernel array lives in host memory
