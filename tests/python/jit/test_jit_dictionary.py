"""Dictionary types in jitted signatures (``docs/type-grammar.md``,
"Dictionary types"): ``string(dictionary[int32, string])`` compiles the
function for the values, a call with a dictionary column runs it once per
distinct value and gathers the results (text results stay
dictionary-encoded), null indices follow the option rules, and the column
comes back in the container it came in (pyarrow, pandas, polars).  Python's
``str`` methods and pyarrow's compute functions are the oracles."""

import numpy as np
import pytest

import ckernels

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

WORDS = ["alpha", "beta", "gamma", "délta", "", "eps"]


@ckernels.jit("string(dictionary[int32, string])")
def shout(s):
    return s.upper() + "!"


@ckernels.jit("int64(dictionary[int8, string])")
def width(s):
    return len(s)


@ckernels.jit("string(?dictionary[int32, string])")
def label(s):
    if s is None:
        return "missing"
    return "<" + s + ">"


@ckernels.jit("float64(dictionary[uint16, float64, ordered])")
def half(x):
    return x / 2.0


def _column(n=200, nulls=True, index=pa.int32(), seed=3):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(WORDS), n)
    mask = (rng.random(n) < 0.2) if nulls else None
    return pa.DictionaryArray.from_arrays(pa.array(idx, index, mask=mask), pa.array(WORDS))


def _py(values, fn):
    return [None if v is None else fn(v) for v in values]


def test_dictionary_types_in_signatures_name_their_values():
    assert shout.signatures == ["string(string)"]
    assert width.signatures == ["int64(string)"]
    assert label.signatures == ["string(?string)"]
    assert half.signatures == ["float64(float64)"]
    with pytest.raises(TypeError, match="name the value type"):
        ckernels.jit("dictionary[int32, string](string)")(lambda s: s)
    with pytest.raises(TypeError, match="bad argument type"):
        ckernels.jit("string(dictionary[int32, ?string])")(lambda s: s)
    with pytest.raises(TypeError, match="bad argument type"):
        ckernels.jit("string(dictionary[float64, string])")(lambda s: s)


def test_text_results_stay_dictionary_encoded_with_the_same_indices():
    col = _column()
    got = shout(col)
    assert isinstance(got, pa.DictionaryArray)
    # computed once per value: the dictionary holds one result per value
    assert got.dictionary.to_pylist() == [w.upper() + "!" for w in WORDS]
    assert got.indices.to_pylist() == col.indices.to_pylist()       # nulls kept
    want = pc.binary_join_element_wise(pc.utf8_upper(col.dictionary_decode()), "!", "")
    assert got.dictionary_decode().to_pylist() == want.to_pylist()
    chunked = shout(pa.chunked_array([col, col.slice(3, 50)]))
    assert isinstance(chunked, pa.ChunkedArray)
    assert chunked.to_pylist() == _py(col.to_pylist() + col.slice(3, 50).to_pylist(),
                                      lambda v: v.upper() + "!")


def test_number_results_are_gathered_and_null_indices_give_nulls():
    col = _column(index=pa.int8())
    got = width(col)
    assert pa.types.is_int64(got.type)
    assert got.to_pylist() == pc.utf8_length(col.dictionary_decode()).cast(pa.int64()).to_pylist()
    ordered = pa.DictionaryArray.from_arrays(pa.array([2, 0, None, 1], pa.uint16()),
                                             pa.array([1.0, 3.0, -5.0]), ordered=True)
    assert half(ordered).to_pylist() == [-2.5, 0.5, None, 1.5]


def test_a_null_aware_function_sees_none_once_for_the_null_rows():
    col = _column(seed=9)
    got = label(col)
    assert isinstance(got, pa.DictionaryArray) and got.null_count == 0
    assert got.to_pylist() == ["missing" if v is None else f"<{v}>" for v in col.to_pylist()]
    assert got.dictionary.to_pylist()[-1] == "missing"


def test_pandas_and_polars_categoricals_come_back_as_categoricals():
    pd = pytest.importorskip("pandas")
    s = pd.Series(pd.Categorical(["b", "a", None, "b"]), index=[10, 20, 30, 40], name="w")
    got = shout(s)
    assert isinstance(got, pd.Series) and isinstance(got.dtype, pd.CategoricalDtype)
    assert got.index.tolist() == [10, 20, 30, 40] and got.name == "w"
    assert got.tolist()[:2] == ["B!", "A!"] and pd.isna(got.iloc[2])
    pl = pytest.importorskip("polars")
    ps = pl.Series("p", ["x", "y", "x", None], dtype=pl.Categorical)
    got = shout(ps)
    assert isinstance(got, pl.Series) and got.name == "p"
    assert got.dtype == pl.Categorical
    assert got.to_list() == ["X!", "Y!", "X!", None]


def test_a_plain_column_still_runs_row_by_row():
    plain = pa.array(["ab", None, "c"])
    assert shout(plain).to_pylist() == ["AB!", None, "C!"]
    assert shout(np.array(["ab", "c"], dtype=object)).tolist() == ["AB!", "C!"]
