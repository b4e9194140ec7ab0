"""Missing values in host arrays (issue 27 section 2): option types ``?T``
from Python lists and NumPy text arrays, the Arrow/polars names, NumPy out,
ops.  pyarrow is the oracle for inference and null semantics."""

import math

import numpy as np
import pytest

import ckernels
from ckernels import ops
from ckernels.errors import CKTypeError, CKValueError
from ckernels.types import Type

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

_ARROW_TO_CK = {"int64": "int64", "double": "float64", "string": "string", "bool": "bool"}


def _expected_type(values):
    t = pa.array(values).type
    return f"{len(values)} * ?{_ARROW_TO_CK[str(t)]}"


# ---- inference -------------------------------------------------------------------

@pytest.mark.parametrize("values", [
    [1, None, 3],
    [1.5, None, 2.5],
    ["a", None, "ccc"],
    [True, None, False],
    [None, 1],
    [1, 2.5, None],
])
def test_none_makes_an_option_type_as_pyarrow_infers(values):
    a = ckernels.array(values)
    assert str(a.type).replace("strided", str(len(values))) == _expected_type(values) or \
        str(a.type) == _expected_type(values)
    assert a.tolist() == pa.array(values).to_pylist()
    assert a.null_count == pa.array(values).null_count


def test_type_strings_and_objects():
    t = Type("?int64")
    assert t.is_option and str(t) == "?int64"
    assert t.value_type == Type("int64")
    assert not Type("int64").is_option
    assert Type("int64").value_type == Type("int64")
    assert Type("3 * ?float64").dtype.is_option
    assert ckernels.types.option("string") == Type("?string")
    assert ckernels.types.option(t) == t


def test_fill_value_still_fills():
    a = ckernels.array([1, None, 3], fill_value=0)
    assert a.tolist() == [1, 0, 3]
    assert not a.type.dtype.is_option
    s = ckernels.array(["x", None], fill_value="")
    assert s.tolist() == ["x", ""]


def test_nan_is_a_value_unless_asked():
    a = ckernels.array([1.0, math.nan, None])
    assert a.null_count == 1 == pa.array([1.0, math.nan, None]).null_count
    assert math.isnan(a[1])
    b = ckernels.array([1.0, math.nan, None], nan_is_null=True)
    oracle = pa.array([1.0, math.nan, None], from_pandas=True)   # Arrow's NaN -> null
    assert b.null_count == oracle.null_count == 2
    assert b.tolist() == oracle.to_pylist()
    c = ckernels.array(np.array([1.0, np.nan]), nan_is_null=True)
    assert c.tolist() == [1.0, None] and c.type.dtype == Type("?float64")


def test_nested_regular_lists_with_none():
    a = ckernels.array([[1, None], [3, 4]])
    assert a.shape == (2, 2) and a.type.dtype == Type("?int64")
    assert a.tolist() == [[1, None], [3, 4]]
    assert a.null_count == 1
    assert a.is_null().tolist() == [[False, True], [False, False]]


def test_refused_nulls_are_clear_errors():
    # ragged lists with None are `var * ?T` now (host/test_ragged_nulls.py)
    assert ckernels.array([[1, None], [3]]).tolist() == [[1, None], [3]]
    with pytest.raises(CKValueError, match=r"missing value.*\[1\]\[.a.\]"):
        ckernels.array([{"a": 1}, {"a": None}])
    with pytest.raises(CKValueError, match="missing"):
        ckernels.array([1, None], type="2 * int64")


def test_python_inference_and_writer_paths_with_none():
    # NumPy scalars (the Python inference), NumPy arrays inside (the Python
    # writer), tuples, bytes, complex, uint64-range ints
    for values in ([np.int64(1), None], (1, None), [b"x", None]):
        a = ckernels.array(values)
        assert a.tolist() == pa.array(list(values)).to_pylist()
        assert a.null_count == 1
    b = ckernels.array([np.array([1, 2]), [None, 3]])
    assert b.tolist() == [[1, 2], [None, 3]] and b.null_count == 1
    u = ckernels.array([2**64 - 1, None])
    assert u.tolist() == pa.array([2**64 - 1, None], type=pa.uint64()).to_pylist()
    assert str(u.type.dtype) == "?uint64"
    assert ckernels.array([1 + 2j, None]).tolist() == [1 + 2j, None]


def test_given_option_type():
    a = ckernels.array([1, None], type="2 * ?int32")
    assert a.tolist() == [1, None] and str(a.type) == "2 * ?int32"
    b = ckernels.array([1, None], dtype="int32")
    assert b.type.dtype == Type("?int32") and b.tolist() == [1, None]


# ---- names -------------------------------------------------------------------------

def test_arrow_and_polars_names():
    vals = [1, None, 3, None]
    a = ckernels.array(vals)
    p = pa.array(vals)
    assert a.null_count == p.null_count == 2
    assert a.is_null().tolist() == p.is_null().to_pylist()
    assert a.is_valid().tolist() == p.is_valid().to_pylist()
    assert a.fill_null(0).tolist() == p.fill_null(0).to_pylist()
    assert a.fill_null(0).type.dtype == Type("int64")
    assert a.drop_null().tolist() == p.drop_null().to_pylist()
    assert a.drop_null().null_count == 0
    s = ckernels.array(["a", None])
    assert s.fill_null("zz").tolist() == pa.array(["a", None]).fill_null("zz").to_pylist()
    assert ckernels.array([1, 2]).null_count == 0
    assert ckernels.array([1, 2]).is_null().tolist() == [False, False]


def test_getitem_setitem_and_repr():
    a = ckernels.array([1, None, 3])
    assert a[1] is None and a[0] == 1 and a[-1] == 3
    a[0] = None
    assert a.tolist() == [None, None, 3] and a.null_count == 2
    a[1] = 7
    assert a.tolist() == [None, 7, 3] and a.null_count == 1
    r = repr(a)
    assert "None" in r
    b = ckernels.array([1, 2, 3])
    with pytest.raises(CKTypeError, match="None"):
        b[0] = None
    assert b.tolist() == [1, 2, 3]
    s = ckernels.array(["x", None])
    assert s[1] is None
    s[0] = None
    assert s.tolist() == [None, None]
    assert "None" in repr(s)


def test_repr_never_shows_the_bytes_under_a_null():
    a = ckernels.array([1, 2, 3], type="3 * ?int64")
    a[1] = None
    assert "2" not in repr(a).split("type=")[0]


# ---- NumPy ---------------------------------------------------------------------------

def test_numpy_without_nulls_converts_as_today():
    a = ckernels.array([1, 2, 3], type="3 * ?int64")
    out = np.asarray(a)
    assert out.dtype == np.int64 and out.tolist() == [1, 2, 3]


def test_numpy_numbers_with_nulls_are_a_clear_error():
    a = ckernels.array([1, None, None])
    with pytest.raises(CKValueError, match=r"2 nulls.*fill_null.*na_value"):
        np.asarray(a)
    out = a.to_numpy(na_value=-1)
    assert out.tolist() == [1, -1, -1]
    f = a.to_numpy(na_value=np.nan)
    assert f.dtype == np.float64 and np.isnan(f[1])
    np.testing.assert_array_equal(f, pa.array([1, None, None]).to_numpy(zero_copy_only=False))


def test_numpy_strings_with_nulls():
    a = ckernels.array(["a", None, "c"])
    out = np.asarray(a)
    assert out.dtype == np.dtypes.StringDType(na_object=None)
    assert out.tolist() == ["a", None, "c"]
    na = a.to_numpy(na_value="NA")
    assert na.dtype == np.dtypes.StringDType(na_object="NA") and na.tolist() == ["a", "NA", "c"]


def test_stringdtype_with_na_object_comes_in():
    dt = np.dtypes.StringDType(na_object=None)
    a = ckernels.array(np.array(["a", None, "b"], dtype=dt))
    assert a.type.dtype == Type("?string")
    assert a.tolist() == ["a", None, "b"]
    b = ckernels.array(np.array(["a", "b"], dtype=dt))      # no nulls: as today
    assert b.tolist() == ["a", "b"]
    o = ckernels.array(np.array(["a", None], dtype=object))
    assert o.tolist() == ["a", None] and o.null_count == 1
    m = ckernels.array(np.array([["a", None], [None, "dd"]], dtype=dt))
    assert m.tolist() == [["a", None], [None, "dd"]] and m.null_count == 2
    assert m.type.dtype == Type("?string")
    by = ckernels.array(np.array([b"x", None], dtype=object))
    assert by.type.dtype == Type("?bytes") and by.tolist() == [b"x", None]
    with pytest.raises(CKValueError, match="missing value"):   # NaN among text: refused
        ckernels.array(np.array(["a", np.nan], dtype=object))


# ---- ops -----------------------------------------------------------------------------

def test_ops_propagate_and_reductions_skip_nulls():
    vals = [1, None, 3]
    a = ckernels.array(vals)
    r = ops.add(a, 1)
    assert r.type.dtype == Type("?int64")
    assert r.tolist() == pc.add(pa.array(vals), 1).to_pylist()
    assert ops.sum(a) == pc.sum(pa.array(vals)).as_py() == 4
    assert (a + 1).tolist() == r.tolist()                  # operators: the same kernels
    assert (a * a).tolist() == pc.multiply(pa.array(vals), pa.array(vals)).to_pylist()
    assert np.add(a, 1).tolist() == r.tolist()
    f = ckernels.array([1.5, None, 2.0])
    pf = pa.array([1.5, None, 2.0])
    assert ops.sum(f) == pc.sum(pf).as_py()
    assert f.sum() == pc.sum(pf).as_py()
    assert f.max() == pc.max(pf).as_py() and f.min() == pc.min(pf).as_py()
    assert f.mean() == pc.mean(pf).as_py()
    assert a.mean() == pc.mean(pa.array(vals)).as_py() == 2.0
    assert ckernels.array([None, None], dtype="float64").mean() is None


# ---- hypothesis ----------------------------------------------------------------------

_ints = st.lists(st.one_of(st.none(), st.integers(-2**40, 2**40)), min_size=1, max_size=30)
_strs = st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=1, max_size=30)
_floats = st.lists(st.one_of(st.none(), st.floats(allow_nan=False)), min_size=1, max_size=30)
_bools = st.lists(st.one_of(st.none(), st.booleans()), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(st.one_of(_ints, _strs, _floats, _bools))
def test_random_lists_with_none_match_pyarrow(values):
    if all(v is None for v in values):
        return                           # Arrow's `null` type; ours is ?float64
    a = ckernels.array(values)
    p = pa.array(values)
    assert a.tolist() == p.to_pylist()
    assert a.null_count == p.null_count
    assert a.is_null().tolist() == p.is_null().to_pylist()
    assert [a[i] for i in range(len(values))] == p.to_pylist()


def test_copy_pickle_compare_astype_keep_the_nulls():
    import pickle
    a = ckernels.array(["x", None, "z"])
    assert pickle.loads(pickle.dumps(a)).tolist() == ["x", None, "z"]
    assert a.copy().null_count == 1
    n = ckernels.array([1, None, 3])
    assert (n == 1).tolist() == pc.equal(pa.array([1, None, 3]), 1).to_pylist()
    assert n.astype("?float64").tolist() == [1.0, None, 3.0]
    with pytest.raises(CKValueError, match="1 null"):
        n.astype("float64")
    assert list(n) == [1, None, 3] and n[::2].copy().tolist() == [1, 3]
