"""Generated C APIs for typed data, and the sources of hand-written kernels.

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
(:func:`layout`); the text is that layout rendered for a :class:`CTarget`
(:meth:`CLayout.render`).  :func:`kernel_program`
prepares a hand-written kernel source for a target (the generated API, the
kernels' prototypes, the loop annotation, entry points); building and
launching it is :mod:`ckernels.context.kernels`' business.
"""

from __future__ import annotations

import hashlib
import re
from typing import Iterable, Mapping

from . import dtypes
from ._native import check, ffi, layout_row, lib
from .errors import CompileError, CKTypeError, InvalidArgumentError, NotSupportedError
from .types import Type, as_type

# ------------------------------------------------------------------- targets --


class CTarget:
    """How one target's C reads: qualifiers, the work-item index, assertions.

    ``name``          ``"c"``, ``"opencl"`` or ``"cuda"``
    ``title``         the language, for comments and messages
    ``function``      qualifiers of accessors and helper functions
    ``kernel``        qualifiers of a kernel function written by the user
    ``space``         the address space of pointers into kernel arguments
    ``index``         C expression of the work item's index (devices)
    """

    def __init__(self, name, title, function, kernel, space, index):
        self.name = name
        self.title = title
        self.function = function
        self.kernel = kernel
        self.space = space
        self.index = index

    @property
    def device(self) -> bool:
        return self.name != "c"

    def pointer(self, ctype: str, const: bool = False) -> str:
        """``ctype *`` with the target's address space (and ``const``)."""
        return f"{self.space + ' ' if self.space else ''}{'const ' if const else ''}{ctype} *"

    def __repr__(self) -> str:
        return f"<ckernels.capi target {self.name!r} ({self.title})>"


TARGETS = {
    "c": CTarget("c", "C", "static inline", "static", "", None),
    "opencl": CTarget("opencl", "OpenCL C", "static inline", "static", "__global",
                      "get_global_id(0)"),
    # not `static`: NVRTC warns about every unreferenced static function
    "cuda": CTarget("cuda", "CUDA C++", "__device__ inline", "static __device__", "",
                    "blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x"),
}


def get_target(name) -> CTarget:
    """The :class:`CTarget` called ``name`` (``"c"``, ``"opencl"``, ``"cuda"``)."""
    if isinstance(name, CTarget):
        return name
    t = TARGETS.get(name)
    if t is None:
        raise InvalidArgumentError(f"c_api: unknown target {name!r} (targets: "
                                   f"{', '.join(map(repr, TARGETS))})")
    return t


# Words no generated name may be: C11, C++ (CUDA) and OpenCL C keywords.
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

    def __init__(self, types, tgt: CTarget):
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
        return (f"<ckernels.CHeader for {TARGETS[self.target].title}: {names} "
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
    w.line(f"/* C API of ckernels types for {tgt.title}, generated by ckernels.c_api.")
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
        w.line(f"/* <stdint.h> names in {tgt.title} */")
        for d in dtypes.BUILTINS:
            if d.kind in "iu":
                w.line(f"typedef {d.c_type(tgt.name)} {d.cffi};")
    w.blank()
    w.line("/* Qualifiers of hand-written kernels (the same source on every target) */")
    w.line(f"#define CK_KERNEL {tgt.kernel}")
    w.line(f"#define CK_FUNC {tgt.function}")
    w.line(f"#define CK_GLOBAL{' ' + tgt.space if tgt.space else ''}")
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

    def __init__(self, tgt: CTarget):
        self.target = tgt

    def _emit(self, w, cond, label, message):
        t = self.target.name
        if t == "c":
            w.line(f'_Static_assert({cond}, "{message}");')
        elif t == "cuda":
            w.line(f'static_assert({cond}, "{message}");')
        else:
            w.line(f"typedef char ck_layout_{label}[({cond}) ? 1 : -1]; /* {message} */")

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
        proto = f"{tgt.function} {ret}{'' if ret.endswith('*') else ' '}{fname}({args})"
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


# ------------------------------------------------------ hand-written kernels --

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

    def param(self, tgt: CTarget) -> str:
        """The parameter as the user's kernel function declares it."""
        if self.array:
            space = "CK_GLOBAL " if tgt.space else ""
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
        return (f"<ckernels.capi.KernelProgram for {TARGETS[self.target].title}: "
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


def _loop_head(tgt: CTarget, index: str, bound: str) -> str:
    i = f"ck_{index}"
    if not tgt.device:
        return (f"for (int64_t {i} = 0; {i} < (int64_t)({bound}); {i}++) "
                f"{{ const int64_t {index} = {i};")
    # one trip per work item: `continue` ends the index on every target
    return (f"for (int64_t {i} = (int64_t)({tgt.index}); {i} < (int64_t)({bound}); "
            f"{i} = (int64_t)({bound})) {{ const int64_t {index} = {i};")


def _assemble(tgt: CTarget, header: CHeader, decls, user: str, filename: str) -> str:
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


def _entry(tgt: CTarget, d: KernelDecl) -> str:
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
    qual = "__kernel void" if tgt.name == "opencl" else 'extern "C" __global__ void'
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


__all__ = ["c_api", "CHeader", "CTarget", "TARGETS", "get_target", "CLayout", "TypeNode",
           "layout", "highlight_html", "ArgSpec", "KernelDecl", "KernelProgram",
           "kernel_program"]
