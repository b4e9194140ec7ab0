"""The small-call fast path of host arrays (``ckernels.Array``): operators and
NumPy ufuncs on numeric arrays run through the registry operations' ufuncs
over cached NumPy views, results are wrapped without a copy, conversions are
single C calls (``ckernels._arrays``).  NumPy is the oracle; the general path
(``ck_array_apply_op``) must agree wherever both apply; lifetimes follow the
library's rules (the memblock-balance fixture checks every test)."""

import gc
import operator
import pickle
import sys
import weakref

import numpy as np
import pytest

import ckernels
from ckernels import _arrays
from ckernels.errors import CKernelError, InvalidStateError

A = sys.modules["ckernels.host.array"]

NUMERIC = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float32",
           "float64", "complex128"]


def values(dtype, n=7, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(n) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 50, n).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


def general(fn):
    """Run ``fn`` with the fast path switched off (every array reports no
    cached view): the general path's answer."""
    orig = A.Array._fast_view
    A.Array._fast_view = lambda self: False
    try:
        return fn()
    finally:
        A.Array._fast_view = orig


def same(got, want):
    assert isinstance(got, ckernels.Array), type(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if want.dtype.kind in "fc":   # the registry's kernels may round complex products
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15, atol=0)  # differently
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


# ---- results equal NumPy's (and the general path's) ------------------------------

BINARY = [operator.add, operator.sub, operator.mul, operator.lt, operator.eq,
          operator.ge]


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_operators_equal_numpy(dtype, op):
    if dtype == "bool" and op is operator.sub:
        pytest.skip("NumPy has no boolean subtract")
    x, y = values(dtype), values(dtype, seed=1)
    a, b = ckernels.asarray(x.copy()), ckernels.asarray(y.copy())
    got = op(a, b)
    same(got, op(x, y))
    slow = general(lambda: op(ckernels.array(x), ckernels.array(y)))
    assert slow.type == got.type
    np.testing.assert_array_equal(np.asarray(got), np.asarray(slow))   # the same kernels


@pytest.mark.parametrize("xdt,ydt", [("int8", "int64"), ("int32", "float32"),
                                     ("uint64", "int64"), ("float32", "complex128"),
                                     ("bool", "int16"), ("uint8", "float64")])
def test_promotion_equals_numpy(xdt, ydt):
    x, y = values(xdt), values(ydt, seed=3)
    same(ckernels.asarray(x) + ckernels.asarray(y), x + y)
    same(ckernels.asarray(x) * ckernels.asarray(y), x * y)


@pytest.mark.parametrize("scalar", [2, 2.5, True, 1 + 2j])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64"])
def test_weak_python_scalars_nep50(dtype, scalar):
    x = values(dtype)
    a = ckernels.asarray(x)
    if np.dtype(dtype).kind in "iu" and isinstance(scalar, (float, complex)) or \
            np.dtype(dtype).kind == "f" and isinstance(scalar, complex):
        pass   # promotes: still NumPy's answer
    same(a * scalar, x * scalar)
    same(scalar - a, scalar - x)


def test_broadcasting_2d():
    x = np.arange(12.0).reshape(3, 4)
    row, col = np.arange(4.0), np.arange(3.0).reshape(3, 1)
    a = ckernels.asarray(x)
    same(a + ckernels.asarray(row), x + row)
    same(a * ckernels.asarray(col), x * col)
    same(ckernels.asarray(col) < ckernels.asarray(row), col < row)


def test_transposed_and_strided_views():
    x = np.arange(24.0).reshape(4, 6)
    a = ckernels.asarray(x)
    same(a.T + 1.0, x.T + 1.0)
    same(a[::2] * a[1::2], x[::2] * x[1::2])
    same(a[1:-1] - a[:-2], x[1:-1] - x[:-2])


def test_zero_d_results_are_arrays():
    r = ckernels.array(3.0) + 1.0
    assert isinstance(r, ckernels.Array) and r.ndim == 0 and r.item() == 4.0
    r = -ckernels.array(np.int32(5))
    assert r.dtype == np.int32 and r.item() == -5


@pytest.mark.parametrize("ufunc", [np.sin, np.exp, np.sqrt, np.negative, np.absolute,
                                   np.floor])
def test_numpy_ufuncs_equal_numpy(ufunc):
    x = np.abs(values("float64")) + 0.5
    got = ufunc(ckernels.asarray(x))
    same(got, ufunc(x))


def test_ufunc_out_and_aliasing():
    x, y = values("float64"), values("float64", seed=2)
    a, b = ckernels.array(x), ckernels.array(y)
    out = ckernels.empty(7)
    assert np.add(a, b, out=out) is out
    same(out, x + y)
    assert np.multiply(a, 2.0, out=(out,)) is out
    same(out, x * 2.0)
    # out aliases an input: in place, and shifted (overlap: NumPy copies)
    np.add(a, b, out=a)
    same(a, x + y)
    z = np.arange(10.0)
    c = ckernels.array(z)
    np.add(c[:8], c[:8], out=c[1:9])
    zz = z.copy()
    np.add(zz[:8], zz[:8], out=zz[1:9])
    same(c, zz)


def test_inplace_operators():
    x = values("float64")
    a = ckernels.array(x)
    before = a
    a += 1.0
    a *= a
    assert a is before
    same(a, (x + 1.0) * (x + 1.0))
    i = ckernels.array([1, 2, 3])
    i += 2
    same(i, np.array([3, 4, 5]))


def test_inplace_that_needs_a_cast_takes_the_general_path():
    i = ckernels.array([1, 2, 3])
    with pytest.raises(CKernelError, match="fractional part lost"):
        i += 1.5
    f32 = ckernels.array([1.0, 2.0], dtype="float32")
    f32 += ckernels.array([1.0, 1.0])     # float64 into float32: the general path
    same(f32, np.array([2.0, 3.0], np.float32))


def test_read_only_outputs_are_rejected():
    a = ckernels.array([1.0, 2.0])
    ro = ckernels.array([0.0, 0.0]).set_readonly()
    with pytest.raises(InvalidStateError, match="read-only"):
        np.add(a, a, out=ro)
    with pytest.raises(InvalidStateError, match="read-only"):
        ro += 1.0
    np.testing.assert_array_equal(np.asarray(ro), [0.0, 0.0])
    # an array made read-only after its view was cached
    b = ckernels.array([1.0, 2.0])
    b += 1.0
    b.set_readonly()
    with pytest.raises(InvalidStateError, match="read-only"):
        b += 1.0
    with pytest.raises(ValueError):
        np.asarray(b)[0] = 5.0
    np.testing.assert_array_equal(np.asarray(b), [2.0, 3.0])


def test_errors_keep_their_classes():
    with pytest.raises(ckernels.errors.CKZeroDivisionError):
        ckernels.array([1, 2]) // 0
    with pytest.raises(ckernels.errors.CKOverflowError):
        ckernels.array([1, 2], dtype="int8") + 300
    with pytest.raises(ckernels.errors.CKValueError, match="broadcast"):
        ckernels.array([1.0, 2.0]) + ckernels.array([1.0, 2.0, 3.0])


def test_other_types_keep_the_general_path():
    s = ckernels.array(["a", "bc"])
    same_s = s + ckernels.array(["x", "y"])
    assert same_s.tolist() == ["ax", "bcy"]
    v = ckernels.array([[1.0], [2.0, 3.0]])
    assert (v + 1.0).tolist() == [[2.0], [3.0, 4.0]]
    fixed = ckernels.array([1.0, 2.0], type="2 * float64")
    r = fixed + 1.0
    assert r.tolist() == [2.0, 3.0]
    assert r.type == general(lambda: fixed + 1.0).type


# ---- reductions and indexing ---------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_full_reductions_equal_general_path(dtype):
    x = values(dtype, 40)
    a = ckernels.asarray(x)
    for name in ("sum", "prod", "min", "max", "any", "all"):
        if dtype == "complex128" and name in ("min", "max"):
            continue
        got = getattr(a, name)()
        want = general(lambda: getattr(ckernels.array(x), name)())
        assert type(got) is type(want), name
        assert got == want or (got != got and want != want), name
        ref = getattr(x, name)()
        assert got.dtype == np.asarray(ref).dtype, name
        np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_reduction_arguments_take_the_general_path():
    x = np.arange(12.0).reshape(3, 4)
    a = ckernels.asarray(x)
    np.testing.assert_array_equal(np.asarray(a.sum(axis=0)), x.sum(axis=0))
    np.testing.assert_array_equal(np.asarray(a.max(1, keepdims=True)),
                                  x.max(1, keepdims=True))


def test_slices_and_integers():
    x = np.arange(10.0)
    a = ckernels.asarray(x)
    for key in (slice(1, -1), slice(None, None, -2), slice(3, 100), slice(-3, None)):
        v = a[key]
        assert isinstance(v, ckernels.Array)
        np.testing.assert_array_equal(np.asarray(v), x[key])
    assert a[3] == 3.0 and type(a[3]) is np.float64
    assert a[-1] == 9.0
    with pytest.raises(IndexError):
        a[10]
    with pytest.raises(ValueError):
        a[::0]


# ---- cached views and lifetimes ------------------------------------------------

def test_cached_view_sees_writes_from_every_side():
    x = np.zeros(5)
    a = ckernels.asarray(x)
    a += 1.0                 # the cached view exists now
    x[2] = 7.0               # a write through the NumPy owner
    np.testing.assert_array_equal(np.asarray(a + 0.0), [1, 1, 7, 1, 1])
    a[0] = 5.0               # a write through ckernels' assignment
    assert (a + 0.0)[0] == 5.0
    b = a[1:]                # a view: shares the memory, its own cache
    b += 10.0
    np.testing.assert_array_equal(x, [5, 11, 17, 11, 11])
    np.testing.assert_array_equal(np.asarray(a), x)


def test_views_handed_out_are_fresh_objects():
    a = ckernels.array(np.arange(6.0))
    a += 0.0
    v = np.asarray(a)
    v.shape = (2, 3)          # a consumer changing its view changes nothing here
    w = np.asarray(a)
    assert w.shape == (6,) and a.shape == (6,)
    assert v is not w
    assert (a + 1.0).shape == (6,)


def test_views_outlive_the_array():
    a = ckernels.array(np.arange(5.0))
    a += 1.0
    views = [np.asarray(a), a.__array__(), np.asarray(memoryview(a)), a[1:]]
    del a
    gc.collect()
    for v in views:
        np.testing.assert_array_equal(np.asarray(v), [1, 2, 3, 4, 5][-len(v):])
    # the zero-copy view of __array__ holds the C array, not the Python object
    b = ckernels.array(np.arange(3.0))
    v = b.__array__()
    ref = weakref.ref(b)
    del b
    assert ref() is None
    v[0] = 9.0               # the memory is still there (and writable)
    np.testing.assert_array_equal(v, [9.0, 1.0, 2.0])


def test_wrapped_results_outlive_their_inputs():
    a = ckernels.array(np.arange(4.0))
    r = a * 2.0
    s = r[1:]
    del a, r
    gc.collect()
    np.testing.assert_array_equal(np.asarray(s), [2.0, 4.0, 6.0])


def test_asarray_keeps_the_ndarray_alive():
    x = np.arange(6.0)
    a = ckernels.asarray(x)
    xref = weakref.ref(x)
    del x
    gc.collect()
    assert xref() is not None
    np.testing.assert_array_equal(np.asarray(a), np.arange(6.0))
    del a
    gc.collect()
    assert xref() is None


def test_asarray_read_only_ndarray():
    x = np.arange(3.0)
    x.flags.writeable = False
    a = ckernels.asarray(x)
    assert not a.writable
    with pytest.raises(InvalidStateError):
        a += 1.0
    same(a + 1.0, x + 1.0)


def test_no_reference_cycle_from_the_cache():
    a = ckernels.array(np.arange(3.0))
    a += 1.0
    _ = a + a
    gc.disable()
    try:
        ref = weakref.ref(a)
        del a
        assert ref() is None       # freed by refcount alone
    finally:
        gc.enable()


def test_pickle_and_repr_of_fast_results():
    r = ckernels.array([1.0, 2.0]) + 1.0
    assert repr(r) == "ckernels.array([2., 3.], type='strided * float64')"
    back = pickle.loads(pickle.dumps(r))
    same(back, np.array([2.0, 3.0]))


def test_c_helpers_reject_bad_arguments():
    with pytest.raises(ValueError):
        _arrays.view(0, np.dtype("f8"), True)
    with pytest.raises(TypeError):
        _arrays.view(1, "f8", True)
    with pytest.raises(TypeError):
        _arrays.wrap([1, 2], 1)
    with pytest.raises(ValueError):
        _arrays.dims(0)


def test_ops_and_registry_ufuncs_on_arrays():
    x, y = values("float64"), values("float64", seed=5)
    a, b = ckernels.array(x), ckernels.array(y)
    same(ckernels.ops.add(a, b), x + y)
    same(ckernels.ops.add.ufunc(a, b), x + y)
    out = ckernels.empty(7)
    assert ckernels.ops.multiply(a, b, out=out) is out
    same(out, x * y)
    same(ckernels.ops.maximum(a, 0.0), np.maximum(x, 0.0))


def test_floating_point_conditions_follow_numpy_errstate():
    a = ckernels.array([1.0, 0.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = a / 0.0
    np.testing.assert_array_equal(np.asarray(r), [np.inf, np.nan])
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        a / 0.0
