"""ChunkedArrays whose chunks differ in where they hold nulls (an Arrow
array imports with an option type exactly where it has a null): the stream
import (src/lib/interop/arrow_import_stream.c) joins the chunks' types --
`?` wherever any chunk has one, var dims and struct fields member-wise --
and concatenates, assigning each chunk into a slice of the result: rows of
one chunk line up with null-able rows of the joined type (`var * T` into
`?var * T`), and var rows with option items (`var * ?T`) are laid out in one
allocation with one bitmap over their items (docs/nulls.md).  pyarrow's
to_pylist is the oracle."""
from __future__ import annotations

import pytest

import ckernels

pa = pytest.importorskip("pyarrow")

L = pa.list_(pa.int64())
LS = pa.list_(pa.string())
LL = pa.list_(L)
S = pa.struct([("a", pa.int64()), ("b", pa.string())])

CASES = {
    "numbers": ([pa.array([1, 2]), pa.array([None, 3], pa.int64())], "?int64"),
    "strings": ([pa.array(["a", None]), pa.array(["x"])], "?string"),
    "struct field": ([pa.array([{"a": 1, "b": "x"}], S),
                      pa.array([{"a": None, "b": "y"}], S)], "{a: ?int64, b: string}"),
    "null struct": ([pa.array([{"a": 1, "b": "x"}], S),
                     pa.array([{"a": 2, "b": "é"}, None], S)], "?{a: int64, b: string}"),
    "null rows": ([pa.array([None, [1]], L), pa.array([[4], None, []], L)], "?var * int64"),
    "empty chunk": ([pa.array([[1]], L), pa.array([], L)], "var * int64"),
    "three chunks": ([pa.array([1]), pa.array([2]), pa.array([None, 4], pa.int64())],
                     "?int64"),
    # rows of a chunk without null rows into the joined null-able rows
    "rows into null rows": ([pa.array([[1, 2]], L), pa.array([None, [3]], L)],
                            "?var * int64"),
    "all null rows": ([pa.array([None, None], L), pa.array([[1]], L)], "?var * int64"),
    # var rows with null items, allocated by the assignment
    "null items": ([pa.array([[1, None]], L), pa.array([[4, None], [3]], L)],
                   "var * ?int64"),
    "null items, plain chunk": ([pa.array([[1, None]], L), pa.array([[3]], L)],
                                "var * ?int64"),
    "null items after empty": ([pa.array([], L), pa.array([[None, 1]], L), pa.array([], L)],
                               "var * ?int64"),
    "null rows and items": ([pa.array([[1, None]], L), pa.array([None, [None], []], L)],
                            "?var * ?int64"),
    "null string items": ([pa.array([["a", None]], LS), pa.array([[None, "bcd" * 9], []], LS)],
                          "var * ?string"),
    "null string rows and items": ([pa.array([["a"]], LS), pa.array([None, [None, "x"]], LS)],
                                   "?var * ?string"),
    "null bool items": ([pa.array([[True, None]], pa.list_(pa.bool_())),
                         pa.array([None, [False]], pa.list_(pa.bool_()))], "?var * ?bool"),
    "large_list": ([pa.array([[1, None]], pa.large_list(pa.int64())),
                    pa.array([None], pa.large_list(pa.int64()))], "?var * ?int64"),
    "sliced chunks": ([pa.array([[0], [1, None], None, [2, 3, None]], L).slice(1),
                       pa.array([[None] * 9, [5]], L).slice(0, 1)], "?var * ?int64"),
    "null struct items": ([pa.array([[{"a": 1, "b": "x"}, None]], pa.list_(S)),
                           pa.array([[{"a": None, "b": None}]], pa.list_(S))],
                          "var * ?{a: ?int64, b: ?string}"),
    "nested rows": ([pa.array([[[1, None]], None], LL), pa.array([[[2], None]], LL)],
                    "?var * ?var * ?int64"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunks_with_and_without_nulls_join(name):
    chunks, dtype = CASES[name]
    b = pa.chunked_array(chunks)
    a = ckernels.asarray(b)
    assert str(a.type) == f"strided * {dtype}"
    assert a.tolist() == b.to_pylist()
    assert pa.array(a).to_pylist() == b.to_pylist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunks_copied_by_array(name):
    # ckernels.array copies: the same assignment into a fresh array
    b = pa.chunked_array(CASES[name][0])
    assert ckernels.array(b).tolist() == b.to_pylist()


ONE = {
    "string items": pa.array([[None]], LS),
    "int items": pa.array([[1, None], [], [None] * 10], L),
    "rows and items": pa.array([[1, None], None, [None] * 10], L),
    "sliced": pa.array([[1, None], None, [None, 3] * 10], L).slice(1),
    "nested": pa.array([[[1, None]], None, [None, []]], LL),
    "struct items": pa.array([[{"a": None, "b": "é"}, None]], pa.list_(S)),
}


@pytest.mark.parametrize("name", sorted(ONE))
def test_array_copies_null_items(name):
    # asarray of one array is zero-copy; array() assigns into rows it allocates
    b = ONE[name]
    a = ckernels.array(b)
    assert a.tolist() == b.to_pylist() == ckernels.asarray(b).tolist()
    out = pa.array(a)
    out.validate(full=True)
    assert out.to_pylist() == b.to_pylist()


def test_view_destination_refuses_null_items():
    # a slice's bitmap would live in the slice's arrmeta only, unseen through
    # the array it views: refused with a message that says where to look
    a = ckernels.empty(3, "var * ?int64")
    with pytest.raises(ckernels.errors.InvalidStateError, match="not of a view"):
        a[0:2] = ckernels.asarray(pa.array([[None], [3]], L))
    b = ckernels.empty(2, "var * ?int64")
    b[0:2] = ckernels.asarray(pa.array([[1], [3, 4]], L))   # no null item: fine
    assert b.tolist() == [[1], [3, 4]]


def test_null_able_rows_broadcast_as_rows():
    # `?var * T` rows are a dim level of the assignment, as `var * T` rows:
    # a 1-d source lines up with each row's items (NumPy's trailing rule)
    for t in ("var * int64", "?var * int64"):
        a = ckernels.empty(2, t)
        a[0:2] = ckernels.array([1, 2])
        assert a.tolist() == [[1, 2], [1, 2]]


def test_item_conversion_error_modes():
    # `var * ?int64` items into `var * ?int8` rows the assignment allocates:
    # a value under a null never converts; a valid one that overflows raises
    src = pa.array([[1, None], [300]], L)
    with pytest.raises(ckernels.errors.CKOverflowError, match="300"):
        ckernels.array(src, type="strided * var * ?int8")
    ok = pa.array([[1, None], [-5]], L)
    assert ckernels.array(ok, type="strided * var * ?int8").tolist() == [[1, None], [-5]]


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

ROWS = st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-9, 9)), max_size=4))


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(st.lists(st.lists(ROWS, max_size=5), min_size=1, max_size=4))
def test_random_chunks(chunks):
    b = pa.chunked_array([pa.array(c, L) for c in chunks], L)
    expect = b.to_pylist()
    assert ckernels.asarray(b).tolist() == expect
    assert ckernels.array(b).tolist() == expect
    assert pa.array(ckernels.asarray(b)).to_pylist() == expect


def test_no_chunks():
    assert ckernels.asarray(pa.chunked_array([], L)).tolist() == []
