"""Axes, shapes and strides: axis normalisation, C strides, NumPy's
reshape-without-copy rule, and the view methods that change the shape
(``transpose``, ``reshape``, ``ravel``, ``squeeze``, ``broadcast_to``, ...)."""

from __future__ import annotations

import builtins
import math
import numbers
import operator

import numpy as np

from .._native import check, ffi, lib
from ..errors import CKIndexError, CKTypeError, CKValueError, NotSupportedError
from .base import ArrayBase

_MAXD = int(lib.CK_TYPE_MAX_DEPTH)


def broadcast_shape(shapes) -> tuple:
    """NumPy broadcasting of shapes, by the C library (``ck_broadcast_shapes``,
    the rule ``ck_array_apply`` and device launches follow): the result shape,
    or the library's ``CKValueError`` naming the mismatch."""
    shapes = [tuple(s) for s in shapes]
    keep = [ffi.new("intptr_t[]", list(s) or [0]) for s in shapes]
    ptrs = ffi.new("intptr_t *[]", keep or [ffi.NULL])
    nds = ffi.new("size_t[]", [len(s) for s in shapes] or [0])
    out = ffi.new("intptr_t[]", _MAXD)
    nd = ffi.new("size_t *")
    check(lib.ck_broadcast_shapes(len(shapes), ptrs, nds, out, _MAXD, nd))
    return tuple(out[i] for i in range(nd[0]))


class AxisError(CKIndexError, np.exceptions.AxisError):
    """An axis out of range: both ``ckernels.errors.CKIndexError`` and
    NumPy's ``AxisError`` (so ``IndexError`` and ``ValueError``)."""

    def __init__(self, axis: int, ndim: int):
        Exception.__init__(self, f"axis {axis} is out of bounds for array of dimension "
                                 f"{ndim}")
        self.axis, self.ndim = axis, ndim

    def __str__(self) -> str:
        return str(self.args[0])


def normalize_axis(axis, ndim: int) -> tuple | None:
    """``None`` or a tuple of distinct axes in ``[0, ndim)`` (NumPy's rules and
    messages: ``AxisError``, a ``ValueError`` and ``IndexError``)."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, numbers.Integral) or hasattr(axis, "__index__") \
        and not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for ax in axes:
        ax = operator.index(ax)
        if not -ndim <= ax < ndim:
            raise AxisError(ax, ndim)
        ax %= ndim if ndim else 1
        if ax in out:
            raise CKValueError("duplicate value in 'axis'")
        out.append(ax)
    return tuple(out)


def c_strides(shape, itemsize: int) -> tuple:
    """Byte strides of a C-contiguous array."""
    st, acc = [], itemsize
    for s in reversed(shape):
        st.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(st))


def reshape_strides(shape, strides, newshape, itemsize: int):
    """Strides that view (shape, strides) as ``newshape`` without a copy (C
    order), or None when no such view exists (NumPy's rule)."""
    if math.prod(shape) == 0:
        return c_strides(newshape, itemsize)
    old = [(s, st) for s, st in zip(shape, strides) if s != 1]
    odims = [s for s, _ in old]
    ostr = [st for _, st in old]
    new = list(newshape)
    nstr = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(odims):
        np_, op = new[ni], odims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= odims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if ostr[ok] != odims[ok + 1] * ostr[ok + 1]:
                return None
        nstr[nj - 1] = ostr[oj - 1]
        for nk in range(nj - 1, ni, -1):
            nstr[nk - 1] = nstr[nk] * new[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = nstr[ni - 1] if ni >= 1 else itemsize
    for nk in range(ni, len(new)):
        nstr[nk] = last
    return tuple(nstr)


def shape_entry(s) -> int:
    """One entry of a shape argument: an integer (``operator.index``), never a
    bool (NumPy refuses ``True`` as a size)."""
    if isinstance(s, bool):
        raise CKTypeError(f"shape entries must be integers, not {s!r}")
    return operator.index(s)


def _as_shape(args) -> tuple:
    if len(args) == 1 and not isinstance(args[0], (numbers.Integral, np.integer)):
        args = tuple(args[0]) if args[0] is not None else ()
    return tuple(shape_entry(s) for s in args)


class ShapeMethods(ArrayBase):
    """Mixin: views in another shape (copies where NumPy copies)."""

    __slots__ = ()

    def transpose(self, *axes):
        """A view with the dims permuted (reversed by default), as NumPy."""
        nd = self.ndim
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        axes = tuple(range(nd))[::-1] if axes is None or axes == () else \
            tuple(operator.index(a) % nd if nd else operator.index(a) for a in axes)
        if sorted(axes) != list(range(nd)):
            raise CKValueError(f"axes {axes} don't match an array of {nd} dimension(s)")
        if axes == tuple(range(nd)):
            return self._strided_view(0, (), ())
        if self._regular_ndim() < nd:
            raise NotSupportedError(f"transposing var dims ('{self.type}')")
        sh, st = self.shape, self.strides
        return self._strided_view(nd, tuple(sh[a] for a in axes), tuple(st[a] for a in axes))

    def swapaxes(self, axis1: int, axis2: int):
        axes = list(range(self.ndim))
        (a1,), (a2,) = normalize_axis(axis1, self.ndim), normalize_axis(axis2, self.ndim)
        axes[a1], axes[a2] = axes[a2], axes[a1]
        return self.transpose(axes)

    def reshape(self, *shape, order: str = "C"):
        """The same elements in another shape: a view when the strides allow,
        else a C-contiguous copy (as NumPy).  One ``-1`` is inferred."""
        if order not in ("C", "F", "A"):
            raise CKValueError(f"reshape: order must be 'C' or 'F', not {order!r}")
        newshape = list(_as_shape(shape))
        k = self._regular_ndim()
        if k < self.ndim:
            raise NotSupportedError(f"reshape of an array with var dims ('{self.type}')")
        size = math.prod(self.shape)
        if newshape.count(-1) > 1:
            raise CKValueError("can only specify one unknown dimension")
        if -1 in newshape:
            known = math.prod(s for s in newshape if s != -1)
            if known == 0 or size % known:
                raise CKValueError(f"cannot reshape array of size {size} into shape "
                                   f"{tuple(newshape)}")
            newshape[newshape.index(-1)] = size // known
        if any(s < 0 for s in newshape) or math.prod(newshape) != size:
            raise CKValueError(f"cannot reshape array of size {size} into shape "
                               f"{tuple(newshape)}")
        newshape = tuple(newshape)
        if order == "F":
            return self.transpose().reshape(newshape[::-1]).transpose()
        strides = reshape_strides(self.shape, self.strides, newshape, self.itemsize)
        if strides is None:
            return self.copy().reshape(newshape)
        return self._strided_view(k, newshape, strides)

    def ravel(self, order: str = "C"):
        """The elements in one dim (a view when possible).  ``order``: ``"C"``,
        ``"F"``; ``"A"`` is ``"F"`` for an F-contiguous array, else ``"C"``;
        ``"K"`` is memory order: the axes walked by decreasing stride (as NumPy
        for strides of one sign)."""
        if order in ("A", "K"):
            fl = self.flags
            if fl.f_contiguous and not fl.c_contiguous:
                order = "F"
            elif order == "K" and not fl.c_contiguous and self._regular_ndim() == self.ndim \
                    and self.ndim > 1:
                perm = sorted(range(self.ndim), key=lambda a: -builtins.abs(self.strides[a]))
                return self.transpose(perm).reshape(-1)
            else:
                order = "C"
        elif order not in ("C", "F"):
            raise CKValueError(f"ravel: order must be 'C', 'F', 'A' or 'K', not {order!r}")
        return self.reshape(-1, order=order)

    def flatten(self, order: str = "C"):
        return self.copy().reshape(-1, order=order) if order != "F" else \
            self.transpose().copy().reshape(-1)

    def take(self, indices, axis=None, out=None, mode: str = "raise"):
        """``numpy.take`` of this array (a new array; ``out=`` written)."""
        return np.take(self, indices, axis=axis, out=out, mode=mode)

    def repeat(self, repeats, axis=None):
        """``numpy.repeat`` of this array (a new array)."""
        return np.repeat(self, repeats, axis=axis)

    def squeeze(self, axis=None):
        nd = self.ndim
        axes = normalize_axis(axis, nd)
        if axes is None:
            axes = tuple(i for i, s in enumerate(self.shape) if s == 1)
        for ax in axes:
            if self.shape[ax] != 1:
                raise CKValueError("cannot select an axis to squeeze out which has size "
                                   "not equal to one")
        k = self._regular_ndim()
        if any(ax >= k for ax in axes):
            raise NotSupportedError("squeeze of var dims")
        keep = [i for i in range(k) if i not in axes]
        return self._strided_view(k, tuple(self.shape[i] for i in keep),
                                  tuple(self.strides[i] for i in keep))

    def broadcast_to(self, shape):
        """A read-only view broadcast to ``shape`` (``numpy.broadcast_to``)."""
        shape = _as_shape((shape,))
        k = self._regular_ndim()
        if k < self.ndim:
            raise NotSupportedError("broadcast_to of var dims")
        sh, st = self.shape, self.strides
        if len(shape) < len(sh):
            raise CKValueError(f"cannot broadcast shape {sh} to {shape}")
        pad = len(shape) - len(sh)
        new_st = [0] * pad
        for s, stride, want in zip(sh, st, shape[pad:]):
            if s == want:
                new_st.append(stride)
            elif s == 1:
                new_st.append(0)
            else:
                raise CKValueError(f"operands could not be broadcast together with remapped "
                                   f"shapes [original->remapped]: {sh} and requested "
                                   f"shape {shape}")
        return self._strided_view(k, shape, tuple(new_st), readonly=True)
