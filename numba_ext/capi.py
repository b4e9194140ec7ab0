"""Generated C APIs for typed data: the C API of struct types.

:func:`c_api` turns named ckernel struct types into a C header for one target
(``"c"``, ``"opencl"`` or ``"cuda"``): one ``typedef struct`` per type whose
members sit at the offsets the C library computed (checked by static asserts),
and accessor functions for every field and element::

    >>> import ckernels
    >>> vec3 = ckernels.types.parse("{x: float64, y: float64, z: float64}")
    >>> h = ckernels.c_api({"Vec3": vec3})
    >>> "static inline double Vec3_get_x(const Vec3 *obj)" in str(h)
    True

Names.  Types are named by the caller: ``c_api({"Particle": t, ...})`` (or a
list of ``(name, type)`` pairs).  A field whose struct type equals a named
type uses that name; an unnamed nested struct is named after its place,
``<Outer>_<field>``.  Accessors exist for the named types only; paths reach
into nested structs and through dims:

``<T>_get_<path>(obj, i0, ...)``      the value of a scalar or string
``<T>_set_<path>(obj, i0, ..., value)``  store a scalar
``<T>_getp<k>_<path>(obj, i0, ...)``  a pointer to any part (``k`` = the number
                                      of indices it takes; omitted when 0)
``<T>_len<k>_<path>(obj, i0, ...)``   the size of a dim (bytes of a string)

where ``<path>`` joins the field names with ``_``.  See docs/c-api.md.

The layout is the library's, read once per type through ``ck_struct_field``
and ``ck_type_data_size``/``alignment`` into a :class:`CLayout`
(:func:`layout`); the text is that layout rendered for a target's dialect
(:class:`ckernels.dialects.Dialect`)
(:meth:`CLayout.render`).  Hand-written kernel programs include it
(:mod:`ckernels.user_kernels.source`, built and launched by
:mod:`ckernels.user_kernels.build`); the jit's emitter declares the struct
types of device code with it.
"""

from __future__ import annotations

import hashlib
import re
from typing import Iterable, Mapping

from . import dialects, dtypes
from ._native import check, ffi, layout_row, lib
from .errors import CKTypeError, InvalidArgumentError, NotSupportedError
from .types import Type, as_type

# ------------------------------------------------------------------- targets --
def get_target(name) -> dialects.Dialect:
    """The dialect of the target called ``name`` (a row of
    :mod:`ckernels.dialects`: ``"c"``, ``"opencl"``, ``"cuda"``)."""
    if isinstance(name, dialects.Dialect):
        return name
    t = dialects.DIALECTS.get(name)
    if t is None:
        raise InvalidArgumentError(f"c_api: unknown target {name!r} (targets: "
                                   f"{', '.join(map(repr, dialects.DIALECTS))})")
    return t


_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while bool true false alignas alignof and asm catch class
constexpr const_cast decltype delete dynamic_cast explicit export friend mutable namespace
new noexcept not nullptr operator or private protected public reinterpret_cast
static_assert static_cast template this thread_local throw try typeid typename using
virtual wchar_t xor kernel global local constant private read_only write_only half uchar
ushort uint ulong size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t
uint32_t uint64_t
""".split())
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Names the headers the generated C includes (<math.h>, <stdbool.h>, <stddef.h>,
# <stdint.h>: C11, POSIX and glibc's default extensions) or the compiler in
# gnu11 mode (linux, unix) define: a type of that name is a redeclaration, a
# field of a macro's name is expanded away.  Math functions come with their
# float/long double forms.
_MATH_FUNCTIONS = """
acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh drem erf erfc exp exp2
exp10 expm1 fabs fdim finite floor fma fmax fmin fmod frexp gamma hypot ilogb isinf isnan j0
j1 jn ldexp lgamma llrint llround log log10 log1p log2 logb lrint lround modf nan nearbyint
nextafter nexttoward pow pow10 remainder remquo rint round scalb scalbln scalbn significand
sin sincos sinh sqrt tan tanh tgamma trunc y0 y1 yn
""".split()
_HEADER_NAMES = frozenset([f + s for f in _MATH_FUNCTIONS for s in ("", "f", "l")] + """
lgamma_r lgammaf_r lgammal_r NULL offsetof max_align_t wchar_t INFINITY NAN HUGE_VAL HUGE_VALF
HUGE_VALL float_t double_t fpclassify isfinite isnormal signbit isgreater isgreaterequal isless
islessequal islessgreater isunordered math_errhandling MATH_ERRNO MATH_ERREXCEPT PTRDIFF_MIN
PTRDIFF_MAX SIG_ATOMIC_MIN SIG_ATOMIC_MAX SIZE_MAX WCHAR_MIN WCHAR_MAX WINT_MIN WINT_MAX linux
unix
""".split())
_HEADER_PATTERN = re.compile(r"(U?INT\w*_(MAX|MIN|C)|u?int\w*_t|FP_[A-Z0-9_]+|M_[A-Z0-9_]+)\Z")


def _check_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise InvalidArgumentError(f"c_api: {what} {name!r} is not a C identifier")
    if name in _RESERVED or name.startswith("_"):
        raise InvalidArgumentError(f"c_api: {what} {name!r} is reserved in C, OpenCL C or "
                                   "CUDA C++ (or starts with '_')")
    if name in _HEADER_NAMES or _HEADER_PATTERN.match(name):
        raise InvalidArgumentError(f"c_api: {what} {name!r} is defined by the headers the "
                                   "generated C includes (<math.h>, <stdint.h>, <stddef.h>, "
                                   "<stdbool.h>): a macro, function or type of that name "
                                   "would break the header")
    if name.lower().startswith("ck_"):
        raise InvalidArgumentError(f"c_api: {what} {name!r}: names starting with 'ck_' are "
                                   "reserved for the generated code")
    return name


# -------------------------------------------------------------------- layout --

_ID = {name: getattr(lib, "CK_TYPE_" + name.upper()) for name in
       ("fixed_dim", "strided_dim", "var_dim", "string", "bytes", "struct", "pointer")}


class TypeNode:
    """One part of a type as the C API sees it.

    ``kind``: ``"scalar"`` (``dtype``: its :mod:`ckernels.dtypes` row),
    ``"struct"`` (``name``, ``fields``: ``[(name, offset, TypeNode)]``),
    ``"fixed"`` (``count``, ``element``), ``"var"`` (``element``),
    ``"string"`` or ``"bytes"``.  ``size`` and ``alignment`` are the library's.
    """

    __slots__ = ("kind", "type", "size", "alignment", "dtype", "name", "fields", "count",
                 "element", "derived_from")

    def __init__(self, kind, t, **kw):
        self.kind = kind
        self.type = t
        self.size = int(lib.ck_type_data_size(t.c_type))
        self.alignment = int(lib.ck_type_data_alignment(t.c_type))
        self.dtype = self.name = self.fields = self.count = self.element = None
        self.derived_from = None
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"<capi.TypeNode {self.kind} {self.name or self.type}>"


class CLayout:
    """The C view of a set of named struct types for one target: every struct
    (named or derived) in dependency order, the var-dim views they use, and
    whether strings appear.  Built from the library's type queries only."""

    def __init__(self, types, tgt: dialects.Dialect):
        self.target = tgt
        self.named: dict[str, Type] = {}
        for name, t in _named_items(types):
            if name in self.named:
                raise InvalidArgumentError(f"c_api: the type name {name!r} is given twice")
            self.named[_check_name(name, "type name")] = t
        self._by_type = {}
        for name, t in self.named.items():
            if t.type_id != _ID["struct"]:
                raise NotSupportedError(f"c_api: {name!r} is '{t}', not a struct type; name "
                                        "struct types (arrays of scalars need no typedef)")
            self._by_type.setdefault(t, name)
        #: (kind, name, TypeNode) in dependency order: kind "struct" or "var"
        self.decls: list[tuple[str, str, TypeNode]] = []
        self.structs: dict[str, TypeNode] = {}
        self.views: dict[str, TypeNode] = {}
        self.uses = set()       # "string" and the complex types' names
        for name, t in self.named.items():
            self._struct(t, name, name, own_name=True)

    # ---- building --------------------------------------------------------
    def node(self, t: Type, place: str, where: str) -> TypeNode:
        """The TypeNode of ``t``; ``place`` names an unnamed struct found there,
        ``where`` is the field path for messages."""
        tid = t.type_id
        if t.is_builtin:
            d = dtypes.by_id[tid]
            if d.kind == "c":
                self.uses.add(d.name)
            return TypeNode("scalar", t, dtype=d)
        if tid == _ID["struct"]:
            return self._struct(t, place, where)
        if tid == _ID["fixed_dim"]:
            if t.fixed_size == 0:
                raise NotSupportedError(f"c_api: {where} is '{t}': a dim of size 0 has no C "
                                        "equivalent")
            return TypeNode("fixed", t, count=t.fixed_size,
                            element=self.node(t.element, place, where))
        if tid in (_ID["var_dim"], _ID["string"], _ID["bytes"]):
            what = "a var dim" if tid == _ID["var_dim"] else f"a {t.id}"
            if self.target.device:
                raise NotSupportedError(
                    f"c_api(target={self.target.name!r}): {where} is {what} ('{t}'): its data "
                    "points into a host arena, which a device cannot address; use the 'c' "
                    "target, or a fixed-size field (N * uint8, N * T)")
            if tid != _ID["var_dim"]:
                self.uses.add("string")
                return TypeNode(t.id, t)
            el = self.node(t.element, place, where)
            node = TypeNode("var", t, element=el)
            view = self.view_name(el)
            if view not in self.views:
                self.views[view] = node
                self.decls.append(("var", view, node))
            return node
        raise NotSupportedError(f"c_api: {where} is '{t}': {t.id} types have no C API")

    def _struct(self, t: Type, place: str, where: str, own_name: bool = False) -> TypeNode:
        """The struct TypeNode of ``t``: a named type's (the first name given to
        equal types, unless ``own_name``: ``place`` is then its own name), else
        a new derived struct called ``place``."""
        name = place if own_name else self._by_type.get(t)
        derived = name is None
        if derived:
            name = place
        if name in self.structs:
            node = self.structs[name]
            if node.type == t:
                return node
            raise InvalidArgumentError(
                f"c_api: the name {name!r} would stand for two types: '{node.type}' and "
                f"'{t}' (at {where}); name one of them")
        n = lib.ck_struct_field_count(t.c_type)
        if n == 0:
            raise NotSupportedError(f"c_api: {where} is an empty struct, which has no C "
                                    "equivalent")
        fields = []
        cname = ffi.new("const char **")
        ftype = ffi.new("ck_type *")
        off = ffi.new("size_t *")
        for i in range(n):
            check(lib.ck_struct_field(t.c_type, i, cname, ftype, off, ffi.NULL))
            fname = ffi.string(cname[0]).decode()
            fpath = f"{where}.{fname}"
            _check_name(fname, f"field {fpath}: name")
            child = self.node(Type._borrow(ftype[0]), f"{name}_{fname}", fpath)
            fields.append((fname, int(off[0]), child))
        node = TypeNode("struct", t, name=name, fields=fields,
                        derived_from=where if derived else None)
        self.structs[name] = node
        self.decls.append(("struct", name, node))
        return node

    def render(self) -> "CHeader":
        """The header text (:func:`c_api`): typedefs with layout assertions,
        accessors."""
        return _render(self)

    # ---- C spellings -----------------------------------------------------
    def view_name(self, el: TypeNode) -> str:
        """The name of the ``{data, size}`` view of a var dim of ``el``."""
        return "ck_var_" + _mangle(el)

    def ctype(self, node: TypeNode) -> str:
        """The C type holding ``node`` (innermost type of a fixed dim)."""
        k = node.kind
        if k == "scalar":
            return _member_ctype(node.dtype)
        if k == "struct":
            return node.name
        if k == "fixed":
            return self.ctype(node.element)
        if k == "var":
            return self.view_name(node.element)
        return "ck_str"

    def declare(self, node: TypeNode, declarator: str) -> str:
        """A C declaration of ``declarator`` holding ``node``
        (``double hist[8]``, ``double (*data)[3]``)."""
        if node.kind == "fixed":
            if declarator.startswith("*"):
                declarator = f"({declarator})"
            return self.declare(node.element, f"{declarator}[{node.count}]")
        return f"{self.ctype(node)} {declarator}"


def _named_items(types) -> list[tuple[str, Type]]:
    if isinstance(types, CHeader):
        types = types.types
    if types is None:
        return []
    if isinstance(types, Mapping):
        items = list(types.items())
    elif isinstance(types, (str, Type)) or not isinstance(types, Iterable):
        raise InvalidArgumentError(
            f"c_api: types must be a mapping {{name: type}} or a list of (name, type) "
            f"pairs, not {type(types).__name__}")
    else:
        items = []
        for item in types:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise InvalidArgumentError(
                    f"c_api: types must be (name, type) pairs; got {item!r}")
            items.append(item)
    out = []
    for name, t in items:
        try:
            out.append((name, as_type(t)))
        except (CKTypeError, ValueError, TypeError) as exc:
            raise CKTypeError(f"c_api: type {name!r}: {exc}") from None
    return out


def _mangle(node: TypeNode) -> str:
    k = node.kind
    if k == "scalar":
        return node.dtype.name
    if k == "struct":
        return node.name
    if k == "fixed":
        return f"{node.count}_{_mangle(node.element)}"
    if k == "var":
        return "var_" + _mangle(node.element)
    return k


def _member_ctype(d: "dtypes.DType") -> str:
    """The C type of a builtin stored in memory, the same on every target:
    ``<stdint.h>`` names (typedef'd on devices), ``float``/``double``, bool as
    its byte, float16 as its bits, complex as ``{re, im}``."""
    if d.kind == "b":
        return "uint8_t"
    if d.name == "float16":
        return "uint16_t"
    if d.kind == "c":
        return f"ck_{d.name}"
    return d.cffi


def _value_ctype(d: "dtypes.DType") -> str:
    """The C type accessors return and take for a builtin."""
    return "bool" if d.kind == "b" else _member_ctype(d)


def layout(types, target="c") -> CLayout:
    """The :class:`CLayout` of named struct types for a target (what
    :func:`c_api` renders)."""
    return CLayout(types, get_target(target))


# -------------------------------------------------------------------- header --

class CHeader(str):
    """A generated C header: a ``str`` (the text) with what it was made from.

    ``target`` (``"c"``, ``"opencl"``, ``"cuda"``), ``types`` (``{name:
    Type}``), ``typedefs`` (every typedef name, derived ones included) and
    ``functions`` (``{name: prototype}``).  In Jupyter it displays highlighted
    (Pygments, when installed)."""

    target: str
    types: dict
    typedefs: tuple
    functions: dict

    def __new__(cls, text, target_name, types, typedefs, functions):
        self = super().__new__(cls, text)
        self.target = target_name
        self.types = dict(types)
        self.typedefs = tuple(typedefs)
        self.functions = dict(functions)
        return self

    def __repr__(self) -> str:
        names = ", ".join(self.types) or "no types"
        return (f"<ckernels.CHeader for {dialects.get(self.target).language}: {names} "
                f"({self.count(chr(10))} lines, {len(self.functions)} accessors)>")

    def _repr_html_(self) -> str:
        return highlight_html(str(self), self.target, repr(self))

    def _repr_markdown_(self) -> str:
        return f"```{'cuda' if self.target == 'cuda' else 'c'}\n{self}```\n"

    def __reduce__(self):
        return (CHeader, (str(self), self.target, self.types, self.typedefs, self.functions))


def highlight_html(text: str, target_name: str, caption: str) -> str:
    """``text`` as highlighted HTML (:func:`ckernels.display.highlight`)."""
    from .display import highlight   # imported lazily: display imports no object module
    return highlight(text, target_name, caption)

def c_api(types, target: str = "c") -> CHeader:
    """The C API of named struct types for one target.

    ``types``: ``{"Particle": type, ...}`` or ``[("Particle", type), ...]``
    (types as :class:`ckernels.types.Type`, type strings or aligned NumPy
    structured dtypes).  ``target``: ``"c"`` (C11; the layout is checked with
    ``_Static_assert(offsetof(...))``), ``"opencl"`` (``__global`` pointers)
    or ``"cuda"`` (``__device__`` functions).  Strings and var dims exist on
    the ``"c"`` target only (their data lives in host arenas)."""
    return layout(types, target).render()


def _render(lay: CLayout) -> CHeader:
    tgt = lay.target
    w = _Writer()
    functions: dict[str, str] = {}
    key = hashlib.sha256((tgt.name + "\n" + "\n".join(
        f"{n}={t}" for n, t in lay.named.items())).encode()).hexdigest()[:12].upper()
    w.line(f"/* C API of ckernels types for {tgt.language}, generated by ckernels.c_api.")
    w.line(" * Types:")
    for n, t in lay.named.items():
        _comment(w, f" *   {n} = ", str(t), " *       ")
    if not lay.named:
        w.line(" *   (none)")
    w.line(" * Accessors (no bounds checks): <Type>_get_<path>(obj, i0, ...),")
    w.line(" * <Type>_set_<path>(obj, i0, ..., value), <Type>_getp<k>_<path>(obj, i0, ...),")
    w.line(" * <Type>_len<k>_<path>(obj, i0, ...); see docs/c-api.md. */")
    w.line(f"#ifndef CKERNELS_CAPI_{key}")
    w.line(f"#define CKERNELS_CAPI_{key}")
    w.blank()
    _prelude(w, lay)
    for kind, name, node in lay.decls:
        if kind == "var":
            _var_view(w, lay, name, node)
        else:
            _typedef(w, lay, node)
            if node.derived_from is None:
                _accessors(w, lay, node, functions)
    w.line(f"#endif /* CKERNELS_CAPI_{key} */")
    typedefs = [n for k, n, _ in lay.decls]
    return CHeader(w.text(), tgt.name, lay.named, typedefs, functions)


def _comment(w: "_Writer", first: str, text: str, rest: str, width: int = 96) -> None:
    """``text`` in comment lines of at most ``width`` characters, broken after
    ", " (a long type string)."""
    line = first
    for i, part in enumerate(text.split(", ")):
        piece = part + (", " if i < text.count(", ") else "")
        if len(line) + len(piece.rstrip()) > width and line.strip() not in ("*", ""):
            w.line(line.rstrip())
            line = rest
        line += piece
    w.line(line.rstrip())


class _Writer:
    def __init__(self):
        self.lines: list[str] = []

    def line(self, text: str = "") -> None:
        self.lines.append(text)

    def blank(self) -> None:
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _prelude(w: _Writer, lay: CLayout) -> None:
    tgt = lay.target
    if tgt.name == "c":
        w.line("#include <math.h>     /* math functions, as built in on OpenCL and CUDA */")
        w.line("#include <stdbool.h>")
        w.line("#include <stddef.h>")
        w.line("#include <stdint.h>")
    else:
        if tgt.name == "opencl":
            w.line("#ifdef cl_khr_fp64")
            w.line("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
            w.line("#endif")
        w.line(f"/* <stdint.h> names in {tgt.language} */")
        for d in dtypes.BUILTINS:
            if d.kind in "iu":
                w.line(f"typedef {tgt.ctype(d)} {d.cffi};")
    w.blank()
    w.line("/* Qualifiers of hand-written kernels (the same source on every target) */")
    w.line(f"#define CK_KERNEL {tgt.user_kernel}")
    w.line(f"#define CK_FUNC {tgt.inline_function}")
    w.line(f"#define CK_GLOBAL{' ' + tgt.global_space if tgt.global_space else ''}")
    w.blank()
    assert_ = _Asserts(tgt)
    if "string" in lay.uses:
        begin, _ = layout_row("ck_string", "begin")
        end, _ = layout_row("ck_string", "end")
        _, size = layout_row("ck_string")
        w.line("/* A string (or bytes): [begin, end) in a host arena, not NUL-terminated;")
        w.line(" * read-only (the bytes may be shared with other strings). */")
        w.line("typedef struct ck_str {")
        w.line("  const char *begin;")
        w.line("  const char *end;")
        w.line("} ck_str;")
        assert_.size(w, "ck_str", size, "ck_string")
        assert_.offset(w, "ck_str", "begin", begin, "ck_string.begin")
        assert_.offset(w, "ck_str", "end", end, "ck_string.end")
        w.blank()
    for d in dtypes.BUILTINS:
        if d.kind == "c" and d.name in lay.uses:
            cname = d.name
            part = next(f.cffi for f in dtypes.BUILTINS if f.kind == "f" and
                        f.size * 2 == d.size)
            w.line(f"/* {cname}: real and imaginary parts */")
            w.line(f"typedef struct ck_{cname} {{ {part} re; {part} im; }} ck_{cname};")
            assert_.size(w, f"ck_{cname}", d.size, cname,
                         int(lib.ck_type_data_alignment(ffi.cast("ck_type", d.type_id))))
            w.blank()


class _Asserts:
    """CLayout assertions: ``_Static_assert`` with ``offsetof`` in C;
    ``static_assert`` of sizes in CUDA C++ (NVRTC has no ``offsetof``); sizes
    through a negative array size in OpenCL C (portable to every OpenCL C
    compiler)."""

    def __init__(self, tgt: dialects.Dialect):
        self.target = tgt

    def _emit(self, w, cond, label, message):
        w.line(self.target.static_assert(cond, label, message))

    def size(self, w, cname, size, what, alignment=None):
        self._emit(w, f"sizeof({cname}) == {size}", f"{cname}_size",
                   f"ckernels layout: {what} has {size} bytes")
        if alignment is not None and self.target.name == "c":
            self._emit(w, f"_Alignof({cname}) == {alignment}", f"{cname}_align",
                       f"ckernels layout: {what} is aligned to {alignment}")

    def offset(self, w, cname, member, offset, what):
        if self.target.name == "c":
            self._emit(w, f"offsetof({cname}, {member}) == {offset}", f"{cname}_{member}",
                       f"ckernels layout: {what} is at offset {offset}")


def _var_view(w: _Writer, lay: CLayout, name: str, node: TypeNode) -> None:
    begin, _ = layout_row("ck_var_dim_data", "begin")
    sz_off, _ = layout_row("ck_var_dim_data", "size")
    _, size = layout_row("ck_var_dim_data")
    el = lay.declare(node.element, "").rstrip().replace(" [", "[")
    w.line(f"/* {name}: a var dim of {el} as {{data, size}}; the elements live in a host "
           "arena */")
    w.line(f"typedef struct {name} {{")
    w.line(f"  {lay.declare(node.element, '*data')};")
    w.line("  size_t size;")
    w.line(f"}} {name};")
    a = _Asserts(lay.target)
    a.size(w, name, size, "ck_var_dim_data")
    a.offset(w, name, "data", begin, "ck_var_dim_data.begin")
    a.offset(w, name, "size", sz_off, "ck_var_dim_data.size")
    w.blank()


def _typedef(w: _Writer, lay: CLayout, node: TypeNode) -> None:
    name = node.name
    what = "" if node.derived_from is None else f"the struct of {node.derived_from}, "
    w.line(f"/* ---- {name}: {what}{node.size} bytes, aligned to {node.alignment}")
    _comment(w, " * ", str(node.type), " *   ")
    w.line(" */")
    w.line(f"typedef struct {name} {{")
    decls = [lay.declare(child, fname) + ";" for fname, _, child in node.fields]
    width = max(len(d) for d in decls)
    for d, (_, off, _) in zip(decls, node.fields):
        w.line(f"  {d:<{width}}  /* offset {off} */")
    w.line(f"}} {name};")
    a = _Asserts(lay.target)
    a.size(w, name, node.size, name, node.alignment)
    for fname, off, _ in node.fields:
        a.offset(w, name, fname, off, f"{name}.{fname}")
    w.blank()


def _accessors(w: _Writer, lay: CLayout, root: TypeNode, functions: dict) -> None:
    tgt = lay.target
    tname = root.name
    obj_const = f"{tgt.pointer(tname, const=True)}obj"
    obj_mut = f"{tgt.pointer(tname)}obj"

    def emit(ret, action, k, path, params, body, mutable):
        fname = f"{tname}_{action}{k if k else ''}_{'_'.join(path)}"
        if fname in functions:
            raise InvalidArgumentError(
                f"c_api: two parts of {tname} would get the accessor {fname}: rename a field "
                "(paths join field names with '_')")
        args = ", ".join([obj_mut if mutable else obj_const] + params)
        proto = f"{tgt.inline_function} {ret}{'' if ret.endswith('*') else ' '}{fname}({args})"
        functions[fname] = proto
        w.line(f"{proto} {{ {body} }}")

    def walk(node: TypeNode, path: list[str], label: str, expr: str, k: int) -> None:
        idx = [f"int64_t i{j}" for j in range(k)]
        kind = node.kind
        w.line(f"/* {tname}.{label}: {node.type} */")
        if kind == "scalar":
            d = node.dtype
            vt = _value_ctype(d)
            get = f"{expr} != 0" if d.kind == "b" else expr
            put = "(uint8_t)(value != 0)" if d.kind == "b" else "value"
            emit(vt, "get", 0, path, idx, f"return {get};", False)
            emit("void", "set", 0, path, idx + [f"{vt} value"], f"{expr} = {put};", True)
            emit(tgt.pointer(_member_ctype(d)), "getp", k, path, idx, f"return &{expr};", True)
        elif kind in ("string", "bytes"):
            emit("ck_str", "get", 0, path, idx, f"return {expr};", False)
            emit("int64_t", "len", k, path, idx,
                 f"return (int64_t)({expr}.end - {expr}.begin);", False)
            emit(tgt.pointer("ck_str"), "getp", k, path, idx, f"return &{expr};", True)
        elif kind == "struct":
            if path:
                emit(tgt.pointer(node.name), "getp", k, path, idx, f"return &{expr};", True)
            for fname, _, child in node.fields:
                walk(child, path + [fname], f"{label}.{fname}", f"{expr}.{fname}", k)
        elif kind == "fixed":
            first = expr
            inner = node
            while inner.kind == "fixed":
                first += "[0]"
                inner = inner.element
            unused = "".join(f"(void)i{j}; " for j in range(k))
            emit("int64_t", "len", k, path, idx, f"(void)obj; {unused}return {node.count};",
                 False)
            emit(tgt.pointer(lay.ctype(node)), "getp", k, path, idx, f"return &{first};",
                 True)
            walk(node.element, path, f"{label}[i{k}]", f"{expr}[i{k}]", k + 1)
        elif kind == "var":
            view = lay.view_name(node.element)
            emit("int64_t", "len", k, path, idx, f"return (int64_t){expr}.size;", False)
            emit(tgt.pointer(view), "getp", k, path, idx, f"return &{expr};", True)
            walk(node.element, path, f"{label}[i{k}]", f"{expr}.data[i{k}]", k + 1)

    for fname, _, child in root.fields:
        walk(child, [fname], fname, f"obj->{fname}", 0)
    w.blank()


__all__ = ["c_api", "CHeader", "get_target", "CLayout", "TypeNode", "layout", "highlight_html"]
