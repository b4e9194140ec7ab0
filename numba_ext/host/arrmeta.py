"""What a host array's memory looks like, walked from Python: NumPy views of
raw memory (``numpy_view``, ``interface``), element types as NumPy dtypes
(``numpy_dtype``), the leading dims and struct fields of a type read from its
arrmeta (``numpy_dims``, ``struct_layout``), and the walks over var-dim slots
(``count_elements``, ``clear_var_slots``).

Everything here works on ``(type, data address, arrmeta address)``; nothing
here makes or owns an array (:mod:`ckernels.host.array` does).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import types as _t
from .._native import check, ffi, lib
from ..errors import CKTypeError
from ..types import Type

DIM_AM = ffi.sizeof("ck_dim_arrmeta")
VAR_AM = ffi.sizeof("ck_var_dim_arrmeta")
PTR_AM = ffi.sizeof("ck_pointer_arrmeta")
_FIXED, _STRIDED, _VAR = lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM, lib.CK_TYPE_VAR_DIM
_STRING, _BYTES, _STRUCT, _POINTER = (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES,
                                      lib.CK_TYPE_STRUCT, lib.CK_TYPE_POINTER)
_STRING_DTYPE = np.dtypes.StringDType()


def _addr(p) -> int:
    return int(ffi.cast("uintptr_t", p))


def _ptr(addr: int):
    return ffi.cast("char *", addr)


def numpy_dtype(el: Type) -> np.dtype:
    """The NumPy dtype of elements of type ``el`` (a non-dim type): builtin
    scalars their own, ``string`` ``StringDType()``, structs of NumPy-
    representable fields a structured (aligned) dtype; everything else
    (structs holding strings or var dims, bytes, pointers) ``object``: such
    values become Python objects (``dict``, ``bytes``) in NumPy."""
    key = _addr(el.c_type) if el.is_builtin else str(el)
    dt = _NP_DTYPES.get(key)
    if dt is None:
        tid = el.type_id
        if el.is_builtin:
            dt = _t.builtin_numpy_dtype(el)
        elif tid == _STRING:
            dt = _STRING_DTYPE
        else:
            try:
                dt = el.to_numpy_dtype()
            except CKTypeError:
                dt = np.dtype(object)
        if len(_NP_DTYPES) < 4096:
            _NP_DTYPES[key] = dt
    return dt


_NP_DTYPES: dict = {}


class _Interface:
    """A one-off ``__array_interface__`` exporter; NumPy keeps it as the base
    of the view, and it keeps ``owner`` (whatever owns the memory) alive."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, addr, shape, strides, dtype, readonly, owner):
        self.owner = owner
        self.__array_interface__ = interface(addr, shape, strides, dtype, readonly)


def interface(addr, shape, strides, dtype, readonly) -> dict:
    return {"version": 3, "data": (addr, readonly), "shape": tuple(shape),
            "strides": tuple(strides), "typestr": dtype.str,
            "descr": dtype.descr if dtype.fields is not None else [("", dtype.str)]}


def numpy_view(addr, shape, strides, dtype, readonly, owner) -> np.ndarray:
    a = np.asarray(_Interface(addr, shape, strides, dtype, readonly, owner))
    if a.dtype != dtype and dtype.fields is not None:
        # NumPy reads the padding of an aligned struct's descr back as a
        # field ('f1', V4): the struct's own dtype, as NumPy's arrays have it
        a = a.view(dtype)
    return a


def struct_layout(t: Type):
    """[(name, type, arrmeta offset)] of a struct; data offsets live in arrmeta."""
    out = []
    am_off = ffi.new("size_t *")
    for i, (name, ftype) in enumerate(t.fields):
        check(lib.ck_struct_field(t.c_type, i, ffi.NULL, ffi.NULL, ffi.NULL, am_off))
        out.append((name, ftype, am_off[0]))
    return out


def numpy_dims(t: Type, data: int, arrmeta: int, writable: bool = False):
    """A NumPy view of leading fixed/strided dims over a builtin dtype, or None."""
    shape, strides = [], []
    cur, am = t, arrmeta
    while cur.type_id in (_FIXED, _STRIDED):
        d = ffi.cast("ck_dim_arrmeta *", am)
        shape.append(d.size)
        strides.append(d.stride)
        cur, am = cur.element, am + DIM_AM
    dt = _t.builtin_numpy_dtype(cur)
    if dt is None:
        return None
    return numpy_view(data, shape, strides, dt, not writable, None)


def numpy_dims_struct(t, data, arrmeta, dt):
    shape, strides = [], []
    while t.type_id in (_FIXED, _STRIDED):
        d = ffi.cast("ck_dim_arrmeta *", arrmeta)
        shape.append(d.size)
        strides.append(d.stride)
        t, arrmeta = t.element, arrmeta + DIM_AM
    return numpy_view(data, shape, strides, dt, True, None)


def strided(dtype: Type, ndim: int) -> Type:
    t = dtype
    for _ in range(ndim):
        t = _t.strided_dim(t)
    return t


def dim_kinds(t: Type) -> list[int]:
    kinds = []
    while t.type_id in (_FIXED, _STRIDED, _VAR):
        kinds.append(t.type_id)
        t = t.element
    return kinds


def elem_id(a) -> int:
    """``ck_type_id`` of the element type of the C array ``a`` (no Type object)."""
    return lib.ck_type_id_of(lib.ck_type_dtype(lib.ck_array_type(a)))


def all_strided(a) -> bool:
    """Whether every dim of the C array ``a`` is a strided dim."""
    t = lib.ck_array_type(a)
    while True:
        tid = lib.ck_type_id_of(t)
        if tid != _STRIDED:
            return tid not in (_FIXED, _VAR)
        t = lib.ck_type_element(t)


def f_strides(shape, isz):
    st, acc = [], isz
    for s in shape:
        st.append(acc)
        acc *= max(s, 1)
    return st


def has_pointer(t: Type) -> bool:
    tid = t.type_id
    if tid == _POINTER:
        return True
    if t.is_dim:
        return has_pointer(t.element)
    if tid == _STRUCT:
        return any(has_pointer(ft) for _, ft in t.fields)
    return False


def has_var(t: Type) -> bool:
    while t.is_dim:
        if t.type_id == _VAR:
            return True
        t = t.element
    return False


def has_var_anywhere(t: Type) -> bool:
    """Whether data of type ``t`` holds var dim slots (in dims or structs)."""
    tid = t.type_id
    if tid == _VAR:
        return True
    if tid in (_FIXED, _STRIDED):
        return has_var_anywhere(t.element)
    if tid == _STRUCT:
        return any(has_var_anywhere(ft) for _, ft in t.fields)
    return False


def count_elements(t: Type, data: int, arrmeta: int) -> int:
    """Elements of data of type ``t`` (dims expanded, var dims counted)."""
    tid = t.type_id
    if tid in (_FIXED, _STRIDED):
        am = ffi.cast("ck_dim_arrmeta *", arrmeta)
        if not has_var(t.element):
            return am.size * count_elements(t.element, data, arrmeta + DIM_AM) if am.size \
                else 0
        return builtins.sum(count_elements(t.element, data + i * am.stride, arrmeta + DIM_AM)
                            for i in range(am.size))
    if tid == _VAR:
        am = ffi.cast("ck_var_dim_arrmeta *", arrmeta)
        d = ffi.cast("ck_var_dim_data *", data)
        if not d.size:
            return 0
        if not has_var(t.element):
            return d.size * count_elements(t.element, data, arrmeta + VAR_AM)
        base = _addr(d.begin) + am.offset
        return builtins.sum(count_elements(t.element, base + i * am.stride, arrmeta + VAR_AM)
                            for i in range(d.size))
    return 1


def clear_var_slots(t: Type, data: int, arrmeta: int, shape: tuple, strides: tuple) -> None:
    """Set every outermost var dim slot in data of type ``t`` (repeated over
    the outer ``shape``/``strides``) to ``{NULL, 0}`` (unallocated)."""
    tid = t.type_id
    if tid in (_FIXED, _STRIDED):
        am = ffi.cast("ck_dim_arrmeta *", arrmeta)
        clear_var_slots(t.element, data, arrmeta + DIM_AM, shape + (am.size,),
                         strides + (am.stride,))
    elif tid == _VAR:
        if math.prod(shape):
            numpy_view(data, shape + (2,), strides + (8,), np.dtype(np.uint64), False,
                        None)[...] = 0
    elif tid == _STRUCT:
        offsets = ffi.cast("uintptr_t *", arrmeta)
        for i, (_, ft, am_off) in enumerate(struct_layout(t)):
            if has_var_anywhere(ft):
                clear_var_slots(ft, data + offsets[i], arrmeta + am_off, shape, strides)
