"""Assignment and conversion on the device (``a[...] = b``, ``fill``,
``astype``) with the library's error modes (``ckernel/assign.h``)."""

from __future__ import annotations

import numbers

import numpy as np

from ... import dialects
from ...errors import (CKOverflowError, CKTypeError, CKValueError, InvalidArgumentError,
                       NotSupportedError)
from ...host.array import empty as _host_empty
from .. import launch as _dev
from ..base import DeviceArrayBase as DeviceArray, DeviceTimeElement
from ...context.device_program import DeviceProgram, kernel_wrapper
from .element_functions import Pieces, bits
from .programs import cached_program, check_fp64, dialect_of


# ====================================================== assignment, astype ==
_ERRMODES = ("nocheck", "overflow", "fractional", "default")   # "default" = fractional


def _cast_function(prog, src, dst, errmode) -> str:
    """An element function converting ``src`` to ``dst`` under ``errmode``
    (the library's assignment semantics, ``ckernel/assign.h``)."""
    d = prog.dialect
    c = Pieces(prog, "astype")
    s, t = c.ct(src), c.ct(dst)
    name = f"ck_cast_{src.name}_{dst.name}_{errmode}"
    check_overflow = errmode != "nocheck"
    msg = f"astype: overflow while assigning a {src.name} value to {dst.name}"
    over = c.fail(CKOverflowError, msg) if check_overflow else ""
    lines = []
    if dst.kind == "b":
        if check_overflow and src.kind != "b":
            lines.append(f"if (a != 0 && a != 1) {over}")
        lines.append("return a != 0;")
    elif src.kind == "b":
        lines.append(f"return ({t})(a ? 1 : 0);")
    elif dst.kind == "f":
        if check_overflow and src.kind == "f" and dst.size < src.size:
            isf, isi = c.math("isfinite", src), c.math("isinf", dst)
            lines.append(f"if ({isf}(a) && {isi}(({t})a)) {over}")
        lines.append(f"return ({t})a;")
    elif src.kind == "f":      # float -> int
        lo = -(2 ** (bits(dst) - 1)) if dst.kind == "i" else 0
        hi = 2 ** (bits(dst) - 1 if dst.kind == "i" else bits(dst))   # exclusive, exact
        isnan, trunc = c.math("isnan", src), c.math("trunc", src)
        lines.append(f"{s} x = {trunc}(a);")
        if check_overflow:
            lines.append(f"if ({isnan}(a) || x < ({s}){lo}.0 || x >= ({s}){hi}.0) {over}")
            if errmode in ("fractional", "default"):
                frac = c.fail(CKValueError, f"astype: fractional part lost while assigning "
                                            f"a {src.name} value to {dst.name}")
                lines.append(f"if (x != a) {frac}")
            lines.append(f"return ({t})x;")
        else:      # NumPy-like unchecked: truncate, saturate, NaN -> 0 (the library's)
            tmin = f"({t})({lo}{'L' if lo else ''})" if dst.kind == "i" else f"({t})0"
            if dst.kind == "i" and dst.size == 8:
                tmin = f"(({t})(-9223372036854775807L - 1L))"
            tmax = f"({t})~({c.ut(dst)})0" if dst.kind == "u" else \
                f"({t})(({c.ut(dst)})~({c.ut(dst)})0 >> 1)"
            lines.append(f"if ({isnan}(a)) return 0;")
            lines.append(f"if (x < ({s}){lo}.0) return {tmin};")
            lines.append(f"if (x >= ({s}){hi}.0) return {tmax};")
            lines.append(f"return ({t})x;")
    else:                      # int -> int
        if check_overflow:
            if src.kind == "i" and dst.kind == "u":
                cond = "a < 0" + (f" || ({c.ut(src)})a > ({c.ut(src)}){2 ** bits(dst) - 1}UL"
                                  if dst.size < src.size else "")
                lines.append(f"if ({cond}) {over}")
            elif src.kind == "u" and dst.kind == "i":
                if dst.size <= src.size:
                    lines.append(f"if (a > ({s}){2 ** (bits(dst) - 1) - 1}UL) {over}")
            elif dst.size < src.size:
                if src.kind == "i":
                    lo, hi = -(2 ** (bits(dst) - 1)), 2 ** (bits(dst) - 1) - 1
                    lines.append(f"if (a < ({s})({lo}L) || a > ({s})({hi}L)) {over}")
                else:
                    lines.append(f"if (a > ({s}){2 ** bits(dst) - 1}UL) {over}")
        lines.append(f"return ({t})({c.ut(dst)})a;")
    body = "\n  ".join(lines)
    prog.order.append(f"{d.function_prefix} {t} {name}({s} a, {d.int32} *ck_err)\n"
                      f"{{\n  {body}\n}}\n")
    return name


def _cast_program(tgt, src, dst, errmode, by_value):
    def make():
        prog = DeviceProgram(tgt, "python")
        if dialects.uses_fp64((src.name, dst.name)):
            prog.fp64_user = "astype"
        fn = _cast_function(prog, src, dst, errmode)
        prog.finish(kernel_wrapper(
            tgt, fn, [(tgt.ctype(src), src.kind == "b")],
            (tgt.ctype(dst), dst.kind == "b"), [(src, by_value)], dst))
        return prog
    return cached_program(tgt, ("cast", src.name, dst.name, errmode, by_value), make)


def _convert(dst: DeviceArray, src, errmode: str, where: str) -> None:
    """``dst[...] = src`` (a device array of the same context, broadcast; or a
    scalar value) converted under ``errmode``."""
    by_value = not isinstance(src, DeviceArray)
    if _is_time(dst) or (not by_value and _is_time(src)):
        dst, src = _time_counts(dst, src, by_value, where)
    ctx = dst.context
    tgt = dialect_of(ctx)
    sdt = dst._element if by_value else src._element
    st = _dev.state(ctx)
    pkey = ("cast", sdt.name, dst._element.name, errmode, dst._key,
            None if by_value else src._key)
    plan = st.plans.get(pkey)
    if plan is None:
        check_fp64(ctx, where, (sdt.name, dst._element.name))
        prog = _cast_program(tgt, sdt, dst._element, errmode, by_value)
        plan = _dev.remember(st.plans, pkey, _dev.build_plan(
            ctx, prog.source, prog.errors, where, tgt.title, [(sdt, by_value)], [src],
            dst.dtype, out=dst), 4 * _dev.PLAN_LIMIT, st.lock)
    _dev.run(plan, ctx, dst, [src])


def _is_time(a) -> bool:
    return isinstance(a._element, DeviceTimeElement)


def _counts(a: DeviceArray) -> DeviceArray:
    """An int64 view of a device array of instants or durations (the counts)."""
    return type(a)(a._buffer, a._offset, a._shape, np.int64, a._strides, base=a,
                   readonly=a._readonly)


def _time_counts(dst, src, by_value: bool, where: str):
    """``(dst, src)`` as int64 counts where the conversion keeps the counts (one
    time type to itself, a time type to or from int64, a scalar already
    converted on the host); other conversions of time values are refused:
    there is no unit conversion in device kernels."""
    if by_value:
        return _counts(dst), src
    same = dst._element.name == src._element.name
    if same or (_is_time(dst) and src._element.name == "int64"):
        return (_counts(dst) if _is_time(dst) else dst), (_counts(src) if _is_time(src) else src)
    if _is_time(src) and dst._element.name == "int64":
        return dst, _counts(src)
    raise NotSupportedError(f"{where}: converting {src.dtype} to {dst.dtype} on a device "
                            "(time values convert to and from int64 counts and to their own "
                            "type; convert units on the host: .get().astype(...))")


def assign(dst: DeviceArray, src, errmode: str = "default") -> None:
    """``dst[...] = src``, broadcast, converted under ``errmode`` (the
    library's error modes, as host arrays: ``"default"`` refuses overflow and
    a lost fractional part, ``"nocheck"`` is NumPy's unchecked cast).  ``src``
    is a device array of the same context, a scalar (converted on the host by
    the library's assignment kernels, exactly as for host arrays), or host
    data -- a NumPy array or nested lists, copied to the device first: an
    explicit transfer, since the caller handed host data to a device array."""
    where = "DeviceArray assignment"
    mode = _errmode(errmode)
    if isinstance(src, DeviceArray):
        if src.context != dst.context:
            raise InvalidArgumentError(f"{where}: the value lives on {src.context.brief}, "
                                       f"the array on {dst.context.brief}; copy it first")
        if dst.size:
            _convert(dst, src, mode, where)
        return
    if isinstance(src, (bool, int, float, np.generic)) or (
            isinstance(src, numbers.Number) and not isinstance(src, complex)):
        value = _host_scalar(src, dst.dtype, errmode)
        if not dst.size:
            return
        if dst.is_contiguous:
            dst._buffer.fill(dst._offset, value.tobytes(), dst.nbytes)
        else:
            _convert(dst, value.view(np.int64).item() if value.dtype.kind in "Mm" else
                     value.item(), "nocheck", where)
        return
    host = np.asarray(src)
    if host.dtype.kind in "Mm" and dst.dtype.kind == host.dtype.kind:
        host = host.astype(dst.dtype)      # units converted on the host, NumPy's rule
    elif host.dtype.kind not in "biuf":
        raise CKTypeError(f"{where}: values of dtype {host.dtype} cannot be stored in a "
                          f"{dst.dtype} device array")
    if dst.size:
        _convert(dst, type(dst).from_host(dst.context, host), mode, where)


def _errmode(errmode: str) -> str:
    if errmode == "default":
        return "fractional"
    if errmode in _ERRMODES:
        return errmode
    if errmode == "inexact":
        raise NotSupportedError("errmode 'inexact' is not supported on devices (use "
                                "'fractional', or convert on the host)")
    raise InvalidArgumentError(f"unknown errmode {errmode!r} ({', '.join(_ERRMODES)})")


def _host_scalar(value, dtype, errmode) -> np.ndarray:
    """``value`` converted to ``dtype`` by the library's host assignment (the
    same checks, messages and NEP 50 handling as host arrays)."""
    h = _host_empty((), dtype)
    h._assign(value, errmode)
    return np.asarray(h._scalar(), dtype)


def astype(a: DeviceArray, dtype, errmode: str = "default") -> DeviceArray:
    """A converted copy on the device."""
    out = type(a).empty(a.context, a._shape, dtype)
    if a.size:
        _convert(out, a, _errmode(errmode), f"astype({out.dtype})")
    return out
