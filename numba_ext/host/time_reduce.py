"""Reductions of instants and durations (``ckernels.ops.sum/min/max``, the
arrays' ``sum``/``min``/``max``): NumPy's rules and result units.

Durations have ``sum``, ``min`` and ``max``; instants ``min`` and ``max``
(NumPy refuses the sum of ``datetime64`` too).  The result keeps the unit
(and an instant's time zone).  NaT wins, as in NumPy's ``np.sum``,
``np.min`` and ``np.max`` (``np.nanmin`` is the one that skips it).  An
option array ``?T`` (nulls from Arrow or pandas) skips its nulls, as Arrow
and pandas do, and a lane of nulls only is a null.

The work is the C library's int64 reductions over a zero-copy int64 view of
the counts (``ck_array_reduce``): NaT is int64's smallest value, so the int64
minimum is already NumPy's answer, and a lane holds a NaT exactly when its
minimum is NaT, which is what ``sum`` and ``max`` are then corrected by.
"""

from __future__ import annotations

import numpy as np

from .._native import lib
from ..errors import CKTypeError
from ..types import option as _option
from .creation import array, asarray

#: the type ids of instants and durations
TIME_IDS = (int(lib.CK_TYPE_DATETIME), int(lib.CK_TYPE_TIMEDELTA))
_NAT = np.iinfo(np.int64).min
_MAX = np.iinfo(np.int64).max


def is_time(arr) -> bool:
    """Whether ``arr``'s elements are instants or durations (``?T`` too)."""
    dt = arr.type.dtype
    if dt.is_option:
        dt = dt.value_type
    return int(dt.type_id) in TIME_IDS


def reduce(name: str, arr, axes, keepdims: bool, int_reduce):
    """The reduction ``name`` of a time array ``arr`` over ``axes`` (None: all,
    else a tuple of normalised axes); ``int_reduce(name, int64 array, axes,
    keepdims)`` is the library's reduction of int64 arrays.  A new array."""
    dt = arr.type.dtype
    option = dt.is_option
    vt = dt.value_type if option else dt
    instant = int(vt.type_id) == int(lib.CK_TYPE_DATETIME)
    if name not in ("sum", "min", "max") or (name == "sum" and instant):
        what = "instants have min and max" if instant else "durations have sum, min and max"
        raise CKTypeError(f"{name} of '{vt}' is not defined: {what} (NumPy's rules)")
    counts_dt = vt.to_numpy_dtype()
    if option:      # nulls skipped: filled with what does not change the answer
        valid = np.asarray(arr.is_valid())
        fill = {"sum": 0, "min": _MAX, "max": _NAT + 1}[name]
        counts = np.asarray(arr.fill_null(np.array(fill, np.int64).view(counts_dt)[()]))
    else:
        counts = np.asarray(arr)
    ints = asarray(counts.view(np.int64))
    lowest = np.asarray(int_reduce("min", ints, axes, keepdims))
    if name == "min":
        res = lowest
    else:
        res = np.asarray(int_reduce(name, ints, axes, keepdims)).copy()
        res[...] = np.where(lowest == _NAT, _NAT, res)     # a NaT in the lane: NaT
    out = asarray(np.array(res, np.int64, order="C").view(counts_dt))    # 0-d stays 0-d
    if str(out.type.dtype) != str(vt):       # an instant's zone, kept
        out = out.astype(str(vt))
    if option:
        none = ~(valid.any(axis=axes, keepdims=keepdims) if valid.size else
                 np.zeros(np.shape(res), bool))
        if none.any():
            if out.ndim == 0:       # a null
                return array(None, type=_option(str(vt)))
            out = out.astype(_option(str(vt)))
            flat = out.reshape(-1) if out.ndim != 1 else out
            for i in np.flatnonzero(none):
                flat[int(i)] = None
    return out


__all__ = ["TIME_IDS", "is_time", "reduce"]
