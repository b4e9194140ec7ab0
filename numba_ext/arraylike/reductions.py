"""Reductions and statistics: ``sum``, ``prod``, ``min``, ``max``,
``any``, ``all`` (the ``_reduce`` primitive) and ``mean``."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .base import ArrayBase
from .shapes import normalize_axis


class Reductions(ArrayBase):
    """Mixin: reductions over axes, ``out=`` and ``keepdims`` as NumPy."""

    __slots__ = ()

    def _reduction(self, name, axis, out, keepdims, dtype=None):
        src = self if dtype is None else self.astype(dtype)
        axes = normalize_axis(axis, self.ndim)
        r = src._reduce(name, axes, bool(keepdims))
        if out is not None:
            out._assign(r) if isinstance(out, ArrayBase) else np.copyto(out, r.to_numpy())
            return out
        return r._scalar() if r.ndim == 0 else r

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """Sum over ``axis`` (NumPy result types; pairwise float sums)."""
        return self._reduction("sum", axis, out, keepdims, dtype)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return self._reduction("product", axis, out, keepdims, dtype)

    def min(self, axis=None, out=None, keepdims=False):
        return self._reduction("min", axis, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return self._reduction("max", axis, out, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return self._reduction("any", axis, out, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return self._reduction("all", axis, out, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """Arithmetic mean: the sum divided by the count, in float64 for
        integer and bool arrays, in the array's type for float and complex;
        an option array ``?T``: of the values present (``?float64``, as
        Arrow's ``mean``; ``None`` where all are null)."""
        axes = normalize_axis(axis, self.ndim)
        if dtype is None and self.type.dtype.is_option:
            # ?T: the valid values over their count, null where none (C, as Arrow)
            return self._reduction("mean", axis, out, keepdims)
        n = math.prod(self.shape) if axes is None else math.prod(self.shape[a] for a in axes)
        src = self
        result_dtype = None
        if dtype is not None:
            src = self.astype(dtype)
        elif self.dtype.kind in "biu":
            src = self.astype("float64")
        elif self.dtype == np.float16:      # NumPy accumulates float16 in float32
            src, result_dtype = self.astype(np.float32), self.dtype
        if n == 0:
            warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
        s = src._reduce("sum", axes, bool(keepdims))
        r = s._apply("divide", (s, n if n else float("nan")), None) if n else \
            s._apply("multiply", (s, float("nan")), None)
        if r.dtype != s.dtype:
            r = r.astype(s.dtype, "nocheck")
        if result_dtype is not None:
            r = r.astype(result_dtype, "nocheck")
        if out is not None:
            out._assign(r)
            return out
        return r._scalar() if r.ndim == 0 else r
