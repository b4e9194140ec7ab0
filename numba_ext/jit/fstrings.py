"""f-strings in ``@ckernels.jit`` functions: Python's format specs and
conversions (``f"{name}-{i:05d}"``, ``{x:.3f}``, ``{s:>10}``, ``{x!r}``).

Numba turns ``{x}`` into ``str(x)`` and refuses ``{x:spec}`` and ``{x!r}``.
The pipeline of jitted functions (:func:`ckernels.jit.cpu_codegen.pipeline_class`)
translates bytecode with :class:`CkTranslateByteCode` instead, which turns
every f-string field into a call ``format_value(value, spec, conversion)``
(the spec and the conversion are constants of the code), and checks every
such call once the function is typed (:class:`CheckFormatSpecs`): a spec that
is not a constant (``f"{x:{w}}"``), a spec Python refuses for that type of
value, or a spec on a value that is not an int, bool, float or str is a
compile-time error naming the spec, the file and the line -- never a silent
difference from Python.

``format_value`` formats as Python's ``format(value, spec)`` does
(``ckernel/text.h``: integers and bools exactly, floats correctly rounded as
CPython, text by code points; float32 values as NumPy's ``float32`` behaves
in ``format``).  In a returned concatenation the one-pass string builder
(:mod:`ckernels.jit.string_builder`) writes the formatted text straight into
the arena; elsewhere (a formatted value used twice, passed on, compared) the
call makes a Numba ``str`` (:func:`ckernels.jit.string_elements.emit_format_str`).

``str(x)`` with one argument is :func:`str_value` in jitted functions: the
same text, typed and compiled at a fraction of the cost of Numba's
``str`` of an integer (and exact at INT64_MIN, where Numba's fails).

Conversions: ``!s`` is ``str()``; ``!r`` and ``!a`` of an int, bool or float
are its ``str()`` (Python's repr of those types is their str); ``!r`` / ``!a``
of a str (quoting and escaping) are refused at compile time.
"""

from __future__ import annotations

from numba.core import errors, ir, types
from numba.extending import intrinsic, overload, overload_method

from .. import errors as _errors
from . import string_elements as _se
from .time_numba import is_time_type, time_text


def format_value(value, spec, conversion):
    """What an f-string field ``{value!conversion:spec}`` is: Python's
    ``format`` of the converted value (jitted code calls the compiled
    version)."""
    if conversion:
        value = {"s": str, "r": repr, "a": ascii}[conversion](value)
    return format(value, spec)


# --------------------------------------------------------------- typing --
def _literal(t):
    return t.literal_value if isinstance(t, (types.StringLiteral, types.Literal)) else None


@intrinsic
def _formatted(typingctx, value, spec):
    """``format(value, spec)`` (``spec`` a string literal, checked by
    :class:`CheckFormatSpecs`) as a new Numba ``str``."""
    kind = _se.value_kind(value)
    if kind is None or not isinstance(spec, types.StringLiteral):
        return None
    text = spec.literal_value

    def codegen(context, builder, sig, args):
        # Numba compiles this while typing the calling function, before
        # CheckFormatSpecs refuses a spec Python refuses (with its line): such
        # a spec never reaches a compiled function, so it stands for none here
        try:
            spec_bytes = None if text == "" else _se.parse_spec(text, kind)
        except (ValueError, KeyError):
            spec_bytes = None

        def on_error(b, status):
            # the C function's message is on the thread; a Numba exception
            # needs a static one: the only failures of each kind of value
            ovf = b.icmp_signed("==", status, _const32(int(_errors.CKOverflowError.status)))
            with b.if_then(ovf):
                context.call_conv.return_user_exc(b, OverflowError,
                                                  ("%c arg not in range(0x110000)",))
            val = b.icmp_signed("==", status, _const32(int(_errors.CKValueError.status)))
            with b.if_then(val):
                context.call_conv.return_user_exc(
                    b, ValueError, ("a surrogate code point cannot be encoded to UTF-8",))
            context.call_conv.return_user_exc(b, MemoryError,
                                              ("no memory to format a value",))

        return _se.emit_format_str(context, builder, sig.args[0], args[0], spec_bytes,
                                   on_error)
    # a string literal's value has no data model of its own: the call casts
    # it to a Numba str first
    arg = types.unicode_type if isinstance(value, types.StringLiteral) else value
    return types.unicode_type(arg, spec), codegen


def _const32(v):
    from llvmlite import ir as llir
    return llir.Constant(llir.IntType(32), v)


@overload(format_value, prefer_literal=True)
def _ov_format_value(value, spec, conversion):
    text, conv = _literal(spec), _literal(conversion)
    if not isinstance(text, str) or not isinstance(conv, str):
        # refused with its line by CheckFormatSpecs; typing goes on
        return lambda value, spec, conversion: ""
    kind = _se.value_kind(value)
    if conv:
        if kind == "str":
            if conv != "s":
                return lambda value, spec, conversion: ""     # refused (quoting)
            return lambda value, spec, conversion: format_value(value, spec, "")
        if kind is None and conv != "s":
            return lambda value, spec, conversion: ""         # refused
        if kind is None:                                      # !s of anything else
            if text == "":
                return lambda value, spec, conversion: str(value)
            return lambda value, spec, conversion: format_value(str(value), spec, "")
        # Python's repr of an int, bool or float is its str
        if text == "":
            return lambda value, spec, conversion: _formatted(value, "")
        return lambda value, spec, conversion: format_value(_formatted(value, ""), spec, "")
    if kind is None:
        if text == "" and is_time_type(value):    # ISO 8601 (ckernels.jit.time_numba)
            return lambda value, spec, conversion: time_text(value)
        if text == "":
            return lambda value, spec, conversion: str(value)
        return lambda value, spec, conversion: ""             # refused
    if kind == "str" and text == "":
        return lambda value, spec, conversion: value
    return lambda value, spec, conversion: _formatted(value, spec)


def str_value(value):
    """``str(value)`` in jitted functions (their calls of ``str`` with one
    argument are calls of this): Python's text of an int, bool or float by
    libckernel (cheap to type, unlike Numba's ``str`` of an integer, and
    exact for INT64_MIN, where Numba's fails), a str itself, Numba's
    ``str()`` of anything else."""
    return str(value)


@overload(str_value)
def _ov_str_value(value):
    kind = _se.value_kind(value)
    if kind in ("int", "bool", "float"):
        return lambda value: _formatted(value, "")
    if kind == "str":
        return lambda value: value
    if is_time_type(value):      # ISO 8601 (ckernels.jit.time_numba)
        return lambda value: time_text(value)
    return lambda value: str(value)


def _calls_of_str_as_str_value(func_ir) -> None:
    """Make every ``str(x)`` call of ``func_ir`` a :func:`str_value` call
    (where the global ``str`` is only ever called, with one argument)."""
    uses: dict = {}
    for blk in func_ir.blocks.values():
        for st in blk.body:
            for v in st.list_vars():
                uses.setdefault(v.name, []).append(st)
    for blk in func_ir.blocks.values():
        for st in blk.body:
            if not (isinstance(st, ir.Assign) and isinstance(st.value, ir.Global)
                    and st.value.value is str):
                continue
            name = st.target.name
            ok = all(
                u is st or (isinstance(u, ir.Assign) and isinstance(u.value, ir.Expr)
                            and u.value.op == "call" and u.value.func.name == name
                            and len(u.value.args) == 1 and not u.value.kws
                            and u.value.vararg is None
                            and all(a.name != name for a in u.value.args))
                or isinstance(u, ir.Del)
                for u in uses.get(name, ()))
            if ok:
                st.value = ir.Global("str", str_value, loc=st.value.loc)


@overload_method(types.Float, "__str__")
def _ov_float_str(x):
    """``str(x)`` of a float: Python's repr digits (float32: its own shortest)."""
    if x in (types.float32, types.float64):
        return lambda x: _formatted(x, "")


# ---------------------------------------------------------------- passes --
def is_format_call(func_ir, expr) -> bool:
    """Whether ``expr`` is a ``format_value(value, spec, conversion)`` call."""
    if not (isinstance(expr, ir.Expr) and expr.op == "call" and len(expr.args) == 3):
        return False
    try:
        d = func_ir.get_definition(expr.func)
    except Exception:       # noqa: BLE001 - no single definition: not ours
        return False
    return isinstance(d, ir.Global) and d.value is format_value


def constant_text(func_ir, var):
    """The str constant ``var`` holds, or None."""
    try:
        d = func_ir.get_definition(var)
    except Exception:       # noqa: BLE001
        return None
    if isinstance(d, ir.Const) and isinstance(d.value, str):
        return d.value
    return None


_CONVERSIONS = {0: "", 1: "s", 2: "r", 3: "a"}


def _pass_classes():
    """``(CkTranslateByteCode, CheckFormatSpecs)``, registered once."""
    from numba.core import byteflow, interpreter
    from numba.core.compiler_machinery import AnalysisPass, FunctionPass, register_pass
    from numba.core.untyped_passes import TranslateByteCode

    class CkTraceRunner(byteflow.TraceRunner):
        """Numba's bytecode tracer, taking every f-string field."""

        def op_FORMAT_VALUE(self, state, inst):
            spec = state.pop() if inst.arg & 0x4 else state.make_temp()
            value = state.pop()
            fn, conv, res = state.make_temp(), state.make_temp(), state.make_temp()
            state.append(inst, value=value, spec=spec, fn=fn, conv=conv, res=res)
            state.push(res)

        def op_FORMAT_SIMPLE(self, state, inst):            # Python 3.13
            value = state.pop()
            spec, fn, conv, res = (state.make_temp() for _ in range(4))
            state.append(inst, value=value, spec=spec, fn=fn, conv=conv, res=res)
            state.push(res)

        def op_FORMAT_WITH_SPEC(self, state, inst):         # Python 3.13
            spec = state.pop()
            value = state.pop()
            fn, conv, res = state.make_temp(), state.make_temp(), state.make_temp()
            state.append(inst, value=value, spec=spec, fn=fn, conv=conv, res=res)
            state.push(res)

        def op_CONVERT_VALUE(self, state, inst):            # Python 3.13
            value = state.pop()
            spec, fn, conv, res = (state.make_temp() for _ in range(4))
            state.append(inst, value=value, spec=spec, fn=fn, conv=conv, res=res)
            state.push(res)

    class CkInterpreter(interpreter.Interpreter):
        """Numba's bytecode -> IR translation, f-string fields as calls of
        :func:`format_value`."""

        def _format_call(self, inst, value, spec, fn, conv, res, has_spec, conversion):
            if not has_spec:
                self.store(ir.Const("", loc=self.loc), spec)
            self.store(ir.Const(conversion, loc=self.loc), conv)
            self.store(ir.Global("format_value", format_value, loc=self.loc), fn)
            call = ir.Expr.call(self.get(fn), (self.get(value), self.get(spec),
                                               self.get(conv)), (), loc=self.loc)
            self.store(call, res)

        def op_FORMAT_VALUE(self, inst, value, spec, fn, conv, res):
            self._format_call(inst, value, spec, fn, conv, res, bool(inst.arg & 0x4),
                              _CONVERSIONS[inst.arg & 0x3])

        def op_FORMAT_SIMPLE(self, inst, value, spec, fn, conv, res):
            self._format_call(inst, value, spec, fn, conv, res, False, "")

        def op_FORMAT_WITH_SPEC(self, inst, value, spec, fn, conv, res):
            self._format_call(inst, value, spec, fn, conv, res, True, "")

        def op_CONVERT_VALUE(self, inst, value, spec, fn, conv, res):
            self._format_call(inst, value, spec, fn, conv, res, False,
                              _CONVERSIONS.get(inst.arg, ""))

    @register_pass(mutates_CFG=True, analysis_only=False)
    class CkTranslateByteCode(FunctionPass):
        """Numba's ``translate_bytecode`` with :class:`CkInterpreter`.  The
        tracer is looked up by name in ``numba.core.byteflow``; it is swapped
        for the duration of the pass, which runs under Numba's global compiler
        lock (no other compilation can see it)."""

        _name = "ckernels_translate_bytecode"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            saved = byteflow.TraceRunner
            byteflow.TraceRunner = CkTraceRunner
            try:
                func_ir = CkInterpreter(state["func_id"]).interpret(state["bc"])
            finally:
                byteflow.TraceRunner = saved
            _calls_of_str_as_str_value(func_ir)
            from .time_numba import rewrite_constructors
            rewrite_constructors(func_ir)    # np.datetime64(...) / np.timedelta64(...)
            state["func_ir"] = func_ir
            return True

    @register_pass(mutates_CFG=False, analysis_only=True)
    class CheckFormatSpecs(AnalysisPass):
        """Every ``format_value`` call of the typed function: a constant spec
        that Python accepts for the value's type (else a compile-time error
        with the spec and the line)."""

        _name = "ckernels_check_format_specs"

        def __init__(self):
            AnalysisPass.__init__(self)

        def run_pass(self, state):
            check_format_calls(state["func_ir"], state["typemap"])
            return False

    return TranslateByteCode, CkTranslateByteCode, CheckFormatSpecs


_PASSES = None


def pass_classes():
    """``(numba's TranslateByteCode, CkTranslateByteCode, CheckFormatSpecs)``."""
    global _PASSES
    if _PASSES is None:
        _PASSES = _pass_classes()
    return _PASSES


_KIND_NAMES = {"int": "an int", "bool": "a bool", "float": "a float", "str": "a str"}


def check_format_calls(func_ir, typemap) -> None:
    """Raise :class:`numba.core.errors.UnsupportedError` (with the location)
    for the first f-string field Python would format otherwise than the
    compiled code, or not at all."""
    for blk in func_ir.blocks.values():
        for st in blk.body:
            if not (isinstance(st, ir.Assign) and is_format_call(func_ir, st.value)):
                continue
            expr = st.value
            value, spec, conv = expr.args
            vt = types.unliteral(typemap[value.name])
            text = constant_text(func_ir, spec)
            conversion = constant_text(func_ir, conv) or ""
            name = value.name if value.name.isidentifier() else "..."
            field = "{" + name + (f"!{conversion}" if conversion else "") + \
                (f":{text}" if text else "") + "}"
            tname = "str" if isinstance(vt, types.UnicodeType) else str(vt)
            if text is None:
                raise errors.UnsupportedError(
                    "ckernels.jit: an f-string format spec must be a constant "
                    "(f'{x:>10}'); a spec built at run time (f'{x:{width}}') is not "
                    "supported", loc=expr.loc)
            kind = _se.value_kind(vt)
            if conversion in ("r", "a") and kind in (None, "str"):
                raise errors.UnsupportedError(
                    f"ckernels.jit: f-string field {field}: the conversion !{conversion} of "
                    f"a {tname} is not supported (only int, bool and float values, whose repr is "
                    "their str)", loc=expr.loc)
            if conversion:
                kind = "str"
            if text == "":
                continue
            if kind is None:
                raise errors.UnsupportedError(
                    f"ckernels.jit: f-string field {field}: a format spec on a {tname} value; format "
                    "specs apply to int, bool, float (float32/float64) and str values",
                    loc=expr.loc)
            try:
                _se.parse_spec(text, kind)
            except ValueError as exc:
                raise errors.UnsupportedError(
                    f"ckernels.jit: f-string field {field} (format spec {text!r} of "
                    f"{_KIND_NAMES[kind]}, {tname}): {exc}", loc=expr.loc) from None


__all__ = ["format_value", "str_value", "pass_classes", "check_format_calls", "is_format_call",
           "constant_text"]
