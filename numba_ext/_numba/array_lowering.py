"""What Python code can do with a :class:`~.arraytype.CkArrayType` in
jitted code (see :mod:`.arraytype`): unboxing a ``ckernels.Array``
(borrowed) and boxing a view back, ``shape``/``strides``/``ndim``/
``writable``/``len``, indexing and slicing (read and write), iteration.
Imported by :mod:`ckernels._numba` for its registrations."""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.imputils import RefType, impl_ret_borrowed, iternext_impl, lower_builtin
from numba.core.typing.templates import signature
from numba.extending import (
    NativeValue,
    box,
    overload,
    overload_attribute,
    register_jitable,
    unbox,
)

from .. import _native
from .. import errors as _errors
from .. import types as _ckt
from ..host.array import Array
from .array_views import (_arrmeta, _data, _flags, _full_shape, _full_strides, _load,
                          _mshape, _root_view, _slice, _store, _take, _unpack)
from .arraytype import FLAG_WRITE, CkArrayIterType, CkArrayType, _CK_IDS, _i64
from .memblock import memblock_from_address
from .strings import store_str
from .stringtype import CkStringType
from .utf8 import load_intp


# ------------------------------------------------------ unboxing / boxing ----
@unbox(CkArrayType)
def _unbox_array(typ, obj, c):
    addr_obj = c.pyapi.object_getattr_string(obj, "address")
    out = cgutils.alloca_once_value(c.builder, c.context.get_constant_null(typ))
    with c.builder.if_then(cgutils.is_not_null(c.builder, addr_obj), likely=True):
        addr = c.pyapi.long_as_voidptr(addr_obj)
        c.pyapi.decref(addr_obj)
        with c.builder.if_then(cgutils.is_not_null(c.builder, addr), likely=True):
            c.builder.store(_root_view(c.context, c.builder, typ, addr), out)
    is_error = cgutils.is_not_null(c.builder, c.pyapi.err_occurred())
    return NativeValue(c.builder.load(out), is_error=is_error)


def _box_view(descr, derived, preamble, data, arrmeta, flags, shape, strides):
    """Boxing helper: a new :class:`ckernels.Array` for a jitted view (see the
    module docstring: the argument itself, a C view, or a copy)."""
    if not derived:
        return Array._from_address(preamble)
    dims, dtype_id = descr
    ffi, lib = _native.ffi, _native.lib
    n = len(shape)
    if dtype_id is not None and n == len(dims):  # a real C view over the same memory
        t = _ckt._builtin(dtype_id)
        for _ in range(n):
            t = _ckt.strided_dim(t)
        out = ffi.new("ck_array_preamble **")
        _native.check(lib.ck_array_view_external(
            t.c_type, ffi.cast("char *", data), ffi.new("intptr_t[]", list(shape) or [0]),
            ffi.new("intptr_t[]", list(strides) or [0]), n,
            flags & (lib.CK_ARRAY_READ | lib.CK_ARRAY_WRITE | lib.CK_ARRAY_IMMUTABLE),
            ffi.cast("ck_memblock *", preamble), out))
        return Array._own(out[0])
    # A copy: the dims still in arrmeta are a suffix of the argument's dims.
    from ..host.array import array
    from ..host.convert import read as _read
    root = Array._from_address(preamble)
    rest = root.type
    for _ in range(root.ndim - (len(dims) - n)):
        rest = rest.element

    def values(k, addr):
        if k == n:
            return _read(rest, addr, arrmeta)
        return [values(k + 1, addr + i * strides[k]) for i in range(shape[k])]

    t = rest
    for _ in range(n):
        t = _ckt.strided_dim(t)
    return array(values(0, data), type=t)


@box(CkArrayType)
def _box_array(typ, val, c):
    v = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    pyapi = c.pyapi
    fn = pyapi.unserialize(pyapi.serialize_object(_box_view))
    descr = pyapi.unserialize(pyapi.serialize_object((typ.dims, _CK_IDS.get(typ.dtype))))
    derived = pyapi.bool_from_bool(v.derived)
    pre, data, arrmeta = (pyapi.long_from_ssize_t(c.builder.ptrtoint(p, pyapi.py_ssize_t))
                          for p in (v.preamble, v.data, v.arrmeta))
    flags = pyapi.long_from_ulonglong(v.flags)
    shape = c.box(typ.shape_type, v.shape)
    strides = c.box(typ.shape_type, v.strides)
    args = [descr, derived, pre, data, arrmeta, flags, shape, strides]
    res = pyapi.call_function_objargs(fn, args)
    for obj in args + [fn]:
        pyapi.decref(obj)
    return res


# ------------------------------------------------------------- attributes ----
@overload_attribute(CkArrayType, "shape")
def _ov_shape(a):
    return lambda a: _full_shape(a)


@overload_attribute(CkArrayType, "strides")
def _ov_strides(a):
    return lambda a: _full_strides(a)


@overload_attribute(CkArrayType, "ndim")
def _ov_ndim(a):
    n = a.ndim
    return lambda a: n


@overload_attribute(CkArrayType, "writable")
def _ov_writable(a):
    return lambda a: (_flags(a) & FLAG_WRITE) != 0


@overload(len)
def _ov_len(a):
    if isinstance(a, CkArrayType):
        if a.ndim == 0:
            raise TypingError(f"len() of a 0-d {a}")
        return lambda a: _mshape(a)[0]


# --------------------------------------------------------------- indexing ----
@register_jitable
def _norm_index(i, n):
    k = np.intp(i)
    if k < 0:
        k += n
    if k < 0 or k >= n:
        raise _errors.CKIndexError("ckernel array index out of range", 6)
    return k


@register_jitable
def _norm_uindex(i, n):
    if np.uint64(i) >= np.uint64(n):  # n >= 0; no wrap-around for unsigned indices
        raise _errors.CKIndexError("ckernel array index out of range", 6)
    return np.intp(i)


@register_jitable
def _slice_length(start, stop, step):
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // (-step))


@register_jitable
def _check_writable(a):
    if (_flags(a) & FLAG_WRITE) == 0:
        raise _errors.InvalidStateError("ckernel array is read-only", 4)


_GEN_GLOBALS = {"_take": _take, "_slice": _slice, "_load": _load, "_store": _store,
                "_norm_index": _norm_index, "_norm_uindex": _norm_uindex,
                "_slice_length": _slice_length, "_mshape": _mshape,
                "_check_writable": _check_writable, "_data": _data, "_arrmeta": _arrmeta,
                "store_str": store_str, "memblock_from_address": memblock_from_address,
                "load_intp": load_intp}


def _index_code(aty, idx):
    """Source lines applying index ``idx`` (type) to ``a``; (lines, result var, type)."""
    items = list(idx.types) if isinstance(idx, types.BaseTuple) else [idx]
    refs = ([f"idx[{j}]" for j in range(len(items))] if isinstance(idx, types.BaseTuple)
            else ["idx"])
    if len(items) > aty.ndim:
        raise TypingError(f"too many indices ({len(items)}) for {aty}")
    lines, cur, curty, axis = [], "a", aty, 0
    for j, (t, ref) in enumerate(zip(items, refs)):
        if not isinstance(t, (types.Integer, types.SliceType)):
            raise TypingError(f"{aty} indices must be integers or slices, not {t}")
        if axis >= curty.nmat:
            raise TypingError(
                f"cannot index dim {axis} of {curty} in jitted code: it is a var dim below "
                "the first dim (or a dim under one); index the outer dims first")
        if isinstance(t, types.Integer):
            norm = "_norm_index" if t.signed else "_norm_uindex"
            lines.append(f"v{j} = _take({cur}, {axis}, {norm}({ref}, _mshape({cur})[{axis}]))")
            curty = curty.drop(axis)
        else:
            lines.append(f"s{j}, e{j}, st{j} = {ref}.indices(_mshape({cur})[{axis}])")
            lines.append(f"v{j} = _slice({cur}, {axis}, s{j}, _slice_length(s{j}, e{j}, st{j}), "
                         f"st{j})")
            axis += 1
        cur = f"v{j}"
    return lines, cur, curty


def _compile(src, name):
    ns = dict(_GEN_GLOBALS)
    exec(compile(src, f"<ckernel array {name}>", "exec"), ns)
    return ns[name]


def _index_types_ok(idx):
    if isinstance(idx, (types.Integer, types.SliceType)):
        return True
    return isinstance(idx, types.BaseTuple) and len(idx) > 0


@overload(operator.getitem)
def _ov_getitem(a, idx):
    if not isinstance(a, CkArrayType):
        return None
    if isinstance(idx, types.BaseTuple) and len(idx) == 0 and a.ndim == 0:
        a.element_type()
        return lambda a, idx: _load(a)
    if not _index_types_ok(idx):
        raise TypingError(f"{a} indices must be integers, slices or tuples of them, not {idx}")
    lines, cur, resty = _index_code(a, idx)
    if resty.ndim == 0:
        resty.element_type()  # TypingError for unsupported elements
        lines.append(f"return _load({cur})")
    else:
        lines.append(f"return {cur}")
    return _compile("def getitem(a, idx):\n    " + "\n    ".join(lines), "getitem")


@overload(operator.setitem)
def _ov_setitem(a, idx, value):
    if not isinstance(a, CkArrayType):
        return None
    if isinstance(idx, types.BaseTuple) and len(idx) == 0 and a.ndim == 0:
        lines, cur, resty = [], "a", a
    else:
        if not _index_types_ok(idx):
            raise TypingError(f"{a} indices must be integers, slices or tuples of them, "
                              f"not {idx}")
        lines, cur, resty = _index_code(a, idx)
    if resty.ndim != 0:
        raise TypingError(f"assigning to a sub-array of {a} is not supported in jitted code; "
                          "index every dimension")
    if resty.is_builtin:
        if not isinstance(value, (types.Number, types.Boolean)):
            raise TypingError(f"cannot store a {value} value into an element of {a}")
        lines += ["_check_writable(a)", f"_store({cur}, value)"]
    elif isinstance(resty.dtype, CkStringType):
        if not isinstance(value, types.UnicodeType):
            raise TypingError(f"a string element of {a} can be set from a str, not {value}")
        blockref = f"memblock_from_address(load_intp(_arrmeta({cur})))"
        lines += ["_check_writable(a)", f"store_str({blockref}, _data({cur}), value)"]
    else:
        resty.element_type()
        raise TypingError(f"cannot assign elements of {a} in jitted code")
    return _compile("def setitem(a, idx, value):\n    " + "\n    ".join(lines), "setitem")


# -------------------------------------------------------------- iteration ----
def _iter_take(a, i):
    return _take(a, 0, i)


def _iter_load(a, i):
    return _load(_take(a, 0, i))


@lower_builtin("getiter", CkArrayType)
def _lower_getiter(context, builder, sig, args):
    itty = sig.return_type
    it = context.make_helper(builder, itty)
    it.index = cgutils.alloca_once_value(builder, ir.Constant(_i64, 0))
    it.array = args[0]
    return impl_ret_borrowed(context, builder, itty, it._getvalue())


@lower_builtin("iternext", CkArrayIterType)
@iternext_impl(RefType.BORROWED)
def _lower_iternext(context, builder, sig, args, result):
    itty = sig.args[0]
    aty = itty.array_type
    it = context.make_helper(builder, itty, value=args[0])
    _, shape, _ = _unpack(context, builder, aty, it.array)
    index = builder.load(it.index)
    valid = builder.icmp_signed("<", index, shape[0])
    result.set_valid(valid)
    with builder.if_then(valid, likely=True):
        fn = _iter_load if aty.ndim == 1 else _iter_take
        value = context.compile_internal(builder, fn,
                                         signature(itty.yield_type, aty, types.intp),
                                         [it.array, index])
        result.yield_(value)
        builder.store(builder.add(index, ir.Constant(_i64, 1)), it.index)
