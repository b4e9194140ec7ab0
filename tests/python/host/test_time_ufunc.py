"""NumPy ufunc loops of jitted functions over ``datetime64`` / ``timedelta64``
(``src/python/ufuncs/time_loops.c``): ``f.ufunc`` called by NumPy on
``M8[unit]`` / ``m8[unit]`` arrays gives the result of the loop's unit,
several unit signatures share one NumPy loop, lazily compiled functions
compile the operands' units, coarser units cast to a loop's finer ones as
NumPy casts them (``'safe'``), finer ones are a clear error, and
``f.reduce`` of durations sums as ``np.add.reduce`` does (NaT wins).  NumPy's
own datetime arithmetic is the oracle.  The functions are compiled once, at
module level."""

import numpy as np
import pytest

import ckernels
from ckernels import errors

UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns")
#: the units the lazily compiled function is called with (one compile each;
#: nanoseconds also stand for the unitless DType NumPy's promoter sees)
LAZY_UNITS = ("Y", "ns")
T = np.array(["2024-01-01T00:00:00", "1969-12-31T23:59:59", "NaT", "2000-02-29T12:00:00",
              "1980-06-30T06:30:15"], "M8[s]")
D = np.array([86400, -1, 5, "NaT", 3600], "m8[s]")


@ckernels.jit(["datetime64[s](datetime64[s], timedelta64[s])",
               "datetime64[ns](datetime64[ns], timedelta64[ns])"])
def shift(t, d):
    return t + d


@ckernels.jit("timedelta64[D](datetime64[D], datetime64[D])")
def days_between(a, b):
    return a - b


@ckernels.jit("bool(datetime64[ns])")
def is_recent(t):
    return t >= np.datetime64("2000-01-01T00:00:00", "ns")


@ckernels.jit("timedelta64[s](timedelta64[s], timedelta64[s])", identity=0)
def total(a, b):
    return a + b


@ckernels.jit
def minus(a, b):
    return a - b


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    """Every lazily compiled loop the tests use, compiled before the first
    test (compiled code lives as long as its function)."""
    for unit in LAZY_UNITS:
        a = T.astype(f"M8[{unit}]")
        minus.ufunc(a, a)
    minus.ufunc(T.astype("M8[ns]"), D.astype("m8[ns]"))


def test_explicit_loops_per_unit():
    for unit in ("s", "ns"):
        t, d = T.astype(f"M8[{unit}]"), D.astype(f"m8[{unit}]")
        got = shift.ufunc(t, d)
        assert got.dtype == np.dtype(f"M8[{unit}]")
        np.testing.assert_array_equal(got, t + d)          # NaT in either: NaT
        assert np.add(t, d).dtype == got.dtype
    # one NumPy loop per DType signature, listed once
    assert shift.ufunc.types == ["Mm->M"]


def test_result_units_and_bool_results():
    a = T.astype("M8[D]")
    got = days_between.ufunc(a, a[::-1])
    assert got.dtype == np.dtype("m8[D]")
    np.testing.assert_array_equal(got, a - a[::-1])
    ns = T.astype("M8[ns]")
    got = is_recent.ufunc(ns)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, ns >= np.datetime64("2000-01-01", "ns"))


def test_coarser_units_cast_as_numpy_does():
    days = np.array(["2024-03-01", "NaT", "1999-12-31"], "M8[D]")
    mins = np.array([90, 1, "NaT"], "m8[m]")
    got = shift.ufunc(days, mins)            # D and m cast safely to s (the first fit)
    assert got.dtype == np.dtype("M8[s]")
    np.testing.assert_array_equal(got, days + mins)
    # an out= of another unit: NumPy casts the loop's result into it
    out = np.empty(3, "M8[ms]")
    shift.ufunc(days, mins, out=out)
    np.testing.assert_array_equal(out, (days + mins).astype("M8[ms]"))


def test_finer_units_are_a_clear_error():
    with pytest.raises(TypeError, match=r"no loop takes operands of dtypes.*datetime64\[D\]"):
        days_between.ufunc(T, T)            # seconds would be truncated to days
    with pytest.raises(TypeError, match="cast them first"):
        total.ufunc(D.astype("m8[ms]"), D.astype("m8[ms]"))


def test_lazy_function_compiles_each_unit():
    for unit in LAZY_UNITS:
        a = T.astype(f"M8[{unit}]")
        got = minus.ufunc(a, a[::-1])
        want = a - a[::-1]
        assert got.dtype == want.dtype, unit
        np.testing.assert_array_equal(got, want)
    d = D.astype("m8[ns]")
    t = T.astype("M8[ns]")
    np.testing.assert_array_equal(minus.ufunc(t, d), np.subtract(t, d))


def test_every_unit_through_one_loop():
    """Every unit Y..ns: the instants of the coarse units cast safely to the
    nanosecond loop of ``shift`` (NumPy's own rule), the result the same as
    NumPy's arithmetic in nanoseconds."""
    d = np.array([1, "NaT", -7, 10**9], "m8[s]").astype("m8[ns]")
    counts = np.array([54, -3, 7, np.iinfo(np.int64).min])     # the last is NaT
    for unit in UNITS:
        t = counts.astype(f"M8[{unit}]")
        got = shift.ufunc(t, d)
        assert got.dtype == np.dtype("M8[ns]")
        np.testing.assert_array_equal(got, t.astype("M8[ns]") + d, err_msg=unit)


def test_reduce_durations_sums_with_nat():
    clean = D[~np.isnat(D)]
    assert total.reduce(clean) == np.add.reduce(clean)
    assert np.isnat(total.reduce(D))                       # NaT wins, as np.add.reduce
    grid = np.arange(12, dtype="i8").reshape(3, 4).astype("m8[s]")
    np.testing.assert_array_equal(total.reduce(grid, axis=0), np.add.reduce(grid, axis=0))
    np.testing.assert_array_equal(total.accumulate(clean), np.add.accumulate(clean))
    assert total.reduce(np.array([], "m8[s]")) == np.timedelta64(0, "s")   # identity=0
    minutes = np.array([1, 2, 3], "m8[m]")                 # cast to seconds, then summed
    assert total.reduce(minutes) == np.timedelta64(360, "s")


def test_nat_everywhere():
    nat = np.array(["NaT"] * 3, "M8[ns]")
    np.testing.assert_array_equal(shift.ufunc(nat, D.astype("m8[ns]")[:3]), nat)
    assert not is_recent.ufunc(nat).any()                  # NaT compares False


def test_ops_ufuncs_have_time_loops():
    """``ckernels.ops.<name>.ufunc`` on NumPy time arrays: the registry's time
    kernels (``ck_make_time_op_kernel``), built per unit pair, with NumPy's
    result units and NaT rules."""
    ops = ckernels.ops
    t = T.astype("M8[ms]")
    d = D.astype("m8[us]")
    cases = [(ops.add, np.add, (t, d)), (ops.add, np.add, (d, t)),
             (ops.subtract, np.subtract, (t, t[::-1])), (ops.subtract, np.subtract, (t, d)),
             (ops.less, np.less, (t, t[::-1])), (ops.not_equal, np.not_equal, (d, d)),
             (ops.maximum, np.maximum, (t, t[::-1])), (ops.multiply, np.multiply, (d, 3)),
             (ops.multiply, np.multiply, (d, 2.5)), (ops.divide, np.divide, (d, d[::-1])),
             (ops.add, np.add, (T.astype("M8[D]"), 3))]   # NumPy's integer counts the unit
    for op, npf, args in cases:
        got, want = op.ufunc(*args), npf(*args)
        assert got.dtype == want.dtype, (op, args)
        np.testing.assert_array_equal(got, want)
    for unit in ("D", "s", "ns"):        # each unit pair: its own kernel, one NumPy loop
        a = T.astype(f"M8[{unit}]")
        np.testing.assert_array_equal(ops.subtract.ufunc(a, T), np.subtract(a, T))
    clean = D[~np.isnat(D)]
    assert ops.add.ufunc.reduce(clean) == np.add.reduce(clean)
    assert np.isnat(ops.add.ufunc.reduce(D))
    assert ops.minimum.ufunc.reduce(T[~np.isnat(T)]) == np.minimum.reduce(T[~np.isnat(T)])
    with pytest.raises(TypeError, match="did not contain a loop"):   # NumPy's own refusal
        ops.add.ufunc(T, T)
    # a multiple of a unit or a unitless NaT: a loop it casts to safely (NumPy's
    # cast), else an error naming the dtype
    tens = np.array([1, 2], "M8[10s]")
    np.testing.assert_array_equal(ops.add.ufunc(tens, D[:2]), tens + D[:2])
    nat = np.array(["NaT", "NaT"], "M8")
    np.testing.assert_array_equal(ops.add.ufunc(nat, D[:2]), nat + D[:2])
    tens_ms = np.array([1], "m8[10ms]")     # no loop of (m8, m8) it casts to safely
    with pytest.raises(errors.CKTypeError, match=r"timedelta64\[10ms\] has no ckernels time"):
        ops.maximum.ufunc(tens_ms, tens_ms)


def test_byte_swapped_operands():
    t = T.astype(">M8[s]")
    d = D.astype(">m8[s]")
    got = shift.ufunc(t, d)
    assert got.dtype == np.dtype("M8[s]")
    np.testing.assert_array_equal(got, t + d)
    np.testing.assert_array_equal(ckernels.ops.subtract.ufunc(t, T), t - T)


def test_reduce_of_time_arrays_with_nulls():
    """``f.reduce`` of a ``?timedelta`` array skips the nulls (Arrow's and
    pandas' rule), as for numbers."""
    o = ckernels.array([np.timedelta64(5, "s"), None, np.timedelta64(7, "s")])
    assert total.reduce(o) == np.timedelta64(12, "s")
    grid = ckernels.array([[np.timedelta64(5, "s"), None], [np.timedelta64(7, "s"), None]])
    got = total.reduce(grid, axis=0)
    assert str(got.type) == "strided * ?timedelta[unit='s']"
    assert got.tolist() == [np.timedelta64(12, "s").item(), None]
    assert total.reduce(ckernels.asarray(D[:2])) == D[0] + D[1]   # a ckernels array, no nulls
