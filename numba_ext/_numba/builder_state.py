"""The state of a builder that jitted code appends to (:mod:`.varbuilder`:
``var * T`` results, :mod:`.varstrings`: ``var * string`` results).

The state is a few int64 words in the caller's stack frame (``alloca``, made
zero by :func:`new_state`); a builder value is a pointer to them
(:class:`StateModel`), so appends made inside the user's function are seen
by the entry point that finishes the builder.  :func:`get_word` and
:func:`set_word` read and write word ``k`` (a literal) of any builder type
derived from :class:`BuilderStateType`; what each word means is the
builder's.  :func:`make_reserve` grows the rows of the builders whose words
are :data:`ROW_WORDS` (:mod:`.varbuilder`, :mod:`.varstrings`,
:mod:`.varoptions`).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing.templates import signature
from numba.extending import intrinsic, models, overload, overload_method, register_jitable

from .allocator import _ck_pod_allocate, _ck_pod_resize
from .memblock import memblock_from_address, raise_status
from .utf8 import memcpy

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


#: The state words of a row builder: var arena, the row's allocation
#: [begin, end), the count so far, then (string and option rows) text arena.
ROW_WORDS = ARENA, BEGIN, END, COUNT, TEXT = 0, 1, 2, 3, 4
#: Word set by ``out.set_null()``: the row is null (a ``?var * R`` result),
#: and how many words every row builder has.
NULL_ROW = 5
ROW_STATE_WORDS = 6
#: The ``begin`` a null row's ``ck_var_dim_data`` gets: CK_JIT_NULL_ROW
#: (``ckernel/jit.h``, all bits set), read by ``ck_jit_var_option_finish``.
NULL_ROW_BEGIN = -1


def set_null(b):
    """``out.set_null()``: the row being built is null (jitted code only)."""


@overload(set_null)
def _ov_set_null(b):
    if isinstance(b, BuilderStateType):
        return lambda b: set_word(b, NULL_ROW, 1)


def install_set_null(builder_class) -> None:
    """Give ``builder_class`` (a row builder) its ``set_null()`` method."""
    @overload_method(builder_class, "set_null")
    def _ov(b):
        return lambda b: set_null(b)


@register_jitable
def write_null_row(dst):
    """The var element at ``dst`` is a null row (CK_JIT_NULL_ROW, 0)."""
    write_var_element(dst, NULL_ROW_BEGIN, 0)


@register_jitable
def null_row_set(b):
    """Whether ``out.set_null()`` was called, and the elements appended."""
    return get_word(b, NULL_ROW) != 0, get_word(b, COUNT)


@register_jitable
def no_null_row(b):
    """The finish of a builder of a result without null rows: ``set_null()``
    there is an error."""
    if get_word(b, NULL_ROW) != 0:
        raise ValueError("ckernels.jit: out.set_null() on a result without null rows: "
                         "declare the result ?var * R to give null rows")


def make_reserve(rec_size, what: str, text: str):
    """``reserve(b, n)`` (jitted) for the row builders of :data:`ROW_WORDS`:
    room for ``n`` records in all, ``rec_size(b)`` bytes each (the allocation
    grows, never shrinks).

    ``text``: ``"none"`` (:mod:`.varbuilder`: no text word; records aligned
    to their size), ``"optional"`` (:mod:`.varoptions`) or ``"required"``
    (:mod:`.varstrings`: a missing text arena is an error too); records of
    a builder with a text word are 8-aligned.  The pod allocator resizes only
    an arena's latest allocation, so when the var and text arenas are one
    block the row grows by a new allocation and a copy.  The messages name
    the result kind ``what`` (``"var * string"``): a missing arena raises
    ValueError, an allocator failure the ckernel exception of its status
    (the messages are constants of the compiled code, as
    :func:`.memblock.raise_status` needs)."""
    if text not in ("none", "optional", "required"):
        raise ValueError(f"make_reserve: text {text!r} is not 'none', 'optional' or 'required'")
    has_text = text != "none"
    needs_text = text == "required"
    missing = (f"ckernels.jit: a {what} result needs "
               + ("destination arenas" if needs_text else "a destination arena"))
    allocating = f"allocating a {what} result"
    growing = f"growing a {what} result"

    @register_jitable
    def reserve(b, n):
        rec = rec_size(b)
        need = n * rec
        begin = get_word(b, BEGIN)
        if begin != 0 and get_word(b, END) - begin >= need:
            return
        if get_word(b, ARENA) == 0 or (needs_text and get_word(b, TEXT) == 0):
            raise ValueError(missing)
        arena = memblock_from_address(get_word(b, ARENA))
        if begin == 0:
            st, nb, ne = _ck_pod_allocate(arena, need, 8 if has_text else rec)
            if st != 0:
                raise_status(st, allocating)
        elif has_text and get_word(b, ARENA) == get_word(b, TEXT):
            # one block: text was allocated after the records, which cannot be resized
            st, nb, ne = _ck_pod_allocate(arena, need, 8)
            if st != 0:
                raise_status(st, growing)
            memcpy(nb, begin, get_word(b, COUNT) * rec)
        else:
            st, nb, ne = _ck_pod_resize(arena, need, begin, get_word(b, END))
            if st != 0:
                raise_status(st, growing)
        set_word(b, BEGIN, nb)
        set_word(b, END, ne)
    reserve.__doc__ = f"Room for ``n`` records of a {what} row in all (never shrinks)."
    return reserve


__all__ = ["make_reserve", "ROW_WORDS", "NULL_ROW", "ROW_STATE_WORDS", "NULL_ROW_BEGIN",
           "set_null", "install_set_null", "write_null_row", "no_null_row", "null_row_set", "write_var_element", "BuilderStateType", "StateModel",
           "state_words", "new_state", "get_word", "set_word"]
