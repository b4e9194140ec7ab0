"""ckernel arrays in jitted code: ``CkArrayType``, a typed *view* of a ``ck_array_preamble``.

A :class:`ckernels.Array` passed to a ``@numba.njit`` function is unboxed as a
``CkArrayType(dims, dtype)``:

* ``dims`` -- the kinds of the array's leading dimensions, ``"strided"`` (a
  fixed or a strided dim: both have ``{size, stride}`` arrmeta) or ``"var"``;
* ``dtype`` -- the element type: a Numba scalar for the builtin scalars
  (``bool`` -> ``boolean``, ``int8`` ... ``complex128``; ``float16`` elements
  read as ``float32`` and are rounded when stored), ``CkStringType``
  for ``string``, or :class:`CkUnsupportedElement` (structs, bytes, pointers:
  dims, ``len`` and iteration over outer dims work, reading or writing an
  element is a ``TypingError``).

The type is fixed when the function is compiled; sizes and strides are
runtime values.  Every view (an argument, a slice, a row) is one struct:

    preamble  the argument's ``ck_array_preamble *`` (borrowed, see below)
    data      the view's data pointer
    arrmeta   arrmeta of the first dim that is *not* cached (or of the dtype)
    flags     the argument's flags (``CK_ARRAY_WRITE`` checked by writes)
    derived   False for the argument itself, True for views made from it
    shape, strides   the *cached* leading dims

The cached ("materialised") dims are the leading fixed/strided dims, and a
var dim in position 0 (a single row: its ``{begin, size}`` is read once, the
view then addresses ``begin + offset`` like a strided dim).  A var dim below
position 0 has a size per row: it stays in arrmeta, ``a.shape`` reports -1
for it (as ``ck_array_shape``) and it is cached when indexing makes it the
first dim (``a[i]`` of a ``strided * var * int32`` array is a 1-d view of that
row).  Hence indexing and slicing the cached dims is pure arithmetic: a
contiguous ``float64`` loop compiles to plain loads (no calls).

Operations: ``a.shape``, ``a.strides`` (tuples of intp), ``a.ndim``,
``a.writable``, ``len(a)``, ``a[i]`` (negative indices; out of range raises
:class:`ckernels.errors.CKIndexError`, an IndexError), ``a[i, j]``, slices with
any step (``a[1:5]``, ``a[::-1]``, ``a[::2, 1]``; views of the same memory),
``for x in a``; ``a[i] = v`` / ``a[i, j] = v`` for builtin elements (Numba's
cast rules) and for ``string`` elements from a Numba ``str`` (UTF-8 into the
string arena of the array); writes check the WRITE flag and raise
:class:`ckernels.errors.InvalidStateError` ("ckernel array is read-only").
Reading a ``string`` element gives a ``CkString`` view (``len``, ``str()``,
indexing, comparisons, hashing: see :mod:`.strings`).

Ownership (borrowed views)
--------------------------
Unboxing *borrows*: no reference count changes and no allocation; the Python
argument keeps the array alive during the call.  Views made in jitted code
(slices, rows, elements) borrow the same memory: they own nothing and cost
nothing, and they are valid while the argument lives, i.e. during the call.
Do not let a view outlive the call (e.g. stored in a typed container read
after the call returned).

Returning a view to Python is refcount-correct and never fails:

* the argument itself (``derived`` False) boxes to a new :class:`ckernels.Array`
  owning a new reference to the same C array;
* a view made in jitted code with builtin elements and only cached dims (any
  slice/row of a fixed/strided array, a var row) boxes to a new C array made by
  ``ck_array_view_external`` over the same memory, whose data owner is the
  argument's array memblock (one reference taken): writes through it are
  visible in the argument and it keeps everything it reaches alive;
* other views made in jitted code (string, struct or bytes elements, or var
  dims still in arrmeta) box to a *copy* (``ckernels.array`` of the values, the
  outer dims strided): C has no constructor for a view of such data from raw
  pointers.

Layout offsets used here (preamble, dim, var-dim and string structs) are
checked against libckernel's ``ck_layout_table`` at import.
"""

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
    intrinsic,
    models,
    overload,
    overload_attribute,
    register_jitable,
    register_model,
    typeof_impl,
    unbox,
)

from .. import _native
from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import types as _ckt
from ..host.array import Array
from . import symbols
from .memblock import memblock_from_address
from .strings import store_str
from .stringtype import CkStringType, ck_string_type
from .utf8 import load_intp

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i64 = ir.IntType(64)

STRIDED = "strided"
VAR = "var"

# ----------------------------------------------------------------- layout ----
#: (struct, field) -> (offset, size); a field of "" is (alignment, sizeof)
ASSUMED_LAYOUT = {
    ("ck_array_preamble", ""): (8, 40),
    ("ck_array_preamble", "memblock"): (0, 8),
    ("ck_array_preamble", "data"): (16, 8),
    ("ck_array_preamble", "flags"): (24, 8),
    ("ck_dim_arrmeta", ""): (8, 16),
    ("ck_dim_arrmeta", "size"): (0, 8),
    ("ck_dim_arrmeta", "stride"): (8, 8),
    ("ck_var_dim_data", ""): (8, 16),
    ("ck_var_dim_data", "begin"): (0, 8),
    ("ck_var_dim_data", "size"): (8, 8),
    ("ck_var_dim_arrmeta", ""): (8, 24),
    ("ck_var_dim_arrmeta", "stride"): (8, 8),
    ("ck_var_dim_arrmeta", "offset"): (16, 8),
    ("ck_string", "begin"): (0, 8),
    ("ck_string", "end"): (8, 8),
    ("ck_string_arrmeta", "blockref"): (0, 8),
}
PREAMBLE_DATA, PREAMBLE_FLAGS, PREAMBLE_SIZE = 16, 24, 40
DIM_SIZE, DIM_STRIDE, DIM_ARRMETA_SIZE = 0, 8, 16
VAR_BEGIN, VAR_SIZE = 0, 8
VAR_STRIDE, VAR_OFFSET, VAR_ARRMETA_SIZE = 8, 16, 24
STRING_BEGIN, STRING_END = 0, 8
FLAG_WRITE = 2


def layout_mismatches() -> list[str]:
    """Differences between :data:`ASSUMED_LAYOUT` and libckernel's layout table."""
    return symbols.layout_mismatches(ASSUMED_LAYOUT)


symbols.check_layout(ASSUMED_LAYOUT, "ckernels._numba.arraytype")


# ------------------------------------------------------------------ types ----
class CkUnsupportedElement(types.Opaque):
    """An element type jitted code cannot read yet (struct, bytes, pointer)."""

    def __init__(self, type_string: str, kind: str):
        self.type_string = type_string
        self.kind = kind
        super().__init__(name=f"ckernels.unsupported[{type_string}]")

    def error(self) -> str:
        return (f"{self.kind} elements are not supported in jitted code yet "
                f"(element type '{self.type_string}')")


register_model(CkUnsupportedElement)(models.OpaqueModel)


class CkHalfElement(types.Opaque):
    """``float16`` storage: elements read as ``float32`` (exact) and are
    rounded to nearest-even when stored (Numba's CPU target has no float16)."""

    def __init__(self):
        super().__init__(name="ckernels.float16")


register_model(CkHalfElement)(models.OpaqueModel)
ck_half_element = CkHalfElement()


def _nmat(dims) -> int:
    """Number of leading dims a view caches (see the module docstring)."""
    n = 0
    for pos, kind in enumerate(dims):
        if kind == VAR and pos > 0:
            break
        n += 1
    return n


def _dtype_name(dtype) -> str:
    if isinstance(dtype, CkStringType):
        return "string"
    if isinstance(dtype, CkUnsupportedElement):
        return dtype.type_string
    if dtype == types.boolean:
        return "bool"
    if isinstance(dtype, CkHalfElement):
        return "float16"
    return str(dtype)


class CkArrayType(types.IterableType):
    """A borrowed view of a ckernel array: ``dims`` (kinds) over ``dtype``."""

    def __init__(self, dims, dtype):
        self.dims = tuple(dims)
        assert all(k in (STRIDED, VAR) for k in self.dims), dims
        self.dtype = dtype
        self.ndim = len(self.dims)
        self.nmat = _nmat(self.dims)
        text = " * ".join(self.dims + (_dtype_name(dtype),))
        super().__init__(name=f"ckernels.Array({text})")

    @property
    def key(self):
        return self.dims, self.dtype

    @property
    def iterator_type(self):
        return CkArrayIterType(self)

    @property
    def shape_type(self):
        return types.UniTuple(types.intp, self.nmat)

    def drop(self, axis: int) -> CkArrayType:
        """The type of the view without dim ``axis``."""
        return CkArrayType(self.dims[:axis] + self.dims[axis + 1:], self.dtype)

    def element_type(self):
        """The Numba type of a read element; TypingError if unsupported."""
        if isinstance(self.dtype, CkUnsupportedElement):
            raise TypingError(self.dtype.error())
        if isinstance(self.dtype, CkHalfElement):
            return types.float32
        return self.dtype

    @property
    def is_builtin(self) -> bool:
        return isinstance(self.dtype, (types.Number, types.Boolean, CkHalfElement))


class CkArrayIterType(types.SimpleIteratorType):
    def __init__(self, array_type: CkArrayType):
        self.array_type = array_type
        if array_type.ndim == 0:
            raise TypingError(f"iteration over a 0-d {array_type}")
        yield_type = (array_type.element_type() if array_type.ndim == 1
                      else array_type.drop(0))
        super().__init__(f"iter({array_type})", yield_type)


@register_model(CkArrayType)
class CkArrayModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("preamble", types.voidptr),
                   ("data", types.voidptr),
                   ("arrmeta", types.voidptr),
                   ("flags", types.uint64),
                   ("derived", types.boolean),
                   ("shape", fe_type.shape_type),
                   ("strides", fe_type.shape_type)]
        super().__init__(dmm, fe_type, members)


@register_model(CkArrayIterType)
class CkArrayIterModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("index", types.EphemeralPointer(types.intp)),
                   ("array", fe_type.array_type)]
        super().__init__(dmm, fe_type, members)


# ----------------------------------------------------------------- typeof ----
# builtin element ids -> the Numba element type of the view, from the one table
# (float16, which Numba kernels do not take, reads as float32: ck_half_element)
_NUMBA_SCALARS = {d.type_id: (d.numba if d.numba is not None else ck_half_element)
                  for d in _dtypes.BUILTINS}
_CK_IDS = {v: k for k, v in _NUMBA_SCALARS.items()}
_DIM_IDS = {_native.lib.CK_TYPE_FIXED_DIM: STRIDED, _native.lib.CK_TYPE_STRIDED_DIM: STRIDED,
            _native.lib.CK_TYPE_VAR_DIM: VAR}
_UNSUPPORTED_KINDS = {_native.lib.CK_TYPE_STRUCT: "struct", _native.lib.CK_TYPE_BYTES: "bytes",
                      _native.lib.CK_TYPE_POINTER: "pointer"}


def array_type_of(t) -> CkArrayType:
    """The :class:`CkArrayType` of arrays of ckernel type ``t`` (a Type or string)."""
    t = _ckt.as_type(t)
    dims = []
    while t.type_id in _DIM_IDS:
        dims.append(_DIM_IDS[t.type_id])
        t = t.element
    tid = t.type_id
    if tid in _NUMBA_SCALARS:
        dtype = _NUMBA_SCALARS[tid]
    elif tid == _native.lib.CK_TYPE_STRING:
        dtype = ck_string_type
    else:
        dtype = CkUnsupportedElement(str(t), _UNSUPPORTED_KINDS.get(tid, "these"))
    return CkArrayType(dims, dtype)


# ck_type value -> (Type keeping the descriptor alive, CkArrayType).  Holding
# the Type means a cached address cannot be reused by another descriptor.
_TYPE_CACHE: dict[int, tuple] = {}


@typeof_impl.register(Array)
def _typeof_array(val, c):
    ctype = _native.lib.ck_array_type(val._a)
    key = int(_native.ffi.cast("uintptr_t", ctype))
    hit = _TYPE_CACHE.get(key)
    if hit is None:
        t = _ckt.Type._borrow(ctype)
        if len(_TYPE_CACHE) > 1024:
            _TYPE_CACHE.clear()
        hit = _TYPE_CACHE[key] = (t, array_type_of(t))
    return hit[1]


# --------------------------------------------------------------- codegen ----
def _word(builder, base, offset):
    """The 64-bit word at ``base + offset`` (base an i8*)."""
    p = builder.gep(base, [ir.Constant(_i64, offset)])
    return builder.load(builder.bitcast(p, _i64.as_pointer()), align=8)


def _ptr_word(builder, base, offset):
    p = builder.gep(base, [ir.Constant(_i64, offset)])
    return builder.load(builder.bitcast(p, _i8p.as_pointer()), align=8)


def _make_view(context, builder, aty, preamble, data, arrmeta, flags, derived,
               shape, strides):
    """A view value of type ``aty``; ``shape``/``strides`` hold the first
    cached dims (LLVM values), the rest of ``aty.nmat`` is read here."""
    shape, strides = list(shape), list(strides)
    for pos in range(len(shape), aty.nmat):
        if aty.dims[pos] == VAR:  # only in position 0: one row
            begin = _ptr_word(builder, data, VAR_BEGIN)
            size = _word(builder, data, VAR_SIZE)
            stride = _word(builder, arrmeta, VAR_STRIDE)
            data = builder.gep(begin, [_word(builder, arrmeta, VAR_OFFSET)])
            arrmeta = builder.gep(arrmeta, [ir.Constant(_i64, VAR_ARRMETA_SIZE)])
        else:
            size = _word(builder, arrmeta, DIM_SIZE)
            stride = _word(builder, arrmeta, DIM_STRIDE)
            arrmeta = builder.gep(arrmeta, [ir.Constant(_i64, DIM_ARRMETA_SIZE)])
        shape.append(size)
        strides.append(stride)
    v = cgutils.create_struct_proxy(aty)(context, builder)
    v.preamble = preamble
    v.data = data
    v.arrmeta = arrmeta
    v.flags = flags
    v.derived = derived
    v.shape = context.make_tuple(builder, aty.shape_type, shape)
    v.strides = context.make_tuple(builder, aty.shape_type, strides)
    return v._getvalue()


def _root_view(context, builder, aty, preamble):
    data = _ptr_word(builder, preamble, PREAMBLE_DATA)
    flags = _word(builder, preamble, PREAMBLE_FLAGS)
    arrmeta = builder.gep(preamble, [ir.Constant(_i64, PREAMBLE_SIZE)])
    return _make_view(context, builder, aty, preamble, data, arrmeta, flags,
                      cgutils.false_bit, [], [])


def _unpack(context, builder, aty, val):
    v = cgutils.create_struct_proxy(aty)(context, builder, value=val)
    shape = cgutils.unpack_tuple(builder, v.shape, aty.nmat)
    strides = cgutils.unpack_tuple(builder, v.strides, aty.nmat)
    return v, shape, strides


def _axis(axis):
    if not isinstance(axis, types.IntegerLiteral):
        return None
    return axis.literal_value


@intrinsic(prefer_literal=True)
def _take(typingctx, a, axis, i):
    """The view without cached dim ``axis`` at (checked, normalised) index ``i``."""
    k = _axis(axis)
    if not isinstance(a, CkArrayType) or k is None or not isinstance(i, types.Integer):
        return None
    if not 0 <= k < a.nmat:
        raise TypingError(f"cannot index dim {k} of {a} here")
    resty = a.drop(k)

    def codegen(context, builder, sig, args):
        v, shape, strides = _unpack(context, builder, a, args[0])
        idx = context.cast(builder, args[2], sig.args[2], types.intp)
        data = builder.gep(v.data, [builder.mul(idx, strides[k])])
        return _make_view(context, builder, resty, v.preamble, data, v.arrmeta, v.flags,
                          cgutils.true_bit, shape[:k] + shape[k + 1:],
                          strides[:k] + strides[k + 1:])
    return signature(resty, a, axis, i), codegen


@intrinsic(prefer_literal=True)
def _slice(typingctx, a, axis, start, length, step):
    """The view with cached dim ``axis`` sliced (normalised start, length, step)."""
    k = _axis(axis)
    if (not isinstance(a, CkArrayType) or k is None
            or not all(isinstance(x, types.Integer) for x in (start, length, step))):
        return None
    if not 0 <= k < a.nmat:
        raise TypingError(f"cannot slice dim {k} of {a} here")

    def codegen(context, builder, sig, args):
        v, shape, strides = _unpack(context, builder, a, args[0])
        start_, length_, step_ = (context.cast(builder, x, t, types.intp)
                                  for x, t in zip(args[2:], sig.args[2:]))
        data = builder.gep(v.data, [builder.mul(start_, strides[k])])
        shape[k] = length_
        strides[k] = builder.mul(strides[k], step_)
        return _make_view(context, builder, a, v.preamble, data, v.arrmeta, v.flags,
                          cgutils.true_bit, shape, strides)
    return signature(a, a, axis, start, length, step), codegen


def _element_ptr(context, builder, dtype, data):
    return builder.bitcast(data, context.get_data_type(dtype).as_pointer())


def _load_element(context, builder, aty, data):
    dtype = aty.dtype
    if isinstance(dtype, CkStringType):
        st = cgutils.create_struct_proxy(ck_string_type)(context, builder)
        st.begin = _word(builder, data, STRING_BEGIN)
        st.end = _word(builder, data, STRING_END)
        return st._getvalue()
    if isinstance(dtype, CkHalfElement):
        half = builder.load(builder.bitcast(data, ir.HalfType().as_pointer()), align=1)
        return builder.fpext(half, ir.FloatType())
    return context.unpack_value(builder, dtype, _element_ptr(context, builder, dtype, data),
                                align=1)


@intrinsic
def _load(typingctx, a):
    """The element of a 0-d view."""
    if not isinstance(a, CkArrayType) or a.ndim != 0:
        return None
    resty = a.element_type()

    def codegen(context, builder, sig, args):
        v = cgutils.create_struct_proxy(a)(context, builder, value=args[0])
        return _load_element(context, builder, a, v.data)
    return signature(resty, a), codegen


@intrinsic
def _store(typingctx, a, value):
    """Store ``value`` (cast to the element type) into a 0-d view of builtins."""
    if not isinstance(a, CkArrayType) or a.ndim != 0 or not a.is_builtin:
        return None
    elty = a.element_type()
    if typingctx.can_convert(value, elty) is None:
        raise TypingError(f"cannot store a {value} value into an element of {a}")

    def codegen(context, builder, sig, args):
        v = cgutils.create_struct_proxy(a)(context, builder, value=args[0])
        val = context.cast(builder, args[1], sig.args[1], elty)
        if isinstance(a.dtype, CkHalfElement):
            half = builder.fptrunc(val, ir.HalfType())
            builder.store(half, builder.bitcast(v.data, ir.HalfType().as_pointer()), align=1)
        else:
            context.pack_value(builder, elty, val,
                               _element_ptr(context, builder, elty, v.data), align=1)
        return context.get_dummy_value()
    return signature(types.none, a, value), codegen


def _field_getter(field, restype):
    @intrinsic
    def get(typingctx, a):
        if not isinstance(a, CkArrayType):
            return None
        rt = restype if isinstance(restype, types.Type) else restype(a)

        def codegen(context, builder, sig, args):
            v = cgutils.create_struct_proxy(a)(context, builder, value=args[0])
            val = getattr(v, field)
            if field in ("data", "arrmeta", "preamble"):
                return builder.ptrtoint(val, _i64)
            return val
        return signature(rt, a), codegen
    return get


_mshape = _field_getter("shape", lambda a: a.shape_type)
_mstrides = _field_getter("strides", lambda a: a.shape_type)
_flags = _field_getter("flags", types.uint64)
_data = _field_getter("data", types.intp)
_arrmeta = _field_getter("arrmeta", types.intp)


def _full_dims_intrinsic(want_strides):
    @intrinsic
    def full(typingctx, a):
        """All dims (cached ones from the view, the others read from arrmeta)."""
        if not isinstance(a, CkArrayType):
            return None
        rt = types.UniTuple(types.intp, a.ndim)

        def codegen(context, builder, sig, args):
            v, shape, strides = _unpack(context, builder, a, args[0])
            out = list(strides if want_strides else shape)
            am = v.arrmeta
            for pos in range(a.nmat, a.ndim):
                if a.dims[pos] == VAR:
                    out.append(_word(builder, am, VAR_STRIDE) if want_strides
                               else ir.Constant(_i64, -1))
                    am = builder.gep(am, [ir.Constant(_i64, VAR_ARRMETA_SIZE)])
                else:
                    out.append(_word(builder, am, DIM_STRIDE if want_strides else DIM_SIZE))
                    am = builder.gep(am, [ir.Constant(_i64, DIM_ARRMETA_SIZE)])
            return context.make_tuple(builder, rt, out)
        return signature(rt, a), codegen
    return full


_full_shape = _full_dims_intrinsic(False)
_full_strides = _full_dims_intrinsic(True)


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


__all__ = ["CkArrayType", "CkArrayIterType", "CkUnsupportedElement", "array_type_of",
           "layout_mismatches", "ASSUMED_LAYOUT"]
