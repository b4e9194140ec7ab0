"""Operations on host arrays: :func:`apply_op` (a registry operation over
operands, NumPy's broadcasting and ``out=`` rules, by ``ck_array_apply``),
:func:`reduce_op` (``ck_array_reduce``) and :func:`check_out_dims` -- what
:mod:`ckernels.ops` and the operators call on host arrays.

:class:`ckernels.host.array.Array` re-exports them and hands itself over with
:func:`install` (it sits above this module).
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes as _dtypes
from .. import types as _t
from .._cargs import c_text
from .._native import check, ffi, lib
from .. import _arrays   # cheap NumPy <-> host array conversions (src/python/arrays/arrays.c)
from ..arraylike import ArrayLike
from ..arraylike.shapes import broadcast_shape
from ..errors import CKTypeError, CKValueError
from .arguments import _is_scalar
from .convert import check_scalar as _check_scalar
from .arrmeta import elem_id as _elem_id
from . import time_reduce

_OPTION = lib.CK_TYPE_OPTION
from .creation import (_BUILTIN_BY_NAME, _C_POINTER, _EXACT_SCALARS, _new_c_scalar,
                       _new_scalar, _scratch, array, asarray)
from .arrmeta import elem_id as _elem_id

#: the host array class, given by :mod:`ckernels.host.array` when it is
#: defined (``install``): this module sits below the class it makes
Array = None


def install(array_class) -> None:
    """Make arrays of ``array_class`` (:class:`~ckernels.host.array.Array`,
    which calls this once, right after defining it)."""
    global Array
    Array = array_class


# ---- applying operations --------------------------------------------------------

def _scalar_array(value, name: str) -> Array:
    """A 0-d array of the builtin element type ``name`` holding ``value``
    (checked: a weak int too large for the type is an OverflowError)."""
    if name == "string":
        return array(str(value), type=_t.string)
    t = _BUILTIN_BY_NAME[name]
    tv = type(value)
    if (tv is float and name == "float64") or (tv is bool and name == "bool") or (
            tv is int and name == "int64" and -2**63 <= value < 2**63):
        return _new_c_scalar(t, _C_POINTER[name], value)   # held exactly, no check needed
    if tv is int and name == "float64" and -2**53 <= value <= 2**53:
        return _new_c_scalar(t, _C_POINTER[name], float(value))
    fast = _EXACT_SCALARS.get((tv, name))
    if fast is not None:
        return _new_scalar(t, fast(value))
    v = value.item() if isinstance(value, np.generic) else value
    return _new_scalar(t, _check_scalar(t, v))


def _operand(a, i: int, where: str):
    if isinstance(a, Array):
        return a
    if isinstance(a, ArrayLike):
        raise CKTypeError(f"{where}: argument {i} is a {type(a).__name__} in "
                          f"{a.context!r}; host arrays and device arrays do not mix (copy it "
                          "with .to_numpy() or ctx.to(...))")
    if isinstance(a, np.ndarray):
        return asarray(a) if a.dtype.kind in "biufcMm" and a.dtype.isnative else array(a)
    if isinstance(a, (np.datetime64, np.timedelta64)):   # a time scalar: its own type
        return array(a)
    if _is_scalar(a):
        return None
    return array(a)


def apply_op(name: str, args, out=None) -> Array:
    """The registry operation ``name`` applied elementwise to ``args`` (host
    arrays, NumPy arrays, nested lists, scalars: NEP 50 for Python scalars),
    with broadcasting, into ``out`` (a host or NumPy array) when given.
    ``ckernels.ops.<name>`` and the operators of :class:`Array` call this.
    Numeric host arrays with strided dims take the fast path first
    (``_arrays.apply``: the operation's NumPy ufunc over cached views)."""
    if type(out) is Array or out is None:
        r = _arrays.apply(name, out, *args)
        if r is not NotImplemented:
            return r
    conv = [a if type(a) is Array else _operand(a, i, name) for i, a in enumerate(args)]
    if len(conv) != builtins.sum(type(c) is Array for c in conv):
        strong = []
        for c in conv:
            if c is not None:
                row = _dtypes.by_id.get(_elem_id(c._a))
                if row is not None and row.builtin:
                    strong.append(row.name)
        for i, a in enumerate(args):
            if conv[i] is None:
                conv[i] = _scalar_array(a, _dtypes.weak_scalar_type(a, strong))
    if out is not None and not isinstance(out, Array):
        if isinstance(out, np.ndarray):
            out = asarray(out)
        else:
            raise CKTypeError("out= must be a ckernels.Array or a NumPy array")
    if out is not None:
        check_out_dims(out, conv)
    cname = _OP_NAMES.get(name)
    if cname is None:
        cname = _OP_NAMES[name] = c_text(name, "operation name")
    res = _scratch()
    check(lib.ck_array_apply_op(cname, len(conv), [a._a for a in conv] or [ffi.NULL],
                                out._a if out is not None else ffi.NULL, res))
    result = Array._own(res[0])
    return out if out is not None else result


_OP_NAMES: dict = {}


def check_out_dims(out: "Array", operands) -> None:
    """NumPy's rule for ``out=``: operands broadcast to the output's shape, and
    the output is never broadcast, so no operand may have more dims than it
    (``np.add(x0d, [1], out=x0d)`` is refused even though the extra dim has
    size 1)."""
    nd = out.ndim
    if any(a.ndim > nd for a in operands):
        shape = broadcast_shape([tuple(max(s, 0) for s in a.shape) for a in operands])
        raise CKValueError(f"non-broadcastable output operand with shape {out.shape} "
                           f"doesn't match the broadcast shape {shape}")


def reduce_op(name: str, a, axis=None, keepdims: bool = False) -> Array:
    """The reduction ``name`` (sum, product, min, max, any, all) over ``axis``
    (None, an int or a tuple; normalised here); a new array (0-d for a full
    reduction without ``keepdims``)."""
    from ..arraylike import normalize_axis
    arr = a if isinstance(a, Array) else _operand(a, 0, name)
    if arr is None:
        arr = array(a)
    axes = normalize_axis(axis, arr.ndim)
    if time_reduce.is_time(arr):    # instants and durations: NumPy's rules
        return time_reduce.reduce(name, arr, axes, keepdims, reduce_op)
    out = ffi.new("ck_array_preamble **")
    cname = c_text(name, "operation name")
    if axes is None:
        check(lib.ck_array_reduce(cname, arr._a, ffi.NULL, 0, keepdims, out))
    else:
        caxes = ffi.new("size_t[]", list(axes) or [0])
        check(lib.ck_array_reduce(cname, arr._a, caxes, len(axes), keepdims, out))
    return Array._own(out[0])


__all__ = ["install", "apply_op", "reduce_op", "check_out_dims"]
