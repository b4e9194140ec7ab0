"""Case mappings of the ``CkString`` view: ``lower``, ``upper``,
``casefold``, ``title``, ``capitalize``, ``swapcase``.

Every mapping is ``ck_str_case(op, ...)`` of the C string library (full
Unicode, special casing and the final sigma as CPython), which writes the
new text into the current arena, or -- an element's first made text while
an entry point stores string results -- straight into the call's result
region, where the store keeps it without a copy (``ckernel/utf8.h``, "the
result region").

``lower`` / ``upper`` / ``casefold`` of ASCII text need no call: while the
element may write its made text into the result region
(``ck_str_made_region``) and the region has room, the generated code maps
the text 8 bytes at a time straight into the region's front -- a row with a
byte >= 0x80 goes to ``ck_str_case`` (found by a read-only pass first,
which stops at the first such word: such a row costs no more than the call
it makes), the letters of an ASCII word are
mapped branch-free (the high bit of ``byte + (0x80 - 'A')`` and of ``byte +
(0x80 - 'Z' - 1)`` differ exactly for the bytes 'A'..'Z'; that bit, shifted
to 0x20, flips the case) -- and records the text as the element's made text
(``made_b`` / ``made_e``) as the C library does.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload_method, register_jitable

from .memblock import raise_status
from .str_methods import c_call
from .stringtype import CkStringType, make_string
from .utf8 import load_intp, load_u8, load_word, store_intp, store_u8, store_word

_ck_case = c_call("ck_str_case", "i32", ["i32", "p", "i64"], (("i64", 2),))
_ck_made_region = c_call("ck_str_made_region", "p", [])

_LOW = np.uint64(0x0101010101010101)
_HIGH = np.intp(-0x7F7F7F7F7F7F7F80)        # 0x80 in every byte
_HIGH_U = np.uint64(0x8080808080808080)
_BIT5_U = np.uint64(0x2020202020202020)     # 0x20 in every byte
_TWO = np.uint64(2)

# ck_str_region's fields (ckernel/utf8.h; layout checked by .symbols)
_CUR, _LIM, _MADE_B, _MADE_E = 0, 8, 16, 24


@register_jitable
def is_ascii(p, n):
    """The ``n`` bytes at ``p`` are ASCII: 8 at a time, the last 1-7 as the
    word ending at ``p + n`` (bytes only under 8); stops at the first word
    holding a byte >= 0x80."""
    k = 0
    while k + 8 <= n:
        if (load_word(p + k) & _HIGH) != 0:
            return False
        k += 8
    if k == n:
        return True
    if n >= 8:
        return (load_word(p + n - 8) & _HIGH) == 0
    while k < n:
        if load_u8(p + k) >= 0x80:
            return False
        k += 1
    return True


@register_jitable
def flip_word(w, lo_add, hi_add):
    """The 8 ASCII bytes of ``w`` with bit 0x20 flipped in the bytes of one
    letter range: ``lo_add`` is ``(0x80 - first) * 0x0101..``, ``hi_add``
    ``(0x80 - last - 1) * 0x0101..`` (no byte carries into the next: every
    byte is < 0x80 and every addend < 0x80).  All uint64: Numba's signed
    ``+`` is ``add nsw``, and the top byte's sum overflows int64, which LLVM
    may then assume does not happen."""
    m = ((w + lo_add) ^ (w + hi_add)) & _HIGH_U
    return w ^ ((m >> _TWO) & _BIT5_U)


def _case_call(method, op):
    @register_jitable
    def general(s):
        st, b, e = _ck_case((np.int32(op), s.begin, s.end - s.begin))
        if st != 0:
            raise_status(st, "ck_str_" + method)
        return make_string(b, e)
    return general


def _case_method(method, op):
    """``s.method()`` by ``ck_str_case(op, ...)``."""
    general = _case_call(method, op)

    @overload_method(CkStringType, method)
    def _ov(s):
        return lambda s: general(s)


def _ascii_case_method(method, op, first, last):
    """``s.method()``: the ASCII text inline into the result region (the
    letters ``first``..``last`` flip case), else ``ck_str_case``."""
    general = _case_call(method, op)
    lo_add = _LOW * np.uint64(0x80 - ord(first))
    hi_add = _LOW * np.uint64(0x80 - ord(last) - 1)
    lo = ord(first)
    hi = ord(last)

    @register_jitable
    def impl(s):
        src = s.begin
        n = s.end - src
        if not is_ascii(src, n):
            return general(s)
        r = _ck_made_region(())
        if r == 0:
            return general(s)
        cur = load_intp(r + _CUR)
        if cur == 0 or load_intp(r + _LIM) - cur < n:
            return general(s)      # no region open yet, or too little room
        k = 0
        while k + 8 <= n:
            store_word(cur + k, flip_word(np.uint64(load_word(src + k)), lo_add, hi_add))
            k += 8
        if k < n:
            if n >= 8:             # the last 1-7 bytes: the word ending at n
                w = np.uint64(load_word(src + n - 8))
                store_word(cur + n - 8, flip_word(w, lo_add, hi_add))
            else:
                while k < n:
                    c = load_u8(src + k)
                    store_u8(cur + k, c ^ 32 if c >= lo and c <= hi else c)
                    k += 1
        store_intp(r + _CUR, cur + n)
        store_intp(r + _MADE_B, cur)
        store_intp(r + _MADE_E, cur + n)
        return make_string(cur, cur + n)

    @overload_method(CkStringType, method)
    def _ov(s):
        return lambda s: impl(s)


# ck_str_case_op's order (ckernel/utf8.h)
_ascii_case_method("lower", 0, "A", "Z")
_ascii_case_method("upper", 1, "a", "z")
_ascii_case_method("casefold", 2, "A", "Z")      # ASCII: casefold is lower
for _op, _m in enumerate(("title", "capitalize", "swapcase"), start=3):
    _case_method(_m, _op)

__all__ = ["flip_word", "is_ascii"]
