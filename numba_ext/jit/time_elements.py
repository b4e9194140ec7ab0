"""Instants and durations as element types of jitted functions.

A signature may name ``datetime[unit='s']`` (also ``datetime[s]``,
``datetime64[s]``, ``M8[s]``, Numba's ``NPDatetime('s')``) and
``timedelta[unit='s']`` (``timedelta[s]``, ``timedelta64[s]``, ``m8[s]``,
``NPTimedelta('s')``) with any of NumPy's units Y..ns; an instant with a
time zone (``datetime[unit='ns', tz='UTC']``) is taken as its UTC count (a
result is an instant without a zone).  Inside the function they are Numba's
``NPDatetime`` / ``NPTimedelta``: the arithmetic, comparisons and
``np.datetime64`` / ``np.timedelta64`` constants Numba supports, NaT as
NumPy's.  Underneath both are int64 counts (``ckernel/datetime.h``), so the
entry points load and store them as Numba's data model of those types does.

:class:`TimeElement` has the attributes of a row of :mod:`ckernels.dtypes`
(``name``, ``type_id``, ``size``, ``kind`` -- ``"M"`` or ``"m"`` as NumPy's
--, ``numpy``, ``numba``, ``cffi``, ``jit``); dates and times of day have no
Numba type and stay refused.
"""

from __future__ import annotations

import re

import numpy as np

from .._native import ffi, lib
from ..types import Type, as_type

#: type id -> NumPy kind of the time types a jitted function takes
KINDS = {int(lib.CK_TYPE_DATETIME): "M", int(lib.CK_TYPE_TIMEDELTA): "m"}
_WORD = {"M": "datetime", "m": "timedelta"}

#: ``datetime[s]`` / ``timedelta[ms]`` -> the grammar's ``datetime[unit='s']``
_SHORT = re.compile(r"\b(datetime|timedelta)\[\s*([A-Za-z]+)\s*\]")


class TimeElement:
    """An instant or duration type of a jitted signature (immutable; one per
    type name, :func:`of_type`)."""

    __slots__ = ("name", "type_id", "kind", "unit", "tz", "numpy")
    size = 8
    cffi = "int64_t"
    jit = True
    builtin = False
    numba_name = None

    def __init__(self, name, type_id, kind, unit, tz):
        for k, v in zip(self.__slots__, (name, type_id, kind, unit, tz,
                                         np.dtype(f"{kind}8[{unit}]"))):
            object.__setattr__(self, k, v)

    def __setattr__(self, name, value):
        raise AttributeError("ckernels.jit.time_elements.TimeElement is immutable")

    @property
    def numba(self):
        """Numba's ``NPDatetime(unit)`` or ``NPTimedelta(unit)``."""
        from numba.core import types
        return (types.NPDatetime if self.kind == "M" else types.NPTimedelta)(self.unit)

    def __repr__(self) -> str:
        return f"TimeElement({self.name!r})"


_BY_NAME: dict[str, TimeElement] = {}


def normalize(text: str) -> str:
    """A signature part with the short spellings ``datetime[s]`` /
    ``timedelta[s]`` written as the grammar's ``datetime[unit='s']``."""
    return _SHORT.sub(lambda m: f"{m.group(1)}[unit='{m.group(2)}']", text)


def of_type(t: Type) -> TimeElement | None:
    """The element of an instant or duration :class:`ckernels.types.Type`, or
    None for any other type."""
    kind = KINDS.get(int(t.type_id))
    if kind is None:
        return None
    name = str(t)
    el = _BY_NAME.get(name)
    if el is None:
        unit = ffi.string(lib.ck_time_unit_name(lib.ck_time_type_unit(t.c_type))).decode()
        tz = lib.ck_datetime_type_tz(t.c_type)
        el = TimeElement(name, int(t.type_id), kind, unit,
                         None if tz == ffi.NULL else ffi.string(tz).decode())
        if len(_BY_NAME) < 4096:
            _BY_NAME[name] = el
    return el


def of_name(name: str) -> TimeElement | None:
    """The element of a canonical type name, or None unless it is an instant
    or duration."""
    el = _BY_NAME.get(name)
    if el is not None:
        return el
    if not name.startswith(("datetime[", "timedelta[")):
        return None
    try:
        return of_type(as_type(name))
    except Exception:      # not a type string of ours: no time element
        return None


def of_numba(nbty) -> TimeElement | None:
    """The element of Numba's ``NPDatetime(unit)`` / ``NPTimedelta(unit)``
    (a unit of ckernels' time types; not the generic one), or None."""
    from numba.core import types
    if isinstance(nbty, types.NPDatetime):
        kind = "M"
    elif isinstance(nbty, types.NPTimedelta):
        kind = "m"
    else:
        return None
    if not nbty.unit:      # generic: NaT constants without a unit
        return None
    try:
        return of_type(as_type(np.dtype(f"{kind}8[{nbty.unit}]")))
    except Exception:      # a unit ckernels has no time type for (B, ps, ...)
        return None


def of_numpy(dt) -> TimeElement | None:
    """The element of a ``datetime64`` / ``timedelta64`` dtype, or None."""
    dt = np.dtype(dt)
    if dt.kind not in "Mm":
        return None
    return of_type(as_type(dt))


def is_time_name(name: str) -> bool:
    """Whether an element type name is an instant or duration."""
    return of_name(name) is not None


__all__ = ["TimeElement", "KINDS", "normalize", "of_type", "of_name", "of_numba", "of_numpy",
           "is_time_name"]
