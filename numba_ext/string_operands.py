"""Text operands of string ufuncs: what reaches a jitted function's ``string``
loops (NumPy ``StringDType``, ``src/python/ufuncs/string_loops.c``) from the other
places text lives in.

A jitted function with ``string`` signatures owns a real ufunc whose loops
take ``StringDType`` (and, through NumPy's own casts, ``U`` and UTF-8 ``S``
arrays).  Text held as Python objects -- object arrays, pandas ``object`` /
``str`` / ``"string"`` columns, xarray and dask arrays of objects -- is
converted here first, in C (``ckernels._convert.to_stringdtype``): NumPy's
object -> ``StringDType`` cast would turn any object into text (``None`` ->
``"None"``), while this conversion refuses anything but ``str`` / UTF-8
``bytes`` and counts missing values (``None``, NaN, ``pandas.NA``: a
:class:`~ckernels.errors.CKValueError` with their count and the first one's
index).

Results follow the operands: NumPy in, NumPy out (``StringDType`` for a
``string`` result, as ``numpy.strings`` functions return); a pandas Series /
Index stays one (its index and name kept), an xarray object stays one, a
dask array stays lazy.  ckernels arrays and lists take the general path
(ckernels arrays out).
"""

from __future__ import annotations

import sys

import numpy as np

from . import _convert, _foreign
from .errors import CKValueError

#: NumPy's dtype of ckernels ``string`` elements
STRING = np.dtypes.StringDType()


def as_strings(x, fill_value=None) -> np.ndarray:
    """An object / ``S`` / ``U`` / ``StringDType`` array as a new
    ``StringDType`` array (missing values refused unless ``fill_value``)."""
    return _convert.to_stringdtype(np.asarray(x), np.dtypes.StringDType(), fill_value)


def _operand_strings(x) -> np.ndarray:
    """:func:`as_strings` of a call's operand: missing values refused with
    an error that names no keyword (the call takes no ``fill_value=``)."""
    try:
        return as_strings(x)
    except CKValueError:
        arr = np.asarray(x)
        flat = arr.ravel().tolist()
        missing = [i for i, v in enumerate(flat) if v is None or _foreign.is_pandas_na(v)
                   or (isinstance(v, float) and v != v)]
        if not missing:
            raise
        n = len(missing)
        first = tuple(int(i) for i in np.unravel_index(missing[0], arr.shape))
        raise CKValueError(
            f"{n} missing value{'s' if n != 1 else ''} (None, NaN or pandas.NA) among the "
            f"text, the first at index {first}: a string function's NumPy loops "
            "take none; fill them first (numpy.where, Series.fillna), or pass "
            "ckernels.array(x), which holds them as nulls of ?string") from None


def _is_text_dtype(dt) -> bool:
    pd = sys.modules.get("pandas")
    if isinstance(dt, np.dtype):
        return dt.kind == "O"
    return pd is not None and isinstance(dt, pd.StringDtype)


def _pandas_text(a) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(a, (pd.Series, pd.Index)) and _is_text_dtype(a.dtype)


def _converted(a):
    """``a`` with text held as objects made ``StringDType`` (its container
    kept: xarray, dask), or ``a`` itself."""
    if isinstance(a, np.ndarray):
        return _operand_strings(a) if a.dtype.kind == "O" else a
    if _foreign.is_xarray(a):
        if a.dtype.kind != "O":
            return a
        data = a.data
        if _foreign.is_dask_collection(data):
            return a.copy(data=data.map_blocks(_operand_strings, dtype=STRING))
        return a.copy(data=_operand_strings(np.asarray(data)))
    if _foreign.is_dask_collection(a) and getattr(a, "dtype", None) == np.dtype(object):
        return a.map_blocks(_operand_strings, dtype=STRING)
    return a


def operands(args) -> tuple:
    """The operands of a string ufunc call, text held as objects converted
    (NumPy, xarray and dask containers kept)."""
    return tuple(_converted(a) for a in args)


def has_pandas(args) -> bool:
    """Whether a pandas Series / Index is among ``args``."""
    pd = sys.modules.get("pandas")
    return pd is not None and any(isinstance(a, (pd.Series, pd.Index)) for a in args)


def has_pandas_text(args) -> bool:
    """Whether a pandas Series / Index of text is among ``args`` (NumPy sees
    it as an object array: :func:`call_pandas` converts it)."""
    return any(_pandas_text(a) for a in args)


def _pyarrow():
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def call_pandas(function, args, kwargs):
    """``function.ufunc(*args, **kwargs)`` with pandas operands: a Series /
    Index with the operands' index (aligned as pandas aligns them) and name.
    Text operands are converted strictly (missing values counted).  A
    ``string`` result (no keywords, pyarrow installed) is built in a ckernels
    arena by the function's general path and handed to pandas as its ``str``
    dtype over Arrow (``pa.array`` of the arena's strings: no Python ``str``
    per element); otherwise the ufunc's ``StringDType`` result is given to
    pandas, which stores it as it stores text."""
    uf = function.ufunc
    pd = sys.modules["pandas"]
    frames = [a for a in args if isinstance(a, (pd.Series, pd.Index))]
    first = frames[0]
    series = [a for a in frames if isinstance(a, pd.Series)]
    index = series[0].index if series else None
    for s in series[1:]:
        if not s.index.equals(index):
            index = index.union(s.index)
    conv = []
    for a in args:
        if isinstance(a, pd.Series):
            if not a.index.equals(index):
                a = a.reindex(index)   # pandas' alignment: missing values where absent
            a = _operand_strings(a.to_numpy(dtype=object)) if _is_text_dtype(a.dtype) else \
                a.to_numpy()
        elif isinstance(a, pd.Index):
            a = _operand_strings(a.to_numpy(dtype=object)) if _is_text_dtype(a.dtype) else \
                a.to_numpy()
        else:
            a = _converted(a)
        conv.append(a)
    r = None
    pa = _pyarrow() if not kwargs else None
    if pa is not None and _string_result(uf, conv):
        built = function._arena_call(*conv)          # a ckernels array of strings
        r = pd.array(pa.array(built, type=pa.large_string()), dtype="str")
    if r is None:
        r = uf(*conv, **kwargs)
    if isinstance(first, pd.Series) or series:
        name = first.name if all(getattr(s, "name", None) == first.name for s in frames) \
            else None
        return pd.Series(r, index=index, name=name, copy=False)
    return pd.Index(r, name=first.name)


def _string_result(uf, operands) -> bool:
    """Whether ``uf`` gives a ``string`` result for these NumPy operands."""
    dts = tuple(a.dtype if isinstance(a, np.ndarray) else type(a) for a in operands)
    try:
        return uf.resolve_dtypes(dts + (None,) * uf.nout)[-1].kind == "T"
    except Exception:
        return False


__all__ = ["STRING", "as_strings", "operands", "has_pandas", "has_pandas_text", "call_pandas"]
