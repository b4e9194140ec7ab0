"""Instants and durations on devices: Numba's ``NPDatetime(unit)`` /
``NPTimedelta(unit)`` values are int64 counts (NaT is ``INT64_MIN``), so a
device holds them in the dialect's 64-bit integer.  The operators are
written here as Numba lowers them (``numba/np/npdatetime.py``), so device
and CPU give the same counts:

* ``td ± td``, ``dt ± td``, ``td + dt``, ``dt - dt``: NaT if an operand is
  NaT, else both scaled to the result's unit (the factor of NumPy's unit
  table; an instant in years or months first becomes days -- or weeks -- by
  the calendar, as Numba's ``convert_datetime_for_arith``) and added or
  subtracted, wrapping as Numba's 64-bit arithmetic does;
* ``td * n``, ``n * td``: NaT stays NaT; a float product that is NaN is NaT,
  one out of range is ``INT64_MIN`` (what x86's conversion, the CPU jit's,
  gives); ``td / n``, ``td // n``: NaT for a NaT, a zero or a NaN divisor,
  else the quotient truncated toward zero (integers) or the float quotient
  converted as above; ``td / td``: float64, NaN for a NaT;
* comparisons: NaT compares false (``!=``: true), else both in the finer
  unit; ``==``/``!=`` of units that do not convert (years and days) are
  false/true;
* ``-td``, ``+td``, ``abs(td)``, ``np.isnat(t)``, ``np.int64(t)`` (the count),
  and the constants of ``np.datetime64(...)``/``np.timedelta64(...)``
  (:mod:`ckernels.jit.time_numba`).

``td // td`` and ``td % td`` are refused: the CPU jit cannot compile them
(Numba's lowering fails), so the device does not give a result the CPU
cannot check.
"""

from __future__ import annotations

import operator

import numpy as np

from .numba_types import _unlit, _is_float, _is_int, _is_bool, _key
from .tables import _BINOPS

_NAT = -2 ** 63


def _types():
    from numba.core import types
    return types.NPDatetime, types.NPTimedelta


def is_time(t) -> bool:
    """Whether a Numba type is an instant or a duration."""
    return isinstance(_unlit(t), _types())


def _is_dt(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), types.NPDatetime)


def _is_td(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), types.NPTimedelta)


def c_type(em, t) -> str | None:
    """The C type of a time value (the dialect's int64), else None."""
    return em.d.int64 if is_time(t) else None


def _factor(src: str, dst: str):
    """NumPy's integer factor from durations in ``src`` to ``dst`` (None:
    no integer factor)."""
    from numba.np import npdatetime_helpers as h
    return h.get_timedelta_conversion_factor(src, dst)


def _unit_code(unit: str) -> int:
    from numba.np import npdatetime_helpers as h
    return h.DATETIME_UNITS[unit]


class _Ctx:
    """The emitter, the dialect's spellings used below."""

    def __init__(self, em):
        self.em = em
        d = em.d
        self.i64, self.u64 = d.int64, d.uint64
        self.nat = d.int_literal(_NAT, _i64())

    def mul(self, a: str, factor: int) -> str:
        """``a * factor`` wrapping (no signed-overflow UB in C)."""
        if factor == 1:
            return a
        return f"(({self.i64})(({self.u64}){a} * ({self.u64}){factor}{self.em.d.uint64_suffix}))"

    def add(self, a: str, b: str, sym: str) -> str:
        return f"(({self.i64})(({self.u64}){a} {sym} ({self.u64}){b}))"


def _i64():
    from numba.core import types
    return types.int64


def _helper_days(em) -> tuple[str, str]:
    """The helpers turning years / months since 1970 into days since 1970
    (Numba's ``year_to_days`` and the month table, NumPy's algorithm)."""
    d = em.d
    i64, fp = d.int64, d.function_prefix
    years = "ck_time_years_to_days"
    em.prog.helper(years, f"""\
{fp} {i64} {years}({i64} y)
{{
  {i64} days = y * 365;
  if (y >= 0) {{
    {i64} f1968 = y + 1, f1900 = f1968 + 68, f1600 = f1900 + 300;
    return days + f1968 / 4 - f1900 / 100 + f1600 / 400;
  }}
  {i64} f1972 = y - 2, f2000 = f1972 - 28;
  return days + f1972 / 4 - f2000 / 100 + f2000 / 400;
}}
""")
    months = "ck_time_months_to_days"
    em.prog.helper(months, f"""\
{fp} {i64} {months}({i64} m)
{{
  {i64} y = m / 12, k = m % 12;
  if (k < 0) {{ k += 12; y -= 1; }}
  {i64} a = y + 1970;
  bool leap = (a & 3) == 0 && ((a % 100) != 0 || (a % 400) == 0);
  {i64} acc = 0;
  {i64} len_[12] = {{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}};
  for ({i64} j = 0; j < k; j++) acc += len_[j] + (j == 1 && leap ? 1 : 0);
  return {years}(y) + acc;
}}
""")
    weeks = "ck_time_floor7"
    em.prog.helper(weeks, f"""\
{fp} {i64} {weeks}({i64} x)
{{
  {i64} q = x / 7;
  if ((x % 7) < 0) q -= 1;
  return q;
}}
""")
    return years, months


def _convert_datetime(em, c: _Ctx, a: str, src: str, dst: str, loc) -> str:
    """An instant's count in ``src`` as a count in ``dst`` (Numba's
    ``convert_datetime_for_arith``)."""
    sc, dc = _unit_code(src), _unit_code(dst)
    unit = src
    if sc < 2 <= dc:           # years or months -> days (or weeks) by the calendar
        years, months = _helper_days(em)
        a = f"{years}({a})" if sc == 0 else f"{months}({a})"
        unit = "D"
        if dc == 2:
            a, unit = f"ck_time_floor7({a})", "W"
    f = _factor(unit, dst)
    if f is None:
        raise em.fail(f"converting datetime64[{src}] to datetime64[{dst}]", loc)
    return c.mul(a, f)


def _scale_td(em, c: _Ctx, a: str, src: str, dst: str, loc) -> str:
    f = _factor(src, dst)
    if f is None:
        raise em.fail(f"converting timedelta64[{src}] to timedelta64[{dst}]", loc)
    return c.mul(a, f)


def _float_to_td(em, c: _Ctx, expr: str, ft) -> str:
    """A float as a duration count: NaN -> NaT, out of range -> INT64_MIN
    (x86's conversion, the CPU jit's), else truncated."""
    fct = em.ct(ft)
    name = f"ck_time_from_{_key(ft)}"
    isnan = em.d.math("isnan", fct)
    em.prog.helper(name, f"""\
{em.d.function_prefix} {c.i64} {name}({fct} x)
{{
  if ({isnan}(x)) return {c.nat};
  if (!(x >= ({fct})-9223372036854775808.0 && x < ({fct})9223372036854775808.0))
    return {c.nat};
  return ({c.i64})x;
}}
""")
    return f"{name}({expr})"


def binop(em, dst, tt, fn, lhs, rhs, sig, loc) -> list[str] | None:
    """``dst = lhs <fn> rhs`` when an operand is a time value, else None."""
    at, bt = _unlit(sig.args[0]), _unlit(sig.args[1])
    if not (is_time(at) or is_time(bt)):
        return None
    sym = _BINOPS.get(fn)
    rt = _unlit(sig.return_type)
    c = _Ctx(em)
    a, b = em.use(lhs, loc), em.use(rhs, loc)
    nat = c.nat
    if sym in ("==", "!=", "<", "<=", ">", ">="):
        if not (is_time(at) and is_time(bt)):
            raise em.fail(f"operator {sym} on {at} and {bt}", loc)
        both = f"({a} != {nat} && {b} != {nat})"
        if _is_dt(at):
            from numba.np import npdatetime_helpers as h
            u = h.get_best_unit(at.unit, bt.unit)
            na = _convert_datetime(em, c, a, at.unit, u, loc)
            nb = _convert_datetime(em, c, b, bt.unit, u, loc)
        else:
            if _factor(at.unit, bt.unit) is not None:
                na, nb = c.mul(a, _factor(at.unit, bt.unit)), b
            elif _factor(bt.unit, at.unit) is not None:
                na, nb = a, c.mul(b, _factor(bt.unit, at.unit))
            elif sym in ("==", "!="):      # units that do not convert: unequal
                v = "true" if sym == "!=" else "false"
                return [f"{dst} = {v};"]
            else:
                raise em.fail(f"operator {sym} on {at} and {bt}", loc)
        other = "true" if sym == "!=" else "false"
        return [f"{dst} = {both} ? ({na} {sym} {nb}) : {other};"]
    ru = getattr(rt, "unit", None)
    if sym in ("+", "-") and is_time(at) and is_time(bt):
        if _is_td(at) and _is_td(bt):
            va, vb = _scale_td(em, c, a, at.unit, ru, loc), _scale_td(em, c, b, bt.unit, ru, loc)
        elif _is_dt(at) and _is_td(bt):
            va = _convert_datetime(em, c, a, at.unit, ru, loc)
            vb = _scale_td(em, c, b, bt.unit, ru, loc)
        elif _is_td(at) and _is_dt(bt) and sym == "+":
            va = _scale_td(em, c, a, at.unit, ru, loc)
            vb = _convert_datetime(em, c, b, bt.unit, ru, loc)
        elif _is_dt(at) and _is_dt(bt) and sym == "-":
            va = _convert_datetime(em, c, a, at.unit, ru, loc)
            vb = _convert_datetime(em, c, b, bt.unit, ru, loc)
        else:
            raise em.fail(f"operator {sym} on {at} and {bt}", loc)
        return [f"{dst} = ({a} != {nat} && {b} != {nat}) ? {c.add(va, vb, sym)} : {nat};"]
    if sym == "*" and (_is_td(at) or _is_td(bt)):
        (td, tdt), (n, nt) = ((a, at), (b, bt)) if _is_td(at) else ((b, bt), (a, at))
        if _is_int(nt) or _is_bool(nt):
            prod = f"(({c.i64})(({c.u64}){td} * ({c.u64})({c.i64}){n}))"
        elif _is_float(nt):
            em.note_fp64(nt)
            fct = em.ct(nt)
            prod = _float_to_td(em, c, f"(({fct}){td} * {n})", nt)
        else:
            raise em.fail(f"operator * on {at} and {bt}", loc)
        prod = _scale_td(em, c, prod, tdt.unit, ru, loc)
        return [f"{dst} = ({td} != {nat}) ? {prod} : {nat};"]
    if sym in ("/", "//") and _is_td(at) and (_is_int(bt) or _is_float(bt)):
        if _is_int(bt):
            q = f"({a} / ({c.i64}){b})"
            ok = f"{b} != 0"
        else:
            em.note_fp64(bt)
            fct = em.ct(bt)
            isnan = em.d.math("isnan", fct)
            q = _float_to_td(em, c, f"(({fct}){a} / {b})", bt)
            ok = f"{b} != 0 && !{isnan}({b})"
        q = _scale_td(em, c, q, at.unit, ru, loc)
        return [f"{dst} = ({a} != {nat} && {ok}) ? {q} : {nat};"]
    if sym == "/" and _is_td(at) and _is_td(bt):
        em.note_fp64(rt)
        f64 = em.ct(rt)
        if _factor(at.unit, bt.unit) is not None:
            na, nb = c.mul(a, _factor(at.unit, bt.unit)), b
        else:
            na, nb = a, c.mul(b, _factor(bt.unit, at.unit))
        return [f"{dst} = ({a} != {nat} && {b} != {nat}) ? (({f64}){na} / ({f64}){nb}) : "
                f"{em.d.nan(f64)};"]
    raise em.fail(f"operator {sym or getattr(fn, '__name__', fn)} on {at} and {bt} "
                  "(device code computes time values with + - * / and comparisons; "
                  "timedelta // timedelta and % do not compile on the CPU either)", loc)


def unary(em, dst, tt, fn, value, sig, loc) -> list[str] | None:
    """``-td``, ``+td`` (NaT stays NaT: the negation wraps), else None."""
    at = _unlit(sig.args[0])
    if not is_time(at):
        return None
    c = _Ctx(em)
    a = em.use(value, loc)
    if fn is operator.pos:
        return [f"{dst} = {a};"]
    if fn is operator.neg and _is_td(at):
        return [f"{dst} = (({c.i64})(({c.u64})0 - ({c.u64}){a}));"]
    raise em.fail(f"unary operator {getattr(fn, '__name__', fn)} on {at}", loc)


def call(em, dst, tt, e, fnty, sig, loc) -> list[str] | None:
    """Calls over time values: ``abs(td)``, ``np.isnat(t)``, ``np.int64(t)``,
    the constructors of :mod:`ckernels.jit.time_numba`; else None."""
    from numba.core import types
    from .. import time_numba
    rt = _unlit(sig.return_type)
    ats = [_unlit(a) for a in sig.args]
    if not (is_time(rt) or any(is_time(a) for a in ats)):
        return None
    c = _Ctx(em)
    key = getattr(fnty, "typing_key", None)
    if key in (time_numba.datetime64_value, time_numba.timedelta64_value):
        arg0 = em.tyof(e.args[0])
        lit = getattr(arg0, "literal_value", None)
        if isinstance(arg0, types.Literal) and lit is not None:
            unit = ""
            if len(e.args) > 1:
                ut = em.tyof(e.args[1])
                unit = getattr(ut, "literal_value", "") or ""
            value = key(lit, unit)
            return [f"{dst} = {em.d.int_literal(int(value.view(np.int64)), _i64())};"]
        if is_time(arg0):
            return [f"{dst} = {em.use(e.args[0], loc)};"]
        if isinstance(_unlit(arg0), types.Integer):
            return [f"{dst} = (({c.i64}){em.use(e.args[0], loc)});"]
        raise em.fail(f"{key.__name__} of {arg0}", loc)
    if isinstance(fnty, types.NumberClass) and len(e.args) == 1 and is_time(ats[0]):
        if not (_is_int(rt) and rt.bitwidth == 64):
            raise em.fail(f"{fnty} of {ats[0]} (only 64-bit integers hold the count)", loc)
        return [f"{dst} = (({em.ct(rt)}){em.use(e.args[0], loc)});"]
    if (key is abs or key is operator.abs or key is np.absolute) and _is_td(ats[0]):
        a = em.use(e.args[0], loc)
        return [f"{dst} = ({a} < 0) ? (({c.i64})(({c.u64})0 - ({c.u64}){a})) : {a};"]
    if key is np.isnat and len(e.args) == 1:
        return [f"{dst} = ({em.use(e.args[0], loc)} == {c.nat});"]
    return None


def const(em, v, t) -> str | None:
    """A ``np.datetime64``/``np.timedelta64`` constant as its count, else None."""
    if isinstance(v, (np.datetime64, np.timedelta64)) and is_time(t):
        want = np.dtype(f"{'M' if _is_dt(t) else 'm'}8[{_unlit(t).unit}]")
        return em.d.int_literal(int(np.asarray(v).astype(want).view(np.int64)), _i64())
    return None


__all__ = ["is_time", "c_type", "binop", "unary", "call", "const"]
