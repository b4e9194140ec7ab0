"""Arrow through the PyCapsule interface (``docs/interop.md``, Arrow half).

The C core converts (``ckernel/arrow.h``: ``ck_arrow_export*`` /
``ck_arrow_import*``); :mod:`ckernels._arrow` (``src/python/arrow/capsules.c``) puts
the structs into capsules and takes them out.  This module is what the host
array layer calls, in addresses of C arrays (``Array._ad``) so that it sits
below :mod:`ckernels.array` and imports nothing of it:

* the producer side -- ``export_schema`` / ``export_array`` /
  ``export_stream`` / ``export_device_array`` behind ``Array.__arrow_c_*__``;
* the consumer side -- :func:`is_arrow` (does an object speak the protocol)
  and :func:`import_address` (the address of a new C array holding it: one
  Arrow array zero-copy where the layout allows, a stream or chunked array
  concatenated).
"""
from __future__ import annotations

import sys

import numpy as np

from .. import _arrow, _foreign, dtypes

__all__ = ["export_schema", "export_array", "export_stream", "export_device_array",
           "requested_cast", "is_arrow", "import_address"]

# Arrow's primitive formats and the NumPy dtypes they hold
_PROTOCOL = ("__arrow_c_array__", "__arrow_c_stream__", "__arrow_c_device_array__")


def export_schema(address: int, requested_schema=None):
    """The ``arrow_schema`` capsule of the array at ``address``."""
    return _arrow.export_schema(address, requested_schema)


def export_array(address: int, requested_schema=None):
    """``(arrow_schema, arrow_array)`` capsules of the array at ``address``
    (numbers and the text of strings shared, see ``ckernel/arrow.h``)."""
    return _arrow.export_array(address, requested_schema)


def export_stream(address: int, requested_schema=None):
    """An ``arrow_array_stream`` capsule yielding the array at ``address`` once."""
    return _arrow.export_stream(address, requested_schema)


def requested_cast(requested_schema, dtype) -> str | None:
    """The element type to convert a numeric array of NumPy ``dtype`` to
    before exporting it, when ``requested_schema`` asks for another primitive
    type at the top level (``pa.array(a, type=pa.int32())``): the conversion
    is ckernels' checked ``astype`` (an overflow raises), Arrow's request
    honoured rather than left to the consumer.  None when nothing is to
    convert (no request, the same type, a nested request: the C export
    chooses encodings there and ignores other leaf types)."""
    if requested_schema is None or getattr(dtype, "kind", "O") not in "biuf":
        return None
    type_id = _arrow.schema_element(requested_schema)
    want = None if type_id is None else dtypes.by_id[type_id].name
    return want if want is not None and want != dtype.name else None


def export_device_array(address: int, requested_schema=None, **kwargs):
    """``(arrow_schema, arrow_device_array)`` capsules (the CPU device) of the
    array at ``address``.  Keywords other than ``None`` are refused, as the
    PyCapsule interface asks."""
    extra = sorted(k for k, v in kwargs.items() if v is not None)
    if extra:
        raise NotImplementedError(f"__arrow_c_device_array__: unsupported keyword "
                                  f"argument(s): {extra}")
    return _arrow.export_device_array(address, requested_schema)


def _pandas_arrow(obj):
    """A pandas Series/Index/array backed by Arrow (``ArrowDtype``, pyarrow
    strings) as the pyarrow ChunkedArray it holds; one of the other nullable
    dtypes (the masked ``Int64`` / ``Float64`` / ``boolean`` ..., python
    strings) as the pyarrow array pandas makes of it (``__arrow_array__``:
    the values shared where pyarrow can, the mask as a validity bitmap); None
    for anything else (NumPy-backed pandas objects take NumPy's path, not
    Arrow's) or without pyarrow."""
    mod = type(obj).__module__
    if not mod.startswith("pandas"):
        return None
    pd = sys.modules.get("pandas")
    arr = getattr(obj, "array", obj)
    if pd is not None and isinstance(getattr(arr, "dtype", None), pd.DatetimeTZDtype):
        import pyarrow as pa            # datetime64[ns, tz]: Arrow's timestamp keeps the zone
        return pa.array(arr)
    if pd is not None and isinstance(getattr(arr, "dtype", None), pd.CategoricalDtype):
        import pyarrow   # a Categorical: pyarrow's dictionary array over its codes
        return pyarrow.array(arr)
    if pd is None or not _foreign.pandas_nullable(getattr(arr, "dtype", None)):
        return None
    try:
        import pyarrow  # noqa: F401  (pandas' __arrow_array__ needs it)
    except ImportError:
        return None
    return arr.__arrow_array__()


def _validated(obj):
    """``obj``, checked by pyarrow's own ``validate()`` when it is a pyarrow
    array (buffers too small for the length and offset, a null count above
    the length: pyarrow's error, before the C import reads a byte); a
    ChunkedArray of one chunk as that chunk."""
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(obj, (pa.Array, pa.ChunkedArray)):
        obj.validate()
        if isinstance(obj, pa.ChunkedArray) and obj.num_chunks == 1:
            return obj.chunk(0)    # one array: imported as an array (zero-copy), not a stream
    return obj


def numpy_time(obj):
    """A pandas (or other) object holding NumPy ``datetime64``/``timedelta64``
    data as that NumPy array (``to_numpy()``: a view for a Series), None for
    anything else; pandas ``Period`` data is refused (it has no ckernels
    type)."""
    dtype = getattr(obj, "dtype", None)
    if isinstance(obj, np.ndarray) or dtype is None or not hasattr(obj, "to_numpy"):
        return None
    if isinstance(dtype, np.dtype):
        return obj.to_numpy() if dtype.kind in "Mm" else None
    if str(dtype).startswith("period["):
        from ..errors import CKTypeError
        raise CKTypeError(f"pandas {dtype} data has no ckernels type (a Period is a span, "
                          "not an instant): convert it first, e.g. .dt.start_time or "
                          ".dt.to_timestamp()")
    return None


def _one_dictionary(obj):
    """A pyarrow chunked dictionary column or a polars Categorical/Enum Series
    of several chunks as one dictionary array (pyarrow's
    ``unify_dictionaries``, polars' ``rechunk``): a stream of dictionary
    arrays with dictionaries of their own does not concatenate into one
    dictionary column.  Anything else is returned as it is."""
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(obj, pa.ChunkedArray) and obj.num_chunks > 1 and \
            pa.types.is_dictionary(obj.type):
        return obj.unify_dictionaries().combine_chunks()
    pl = sys.modules.get("polars")
    if pl is not None and isinstance(obj, pl.Series) and obj.n_chunks() > 1 and \
            isinstance(obj.dtype, (pl.Categorical, pl.Enum)):
        return obj.rechunk()
    return obj


def is_arrow(obj) -> bool:
    """Whether ``obj`` is Arrow data ckernels imports through the PyCapsule
    interface: an object with ``__arrow_c_array__`` / ``__arrow_c_stream__`` /
    ``__arrow_c_device_array__`` (pyarrow arrays and chunked arrays, polars
    Series and DataFrames, nanoarrow arrays, duckdb relations), or a pandas
    object backed by Arrow.  NumPy-backed pandas objects are not: they go
    through NumPy."""
    tp = type(obj)
    if tp.__module__.startswith("pandas"):
        return _pandas_arrow(obj) is not None
    return any(hasattr(tp, name) for name in _PROTOCOL)


def import_address(obj, fill_address: int | None = None) -> int:
    """Import ``obj`` (see :func:`is_arrow`) as a new C array and return its
    address (one reference, for ``Array._own_address``).  One array
    (``__arrow_c_array__``, or a device array on the CPU) is imported
    zero-copy where the layout allows (read-only); a stream (chunked arrays,
    Series, DataFrames, relations) of several arrays is concatenated into one
    array of its own -- one copy of everything, text included.  Nulls raise
    ``CKValueError`` naming the field and the count unless ``fill_address``
    (a 0-d array) gives the value to use."""
    pandas = _pandas_arrow(obj)
    if pandas is not None:
        obj = pandas
    obj = _one_dictionary(_validated(obj))
    tp = type(obj)
    if hasattr(tp, "__arrow_c_array__"):
        schema, array = obj.__arrow_c_array__()
        return _arrow.import_array(schema, array, fill_address)
    if hasattr(tp, "__arrow_c_stream__"):
        return _arrow.import_stream(obj.__arrow_c_stream__(), fill_address)
    if hasattr(tp, "__arrow_c_device_array__"):
        schema, array = obj.__arrow_c_device_array__()
        return _arrow.import_array(schema, array, fill_address)
    raise TypeError(f"{tp.__name__} does not implement the Arrow PyCapsule interface "
                    "(__arrow_c_array__ / __arrow_c_stream__)")
