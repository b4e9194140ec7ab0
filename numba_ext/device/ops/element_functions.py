"""The operation table of the built-in device operations: for each operation
of the C kernel registry, a writer of the C body of its element function for
the argument and result types the registry resolved, in the dialect of the
program (:mod:`ckernels.dialects`); :func:`element_function` adds one to a
:class:`~ckernels.context.device_program.DeviceProgram`."""

from __future__ import annotations

from ...errors import CKValueError, CKZeroDivisionError, NotSupportedError
from ...context.device_program import DeviceProgram


# ================================================================== C pieces ==
class Pieces:
    """What an element function body may ask for: C type names of the target,
    its math built-ins, error codes (registered in ``prog``)."""

    def __init__(self, prog: DeviceProgram, where: str):
        self.prog = prog
        self.d = prog.dialect
        self.where = where

    def ct(self, dt) -> str:
        return self.d.ctype(dt)

    def ut(self, dt) -> str:
        """The unsigned type of ``dt``'s width."""
        return self.d.types[f"uint{dt.size * 8}"]

    def wu(self, dt) -> str:
        """An unsigned type at least 32 bits wide and as wide as ``dt`` (C's
        integer promotions must not turn wrapping arithmetic signed)."""
        return self.d.types[f"uint{max(dt.size, 4) * 8}"]

    def math(self, name, dt) -> str:
        f = self.d.math(name, self.ct(dt))
        if f is None:
            raise NotSupportedError(f"{self.where}: {name} on {dt.name} has no "
                                    f"{self.d.title} built-in")
        return f

    def fail(self, exc_class, message: str) -> str:
        """A statement storing the error code of ``exc_class(message)``."""
        code = self.prog.error_code(exc_class, (message,))
        return f"{{ *ck_err = {code}; return 0; }}"


def bits(dt) -> int:
    return dt.size * 8


def wrap(c, t, expr_a, op, expr_b=None) -> str:
    """``a op b`` (or ``op a``) modulo 2^N, computed unsigned (no UB)."""
    wu, ct, ut = c.wu(t), c.ct(t), c.ut(t)
    if expr_b is None:
        return f"({ct})(({wu})0 {op} ({wu})({ut}){expr_a})"
    return f"({ct})(({wu})({ut}){expr_a} {op} ({wu})({ut}){expr_b})"


# ---- the operation table ----------------------------------------------------
# Each entry: (arity, body(c, ts, rt) -> C statements); ``ts`` the kernel's
# argument types (DType rows, after the registry's promotion), ``rt`` its
# result; the parameters are ``a`` (and ``b``) of those types.
def _arith(op, bool_op=None):
    def body(c, ts, rt):
        t = ts[0]
        if t.kind == "b":
            return f"return a {bool_op} b;"
        if t.kind in "iu":
            return f"return {wrap(c, t, 'a', op, 'b')};"
        return f"return a {op} b;"
    return 2, body


def _divide(c, ts, rt):
    t = ts[0]
    if t.kind == "f":
        return "return a / b;"
    r = c.ct(rt)
    return f"return ({r})a / ({r})b;"


def _py_division(name, helper, c_op, by_minus_one):
    """``//`` or ``%`` with Python's semantics (``ckernel/pyarith.h``): an
    integer zero divisor raises, ``x op -1`` is ``by_minus_one(c, t)`` (no
    INT_MIN overflow), unsigned integers are C's."""
    def body(c, ts, rt):
        t = ts[0]
        if t.kind == "f":
            return f"return {c.prog.pyarith(helper, t)}(a, b);"
        zero = c.fail(CKZeroDivisionError, f"{name}: integer division by zero ({t.name})")
        if t.kind == "u":
            return f"if (b == 0) {zero}\n  return a {c_op} b;"
        return (f"if (b == 0) {zero}\n"
                f"  if (b == -1) return {by_minus_one(c, t)};\n"
                f"  return {c.prog.pyarith(helper, t)}(a, b);")
    return body


_floor_divide = _py_division("floor_divide", "floordiv", "/", lambda c, t: wrap(c, t, "a", "-"))
_mod = _py_division("mod", "mod", "%", lambda c, t: "0")


def _power(c, ts, rt):
    t = ts[0]
    if t.kind == "f":
        return f"return {c.math('pow', t)}(a, b);"
    neg = ""
    if t.kind == "i":
        neg = (f"if (b < 0) " + c.fail(CKValueError, "power: Integers to negative integer "
                                       f"powers are not allowed ({t.name})") + "\n  ")
    return f"{neg}return {c.prog.pyarith('pow', t)}(a, ({c.prog.dialect.uint64})b);"


def _negative(c, ts, rt):
    t = ts[0]
    return f"return {wrap(c, t, 'a', '-')};" if t.kind in "iu" else "return -a;"


def _absolute(c, ts, rt):
    t = ts[0]
    if t.kind in "bu":
        return "return a;"
    if t.kind == "i":
        return f"return a < 0 ? {wrap(c, t, 'a', '-')} : a;"
    return f"return {c.math('fabs', t)}(a);"


def _compare(op):
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

    def body(c, ts, rt):
        a, b = ts
        if a.kind == b.kind or a.kind not in "iu" or b.kind not in "iu":
            return f"return a {op} b;"
        # one signed, one unsigned 64-bit operand: compare exactly
        s, u, sop = ("a", "b", op) if a.kind == "i" else ("b", "a", flip[op])
        ut = c.ct(b if a.kind == "i" else a)
        neg = {"<": "true", "<=": "true", ">": "false", ">=": "false", "==": "false",
               "!=": "true"}[sop]
        return f"return {s} < 0 ? {neg} : (({ut}){s} {sop} {u});"
    return 2, body


def _logical(op):
    def body(c, ts, rt):
        if op == "^":
            return "return (a != 0) != (b != 0);"
        return f"return (a != 0) {op} (b != 0);"
    return 2, body


def _bitwise(op, bool_op):
    def body(c, ts, rt):
        t = ts[0]
        if t.kind == "b":
            return f"return a {bool_op} b;"
        return f"return ({c.ct(t)})(a {op} b);"
    return 2, body


def _invert(c, ts, rt):
    t = ts[0]
    return "return !a;" if t.kind == "b" else f"return ({c.ct(t)})(~a);"


def _shift(left):
    def body(c, ts, rt):
        t = ts[0]
        w = bits(t)
        bad = f"(b < 0 || b >= {w})" if t.kind == "i" else f"(b >= {w})"
        if left:
            return f"return {bad} ? 0 : {wrap(c, t, 'a', '<<', '(b)')};"
        ct = c.ct(t)
        if t.kind == "i":
            return f"return {bad} ? (a < 0 ? ({ct})-1 : ({ct})0) : ({ct})(a >> b);"
        return f"return {bad} ? ({ct})0 : ({ct})(a >> b);"
    return 2, body


def _minmax(cmp, nan_first):
    def body(c, ts, rt):
        t = ts[0]
        if t.kind != "f":
            return f"return (a {cmp} b) ? a : b;"
        isnan = c.math("isnan", t)
        if nan_first:   # minimum/maximum: the first NaN wins
            return (f"return {isnan}(a) ? a : ({isnan}(b) ? b : ((a {cmp} b) ? a : b));")
        return (f"return {isnan}(a) ? b : ({isnan}(b) ? a : ((a {cmp} b) ? a : b));")
    return 2, body


def _math1(name):
    def body(c, ts, rt):
        return f"return {c.math(name, ts[0])}(a);"
    return 1, body


def _math2(name):
    def body(c, ts, rt):
        return f"return {c.math(name, ts[0])}(a, b);"
    return 2, body


def _rounding(name):
    def body(c, ts, rt):
        t = ts[0]
        return "return a;" if t.kind != "f" else f"return {c.math(name, t)}(a);"
    return 1, body


def _sign(c, ts, rt):
    t = ts[0]
    ct = c.ct(t)
    if t.kind == "u":
        return f"return ({ct})(a > 0);"
    if t.kind == "i":
        return f"return ({ct})((a > 0) - (a < 0));"
    return (f"return {c.math('isnan', t)}(a) ? a : "
            f"(a > 0 ? ({ct})1 : (a < 0 ? ({ct})-1 : ({ct})0));")


def _square(c, ts, rt):
    t = ts[0]
    return f"return {wrap(c, t, 'a', '*', 'a')};" if t.kind in "iu" else "return a * a;"


def _reciprocal(c, ts, rt):
    t = ts[0]
    ct = c.ct(t)
    if t.kind == "f":
        return f"return ({ct})1 / a;"
    zero = c.fail(CKZeroDivisionError, f"reciprocal: integer division by zero ({t.name})")
    if t.kind == "u":
        return f"if (a == 0) {zero}\n  return a == 1 ? ({ct})1 : ({ct})0;"
    return (f"if (a == 0) {zero}\n"
            f"  return a == 1 ? ({ct})1 : (a == -1 ? ({ct})-1 : ({ct})0);")


def _classify(name, other):
    def body(c, ts, rt):
        t = ts[0]
        if t.kind != "f":
            return f"return {other};"
        return f"return {c.math(name, t)}(a) != 0;"
    return 1, body


#: operation name -> (arity, body writer)
OPS = {
    "add": _arith("+", "||"), "subtract": _arith("-"), "multiply": _arith("*", "&&"),
    "divide": (2, _divide), "floor_divide": (2, _floor_divide), "mod": (2, _mod),
    "power": (2, _power), "negative": (1, _negative), "absolute": (1, _absolute),
    "equal": _compare("=="), "not_equal": _compare("!="), "less": _compare("<"),
    "less_equal": _compare("<="), "greater": _compare(">"), "greater_equal": _compare(">="),
    "logical_and": _logical("&&"), "logical_or": _logical("||"), "logical_xor": _logical("^"),
    "logical_not": (1, lambda c, ts, rt: "return a == 0;"),
    "bitwise_and": _bitwise("&", "&&"), "bitwise_or": _bitwise("|", "||"),
    "bitwise_xor": _bitwise("^", "!="), "bitwise_not": (1, _invert), "invert": (1, _invert),
    "left_shift": _shift(True), "right_shift": _shift(False),
    "minimum": _minmax("<=", True), "maximum": _minmax(">=", True),
    "fmin": _minmax("<=", False), "fmax": _minmax(">=", False),
    **{n: _math1(n) for n in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10",
                              "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh")},
    "arcsin": _math1("asin"), "arccos": _math1("acos"), "arctan": _math1("atan"),
    "arctan2": _math2("atan2"), "hypot": _math2("hypot"),
    "floor": _rounding("floor"), "ceil": _rounding("ceil"), "trunc": _rounding("trunc"),
    "rint": _rounding("rint"),
    "sign": (1, _sign), "square": (1, _square), "reciprocal": (1, _reciprocal),
    "isnan": _classify("isnan", "false"), "isinf": _classify("isinf", "false"),
    "isfinite": _classify("isfinite", "true"),
}


def element_function(prog: DeviceProgram, op: str, ts, rt, where: str) -> str:
    """Add the element function of ``op`` over argument types ``ts`` (DType
    rows) returning ``rt`` to ``prog``; its name."""
    arity, body = OPS[op]
    c = Pieces(prog, where)
    d = prog.dialect
    params = ", ".join(f"{c.ct(t)} {n}" for t, n in zip(ts, "ab"))
    name = f"ck_op_{op}_{'_'.join(t.name for t in ts)}"
    text = (f"{d.function_prefix} {c.ct(rt)} {name}({params}, {d.int32} *ck_err)\n"
            f"{{\n  {body(c, ts, rt)}\n}}\n")
    prog.order.append(text)
    return name
