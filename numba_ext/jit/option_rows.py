"""Rows of option elements under core dims (``var * ?float64``, ``N * ?int64``).

A jitted function whose signature has ``?T`` elements under one core dim
(``docs/nulls.md``, "Option elements under dims") sees such an argument as an
:class:`OptionRowType`: ``len(row)`` counts every slot, ``row[i]`` and
iteration give Numba's ``Optional(T)`` -- ``None`` for a null, else the
value -- so ``for v in row: if v is not None: ...`` and ``row[i] is None``
work.  A ``N * ?R`` result taken as an output parameter is a writable one:
``out[i] = None`` writes a null, ``out[i] = v`` a value (and sets its bit).

The row is a value (no allocation): the data pointer, size and stride of the
core dim, the validity bitmap and the bit of slot 0 and the bits between
slots.  The bits come from the operand's option arrmeta, copied into the
kernel data as a ``ck_jit_core_option`` (``ckernel/jit.h``): the slot at
address ``p`` has bit ``bit_offset + (p - origin) / step``, so the row's
bit 0 is ``bit_offset + (data - origin) / step`` and one slot is
``stride / step`` bits further.  A row without a bitmap (``bits`` NULL) is
all valid; writing a null there is a ``ValueError``.  Indexing is checked
(``IndexError``), as ``CkArrayType`` views are.
"""

from __future__ import annotations

import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import RefType, iternext_impl, lower_builtin
from numba.extending import (intrinsic, models, overload, overload_method,
                             register_jitable, register_model)

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i64 = ir.IntType(64)


class OptionRowType(types.IterableType):
    """One core dim of ``?T`` elements: ``dtype`` is T's Numba type (a
    number, bool or ``str``); ``writable`` for an output."""

    def __init__(self, dtype, writable: bool = False):
        self.dtype = dtype
        self.writable = writable
        super().__init__(name=f"OptionRow({dtype}{', writable' if writable else ''})")

    @property
    def key(self):
        return (self.dtype, self.writable)

    @property
    def iterator_type(self):
        return OptionRowIterType(self)

    @property
    def element(self):
        return types.Optional(self.dtype)


class OptionRowIterType(types.SimpleIteratorType):
    def __init__(self, row: OptionRowType):
        self.row = row
        super().__init__(f"iter({row})", types.Optional(row.dtype))


@register_model(OptionRowType)
class _RowModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("data", types.voidptr), ("size", types.intp), ("stride", types.intp),
                   ("bits", types.voidptr), ("bit0", types.intp), ("bitstep", types.intp),
                   ("arena", types.intp)]
        super().__init__(dmm, fe_type, members)


@register_model(OptionRowIterType)
class _IterModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("row", fe_type.row), ("index", types.EphemeralPointer(types.intp))]
        super().__init__(dmm, fe_type, members)


def make_row(context, builder, rowty, data, size, stride, bits, bit_offset, origin, step,
             arena=None):
    """The LLVM value of an :class:`OptionRowType` (all words i64 / i8*);
    ``arena``: the string arena a writable ``?string`` row writes text into."""
    row = cgutils.create_struct_proxy(rowty)(context, builder)
    row.arena = arena if arena is not None else ir.Constant(_i64, 0)
    row.data = data
    row.size = size
    row.stride = stride
    row.bits = bits
    delta = builder.sub(builder.ptrtoint(data, _i64), builder.ptrtoint(origin, _i64))
    row.bit0 = builder.add(bit_offset, builder.sdiv(delta, step))
    row.bitstep = builder.sdiv(stride, step)
    return row._getvalue()


# ------------------------------------------------------------ primitives ----
@intrinsic
def _field(typingctx, row, name):
    """A word of the row's struct by (literal) name."""
    if not isinstance(row, OptionRowType) or not isinstance(name, types.StringLiteral):
        return None
    fname = name.literal_value
    rt = types.voidptr if fname in ("data", "bits") else types.intp

    def codegen(context, builder, sig, args):
        return getattr(cgutils.create_struct_proxy(row)(context, builder, value=args[0]),
                       fname)
    return rt(row, name), codegen


@intrinsic
def _bit(typingctx, bits, i):
    """Bit ``i`` of the bitmap at ``bits`` (Arrow's order)."""
    if bits != types.voidptr or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        i64 = context.cast(builder, args[1], sig.args[1], types.int64)
        byte = builder.load(builder.gep(args[0], [builder.ashr(i64, ir.Constant(_i64, 3))]))
        sh = builder.trunc(builder.and_(i64, ir.Constant(_i64, 7)), _i8)
        return builder.trunc(builder.lshr(byte, sh), ir.IntType(1))
    return types.boolean(bits, i), codegen


@intrinsic
def _set_bit(typingctx, bits, i, valid):
    """Set bit ``i`` of the bitmap at ``bits`` to ``valid``."""
    if bits != types.voidptr or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        i64 = context.cast(builder, args[1], sig.args[1], types.int64)
        p = builder.gep(args[0], [builder.ashr(i64, ir.Constant(_i64, 3))])
        mask = builder.shl(ir.Constant(_i8, 1),
                           builder.trunc(builder.and_(i64, ir.Constant(_i64, 7)), _i8))
        old = builder.load(p)
        v = context.cast(builder, args[2], sig.args[2], types.boolean)
        builder.store(builder.select(v, builder.or_(old, mask),
                                     builder.and_(old, builder.not_(mask))), p)
        return context.get_dummy_value()
    return types.none(bits, i, valid), codegen


@intrinsic
def _is_null_ptr(typingctx, p):
    if p != types.voidptr:
        return None

    def codegen(context, builder, sig, args):
        return builder.icmp_unsigned("==", args[0], cgutils.get_null_value(_i8p))
    return types.boolean(p), codegen


@intrinsic
def _offset(typingctx, p, n):
    if p != types.voidptr or not isinstance(n, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.gep(args[0], [context.cast(builder, args[1], sig.args[1], types.int64)])
    return types.voidptr(p, n), codegen


def _loader(dtype):
    from .cpu_element import loader
    from .string_elements import load_string
    return load_string if dtype == types.unicode_type else loader(dtype)


def _storer(dtype):
    from .cpu_element import storer
    return storer(dtype)


# ----------------------------------------------------------- operations ----
@register_jitable
def _index(row, i):
    n = _field(row, "size")
    if i < 0:
        i += n
    if i < 0 or i >= n:
        raise IndexError("ckernels.jit: index out of range of the row of option elements")
    return i


@register_jitable
def slot_valid(row, i):
    """Whether slot ``i`` (checked, non-negative) holds a value."""
    bits = _field(row, "bits")
    return _is_null_ptr(bits) or _bit(bits, _field(row, "bit0") + i * _field(row, "bitstep"))


@overload(len)
def _ov_len(row):
    if isinstance(row, OptionRowType):
        return lambda row: _field(row, "size")


def _make_get(row):
    load = _loader(row.dtype)

    def get(row, i):
        if slot_valid(row, i):
            return load(_offset(_field(row, "data"), i * _field(row, "stride")))
        return None
    return register_jitable(get)


_GETTERS: dict = {}


def _getter(row):
    g = _GETTERS.get(row.dtype)
    if g is None:
        g = _GETTERS[row.dtype] = _make_get(row)
    return g


@overload(operator.getitem)
def _ov_getitem(row, i):
    if isinstance(row, OptionRowType) and isinstance(i, types.Integer):
        get = _getter(row)

        def impl(row, i):
            return get(row, _index(row, i))
        return impl


@overload_method(OptionRowType, "is_null")
def _ov_is_null(row, i):
    if isinstance(i, types.Integer):
        return lambda row, i: not slot_valid(row, _index(row, i))


@register_jitable
def slot_pointer(row, k):
    """The address of slot ``k`` (checked, non-negative)."""
    return _offset(_field(row, "data"), k * _field(row, "stride"))


def _store_text(row, p, value):
    """Write the text of ``value`` (a str or a view) into the row's string
    arena and point the ck_string at ``p`` to it."""


@overload(_store_text)
def _ov_store_text(row, p, value):
    from .string_elements import store_string_result
    from .._numba.stringtype import CkStringType
    if isinstance(value, (types.UnicodeType, CkStringType)):
        return lambda row, p, value: store_string_result(_field(row, "arena"), p, value)


@overload(operator.setitem)
def _ov_setitem(row, i, value):
    if not (isinstance(row, OptionRowType) and isinstance(i, types.Integer)):
        return None
    if not row.writable:
        return None
    if isinstance(row.dtype, types.UnicodeType):
        return _setitem_text(value)
    store = _storer(row.dtype)

    if isinstance(value, types.NoneType):
        def impl_none(row, i, value):
            write_null(row, _index(row, i))
        return impl_none
    if isinstance(value, types.Optional):
        def impl_opt(row, i, value):
            k = _index(row, i)
            if value is None:
                write_null(row, k)
            else:
                store(_offset(_field(row, "data"), k * _field(row, "stride")), value)
                write_valid(row, k)
        return impl_opt

    def impl(row, i, value):
        k = _index(row, i)
        store(_offset(_field(row, "data"), k * _field(row, "stride")), value)
        write_valid(row, k)
    return impl


def _setitem_text(value):
    """setitem of a writable ``?string`` row: None a null, a str or a view
    its text (into the row's arena)."""
    if isinstance(value, types.NoneType):
        def impl_none(row, i, value):
            write_null(row, _index(row, i))
        return impl_none
    if isinstance(value, types.Optional):
        def impl_opt(row, i, value):
            k = _index(row, i)
            if value is None:
                write_null(row, k)
            else:
                _store_text(row, slot_pointer(row, k), value)
                write_valid(row, k)
        return impl_opt

    def impl(row, i, value):
        k = _index(row, i)
        _store_text(row, slot_pointer(row, k), value)
        write_valid(row, k)
    return impl


@register_jitable
def write_null(row, k):
    bits = _field(row, "bits")
    if _is_null_ptr(bits):
        raise ValueError("ckernels.jit: the result has no validity bitmap to write a null "
                         "into")
    _set_bit(bits, _field(row, "bit0") + k * _field(row, "bitstep"), False)


@register_jitable
def write_valid(row, k):
    bits = _field(row, "bits")
    if not _is_null_ptr(bits):
        _set_bit(bits, _field(row, "bit0") + k * _field(row, "bitstep"), True)


@register_jitable
def has_null(row):
    """Whether any slot of the row is null (null propagation, below)."""
    if _is_null_ptr(_field(row, "bits")):
        return False
    for k in range(_field(row, "size")):
        if not slot_valid(row, k):
            return True
    return False


@register_jitable
def set_all(row, valid):
    """Every slot of a writable row null (``valid`` False) or valid."""
    for k in range(_field(row, "size")):
        if valid:
            write_valid(row, k)
        else:
            write_null(row, k)


_VALUES: dict = {}


def values(arrty):
    """Intrinsic ``(row) -> arrty``: the row's values as a Numba array (1-d,
    layout "A"; read-only or writable as ``arrty`` says) over the same
    memory -- what a plain ``T`` signature's function sees when nulls are
    propagated around it."""
    fn = _VALUES.get(arrty)
    if fn is not None:
        return fn

    @intrinsic
    def _ck_row_values(typingctx, row):
        if not isinstance(row, OptionRowType):
            return None

        def codegen(context, builder, sig, args):
            from numba.np.arrayobj import populate_array
            r = cgutils.create_struct_proxy(row)(context, builder, value=args[0])
            ary = context.make_array(arrty)(context, builder)
            itemsize = context.get_abi_sizeof(context.get_data_type(arrty.dtype))
            populate_array(ary, data=builder.bitcast(r.data, ary.data.type),
                           shape=cgutils.pack_array(builder, [r.size]),
                           strides=cgutils.pack_array(builder, [r.stride]),
                           itemsize=ir.Constant(_i64, itemsize), meminfo=None)
            return ary._getvalue()
        return arrty(row), codegen
    _VALUES[arrty] = _ck_row_values
    return _ck_row_values


# ------------------------------------------------------------- iteration ----
@lower_builtin("getiter", OptionRowType)
def _getiter(context, builder, sig, args):
    it = context.make_helper(builder, sig.return_type)
    it.row = args[0]
    idx = cgutils.alloca_once_value(builder, context.get_constant(types.intp, 0))
    it.index = idx
    return it._getvalue()


def _lower_iternext(context, builder, sig, args, result):
    itty = sig.args[0]
    it = context.make_helper(builder, itty, value=args[0])
    row = cgutils.create_struct_proxy(itty.row)(context, builder, value=it.row)
    index = builder.load(it.index)
    is_valid = builder.icmp_signed("<", index, row.size)
    result.set_valid(is_valid)
    opt = types.Optional(itty.row.dtype)
    with builder.if_then(is_valid):
        if isinstance(itty.row.dtype, (types.Number, types.Boolean)):
            # numbers and bool: the value is read whatever its bit (the bytes
            # under a null are readable, never surfaced), so the slot is a
            # select, not a branch, and the function's `if v is not None`
            # can become one too
            valid = cgutils.alloca_once_value(builder, cgutils.true_bit)
            with builder.if_then(cgutils.is_not_null(builder, row.bits)):
                bit = builder.add(row.bit0, builder.mul(index, row.bitstep))
                byte = builder.load(builder.gep(row.bits,
                                                [builder.ashr(bit, ir.Constant(_i64, 3))]))
                sh = builder.trunc(builder.and_(bit, ir.Constant(_i64, 7)), _i8)
                builder.store(builder.trunc(builder.lshr(byte, sh), ir.IntType(1)), valid)
            ptr = builder.gep(row.data, [builder.mul(index, row.stride)])
            nbty = itty.row.dtype
            value = context.unpack_value(
                builder, nbty, builder.bitcast(ptr, context.get_data_type(nbty).as_pointer()))
            o = context.make_helper(builder, opt)
            o.valid = builder.load(valid)
            o.data = value
            result.yield_(o._getvalue())
        else:
            get = _getter(itty.row)
            value = context.compile_internal(
                builder, lambda r, i: get(r, i), opt(itty.row, types.intp), [it.row, index])
            result.yield_(value)
        builder.store(builder.add(index, context.get_constant(types.intp, 1)), it.index)


lower_builtin("iternext", OptionRowIterType)(
    iternext_impl(RefType.BORROWED)(_lower_iternext))


__all__ = ["OptionRowType", "OptionRowIterType", "make_row", "slot_valid", "slot_pointer",
           "write_null",
           "write_valid", "has_null", "set_all", "values"]
