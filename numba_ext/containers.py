"""The containers users hold, through jitted functions and operations and
back: ``f(container)`` gives the container it was given, nulls kept.

A call of a jitted function or a registry operation with one of these among
its operands (recognised by :func:`ckernels._foreign.container_kind`, by the
libraries' own classes) comes here (:func:`ckernels.routing.runs_on` says
:data:`ckernels.routing.CONTAINERS`; ``ufuncs.call_wrapped`` sends the ones
implementing ``__array_ufunc__`` to the general path first).  Each operand is
made a ckernels array (nulls as option types ``?T``, zero-copy through the
Arrow PyCapsule interface where the layout allows), the function runs on
those, and its result is made the container of the first container operand
(a dask Series among them: a dask Series).  One table, :data:`KINDS`:

============  =================================  ==================================
kind          to ckernels                        back
============  =================================  ==================================
pyarrow       ``asarray`` (Arrow, zero-copy)     ``pa.array`` (a ChunkedArray of one
                                                 chunk for a ChunkedArray)
polars        ``asarray`` (Arrow stream)         ``pl.Series(result)``, the name kept
pandas        ``asarray`` (Arrow; the index      a Series / Index of the nullable
              aligned as pandas aligns)          dtype of the result (``ArrowDtype``
                                                 in: ``ArrowDtype`` out; strings:
                                                 the operands' string dtype;
                                                 lists, structs: ``ArrowDtype``)
dask-series   per partition (pandas, lazily:     a dask Series, ``meta`` from the
              ``map_partitions``)                function on the empty partitions
============  =================================  ==================================

Nulls: a null in any argument is a null in the result (the function decides
how: plain ``T`` arguments propagate nulls, ``?T`` arguments see them).  A
function that cannot take the nulls it is given raises an error naming the
argument, its container, the null count and the first null's index, and how
to fill or drop them *with that container's own methods* -- never a keyword
of the call, which takes none.
"""

from __future__ import annotations

import sys

import numpy as np

from . import _foreign, dtypes
from ._native import ffi, lib
from .errors import CKValueError, InvalidArgumentError, NotSupportedError
from .host.array import Array, asarray
from .host import time_reduce as _time_reduce
from .host.nulls import valid_mask


def _pyarrow():
    try:
        import pyarrow
    except ImportError:
        raise NotSupportedError("giving back a pandas nullable dtype needs pyarrow, which is "
                                "not installed") from None
    return pyarrow


# ------------------------------------------------------------------ pyarrow --
def _pa_back(result: Array, leader, _ctx):
    pa = sys.modules["pyarrow"]
    out = pa.array(result)
    return pa.chunked_array([out]) if isinstance(leader, pa.ChunkedArray) else out


# ------------------------------------------------------------------- polars --
def _pl_back(result: Array, leader, _ctx):
    pl = sys.modules["polars"]
    return pl.Series(result).alias(leader.name)


# ------------------------------------------------------------------- pandas --
def _masked_name(element: str):
    """pandas' masked nullable dtype of an element type (``int64`` ->
    ``Int64``, ``uint8`` -> ``UInt8``, ``float32`` -> ``Float32``, ``bool`` ->
    ``boolean``), None where pandas has none (float16, complex, ...)."""
    d = dtypes.by_name.get(element)
    if d is None:
        return None
    if d.kind == "b":
        return "boolean"
    if d.kind == "u":
        return "UInt" + element[4:]
    if d.kind == "i" or (d.kind == "f" and d.size >= 4):
        return element.capitalize()
    return None


def _pd_context(args):
    """(index, name, string dtype, arrow) of the pandas operands: the union of
    the Series' indexes (pandas' alignment), the common name, the first
    string dtype among them, whether one is ``ArrowDtype``."""
    pd = sys.modules["pandas"]
    frames = [a for a in args if isinstance(a, (pd.Series, pd.Index))]
    series = [a for a in frames if isinstance(a, pd.Series)]
    index = series[0].index if series else None
    for s in series[1:]:
        if not s.index.equals(index):
            index = index.union(s.index)
    first = frames[0]
    name = first.name if all(f.name == first.name for f in frames) else None
    strings = next((f.dtype for f in frames if isinstance(f.dtype, pd.StringDtype)), None)
    arrow = any(isinstance(f.dtype, pd.ArrowDtype) for f in frames)
    # the zone of the first zoned operand: an instant result without one (a
    # jitted function's: Numba's datetime64 is the UTC count) is given it
    tz = next((str(f.dtype.tz) for f in frames if isinstance(f.dtype, pd.DatetimeTZDtype)),
              None)
    return {"index": index, "name": name, "string": strings, "arrow": arrow,
            "series": bool(series), "tz": tz}


def _pd_in(x, ctx):
    pd = sys.modules["pandas"]
    if isinstance(x, pd.Series) and ctx["index"] is not None and not x.index.equals(ctx["index"]):
        x = x.reindex(ctx["index"])       # missing rows are nulls, as pandas aligns
    if _foreign.pandas_nullable(x.dtype) or isinstance(x.dtype, pd.DatetimeTZDtype):
        return asarray(x)      # Arrow: nulls kept; a zone kept (datetime[..., tz=...])
    return asarray(x.to_numpy())


def _pd_array(result: Array, ctx):
    """The pandas extension array of a result (nulls as ``NA``)."""
    pd = sys.modules["pandas"]
    if not ctx["arrow"] and _time_reduce.is_time(result):
        return _pd_time_array(result, ctx["tz"])
    pa = _pyarrow()
    values = pa.array(result)
    if ctx["arrow"] or _nested(pa, values.type):
        # lists (var results, null rows included) and structs: pandas' only
        # nullable dtype for them is ArrowDtype (pd.ArrowDtype(pa.list_(...)))
        return pd.arrays.ArrowExtensionArray(values)
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        dtype = ctx["string"] if ctx["string"] is not None else pd.StringDtype("pyarrow")
        return dtype.__from_arrow__(values)
    name = _masked_name(str(result.type.dtype).lstrip("?"))
    if name is None:
        raise NotSupportedError(f"a result of type '{result.type}' has no pandas nullable "
                                "dtype")
    return pd.api.types.pandas_dtype(name).__from_arrow__(values)


def _nested(pa, t) -> bool:
    """Whether an Arrow type is a list or struct type (pandas has no masked
    dtype for those)."""
    return (pa.types.is_list(t) or pa.types.is_large_list(t) or
            pa.types.is_fixed_size_list(t) or pa.types.is_struct(t))


def _pd_time_array(result: Array, zone):
    """pandas' ``datetime64[unit(, tz)]`` / ``timedelta64[unit]`` array of a
    time result (nulls as NaT, the zone kept -- an instant without one takes
    ``zone``, the operands' --; units pandas lacks -- D, h, m -- become
    seconds, as pandas makes NumPy's)."""
    pd = sys.modules["pandas"]
    dt = result.type.dtype
    vt = dt.value_type if dt.is_option else dt
    counts_dt = vt.to_numpy_dtype()
    if dt.is_option:
        nat = np.array(np.iinfo(np.int64).min).view(counts_dt)[()]
        result = result.fill_null(nat)
    counts = np.asarray(result)
    if np.datetime_data(counts_dt)[0] not in ("s", "ms", "us", "ns"):
        counts = counts.astype(f"{counts_dt.kind}8[s]")
    arr = pd.array(counts)
    tz = lib.ck_datetime_type_tz(vt.c_type)
    tz = ffi.string(tz).decode() if tz != ffi.NULL else (zone if counts_dt.kind == "M" else None)
    if tz is not None:
        arr = pd.DatetimeIndex(arr).tz_localize("UTC").tz_convert(tz).array
    return arr


def _pd_back(result: Array, leader, ctx):
    pd = sys.modules["pandas"]
    values = _pd_array(result, ctx)
    if ctx["series"]:
        return pd.Series(values, index=ctx["index"], name=ctx["name"], copy=False)
    return pd.Index(values, name=ctx["name"])


class Kind:
    """A row of :data:`KINDS`: how a container becomes ckernels arrays and
    how a result goes back; ``fix`` names that library's way to fill or drop
    nulls (for the error of a function that cannot take them)."""

    __slots__ = ("name", "context", "to_ckernels", "back", "fix")

    def __init__(self, name, context, to_ckernels, back, fix):
        self.name, self.context, self.to_ckernels, self.back, self.fix = \
            name, context, to_ckernels, back, fix


#: container kind -> conversion both ways (the one table of this module)
KINDS = {
    _foreign.PYARROW: Kind(_foreign.PYARROW, lambda args: None, lambda x, _c: asarray(x),
                           _pa_back, "pyarrow.compute.fill_null(a, value) or a.drop_null()"),
    _foreign.POLARS: Kind(_foreign.POLARS, lambda args: None, lambda x, _c: asarray(x),
                          _pl_back, "s.fill_null(value) or s.drop_nulls()"),
    _foreign.PANDAS: Kind(_foreign.PANDAS, _pd_context, _pd_in, _pd_back,
                          "s.fillna(value) or s.dropna()"),
}


def _describe(x, kind: str) -> str:
    dt = getattr(x, "dtype", None)
    what = {"pyarrow": f"a pyarrow {type(x).__name__}", "polars": "a polars Series",
            "pandas": f"a pandas {type(x).__name__}"}.get(kind, kind)
    return f"{what} of type {x.type}" if kind == "pyarrow" else f"{what} of dtype {dt}"


def _name(function) -> str:
    return getattr(function, "__name__", None) or getattr(function, "name", "kernel")


def _null_error(function, exc, nulls, args, kinds) -> Exception:
    i, count, c = nulls[0]
    first = _first_null(c)
    fix = KINDS[kinds[i]].fix
    s = "s" if count != 1 else ""
    return NotSupportedError(
        f"{_name(function)}: argument {i} ({_describe(args[i], kinds[i])}) holds {count} "
        f"null{s} (the first at index {first}), and the call failed on it: {exc}. "
        f"To run without the nulls, fill or drop them first ({fix})")


def call(function, args, kwargs=None, out=None):
    """``function(*args, **kwargs)`` with containers among ``args`` (see the
    module docstring): the result in the first container's kind."""
    kwargs = dict(kwargs or {})
    kinds = [_foreign.container_kind(a) for a in args]
    if _foreign.DASK_SERIES in kinds:
        return _dask_call(function, args, kwargs, out)
    extra = sorted(k for k in kwargs if k != "out")
    if extra:
        raise TypeError(f"{_name(function)}() got an unexpected keyword argument "
                        f"{extra[0]!r} (a call on pyarrow, polars or pandas containers "
                        "takes no keywords)")
    out = kwargs.get("out", out)
    if out is not None and _foreign.container_kind(out) is not None:
        raise NotSupportedError(f"{_name(function)}(..., out=...): out= takes a ckernels or "
                                f"NumPy array, not {_describe(out, _foreign.container_kind(out))}"
                                "; use the returned container")
    lead = next(k for k in kinds if k is not None)
    leader = args[kinds.index(lead)]
    pd = sys.modules.get("pandas")
    if pd is not None:   # NumPy-backed pandas operands among them: aligned and converted too
        kinds = [_foreign.PANDAS if k is None and isinstance(a, (pd.Series, pd.Index)) else k
                 for a, k in zip(args, kinds)]
    ctx = {k: KINDS[k].context(args) for k in set(kinds) if k is not None}
    conv, nulls = [], []
    for i, (a, k) in enumerate(zip(args, kinds)):
        if k is None:
            conv.append(a)
            continue
        c = KINDS[k].to_ckernels(a, ctx[k])
        n = c.null_count
        if n:   # the first null's index only when an error needs it
            nulls.append((i, n, c))
        conv.append(c)
    try:
        result = function(*conv) if out is None else function(*conv, out=out)
    except (TypeError, CKValueError) as exc:
        if not nulls or not _broadcastable(conv):   # not the nulls' fault
            raise
        raise _null_error(function, exc, nulls, args, kinds) from exc
    if out is not None or not isinstance(result, Array) or result.ndim == 0:
        return result
    return KINDS[lead].back(result, leader, ctx[lead])


def _broadcastable(operands) -> bool:
    """Whether the operands' shapes broadcast together (a call that fails
    when they do not fails for that, nulls or not)."""
    try:
        np.broadcast_shapes(*(tuple(getattr(a, "shape", ())) for a in operands))
    except ValueError:
        return False
    return True


def _first_null(a: Array):
    m = valid_mask(a)
    flat = int(np.argmin(m.ravel()))
    return flat if a.ndim == 1 else tuple(int(i) for i in np.unravel_index(flat, a.shape))


# --------------------------------------------------------------- dask series --
def _partition_call(function, *parts):
    return call(function, parts)


def _dask_call(function, args, kwargs, out):
    """``function`` over dask Series: lazily, partition by partition
    (pandas in, pandas out), the result a dask Series."""
    if kwargs or out is not None:
        raise InvalidArgumentError(f"{_name(function)}(...) on dask Series takes no keywords "
                                   "(out= included: a dask Series is an immutable graph)")
    dd = sys.modules["dask.dataframe"]
    metas = [a._meta if isinstance(a, dd.Series) else a for a in args]
    meta = call(function, metas)
    return dd.map_partitions(_partition_call, function, *args, meta=meta, token=_name(function))


def takes(args, out=None) -> bool:
    """Whether a call with these operands comes here."""
    return _foreign.any_container(args) or (out is not None and
                                            _foreign.container_kind(out) is not None)


__all__ = ["KINDS", "Kind", "call", "takes"]
