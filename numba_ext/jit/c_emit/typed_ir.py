"""Numba's typed IR of a Python function, without LLVM: a custom pipeline
(bytecode -> IR -> untyped rewrites -> type inference) that stops right after
``NopythonTypeInference`` and hands back ``func_ir``, ``typemap``,
``calltypes`` and ``return_type`` (:class:`TypedIR`).  Constructs no device
supports are refused before typing, and Numba's typing errors are condensed
to one line naming the reason and the user's ``file:line``."""

from __future__ import annotations

import re
import threading

from ...errors import NotSupportedError


_PIPELINE = None
_TYPING = threading.local()     # lists_ok of the typed_ir call in progress


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
            found = _refused_construct(state.func_ir, getattr(_TYPING, "lists_ok", False))
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

    from ..fstrings import pass_classes
    _, ck_translate, check_formats = pass_classes()

    class CKDeviceTypingPipeline(CompilerBase):
        def define_pipelines(self):
            pm = PassManager("ckernels-device-typing")
            # f-string fields as format_value calls, str(x) as str_value (ckernels.jit.fstrings)
            pm.add_pass(ck_translate, "analyzing bytecode")
            pm.add_pass(up.FixupArgs, "fix up args")
            pm.add_pass(up.IRProcessing, "processing IR")
            pm.add_pass(up.InlineClosureLikes, "inline closures")
            pm.add_pass(up.RewriteSemanticConstants, "rewrite semantic constants")
            pm.add_pass(up.DeadBranchPrune, "dead branch pruning")
            pm.add_pass(up.GenericRewrites, "nopython rewrites")
            pm.add_pass(up.RewriteDynamicRaises, "rewrite dynamic raises")
            pm.add_pass(CKRefuseConstructs, "refuse unsupported constructs")
            pm.add_pass(tp.NopythonTypeInference, "nopython frontend")
            pm.add_pass(check_formats, "check f-string format specs")
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


def _refused_construct(func_ir, lists_ok=False):
    """``(what, loc)`` of the first statement using a construct no device
    target supports, or None (``lists_ok``: a list may be built, the
    returned row of :mod:`.out_lists`)."""
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
            elif isinstance(v, ir.Expr) and v.op in _REFUSED_EXPRS and \
                    not (lists_ok and v.op == "build_list"):
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
             where="device", lists_ok=False) -> TypedIR:
    """Run the typing-only pipeline on ``py_func`` for Numba ``arg_types``.

    Constructs no device supports are refused before typing, and typing
    errors are condensed: either way a one-line :class:`NotSupportedError`
    naming the construct (or Numba's reason) and the user's ``file:line``."""
    from numba.core import compiler
    from numba.core.errors import NumbaError, UnsupportedBytecodeError
    from numba.core.registry import cpu_target
    typingctx = cpu_target.typing_context
    targetctx = cpu_target.target_context
    typingctx.refresh()
    targetctx.refresh()
    flags = compiler.Flags()
    from numba.core import types as _types
    # Numba types str operations (s[i]: _empty_string) only with NRT on; nothing is
    # lowered here, so it only lets typing through (c_emit.strings emits them)
    # (and the CPU's var builder, whose append only types with it: c_emit.arena)
    # (and the var * string builder's, and a row of strings': c_emit.arena)
    from .arena import is_builder, is_string_builder
    # (and ?string arguments and results: Optional(unicode_type), c_emit.optionals)
    flags.nrt = any(isinstance(a, (_types.UnicodeType, _types.List)) or is_builder(a) or
                    is_string_builder(a) for a in tuple(
                        t.type if isinstance(t, _types.Optional) else t
                        for t in tuple(arg_types) + (return_type,)))
    flags.no_cpython_wrapper = True
    flags.error_model = error_model
    if lists_ok:
        flags.nrt = True
    _TYPING.lists_ok = lists_ok
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
    except UnsupportedBytecodeError as exc:    # not a NumbaError: bytecode Numba refuses
        reason, at = _bytecode_failure(exc, py_func)
        raise NotSupportedError(f"{where}: {reason} at {at} (in {py_func.__qualname__})"
                                ) from None
    except NumbaError as exc:
        reason, at = _typing_failure(exc, py_func)
        raise NotSupportedError(f"{where}: cannot type {py_func.__qualname__}"
                                f"({', '.join(map(str, arg_types))}): {reason} at {at}"
                                ) from None
    finally:
        _TYPING.lists_ok = False
    if isinstance(res, tuple):   # refused before typing
        what, loc = res
        raise NotSupportedError(f"{where}: {what} are not supported {_where(loc)} "
                                f"(in {py_func.__qualname__})")
    return res


def _bytecode_failure(exc, py_func) -> tuple[str, str]:
    """``(reason, file:line)`` of Numba's UnsupportedBytecodeError, whose
    message is ``"<reason>. Raised from <file> (<line>)"`` (an f-string with a
    format spec, say)."""
    text = _ANSI.sub("", str(exc)).strip()
    m = re.match(r"(?s)(.*?)\.? Raised from (.+) \((\d+)\)\s*$", text)
    code = py_func.__code__
    if m is None:
        return re.sub(r"\s+", " ", text)[:240], f"{code.co_filename}:{code.co_firstlineno}"
    reason = re.sub(r"\s+", " ", m.group(1))[:240]
    if reason.startswith("format spec in f-strings"):
        reason = "f-strings with a format spec are not supported"
    return reason, f"{m.group(2)}:{m.group(3)}"


def _where(loc) -> str:
    if loc is None:
        return "(unknown location)"
    return f"at {loc.filename}:{loc.line}"
