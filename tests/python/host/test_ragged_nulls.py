"""Ragged lists with None (null rows and null elements under var dims) in
``ckernels.array``, and ``tolist()`` of option strings read a word of the
bitmap at a time.  Oracles: ``pa.array`` (the type it infers, the values it
holds) and the Python lists themselves."""

from __future__ import annotations

import pytest

import ckernels

pa = pytest.importorskip("pyarrow")


@pytest.mark.parametrize("data, want", [
    ([[1.0, None], None, []], "?var * ?float64"),
    ([[1.0, None], [2.0]], "var * ?float64"),
    ([[1, 2], None, [3, 4]], "?var * int64"),
    ([["a", None, "é"], None, [], [None]], "?var * ?string"),
    ([[True], None], "?var * bool"),
    ([[[1.0, None]], None, [None, []]], "?var * ?var * ?float64"),
])
def test_ragged_none_types_and_round_trips(data, want):
    a = ckernels.array(data)
    assert str(a.type) == "strided * " + want
    assert a.tolist() == data
    p = pa.array(a)
    assert p.to_pylist() == data
    assert p.null_count == pa.array(data).null_count
    assert ckernels.asarray(p).tolist() == data


def test_null_counts_and_indexing():
    a = ckernels.array([[1.0, None, 3.0], None, [None]])
    assert a.null_count == 1                # the rows
    assert a.is_null().tolist() == [False, True, False]
    assert a[0] == [1.0, None, 3.0] and a[1] is None and a[2] == [None]
    b = ckernels.array([[1.0, None, 3.0], [None]])
    assert b[0].null_count == 1 and b[0].tolist() == [1.0, None, 3.0]


def test_fill_value_still_fills():
    a = ckernels.array([[1.0, None], [2.0]], fill_value=-1.0)
    assert str(a.type) == "strided * var * float64"
    assert a.tolist() == [[1.0, -1.0], [2.0]]


def test_many_rows_bits_past_one_byte():
    data = [[float(i), None][: i % 3] if i % 5 else None for i in range(200)]
    a = ckernels.array(data)
    assert a.tolist() == data
    assert pa.array(a).to_pylist() == data


def test_tolist_option_strings_at_every_bit_offset():
    def words(i):
        return ["x" * (i % 70), None, "héllo" * (i % 3), "", None, "abcdefghij" * (i % 9)]
    base = pa.array([w if w is None else f"{w}{i}" for i in range(40) for w in words(i)])
    for start in range(8):
        sl = base.slice(start, 150 - start)
        assert ckernels.asarray(sl).tolist() == sl.to_pylist(), start
    full = ckernels.asarray(pa.array(["a"] * 130))          # whole words of valid bits
    assert full.tolist() == ["a"] * 130
    nulls = ckernels.asarray(pa.array([None] * 65, pa.string()))
    assert nulls.tolist() == [None] * 65
    big = ckernels.asarray(pa.array([b"ab", None, b"\xff"], pa.binary()))
    assert big.tolist() == [b"ab", None, b"\xff"]
