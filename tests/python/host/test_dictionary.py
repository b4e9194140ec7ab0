"""Dictionary-encoded (categorical) columns: the type, Arrow / pandas / polars
in and out without decoding, jitted functions and ops once per distinct
value, null indices, bad input.  pyarrow, pandas and polars are the oracles."""
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import ckernels
from ckernels.errors import CKIndexError, CKTypeError, CKValueError, NotSupportedError
from ckernels.host import dictionary as D


@ckernels.jit("string(string)")
def shout(s):
    return s.upper() + "!"


@ckernels.jit("int64(string)")
def width(s):
    return len(s)


@ckernels.jit("float64(float64, float64)")
def scaled(x, k):
    return x * k


WORDS = ["apple", "banana", None, "apple", "cherry", "banana", "apple"]


def _dict_arrow(words=WORDS, index=pa.int32(), ordered=False):
    arr = pa.array(words).dictionary_encode()
    return pa.DictionaryArray.from_arrays(arr.indices.cast(index), arr.dictionary,
                                          ordered=ordered)


# ---- the type ------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["dictionary[int32, string]",
                                  "dictionary[uint8, string, ordered]",
                                  "?dictionary[int64, float64]",
                                  "10 * dictionary[int16, {a: int32, b: string}]"])
def test_type_prints_back(text):
    assert str(ckernels.types.parse(text)) == text


def test_type_refusals():
    with pytest.raises(Exception, match="integer index type"):
        ckernels.types.parse("dictionary[float64, string]")
    with pytest.raises(Exception, match="no nulls"):
        ckernels.types.parse("dictionary[int8, ?string]")
    t = D.dictionary_type("uint16", "string", ordered=True)
    assert str(t) == "dictionary[uint16, string, ordered]"


# ---- in and out ---------------------------------------------------------------------

@pytest.mark.parametrize("index", [pa.int8(), pa.uint8(), pa.int16(), pa.uint16(),
                                   pa.int32(), pa.uint32(), pa.int64(), pa.uint64()])
def test_arrow_in_and_out_keeps_the_encoding(index):
    src = _dict_arrow(index=index)
    a = ckernels.asarray(src)
    assert str(a.type) == f"strided * ?dictionary[{index}, string]"
    assert a.tolist() == src.to_pylist()
    back = pa.array(a)
    assert pa.types.is_dictionary(back.type)
    assert back.type.index_type == index
    assert back.to_pylist() == src.to_pylist()
    assert back.dictionary.to_pylist() == src.dictionary.to_pylist()


def test_zero_copy_indices_and_values():
    src = _dict_arrow([f"w{i % 5}" for i in range(1000)])
    a = ckernels.asarray(src)
    indices, values, ordered = D.parts(a)
    assert not ordered and len(values) == 5
    addr = src.buffers()[1].address + src.offset * 4
    assert np.asarray(indices).__array_interface__["data"][0] == addr     # shared
    back = pa.array(a)
    assert back.buffers()[1].address == addr                            # out again: shared
    np.testing.assert_array_equal(np.asarray(indices), src.indices.to_numpy())


def test_ordered_flag_both_ways():
    src = _dict_arrow(["lo", "hi", "lo"], ordered=True)
    a = ckernels.asarray(src)
    assert str(a.type) == "strided * dictionary[int32, string, ordered]"
    assert pa.array(a).type.ordered


def test_pandas_categorical_in_and_out():
    s = pd.Series(pd.Categorical(["x", "y", None, "x"], categories=["y", "x"], ordered=True),
                  index=[10, 11, 12, 13], name="c")
    a = ckernels.asarray(s)
    assert str(a.type) == "strided * ?dictionary[int8, string, ordered]"
    assert a.tolist() == ["x", "y", None, "x"]
    out = shout(s)
    assert isinstance(out, pd.Series) and isinstance(out.dtype, pd.CategoricalDtype)
    assert list(out.index) == [10, 11, 12, 13] and out.name == "c"
    expect = s.astype(object).map(lambda v: None if pd.isna(v) else v.upper() + "!")
    assert [None if pd.isna(v) else v for v in out] == \
        [None if pd.isna(v) else v for v in expect]


def test_polars_categorical_and_enum():
    cat = pl.Series(["p", "q", "p", None], dtype=pl.Categorical)
    a = ckernels.asarray(cat)
    assert "dictionary[uint32, string" in str(a.type)
    assert a.tolist() == cat.to_list()
    got = shout(cat)                       # a polars Categorical back
    assert isinstance(got, pl.Series) and got.dtype == pl.Categorical
    assert got.to_list() == ["P!", "Q!", "P!", None]
    enum = pl.Series(["b", "a", "b"], dtype=pl.Enum(["a", "b"]))
    e = ckernels.asarray(enum)
    assert "ordered" in str(e.type)
    assert e.tolist() == enum.to_list()
    assert pl.from_arrow(pa.array(e)).to_list() == enum.to_list()


def test_chunked_dictionary_runs_per_value():
    ch = pa.chunked_array([pa.array(["a", "b"]).dictionary_encode(),
                           pa.array(["c", "a"]).dictionary_encode()])
    assert ckernels.asarray(ch).tolist() == ["a", "b", "c", "a"]
    got = shout(ch)                        # a pyarrow ChunkedArray back, still encoded
    assert isinstance(got, pa.ChunkedArray) and pa.types.is_dictionary(got.type)
    assert got.to_pylist() == ["A!", "B!", "C!", "A!"]
    two = pl.concat([pl.Series(["p"], dtype=pl.Categorical),
                     pl.Series(["q", "p"], dtype=pl.Categorical)], rechunk=False)
    assert ckernels.asarray(two).tolist() == ["p", "q", "p"]


# ---- once per distinct value ----------------------------------------------------------

class _Counting:
    """A stand-in function that records how many rows it was called over."""

    def __init__(self, fn):
        self.fn, self.rows = fn, []

    def __call__(self, values, *rest):
        self.rows.append(len(values))
        return self.fn(values, *rest)


def test_jit_runs_on_the_dictionary_once():
    src = _dict_arrow([f"w{i % 7}" for i in range(5000)])
    a = ckernels.asarray(src)
    counting = _Counting(shout)
    out = D.per_value(counting, (a,))
    assert counting.rows == [7]
    assert str(out.type) == "strided * dictionary[int32, string]"   # text stays encoded
    assert out.tolist() == [w.upper() + "!" for w in src.to_pylist()]


def test_jit_results_gathered():
    a = ckernels.asarray(_dict_arrow())
    out = width(a)
    assert str(out.type) == "strided * ?int64"
    assert out.tolist() == [None if w is None else len(w) for w in WORDS]
    out = shout(a)
    assert out.tolist() == [None if w is None else w.upper() + "!" for w in WORDS]
    assert pa.types.is_dictionary(pa.array(out).type)


def test_numeric_dictionary_and_scalars():
    vals = pa.array([0.5, 2.0, 10.0])
    src = pa.DictionaryArray.from_arrays(pa.array([2, 0, 1, 1, 0], pa.int8()), vals)
    a = ckernels.asarray(src)
    assert str(a.type) == "strided * dictionary[int8, float64]"
    np.testing.assert_array_equal(np.asarray(scaled(a, 3.0)),
                                  np.array([30.0, 1.5, 6.0, 6.0, 1.5]))
    gt = ckernels.ops.greater(a, 1.0)
    assert gt.tolist() == [True, False, True, True, False]


def test_ops_comparisons_against_a_scalar():
    src = _dict_arrow()
    a = ckernels.asarray(src)
    for op, pc_name in [("equal", "equal"), ("not_equal", "not_equal"), ("less", "less"),
                        ("greater_equal", "greater_equal")]:
        got = getattr(ckernels.ops, op)(a, "banana").tolist()
        expect = getattr(pa.compute, pc_name)(src.dictionary_decode(), "banana").to_pylist()
        assert got == expect, op


def test_decode_matches_pyarrow():
    src = _dict_arrow()
    dec = D.decode(ckernels.asarray(src))
    assert str(dec.type) == "strided * ?string"
    assert dec.tolist() == src.dictionary_decode().to_pylist()


def test_two_dictionary_columns_are_decoded():
    a = ckernels.asarray(_dict_arrow(["x", "y"]))
    b = ckernels.asarray(_dict_arrow(["1", "2"]))

    @ckernels.jit("string(string, string)")
    def join(p, q):
        return p + q
    assert join(a, b).tolist() == ["x1", "y2"]


# ---- bad input ------------------------------------------------------------------------

def test_indices_out_of_range_or_negative():
    values = pa.array(["a", "b"])
    for bad, what in [([0, 2, 1], "index 2 at position 1 is out of range"),
                      ([0, 1, -1], "index -1 at position 2 is negative")]:
        arr = pa.DictionaryArray.from_buffers(
            pa.dictionary(pa.int32(), pa.string()), 3,
            [None, pa.py_buffer(np.array(bad, np.int32).tobytes())], values)
        col = ckernels.asarray(arr)        # O(1): checked where the indices are read
        with pytest.raises(CKIndexError, match=what):
            D.decode(col)
        with pytest.raises(CKIndexError, match=what):
            shout(col)
        with pytest.raises(CKIndexError, match="out of range"):
            col.tolist()
    with pytest.raises(CKIndexError, match="index 5 at position 0"):
        D.from_parts(np.array([5], np.int16), ckernels.array(["a"]))


def test_dictionary_with_null_values_is_refused():
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()), pa.array(["a", None]))
    with pytest.raises(CKValueError, match="dictionary holds 1 null value .*position 1"):
        ckernels.asarray(arr)


def test_unsupported_arrow_types_stay_refused():
    import decimal
    with pytest.raises(NotSupportedError, match="decimal.*supported:"):
        ckernels.asarray(pa.array([decimal.Decimal("1.5")]))
    nested = pa.StructArray.from_arrays([pa.array(["a"]).dictionary_encode()], ["k"])
    with pytest.raises(NotSupportedError, match="inside a struct"):
        ckernels.asarray(nested)
    with pytest.raises(CKTypeError, match="dictionary column"):
        D.decode(ckernels.array([1, 2]))
