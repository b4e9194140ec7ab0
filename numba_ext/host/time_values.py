"""Python time values <-> the time types (``ckernel/datetime.h``), for the
writer and the type inference of :mod:`ckernels.host.convert`.

* :func:`time_kind`: what a value infers as -- NumPy's ``datetime64`` /
  ``timedelta64`` their own unit; ``datetime.datetime`` microseconds, with
  its zone's name when aware (pyarrow's inference: ``timestamp[us, tz=...]``);
  ``datetime.date`` a ``date`` (date32); ``datetime.time`` ``time[unit='us']``;
  ``datetime.timedelta`` microseconds;
* :func:`merge_time_kinds`: two of them in one list -- NumPy's common unit
  (``np.result_type``), the same zone or a clear error, no mixing of kinds;
* :func:`time_scalar` (instants, durations: NumPy converts the unit; an aware
  ``datetime`` is written as its UTC count) and :func:`write_calendar`
  (dates, times of day).
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from .. import types as _t
from .._native import ffi, lib
from ..errors import CKTypeError, CKValueError
from ..types import Type

#: instants and durations: NumPy's datetime64 / timedelta64 kinds
_TIME_KINDS = {int(lib.CK_TYPE_DATETIME): "M", int(lib.CK_TYPE_TIMEDELTA): "m"}
_DATE = int(lib.CK_TYPE_DATE)
_TIME_OF_DAY = int(lib.CK_TYPE_TIME)


def time_kind(v):
    """The inference kind of an instant or a duration, ``"time <type>"``:
    NumPy's scalars their own unit (an unsupported unit is the dtype's
    error), naive ``datetime.datetime`` and ``datetime.timedelta`` the
    microseconds they hold (as ``pa.array`` infers); None for other values."""
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return "time " + str(_t.from_numpy_dtype(v.dtype))
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            return "time datetime[unit='us']"
        return f"time datetime[unit='us', tz='{zone_name(v)}']"
    if isinstance(v, _dt.date):            # a calendar date (pyarrow's date32)
        return "time date"
    if isinstance(v, _dt.time) and v.tzinfo is None:   # pyarrow's time64[us]
        return "time time[unit='us']"
    if isinstance(v, _dt.timedelta):
        return "time timedelta[unit='us']"
    return None


def zone_name(v: _dt.datetime) -> str:
    """The time zone name of an aware ``datetime`` as pyarrow infers it:
    a ``zoneinfo`` (or pytz / dateutil) zone's key, ``"UTC"`` for
    ``datetime.timezone.utc``, ``"+hh:mm"`` for another fixed offset."""
    tz = v.tzinfo
    key = getattr(tz, "key", None) or getattr(tz, "zone", None)
    if isinstance(key, str) and key:
        return key
    if isinstance(tz, _dt.timezone):
        off = tz.utcoffset(None)
        if off == _dt.timedelta(0):
            return "UTC"
        sign = "-" if off < _dt.timedelta(0) else "+"
        minutes = abs(off) // _dt.timedelta(minutes=1)
        if abs(off) % _dt.timedelta(minutes=1):
            raise CKValueError(f"time zone {tz!r} of {v!r} is not a whole number of minutes")
        return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    raise CKTypeError(f"cannot infer a ckernel type for {v!r}: its tzinfo {tz!r} has no zone "
                      "name (use zoneinfo.ZoneInfo or datetime.timezone)")


def merge_time_kinds(a: str, b: str) -> str:
    """Two time kinds (``"time <type>"``) of one list: instants or durations
    of different units take NumPy's common unit (``np.result_type``: the
    finer one, ``[D]`` and ``[s]`` give ``[s]``); zones must agree; anything
    else (a ``date`` with a ``datetime``, an instant with a duration) is an
    error, as NumPy gives such a list no time dtype."""
    ta, tb = _t.parse(a[5:]), _t.parse(b[5:])
    if ta.type_id != tb.type_id or int(ta.type_id) not in _TIME_KINDS:
        raise CKTypeError(f"cannot mix {_time_value_name(ta)} and {_time_value_name(tb)} "
                          "values in one array (NumPy makes such a list an object array); "
                          "convert them to one kind first")
    za, zb = _zone_of(ta), _zone_of(tb)
    if za != zb:
        says = {None: "without a time zone"}
        raise CKTypeError(
            f"cannot mix instants {says.get(za, f'in time zone {za!r}')} and "
            f"{says.get(zb, f'in time zone {zb!r}')} in one array: convert them to one zone "
            "first (datetime.astimezone)")
    try:
        common = np.result_type(ta.to_numpy_dtype(), tb.to_numpy_dtype())
    except TypeError as e:     # m8[Y] with m8[D]: no common unit (NumPy's error)
        raise CKTypeError(f"cannot mix '{ta}' and '{tb}' values in one array: {e}") from None
    unit = np.datetime_data(common)[0]
    word = "datetime" if common.kind == "M" else "timedelta"
    return f"time {word}[unit='{unit}'" + (f", tz='{za}']" if za else "]")


def _zone_of(t: Type):
    tz = lib.ck_datetime_type_tz(t.c_type)
    return None if tz == ffi.NULL else ffi.string(tz).decode()


def _time_value_name(t: Type) -> str:
    return {int(lib.CK_TYPE_DATETIME): "datetime", int(lib.CK_TYPE_TIMEDELTA): "timedelta",
            int(lib.CK_TYPE_DATE): "date", int(lib.CK_TYPE_TIME): "time of day"}.get(
                int(t.type_id), str(t)) + f" ('{t}')"


def time_scalar(t: Type, value) -> np.ndarray:
    """An instant or a duration of type ``t`` as a 0-d NumPy array of its
    unit: ``datetime64`` / ``datetime.date`` / ``datetime.datetime`` for an
    instant, ``timedelta64`` / ``datetime.timedelta`` for a duration (NumPy
    converts the unit); anything else is a :class:`CKTypeError`."""
    kind = _TIME_KINDS[int(t.type_id)]
    ok = (np.datetime64, _dt.date) if kind == "M" else (np.timedelta64, _dt.timedelta)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == kind:
        value = value[()]
    if isinstance(value, _dt.datetime) and value.tzinfo is not None:
        # an aware instant: its UTC count (the data of every instant is UTC)
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    if not isinstance(value, ok) or isinstance(value, (bool, np.bool_)):
        want = "datetime64 or datetime.datetime" if kind == "M" else \
            "timedelta64 or datetime.timedelta"
        raise CKTypeError(f"cannot assign {type(value).__name__} value {value!r} to '{t}' "
                          f"(give a {want})")
    return np.array(value, t.to_numpy_dtype())


def write_calendar(t: Type, ptr, value) -> bool:
    """Write ``value`` at ``ptr`` when ``t`` is a date or a time of day (True),
    else do nothing (False)."""
    tid = int(t.type_id)
    if tid == _DATE:
        _write_date(t, ptr, value)
        return True
    if tid != _TIME_OF_DAY:
        return False
    if not isinstance(value, _dt.time) or value.tzinfo is not None:
        raise CKTypeError(f"cannot assign {type(value).__name__} value {value!r} to '{t}' "
                          "(give a datetime.time without a zone)")
    us = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6 + value.microsecond
    unit = ffi.string(lib.ck_time_unit_name(lib.ck_time_type_unit(t.c_type))).decode()
    per = {"s": 10**6, "ms": 10**3}.get(unit)
    if per is not None and us % per:
        raise CKValueError(f"cannot assign {value!r} to '{t}': it has digits finer than "
                           "the unit")
    n = us // per if per is not None else us * (1000 if unit == "ns" else 1)
    v = np.array(n, np.int32 if int(lib.ck_type_data_size(t.c_type)) == 4 else np.int64)
    ffi.memmove(ptr, v.tobytes(), v.itemsize)
    return True


def _write_date(t: Type, ptr, value) -> None:
    """A ``datetime.date`` (or a ``datetime64`` of whole days) into a ``date``
    (days since 1970-01-01, int32) or ``date[unit='ms']`` (int64)."""
    if isinstance(value, np.datetime64):
        day = value.astype("M8[D]")
        if day != value and not np.isnat(value):
            raise CKValueError(f"cannot assign {value!r} to '{t}': it is not a whole day")
        days = None if np.isnat(day) else int(day.astype(np.int64))
    elif isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        days = (value - _dt.date(1970, 1, 1)).days
    else:
        raise CKTypeError(f"cannot assign {type(value).__name__} value {value!r} to '{t}' "
                          "(give a datetime.date)")
    size = int(lib.ck_type_data_size(t.c_type))
    dt = np.dtype(np.int32 if size == 4 else np.int64)
    if days is None:                       # NaT: the smallest value
        v = np.array(np.iinfo(dt).min, dt)
    else:
        v = np.array(days if size == 4 else days * 86_400_000, dt)
    ffi.memmove(ptr, v.tobytes(), v.itemsize)


__all__ = ["time_kind", "zone_name", "merge_time_kinds", "time_scalar", "write_calendar"]
