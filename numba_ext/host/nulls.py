"""Missing values of host arrays: the Python surface of option types ``?T``
(``docs/nulls.md``; the layout is in ``docs/kernel-abi.md`` "option types").

The names are Arrow's and polars': :attr:`Nulls.null_count`,
:meth:`Nulls.is_null`, :meth:`Nulls.is_valid`, :meth:`Nulls.fill_null`,
:meth:`Nulls.drop_null`, and NumPy's way out, :meth:`Nulls.to_numpy` with
``na_value=``.  Everything reads the validity bitmap through the C API
(``ckernel/validity.h``): the null count is counted there, the masks are
read from the bitmap in one vectorised NumPy step (the slot -> bit rule of
``ck_option_arrmeta``), never from the bytes under a null.

:class:`Nulls` is a mixin of :class:`ckernels.host.array.Array` (it makes
new arrays through the class's ``_from_value``, ``_new_like`` and
``_wrap_numpy``, so this module does not import ``host/array.py``); the
helpers at the end turn NumPy text with nulls and NaNs (``nan_is_null``) into
the values ``ckernels.array`` reads.
"""

from __future__ import annotations

import math

import numpy as np

from .._foreign import is_pandas_na
from .._native import check, ffi, lib
from ..errors import CKTypeError, CKValueError, NotSupportedError
from ..types import Type, strided_dim
from .arrmeta import DIM_AM, _FIXED, _STRIDED, _addr, dim_kinds

_OPTION = lib.CK_TYPE_OPTION
#: instants and durations: NumPy's datetime64 / timedelta64, NaT their null
_TIME = {int(lib.CK_TYPE_DATETIME): "M", int(lib.CK_TYPE_TIMEDELTA): "m"}


def option_dtype(a) -> Type | None:
    """The option element type ``?T`` of ``a`` (under its dims), else None."""
    dt = a.type.dtype
    return dt if dt.is_option else None


def _regular(a, what: str) -> int:
    kinds = dim_kinds(a.type)
    if not all(k in (_FIXED, _STRIDED) for k in kinds) or len(kinds) != a.type.ndim:
        raise NotSupportedError(f"{what} of an array of type '{a.type}' (var dims): only "
                                "fixed and strided dims so far")
    return len(kinds)


def valid_mask(a) -> np.ndarray:
    """A new NumPy bool array of ``a``'s shape: True where a value is present
    (every slot of a non-option array)."""
    if option_dtype(a) is None:
        return np.ones(a.shape, dtype=bool)
    k = _regular(a, "is_valid()")
    m = ffi.cast("ck_option_arrmeta *", a._arrmeta + k * DIM_AM)
    shape = a.shape
    if m.bits == ffi.NULL or 0 in shape:
        return np.ones(shape, dtype=bool)
    # the data address of every slot, then its bit (types.h: ck_option_arrmeta)
    offs = np.zeros(shape, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, a.strides)):
        idx = np.arange(n, dtype=np.int64) * s
        offs = offs + idx.reshape((n,) + (1,) * (len(shape) - d - 1))
    rel = a._data + offs - _addr(m.origin)
    bit = m.bit_offset + rel // m.step
    nbytes = (m.bit_offset + m.length + 7) // 8
    bits = np.frombuffer(ffi.buffer(m.bits, nbytes), dtype=np.uint8)
    return ((bits[bit >> 3] >> (bit & 7).astype(np.uint8)) & 1).astype(bool)


def null_count(a) -> int:
    """Nulls in ``a`` (0 for a non-option array): counted from the bitmap (C)."""
    if option_dtype(a) is None:
        return 0
    n = ffi.new("int64_t *")
    check(lib.ck_array_null_count(a._a, n, ffi.NULL))
    return int(n[0])


def set_null(a) -> None:
    """``a[...] = None``: every slot of ``a`` (a view) becomes a null."""
    if option_dtype(a) is None:
        raise CKTypeError(f"cannot assign None to an array of type '{a.type}': it has no "
                          "missing values (make it with an option type, e.g. '?int64', or "
                          "assign a value)")
    if a.ndim == 0:
        check(lib.ck_array_set_valid(a._a, False))
        return
    _regular(a, "assigning None")
    for i in range(a.shape[0]):
        set_null(a._view((i,)))


class Nulls:
    """Missing-value methods of host arrays (Arrow's and polars' names)."""

    __slots__ = ()

    @property
    def null_count(self) -> int:
        """The number of nulls (Arrow's ``null_count``; 0 without an option
        type)."""
        return null_count(self)

    def is_null(self):
        """A bool array: True where the value is missing."""
        return self._wrap_numpy(~valid_mask(self))

    def is_valid(self):
        """A bool array: True where a value is present (``is_not_null``)."""
        return self._wrap_numpy(valid_mask(self))

    is_not_null = is_valid

    def fill_null(self, value):
        """A new array of the value type ``T`` with ``value`` in place of each
        null (checked as an assignment; C ``ck_array_assign_fill``)."""
        opt = option_dtype(self)
        if opt is None:
            return self.copy()
        if value is None:
            raise CKValueError("fill_null(None): give a value to put in place of the nulls")
        vt = opt.value_type
        k = _regular(self, "fill_null()")
        t = vt
        for _ in range(k):
            t = strided_dim(t)
        fill = self._from_value(value, vt)
        out = self._new_like(t, self.shape[:k])
        check(lib.ck_array_assign_fill(out._a, self._a, fill._a, lib.CK_ERRMODE_DEFAULT))
        return out

    def drop_null(self):
        """A new 1-d array of the values that are present (same type)."""
        if self.ndim != 1:
            raise NotSupportedError(f"drop_null() of a {self.ndim}-d array: 1-d arrays only")
        opt = option_dtype(self)
        if opt is None:
            return self.copy()
        return self._from_value([v for v in self.tolist() if v is not None], opt)

    def _option_numpy(self, na_value, dtype=None) -> np.ndarray:
        """``to_numpy`` of an option array: the values (nulls: ``na_value``;
        numbers with nulls and no ``na_value``: an error)."""
        opt = option_dtype(self)
        vt = opt.value_type
        mask = valid_mask(self)
        nnull = int(mask.size - np.count_nonzero(mask))
        is_text = vt.type_id == lib.CK_TYPE_STRING
        time = int(vt.type_id) in _TIME
        if time and na_value is None:    # NumPy's own null of instants and durations
            na_value = np.array("NaT", vt.to_numpy_dtype())[()]   # (as pyarrow's to_numpy)
        zero = np.zeros((), vt.to_numpy_dtype()) if time else \
            False if vt.type_id == lib.CK_TYPE_BOOL else 0
        if nnull == 0:
            values = self.fill_null("" if is_text else zero).to_numpy()
        elif is_text:
            dt = dtype if dtype is not None and np.dtype(dtype).kind == "T" else \
                np.dtypes.StringDType(na_object=na_value)
            values = self.fill_null("").to_numpy().astype(dt)
            values[~mask] = dt.na_object
            return values
        elif na_value is None:
            raise CKValueError(
                f"an array of type '{self.type}' has {nnull} null{'s' if nnull != 1 else ''}"
                ", which a NumPy array of numbers cannot hold; use .fill_null(value) or "
                ".to_numpy(na_value=...) to choose what stands in their place")
        else:
            values = self.fill_null(zero).to_numpy()
            try:
                rt = np.result_type(values.dtype, na_value)
            except TypeError:
                rt = np.dtype(object)
            values = values.astype(rt)
            values[~mask] = na_value
        return values if dtype is None else values.astype(dtype)


# ---- values coming in ------------------------------------------------------------------

def nans_to_none(obj):
    """``obj`` with float NaNs as None (``nan_is_null=True``; Python lists
    and NumPy float arrays)."""
    if isinstance(obj, np.ndarray) and obj.dtype.kind == "f":
        obj = obj.astype(object)
        obj[np.isnan(obj.astype(float))] = None
        return obj.tolist()
    if isinstance(obj, (list, tuple)):
        return [nans_to_none(v) for v in obj]
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return obj


def text_nulls(obj: np.ndarray) -> bool:
    """Whether a text/object NumPy array holds nulls (None, StringDType's
    na_object) and otherwise only str / bytes: then it becomes ``?string``."""
    if obj.dtype.kind == "T":
        return hasattr(obj.dtype, "na_object")
    if obj.dtype.kind == "O":
        vals = obj.ravel().tolist()
        nulls = [v is None or is_pandas_na(v) for v in vals]
        return any(nulls) and all(n or isinstance(v, (str, bytes)) for n, v in zip(nulls, vals))
    return False


def first_text(obj: np.ndarray):
    """The type of the first present element of a text/object array."""
    first = next((x for x in obj.ravel().tolist() if x is not None), None)
    return type(first)
