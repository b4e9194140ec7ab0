"""Containers users hold through jitted functions and operations, nulls kept
(ckernels.containers): pyarrow in -> pyarrow out, polars -> polars, pandas
nullable dtypes -> pandas (index and name kept), dask Series -> dask Series
(lazy); round trips with nulls through pandas, polars, duckdb, awkward,
xarray and Dask; bad input (null counts, None, ?T -> T) refused clearly.

Peers are the oracles: pyarrow.compute, pandas' own arithmetic, polars.
"""

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

from hypothesis import given, settings, strategies as st  # noqa: E402

import ckernels  # noqa: E402
from ckernels import errors, ops  # noqa: E402


@ckernels.jit
def label(s):
    return s + "-x"


@ckernels.jit
def affine(x):
    return x * 2.0 + 1.0


@ckernels.jit
def tagged(s, x):
    return s + ":" + str(x)


WORDS = ["ab", "c", "déf", ""]
NUMS = [1.5, -2.0, 0.0, 4.25]

# the signatures the tests call, compiled once here (a first compile keeps a
# memblock in the function's caches, which the per-test leak check would count)
for _dt in ("int64", "int32", "uint8", "float64", "float32"):
    affine(ckernels.array([1], dtype=_dt))
label(ckernels.array(["a"]))
tagged(ckernels.array(["a"]), ckernels.array([1.5]))


def _nulls_or_clear_error(call, expect_nulls, count):
    """A call on containers with nulls: the result has its nulls where the
    inputs had one (``expect_nulls``), or -- while the function cannot take
    nulls -- an error naming the count that suggests no keyword of the call."""
    try:
        r = call()
    except errors.NotSupportedError as exc:
        text = str(exc)
        assert f"{count} null" in text and "fill_value" not in text, text
        assert "=..." not in text and "=)" not in text, text
        return None
    got = (r.is_null() if isinstance(r, (pa.Array, pa.ChunkedArray)) else r.is_null()
           if isinstance(r, pl.Series) else r.isna())
    assert list(np.asarray(got, dtype=bool)) == expect_nulls
    return r


# ------------------------------------------------------------ without nulls --
def test_pyarrow_in_pyarrow_out():
    r = label(pa.array(WORDS))
    assert isinstance(r, pa.Array) and r.to_pylist() == [w + "-x" for w in WORDS]
    c = label(pa.chunked_array([WORDS[:2], WORDS[2:]]))
    assert isinstance(c, pa.ChunkedArray) and c.to_pylist() == [w + "-x" for w in WORDS]
    x = pa.array(NUMS)
    assert affine(x).equals(pc.add(pc.multiply(x, 2.0), 1.0))
    assert ops.add(x, x).equals(pc.add(x, x))


@pytest.mark.parametrize("dtype", ["string[pyarrow]", "string[python]", "str",
                                   "large_string[pyarrow]"])
def test_pandas_strings_in_pandas_out(dtype):
    s = pd.Series(WORDS, index=[5, 6, 7, 8], name="w", dtype=dtype)
    r = label(s)
    assert isinstance(r, pd.Series) and list(r.index) == [5, 6, 7, 8] and r.name == "w"
    assert r.tolist() == (s + "-x").tolist()
    if dtype.endswith("[pyarrow]") and dtype.startswith("large"):
        assert isinstance(r.dtype, pd.ArrowDtype)         # ArrowDtype in, ArrowDtype out
    else:
        assert isinstance(r.dtype, pd.StringDtype) and r.dtype == s.dtype


@pytest.mark.parametrize("dtype", ["Int64", "Int32", "UInt8", "Float64", "Float32"])
def test_pandas_masked_in_nullable_out(dtype):
    s = pd.Series([1, 2, 3], index=list("abc"), name="n", dtype=dtype)
    r = affine(s)
    assert isinstance(r, pd.Series) and r.dtype == "Float64" and list(r.index) == list("abc")
    pd.testing.assert_series_equal(r, (s.astype("Float64") * 2.0 + 1.0), check_names=False)
    assert ops.add(s, s).dtype == s.dtype


def test_pandas_index_stays_index_and_alignment():
    assert isinstance(label(pd.Index(WORDS, dtype="string")), pd.Index)
    a = pd.Series([1.0, 2.0], index=[0, 1], dtype="Float64")
    b = pd.Series([10.0, 20.0], index=[1, 2], dtype="Float64")
    pd.testing.assert_series_equal(ops.add(a, b), a + b)       # aligned, NA where absent


def test_polars_in_polars_out():
    s = pl.Series("w", WORDS)
    r = label(s)
    assert isinstance(r, pl.Series) and r.name == "w" and r.to_list() == [w + "-x" for w in WORDS]
    x = pl.Series("x", NUMS)
    assert affine(x).to_list() == (x * 2.0 + 1.0).to_list()


def test_dask_series_stays_lazy():
    dd = pytest.importorskip("dask.dataframe")
    pdf = pd.DataFrame({"s": pd.Series(WORDS, dtype="string[pyarrow]"),
                        "x": pd.Series([1.0, None, 3.0, 4.0], dtype="Float64")})
    df = dd.from_pandas(pdf, npartitions=2)
    lazy = label(df["s"])
    assert isinstance(lazy, dd.Series)
    assert lazy.compute().tolist() == [w + "-x" for w in WORDS]
    lz = ops.add(df["x"], 1.0)                     # chunks with nulls, lazily
    assert isinstance(lz, dd.Series)
    pd.testing.assert_series_equal(lz.compute(), pdf["x"] + 1.0)


# --------------------------------------------------------------- with nulls --
def test_ops_keep_nulls_in_every_container():
    x = pa.array([1.5, None, 3.0])
    assert ops.add(x, 1.0).equals(pc.add(x, 1.0))
    s = pd.Series([1.5, None, 3.0], index=[3, 4, 5], name="v", dtype="Float64")
    pd.testing.assert_series_equal(ops.multiply(s, 2.0), s * 2.0)
    i = pd.Series([1, None, 3], dtype="Int64")
    pd.testing.assert_series_equal(ops.add(i, i), i + i)
    p = pl.Series("v", [1.5, None, 3.0])
    assert ops.add(p, 1.0).to_list() == (p + 1.0).to_list()
    assert ops.sum(s) == pytest.approx(4.5) and ops.sum(x) == pc.sum(x).as_py()
    assert ops.sum(p) == p.sum() and ops.sum(i) == i.sum() and ops.max(s) == s.max()
    assert ops.sum(pa.chunked_array([[1.0], [None, 2.0]])) == 3.0


def test_jitted_functions_on_nulls_propagate_or_refuse_clearly():
    _nulls_or_clear_error(lambda: label(pa.array(["a", None, "c"])), [False, True, False], 1)
    _nulls_or_clear_error(lambda: affine(pd.Series([1.0, None], dtype="Float64")),
                          [False, True], 1)
    _nulls_or_clear_error(lambda: label(pl.Series([None, "b"])), [True, False], 1)
    _nulls_or_clear_error(lambda: label(pd.Series(["a", None], dtype="str")), [False, True], 1)


def test_mixed_operands_a_null_in_any_is_a_null_out():
    s = pd.Series(["a", None, "c"], dtype="string[pyarrow]")
    x = pd.Series([1.5, 2.5, None], dtype="Float64")
    r = _nulls_or_clear_error(lambda: tagged(s, x), [False, True, True], 1)
    if r is not None:
        assert r[0] == "a:1.5"
    # never the float NA as the text "nan"
    assert r is None or "nan" not in [v for v in r.tolist() if isinstance(v, str)]


# -------------------------------------------------------------- round trips --
_floats = st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), min_size=0, max_size=30)
_texts = st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=0, max_size=30)


@settings(max_examples=25, deadline=None)
@given(_floats, _texts)
def test_round_trips_keep_nulls(floats, texts):
    fa, ta = pa.array(floats, type=pa.float64()), pa.array(texts, type=pa.string())
    for arr, dtype in ((fa, "Float64"), (ta, "string[pyarrow]")):
        a = ckernels.asarray(arr)
        assert a.tolist() == arr.to_pylist() and a.null_count == arr.null_count
        assert pa.array(a).to_pylist() == arr.to_pylist()                 # Arrow back
        assert pl.Series(a).to_list() == arr.to_pylist()                  # pl.Series(a)
        assert ckernels.asarray(pl.Series(arr)).tolist() == arr.to_pylist()
        s = pd.Series(arr.to_pylist(), dtype=dtype)
        back = ckernels.asarray(s)
        assert back.tolist() == arr.to_pylist()
    ints = pd.Series([None if v is None else int(v) for v in floats], dtype="Int64")
    assert ckernels.asarray(ints).tolist() == [None if v is pd.NA else v
                                               for v in ints.astype(object).tolist()]
    r = ops.add(ints, 0)                                  # pandas in, pandas out, NA in place
    pd.testing.assert_series_equal(r, ints + 0)


def test_duckdb_sees_our_nulls():
    duckdb = pytest.importorskip("duckdb")
    a = ckernels.array([1.5, None, 3.0, None])
    t = pa.table({"x": pa.array(a)})
    assert duckdb.sql("select count(*) filter (where x is null), sum(x) from t"
                      ).fetchall() == [(2, 4.5)]
    got = duckdb.sql("select x from t").arrow().read_all().column("x")
    assert ckernels.asarray(got).tolist() == [1.5, None, 3.0, None]


def test_awkward_option_type():
    ak = pytest.importorskip("awkward")
    a = ckernels.array([1.5, None, 3.0])
    k = ak.from_arrow(pa.array(a))
    assert str(k.type) == "3 * ?float64" and ak.to_list(k) == [1.5, None, 3.0]
    back = ckernels.asarray(ak.to_arrow(k, extensionarray=False))
    assert back.tolist() == [1.5, None, 3.0] and str(back.type.dtype) == "?float64"


def test_xarray_and_dask_arrays_with_nulls():
    xr = pytest.importorskip("xarray")
    da = pytest.importorskip("dask.array")
    words = ckernels.array(["a", None, "bc"])
    x = xr.DataArray(words.to_numpy(), dims="t")                  # StringDType(na_object=None)
    assert ckernels.array(x.values).tolist() == ["a", None, "bc"]
    nums = ckernels.array([1.0, None, 3.0])
    xf = xr.DataArray(nums.to_numpy(na_value=np.nan), dims="t")   # xarray's missing: NaN
    assert ckernels.array(xf.values, nan_is_null=True).tolist() == [1.0, None, 3.0]
    d = da.from_array(words.to_numpy(), chunks=2)
    assert ckernels.array(d.compute()).tolist() == ["a", None, "bc"]


# ---------------------------------------------------------------- bad input --
def _f64(length, bitmap: bytes, null_count, offset=0):
    vals = pa.py_buffer(np.arange(16, dtype=np.float64).tobytes())
    return pa.Array.from_buffers(pa.float64(), length, [pa.py_buffer(bitmap), vals],
                                 null_count=null_count, offset=offset)


def test_null_counts_never_trusted_blindly():
    with pytest.raises(errors.InvalidArgumentError, match="null count 1 disagrees"):
        ckernels.asarray(_f64(8, b"\x0f", 1))
    recounted = ckernels.asarray(_f64(8, b"\x0f", -1))            # unknown: counted
    assert recounted.null_count == 4 and recounted.tolist() == [0.0, 1.0, 2.0, 3.0] + [None] * 4
    # a null count of 0 means no nulls, as pyarrow reads it (the bitmap is not read)
    zero = _f64(8, b"\x0f", 0)
    assert ckernels.asarray(zero).tolist() == zero.to_pylist()
    for bit in range(8):                                          # every bit offset
        arr = pa.array([1.0, None, 3.0, None, 5.0, 6.0, None, 8.0, 9.0, None]).slice(bit)
        assert ckernels.asarray(arr).tolist() == arr.to_pylist()


def test_none_and_option_to_plain_are_clear_errors():
    with pytest.raises(errors.CKValueError, match="1 missing value"):
        ckernels.array([1, None], type="2 * int64")
    a = ckernels.array([1, 2])
    with pytest.raises(errors.CKTypeError, match="no missing values"):
        a[0] = None
    with pytest.raises(errors.CKValueError, match="1 null .*first at flat index 1"):
        ckernels.array([1, None]).astype("int64")
    with pytest.raises(errors.CKValueError, match="1 null"):
        np.asarray(ckernels.array([1, None]))


def test_pandas_masked_dtypes_import_with_nulls():
    for s, want in ((pd.Series([1, None], dtype="Int64"), "?int64"),
                    (pd.Series([True, None], dtype="boolean"), "?bool"),
                    (pd.Series([1.5, None], dtype="Float64"), "?float64"),
                    (pd.Series(["a", None], dtype="string[python]"), "?string")):
        a = ckernels.asarray(s)
        assert str(a.type.dtype) == want and a.tolist()[1] is None and a.null_count == 1


def test_keywords_and_out_on_containers():
    with pytest.raises(errors.NotSupportedError, match="out= takes a ckernels or NumPy"):
        ops.add(pa.array([1.0]), 1.0, out=pa.array([0.0]))
    out = ckernels.empty(2)
    assert ops.add(pa.array([1.0, 2.0]), 1.0, out=out) is out and out.tolist() == [2.0, 3.0]


def test_polars_map_batches_recipe():
    df = pl.DataFrame({"name": ["a", "bc", "d"], "score": [1.0, 2.5, None]})
    out = df.with_columns(
        pl.col("name").map_batches(label, return_dtype=pl.String).alias("lab"),
        pl.col("score").map_batches(lambda s: ops.multiply(s, 2.0),
                                    return_dtype=pl.Float64).alias("s2"))
    assert out["lab"].to_list() == ["a-x", "bc-x", "d-x"]
    assert out["s2"].to_list() == [2.0, 5.0, None]
    with pytest.raises(TypeError, match="unexpected keyword argument 'return_dtype'"):
        label(pl.Series(["a"]), return_dtype=pl.String)


@ckernels.jit
def _slen(s):
    return len(s)


_slen(ckernels.array(["a"]))


def test_object_text_with_missing_values_names_no_keyword():
    for x in (np.array(["a", None, "b"], dtype=object),
              pd.Series(["a", None, "b"], dtype=object)):
        with pytest.raises(errors.CKValueError, match=r"^1 missing value .*index \(1,\)") as e:
            _slen(x)
        assert "fill_value" not in str(e.value) and "ckernels.array(x)" in str(e.value)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(-1e3, 1e3)), min_size=1, max_size=12),
       st.integers(1, 3))
def test_dask_chunks_with_random_nulls(values, parts):
    dd = pytest.importorskip("dask.dataframe")
    s = pd.Series(values, dtype="Float64")
    lazy = ops.multiply(dd.from_pandas(s, npartitions=parts), 2.0)
    assert isinstance(lazy, dd.Series)
    pd.testing.assert_series_equal(lazy.compute(), s * 2.0)
    words = pd.Series([None if v is None else f"w{v:.0f}" for v in values], dtype="string")
    back = ckernels.asarray(dd.from_pandas(words, npartitions=parts).compute())
    assert back.tolist() == [None if v is pd.NA else v for v in words.astype(object)]


def test_nullable_next_to_numpy_backed_pandas():
    a = pd.Series([1.0, None, 3.0], index=[0, 1, 2], dtype="Float64")
    b = pd.Series([10.0, 20.0, np.nan], index=[1, 2, 3])          # NumPy float64: NaN a value
    r = ops.add(a, b)
    assert r.dtype == "Float64" and list(r.index) == [0, 1, 2, 3]
    assert r.isna().tolist() == [True, True, False, True]
    assert r[2] == 23.0
