"""Dictionary-encoded (categorical) columns on the host (``docs/interop.md``,
"Dictionary-encoded columns"; the C type in ``ckernel/dictionary.h``).

A dictionary column is a one-dim :class:`ckernels.Array` of type
``strided * dictionary[I, V]`` (``strided * ?dictionary[I, V]`` with null
indices): integer indices ``I`` into a values array of ``V`` held by
reference.  Arrow dictionary arrays, pandas ``Categorical`` and polars
``Categorical`` / ``Enum`` import as such columns without decoding (the
indices and the values are Arrow's memory) and export as Arrow dictionary
arrays.  This module is the one place that takes them apart and puts them
together:

* :func:`is_dictionary` -- is an array a dictionary column;
* :func:`parts` -- ``(indices, values, ordered)`` as views (no copy);
* :func:`from_parts` -- a column over indices and values (indices checked);
* :func:`decode` -- the plain column (``values[indices]``, in C);
* :func:`gather` -- the results computed once per distinct value, put back
  in row order: a dictionary column again when they are strings or bytes
  (the indices shared), a decoded column otherwise;
* :func:`per_value` -- a call of a jitted function or operation with a
  dictionary column among its arguments, run once per distinct value
  (:mod:`ckernels.jit.targets`, :class:`ckernels.ops.Op` and
  :func:`wrapped_call` for pandas operands call it).
"""
from __future__ import annotations

import operator
import sys

import numpy as np

from .. import types as _t
from .. import ufuncs as _ufuncs
from .._native import check, ffi, lib
from ..errors import CKTypeError
from .array import Array, asarray

__all__ = ["is_dictionary", "dictionary_type", "parts", "from_parts", "decode", "gather",
           "as_column", "per_value", "wrapped_call"]

def _dict_type(a) -> "_t.Type | None":
    """The ``dictionary[I, V]`` of a one-dim column, else None."""
    if not isinstance(a, Array) or a.ndim != 1:
        return None
    el = a.type.element
    if el.is_option:
        el = el.value_type
    return el if lib.ck_type_is_dictionary(el.c_type) else None


def is_dictionary(a) -> bool:
    """Whether ``a`` is a one-dim dictionary column (``strided *
    dictionary[I, V]``, nulls included)."""
    return _dict_type(a) is not None


def dictionary_type(index, value, ordered: bool = False) -> "_t.Type":
    """``dictionary[index, value]`` (``ordered``: ``dictionary[index, value,
    ordered]``); ``index`` an integer type, ``value`` any element type
    without nulls."""
    it = _t.as_type(index)
    if not it.is_builtin:
        raise CKTypeError(f"dictionary_type: the index type must be an integer, not '{it}'")
    vt = _t.as_type(value)
    out = ffi.new("ck_type *")
    check(lib.ck_dictionary_type_new(it.type_id, vt.c_type, bool(ordered), out))
    return _t.Type._own(out[0])


def _require(a, fname: str) -> "_t.Type":
    dt = _dict_type(a)
    if dt is None:
        what = f"an array of type '{a.type}'" if isinstance(a, Array) else type(a).__name__
        raise CKTypeError(f"{fname}: needs a one-dim dictionary column "
                          f"('strided * dictionary[I, V]'), not {what}")
    return dt


def parts(a: Array) -> tuple[Array, Array, bool]:
    """``(indices, values, ordered)`` of a dictionary column: the indices a
    ``strided * I`` (``strided * ?I``) view of the column's memory, the
    values the array the column holds (both without copying)."""
    dt = _require(a, "dictionary.parts")
    out = ffi.new("ck_array_preamble **")
    check(lib.ck_dictionary_array_indices(a._a, out))
    indices = Array._own(out[0])
    check(lib.ck_dictionary_array_values(a._a, out))
    if out[0] == ffi.NULL:     # a column made empty: no values
        values = Array._own(_empty_values(dt))
    else:
        lib.ck_array_incref(out[0])
        values = Array._own(out[0])
    return indices, values, bool(lib.ck_dictionary_ordered(dt.c_type))


def _empty_values(dt):
    t = _t.strided_dim(_t.Type._borrow(lib.ck_dictionary_value_type(dt.c_type)))
    out = ffi.new("ck_array_preamble **")
    shape = ffi.new("intptr_t[1]", [0])
    check(lib.ck_array_empty(t.c_type, shape, 1, lib.CK_ARRAY_READ, out))
    return out[0]


def from_parts(indices, values, ordered: bool = False) -> Array:
    """The dictionary column whose row i is ``values[indices[i]]`` (a null
    where the index is null): both one-dim, the indices integers (NumPy,
    Arrow, lists: whatever :func:`ckernels.asarray` takes), the values
    without nulls.  No copy of either when they are arrays already; an index
    outside ``[0, len(values))`` is a :class:`ckernels.errors.CKIndexError`
    naming its position."""
    ia = asarray(indices)
    va = asarray(values)
    out = ffi.new("ck_array_preamble **")
    check(lib.ck_dictionary_array_new(ia._a, va._a, bool(ordered), out))
    return Array._own(out[0])


def decode(a: Array) -> Array:
    """The plain column of a dictionary column: ``strided * V`` (``strided *
    ?V`` for null indices), one value per row; strings share the values'
    text (no copy of it)."""
    _require(a, "dictionary.decode")
    out = ffi.new("ck_array_preamble **")
    check(lib.ck_dictionary_decode(a._a, out))
    return Array._own(out[0])


def _is_text(t: "_t.Type") -> bool:
    return t.type_id in (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES)


def gather(column: Array, per_value, keep_encoded: bool = True):
    """The results ``per_value`` (one per value of ``column``'s dictionary,
    in its order: an array, NumPy array or list) in row order: a dictionary
    column over ``column``'s indices when they are strings or bytes and
    ``keep_encoded`` (what polars and cuDF do for categoricals), else the
    decoded column (``per_value[indices]``)."""
    _require(column, "dictionary.gather")
    indices, _, ordered = parts(column)
    res = asarray(per_value)
    if res.ndim != 1:
        raise CKTypeError(f"dictionary.gather: one result per value expected, got an array "
                          f"of type '{res.type}'")
    if res.type.element.is_option:
        return _gather_options(indices, res)
    col = from_parts(indices, res, False)
    if keep_encoded and _is_text(res.type.element):
        return col
    return decode(col)


def _gather_options(indices: Array, res: Array) -> Array:
    """Results with nulls (a function returning ``?T``): gathered through
    NumPy, nulls where the result or the index is null."""
    from .array import array as _array
    vals = res.tolist()
    return _array([None if k is None else vals[k] for k in indices.tolist()],
                  type=str(res.type))


# ---- calls over dictionary columns ----------------------------------------------------

def as_column(obj) -> "Array | None":
    """``obj`` as a dictionary column when it is one -- a ckernels dictionary
    column, a pyarrow dictionary (chunked) array, a pandas ``Categorical``
    (Series, Index or array), a polars ``Categorical`` / ``Enum`` Series --
    else None.  The indices and the values are shared, not decoded."""
    if isinstance(obj, Array):
        return obj if _dict_type(obj) is not None else None
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(getattr(obj, "dtype", None), pd.CategoricalDtype):
        return asarray(obj)                 # host.arrow: through pyarrow's Categorical
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(obj, (pa.Array, pa.ChunkedArray)):
        return asarray(obj) if pa.types.is_dictionary(obj.type) else None
    pl = sys.modules.get("polars")
    if pl is not None and isinstance(obj, pl.Series) and \
            isinstance(obj.dtype, (pl.Categorical, pl.Enum)):
        return asarray(obj)
    return None


def _is_scalar(a) -> bool:
    return isinstance(a, (bool, int, float, complex, str, bytes, np.generic)) or (
        isinstance(a, Array) and a.ndim == 0)


def _like(out, like):
    """A result in the kind of the column it came from: a pandas Series (its
    index and name kept) for pandas operands, a pyarrow array (a
    ``ChunkedArray`` of one chunk for a ``ChunkedArray``) for pyarrow ones, a
    polars Series (its name kept) for polars ones; text results stay
    dictionary-encoded in each (``Categorical``, ``pa.DictionaryArray``);
    as computed otherwise."""
    if not isinstance(out, Array):
        return out
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(like, (pa.Array, pa.ChunkedArray)):
        res = pa.array(out)
        return pa.chunked_array([res]) if isinstance(like, pa.ChunkedArray) else res
    pl = sys.modules.get("polars")
    if pl is not None and isinstance(like, pl.Series):
        return pl.Series(like.name, pa.array(out) if pa is not None else out)
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(like, (pd.Series, pd.Index)):
        return out
    import pyarrow as pa
    values = pa.array(out).to_pandas()
    values = getattr(values, "array", values)     # the Categorical, not a Series
    if isinstance(like, pd.Index):
        return pd.Index(values, name=like.name)
    return pd.Series(values, index=like.index, name=like.name)


def per_value(function, args, *, elementwise: bool = True):
    """``function(*args)`` when an argument is a dictionary column (see
    :func:`as_column`), else ``NotImplemented``.  With one dictionary column
    and scalars otherwise, and an ``elementwise`` function, the function runs
    once per value of the dictionary and the results are gathered in row
    order (:func:`gather`: strings and bytes stay dictionary-encoded; null
    indices give null results, the option rules).  Otherwise (several
    columns, other arrays) the dictionary columns are decoded first.  A
    pandas column gives a pandas Series (a ``Categorical`` one for text)."""
    cols = {}
    for i, a in enumerate(args):
        c = as_column(a)
        if c is not None:
            cols[i] = c
    if not cols:
        return NotImplemented
    like = args[next(iter(cols))]
    others = [a for i, a in enumerate(args) if i not in cols]
    new = list(args)
    if len(cols) == 1 and elementwise and all(_is_scalar(a) for a in others):
        (i, col), = cols.items()
        values = parts(col)[1]
        new[i] = values
        per = _on_values(function, new, i, values)
        if _null_aware(function) and col.type.element.is_option:
            new[i] = None          # a null row is one more distinct value: None
            at_null = function(*new)
            if at_null is not None:
                return _like(_gather_with_null_value(col, per, at_null), like)
        return _like(gather(col, per), like)
    for i, c in cols.items():
        new[i] = decode(c)
    return _like(asarray(function(*new)), like)


#: comparisons of the registry, computed with Python's operators on the
#: (few) values of a text dictionary: the registry has no string kernels
_COMPARISONS = {"equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
                "less_equal": operator.le, "greater": operator.gt,
                "greater_equal": operator.ge}


def _on_values(function, args, i, values: Array):
    """``function(*args)`` with the dictionary's values as argument ``i``;
    a registry comparison of text values against a text scalar is Python's
    (str/bytes ordering: code points, as NumPy and Arrow compare)."""
    compare = _COMPARISONS.get(getattr(function, "name", None))
    if compare is not None and _is_text(values.type.element) and len(args) == 2 and \
            isinstance(args[1 - i], (str, bytes)):
        other = args[1 - i]
        vals = values.tolist()
        return np.array([compare(v, other) if i == 0 else compare(other, v) for v in vals],
                        dtype=bool)
    return function(*args)


def _null_aware(function) -> bool:
    """Whether a jitted function has a null-aware signature (``?T``
    arguments: it sees None for a null, docs/nulls.md)."""
    compiled = getattr(function, "_compiled", None) or {}
    return any(a.startswith("?") for c in compiled.values() for a in c.sig.args)


def _gather_with_null_value(column: Array, per_value, at_null):
    """:func:`gather` where a null-aware function gave ``at_null`` (not None)
    for the null rows: the value appended to the results and the null
    indices pointing at it."""
    from .array import array as _array
    indices, _, _ = parts(column)
    res = asarray(per_value)
    vals = res.tolist() + [at_null]
    n = len(vals) - 1
    idx = np.asarray(indices.to_numpy(na_value=n), dtype=np.int64)
    el = res.type.element
    if el.is_option:                   # results with nulls: through Python
        return _array([vals[k] for k in idx.tolist()], type=f"{len(idx)} * {el}")
    res = _array(vals, type=f"{len(vals)} * {el}")
    col = from_parts(idx, res)
    return col if _is_text(res.type.element) else decode(col)


def has_core_dims(function) -> bool:
    """Whether a jitted function has signatures over core dims (not
    elementwise: a dictionary column is decoded for it)."""
    compiled = getattr(function, "_compiled", None) or {}
    return any(getattr(c, "core", False) for c in compiled.values())


def wrapped_call(function, *args, **kwargs):
    """The call of a jitted function or operation with operands of a library
    implementing ``__array_ufunc__`` (:func:`ckernels.ufuncs.call_wrapped`):
    pandas ``Categorical`` columns first run once per category
    (:func:`per_value`)."""
    if not kwargs:
        res = per_value(function, args, elementwise=not has_core_dims(function))
        if res is not NotImplemented:
            return res
    return _ufuncs.call_wrapped(function, *args, **kwargs)
