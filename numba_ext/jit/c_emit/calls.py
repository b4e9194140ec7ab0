"""Calls on devices: other jitted functions (device functions), number
classes, ``operator.*``, ``abs``/``min``/``max``/``round``, ``range``,
``math.*`` and NumPy's scalar ufuncs through the dialect's built-ins."""

from __future__ import annotations

import math
import operator

import numpy as np

from . import arena as _arena
from . import out_lists as _out_lists
from . import strings as _strings
from . import time_ops as _time
from .numba_types import (_unlit, _int_bits, _is_float, _is_int, _is_bool, _key, _int32_t,
                          _int64_t, _f64_t)
from .tables import (_MATH_1, _MATH_2, _MATH_TO_INT, _MATH_PRED, _BINOPS, _UNOPS, _INPLACE,
                     _NP_UFUNCS)


class CallEmission:
    """Methods of :class:`~ckernels.jit.c_emit.function.FunctionEmitter`."""

    def call(self, dst, tt, e, loc) -> list[str]:
        from numba.core import types
        if e.kws or e.vararg is not None or getattr(e, "varkwarg", None) is not None:
            raise self.fail("keyword or star arguments in calls", loc)
        fnty = self.tyof(e.func)
        sig = self.tir.calltypes[e]
        rt = _unlit(sig.return_type)
        args = e.args
        got = _out_lists.call(self, dst, tt, e, fnty, loc)     # xs.append(x): the returned row
        if got is None:
            got = _arena.call(self, dst, tt, e, fnty, sig, loc)    # out.append(x) of a var result
        if got is None:
            got = _strings.call(self, dst, tt, e, fnty, sig, loc)
        if got is None:
            got = _time.call(self, dst, tt, e, fnty, sig, loc)    # instants, durations
        if got is not None:
            return got
        if isinstance(fnty, types.Dispatcher):
            py = fnty.dispatcher.py_func
            fe = self.prog.function(py, tuple(_unlit(a) for a in sig.args), rt, loc)
            cargs = [self.use_as(v, at, loc) for v, at in zip(args, sig.args)]
            cargs.append("ck_err")
            r = f"{fe.cname}({', '.join(cargs)})"
            return [f"{dst} = {self.cast(r, rt, tt)};",
                    f"if (*ck_err) {self.zero_return()}"]
        if isinstance(fnty, types.NumberClass):
            if len(args) != 1:
                raise self.fail(f"{fnty}() with {len(args)} arguments", loc)
            return [f"{dst} = {self.use_as(args[0], tt, loc)};"]
        key = getattr(fnty, "typing_key", None)
        name = getattr(key, "__name__", str(key))
        mod = getattr(key, "__module__", None)
        if key is bool or key is int or key is float:
            if len(args) != 1:
                raise self.fail(f"{name}() with {len(args)} arguments", loc)
            at = self.tyof(args[0])
            if key is float and isinstance(at, types.StringLiteral):   # float("inf")
                try:
                    v = float(at.literal_value)
                except ValueError:
                    raise self.fail(f"float({at.literal_value!r})", loc) from None
                return [f"{dst} = {self.const(v, tt, loc)};"]
            return [f"{dst} = {self.use_as(args[0], tt, loc)};"]
        if key in _BINOPS or key in _INPLACE:     # operator.add(a, b), operator.iadd(a, b)
            if len(args) != 2:
                raise self.fail(f"operator.{name} with {len(args)} arguments", loc)
            return self.binop(dst, tt, _INPLACE.get(key, key), None, loc, args=args, sig=sig)
        if key in _UNOPS:                         # operator.neg(a), operator.not_(a)
            if len(args) != 1:
                raise self.fail(f"operator.{name} with {len(args)} arguments", loc)
            return self.unary(dst, tt, key, args[0], sig, loc)
        if key is operator.abs:
            key = abs
        if key is round:
            return self.round_call(dst, tt, sig, args, loc)
        if isinstance(key, np.ufunc):             # np.sqrt(x) & co. on scalars
            generic = _NP_UFUNCS.get(key.__name__)
            if generic is None or len(args) != key.nin:
                raise self.fail(f"numpy.{key.__name__} on scalars", loc)
            if generic == "abs":
                key = abs
            else:
                return self.math_call(dst, tt, generic, sig, args, loc, prefix="numpy.")
        if key is range:
            i64 = _int64_t()
            lo = [self.use_as(v, i64, loc) for v in args]
            zero, one = self.d.int_literal(0, i64), self.d.int_literal(1, i64)
            if len(lo) == 1:
                lo = [zero, lo[0], one]
            elif len(lo) == 2:
                lo = lo + [one]
            return [f"{dst}.start = {lo[0]}; {dst}.stop = {lo[1]}; {dst}.step = {lo[2]};"]
        if key is abs:
            at = _unlit(sig.args[0])
            a = self.use_as(args[0], at, loc)
            if _is_float(at):
                r = f"{self.d.math('fabs', self.ct(at))}({a})"
            elif _is_bool(at):
                r = f"(({self.d.int64}){a})"
            else:
                r = f"({a} < 0 ? -{a} : {a})"
            return [f"{dst} = {self.cast(r, rt, tt)};"]
        if key in (min, max):
            if len(args) < 2:
                raise self.fail(f"{name}() over an iterable", loc)
            cmp = "<" if key is min else ">"
            vals = [self.use_as(v, rt, loc) for v in args]
            acc = vals[0]
            out = [f"{dst} = {acc};"]
            for v in vals[1:]:
                out.append(f"{dst} = ({v} {cmp} {dst}) ? {v} : {dst};")
            return out
        if mod == "math" or (isinstance(key, type(math.sqrt)) and
                             getattr(math, name, None) is key):
            return self.math_call(dst, tt, name, sig, args, loc)
        raise self.fail(f"call to {name!r} ({fnty})", loc)

    def round_call(self, dst, tt, sig, args, loc) -> list[str]:
        """``round(x)`` (half to even, to int64) and ``round(x, ndigits)``,
        as Numba computes them."""
        rt = _unlit(sig.return_type)
        xt = _unlit(sig.args[0])
        if not _is_float(xt):        # round(int) is the int; round(int, n) is refused
            if len(args) == 1 and _is_int(xt):
                return [f"{dst} = {self.use_as(args[0], tt, loc)};"]
            raise self.fail(f"round() of {xt} with {len(args)} arguments", loc)
        xct = self.ctype_checked(xt, loc)
        rint = self.d.math("rint", xct)
        if rint is None:
            raise self.fail("round()", loc)
        x = self.use_as(args[0], xt, loc)
        if len(args) == 1:
            return [f"{dst} = {self.cast(f'{rint}({x})', xt, tt)};"]
        if len(args) != 2 or not _is_int(sig.args[1]):
            raise self.fail(f"round() with {len(args)} arguments", loc)
        f64 = _f64_t()
        dct = self.ctype_checked(f64, loc)
        isinf, isnan = self.d.math("isinf", xct), self.d.math("isnan", xct)
        disinf = self.d.math("isinf", dct)
        i64 = self.d.int64
        # Numba's round_ndigits: powers of ten in double, rint in x's type
        p1 = self.pow_expr("10.0", "(nd - 22)", f64, _int64_t(), f64, loc)
        p2 = self.pow_expr("10.0", "nd", f64, _int64_t(), f64, loc)
        p3 = self.pow_expr("10.0", "(-nd)", f64, _int64_t(), f64, loc)
        name = f"ck_round_ndigits_{_key(xt)}"
        self.prog.helper(name, f"""\
{self.d.function_prefix} {xct} {name}({xct} x, {i64} nd)
{{
  if ({isinf}(x) || {isnan}(x)) return x;
  if (nd >= 0) {{
    {dct} pow1, pow2;
    if (nd > 22) {{ pow1 = {p1}; pow2 = 1e22; }} else {{ pow1 = {p2}; pow2 = 1.0; }}
    {dct} y = (({dct})x * pow1) * pow2;
    if ({disinf}(y)) return x;
    return ({xct})((({dct}){rint}(({xct})y) / pow2) / pow1);
  }}
  {dct} pow1 = {p3};
  {dct} y = ({dct})x / pow1;
  return ({xct})(({dct}){rint}(({xct})y) * pow1);
}}
""")
        nd = self.use_as(args[1], _int64_t(), loc)
        return [f"{dst} = {self.cast(f'{name}({x}, {nd})', xt, tt)};"]

    def gcd_call(self, dst, tt, sig, args, loc) -> list[str]:
        """``math.gcd`` on two integers of one type: Euclid on the magnitudes
        in unsigned 64-bit (as Numba, gcd(INT64_MIN, 0) wraps to INT64_MIN)."""
        t = _unlit(sig.return_type)
        if not (_is_int(t) and all(_unlit(a) == t for a in sig.args)):
            raise self.fail(f"math.gcd on {sig.args}", loc)
        ct, u64 = self.ct(t), self.d.uint64
        neg = "a < 0" if _int_bits(t)[1] else "false"
        negb = "b < 0" if _int_bits(t)[1] else "false"
        name = f"ck_gcd_{_key(t)}"
        self.prog.helper(name, f"""\
{self.d.function_prefix} {ct} {name}({ct} a, {ct} b)
{{
  {u64} u = ({neg}) ? ({u64})0 - ({u64})a : ({u64})a;
  {u64} v = ({negb}) ? ({u64})0 - ({u64})b : ({u64})b;
  while (v != 0) {{ {u64} r = u % v; u = v; v = r; }}
  return ({ct})u;
}}
""")
        a, b = (self.use_as(v, t, loc) for v in args)
        return [f"{dst} = {self.cast(f'{name}({a}, {b})', t, tt)};"]

    def math_call(self, dst, tt, name, sig, args, loc, prefix="math.") -> list[str]:
        if name == "gcd" and len(args) == 2:
            return self.gcd_call(dst, tt, sig, args, loc)
        rt = _unlit(sig.return_type)
        ats = [_unlit(a) for a in sig.args]
        ft = rt if _is_float(rt) else (ats[0] if ats and _is_float(ats[0]) else _f64_t())
        fct = self.ctype_checked(ft, loc)
        cargs = [self.cast(self.use(v, loc), self.tyof(v), ft) for v in args]

        def fn(generic):
            f = self.d.math(generic, fct)
            if f is None:
                raise self.fail(f"{prefix}{name}", loc)
            return f
        if name in _MATH_1 and len(args) == 1:
            r = f"{fn(_MATH_1[name])}({cargs[0]})"
        elif name in _MATH_2 and len(args) == 2:
            r = f"{fn(_MATH_2[name])}({cargs[0]}, {cargs[1]})"
        elif name == "log" and len(args) == 1:
            r = f"{fn('log')}({cargs[0]})"
        elif name == "log" and len(args) == 2:
            r = f"({fn('log')}({cargs[0]}) / {fn('log')}({cargs[1]}))"
        elif name in _MATH_TO_INT and len(args) == 1:
            if _is_int(ats[0]):
                r = self.use(args[0], loc)
                return [f"{dst} = {self.cast(r, ats[0], tt)};"]
            r = f"{fn(_MATH_TO_INT[name])}({cargs[0]})"
            return [f"{dst} = {self.cast(r, ft, tt)};"]
        elif name in _MATH_PRED and len(args) == 1:
            if not _is_float(ats[0]):
                v = "true" if name == "isfinite" else "false"
                return [f"{dst} = {v};"]
            return [f"{dst} = ({fn(_MATH_PRED[name])}({cargs[0]}) != 0);"]
        elif name == "ldexp" and len(args) == 2:
            e = self.use_as(args[1], _int32_t(), loc)
            r = f"{fn('ldexp')}({cargs[0]}, {e})"
        elif name == "rint" and len(args) == 1:
            if _is_int(ats[0]):
                return [f"{dst} = {self.cast(self.use(args[0], loc), ats[0], tt)};"]
            r = f"{fn('rint')}({cargs[0]})"
        elif name in ("degrees", "radians") and len(args) == 1:
            f = self.d.math(name, fct)
            if f is not None:
                r = f"{f}({cargs[0]})"
            else:   # no built-in: the factor, as Numba computes it
                factor = 180.0 / math.pi if name == "degrees" else math.pi / 180.0
                r = f"({cargs[0]} * {self.d.float_literal(factor, ft)})"
        else:
            raise self.fail(f"{prefix}{name} with {len(args)} argument(s)", loc)
        return [f"{dst} = {self.cast(r, ft, tt)};"]
