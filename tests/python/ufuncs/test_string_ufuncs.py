"""String functions as real NumPy ufuncs over ``StringDType`` (issue 21 §2,
``src/python/ufuncs/string_loops.c``).

A jitted function with ``string`` signatures owns a ufunc whose loops read
``StringDType`` inputs as ``ck_string`` views and pack string results with
``NpyString_pack``: NumPy operands give NumPy results, through NumPy's ufunc
machinery (``out=``, ``where=``, broadcasting, reductions) and the library's
threads; pandas, xarray and dask keep their types; ckernels arrays keep the
general path.  Oracles: Python on the same values, NumPy's ``np.strings``.
"""

import numpy as np
import pytest

import ckernels
from ckernels import errors

pd = pytest.importorskip("pandas")
xr = pytest.importorskip("xarray")
da = pytest.importorskip("dask.array")

T = np.dtypes.StringDType()
WORDS = ["", "a", "héllo", "€uro", "😀x", "plain ascii text", "ñ" * 40]


@ckernels.jit(["int64(string)"])
def slen(s):
    return len(s)


@ckernels.jit(["string(int64)"])
def label(i):
    return f"item-{i}"


@ckernels.jit(["string(string, string)"])
def join(a, b):
    return a + "/" + b


@ckernels.jit(["string(string)"])
def shout(s):
    if s == "boom":
        raise ValueError("cannot shout " + s)
    return s.upper() + "!"


def test_numpy_in_numpy_out():
    a = np.array(WORDS, dtype=T)
    r = slen(a)
    assert type(r) is np.ndarray and r.dtype == np.int64
    assert r.tolist() == [len(w) for w in WORDS]
    np.testing.assert_array_equal(r, np.strings.str_len(a))
    s = shout(a)
    assert s.dtype == T and s.tolist() == [w.upper() + "!" for w in WORDS]
    lab = label(np.arange(-3, 3))
    assert lab.dtype == T and lab.tolist() == [f"item-{i}" for i in range(-3, 3)]
    assert slen.ufunc is not None and slen.ufunc(a).tolist() == r.tolist()


def test_text_dtypes_reach_the_loops():
    u = np.array(WORDS, dtype="U40")
    assert slen(u).tolist() == [len(w) for w in WORDS]
    b = np.array([b"ab", b"", "é".encode()])
    assert slen(b).tolist() == [2, 0, 1]
    o = np.array(WORDS, dtype=object)
    assert slen(o).tolist() == [len(w) for w in WORDS]
    assert join(o, "x").tolist() == [w + "/x" for w in WORDS]
    # a Python str with a NumPy array: NumPy's rules, a NumPy result
    r = join(np.array(["a", "b"], dtype=T), "Z")
    assert isinstance(r, np.ndarray) and r.tolist() == ["a/Z", "b/Z"]
    # lazily compiled functions compile a `string` loop for NumPy text
    @ckernels.jit
    def lazy_len(s):
        return len(s)

    assert lazy_len(np.array(WORDS, dtype=T)).tolist() == [len(w) for w in WORDS]
    assert lazy_len(u).tolist() == [len(w) for w in WORDS]


def test_out_where_broadcasting_reductions():
    a = np.array([["a", "bb"], ["ccc", "dddd"]], dtype=T)
    col = np.array(["x", "y"], dtype=T)
    r = join(a, col)
    assert r.tolist() == [["a/x", "bb/y"], ["ccc/x", "dddd/y"]]
    out = np.full((2, 2), "old", dtype=T)
    got = join(a, col, out=out)
    assert got is out and out.tolist() == r.tolist()
    out = np.full((2, 2), "old", dtype=T)
    join(a, col, out=out, where=np.array([[True, False], [False, True]]))
    assert out.tolist() == [["a/x", "old"], ["old", "dddd/y"]]
    n = np.zeros((2, 2), dtype=np.int64)
    slen(a, out=n)
    assert n.tolist() == [[1, 2], [3, 4]]
    # in place: the output is an input
    b = np.array(["p", "q"], dtype=T)
    join(b, b, out=b)
    assert b.tolist() == ["p/p", "q/q"]
    # reductions and accumulations read what the loop wrote
    words = np.array(["a", "b", "c", "d"], dtype=T)
    assert join.reduce(words) == "a/b/c/d"
    assert join.accumulate(words).tolist() == ["a", "a/b", "a/b/c", "a/b/c/d"]
    assert join.reduce(a, axis=1).tolist() == ["a/bb", "ccc/dddd"]


def test_missing_values_and_errors():
    nulls = np.array(["a", None, "b"], dtype=np.dtypes.StringDType(na_object=None))
    with pytest.raises(errors.CKValueError, match=r"missing value .* element 1"):
        slen(nulls)
    sna = np.array(["a", "NA"], dtype=np.dtypes.StringDType(na_object="NA"))
    assert slen(sna).tolist() == [1, 2]                   # a string na_object is text
    with pytest.raises(errors.CKValueError, match=r"^2 missing values .*first at index \(1,\)"):
        slen(np.array(["a", None, None], dtype=object))
    with pytest.raises(errors.CKTypeError, match="cannot assign int value 3 to string"):
        slen(np.array(["a", 3], dtype=object))
    with pytest.raises(errors.CKValueError, match="cannot shout boom"):
        shout(np.array(["ok", "boom"], dtype=T))
    with pytest.raises(ValueError, match="UTF-8|utf-8"):     # never undecoded bytes
        slen(np.array([b"\xff"]))


def test_threads_give_the_serial_results():
    n = 300_000
    words = np.array([f"w{i}-" + "é" * (i % 7) for i in range(n)], dtype=T)
    old = ckernels.get_num_threads()
    try:
        ckernels.set_num_threads(1)
        one_len, one_lab = slen(words), label(np.arange(n))
        ckernels.set_num_threads(2)
        two_len, two_lab = slen(words), label(np.arange(n))
        two_shout = shout(words)
    finally:
        ckernels.set_num_threads(old)
    np.testing.assert_array_equal(one_len, two_len)
    np.testing.assert_array_equal(one_len, np.strings.str_len(words))
    assert one_lab.tolist() == two_lab.tolist() == [f"item-{i}" for i in range(n)]
    assert two_shout[-3:].tolist() == [w.upper() + "!" for w in words[-3:].tolist()]
    bad = words.copy()
    bad[n - 5] = "boom"
    ckernels.set_num_threads(2)
    try:
        with pytest.raises(errors.CKValueError, match="cannot shout boom"):
            shout(bad)
    finally:
        ckernels.set_num_threads(old)


def test_pandas_series_stay_series():
    idx = [10, 20, 30]
    for dtype in (object, "string", "str"):
        s = pd.Series(["a", "bb", "ccc"], index=idx, name="w", dtype=dtype)
        r = slen(s)
        assert isinstance(r, pd.Series) and list(r.index) == idx and r.name == "w", dtype
        assert r.tolist() == [1, 2, 3]
        j = join(s, s)
        assert isinstance(j, pd.Series) and j.tolist() == ["a/a", "bb/bb", "ccc/ccc"]
    ints = pd.Series([1, 2, 3], index=idx, name="n")
    lab = label(ints)
    assert isinstance(lab, pd.Series) and list(lab.index) == idx
    assert lab.tolist() == ["item-1", "item-2", "item-3"]
    # a null in is a null out (ckernels.containers); where the function cannot
    # take nulls, an error that counts them and names no keyword of the call
    try:
        r = slen(pd.Series(["a", None], dtype="string"))
    except errors.NotSupportedError as exc:
        assert "1 null" in str(exc) and "fill_value" not in str(exc)
    else:
        assert r.isna().tolist() == [False, True] and r[0] == 1
    assert isinstance(slen(pd.Index(["a", "bb"])), pd.Index)


def test_xarray_and_dask_keep_their_types():
    u = xr.DataArray(np.array(["a", "bb"]), dims="x", coords={"x": [1, 2]})
    r = slen(u)
    assert isinstance(r, xr.DataArray) and r.values.tolist() == [1, 2] and r.dims == ("x",)
    o = xr.DataArray(np.array(["a", "bb"], dtype=object), dims="x")
    assert isinstance(slen(o), xr.DataArray) and slen(o).values.tolist() == [1, 2]
    for arr in (np.array(WORDS), np.array(WORDS, dtype=object), np.array(WORDS, dtype=T)):
        d = da.from_array(arr, chunks=3)
        lazy = slen(d)
        assert isinstance(lazy, da.Array) and lazy.dtype == np.int64
        assert lazy.compute().tolist() == [len(w) for w in WORDS]
        s = shout(d)
        assert isinstance(s, da.Array)
        assert s.compute().tolist() == [w.upper() + "!" for w in WORDS]
    xd = xr.DataArray(da.from_array(np.array(WORDS, dtype=object), chunks=2), dims="t")
    r = slen(xd)
    assert isinstance(r, xr.DataArray) and isinstance(r.data, da.Array)
    assert r.compute().values.tolist() == [len(w) for w in WORDS]


def test_ckernels_arrays_keep_the_general_path():
    a = ckernels.array(WORDS)
    r = slen(a)
    assert isinstance(r, ckernels.Array) and r.tolist() == [len(w) for w in WORDS]
    s = shout(a)
    assert isinstance(s, ckernels.Array) and s.tolist() == [w.upper() + "!" for w in WORDS]
    assert slen("héllo") == 5 and shout("x") == "X!"
