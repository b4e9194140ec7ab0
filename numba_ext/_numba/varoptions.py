"""Building a ``var * ?R`` element (a row of option elements) from jitted code.

A :class:`VarOptionBuilderType` value is what a jitted kernel with a
``var * ?R`` result (R a number, bool or string) gets as its output
parameter, and what a returned list, tuple or array is copied through:
``out.append(None)`` appends a null, ``out.append(x)`` a value (a number or
bool cast to R; for strings a ``str`` or a ``CkString`` view whose bytes are
copied into the destination's text arena); ``len(out)`` is the count so far.

The row is one allocation of the destination's var arena, grown as
:mod:`.varbuilder` grows numbers (8 slots, then doubling), of *records*: the
value then one validity byte, ``rec`` bytes each (``ckernel/jit.h``
``CK_JIT_VAR_OPTION_RECORD``: R's size plus its alignment).  Once every row is
written, ``ck_jit_var_option_finish`` (``src/lib/jit/jit_var_option.c``) lays
the whole result out as Arrow does (the values one after another, a bitmap
over them).  A string row whose var and text arenas are one block grows by a
new allocation and a copy, as :mod:`.varstrings` does.  The state lives in
the caller's stack frame (:mod:`.builder_state`), 5 words: var arena, begin,
end, count, text arena.

Arena failures raise the ckernel exception of the pod allocator's status.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing.templates import signature
from numba.extending import (intrinsic, overload, overload_method, register_jitable,
                             register_model)

from .allocator import _ck_pod_allocate, _ck_pod_resize
from .builder_state import (ROW_STATE_WORDS, ROW_WORDS, BuilderStateType, StateModel,
                            install_set_null, make_reserve, new_state, no_null_row,
                            write_var_element)
from .builder_state import get_word as _get
from .builder_state import set_word as _set
from .memblock import memblock_from_address, raise_status
from .stringtype import CkStringType
from .utf8 import memcpy, str_encode_into, str_utf8_nbytes

_i8 = ir.IntType(8)
_i64 = ir.IntType(64)

ARENA, BEGIN, END, COUNT, TEXT = ROW_WORDS
_WORDS = ROW_STATE_WORDS
#: bytes of one ck_string ({char *begin; char *end;})
_STRING_SIZE = 16


class VarOptionBuilderType(BuilderStateType):
    """The output of a jitted kernel with a ``var * ?R`` result: ``dtype`` is
    R's Numba type (``unicode_type`` for strings), ``rec`` one record's bytes."""

    def __init__(self, dtype, rec: int):
        self.dtype = dtype
        self.rec = rec
        super().__init__(name=f"ckernels.VarOptionBuilder({dtype}, {rec})")

    @property
    def key(self):
        return (self.dtype, self.rec)

    @property
    def text(self) -> bool:
        return isinstance(self.dtype, types.UnicodeType)


register_model(VarOptionBuilderType)(StateModel)
install_set_null(VarOptionBuilderType)


@intrinsic
def new_options(typingctx, bty, arena, text):
    """A builder of type ``bty`` (a ``types.TypeRef``) over the var arena at
    address ``arena`` and the text arena at ``text`` (0 for numbers)."""
    if not isinstance(bty, types.TypeRef) or not isinstance(bty.instance_type,
                                                             VarOptionBuilderType):
        return None
    resty = bty.instance_type

    def codegen(context, builder, sig, args):
        arena, text = (context.cast(builder, v, t, types.intp)
                       for v, t in zip(args[1:], sig.args[1:]))
        return new_state(context, builder, resty, _WORDS, {ARENA: arena, TEXT: text})
    return signature(resty, bty, arena, text), codegen


def _value_size(context, b) -> int:
    if b.text:
        return _STRING_SIZE
    return context.get_abi_sizeof(context.get_data_type(b.dtype))


@intrinsic
def _rec_size(typingctx, b):
    if not isinstance(b, VarOptionBuilderType):
        return None

    def codegen(context, builder, sig, args):
        return ir.Constant(_i64, b.rec)
    return signature(types.intp, b), codegen


@intrinsic
def _put(typingctx, b, addr, value):
    """Record at ``addr``: ``value`` (cast to R; None or a string: nothing)
    and its validity byte (1, or 0 for None)."""
    if not isinstance(b, VarOptionBuilderType) or not isinstance(addr, types.Integer):
        return None
    null = isinstance(value, types.NoneType)
    if not null and not b.text and typingctx.can_convert(value, b.dtype) is None:
        return None

    def codegen(context, builder, sig, args):
        size = _value_size(context, b)
        p = builder.inttoptr(context.cast(builder, args[1], sig.args[1], types.intp),
                             _i8.as_pointer())
        if null:
            cgutils.memset(builder, p, ir.Constant(_i64, size), 0)
        elif not b.text:
            el = b.dtype
            ptr = builder.bitcast(p, context.get_data_type(el).as_pointer())
            context.pack_value(builder, el, context.cast(builder, args[2], sig.args[2], el),
                               ptr, align=1)
        builder.store(ir.Constant(_i8, 0 if null else 1),
                      builder.gep(p, [ir.Constant(_i64, size)]))
        return context.get_dummy_value()
    return signature(types.none, b, addr, value), codegen


@intrinsic
def _store_slot(typingctx, addr, begin, end):
    """``*(ck_string *)addr = {begin, end}`` (addresses as integers)."""
    if not all(isinstance(t, types.Integer) for t in (addr, begin, end)):
        return None

    def codegen(context, builder, sig, args):
        a, bg, en = (context.cast(builder, v, t, types.intp) for v, t in zip(args, sig.args))
        p = builder.inttoptr(a, _i64.as_pointer())
        builder.store(bg, p, align=1)
        builder.store(en, builder.gep(p, [ir.Constant(_i64, 1)]), align=1)
        return context.get_dummy_value()
    return signature(types.none, addr, begin, end), codegen


#: Room for ``n`` records in all (the allocation grows, never shrinks).
reserve = make_reserve(_rec_size, "var * ?R", text="optional")


@register_jitable
def _next(b):
    """The address of a new record at the end of the row."""
    n = _get(b, COUNT)
    rec = _rec_size(b)
    if _get(b, BEGIN) == 0 or _get(b, BEGIN) + (n + 1) * rec > _get(b, END):
        reserve(b, max(8, 2 * n))
    _set(b, COUNT, n + 1)
    return _get(b, BEGIN) + n * rec


@register_jitable
def _text(b, nbytes):
    if _get(b, TEXT) == 0:
        raise ValueError("ckernels.jit: a var * ?string result needs a text arena")
    st, tb, te = _ck_pod_allocate(memblock_from_address(_get(b, TEXT)), nbytes, 1)
    if st != 0:
        raise_status(st, "writing a string of a var * ?string result")
    return tb


@register_jitable
def _append_none(b):
    _put(b, _next(b), None)


@register_jitable
def _append_value(b, x):
    _put(b, _next(b), x)


@register_jitable
def _append_str(b, s):
    n = str_utf8_nbytes(s)
    slot = _next(b)
    _put(b, slot, s)
    if n == 0:
        _store_slot(slot, 0, 0)
        return
    tb = _text(b, n)
    str_encode_into(s, tb)
    _store_slot(slot, tb, tb + n)


@register_jitable
def _append_view(b, s):
    n = s.end - s.begin
    slot = _next(b)
    _put(b, slot, s)
    if n <= 0:
        _store_slot(slot, 0, 0)
        return
    tb = _text(b, n)
    memcpy(tb, s.begin, n)
    _store_slot(slot, tb, tb + n)


@intrinsic
def _unwrap(typingctx, v):
    """The value of an Optional known not to be None (a new reference)."""
    if not isinstance(v, types.Optional):
        return None

    def codegen(context, builder, sig, args):
        res = context.cast(builder, args[0], sig.args[0], sig.return_type)
        context.nrt.incref(builder, sig.return_type, res)
        return res
    return v.type(v), codegen


def _value_ok(b, x) -> bool:
    if b.text:
        return isinstance(x, (types.UnicodeType, CkStringType))
    return isinstance(x, (types.Number, types.Boolean))


def append(b, x):
    """``b.append(x)`` as a function (jitted code only)."""


@overload(append)
def _ov_append_fn(b, x):
    if not isinstance(b, VarOptionBuilderType):
        return None
    if isinstance(x, types.NoneType):
        return lambda b, x: _append_none(b)
    if isinstance(x, types.Optional) and _value_ok(b, x.type):
        def impl_opt(b, x):
            if x is None:
                _append_none(b)
            else:
                append(b, _unwrap(x))
        return impl_opt
    if not _value_ok(b, x):
        return None
    if isinstance(x, types.UnicodeType):
        return lambda b, x: _append_str(b, x)
    if isinstance(x, CkStringType):
        return lambda b, x: _append_view(b, x)
    return lambda b, x: _append_value(b, x)


@overload_method(VarOptionBuilderType, "append")
def _ov_append(b, x):
    if isinstance(x, types.NoneType) or (
            isinstance(x, types.Optional) and _value_ok(b, x.type)) or _value_ok(b, x):
        return lambda b, x: append(b, x)


@overload(len)
def _ov_len(b):
    if isinstance(b, VarOptionBuilderType):
        return lambda b: _get(b, COUNT)


def extend_from(b, values):
    """Append every element of a 1-d array, list or tuple (None: a null)."""


@overload(extend_from)
def _ov_extend_from(b, values):
    if not isinstance(b, VarOptionBuilderType):
        return None
    if isinstance(values, types.BaseTuple) and not isinstance(values, types.UniTuple):
        from numba import literal_unroll

        def impl_tuple(b, values):
            reserve(b, _get(b, COUNT) + len(values))
            for v in literal_unroll(values):
                append(b, v)
        return impl_tuple

    def impl(b, values):
        reserve(b, _get(b, COUNT) + len(values))
        for i in range(len(values)):
            append(b, values[i])
    return impl


@register_jitable
def finish(b, dst, offset):
    """Trim the records to those appended (separate arenas only) and point
    the var element at ``dst`` to them (``offset``: the destination's var
    arrmeta's)."""
    no_null_row(b)
    n = _get(b, COUNT)
    begin = _get(b, BEGIN)
    if begin != 0 and _get(b, ARENA) != _get(b, TEXT):
        st, nb, ne = _ck_pod_resize(memblock_from_address(_get(b, ARENA)),
                                    n * _rec_size(b), begin, _get(b, END))
        if st != 0:
            raise_status(st, "trimming a var * ?R result")
        begin = nb
    if n == 0:
        write_var_element(dst, 0, 0)
    else:
        write_var_element(dst, begin - offset, n)


__all__ = ["VarOptionBuilderType", "new_options", "reserve", "append", "extend_from",
           "finish"]
