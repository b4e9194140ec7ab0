"""Null rows (``?var * T``: Arrow lists with null entries) in jitted functions.

A ``?var * T`` argument arrives as None or the row; a plain ``var * T`` one
propagates a null row into a null result (the body never runs on it).
Oracles: the rows' ``to_pylist()`` run through the same Python function, and
pyarrow's list kernels where they say the same thing.
"""

from __future__ import annotations

import numpy as np
import pytest

import ckernels
from ckernels.errors import NotSupportedError

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


def _total(row):
    if row is None:
        return -1.0
    s = 0.0
    for v in row:
        if v is not None:
            s += v
    return s


total = ckernels.jit("float64(?var * ?float64)")(_total)


@ckernels.jit("?float64(?var * float64)")
def biggest(row):
    if row is None:
        return None
    best = None
    for v in row:
        if best is None or v > best:
            best = v
    return best


@ckernels.jit("int64(?var * ?string)")
def present(row):
    if row is None:
        return -1
    n = 0
    for s in row:
        if s is not None:
            n += len(s)
    return n


@ckernels.jit("float64(var * ?float64)")
def skipsum(row):              # plain rows: a null row gives a null
    s = 0.0
    for v in row:
        if v is not None:
            s += v
    return s


@ckernels.jit("float64(var * float64)")
def first(row):                # row[0] raises on an empty row: never run on a null one
    return row[0]


ROWS = [[1.0, None, 2.5], None, [], [None], None, [3.0, 4.0], [None, None, 7.0], None, [5.0]]


def _want_skip(rows):
    return [None if r is None else sum(v for v in r if v is not None) for r in rows]


def test_null_rows_arrive_as_none_at_every_bit_offset():
    base = pa.array(ROWS * 3, pa.list_(pa.float64()))
    for start in range(8):
        sl = base.slice(start, 17)
        rows = sl.to_pylist()
        assert total(ckernels.asarray(sl)).tolist() == [_total(r) for r in rows], start
        got = total(sl)                                   # pyarrow in, pyarrow out
        assert isinstance(got, pa.Array) and got.to_pylist() == [_total(r) for r in rows]


def test_large_lists_and_ckernels_arrays():
    big = pa.array(ROWS, pa.large_list(pa.float64()))
    assert total(big).to_pylist() == [_total(r) for r in ROWS]
    a = ckernels.asarray(pa.array(ROWS))
    assert str(a.type.dtype) == "?var * ?float64"
    assert total(a).tolist() == [_total(r) for r in ROWS]


def test_none_rows_with_plain_elements_and_optional_results():
    rows = [[1.0, 9.0], None, [], [4.0]]
    got = biggest(pa.array(rows))
    assert got.to_pylist() == [9.0, None, None, 4.0]
    assert got.null_count == 2


def test_string_rows_with_null_rows():
    rows = [["ab", None, "héllo"], None, [], [None], ["x"]]
    want = [-1 if r is None else sum(len(s) for s in r if s is not None) for r in rows]
    assert present(pa.array(rows)).to_pylist() == want
    assert present(pa.array(rows, pa.large_list(pa.large_string()))).to_pylist() == want


def test_rows_without_nulls_pass_as_present_rows():
    rows = [[1.0, 2.0], [], [3.0]]
    assert total(pa.array(rows)).to_pylist() == [3.0, 0.0, 3.0]
    assert total(ckernels.array([[1.0, None], [3.0, 4.0]])).tolist() == [1.0, 7.0]
    assert total(np.arange(6.0).reshape(2, 3)).tolist() == [3.0, 12.0]
    made = ckernels.array([[1.0, None], None, []])          # ckernels.array with null rows
    assert total(made).tolist() == [1.0, -1.0, 0.0]


@pytest.mark.allow_memblock_leak   # the null-propagating variants, compiled at the first call
def test_plain_rows_propagate_null_rows():
    arr = pa.array(ROWS, pa.list_(pa.float64()))
    got = skipsum(arr)
    assert got.to_pylist() == _want_skip(ROWS)
    # null exactly where pyarrow says the row is null
    assert got.is_null().to_pylist() == pc.is_null(arr).to_pylist()
    # the body never runs on a null row (row[0] of its empty slots would raise)
    # (plain elements too: a row holding a null gives a null)
    ok = pa.array([[1.0], None, [2.0, 3.0], None, [None, 4.0]])
    assert first(ok).to_pylist() == [1.0, None, 2.0, None, None]
    for start in range(8):
        sl = pa.array(ROWS * 2, pa.list_(pa.float64())).slice(start, 10)
        assert skipsum(sl).to_pylist() == _want_skip(sl.to_pylist()), start


@pytest.mark.allow_memblock_leak   # skipsum's variant, when this test runs alone
def test_null_rows_under_a_null_slot_with_values():
    # Arrow lets a null list slot cover values: they are never seen
    values = pa.array([1.0, 2.0, 3.0, 4.0])
    offsets = pa.array([0, 2, 4], pa.int32())
    arr = pa.ListArray.from_arrays(offsets, values, mask=pa.array([False, True]))
    assert arr.to_pylist() == [[1.0, 2.0], None]
    assert total(arr).to_pylist() == [3.0, -1.0]
    assert skipsum(arr).to_pylist() == [3.0, None]


def test_refused_forms_name_the_type():
    with pytest.raises(NotSupportedError, match="null-able rows are one var dim"):
        ckernels.jit("?3 * float64(var * float64)")(lambda r: r)
    with pytest.raises(NotSupportedError, match="null-able rows"):
        ckernels.jit("float64(?var * 3 * float64)")(lambda r: 0.0)


@ckernels.jit("?string(?var * ?string)")
def joined(row):
    if row is None:
        return "-"
    if len(row) == 0:
        return None
    out = ""
    for s in row:
        if s is not None:
            out += s
    return out


@ckernels.jit("string(var * float64)")
def count_text(row):
    return "n=" + str(len(row))


@pytest.mark.allow_memblock_leak   # count_text's variant, compiled at the first call with nulls
def test_optional_string_results_with_dims():
    rows = [["a", None, "b"], [], None, [None], ["é", "x"]]
    want = ["ab", None, "-", "", "éx"]
    got = joined(pa.array(rows))
    assert isinstance(got, pa.Array) and got.to_pylist() == want
    assert joined(ckernels.array(rows)).tolist() == want
    # a plain string result propagates null rows and rows holding nulls
    num = pa.array([[1.0], None, [2.0, None], []])
    assert count_text(num).to_pylist() == ["n=1", None, None, "n=0"]
