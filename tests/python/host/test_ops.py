"""ckernels.ops and ckernels.assign against NumPy: every registered family,
promotion, broadcasting (incl. zero-size and var dims), out=, errors,
reductions, threads, user kernels, and the low-level KernelBuilder."""

import gc
import warnings

import numpy as np
import pytest

import ckernels
from ckernels import errors, ops
from ckernels.lowlevel import KernelBuilder, make_assignment_kernel

NUMERIC = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
           np.uint64, np.float32, np.float64]


def _data(dtype, n=50, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        vals = rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True)
        edges = np.array([info.min, info.max, 0, 1], dtype=dtype)
        return np.concatenate([vals.astype(dtype), edges])
    return np.concatenate([rng.standard_normal(n) * 10, [0.0, -0.0, 1.0, 1e30]]).astype(dtype)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum",
                                  "equal", "less", "greater_equal", "not_equal"])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_binary_against_numpy(name, dtype):
    a, b = _data(dtype, seed=1), _data(dtype, seed=2)
    got = np.asarray(getattr(ops, name)(a, b))
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
def test_integer_floor_divide_and_mod_python_semantics(dtype):
    a = _data(dtype, seed=3)
    b = _data(dtype, seed=4)
    b[b == 0] = 3
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(ops.floor_divide(a, b)), np.floor_divide(a, b))
        np.testing.assert_array_equal(np.asarray(ops.mod(a, b)), np.mod(a, b))
    with pytest.raises(errors.CKZeroDivisionError, match="division by zero"):
        ops.floor_divide(a, np.zeros_like(a))


def test_true_divide_and_float_edges():
    a = np.array([1, -7, 0, 5], dtype=np.int32)
    b = np.array([2, 2, 0, 0], dtype=np.int32)
    with np.errstate(all="ignore"):
        want = np.true_divide(a, b)
    got = np.asarray(ops.divide(a, b))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)
    x = np.array([np.nan, 1.0, -np.inf])
    np.testing.assert_array_equal(np.asarray(ops.maximum(x, 0.0)), np.maximum(x, 0.0))
    np.testing.assert_array_equal(np.asarray(ops.fmax(x, 0.0)), np.fmax(x, 0.0))


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "log1p", "sin", "cos", "tan",
                                  "arctan", "floor", "ceil", "absolute", "negative"])
def test_unary_against_numpy(name):
    x = np.abs(_data(np.float64, seed=5)) / 7 + 0.1
    got = np.asarray(getattr(ops, name)(x))
    with np.errstate(over="ignore"):
        want = getattr(np, name)(x)
    np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)


def test_arctan2_and_promotion_matches_numpy():
    y, x = np.array([1.0, -1.0, 0.0]), np.array([0.5, -2.0, -1.0])
    np.testing.assert_allclose(np.asarray(ops.arctan2(y, x)), np.arctan2(y, x), rtol=4e-16)
    pairs = [(np.int8, np.uint8), (np.int64, np.uint64), (np.int32, np.float32),
             (np.int16, np.float16), (np.bool_, np.int8), (np.complex64, np.float64)]
    for ta, tb in pairs:
        got = np.asarray(ops.add(np.ones(2, ta), np.ones(2, tb)))
        assert got.dtype == np.result_type(ta, tb), (ta, tb)


def test_weak_python_scalars():
    a = np.arange(4, dtype=np.int8)
    assert str(ops.add(a, 1).dtype) == "int8"
    assert str(ops.add(a, 1.5).dtype) == "float64"
    assert str(ops.multiply(np.ones(2, np.float32), 2.0).dtype) == "float32"
    assert ops.add(2, 3) == 5 and ops.sqrt(16.0) == 4.0


@pytest.mark.parametrize("sa, sb", [((3, 1), (1, 4)), ((0, 4), (4,)), ((2, 3), ()),
                                    ((5,), (1,)), ((2, 1, 3), (4, 1))])
def test_broadcasting_shapes(sa, sb):
    a = np.arange(int(np.prod(sa)), dtype=np.float64).reshape(sa)
    b = np.arange(int(np.prod(sb)), dtype=np.float64).reshape(sb) + 1
    got = ops.add(a, b)
    want = a + b
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_broadcasting_errors_and_out():
    # NumPy operands: the operation's ufunc, NumPy's errors
    with pytest.raises(ValueError, match="broadcast"):
        ops.add(np.ones(3), np.ones(4))
    out = np.zeros((2, 3), dtype=np.float32)
    res = ops.multiply(np.ones((2, 3)), np.arange(3.0), out=out)
    assert res is out
    np.testing.assert_array_equal(out, np.ones((2, 3)) * np.arange(3.0))
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ops.add(np.ones(3), np.ones(3), out=ro)
    # ckernels arrays: the library's
    with pytest.raises(errors.CKernelError, match="broadcast"):
        ops.add(ckernels.asarray(np.ones(3)), np.ones(4))
    cout = ckernels.asarray(np.zeros((2, 3), dtype=np.float32))
    assert ops.multiply(ckernels.asarray(np.ones((2, 3))), np.arange(3.0), out=cout) is cout
    np.testing.assert_array_equal(np.asarray(cout), np.ones((2, 3)) * np.arange(3.0))
    with pytest.raises(errors.InvalidStateError):
        ops.add(ckernels.asarray(np.ones(3)), np.ones(3), out=ro)


def test_var_dims_elementwise():
    a = ckernels.array([[1.0], [2.0, 3.0], []])
    assert ops.add(a, 1.0).to_list() == [[2.0], [3.0, 4.0], []]
    assert ops.multiply(a, a).to_list() == [[1.0], [4.0, 9.0], []]


def test_reductions_against_numpy():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 5, 6))
    for name, npf in [("sum", np.sum), ("product", np.prod), ("min", np.min),
                      ("max", np.max)]:
        for axis in [None, 0, 1, 2, (0, 2), -1]:
            for keepdims in (False, True):
                got = getattr(ops, name)(x, axis=axis, keepdims=keepdims)
                want = npf(x, axis=axis, keepdims=keepdims)
                np.testing.assert_allclose(np.asarray(got) if not np.isscalar(got) else got,
                                           want, rtol=1e-13)
    i = np.arange(10, dtype=np.int32).reshape(2, 5)
    s = ops.sum(i, axis=1)
    assert str(s.dtype) == "int64" and s.to_list() == [10, 35]
    b = np.array([[True, False], [False, False]])
    assert ops.any(b, axis=1).to_list() == [True, False]
    assert ops.all(b) is np.False_                   # a NumPy scalar, as numpy.all
    total = ops.sum(np.arange(3.0))
    assert type(total) is np.float64 and total == 3.0
    assert type(ops.sum(np.arange(3, dtype=np.int32))) is np.int64
    with pytest.raises(errors.CKValueError, match="identity"):
        ops.min(np.zeros((0,)))
    with pytest.raises(errors.CKIndexError):
        ops.sum(x, axis=3)


def test_assign_modes_and_strings():
    d = ckernels.array([0, 0, 0], type="strided * int16")
    ckernels.assign(d, np.array([1.0, 2.0, 3.0]))
    assert d.to_list() == [1, 2, 3]
    with pytest.raises(errors.CKValueError, match="fractional"):
        ckernels.assign(d, [1.5, 0, 0])
    ckernels.assign(d, [1.5, 2.7, -3.9], errmode="nocheck")
    assert d.to_list() == [1, 2, -3]
    with pytest.raises(errors.CKOverflowError):
        ckernels.assign(d, [70000, 0, 0], errmode="overflow")
    with pytest.raises(errors.InvalidArgumentError):
        ckernels.assign(d, [1, 2, 3], errmode="bogus")
    s = ckernels.array(["", "", ""])
    ckernels.assign(s, [1.5, 2, 1e300])
    assert s.to_list() == ["1.5", "2.0", "1e+300"]
    n = ckernels.empty("strided * float64", (3,))
    ckernels.assign(n, ckernels.array([" 2.5", "-1", "inf"]))
    assert n.to_list() == [2.5, -1.0, float("inf")]
    with pytest.raises(errors.CKValueError, match="cannot parse"):
        ckernels.assign(n, ckernels.array(["abc", "1", "2"]))
    words = ckernels.array(["héllo", "日本", "x" * 1000])
    dst = ckernels.array(["", "", ""])
    ckernels.assign(dst, words)
    assert dst.to_list() == words.to_list()
    b = ckernels.empty("strided * 3 * int32", (2,))
    ckernels.assign(b, [7, 8, 9])  # broadcast a row into every row
    assert b.to_list() == [[7, 8, 9], [7, 8, 9]]


def test_threads_give_identical_results():
    x = np.random.default_rng(1).standard_normal(300_000)
    try:
        ckernels.set_num_threads(1)
        one = np.asarray(ops.multiply(x, 3.0)).copy()
        ckernels.set_num_threads(2)
        assert ckernels.get_num_threads() == 2
        two = np.asarray(ops.multiply(x, 3.0))
    finally:
        ckernels.set_num_threads(0)
    np.testing.assert_array_equal(one, two)
    with pytest.raises(errors.CKOverflowError):
        big = np.zeros(300_000, dtype=np.int64)
        big[-5] = 1000
        ckernels.set_num_threads(2)
        try:
            ckernels.assign(ckernels.empty("strided * uint8", (300_000,)), big, errmode="overflow")
        finally:
            ckernels.set_num_threads(0)


USER_KERNEL_C = r"""
#include <ckernel/ckernel.h>
/* y = 2x + 1 on float64: a user kernel written against the plain ABI. */
int twice_single(char *dst, const char *const *src, ck_prefix *self) {
  (void)self;
  *(double *)dst = 2.0 * *(const double *)src[0] + 1.0;
  return 0;
}
int twice_strided(char *dst, intptr_t ds, const char *const *src,
                  const intptr_t *ss, size_t n, ck_prefix *self) {
  (void)self;
  const char *s = src[0];
  for (size_t i = 0; i < n; i++, dst += ds, s += ss[0]) {
    if (*(const double *)s < 0) {
      return ck_set_error(CK_ERR_VALUE, "twice_plus_one: negative input");
    }
    *(double *)dst = 2.0 * *(const double *)s + 1.0;
  }
  return 0;
}
"""


def test_user_kernel_registration_from_python(tmp_path):
    import ctypes
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on PATH")
    src = tmp_path / "user_kernel.c"
    src.write_text(USER_KERNEL_C)
    so = tmp_path / "user_kernel.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", f"-I{ckernels.get_include()}", str(src),
                    f"-L{ckernels.get_library_dir()}", "-lckernel",
                    f"-Wl,-rpath,{ckernels.get_library_dir()}", "-o", str(so)], check=True)
    lib = ctypes.CDLL(str(so))
    single = ctypes.cast(lib.twice_single, ctypes.c_void_p).value
    strided = ctypes.cast(lib.twice_strided, ctypes.c_void_p).value
    op = ops.register_kernel("twice_plus_one", "float64", ["float64"], single, strided)
    assert "(float64) -> float64" in op.signatures
    assert ops.twice_plus_one(np.arange(5.0)).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]
    assert ops.twice_plus_one(np.arange(3, dtype=np.int32)).tolist() == [1.0, 3.0, 5.0]
    assert ops.twice_plus_one([1.0]).to_list() == [3.0]          # the general path
    with pytest.raises(errors.CKValueError, match="negative input"):
        ops.twice_plus_one(np.array([1.0, -1.0]))
    assert "twice_plus_one" in dir(ops)
    with pytest.raises(AttributeError, match="no operation"):
        ops.no_such_op


def test_kernel_builder_and_kernel_objects():
    k = make_assignment_kernel("float64", "int32", "strided")
    assert k.strided and k.single is None and k.address
    assert "assign_int32_to_float64" in k.debug_repr()
    out = k(np.zeros(4), np.arange(4, dtype=np.int32))
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert "<svg" in k._repr_html_() and "assign_int32_to_float64" in k._repr_html_()
    ks = make_assignment_kernel("uint8", "int64", "single", errmode="overflow")
    with pytest.raises(errors.CKOverflowError, match="300"):
        ks(np.zeros(1, np.uint8), np.array([300]))
    b = KernelBuilder()
    assert b.is_inline and b.capacity == 128
    b.ensure_capacity(1000)
    assert not b.is_inline and b.capacity >= 1000 + 16
    b.destroy()
    with pytest.raises(errors.InvalidStateError):
        b.capacity
    with pytest.raises(errors.InvalidArgumentError):
        make_assignment_kernel("int8", "int8", "sideways")
    gc.collect()


ALL_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
              np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
              np.complex128]


@pytest.mark.parametrize("src_dt", ALL_DTYPES)
@pytest.mark.parametrize("dst_dt", ALL_DTYPES)
def test_assignment_table_against_numpy(src_dt, dst_dt):
    """Every builtin pair: where NumPy defines the conversion (values that are
    representable in the destination, or integer wrap-around under nocheck),
    ckernel gives NumPy's answer; checked modes refuse what they must."""
    rng = np.random.default_rng(11)
    src = (rng.standard_normal(64) * 60).astype(src_dt)
    if np.dtype(src_dt).kind == "c" and np.dtype(dst_dt).kind != "c":
        src = src.real.astype(src_dt)  # imaginary parts would be lost
    dst = np.zeros(64, dtype=dst_dt)
    ckernels.assign(ckernels.asarray(dst), ckernels.asarray(src), errmode="nocheck")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = src.astype(dst_dt)
    same_kind_ok = (np.dtype(src_dt).kind in "biu" and np.dtype(dst_dt).kind in "biu"
                    or np.can_cast(src_dt, dst_dt, casting="same_kind"))
    if same_kind_ok:
        np.testing.assert_array_equal(dst, want)
    # Values the destination can hold exactly go through every checked mode
    # (into bool, the checked modes accept only 0 and 1).
    exact = np.array([0, 1, 1, 0] if dst_dt is np.bool_ else [0, 1, 2, 3], dtype=src_dt)
    for mode in ("overflow", "fractional", "inexact", "default"):
        out = np.zeros(4, dtype=dst_dt)
        ckernels.assign(ckernels.asarray(out), ckernels.asarray(exact), errmode=mode)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(out, exact.astype(dst_dt))
    # An integer source above the destination's range is refused.
    kinds = np.dtype(src_dt).kind + np.dtype(dst_dt).kind
    if kinds in ("ii", "iu", "ui", "uu") and np.iinfo(src_dt).max > np.iinfo(dst_dt).max:
        over = np.array([np.iinfo(src_dt).max], dtype=src_dt)
        with pytest.raises(errors.CKOverflowError, match="overflow"):
            ckernels.assign(ckernels.asarray(np.zeros(1, dst_dt)), ckernels.asarray(over),
                           errmode="overflow")
