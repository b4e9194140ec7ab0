"""Instants and durations inside ``@ckernels.jit`` functions, beyond what
Numba gives: ``np.datetime64(...)`` / ``np.timedelta64(...)`` calls, and
``str(t)`` / f-string fields ``{t}``.

Constructors: Numba types ``np.timedelta64`` as a class that takes one
argument (``np.timedelta64(1, "D")`` does not compile).  The pipeline
(:class:`ckernels.jit.fstrings.CkTranslateByteCode`) makes every call of
``np.datetime64`` / ``np.timedelta64`` a call of :func:`datetime64_value` /
:func:`timedelta64_value` (:func:`rewrite_constructors`): with constant
arguments (``np.datetime64("2000-01-01")``, ``np.timedelta64(1, "D")``,
``np.datetime64("NaT", "s")``) NumPy makes the value while compiling and the
code holds the constant (NumPy's unit: ``np.datetime64("2000-01-01")`` is in
days); with a run-time integer and a constant unit
(``np.timedelta64(n, "m")``) the count becomes the value; a time value
passes as it is in its own unit (another unit is a compile-time error:
convert the array first).

Text: ISO 8601 by the C core's formatter
(``ck_time_format``, ``ckernel/datetime.h``), the same text
``ckernels`` arrays give with ``astype("string")``.

* an instant (``datetime64``): NumPy's ``str`` / ``np.datetime_as_string`` --
  the precision of its unit (``"2024-01-01"`` for days,
  ``"2024-01-01T10:30:00.123"`` for milliseconds), ``"NaT"``.  NumPy's text is
  the oracle rather than ``datetime.isoformat``: it carries the unit (days,
  minutes, nanoseconds), years beyond 1..9999 and NaT, none of which a
  ``datetime`` can hold; where both can say it (units s and us) they agree;
* a duration (``timedelta64``): an ISO 8601 duration as pandas'
  ``Timedelta.isoformat`` (``"P1DT2H3M4.5S"``, ``"-P0DT0H0M1S"``; ``"P3M"``
  for calendar units), ``"NaT"`` -- NumPy's ``str`` (``"5 seconds"``) and
  Python's ``str(timedelta)`` (``"0:00:05"``) are not ISO 8601.

Registered with Numba when the jit first needs Numba
(:func:`ckernels.jit.kernel._ensure_numba`).  The generated code calls the
library by name (no addresses: ``cache=True`` code stays valid): it makes
the unit's type (``ck_datetime_type_new``), formats into a stack buffer and
releases the type.  Format specs on them (``{t:>20}``) stay refused at
compile time, as for other values without one.
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.cpython.unicode import PY_UNICODE_1BYTE_KIND, _empty_string, _set_code_point
from numba.extending import intrinsic, overload

#: NumPy's unit names -> ck_time_unit (ABI values, ckernel/datetime.h)
UNITS = {"Y": 0, "M": 1, "W": 2, "D": 4, "h": 5, "m": 6, "s": 7, "ms": 8, "us": 9, "ns": 10}
#: the text buffer (the longest text, an instant of unit ns near int64's
#: limits, is under 40 bytes)
TEXT_MAX = 64

_i8p = ir.IntType(8).as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)


def _declare(module, name, ret, args):
    return cgutils.get_or_insert_function(module, ir.FunctionType(ret, args), name)


@intrinsic
def _format_time(typingctx, value, buf):
    """Write the ISO 8601 text of ``value`` into ``buf`` (a uint8 array of
    TEXT_MAX bytes); its length, or -1 when the library failed."""
    if not isinstance(value, (types.NPDatetime, types.NPTimedelta)) or \
            value.unit not in UNITS:
        return None
    if not (isinstance(buf, types.Array) and buf.dtype == types.uint8):
        return None
    unit = UNITS[value.unit]
    instant = isinstance(value, types.NPDatetime)

    def codegen(context, builder, sig, args):
        mod = builder.module
        tslot = cgutils.alloca_once_value(builder, ir.Constant(_i8p, None))
        if instant:
            st = builder.call(_declare(mod, "ck_datetime_type_new", _i32,
                                       [_i32, _i8p, _i8p.as_pointer()]),
                              [ir.Constant(_i32, unit), ir.Constant(_i8p, None), tslot])
        else:
            st = builder.call(_declare(mod, "ck_timedelta_type_new", _i32,
                                       [_i32, _i8p.as_pointer()]),
                              [ir.Constant(_i32, unit), tslot])
        out = cgutils.alloca_once_value(builder, ir.Constant(_i64, -1))
        with builder.if_then(builder.icmp_signed("==", st, ir.Constant(_i32, 0))):
            t = builder.load(tslot)
            vslot = cgutils.alloca_once_value(builder, args[0])
            length = cgutils.alloca_once_value(builder, ir.Constant(_i64, 0))
            data = context.make_array(sig.args[1])(context, builder, args[1]).data
            fst = builder.call(
                _declare(mod, "ck_time_format", _i32, [_i8p, _i8p, _i8p, _i64,
                                                        _i64.as_pointer()]),
                [t, builder.bitcast(vslot, _i8p), builder.bitcast(data, _i8p),
                 ir.Constant(_i64, TEXT_MAX), length])
            builder.call(_declare(mod, "ck_type_decref", ir.VoidType(), [_i8p]), [t])
            ok = builder.and_(builder.icmp_signed("==", fst, ir.Constant(_i32, 0)),
                              builder.icmp_signed("<", builder.load(length),
                                                  ir.Constant(_i64, TEXT_MAX)))
            builder.store(builder.select(ok, builder.load(length), ir.Constant(_i64, -1)),
                          out)
        return builder.load(out)
    return types.int64(value, buf), codegen


def is_time_type(t) -> bool:
    """Whether Numba type ``t`` is an instant or duration with a unit."""
    return isinstance(t, (types.NPDatetime, types.NPTimedelta)) and t.unit in UNITS


def time_text(value):
    """``str(value)`` of an instant or duration in jitted functions (what
    :func:`ckernels.jit.fstrings.str_value` and f-string fields call)."""
    return str(value)


@overload(time_text)
def _ov_time_text(value):
    if not is_time_type(value):
        return None

    def impl(value):
        buf = np.empty(TEXT_MAX, np.uint8)
        n = _format_time(value, buf)
        if n < 0:
            raise MemoryError("no memory to format a time value")
        s = _empty_string(PY_UNICODE_1BYTE_KIND, n, 1)
        for i in range(n):
            _set_code_point(s, i, buf[i])
        return s
    return impl


# ---------------------------------------------------------- constructors --
def datetime64_value(value, unit=""):
    """``np.datetime64(value[, unit])`` in jitted functions."""
    return np.datetime64(value, unit) if unit else np.datetime64(value)


def timedelta64_value(value, unit=""):
    """``np.timedelta64(value[, unit])`` in jitted functions."""
    return np.timedelta64(value, unit) if unit else np.timedelta64(value)


_CONSTRUCTORS = {"datetime64": datetime64_value, "timedelta64": timedelta64_value}


@functools.lru_cache(maxsize=None)
def _constant(nbty, count: int):
    """An intrinsic giving the constant ``count`` as a value of ``nbty``."""
    @intrinsic
    def _const(typingctx):
        def codegen(context, builder, sig, args):
            return ir.Constant(_i64, count)
        return nbty(), codegen
    return _const


def _time_type(kind: str, unit: str):
    return (types.NPDatetime if kind == "M" else types.NPTimedelta)(unit)


def _overload_constructor(kind: str):
    def typer(value, unit=""):
        from numba.core.errors import TypingError
        name = "np.datetime64" if kind == "M" else "np.timedelta64"
        if isinstance(unit, str):              # the default, as Numba hands it
            u = unit
        elif isinstance(unit, types.Omitted):
            u = unit.value or ""
        elif isinstance(unit, types.StringLiteral):
            u = unit.literal_value
        else:
            raise TypingError(f"{name}: the unit must be a constant string, not {unit}")
        literal = getattr(value, "literal_value", None)
        if isinstance(value, (types.StringLiteral, types.IntegerLiteral)) or \
                isinstance(value, types.Literal):
            try:
                make = np.datetime64 if kind == "M" else np.timedelta64
                c = make(literal, u) if u else make(literal)
            except (ValueError, TypeError) as exc:
                raise TypingError(f"{name}({literal!r}{', ' + repr(u) if u else ''}): "
                                  f"{exc}") from None
            cu, n = np.datetime_data(c.dtype)
            if n != 1:
                raise TypingError(f"{name}: unit multiples ({n}{cu}) have no ckernels type")
            const = _constant(_time_type(kind, "" if cu == "generic" else cu),
                              int(c.view(np.int64)))
            return lambda value, unit="": const()
        if isinstance(value, (types.NPDatetime, types.NPTimedelta)):
            if (kind == "M") != isinstance(value, types.NPDatetime):
                raise TypingError(f"{name} of a {value}: instants and durations do not "
                                  "convert into each other")
            if not u or u == value.unit:
                return lambda value, unit="": value
            raise TypingError(f"{name}({value}, {u!r}): converting a time value to another "
                              "unit is not supported in jitted code (convert the array "
                              "first: a.astype(...))")
        if isinstance(value, types.Integer):
            if not u:
                raise TypingError(f"{name}(<int>) needs a constant unit, e.g. "
                                  f"{name}(n, 's')")
            if u not in UNITS:
                raise TypingError(f"{name}: unknown unit {u!r} (units: {', '.join(UNITS)})")
            target = _time_type(kind, u)
            return lambda value, unit="": _from_count(value, target)
        raise TypingError(f"{name}({value}): takes a constant string or integer, an "
                          "integer with a constant unit, or a time value")
    return typer


@intrinsic
def _from_count(typingctx, count, target):
    """An integer as the count of the time type ``target`` (a typeref)."""
    nbty = getattr(target, "instance_type", None)
    if not isinstance(count, types.Integer) or nbty is None:
        return None

    def codegen(context, builder, sig, args):
        v = args[0]
        if count.bitwidth < 64:
            v = builder.sext(v, _i64) if count.signed else builder.zext(v, _i64)
        return v
    return nbty(count, target), codegen


overload(datetime64_value, prefer_literal=True)(_overload_constructor("M"))
overload(timedelta64_value, prefer_literal=True)(_overload_constructor("m"))


def rewrite_constructors(func_ir) -> None:
    """Make the calls of ``np.datetime64`` / ``np.timedelta64`` (``np.`` of the
    numpy module, or the names imported from it) of ``func_ir`` calls of
    :func:`datetime64_value` / :func:`timedelta64_value` -- where the
    constructor is only ever called."""
    from numba.core import ir as nir
    uses: dict = {}
    for blk in func_ir.blocks.values():
        for st in blk.body:
            for v in st.list_vars():
                uses.setdefault(v.name, []).append(st)
    for blk in func_ir.blocks.values():
        for st in blk.body:
            if not isinstance(st, nir.Assign):
                continue
            val, fn = st.value, None
            if isinstance(val, nir.Global) and val.value in (np.datetime64, np.timedelta64):
                fn = _CONSTRUCTORS[val.value.__name__]
            elif isinstance(val, nir.Expr) and val.op == "getattr" and \
                    val.attr in _CONSTRUCTORS:
                try:
                    base = func_ir.get_definition(val.value)
                except Exception:     # noqa: BLE001 - no single definition: not numpy's
                    continue
                if isinstance(base, (nir.Global, nir.FreeVar)) and base.value is np:
                    fn = _CONSTRUCTORS[val.attr]
            if fn is None:
                continue
            name = st.target.name
            if all(u is st or isinstance(u, nir.Del) or (
                    isinstance(u, nir.Assign) and isinstance(u.value, nir.Expr)
                    and u.value.op == "call" and u.value.func.name == name)
                    for u in uses.get(name, ())):
                st.value = nir.Global(fn.__name__, fn, loc=st.value.loc)


__all__ = ["UNITS", "TEXT_MAX", "is_time_type", "time_text", "datetime64_value", "timedelta64_value",
           "rewrite_constructors"]
