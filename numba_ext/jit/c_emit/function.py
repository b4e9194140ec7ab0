"""One Python function as one C device function (:class:`FunctionEmitter`):
IR blocks become labels, branches ``if (c) goto``, every IR variable is
declared once with the C type of its inferred Numba type; expressions, tuples,
structs and calls are emitted by the mixins it is made of."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from ...errors import NotSupportedError
from . import arena as _arena
from . import arrays as _arrays
from . import optionals as _opt
from . import out_lists as _out_lists
from . import string_results as _results
from . import strings as _strings
from . import time_ops as _time
from .arith import ArithEmission
from .calls import CallEmission
from .numba_types import _unlit, _is_static, _is_float, _is_int, _is_bool, _bool_t
from .struct_fields import StructEmission
from .tuples import TupleEmission
from .typed_ir import _where, typed_ir


def _sanitize(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return s



def _none_type():
    from numba.core import types
    return types.NoneType

class FunctionEmitter(TupleEmission, StructEmission, ArithEmission, CallEmission):
    def __init__(self, prog, py_func, arg_types, return_type):
        self.prog = prog
        self.d = prog.dialect
        self.py_func = py_func
        self.arg_types = tuple(arg_types)
        from numba.core import types
        # a struct result is built from what the function returns (a tuple):
        # typed without the result type, written member by member
        typing_ret = None if isinstance(return_type, types.Record) else return_type
        # a function whose returned list is its var result's row (.out_lists)
        ol = getattr(prog, "out_list", None)
        self._out_builder = ol[1] if ol is not None and ol[0] is py_func else None
        self.out_list = None
        self.tir = typed_ir(py_func, arg_types, typing_ret, prog.error_model, prog.dialect.title,
                            lists_ok=self._out_builder is not None)
        self.ret_type = _unlit(return_type if return_type is not None
                               else self.tir.return_type)
        h = hashlib.sha1(f"{py_func.__module__}.{py_func.__qualname__}|"
                         f"{self.arg_types}|{self.ret_type}".encode()).hexdigest()[:8]
        self.cname = f"ck_fn_{_sanitize(py_func.__name__)}_{h}"
        self.text = None
        self._names: dict = {}
        self._used: set = set()

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
        if isinstance(t, types.StringLiteral):
            return None     # a program constant where it is used (c_emit.strings)
        t = _unlit(t)
        if isinstance(t, types.Optional):       # null-aware values: c_emit.optionals
            return _opt.c_type(self, t)
        if isinstance(t, types.UnicodeType):
            return _strings.c_type(self)
        got = _strings.list_c_type(self, t) or _arena.c_type(self, t)
        if got is not None:
            return got
        if isinstance(t, types.Record):
            return self.prog.use_struct(t)
        if isinstance(t, types.NestedArray):
            el = self.field_ct(t.dtype)
            return None if el is None else f"{el} *"
        if isinstance(t, (types.Array, types.NoneType)):   # core dims: c_emit.arrays
            return _arrays.c_type(self, t)
        return _arrays.iter_c_type(self, t) or self.d.c_type(t) or _time.c_type(self, t)

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

    def string_built(self, var) -> bool:
        """Whether ``var`` holds text the function built (only written, in
        the writing pass: :mod:`.string_results`)."""
        return _results.is_built(self, var)

    @property
    def builds_strings(self) -> bool:
        """Whether the function's result is a string (written through the
        sinks of :mod:`.string_results`)."""
        return _results.is_str_type(self.ret_type)

    @property
    def builds_rows(self) -> bool:
        """Whether the function builds a row of a ``var * string`` result (its
        output parameter or its returned list): built text appended to it is
        written through the sinks of :mod:`.string_results`."""
        if self.out_list is not None:
            return _arena.is_string_builder(self.out_list.builder)
        return any(_arena.is_string_builder(t) for t in self.arg_types)

    @property
    def returns_view_struct(self) -> bool:
        """Whether the result is a C struct of views (a string, a row of
        strings or a split: ``ck_str_t``/``ck_strlist_t``)."""
        return self.builds_strings or _strings.is_list(self.ret_type)

    def zero_return(self) -> str:
        """``return`` of a placeholder result (after an error)."""
        if self.out_list is not None:
            return "return 0;"
        if self.struct_ret is not None or self.returns_view_struct:
            return f"return {self.var('$ck_zero')};"
        if _opt.is_optional(self.ret_type):
            return f"return {_opt.none_value(self, self.ret_type)};"
        return f"return ({self.ct(self.ret_type)})0;"

    def note_fp64(self, t) -> None:
        from numba.core import types
        if _opt.is_optional(t):
            t = _unlit(t).type
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
        if self.out_list is not None and var.name in self.out_list.names:
            return self.var(var.name)
        if self.ct(t) is None:
            if _is_static(t):
                raise self.fail(f"using {t} as a value", loc)
            raise self.fail(f"value of type {t}", loc)
        return self.var(var.name)

    def cast(self, expr: str, from_t, to_t) -> str:
        got = _opt.cast(self, expr, from_t, to_t)
        if got is not None:
            return got
        ft, tt = self.ct(from_t), self.ct(to_t)
        if ft == tt:
            return expr
        if _is_bool(to_t):
            return f"({expr} != 0)"
        if _is_float(from_t) and _is_int(to_t):
            return self.float_to_int(expr, from_t, to_t)
        return f"(({tt}){expr})"

    def use_as(self, var, to_t, loc) -> str:
        return self.cast(self.use(var, loc), self.tyof(var), to_t)

    _loc = None     # the location of the statement being emitted

    def error_code(self, exc_class, args) -> int:
        """The program's error code of ``exc_class(*args)`` raised by the
        statement being emitted (its line is part of the entry)."""
        loc = self._loc
        where = None
        if loc is not None and getattr(loc, "line", None):
            where = (self.py_func.__qualname__, str(loc.filename), int(loc.line))
        return self.prog.error_code(exc_class, args, where)

    def raise_code(self, code: int) -> str:
        return f"{{ *ck_err = {code}; {self.zero_return()} }}"

    def emit(self) -> None:
        from numba.core import ir
        fir = self.tir.func_ir
        if self._out_builder is not None:
            self.out_list = _out_lists.analyse(self, self._out_builder)
        if self.out_list is not None:
            rt = self.ct(self._out_builder)
        else:
            rt = self.ctype_checked(self.ret_type, fir.loc, "result")
        params = []
        for i, t in enumerate(self.arg_types):
            params.append(f"{self.ctype_checked(t, fir.loc, f'argument {i}')} ck_a{i}")
        if self.out_list is not None:
            params.append(f"{rt} {_out_lists.OutList.param}")
        if self.builds_rows:
            params.append(f"{_results.sink_type(self)} *ck_scr")
        if self.builds_strings:
            if getattr(self.prog, "string_entry", None) is not self.py_func:
                raise self.fail("a string result of a called function (only the kernel's "
                                "function builds its string result)", fir.loc)
            params += [f"{_results.sink_type(self)} *ck_scr", f"{_results.SINK_T} *ck_res"]
        params.append(f"{self.d.int32} *ck_err")
        decls: dict = {}
        for name, t in self.tir.typemap.items():
            ct = rt if self.out_list is not None and name in self.out_list.names else \
                self.ct(t)
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
        if self.out_list is None and (self.struct_ret is not None or self.returns_view_struct):
            z = self.var("$ck_zero")
            lines.append(f"  {rt} {z} = {{0}};   /* returned after a raise */")
            lines.append(f"  (void){z};")
        for cname, ct in decls.items():
            lines.append(f"  {ct} {cname};")
        lines += body
        lines.append("}")
        self.text = "\n".join(lines) + "\n"

    pending_checks: list = []     # presence checks of optionals read as values

    def stmt(self, stmt, ir) -> list[str]:
        """The C lines of one IR statement, after the presence checks of the
        optionals it reads as values (:mod:`.optionals`)."""
        self.pending_checks = []
        lines = self._stmt(stmt, ir)
        checks, self.pending_checks = self.pending_checks, []
        return checks + lines

    def _stmt(self, stmt, ir) -> list[str]:
        loc = self._loc = stmt.loc
        if isinstance(stmt, ir.Assign):
            return self.assign(stmt.target, stmt.value, loc, ir)
        if isinstance(stmt, ir.Branch):
            c = self.use_as(stmt.cond, _bool_t(), loc)
            return [f"if ({c}) goto L{stmt.truebr}; else goto L{stmt.falsebr};"]
        if isinstance(stmt, ir.Jump):
            return [f"goto L{stmt.target};"]
        if isinstance(stmt, ir.Return):
            if self.out_list is not None:       # the row: nothing to return
                return [f"return {self.use(stmt.value, loc)};"]
            if self.struct_ret is not None:
                return self.struct_return(stmt.value, loc)
            if self.returns_view_struct:
                return [f"return {self.use(stmt.value, loc)};"]
            if _opt.is_optional(self.ret_type):
                return [f"return {self.use_as(stmt.value, self.ret_type, loc)};"]
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
            code = self.error_code(exc, args)
            return [self.raise_code(code)]
        if isinstance(stmt, (ir.DynamicRaise, ir.Raise)):
            raise self.fail("raise with non-constant arguments", loc)
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            return _arrays.setitem(self, stmt, loc)   # into a core-dim array, else refused
        if isinstance(stmt, ir.Print):
            raise self.fail("print()", loc)
        if isinstance(stmt, ir.SetAttr):
            raise self.fail("attribute assignment", loc)
        raise self.fail(f"statement {type(stmt).__name__}", loc)

    def assign(self, target, value, loc, ir) -> list[str]:
        tt = self.tyof(target)
        if self.out_list is not None and target.name in self.out_list.names:
            return _out_lists.assign(self, target, value, loc)
        if isinstance(value, (ir.Expr, ir.Const)):
            got = _results.assign(self, target, value, loc)   # a string built here
            if got is not None:
                return got
        if isinstance(value, ir.Expr):
            got = _arrays.array_expr(self, target, tt, value, loc)   # core-dim arrays
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
        got = _time.const(self, v, t)      # np.datetime64 / np.timedelta64 values
        if got is not None:
            return got
        if v is None and isinstance(_unlit(t), _none_type()):
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

    def expr(self, dst, tt, e, loc) -> list[str]:
        from numba.core import types
        op = e.op
        if op in ("binop", "inplace_binop"):
            fn = e.fn if op == "binop" else e.immutable_fn
            got = _opt.is_none_test(self, dst, fn, e.lhs, e.rhs, loc)
            if got is not None:
                return got
            got = _strings.binop(self, dst, tt, fn, e.lhs, e.rhs, loc)
            return got if got is not None else self.binop(dst, tt, fn, e, loc)
        if op == "unary":
            return self.unary(dst, tt, e.fn, e.value, self.tir.calltypes[e], loc)
        if op == "cast":
            return [f"{dst} = {self.use_as(e.value, tt, loc)};"]
        if op == "call":
            return self.call(dst, tt, e, loc)
        got = _strings.list_expr(self, dst, tt, e, loc)    # a row of strings
        if got is not None:
            return got
        if op == "getiter":
            vt = _unlit(self.tyof(e.value))
            if not isinstance(vt, types.RangeType):
                raise self.fail(f"iteration over {vt} (only range() loops)", loc)
            r = self.use(e.value, loc)
            code = self.error_code(ValueError, ("range() arg 3 must not be zero",))
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
            got = _results.slice_view(self, dst, e, loc)     # s[a:b] of a string
            if got is not None:
                return got
            got = _strings.getitem(self, dst, tt, e, loc)
            if got is not None:
                return got
            got = self.tuple_item(dst, tt, e, loc)
            if got is not None:
                return got
            if isinstance(_unlit(self.tyof(e.value)), types.NestedArray):
                return self.nested_item(dst, tt, e, loc)
        if op in ("build_tuple", "exhaust_iter", "static_getitem", "getitem",
                  "build_list", "build_set", "build_map", "make_function"):
            raise self.fail(self._describe(e, tt), loc)
        raise self.fail(f"expression '{op}'", loc)
