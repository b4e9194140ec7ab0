"""Other libraries' collections, recognised by those libraries' own tests and
classes -- never by attribute presence, and without importing them: a library
that is not imported has made no object of its own yet.

* :func:`is_dask_collection`: ``dask.is_dask_collection`` (an object whose
  ``__dask_graph__()`` is a graph).  An xarray object has that method too,
  and answers ``None`` when it holds NumPy data: it is no Dask collection and
  stays an xarray object through every ckernels call.
* :func:`is_xarray`: an ``xarray.DataArray`` or ``xarray.Variable``.
* :func:`container_kind`: the containers a jitted function or an operation
  takes and gives back in kind (``ckernels.containers``): pyarrow arrays,
  polars Series, pandas Series / Index of nullable dtypes, dask Series of
  them.
"""

from __future__ import annotations

import sys


def is_dask_collection(x) -> bool:
    """Whether ``x`` is a Dask collection (Dask's own test)."""
    dask = sys.modules.get("dask")
    return dask is not None and bool(dask.is_dask_collection(x))


def any_dask_collection(xs) -> bool:
    """Whether any of ``xs`` is a Dask collection."""
    dask = sys.modules.get("dask")
    return dask is not None and any(dask.is_dask_collection(x) for x in xs)


def is_xarray(x) -> bool:
    """Whether ``x`` is an ``xarray.DataArray`` or ``xarray.Variable`` (whose
    ``reduce`` maps a function over its data, dims and coordinates kept)."""
    xr = sys.modules.get("xarray")
    return xr is not None and isinstance(x, (xr.DataArray, xr.Variable))


def is_pandas_na(x) -> bool:
    """Whether ``x`` is ``pandas.NA`` (pandas' missing value), without
    importing pandas (no pandas loaded: nothing can be its NA)."""
    pd = sys.modules.get("pandas")
    return pd is not None and x is pd.NA


#: the kinds of :func:`container_kind` (the rows of ``ckernels.containers``)
PYARROW, POLARS, PANDAS, DASK_SERIES = "pyarrow", "polars", "pandas", "dask-series"


def pandas_nullable(dtype) -> bool:
    """Whether ``dtype`` is a pandas dtype that holds missing values as nulls:
    the string dtypes (``"str"``, ``string[pyarrow]``, ``string[python]``),
    ``ArrowDtype`` and the masked ``Int*`` / ``UInt*`` / ``Float*`` /
    ``boolean`` dtypes."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return False
    return isinstance(dtype, (pd.StringDtype, pd.ArrowDtype, pd.BooleanDtype,
                              pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype,
                              pd.UInt8Dtype, pd.UInt16Dtype, pd.UInt32Dtype, pd.UInt64Dtype,
                              pd.Float32Dtype, pd.Float64Dtype))


def pandas_time(dtype) -> bool:
    """Whether ``dtype`` is pandas' ``datetime64[unit]``, ``datetime64[unit,
    tz]`` or ``timedelta64[unit]`` (its Series come back as Series of the
    result's time dtype, index and zone kept: :mod:`ckernels.containers`)."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return False
    return isinstance(dtype, pd.DatetimeTZDtype) or getattr(dtype, "kind", "") in ("M", "m") \
        and not isinstance(dtype, pd.ArrowDtype)


def container_kind(x) -> str | None:
    """:data:`PYARROW` (a ``pyarrow.Array`` / ``ChunkedArray``),
    :data:`POLARS` (a ``polars.Series``), :data:`PANDAS` (a pandas Series /
    Index of a :func:`pandas_nullable` dtype), :data:`DASK_SERIES` (a dask
    DataFrame column of one), else None."""
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(x, (pa.Array, pa.ChunkedArray)):
        return PYARROW
    pl = sys.modules.get("polars")
    if pl is not None and isinstance(x, pl.Series):
        return POLARS
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    if isinstance(x, (pd.Series, pd.Index)):
        return PANDAS if pandas_nullable(x.dtype) or pandas_time(x.dtype) else None
    dd = sys.modules.get("dask.dataframe")
    if dd is not None and isinstance(x, dd.Series) and pandas_nullable(x.dtype):
        return DASK_SERIES
    return None


def any_container(xs) -> bool:
    """Whether any of ``xs`` is a container of :func:`container_kind`."""
    return any(container_kind(x) is not None for x in xs)


__all__ = ["is_dask_collection", "any_dask_collection", "is_xarray", "is_pandas_na",
           "pandas_nullable", "pandas_time", "container_kind", "any_container",
           "PYARROW", "POLARS", "PANDAS", "DASK_SERIES"]
