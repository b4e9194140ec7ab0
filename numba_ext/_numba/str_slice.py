"""``s[a:b]`` and ``s[a:b:c]`` of the ``CkString`` view.

A slice of step 1 (the common ``s[k:]``, ``s[:k]``, ``s[-3:]``) is a
**view into** ``s``, found inline: no call, no arena.  Its ends are
code point positions walked from the nearer end of the text -- a
non-negative bound from the front, a negative one from the back -- 8 bytes
a step (a word's code points are its bytes that are not continuation bytes,
``10xxxxxx``: 8 for ASCII), a bound at or beyond the text's byte length
without a walk (a code point is at least one byte), Python's clamping
throughout (``s[3:0]``, ``s[-99:2]``, ``s[5:2**63-1]`` as CPython).  The
view lives as long as the text it is cut from, like the views ``strip``
and ``partition`` give: a returned slice is copied into the result as every
returned view is (``jit/string_views.py``), a slice of an element's made
text included (the store's copy may overlap it).

Other steps (``s[::-1]``, ``s[3:0:2**63-1]``) build new text with
``ck_str_slice`` in the current arena.
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.typing.templates import signature
from numba.extending import intrinsic, overload, register_jitable

from .memblock import raise_status
from .str_methods import c_call, current_arena
from .stringtype import CkStringType, make_string
from .utf8 import load_u8, load_word

_HIGH = np.intp(-0x7F7F7F7F7F7F7F80)        # 0x80 in every byte

_ck_slice = c_call("ck_str_slice", "i32", ["p", "p", "i64", "i64", "i64", "i64"],
                   (("i64", 2),))


@intrinsic
def popcount(typingctx, x):
    """The number of bits set in the int64 ``x``."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], types.int64)
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [v])
    return signature(types.int64, x), codegen


@register_jitable
def word_starts(w):
    """The code points that start in the 8 bytes of ``w``: its bytes that are
    not continuation bytes (bit 7 set, bit 6 clear)."""
    return 8 - popcount(w & ~(w << 1) & _HIGH)


@register_jitable
def _is_cont(p):
    return (load_u8(p) & 0xC0) == 0x80


@register_jitable
def skip_forward(p, e, k):
    """The address ``k >= 0`` code points after ``p`` (a code point's start
    in valid UTF-8 ``[p, e)``), ``e`` when the text has fewer."""
    if k >= e - p:
        return e
    while k >= 8 and p + 8 <= e:
        starts = word_starts(load_word(p))
        if starts > k:
            break
        p += 8            # past `starts` code points, the last maybe in part
        k -= starts
        while p < e and _is_cont(p):
            p += 1
    while k > 0 and p < e:
        p += 1
        while p < e and _is_cont(p):
            p += 1
        k -= 1
    return p


@register_jitable
def skip_back(b, e, k):
    """The address ``k >= 0`` code points before ``e`` (the end of valid
    UTF-8 ``[b, e)`` or a code point's start in it), ``b`` when the text
    has fewer."""
    if k >= e - b:
        return b
    while k >= 8 and e - 8 >= b:
        w = load_word(e - 8)
        # a word starting with a continuation byte ends a code point that
        # starts before it: passing the word passes that one too
        passed = word_starts(w) + (1 if (w & 0xC0) == 0x80 else 0)
        if passed > k:
            break
        e -= 8
        k -= passed
        while e > b and _is_cont(e):
            e -= 1
    while k > 0 and e > b:
        e -= 1
        while e > b and _is_cont(e):
            e -= 1
        k -= 1
    return e


@register_jitable
def slice_view(s, start, stop):
    """``s[start:stop]`` (step 1) as a view into ``s``; bounds as Python
    clamps them (Numba passes an absent start as 0, an absent stop as the
    largest int64)."""
    b = s.begin
    e = s.end
    if start >= 0:
        pa = skip_forward(b, e, start)
    elif start <= b - e:          # also -2**63, whose negation overflows
        pa = b
    else:
        pa = skip_back(b, e, -start)
    if stop >= 0:
        if start >= 0:
            if stop <= start:
                return make_string(pa, pa)
            pb = skip_forward(pa, e, stop - start)
        else:
            pb = skip_forward(b, e, stop)
    elif stop <= b - e:
        pb = b
    else:
        pb = skip_back(b, e, -stop)
    if pb <= pa:
        return make_string(pa, pa)
    return make_string(pa, pb)


_INT64_MIN = np.int64(-2**63)
_NOT_NONE = np.int64(-2**63 + 1)


@register_jitable
def slice_step(s, start, stop, step):
    """``s[start:stop:step]`` by ``ck_str_slice`` (a view for step 1, else
    new text in the current arena; ValueError for step 0).  The C library
    reads a bound of -2**63 as None (``CK_STR_NONE``); Numba passes that for
    an absent stop of a negative step only, so an explicit -2**63 goes as
    -2**63 + 1, which clamps the same."""
    if start == _INT64_MIN:
        start = _NOT_NONE
    if stop == _INT64_MIN and step > 0:
        stop = _NOT_NONE
    st, b, e = _ck_slice((current_arena(), s.begin, s.end - s.begin, start, stop, step))
    if st != 0:
        raise_status(st, "ck_str_slice")
    return make_string(b, e)


@overload(operator.getitem)
def _ov_getitem_slice(s, idx):
    if not (isinstance(s, CkStringType) and isinstance(idx, types.SliceType)):
        return None
    if not idx.has_step:
        return lambda s, idx: slice_view(s, idx.start, idx.stop)

    def impl(s, idx):
        if idx.step == 1:
            return slice_view(s, idx.start, idx.stop)
        return slice_step(s, idx.start, idx.stop, idx.step)
    return impl


__all__ = ["popcount", "word_starts", "skip_forward", "skip_back", "slice_view"]
