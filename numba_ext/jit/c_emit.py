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
  ``math.*`` and NumPy's scalar ufuncs (``np.sqrt``, ...) -> the dialect's
  built-ins, ``operator.*`` functions, ``abs``/``min``/``max``/``int``/``float``/
  ``bool``/``round``, ``math.gcd``, integer ``//``, ``%`` and ``**`` and float
  ``//``/``%`` with Python semantics through helper functions; calls to other
  ``@ckernels.jit`` (or ``numba.njit``) functions become device functions
  emitted before their caller;
* tuples of numbers (building, unpacking ``a, b = b, a``, indexing with a
  constant or, for one element type, a run-time index) live in one C
  variable per element;
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
one-line :class:`ckernels.errors.NotSupportedError` that names the construct
and the user's ``file:line``: constructs no device supports (dicts, sets,
lists, try/except, ``with``, generators, inner functions) are refused before
type inference, and Numba's typing errors are condensed to their reason.
``docs/device-code.md`` lists what device code supports.
"""

from __future__ import annotations

import hashlib
import math
import operator
import re

import numpy as np

from .. import dtypes
from ..errors import NotSupportedError
from . import structs as _structs

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
    class CKRefuseConstructs(FunctionPass):
        """Stops before type inference at the first construct no device
        supports (dict, set, try/except, ...): its one-line error names the
        construct and the user's line, where Numba's typing error would be
        pages about its own implementation."""
        _name = "ck_refuse_constructs"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            found = _refused_construct(state.func_ir)
            if found is not None:
                raise _EarlyPipelineCompletion(found)
            return False

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
            pm.add_pass(CKRefuseConstructs, "refuse unsupported constructs")
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


#: constructs refused before typing: IR expression op -> what the message calls it
_REFUSED_EXPRS = {"build_map": "dicts", "build_set": "sets", "build_list": "lists",
                  "make_function": "inner functions and lambdas", "yield": "generators (yield)",
                  "list_comprehension": "list comprehensions"}


def _refused_construct(func_ir):
    """``(what, loc)`` of the first statement using a construct no device
    target supports, or None."""
    from numba.core import ir
    for label in sorted(func_ir.blocks):
        for stmt in func_ir.blocks[label].body:
            if isinstance(stmt, ir.EnterWith):
                return ("'with' blocks", stmt.loc)
            if not isinstance(stmt, ir.Assign):
                continue
            v = stmt.value
            if isinstance(v, (ir.Global, ir.FreeVar)):
                mod = getattr(v.value, "__module__", None) or ""
                if mod.startswith("numba.core.unsafe.eh") or \
                        getattr(v.value, "__name__", "") == "mark_try_block":
                    return ("try/except blocks", stmt.loc)
            elif isinstance(v, ir.Expr) and v.op in _REFUSED_EXPRS:
                return (_REFUSED_EXPRS[v.op], stmt.loc)
    return None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _typing_failure(exc, py_func) -> tuple[str, str]:
    """``(reason, where)`` of a Numba typing error, each one line: the first
    line of Numba's message that says what failed, and the user's
    ``file:line`` (from the error's location, else the deepest line of
    ``py_func``'s file the message mentions, else its ``def`` line)."""
    text = _ANSI.sub("", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    reason = ""
    for i, ln in enumerate(lines):
        if ln.startswith(("Failed in ", "During: ", "File ")) or ln.startswith("- Resolution"):
            continue
        reason = ln.rstrip(":")
        if ln.startswith("No implementation of function") and i + 1 < len(lines) and \
                lines[i + 1].startswith(">>>"):
            reason = f"no implementation of {lines[i + 1][3:].strip()}"
        break
    reason = re.sub(r"\s+", " ", reason)[:240] or type(exc).__name__
    code = py_func.__code__
    fname = code.co_filename
    line = None
    loc = getattr(exc, "loc", None)
    if loc is not None and getattr(loc, "filename", None) == fname and loc.line:
        line = loc.line
    else:
        for m in re.finditer(r'File "([^"]+)", line (\d+)', text):
            if m.group(1) == fname:
                line = int(m.group(2))
    return reason, f"{fname}:{line if line is not None else code.co_firstlineno}"


def typed_ir(py_func, arg_types, return_type=None, error_model="python",
             where="device") -> TypedIR:
    """Run the typing-only pipeline on ``py_func`` for Numba ``arg_types``.

    Constructs no device supports are refused before typing, and typing
    errors are condensed: either way a one-line :class:`NotSupportedError`
    naming the construct (or Numba's reason) and the user's ``file:line``."""
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
        res = compiler.compile_extra(typingctx, targetctx, py_func, tuple(arg_types),
                                     return_type, flags, {},
                                     pipeline_class=_pipeline_class())
    except KeyError as exc:
        from numba.core import types
        if not any(isinstance(a, types.Record) for a in arg_types):
            raise
        # Numba's Record typing looks an unknown field up unchecked
        raise NotSupportedError(f"{where}: cannot type {py_func.__qualname__}"
                                f"({', '.join(map(str, arg_types))}): no struct field {exc}"
                                ) from None
    except NumbaError as exc:
        reason, at = _typing_failure(exc, py_func)
        raise NotSupportedError(f"{where}: cannot type {py_func.__qualname__}"
                                f"({', '.join(map(str, arg_types))}): {reason} at {at}"
                                ) from None
    if isinstance(res, tuple):   # refused before typing
        what, loc = res
        raise NotSupportedError(f"{where}: {what} are not supported {_where(loc)} "
                                f"(in {py_func.__qualname__})")
    return res


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
        if isinstance(t, types.Record):     # a struct: the typedef of ckernels.c_api
            return _structs.of_record(t).c_name
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
           "fmod": "fmod", "nextafter": "nextafter"}
_MATH_TO_INT = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}
_MATH_PRED = {"isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}

_BINOPS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&",
           operator.or_: "|", operator.xor: "^", operator.eq: "==", operator.ne: "!=",
           operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNOPS = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "!"}
#: in-place operator functions on scalars are their plain operators
_INPLACE = {operator.iadd: operator.add, operator.isub: operator.sub,
            operator.imul: operator.mul, operator.itruediv: operator.truediv,
            operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
            operator.ipow: operator.pow, operator.ilshift: operator.lshift,
            operator.irshift: operator.rshift, operator.iand: operator.and_,
            operator.ior: operator.or_, operator.ixor: operator.xor}
#: NumPy ufuncs on scalars -> the math table names they compute (the same
#: functions as math.*, except that the to-integer ones stay floats)
_NP_UFUNCS = {"sqrt": "sqrt", "exp": "exp", "log": "log", "log10": "log10", "log2": "log2",
              "log1p": "log1p", "expm1": "expm1", "exp2": "exp2", "cbrt": "cbrt",
              "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
              "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
              "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fabs": "fabs",
              "absolute": "abs", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
              "rint": "rint", "arctan2": "atan2", "hypot": "hypot", "copysign": "copysign",
              "fmod": "fmod", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
              "degrees": "degrees", "radians": "radians", "rad2deg": "degrees",
              "deg2rad": "radians", "ldexp": "ldexp", "nextafter": "nextafter"}

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
        #: struct types used (typedef name -> ckernels Type), declared by the
        #: generated C API of the target (ckernels.c_api) before everything
        self.structs: dict = {}

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

    def use_struct(self, rec) -> str:
        """Note a struct type (a Numba Record) and those nested in it; its
        typedef name."""
        from numba.core import types
        st = _structs.of_record(rec)
        if st.c_name not in self.structs:
            self.structs[st.c_name] = st.type
            for _, ft in rec.members:
                while isinstance(ft, types.NestedArray):
                    ft = ft.dtype
                if isinstance(ft, types.Record):
                    self.use_struct(ft)
        return st.c_name

    def struct_header(self) -> str:
        """The typedefs (and accessors) of the struct types used, from the one
        generator of struct layouts in C (:func:`ckernels.c_api`)."""
        if not self.structs:
            return ""
        from ..capi import c_api
        try:
            return str(c_api(sorted(self.structs.items()), self.dialect.name)) + "\n"
        except NotSupportedError as exc:
            raise NotSupportedError(f"{self.dialect.title}: {exc}") from None

    def text(self) -> str:
        return "\n".join([self.struct_header() + self.dialect.prelude()] +
                         list(self.helpers.values()) + self.order)

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
        from numba.core import types
        # a struct result is built from what the function returns (a tuple):
        # typed without the result type, written member by member
        typing_ret = None if isinstance(return_type, types.Record) else return_type
        self.tir = typed_ir(py_func, arg_types, typing_ret, prog.error_model, prog.dialect.title)
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
        """The dialect's C type of a Numba type (None: not representable).  A
        struct (Numba Record) is its typedef; a fixed dim inside a struct
        (NestedArray) a pointer to its first element."""
        from numba.core import types
        t = _unlit(t)
        if isinstance(t, types.Record):
            return self.prog.use_struct(t)
        if isinstance(t, types.NestedArray):
            el = self.field_ct(t.dtype)
            return None if el is None else f"{el} *"
        if isinstance(t, (types.Array, types.NoneType)):   # core dims: device_arrays
            from . import device_arrays
            return device_arrays.c_type(self, t)
        return self.d.c_type(t)

    def field_ct(self, t) -> str | None:
        """The C type of a value stored in a struct (bool as its byte)."""
        from numba.core import types
        if isinstance(t, types.Record):
            return self.prog.use_struct(t)
        if _is_bool(t):
            return self.d.uint8
        return self.d.c_type(t)

    @property
    def struct_ret(self):
        """The struct type (Record) of the result, or None."""
        from numba.core import types
        return self.ret_type if isinstance(self.ret_type, types.Record) else None

    def zero_return(self) -> str:
        """``return`` of a placeholder result (after an error)."""
        if self.struct_ret is not None:
            return f"return {self.var('$ck_zero')};"
        return f"return ({self.ct(self.ret_type)})0;"

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
        return f"{{ *ck_err = {code}; {self.zero_return()} }}"

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
                elems = self.tuple_elems(t)
                for k, et in enumerate(elems or ()):   # a tuple: one C variable per element
                    self.note_fp64(et)
                    decls[f"{self.var(name)}_{k}"] = self.ct(et)
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
        if self.struct_ret is not None:
            z = self.var("$ck_zero")
            lines.append(f"  {rt} {z} = {{0}};   /* returned after a raise */")
            lines.append(f"  (void){z};")
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
            if self.struct_ret is not None:
                return self.struct_return(stmt.value, loc)
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
            from . import device_arrays     # into an array of core dims, else refused
            return device_arrays.setitem(self, stmt, loc)
        if isinstance(stmt, ir.Print):
            raise self.fail("print()", loc)
        if isinstance(stmt, ir.SetAttr):
            raise self.fail("attribute assignment", loc)
        raise self.fail(f"statement {type(stmt).__name__}", loc)

    # ---- tuples: one C variable per element ----------------------------------
    def tuple_elems(self, t):
        """The element types of a flat tuple of scalars the dialect represents,
        or None (not a tuple, or one the device cannot hold)."""
        from numba.core import types
        t = _unlit(t)
        if not isinstance(t, types.BaseTuple) or isinstance(t, types.NamedTuple):
            return None
        elems = [_unlit(e) for e in t.types]
        if not elems or any(self.ct(e) is None for e in elems):
            return None
        return elems

    def tuple_assign(self, target, tt, elems, value, loc, ir) -> list[str]:
        dst = self.var(target.name)
        n = len(elems)
        if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
            vals = value.value
            if not isinstance(vals, tuple) or len(vals) != n:
                raise self.fail(f"constant {vals!r} as {tt}", loc)
            return [f"{dst}_{k} = {self.const(v, et, loc)};"
                    for k, (v, et) in enumerate(zip(vals, elems))]
        src = None
        if isinstance(value, ir.Var):
            src = value
        elif isinstance(value, ir.Expr) and value.op == "exhaust_iter":
            src = value.value
            if value.count != n:
                raise self.fail(f"unpacking {n} values from {self.tyof(src)}", loc)
        elif isinstance(value, ir.Expr) and value.op == "cast":
            src = value.value
        elif isinstance(value, ir.Expr) and value.op == "build_tuple":
            if len(value.items) != n:
                raise self.fail(f"building {tt}", loc)
            return [f"{dst}_{k} = {self.use_as(v, et, loc)};"
                    for k, (v, et) in enumerate(zip(value.items, elems))]
        elif isinstance(value, ir.Expr) and value.op == "call" and \
                getattr(self.tyof(value.func), "typing_key", None) is divmod:
            return self.divmod_call(dst, elems, value, loc)
        if src is not None:
            selems = self.tuple_elems(self.tyof(src))
            if selems is None or len(selems) != n:
                raise self.fail(f"{self.tyof(src)} as {tt}", loc)
            s = self.var(src.name)
            return [f"{dst}_{k} = {self.cast(f'{s}_{k}', se, et)};"
                    for k, (se, et) in enumerate(zip(selems, elems))]
        raise self.fail(self._describe(value, tt), loc)

    def divmod_call(self, dst, elems, e, loc) -> list[str]:
        """``q, r = divmod(a, b)`` with Python semantics (Numba's messages; the
        NumPy error model gives (0, 0) for integers and (a / b, fmod) for floats)."""
        if len(e.args) != 2 or e.kws or len(elems) != 2 or elems[0] != elems[1]:
            raise self.fail("divmod() with these arguments", loc)
        t = elems[0]
        if not (_is_int(t) or _is_float(t)):
            raise self.fail(f"divmod() on {t}", loc)
        a, b = (self.use_as(v, t, loc) for v in e.args)
        fd, md = self.divmod_helper(t, "//"), self.divmod_helper(t, "%")
        out = []
        if self.prog.checks_zero_division:
            msg = "integer divmod by zero" if _is_int(t) else "modulo by zero"
            code = self.prog.error_code(ZeroDivisionError, (msg,))
            out.append(f"if ({b} == 0) {self.raise_code(code)}")
            out += [f"{dst}_0 = {fd}({a}, {b});", f"{dst}_1 = {md}({a}, {b});"]
        elif _is_int(t):
            zero = self.const(0, t, loc)
            out += [f"{dst}_0 = {b} == 0 ? {zero} : {fd}({a}, {b});",
                    f"{dst}_1 = {b} == 0 ? {zero} : {md}({a}, {b});"]
        else:
            fmod = self.d.math("fmod", self.ct(t))
            out += [f"{dst}_0 = {b} == 0 ? {a} / {b} : {fd}({a}, {b});",
                    f"{dst}_1 = {b} == 0 ? {fmod}({a}, {b}) : {md}({a}, {b});"]
        return out

    def tuple_item(self, dst, tt, e, loc) -> list[str] | None:
        """``dst = t[i]`` for a tuple ``t`` (a constant index, or a run-time one
        into a tuple of one element type, with Python's negative indices and
        IndexError); None if ``e`` does not index a tuple."""
        elems = self.tuple_elems(self.tyof(e.value))
        if elems is None:
            return None
        n, t = len(elems), self.var(e.value.name)
        idx = e.index if e.op == "static_getitem" else None
        if isinstance(idx, int):
            if not -n <= idx < n:
                raise self.fail(f"tuple index {idx} out of range", loc)
            k = idx % n
            return [f"{dst} = {self.cast(f'{t}_{k}', elems[k], tt)};"]
        if e.op == "static_getitem" and e.index_var is None:
            raise self.fail(f"tuple indexed by {idx!r}", loc)
        iv = e.index if e.op == "getitem" else e.index_var
        if not _is_int(self.tyof(iv)) or len({self.ct(x) for x in elems}) != 1:
            raise self.fail(f"indexing {self.tyof(e.value)} by {self.tyof(iv)}", loc)
        i64 = _int64_t()
        i = self.use_as(iv, i64, loc)
        code = self.prog.error_code(IndexError, ("tuple index out of range",))
        out = [f"if ({i} < -{n} || {i} >= {n}) {self.raise_code(code)}"]
        chain = self.cast(f"{t}_{n - 1}", elems[n - 1], tt)
        for k in range(n - 2, -1, -1):
            chain = (f"(({i} == {k} || {i} == {k - n}) ? "
                     f"{self.cast(f'{t}_{k}', elems[k], tt)} : {chain})")
        out.append(f"{dst} = {chain};")
        return out

    def assign(self, target, value, loc, ir) -> list[str]:
        tt = self.tyof(target)
        if isinstance(value, ir.Expr):
            from . import device_arrays     # len, indexing, .shape of core-dim arrays
            got = device_arrays.array_expr(self, target, tt, value, loc)
            if got is not None:
                return got
        tct = self.ct(tt)
        if tct is None:
            elems = self.tuple_elems(tt)
            if elems is not None:
                return self.tuple_assign(target, tt, elems, value, loc, ir)
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
                return f"tuples of other than numbers ({t})"
            if value.op == "build_list" or isinstance(t, types.List):
                return "lists"
            if value.op in ("getitem", "static_getitem"):
                return f"indexing (getitem) producing {t}"
            return f"expression '{value.op}' of type {t}"
        if isinstance(t, types.BaseTuple):
            return f"tuples of other than numbers ({t})"
        if isinstance(t, (types.UnicodeType, types.StringLiteral)):
            return "strings"
        return f"values of type {t}"

    def const(self, v, t, loc) -> str:
        if v is None and _unlit(t) == _none_t():
            return "0"      # the result of a function writing its output parameter
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
            return self.unary(dst, tt, e.fn, e.value, self.tir.calltypes[e], loc)
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
            if isinstance(vt, types.Record):
                return self.field_read(dst, tt, e.value, vt, e.attr, loc)
            if isinstance(vt, (types.Integer, types.Float)) and e.attr in ("real", "imag"):
                if e.attr == "real":
                    return [f"{dst} = {self.use_as(e.value, tt, loc)};"]
                return [f"{dst} = {self.const(0, tt, loc)};"]
            raise self.fail(f"attribute '.{e.attr}' of {vt}", loc)
        if op in ("static_getitem", "getitem"):
            got = self.tuple_item(dst, tt, e, loc)
            if got is not None:
                return got
            if isinstance(_unlit(self.tyof(e.value)), types.NestedArray):
                return self.nested_item(dst, tt, e, loc)
        if op in ("build_tuple", "exhaust_iter", "static_getitem", "getitem",
                  "build_list", "build_set", "build_map", "make_function"):
            raise self.fail(self._describe(e, tt), loc)
        raise self.fail(f"expression '{op}'", loc)

    # ---- structs: C members of the generated typedefs ---------------------
    def field_read(self, dst, tt, var, rec, attr, loc) -> list[str]:
        """``dst = p.attr``: a member of the struct value (a fixed dim: a
        pointer to its first element, in the function's copy of the struct)."""
        from numba.core import types
        ft = rec.typeof(attr)
        src = f"{self.use(var, loc)}.{attr}"
        if isinstance(ft, types.NestedArray):
            return [f"{dst} = ({self.ct(ft)})({src});"]
        if _is_bool(ft):
            return [f"{dst} = ({src} != 0);"]
        if self.ct(ft) is None:
            raise self.fail(f"struct field '{attr}' of type {ft}", loc)
        return [f"{dst} = {self.cast(src, ft, tt)};"]

    def nested_item(self, dst, tt, e, loc) -> list[str]:
        """``dst = p.v[i]`` / ``p.m[i, j]`` on a fixed dim inside a struct (every
        index an integer: Python's negative indices, IndexError out of range)."""
        from numba.core import types
        at = _unlit(self.tyof(e.value))
        idx = e.index if e.op == "static_getitem" else None
        const = isinstance(idx, int) or (isinstance(idx, tuple) and
                                         all(isinstance(k, int) for k in idx))
        if e.op == "getitem":
            iv = e.index
        elif not const:
            iv = e.index_var
        else:
            iv = None
        nd = len(at.shape)
        if iv is not None:
            it = _unlit(self.tyof(iv))
            if isinstance(it, types.BaseTuple):
                elems = self.tuple_elems(it)
                if elems is None or len(elems) != nd or not all(map(_is_int, elems)):
                    raise self.fail(f"indexing {at} by {it}", loc)
                parts = [(f"{self.var(iv.name)}_{k}", et) for k, et in enumerate(elems)]
            elif _is_int(it):
                parts = [(self.var(iv.name), it)]
            else:
                raise self.fail(f"indexing {at} by {it}", loc)
        elif isinstance(idx, int):
            parts = [(str(idx), _int64_t())]
        elif isinstance(idx, tuple) and all(isinstance(k, int) for k in idx):
            parts = [(str(k), _int64_t()) for k in idx]
        else:
            raise self.fail(f"indexing {at} by {idx!r}", loc)
        if len(parts) != nd:
            raise self.fail(f"indexing the {nd}-d field {at} with {len(parts)} indices "
                            "(sub-arrays of fields)", loc)
        i64 = self.d.int64
        code = self.prog.error_code(IndexError, ("index out of bounds",))
        out, flat = [], []
        for k, ((ix, ixt), n) in enumerate(zip(parts, at.shape)):
            c = self.cast(ix, ixt, _int64_t())
            out.append(f"if ({c} < -{n} || {c} >= {n}) {self.raise_code(code)}")
            flat.append(f"(({c}) < 0 ? ({c}) + {n} : ({c}))")
        lin = flat[0]
        for k in range(1, nd):
            lin = f"({lin}) * {at.shape[k]} + {flat[k]}"
        ptr = self.use(e.value, loc)
        el = at.dtype
        v = f"{ptr}[({i64})({lin})]"
        if _is_bool(el):
            out.append(f"{dst} = ({v} != 0);")
        elif isinstance(el, types.Record):
            out.append(f"{dst} = {v};")
        else:
            out.append(f"{dst} = {self.cast(v, el, tt)};")
        return out

    def struct_return(self, value, loc) -> list[str]:
        """``return`` of a struct result: a struct of the same type, or a tuple
        of scalars with one item per field (written member by member)."""
        from numba.core import types
        rec = self.struct_ret
        vt = _unlit(self.tyof(value))
        rt = self.ct(rec)
        if isinstance(vt, types.Record):
            if vt != rec:
                raise self.fail(f"returning a struct of type {vt} for {rec}", loc)
            return [f"return {self.use(value, loc)};"]
        names = list(rec.fields)
        if isinstance(vt, types.BaseNamedTuple):
            have = list(vt.fields)
            if sorted(have) != sorted(names):
                raise self.fail(f"returning a namedtuple with fields ({', '.join(have)}) for a "
                                f"struct with fields ({', '.join(names)})", loc)
            raise self.fail("namedtuple results (return a tuple in field order)", loc)
        elems = self.tuple_elems(vt)
        if elems is None:
            raise self.fail(f"returning {vt} for a struct (a tuple of numbers, one per field; "
                            "nested structs and fixed dims are CPU-only results)", loc)
        if len(elems) != len(names):
            raise self.fail(f"returning a tuple of {len(elems)} items for a struct with "
                            f"{len(names)} fields", loc)
        r = self.var("$ck_ret")
        out = [f"{{ {rt} {r};"]
        src = self.var(value.name)
        for k, (n, et) in enumerate(zip(names, elems)):
            ft = rec.typeof(n)
            if isinstance(ft, (types.Record, types.NestedArray)):
                raise self.fail(f"writing the field '{n}' ({ft}) of a struct result "
                                "(nested structs and fixed dims are CPU-only results)", loc)
            if _is_bool(ft):
                out.append(f"  {r}.{n} = {src}_{k} ? 1 : 0;")
            else:
                out.append(f"  {r}.{n} = {self.cast(f'{src}_{k}', et, ft)};")
        out.append(f"  return {r}; }}")
        return out

    def unary(self, dst, tt, fn, value, sig, loc) -> list[str]:
        sym = _UNOPS.get(fn)
        if sym is None:
            raise self.fail(f"unary operator {getattr(fn, '__name__', fn)}", loc)
        at = _unlit(sig.args[0])
        if sym == "~" and _is_bool(at) and _is_bool(sig.return_type):
            sym = "!"      # Numba's bool invert is logical not (not Python's ~True == -2)
        a = self.use_as(value, at, loc)
        r = f"({sym}{a})"
        return [f"{dst} = {self.cast(r, sig.return_type, tt)};"]

    def binop(self, dst, tt, fn, e, loc, args=None, sig=None) -> list[str]:
        """``dst = lhs <fn> rhs`` for a binop expression ``e``, or for a call of
        an ``operator`` function (``args``: its two variables, ``sig``)."""
        sym = _BINOPS.get(fn)
        if sym is None:
            raise self.fail(f"operator {getattr(fn, '__name__', fn)}", loc)
        sig = sig if sig is not None else self.tir.calltypes[e]
        lhs, rhs = args if args is not None else (e.lhs, e.rhs)
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


def _none_t():
    from numba.core import types
    return types.none


def _bool_t():
    from numba.core import types
    return types.boolean


def _int32_t():
    from numba.core import types
    return types.int32


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
    prog.kernel_text = entry_wrapper(prog, [(_element_of(t), False) for t in arg_types],
                                     _element_of(ret))
    prog.source = d.header(prog) + prog.text() + "\n" + prog.kernel_text
    return prog


def _element_of(t):
    """The element type (a ``dtypes`` row or a struct) of a Numba type."""
    from numba.core import types
    t = _unlit(t)
    if isinstance(t, types.Record):
        return _structs.of_record(t)
    return dtypes.of_numba(t)


def entry_wrapper(prog: EmittedKernel, inputs, out) -> str:
    """:func:`kernel_wrapper` around ``prog.entry`` (a jitted function)."""
    fe = prog.entry
    params = [(prog.dialect.c_type(t), _is_bool(t)) for t in fe.arg_types]
    return kernel_wrapper(prog.dialect, fe.cname, params,
                          (prog.dialect.c_type(fe.ret_type), _is_bool(fe.ret_type)),
                          inputs, out)


def kernel_parameters(d: Dialect, inputs) -> tuple[list[str], list[int]]:
    """The kernel's parameters for these ``inputs`` (see :func:`kernel_wrapper`)
    and the indices of the array inputs."""
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
    return args, arrays


def element_offsets(d: Dialect, arrays) -> list[str]:
    """The kernel's first lines: the work item's index ``i`` (returning past
    ``ck_n``) and the byte offsets ``o_out`` / ``o_in<k>`` of its element in
    the output and in each array input ``k`` (the 1-d strided path, or the
    N-d metadata)."""
    u64 = d.uint64
    lines = [f"  {u64} i = {d.thread_index};",
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
    return lines


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
    u8, i32 = d.uint8, d.int32
    args, arrays = kernel_parameters(d, inputs)
    lines = [f"{d.kernel_prefix} {KERNEL_NAME}({', '.join(args)})", "{"]
    lines += element_offsets(d, arrays)
    cargs = []
    for k, ((dt, by_value), (pct, pbool)) in enumerate(zip(inputs, params)):
        if by_value:
            v = f"ck_in{k}_val"
        else:
            st = u8 if dt.kind == "b" else dt.c_type(d.name)
            v = f"*({d.pointer(st, True)})(ck_in{k} + o_in{k})"
        if dt.kind == "b" or pbool:
            v = f"({v} != 0)"
        elif dt.kind == "V":    # a struct: copied, never converted
            if by_value:
                raise NotSupportedError(f"{d.title}: a struct scalar argument (pass a device "
                                        "array of structs)")
            v = f"({v})"
        else:
            v = f"({pct}){v}"
        lines.append(f"  {pct} x{k} = {v};")
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
           "kernel_wrapper", "kernel_parameters", "element_offsets", "KERNEL_NAME"]
