"""The data summary of an array's rich display (``ckernels.display.summary``):
its statistics against NumPy's and CPython's, its bound on the work for large
arrays, and the display that shows it (issue 29)."""

import html as html_mod

import numpy as np
import pytest

import ckernels
from ckernels import display
from ckernels.display import summary as ds


def test_array_display_summarises_the_data():
    x = np.random.default_rng(1).normal(size=1000)
    s = ds.summarize(ckernels.array(x))
    (leaf,) = s.leaves
    assert (s.count, s.read, s.sampled, s.nulls) == (1000, 1000, None, 0)
    assert leaf.min == x.min() and leaf.max == x.max()
    assert leaf.mean == pytest.approx(x.mean(), rel=1e-12)
    assert leaf.histogram == np.histogram(x, 8, (x.min(), x.max()))[0].tolist()
    assert len(leaf.sparkline()) == 8
    # integers: exact min/max, a mean that does not wrap
    big = np.full(10, 2**62, dtype=np.int64)
    (leaf,) = ds.summarize(ckernels.array(big)).leaves
    assert (leaf.min, leaf.max) == (2**62, 2**62) and leaf.mean == pytest.approx(2.0**62)
    # NaN and infinities left out of min/mean/max, and counted
    (leaf,) = ds.summarize(ckernels.array(np.array([1.0, np.nan, 3.0, -np.inf]))).leaves
    assert (leaf.min, leaf.max, leaf.mean, leaf.nan, leaf.inf) == (1.0, 3.0, 2.0, 1, 1)
    assert leaf.text() == "min 1, mean 2, max 3, 1 NaN, 1 infinite"
    (leaf,) = ds.summarize(ckernels.array(np.uint64([2**64 - 1, 0]))).leaves
    assert (leaf.min, leaf.max) == (0, 2**64 - 1) and leaf.histogram[0] == 1
    # strings: lengths in characters (as CPython's len), rows of var dims
    words = [["héllo", "wörld"], [], ["日本語"]]
    s = ds.summarize(ckernels.array(words))
    rows, strs = s.leaves
    assert (rows.name, rows.kind, rows.min, rows.max, rows.mean) == ("value", "rows", 0, 2, 1.0)
    assert (strs.name, strs.kind, strs.min, strs.max, strs.count) == \
        ("value[*]", "string", 3, 5, 3)
    # structs: one leaf per field
    st = ckernels.array([{"x": 1.5, "name": "ab"}, {"x": 2.5, "name": "c"}])
    leaves = {lf.name: lf for lf in ds.summarize(st).leaves}
    assert leaves["x"].mean == 2.0 and (leaves["name"].min, leaves["name"].max) == (1, 2)
    # booleans: how many are true
    (leaf,) = ds.summarize(ckernels.array([True, False, True])).leaves
    assert leaf.text() == "2 true, 1 false"
    # missing values are counted and left out (what to_list gives for them)
    leaf = ds.LeafSummary("v", "number")
    leaf.add(2.0)
    leaf.nulls += 1
    assert "1 missing" in leaf.text() and leaf.mean == 2.0
    # the rich display shows it
    page = html_mod.unescape(display.html(ckernels.array(words)))
    assert "ckernels-summary" in page and "3 value(s), all read" in page
    assert "length (characters): min 3" in page and "row length: min 0, mean 1, max 2" in page


def test_summaries_of_big_arrays_read_a_bounded_sample(monkeypatch):
    monkeypatch.setattr(ds, "NUMBER_LIMIT", 1000)
    monkeypatch.setattr(ds, "ITEM_LIMIT", 64)
    x = np.arange(100_000, dtype=np.int32)
    s = ds.summarize(ckernels.array(x))
    assert s.count == 100_000 and s.read == 1000 and "1,000 evenly spaced" in s.sampled
    (leaf,) = s.leaves
    assert (leaf.min, leaf.max) == (0, 99_900)     # every 100th: x[::100]
    assert leaf.mean == np.mean(x[::100])
    w = ckernels.array([f"w{i}" for i in range(10_000)])
    s = ds.summarize(w)
    assert s.count == 10_000 and s.read <= 64 and "along the first axis" in s.sampled
    assert "statistics of" in s.head()
    # a 2-d array: whole rows; rows longer than the limit: sampled within too
    m = ckernels.array(np.arange(4000.0).reshape(400, 10))
    s = ds.summarize(m)
    assert s.read == 1000 and s.leaves[0].max == 3969.0     # every 4th row: m[::4]
    wide = np.arange(20_000.0).reshape(2, 10_000)
    s = ds.summarize(ckernels.asarray(wide))
    assert s.read == 1000 and s.leaves[0].mean == np.mean(wide[:, ::20])
