"""The arithmetic of :class:`~.arraytype.CkArrayType` views in LLVM IR
(see :mod:`.arraytype` for the view struct): making a view from a
preamble, taking an index or a slice of a dim, loading and storing an
element (strings through the arena), the view's fields, and the full shape
and strides read from arrmeta.  Intrinsics used by :mod:`.array_lowering`
and :mod:`.structview`."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.typing.templates import signature
from numba.extending import intrinsic

from .arraytype import (DIM_ARRMETA_SIZE, DIM_SIZE, DIM_STRIDE, PREAMBLE_DATA, PREAMBLE_FLAGS,
                        PREAMBLE_SIZE, STRING_BEGIN, STRING_END, VAR, VAR_ARRMETA_SIZE,
                        VAR_BEGIN, VAR_OFFSET, VAR_SIZE, VAR_STRIDE, CkArrayType,
                        CkHalfElement, _i8p, _i64)
from .stringtype import CkStringType, ck_string_type


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
