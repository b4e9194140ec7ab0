"""Building a var dim element (``var * T``) in an arena from jitted code.

A :class:`VarBuilderType` value is what a jitted kernel with a ``var * T``
result gets as its output parameter (:mod:`ckernels.jit.dims`): ``out.append(x)``
writes ``x`` (cast to ``T``) straight into the destination's arena, ``len(out)``
is the count so far.  The elements are one allocation of the arena: the first
``append`` allocates room for 8, each growth doubles it with the pod
allocator's ``resize`` of the latest allocation (in place while the chunk has
room), and :func:`finish` trims it to the exact size and points the
destination's ``{begin, size}`` at it.  An empty result allocates nothing.

The builder's state lives in the caller's stack frame (``new`` allocates it
with ``alloca``, :mod:`.builder_state`): the value passed around is a pointer to
it, so appends made inside the user's function are seen by :func:`finish` in
the entry point.  State words: arena, begin, end (capacity), count.

Arena failures (more than the arena can hold, out of memory) raise the
ckernel exception of the pod allocator's status with its message.

``out.set_null()`` (every row builder has it, :mod:`.builder_state`) makes
the row a null row of a ``?var * T`` result; on a plain ``var * T`` result
:func:`finish` raises ValueError.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.core.typing.templates import signature
from numba.extending import (intrinsic, overload, overload_method, register_jitable,
                             register_model)

from .allocator import _ck_pod_resize
from .builder_state import (ROW_STATE_WORDS, ROW_WORDS, BuilderStateType, StateModel,
                            install_set_null, make_reserve, new_state, no_null_row,
                            write_var_element)
from .builder_state import get_word as _get
from .builder_state import set_word as _set
from .builder_state import state_words as _state
from .memblock import memblock_from_address, raise_status

_i64 = ir.IntType(64)

ARENA, BEGIN, END, COUNT = ROW_WORDS[:4]
_WORDS = ROW_STATE_WORDS


class VarBuilderType(BuilderStateType):
    """The output of a jitted kernel with a ``var * dtype`` result."""

    def __init__(self, dtype):
        self.dtype = dtype
        super().__init__(name=f"ckernels.VarBuilder({dtype})")


register_model(VarBuilderType)(StateModel)
install_set_null(VarBuilderType)


@intrinsic
def new(typingctx, dtype_ref, arena):
    """A builder (state on the caller's stack) over arena address ``arena``."""
    if not isinstance(dtype_ref, types.NumberClass) and not isinstance(
            dtype_ref, types.DType):
        return None
    el = dtype_ref.dtype
    resty = VarBuilderType(el)

    def codegen(context, builder, sig, args):
        arena = context.cast(builder, args[1], sig.args[1], types.intp)
        return new_state(context, builder, resty, _WORDS, {ARENA: arena})
    return signature(resty, dtype_ref, arena), codegen


@intrinsic
def _put(typingctx, b, i, value):
    """Store ``value`` (cast to the element type) as element ``i``."""
    if not isinstance(b, VarBuilderType) or typingctx.can_convert(value, b.dtype) is None:
        return None
    el = b.dtype

    def codegen(context, builder, sig, args):
        p = _state(context, builder, b, args[0])
        begin = builder.load(builder.gep(p, [ir.Constant(_i64, BEGIN)]))
        size = context.get_abi_sizeof(context.get_data_type(el))
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        addr = builder.add(begin, builder.mul(i, ir.Constant(_i64, size)))
        ptr = builder.inttoptr(addr, context.get_data_type(el).as_pointer())
        context.pack_value(builder, el, context.cast(builder, args[2], sig.args[2], el), ptr,
                           align=1)
        return context.get_dummy_value()
    return signature(types.none, b, i, value), codegen


@intrinsic
def _itemsize(typingctx, b):
    if not isinstance(b, VarBuilderType):
        return None

    def codegen(context, builder, sig, args):
        return ir.Constant(_i64, context.get_abi_sizeof(context.get_data_type(b.dtype)))
    return signature(types.intp, b), codegen


#: Room for ``n`` elements in all (the allocation grows, never shrinks).
reserve = make_reserve(_itemsize, "var", text="none")


@register_jitable
def _append(b, x):
    n = _get(b, COUNT)
    size = _itemsize(b)
    if _get(b, BEGIN) == 0 or _get(b, BEGIN) + (n + 1) * size > _get(b, END):
        reserve(b, max(8, 2 * n))
    _put(b, n, x)
    _set(b, COUNT, n + 1)


@overload_method(VarBuilderType, "append")
def _ov_append(b, x):
    if typing_ok(b, x):
        return lambda b, x: _append(b, x)


def typing_ok(b, x) -> bool:
    return isinstance(x, (types.Number, types.Boolean))


@overload(len)
def _ov_len(b):
    if isinstance(b, VarBuilderType):
        return lambda b: _get(b, COUNT)


@register_jitable
def extend_from(b, values):
    """Append every element of a 1-d array, list or tuple (one reservation)."""
    n = len(values)
    have = _get(b, COUNT)
    reserve(b, have + n)
    for i in range(n):
        _put(b, have + i, values[i])
    _set(b, COUNT, have + n)


@register_jitable
def finish(b, dst, stride, offset):
    """Trim the allocation to the elements appended and point the var element
    at ``dst`` to them (``stride`` / ``offset``: the destination's var
    arrmeta; its elements must be contiguous)."""
    no_null_row(b)
    n = _get(b, COUNT)
    size = _itemsize(b)
    if n > 0 and stride != size:
        raise ValueError("ckernels.jit: the destination's var dim is not contiguous "
                         "(its stride differs from the element size)")
    begin = _get(b, BEGIN)
    if begin != 0:
        arena = memblock_from_address(_get(b, ARENA))
        st, nb, ne = _ck_pod_resize(arena, n * size, begin, _get(b, END))
        if st != 0:
            raise_status(st, "trimming a var result")
        begin = nb
    if n == 0:
        write_var_element(dst, 0, 0)
    else:
        write_var_element(dst, begin - offset, n)


__all__ = ["VarBuilderType", "new", "reserve", "extend_from", "finish"]
