"""The arguments of host-array calls, checked and normalised before C sees
them: indices and slice bounds, element types and whole types (``dtype=`` /
``type=``), shapes and the creation functions' call forms, conversion error
modes, Python scalars and missing values."""

from __future__ import annotations

import numbers
import operator
import sys

import numpy as np

from .. import types as _t
from .._cargs import c_text
from .._native import check, ffi, lib
from ..arraylike import shape_entry
from ..arraylike.base import _element_type   # dtype=/type= arguments as a Type
from ..errors import CKIndexError, CKTypeError, CKValueError, InvalidArgumentError
from ..types import Type
from .arrmeta import _FIXED, _STRIDED
from .arrmeta import strided as _strided

_SLICE_NONE = -(2**63)  # CK_SLICE_NONE (INTPTR_MIN): an omitted slice bound


def _index(i) -> int:
    try:
        return operator.index(i)
    except TypeError:
        raise CKIndexError(f"indices must be integers or slices, not {type(i).__name__}") \
            from None


#: slice bounds beyond this select as they would at it (no dim is that long):
#: Python's and NumPy's clamping, kept inside intptr_t arithmetic
_BOUND = 2 ** 61


def _bound(i) -> int:
    """A slice bound or step as the C library takes it: clamped (``a[2**63:]``
    is empty, ``a[::2**63]`` is ``a[:1]``, as in Python and NumPy); a bound
    that is no integer is Python's TypeError."""
    try:
        v = operator.index(i)
    except TypeError:
        raise CKTypeError("slice indices must be integers or None or have an __index__ "
                          f"method, not {type(i).__name__}") from None
    return -_BOUND if v < -_BOUND else _BOUND if v > _BOUND else v


#: the library's conversion error modes (``ck_errmode``)
ERRMODES = ("nocheck", "overflow", "fractional", "inexact", "default")


def _array_type(type) -> Type:
    """``type`` (a ``type=`` argument) as the type of a new array.  A pattern
    type (one with a dimension variable, ``N * float64``: a signature's type,
    never an array's) is refused here with the library's own error -- the
    check ``ck_array_empty`` makes before allocating anything -- so that no
    shape check of ours speaks first."""
    t = _element_type(type)
    if t.is_pattern:
        out = ffi.new("ck_array_preamble **")
        check(lib.ck_array_empty(t.c_type, ffi.NULL, 0, lib.CK_ARRAY_DEFAULT_FLAGS, out))
        lib.ck_array_decref(out[0])
    return t


def errmode_value(errmode: str) -> int:
    """The ``ck_errmode`` of an error mode's name (InvalidArgumentError if none)."""
    out = ffi.new("ck_errmode *")
    if not isinstance(errmode, str):
        raise InvalidArgumentError(f"errmode must be one of {ERRMODES}, not {errmode!r}")
    check(lib.ck_errmode_from_name(c_text(errmode, "errmode"), out))
    return out[0]


_errmode = errmode_value


def _is_scalar(a) -> bool:
    return isinstance(a, (numbers.Number, np.generic)) and not isinstance(a, (str, bytes)) \
        and not (isinstance(a, np.generic) and a.dtype.kind in "SUVOT")


def _shape_arg(shape) -> tuple:
    if shape is None:
        return ()
    if isinstance(shape, (numbers.Integral, np.integer)) or (
            isinstance(shape, np.ndarray) and shape.ndim == 0):
        return (shape_entry(shape),)
    return tuple(shape_entry(s) for s in shape)


def _creation_type(shape, dtype, type, where: str):
    """(type, C shape) from NumPy-style ``shape``/``dtype`` or a full ``type``
    (whose strided dims take their sizes from ``shape``)."""
    if type is not None:
        if dtype is not None:
            raise InvalidArgumentError(f"{where}: give dtype= or type=, not both")
        t = _array_type(type)
        shape = _shape_arg(shape)
        nreg = 0
        cur = t
        while cur.type_id in (_FIXED, _STRIDED):
            nreg += 1
            cur = cur.element
        if len(shape) > nreg:
            if t.ndim == 0:   # a scalar type with a shape: like dtype=
                return _strided(t, len(shape)), shape
            raise CKValueError(f"{where}: shape {shape} has more dims than type '{t}' "
                               f"has fixed/strided dims ({nreg})")
        return t, shape
    el = _t.float64 if dtype is None else _element_type(dtype)
    shape = _shape_arg(shape)
    return _strided(el, len(shape)), shape


def _legacy(shape, dtype):
    """``empty(type, shape)`` -- the call form before NumPy's order -- as
    (shape, type)."""
    if isinstance(shape, (str, Type)) and (dtype is None or not isinstance(dtype, (str, Type,
                                                                                    np.dtype))):
        return dtype, shape
    return None


def _missing(x) -> bool:
    """None, a float NaN or ``pandas.NA`` (a missing value in an object array)."""
    pd = sys.modules.get("pandas")     # nothing is pandas.NA before pandas is imported
    return x is None or (isinstance(x, float) and x != x) or (pd is not None and x is pd.NA)


def _is_full_type(t) -> bool:
    """A dtype argument that is really a whole type with dims (``array(x,
    "3 * int32")``, the old positional form)."""
    try:
        return _element_type(t).ndim > 0
    except Exception:
        return False
