"""ckernel strings in jitted code: the ``CkString`` view and the string builder.

``CkStringType`` -- a *view* of UTF-8 bytes ``[begin, end)`` (the value of a
``ck_string {char *begin; char *end;}``; not NUL-terminated, may contain
NULs).  It owns nothing: the arena holding the bytes must outlive the view
(for a string array element, the array).  Obtain one with
:func:`string_at` (address of a ``ck_string``) or :func:`make_string`.
Operations:

* ``len(s)``: number of code points (O(n): counts lead bytes a word at a time);
  ``s.nbytes``: number of bytes (O(1)); ``s.begin`` / ``s.end`` addresses.
* ``s[i]``: the i-th *code point* as a 1-character Numba ``str``; negative
  indices count from the end; O(n) scan (no index is precomputed);
  IndexError when out of range.
* ``==, !=, <, <=, >, >=`` with another CkString (bytewise, which is code
  point order for UTF-8) or with a Numba ``str`` (code point by code point,
  no allocation).
* ``hash(s) == hash(str(s))`` (computed through the decoded str).
* ``str(s)`` / ``s.to_str()``: a new Numba ``str`` (UTF-8 decoder, narrowest
  kind; ValueError on invalid UTF-8).  Returning a CkString from a jitted
  function to Python gives a Python ``str`` (a copy).

Writing strings (UTF-8 into an arena, through the pod allocator API):

* :func:`store_str(mb, dst_address, s) <store_str>` writes a whole Numba str
  into arena ``mb`` and stores ``{begin, end}`` at ``dst_address`` (a
  ``ck_string``).
* :func:`string_builder(mb, initial_capacity=16) <string_builder>` returns a
  builder: ``b.append(x)`` (a Numba str, a single character, a CkString or an
  integer in decimal), ``b.append_code_point(cp)``, ``b.nbytes``,
  ``b.finish()`` -> CkString, ``b.finish_into(dst_address)``.  It starts with
  one allocation of ``initial_capacity`` bytes, grows it by ``resize``
  (doubling) and shrinks it to fit on completion.  The builder *borrows*
  its arena: the caller keeps it alive while the builder is used (an arena
  argument or a MemBlockRef local does; the builder itself is NRT-managed).
  Borrowing (not owning) matters on the error path: Numba does not release
  the live locals of a function that raises (numba#1549), so an owned
  reference held by a builder would leak the arena.

  Allocator rule: only the most recent allocation of an arena can be
  resized, so use one builder at a time per arena and make no other
  allocation from that arena between its first append and its finish.
  Breaking the rule is detected by the C library (``ck_pod_resize`` returns
  CK_ERR_INVALID_STATE) and raised as ``ckernels.errors.InvalidStateError``
  with the C message.  Appending after ``finish`` raises RuntimeError.
"""

from __future__ import annotations

import operator

import numpy as np
from numba.core import types
from numba.cpython.unicode import _get_code_point
from numba.experimental import structref
from numba.extending import (
    intrinsic,
    overload,
    overload_attribute,
    overload_method,
    register_jitable,
)

from ..errors import JitOnlyError
from . import symbols
from .allocator import allocate, resize
from .memblock import _MEMBLOCK_TYPES, borrow, memblock_ptr_type
from .str_methods import str_length
from .stringtype import CkStringType, ck_string_type, make_string
from .utf8 import (
    code_point_nbytes,
    decode_utf8,
    load_intp,
    load_u8,
    memcpy,
    put_code_point,
    store_intp,
    store_u8,
    str_encode_into,
    str_utf8_nbytes,
    utf8_count,
    utf8_next,
)


@register_jitable
def string_at(address):
    """A CkString view of the ``ck_string`` stored at ``address`` (reads begin/end now)."""
    address = np.intp(address)
    return make_string(load_intp(address + symbols.STRING_BEGIN_OFFSET),
                       load_intp(address + symbols.STRING_END_OFFSET))


@overload_attribute(CkStringType, "nbytes")
def _ov_nbytes(s):
    def get(s):
        return s.end - s.begin
    return get


@overload(len)
def _ov_len(s):
    if isinstance(s, CkStringType):
        def impl(s):
            return str_length(s)
        return impl


@overload(bool)
def _ov_bool(s):
    """``if s:`` -- a view is true when it holds any bytes, as a str."""
    if isinstance(s, CkStringType):
        def impl(s):
            return s.end > s.begin
        return impl


@overload(bool, target="cpu")
def _ov_bool_optional(s):
    """``if s:`` of a ``?string`` argument: None is false (Numba would
    unwrap it and raise)."""
    if isinstance(s, types.Optional) and isinstance(s.type, CkStringType):
        def impl(s):
            if s is None:
                return False
            v = _present(s)
            return v.end > v.begin
        return impl


@overload(operator.getitem)
def _ov_getitem(s, i):
    if isinstance(s, CkStringType) and isinstance(i, types.Integer):
        def impl(s, i):
            n = utf8_count(s.begin, s.end)
            k = i
            if k < 0:
                k += n
            if k < 0 or k >= n:
                raise IndexError("ckernel string index out of range")
            p = s.begin
            j = 0
            while j < k:          # skip k code points
                p += 1
                while p < s.end and (load_u8(p) & 0xC0) == 0x80:
                    p += 1
                j += 1
            q = p + 1
            while q < s.end and (load_u8(q) & 0xC0) == 0x80:
                q += 1
            return decode_utf8(p, q - p, True)
        return impl


@overload_method(CkStringType, "to_str")
def _ov_to_str(s):
    def impl(s):
        return decode_utf8(s.begin, s.end - s.begin, True)
    return impl


@overload_method(CkStringType, "__str__")
def _ov_dunder_str(s):
    def impl(s):
        return decode_utf8(s.begin, s.end - s.begin, True)
    return impl


@overload_method(CkStringType, "__hash__")
def _ov_hash(s):
    def impl(s):
        return hash(decode_utf8(s.begin, s.end - s.begin, True))
    return impl


@register_jitable
def _cmp_ck_ck(a, b):
    na = a.end - a.begin
    nb = b.end - b.begin
    n = min(na, nb)
    for k in range(n):
        x = load_u8(a.begin + k)
        y = load_u8(b.begin + k)
        if x != y:
            return -1 if x < y else 1
    if na == nb:
        return 0
    return -1 if na < nb else 1


@register_jitable
def _cmp_ck_str(a, s):
    p = a.begin
    n = len(s)
    i = 0
    while p < a.end and i < n:
        cp, p = utf8_next(p, a.end, True)
        y = np.int64(_get_code_point(s, i))
        if cp != y:
            return -1 if cp < y else 1
        i += 1
    if p < a.end:
        return 1
    if i < n:
        return -1
    return 0


@register_jitable
def _eq_ck_ck(a, b):
    if a.end - a.begin != b.end - b.begin:
        return False
    return _cmp_ck_ck(a, b) == 0


def _is_opt_view(t) -> bool:
    return isinstance(t, types.Optional) and isinstance(t.type, CkStringType)


def _comparable(t) -> bool:
    return isinstance(t, (CkStringType, types.UnicodeType, types.StringLiteral)) or \
        _is_opt_view(t)


@intrinsic
def _present(typingctx, v):
    """The value of an Optional already checked not to be None."""
    if not isinstance(v, types.Optional):
        return None

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], sig.return_type)
    return v.type(v), codegen


@register_jitable
def _same(x):
    return x


def _optional_compare(op, a, b):
    """``op`` with an ``Optional(CkString)`` operand (a null-aware ``?string``
    argument): ``==``/``!=`` as Python's (None equals only None); an ordering
    with None raises TypeError as Python does; else the values compared."""
    if not ((_is_opt_view(a) or _is_opt_view(b)) and _comparable(a) and _comparable(b)):
        return None
    ua = _present if _is_opt_view(a) else _same
    ub = _present if _is_opt_view(b) else _same
    if op in (operator.eq, operator.ne):
        negate = op is operator.ne

        def impl_eq(a, b):
            if a is None or b is None:
                r = a is None and b is None
            else:
                r = ua(a) == ub(b)
            return not r if negate else r
        return impl_eq
    sym = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}[op]
    msg = f"'{sym}' not supported between a str and None"

    def impl_order(a, b):
        if a is None or b is None:
            raise TypeError(msg)
        return op(ua(a), ub(b))
    return impl_order


def _make_compare(op, test):
    # the CPU target's templates come before the generic ones: Numba's own
    # unicode_eq would otherwise answer `Optional(view) == "x"` with False
    # (operands of different types)
    @overload(op, target="cpu")
    def _ov_optional(a, b):
        return _optional_compare(op, a, b)

    @overload(op)
    def _ov(a, b):
        if isinstance(a, CkStringType) and isinstance(b, CkStringType):
            if op is operator.eq:
                return lambda a, b: _eq_ck_ck(a, b)
            if op is operator.ne:
                return lambda a, b: not _eq_ck_ck(a, b)

            def impl(a, b):
                return test(_cmp_ck_ck(a, b))
            return impl
        if isinstance(a, CkStringType) and isinstance(b, types.UnicodeType):
            def impl(a, b):
                return test(_cmp_ck_str(a, b))
            return impl
        if isinstance(a, types.UnicodeType) and isinstance(b, CkStringType):
            def impl(a, b):
                return test(-_cmp_ck_str(b, a))
            return impl
    return _ov


for _op, _test in [(operator.eq, register_jitable(lambda c: c == 0)),
                   (operator.ne, register_jitable(lambda c: c != 0)),
                   (operator.lt, register_jitable(lambda c: c < 0)),
                   (operator.le, register_jitable(lambda c: c <= 0)),
                   (operator.gt, register_jitable(lambda c: c > 0)),
                   (operator.ge, register_jitable(lambda c: c >= 0))]:
    _make_compare(_op, _test)


# ------------------------------------------------------------- writers ------
def store_str(mb, dst_address, s):
    """Write Numba str ``s`` (UTF-8) into arena ``mb`` and set the ``ck_string``
    at ``dst_address`` to it (njit only).  One exact-size allocation."""
    raise JitOnlyError("ckernels.nb.store_str is callable from jitted code")


@overload(store_str)
def _ov_store_str(mb, dst_address, s):
    if isinstance(mb, _MEMBLOCK_TYPES) and isinstance(s, types.UnicodeType):
        def impl(mb, dst_address, s):
            n = str_utf8_nbytes(s)
            b, e = allocate(mb, n, 1)
            str_encode_into(s, b)
            store_string(dst_address, b, e)
        return impl


@register_jitable
def store_string(dst_address, begin, end):
    """Store ``{begin, end}`` into the ``ck_string`` at ``dst_address``."""
    dst = np.intp(dst_address)
    store_intp(dst + symbols.STRING_BEGIN_OFFSET, begin)
    store_intp(dst + symbols.STRING_END_OFFSET, end)


@structref.register
class StringBuilderType(types.StructRef):
    """State of a jitted string builder (a mutable NRT-managed struct)."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


string_builder_type = StringBuilderType([
    ("mb", memblock_ptr_type),   # the arena (borrowed)
    ("begin", types.intp),       # current allocation [begin, begin + cap)
    ("cap", types.intp),
    ("pos", types.intp),         # bytes written
    ("done", types.boolean),
])


def string_builder(mb, initial_capacity=16):
    """A string builder writing UTF-8 into arena ``mb`` (njit only)."""
    raise JitOnlyError("ckernels.nb.string_builder is callable from jitted code")


@overload(string_builder)
def _ov_string_builder(mb, initial_capacity=16):
    if isinstance(mb, _MEMBLOCK_TYPES):
        def impl(mb, initial_capacity=16):
            if initial_capacity < 0:
                raise ValueError("string_builder: initial_capacity must be non-negative")
            b, e = allocate(mb, initial_capacity, 1)
            st = structref.new(string_builder_type)
            st.mb = borrow(mb)
            st.begin = b
            st.cap = e - b
            st.pos = 0
            st.done = False
            return st
        return impl


@register_jitable
def _reserve(st, extra):
    """Make room for ``extra`` more bytes (grow by doubling through resize)."""
    if st.done:
        raise RuntimeError("string builder: already finished")
    need = st.pos + extra
    if need > st.cap:
        newcap = max(2 * st.cap, need, 16)
        b, e = resize(st.mb, newcap, st.begin, st.begin + st.cap)
        st.begin = b
        st.cap = e - b
    return st.begin + st.pos


@overload_method(StringBuilderType, "append")
def _ov_append(st, x):
    if isinstance(x, types.UnicodeType):
        def impl(st, x):
            n = str_utf8_nbytes(x)
            p = _reserve(st, n)
            str_encode_into(x, p)
            st.pos += n
        return impl
    if isinstance(x, CkStringType):
        def impl(st, x):
            n = x.end - x.begin
            p = _reserve(st, n)
            if n > 0:
                memcpy(p, x.begin, n)
            st.pos += n
        return impl
    if isinstance(x, types.Integer):
        if x.signed:
            def impl(st, x):
                v = np.int64(x)
                if v < 0:
                    _append_uint(st, np.uint64(-(v + 1)) + np.uint64(1), True)
                else:
                    _append_uint(st, np.uint64(v), False)
            return impl

        def impl(st, x):
            _append_uint(st, np.uint64(x), False)
        return impl


@register_jitable
def _append_uint(st, v, neg):
    """Append ``v`` (uint64) in decimal, with a leading '-' when ``neg``."""
    ten = np.uint64(10)
    ndig = 1
    t = v
    while t >= ten:
        t //= ten
        ndig += 1
    n = ndig + (1 if neg else 0)
    p = _reserve(st, n)
    if neg:
        store_u8(p, 45)  # '-'
    q = p + n - 1
    t = v
    for _ in range(ndig):
        store_u8(q, np.int64(t % ten) + 48)
        q -= 1
        t //= ten
    st.pos += n




@overload_method(StringBuilderType, "append_code_point")
def _ov_append_code_point(st, cp):
    if isinstance(cp, types.Integer):
        def impl(st, cp):
            c = np.int64(cp)
            n = code_point_nbytes(c)
            p = _reserve(st, n)
            put_code_point(p, c)
            st.pos += n
        return impl



@overload_attribute(StringBuilderType, "nbytes")
def _ov_builder_nbytes(st):
    def get(st):
        return st.pos
    return get


@register_jitable
def _finish(st):
    if st.done:
        raise RuntimeError("string builder: already finished")
    # always resize (also when the size is unchanged): the C library then
    # checks that this is still the arena's most recent allocation
    b, e = resize(st.mb, st.pos, st.begin, st.begin + st.cap)
    st.begin = b
    st.cap = e - b
    st.done = True
    return make_string(b, e)


@overload_method(StringBuilderType, "finish")
def _ov_finish(st):
    def impl(st):
        return _finish(st)
    return impl


@overload_method(StringBuilderType, "finish_into")
def _ov_finish_into(st, dst_address):
    if isinstance(dst_address, types.Integer):
        def impl(st, dst_address):
            s = _finish(st)
            store_string(dst_address, s.begin, s.end)
        return impl


__all__ = ["CkStringType", "ck_string_type", "make_string", "string_at", "store_str",
           "store_string", "StringBuilderType", "string_builder_type", "string_builder"]
