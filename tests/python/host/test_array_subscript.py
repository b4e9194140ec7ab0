"""The subscript of host arrays in C (``ckernels._arrays.Subscript``,
``src/python/arrays/subscript.c``): ints, slices and tuples of them on numeric
strided arrays are read and written without Python code, with exactly the
results and errors of the general path (``ArrayLike.__getitem__`` /
``__setitem__``, called directly here as the oracle) and NumPy's values;
every other key and array takes the general path."""

import sys

import numpy as np
import pytest

import ckernels
from ckernels import _arrays
from ckernels.arraylike import ArrayLike
from ckernels.errors import CKIndexError, CKOverflowError, CKValueError

NUMERIC = ["bool", "int8", "uint8", "int16", "uint32", "int64", "uint64", "float16",
           "float32", "float64", "complex64", "complex128"]
SHAPES = [(10,), (3, 4), (2, 3, 4)]


def data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 100, shape)
    return (x % 2 == 0) if dtype == "bool" else x.astype(dtype)


def random_key(rng, shape):
    """An int/slice key (an int, a slice, or a tuple of up to ndim of them),
    bounds sometimes out of range or huge (clamped by slices)."""
    n = int(rng.integers(1, len(shape) + 1))
    entries = []
    for d in shape[:n]:
        if rng.random() < 0.5:
            entries.append(int(rng.integers(-d, d)))
        else:
            def bound():
                return None if rng.random() < 0.3 else int(rng.integers(-d - 3, d + 3))
            step = None if rng.random() < 0.4 else int(rng.choice([-3, -2, -1, 1, 2, 5]))
            entries.append(slice(bound(), bound(), step))
    if n == 1 and rng.random() < 0.5:
        return entries[0]
    return tuple(entries)


def check_same(got, want, general=None):
    if isinstance(want, np.ndarray):
        assert isinstance(got, ckernels.Array), type(got)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
        if general is not None:
            assert got.type == general.type and got.strides == general.strides
    else:
        assert type(got) is type(want), (type(got), type(want))
        assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", NUMERIC)
def test_reads_agree_with_numpy_and_the_general_path(dtype, shape):
    x = data(dtype, shape)
    a = ckernels.array(x)
    rng = np.random.default_rng(len(shape) * 31 + len(dtype))
    for _ in range(60):
        key = random_key(rng, shape)
        want = x[key]
        got = a[key]
        check_same(got, want, ArrayLike.__getitem__(a, key))
        if isinstance(got, ckernels.Array) and got.size:   # a view of a's memory
            assert np.shares_memory(np.asarray(got), np.asarray(a))


def test_reads_of_views_and_numpy_integer_indices():
    x = np.arange(24.0).reshape(4, 6)[::-1, 1::2]   # negative and non-unit strides
    a = ckernels.asarray(x)
    for key in [0, -1, (1, 2), (np.int64(2), np.uint8(1)), (slice(None, None, -1), 0),
                (slice(1, None), slice(None, None, 2)), np.int32(3), (-4, -3)]:
        check_same(a[key], x[key], ArrayLike.__getitem__(a, key))
    r = a[1:3]
    assert r.type == a.type and r.dtype == a.dtype       # a slice keeps the type
    assert np.shares_memory(np.asarray(r), np.asarray(a))


@pytest.mark.parametrize("key", [10, -11, (1, 7), (3, 0), (0, 0, 0), 2**70, -2**63,
                                 np.uint64(2**64 - 1), (1, 2**65)])
def test_out_of_range_and_too_many_indices_raise_as_the_general_path(key):
    a = ckernels.array(np.arange(12.0).reshape(3, 4) if isinstance(key, tuple)
                       else np.arange(10.0))
    with pytest.raises(Exception) as general:
        ArrayLike.__getitem__(a, key)
    with pytest.raises(type(general.value)) as fast:
        a[key]
    assert str(fast.value) == str(general.value)
    assert isinstance(fast.value, IndexError)
    with pytest.raises(type(general.value)):
        a[key] = 1.0


def test_other_keys_take_the_general_path():
    x = np.arange(12.0).reshape(3, 4)
    a = ckernels.array(x)
    for key in [(), Ellipsis, (0, Ellipsis), None, (None, 1), [0, 2], (slice(None), [1, 3]),
                x > 5, True, (1, slice(np.int64(1), None)), slice(np.int8(1), None)]:
        want = x[key]
        got = a[key]
        if isinstance(want, np.ndarray):
            np.testing.assert_array_equal(np.asarray(got), want)
            assert got.shape == want.shape
        else:
            assert got == want
    s = ckernels.array(["a", "bé", "c"])
    assert s[1] == "bé" and s[-1] == "c" and s[1:].tolist() == ["bé", "c"]
    v = ckernels.array([[1, 2], [3], [4, 5, 6]])
    assert v[2].tolist() == [4, 5, 6] and v[1:].tolist() == [[3], [4, 5, 6]]
    assert v[2, 1] == 5


VALUES = [2.5, -1.0, 3, 300, -1, 2**63, 2**64, 2**70, 10**400, 1 + 2j, True, False,
          np.float64(1.5), np.float32(1.5), np.int8(-3), np.int64(7), np.uint64(9),
          np.complex128(1j), np.bool_(True), float("nan"), float("inf"), [1.0], None, "1"]


def outcome(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001 -- compared between the two paths
        return type(e)
    return None


@pytest.mark.parametrize("dtype", NUMERIC)
def test_element_writes_agree_with_the_general_path(dtype):
    """Every value kind into one element: the same value stored, or the same
    error class (the checked conversions: int8 a[0] = 300 is
    CKOverflowError, a fraction into an integer array a CKValueError)."""
    for value in VALUES:
        for shape, key in (((5,), 2), ((5,), -1), ((2, 3), (1, 2)), ((2, 3), (-1, np.int64(0)))):
            fast, slow = ckernels.zeros(shape, dtype), ckernels.zeros(shape, dtype)
            e_fast = outcome(lambda: fast.__setitem__(key, value))
            e_slow = outcome(lambda: ArrayLike.__setitem__(slow, key, value))
            assert e_fast is e_slow, (dtype, value, key, e_fast, e_slow)
            np.testing.assert_array_equal(np.asarray(fast), np.asarray(slow))
    a = ckernels.zeros(3, "int8")
    with pytest.raises(CKOverflowError):
        a[0] = 300
    with pytest.raises(CKOverflowError):
        ckernels.zeros(3, "uint8")[1] = -1
    assert a.tolist() == [0, 0, 0]


@pytest.mark.parametrize("dtype", ["int8", "uint64", "float32", "float64", "complex128",
                                   "bool"])
def test_sub_array_writes_agree_with_the_general_path(dtype):
    keys = [0, (slice(None), 1), slice(1, None), (1, slice(None, None, -2)),
            (slice(2**70), 0), (slice(-2**70, None, 2**65), 1), (slice(None), slice(None))]
    for value in VALUES:
        for key in keys:
            fast, slow = ckernels.zeros((3, 4), dtype), ckernels.zeros((3, 4), dtype)
            e_fast = outcome(lambda: fast.__setitem__(key, value))
            e_slow = outcome(lambda: ArrayLike.__setitem__(slow, key, value))
            assert e_fast is e_slow, (dtype, value, key, e_fast, e_slow)
            np.testing.assert_array_equal(np.asarray(fast), np.asarray(slow))


def test_array_values_into_slices():
    x = np.arange(12.0).reshape(3, 4)
    a = ckernels.array(x)
    a[1:] = a[:-1]                       # overlapping: as if through a copy
    x[1:] = x[:-1].copy()
    np.testing.assert_array_equal(np.asarray(a), x)
    a[:, 0] = ckernels.array(np.array([7.0, 8.0, 9.0]))
    a[0] = np.array([1.0, 2.0, 3.0, 4.0])
    a[2, ::-1] = ckernels.array(np.arange(4.0))
    x[:, 0] = [7.0, 8.0, 9.0]
    x[0] = [1.0, 2.0, 3.0, 4.0]
    x[2, ::-1] = np.arange(4.0)
    np.testing.assert_array_equal(np.asarray(a), x)
    a[0:2] = ckernels.array(np.ones((1, 2, 4)))   # a leading size-1 dim: the general path
    x[0:2] = 1.0
    np.testing.assert_array_equal(np.asarray(a), x)
    with pytest.raises(CKValueError, match="broadcast"):
        a[:] = ckernels.array(np.ones(3))
    a[1] = np.full(4, 0.1, dtype=np.float32)       # another dtype: the general path
    x[1] = np.float32(0.1)
    np.testing.assert_array_equal(np.asarray(a), x)
    i8 = ckernels.zeros(4, "int8")
    with pytest.raises(CKOverflowError):
        i8[1:3] = np.array([1, 300])                   # int64 values: checked


def test_read_only_arrays_read_fast_and_refuse_writes():
    a = ckernels.array(np.arange(6.0).reshape(2, 3))
    a.set_readonly()
    assert a[1, 2] == 5.0 and a[0].tolist() == [0.0, 1.0, 2.0]
    for key in [0, (1, 1), slice(None), (slice(None), 0)]:
        with pytest.raises(Exception) as general:
            ArrayLike.__setitem__(a, key, 1.0)
        with pytest.raises(type(general.value)):
            a[key] = 1.0
    assert np.asarray(a).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_del_is_refused_as_numpy_refuses_it():
    a = ckernels.array([1.0, 2.0])
    with pytest.raises(CKValueError, match="cannot delete array elements"):
        del a[0]
    with pytest.raises(ValueError):
        del np.array([1.0])[0]


def test_common_subscripts_run_no_python_code():
    """Reads and writes of ints, slices and tuples of them on a numeric array
    are one C call (no Python frame), once the array's view is cached."""
    a = ckernels.array(np.arange(12.0).reshape(3, 4))
    b = ckernels.array(np.arange(10, dtype=np.int32))
    a[0, 0], b[0]   # the cached views
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)
    f = np.float64(2.0)
    sys.setprofile(profile)
    try:
        a[1, 2]
        a[1]
        a[1:3]
        a[::-1, 1]
        b[3]
        b[np.int64(-1)]
        b[2:8:2]
        a[1, 2] = 2.5
        a[2] = 1.0
        a[:, 1] = f
        b[3] = 7
        b[1:4] = np.int32(5)
        a[0] = a[1]
    finally:
        sys.setprofile(None)
    assert calls == []
    assert type(a).__getitem__ is _arrays.Subscript.__getitem__


def test_assigning_through_slices_of_var_dims():
    # a slice of an inner var dim (a[:, 1:]) has new row slots over a's
    # elements: an assignment through it changed nothing and said nothing; it
    # now fills those elements in place, their lengths kept (Python lists'
    # slice assignment of equal length as the oracle); a[...] assigns the whole
    # array as a[()] (an empty var array stayed empty)
    rows = [[1, 2], [3, 4, 5], [6]]
    b = ckernels.array(rows)
    b[:, 1:] = 0
    for r in rows:
        r[1:] = [0] * len(r[1:])
    assert b.tolist() == rows
    b[..., ::2] = 7
    for r in rows:
        r[::2] = [7] * len(r[::2])
    assert b.tolist() == rows
    b[0:2, :1] = [[4], [5]]
    rows[0][:1], rows[1][:1] = [4], [5]
    assert b.tolist() == rows
    with pytest.raises(CKValueError, match="cannot broadcast"):
        b[:, :] = ckernels.array([[1, 2, 3]] * 3)     # lengths are kept
    b[1, 1:] = 9                                       # one row: a view of its items
    b[...] = ckernels.array([[1], [2, 3], []])
    assert b.tolist() == [[1], [2, 3], []]
    e = ckernels.empty(2, "var * int64")
    e[...] = ckernels.array([[1], [3, 4]])
    assert e.tolist() == [[1], [3, 4]]
    n = ckernels.array(np.zeros((2, 3)))
    n[:, 1:] = 5
    n[..., ::2] = 1
    assert n.tolist() == [[1.0, 5.0, 1.0], [1.0, 5.0, 1.0]]
