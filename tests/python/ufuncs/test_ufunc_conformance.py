"""ckernels' registry ufuncs (``ckernels.ops.<name>.ufunc``) against NumPy:
comparisons with Python ints of any size (NEP 50), reorderable minimum and
maximum, the floating-point flags NumPy reports, complex edge cases,
reductions NumPy refuses, ``ufunc.types``, and a bounded subset of NumPy's own
``test_umath.py`` / ``test_ufunc.py`` run with our ufuncs in their place
(``tools/numpy_ufunc_conformance.py`` runs the whole files)."""

import json
import math
import os
import subprocess
import sys
import warnings

import numba
import numpy as np
import pytest

import ckernels
from ckernels import _ufuncs, ops

COMPARISONS = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal"]
INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
PYINTS = [-1, 0, 1000, -1000, 2**31, -2**31 - 1, 2**63 - 1, 2**63, -2**63, -2**63 - 1,
          2**64 - 1, 2**64, -2**80, 2**100]


def _flags(fn, *args, **errstate):
    """(result or exception class, sorted warning texts) of fn(*args)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(**(errstate or {"all": "warn"})):
            try:
                r = fn(*args)
            except Exception as e:   # noqa: BLE001 -- compared with NumPy's
                r = type(e)
    return r, sorted({str(m.message).split(" encountered")[0] for m in w})


# ---------------------------------------------- comparisons with Python ints --
@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("dtype", INTS)
def test_comparison_with_any_python_int(name, dtype):
    info = np.iinfo(dtype)
    arr = np.array([info.min, 0, 1, info.max], dtype=dtype)
    uf, npf = getattr(ops, name).ufunc, getattr(np, name)
    for v in PYINTS:
        for args in ((arr, v), (v, arr)):
            want = npf(*args)
            got = uf(*args)
            assert got.dtype == np.bool_ and np.array_equal(got, want), (name, dtype, args)
    assert np.array_equal(getattr(ops, name)(np.uint8([1]), -1), npf(np.uint8([1]), -1))


def test_comparison_with_python_int_through_array_operators():
    x = ckernels.asarray(np.array([1, 2, 255], dtype=np.uint8))
    y = ckernels.asarray(np.array([-5, 0, 127], dtype=np.int8))
    n = np.asarray
    assert n(x < -1).tolist() == [False, False, False]
    assert n(x == 1000).tolist() == [False, False, False]
    assert n(x != -1).tolist() == [True, True, True]
    assert n(x >= 2).tolist() == [False, True, True]
    assert n(y > 2**70).tolist() == [False, False, False]
    assert n(-1 < x).tolist() == [True, True, True]


def test_comparison_with_object_operands_compares_as_python():
    uf = ops.less.ufunc
    got = uf(np.array([1, 5], dtype=np.int16), np.array([2.5, 4], dtype=object))
    assert got.tolist() == [True, False]
    with pytest.raises(TypeError):
        uf(np.uint8([1]), np.array([None], dtype=object))


# ------------------------------------------------- reorderable minimum/maximum --
@pytest.mark.parametrize("name", ["minimum", "maximum", "fmin", "fmax"])
def test_minmax_reduce_over_several_axes(name):
    x = np.arange(24.0).reshape(2, 3, 4)[:, ::-1]
    x[1, 0, 2] = np.nan
    uf, npf = getattr(ops, name).ufunc, getattr(np, name)
    for axis in (None, (0, 1), (0, 2), (2, 1, 0)):
        np.testing.assert_array_equal(uf.reduce(x, axis=axis), npf.reduce(x, axis=axis))
    i = np.array([[3, -1], [7, 2]], dtype=np.int16)
    assert uf.reduce(i, axis=None) == npf.reduce(i, axis=None)


# ------------------------------------------------------- floating-point flags --
def _same(name, *args, **errstate):
    got = _flags(getattr(ops, name).ufunc, *args, **errstate)
    want = _flags(getattr(np, name), *args, **errstate)
    assert str(got) == str(want), (name, args, got, want)
    return got


def test_nan_raises_no_flag():
    x = np.array([np.nan, 1.0, -2.0, np.nan] * 600)   # long enough to vectorise
    for name in ["sign", "isnan", "isinf", "isfinite"]:
        for dt in ("f8", "f4", "f2"):
            assert _same(name, x.astype(dt), all="raise")[1] == []
    for name in COMPARISONS + ["minimum", "maximum", "fmin", "fmax"]:
        for dt in ("f8", "f4", "f2"):
            a = x.astype(dt)
            assert _same(name, a, a[::-1], all="raise")[1] == []
    snan = np.array([0x7FA00000], dtype=np.uint32).view(np.float32)
    for name in ["isnan", "isinf", "isfinite"]:
        _same(name, snan, all="raise")


def test_division_flags_as_numpy():
    r, w = _same("floor_divide", np.int8([-128]), np.int8(-1))
    assert w == ["overflow"] and r.tolist() == [-128]
    with np.errstate(divide="ignore", invalid="raise"):
        assert ops.floor_divide.ufunc(1.0, 0.0) == np.inf
    with np.errstate(all="raise"):
        assert np.isnan(ops.mod.ufunc(0.0, np.nan))
    for a in (0.0, -0.0, 1.0, -1.0, np.inf, np.nan, 2.5):
        for b in (0.0, -0.0, np.nan, np.inf, -1.5):
            for dt in ("f8", "f4", "f2"):
                x, y = np.array([a], dt), np.array([b], dt)
                _same("floor_divide", x, y)
                _same("mod", x, y)


@pytest.mark.parametrize("name", ["exp", "sinh", "cosh", "expm1", "square"])
def test_float16_overflow_is_reported(name):
    x = np.array([12.0, 300.0, 1.0], dtype=np.float16)
    r, w = _same(name, x)
    assert "overflow" in w and np.isinf(r[1])
    _same("multiply", np.float16([65504.0]), np.float16([2.0]))


# ----------------------------------------------------------------- complex --
def test_complex_edge_cases():
    assert ops.power.ufunc(0j, 1 + 4j) == 0j == np.power(0j, 1 + 4j)
    assert _same("power", np.complex128([0j]), np.complex128([-1 + 1j]))[1] == ["invalid value"]
    inf, nan = math.inf, math.nan
    for z in (complex(inf, 0), complex(-inf, 2), complex(3, inf), complex(1, -inf),
              complex(inf, inf), complex(inf, nan), complex(nan, inf), complex(nan, 0),
              complex(-0.0, -0.0), 3 + 4j, complex(1e308, 1e308)):
        got, want = ops.sign.ufunc(z), np.sign(z)
        np.testing.assert_array_equal(got, want, err_msg=str(z))
    assert ops.sign.ufunc(complex(inf, 0)) == 1 + 0j
    for z in (complex(-0.5, -0.0), complex(-0.5, 0.0), complex(-1.0, -0.0)):
        for name in ("log", "sqrt", "arcsin", "arccos", "arctan", "tan"):
            got, want = getattr(ops, name).ufunc(z), getattr(np, name)(z)
            assert np.signbit(got.imag) == np.signbit(want.imag), (name, z, got, want)
            np.testing.assert_allclose(got, want, rtol=1e-15)
    assert ops.log.ufunc(complex(-0.5, -0.0)).imag == -math.pi


# ------------------------------------------------- reductions NumPy refuses --
def test_equal_reduce_refused_like_numpy():
    x = np.array([0, 0])
    with pytest.raises(TypeError) as want:
        np.equal.reduce(x)
    with pytest.raises(type(want.value)):
        ops.equal.ufunc.reduce(x)
    assert ops.equal.ufunc.reduce(np.array([True, False])) == np.equal.reduce([True, False])
    assert ops.add.ufunc.reduce(np.int8([100, 100])) == np.add.reduce(np.int8([100, 100]))


# --------------------------------------------------------- ufunc.types/ntypes --
SIGS = ["float64(float64, float64)", "int64(int64, int64)"]


@ckernels.jit(SIGS)
def add2(x, y):
    return x + y


@pytest.fixture(scope="module")
def lazy_double():
    """A function without signatures, compiled for float64 and int32 by two
    calls (module scope: its compiled code outlives the tests)."""
    g = ckernels.jit(lambda x: x * 2)
    assert g(np.arange(3.0)).tolist() == [0.0, 2.0, 4.0]
    g(np.arange(3, dtype=np.int32))
    return g


def test_types_list_the_loops(lazy_double):
    nv = numba.vectorize(SIGS)(lambda x, y: x + y)
    assert add2.ufunc.types == nv.types == ["dd->d", "ll->l"]
    assert add2.ufunc.ntypes == 2
    g = lazy_double
    assert g.ufunc.types == ["d->d", "i->l"] and g.ufunc.ntypes == 2
    for name in ("add", "sqrt", "less", "isnan"):
        uf = getattr(ops, name).ufunc
        loops = _ufuncs.loops(uf)
        assert uf.ntypes == len(uf.types) == len(loops)
        chars = ["".join(np.dtype(d).char for d in dts[:-1]) + "->" + np.dtype(dts[-1]).char
                 for dts, _ in loops]
        assert uf.types == chars
    assert "dd->d" in ops.add.ufunc.types and "ff->?" in ops.less.ufunc.types
    # the loops keep working after the listing (no legacy type resolution)
    assert ops.add.ufunc(np.int8([1]), 2.5).dtype == np.add(np.int8([1]), 2.5).dtype


# ------------------------------------------- NumPy's own tests, a bounded part --
#: NumPy's tests of what this round fixed, all agreeing with ckernels' ufuncs
#: in place (a few seconds; the whole files: tools/numpy_ufunc_conformance.py)
SUBSET = ("test_unsigned_signed_direct_comparison or test_large_integer_direct_comparison"
          " or test_error_in_equal_reduce or (TestMinMax and (reduce_reorder or"
          " minimize_no_warns)) or (TestSign and not object) or test_signaling_nan_exceptions"
          " or test_exp_exceptions or (TestSpecialFloats and (sinh or cosh)) or"
          " test_power_complex or test_zero_power_nonzero or float_nans or"
          " test_float_remainder_errors or test_float_divmod_errors or"
          " test_signed_division_overflow or test_complex_nan_comparisons or test_fpclass")


def test_numpy_test_subset_agrees(tmp_path):
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools",
                        "numpy_ufunc_conformance.py")
    out = tmp_path / "result.json"
    subprocess.run([sys.executable, tool, "--file", "test_umath.py", "-k", SUBSET,
                    "--json", str(out)], check=True, timeout=600,
                   stdout=subprocess.DEVNULL)
    result = json.loads(out.read_text())
    assert len(result["agree"]) > 150, result
    assert result["disagree"] == []
