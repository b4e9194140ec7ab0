"""The built-in operations on device arrays: one operation table, device C
generated per type signature through the context kind's dialect
(:mod:`ckernels.dialects`).

Operators, ``ckernels.ops.<name>`` and NumPy ufuncs on device arrays run
here.  Each registered operation of the C kernel registry
(``ckernel/registry.h``: ``add``, ``sqrt``, ``less``, ...) has one entry in
:data:`OPS`: a function that writes the C body of the element function for
the argument types the registry resolves (``ck_op_resolve``: NumPy's
promotion and loop search -- so the result types are exactly those of
``ckernels.ops`` on the host) and returns the result.  The semantics are the
host kernels' (``docs/kernel-registry.md``): integers wrap, Python floor
division and modulo, integer division by zero raises ``ZeroDivisionError``,
negative integer powers ``ValueError``, NaN propagation of ``minimum`` /
``maximum``, shifts by out-of-range counts give 0 or -1, ... .  Math
functions are the dialect's built-ins (OpenCL's ``sin`` etc., whose error
bounds the OpenCL specification gives in ulp, CUDA's ``sin``/``sinf``; see
``docs/contexts.md``).  Nothing here is specific to one device kind: the
same table serves every device dialect (:mod:`ckernels.dialects`).

Element functions are wrapped into a kernel by
:func:`~ckernels.context.device_program.kernel_wrapper` -- the same kernel
shape jitted functions use (array operands converted on read, scalars by
value, N-d broadcasting) -- and launched through the plans of
:mod:`ckernels.context.launch`.  Programs are cached per (dialect, operation,
operand layout); plans per context and layout.

Also here, as kernels of their own: assignment and conversion (``astype``,
``a[...] = b``, ``fill``) with the library's error modes, reductions
(``sum prod min max any all mean``: a tree of partial results, each work
item folding one chunk, until one value per output element is left), the
gather behind integer-array indexing and ``str(d)`` (only the elements shown
leave the device), the operand rule of NumPy ufuncs (no host operands).
:class:`~ckernels.context.DeviceArray` (the module above this one) calls
these; here a device array is any
:class:`~ckernels.context.device_base.DeviceArrayBase`, and new arrays are of
the class of the operands.
"""

from __future__ import annotations

import numbers
import threading

import numpy as np

from .. import dialects, dtypes
from ..opnames import REDUCTIONS
from .._cargs import c_text
from .._native import check, ffi, lib
from ..arraylike import c_strides
from ..host.array import empty as _host_empty
from ..errors import (CKIndexError, CKOverflowError, CKTypeError, CKValueError,
                      CKZeroDivisionError, InvalidArgumentError, NotSupportedError)
from . import launch as _dev
from .device_base import DeviceArrayBase as DeviceArray
from .device_program import KERNEL_NAME, DeviceProgram, kernel_wrapper

_lock = threading.Lock()


# ================================================================== C pieces ==
class _C:
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


def _bits(dt) -> int:
    return dt.size * 8


def _wrap(c, t, expr_a, op, expr_b=None) -> str:
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
            return f"return {_wrap(c, t, 'a', op, 'b')};"
        return f"return a {op} b;"
    return 2, body


def _divide(c, ts, rt):
    t = ts[0]
    if t.kind == "f":
        return "return a / b;"
    r = c.ct(rt)
    return f"return ({r})a / ({r})b;"


def _floor_divide(c, ts, rt):
    t = ts[0]
    if t.kind == "f":
        return f"return {c.prog.pyarith('floordiv', t)}(a, b);"
    zero = c.fail(CKZeroDivisionError, f"floor_divide: integer division by zero ({t.name})")
    if t.kind == "u":
        return f"if (b == 0) {zero}\n  return a / b;"
    return (f"if (b == 0) {zero}\n"
            f"  if (b == -1) return {_wrap(c, t, 'a', '-')};\n"
            f"  return {c.prog.pyarith('floordiv', t)}(a, b);")


def _mod(c, ts, rt):
    t = ts[0]
    if t.kind == "f":
        return f"return {c.prog.pyarith('mod', t)}(a, b);"
    zero = c.fail(CKZeroDivisionError, f"mod: integer division by zero ({t.name})")
    if t.kind == "u":
        return f"if (b == 0) {zero}\n  return a % b;"
    return (f"if (b == 0) {zero}\n"
            f"  if (b == -1) return 0;\n"
            f"  return {c.prog.pyarith('mod', t)}(a, b);")


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
    return f"return {_wrap(c, t, 'a', '-')};" if t.kind in "iu" else "return -a;"


def _absolute(c, ts, rt):
    t = ts[0]
    if t.kind in "bu":
        return "return a;"
    if t.kind == "i":
        return f"return a < 0 ? {_wrap(c, t, 'a', '-')} : a;"
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
        w = _bits(t)
        bad = f"(b < 0 || b >= {w})" if t.kind == "i" else f"(b >= {w})"
        if left:
            return f"return {bad} ? 0 : {_wrap(c, t, 'a', '<<', '(b)')};"
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
    return f"return {_wrap(c, t, 'a', '*', 'a')};" if t.kind in "iu" else "return a * a;"


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
    c = _C(prog, where)
    d = prog.dialect
    params = ", ".join(f"{c.ct(t)} {n}" for t, n in zip(ts, "ab"))
    name = f"ck_op_{op}_{'_'.join(t.name for t in ts)}"
    text = (f"{d.function_prefix} {c.ct(rt)} {name}({params}, {d.int32} *ck_err)\n"
            f"{{\n  {body(c, ts, rt)}\n}}\n")
    prog.order.append(text)
    return name


# ========================================================= resolving types ==
_RESOLVED: dict = {}


def resolve(op: str, names: tuple) -> tuple:
    """``(kernel argument types, result type)`` (names) of registry operation
    ``op`` for arguments of element types ``names`` (``ck_op_resolve``)."""
    key = (op, names)
    r = _RESOLVED.get(key)
    if r is None:
        cop = ffi.new("const ck_op **")
        check(lib.ck_op_find(c_text(op, "operation name"), cop))
        if lib.ck_op_arity(cop[0]) != len(names):
            raise InvalidArgumentError(f"{op} takes {lib.ck_op_arity(cop[0])} argument(s), "
                                       f"got {len(names)}")
        ids = ffi.new("ck_type_id[]", [dtypes.by_name[n].type_id for n in names])
        kargs = ffi.new("ck_type_id[]", len(names))
        ret = ffi.new("ck_type_id *")
        check(lib.ck_op_resolve(cop[0], len(names), ids, ret, kargs))
        r = (tuple(dtypes.by_id[int(kargs[i])].name for i in range(len(names))),
             dtypes.by_id[int(ret[0])].name)
        _RESOLVED[key] = r
    return r


def _operand_types(args, fname):
    """Element type names of device arrays and scalars (NEP 50 for weak ones)."""
    strong = [a._element.name for a in args if isinstance(a, DeviceArray)]
    strong += [dtypes.scalar_type(a) for a in args
               if not isinstance(a, DeviceArray) and not dtypes.is_weak(a)]
    names = []
    for a in args:
        if isinstance(a, DeviceArray):
            names.append(a._element.name)
        else:
            n = dtypes.weak_scalar_type(a, strong) if dtypes.is_weak(a) else \
                dtypes.scalar_type(a)
            names.append(n)
    return tuple(names)


def _check_device_types(tgt, where, names):
    for n in names:
        if n not in tgt.types:
            held = ", ".join(d.name for d in tgt.element_types())
            raise NotSupportedError(f"{where}: the result or argument type {n} is not "
                                    f"supported on {tgt.name} devices ({held}); convert "
                                    "with .astype() first")


def _fp64(ctx, where, names):
    if dialects.uses_fp64(names) and not ctx.supports_fp64:
        raise NotSupportedError(f"{where}: float64 on a device without fp64 support "
                                f"({ctx.describe()})")


# ============================================================ elementwise ==
_PROGRAMS: dict = {}


def _dialect(ctx):
    """The dialect of ``ctx``'s device kind (NotSupportedError if none)."""
    d = dialects.device(ctx.kind)
    if d is None:
        raise NotSupportedError(f"ckernels: no device operations for '{ctx.kind}' contexts "
                                f"(device kinds: {', '.join(dialects.DEVICE_DIALECTS)})")
    return d


def _program(tgt, key, make):
    """An :class:`DeviceProgram` cached per target and ``key``."""
    k = (tgt.name,) + key
    prog = _PROGRAMS.get(k)
    if prog is None:
        prog = make()
        with _lock:
            prog = _PROGRAMS.setdefault(k, prog)
    return prog


def _op_program(tgt, op, kargs, ret, inputs, out_name):
    def make():
        prog = DeviceProgram(tgt, "python")
        ts = [dtypes.by_name[n] for n in kargs]
        rt = dtypes.by_name[ret]
        if dialects.uses_fp64((*kargs, ret, out_name, *(dt.name for dt, _ in inputs))):
            prog.fp64_user = f"ckernels.ops.{op}"
        fn = element_function(prog, op, ts, rt, f"ckernels.ops.{op}")
        prog.finish(kernel_wrapper(
            tgt, fn, [(tgt.ctype(t), t.kind == "b") for t in ts],
            (tgt.ctype(rt), rt.kind == "b"), list(inputs),
            dtypes.by_name[out_name]))
        return prog
    return _program(tgt, ("op", op, kargs, ret, tuple((d.name, v) for d, v in inputs),
                          out_name), make)


def _scalar_value(v, name):
    """A scalar operand as the Python value stored into the kernel argument."""
    if isinstance(v, np.generic):
        v = v.item()
    if dtypes.by_name[name].kind == "b":
        return bool(v)
    return v


def elementwise(op: str, args, out: DeviceArray | None = None):
    """Registry operation ``op`` on device arrays and scalars, on the device;
    into ``out`` (same context, broadcast shape, a dtype the result casts to
    with NumPy's ``same_kind`` rule) when given.  A 0-d result stays 0-d."""
    where = f"ckernels.ops.{op}"
    if op not in OPS:
        raise NotSupportedError(f"{where}: no device kernel for this operation")
    ctx = _dev.context_of(where, list(args) + ([out] if out is not None else []),
                          "argument")
    tgt = _dialect(ctx)
    names = _operand_types(args, where)
    kargs, ret = resolve(op, names)
    _check_device_types(tgt, where, kargs + (ret,))
    if out is not None:
        if not isinstance(out, DeviceArray):
            raise InvalidArgumentError(f"{where}: out= must be a DeviceArray, not "
                                       f"{type(out).__name__}")
        if not np.can_cast(dtypes.by_name[ret].numpy, out.dtype, "same_kind"):
            raise CKTypeError(f"{where}: cannot cast the result from dtype('{ret}') to "
                              f"out= dtype('{out.dtype}') with casting rule 'same_kind'")
        out_name = out._element.name
    else:
        out_name = ret
    inputs = tuple((a._element if isinstance(a, DeviceArray) else dtypes.by_name[n],
                    not isinstance(a, DeviceArray)) for a, n in zip(args, names))
    return _launch(ctx, where, ("op", op, inputs, out_name),
                   lambda: _op_program(tgt, op, kargs, ret, inputs, out_name),
                   kargs + (ret, out_name), args, names, inputs, out, ret, out_name)


def _launch(ctx, where, key, program, type_names, args, names, inputs, out, ret, out_name):
    """Run an elementwise program (``program()`` makes it) over ``args``
    through the plan cached per context, ``key`` and operand layout."""
    st = _dev.state(ctx)
    pkey = key + (out._key if out is not None else None,
                  tuple(a._key if isinstance(a, DeviceArray) else None for a in args))
    plan = st.plans.get(pkey)
    if plan is None:
        _fp64(ctx, where, tuple(type_names) + tuple(d.name for d, _ in inputs))
        prog = program()
        built = ctx.build_program(prog.source)
        shapes = [a._shape if isinstance(a, DeviceArray) else () for a in args]
        strides = [a._strides if isinstance(a, DeviceArray) else () for a in args]
        if out is None:
            oshape = _dev.broadcast_shape(shapes)
            ostrides = c_strides(oshape, dtypes.by_name[ret].size)
        else:   # the sources broadcast to out= (ck_broadcast_strides says when not)
            oshape, ostrides = out._shape, out._strides
        plan = _dev.Plan(ctx, built, prog.errors, where, prog.dialect.title, oshape,
                         dtypes.by_name[out_name].numpy, ostrides, inputs, shapes, strides)
        with st.lock:
            if len(st.plans) >= 4 * _dev.PLAN_LIMIT:
                st.plans.clear()
            st.plans[pkey] = plan
    operands = [a if isinstance(a, DeviceArray) else _scalar_value(a, n)
                for a, n in zip(args, names)]
    return _dev.run(plan, ctx, out, operands)


def where(cond, x, y) -> DeviceArray:
    """``numpy.where(cond, x, y)`` on the device: ``x`` where ``cond`` is
    nonzero, else ``y``, broadcast; the result type is NumPy's promotion of
    ``x`` and ``y`` (NEP 50 for Python scalars)."""
    fname = "numpy.where"
    ctx = _dev.context_of(fname, [cond, x, y], "argument")
    tgt = _dialect(ctx)
    ret = dtypes.promote(*_operand_types((x, y), fname))
    cname = cond._element.name if isinstance(cond, DeviceArray) else "bool"
    names = (cname, x._element.name if isinstance(x, DeviceArray) else ret,
             y._element.name if isinstance(y, DeviceArray) else ret)
    _check_device_types(tgt, fname, (ret,) + names)
    inputs = tuple((a._element if isinstance(a, DeviceArray) else dtypes.by_name[n],
                    not isinstance(a, DeviceArray)) for a, n in zip((cond, x, y), names))
    return _launch(ctx, fname, ("where", inputs, ret),
                   lambda: _where_program(tgt, inputs, ret, names),
                   (ret,), (cond, x, y), names, inputs, None, ret, ret)


def _where_program(tgt, inputs, ret, names):
    def make():
        d = tgt
        prog = DeviceProgram(d, "python")
        rt = dtypes.by_name[ret]
        if dialects.uses_fp64((ret, *names)):
            prog.fp64_user = "numpy.where"
        ct = d.ctype(rt)
        prog.order.append(f"{d.function_prefix} {ct} ck_where(bool c, {ct} a, {ct} b, "
                          f"{d.int32} *ck_err)\n{{\n  return c ? a : b;\n}}\n")
        prog.finish(kernel_wrapper(d, "ck_where", [("bool", True), (ct, rt.kind == "b"),
                                                          (ct, rt.kind == "b")],
                                          (ct, rt.kind == "b"), list(inputs), rt))
        return prog
    return _program(tgt, ("where", tuple((d.name, v) for d, v in inputs), ret), make)



# ====================================================== assignment, astype ==
_ERRMODES = ("nocheck", "overflow", "fractional", "default")   # "default" = fractional


def _cast_function(prog, src, dst, errmode) -> str:
    """An element function converting ``src`` to ``dst`` under ``errmode``
    (the library's assignment semantics, ``ckernel/assign.h``)."""
    d = prog.dialect
    c = _C(prog, "astype")
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
        lo = -(2 ** (_bits(dst) - 1)) if dst.kind == "i" else 0
        hi = 2 ** (_bits(dst) - 1 if dst.kind == "i" else _bits(dst))   # exclusive, exact
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
                cond = "a < 0" + (f" || ({c.ut(src)})a > ({c.ut(src)}){2 ** _bits(dst) - 1}UL"
                                  if dst.size < src.size else "")
                lines.append(f"if ({cond}) {over}")
            elif src.kind == "u" and dst.kind == "i":
                if dst.size <= src.size:
                    lines.append(f"if (a > ({s}){2 ** (_bits(dst) - 1) - 1}UL) {over}")
            elif dst.size < src.size:
                if src.kind == "i":
                    lo, hi = -(2 ** (_bits(dst) - 1)), 2 ** (_bits(dst) - 1) - 1
                    lines.append(f"if (a < ({s})({lo}L) || a > ({s})({hi}L)) {over}")
                else:
                    lines.append(f"if (a > ({s}){2 ** _bits(dst) - 1}UL) {over}")
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
    return _program(tgt, ("cast", src.name, dst.name, errmode, by_value), make)


def _convert(dst: DeviceArray, src, errmode: str, where: str) -> None:
    """``dst[...] = src`` (a device array of the same context, broadcast; or a
    scalar value) converted under ``errmode``."""
    ctx = dst.context
    tgt = _dialect(ctx)
    by_value = not isinstance(src, DeviceArray)
    sdt = dst._element if by_value else src._element
    st = _dev.state(ctx)
    pkey = ("cast", sdt.name, dst._element.name, errmode, dst._key,
            None if by_value else src._key)
    plan = st.plans.get(pkey)
    if plan is None:
        _fp64(ctx, where, (sdt.name, dst._element.name))
        prog = _cast_program(tgt, sdt, dst._element, errmode, by_value)
        built = ctx.build_program(prog.source)
        shape, strides = ((), ()) if by_value else (src._shape, src._strides)
        plan = _dev.Plan(ctx, built, prog.errors, where, tgt.title, dst._shape,
                         dst.dtype, dst._strides, [(sdt, by_value)], [shape], [strides])
        with st.lock:
            if len(st.plans) >= 4 * _dev.PLAN_LIMIT:
                st.plans.clear()
            st.plans[pkey] = plan
    _dev.run(plan, ctx, dst, [src])


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
            _convert(dst, value.item(), "nocheck", where)
        return
    host = np.asarray(src)
    if host.dtype.kind not in "biuf":
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


# ============================================================= reductions ==
#: reduction -> (combining operation of the table, identity); the operation
#: names are ckernels.opnames' (a mean sums)
_IDENTITY = {"sum": 0, "prod": 1, "min": None, "max": None, "any": False, "all": True,
             "mean": 0}
_REDUCE = {name: (REDUCTIONS["sum" if name == "mean" else name], ident)
           for name, ident in _IDENTITY.items()}
_ITEMS = 1 << 14         # work items a pass aims at
_MIN_CHUNK = 32


def _acc_type(name, src: str, dtype) -> str:
    """NumPy's accumulator/result type of a reduction."""
    if dtype is not None:
        return dtypes.of_numpy(np.dtype(dtype)).name
    d = dtypes.by_name[src]
    if name in ("any", "all"):
        return "bool"
    if name in ("min", "max"):
        return src
    if name == "mean":
        return src if d.kind == "f" else "float64"
    if d.kind in "bi":
        return "int64"
    if d.kind == "u":
        return "uint64"
    return src


def _reduce_program(tgt, name, src, acc, out, final_mean):
    """The pass kernel: each work item folds one chunk of one output element's
    reduced elements (read as ``src``, combined in ``acc``) and stores the
    partial result (as ``out``; divided by the count in the last pass of a
    mean)."""
    def make():
        d = tgt
        prog = DeviceProgram(d, "python")
        if dialects.uses_fp64((src.name, acc.name, out.name)):
            prog.fp64_user = f"{name}()"
        opname, ident = _REDUCE[name]
        fn = element_function(prog, opname, (acc, acc), acc, name)
        i64, u64, u8, i32 = d.int64, d.uint64, d.uint8, d.int32
        a_ct = d.ctype(acc)
        s_ct = u8 if src.kind == "b" else d.ctype(src)
        o_ct = u8 if out.kind == "b" else d.ctype(out)
        load = f"*({d.pointer(s_ct, True)})(ck_in + off)"
        load = f"({a_ct})({load} != 0)" if src.kind == "b" or acc.kind == "b" else \
            f"({a_ct}){load}"
        if ident is None:
            init = ["    if (j == j0) { acc = x; continue; }"]
            start = f"  {a_ct} acc = 0;"
        else:
            init = []
            start = f"  {a_ct} acc = ({a_ct}){int(ident)};"
        div = f"  if (ck_final) acc = acc / ({a_ct})ck_count;\n" if final_mean else ""
        store = "acc ? 1 : 0" if out.kind == "b" else f"({o_ct})acc"
        text = f"""\
{d.kernel_prefix} {KERNEL_NAME}({d.pointer(u8)}ck_out, {u64} ck_out_off,
    {d.pointer(u8, True)}ck_in, {u64} ck_in_off, {d.pointer(i64, True)}ck_meta,
    {i32} ck_nkeep, {i32} ck_nred, {u64} ck_nout, {u64} ck_m, {u64} ck_chunk,
    {u64} ck_nchunks, {u64} ck_count, {i32} ck_final, {d.pointer(i32)}ck_errbuf)
{{
  {u64} g = {d.thread_index};
  if (g >= ck_nout * ck_nchunks) return;
  {u64} o = g / ck_nchunks, c = g % ck_nchunks;
  {u64} base = ck_in_off, rest = o;
  for (int k = ck_nkeep - 1; k >= 0; k--) {{
    {u64} idx = rest % ({u64})ck_meta[k];
    rest /= ({u64})ck_meta[k];
    base += idx * ck_meta[ck_nkeep + k];
  }}
  {u64} j0 = c * ck_chunk, j1 = j0 + ck_chunk;
  if (j1 > ck_m) j1 = ck_m;
  {i32} err = 0;
{start}
  {i64} rstride = ck_meta[2 * ck_nkeep + ck_nred];
  for ({u64} j = j0; j < j1; j++) {{
    {u64} off = base;
    if (ck_nred == 1) {{
      off += j * rstride;
    }} else {{
      {u64} r = j;
      for (int k = ck_nred - 1; k >= 0; k--) {{
        {u64} idx = r % ({u64})ck_meta[2 * ck_nkeep + k];
        r /= ({u64})ck_meta[2 * ck_nkeep + k];
        off += idx * ck_meta[2 * ck_nkeep + ck_nred + k];
      }}
    }}
    {a_ct} x = {load};
{chr(10).join(init)}
    acc = {fn}(acc, x, &err);
  }}
{div}  *({d.pointer(o_ct)})(ck_out + ck_out_off + g * sizeof({o_ct})) = {store};
}}
"""
        prog.finish(text)
        return prog
    return _program(tgt, ("reduce", name, src.name, acc.name, out.name, final_mean), make)


def _coalesce(shape, strides):
    """Drop size-1 dims and merge dims that walk memory as one run."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    out = []
    for n, s in dims:
        if out and out[-1][1] == s * n:
            pn, ps = out[-1]
            out[-1] = (pn * n, s)
        else:
            out.append((n, s))
    return [n for n, _ in out], [s for _, s in out]


def _axes(axis, nd, name):
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, (numbers.Integral, np.integer)) else tuple(axis)
    norm = []
    for a in axes:
        a = int(a)
        if not -nd <= a < nd:
            raise CKIndexError(f"{name}: axis {a} is out of bounds for array of dimension "
                               f"{nd}")
        if a % nd in norm:
            raise InvalidArgumentError(f"{name}: duplicate value in 'axis'")
        norm.append(a % nd)
    return tuple(norm)


def reduce(name: str, a: DeviceArray, axis=None, keepdims=False, dtype=None, out=None):
    """A reduction on the device (``sum prod min max any all mean``), NumPy's
    result types, ``axis`` (int, tuple or None) and ``keepdims``; a full
    reduction is a 0-d device array."""
    if not isinstance(a, DeviceArray):
        raise CKTypeError(f"{name}: expected a DeviceArray, not {type(a).__name__}")
    ctx = a.context
    tgt = _dialect(ctx)
    axes = _axes(axis, a.ndim, name)
    keep = [k for k in range(a.ndim) if k not in axes]
    keep_shape = tuple(a._shape[k] for k in keep)
    res_shape = tuple(1 if k in axes else a._shape[k] for k in range(a.ndim)) if keepdims \
        else keep_shape
    acc_name = _acc_type(name, a._element.name, dtype)
    if name in ("any", "all"):
        res_name = "bool"
    else:
        res_name = acc_name
    _check_device_types(tgt, name, (acc_name, res_name))
    _fp64(ctx, name, (a._element.name, acc_name, res_name))
    acc = dtypes.by_name[acc_name]
    nout = 1
    for s in keep_shape:
        nout *= s
    m = 1
    for k in axes:
        m *= a._shape[k]
    result = type(a).empty(ctx, keep_shape, dtypes.by_name[res_name].numpy)
    if nout:
        if m == 0:
            ident = _REDUCE[name][1]
            if ident is None:
                raise CKValueError(f"zero-size array to reduction operation "
                                   f"{_REDUCE[name][0]} which has no identity")
            assign(result, np.nan if name == "mean" else ident)
        else:
            _reduce_passes(tgt, ctx, name, a, keep, axes, acc, result, nout, m)
    if keepdims:
        result = result.reshape(res_shape)
    if out is not None:
        if not isinstance(out, DeviceArray) or out.context != ctx:
            raise InvalidArgumentError(f"{name}: out= must be a DeviceArray of the same "
                                       "context")
        if out._shape != res_shape:
            raise InvalidArgumentError(f"{name}: out= has shape {out._shape}, the result "
                                       f"{res_shape}")
        assign(out, result)
        return out
    return result


def _reduce_passes(tgt, ctx, name, a, keep, axes, acc, result, nout, m):
    st = _dev.state(ctx)
    kshape, kstrides = _coalesce([a._shape[k] for k in keep], [a._strides[k] for k in keep])
    rshape, rstrides = _coalesce([a._shape[k] for k in axes], [a._strides[k] for k in axes])
    if not rshape:
        rshape, rstrides = [1], [0]
    src, buf, off = a._element, a._buffer, a._offset
    mean = name == "mean"
    count = m         # a mean divides by the original count, in the last pass
    while True:
        chunk = max(_MIN_CHUNK, -(-m // max(1, _ITEMS // nout)))
        nchunks = -(-m // chunk)
        final = nchunks == 1
        if final:
            dst = result
            out_dt = result._element
        else:
            dst = type(a).empty(ctx, (nout * nchunks,), acc.numpy)
            out_dt = acc
        prog = _reduce_program(tgt, name, src, acc, out_dt, mean)
        built = ctx.build_program(prog.source)
        meta = st.meta(tuple(kshape) + tuple(kstrides) + tuple(rshape) + tuple(rstrides))
        u64, i32 = np.uint64, np.int32
        with st.lock:
            built.launch(KERNEL_NAME, nout * nchunks, (dst._buffer, 0), u64(dst._offset),
                         (buf, 0), u64(off), (meta, 0), i32(len(kshape)), i32(len(rshape)),
                         u64(nout), u64(m), u64(chunk), u64(nchunks), u64(count),
                         i32(1 if final else 0), (st.flag, 0), local_size=_dev.LOCAL_SIZE)
        if final:
            return
        # the next pass folds each output element's partial results
        src, buf, off = acc, dst._buffer, dst._offset
        kshape, kstrides = ([nout], [nchunks * acc.size]) if nout > 1 else ([], [])
        rshape, rstrides = [nchunks], [acc.size]
        m = nchunks


# =============================================================== gathering ==
def _gather_program(tgt, itemsize):
    """Outer indexing: ``out[j0, j1, ...] = in[idx0[j0], idx1[j1], ...]``, each
    axis either a range (``idx[j] = j``) or a list of int64 indices (negative
    ones counted from the end, bounds-checked)."""
    def make():
        d = tgt
        prog = DeviceProgram(d, "python")
        i64, u64, u8, i32 = d.int64, d.uint64, d.uint8, d.int32
        el = d.types[f"uint{itemsize * 8}"]
        code = prog.error_code(CKIndexError, ("index out of bounds",))
        text = f"""\
{d.kernel_prefix} {KERNEL_NAME}({d.pointer(u8)}ck_out, {u64} ck_out_off,
    {d.pointer(u8, True)}ck_in, {u64} ck_in_off, {d.pointer(i64, True)}ck_meta,
    {d.pointer(u8, True)}ck_idx, {u64} ck_idx_off, {i32} ck_ndim, {u64} ck_n,
    {d.pointer(i32)}ck_errbuf)
{{
  {u64} i = {d.thread_index};
  if (i >= ck_n) return;
  {u64} rest = i, off = ck_in_off;
  for (int k = ck_ndim - 1; k >= 0; k--) {{
    /* meta per axis: count, stride, axis length, list start (-1: a range) */
    {u64} cnt = ({u64})ck_meta[4 * k];
    {u64} j = rest % cnt;
    rest /= cnt;
    {i64} at = ck_meta[4 * k + 3], idx = ({i64})j, len = ck_meta[4 * k + 2];
    if (at >= 0) {{
      idx = *({d.pointer(i64, True)})((ck_idx + ck_idx_off) + (at + ({i64})j) * 8);
      if (idx < 0) idx += len;
      if (idx < 0 || idx >= len) {{ {d.error_store('ck_errbuf', str(code))} return; }}
    }}
    off += ({u64})(idx * ck_meta[4 * k + 1]);
  }}
  *({d.pointer(el)})(ck_out + ck_out_off + i * {itemsize}) =
      *({d.pointer(el, True)})(ck_in + off);
}}
"""
        prog.kernel_text = prog.source = text
        return prog
    return _program(tgt, ("gather", itemsize), make)


def _gather(view: DeviceArray, lists, index: DeviceArray | None) -> DeviceArray:
    """``view`` indexed per axis by ``lists`` (None: the whole axis; an int:
    the start of that axis' indices in ``index``, with its count)."""
    ctx = view.context
    tgt = _dialect(ctx)
    st = _dev.state(ctx)
    shape, meta = [], []
    for k, (n, s) in enumerate(zip(view._shape, view._strides)):
        sel = lists[k]
        if sel is None:
            shape.append(n)
            meta += [n, s, n, -1]
        else:
            start, count = sel
            shape.append(count)
            meta += [count, s, n, start]
    out = type(view).empty(ctx, tuple(shape), view.dtype)
    if not out.size:
        return out
    prog = _gather_program(tgt, view.itemsize)
    built = ctx.build_program(prog.source)
    mbuf = st.meta(tuple(meta))
    ibuf, ioff = (index._buffer, index._offset) if index is not None else (st.flag, 0)
    with st.lock:
        built.launch(KERNEL_NAME, out.size, (out._buffer, 0), np.uint64(out._offset),
                     (view._buffer, 0), np.uint64(view._offset), (mbuf, 0), (ibuf, 0),
                     np.uint64(ioff), np.int32(view.ndim), np.uint64(out.size),
                     (st.flag, 0), local_size=_dev.LOCAL_SIZE)
        code = st.read_flag()
        if code:
            st.reset_flag()
    if code:
        raise _dev.device_error(prog.errors, code, "DeviceArray indexing",
                                tgt.title)
    return out


def take(view: DeviceArray, idx, axis: int, axis_len: int) -> DeviceArray:
    """``view`` with axis ``axis`` indexed by the integer (or boolean mask)
    index ``idx``: a host list/NumPy array (its indices copied to the device)
    or an integer device array (read on the device); a boolean device mask is
    read to the host to find its positions."""
    if isinstance(idx, DeviceArray):
        if idx.context != view.context:
            raise InvalidArgumentError(f"DeviceArray indexing: the index array lives on "
                                       f"{idx.context.brief}, the array on "
                                       f"{view.context.brief}")
        if idx._element.kind == "b":
            # the positions of a mask are found on the host: the mask is read
            # (one byte per element), the indexed values stay on the device
            return take(view, idx.to_numpy(), axis, axis_len)
        if idx._element.kind not in "iu":
            raise CKIndexError("arrays used as indices must be of integer (or boolean) type")
        ishape = idx._shape
        index = astype(idx, np.int64).reshape(-1) if idx.dtype != np.int64 or \
            not idx.is_contiguous else idx.reshape(-1)
    else:
        arr = np.asarray(idx)
        if arr.dtype.kind == "b":
            if arr.ndim != 1 or arr.shape[0] != axis_len:
                raise CKIndexError(f"boolean index of shape {arr.shape} does not match the "
                                   f"indexed axis of size {axis_len}")
            arr = np.flatnonzero(arr)
        elif arr.size == 0:
            arr = arr.astype(np.int64)
        elif arr.dtype.kind not in "iu":
            raise CKIndexError("arrays used as indices must be of integer (or boolean) type")
        ishape = arr.shape
        flat = arr.astype(np.int64).reshape(-1)
        bad = (flat < -axis_len) | (flat >= axis_len)
        if bad.any():
            raise CKIndexError(f"index {int(flat[bad][0])} is out of bounds for axis "
                               f"{axis} with size {axis_len}")
        index = type(view).from_host(view.context, flat) if flat.size else None
    count = int(np.prod(ishape, dtype=np.int64))
    lists = [None] * view.ndim
    lists[axis] = (0, count)
    if count == 0 or index is None:
        shape = view._shape[:axis] + (0,) + view._shape[axis + 1:]
        res = type(view).empty(view.context, shape, view.dtype)
    else:
        res = _gather(view, lists, index)
    return res.reshape(view._shape[:axis] + tuple(ishape) + view._shape[axis + 1:])


def gather(a: DeviceArray, indices) -> DeviceArray:
    """The elements of ``a`` at the outer product of per-axis index lists
    (int64 arrays, one per leading axis; what ``str(d)`` fetches), gathered
    on the device into a new C-contiguous array."""
    lists, table = [], []
    for k, idx in enumerate(indices):
        idx = np.asarray(idx, np.int64).reshape(-1)
        n = a._shape[k]
        if idx.size == n and np.array_equal(idx, np.arange(n)):
            lists.append(None)
        else:
            lists.append((len(table), idx.size))
            table.extend(idx.tolist())
    lists += [None] * (a.ndim - len(lists))
    index = type(a).from_host(a.context, np.array(table, np.int64)) if table else None
    return _gather(a, lists, index)


# ================================================================== NumPy ==
def check_ufunc_operands(ufunc, inputs, kwargs) -> None:
    """NumPy ufuncs on device arrays take device arrays of one context and
    scalars, and write into device arrays: a NumPy array (or list) anywhere
    would need a silent copy between host and device, which is refused with
    a TypeError."""
    outs = kwargs.get("out") or ()
    outs = outs if isinstance(outs, tuple) else (outs,)
    named = [(f"operand {i}", x) for i, x in enumerate(inputs)] + \
        [("out=", x) for x in outs]
    for what, x in named:
        if x is None or isinstance(x, DeviceArray) or _dev._is_scalar(x):
            continue
        if isinstance(x, (np.ndarray, list, tuple)) or hasattr(x, "__array__"):
            raise TypeError(
                f"numpy.{ufunc.__name__}: {what} is a {type(x).__name__} on the host; "
                "device arrays combine only with device arrays of the same context and "
                "scalars (no implicit host<->device copies: move host data with "
                "ctx.array(x), device data with .get())")


__all__ = ["OPS", "element_function", "resolve", "elementwise", "assign", "astype", "reduce",
           "take", "gather", "where", "check_ufunc_operands"]
