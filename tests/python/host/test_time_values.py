"""Python time values in ``ckernels.array`` (``ckernels.host.time_values``)
and how time arrays print: mixed units promote as NumPy does, aware
``datetime`` values infer as pyarrow infers them (a zone by name, the data
UTC), mixed zones and mixed kinds are clear errors, dates and times of day
are written; ``repr`` / ``str`` / the Jupyter picture show ISO 8601 text,
never raw counts.  NumPy and pyarrow are the oracles."""

import datetime as dt
import zoneinfo

import numpy as np
import pytest

import ckernels
from ckernels import errors

pa = pytest.importorskip("pyarrow")

UTC = dt.timezone.utc
PARIS = zoneinfo.ZoneInfo("Europe/Paris")


def test_mixed_units_promote_as_numpy():
    vals = [np.datetime64("2024-01-01"), np.datetime64("2024-01-01T00:00:01")]
    a = ckernels.array(vals)
    want = np.array(vals)
    assert str(a.type.dtype) == f"datetime[unit='{np.datetime_data(want.dtype)[0]}']"
    np.testing.assert_array_equal(np.asarray(a), want)
    # NumPy scalars with Python datetimes (microseconds): NumPy's common unit
    vals = [np.datetime64("2024-01-01", "D"), dt.datetime(2024, 1, 1, 5, 0, 0, 7)]
    a = ckernels.array(vals)
    assert str(a.type.dtype) == "datetime[unit='us']"
    np.testing.assert_array_equal(np.asarray(a), np.array(vals, "M8[us]"))
    d = ckernels.array([np.timedelta64(1, "h"), dt.timedelta(seconds=1), None])
    assert str(d.type.dtype) == "?timedelta[unit='us']"
    with pytest.raises(errors.CKTypeError, match=r"common metadata divisor"):
        ckernels.array([np.timedelta64(1, "Y"), np.timedelta64(1, "D")])  # NumPy refuses too


@pytest.mark.parametrize("tz, name", [(UTC, "UTC"), (PARIS, "Europe/Paris"),
                                      (dt.timezone(dt.timedelta(hours=-3, minutes=-30)),
                                       "-03:30")])
def test_zoned_datetimes_infer_as_pyarrow(tz, name):
    vals = [dt.datetime(2024, 7, 1, 12, 30, tzinfo=tz), None,
            dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=tz)]
    a = ckernels.array(vals)
    want = pa.array(vals)
    assert want.type == pa.timestamp("us", tz=name)
    assert str(a.type.dtype) == f"?datetime[unit='us', tz='{name}']"
    got = pa.array(a)
    assert got.type == want.type
    assert got.cast(pa.int64()).to_pylist() == want.cast(pa.int64()).to_pylist()  # UTC counts


def test_mixed_zones_and_kinds_are_refused():
    with pytest.raises(errors.CKTypeError, match="time zone 'Europe/Paris' and in time zone 'UTC'"):
        ckernels.array([dt.datetime(2024, 1, 1, tzinfo=PARIS), dt.datetime(2024, 1, 1, tzinfo=UTC)])
    with pytest.raises(errors.CKTypeError, match="without a time zone"):
        ckernels.array([dt.datetime(2024, 1, 1, tzinfo=UTC), dt.datetime(2024, 1, 1)])
    with pytest.raises(errors.CKTypeError, match=r"cannot mix date .* and datetime"):
        ckernels.array([dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 5)])
    with pytest.raises(errors.CKTypeError, match="cannot mix datetime .* and timedelta"):
        ckernels.array([dt.datetime(2024, 1, 1), dt.timedelta(days=1)])


def test_dates_and_times_of_day_as_pyarrow():
    days = [dt.date(2024, 2, 29), None, dt.date(1969, 12, 31)]
    a = ckernels.array(days)
    assert str(a.type.dtype) == "?date"
    assert pa.array(a).equals(pa.array(days))           # date32, the same days
    assert a.tolist() == days
    times = [dt.time(10, 30, 0, 500000), dt.time(0, 0), None]
    t = ckernels.array(times)
    assert str(t.type.dtype) == "?time[unit='us']"
    assert pa.array(t).equals(pa.array(times))          # time64[us]
    with pytest.raises(errors.CKValueError, match="finer than the unit"):
        ckernels.array([dt.time(10, 30, 0, 5)], dtype="time[unit='s']")


def test_repr_shows_iso_text():
    ns = np.array(["2024-01-01T00:00:00.123456789", "NaT"], "M8[ns]")
    a = ckernels.array(ns)
    assert str(a) == np.array2string(ns)                # NumPy's own text of M8[ns]
    assert "'2024-01-01T00:00:00.123456789'" in repr(a) and "1704067200" not in repr(a)
    zoned = ckernels.array([dt.datetime(2024, 7, 1, 12, tzinfo=PARIS)])
    assert repr(zoned) == ("ckernels.array(['2024-07-01T10:00:00.000000+00:00'], "
                           "type=\"strided * datetime[unit='us', tz='Europe/Paris']\")")
    assert str(ckernels.array([dt.date(2024, 1, 1), None])) == "['2024-01-01' None]"
    assert str(ckernels.array([dt.time(10, 30, 0, 500000)])) == "['10:30:00.500000']"
    opt = ckernels.array([np.datetime64("2024-01-01T00:00:01"), None])
    assert str(opt) == "['2024-01-01T00:00:01' None]"
    d = np.array([1, "NaT"], "m8[ns]")
    assert str(ckernels.array(d)) == np.array2string(d)   # durations: NumPy's counts
    # the Jupyter picture: values and summary as ISO text
    h = a._repr_html_()
    assert "2024-01-01T00:00:00.123456789" in h and "1704067200123456789" not in h
    assert "1 missing" in h


def test_memory_picture_items_as_iso_text():
    from ckernels.display import memory
    a = ckernels.array(np.array(["2024-01-01T00:00:00", "NaT"], "M8[s]"))
    assert memory.array_text(a).splitlines()[-1].split() == ["[0]=2024-01-01T00:00:00",
                                                             "[1]=NaT"]
    d = ckernels.array([dt.date(2024, 1, 1), None])
    assert "[0]=2024-01-01 [1]=null" in memory.array_text(d)
