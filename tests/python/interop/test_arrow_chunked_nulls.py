"""ChunkedArrays whose chunks differ in where they hold nulls (an Arrow
array imports with an option type exactly where it has a null): the stream
import (src/lib/interop/arrow_import_stream.c) joins the chunks' types --
`?` wherever any chunk has one, var dims and struct fields member-wise --
and concatenates.  pyarrow's to_pylist is the oracle."""
from __future__ import annotations

import pytest

import ckernels

pa = pytest.importorskip("pyarrow")

L = pa.list_(pa.int64())
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
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunks_with_and_without_nulls_join(name):
    chunks, dtype = CASES[name]
    b = pa.chunked_array(chunks)
    a = ckernels.asarray(b)
    assert str(a.type) == f"strided * {dtype}"
    assert a.tolist() == b.to_pylist()
    assert pa.array(a).to_pylist() == b.to_pylist()


def test_no_chunks():
    assert ckernels.asarray(pa.chunked_array([], L)).tolist() == []
