"""The source of a hand-written kernel program, prepared for one target.

:func:`kernel_program` takes C source whose kernels are ordinary C functions
(``CK_KERNEL void f(...)``, a loop over the elements marked ``// vectorize_over
i n`` ... ``// end_vectorize``) and the kernels' argument specs
(:class:`ArgSpec`), and gives a :class:`KernelProgram`: the generated C API of
the struct types it uses (:func:`ckernels.capi.c_api`), the kernels'
prototypes, ``#line`` directives back to the user's file, the loop annotation
made a loop over the work items on devices, and one entry point per kernel the
library launches (``ck_entry_<name>``: host C takes an argument array, device
C the kernel's buffers and values).  Building and launching it is
:mod:`ckernels.user_kernels.build`' business (``ctx.build_kernels``).
"""

from __future__ import annotations

import hashlib
import re
from typing import Mapping

from .. import dialects, dtypes
from ..capi import (CHeader, CLayout, _check_name, _member_ctype, _value_ctype, get_target,
                    highlight_html)
from ..errors import CompileError, InvalidArgumentError, NotSupportedError
from ..types import Type, as_type


class ArgSpec:
    """One kernel argument: ``"float64"`` (a scalar by value), ``"Particle[]"``
    or ``"float64[]"`` (an array: a pointer to its first element), ``"const
    Particle[]"`` (an array the kernel only reads); ``"Particle[n]"`` and
    ``"float64[3]"`` also fix the number of elements (``n`` an integer
    argument of the same kernel)."""

    __slots__ = ("name", "text", "type_name", "array", "const", "dtype", "node", "ctype",
                 "size")

    _RE = re.compile(r"\s*(const\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*"
                     r"(\[\s*([A-Za-z_][A-Za-z0-9_]*|[0-9]+)?\s*\])?\s*\Z")

    def __init__(self, name: str, text, lay: CLayout, kernel: str):
        where = f"kernel {kernel!r}, argument {name!r}"
        self.name = _check_name(name, f"{where}: the name")
        if not isinstance(text, str):
            raise InvalidArgumentError(f"{where}: the spec must be a string such as "
                                       f"'float64', 'Particle[]' or 'const float64[]', not "
                                       f"{type(text).__name__}")
        m = self._RE.match(text)
        if m is None:
            raise InvalidArgumentError(f"{where}: cannot read the spec {text!r} (write "
                                       "'float64', 'Particle[]', 'Particle[n]' or 'const "
                                       "float64[]')")
        self.text = text.strip()
        self.const = m.group(1) is not None
        self.type_name = m.group(2)
        self.array = m.group(3) is not None
        size = m.group(4)
        self.size = int(size) if size is not None and size.isdigit() else size
        if self.const and not self.array:
            raise InvalidArgumentError(f"{where}: 'const' applies to arrays ({text!r})")
        self.node = lay.structs.get(self.type_name)
        self.dtype = None
        if self.node is None or self.node.derived_from is not None:
            self.node = None
            self.dtype = dtypes.by_name.get(self.type_name)
            if self.dtype is None or not self.dtype.builtin:
                known = ", ".join(lay.named) or "none given"
                raise InvalidArgumentError(f"{where}: unknown type {self.type_name!r} (builtin "
                                           f"scalar names, or the types named in types=: "
                                           f"{known})")
        if self.array:
            self.ctype = self.type_name if self.node is not None \
                else _member_ctype(self.dtype)
        else:
            if self.node is not None:
                raise NotSupportedError(f"{where}: structs are passed as arrays "
                                        f"('{self.type_name}[]'), not by value")
            if self.dtype.kind == "c" or self.dtype.name == "float16":
                raise NotSupportedError(f"{where}: {self.dtype.name} scalars cannot be kernel "
                                        "arguments (pass a one-element array)")
            self.ctype = _value_ctype(self.dtype)
        if self.array and self.node is None and self.dtype.kind == "c":
            lay.uses.add(self.dtype.name)

    @property
    def element_type(self) -> Type:
        """The ckernel type of one element (of an array) or of the scalar."""
        return self.node.type if self.node is not None else as_type(self.dtype.name)

    @property
    def integer(self) -> bool:
        return not self.array and self.dtype.kind in "iu"

    def param(self, tgt: dialects.Dialect) -> str:
        """The parameter as the user's kernel function declares it."""
        if self.array:
            space = "CK_GLOBAL " if tgt.global_space else ""
            return f"{space}{'const ' if self.const else ''}{self.ctype} *{self.name}"
        return f"{self.ctype} {self.name}"

    def __repr__(self) -> str:
        return f"{self.name}: {self.text}"


class KernelDecl:
    """A kernel named in ``kernels=``: its arguments, its loop, its entry point."""

    __slots__ = ("name", "args", "loop", "entry", "line")

    def __init__(self, name, args, loop, line):
        self.name = name
        self.args = args
        self.loop = loop          # (index, bound, line) or None
        self.line = line          # line of the definition in the user's source
        self.entry = f"ck_kernel_{name}"

    def signature(self) -> str:
        return f"{self.name}({', '.join(f'{a.name}: {a.text}' for a in self.args)})"

    def bound_arg(self) -> "ArgSpec | None":
        if self.loop is None:
            return None
        return next(a for a in self.args if a.name == self.loop[1])


class KernelProgram:
    """A hand-written kernel source prepared for one target: ``text`` is what
    the compiler sees (the generated API, the kernels' prototypes, the user's
    source after ``#line 1 "<filename>"`` with its loop annotations replaced,
    the entry points); ``kernels`` maps names to :class:`KernelDecl`."""

    def __init__(self, target_name, header, kernels, text, filename, user_source):
        self.target = target_name
        self.header = header
        self.kernels = kernels
        self.text = text
        self.filename = filename
        self.user_source = user_source
        self.key = hashlib.sha256(text.encode()).hexdigest()

    def __repr__(self) -> str:
        return (f"<ckernels.capi.KernelProgram for {dialects.get(self.target).language}: "
                f"{', '.join(self.kernels)}>")

    def _repr_html_(self) -> str:
        return highlight_html(self.text, self.target, repr(self))


_BEGIN = re.compile(r"^(\s*)//\s*vectorize_over\b(.*)$")
_BEGIN_ARGS = re.compile(r"\s+([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")
_END = re.compile(r"^(\s*)//\s*end_vectorize\b(.*)$")
_KERNEL_DEF = re.compile(r"\bCK_KERNEL\b")
_KERNEL_HEAD = re.compile(r"\s*void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def kernel_program(source: str, kernels, types=None, target: str = "c",
                   filename: str = "kernels.c") -> KernelProgram:
    """Prepare a hand-written kernel source for ``target_name``.

    ``kernels``: ``{"name": {"arg": spec, ...}}`` with the arguments in the
    order of the kernel function's parameters (:class:`ArgSpec` gives the
    spellings).  Each kernel is a function ``CK_KERNEL void name(...)`` in
    ``source``; a loop annotation inside it, ``//vectorize_over i n`` ...
    ``//end_vectorize`` (each alone on its line), runs the lines between for
    every ``i`` in ``[0, n)``: a ``for`` loop on the CPU, one work item per
    index on devices (``n`` names an integer argument of the kernel).
    Problems in the source's structure are :class:`CompileError` naming the
    line; the C itself is checked by the compiler."""
    tgt = get_target(target)
    if not isinstance(source, str):
        raise InvalidArgumentError(f"kernel source must be a str, not {type(source).__name__}")
    if not isinstance(kernels, Mapping) or not kernels:
        raise InvalidArgumentError("kernels= must be a non-empty mapping {name: {argument: "
                                   "spec, ...}}")
    lay = CLayout(types, tgt)
    decls: dict[str, KernelDecl] = {}
    for kname, args in kernels.items():
        _check_name(kname, "kernel name")
        if not isinstance(args, Mapping):
            raise InvalidArgumentError(f"kernel {kname!r}: the arguments must be a mapping "
                                       f"{{name: spec}}, not {type(args).__name__}")
        specs = [ArgSpec(a, s, lay, kname) for a, s in args.items()]
        for a in specs:
            if isinstance(a.size, str) and not any(b.name == a.size and b.integer
                                                   for b in specs):
                raise InvalidArgumentError(f"kernel {kname!r}, argument {a.name!r}: the size "
                                           f"{a.size!r} of {a.text!r} must name an integer "
                                           "argument of the kernel")
        decls[kname] = KernelDecl(kname, specs, None, None)
    header = lay.render()
    lines = source.split("\n")
    bodies = _kernel_bodies(source, filename)
    for name, (first, _, _) in bodies.items():
        if name not in decls:
            raise CompileError(f"{filename}:{first}: CK_KERNEL function '{name}' is not "
                               "listed in kernels= (add its arguments there)", target=tgt.name)
    for name, d in decls.items():
        if name not in bodies:
            raise CompileError(f"{filename}: kernel '{name}' is not defined: write "
                               f"'CK_KERNEL void {name}(...) {{ ... }}'", target=tgt.name)
        d.line = bodies[name][0]
    blanked = _blank(source).split("\n")
    out = list(lines)
    open_loop = None
    for no, text in enumerate(lines, start=1):
        m = _BEGIN.match(text)
        if m is not None:
            where = f"{filename}:{no}"
            if open_loop is not None:
                raise CompileError(f"{where}: vectorize_over inside the vectorize_over block "
                                   f"of line {open_loop[2]}", target=tgt.name)
            args = _BEGIN_ARGS.match(m.group(2))
            if args is None:
                raise CompileError(f"{where}: write the annotation as '//vectorize_over "
                                   "<index> <bound>' (two names)", target=tgt.name)
            kname = _enclosing(bodies, no)
            if kname is None:
                raise CompileError(f"{where}: vectorize_over outside the kernels' bodies",
                                   target=tgt.name)
            d = decls[kname]
            if d.loop is not None:
                raise CompileError(f"{where}: kernel '{kname}' has a vectorize_over block "
                                   f"already (line {d.loop[2]}); one per kernel",
                                   target=tgt.name)
            index, bound = args.group(1), args.group(2)
            spec = next((a for a in d.args if a.name == bound), None)
            if spec is None or not spec.integer:
                raise CompileError(f"{where}: the bound {bound!r} must be an integer argument "
                                   f"of kernel '{kname}' ({d.signature()})", target=tgt.name)
            if any(a.name == index for a in d.args):
                raise CompileError(f"{where}: the index {index!r} is also an argument of "
                                   f"'{kname}'", target=tgt.name)
            _check_name(index, f"{where}: index")
            d.loop = (index, bound, no)
            open_loop = (kname, index, no)
            out[no - 1] = m.group(1) + _loop_head(tgt, index, bound)
            continue
        m = _END.match(text)
        if m is not None:
            where = f"{filename}:{no}"
            if open_loop is None or m.group(2).strip():
                raise CompileError(f"{where}: end_vectorize without a vectorize_over"
                                   if open_loop is None else
                                   f"{where}: end_vectorize takes nothing after it",
                                   target=tgt.name)
            if _enclosing(bodies, no) != open_loop[0]:
                raise CompileError(f"{where}: end_vectorize outside kernel '{open_loop[0]}' "
                                   f"(its vectorize_over is on line {open_loop[2]})",
                                   target=tgt.name)
            for j in range(open_loop[2], no - 1):
                if re.search(r"\breturn\b", blanked[j]):
                    raise CompileError(
                        f"{filename}:{j + 1}: return inside a vectorize_over block: it would "
                        "end the whole loop on the CPU but one index on devices; use "
                        "'continue' to end one index", target=tgt.name)
            out[no - 1] = m.group(1) + "}"
            open_loop = None
            continue
        if re.search(r"//\s*(vectorize_over|end_vectorize)\b", text):
            raise CompileError(f"{filename}:{no}: a loop annotation must be alone on its line",
                               target=tgt.name)
    if open_loop is not None:
        raise CompileError(f"{filename}:{open_loop[2]}: vectorize_over without "
                           "end_vectorize", target=tgt.name)
    text = _assemble(tgt, header, decls, "\n".join(out), filename)
    return KernelProgram(tgt.name, header, decls, text, filename, source)


def _loop_head(tgt: dialects.Dialect, index: str, bound: str) -> str:
    i = f"ck_{index}"
    if not tgt.device:
        return (f"for (int64_t {i} = 0; {i} < (int64_t)({bound}); {i}++) "
                f"{{ const int64_t {index} = {i};")
    # one trip per work item: `continue` ends the index on every target
    return (f"for (int64_t {i} = (int64_t)({tgt.thread_index}); {i} < (int64_t)({bound}); "
            f"{i} = (int64_t)({bound})) {{ const int64_t {index} = {i};")


def _assemble(tgt: dialects.Dialect, header: CHeader, decls, user: str, filename: str) -> str:
    parts = [f'#line 1 "ckernels c_api ({tgt.name})"', str(header).rstrip("\n"), "",
             "/* ---- the kernels (prototypes from kernels=) */"]
    for d in decls.values():
        parts.append(f"CK_KERNEL void {d.name}({', '.join(a.param(tgt) for a in d.args)});")
    parts.append(f'#line 1 "{_c_string(filename)}"')
    parts.append(user)
    parts.append('#line 1 "ckernels entry points"')
    parts.append("/* ---- entry points (generated): one per kernel */")
    for d in decls.values():
        parts.append(_entry(tgt, d))
    return "\n".join(parts) + "\n"


def _entry(tgt: dialects.Dialect, d: KernelDecl) -> str:
    calls = []
    if not tgt.device:
        for j, a in enumerate(d.args):
            if a.array:
                calls.append(f"({'const ' if a.const else ''}{a.ctype} *)args[{j}]")
            elif a.dtype.kind == "b":
                calls.append(f"*(const uint8_t *)args[{j}] != 0")
            else:
                calls.append(f"*(const {a.ctype} *)args[{j}]")
        return (f"void {d.entry}(void *const *args) {{\n"
                f"  {d.name}({', '.join(calls)});\n}}")
    params = []
    for a in d.args:
        p = f"ck_{a.name}"
        if a.array:
            params += [f"{tgt.pointer('char')}{p}", f"uint64_t {p}_offset"]
            calls.append(f"({tgt.pointer(a.ctype, a.const)})({p} + {p}_offset)")
        elif a.dtype.kind == "b":
            params.append(f"uint8_t {p}")
            calls.append(f"{p} != 0")
        else:
            params.append(f"{a.ctype} {p}")
            calls.append(p)
    qual = tgt.kernel_qualifier
    return (f"{qual} {d.entry}({', '.join(params)}) {{\n"
            f"  {d.name}({', '.join(calls)});\n}}")


def _c_string(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _enclosing(bodies, line: int) -> str | None:
    for name, (_, start, end) in bodies.items():
        if start < line < end or (start == line == end):
            return name
    return None


def _kernel_bodies(source: str, filename: str) -> dict[str, tuple[int, int, int]]:
    """``{name: (definition line, line of '{', line of '}')}`` of every
    ``CK_KERNEL void name(...) { ... }`` definition (declarations skipped)."""
    text = _blank(source)
    out = {}
    for m in _KERNEL_DEF.finditer(text):
        head = _KERNEL_HEAD.match(text, m.end())
        line = text.count("\n", 0, m.start()) + 1
        if head is None:
            raise CompileError(f"{filename}:{line}: a kernel is 'CK_KERNEL void name(...)'")
        name = head.group(1)
        close = _matching(text, head.end() - 1, "(", ")")
        if close is None:
            raise CompileError(f"{filename}:{line}: unbalanced parentheses after '{name}('")
        pos = close + 1
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos < len(text) and text[pos] == ";":
            continue   # a declaration
        if pos >= len(text) or text[pos] != "{":
            raise CompileError(f"{filename}:{line}: expected the body of kernel '{name}'")
        end = _matching(text, pos, "{", "}")
        if end is None:
            raise CompileError(f"{filename}:{line}: the body of kernel '{name}' has no "
                               "closing '}'")
        if name in out:
            raise CompileError(f"{filename}:{line}: kernel '{name}' is defined twice (line "
                               f"{out[name][0]} first)")
        out[name] = (line, text.count("\n", 0, pos) + 1, text.count("\n", 0, end) + 1)
    return out


def _matching(text: str, pos: int, open_: str, close: str) -> int | None:
    depth = 0
    for i in range(pos, len(text)):
        c = text[i]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
    return None


def _blank(source: str) -> str:
    """``source`` with comments, string and character literals replaced by
    spaces (newlines kept), so that positions and line numbers stay."""
    out = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        nxt = source[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = source.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and nxt == "*":
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in source[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)




__all__ = ["ArgSpec", "KernelDecl", "KernelProgram", "kernel_program"]
