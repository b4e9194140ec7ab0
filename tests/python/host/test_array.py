"""ckernel arrays from Python: construction and inference, indexing and
slicing, strings, var dims, structs, NumPy and DLPack interop, display."""

import gc

import numpy as np
import pytest

import ckernels
from ckernels import errors, types as T

BUILTIN_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                  np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                  np.complex128]


@pytest.mark.parametrize("obj, type_str", [
    ([1, 2, 3, 4], "strided * int64"),
    ([True, False], "strided * bool"),
    ([1, 2.5], "strided * float64"),
    ([1, 2j], "strided * complex128"),
    ([[1, 2], [3, 4], [5, 6]], "strided * strided * int64"),
    ([[1], [2, 3], []], "strided * var * int64"),
    ([[[1, 2]], [[3, 4], [5, 6]]], "strided * var * 2 * int64"),
    (["a", "bc"], "strided * string"),
    ([["a"], ["b", "c"]], "strided * var * string"),
    ("hello", "string"),
    (3, "int64"),
    ([2**63], "strided * uint64"),
    ([], "strided * float64"),
    ({"x": 1.0, "name": "a"}, "{x: float64, name: string}"),
    ([{"x": 1, "tags": ["a"]}, {"x": 2, "tags": ["b", "c"]}],
     "strided * {x: int64, tags: var * string}"),
])
def test_inference_and_round_trip(obj, type_str):
    a = ckernels.array(obj)
    assert str(a.type) == type_str
    assert a.to_list() == obj


def test_inference_errors():
    with pytest.raises(errors.CKTypeError, match="mix"):
        ckernels.array([1, "a"])
    with pytest.raises(errors.CKValueError, match="nesting"):
        ckernels.array([1, [2]])
    with pytest.raises(errors.CKOverflowError):
        ckernels.array([2**64])
    with pytest.raises(errors.CKTypeError):
        ckernels.array([object()])


def test_explicit_types_and_checked_assignment():
    a = ckernels.array([1, 2, 3], type="3 * int8")
    assert a.to_list() == [1, 2, 3] and str(a.type) == "3 * int8"
    assert ckernels.array([1.0, 2.0], type="strided * int32").to_list() == [1, 2]
    with pytest.raises(errors.CKOverflowError, match="300"):
        ckernels.array([1, 300], type="strided * uint8")
    with pytest.raises(errors.CKValueError, match="fractional"):
        ckernels.array([1.5], type="strided * int32")
    with pytest.raises(errors.CKValueError, match="expected 3"):
        ckernels.array([1, 2], type="3 * int32")
    with pytest.raises(errors.CKTypeError):
        ckernels.array([1, 2], type="strided * string")
    with pytest.raises(errors.CKOverflowError):
        ckernels.array([1e300], type="strided * float32")
    with pytest.raises(errors.NotSupportedError):
        ckernels.array(1, type="pointer[int32]")


def test_debug_repr_like_the_seed():
    a = ckernels.array([1, 2, 3, 4], type="strided * int32")
    text = ckernels.debug_repr(a)
    for fragment in ("address:", "refcount: 1", "type: strided * int32", "stride: 4",
                     "size: 4", "(embedded in array memory)", "read", "write"):
        assert fragment in text, fragment
    assert "strided * int32" in a._repr_html_()
    assert repr(a) == "ckernels.array([1, 2, 3, 4], type='strided * int32')"


def test_indexing_and_slicing_views():
    data = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    a = ckernels.array(data, type="strided * 4 * int32")
    ref = np.array(data)
    assert a[1, 2] == 7 and a[-1, -1] == 12
    assert a[1].to_list() == [5, 6, 7, 8]
    for key in [np.s_[::2], np.s_[::-1], np.s_[1:], np.s_[-2:], np.s_[:, ::-2],
                np.s_[1, 1:3], np.s_[::-2, ::3], np.s_[5:], np.s_[:, 10:0:-1]]:
        assert a[key].to_list() == ref[key].tolist(), key
    assert str(a[:, ::2].type) == "strided * 2 * int32"
    assert len(a) == 3 and [r.to_list() for r in a] == data
    with pytest.raises(errors.CKIndexError, match="out of bounds"):
        a[3]
    with pytest.raises(errors.CKIndexError):
        a[0, 0, 0]
    with pytest.raises(errors.InvalidArgumentError):
        a[::0]
    with pytest.raises(errors.CKIndexError):   # NumPy: IndexError (not a struct)
        a["x"]


def test_views_share_and_outlive():
    a = ckernels.array([1, 2, 3, 4], type="strided * int32")
    v = a[::2]
    a[0] = 100
    assert v[0] == 100
    del a
    gc.collect()
    assert v.to_list() == [100, 3]


def test_readonly_views_refuse_writes():
    a = ckernels.array([1, 2, 3])
    a.set_readonly()
    assert a.flags == ("read",)
    with pytest.raises(errors.InvalidStateError, match="read-only"):
        a[0] = 5
    n = np.arange(3)
    n.flags.writeable = False
    with pytest.raises(errors.InvalidStateError):
        ckernels.asarray(n)[0] = 1


def test_strings_utf8_and_nul():
    words = ["", "ascii", "héllo", "日本語", "emoji 🎉", "nul\x00inside", "x" * 10000]
    a = ckernels.array(words)
    assert a.to_list() == words
    assert [a[i] for i in range(len(words))] == words
    a[1] = "changed ✓"
    assert a[1] == "changed ✓"
    with pytest.raises(errors.CKValueError, match="UTF-8"):
        a[0] = b"\xff\xfe"
    # asarray copies what it cannot share (NumPy's asarray semantics)
    assert ckernels.asarray(np.array(words)).to_list() == words
    assert ckernels.array(np.array(["a", "bé"])).to_list() == ["a", "bé"]
    assert list(a.to_numpy()[2:4]) == words[2:4]


def test_var_dims_with_empty_rows():
    rows = [[], [1.5], [2.0, 3.0], [], [4.0] * 100]
    a = ckernels.array(rows)
    assert str(a.type) == "strided * var * float64"
    assert a.to_list() == rows
    assert a[4].to_list() == [4.0] * 100 and a[0].to_list() == []
    assert len(a[2]) == 2 and a[2][1] == 3.0
    assert a.shape == (5, -1)
    with pytest.raises(errors.CKTypeError, match="var"):
        np.asarray(a)


def test_structs():
    rows = [{"x": 1.5, "name": "a"}, {"x": -2.0, "name": "βγ"}]
    a = ckernels.array(rows)
    assert a[1].to_list() == rows[1]
    a[0] = {"x": 9.0, "name": "z"}
    assert a.to_list()[0] == {"x": 9.0, "name": "z"}
    with pytest.raises(errors.CKValueError, match="fields"):
        a[0] = {"x": 1.0}


@pytest.mark.parametrize("dtype", BUILTIN_DTYPES)
def test_numpy_round_trip_every_dtype(dtype):
    rng = np.random.default_rng(0)
    n = (rng.standard_normal((3, 5)) * 50).astype(dtype)
    a = ckernels.asarray(n)
    assert str(a.type) == f"strided * strided * {T.from_numpy_dtype(n.dtype)}"
    back = np.asarray(a)
    assert back.dtype == n.dtype and np.shares_memory(back, n)
    np.testing.assert_array_equal(back, n)
    c = ckernels.array(n)  # a copy
    assert not np.shares_memory(np.asarray(c), n)
    np.testing.assert_array_equal(np.asarray(c), n)
    assert c.to_list() == n.tolist()


def test_numpy_non_contiguous_and_negative_strides():
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    for view in (base[::2, ::-3], base[::-1], base.T, base[1:5, 2]):
        a = ckernels.asarray(view)
        assert a.strides == view.strides and a.shape == view.shape
        back = np.asarray(a)
        assert np.shares_memory(back, base)
        np.testing.assert_array_equal(back, view)
        assert a.to_list() == view.tolist()
    a = ckernels.asarray(base)
    a[2, 3] = -1.0
    assert base[2, 3] == -1.0


def test_asarray_keeps_numpy_alive():
    n = np.arange(5.0)
    a = ckernels.asarray(n)
    live = ckernels.live_count()
    del n
    gc.collect()
    assert a.to_list() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del a
    gc.collect()
    assert ckernels.live_count() == live - 2  # the array and its external block


def test_dlpack_both_ways():
    a = ckernels.array([[1, 2], [3, 4]], type="strided * strided * int32")
    t = np.from_dlpack(a)
    assert t.tolist() == [[1, 2], [3, 4]] and np.shares_memory(t, np.asarray(a))
    assert a.__dlpack_device__() == (1, 0)
    n = np.arange(6, dtype=np.int16)
    b = ckernels.from_dlpack(n)
    assert np.shares_memory(np.asarray(b), n) and b.to_list() == list(range(6))


def test_struct_numpy_view():
    dt = np.dtype([("x", np.float64), ("k", np.int32)], align=True)
    n = np.zeros(3, dtype=dt)
    n["x"] = [1, 2, 3]
    a = ckernels.asarray(n)
    assert str(a.type) == "strided * {x: float64, k: int32}"
    assert a[2].to_list() == {"x": 3.0, "k": 0}
    assert np.shares_memory(np.asarray(a), n)


def test_empty_and_zero_size():
    e = ckernels.empty("strided * 3 * float32", (0,))
    assert e.shape == (0, 3) and e.to_list() == []
    z = ckernels.zeros(4, "int16")
    assert z.to_list() == [0, 0, 0, 0]
    s = ckernels.empty("strided * string", (2,))   # the old call form; strings start empty
    assert s.to_list() == ["", ""]
    assert np.asarray(ckernels.array(np.zeros((0, 4)))).shape == (0, 4)


def test_array_of_a_structured_ndarray_copies_its_structs():
    # a structured array is one struct per element (not nested lists of its
    # tuples' items); asarray refuses unaligned (packed) layouts with the
    # reason, array copies them into the C layout of the same fields
    dt = np.dtype([("x", "f8"), ("m", "i4")], align=True)
    a = np.zeros(3, dt)
    a["x"], a["m"] = [1.5, 2.5, 3.5], [1, 2, 3]
    b = ckernels.array(a)
    assert str(b.type) == "strided * {x: float64, m: int32}" and b.shape == (3,)
    np.testing.assert_array_equal(np.asarray(b["x"]), a["x"])
    np.testing.assert_array_equal(np.asarray(b["m"]), a["m"])
    assert not np.shares_memory(np.asarray(b["x"]), a)
    packed = np.zeros(2, np.dtype([("x", "f8"), ("m", "i4")]))
    packed["m"] = [7, 8]
    with pytest.raises(ckernels.errors.CKTypeError, match="align=True"):
        ckernels.asarray(packed)
    assert ckernels.array(packed).tolist() == [{"x": 0.0, "m": 7}, {"x": 0.0, "m": 8}]
