"""Struct records written as NumPy takes them: tuples and ``numpy.void``.

NumPy reads a tuple as one record of a structured dtype, its values the
fields in order (``a[0] = (77, 7.0)``, ``np.array([(1, 2.0)], dtype=dt)``),
and a structured scalar (``np_structured[0]``, a ``numpy.void``) as a record
whose fields are taken by position.  The converter (``host/convert.py``)
takes a record as a ``dict`` of field names; :func:`as_records` rewrites a
value whose element type is a struct into that form: lists (and object
arrays) are dims, a tuple / ``numpy.void`` / ``dict`` at the struct level is
one record, and the fields of a record are rewritten by their own types (a
nested struct field takes a tuple too; a fixed-dim field keeps its sequence).
A record of the wrong length is a :class:`~ckernels.errors.CKValueError`, as
NumPy's ``ValueError``; text for a number field a
:class:`~ckernels.errors.CKTypeError` naming the field; other values of the
wrong type are refused by the converter.

:func:`c_layout` is the struct dtype of ``ckernels.array(..., dtype=dt)`` for
a NumPy structured dtype not laid out as a C struct (packed, ``align=False``):
the same fields in the same order, C-aligned -- the layout of every ckernels
struct (an array that shares a packed array's memory cannot exist; a copy
can).
"""

from __future__ import annotations

import numpy as np

from .. import types as _t
from .._native import lib
from ..errors import CKTypeError, CKValueError


def struct_of(want, el):
    """The struct element type of a full type ``want`` or an element type
    ``el`` (either may be None), else None."""
    t = el if el is not None else (want.dtype if want is not None else None)
    return t if t is not None and t.type_id == lib.CK_TYPE_STRUCT else None


def _fields_of(void: np.void) -> tuple:
    if void.dtype.names is None:
        raise CKTypeError(f"a numpy.void of dtype {void.dtype} without fields is no struct "
                          "record")
    return tuple(void[n] for n in void.dtype.names)


def _value(v, t):
    """A field's value for the converter (field type ``t``)."""
    if t.type_id == lib.CK_TYPE_STRUCT:
        return _record(v, t)
    if t.is_dim:
        inner = t.dtype
        if inner.type_id == lib.CK_TYPE_STRUCT:
            return _walk(v, inner)
        if isinstance(v, np.ndarray):
            return v.tolist()
    if isinstance(v, np.generic) and not isinstance(v, np.void):
        return v.item()
    return v


def _record(value, st):
    """One record of struct type ``st`` as a dict of field names."""
    if isinstance(value, np.void):
        value = _fields_of(value)
    fields = st.fields
    if isinstance(value, dict):
        types = dict(fields)
        return {k: (_value(v, types[k]) if k in types else v) for k, v in value.items()}
    if isinstance(value, tuple):
        if len(value) != len(fields):
            names = ", ".join(n for n, _ in fields)
            raise CKValueError(f"a record of {len(value)} value{'s' * (len(value) != 1)} for "
                               f"the struct '{st}' of {len(fields)} field"
                               f"{'s' * (len(fields) != 1)} ({names}): give one value per "
                               "field, in order")
        return {n: _value(_checked(v, n, t, st), t) for (n, t), v in zip(fields, value)}
    return value         # anything else: the converter says what is wrong


def _checked(v, name, t, st):
    """``v`` for field ``name`` of type ``t``: text for a number or bool
    field is refused here, naming the field (the converter names the type)."""
    if isinstance(v, (str, bytes, np.str_, np.bytes_)) and t.is_builtin:
        raise CKTypeError(f"field '{name}' of the struct '{st}': cannot assign "
                          f"{type(v).__name__} value {v!r} to {t}")
    return v


def _walk(value, st):
    if isinstance(value, (tuple, dict, np.void)):
        return _record(value, st)
    if isinstance(value, list):
        return [_walk(v, st) for v in value]
    if isinstance(value, np.ndarray) and value.dtype.kind == "O":
        return [_walk(v, st) for v in value.tolist()]
    return value


def as_records(value, st):
    """``value`` for an array of struct type ``st`` elements: its records
    (tuples, ``numpy.void``, dicts) as dicts of field names, converted field
    by field; lists are dims.  Structured NumPy arrays are left as they are
    (they convert as arrays)."""
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        return value
    return _walk(value, st)


def c_layout(dtype):
    """``dtype`` with a NumPy structured dtype not laid out as a C struct
    replaced by the C-aligned one with the same fields (:func:`as_type`
    refuses the former); anything else unchanged."""
    if not isinstance(dtype, np.dtype) or dtype.names is None:
        return dtype
    aligned = np.dtype([(n, c_layout(dtype.fields[n][0])) for n in dtype.names], align=True)
    try:
        if _t.from_numpy_dtype(aligned).to_numpy_dtype() == dtype:
            return dtype
    except Exception:
        return dtype     # the fields' own types are refused: from_numpy_dtype says so
    return aligned


__all__ = ["struct_of", "as_records", "c_layout"]
