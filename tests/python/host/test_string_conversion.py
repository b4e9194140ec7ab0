"""Strings, bytes, var dims and structs across the Python boundary (issue 21 §1):
ckernels arrays <-> nested Python lists, NumPy ``StringDType`` (the NpyString C
API), ``U`` / ``S`` / object arrays -- one C pass each way
(``src/python/convert/*.c``).

Oracles: Python itself (a value survives ``array(v).tolist()``), NumPy
(``np.array(v, dtype=StringDType())`` and its casts) and pandas (missing
values).  Missing values are refused with their count and the first one's
index unless ``fill_value=`` says what to use instead.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels import errors

T = np.dtypes.StringDType()
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# text with what UTF-8 makes interesting: empty strings, 2/3/4-byte code
# points, NULs; never lone surrogates (they are no Unicode text)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
blobs = st.binary(max_size=12)


@st.composite
def nested(draw, leaves, regular=None):
    """Nested lists of 0..3 levels over ``leaves``: regular (one shape) or
    ragged (rows of any length)."""
    depth = draw(st.integers(0, 3))
    if regular is None:
        regular = draw(st.booleans())
    if depth == 0:
        return draw(leaves)
    if regular:
        shape = draw(st.lists(st.integers(0, 3), min_size=depth, max_size=depth))

        def build(level):
            if level == depth:
                return draw(leaves)
            return [build(level + 1) for _ in range(shape[level])]
        return build(0)

    def ragged(level):
        if level == depth:
            return draw(leaves)
        return [ragged(level + 1) for _ in range(draw(st.integers(0, 3)))]
    # the outer level holds at least one row, so that the nesting depth is known
    return [ragged(1) for _ in range(draw(st.integers(1, 3)))]


def _leaf_depth(v):
    d = 0
    while isinstance(v, list):
        if not v:
            return None
        v, d = v[0], d + 1
    return d


# ---- round trips through Python lists ------------------------------------------

@SETTINGS
@given(nested(texts))
def test_string_lists_round_trip(value):
    a = ckernels.array(value)
    assert a.tolist() == value
    assert ckernels.array(value, type=a.type).tolist() == value
    if a.type.dtype == ckernels.types.string and a._regular_ndim() == a.ndim:
        # regular: NumPy's StringDType holds the same thing
        want = np.array(value, dtype=T)
        got = a.to_numpy()
        assert got.dtype == T and got.shape == want.shape
        assert got.tolist() == want.tolist()
        back = ckernels.array(want)
        assert back.type == a.type and back.tolist() == value


@SETTINGS
@given(nested(blobs))
def test_bytes_lists_round_trip(value):
    a = ckernels.array(value)
    assert a.tolist() == value
    if isinstance(value, bytes) or _leaf_depth(value) is not None:
        assert str(a.type.dtype).startswith("bytes")


@SETTINGS
@given(st.lists(st.fixed_dictionaries({"name": texts, "n": st.integers(-2**63, 2**63 - 1),
                                       "tags": st.lists(texts, max_size=3),
                                       "raw": blobs}), min_size=1, max_size=5))
def test_structs_with_strings_and_var_dims_round_trip(rows):
    t = "strided * {name: string, n: int64, tags: var * string, raw: bytes}"
    a = ckernels.array(rows, type=t)
    assert str(a.type) == t
    assert a.tolist() == rows
    inferred = ckernels.array(rows)                  # tags: var, fixed or (empty) float64
    assert inferred.tolist() == rows
    assert [r for r in a] == rows
    assert a["name"].to_numpy().tolist() == [r["name"] for r in rows]
    assert a["name"].to_numpy().dtype == T
    objs = a.to_numpy()
    assert objs.dtype == object and list(objs) == rows


@SETTINGS
@given(st.lists(st.lists(st.integers(-10**6, 10**6), max_size=6), min_size=1, max_size=8))
def test_ragged_rows_round_trip(rows):
    a = ckernels.array(rows)
    assert a.tolist() == rows
    assert list(a.tolist()) == [list(r) for r in rows]


def test_non_ascii_empty_and_nul_strings():
    words = ["", "a", "é", "€uro", "😀 emoji", "a\x00b", "\x00", "ñ" * 100]
    a = ckernels.array(words)
    assert a.tolist() == words
    assert list(a) == words
    n = np.asarray(a)
    assert n.dtype == T and n.tolist() == words
    assert np.asarray(a, dtype=object).tolist() == words
    assert np.asarray(a, dtype="U5").tolist() == [w[:5].rstrip("\x00") for w in words]
    blobs_ = [b"", b"\x00", b"a\x00\x00", b"\xff\xfe"]
    b = ckernels.array(blobs_)
    assert b.tolist() == blobs_ and list(b.to_numpy()) == blobs_


def test_tolist_of_scalars_matches_numpy():
    for dt in ["bool", "int8", "uint16", "int64", "uint64", "float16", "float32", "complex64",
               "complex128"]:
        n = (np.arange(-3, 3) * 7).astype(dt) if dt != "bool" else np.array([True, False])
        a = ckernels.array(n)
        got = a.tolist()
        assert got == n.tolist(), dt
        assert [type(v) for v in got] == [type(v) for v in n.tolist()], dt
    assert ckernels.array(np.float16(1.5)).tolist() == 1.5
    r = ckernels.array([np.arange(3, dtype="float16"), np.arange(2, dtype="float16")])
    assert r.tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0]]


def test_pointer_tolist_and_zero_d():
    s = ckernels.array("héllo")
    assert s.tolist() == "héllo" and s.ndim == 0
    assert ckernels.array(b"\x00x").tolist() == b"\x00x"
    assert ckernels.array({"a": 1, "b": "x"}).tolist() == {"a": 1, "b": "x"}


# ---- NumPy string arrays ----------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: np.array(v, dtype=T),
    lambda v: np.array(v, dtype="U"),
    lambda v: np.array(v, dtype=object),
])
def test_numpy_string_arrays_in(make):
    value = [["a", "é€"], ["", "x" * 50]]
    n = make(value)
    a = ckernels.array(n)
    assert str(a.type) == "strided * strided * string"
    assert a.tolist() == value
    # non-contiguous sources
    assert ckernels.array(n[:, ::-1]).tolist() == [r[::-1] for r in value]
    assert ckernels.array(n.T).tolist() == [list(c) for c in zip(*value)]
    assert ckernels.asarray(n).tolist() == value


def test_numpy_bytes_arrays_in():
    s = np.array([b"ab", b"", b"\x00c"])          # 'S' drops trailing NULs (NumPy's rule)
    assert ckernels.array(s).tolist() == s.tolist()
    assert str(ckernels.array(s).type.dtype).startswith("bytes")
    o = np.array([b"ab\x00", b"\xff"], dtype=object)
    assert ckernels.array(o).tolist() == [b"ab\x00", b"\xff"]
    assert ckernels.array(np.array([b"ok", b"fine"]), dtype="string").tolist() == ["ok", "fine"]


def test_numpy_string_arrays_out():
    value = [["a", "é€"], ["", "x" * 50]]
    a = ckernels.array(value)
    for got in (np.asarray(a), a.to_numpy(), np.asarray(a, dtype=T), np.array(a)):
        assert got.dtype == T and got.tolist() == value
    na = np.dtypes.StringDType(na_object=None)
    got = np.asarray(a, dtype=na)
    assert got.dtype == na and got.tolist() == value
    assert np.asarray(a, dtype="U3").tolist() == [["a", "é€"], ["", "xxx"]]
    assert np.asarray(a, dtype=object).tolist() == value
    # views: strided, reversed, a column
    assert a[:, ::-1].to_numpy().tolist() == [r[::-1] for r in value]
    assert a[::-1, 1].to_numpy().tolist() == ["x" * 50, "é€"]
    with pytest.raises(TypeError, match="var dims"):
        np.asarray(ckernels.array([["a"], ["b", "c"]]))


def test_string_fields_of_structs_to_numpy():
    a = ckernels.array([{"k": "x", "v": 1}, {"k": "yé", "v": 2}])
    k = a["k"].to_numpy()
    assert k.dtype == T and k.tolist() == ["x", "yé"]
    assert np.asarray(a["v"]).tolist() == [1, 2]


# ---- missing values ------------------------------------------------------------------

def test_missing_values_in_lists_are_counted_and_located():
    # None in flat and regular lists: an option type (docs/nulls.md, as pyarrow)
    a = ckernels.array(["a", None, "b", None])
    assert str(a.type.dtype) == "?string" and a.null_count == 2
    assert a.tolist() == ["a", None, "b", None]
    # ragged: `var * ?string` (host/test_ragged_nulls.py)
    assert ckernels.array([["a"], [None, "b"]]).tolist() == [["a"], [None, "b"]]
    with pytest.raises(errors.CKValueError, match=r"\[1\]\['s'\]"):
        ckernels.array([{"s": "a"}, {"s": None}])
    assert str(ckernels.array([None, "x"], dtype="string").type.dtype) == "?string"
    assert ckernels.array([1, 2, None], dtype="int32").tolist() == [1, 2, None]
    with pytest.raises(errors.CKValueError, match=r"first at index \[2\]"):
        ckernels.array([1, 2, None], type="3 * int32")
    assert ckernels.array(["a", None], fill_value="").tolist() == ["a", ""]
    assert ckernels.array([[1, None]], fill_value=-1).tolist() == [[1, -1]]
    assert ckernels.array([b"a", None], fill_value=b"?").tolist() == [b"a", b"?"]
    assert ckernels.array(["a", None], dtype="string", fill_value="-").tolist() == ["a", "-"]


def test_missing_values_in_numpy_and_pandas_arrays():
    pd = pytest.importorskip("pandas")
    nulls = np.array(["a", None, "b", None, None], dtype=np.dtypes.StringDType(na_object=None))
    got = ckernels.array(nulls)          # StringDType nulls: ?string (docs/nulls.md)
    assert got.tolist() == ["a", None, "b", None, None] and got.null_count == 3
    assert ckernels.array(nulls, fill_value="").tolist() == ["a", "", "b", "", ""]
    # a string na_object stands for itself (NumPy's rule)
    sna = np.array(["a", "__na__"], dtype=np.dtypes.StringDType(na_object="__na__"))
    assert ckernels.array(sna).tolist() == ["a", "__na__"]
    for missing in (None, float("nan"), pd.NA):
        obj = np.array([["x", "y"], ["z", missing]], dtype=object)
        if isinstance(missing, float):                               # NaN: a float, refused
            with pytest.raises(errors.CKValueError, match=r"^1 missing value .*\(1, 1\)"):
                ckernels.array(obj)
        else:                                                        # a null
            assert ckernels.array(obj).tolist() == [["x", "y"], ["z", None]]
        assert ckernels.array(obj, fill_value="?").tolist() == [["x", "y"], ["z", "?"]]
    s = pd.Series(["a", None, "c"], dtype="string")
    assert ckernels.array(s.to_numpy()).tolist() == ["a", None, "c"]
    assert ckernels.array(s.to_numpy(), fill_value="").tolist() == ["a", "", "c"]


# ---- invalid input -------------------------------------------------------------------

def test_invalid_utf8_is_a_clear_error():
    with pytest.raises(errors.CKValueError, match="not valid UTF-8.*0xff"):
        ckernels.array([b"ok", b"\xff"], dtype="string")
    with pytest.raises(errors.CKValueError, match=r"not valid UTF-8 \(element \(1,\)\)"):
        ckernels.array(np.array([b"ok", b"\xc3"]), dtype="string")
    with pytest.raises(errors.CKValueError, match=r"not valid UTF-8 \(element \(0, 1\)\)"):
        ckernels.array(np.array([["a", b"\xed\xa0\x80"]], dtype=object), dtype="string")
    with pytest.raises(errors.CKValueError, match=r"not valid UTF-8 \(element \[1\]\[0\]\)"):
        ckernels.array([[b"a"], [b"\xed\xa0\x80"]], dtype="string")
    with pytest.raises(errors.CKValueError, match="surrogates not allowed"):
        ckernels.array(["a", "\ud800"])
    with pytest.raises(errors.CKTypeError, match="cannot mix string and int"):
        ckernels.array(["a", "b", 3], dtype="string")
    with pytest.raises(errors.CKTypeError, match="cannot assign int value 3 to string"):
        ckernels.array(["a", "b", 3], type="strided * string")
    with pytest.raises(errors.CKTypeError, match=r"cannot assign int value 3 to string \(elem"):
        ckernels.array(np.array(["a", 3], dtype=object), dtype="string")
    with pytest.raises(errors.CKTypeError):
        ckernels.array(np.array(["a"]), dtype="bytes")


def test_shape_and_type_errors_keep_their_messages():
    with pytest.raises(errors.CKValueError, match=r"expected 2 elements for '2 \* string', got 1"):
        ckernels.array([["a", "b"], ["c"]], type="strided * 2 * string")
    with pytest.raises(errors.CKTypeError, match="expected a sequence for 'var"):
        ckernels.array(["a", "b"], type="strided * var * string")
    with pytest.raises(errors.CKValueError, match=r"needs exactly the fields \['a', 'b'\]"):
        ckernels.array([{"a": "x", "b": 1}, {"a": "y"}], type="strided * {a: string, b: int8}")
    with pytest.raises(errors.CKOverflowError, match="out of range for int8"):
        ckernels.array([{"a": "x", "b": 300}], type="strided * {a: string, b: int8}")
    with pytest.raises(errors.CKTypeError, match="cannot mix string and int"):
        ckernels.array(["a", 1])


# ---- big values ----------------------------------------------------------------------

def test_huge_strings_over_one_arena_chunk():
    big = "é" * (3 << 20)                      # 6 MiB of UTF-8, far over the first chunk
    words = [big, "", "x", big[:1000]]
    a = ckernels.array(words)
    assert a.tolist() == words
    assert np.asarray(a).tolist() == words
    back = ckernels.array(np.array(words, dtype=T))
    assert back.tolist() == words
    many = [f"row-{i}-" + "y" * (i % 50) for i in range(20000)]
    assert ckernels.array(many).tolist() == many
    assert ckernels.array(np.array(many, dtype="U")).tolist() == many


def test_one_allocation_per_arena():
    words = [f"w{i}" for i in range(1000)]
    a = ckernels.array(words)
    from ckernels import lowlevel
    ffi, lib = lowlevel.ffi, lowlevel.lib
    am = ffi.cast("ck_string_arrmeta *", lib.ck_array_arrmeta(a._a) + 16)
    stats = ffi.new("ck_pod_stats *")
    assert lib.ck_pod_memblock_stats(am.blockref, stats) == 0
    assert stats.allocations == 1 and stats.used == sum(map(len, words))
    rows = ckernels.array([[1, 2, 3], [4], [], [5, 6]])
    vam = ffi.cast("ck_var_dim_arrmeta *", lib.ck_array_arrmeta(rows._a) + 16)
    assert lib.ck_pod_memblock_stats(vam.blockref, stats) == 0
    assert stats.allocations == 1 and stats.used == 6 * 8


# ---- display and iteration ---------------------------------------------------------

def test_repr_and_iteration():
    a = ckernels.array(["a", "bé"])
    assert repr(a) == "ckernels.array(['a', 'bé'], type='strided * string')"
    assert list(a) == ["a", "bé"] and all(type(x) is str for x in a)
    big = ckernels.array([str(i) for i in range(100000)])
    assert "..." in repr(big) and "'99999'" in repr(big)
    r = ckernels.array([[1, 2], [3]])
    assert repr(r) == "ckernels.array([[1, 2], [3]], type='strided * var * int64')"
    assert [x.tolist() for x in r] == [[1, 2], [3]]
    m = ckernels.array([["a", "b"], ["c", "d"]])
    rows = list(m)
    assert [x.tolist() for x in rows] == [["a", "b"], ["c", "d"]]
