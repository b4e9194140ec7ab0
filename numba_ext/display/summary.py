"""A summary of an array's data for its rich display, as polars' and pandas'
displays give one: how many values, and per leaf (the array's values, each
struct field, the rows of each var dim):

* numbers: min, mean, max and an 8-bin histogram of the finite values;
* booleans: how many are true;
* strings and bytes: their lengths (characters; bytes for ``bytes``);
* var dims: the lengths of their rows.

Cheap for large arrays.  Arrays of plain numbers go through the library's own
reductions (``ckernels.ops.min`` and ``max``, and ``sum`` of floats: C loops,
threaded, NumPy's result types; integers are summed by NumPy's buffered cast
to float64, so the mean cannot wrap) over at most about :data:`NUMBER_LIMIT`
values: all of them, or a strided view holding an evenly spaced sample of that
many (nothing is copied; the first value is in it).  Floats with NaN or
infinities are summarised over their finite values, a block at a time.  The
histogram is NumPy's over at most :data:`HIST_LIMIT` of those values (NumPy
allocates in proportion).  Everything else is read in one pass over
``to_list()`` of at most :data:`ITEM_LIMIT` leading items (all, or every k-th
item), which updates every statistic of every leaf at once.  A summary of a
sample says so (:attr:`DataSummary.sampled`).

Missing values: a leaf counts the ``None`` it meets in :attr:`LeafSummary.nulls`
and leaves them out of every other statistic, so the bytes under a missing
value are never read (``to_list`` gives ``None`` for it).  The library's
types hold no missing values yet; when option types come, the number path
needs a count of the invalid items (it refuses arrays whose leaf is not a plain
number, so it never reads under one meanwhile) and the display shows ``nulls``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from .. import dtypes

#: the most values the number path reads (an evenly spaced sample beyond)
NUMBER_LIMIT = 1 << 20
#: the most leading items the general path reads (every k-th item beyond)
ITEM_LIMIT = 1 << 12
#: the bins of a histogram, and the most values it is drawn from
BINS = 8
HIST_LIMIT = 1 << 14
_BARS = "▁▂▃▄▅▆▇█"

_NUMBERS = frozenset(d.name for d in dtypes.BUILTINS
                     if d.numpy is not None and d.numpy.kind in "iuf")


@dataclass
class LeafSummary:
    """The statistics of one leaf: ``kind`` is ``number``, ``bool``,
    ``string``, ``bytes``, ``rows``, ``time`` (instants and durations: min
    and max are NumPy scalars), or ``missing`` (only missing values met);
    ``min``/``mean``/``max`` are of the values (numbers) or of the lengths
    (strings, bytes, rows)."""
    name: str
    kind: str
    count: int = 0           # values read (missing ones not included)
    nulls: int = 0           # missing values read (None)
    min: float | None = None
    max: float | None = None
    total: float = 0.0
    true: int = 0            # booleans: how many are true
    nan: int = 0             # floats: NaN values (left out of min/mean/max)
    inf: int = 0             # floats: infinities (left out of min/mean/max)
    histogram: list | None = None   # BINS counts over [min, max] (numbers)

    @property
    def mean(self) -> float | None:
        n = self.count - self.nan - self.inf
        return self.total / n if n > 0 and self.kind != "bool" else None

    def add(self, v: float) -> None:
        self.count += 1
        if v != v:   # NaN
            self.nan += 1
            return
        if v in (math.inf, -math.inf):
            self.inf += 1
            return
        self.total += v
        if self.min is None or v < self.min:
            self.min = v
        if self.max is None or v > self.max:
            self.max = v

    def text(self) -> str:
        """``min 1, mean 5.2, max 17`` (lengths say so), or ``312 true``."""
        if self.kind == "bool":
            return f"{self.true} true, {self.count - self.true} false"
        odd = ", ".join(f"{n} {what}" for n, what in ((self.nan, "NaN"), (self.inf, "infinite"))
                        if n)
        if self.min is None:
            out = odd or "no values"
            return out + (f", {self.nulls} missing" if self.nulls else "")
        if self.kind == "time":     # NumPy's text of datetime64 / timedelta64
            return f"min {self.min}, max {self.max}" + \
                (f", {self.nulls} missing" if self.nulls else "")
        what = {"string": "length (characters)", "bytes": "length (bytes)",
                "rows": "row length"}.get(self.kind, "")
        out = f"{what + ': ' if what else ''}min {_num(self.min)}, mean {_num(self.mean)}, " \
              f"max {_num(self.max)}"
        if odd:
            out += f", {odd}"
        if self.nulls:
            out += f", {self.nulls} missing"
        return out

    def sparkline(self) -> str:
        """The histogram as eight block characters (empty if there is none)."""
        if not self.histogram or not max(self.histogram):
            return ""
        top = max(self.histogram)
        return "".join(" " if c == 0 else _BARS[min(int(c * 8 / top), 7) if c < top else 7]
                       for c in self.histogram)


@dataclass
class DataSummary:
    """The summary of an array's data: its number of values (``count``: the
    product of its leading dims), how many of them were read, how (``sampled``:
    None when all were), and one :class:`LeafSummary` per leaf."""
    count: int
    read: int
    sampled: str | None
    leaves: list = field(default_factory=list)

    @property
    def nulls(self) -> int:
        return sum(leaf.nulls for leaf in self.leaves)

    def rows(self) -> list:
        """``(name, text, sparkline)`` per leaf, for the displays."""
        return [(leaf.name, leaf.text(), leaf.sparkline()) for leaf in self.leaves]

    def head(self) -> str:
        if self.sampled is None:
            return f"{self.count:,} value(s), all read"
        return f"{self.count:,} value(s); statistics of {self.read:,}: {self.sampled}"


def _num(v) -> str:
    if v is None:
        return "-"
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def summarize(a, facts=None) -> DataSummary:
    """The :class:`DataSummary` of a ckernels array (``facts``: its
    ``ArrayFacts`` if already read: the shape and the leaf type)."""
    if facts is None:
        from .memory import array_layout
        facts = array_layout(a)
    shape = facts.shape
    count = math.prod(shape) if shape else 1
    if facts.item_type in _NUMBERS:
        return _numbers(a, shape, count)
    if _TIME_TYPE.match(facts.item_type):
        return _times(a, shape, count)
    return _general(a, shape, count)


#: instants and durations (``?T`` too): NumPy's M8 / m8 (``np.asarray`` gives NaT at nulls)
_TIME_TYPE = re.compile(r"\??(datetime|timedelta)\b")


def _times(a, shape, count) -> DataSummary:
    """Instants and durations: the earliest and latest (shortest, longest) as
    NumPy prints them (ISO 8601 for instants), NaT and nulls counted as
    missing; over an evenly spaced sample past NUMBER_LIMIT values."""
    view, sampled = a, None
    if count > NUMBER_LIMIT:
        view = a[_sample_index(shape, NUMBER_LIMIT)]
        sampled = (f"{math.prod(view.shape):,} evenly spaced values (a strided view: about "
                   f"1 in {count / math.prod(view.shape):.3g})")
    x = np.asarray(view).reshape(-1)
    nat = np.isnat(x)
    leaf = LeafSummary("value", "time", count=int(x.size - nat.sum()), nulls=int(nat.sum()))
    vals = x[~nat]
    if vals.size:
        leaf.min, leaf.max = vals.min(), vals.max()
    return DataSummary(count, int(x.size), sampled, [leaf])


def _sample_index(shape, limit: int) -> tuple:
    """Slices picking at most about ``limit`` evenly spaced elements of an
    array of ``shape`` (a strided view: nothing is copied): every k-th item
    along the first axis, and where one item holds more than ``limit``
    elements, at most 16 items and the same within each."""
    if not shape:
        return ()
    n0, inner = shape[0], math.prod(shape[1:])
    if n0 * inner <= limit:
        return (slice(None),) * len(shape)
    if inner <= limit:
        rows = max(limit // max(inner, 1), 1)
        return (slice(None, None, -(-n0 // rows)),) + (slice(None),) * (len(shape) - 1)
    rows = min(n0, 16)
    return (slice(None, None, -(-n0 // rows)),) + _sample_index(shape[1:], limit // rows)


def _numbers(a, shape, count) -> DataSummary:
    """The number path: the library's reductions over ``a`` or a strided view."""
    from .. import ops   # the library's reductions (a leaf imports it lazily)
    view, sampled = a, None
    if count > NUMBER_LIMIT:
        view = a[_sample_index(shape, NUMBER_LIMIT)]
        read = math.prod(view.shape)
        sampled = (f"{read:,} evenly spaced values (a strided view: about 1 in "
                   f"{count / read:.3g})")
    read = math.prod(view.shape) if shape else 1
    leaf = LeafSummary("value", "number", count=read)
    if not read:
        return DataSummary(count, read, sampled, [leaf])
    x = np.asarray(view)          # the same memory, for NumPy's part below
    lo, hi = ops.min(view), ops.max(view)
    lo, hi = np.asarray(lo).item(), np.asarray(hi).item()
    if x.dtype.kind == "f" and not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi, total, finite = _finite_stats(x, leaf)
    elif x.dtype.kind == "f":
        total, finite = np.asarray(ops.sum(view)).item(), read
    else:   # integers summed as float64 (an int64 sum can wrap; the mean cannot),
        # by NumPy's buffered cast: no copy of the array
        total, finite = float(np.sum(x, dtype=np.float64)), read
    leaf.min, leaf.max, leaf.total = lo, hi, float(total)
    if finite and lo is not None and hi > lo:
        # the histogram of at most HIST_LIMIT of these values (a further
        # strided view: NumPy's histogram allocates in proportion to its input)
        h = x[_sample_index(x.shape, HIST_LIMIT)] if x.size > HIST_LIMIT else x
        if x.dtype.kind == "f":
            h = h[np.isfinite(h)]
        try:
            leaf.histogram = np.histogram(h, BINS, (float(lo), float(hi)))[0].tolist()
        except ValueError:   # too narrow a range for eight finite bins (2**62 and next)
            leaf.histogram = None
    return DataSummary(count, read, sampled, [leaf])


#: rows of a float array checked for NaN and infinities at a time
_CHUNK = 1 << 14


def _finite_stats(x, leaf: LeafSummary):
    """min, max, sum and count of the finite values of float array ``x``
    (NaN and infinities counted in ``leaf``), a block of rows at a time."""
    lo = hi = None
    total, finite = 0.0, 0
    flat = x.reshape(-1) if x.ndim == 1 or x.flags.c_contiguous else None
    blocks = ((flat[i:i + _CHUNK] for i in range(0, flat.size, _CHUNK)) if flat is not None
              else (x[i:i + 1] for i in range(x.shape[0])))
    for block in blocks:
        ok = np.isfinite(block)
        leaf.nan += int(np.isnan(block).sum())
        leaf.inf += int(block.size - ok.sum()) - int(np.isnan(block).sum())
        vals = block[ok]
        if vals.size:
            bmin, bmax = vals.min().item(), vals.max().item()
            lo = bmin if lo is None else min(lo, bmin)
            hi = bmax if hi is None else max(hi, bmax)
            total += float(vals.sum(dtype=np.float64))
            finite += int(vals.size)
    return lo, hi, total, finite


def _general(a, shape, count) -> DataSummary:
    """One pass over ``to_list()`` of at most ITEM_LIMIT leading items."""
    sampled = None
    view = a
    if shape:
        n0 = shape[0]
        inner = max(math.prod(shape[1:]), 1)
        items = max(ITEM_LIMIT // inner, 1)
        if n0 > items:
            step = -(-n0 // items)
            view = a[::step]
            sampled = (f"1 item in {step} along the first axis "
                       f"({len(range(0, n0, step)):,} of {n0:,})")
    values = view.to_list()
    leaves: dict = {}
    depth = len(shape)

    def leaf(name, kind):
        s = leaves.get(name)
        if s is None:
            s = leaves[name] = LeafSummary(name, kind)
        elif s.kind == "missing":   # only missing values met so far
            s.kind = kind
        return s

    def walk(v, name, level):
        if v is None:
            leaf(name or "value", "missing").nulls += 1
        elif isinstance(v, list):
            inner = name
            if level >= depth:   # a var dim's row (or a fixed dim inside a field)
                leaf(name or "value", "rows").add(len(v))
                inner = (name or "value") + "[*]"
            for item in v:
                walk(item, inner, level + 1)
        elif isinstance(v, dict):
            for k, item in v.items():
                walk(item, f"{name}.{k}" if name else k, level + 1)
        elif isinstance(v, tuple):
            for k, item in enumerate(v):
                walk(item, f"{name}.{k}" if name else str(k), level + 1)
        elif isinstance(v, str):
            leaf(name or "value", "string").add(len(v))
        elif isinstance(v, (bytes, bytearray)):
            leaf(name or "value", "bytes").add(len(v))
        elif isinstance(v, (bool, np.bool_)):
            s = leaf(name or "value", "bool")
            s.count += 1
            s.true += bool(v)
        elif isinstance(v, (int, float, np.integer, np.floating)):
            leaf(name or "value", "number").add(v)

    walk(values, "", 0)
    read = len(values) * math.prod(shape[1:]) if shape else 1
    return DataSummary(count, read, sampled, list(leaves.values()))


__all__ = ["DataSummary", "LeafSummary", "summarize", "NUMBER_LIMIT", "ITEM_LIMIT", "BINS",
           "HIST_LIMIT"]
