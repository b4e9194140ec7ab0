"""Making host arrays: :func:`array` (Python data, NumPy arrays, with type
inference), :func:`asarray` (sharing a NumPy array's memory), :func:`empty`,
:func:`zeros`, :func:`ones`, :func:`full`, the ``*_like`` functions,
:func:`arange`, :func:`from_arrow`, :func:`from_dlpack`, and the 0-d arrays of
Python scalars.

The class is :class:`ckernels.host.array.Array`, which re-exports these
functions (every public spelling stays there); it sits above this module and
hands itself over with :func:`install` (as it does to
:mod:`ckernels.host.fastpath`), so the import graph has no circle.
"""

from __future__ import annotations

import builtins
import operator
import threading

import numpy as np

from .. import dtypes as _dtypes
from .. import types as _t
from .._cargs import c_shape
from .._native import c_text_out, check, ffi, lib
from .. import _convert as _c_convert   # values <-> Python / NumPy text (src/python/convert/*.c)
from ..arraylike import ArrayLike
from ..errors import CKTypeError, CKValueError, InvalidArgumentError, NotSupportedError
from ..types import Type
from . import arrow as _arrow_io   # the Arrow PyCapsule interface (arrow.py)
from .arrow import numpy_time as _numpy_time
from . import convert as _convert
from . import records as _records
from .arguments import (_array_type, _creation_type, _element_type, _is_full_type, _is_scalar,
                        _legacy, _missing, _shape_arg)
from .convert import check_scalar as _check_scalar
from .convert import infer_type
from .fastpath import STRIDED_OF as _STRIDED_OF
from .fastpath import strided_of as _strided_of
from .fastpath import wrap_ndarray as _wrap_ndarray
from .nulls import first_text as _first_text
from .nulls import nans_to_none as _nans_to_none
from .nulls import text_nulls as _text_nulls
from .arrmeta import _BYTES, _FIXED, _STRIDED, _STRING, _VAR, dim_kinds
from .arrmeta import strided as _strided

_OPTION = lib.CK_TYPE_OPTION


#: the host array class, given by :mod:`ckernels.host.array` when it is
#: defined (``install``): this module sits below the class it makes
Array = None


def install(array_class) -> None:
    """Make arrays of ``array_class`` (:class:`~ckernels.host.array.Array`,
    which calls this once, right after defining it)."""
    global Array
    Array = array_class


# ---- scalars ----------------------------------------------------------------------

#: (Python scalar type, element type) pairs whose conversion cannot fail
_EXACT_SCALARS = {(complex, "complex128"): np.complex128}
_C_POINTER = {d.name: d.cffi + " *" for d in _dtypes.BUILTINS if d.cffi is not None}


_BUILTIN_BY_NAME = {str(t): t for t in _t.BUILTIN_TYPES}


def _new_scalar(t: Type, v: np.generic) -> Array:
    out = _scratch()
    check(lib.ck_array_empty_uninit(t.c_type, ffi.NULL, 0, lib.CK_ARRAY_DEFAULT_FLAGS, out))
    a = Array._own(out[0])
    ffi.memmove(lib.ck_array_data(out[0]), v.tobytes(), v.itemsize)
    return a


def _new_c_scalar(t: Type, ctype: str, value) -> Array:
    """A 0-d array written through cffi (no NumPy scalar in between)."""
    out = _scratch()
    check(lib.ck_array_empty_uninit(t.c_type, ffi.NULL, 0, lib.CK_ARRAY_DEFAULT_FLAGS, out))
    a = Array._own(out[0])
    ffi.cast(ctype, lib.ck_array_data(out[0]))[0] = value
    return a


_LOCAL = threading.local()


def _scratch():
    """This thread's ``ck_array_preamble **`` for results read right after a
    call (saves an allocation per operation)."""
    try:
        return _LOCAL.out
    except AttributeError:
        _LOCAL.out = ffi.new("ck_array_preamble **")
        return _LOCAL.out


# ---- making arrays ---------------------------------------------------------------

def _new_array(t: Type, shape, zero: bool = False) -> Array:
    """A new C-contiguous array of type ``t`` (``shape``: the strided dims'
    sizes, as ck_array_empty); POD data uninitialised unless ``zero``."""
    shape = [operator.index(s) for s in shape]
    for s in shape:
        if s < 0:
            raise CKValueError(f"negative dimensions are not allowed (shape {tuple(shape)})")
    shape = c_shape(shape, "shape")   # sizes that do not fit intptr_t
    out = ffi.new("ck_array_preamble **")
    cshape = ffi.new("intptr_t[]", shape) if shape else ffi.NULL
    fn = lib.ck_array_empty if zero else lib.ck_array_empty_uninit
    check(fn(t.c_type, cshape, len(shape), lib.CK_ARRAY_DEFAULT_FLAGS, out))
    return Array._own(out[0])


def empty(shape=(), dtype=None, *, type=None) -> Array:
    """A new array whose elements are not initialised (as ``numpy.empty``;
    strings and var dims start empty): ``empty((2, 3), "float32")``,
    ``empty(4, type="strided * 3 * int8")`` (a full type; ``shape`` gives its
    strided dims).  ``dtype`` defaults to float64.  The old form
    ``empty(type, shape)`` still works."""
    legacy = _legacy(shape, dtype)
    if legacy is not None and type is None:
        shape, type = legacy
        dtype = None
    t, shp = _creation_type(shape, dtype, type, "empty")
    return _new_array(t, shp)


def zeros(shape=(), dtype=None, *, type=None) -> Array:
    """A new array of zeros (empty strings, empty var dims)."""
    t, shp = _creation_type(shape, dtype, type, "zeros")
    return _new_array(t, shp, zero=True)


def ones(shape=(), dtype=None, *, type=None) -> Array:
    """A new array of ones (float64 unless ``dtype``/``type`` says otherwise,
    as ``numpy.ones``)."""
    if dtype is None and type is None:
        dtype = "float64"
    return full(shape, 1, dtype, type=type)


def full(shape, fill_value, dtype=None, *, type=None) -> Array:
    """A new array with every element ``fill_value`` (converted with the
    usual checks); the dtype is inferred from ``fill_value`` when not given."""
    if dtype is None and type is None:
        dtype = infer_type(fill_value)
    t, shp = _creation_type(shape, dtype, type, "full")
    a = _new_array(t, shp)
    a._assign(fill_value)
    return a


def _like(proto, dtype, type, shape):
    if not isinstance(proto, ArrayLike):
        proto = asarray(proto)
    if type is not None:
        return _creation_type(shape if shape is not None else proto.shape, None, type, "like")
    if shape is None and dtype is None:
        k = proto._regular_ndim()
        return proto.type, proto.shape[:k]
    el = proto.type.dtype if dtype is None else _element_type(dtype)
    shp = proto.shape if shape is None else _shape_arg(shape)
    return _strided(el, len(shp)), shp


def empty_like(a, dtype=None, *, type=None, shape=None) -> Array:
    t, shp = _like(a, dtype, type, shape)
    return _new_array(t, shp)


def zeros_like(a, dtype=None, *, type=None, shape=None) -> Array:
    t, shp = _like(a, dtype, type, shape)
    return _new_array(t, shp, zero=True)


def ones_like(a, dtype=None, *, type=None, shape=None) -> Array:
    return full_like(a, 1, dtype, type=type, shape=shape)


def full_like(a, fill_value, dtype=None, *, type=None, shape=None) -> Array:
    t, shp = _like(a, dtype, type, shape)
    out = _new_array(t, shp)
    out._assign(fill_value)
    return out


def arange(start, stop=None, step=None, dtype=None, *, type=None) -> Array:
    """Evenly spaced values in ``[start, stop)`` (``numpy.arange``)."""
    if type is not None:
        dtype = _element_type(type)
    npdt = None if dtype is None else _element_type(dtype).to_numpy_dtype()
    args = (start,) if stop is None else (start, stop) if step is None else (start, stop, step)
    return asarray(np.arange(*args, dtype=npdt))


def _as_source(value, dst_type: Type) -> Array:
    """``value`` as an array to assign into an array of type ``dst_type``:
    its own dims, the destination's element type (values checked while
    converting)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc" and value.dtype.isnative:
        return asarray(value)
    el = dst_type.dtype
    if _is_scalar(value) and el.is_builtin:
        return _new_scalar(el, _check_scalar(el, value))
    return array(value, dtype=el)


def array(obj, dtype=None, *, type=None, copy: bool = True, fill_value=None,
          nan_is_null: bool = False) -> Array:
    """A new array holding a copy of ``obj`` (NumPy's argument order):
    ``dtype`` fixes the element type (a NumPy dtype-like, a type string such
    as ``"string"``, or a :class:`~ckernels.types.Type`; dims come from the
    data: regular nesting gives strided dims, ragged var dims); ``type`` fixes
    the whole type (``"3 * var * int32"``); with neither, both are inferred
    (NumPy's kinds: bool < int64 < float64 < complex128; str -> string;
    dict -> struct).  Conversion is checked (no silent overflow or
    truncation).  ``copy=False`` returns ``obj`` itself when it is already a
    host array of that type.  Missing values: ``None`` in lists (numbers,
    bools, strings, bytes) and nulls of ``StringDType`` / object text arrays
    make the element an option ``?T`` with those slots null, as pyarrow
    infers (``docs/nulls.md``); ``fill_value`` gives a value to use instead.
    NaN is a float value, not a null, unless ``nan_is_null=True`` (Arrow's
    keyword).  Missing values the layout cannot hold yet (struct fields,
    ragged lists, Arrow nulls) are a ``CKValueError`` with their count and
    the first one's index.  Lists, tuples, dicts and NumPy text arrays are
    converted in C (``docs/strings.md``)."""
    if nan_is_null:
        obj = _nans_to_none(obj)
    if isinstance(dtype, (str, Type)) and type is None and _is_full_type(dtype):
        type, dtype = dtype, None
    if type is not None and dtype is not None:
        raise InvalidArgumentError("array: give dtype= or type=, not both")
    want = None if type is None else _array_type(type)
    el = None if dtype is None else _element_type(_records.c_layout(dtype))
    st = _records.struct_of(want, el)
    if st is not None:               # tuples and numpy.void are records, as in NumPy
        obj = _records.as_records(obj, st)
    if isinstance(obj, Array):
        if not copy and (want is None or want == obj.type) and (el is None or
                                                                el == obj.type.dtype):
            return obj
        return _copy_array(obj, want, el)
    tarr = _numpy_time(obj)          # pandas datetime64/timedelta64 data: NumPy's path
    obj = tarr if tarr is not None else obj
    if _arrow_io.is_arrow(obj):      # pyarrow, polars, nanoarrow, duckdb, pandas ArrowDtype
        imported = from_arrow(obj, fill_value=fill_value)
        if imported.flags.writeable and want is None and el is None:
            return imported          # a concatenated stream: a copy of its own already
        return _copy_array(imported, want, el)
    if isinstance(obj, ArrayLike):   # another array class: through NumPy, explicitly
        obj = obj.to_numpy()
    if isinstance(obj, memoryview):  # a buffer: its format and shape, as numpy.array
        obj = np.array(obj)
    if isinstance(obj, np.generic) and obj.dtype.kind in "biufcMm":
        obj = np.asarray(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "biufcMm":
        src = asarray(obj if obj.dtype.isnative else obj.astype(obj.dtype.newbyteorder("=")))
        return _copy_array(src, want, el)
    if isinstance(obj, np.ndarray) and obj.dtype.fields is not None:
        # a structured array: its struct type from the dtype (asarray checks
        # the layout), never the tuples' items taken as nested lists; one not
        # laid out as a C struct is copied into the C layout of its fields
        return _copy_array(asarray(obj.astype(_records.c_layout(obj.dtype))), want, el)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "TUSO" and want is None:
        try:
            text = _numpy_text(obj, el, fill_value)
        except CKValueError:
            if fill_value is not None or not _text_nulls(obj):
                raise
            # StringDType(na_object=...) / object text with nulls: an option
            # array, the nulls' bits cleared by the same C pass
            text = _numpy_text(obj, _t.option(el if el is not None else (
                _t.bytes_type(1) if _first_text(obj) is bytes else _t.string)), None)
        if text is not None:
            return text
    if want is None and isinstance(obj, (list, tuple)) and _convert.is_plain(obj):
        try:
            arr = np.array(obj)
        except (ValueError, TypeError, OverflowError):
            arr = None
        # NumPy promotes int64 and uint64 Python ints to float64 (lossy): values
        # that large take the exact path below
        if arr is not None and arr.dtype.kind in "biufcMm" and not (
                arr.dtype.kind == "f" and arr.size and (np.abs(arr) >= 2.0**63).any()):
            return _copy_array(asarray(arr), None, el)
    if want is None and isinstance(obj, (list, tuple)) and obj and \
            isinstance(obj[0], (np.datetime64, np.timedelta64)):   # NumPy's time scalars
        arr = np.array(obj)
        if arr.dtype.kind in "Mm":
            return _copy_array(asarray(arr), None, el)
    t, shape, value = _convert.prepare(obj, want, el, fill_value)
    a = _new_array(t, shape)
    _convert.write(t, a._data, a._arrmeta, value, fill_value)
    return a


def _numpy_text(obj: np.ndarray, el: Type | None, fill_value) -> Array | None:
    """A NumPy ``StringDType`` / ``U`` / ``S`` array, or an object array of
    ``str`` / ``bytes`` (its first present element says which; NaN, None and
    ``pandas.NA`` are missing values), as a new array of strings (``S``,
    ``bytes`` objects: bytes) in one C pass (``_convert.from_numpy``: sizes
    first, one arena allocation; bytes into strings checked UTF-8); None when
    the element type asked for (or found) is no string or bytes type."""
    kind = obj.dtype.kind
    if kind == "O" and el is None:
        first = next((x for x in obj.flat if not _missing(x)), None)
        if isinstance(first, str):
            el = _t.string
        elif isinstance(first, bytes):
            el = _t.bytes_type(1)
        else:
            return None       # numbers, dicts, lists, only missing values: the lists path
    if el is None:
        el = _t.bytes_type(1) if kind == "S" else _t.string
    elif el.value_type.type_id not in (_STRING, _BYTES):
        return None
    if obj.dtype.kind == "U" and not obj.flags.aligned:
        obj = obj.copy()
    a = _new_array(_strided(el, obj.ndim), obj.shape)
    _c_convert.from_numpy(a.address, obj, fill_value)
    return a


def _copy_array(src: Array, want: Type | None, el: Type | None) -> Array:
    """A new array holding ``src`` converted to the full type ``want`` or the
    element type ``el`` (checked conversion, broadcasting none)."""
    k = src._regular_ndim()
    if want is not None:
        nwant = len(dim_kinds(want))
        if nwant != src.ndim:
            raise CKValueError(f"data of shape {src.shape} has {src.ndim} dims; type "
                               f"'{want}' has {nwant}")
        shape = []
        cur = want
        for i, n in enumerate(src.shape):
            if cur.type_id == _FIXED:
                if n != cur.fixed_size:
                    raise CKValueError(f"data of shape {src.shape} does not fit type "
                                       f"'{want}' (dim {i} has size {n})")
            elif cur.type_id == _STRIDED:
                shape.append(n)
            else:
                break
            cur = cur.element
        if _VAR in dim_kinds(want):
            return array(src.tolist(), type=want)
        out = _new_array(want, shape)
    elif el is not None:
        inner = src._element_below(k)
        from ..arraylike import _replace_dtype
        out = _new_array(_strided(_replace_dtype(inner, el), k) if k else
                         _replace_dtype(inner, el), src.shape[:k])
    else:
        out = _new_array(src.type, src.shape[:k])
    out._assign(src)
    return out


def asarray(obj, dtype=None, *, type=None, fill_value=None) -> Array:
    """Share memory with ``obj`` when it is a NumPy array (or an
    ``__array_interface__`` / DLPack exporter) of a builtin or aligned struct
    dtype; otherwise copy (:func:`array`).  Host arrays are returned as they
    are (converted when ``dtype``/``type`` differ).  ``fill_value``: see
    :func:`array`."""
    if dtype is None and type is None:
        tobj = builtins.type(obj)
        if tobj is np.ndarray:
            cached = _STRIDED_OF.get((obj.dtype, obj.ndim))
            if cached is not None:   # seen before: no checks left to make
                return _wrap_ndarray(obj)
        elif tobj is Array:
            return obj
    if isinstance(obj, Array):
        if (dtype is None or _element_type(dtype) == obj.type.dtype) and \
                (type is None or _element_type(type) == obj.type):
            return obj
        return array(obj, dtype, type=type)
    tarr = _numpy_time(obj)          # pandas datetime64/timedelta64 data: NumPy's path
    obj = tarr if tarr is not None else obj
    if _arrow_io.is_arrow(obj):
        return asarray(from_arrow(obj, fill_value=fill_value), dtype, type=type)
    if not isinstance(obj, (np.ndarray, ArrayLike)) and (hasattr(obj, "__array_interface__")
                                                         or hasattr(obj, "__dlpack__")):
        obj = np.asarray(obj) if hasattr(obj, "__array_interface__") else np.from_dlpack(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind not in "OUST" and \
            (obj.dtype.kind != "V" or obj.dtype.fields is not None):
        key = (obj.dtype, obj.ndim)
        cached = _STRIDED_OF.get(key)
        if cached is None:
            cached = _strided_of(*key)
        dtype_t, t, _ = cached
        if type is not None and _array_type(type) != t:
            raise CKTypeError(f"asarray: NumPy array has type '{t}', not '{type}'")
        if dtype is not None and _element_type(dtype) != dtype_t:
            return array(obj, dtype)
        return _wrap_ndarray(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "OUST" and dtype is None and \
            type is None:
        return array(obj, fill_value=fill_value)
    return array(obj, dtype, type=type, fill_value=fill_value)


def from_arrow(obj, *, fill_value=None, copy: bool = False) -> Array:
    """An array holding Arrow data: any object implementing the Arrow PyCapsule
    interface (pyarrow arrays and chunked arrays, polars Series and
    DataFrames, nanoarrow arrays, duckdb relations) or a pandas object backed
    by Arrow.  One Arrow array is shared where the layout allows (numbers,
    the text of strings, the elements of lists of numbers: the result is
    read-only and keeps the Arrow data alive); a stream of several arrays is
    concatenated into an array of its own.  Nulls raise ``CKValueError``
    naming the field and how many, unless ``fill_value`` gives the value to
    use (null lists become empty lists).  ``copy=True`` always returns an
    array of its own (writable).  ``asarray`` / ``array`` call this for Arrow
    objects (``docs/interop.md``)."""
    fill = None if fill_value is None else array(fill_value)
    if fill is not None and fill.ndim != 0:
        raise InvalidArgumentError("from_arrow: fill_value must be a scalar")
    out = Array._own_address(_arrow_io.import_address(obj, None if fill is None else fill._ad))
    if copy and not out.flags.writeable:
        out = out.copy()
    return out


def from_dlpack(x) -> Array:
    """Zero-copy import of a DLPack tensor in CPU memory."""
    device = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if device[0] not in (1, 3):  # kDLCPU, kDLCUDAHost
        raise NotSupportedError(f"DLPack device {device} is not host memory; ckernel "
                                "arrays of device memory come with contexts")
    return asarray(np.from_dlpack(x))


def debug_repr(a: Array) -> str:
    """DyND-style dump of an array's preamble, arrmeta and data reference."""
    if not isinstance(a, Array):
        raise CKTypeError(f"debug_repr needs a ckernels.Array, not {type(a).__name__}")
    return c_text_out(lib.ck_array_debug_repr, a._a)


__all__ = ["install", "array", "asarray", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "arange", "from_arrow", "from_dlpack",
           "debug_repr"]
