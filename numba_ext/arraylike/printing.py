"""How arrays print: NumPy's ``array2string`` over only the elements shown
(summarised past the print threshold), nested lists for var dims."""

from __future__ import annotations

import math

import numpy as np

from .base import ArrayBase


class Printing(ArrayBase):
    """Mixin: ``str`` and the values part of ``repr``."""

    __slots__ = ()

    def _take(self, indices):
        """The elements at the outer product of the index lists ``indices``
        (one per leading axis) as a NumPy array; the default copies the whole
        array (classes override it to fetch only those elements)."""
        return np.asarray(self.to_numpy())[np.ix_(*indices)]

    def _format(self, prefix: str) -> tuple:
        """(values text, summarised): the values as NumPy prints them, fetching
        only the elements shown (time independent of the size)."""
        return format_values(self, prefix)

    def __str__(self) -> str:
        return self._format("")[0]


def _corner_indices(shape, edge: int):
    """Per axis: every index when the axis is short, else the first ``edge``,
    one filler and the last ``edge`` (NumPy never prints the filler)."""
    out = []
    for n in shape:
        if n > 2 * edge:
            out.append(np.r_[0:edge, edge, n - edge:n].astype(np.intp))
        else:
            out.append(np.arange(n, dtype=np.intp))
    return out


def format_values(a: ArrayBase, prefix: str) -> tuple:
    """``(text, summarised)``: the values of ``a`` formatted by NumPy's
    ``array2string`` (``separator=', '`` after a non-empty ``prefix``, as in a
    repr), summarised with ``...`` like NumPy past its print threshold; only
    the shown elements are fetched (``_take``)."""
    opts = np.get_printoptions()
    sep = ", " if prefix else " "
    k = a._regular_ndim()
    if k < a.ndim or not (a.dtype.kind in "biufcTMm" or a.dtype.fields is not None
                          or a.dtype.kind == "O"):
        return _format_nested(a, opts["edgeitems"], opts["threshold"]), False
    shape = a.shape
    size = math.prod(shape)
    summarised = size > opts["threshold"]
    if summarised:
        small = a._take(_corner_indices(shape, opts["edgeitems"]))
        text = np.array2string(small, threshold=0, edgeitems=opts["edgeitems"],
                               separator=sep, prefix=prefix)
    else:
        if shape or a.dtype.kind == "O":    # object (a ?T, say): read element-wise
            small = a._take([np.arange(n, dtype=np.intp) for n in shape])
        else:
            small = a.to_numpy()
        text = np.array2string(small, separator=sep, prefix=prefix, threshold=size + 1)
    return text, summarised


def _format_nested(a, edge: int, threshold: int) -> str:
    """Nested lists for types NumPy cannot show (var dims), each level
    summarised past ``2 * edge`` entries when the array is large."""
    budget = [threshold]

    def fmt(v, depth):
        if not isinstance(v, ArrayBase) or v.ndim == 0:
            val = v._scalar() if isinstance(v, ArrayBase) and v._is_scalar_type() else v
            if isinstance(val, ArrayBase):
                return repr(val.tolist())
            return repr(val.item() if isinstance(val, np.generic) else val)
        n = len(v)
        if n > 2 * edge and (budget[0] <= 0 or n > threshold):
            idx = list(range(edge)) + [None] + list(range(n - edge, n))
        else:
            idx = list(range(n))
        budget[0] -= n
        parts = ["..." if i is None else fmt(v[i], depth + 1) for i in idx]
        return "[" + ", ".join(parts) + "]"
    return fmt(a, 0)
