"""Indexing and assignment: basic indexing (views), ``None``/``...``,
struct fields, and advanced (integer-array / boolean-mask) indexing, which
copies as in NumPy."""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ..errors import CKIndexError, CKTypeError, CKValueError, NotSupportedError
from .base import ArrayBase


def _is_index_array(k) -> bool:
    """An integer-array or boolean-mask index (advanced indexing, a copy, even
    for a 0-d array as in NumPy); NumPy integer scalars index like ints."""
    if isinstance(k, (np.generic, str, bytes)):
        return isinstance(k, np.bool_)
    return isinstance(k, (list, np.ndarray, ArrayBase)) or hasattr(k, "__array__")


class Indexing(ArrayBase):
    """Mixin: ``a[key]``, ``a[key] = value``."""

    __slots__ = ()

    def _expand_key(self, key):
        """(entries, has_ellipsis, advanced): the key with ``...`` expanded."""
        if not isinstance(key, tuple):
            key = (key,)
        elif any(isinstance(k, tuple) for k in key):   # x[:, (0, 2)]: an index sequence
            key = tuple(list(k) if isinstance(k, tuple) else k for k in key)
        n_ell = builtins.sum(1 for k in key if k is Ellipsis)
        if n_ell > 1:
            raise CKIndexError("an index can only have a single ellipsis ('...')")
        consumed = 0
        advanced = False
        for k in key:
            if k is None or k is Ellipsis:
                continue
            if isinstance(k, (bool, np.bool_)):
                advanced = True   # a 0-d boolean index (NumPy: adds a dim)
                continue
            if _is_index_array(k):
                advanced = True
                arr = _index_array(k)
                consumed += arr.ndim if arr.dtype == np.bool_ else 1
            else:
                consumed += 1
        ndim = self.ndim
        if consumed > ndim:
            raise CKIndexError(f"too many indices for array: array is {ndim}-dimensional, "
                               f"but {consumed} were indexed")
        if n_ell:
            i = next(j for j, k in enumerate(key) if k is Ellipsis)
            key = key[:i] + (slice(None),) * (ndim - consumed) + key[i + 1:]
        return key, bool(n_ell), advanced

    def __getitem__(self, key):
        tk = type(key)
        if tk is int or tk is slice:   # the common case first
            view = self._view((key,))
            if tk is int and view.ndim == 0 and view._is_scalar_type():
                return view._scalar()
            return view
        if isinstance(key, str):
            return self._field(key)
        if isinstance(key, list) and key and all(isinstance(k, str) for k in key):
            raise NotSupportedError("selecting several struct fields at once; index one "
                                    "field at a time (a['x'])")
        entries, has_ell, advanced = self._expand_key(key)
        if advanced:
            return self._getitem_advanced(entries)
        basic = tuple(k if isinstance(k, slice) else _as_index(k)
                      for k in entries if k is not None)
        view = self._view(basic)   # a new view even for a[...] and a[()], as NumPy
        if any(k is None for k in entries):
            view = view._insert_axes([k is None for k in entries if not _is_int_key(k)])
        elif view.ndim == 0 and not has_ell and (basic or isinstance(key, tuple)) and \
                view._is_scalar_type():
            return view._scalar()
        return view

    def __setitem__(self, key, value) -> None:
        if isinstance(key, str):
            self._field(key)._assign(value)
            return
        entries, _, advanced = self._expand_key(key)
        if advanced:
            self._setitem_advanced(entries, value)
            return
        basic = tuple(k if isinstance(k, slice) else _as_index(k)
                      for k in entries if k is not None)
        if key is Ellipsis or key == (Ellipsis,):    # a[...] = x: the whole array
            basic = ()
        sliced_rows = self._slices_inner_var_dim(basic)
        view = self._view(basic) if basic else self
        if sliced_rows:
            view._assign_elements(value)
            return
        if view.ndim == 0 and view.type.is_builtin and _is_sequence_value(value):
            raise CKValueError("setting an array element with a sequence.")
        view._assign(value)

    def _slices_inner_var_dim(self, basic: tuple) -> bool:
        """Whether ``basic`` slices a var dim under a kept outer dim
        (``a[:, 1:]`` of ``N * var * T``): that view's row slots are new, its
        elements ``a``'s, so an assignment through it fills those elements in
        place (their lengths kept) instead of replacing rows that ``a`` would
        never see; arrays without such an assignment refuse it."""
        regular, kept = self._regular_ndim(), False
        for axis, k in enumerate(basic):
            if isinstance(k, slice):
                if kept and axis >= regular:
                    if not hasattr(self, "_assign_elements"):
                        raise NotSupportedError(
                            f"assigning through a slice of the var dim at axis {axis} of "
                            f"every element at once; index the outer axes first")
                    return True
                kept = True
        return False

    def __delitem__(self, key) -> None:
        raise CKValueError("cannot delete array elements")

    def _insert_axes(self, is_new: list) -> "ArrayBase":
        """A view with size-1 dims where ``is_new`` is True (``None`` in a key);
        the other entries walk the existing leading dims in order."""
        k = builtins.sum(1 for n in is_new if not n)
        k = max(k, 0)
        if k > self._regular_ndim():
            raise NotSupportedError("None (newaxis) between var dims")
        shape, strides = list(self.shape[:k]), list(self.strides[:k])
        new_shape, new_strides = [], []
        it = 0
        for n in is_new:
            if n:
                new_shape.append(1)
                new_strides.append(0)
            else:
                new_shape.append(shape[it])
                new_strides.append(strides[it])
                it += 1
        return self._strided_view(k, tuple(new_shape), tuple(new_strides))

    def _field(self, name: str):
        raise CKTypeError(f"an array of type '{self.type}' has no fields")

    # advanced (integer-array / boolean-mask) indexing: copies, as NumPy
    def _advanced_plan(self, entries):
        """Normalise an advanced key: (basic key for the view, the axes of that
        view indexed by arrays, the broadcast index arrays, where the new dims
        go).  Integers count as advanced indices, as in NumPy."""
        if any(k is None for k in entries):
            raise NotSupportedError("None (newaxis) combined with array indices")
        basic, adv_axes, arrays = [], [], []
        axis = 0
        for k in entries:
            if isinstance(k, slice):
                basic.append(k)
                axis += 1
            elif isinstance(k, (bool, np.bool_)) or _is_index_array(k):
                arr = _index_array(k)
                if arr.dtype == np.bool_:
                    if arr.ndim == 0:
                        raise NotSupportedError("0-d boolean indices")
                    shape = self.shape[axis:axis + arr.ndim]
                    if tuple(arr.shape) != tuple(shape):
                        raise CKIndexError(f"boolean index did not match indexed array along "
                                           f"axis {axis}; size of axis is {shape} but size "
                                           f"of boolean index is {arr.shape}")
                    for nz in np.nonzero(arr):
                        basic.append(slice(None))
                        adv_axes.append(axis)
                        arrays.append(nz)
                        axis += 1
                else:
                    basic.append(slice(None))
                    adv_axes.append(axis)
                    arrays.append(arr)
                    axis += 1
            else:
                basic.append(slice(None))
                adv_axes.append(axis)
                arrays.append(np.asarray(_as_index(k), dtype=np.intp))
                axis += 1
        try:
            arrays = np.broadcast_arrays(*arrays)
        except ValueError:
            raise CKIndexError("shape mismatch: indexing arrays could not be broadcast "
                               "together with shapes " +
                               " ".join(str(a.shape) for a in arrays)) from None
        for ax, arr in zip(adv_axes, arrays):
            n = self.shape[ax]
            if n >= 0 and arr.size and (arr.max() >= n or arr.min() < -n):
                bad = arr.max() if arr.max() >= n else arr.min()
                raise CKIndexError(f"index {bad} is out of bounds for axis {ax} with size {n}")
        adjacent = adv_axes == list(range(adv_axes[0], adv_axes[0] + len(adv_axes)))
        return tuple(basic), adv_axes, arrays, adjacent

    def _getitem_advanced(self, entries):
        view = None
        if self._numpy_exact():
            try:
                view = self._numpy_view(False)
            except (TypeError, NotSupportedError):
                view = None
        if view is not None:
            r = view[tuple(_numpy_key(k) for k in entries)]
            if isinstance(r, np.generic) and self.type.dtype.is_builtin:
                return r   # ints and 0-d integer arrays for every dim: NumPy's scalar
            return self._wrap_numpy(np.array(r))
        basic, adv_axes, arrays, adjacent = self._advanced_plan(entries)
        v = self._view(basic)
        bshape = arrays[0].shape if arrays else ()
        kept = [ax for ax in range(len(basic)) if ax not in adv_axes]
        vk = len(basic)
        reg = v._regular_ndim()
        rest_shape = tuple(v.shape[ax] for ax in kept if ax < reg)
        if len(kept) != len(rest_shape):
            raise NotSupportedError("array indices next to var dims other than the outermost")
        before = [ax for ax in kept if ax < adv_axes[0]] if adjacent else []
        after = [ax for ax in kept if ax not in before]
        out_shape = (tuple(v.shape[ax] for ax in before) + tuple(bshape) +
                     tuple(v.shape[ax] for ax in after))
        out = v._empty(out_shape, v._element_below(vk))
        nb = len(before)
        for j in np.ndindex(*bshape):
            src_key = [slice(None)] * vk
            for ax, arr in zip(adv_axes, arrays):
                src_key[ax] = int(arr[j])
            src = v._view(tuple(src_key))
            # src's dims: `kept` in order; the result puts `before` dims first
            dst = out._view((slice(None),) * nb + tuple(j)) if nb or j else out
            dst._assign(src)
        return out

    def _setitem_advanced(self, entries, value):
        view = None
        if self._numpy_exact():
            try:
                view = self._numpy_view(True)
            except (TypeError, NotSupportedError):
                view = None
        if view is not None:
            key = tuple(_numpy_key(k) for k in entries)
            sel = view[key]   # the selected shape; values converted with our checks
            tmp = self._empty(np.shape(sel), self.type.dtype)
            tmp._assign(value)
            view[key] = tmp._numpy_view(False)
            return
        basic, adv_axes, arrays, adjacent = self._advanced_plan(entries)
        v = self._view(basic)
        bshape = arrays[0].shape if arrays else ()
        kept = [ax for ax in range(len(basic)) if ax not in adv_axes]
        before = [ax for ax in kept if ax < adv_axes[0]] if adjacent else []
        after = [ax for ax in kept if ax not in before]
        sel_shape = (tuple(v.shape[ax] for ax in before) + tuple(bshape) +
                     tuple(v.shape[ax] for ax in after))
        vals = v._empty(sel_shape, v._element_below(len(basic)))
        vals._assign(value)
        nb = len(before)
        for j in np.ndindex(*bshape):
            dst_key = [slice(None)] * len(basic)
            for ax, arr in zip(adv_axes, arrays):
                dst_key[ax] = int(arr[j])
            dst = v._view(tuple(dst_key))
            src = vals._view((slice(None),) * nb + tuple(j)) if nb or j else vals
            dst._assign(src)

    def _numpy_exact(self) -> bool:
        """Whether ``_numpy_view`` shows exactly this array (same elements, no
        conversion): builtin and plain struct element types, no var dims."""
        return False


def _is_sequence_value(v) -> bool:
    """A value with dims (a list, a tuple, an array of ndim >= 1): not one
    number, whatever its length (NumPy refuses it for one element)."""
    if isinstance(v, (list, tuple)):
        return True
    nd = getattr(v, "ndim", 0)
    return isinstance(nd, int) and nd > 0 and not isinstance(v, np.generic)


def _is_int_key(k) -> bool:
    return not (k is None or isinstance(k, slice))


def _as_index(k) -> int:
    if isinstance(k, (bool, np.bool_)):
        raise CKIndexError("boolean scalars are not supported as indices here")
    try:
        return operator.index(k)
    except TypeError:
        raise CKIndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                           "(`None`) and integer or boolean arrays are valid indices, not "
                           f"{type(k).__name__}") from None


def _index_array(k) -> np.ndarray:
    if isinstance(k, ArrayBase):
        k = k.to_numpy()
    arr = np.asarray(k)
    if arr.dtype == np.bool_:
        return arr
    if arr.size == 0 and arr.dtype.kind not in "iu":
        return arr.astype(np.intp)
    if arr.dtype.kind not in "iu":
        raise CKIndexError("arrays used as indices must be of integer (or boolean) type")
    return arr.astype(np.intp, copy=False)


def _numpy_key(k):
    if isinstance(k, ArrayBase):
        return k.to_numpy()
    return k
