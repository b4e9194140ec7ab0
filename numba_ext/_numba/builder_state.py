"""The state of a builder that jitted code appends to (:mod:`.varbuilder`:
``var * T`` results, :mod:`.varstrings`: ``var * string`` results).

The state is a few int64 words in the caller's stack frame (``alloca``, made
zero by :func:`new_state`); a builder value is a pointer to them
(:class:`StateModel`), so appends made inside the user's function are seen
by the entry point that finishes the builder.  :func:`get_word` and
:func:`set_word` read and write word ``k`` (a literal) of any builder type
derived from :class:`BuilderStateType`; what each word means is the
builder's.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing.templates import signature
from numba.extending import intrinsic, models

_i8p = ir.IntType(8).as_pointer()
_i64 = ir.IntType(64)


class BuilderStateType(types.Type):
    """Base of the builder types whose value points to state words on the
    caller's stack (each registers :class:`StateModel` for itself: Numba
    looks data models up by the exact class)."""


class StateModel(models.StructModel):
    """A builder value: the address of its state words."""

    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("state", types.voidptr)])


def state_words(context, builder, ty, val):
    """The state words of builder value ``val`` (of type ``ty``), an ``i64*``."""
    v = cgutils.create_struct_proxy(ty)(context, builder, value=val)
    return builder.bitcast(v.state, _i64.as_pointer())


def new_state(context, builder, resty, nwords: int, words: dict):
    """A builder value of type ``resty`` over ``nwords`` zeroed state words in
    the caller's frame, word ``k`` set to the i64 value ``words[k]``."""
    st = cgutils.alloca_once(builder, ir.ArrayType(_i64, nwords))
    builder.store(ir.Constant(ir.ArrayType(_i64, nwords), [0] * nwords), st)
    p = builder.bitcast(st, _i64.as_pointer())
    for k, value in words.items():
        builder.store(value, builder.gep(p, [ir.Constant(_i64, k)]))
    v = cgutils.create_struct_proxy(resty)(context, builder)
    v.state = builder.bitcast(st, _i8p)
    return v._getvalue()


@intrinsic
def get_word(typingctx, b, k):
    """State word ``k`` (a literal) of builder ``b``, as intp."""
    if not isinstance(b, BuilderStateType) or not isinstance(k, types.IntegerLiteral):
        return None
    idx = k.literal_value

    def codegen(context, builder, sig, args):
        p = state_words(context, builder, b, args[0])
        return builder.load(builder.gep(p, [ir.Constant(_i64, idx)]))
    return signature(types.intp, b, k), codegen


@intrinsic
def set_word(typingctx, b, k, value):
    """Set state word ``k`` (a literal) of builder ``b`` to ``value`` (an integer)."""
    if not isinstance(b, BuilderStateType) or not isinstance(k, types.IntegerLiteral):
        return None
    idx = k.literal_value

    def codegen(context, builder, sig, args):
        p = state_words(context, builder, b, args[0])
        v = context.cast(builder, args[2], sig.args[2], types.intp)
        builder.store(v, builder.gep(p, [ir.Constant(_i64, idx)]))
        return context.get_dummy_value()
    return signature(types.none, b, k, value), codegen


@intrinsic
def write_var_element(typingctx, dst, begin, count):
    """``*(ck_var_dim_data *)dst = {begin, count}``: the var element a
    builder's ``finish`` points at what was appended."""
    if dst != types.voidptr:
        return None

    def codegen(context, builder, sig, args):
        p = builder.bitcast(args[0], ir.IntType(64).as_pointer())
        builder.store(context.cast(builder, args[1], sig.args[1], types.intp), p)
        builder.store(context.cast(builder, args[2], sig.args[2], types.intp),
                      builder.gep(p, [ir.Constant(ir.IntType(64), 1)]))
        return context.get_dummy_value()
    return signature(types.none, dst, begin, count), codegen


__all__ = ["write_var_element", "BuilderStateType", "StateModel", "state_words", "new_state", "get_word",
           "set_word"]
