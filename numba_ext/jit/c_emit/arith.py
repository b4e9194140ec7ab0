"""Operators on devices: unary and binary operators with Python semantics
(zero-division checks under the ``"python"`` error model; ``//``, ``%`` and
``**`` through helper functions)."""

from __future__ import annotations

from ... import dtypes
from .numba_types import _unlit, _int_bits, _is_float, _is_int, _is_bool, _key, _int64_t
from .tables import _BINOPS, _UNOPS
from . import time_ops as _time


class ArithEmission:
    """Methods of :class:`~ckernels.jit.c_emit.function.FunctionEmitter`."""

    def unary(self, dst, tt, fn, value, sig, loc) -> list[str]:
        sym = _UNOPS.get(fn)
        if sym is None:
            raise self.fail(f"unary operator {getattr(fn, '__name__', fn)}", loc)
        got = _time.unary(self, dst, tt, fn, value, sig, loc)    # durations
        if got is not None:
            return got
        at = _unlit(sig.args[0])
        if sym == "~" and _is_bool(at) and _is_bool(sig.return_type):
            sym = "!"      # Numba's bool invert is logical not (not Python's ~True == -2)
        a = self.use_as(value, at, loc)
        r = f"({sym}{a})"
        return [f"{dst} = {self.cast(r, sig.return_type, tt)};"]

    def binop(self, dst, tt, fn, e, loc, args=None, sig=None) -> list[str]:
        """``dst = lhs <fn> rhs`` for a binop expression ``e``, or for a call of
        an ``operator`` function (``args``: its two variables, ``sig``)."""
        sig = sig if sig is not None else self.tir.calltypes[e]
        lhs, rhs = args if args is not None else (e.lhs, e.rhs)
        got = _time.binop(self, dst, tt, fn, lhs, rhs, sig, loc)   # instants, durations
        if got is not None:
            return got
        sym = _BINOPS.get(fn)
        if sym is None:
            raise self.fail(f"operator {getattr(fn, '__name__', fn)}", loc)
        at, bt = _unlit(sig.args[0]), _unlit(sig.args[1])
        rt = _unlit(sig.return_type)
        a = self.use_as(lhs, at, loc)
        b = self.use_as(rhs, bt, loc)
        out = []
        checks = self.prog.checks_zero_division
        if sym in ("/", "//", "%"):
            if self.ct(at) != self.ct(bt) and not (sym == "/"):
                raise self.fail(f"operator {sym} on {at} and {bt}", loc)
            if checks:
                # Numba's messages (the CPU target's), so both targets say the same
                msg = {"/": "division by zero", "//": "integer division by zero"
                       if _is_int(at) else "division by zero",
                       "%": "integer modulo by zero" if _is_int(at) else "modulo by zero"}[sym]
                code = self.error_code(ZeroDivisionError, (msg,))
                out.append(f"if ({b} == 0) {self.raise_code(code)}")
        if sym == "/":
            ct = self.ct(rt)
            r = f"(({ct}){a} / ({ct}){b})"
        elif sym in ("//", "%"):
            if _is_bool(at):
                at = bt = _int64_t()
                i64 = self.d.int64
                a, b = f"(({i64}){a})", f"(({i64}){b})"
            r = f"{self.divmod_helper(at, sym)}({a}, {b})"
            if not checks:   # NumPy's error model (as Numba's): no exception
                if _is_int(at):
                    r = f"({b} == 0 ? {self.const(0, at, loc)} : {r})"
                elif sym == "//":
                    r = f"({b} == 0 ? {a} / {b} : {r})"
        elif sym == "**":
            if _is_int(bt) and (_is_int(at) or _is_float(at)):
                if checks or _is_float(at):   # Numba raises for a float base in both models
                    msg = ("0 cannot be raised to a negative power" if _is_int(at)
                           else "division by zero")
                    code = self.error_code(ZeroDivisionError, (msg,))
                    out.append(f"if ({a} == 0 && {b} < 0) {self.raise_code(code)}")
            r = self.pow_expr(a, b, at, bt, rt, loc)
        elif sym in ("<<", ">>") and _is_int(at):
            r = f"(({self.ct(rt)}){a} {sym} {b})"
        else:
            r = f"({a} {sym} {b})"
        out.append(f"{dst} = {self.cast(r, rt, tt)};")
        return out

    def float_to_int(self, expr: str, from_t, to_t) -> str:
        """A float converted to an integer type, NaN and values out of range
        included, by one rule on every device: C leaves those undefined and
        devices differ (CUDA saturates, x86 gives the "integer indefinite").
        int64 and int32 give their minimum, as the CPU jit does on x86-64
        (scalar and vectorised code alike); uint64 is ``lo | (hi & (lo >>
        63))`` of the int64 conversions of x and x - 2**63 (the CPU jit's
        scalar code without AVX-512); the narrower types and uint32 are the
        int64 conversion's low bits.  Out of range, those last ones are
        undefined on the CPU: its vectorised loops saturate some, AVX-512's
        unsigned conversions give all ones."""
        fct, tct = self.ct(from_t), self.ct(to_t)
        bits, signed = _int_bits(to_t)
        fk = _key(_unlit(from_t))
        fp = self.d.function_prefix

        def signed_conv(b: int) -> str:
            name = f"ck_f2i{b}_{fk}"
            ict = self.d.int64 if b == 64 else self.d.int32
            lo = f"{self.d.float_literal(-2.0 ** (b - 1), from_t)}"
            hi = f"{self.d.float_literal(2.0 ** (b - 1), from_t)}"
            low_ok = f"x >= {lo}"
            if b == 32 and fct != "float":   # (-2**31 - 1, -2**31) truncates into range
                low_ok = f"x > {self.d.float_literal(-2.0 ** 31 - 1, from_t)}"
            minimum = self.d.int_literal(-2 ** (b - 1), _int64_t()) if b == 64 else \
                "(-2147483647 - 1)"
            self.prog.helper(name, f"{fp} {ict} {name}({fct} x) "
                                   f"{{ return ({low_ok} && x < {hi}) ? ({ict})x : "
                                   f"({ict}){minimum}; }}\n")
            return name

        if bits == 64 and signed:
            return f"{signed_conv(64)}({expr})"
        if bits == 64:
            i64, u64 = signed_conv(64), self.d.uint64
            name = f"ck_f2u64_{fk}"
            self.prog.helper(name, f"""\
{fp} {u64} {name}({fct} x)
{{
  {u64} lo = ({u64}){i64}(x), hi = ({u64}){i64}(x - {self.d.float_literal(2.0 ** 63, from_t)});
  return lo | (hi & (({u64})0 - (lo >> 63)));
}}
""")
            return f"{name}({expr})"
        if bits == 32 and signed:
            return f"{signed_conv(32)}({expr})"
        return f"(({tct}){signed_conv(64)}({expr}))"

    def divmod_helper(self, t, sym: str) -> str:
        """Python's ``//`` or ``%`` on two values of Numba type ``t``: floats
        straight from ``ckernel/pyarith.h``; signed integers through it, with
        Numba's ``x // -1`` (``INT_MIN // -1`` is 0); unsigned integers are
        C's ``/`` and ``%``."""
        kind = "floordiv" if sym == "//" else "mod"
        element = dtypes.of_numba(_unlit(t))
        if _is_float(t):
            return self.prog.pyarith(kind, element)
        ct = self.ct(t)
        name = f"ck_{kind}_{_key(t)}"
        fp = self.d.function_prefix
        if not _int_bits(t)[1]:
            op = "/" if kind == "floordiv" else "%"
            body = f"{fp} {ct} {name}({ct} a, {ct} b) {{ return a {op} b; }}\n"
        else:
            py = self.prog.pyarith(kind, element)
            lo = self.d.int_literal(-2 ** (_int_bits(t)[0] - 1), t)
            minus_one = f"a == {lo} ? ({ct})0 : ({ct})(-a)" if kind == "floordiv" else \
                f"({ct})0"
            body = f"""\
{fp} {ct} {name}({ct} a, {ct} b)
{{
  if (b == -1) return {minus_one};
  return {py}(a, b);
}}
"""
        return self.prog.helper(name, body)

    def pow_expr(self, a, b, at, bt, rt, loc) -> str:
        rct = self.ct(rt)
        fp, i64, u64 = self.d.function_prefix, self.d.int64, self.d.uint64
        if _is_float(rt):
            pow_ = self.d.math("pow", rct)
            if _is_int(bt):   # Numba's int_power_impl: repeated squaring
                name = f"ck_fpowi_{_key(rt)}"
                self.prog.helper(name, f"""\
{fp} {rct} {name}({rct} a, {i64} b)
{{
  bool inv = b < 0;
  {u64} e = inv ? ({u64})0 - ({u64})b : ({u64})b;
  if (e > 0x10000) return {pow_}(a, ({rct})b);
  {rct} r = 1;
  while (e != 0) {{ if (e & 1) r *= a; e >>= 1; a *= a; }}
  return inv ? ({rct})1 / r : r;
}}
""")
                return f"{name}(({rct}){a}, ({i64}){b})"
            return f"{pow_}(({rct}){a}, ({rct}){b})"
        if not (_is_int(at) and _is_int(bt)):
            raise self.fail(f"operator ** on {at} and {bt}", loc)
        name = f"ck_ipow_{_key(rt)}"
        bits, signed = _int_bits(rt)
        # 0 ** -n: raised before the call under the Python error model; under
        # NumPy's, Numba gives the most negative value of the result type
        zero_neg = self.d.int_literal(-2 ** (bits - 1) if signed else 2 ** (bits - 1), rt)
        neg_one = "    if (a == -1) return (b & 1) ? -1 : 1;\n" if signed else ""
        py = self.prog.pyarith("pow", dtypes.of_numba(_unlit(rt)))
        body = f"""\
{fp} {rct} {name}({rct} a, {i64} b)
{{
  if (b < 0) {{
    if (a == 0) return {zero_neg};
    if (a == 1) return 1;
{neg_one}    return 0;
  }}
  return {py}(a, ({u64})b);
}}
"""
        self.prog.helper(name, body)
        return f"{name}(({rct}){a}, ({i64}){b})"
