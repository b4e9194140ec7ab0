"""Other libraries' collections, recognised by those libraries' own tests and
classes -- never by attribute presence, and without importing them: a library
that is not imported has made no object of its own yet.

* :func:`is_dask_collection`: ``dask.is_dask_collection`` (an object whose
  ``__dask_graph__()`` is a graph).  An xarray object has that method too,
  and answers ``None`` when it holds NumPy data: it is no Dask collection and
  stays an xarray object through every ckernels call.
* :func:`is_xarray`: an ``xarray.DataArray`` or ``xarray.Variable``.
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


__all__ = ["is_dask_collection", "any_dask_collection", "is_xarray", "is_pandas_na"]
