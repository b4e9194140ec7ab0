"""Building a ``var * string`` element (a row of strings) from jitted code.

A :class:`VarStringBuilderType` value is what a jitted kernel with a
``var * string`` result gets as its output parameter (:mod:`ckernels.jit.dims`),
and what a returned list/tuple of strings is copied through:
``out.append(s)`` writes the text of ``s`` (a Numba ``str`` or a ``CkString``
view: its bytes are copied, a view's source may die with the call) into the
destination's *text* arena and its ``ck_string {begin, end}`` into the row's
slots; ``len(out)`` is the count so far.

The slots are one allocation of the destination's *var* arena, grown as
:mod:`.varbuilder` grows numbers (8, then doubling) and trimmed on
:func:`finish`.  The pod allocator resizes only an arena's latest
allocation, so when the two arenas are one block (an Arrow-imported or
hand-made destination may share them) the slots grow by a new allocation
and a copy, and are not trimmed (the text written since sits after them).
The state lives in the caller's stack frame (``alloca``, :mod:`.builder_state`), 5 words: var arena,
slots begin, slots end, count, text arena.

Arena failures raise the ckernel exception of the pod allocator's status.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
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

_i64 = ir.IntType(64)

ARENA, BEGIN, END, COUNT, TEXT = ROW_WORDS
_WORDS = ROW_STATE_WORDS
#: bytes of one ck_string slot ({char *begin; char *end;})
SLOT = 16


class VarStringBuilderType(BuilderStateType):
    """The output of a jitted kernel with a ``var * string`` result."""

    def __init__(self):
        super().__init__(name="ckernels.VarStringBuilder")


var_string_builder_type = VarStringBuilderType()


register_model(VarStringBuilderType)(StateModel)
install_set_null(VarStringBuilderType)


@intrinsic
def new_strings(typingctx, arena, text):
    """A builder (state on the caller's stack) over the var arena at address
    ``arena`` and the text arena at ``text``."""
    if not isinstance(arena, types.Integer) or not isinstance(text, types.Integer):
        return None
    resty = var_string_builder_type

    def codegen(context, builder, sig, args):
        arena, text = (context.cast(builder, v, t, types.intp) for v, t in zip(args, sig.args))
        return new_state(context, builder, resty, _WORDS, {ARENA: arena, TEXT: text})
    return signature(resty, arena, text), codegen


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


@register_jitable
def _slot_size(b):
    return SLOT


#: Room for ``n`` slots in all (the allocation grows, never shrinks).
reserve = make_reserve(_slot_size, "var * string", text="required")


@register_jitable
def _text(b, nbytes):
    """``nbytes`` new bytes of the text arena: their first address."""
    st, tb, te = _ck_pod_allocate(memblock_from_address(_get(b, TEXT)), nbytes, 1)
    if st != 0:
        raise_status(st, "writing a string of a var * string result")
    return tb


@register_jitable
def _next_slot(b):
    n = _get(b, COUNT)
    if _get(b, BEGIN) == 0 or _get(b, BEGIN) + (n + 1) * SLOT > _get(b, END):
        reserve(b, max(8, 2 * n))
    _set(b, COUNT, n + 1)
    return _get(b, BEGIN) + n * SLOT


@register_jitable
def _append_str(b, s):
    n = str_utf8_nbytes(s)
    slot = _next_slot(b)
    if n == 0:
        _store_slot(slot, 0, 0)
        return
    tb = _text(b, n)
    str_encode_into(s, tb)
    _store_slot(slot, tb, tb + n)


@register_jitable
def _append_view(b, s):
    n = s.end - s.begin
    slot = _next_slot(b)
    if n <= 0:
        _store_slot(slot, 0, 0)
        return
    tb = _text(b, n)
    memcpy(tb, s.begin, n)
    _store_slot(slot, tb, tb + n)


def text_ok(x) -> bool:
    """Whether ``x`` (a Numba type) is a string an element can be made of."""
    return isinstance(x, (types.UnicodeType, CkStringType))


@overload_method(VarStringBuilderType, "append")
def _ov_append(b, x):
    if isinstance(x, types.UnicodeType):
        return lambda b, x: _append_str(b, x)
    if isinstance(x, CkStringType):
        return lambda b, x: _append_view(b, x)


@overload(len)
def _ov_len(b):
    if isinstance(b, VarStringBuilderType):
        return lambda b: _get(b, COUNT)


def append(b, x):
    """``b.append(x)`` as a function (jitted code only)."""


@overload(append)
def _ov_append_fn(b, x):
    if isinstance(b, VarStringBuilderType) and text_ok(x):
        return lambda b, x: b.append(x)


@register_jitable
def extend_from(b, values):
    """Append every string of a list or tuple (one reservation)."""
    reserve(b, _get(b, COUNT) + len(values))
    for v in values:
        append(b, v)


@register_jitable
def finish(b, dst, stride, offset):
    """Trim the slots to the strings appended (separate arenas only) and point
    the var element at ``dst`` to them (``stride`` / ``offset``: the
    destination's var arrmeta; its slots must be contiguous)."""
    no_null_row(b)
    n = _get(b, COUNT)
    if n > 0 and stride != SLOT:
        raise ValueError("ckernels.jit: the destination's var dim is not contiguous "
                         "(its stride differs from the element size)")
    begin = _get(b, BEGIN)
    if begin != 0 and _get(b, ARENA) != _get(b, TEXT):
        st, nb, ne = _ck_pod_resize(memblock_from_address(_get(b, ARENA)), n * SLOT, begin,
                                    _get(b, END))
        if st != 0:
            raise_status(st, "trimming a var * string result")
        begin = nb
    if n == 0:
        write_var_element(dst, 0, 0)
    else:
        write_var_element(dst, begin - offset, n)


__all__ = ["VarStringBuilderType", "var_string_builder_type", "new_strings", "reserve",
           "extend_from", "finish", "text_ok", "SLOT"]
