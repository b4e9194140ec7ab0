"""Instants and durations in ``@ckernels.jit`` functions: signatures in the
type grammar's, NumPy's and Numba's spellings, lazily compiled functions,
the arithmetic and comparisons Numba compiles on datetime64/timedelta64,
constants, NaT, and the operands (ckernels arrays, NumPy M8/m8 arrays and
scalars, pyarrow timestamps and durations with nulls).  NumPy's own
operators (and Numba's njit of the same function) are the oracles.  The
functions are compiled once, at module level."""

import numpy as np
import pytest

import ckernels
from numba.core import types as nbt

pa = pytest.importorskip("pyarrow")

NAT = np.datetime64("NaT")
T = np.array(["2024-01-01T00:00:00", "1969-12-31T23:59:59", "NaT", "2000-02-29T12:00:00",
              "1677-09-22T00:00:00"], "M8[s]")
D = np.array([86400, -1, 5, "NaT", 3600], "m8[s]")


@ckernels.jit("datetime[s](datetime[s], timedelta[s])")
def add(t, d):
    return t + d


@ckernels.jit("timedelta[unit='s'](datetime64[s], M8[s])")
def diff(a, b):
    return a - b


@ckernels.jit([nbt.boolean(nbt.NPDatetime("s"), nbt.NPDatetime("s"))])
def before(a, b):
    return a < b


@ckernels.jit
def add_day(t):
    return t + np.timedelta64(1, "D")


@ckernels.jit
def since_2000(t):
    return t - np.datetime64("2000-01-01")


@ckernels.jit
def scale(d, k):
    return d * k


@ckernels.jit
def ratio(a, b):
    return a / b


@ckernels.jit
def later(a, b):
    return max(a, b) if a == a and b == b else a


@ckernels.jit
def is_recent(t):
    return t >= np.datetime64("2000-01-01T00:00:00")


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    """Every lazily compiled signature the tests use, compiled before the
    first test (compiled code lives as long as its function: it is no leak
    of the test that happens to compile it first)."""
    add_day(T)
    add_day(T[:1].astype("M8[ns]"))
    add_day(ckernels.asarray(pa.array([0], pa.timestamp("s", tz="UTC"))))
    since_2000(T)
    scale(D, 3)
    ratio(D, D)
    later(T, T)
    is_recent(T)
    add_hour(T.astype("M8[ms]"))
    for unit in ("D", "s", "ns"):
        text_of(T[:1].astype(f"M8[{unit}]"))
    text_of(D[:1].astype("m8[ms]"))
    labelled(np.array(["2024-03-01T12:00"], "M8[m]"), np.array([90], "m8[m]"))
    double(D)
    minutes(np.array([1], np.int32))
    pd = pytest.importorskip("pandas")
    for s in _pandas_series(pd):
        (double if s.dtype.kind == "m" else add_day)(s)


def _pandas_series(pd):
    """A zoned, a naive and a duration Series (what the pandas tests take)."""
    idx = ["a", "b", "c"]
    zoned = pd.Series(pd.to_datetime(["2024-01-01T00:00", "2024-03-31T12:00", None],
                                     format="ISO8601").tz_localize("Europe/Paris"),
                      index=idx, name="when")
    naive = pd.Series(pd.to_datetime(["2024-01-01", None]), index=[7, 9])
    d = pd.Series(pd.to_timedelta([1, None, 3], unit="s"), index=[5, 6, 7])
    return zoned, naive, d


def test_explicit_signature_numpy_arrays():
    got = add(T, D)
    assert isinstance(got, np.ndarray) and got.dtype == np.dtype("M8[s]")
    np.testing.assert_array_equal(got, T + D)        # NaT in either: NaT
    assert add.signatures == ["datetime[unit='s'](datetime[unit='s'], timedelta[unit='s'])"]


def test_spellings_of_numpy_and_numba():
    got = diff(T, T[::-1])
    assert got.dtype == np.dtype("m8[s]")
    np.testing.assert_array_equal(got, T - T[::-1])
    np.testing.assert_array_equal(before(T, T[::-1]), T < T[::-1])   # NaT compares False
    assert before.signatures == ["bool(datetime[unit='s'], datetime[unit='s'])"]


def test_lazy_units_follow_numpy():
    for unit in ("s", "ns"):
        x = T.astype(f"M8[{unit}]") if unit != "ns" else T[:4].astype("M8[ns]")
        got = add_day(x)
        want = x + np.timedelta64(1, "D")
        assert got.dtype == want.dtype, unit                 # NumPy's result unit
        np.testing.assert_array_equal(got, want)
    got = since_2000(T)
    np.testing.assert_array_equal(got, T - np.datetime64("2000-01-01"))
    assert got.dtype == np.dtype("m8[s]")


def test_lazy_durations_times_numbers():
    np.testing.assert_array_equal(scale(D, 3), D * 3)
    np.testing.assert_array_equal(scale(D, np.int64(-2)), D * -2)
    got = ratio(D, np.timedelta64(2, "s"))
    np.testing.assert_array_equal(got, D / np.timedelta64(2, "s"))   # NaT / x: nan
    assert got.dtype == np.float64


def test_comparisons_and_max():
    np.testing.assert_array_equal(is_recent(T), T >= np.datetime64("2000-01-01T00:00:00"))
    a = T[:2]
    b = T[3:5]
    np.testing.assert_array_equal(later(a, b), np.maximum(a, b))


def test_scalars_give_numpy_scalars():
    t = np.datetime64("2024-02-28T10:00:00")
    r = add_day(t)
    assert isinstance(r, np.datetime64) and r == t + np.timedelta64(1, "D")
    assert r.dtype == np.dtype("M8[s]")
    assert np.isnat(add_day(np.datetime64("NaT", "s")))
    d = diff(np.datetime64("2024-01-02", "s"), np.datetime64("2024-01-01", "s"))
    assert isinstance(d, np.timedelta64) and d == np.timedelta64(86400, "s")


ONE_HOUR = np.timedelta64(1, "h")       # a global constant (Numba's own kind)


@ckernels.jit
def add_hour(t):
    return t + ONE_HOUR


def test_numba_njit_agrees():
    # Numba compiles np.timedelta64 globals (not calls of it): the peer
    import numba
    ref = numba.njit(add_hour.py_func)
    x = T.astype("M8[ms]")
    got = add_hour(x)
    np.testing.assert_array_equal(got, np.array([ref(v) for v in x], "M8[ms]"))
    np.testing.assert_array_equal(got, x + ONE_HOUR)


def test_ckernels_arrays():
    a = ckernels.asarray(T)
    got = add_day(a)
    assert str(got.type.dtype) == "datetime[unit='s']"
    np.testing.assert_array_equal(np.asarray(got), T + np.timedelta64(1, "D"))
    got = add(a, ckernels.asarray(D))
    np.testing.assert_array_equal(np.asarray(got), T + D)


def test_pyarrow_with_nulls():
    ts = pa.array([0, None, 86400, 1_700_000_000], pa.timestamp("s"))
    du = pa.array([1, 2, None, 4], pa.duration("s"))
    got = add(ckernels.asarray(ts), ckernels.asarray(du))
    assert got.type.dtype.is_option              # a null in either: a null out
    want = pa.compute.add(ts, du)
    assert got.tolist() == want.to_pylist()
    got = add_day(ckernels.asarray(ts))
    assert got.tolist() == pa.compute.add(ts, pa.scalar(86400, pa.duration("s"))).to_pylist()


def test_pyarrow_back_keeps_the_type():
    ts = pa.array([0, None, 86400], pa.timestamp("s"))
    got = add_day(ckernels.asarray(ts))
    back = pa.array(got)
    assert back.type == pa.timestamp("s")
    assert back.to_pylist() == pa.compute.add(ts, pa.scalar(86400, pa.duration("s"))) \
        .to_pylist()


def test_a_zoned_instant_is_its_utc_count():
    x = ckernels.asarray(pa.array([0, 3600], pa.timestamp("s", tz="UTC")))
    got = add_day(x)
    assert np.asarray(got).tolist() == (T[:0].astype("M8[s]").tolist() or
                                        [np.datetime64(86400, "s").item(),
                                         np.datetime64(90000, "s").item()])


def test_unsupported_time_kinds_are_clear():
    with pytest.raises(TypeError, match="unsupported argument type 'date'.*datetime"):
        ckernels.jit("int64(date)")(lambda d: 1)
    with pytest.raises(TypeError, match="datetime\\[unit=...\\]"):
        ckernels.jit("int64(time)")(lambda d: 1)


def test_wrong_unit_with_explicit_signature_is_refused_or_cast_safely():
    # s -> ms is safe (NumPy's can_cast): the value converts exactly
    x = T.astype("M8[D]")
    np.testing.assert_array_equal(add(x, D), x.astype("M8[s]") + D)
    # ns -> s would drop digits: no signature takes it
    with pytest.raises(TypeError, match="no signature matches"):
        add(T.astype("M8[ns]"), D)


@ckernels.jit
def text_of(t):
    return str(t)


@ckernels.jit
def labelled(t, d):
    return f"at {t} for {d}"


def test_str_of_instants_is_numpys_text():
    for unit in ("D", "s", "ns"):
        x = T[:4].astype(f"M8[{unit}]")
        want = [str(v) for v in x]               # NumPy's str: the unit's precision
        assert np.datetime_as_string(x).tolist() == want
        assert text_of(x).tolist() == want, unit
    # where Python's datetime can say it, its isoformat agrees
    x = T[[0, 1, 3]]
    assert text_of(x).tolist() == [v.isoformat() for v in x.tolist()]


def test_str_of_durations_is_iso8601_as_pandas():
    pd = pytest.importorskip("pandas")
    x = np.array([0, 86400 + 3723, -1, 1_500_000, "NaT"], "m8[s]").astype("m8[ms]")
    x[2] = np.timedelta64(-1500, "ms")
    want = [pd.Timedelta(v).isoformat() if not np.isnat(v) else "NaT" for v in x]
    assert text_of(x).tolist() == want


def test_fstrings_of_instants_and_durations():
    got = labelled(np.array(["2024-03-01T12:00"], "M8[m]"), np.array([90], "m8[m]"))
    assert got.tolist() == ["at 2024-03-01T12:00 for P0DT1H30M0S"]


pd = pytest.importorskip("pandas")


@ckernels.jit
def double(d):
    return d * 2


def test_pandas_series_in_series_out():
    idx = ["a", "b", "c"]
    s, naive, d = _pandas_series(pd)
    got = add_day(s)
    assert isinstance(got, pd.Series) and list(got.index) == idx and got.name == "when"
    assert str(got.dtype.tz) == "Europe/Paris"                  # the zone kept
    pd.testing.assert_series_equal(got, s + pd.Timedelta(days=1), check_dtype=False)
    pd.testing.assert_series_equal(add_day(naive), naive + pd.Timedelta(days=1),
                                   check_dtype=False)
    got = double(d)
    assert list(got.index) == [5, 6, 7] and got.dtype.kind == "m"
    pd.testing.assert_series_equal(got, d * 2, check_dtype=False)


def test_ops_on_pandas_keep_index_and_zone():
    s = pd.Series(pd.to_datetime(["2024-01-01", None]).tz_localize("UTC"), index=[3, 4])
    got = ckernels.ops.add(s, np.timedelta64(1, "h"))
    assert list(got.index) == [3, 4] and str(got.dtype.tz) == "UTC"
    pd.testing.assert_series_equal(got, s + pd.Timedelta(hours=1), check_dtype=False)


@ckernels.jit
def minutes(n):
    return np.timedelta64(n, "m")


def test_constructors_of_run_time_counts_and_their_errors():
    got = minutes(np.array([1, -2, 90], np.int32))
    assert got.dtype == np.dtype("m8[m]") and got.tolist() == \
        np.array([1, -2, 90], "m8[m]").tolist()
    with pytest.raises(TypeError, match="converting a time value to another unit"):
        ckernels.jit(lambda d: np.timedelta64(d, "s"))(D[:1].astype("m8[m]"))
    with pytest.raises(TypeError, match="np.timedelta64\\(1, 'Q'\\)"):
        ckernels.jit(lambda t: t + np.timedelta64(1, "Q"))(T[:1])


@ckernels.jit("?datetime[s](?datetime[s])")
def epoch_if_null(t):
    return np.datetime64(0, "s") if t is None else t


def test_option_signature_sees_the_nulls():
    a = ckernels.asarray(pa.array([5, None], pa.timestamp("s")))
    assert epoch_if_null(a).tolist() == [np.datetime64(5, "s").item(),
                                         np.datetime64(0, "s").item()]
