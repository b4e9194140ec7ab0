"""ckernel types: datashape-style type objects over the C type system.

>>> from ckernels import types
>>> t = types.parse("3 * var * string")
>>> str(t), t.ndim, t.dtype
('3 * var * string', 2, ckernels.types.string)
>>> types.parse("complex[float64]") == types.complex128
True

Builtin scalars (``types.int32``, ...) are encoded in the C type pointer and need
no reference counting; every other :class:`Type` owns one reference to its C
descriptor and drops it when garbage collected.
"""

from __future__ import annotations

import html
import re
import weakref
from typing import Iterable, Mapping

import numpy as np

from . import dtypes as _dtypes
from ._cargs import c_intp, c_size, c_text
from ._native import c_text_out, check, ffi, lib
from .errors import CKTypeError, InvalidArgumentError, ParseError

# Builtin ids (ck_type_id) -> (name, NumPy dtype, cffi C type), from the one table.
_BUILTINS = {d.type_id: (d.name, d.numpy, d.cffi) for d in _dtypes.BUILTINS}
_BY_DTYPE = {dt: tid for tid, (_, dt, _) in _BUILTINS.items()}

ID_NAMES = {
    lib.CK_TYPE_FIXED_DIM: "fixed_dim", lib.CK_TYPE_STRIDED_DIM: "strided_dim",
    lib.CK_TYPE_VAR_DIM: "var_dim", lib.CK_TYPE_STRING: "string",
    lib.CK_TYPE_BYTES: "bytes", lib.CK_TYPE_STRUCT: "struct",
    lib.CK_TYPE_POINTER: "pointer", lib.CK_TYPE_SYMBOLIC_DIM: "symbolic_dim",
    **{tid: name for tid, (name, _, _) in _BUILTINS.items()},
}


class Type:
    """A ckernel type (immutable, hashable, comparable)."""

    __slots__ = ("_t", "_finalizer", "__weakref__")

    def __new__(cls, spec: "str | Type | np.dtype | type") -> "Type":
        """``Type("3 * int32")``, ``Type(np.float64)``, or an existing Type."""
        return as_type(spec)

    @classmethod
    def _own(cls, ctype) -> "Type":
        """Wrap a C type, taking over one reference the caller owned."""
        self = object.__new__(cls)
        self._t = ctype
        self._finalizer = weakref.finalize(self, lib.ck_type_decref, ctype)
        return self

    @classmethod
    def _borrow(cls, ctype) -> "Type":
        """Wrap a borrowed C type (adds a reference of our own)."""
        lib.ck_type_incref(ctype)
        return cls._own(ctype)

    # ---- queries ---------------------------------------------------------
    @property
    def c_type(self):
        """The ``ck_type`` value (a cffi pointer), valid while self lives."""
        return self._t

    @property
    def id(self) -> str:
        """Kind of type: ``"int32"``, ``"fixed_dim"``, ``"string"``, ..."""
        return ID_NAMES.get(lib.ck_type_id_of(self._t), "invalid")

    @property
    def type_id(self) -> int:
        return lib.ck_type_id_of(self._t)

    @property
    def is_builtin(self) -> bool:
        return self.type_id in _BUILTINS

    @property
    def is_dim(self) -> bool:
        return self.type_id in (lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM,
                                lib.CK_TYPE_VAR_DIM, lib.CK_TYPE_SYMBOLIC_DIM)

    @property
    def is_pattern(self) -> bool:
        """Whether the type holds a dimension variable (``N * float64``): a
        pattern for signatures, which no array can have."""
        return bool(lib.ck_type_flags(self._t) & lib.CK_TYPE_FLAG_PATTERN)

    @property
    def dim_name(self) -> str | None:
        """The variable of a symbolic dim (``"N"`` of ``N * float64``), else None."""
        n = lib.ck_symbolic_dim_name(self._t)
        return None if n == ffi.NULL else ffi.string(n).decode()

    @property
    def data_size(self) -> int:
        return lib.ck_type_data_size(self._t)

    @property
    def data_alignment(self) -> int:
        return lib.ck_type_data_alignment(self._t)

    @property
    def arrmeta_size(self) -> int:
        return lib.ck_type_arrmeta_size(self._t)

    @property
    def ndim(self) -> int:
        """Number of leading dimensions."""
        return lib.ck_type_ndim(self._t)

    @property
    def element(self) -> "Type | None":
        """Element type of a dim (target of a pointer), else None."""
        e = lib.ck_type_element(self._t)
        return None if e == ffi.NULL else Type._borrow(e)

    @property
    def is_option(self) -> bool:
        """Whether the type is an option ``?T`` (a value of ``T`` or a null;
        Arrow's nullable).  ``N * ?int64`` is not: its :attr:`dtype` is."""
        return bool(lib.ck_type_is_option(self._t))

    @property
    def value_type(self) -> "Type":
        """``T`` of an option ``?T``; the type itself otherwise (polars'
        and Arrow's non-null value type)."""
        return self.element if self.is_option else self

    @property
    def dtype(self) -> "Type":
        """The innermost non-dimension type."""
        return Type._borrow(lib.ck_type_dtype(self._t))

    @property
    def fixed_size(self) -> int | None:
        n = lib.ck_fixed_dim_size(self._t)
        return None if n < 0 else n

    @property
    def fields(self) -> list[tuple[str, "Type"]]:
        """``[(name, type), ...]`` of a struct (empty for other types)."""
        out = []
        name = ffi.new("const char **")
        ftype = ffi.new("ck_type *")
        for i in range(lib.ck_struct_field_count(self._t)):
            check(lib.ck_struct_field(self._t, i, name, ftype, ffi.NULL, ffi.NULL))
            out.append((ffi.string(name[0]).decode(), Type._borrow(ftype[0])))
        return out

    def to_numpy_dtype(self) -> np.dtype:
        """The NumPy dtype of a builtin scalar or a struct of them."""
        tid = self.type_id
        if tid in _BUILTINS:
            return _BUILTINS[tid][1]
        if tid == lib.CK_TYPE_STRUCT:
            names, formats, offsets = [], [], []
            off = ffi.new("size_t *")
            for i, (name, ftype) in enumerate(self.fields):
                check(lib.ck_struct_field(self._t, i, ffi.NULL, ffi.NULL, off, ffi.NULL))
                names.append(name)
                formats.append(ftype.to_numpy_dtype())
                offsets.append(off[0])
            return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                             "itemsize": self.data_size})
        if tid == lib.CK_TYPE_FIXED_DIM:
            return np.dtype((self.element.to_numpy_dtype(), (self.fixed_size,)))
        if tid in (lib.CK_TYPE_DATETIME, lib.CK_TYPE_TIMEDELTA):
            # the zone of an instant is a label: its data is UTC, NumPy's too
            unit = ffi.string(lib.ck_time_unit_name(lib.ck_time_type_unit(self._t))).decode()
            return np.dtype(f"{'M' if tid == lib.CK_TYPE_DATETIME else 'm'}8[{unit}]")
        raise CKTypeError(f"type '{self}' has no NumPy dtype")

    # ---- protocol --------------------------------------------------------
    def __str__(self) -> str:
        return c_text_out(lib.ck_type_print, self._t)

    def __repr__(self) -> str:
        if self.is_builtin or self.type_id == lib.CK_TYPE_STRING:
            return f"ckernels.types.{self}"
        return f"ckernels.types.Type({str(self)!r})"

    def _repr_html_(self) -> str:
        rows = [("type", str(self)), ("kind", self.id), ("data size", self.data_size),
                ("alignment", self.data_alignment), ("arrmeta size", self.arrmeta_size)]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>"
                       f"<code>{html.escape(str(v))}</code></td></tr>" for k, v in rows)
        return f"<table><caption>ckernels.types.Type</caption>{body}</table>"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Type):
            try:
                other = as_type(other)
            except (CKTypeError, InvalidArgumentError, ValueError, TypeError):
                return NotImplemented
        return bool(lib.ck_type_equal(self._t, other._t))

    def __hash__(self) -> int:
        return hash(lib.ck_type_hash(self._t))

    def __reduce__(self):
        return (parse, (str(self),))


def parse(text: str) -> Type:
    """Parse a datashape type string (see docs/type-grammar.md)."""
    if not isinstance(text, str):
        raise CKTypeError(f"type string must be str, not {type(text).__name__}")
    data = c_text(text, "type string", error=ParseError)
    out = ffi.new("ck_type *")
    check(lib.ck_type_parse_n(data, len(data), out))
    t = Type._own(out[0])
    if "tz=" in text:
        for zone in _ZONE_RE.findall(str(t)):
            check_time_zone(zone)
    return t


_ZONE_RE = re.compile(r"tz='([^']*)'")
_KNOWN_ZONES: set = {"UTC"}


def check_time_zone(zone: str) -> None:
    """Refuse a time zone name the zone database does not know (the C core
    checks its spelling only): ``ValueError`` (:class:`ParseError`) naming
    it.  Fixed offsets (``+05:30``) are zones too, as in Arrow."""
    if zone in _KNOWN_ZONES:
        return
    import zoneinfo
    if re.fullmatch(r"[+-]\d\d:\d\d", zone) is None:
        try:
            zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ParseError(f"unknown time zone '{zone}' (not in the zone database, "
                             "not an offset like +05:30)") from None
    if len(_KNOWN_ZONES) < 1024:
        _KNOWN_ZONES.add(zone)


def as_type(spec) -> Type:
    """A :class:`Type` from a Type, a type string, or a NumPy dtype-like."""
    if isinstance(spec, Type):
        return spec
    if isinstance(spec, str):
        try:
            return parse(spec)
        except ParseError as exc:
            try:                    # a NumPy dtype string or code: "f4", "<i2", "d"
                dt = np.dtype(spec)
            except (TypeError, UnicodeError):   # not NumPy's either: the parse error
                raise exc from None
            return from_numpy_dtype(dt)
    try:
        dt = np.dtype(spec)
    except TypeError:
        raise CKTypeError(f"cannot make a ckernel type from {spec!r}") from None
    return from_numpy_dtype(dt)


def from_numpy_dtype(dt: np.dtype) -> Type:
    """The ckernel type of a NumPy dtype (builtins and aligned structs)."""
    dt = np.dtype(dt)
    if dt.byteorder == ">" or (dt.byteorder == "=" and not dt.isnative):
        raise CKTypeError(f"NumPy dtype {dt} is not in native byte order")
    if dt.fields is not None:
        names = list(dt.names)
        st = struct({n: from_numpy_dtype(dt.fields[n][0]) for n in names})
        if st.to_numpy_dtype() != dt:
            raise CKTypeError(f"NumPy structured dtype {dt} is not laid out like a C "
                              "struct with natural alignment (use align=True)")
        return st
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        t = from_numpy_dtype(base)
        for n in reversed(shape):
            t = fixed_dim(n, t)
        return t
    if dt.kind in "Mm":
        return _time_of_numpy(dt)
    tid = _BY_DTYPE.get(dt.newbyteorder("="))
    if tid is None:
        raise unsupported_dtype(dt)
    return _builtin(tid)


#: NumPy's datetime64 / timedelta64 units that have a ckernel time unit
TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns")


def _time_of_numpy(dt: np.dtype) -> Type:
    """``datetime[unit=...]`` / ``timedelta[unit=...]`` of a native-order
    ``datetime64`` / ``timedelta64`` dtype with a plain unit."""
    unit, count = np.datetime_data(dt)
    if unit == "generic":
        raise unsupported_dtype(dt, f"a generic unit: give one, e.g. {dt.str[1:]}[s]")
    if count != 1 or unit not in TIME_UNITS:
        raise unsupported_dtype(dt, f"the unit {count if count != 1 else ''}{unit}; the time "
                                f"units are {', '.join(TIME_UNITS)}")
    kind = "datetime" if dt.kind == "M" else "timedelta"
    return parse(f"{kind}[unit='{unit}']")


#: what :func:`unsupported_dtype` says is supported
SUPPORTED_NUMPY = ("bool, int8-int64, uint8-uint64, float16/32/64, complex64/128, "
                   "str (U and StringDType: string), bytes (S and unstructured V: bytes), "
                   "datetime64/timedelta64 (Y to ns units: datetime/timedelta) "
                   "and aligned structured dtypes of those")
_KIND_NAMES = {"M": "datetime64", "m": "timedelta64", "O": "object", "V": "void"}


def unsupported_dtype(dt, why: str = "") -> CKTypeError:
    """The error for a NumPy dtype with no ckernel type (one message for every
    entry point: it names the dtype, ``why`` and what is supported)."""
    dt = np.dtype(dt)
    what = _KIND_NAMES.get(dt.kind, "")
    why = f" ({why})" if why else ""
    return CKTypeError(f"NumPy dtype {dt}{f' ({what})' if what and what not in str(dt) else ''}"
                       f" has no ckernel equivalent{why}; supported: {SUPPORTED_NUMPY}")


# ---- constructors ----------------------------------------------------------
#
# A constructor hands C the ``ck_type`` of each argument.  An argument given as
# a type string becomes a *new* Type that owns the only reference to its C
# type, so that Type object itself (not just its ``_t``) is what goes to
# :func:`_new`, which holds it until the C call has returned (the C
# constructor takes its own reference).

def _new(fn, *args) -> Type:
    """``fn(*args, &out)`` -> the new Type; :class:`Type` arguments are passed
    as their C types and stay alive (referenced by ``args``) across the call."""
    out = ffi.new("ck_type *")
    check(fn(*(a._t if isinstance(a, Type) else a for a in args), out))
    return Type._own(out[0])


def fixed_dim(size: int, element) -> Type:
    """``size * element``."""
    return _new(lib.ck_fixed_dim_type_new, c_intp(size, "fixed_dim: size", min=0),
                as_type(element))


def strided_dim(element) -> Type:
    """``strided * element`` (the size lives in the array's arrmeta)."""
    return _new(lib.ck_strided_dim_type_new, as_type(element))


def var_dim(element) -> Type:
    """``var * element`` (each element has its own size)."""
    return _new(lib.ck_var_dim_type_new, as_type(element))


def option(value) -> Type:
    """``?value``: a value of ``value`` or a null (``option(int64)`` is
    ``?int64``; an option stays itself)."""
    t = as_type(value)
    return t if t.is_option else _new(lib.ck_option_type_new, t)


def bytes_type(align: int = 1) -> Type:
    """``bytes[align]``: variable-length bytes aligned to ``align``."""
    return _new(lib.ck_bytes_type_new, c_size(align, "bytes_type: align"))


def pointer(target) -> Type:
    """``pointer[target]``."""
    return _new(lib.ck_pointer_type_new, as_type(target))


def struct(fields: "Mapping[str, object] | Iterable[tuple[str, object]]") -> Type:
    """``struct({"x": float64, "name": string})`` or a list of pairs."""
    items = list(fields.items() if isinstance(fields, Mapping) else fields)
    keep = [ffi.new("char[]", c_text(n, "struct field name")) for n, _ in items]
    ftypes = [as_type(t) for _, t in items]   # alive until the C call returns
    names = ffi.new("const char *[]", keep) if items else ffi.NULL
    tarr = ffi.new("ck_type[]", [t._t for t in ftypes]) if items else ffi.NULL
    return _new(lib.ck_struct_type_new, len(items), names, tarr)


def _builtin(tid: int) -> Type:
    return Type._own(ffi.cast("ck_type", tid))


bool_ = _builtin(lib.CK_TYPE_BOOL)
int8 = _builtin(lib.CK_TYPE_INT8)
int16 = _builtin(lib.CK_TYPE_INT16)
int32 = _builtin(lib.CK_TYPE_INT32)
int64 = _builtin(lib.CK_TYPE_INT64)
uint8 = _builtin(lib.CK_TYPE_UINT8)
uint16 = _builtin(lib.CK_TYPE_UINT16)
uint32 = _builtin(lib.CK_TYPE_UINT32)
uint64 = _builtin(lib.CK_TYPE_UINT64)
float16 = _builtin(lib.CK_TYPE_FLOAT16)
float32 = _builtin(lib.CK_TYPE_FLOAT32)
float64 = _builtin(lib.CK_TYPE_FLOAT64)
complex64 = _builtin(lib.CK_TYPE_COMPLEX64)
complex128 = _builtin(lib.CK_TYPE_COMPLEX128)
string = _new(lib.ck_string_type_new)

BUILTIN_TYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                 float16, float32, float64, complex64, complex128)


def builtin_numpy_dtype(t: Type) -> np.dtype | None:
    entry = _BUILTINS.get(t.type_id)
    return entry[1] if entry else None


def builtin_ctype(t: Type) -> str | None:
    """The cffi C type name used to read/write a builtin scalar directly."""
    entry = _BUILTINS.get(t.type_id)
    return entry[2] if entry else None


__all__ = ["Type", "parse", "as_type", "from_numpy_dtype", "fixed_dim", "strided_dim",
           "var_dim", "bytes_type", "pointer", "struct", "bool_", "int8", "int16",
           "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
           "float32", "float64", "complex64", "complex128", "string", "BUILTIN_TYPES"]



def __getattr__(name: str):
    # `types.bool` (like `np.bool`) without shadowing the builtin in this module.
    if name == "bool":
        return bool_
    raise AttributeError(f"module 'ckernels.types' has no attribute {name!r}")
