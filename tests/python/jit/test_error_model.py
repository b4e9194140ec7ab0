"""The error model of ``@ckernels.jit``: ``"python"`` (default: raise, as Python)
and ``"numpy"`` (IEEE results, as NumPy and numba.vectorize), the same on the
CPU and on OpenCL.  Oracles: ``numba.njit`` with the same error model, and
the CPU jit for the device."""

import pickle
import re

import numba
import numpy as np
import pytest

import ckernels
from ckernels import errors


def _truediv(a, b):
    return a / b


def _floordiv(a, b):
    return a // b


def _mod(a, b):
    return a % b


def _ipow(a, b):
    return a ** b


def _mixed(a, b):
    return (a + 1.0) / b + a // (b + 1.0)


CASES = [
    # (function, signature, a, b)
    (_truediv, "float64(float64, float64)", [1.0, -1.0, 0.0, 2.5], [0.0, 0.0, 0.0, 2.0]),
    (_truediv, "float32(float32, float32)", [1.0, -1.0, 0.0, 2.5], [0.0, 0.0, 0.0, 2.0]),
    (_truediv, "float64(int64, int64)", [7, -7, 0, 9], [0, 0, 0, 2]),
    (_floordiv, "int64(int64, int64)", [7, -7, 0, -2**63], [0, 0, 0, -1]),
    (_floordiv, "int32(int32, int32)", [7, -7, 0, 9], [0, 0, 0, -2]),
    (_floordiv, "uint8(uint8, uint8)", [7, 200, 0, 9], [0, 0, 0, 2]),
    (_floordiv, "float64(float64, float64)", [7.0, -7.0, 0.0, 7.5], [0.0, 0.0, 0.0, -2.0]),
    (_mod, "int64(int64, int64)", [7, -7, 0, 9], [0, 0, 0, -2]),
    (_mod, "float64(float64, float64)", [7.0, -7.0, 0.0, 7.5], [0.0, 0.0, 0.0, -2.0]),
    (_ipow, "int64(int64, int64)", [0, 0, 2, -1], [-1, -2, -1, -3]),
    (_ipow, "int32(int32, int32)", [0, 3, 2, 1], [-1, 2, -1, -3]),
    (_mixed, "float64(float64, float64)", [1.0, 2.0, -3.0, 0.0], [0.0, -1.0, 2.0, 0.0]),
]
IDS = [f"{f.__name__}-{sig}" for f, sig, _, _ in CASES]


@pytest.fixture(scope="module")
def kernels():
    """(python-model kernel, numpy-model kernel) per case, compiled once."""
    return [(ckernels.jit(sig)(f), ckernels.jit(sig, error_model="numpy")(f))
            for f, sig, _, _ in CASES]


def _args(sig, a, b):
    from ckernels import dtypes
    inner = sig[sig.index("(") + 1:-1].split(", ")
    return [np.array(a, dtype=dtypes.by_name[inner[0]].numpy),
            np.array(b, dtype=dtypes.by_name[inner[1]].numpy)]


def _oracle(f, model, a, b):
    j = numba.njit(error_model=model)(f)
    out = []
    for x, y in zip(a, b):
        try:
            out.append(j(x, y))
        except ZeroDivisionError:
            out.append(ZeroDivisionError)
    return out


@pytest.mark.parametrize("i", range(len(CASES)), ids=IDS)
def test_cpu_matches_numba(i, kernels):
    f, sig, a, b = CASES[i]
    kp, kn = kernels[i]
    x, y = _args(sig, a, b)
    want_numpy = _oracle(f, "numpy", x, y)
    got = kn(x, y)
    # Numba computes int ** int in int64: the kernel converts to its result type
    exp = np.array([w if w is not ZeroDivisionError else 0 for w in want_numpy]
                   ).astype(got.dtype)
    mask = np.array([w is not ZeroDivisionError for w in want_numpy])
    np.testing.assert_array_equal(got[mask], exp[mask])
    # the python model raises exactly where Python does
    want_python = _oracle(f, "python", x, y)
    for k in range(len(a)):
        if want_python[k] is ZeroDivisionError:
            with pytest.raises(errors.CKZeroDivisionError):
                kp(x[k:k + 1], y[k:k + 1])
        else:
            np.testing.assert_array_equal(kp(x[k:k + 1], y[k:k + 1]),
                                          np.array([want_python[k]]).astype(got.dtype))


@pytest.mark.parametrize("i", range(len(CASES)), ids=IDS)
def test_opencl_matches_cpu(i, kernels, new_opencl_context):
    f, sig, a, b = CASES[i]
    kp, kn = kernels[i]
    ctx = new_opencl_context()
    x, y = _args(sig, a, b)
    if "float64" in sig and not ctx.supports_fp64:
        pytest.skip("no fp64 on this device")
    for k in range(len(a)):
        xs, ys = x[k:k + 1], y[k:k + 1]
        for kernel in (kp, kn):
            try:
                want = kernel(xs, ys)
            except errors.CKZeroDivisionError as exc:
                with pytest.raises(errors.CKZeroDivisionError, match=re.escape(str(exc))):
                    kernel(ctx.array(xs), ctx.array(ys))
                continue
            got = kernel(ctx.array(xs), ctx.array(ys)).to_numpy()
            np.testing.assert_array_equal(got, want)


def test_numpy_model_emits_no_division_checks(kernels):
    i = IDS.index("_truediv-float64(float64, float64)")
    kp, kn = kernels[i]
    assert "ck_err = " in kp.source() and "ck_err = " not in kn.source()


def test_numpy_model_inf_nan_like_numpy():
    f = ckernels.jit("float64(float64, float64)", error_model="numpy")(lambda a, b: a / b)
    a, b = np.array([1.0, -1.0, 0.0]), np.zeros(3)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(f(a, b), a / b)
    with pytest.raises(ZeroDivisionError):
        ckernels.jit("float64(float64, float64)")(lambda a, b: a / b)(a, b)


def test_error_model_argument():
    with pytest.raises(errors.InvalidArgumentError, match="error_model"):
        ckernels.jit("float64(float64)", error_model="c")
    k = ckernels.jit(lambda x: 1.0 / x, error_model="numpy")
    assert k.error_model == "numpy" and k(0.0) == float("inf")
    assert ckernels.jit(lambda x: x).error_model == "python"
    k2 = pickle.loads(pickle.dumps(k))
    assert k2.error_model == "numpy" and k2(0.0) == float("inf")


def test_what_is_not_checked_follows_numba():
    """What README.md ("Errors and the error model") says is not checked: the
    default model checks division only; the rest is Numba's arithmetic."""
    import math
    import warnings
    narrow = ckernels.jit("int8(int64)")(lambda x: x)
    assert narrow(300) == 44 and narrow(np.array([300])).tolist() == [44]
    mul = ckernels.jit("int64(int64, int64)")(lambda a, b: a * b)
    assert mul(2 ** 62, 4) == 0
    trunc = ckernels.jit("int64(float64)")(lambda x: int(x))
    with np.errstate(invalid="ignore"):      # out of range: NumPy's invalid flag
        assert trunc(np.array([-2.7, 1e30])).tolist() == [-2, np.iinfo(np.int64).min]
    root = ckernels.jit("float64(float64)")(lambda x: math.sqrt(x))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert math.isnan(root(np.array([-1.0]))[0])
    assert any(issubclass(x.category, RuntimeWarning) and "invalid" in str(x.message)
               for x in w)
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        root(np.array([-1.0]))
    log = ckernels.jit("float64(float64)")(lambda x: math.log(x))
    with np.errstate(divide="ignore"):
        assert log(np.array([0.0]))[0] == -np.inf
    inv = ckernels.jit("float64(float64)")(lambda x: 1.0 / x)
    with pytest.raises(ZeroDivisionError):
        inv(0.0)
