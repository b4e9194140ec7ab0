"""Issue 29 section 2: conformance with the peers (NumPy, Numba), each case
with the peer as the oracle.

* an operand without the core dims a signature needs: ValueError on every
  path (NumPy, ckernels and OpenCL arrays), as NumPy's gufuncs and Numba's;
* a result that does not fit its declared type: a ckernels TypeError naming
  the function, its file and line at decoration (never Numba's TypingError,
  never a silently unwritten result);
* ``f.ufunc.types`` / ``ntypes`` of gufuncs list their loops as
  ``numba.guvectorize``'s do;
* ``str(float32)`` in jitted code is NumPy's ``str(np.float32(x))``;
* struct records as tuples / ``numpy.void`` (assignment, ``ckernels.array``);
* float reductions of sums summed pairwise as ``np.add.reduce``;
* ``float64`` into an ``int64`` signature: an error naming the argument and
  the casting rule, a subclass of NumPy's; ``str`` in a signature is
  ``string``.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from numpy._core._exceptions import _UFuncNoLoopError as _NoLoop  # what NumPy raises

import ckernels
from ckernels import errors, ops



# ---- 1. missing core dims ------------------------------------------------------
@ckernels.jit("float64(N * float64)")
def total(a):
    s = 0.0
    for i in range(len(a)):
        s += a[i]
    return s


@numba.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def nb_total(a, out):
    out[0] = a.sum()


def test_missing_core_dim_is_a_value_error_on_every_path(new_opencl_context):
    with pytest.raises(ValueError):                  # Numba's gufunc, the peer
        nb_total(np.float64(1.0))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        total(np.float64(1.0))                       # NumPy's gufunc
    with pytest.raises(ValueError, match="fewer than the 1 core dims"):
        total(ckernels.array(1.0))                   # the general path
    assert issubclass(errors.CKValueError, ValueError)
    ctx = new_opencl_context()
    with pytest.raises(ValueError, match="fewer than the 1 core dims"):
        total(ctx.array(np.ones(())))                # a device array


# ---- 2. a result that does not fit -----------------------------------------------
def _decorate(sig, fn):
    try:
        ckernels.jit(sig)(fn)
    except TypeError as exc:
        return exc
    raise AssertionError(f"{sig} compiled")


def returns_none(x):
    return None


def returns_array(x):
    if x[0] > 0:
        return np.zeros(3)
    return 1.0


def scalar_returns_array(x):
    return np.zeros(3)


def only_raises(x):
    raise ValueError("never returns")


@pytest.mark.parametrize("sig, fn, got, line", [
    ("float64(float64)", returns_none, "none", returns_none.__code__.co_firstlineno + 1),
    ("float64(float64)", scalar_returns_array, "array(float64, 1d, C)",
     scalar_returns_array.__code__.co_firstlineno + 1),
    ("float64(N * float64)", returns_none, "none", returns_none.__code__.co_firstlineno + 1),
    ("float64(N * float64)", returns_array, "array(float64, 1d, C)", None),
    ("N * float64(N * float64)", returns_none, "none", None),
    ("var * float64(N * float64)", returns_none, "none", None),
])
def test_a_result_that_does_not_fit_names_function_and_line(sig, fn, got, line):
    exc = _decorate(sig, fn)
    from numba.core.errors import NumbaError
    assert not isinstance(exc, NumbaError)
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__)
    msg = str(exc)
    assert f"{fn.__qualname__} (test_peer_conformance.py, line" in msg, msg
    assert f"returns {got}" in msg and "does not fit its declared result" in msg, msg
    if line is not None:
        assert f"line {line})" in msg, msg
    assert "Failed in" not in msg and "nopython" not in msg, msg


def test_a_dims_function_returning_none_never_runs_silently():
    # before: compiled, and each call returned whatever the result held
    with pytest.raises(TypeError, match="returns none"):
        ckernels.jit("float64(N * float64)")(lambda a: None)


def test_functions_that_only_raise_still_compile():
    f = ckernels.jit("float64(float64)")(only_raises)
    g = ckernels.jit("float64(N * float64)")(only_raises)
    with pytest.raises(errors.CKValueError, match="never returns"):
        f(np.ones(1))
    with pytest.raises(errors.CKValueError, match="never returns"):
        g(ckernels.array([1.0]))


# ---- 3. ufunc.types of gufuncs ----------------------------------------------------
def test_gufunc_types_list_the_loops_as_numba_guvectorize():
    sigs_nb = ["void(float64[:], float64[:])", "void(float32[:], float32[:])",
               "void(int64[:], int64[:])"]
    nb = numba.guvectorize(sigs_nb, "(n)->()")(lambda a, out: None)
    ck = ckernels.jit(["float64(N * float64)", "float32(N * float32)",
                       "int64(N * int64)"])(lambda a: a.sum())
    assert ck.ufunc.types == nb.types == ["d->d", "f->f", "l->l"]
    assert ck.ufunc.ntypes == nb.ntypes == 3
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ck.ufunc(x), x.sum(axis=1))      # calls still resolve
    np.testing.assert_array_equal(ck(x.astype(np.float32)), x.sum(axis=1))
    assert total.ufunc.types == ["d->d"]


# ---- 4. str(float32) ----------------------------------------------------------------
@ckernels.jit("string(float32)")
def f32_text(x):
    return str(x)


def test_str_of_float32_is_numpys_str_over_random_bit_patterns():
    rng = np.random.default_rng(29)
    bits = rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32)
    scaled = (rng.random(20_000) * 10.0 ** rng.integers(-9, 11, 20_000)).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45,
                         1.1754942e-38, 1.1754944e-38, 1e-4, 1.00000005e-4, 9.999999e-5,
                         1e6, 999999.94, 1000000.06, 1e16, 3.4028235e38, 16777216.0,
                         0.1, 0.5, 1.0, 123456.79], np.float32)
    xs = np.concatenate([bits.view(np.float32), scaled, specials])
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # signalling NaNs among them: no FP warning
        got = f32_text(xs)
    got = np.asarray(got.to_numpy() if hasattr(got, "to_numpy") else got, dtype=object)
    want = [str(x) for x in xs]
    bad = [(x, g, w) for x, g, w in zip(xs, got, want) if g != w]
    assert not bad, f"{len(bad)} of {len(xs)} differ, e.g. {bad[:5]}"


def test_float32_to_string_casts_print_as_numpy():
    xs = np.array([1e7, 1e-4, 0.5, 123456789.0, 1e6, 999999.0], np.float32)
    got = ckernels.asarray(xs).astype("string").tolist()
    assert got == xs.astype(np.dtypes.StringDType()).tolist() == [str(x) for x in xs]


# ---- 5. struct records ------------------------------------------------------------------
DT = np.dtype([("a", "i4"), ("b", "f8")], align=True)
NESTED = np.dtype([("p", DT), ("c", "3i2")], align=True)


def _same(ck, np_arr):
    out = ck.to_numpy()
    assert out.dtype == np_arr.dtype
    np.testing.assert_array_equal(out, np_arr)


def test_struct_records_assign_from_tuples_and_numpy_void():
    want, a = np.zeros(3, DT), ckernels.asarray(np.zeros(3, DT))
    src = np.array([(5, 6.5)], DT)
    for target in (want, a):
        target[0] = (77, 7.0)
        target[1] = src[0]
        target[2] = np.array([(1, 1.5)], np.dtype([("x", "i8"), ("y", "f4")]))[0]  # by position
    _same(a, want)
    want[0:2] = (3, 3.5)
    a[0:2] = (3, 3.5)
    _same(a, want)


def test_array_of_tuples_with_a_structured_dtype():
    rows = [(1, 2.0), (3, 4.0)]
    _same(ckernels.array(rows, dtype=DT), np.array(rows, dtype=DT))
    _same(ckernels.array([rows, rows], dtype=DT), np.array([rows, rows], dtype=DT))
    packed = np.dtype([("a", "i4"), ("b", "f8")])        # NumPy's default: packed
    got = ckernels.array(rows, dtype=packed)
    np.testing.assert_array_equal(got.to_numpy().astype(packed), np.array(rows, dtype=packed))
    got = ckernels.array(np.array(rows, dtype=packed))    # a packed structured array: copied
    assert got.tolist() == [{"a": 1, "b": 2.0}, {"a": 3, "b": 4.0}]
    nested = [((1, 2.0), (1, 2, 3)), ((3, 4.0), (4, 5, 6))]
    _same(ckernels.array(nested, dtype=NESTED), np.array(nested, dtype=NESTED))


def test_struct_records_of_the_wrong_arity_or_type_are_clear_errors():
    a = ckernels.asarray(np.zeros(2, DT))
    with pytest.raises(ValueError):
        np.zeros(2, DT)[0] = (1, 2.0, 3)                  # NumPy's answer
    with pytest.raises(errors.CKValueError, match=r"a record of 3 values for the struct .* of 2 "
                                                  r"fields \(a, b\)"):
        a[0] = (1, 2.0, 3)
    with pytest.raises(errors.CKValueError, match="a record of 1 value for"):
        ckernels.array([(1,)], dtype=DT)
    with pytest.raises(TypeError, match="field 'a' of the struct .*: cannot assign str "
                                        "value 'x' to int32"):
        a[0] = ("x", 2.0)
    assert a.tolist() == [{"a": 0, "b": 0.0}] * 2           # nothing written


def test_struct_to_numpy_keeps_the_dtype_without_padding_fields():
    a = ckernels.array([(1, 2.0)], dtype=DT)
    assert a.to_numpy().dtype == DT and a.to_numpy().dtype.names == ("a", "b")


# ---- 6. pairwise float reductions --------------------------------------------------------
@ckernels.jit(["float32(float32, float32)", "float64(float64, float64)"], identity=0)
def plus(a, b):
    return a + b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 127, 128, 129, 1000, 8193, 100_003, 1_000_000])
def test_float_sums_reduce_pairwise_as_numpy(dtype, n):
    rng = np.random.default_rng(n)
    x = (rng.random(n) * rng.choice([1.0, 1e6, 1e-3], n)).astype(dtype)
    want = np.add.reduce(x)
    for got in (ops.add.ufunc.reduce(x), plus.ufunc.reduce(x)):
        assert np.asarray(got, dtype).tobytes() == np.asarray(want, dtype).tobytes(), (got, want)
    xs = x[::3]
    assert ops.add.ufunc.reduce(xs).tobytes() == np.add.reduce(xs).tobytes()
    if n >= 8:
        m = x[: n - n % 8].reshape(8, -1)
        for axis in (0, 1):
            np.testing.assert_array_equal(plus.ufunc.reduce(m, axis=axis),
                                          np.add.reduce(m, axis=axis))


def test_other_reductions_stay_one_by_one_as_numpy():
    x = np.random.default_rng(3).random(100_000).astype(np.float32) + 0.5
    assert ops.multiply.ufunc.reduce(x[:200]).tobytes() == np.multiply.reduce(x[:200]).tobytes()


# ---- 7. casting errors and "str" ----------------------------------------------------------
def test_float64_into_an_int64_signature_names_argument_and_rule():
    f = ckernels.jit("int64(int64)")(lambda x: x)
    with pytest.raises(_NoLoop) as info:                  # NumPy's class, for except clauses
        f(np.array([1.5]))
    exc = info.value
    assert isinstance(exc, TypeError) and isinstance(exc, errors.CKTypeError)
    msg = str(exc)
    assert "argument 0 ('x') is float64" in msg and "int64" in msg and "'safe'" in msg, msg
    with pytest.raises(_NoLoop, match="argument 1 \\('b'\\) is float32"):
        ckernels.jit("int64(int64, int64)")(lambda a, b: a + b)(np.ones(2, np.int64),
                                                                np.ones(2, np.float32))
    first = ckernels.jit("int64(N * int64)")(lambda a: a[0])        # a gufunc
    with pytest.raises(_NoLoop, match=r"argument 0 \('a'\) is float64, which does not cast "
                                      r"to int64 .*\(signature int64\(N \* int64\)\)"):
        first(np.ones(3))
    assert first(np.arange(3, dtype=np.int32) + 4) == 4                # safe casts still work
    # what NumPy accepts still works: safe casts, casting='unsafe' with signature=
    np.testing.assert_array_equal(f(np.array([1, 2], np.int32)), [1, 2])
    np.testing.assert_array_equal(
        f.ufunc(np.array([1.5]), casting="unsafe", signature=(np.int64, np.int64)), [1])


def test_str_in_a_signature_is_string():
    f = ckernels.jit("str(str)")(lambda s: s.upper())
    g = ckernels.jit("string(string)")(lambda s: s.upper())
    assert f.signatures == g.signatures
    assert f("abc") == "ABC"
