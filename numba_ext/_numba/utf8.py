"""Raw memory access and UTF-8 coding for jitted code (building blocks).

Addresses are plain ``intp`` integers throughout (the same numbers
``MemBlock.address`` and ``Allocation.begin`` give in Python).  Nothing here
owns memory: callers guarantee that the bytes they name are alive.

Decoding from UTF-8 builds a Numba ``str`` (NRT-allocated, owned by the
caller like any Numba str) with the narrowest kind (1, 2 or 4 bytes per code
point) that holds its largest code point, like CPython.  Encoding writes the
UTF-8 form of a Numba ``str`` into caller-provided memory.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing.templates import signature
from numba.cpython.unicode import (PY_UNICODE_1BYTE_KIND, PY_UNICODE_2BYTE_KIND,
                                   PY_UNICODE_4BYTE_KIND, _empty_string,
                                   _get_code_point, _set_code_point)
from numba.extending import intrinsic, register_jitable

_i8 = ir.IntType(8)
_i64 = ir.IntType(64)


def _as_ptr(context, builder, val, ty, llty):
    addr = context.cast(builder, val, ty, types.intp)
    return builder.inttoptr(addr, llty.as_pointer())


@intrinsic
def load_u8(typingctx, addr):
    """The byte at ``addr``, zero-extended to int64."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.zext(builder.load(_as_ptr(context, builder, args[0], sig.args[0], _i8)),
                            _i64)
    return signature(types.int64, addr), codegen


@intrinsic
def store_u8(typingctx, addr, value):
    """Store the low byte of ``value`` at ``addr``."""
    if not (isinstance(addr, types.Integer) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[1], sig.args[1], types.int64)
        builder.store(builder.trunc(v, _i8), _as_ptr(context, builder, args[0], sig.args[0], _i8))
        return context.get_dummy_value()
    return signature(types.none, addr, value), codegen


def _load_i64(addr, align: int):
    """The typing and code of an 8-byte load at an integer address (``align``:
    what the address is known to be a multiple of)."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.load(_as_ptr(context, builder, args[0], sig.args[0], _i64), align=align)
    return signature(types.intp, addr), codegen


@intrinsic
def load_intp(typingctx, addr):
    """The pointer-sized word at ``addr`` (e.g. a ``char *`` field) as intp."""
    return _load_i64(addr, 8)


@intrinsic
def load_word(typingctx, addr):
    """The 8 bytes at ``addr`` (any alignment) as intp."""
    return _load_i64(addr, 1)


def _store_i64(addr, value, align: int):
    """The typing and code of an 8-byte store of an integer at an integer
    address (``align`` as for :func:`_load_i64`)."""
    if not (isinstance(addr, types.Integer) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[1], sig.args[1], types.intp)
        builder.store(v, _as_ptr(context, builder, args[0], sig.args[0], _i64), align=align)
        return context.get_dummy_value()
    return signature(types.none, addr, value), codegen


@intrinsic
def store_intp(typingctx, addr, value):
    """Store the pointer-sized word ``value`` at ``addr``."""
    return _store_i64(addr, value, 8)


@intrinsic
def store_word(typingctx, addr, value):
    """Store the 8 bytes of ``value`` at ``addr`` (any alignment)."""
    return _store_i64(addr, value, 1)


@intrinsic
def memcpy(typingctx, dst, src, n):
    """Copy ``n`` bytes from ``src`` to ``dst`` (non-overlapping; n >= 0)."""
    if not all(isinstance(t, types.Integer) for t in (dst, src, n)):
        return None

    def codegen(context, builder, sig, args):
        d = _as_ptr(context, builder, args[0], sig.args[0], _i8)
        s = _as_ptr(context, builder, args[1], sig.args[1], _i8)
        count = context.cast(builder, args[2], sig.args[2], types.intp)
        cgutils.raw_memcpy(builder, d, s, count, 1)
        return context.get_dummy_value()
    return signature(types.none, dst, src, n), codegen


@intrinsic
def str_data_address(typingctx, s):
    """Address of a Numba str's code-unit buffer (valid while ``s`` lives)."""
    if not isinstance(s, types.UnicodeType):
        return None

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
        return builder.ptrtoint(st.data, _i64)
    return signature(types.intp, s), codegen


#: the high bit of every byte of a word (bytes >= 0x80 are not ASCII)
_HIGH_BITS = np.intp(-0x7F7F7F7F7F7F7F80)


@register_jitable
def utf8_next(p, end, strict):
    """Decode the code point starting at ``p`` (``p < end``).

    Returns ``(code_point, next_p)``.  Invalid or truncated sequences,
    overlong forms, surrogates and values above U+10FFFF raise ValueError when
    ``strict``, else decode as U+FFFD consuming one byte.
    """
    b0 = load_u8(p)
    if b0 < 0x80:
        return b0, p + 1
    n = -1
    cp = 0
    lo = 0
    if b0 >= 0xC2 and b0 < 0xE0:
        n = 1
        cp = b0 & 0x1F
        lo = 0x80
    elif b0 >= 0xE0 and b0 < 0xF0:
        n = 2
        cp = b0 & 0x0F
        lo = 0x800
    elif b0 >= 0xF0 and b0 < 0xF5:
        n = 3
        cp = b0 & 0x07
        lo = 0x10000
    if n > 0 and p + n + 1 <= end:
        ok = True
        for k in range(1, n + 1):
            b = load_u8(p + k)
            if (b & 0xC0) != 0x80:
                ok = False
                break
            cp = (cp << 6) | (b & 0x3F)
        if ok and cp >= lo and cp <= 0x10FFFF and not (cp >= 0xD800 and cp <= 0xDFFF):
            return cp, p + n + 1
    if strict:
        raise ValueError("invalid UTF-8 data in a ckernel string")
    return 0xFFFD, p + 1


@register_jitable
def utf8_count(begin, end):
    """Number of code points of valid UTF-8 ``[begin, end)`` (non-continuation bytes)."""
    n = 0
    p = np.intp(begin)
    end = np.intp(end)
    while p < end:
        if (load_u8(p) & 0xC0) != 0x80:
            n += 1
        p += 1
    return n


@register_jitable
def ascii_end(begin, end):
    """The address of the first byte >= 0x80 in ``[begin, end)``, else ``end``
    (a word at a time)."""
    p = begin
    while p + 8 <= end and (load_word(p) & _HIGH_BITS) == 0:
        p += 8
    while p < end and load_u8(p) < 0x80:
        p += 1
    return p


@intrinsic
def _borrowed_ascii(typingctx, begin, nbytes):
    """A Numba str over the ASCII bytes ``[begin, begin + nbytes)`` themselves:
    no copy, no allocation (no meminfo: like a string constant, nothing to
    free)."""
    if not (isinstance(begin, types.Integer) and isinstance(nbytes, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        uni = cgutils.create_struct_proxy(types.unicode_type)(context, builder)
        uni.data = builder.inttoptr(context.cast(builder, args[0], sig.args[0], types.intp),
                                    uni.data.type)
        uni.length = context.cast(builder, args[1], sig.args[1], types.intp)
        uni.kind = uni.kind.type(PY_UNICODE_1BYTE_KIND)
        uni.is_ascii = uni.is_ascii.type(1)
        uni.hash = uni.hash.type(-1)
        uni.meminfo = cgutils.get_null_value(uni.meminfo.type)
        uni.parent = cgutils.get_null_value(uni.parent.type)
        return uni._getvalue()
    return types.unicode_type(begin, nbytes), codegen


@register_jitable
def borrow_utf8(begin, nbytes, strict):
    """A Numba str of the UTF-8 bytes ``[begin, begin + nbytes)`` for the time
    they stay alive: ASCII bytes are used in place (they are a 1-byte-kind
    str already: no copy, no allocation), anything else is decoded
    (:func:`decode_utf8`).  For arguments of kernels, whose bytes outlive
    the call."""
    begin = np.intp(begin)
    end = begin + np.intp(nbytes)
    if ascii_end(begin, end) == end:
        return _borrowed_ascii(begin, np.intp(nbytes))
    return decode_utf8(begin, nbytes, strict)


@register_jitable
def decode_utf8(begin, nbytes, strict):
    """A new Numba str decoded from the UTF-8 bytes ``[begin, begin + nbytes)``.

    Two passes: the first validates, counts code points and finds the largest
    (which picks the str kind), the second fills the string (a memcpy when
    the bytes are ASCII).  See :func:`utf8_next` for ``strict``.
    """
    begin = np.intp(begin)
    end = begin + np.intp(nbytes)
    if ascii_end(begin, end) == end:   # ASCII, the common case: one copy
        s = _empty_string(PY_UNICODE_1BYTE_KIND, nbytes, 1)
        if nbytes > 0:
            memcpy(str_data_address(s), begin, nbytes)
        return s
    length = 0
    maxcp = 0
    p = begin
    while p < end:
        cp, p = utf8_next(p, end, strict)
        length += 1
        if cp > maxcp:
            maxcp = cp
    if maxcp < 0x80:
        s = _empty_string(PY_UNICODE_1BYTE_KIND, length, 1)
        if length > 0:
            memcpy(str_data_address(s), begin, length)
        return s
    if maxcp < 0x100:
        kind = PY_UNICODE_1BYTE_KIND
    elif maxcp < 0x10000:
        kind = PY_UNICODE_2BYTE_KIND
    else:
        kind = PY_UNICODE_4BYTE_KIND
    s = _empty_string(kind, length, 0)
    p = begin
    i = 0
    while p < end:
        cp, p = utf8_next(p, end, strict)
        _set_code_point(s, i, np.uint32(cp))
        i += 1
    return s


@register_jitable
def code_point_nbytes(cp):
    """UTF-8 length of code point ``cp``; ValueError for surrogates / out of range."""
    if cp < 0:
        raise ValueError("negative code point")
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        if cp >= 0xD800 and cp <= 0xDFFF:
            raise ValueError("surrogate code points cannot be encoded to UTF-8")
        return 3
    if cp <= 0x10FFFF:
        return 4
    raise ValueError("code point above U+10FFFF")


@register_jitable
def put_code_point(p, cp):
    """Write the UTF-8 form of ``cp`` at ``p`` (room checked by the caller); returns the end."""
    if cp < 0x80:
        store_u8(p, cp)
        return p + 1
    if cp < 0x800:
        store_u8(p, 0xC0 | (cp >> 6))
        store_u8(p + 1, 0x80 | (cp & 0x3F))
        return p + 2
    if cp < 0x10000:
        store_u8(p, 0xE0 | (cp >> 12))
        store_u8(p + 1, 0x80 | ((cp >> 6) & 0x3F))
        store_u8(p + 2, 0x80 | (cp & 0x3F))
        return p + 3
    store_u8(p, 0xF0 | (cp >> 18))
    store_u8(p + 1, 0x80 | ((cp >> 12) & 0x3F))
    store_u8(p + 2, 0x80 | ((cp >> 6) & 0x3F))
    store_u8(p + 3, 0x80 | (cp & 0x3F))
    return p + 4


@register_jitable
def str_utf8_nbytes(s):
    """Bytes needed for the UTF-8 form of Numba str ``s`` (ValueError on surrogates)."""
    if s._is_ascii:
        return len(s)
    n = 0
    for i in range(len(s)):
        n += code_point_nbytes(np.int64(_get_code_point(s, i)))
    return n


@register_jitable
def str_encode_into(s, dst):
    """Write the UTF-8 form of ``s`` at ``dst`` (room for ``str_utf8_nbytes(s)``
    bytes checked by the caller); returns the number of bytes written."""
    dst = np.intp(dst)
    if s._is_ascii:
        n = len(s)
        if n > 0:
            memcpy(dst, str_data_address(s), n)
        return n
    p = dst
    for i in range(len(s)):
        p = put_code_point(p, np.int64(_get_code_point(s, i)))
    return p - dst


@register_jitable
def c_string_to_str(address):
    """A Numba str decoded from a NUL-terminated C string (invalid bytes -> U+FFFD)."""
    address = np.intp(address)
    n = 0
    while load_u8(address + n) != 0:
        n += 1
    return decode_utf8(address, n, False)


__all__ = ["load_u8", "store_u8", "load_intp", "store_intp", "load_word", "store_word", "memcpy",
           "str_data_address",
           "utf8_next", "utf8_count", "decode_utf8", "code_point_nbytes", "put_code_point",
           "str_utf8_nbytes", "str_encode_into", "c_string_to_str"]
