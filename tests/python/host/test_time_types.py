"""Time types (datetime / timedelta / date / time) through the Python package:
NumPy datetime64/timedelta64 and Arrow's time types both ways without copies,
``tolist`` as NumPy's, ISO 8601 text with Python / NumPy / pandas as the
oracles, NumPy's arithmetic rules, and the errors of bad input."""

import datetime as dt

import numpy as np
import pytest

import ckernels
from ckernels.errors import CKTypeError, CKValueError, NotSupportedError

pa = pytest.importorskip("pyarrow")

UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns")


def _values(kind, unit):
    x = np.array([0, 1, -1, 19723, 1 << 20, np.iinfo(np.int64).min], dtype=np.int64)
    return x.view(f"{kind}8[{unit}]")


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("kind", ["M", "m"])
def test_numpy_zero_copy_both_ways(kind, unit):
    x = _values(kind, unit)
    a = ckernels.asarray(x)
    name = "datetime" if kind == "M" else "timedelta"
    assert str(a.type) == f"strided * {name}[unit='{unit}']"
    assert a.dtype == x.dtype
    back = np.asarray(a)
    assert np.shares_memory(back, x) and back.dtype == x.dtype
    np.testing.assert_array_equal(back.view(np.int64), x.view(np.int64))
    assert a.tolist() == x.tolist()                 # NumPy's objects, NaT as None
    assert ckernels.array(x).tolist() == x.tolist()  # a copy of its own


def test_numpy_2d_and_strided():
    x = np.arange(12, dtype=np.int64).view("M8[s]").reshape(3, 4)[:, ::2]
    a = ckernels.asarray(x)
    assert a.shape == (3, 2)
    assert np.shares_memory(np.asarray(a), x)
    assert a.tolist() == x.tolist()


def test_numpy_bad_input_is_clear():
    with pytest.raises(CKTypeError, match="generic unit"):
        ckernels.asarray(np.array(["NaT"], "M8"))
    with pytest.raises(CKTypeError, match="unit ps"):
        ckernels.asarray(np.array([0], "M8[ps]"))
    with pytest.raises(CKTypeError, match="unit 5s"):
        ckernels.asarray(np.array([0], "m8[5s]"))
    with pytest.raises(CKTypeError, match="not in native byte order"):
        ckernels.asarray(np.array([0], ">M8[s]"))
    # array() converts a byte-swapped array, as it does numbers
    assert ckernels.array(np.array([86400], ">M8[s]")).tolist() == [dt.datetime(1970, 1, 2)]


def test_spellings_parse_and_print():
    for text in ["datetime[unit='s']", "datetime[unit='ns', tz='UTC']", "timedelta[unit='D']",
                 "date", "date[unit='ms']", "time[unit='us']", "3 * ?datetime[unit='ms']"]:
        assert str(ckernels.types.parse(text)) == text
    assert str(ckernels.types.parse("datetime64[ns]")) == "datetime[unit='ns']"
    assert ckernels.types.parse("datetime[unit='s']").to_numpy_dtype() == np.dtype("M8[s]")


UNIT_TIMESPEC = {"h": "hours", "m": "minutes", "s": "seconds", "ms": "milliseconds",
                 "us": "microseconds"}


@pytest.mark.parametrize("unit", ["D", "h", "m", "s", "ms", "us", "ns", "M", "Y", "W"])
def test_iso_text_matches_numpy_and_python(unit):
    rng = np.random.default_rng(7)
    raw = rng.integers(-500, 500, 200) if unit in "YM" else \
        rng.integers(-(1 << 31), 1 << 31, 200)
    x = raw.astype(np.int64).view(f"M8[{unit}]")
    text = ckernels.asarray(x).astype("string").tolist()
    assert text == np.datetime_as_string(x).tolist()
    if unit in UNIT_TIMESPEC:      # Python's isoformat, the same precision
        objs = x.astype("M8[us]").tolist()     # ints outside Python's years 1..9999
        pairs = [(t, o) for t, o in zip(text, objs) if isinstance(o, dt.datetime)]
        assert pairs
        assert [t for t, _ in pairs] == \
            [o.isoformat(timespec=UNIT_TIMESPEC[unit]) for _, o in pairs]
    back = ckernels.array(text).astype(f"datetime[unit='{unit}']")
    np.testing.assert_array_equal(np.asarray(back), x)


def test_duration_text_matches_pandas():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    for unit in ("s", "ms", "us", "ns"):
        x = rng.integers(-(10**15), 10**15, 100).view(f"m8[{unit}]")
        text = ckernels.asarray(x).astype("string").tolist()
        assert text == [pd.Timedelta(v).isoformat() for v in x]
        back = ckernels.array(text).astype(f"timedelta[unit='{unit}']")
        np.testing.assert_array_equal(np.asarray(back), x)


def test_string_parse_errors():
    s = ckernels.array(["2024-02-30"])
    with pytest.raises(CKValueError, match="cannot parse '2024-02-30'"):
        s.astype("datetime[unit='s']")
    with pytest.raises(CKValueError, match="finer precision"):
        ckernels.array(["2024-01-01T00:00:00.5"]).astype("datetime[unit='s']")


def test_unit_conversion_as_numpy_astype():
    x = np.array([-61, -1, 0, 59, 61, 86399, 86400 * 400], "m8[s]")
    for unit in ("m", "h", "D", "W"):
        got = _astype_floor(x, f"timedelta[unit='{unit}']")
        np.testing.assert_array_equal(np.asarray(got), x.astype(f"m8[{unit}]"))
    y = np.array([-86401, -1, 0, 86400 * 45, 86400 * 800], "M8[s]")
    for unit in ("m", "h", "D", "W", "M", "Y"):
        got = _astype_floor(y, f"datetime[unit='{unit}']")
        np.testing.assert_array_equal(np.asarray(got), y.astype(f"M8[{unit}]"))
    with pytest.raises(OverflowError):
        ckernels.asarray(np.array([1 << 62], "M8[s]")).astype("datetime[unit='ns']")


def _astype_floor(x, type_):
    """Conversion under the 'overflow' error mode: floored like NumPy's astype."""
    return ckernels.asarray(x).astype(type_, "overflow")


def test_integer_views():
    x = np.array([5, "NaT"], "M8[s]")
    assert ckernels.asarray(x).astype("int64").tolist() == x.astype(np.int64).tolist()
    assert ckernels.array([5, 7]).astype("timedelta[unit='ms']").tolist() == \
        np.array([5, 7], "m8[ms]").tolist()


ARROW_TYPES = [pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"),
               pa.timestamp("ns", tz="UTC"), pa.timestamp("us", tz="Europe/Paris"),
               pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"),
               pa.time64("ns"), pa.duration("s"), pa.duration("ms"), pa.duration("us"),
               pa.duration("ns")]


@pytest.mark.parametrize("typ", ARROW_TYPES, ids=str)
def test_arrow_zero_copy_both_ways(typ):
    storage = pa.int64() if typ.bit_width == 64 else pa.int32()
    day = 86_400_000 if typ == pa.date64() else 1
    src = pa.array(np.array([0, 1, 2, 3]) * day, storage).view(typ)
    a = ckernels.asarray(src)
    assert a._data == src.buffers()[1].address
    back = pa.array(a)
    assert back.type == typ and back.equals(src)
    assert back.buffers()[1].address == src.buffers()[1].address


def test_arrow_nulls_and_text():
    src = pa.array([dt.datetime(2024, 1, 1, 10, 30), None], pa.timestamp("ms"))
    a = ckernels.asarray(src)
    assert str(a.type) == "strided * ?datetime[unit='ms']"
    assert pa.array(a).equals(src)
    utc = pa.array([0], pa.timestamp("s", tz="UTC"))
    assert ckernels.asarray(utc).astype("string").tolist() == \
        [dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc).isoformat()]


def test_arrow_refusals():
    with pytest.raises(NotSupportedError, match="interval"):
        ckernels.asarray(pa.array([(1, 2, 3)], pa.month_day_nano_interval()))
    day = ckernels.asarray(np.array([1], "M8[D]"))
    with pytest.raises(NotSupportedError, match="count s, ms, us or ns"):
        pa.array(day)


def test_arithmetic_as_numpy():
    t = np.array(["2024-01-01T00:00:00", "2024-03-01T12:00:00", "NaT"], "M8[s]")
    u = np.array(["2023-12-31", "2024-02-29", "2024-01-01"], "M8[D]")
    d = np.array([90, -1, 5], "m8[ms]")
    a, b, c = ckernels.asarray(t), ckernels.asarray(u), ckernels.asarray(d)
    cases = [
        (ckernels.ops.subtract(a, b), t - u),
        (ckernels.ops.add(a, c), t + d),
        (ckernels.ops.add(c, a), d + t),
        (ckernels.ops.subtract(a, c), t - d),
        (ckernels.ops.multiply(c, ckernels.asarray(np.array([3, -2, 0]))), d * np.array([3, -2, 0])),
        (ckernels.ops.floor_divide(c, ckernels.asarray(np.array([7, 7, 7]))), d // 7),
        (ckernels.ops.less(a, b), t < u),
        (ckernels.ops.equal(a, a), t == t),
        (ckernels.ops.not_equal(a, a), t != t),
        (ckernels.ops.maximum(c, c), np.maximum(d, d)),
    ]
    for got, want in cases:
        got = np.asarray(got)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)


def test_arithmetic_refusals():
    a = ckernels.asarray(np.array([0], "M8[s]"))
    with pytest.raises(CKTypeError, match=r"add\(datetime"):
        ckernels.ops.add(a, a)
    z = ckernels.asarray(pa.array([0], pa.timestamp("s", tz="UTC")))
    with pytest.raises(CKTypeError, match="different time zones"):
        ckernels.ops.subtract(a, z)
    with pytest.raises(OverflowError):
        big = ckernels.asarray(np.array([np.iinfo(np.int64).max - 1], "m8[s]"))
        ckernels.ops.add(big, big)


def test_tolist_of_dates_times_and_zones():
    """Types NumPy has no dtype for read as Python's objects (the C reader)."""
    src = pa.array([19723, None], pa.date32())
    assert ckernels.asarray(src).tolist() == [dt.date(2024, 1, 1), None]
    assert ckernels.asarray(pa.array([3661001], pa.time32("ms"))).tolist() == \
        [dt.time(1, 1, 1, 1000)]
    utc = ckernels.asarray(pa.array([0], pa.timestamp("s", tz="UTC")))
    assert utc.tolist() == [dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)]
    row = ckernels.array([{"t": 1}], type="1 * {t: int64}")
    assert row.tolist() == [{"t": 1}]


def test_pandas_polars_duckdb():
    pd = pytest.importorskip("pandas")
    s = pd.Series(pd.to_datetime(["2024-01-01", None]), index=[10, 20])
    a = ckernels.asarray(s)
    assert a.dtype == s.dtype and a.tolist() == s.to_numpy().tolist()
    assert np.shares_memory(np.asarray(a), s.to_numpy())
    d = ckernels.asarray(pd.Series(pd.to_timedelta(["1s", "2D"])))
    assert d.tolist() == pd.Series(pd.to_timedelta(["1s", "2D"])).to_numpy().tolist()
    z = ckernels.asarray(pd.Series(pd.to_datetime(["2024-01-01"]).tz_localize("UTC")))
    assert str(z.type).endswith("datetime[unit='ns', tz='UTC']") or \
        str(z.type).endswith("datetime[unit='us', tz='UTC']")
    with pytest.raises(CKTypeError, match="Period"):
        ckernels.asarray(pd.Series(pd.period_range("2024-01", periods=2, freq="M")))
    pl = pytest.importorskip("polars")
    assert str(ckernels.asarray(pl.Series([dt.date(2024, 1, 1)])).type) == "strided * date"
    assert ckernels.asarray(pl.Series([dt.timedelta(seconds=1)])).tolist() == \
        [dt.timedelta(seconds=1)]
    duckdb = pytest.importorskip("duckdb")
    rel = duckdb.sql("select TIMESTAMP '2024-01-01 10:00:00' as t, DATE '2024-01-02' as d")
    assert ckernels.asarray(rel).tolist() == [{"t": dt.datetime(2024, 1, 1, 10),
                                               "d": dt.date(2024, 1, 2)}]


def test_every_entry_point_takes_time_dtypes():
    v = np.array(["2020-01-01", "2021-06-30"], "M8[D]")
    assert ckernels.array([v[0], v[1]]).tolist() == v.tolist()
    assert ckernels.array(v[0]).tolist() == v[0].item()
    assert ckernels.asarray(v[0]).tolist() == v[0].item()
    assert str(ckernels.empty(2, "M8[s]").type) == "strided * datetime[unit='s']"
    assert ckernels.zeros(2, "m8[ms]").tolist() == np.zeros(2, "m8[ms]").tolist()
    a = ckernels.array([1, 2]).astype("M8[s]")
    assert a.tolist() == np.array([1, 2]).astype("M8[s]").tolist()
    a[:] = v
    assert a.tolist() == v.astype("M8[s]").tolist()


def test_nat_becomes_null_in_option_types():
    x = np.array(["2024-01-01", "NaT"], "M8[s]")
    a = ckernels.asarray(x).astype("?datetime[unit='s']")
    assert a.null_count == 1 and a.tolist() == [dt.datetime(2024, 1, 1), None]
    assert pa.array(a).equals(pa.array([dt.datetime(2024, 1, 1), None], pa.timestamp("s")))


def test_operators_and_numpy_scalars():
    x = np.array(["2024-01-01T00:00:00", "NaT"], "M8[s]")
    d = np.array([1, 2], "m8[s]")
    t, e = ckernels.asarray(x), ckernels.asarray(d)
    for got, want in [(t + np.timedelta64(1, "D"), x + np.timedelta64(1, "D")),
                      (t - t, x - x), (e * 2, d * 2), (2 * e, 2 * d), (-e, -d),
                      (e // 2, d // 2), (e / e, d / d), (t < t, x < x), (t == t, x == x)]:
        assert type(got) is ckernels.Array
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == want.dtype


def test_unknown_time_zone_is_refused():
    from ckernels.errors import ParseError
    assert str(ckernels.types.parse("datetime[unit='s', tz='Europe/Paris']")) == \
        "datetime[unit='s', tz='Europe/Paris']"
    assert ckernels.types.parse("datetime[unit='s', tz='+05:30']") is not None
    with pytest.raises(ParseError, match="unknown time zone 'Mars/Olympus'"):
        ckernels.types.parse("3 * datetime[unit='s', tz='Mars/Olympus']")
    with pytest.raises(ParseError, match="not a zone name"):
        ckernels.types.parse("datetime[tz='a b']")
