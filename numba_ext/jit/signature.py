"""Signatures of jitted functions, in ckernel element type names.

``"float64(float64, int64)"``, ``"string(string)"``, a Numba signature
(``numba.float64(numba.float64)``) or argument types only (the result is then
inferred) all become a :class:`Signature` of element type names from the one
table (:mod:`ckernels.dtypes`, rows with ``jit=True``) or struct types in the
type grammar (``"float64({x: float64, y: float64})"``,
:mod:`ckernels.jit.structs`).
"""

from __future__ import annotations

from .. import dtypes
from .._native import ffi, lib
from ..types import Type, as_type
from . import dims as _dims
from . import structs as _structs
from . import time_elements as _time

#: element types a jitted kernel may take and return
SUPPORTED_TYPES: tuple[str, ...] = tuple(d.name for d in dtypes.JIT)
#: most arguments of a jitted kernel (the lifting layer's limit,
#: CK_LIFT_MAX_NSRC: the length of ck_jit_kernel_desc.src_ids)
MAX_ARGS = dict(ffi.typeof("ck_jit_kernel_desc").fields)["src_ids"].type.length


class Signature:
    """A parsed signature: the result and argument element types by name
    (``ret``: None when the result is inferred; ``args``), resolved once into
    their element types (``ret_element``, ``arg_elements``: rows of
    :mod:`ckernels.dtypes` or :class:`~ckernels.jit.structs.StructType`, which
    have the same attributes: ``name``, ``kind`` -- ``"s"`` for ``string``,
    ``"V"`` for a struct --, ``size``, ``numpy``, ``numba``, ``type_id``), and
    on first use into library types (``ret_type``, ``arg_types``:
    :class:`ckernels.types.Type`, with their core dims).  Everything
    downstream asks the signature for these instead of resolving a name again.
    Equal, and hashed, by the names; unpacks as ``ret, args``."""

    __slots__ = ("ret", "args", "ret_element", "arg_elements", "_types")

    def __init__(self, ret: str | None, args):
        self.ret = ret
        self.args = tuple(args)
        self.ret_element = None if ret is None else element_type(ret)
        self.arg_elements = tuple(element_type(a) for a in self.args)
        self._types = None

    def _library_types(self) -> tuple:
        if self._types is None:    # parsed once (a race parses twice, equal results)
            self._types = (None if self.ret is None else as_type(self.ret),
                           tuple(as_type(a) for a in self.args))
        return self._types

    @property
    def ret_type(self) -> Type | None:
        """The library type of the result (None when it is inferred)."""
        return self._library_types()[0]

    @property
    def arg_types(self) -> tuple:
        """The library types of the arguments."""
        return self._library_types()[1]

    @property
    def arg_element_names(self) -> tuple:
        """The element type names of the arguments (a type with core dims: that
        of its elements)."""
        return tuple(e.name for e in self.arg_elements)

    @property
    def elements(self) -> tuple:
        """The argument element types, then the result's (when known)."""
        return self.arg_elements + (() if self.ret_element is None else (self.ret_element,))

    @property
    def numba_args(self) -> tuple:
        """The Numba types of the arguments."""
        return tuple(e.numba for e in self.arg_elements)

    @property
    def text(self) -> str:
        return f"{self.ret or '?'}({', '.join(self.args)})"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Signature({self.ret!r}, {self.args!r})"

    def __iter__(self):
        return iter((self.ret, self.args))

    def __eq__(self, other):
        if not isinstance(other, Signature):
            return NotImplemented
        return self.ret == other.ret and self.args == other.args

    def __hash__(self) -> int:
        return hash((self.ret, self.args))

    def __reduce__(self):
        return (Signature, (self.ret, self.args))


def type_name(spec, what: str, where: str) -> str:
    """Normalised element type name for a signature part (a type string, a
    :class:`ckernels.types.Type`, a NumPy dtype or a Numba type)."""
    if spec is str or (isinstance(spec, str) and spec.strip() == "str"):
        return "string"        # Python's name for it (NumPy's "str" is <U0, unsized)
    if not isinstance(spec, (str, Type)) and type(spec).__module__.startswith("numba"):
        d = dtypes.of_numba(spec) or _time.of_numba(spec)
        if d is not None:
            return d.name
    if isinstance(spec, str):    # `datetime[s]` / `timedelta[s]`: unit='s'
        spec = _time.normalize(spec)
    try:
        t = as_type(spec.strip() if isinstance(spec, str) else spec)
    except Exception as exc:  # parse errors, unknown names
        raise TypeError(f"ckernels.jit: bad {what} type {spec!r} in signature {where!r}: "
                        f"{exc}") from None
    got = _dictionary_value(t, what, where)
    if got is not None:        # `dictionary[I, V]`: the function runs on the values
        return got
    name = str(t)
    if t.is_option:            # `?T`: the function takes None or a value (docs/nulls.md)
        value = t.value_type
        if value.is_dim:       # `?var * T`: null-able rows (ckernels.jit.dims)
            return _dims.signature_type(t, what, where)
        if value.is_option or not supported(str(value)):
            raise TypeError(f"ckernels.jit: unsupported {what} type '{name}' in signature "
                            f"{where!r}; option types are ?T for an element type T "
                            f"({', '.join(SUPPORTED_TYPES)})")
        return name
    if t.is_dim:               # core dims: ckernels.jit.dims
        return _dims.signature_type(t, what, where)
    if t.type_id == _structs.STRUCT_ID:
        try:
            st = _structs.element(t)
        except Exception as exc:
            raise TypeError(f"ckernels.jit: unsupported {what} type '{name}' in signature "
                            f"{where!r}: {exc}") from None
        if st.views and not st.strings and what == "result":
            raise TypeError(f"ckernels.jit: unsupported result type '{name}' in signature "
                            f"{where!r}: struct results hold numbers, bool, strings, nested "
                            "structs and fixed dims (var dims inside structs are arguments "
                            "only)")
        return st.name
    if not supported(name):
        raise TypeError(f"ckernels.jit: unsupported {what} type '{name}' in signature "
                        f"{where!r}; element types are {', '.join(SUPPORTED_TYPES)}, "
                        f"{TIME_TYPES}")
    return name


def _dictionary_value(t: Type, what: str, where: str) -> str | None:
    """For ``dictionary[I, V]`` (``?dictionary[I, V]``) the element type name
    the function is compiled for: ``V`` (``?V``).  A call with a dictionary
    column runs the function once per value of its dictionary
    (:func:`ckernels.host.dictionary.per_value`); None for other types."""
    opt = t.is_option
    d = t.value_type if opt else t
    if d.is_dim or not lib.ck_type_is_dictionary(d.c_type):
        return None
    if what == "result":
        raise TypeError(f"ckernels.jit: unsupported result type '{t}' in signature {where!r}: "
                        "name the value type (a string result over a dictionary column "
                        "stays dictionary-encoded by itself)")
    value = Type._borrow(lib.ck_dictionary_value_type(d.c_type))
    name = type_name(value, what, where)
    if name.startswith("?") or _dims.is_dimensioned(name):
        raise TypeError(f"ckernels.jit: unsupported {what} type '{t}' in signature {where!r}: "
                        "dictionary values are element types")
    return f"?{name}" if opt else name


#: the time element types, as error messages list them (ckernels.jit.time_elements)
TIME_TYPES = "datetime[unit=...] and timedelta[unit=...] (NumPy's units Y..ns)"


def supported(name: str) -> bool:
    """Whether an element type name (no dims, no struct) is one a jitted
    function takes: a row of the table or an instant / duration."""
    return name in SUPPORTED_TYPES or _time.is_time_name(name)


class OptionElement:
    """The element type ``?T`` of a null-aware signature: the value type's
    row (its ``kind``, ``size``, ``type_id``, ...) with the name ``?T`` and
    Numba's ``Optional(T)`` as ``numba`` (the function gets None or a
    value); ``value`` is the row of T."""

    __slots__ = ("value", "name")
    option = True

    def __init__(self, value):
        self.value = value
        self.name = f"?{value.name}"

    @property
    def numba(self):
        from numba.core import types
        return types.Optional(self.value.numba)

    def __getattr__(self, attr):
        return getattr(self.value, attr)

    def __repr__(self) -> str:
        return f"OptionElement({self.value.name})"


def element_type(name: str):
    """The table row (:mod:`ckernels.dtypes`) of an element type name, or the
    :class:`~ckernels.jit.structs.StructType` of a struct type string; for a
    type with core dims (:mod:`ckernels.jit.dims`), that of its elements;
    for ``?T``, an :class:`OptionElement`."""
    d = dtypes.by_name.get(name)
    if d is not None:
        return d
    if _dims.is_dimensioned(name):    # `?var * T` too: T's
        return element_type(_dims.element_name(name))
    if name.startswith("?"):
        return OptionElement(element_type(name[1:]))
    t = _time.of_name(name)
    if t is not None:
        return t
    return _structs.element(name)


def is_struct(name: str) -> bool:
    """Whether an element type name of a signature is a struct type."""
    return _structs.is_struct_name(name)


def _struct_end(text: str) -> int:
    """Where a leading struct type (``{...}``) of a signature ends (0: none)."""
    if not text.startswith("{"):
        return 0
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return i
    return 0


def _split_args(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    elif parts:
        raise TypeError("ckernels.jit: empty argument in signature")
    return parts


def parse_signature(sig) -> Signature:
    """``"float64(float64, int64)"`` (or a Numba signature object) -> Signature."""
    if isinstance(sig, Signature):
        return sig
    if isinstance(sig, str):
        text = sig.strip()
        i = text.find("(", _struct_end(text))
        if i <= 0 or not text.endswith(")"):
            raise TypeError(f"ckernels.jit: bad signature {sig!r}; expected "
                            "'result(arg, ...)', e.g. 'float64(float64, float64)'")
        ret = type_name(text[:i], "result", sig)
        args = tuple(type_name(a, "argument", sig) for a in _split_args(text[i + 1:-1]))
    elif hasattr(sig, "return_type") and hasattr(sig, "args"):  # numba Signature
        if sig.return_type is None:
            ret = None
        else:
            ret = type_name(sig.return_type, "result", str(sig))
        args = tuple(type_name(a, "argument", str(sig)) for a in sig.args)
    else:
        raise TypeError(f"ckernels.jit: a signature must be a string like "
                        f"'float64(float64)', not {sig!r}")
    if len(args) > MAX_ARGS:
        raise TypeError(f"ckernels.jit: at most {MAX_ARGS} arguments, signature {sig!r} "
                        f"has {len(args)}")
    if "*" in "".join(args) + (ret or ""):
        _dims.check_signature(ret, args, str(sig))
    return Signature(ret, args)


def argument_signature(arg_types, where) -> Signature:
    """Argument types only (the result is inferred when compiling)."""
    return Signature(None, tuple(type_name(a, "argument", str(where)) for a in arg_types))


def is_option(name: str) -> bool:
    """Whether a signature part is an option type ``?T`` (null-aware)."""
    return name.startswith("?")


__all__ = ["OptionElement", "is_option", "Signature", "parse_signature", "type_name", "element_type", "is_struct",
           "argument_signature", "SUPPORTED_TYPES", "TIME_TYPES", "supported", "MAX_ARGS"]
