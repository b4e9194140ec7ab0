"""NumPy functions implemented over the primitives (``__array_function__``'s
table :data:`FUNCTIONS`): ``concatenate``, ``stack``, ``where``, the
reductions, ``copyto``, the ``*_like`` creators, the shape functions."""

from __future__ import annotations

import builtins

import numpy as np

from .. import types as _t
from ..errors import CKValueError
from .base import ArrayBase, _element_type
from .shapes import _as_shape, broadcast_shape, normalize_axis


class _Unsupported(Exception):
    """Raised by an ``__array_function__`` implementation for arguments it does
    not handle: the call then takes the NumPy fallback."""

#: NumPy function -> implementation over the primitives
FUNCTIONS: dict = {}


def implements(*funcs):
    def deco(impl):
        for f in funcs:
            FUNCTIONS[f] = impl
        return impl
    return deco


def _first(arrays):
    for x in arrays:
        if isinstance(x, ArrayBase):
            return x
    raise _Unsupported


def _result_element(arrays, dtype):
    if dtype is not None:
        return _element_type(dtype)
    els = [x.type.dtype if isinstance(x, ArrayBase) else None for x in arrays]
    if all(e is not None and e.is_builtin for e in els):
        from .. import dtypes
        return _t.as_type(dtypes.promote(*[str(e) for e in els]))
    if all(e is not None and e == els[0] for e in els):
        return els[0]
    raise _Unsupported


@implements(np.concatenate)
def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    first = _first(arrays)
    arrays = [x if isinstance(x, ArrayBase) else first._from_value(x) for x in arrays]
    if axis is None:
        arrays = [x.ravel() for x in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise CKValueError("zero-dimensional arrays cannot be concatenated")
    (ax,) = normalize_axis(axis, nd)
    shape0 = list(arrays[0].shape)
    for x in arrays[1:]:
        if x.ndim != nd:
            raise CKValueError("all the input array dimensions except for the concatenation "
                               "axis must match exactly, but along dimension 0, the array at "
                               f"index 0 has {nd} dimension(s) and another has {x.ndim}")
        for d in range(nd):
            if d != ax and x.shape[d] != shape0[d]:
                raise CKValueError("all the input array dimensions except for the "
                                   "concatenation axis must match exactly, but along "
                                   f"dimension {d}, the arrays have sizes {shape0[d]} and "
                                   f"{x.shape[d]}")
    if any(x._regular_ndim() < nd for x in arrays):
        raise _Unsupported
    el = _result_element(arrays, dtype)
    total = builtins.sum(x.shape[ax] for x in arrays)
    shape = tuple(shape0[:ax]) + (total,) + tuple(shape0[ax + 1:])
    res = first._empty(shape, el) if out is None else out
    if out is not None and tuple(out.shape) != shape:
        raise CKValueError(f"Output array has wrong dimensionality {out.shape}, "
                           f"expected {shape}")
    pos = 0
    for x in arrays:
        n = x.shape[ax]
        res._view((slice(None),) * ax + (slice(pos, pos + n),))._assign(
            x, "nocheck" if casting == "unsafe" else "default")
        pos += n
    return res


@implements(np.stack)
def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    first = _first(arrays)
    arrays = [x if isinstance(x, ArrayBase) else first._from_value(x) for x in arrays]
    if not arrays:
        raise CKValueError("need at least one array to stack")
    shapes = {x.shape for x in arrays}
    if len(shapes) != 1:
        raise CKValueError("all input arrays must have the same shape")
    nd = arrays[0].ndim + 1
    (ax,) = normalize_axis(axis, nd)
    expanded = [x[(slice(None),) * ax + (None,)] for x in arrays]
    return _concatenate(expanded, axis=ax, out=out, dtype=dtype, casting=casting)


@implements(np.where)
def _where(condition, *xy):
    if not xy:
        cond = condition.to_numpy() if isinstance(condition, ArrayBase) else \
            np.asarray(condition)
        first = condition if isinstance(condition, ArrayBase) else _first(())
        return tuple(first._wrap_numpy(i) for i in np.nonzero(cond))
    if len(xy) != 2:
        raise CKValueError("either both or neither of x and y should be given")
    x, y = xy
    first = _first((condition, x, y))
    ops = [v if isinstance(v, ArrayBase) else first._from_value(v) for v in (condition, x, y)]
    cond, xa, ya = ops
    shape = broadcast_shape([cond.shape, xa.shape, ya.shape])
    el = _result_element([xa, ya], None)
    res = first._empty(shape, el)
    res._assign(ya)
    mask = cond.broadcast_to(shape).astype("bool")
    sel = xa.broadcast_to(shape)[mask]
    res[mask] = sel
    return res


def _reduction_function(method):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if kw or not isinstance(a, ArrayBase):
            raise _Unsupported
        kwargs = {"axis": axis, "out": out, "keepdims": keepdims}
        if method in ("sum", "prod", "mean"):
            kwargs["dtype"] = dtype
        elif dtype is not None:
            raise _Unsupported
        return getattr(a, method)(**kwargs)
    return impl


for _f, _m in ((np.sum, "sum"), (np.prod, "prod"), (np.min, "min"), (np.max, "max"),
               (np.amin, "min"), (np.amax, "max"), (np.any, "any"), (np.all, "all"),
               (np.mean, "mean")):
    FUNCTIONS[_f] = _reduction_function(_m)
del _f, _m


@implements(np.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, ArrayBase):
        raise _Unsupported
    if where is True:
        dst._assign(src, "nocheck" if casting == "unsafe" else "default")
        return None
    mask = where.to_numpy() if isinstance(where, ArrayBase) else np.asarray(where, bool)
    mask = np.broadcast_to(mask, dst.shape)
    srcv = src if isinstance(src, ArrayBase) else dst._from_value(src)
    dst[mask] = srcv.broadcast_to(dst.shape)[mask]
    return None


def _like(fill):
    def impl(prototype, dtype=None, order="K", subok=True, shape=None, *args):
        if not isinstance(prototype, ArrayBase):
            raise _Unsupported
        value = args[0] if fill is _FULL else fill
        shp = prototype.shape if shape is None else _as_shape((shape,))
        k = prototype._regular_ndim()
        if shape is not None or dtype is not None:
            el = prototype.type.dtype if dtype is None else _element_type(dtype)
            out = prototype._empty(shp, el)
        else:
            out = prototype._empty(shp[:k], prototype._element_below(k))
        if value is not None:
            out._assign(value)
        return out
    return impl


_FULL = object()
FUNCTIONS[np.empty_like] = _like(None)
FUNCTIONS[np.zeros_like] = _like(0)
FUNCTIONS[np.ones_like] = _like(1)


@implements(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return _like(_FULL)(a, dtype, order, subok, shape, fill_value)


@implements(np.copy)
def _copy(a, order="K", subok=False):
    if not isinstance(a, ArrayBase):
        raise _Unsupported
    return a.copy()


@implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if not isinstance(a, ArrayBase):
        raise _Unsupported
    r = a.reshape(shape if shape is not None else newshape, order=order)
    return r.copy() if copy else r


@implements(np.transpose)
def _transpose(a, axes=None):
    if not isinstance(a, ArrayBase):
        raise _Unsupported
    return a.transpose(axes)


@implements(np.ravel)
def _ravel(a, order="C"):
    return a.ravel(order)


@implements(np.squeeze)
def _squeeze(a, axis=None):
    return a.squeeze(axis)


@implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    return array.broadcast_to(shape)


@implements(np.shape)
def _shape(a):
    return a.shape


@implements(np.ndim)
def _ndim(a):
    return a.ndim


@implements(np.size)
def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@implements(np.astype)
def _astype(x, dtype, /, *, copy=True, device=None):
    return x.astype(dtype, copy=copy)
