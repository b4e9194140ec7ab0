"""The arguments of a hand-written kernel call, checked before anything
runs (see :mod:`ckernels.user_kernels.build`): bound to the declared names;
host arrays (``ckernels.Array``, NumPy arrays) on the CPU and device arrays
of the context elsewhere, C-contiguous with exactly the declared element type
and default element layout; sizes fixed by the declaration; scalars converted
to the declared type (integers range-checked, no float for an integer, no
number for a bool)."""

from __future__ import annotations

import numpy as np

from .._native import ffi as _ffi
from .._native import lib
from ..errors import CKOverflowError, CKTypeError, InvalidArgumentError
from ..host.array import Array, asarray
from ..types import Type
from ..device.array import DeviceArray, StructElement
from .source import KernelDecl

_DIM_AM = _ffi.sizeof("ck_dim_arrmeta")
_VAR_AM = _ffi.sizeof("ck_var_dim_arrmeta")
_FIXED, _STRIDED, _VAR = lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM, lib.CK_TYPE_VAR_DIM
_STRUCT = lib.CK_TYPE_STRUCT


def bind(decl: KernelDecl, args, kwargs) -> list:
    names = [a.name for a in decl.args]
    if len(args) > len(names):
        raise CKTypeError(f"{decl.name}() takes {len(names)} arguments ({', '.join(names)}), "
                          f"{len(args)} given")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise CKTypeError(f"{decl.name}() has no argument {k!r} ({decl.signature()})")
        if k in values:
            raise CKTypeError(f"{decl.name}() got argument {k!r} twice")
        values[k] = v
    missing = [n for n in names if n not in values]
    if missing:
        raise CKTypeError(f"{decl.name}() is missing {', '.join(map(repr, missing))} "
                          f"({decl.signature()})")
    return [values[n] for n in names]


def check_size(decl, spec, c, converted) -> None:
    """An array whose spec fixes its size (``T[n]``, ``T[3]``) has that many
    elements."""
    n = spec.size
    what = str(n)
    if isinstance(n, str):
        n = int(converted[[a.name for a in decl.args].index(spec.size)])
        what = f"{spec.size} = {n}"
    count = c.size if isinstance(c, DeviceArray) else int(np.prod(c[1].shape, dtype=np.int64))
    if count != n:
        raise InvalidArgumentError(f"{decl.name}(): argument '{spec.name}' ({spec.text}) has "
                                   f"{count} elements, it must have {what}")


def _describe(spec) -> str:
    if spec.node is not None:
        return f"'{spec.type_name}' = {spec.node.type}"
    return spec.type_name


def host_array(decl, spec, value) -> tuple[int, object]:
    """``(data address, owner)`` of a host array argument, checked."""
    where = f"{decl.name}(): argument '{spec.name}' ({spec.text})"
    if isinstance(value, DeviceArray):
        raise InvalidArgumentError(f"{where} is a device array of {value.context.describe()}, "
                                   "but this kernel runs on the CPU: copy it to the host first")
    if isinstance(value, np.ndarray):
        try:
            arr = asarray(value)
        except CKTypeError as exc:
            raise CKTypeError(f"{where}: {exc}") from None
    elif isinstance(value, Array):
        arr = value
    else:
        raise CKTypeError(f"{where} must be an array (ckernels.Array or NumPy array), not "
                          f"{type(value).__name__}")
    t = arr.type
    kinds = []
    while t.type_id in (_FIXED, _STRIDED, _VAR):
        kinds.append(t.type_id)
        t = t.element
    if _VAR in kinds:
        raise CKTypeError(f"{where}: an array of type '{arr.type}' has var dims; kernel "
                          "arrays are C-contiguous over fixed/strided dims")
    if t != spec.element_type:
        raise CKTypeError(f"{where}: elements of type '{t}', the kernel takes "
                          f"{_describe(spec)}")
    shape, strides = arr.shape, arr.strides
    if not _contiguous(shape, strides, t.data_size):
        raise InvalidArgumentError(f"{where} is not C-contiguous (shape {shape}, strides "
                                   f"{strides}); pass a contiguous copy")
    problem = _non_default(t, arr._arrmeta + _DIM_AM * len(shape))
    if problem:
        raise InvalidArgumentError(f"{where}: the elements are a view ({problem}); the C API "
                                   "addresses elements laid out as their type says: pass a copy")
    if not spec.const and not arr.writable:
        raise InvalidArgumentError(f"{where} is read-only; declare it 'const {spec.type_name}[]' "
                                   "if the kernel only reads it")
    return arr._data, arr


def _contiguous(shape, strides, itemsize) -> bool:
    """C order (as NumPy decides: the stride of a dim of size 1 does not
    matter, an empty array is contiguous)."""
    if 0 in shape:
        return True
    acc = itemsize
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != acc:
            return False
        acc *= n
    return True


def _non_default(t: Type, arrmeta: int) -> str | None:
    """What in an element's arrmeta differs from the layout of its type (struct
    data offsets, fixed dim strides, var dim strides and offsets), or None."""
    tid = t.type_id
    if tid == _STRUCT:
        offsets = _ffi.cast("uintptr_t *", arrmeta)
        ftype = _ffi.new("ck_type *")
        name = _ffi.new("const char **")
        off = _ffi.new("size_t *")
        am_off = _ffi.new("size_t *")
        for i in range(lib.ck_struct_field_count(t.c_type)):
            lib.ck_struct_field(t.c_type, i, name, ftype, off, am_off)
            fname = _ffi.string(name[0]).decode()
            if offsets[i] != off[0]:
                return f"field '{fname}' at data offset {offsets[i]}, not {off[0]}"
            inner = _non_default(Type._borrow(ftype[0]), arrmeta + am_off[0])
            if inner:
                return f"{fname}: {inner}"
        return None
    if tid == _FIXED:
        d = _ffi.cast("ck_dim_arrmeta *", arrmeta)
        el = t.element
        if d.stride != el.data_size:
            return f"a fixed dim with stride {d.stride}, not {el.data_size}"
        return _non_default(el, arrmeta + _DIM_AM)
    if tid == _VAR:
        d = _ffi.cast("ck_var_dim_arrmeta *", arrmeta)
        el = t.element
        if d.stride != el.data_size or d.offset != 0:
            return f"a var dim with stride {d.stride} and offset {d.offset}"
        return _non_default(el, arrmeta + _VAR_AM)
    return None


def device_array(decl, spec, value, ctx) -> DeviceArray:
    where = f"{decl.name}(): argument '{spec.name}' ({spec.text})"
    if not isinstance(value, DeviceArray):
        raise InvalidArgumentError(f"{where} must be a device array of {ctx.describe()}, not "
                                   f"{type(value).__name__}: copy it there with ctx.to(...)")
    if value.context != ctx:
        raise InvalidArgumentError(f"{where} lives in another context "
                                   f"({value.context.describe()}); copy it with ctx.to(...)")
    el = value.element
    t = el.type if isinstance(el, StructElement) else Type(el.name)
    if t != spec.element_type:
        raise CKTypeError(f"{where}: elements of type '{t}', the kernel takes "
                          f"{_describe(spec)}")
    if not value.is_contiguous:
        raise InvalidArgumentError(f"{where} is not C-contiguous (strides {value.strides})")
    return value


def scalar(decl, spec, value):
    """``value`` as a NumPy scalar of the spec's type: no truncation, no
    overflow, no bool<->number confusion."""
    d = spec.dtype
    where = f"{decl.name}(): argument '{spec.name}' ({spec.text})"
    is_bool = isinstance(value, (bool, np.bool_))
    if d.kind == "b":
        if not is_bool:
            raise CKTypeError(f"{where} takes a bool, not {type(value).__name__} {value!r}")
        return np.bool_(value)
    if d.kind in "iu":
        if not isinstance(value, (int, np.integer)) or is_bool:
            raise CKTypeError(f"{where} takes an integer, not {type(value).__name__} "
                              f"{value!r}")
        info = np.iinfo(d.numpy)
        if not info.min <= int(value) <= info.max:
            raise CKOverflowError(f"{where}: {value} is out of range for {d.name}")
        return d.numpy.type(int(value))
    if not isinstance(value, (int, float, np.integer, np.floating)) or is_bool:
        raise CKTypeError(f"{where} takes a real number, not {type(value).__name__} "
                          f"{value!r}")
    with np.errstate(over="ignore"):
        out = d.numpy.type(value)
    if np.isinf(out) and np.isfinite(float(value)):
        raise CKOverflowError(f"{where}: {value} overflows {d.name}")
    return out
