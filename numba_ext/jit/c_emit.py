"""Device C from Numba's typed IR: one emitter, one :class:`Dialect` per target.

A custom Numba pipeline (bytecode -> IR -> untyped rewrites -> type inference)
stops right after ``NopythonTypeInference`` and hands back ``func_ir``,
``typemap``, ``calltypes`` and ``return_type``; no LLVM is involved.  The
emitter walks that IR:

* every IR block becomes a label ``L<n>:``; ``ir.Branch`` becomes
  ``if (c) goto La; goto Lb;``, ``ir.Jump`` ``goto L;``, ``ir.Return``
  ``return (T)v;``;
* every IR variable (Numba IR assigns each name independently; the pipeline
  does not build SSA/phis) is declared once at the top of the function with
  the C type of its inferred Numba type (the dialect's column of the one
  element-type table, :mod:`ckernels.dtypes`); variables of
  compile-time-only types (modules, functions, dispatchers, number classes)
  get no declaration;
* expressions: binary/unary operators with the operand casts chosen by type
  inference (``calltypes``), comparisons, casts, constants (floats with the
  right suffix, hex-exact when needed), ``range`` loops (small structs),
  ``math.*`` -> the dialect's built-ins, ``abs``/``min``/``max``/``int``/``float``/
  ``bool``, integer ``//``, ``%`` and ``**`` and float ``//``/``%`` with
  Python semantics through helper functions; calls to other ``@ckernels.jit``
  (or ``numba.njit``) functions become device functions emitted before their
  caller;
* errors raised by the code (division by zero, ``raise SomeError("msg")``
  with constant arguments, ``range`` step 0) store a code in the work item's
  private error variable and return; the kernel copies the first code into an
  error buffer which the host reads back and turns into the exception
  (``EmittedKernel.errors``: code -> (exception class, args)).

The error model is the decorated function's (``error_model=``): ``"python"``
checks divisors and raises ``ZeroDivisionError`` as Python does;
``"numpy"`` emits no checks for ``/`` (IEEE ``inf``/``nan``), gives 0 for
integer ``//`` and ``%`` by zero and ``x / 0`` for float ``//`` by zero, and
the most negative integer for ``0 ** -n`` -- what Numba does on the CPU.

What differs between targets is behind a :class:`Dialect`: C type names,
qualifiers of functions, kernels and pointers, the work-item index, math
built-in names, literal suffixes and the error-buffer store.  Everything
else (control flow, expressions, Python semantics helpers, the kernel's
broadcast indexing) is shared.  Anything the emitter cannot translate is a
:class:`ckernels.errors.NotSupportedError` that names the construct and the
source line.
"""

from __future__ import annotations

import hashlib
import math
import operator
import re

import numpy as np

from .. import dtypes
from ..errors import NotSupportedError

# ----------------------------------------------------------------- pipeline --
_PIPELINE = None


def _pipeline_class():
    global _PIPELINE
    if _PIPELINE is not None:
        return _PIPELINE
    from numba.core import typed_passes as tp
    from numba.core import untyped_passes as up
    from numba.core.compiler import CompilerBase, _EarlyPipelineCompletion
    from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass

    @register_pass(mutates_CFG=False, analysis_only=True)
    class CKStopAfterTyping(FunctionPass):
        """Ends the pipeline after type inference with the typed IR."""
        _name = "ck_stop_after_typing"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            raise _EarlyPipelineCompletion(TypedIR(
                state.func_ir, state.typemap, state.calltypes, state.return_type,
                tuple(state.args)))

    class CKDeviceTypingPipeline(CompilerBase):
        def define_pipelines(self):
            pm = PassManager("ckernels-device-typing")
            pm.add_pass(up.TranslateByteCode, "analyzing bytecode")
            pm.add_pass(up.FixupArgs, "fix up args")
            pm.add_pass(up.IRProcessing, "processing IR")
            pm.add_pass(up.InlineClosureLikes, "inline closures")
            pm.add_pass(up.RewriteSemanticConstants, "rewrite semantic constants")
            pm.add_pass(up.DeadBranchPrune, "dead branch pruning")
            pm.add_pass(up.GenericRewrites, "nopython rewrites")
            pm.add_pass(up.RewriteDynamicRaises, "rewrite dynamic raises")
            pm.add_pass(tp.NopythonTypeInference, "nopython frontend")
            pm.add_pass(CKStopAfterTyping, "stop after typing")
            pm.finalize()
            return [pm]

    _PIPELINE = CKDeviceTypingPipeline
    return _PIPELINE


class TypedIR:
    __slots__ = ("func_ir", "typemap", "calltypes", "return_type", "args")

    def __init__(self, func_ir, typemap, calltypes, return_type, args):
        self.func_ir = func_ir
        self.typemap = typemap
        self.calltypes = calltypes
        self.return_type = return_type
        self.args = args


def typed_ir(py_func, arg_types, return_type=None, error_model="python",
             where="device") -> TypedIR:
    """Run the typing-only pipeline on ``py_func`` for Numba ``arg_types``."""
    from numba.core import compiler
    from numba.core.errors import NumbaError
    from numba.core.registry import cpu_target
    typingctx = cpu_target.typing_context
    targetctx = cpu_target.target_context
    typingctx.refresh()
    targetctx.refresh()
    flags = compiler.Flags()
    flags.nrt = False
    flags.no_cpython_wrapper = True
    flags.error_model = error_model
    try:
        return compiler.compile_extra(typingctx, targetctx, py_func, tuple(arg_types),
                                      return_type, flags, {},
                                      pipeline_class=_pipeline_class())
    except NumbaError as exc:
        raise NotSupportedError(f"{where}: cannot type {py_func.__qualname__}"
                                f"({', '.join(map(str, arg_types))}):\n{exc}") from None


# ---------------------------------------------------------------- dialects --
class Dialect:
    """What one target's C looks like.  Subclasses set the class attributes
    and may override the methods; the emitter asks only through them.

    ``name``            the column of :mod:`ckernels.dtypes` holding C types
                        (``DType.c_type(name)``), and the name in messages
    ``title``           the target's name in messages (``"OpenCL"``)
    ``function_prefix`` qualifiers of device functions (``"static"``)
    ``kernel_prefix``   qualifiers and result type of the kernel
    ``global_space``    address-space qualifier of buffer pointers (or "")
    ``thread_index``    C expression of the work item's flat index
    ``int64_suffix`` / ``uint64_suffix``   literal suffixes of 64-bit ints
    """

    name = "?"
    title = "?"
    function_prefix = "static"
    kernel_prefix = "void"
    global_space = ""
    thread_index = "0"
    int64_suffix = "L"
    uint64_suffix = "UL"

    def __init__(self):
        self.int64 = dtypes.by_name["int64"].c_type(self.name)
        self.uint64 = dtypes.by_name["uint64"].c_type(self.name)
        self.uint8 = dtypes.by_name["uint8"].c_type(self.name)
        self.int32 = dtypes.by_name["int32"].c_type(self.name)

    # ---- types -------------------------------------------------------------
    def scalar_type(self, t) -> str | None:
        """C type of a Numba scalar type (bool, ints, floats), or None."""
        d = dtypes.of_numba(t)
        return d.c_type(self.name) if d is not None and d.builtin else None

    def c_type(self, t) -> str | None:
        """C type of a Numba value type, or None (not representable)."""
        from numba.core import types
        t = _unlit(t)
        if isinstance(t, types.RangeType):
            return "ck_range_t"
        if isinstance(t, types.RangeIteratorType):
            return "ck_range_iter_t"
        if isinstance(t, types.Pair) and isinstance(_unlit(t.first_type), types.Integer):
            return "ck_range_pair_t"
        return self.scalar_type(t)

    def pointer(self, ct: str, const: bool = False) -> str:
        """A pointer into a kernel buffer."""
        space = f"{self.global_space} " if self.global_space else ""
        return f"{space}{'const ' if const else ''}{ct} *"

    def prelude(self) -> str:
        """Types every program defines (the ``range`` structs)."""
        i64 = self.int64
        return (f"typedef struct {{ {i64} start, stop, step; }} ck_range_t;\n"
                f"typedef struct {{ {i64} cur, count, step; }} ck_range_iter_t;\n"
                f"typedef struct {{ {i64} first; bool second; }} ck_range_pair_t;\n")

    def header(self, prog: "EmittedKernel") -> str:
        """Text before everything else (pragmas, includes)."""
        return ""

    # ---- literals ----------------------------------------------------------
    def int_literal(self, v: int, t) -> str:
        """A C literal of Numba integer type ``t`` (wrapped to its width)."""
        v = int(v)
        ct = self.c_type(t)
        bits, signed = _int_bits(t)
        if not signed:
            return f"(({ct}){v % 2 ** 64}{self.uint64_suffix})"
        if v == -2**63:
            text = f"(-9223372036854775807{self.int64_suffix} - 1{self.int64_suffix})"
        else:
            text = f"{v}{self.int64_suffix}"
        return text if bits == 64 else f"(({ct}){text})"

    def float_literal(self, v: float, t) -> str:
        v = float(v)
        ct = self.c_type(t)
        if math.isnan(v):
            return self.nan(ct)
        if math.isinf(v):
            return self.inf(ct) if v > 0 else f"(-{self.inf(ct)})"
        if _float_bits(t) == 32:
            r = str(np.float32(v))
            if "." not in r and "e" not in r:
                r += ".0"
            return f"{r}f" if not r.startswith("-") else f"({r}f)"
        r = repr(v)
        if "." not in r and "e" not in r and "inf" not in r:
            r += ".0"
        return r if not r.startswith("-") else f"({r})"

    def nan(self, ct: str) -> str:
        return f"(({ct})NAN)"

    def inf(self, ct: str) -> str:
        return f"(({ct})INFINITY)"

    # ---- built-ins and the error buffer -------------------------------------
    def math(self, name: str, ct: str) -> str | None:
        """The C function for ``math.<name>`` on ``ct`` values (``name`` is a key
        of the tables below: its generic C name), or None if there is none."""
        return name

    def error_store(self, buf: str, code: str) -> str:
        """Statement keeping the first error code of the launch in ``*buf``."""
        raise NotImplementedError


def _unlit(t):
    from numba.core import types
    return types.unliteral(t)


def _int_bits(t) -> tuple[int, bool]:
    from numba.core import types
    t = _unlit(t)
    if t == types.boolean:
        return 8, False
    return t.bitwidth, t.signed


def _float_bits(t) -> int:
    return _unlit(t).bitwidth


def _is_static(t) -> bool:
    """Compile-time-only values: no C variable."""
    from numba.core import types
    return isinstance(t, (types.Module, types.Function, types.Dispatcher, types.NumberClass,
                          types.BoundFunction, types.Omitted, types.ExceptionClass,
                          types.ExceptionInstance))


def _is_float(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), types.Float)


def _is_int(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), types.Integer)


def _is_bool(t) -> bool:
    from numba.core import types
    return _unlit(t) == types.boolean


def _key(t) -> str:
    """The element type name of a Numba scalar type, for helper names."""
    return dtypes.of_numba(t).name


# ------------------------------------------------------------- math tables --
_MATH_1 = {"sqrt": "sqrt", "exp": "exp", "log10": "log10", "log2": "log2", "log1p": "log1p",
           "expm1": "expm1", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin",
           "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
           "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "fabs": "fabs",
           "erf": "erf", "erfc": "erfc", "gamma": "tgamma", "lgamma": "lgamma",
           "exp2": "exp2", "cbrt": "cbrt"}
_MATH_2 = {"atan2": "atan2", "pow": "pow", "hypot": "hypot", "copysign": "copysign",
           "fmod": "fmod"}
_MATH_TO_INT = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}
_MATH_PRED = {"isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}

_BINOPS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&",
           operator.or_: "|", operator.xor: "^", operator.eq: "==", operator.ne: "!=",
           operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNOPS = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "!"}

def _sanitize(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return s


# ---------------------------------------------------------------- program --
class EmittedKernel:
    """Everything emitted for one kernel in one dialect: device functions,
    helpers, the kernel, and the error table (``errors[code - 1] ==
    (exception class, args)``).  ``source`` is the whole program text."""

    def __init__(self, dialect: Dialect, error_model: str = "python"):
        if error_model not in ("python", "numpy"):
            raise NotSupportedError(f"error_model must be 'python' or 'numpy', not "
                                    f"{error_model!r}")
        self.dialect = dialect
        self.error_model = error_model
        self.source = ""
        self.kernel_text = ""
        self.entry = None
        self.functions: dict = {}       # (py_func, argtypes) -> FunctionEmitter
        self.order: list = []           # emitted function texts, callees first
        self.helpers: dict = {}         # name -> text
        self.errors: list = []          # code-1 -> (exc class, args)
        self._err_index: dict = {}
        self.fp64_user: str | None = None   # first function using float64
        self._stack: list = []

    def error_code(self, exc_class, args) -> int:
        key = (exc_class, tuple(args))
        code = self._err_index.get(key)
        if code is None:
            self.errors.append(key)
            code = self._err_index[key] = len(self.errors)
        return code

    def helper(self, name: str, text: str) -> str:
        if name not in self.helpers:
            self.helpers[name] = text
        return name

    @property
    def checks_zero_division(self) -> bool:
        return self.error_model == "python"

    def function(self, py_func, arg_types, return_type=None, loc=None) -> "FunctionEmitter":
        key = (py_func, tuple(arg_types))
        fe = self.functions.get(key)
        if fe is not None:
            if fe.text is None:
                raise NotSupportedError(
                    f"{self.dialect.title}: recursive call to {py_func.__qualname__} "
                    f"{_where(loc)}: recursion is not supported")
            return fe
        fe = FunctionEmitter(self, py_func, arg_types, return_type)
        self.functions[key] = fe
        fe.emit()
        self.order.append(fe.text)
        return fe

    def text(self) -> str:
        return "\n".join([self.dialect.prelude()] + list(self.helpers.values()) + self.order)

    def __repr__(self) -> str:
        name = self.entry.py_func.__qualname__ if self.entry is not None else "?"
        return (f"<ckernels.jit {self.dialect.title} kernel for {name}: "
                f"{len(self.source)} chars, {len(self.errors)} error codes>")


def _where(loc) -> str:
    if loc is None:
        return "(unknown location)"
    return f"at {loc.filename}:{loc.line}"


# ------------------------------------------------------------ one function --
class FunctionEmitter:
    def __init__(self, prog: EmittedKernel, py_func, arg_types, return_type):
        self.prog = prog
        self.d = prog.dialect
        self.py_func = py_func
        self.arg_types = tuple(arg_types)
        self.tir = typed_ir(py_func, arg_types, return_type, prog.error_model, prog.dialect.title)
        self.ret_type = _unlit(return_type if return_type is not None
                               else self.tir.return_type)
        h = hashlib.sha1(f"{py_func.__module__}.{py_func.__qualname__}|"
                         f"{self.arg_types}|{self.ret_type}".encode()).hexdigest()[:8]
        self.cname = f"ck_fn_{_sanitize(py_func.__name__)}_{h}"
        self.text = None
        self._names: dict = {}
        self._used: set = set()

    # ---- helpers -----------------------------------------------------------
    def fail(self, what: str, loc) -> NotSupportedError:
        return NotSupportedError(
            f"{self.d.title}: {what} is not supported {_where(loc)} "
            f"(in {self.py_func.__qualname__})")

    def var(self, name: str) -> str:
        c = self._names.get(name)
        if c is None:
            base = "v_" + _sanitize(name)
            c = base
            k = 1
            while c in self._used:
                k += 1
                c = f"{base}_{k}"
            self._used.add(c)
            self._names[name] = c
        return c

    def tyof(self, var):
        return self.tir.typemap[var.name]

    def ct(self, t) -> str | None:
        """The dialect's C type of a Numba type (None: not representable)."""
        return self.d.c_type(t)

    def note_fp64(self, t) -> None:
        from numba.core import types
        if _unlit(t) == types.float64 and self.prog.fp64_user is None:
            self.prog.fp64_user = self.py_func.__qualname__

    def ctype_checked(self, t, loc, what="value") -> str:
        ct = self.ct(t)
        if ct is None:
            raise self.fail(f"{what} of type {t}", loc)
        self.note_fp64(t)
        return ct

    def use(self, var, loc) -> str:
        """C expression for a variable used as a value."""
        t = self.tyof(var)
        if self.ct(t) is None:
            if _is_static(t):
                raise self.fail(f"using {t} as a value", loc)
            raise self.fail(f"value of type {t}", loc)
        return self.var(var.name)

    def cast(self, expr: str, from_t, to_t) -> str:
        ft, tt = self.ct(from_t), self.ct(to_t)
        if ft == tt:
            return expr
        if _is_bool(to_t):
            return f"({expr} != 0)"
        return f"(({tt}){expr})"

    def use_as(self, var, to_t, loc) -> str:
        return self.cast(self.use(var, loc), self.tyof(var), to_t)

    def raise_code(self, code: int) -> str:
        rt = self.ct(self.ret_type)
        return f"{{ *ck_err = {code}; return ({rt})0; }}"

    # ---- emission ----------------------------------------------------------
    def emit(self) -> None:
        from numba.core import ir
        fir = self.tir.func_ir
        rt = self.ctype_checked(self.ret_type, fir.loc, "result")
        params = []
        for i, t in enumerate(self.arg_types):
            params.append(f"{self.ctype_checked(t, fir.loc, f'argument {i}')} ck_a{i}")
        params.append(f"{self.d.int32} *ck_err")
        decls: dict = {}
        for name, t in self.tir.typemap.items():
            ct = self.ct(t)
            if ct is None:
                continue
            self.note_fp64(t)
            decls[self.var(name)] = ct
        body = []
        labels = sorted(fir.blocks)
        first = labels[0] if labels else 0
        body.append(f"  goto L{first};")
        for label in labels:
            block = fir.blocks[label]
            body.append(f"L{label}:;")
            for stmt in block.body:
                body.extend("  " + line for line in self.stmt(stmt, ir))
        lines = [f"{self.d.function_prefix} {rt} {self.cname}({', '.join(params)})", "{"]
        for cname, ct in decls.items():
            lines.append(f"  {ct} {cname};")
        lines += body
        lines.append("}")
        self.text = "\n".join(lines) + "\n"

    def stmt(self, stmt, ir) -> list[str]:
        loc = stmt.loc
        if isinstance(stmt, ir.Assign):
            return self.assign(stmt.target, stmt.value, loc, ir)
        if isinstance(stmt, ir.Branch):
            c = self.use_as(stmt.cond, _bool_t(), loc)
            return [f"if ({c}) goto L{stmt.truebr}; else goto L{stmt.falsebr};"]
        if isinstance(stmt, ir.Jump):
            return [f"goto L{stmt.target};"]
        if isinstance(stmt, ir.Return):
            rt = self.ct(self.ret_type)
            return [f"return ({rt}){self.use_as(stmt.value, self.ret_type, loc)};"]
        if isinstance(stmt, ir.Del):
            return []
        if isinstance(stmt, ir.StaticRaise):
            exc = stmt.exc_class
            if exc is None:
                raise self.fail("bare 'raise'", loc)
            args = tuple(stmt.exc_args or ())
            if any(a is None or not isinstance(a, (str, int, float, bool)) for a in args):
                raise self.fail(f"raise {exc.__name__} with non-constant arguments", loc)
            code = self.prog.error_code(exc, args)
            return [self.raise_code(code)]
        if isinstance(stmt, (ir.DynamicRaise, ir.Raise)):
            raise self.fail("raise with non-constant arguments", loc)
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            raise self.fail("item assignment (setitem)", loc)
        if isinstance(stmt, ir.Print):
            raise self.fail("print()", loc)
        if isinstance(stmt, ir.SetAttr):
            raise self.fail("attribute assignment", loc)
        raise self.fail(f"statement {type(stmt).__name__}", loc)

    def assign(self, target, value, loc, ir) -> list[str]:
        tt = self.tyof(target)
        tct = self.ct(tt)
        if tct is None:
            if _is_static(tt) and isinstance(value, (ir.Global, ir.FreeVar, ir.Var)):
                return []
            if _is_static(tt) and isinstance(value, ir.Expr) and value.op == "getattr":
                return []
            from numba.core import types
            if isinstance(tt, (types.ExceptionClass, types.ExceptionInstance)):
                return []   # only used by the StaticRaise that follows
            if isinstance(value, ir.Const) and isinstance(value.value, str):
                return []   # string constants: only usable as exception arguments
            raise self.fail(self._describe(value, tt), loc)
        self.ctype_checked(tt, loc)
        dst = self.var(target.name)
        if isinstance(value, ir.Arg):
            return [f"{dst} = {self.cast(f'ck_a{value.index}', self.arg_types[value.index], tt)};"]
        if isinstance(value, ir.Var):
            return [f"{dst} = {self.use_as(value, tt, loc)};"]
        if isinstance(value, ir.Const):
            return [f"{dst} = {self.const(value.value, tt, loc)};"]
        if isinstance(value, (ir.Global, ir.FreeVar)):
            return [f"{dst} = {self.const(value.value, tt, loc)};"]
        if isinstance(value, ir.Expr):
            return self.expr(dst, tt, value, loc)
        raise self.fail(f"value {type(value).__name__}", loc)

    def _describe(self, value, t) -> str:
        from numba.core import ir, types
        t = _unlit(t)
        if isinstance(value, ir.Expr):
            if value.op == "build_tuple" or isinstance(t, types.BaseTuple):
                return "tuples"
            if value.op == "build_list" or isinstance(t, types.List):
                return "lists"
            if value.op in ("getitem", "static_getitem"):
                return f"indexing (getitem) producing {t}"
            return f"expression '{value.op}' of type {t}"
        if isinstance(t, types.BaseTuple):
            return "tuples"
        if isinstance(t, (types.UnicodeType, types.StringLiteral)):
            return "strings"
        return f"values of type {t}"

    def const(self, v, t, loc) -> str:
        if isinstance(v, (bool, np.bool_)) or _is_bool(t):
            if not isinstance(v, (bool, np.bool_, int, np.integer)):
                raise self.fail(f"constant {v!r}", loc)
            return "true" if v else "false"
        if isinstance(v, (int, np.integer, float, np.floating)):
            if _is_float(t):
                return self.d.float_literal(float(v), t)
            if _is_int(t):
                return self.d.int_literal(int(v), t)
        raise self.fail(f"constant {v!r} ({type(v).__name__})", loc)

    # ---- expressions ---------------------------------------------------------
    def expr(self, dst, tt, e, loc) -> list[str]:
        from numba.core import types
        op = e.op
        if op in ("binop", "inplace_binop"):
            fn = e.fn if op == "binop" else e.immutable_fn
            return self.binop(dst, tt, fn, e, loc)
        if op == "unary":
            sig = self.tir.calltypes[e]
            sym = _UNOPS.get(e.fn)
            if sym is None:
                raise self.fail(f"unary operator {e.fn}", loc)
            a = self.use_as(e.value, sig.args[0], loc)
            r = f"({sym}{a})"
            return [f"{dst} = {self.cast(r, sig.return_type, tt)};"]
        if op == "cast":
            return [f"{dst} = {self.use_as(e.value, tt, loc)};"]
        if op == "call":
            return self.call(dst, tt, e, loc)
        if op == "getiter":
            vt = _unlit(self.tyof(e.value))
            if not isinstance(vt, types.RangeType):
                raise self.fail(f"iteration over {vt} (only range() loops)", loc)
            r = self.use(e.value, loc)
            code = self.prog.error_code(ValueError, ("range() arg 3 must not be zero",))
            return [f"if ({r}.step == 0) {self.raise_code(code)}",
                    f"{dst}.cur = {r}.start; {dst}.step = {r}.step;",
                    f"{dst}.count = {r}.step > 0 ? ({r}.stop > {r}.start ? "
                    f"({r}.stop - {r}.start - 1) / {r}.step + 1 : 0) : "
                    f"({r}.start > {r}.stop ? ({r}.start - {r}.stop - 1) / (-{r}.step) + 1 : 0);"]
        if op == "iternext":
            it = self.use(e.value, loc)
            return [f"{dst}.second = {it}.count > 0; {dst}.first = {it}.cur;",
                    f"if ({dst}.second) {{ {it}.cur += {it}.step; {it}.count -= 1; }}"]
        if op == "pair_first":
            return [f"{dst} = ({self.ct(tt)}){self.use(e.value, loc)}.first;"]
        if op == "pair_second":
            return [f"{dst} = {self.use(e.value, loc)}.second;"]
        if op == "getattr":
            vt = _unlit(self.tyof(e.value))
            if isinstance(vt, types.Module):
                v = getattr(vt.pymod, e.attr, None)
                if isinstance(v, (int, float)):
                    return [f"{dst} = {self.const(v, tt, loc)};"]
            if isinstance(vt, (types.Integer, types.Float)) and e.attr in ("real", "imag"):
                if e.attr == "real":
                    return [f"{dst} = {self.use_as(e.value, tt, loc)};"]
                return [f"{dst} = {self.const(0, tt, loc)};"]
            raise self.fail(f"attribute '.{e.attr}' of {vt}", loc)
        if op in ("build_tuple", "exhaust_iter", "static_getitem", "getitem",
                  "build_list", "build_set", "build_map", "make_function"):
            raise self.fail(self._describe(e, tt), loc)
        raise self.fail(f"expression '{op}'", loc)

    def binop(self, dst, tt, fn, e, loc) -> list[str]:
        sym = _BINOPS.get(fn)
        if sym is None:
            raise self.fail(f"operator {getattr(fn, '__name__', fn)}", loc)
        sig = self.tir.calltypes[e]
        at, bt = _unlit(sig.args[0]), _unlit(sig.args[1])
        rt = _unlit(sig.return_type)
        a = self.use_as(e.lhs, at, loc)
        b = self.use_as(e.rhs, bt, loc)
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
                code = self.prog.error_code(ZeroDivisionError, (msg,))
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
                    code = self.prog.error_code(ZeroDivisionError, (msg,))
                    out.append(f"if ({a} == 0 && {b} < 0) {self.raise_code(code)}")
            r = self.pow_expr(a, b, at, bt, rt, loc)
        elif sym in ("<<", ">>") and _is_int(at):
            r = f"(({self.ct(rt)}){a} {sym} {b})"
        else:
            r = f"({a} {sym} {b})"
        out.append(f"{dst} = {self.cast(r, rt, tt)};")
        return out

    def divmod_helper(self, t, sym: str) -> str:
        """Python's ``//`` or ``%`` on two values of Numba type ``t``."""
        kind = "floordiv" if sym == "//" else "mod"
        ct = self.ct(t)
        name = f"ck_{kind}_{_key(t)}"
        fp = self.d.function_prefix
        if _is_float(t):
            one, half, zero = (self.d.float_literal(v, t) for v in (1.0, 0.5, 0.0))
            fmod, floor, copysign = (self.d.math(f, ct) for f in ("fmod", "floor", "copysign"))
            body = f"""\
{fp} {ct} {name}({ct} vx, {ct} wx)
{{
  {ct} mod = {fmod}(vx, wx);
  {ct} div = (vx - mod) / wx;
  if (mod != {zero}) {{
    if ((wx < {zero}) != (mod < {zero})) {{ mod += wx; div -= {one}; }}
  }} else {{
    mod = {copysign}({zero}, wx);
  }}
  {ct} fd;
  if (div != {zero}) {{
    fd = {floor}(div);
    if (div - fd > {half}) fd += {one};
  }} else {{
    fd = {copysign}({zero}, vx / wx);
  }}
  return {'fd' if kind == 'floordiv' else 'mod'};
}}
"""
        elif not _int_bits(t)[1]:
            op = "/" if kind == "floordiv" else "%"
            body = f"{fp} {ct} {name}({ct} a, {ct} b) {{ return a {op} b; }}\n"
        else:
            lo = self.d.int_literal(-2 ** (_int_bits(t)[0] - 1), t)
            if kind == "floordiv":
                body = f"""\
{fp} {ct} {name}({ct} a, {ct} b)
{{
  if (b == -1) return a == {lo} ? ({ct})0 : ({ct})(-a);
  {ct} q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
  return q;
}}
"""
            else:
                body = f"""\
{fp} {ct} {name}({ct} a, {ct} b)
{{
  if (b == -1) return ({ct})0;
  {ct} r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
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
        body = f"""\
{fp} {rct} {name}({rct} a, {i64} b)
{{
  if (b < 0) {{
    if (a == 0) return {zero_neg};
    if (a == 1) return 1;
{neg_one}    return 0;
  }}
  {rct} r = 1;
  while (b) {{ if (b & 1) r *= a; b >>= 1; if (b) a *= a; }}
  return r;
}}
"""
        self.prog.helper(name, body)
        return f"{name}(({rct}){a}, ({i64}){b})"

    def call(self, dst, tt, e, loc) -> list[str]:
        from numba.core import types
        if e.kws or e.vararg is not None or getattr(e, "varkwarg", None) is not None:
            raise self.fail("keyword or star arguments in calls", loc)
        fnty = self.tyof(e.func)
        sig = self.tir.calltypes[e]
        rt = _unlit(sig.return_type)
        args = e.args
        if isinstance(fnty, types.Dispatcher):
            py = fnty.dispatcher.py_func
            fe = self.prog.function(py, tuple(_unlit(a) for a in sig.args), rt, loc)
            cargs = [self.use_as(v, at, loc) for v, at in zip(args, sig.args)]
            cargs.append("ck_err")
            r = f"{fe.cname}({', '.join(cargs)})"
            return [f"{dst} = {self.cast(r, rt, tt)};",
                    f"if (*ck_err) return ({self.ct(self.ret_type)})0;"]
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
            return [f"{dst} = {self.use_as(args[0], tt, loc)};"]
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

    def math_call(self, dst, tt, name, sig, args, loc) -> list[str]:
        rt = _unlit(sig.return_type)
        ats = [_unlit(a) for a in sig.args]
        ft = rt if _is_float(rt) else (ats[0] if ats and _is_float(ats[0]) else _f64_t())
        fct = self.ctype_checked(ft, loc)
        cargs = [self.cast(self.use(v, loc), self.tyof(v), ft) for v in args]

        def fn(generic):
            f = self.d.math(generic, fct)
            if f is None:
                raise self.fail(f"math.{name}", loc)
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
        elif name in ("degrees", "radians") and len(args) == 1:
            f = self.d.math(name, fct)
            if f is not None:
                r = f"{f}({cargs[0]})"
            else:   # no built-in: the factor, as Numba computes it
                factor = 180.0 / math.pi if name == "degrees" else math.pi / 180.0
                r = f"({cargs[0]} * {self.d.float_literal(factor, ft)})"
        else:
            raise self.fail(f"math.{name} with {len(args)} argument(s)", loc)
        return [f"{dst} = {self.cast(r, ft, tt)};"]


def _bool_t():
    from numba.core import types
    return types.boolean


def _int64_t():
    from numba.core import types
    return types.int64


def _f64_t():
    from numba.core import types
    return types.float64


# ------------------------------------------------------------------- kernel --
KERNEL_NAME = "ck_kernel"


def emit_kernel(py_func, arg_types, return_type, dialect: Dialect,
                error_model: str = "python") -> EmittedKernel:
    """The program for one kernel over ``arg_types`` -> ``return_type`` (Numba
    types) in ``dialect``, with the kernel of :func:`kernel_wrapper` around
    its entry function (every operand an array of the signature's types;
    ``EmittedKernel.entry`` and :func:`kernel_wrapper` make others)."""
    d = dialect
    prog = EmittedKernel(d, error_model)
    ret = _unlit(return_type)
    fe = prog.function(py_func, tuple(_unlit(a) for a in arg_types), ret)
    prog.entry = fe
    prog.kernel_text = entry_wrapper(prog, [(dtypes.of_numba(_unlit(t)), False)
                                            for t in arg_types],
                                     dtypes.of_numba(ret))
    prog.source = d.header(prog) + prog.text() + "\n" + prog.kernel_text
    return prog


def entry_wrapper(prog: EmittedKernel, inputs, out) -> str:
    """:func:`kernel_wrapper` around ``prog.entry`` (a jitted function)."""
    fe = prog.entry
    params = [(prog.dialect.c_type(t), _is_bool(t)) for t in fe.arg_types]
    return kernel_wrapper(prog.dialect, fe.cname, params,
                          (prog.dialect.c_type(fe.ret_type), _is_bool(fe.ret_type)),
                          inputs, out)


def kernel_wrapper(d: Dialect, entry: str, params, ret, inputs, out) -> str:
    """The kernel calling ``entry`` once per element.

    ``entry`` is a device function ``R entry(P0 x0, ..., int *err)``;
    ``params`` its parameters' ``(C type, is_bool)``, ``ret`` its result's.
    ``inputs`` says what each operand is: ``(DType row, by_value)`` -- the
    element type in memory (converted to the parameter's type as it is read:
    a safe cast) and whether it is passed by value instead of as an array.
    ``out`` is the element type written (the result converted to it).

    Kernel arguments, in order: the output buffer, its byte offset and byte
    stride; per input, the same triple for an array operand (stride 0:
    broadcast) or its value (one argument; bool as uchar, since kernels may not
    take bool); the N-d metadata buffer (int64: shape[ndim], then byte
    strides[ndim] of the output and of each *array* input), ``ndim`` (<= 1: the
    strided fast path, no metadata reads), the element count ``n`` and the
    error buffer (one int32: the first error code)."""
    i64, u64, u8, i32 = d.int64, d.uint64, d.uint8, d.int32
    args = [f"{d.pointer(u8)}ck_out", f"{u64} ck_out_off", f"{i64} ck_out_stride"]
    arrays = []
    for k, (dt, by_value) in enumerate(inputs):
        if by_value:
            ct = u8 if dt.kind == "b" else dt.c_type(d.name)
            args.append(f"{ct} ck_in{k}_val")
        else:
            arrays.append(k)
            args += [f"{d.pointer(u8, True)}ck_in{k}", f"{u64} ck_in{k}_off",
                     f"{i64} ck_in{k}_stride"]
    args += [f"{d.pointer(i64, True)}ck_meta", f"{i32} ck_ndim", f"{u64} ck_n",
             f"{d.pointer(i32)}ck_errbuf"]
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(args)})", "{",
             f"  {u64} i = {d.thread_index};",
             "  if (i >= ck_n) return;",
             f"  {u64} o_out = ck_out_off;"]
    lines += [f"  {u64} o_in{k} = ck_in{k}_off;" for k in arrays]
    lines += ["  if (ck_ndim <= 1) {",
              "    o_out += i * ck_out_stride;"]
    lines += [f"    o_in{k} += i * ck_in{k}_stride;" for k in arrays]
    lines += ["  } else {",
              f"    {u64} rest = i;",
              "    for (int d = ck_ndim - 1; d >= 0; d--) {",
              f"      {u64} idx = rest % ({u64})ck_meta[d];",
              f"      rest /= ({u64})ck_meta[d];",
              "      o_out += idx * ck_meta[ck_ndim + d];"]
    lines += [f"      o_in{k} += idx * ck_meta[{j + 2} * ck_ndim + d];"
              for j, k in enumerate(arrays)]
    lines += ["    }", "  }"]
    cargs = []
    for k, ((dt, by_value), (pct, pbool)) in enumerate(zip(inputs, params)):
        if by_value:
            v = f"ck_in{k}_val"
        else:
            st = u8 if dt.kind == "b" else dt.c_type(d.name)
            v = f"*({d.pointer(st, True)})(ck_in{k} + o_in{k})"
        if dt.kind == "b" or pbool:
            v = f"({v} != 0)"
        lines.append(f"  {pct} x{k} = ({pct}){v};")
        cargs.append(f"x{k}")
    rct, rbool = ret
    lines += [f"  {i32} err = 0;",
              f"  {rct} r = {entry}({', '.join(cargs + ['&err'])});",
              f"  if (err) {{ {d.error_store('ck_errbuf', 'err')} return; }}"]
    if out.kind == "b":
        lines.append(f"  *({d.pointer(u8)})(ck_out + o_out) = r ? 1 : 0;")
    else:
        oct_ = out.c_type(d.name)
        r = "r" if oct_ == rct else f"({oct_})r"
        lines.append(f"  *({d.pointer(oct_)})(ck_out + o_out) = {r};")
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = ["Dialect", "EmittedKernel", "typed_ir", "TypedIR", "emit_kernel", "entry_wrapper",
           "kernel_wrapper", "KERNEL_NAME"]
