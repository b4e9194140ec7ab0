"""Struct element types of jitted functions: the one place the jit learns a
struct's layout.

A signature may name struct types in the type grammar's spelling
(``"float64({x: float64, y: float64})"``, ``"{x: float64, y: float64}(float64,
float64)"``); nested structs and fixed dims inside structs are fields like any
other.  :func:`element` turns the canonical type string into a
:class:`StructType`, which stands in for a :mod:`ckernels.dtypes` row wherever
the jit needs one (``name``, ``type_id``, ``size``, ``numpy``, ``numba``).

On the CPU an argument of struct type is Numba's own ``Record`` type, made
from the struct's NumPy structured dtype with the library's field offsets
(``ck_struct_field``, through :meth:`ckernels.types.Type.to_numpy_dtype`) and
checked against them field by field: a Record is passed as a pointer to the
element's data, which is exactly what a ckernel entry point receives, and
Numba lowers ``p.x``, ``p.pos.x`` and ``p.v[1]`` to loads at those offsets.
A struct *result* is written field by field from what the function returns:
a tuple with one item per field in field order (nested tuples for nested
structs and fixed dims), a namedtuple whose field names are the struct's
(matched by name), or a struct value of the same type (copied).

A struct holding ``string`` fields or ``var`` dims is, on the CPU, a
:class:`ckernels._numba.structview.CkViewRecord` (a Record whose view fields
read as the existing ``CkString`` / var-dim array views); devices refuse
them.  A struct *result* may hold strings (not var dims): each string field's
text goes into that field's arena of the destination
(:func:`ckernels.jit.cpu_codegen.struct_string_storer`).

Devices use the same types: the emitter declares the struct typedefs of
:func:`ckernels.c_api` for its target (:mod:`ckernels.jit.c_emit`).
"""

from __future__ import annotations

import functools

import numpy as np

from .._native import check, ffi, lib
from ..errors import CKTypeError, NotSupportedError
from ..types import Type, as_type

STRUCT_ID = lib.CK_TYPE_STRUCT
_FIXED_ID = lib.CK_TYPE_FIXED_DIM
_VAR_ID = lib.CK_TYPE_VAR_DIM
_STRING_ID = lib.CK_TYPE_STRING


def is_struct_name(name) -> bool:
    """Whether a signature part names a struct type (``"{...}"``)."""
    return isinstance(name, str) and name.lstrip().startswith("{")


def _offsets(t: Type) -> list[int]:
    """The library's field offsets of struct ``t`` (``ck_struct_field``)."""
    off = ffi.new("size_t *")
    out = []
    for i in range(lib.ck_struct_field_count(t._t)):
        check(lib.ck_struct_field(t._t, i, ffi.NULL, ffi.NULL, off, ffi.NULL))
        out.append(off[0])
    return out


def _aligned_dtype(t: Type) -> np.dtype:
    """The aligned NumPy dtype of a struct of builtins, fixed dims and structs,
    with the library's offsets (``ck_struct_field``) and size."""
    if t.is_builtin:
        return t.to_numpy_dtype()
    tid = t.type_id
    if tid == _FIXED_ID:
        shape = []
        e = t
        while e.type_id == _FIXED_ID:
            shape.append(e.fixed_size)
            e = e.element
        return np.dtype((_aligned_dtype(e), tuple(shape)))
    if tid == STRUCT_ID:
        fields = t.fields
        return np.dtype({"names": [n for n, _ in fields],
                         "formats": [_aligned_dtype(ft) for _, ft in fields],
                         "offsets": _offsets(t),            # the library's offsets and size
                         "itemsize": t.data_size}, align=True)
    if tid in (_STRING_ID, _VAR_ID):
        # the two words of a ck_string {begin, end} / ck_var_dim_data {begin, size}:
        # NumPy cannot hold such a field, the dtype only carries the layout
        return np.dtype([("begin", np.intp), ("end" if tid == _STRING_ID else "size", np.intp)],
                        align=True)
    raise NotSupportedError(f"'{t}' inside a struct")


def _check_fields(t: Type, where: str) -> bool:
    """Check the fields of a jitted struct type; True when it holds views
    (``string`` fields or ``var`` dims of numbers / strings, at any nesting
    level), which only the CPU reads."""
    tid = t.type_id
    if t.is_builtin:
        return False
    if tid == _STRING_ID:
        return True
    if tid == STRUCT_ID:
        if not t.fields:
            raise NotSupportedError(f"ckernels.jit: {where} is an empty struct")
        views = False
        for n, ft in t.fields:
            views |= _check_fields(ft, f"{where}.{n}")
        return views
    if tid == _FIXED_ID:
        if t.fixed_size == 0:
            raise NotSupportedError(f"ckernels.jit: {where} is '{t}': a dim of size 0")
        if _check_fields(t.element, where):
            raise NotSupportedError(
                f"ckernels.jit: {where} is '{t}'; fixed dims inside jitted structs hold "
                "numbers, bool and structs of those (not strings or var dims)")
        return False
    if tid == _VAR_ID:
        e = t.element
        if not (e.is_builtin or e.type_id == _STRING_ID):
            raise NotSupportedError(
                f"ckernels.jit: {where} is '{t}'; a var dim inside a jitted struct holds "
                "numbers, bool or strings")
        return True
    raise NotSupportedError(
        f"ckernels.jit: {where} is '{t}'; fields of jitted struct types are numbers, bool, "
        "strings, nested structs, fixed dims and var dims (of numbers or strings)")


def _has_var(t: Type) -> bool:
    """Whether struct ``t`` holds a var dim at any nesting level."""
    tid = t.type_id
    if tid == _VAR_ID:
        return True
    if tid == STRUCT_ID:
        return any(_has_var(ft) for _, ft in t.fields)
    if tid == _FIXED_ID:
        return _has_var(t.element)
    return False


class StructType:
    """A struct element type of the jit (stands in for a ``dtypes`` row)."""

    __slots__ = ("name", "type", "size", "alignment", "numpy", "_numba", "views", "strings")
    kind = "V"
    jit = True
    builtin = False
    type_id = STRUCT_ID

    def __init__(self, t: Type):
        self.type = t
        self.name = str(t)
        #: True when the struct holds strings or var dims (CPU arguments only)
        self.views = _check_fields(t, "struct field")
        #: True when the struct holds strings and no var dims: a result whose
        #: string fields are written into the destination's arenas (one per
        #: field: ckernel/jit.h, ck_jit_struct_kernel)
        self.strings = self.views and not _has_var(t)
        self.size = t.data_size
        self.alignment = t.data_alignment
        self.numpy = _aligned_dtype(t)
        if self.numpy.itemsize != self.size:
            raise CKTypeError(f"ckernels.jit: struct '{t}': NumPy itemsize "
                              f"{self.numpy.itemsize} != the library's size {self.size}")
        self._numba = None

    @property
    def numba(self):
        """Numba's ``Record`` type over the library's layout (checked)."""
        if self._numba is None:
            if self.views:
                from .._numba.structview import view_record
                rec = view_record(self.type, self.numpy)
            else:
                from numba.np import numpy_support
                rec = numpy_support.from_dtype(self.numpy)
            _check_record(rec, self.type, self.name)
            self._numba = rec
            _BY_RECORD.setdefault(rec, self)
        return self._numba

    @property
    def c_name(self) -> str:
        """The typedef name of this struct in device C (deterministic: the
        same type has the same name in every program)."""
        if self.views:
            raise NotSupportedError(
                f"ckernels.jit: struct '{self.name}' holds strings or var dims; on devices "
                "jitted structs hold numbers, bool, nested structs and fixed dims (their data "
                "would point into host arenas)")
        return c_name(self.type)

    def __repr__(self) -> str:
        return f"<ckernels.jit struct {self.name}>"


def c_name(t: Type) -> str:
    """``JitStruct_<hash>``: the typedef name of struct type ``t`` in emitted
    device code."""
    import hashlib
    return "JitStruct_" + hashlib.sha1(str(t).encode()).hexdigest()[:10]


#: Numba Record -> StructType (every Record made here, nested ones included)
_BY_RECORD: dict = {}


def of_record(rec) -> StructType:
    """The :class:`StructType` of a Numba Record made by :attr:`StructType.numba`
    (nested records included)."""
    st = _BY_RECORD.get(rec)
    if st is None:
        raise NotSupportedError(f"ckernels.jit: the record type {rec} is not a struct of a "
                                "jit signature")
    return st


def _check_record(rec, t: Type, where: str) -> None:
    """Numba's Record offsets and size are the library's (every level)."""
    from numba.core import types as nt
    if rec.size != t.data_size:
        raise CKTypeError(f"ckernels.jit: Numba's record of '{where}' has size {rec.size}, "
                          f"the library's is {t.data_size}")
    for (n, ft), off in zip(t.fields, _offsets(t)):
        if rec.offset(n) != off:
            raise CKTypeError(f"ckernels.jit: field {where}.{n} is at offset "
                              f"{rec.offset(n)} in Numba's record, {off} in the library")
        sub = rec.typeof(n)
        while isinstance(sub, nt.NestedArray):
            sub = sub.dtype
            while ft.type_id == _FIXED_ID:
                ft = ft.element
        if isinstance(sub, nt.Record):
            _check_record(sub, ft, f"{where}.{n}")
            _BY_RECORD.setdefault(sub, element(ft))


@functools.lru_cache(maxsize=256)
def _element(name: str) -> StructType:
    return StructType(as_type(name))


def element(spec) -> StructType:
    """The :class:`StructType` of a struct type (a type string, a
    :class:`ckernels.types.Type` or an aligned NumPy structured dtype)."""
    t = spec if isinstance(spec, Type) else as_type(spec)
    if t.type_id != STRUCT_ID:
        raise CKTypeError(f"ckernels.jit: '{t}' is not a struct type")
    return _element(str(t))


__all__ = ["StructType", "element", "of_record", "c_name", "is_struct_name", "STRUCT_ID"]
