"""``str`` methods of the ``CkString`` view, lowered to calls of the C string
library (``ckernel/utf8.h``) on the view's UTF-8 bytes.

No conversion to Numba's ``unicode_type`` on the way in or out: the method
reads ``[begin, end)`` in place and gives back

* a value (an index, a count, a bool, an int or float parsed from the text);
* a **view** into the string (``strip``, ``removeprefix``, ``partition``,
  slices of step 1 -- :mod:`.str_slice` --, ``replace`` that replaces
  nothing): no copy;
* ``split`` / ``rsplit`` / ``splitlines`` and ``join``: :mod:`.str_split`;
* new text (``lower``, ``title`` -- the case mappings: :mod:`.str_case` --,
  ``replace``, ``join``, ``zfill``, ``*`` ...) written into the calling
  thread's **current string arena** (``ck_str_arena``: the one an entry
  point set with ``ck_str_set_arena``, else the thread's scratch arena,
  kept until :func:`free_scratch` or the end of the thread) as a new view.

Arguments that are text (``sub``, ``prefix``, ``sep``, ``chars``, ``old``
...) may be views or Numba ``str`` values (an ASCII ``str`` is read in
place; others are encoded into the arena first).  Errors are the C
library's status and message (``index`` -> ``CKValueError`` "substring not
found", a ``ValueError``).  Every C function is declared *by name*, so
``cache=True`` keeps working (:mod:`.symbols`).
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload, overload_method, register_jitable

from ..errors import JitOnlyError
from .memblock import raise_status
from .stringtype import (CkStringType, ck_string_type, emit_constant_bytes, make_string,
                         utf8_literal)
from .utf8 import load_u8, load_word, str_data_address, str_encode_into, str_utf8_nbytes

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)
_f64 = ir.DoubleType()

_LL = {"p": _i8p, "i64": _i64, "i32": _i32, "bool": _i8, "f64": _f64, "void": ir.VoidType()}
_NB = {"p": types.intp, "i64": types.int64, "i32": types.int32, "bool": types.boolean,
       "f64": types.float64, "void": types.none}

#: "None" for an end index (Python's clamping makes it "to the end")
INT64_MAX = np.int64(2**63 - 1)


def c_call(name: str, ret: str, params: list, outs: tuple = ()):
    """An intrinsic ``f((arg, ...))`` calling C function ``name`` by name.

    ``params`` and ``ret``: "p" (an address, passed as a pointer; a returned
    pointer is an intp), "i64", "i32", "bool" or "f64" ("void": no result).
    ``outs``: ``(kind, count)`` pairs, each one more pointer argument to
    ``count`` contiguous stack slots of ``kind`` ("i64", "f64"); the call
    then returns the tuple ``(result, slot values...)``."""
    out_tys = [_LL[k].as_pointer() for k, _ in outs]
    fnty = ir.FunctionType(_LL[ret], [_LL[p] for p in params] + out_tys)
    slot_types = [_NB[k] for k, n in outs for _ in range(n)]
    rty = _NB[ret] if not outs else types.Tuple([_NB[ret]] + slot_types)

    @intrinsic
    def _call(typingctx, args):
        if not isinstance(args, types.BaseTuple) or len(args) != len(params):
            return None

        def codegen(context, builder, sig, llargs):
            argtys = sig.args[0].types
            vals = []
            for k, (p, t) in enumerate(zip(params, argtys)):
                v = builder.extract_value(llargs[0], k)
                if p == "p":
                    v = builder.inttoptr(context.cast(builder, v, t, types.intp), _i8p)
                elif p == "bool":
                    v = builder.zext(context.cast(builder, v, t, types.boolean), _i8)
                else:
                    v = context.cast(builder, v, t, _NB[p])
                vals.append(v)
            slots = [cgutils.alloca_once(builder, _LL[k], size=n) for k, n in outs]
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            r = builder.call(fn, vals + slots)
            if ret == "bool":
                r = builder.icmp_unsigned("!=", r, ir.Constant(_i8, 0))
            elif ret == "p":
                r = builder.ptrtoint(r, _i64)
            if not outs:
                return r if ret != "void" else context.get_dummy_value()
            items = [r]
            for slot, (k, n) in zip(slots, outs):
                for j in range(n):
                    items.append(builder.load(builder.gep(slot, [ir.Constant(_i32, j)])))
            return context.make_tuple(builder, sig.return_type, items)
        return rty(args), codegen
    return _call


# ------------------------------------------------------ the current arena --
_ck_arena = c_call("ck_str_arena", "i32", [], (("i64", 1),))
_ck_set_arena = c_call("ck_str_set_arena", "i64", ["p"])
_ck_scratch_free = c_call("ck_str_scratch_free", "void", [])
_ck_allocate = c_call("ck_pod_allocate", "i32", ["p", "i64", "i64"], (("i64", 1), ("i64", 1)))


@register_jitable
def current_arena():
    """The address of the calling thread's current string arena (borrowed)."""
    st, mb = _ck_arena(())
    if st != 0:
        raise_status(st, "ck_str_arena")
    return mb


def set_string_arena(address):
    """Make the arena at ``address`` (0: the scratch arena) the thread's
    current string arena; returns the previous one's address (njit only)."""
    raise JitOnlyError("ckernels.nb.set_string_arena is callable from jitted code")


@overload(set_string_arena)
def _ov_set_string_arena(address):
    if isinstance(address, types.Integer):
        return lambda address: _ck_set_arena((address,))


def free_scratch():
    """Free the thread's scratch string arena (views of text in it die)."""
    raise JitOnlyError("ckernels.nb.free_scratch is callable from jitted code")


@overload(free_scratch)
def _ov_free_scratch():
    return lambda: _ck_scratch_free(())


# --------------------------------------------------------- text arguments --
def _text(x):
    """``(address, nbytes)`` of the UTF-8 of a view or a Numba str."""


@intrinsic
def _literal_text(typingctx, lit):
    """``(address, nbytes)`` of a string literal's UTF-8 bytes, a constant of
    the code (no str made or looked at per call)."""
    if not isinstance(lit, types.StringLiteral):
        return None
    data = utf8_literal(lit)
    if data is None:                        # a lone surrogate: the general path
        return None
    rty = types.UniTuple(types.intp, 2)

    def codegen(context, builder, sig, args):
        addr = emit_constant_bytes(builder, data)
        return context.make_tuple(builder, rty, [addr, ir.Constant(_i64, len(data))])
    return rty(lit), codegen


@overload(_text, prefer_literal=True)
def _ov_text(x):
    if isinstance(x, types.StringLiteral):
        return lambda x: _literal_text(x)
    if isinstance(x, CkStringType):
        return lambda x: (x.begin, x.end - x.begin)
    if isinstance(x, types.UnicodeType):
        def impl(x):
            if x._is_ascii:          # a 1-byte-kind str of ASCII is its UTF-8
                return str_data_address(x), np.intp(len(x))
            n = str_utf8_nbytes(x)
            st, b, e = _ck_allocate((current_arena(), n, 1))
            if st != 0:
                raise_status(st, "ck_pod_allocate")
            str_encode_into(x, b)
            return b, np.intp(n)
        return impl


def _is_text(t) -> bool:
    return isinstance(t, (CkStringType, types.UnicodeType, types.StringLiteral))


def _absent(t) -> bool:
    """An argument left out (a default of the overload's signature, or
    Numba's Omitted) or None."""
    return not isinstance(t, types.Type) or isinstance(t, (types.NoneType, types.Omitted))


def _or(x, default):
    """``x`` as int64, or ``default`` when ``x`` is None / omitted."""


@overload(_or)
def _ov_or(x, default):
    if _absent(x):
        return lambda x, default: np.int64(default)
    if isinstance(x, types.Integer):
        return lambda x, default: np.int64(x)
    if isinstance(x, types.Optional):
        def impl(x, default):
            if x is None:
                return np.int64(default)
            return np.int64(x)
        return impl


def _ok_index(t) -> bool:
    return _absent(t) or isinstance(t, types.Integer) or (
        isinstance(t, types.Optional) and isinstance(t.type, types.Integer))


# ------------------------------------------------------------- predicates --
def _predicate(method, cname):
    fn = c_call(cname, "bool", ["p", "i64"])

    @overload_method(CkStringType, method)
    def _ov(s):
        return lambda s: fn((s.begin, s.end - s.begin))


for _m in ("islower", "isupper", "istitle", "isidentifier", "isprintable"):
    _predicate(_m, "ck_str_" + _m)


@register_jitable
def ascii_space(c):
    """Byte ``c`` (< 0x80) is whitespace (str.isspace): 9-13, 28-32."""
    return c < 64 and ((0x1F0003E00 >> c) & 1) != 0


@register_jitable
def _ascii_digit(c):
    return c - 48 < 10 and c >= 48


@register_jitable
def _ascii_alpha(c):
    return (c | 32) - 97 < 26 and (c | 32) >= 97


@register_jitable
def _ascii_alnum(c):
    return _ascii_digit(c) or _ascii_alpha(c)


@register_jitable
def _ascii_any(c):
    return True


#: per predicate, bit ``b - 0xC0`` set when some code point whose UTF-8 starts
#: with byte ``b`` has the property (the running Python's str methods, every
#: code point: tests/python/jit/test_jit_str_views.py); a code point with any
#: other lead byte answers False without a table lookup
LEAD_MASKS = {"isdigit": 0x184078a000004, "isdecimal": 0x184038a000000,
              "isnumeric": 0x187ff8a000004, "isspace": 0xe00000004}
_ALL_LEADS = (1 << 64) - 1
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


def _class_predicate(method, cname, ascii_ok, empty):
    """A predicate over every code point, inline while the text is ASCII (no
    call for most strings: the first byte usually decides); at the first
    non-ASCII code point, False when no code point with its lead byte has
    the property (``LEAD_MASKS``), else the C library's answer from there
    (the rest starts a code point)."""
    fn = c_call(cname, "bool", ["p", "i64"])
    leads = np.uint64(LEAD_MASKS.get(method, _ALL_LEADS))

    @overload_method(CkStringType, method)
    def _ov(s):
        def impl(s):
            b = s.begin
            n = s.end - b
            if n == 0:
                return empty
            for k in range(n):
                c = load_u8(b + k)
                if c >= 0x80:
                    if c >= 0xC0 and ((leads >> np.uint64(c - 0xC0)) & _ONE) == _ZERO:
                        return False
                    return fn((b + k, n - k))
                if not ascii_ok(c):
                    return False
            return True
        return impl


for _m, _ok in (("isdigit", _ascii_digit), ("isdecimal", _ascii_digit),
                ("isnumeric", _ascii_digit), ("isalpha", _ascii_alpha),
                ("isalnum", _ascii_alnum), ("isspace", ascii_space)):
    _class_predicate(_m, "ck_str_" + _m, _ok, False)


@overload_method(CkStringType, "isascii")
def _ov_isascii(s):
    def impl(s):
        b = s.begin
        acc = 0
        for k in range(s.end - b):      # a loop LLVM vectorises
            acc |= load_u8(b + k)
        return acc < 0x80
    return impl


@register_jitable
def str_length(s):
    """len(s) in code points: the bytes that are not continuation bytes,
    counted inline (a loop LLVM vectorises; no call per string)."""
    b = s.begin
    n = s.end - b
    cont = 0
    for k in range(n):
        cont += (load_u8(b + k) & 0xC0) == 0x80
    return n - cont


@register_jitable
def _bytes_equal(a, b, m):
    """The ``m`` bytes at addresses ``a`` and ``b`` are equal (inline)."""
    for k in range(m):
        if load_u8(a + k) != load_u8(b + k):
            return False
    return True


# ----------------------------------------------------------------- search --
def _search_method(method, cname):
    fn = c_call(cname, "i64", ["p", "i64", "p", "i64", "i64", "i64"])

    @overload_method(CkStringType, method)
    def _ov(s, sub, start=None, end=None):
        if _is_text(sub) and _ok_index(start) and _ok_index(end):
            def impl(s, sub, start=None, end=None):
                p, m = _text(sub)
                return fn((s.begin, s.end - s.begin, p, m, _or(start, 0), _or(end, INT64_MAX)))
            return impl


for _m in ("find", "rfind", "count"):
    _search_method(_m, "ck_str_" + _m)


def _index_method(method, cname):
    fn = c_call(cname, "i32", ["p", "i64", "p", "i64", "i64", "i64"], (("i64", 1),))

    @overload_method(CkStringType, method)
    def _ov(s, sub, start=None, end=None):
        if _is_text(sub) and _ok_index(start) and _ok_index(end):
            def impl(s, sub, start=None, end=None):
                p, m = _text(sub)
                st, k = fn((s.begin, s.end - s.begin, p, m, _or(start, 0),
                            _or(end, INT64_MAX)))
                if st != 0:
                    raise_status(st, cname)
                return k
            return impl


_index_method("index", "ck_str_index")
_index_method("rindex", "ck_str_rindex")


def _affix_method(method, cname):
    fn = c_call(cname, "bool", ["p", "i64", "p", "i64", "i64", "i64"])
    suffix = method == "endswith"

    @overload_method(CkStringType, method)
    def _ov(s, prefix, start=None, end=None):
        if not (_ok_index(start) and _ok_index(end)):
            return None
        if _is_text(prefix) and _absent(start) and _absent(end):
            # the whole text: a code point prefix (suffix) is a byte prefix
            # (suffix) of valid UTF-8, compared inline
            def impl(s, prefix, start=None, end=None):
                p, m = _text(prefix)
                n = s.end - s.begin
                return m <= n and _bytes_equal(s.begin + (n - m if suffix else 0), p, m)
            return impl
        if _is_text(prefix):
            def impl(s, prefix, start=None, end=None):
                p, m = _text(prefix)
                return fn((s.begin, s.end - s.begin, p, m, _or(start, 0), _or(end, INT64_MAX)))
            return impl
        if isinstance(prefix, types.UniTuple) and _is_text(prefix.dtype):
            def impl(s, prefix, start=None, end=None):
                a = _or(start, 0)
                b = _or(end, INT64_MAX)
                for x in prefix:
                    p, m = _text(x)
                    if fn((s.begin, s.end - s.begin, p, m, a, b)):
                        return True
                return False
            return impl


_affix_method("startswith", "ck_str_startswith")
_affix_method("endswith", "ck_str_endswith")

_ck_contains = c_call("ck_str_contains", "bool", ["p", "i64", "p", "i64"])


@overload(operator.contains)
def _ov_contains(s, sub):
    if isinstance(s, CkStringType) and _is_text(sub):
        def impl(s, sub):
            p, m = _text(sub)
            return _ck_contains((s.begin, s.end - s.begin, p, m))
        return impl


@overload_method(CkStringType, "removeprefix")
def _ov_removeprefix(s, prefix):
    if _is_text(prefix):
        def impl(s, prefix):
            p, m = _text(prefix)
            if s.end - s.begin >= m and _ck_startswith_bytes(s, p, m):
                return make_string(s.begin + m, s.end)
            return s
        return impl


@overload_method(CkStringType, "removesuffix")
def _ov_removesuffix(s, suffix):
    if _is_text(suffix):
        def impl(s, suffix):
            p, m = _text(suffix)
            if m > 0 and s.end - s.begin >= m and _ck_endswith_bytes(s, p, m):
                return make_string(s.begin, s.end - m)
            return s
        return impl


_ck_startswith = c_call("ck_str_startswith", "bool", ["p", "i64", "p", "i64", "i64", "i64"])
_ck_endswith = c_call("ck_str_endswith", "bool", ["p", "i64", "p", "i64", "i64", "i64"])


@register_jitable
def _ck_startswith_bytes(s, p, m):
    return _ck_startswith((s.begin, s.end - s.begin, p, m, 0, INT64_MAX))


@register_jitable
def _ck_endswith_bytes(s, p, m):
    return _ck_endswith((s.begin, s.end - s.begin, p, m, 0, INT64_MAX))


# ------------------------------------------------------------ strip, views --
_ck_strip = c_call("ck_str_strip", "i32", ["p", "i64", "p", "i64", "i32"], (("i64", 2),))


@register_jitable
def space_at(b, e):
    """The byte length of the str.isspace code point starting at ``b`` (``b <
    e``), 0 when the code point there is not whitespace.  Non-ASCII
    whitespace is U+0085, U+00A0 (lead byte C2), U+1680 (E1), U+2000-200A,
    U+2028/2029, U+202F, U+205F (E2) and U+3000 (E3): any other lead byte
    decides at once; reads stay inside ``[b, e)`` whatever the bytes."""
    c = load_u8(b)
    if c < 0x80:
        return 1 if ascii_space(c) else 0
    if c == 0xC2:
        if e - b >= 2:
            d = load_u8(b + 1)
            if d == 0x85 or d == 0xA0:
                return 2
        return 0
    if c < 0xE1 or c > 0xE3 or e - b < 3:
        return 0
    d = load_u8(b + 1)
    f = load_u8(b + 2)
    if c == 0xE1:
        ok = d == 0x9A and f == 0x80
    elif c == 0xE3:
        ok = d == 0x80 and f == 0x80
    elif d == 0x80:
        ok = (f >= 0x80 and f <= 0x8A) or f == 0xA8 or f == 0xA9 or f == 0xAF
    else:
        ok = d == 0x81 and f == 0x9F
    return 3 if ok else 0


@register_jitable
def space_before(b, e):
    """The byte length of the str.isspace code point ending at ``e`` (``b <
    e``), 0 when the code point there is not whitespace (``space_at``)."""
    c = load_u8(e - 1)
    if c < 0x80:
        return 1 if ascii_space(c) else 0
    if e - b >= 2 and load_u8(e - 2) == 0xC2:
        return 2 if c == 0x85 or c == 0xA0 else 0
    if e - b >= 3 and space_at(e - 3, e) == 3:
        return 3
    return 0


def _strip_method(method, which):
    left = bool(which & 1)
    right = bool(which & 2)

    @overload_method(CkStringType, method)
    def _ov(s, chars=None):
        if _absent(chars):
            # inline, no call: a byte test per ASCII character, the lead
            # byte (and at most two more) per non-ASCII one at the ends
            def impl(s, chars=None):
                b = s.begin
                e = s.end
                if left:
                    while b < e:
                        k = space_at(b, e)
                        if k == 0:
                            break
                        b += k
                if right:
                    while e > b:
                        k = space_before(b, e)
                        if k == 0:
                            break
                        e -= k
                return make_string(b, e)
            return impl
        if _is_text(chars):
            def impl(s, chars=None):
                p, m = _text(chars)
                if m == 0:      # strips nothing (the C library's NULL is whitespace)
                    return s
                st, off, n = _ck_strip((s.begin, s.end - s.begin, p, m, which))
                if st != 0:
                    raise_status(st, "ck_str_strip")
                return make_string(s.begin + off, s.begin + off + n)
            return impl


_strip_method("lstrip", 1)
_strip_method("rstrip", 2)
_strip_method("strip", 3)


def _partition_method(method, cname):
    fn = c_call(cname, "i32", ["p", "i64", "p", "i64"], (("i64", 6),))

    @overload_method(CkStringType, method)
    def _ov(s, sep):
        if _is_text(sep):
            def impl(s, sep):
                p, m = _text(sep)
                st, o0, n0, o1, n1, o2, n2 = fn((s.begin, s.end - s.begin, p, m))
                if st != 0:
                    raise_status(st, cname)
                # the separator: a view of the input when found, else ""
                return (make_string(s.begin + o0, s.begin + o0 + n0),
                        make_string(s.begin + o1, s.begin + o1 + n1),
                        make_string(s.begin + o2, s.begin + o2 + n2))
            return impl


_partition_method("partition", "ck_str_partition")
_partition_method("rpartition", "ck_str_rpartition")

_ck_getitem = c_call("ck_str_getitem", "i32", ["p", "i64", "i64"], (("i64", 2),))


@register_jitable
def char_at(s, i):
    """s[i] as a one-code-point view (IndexError "string index out of range")."""
    st, off, n = _ck_getitem((s.begin, s.end - s.begin, i))
    if st != 0:
        raise_status(st, "ck_str_getitem")
    return make_string(s.begin + off, s.begin + off + n)


# ----------------------------------------------------------------- build --
_ck_replace = c_call("ck_str_replace", "i32",
                     ["p", "p", "i64", "p", "i64", "p", "i64", "i64"], (("i64", 2),))
_ck_result_arena = c_call("ck_str_result_arena", "i32", [], (("i64", 1),))


@register_jitable
def result_arena():
    """The arena for an element's new text that may be its returned value:
    the entry point's result arena (the text then needs no copy when it is
    returned), once per element, else the current arena (borrowed)."""
    st, mb = _ck_result_arena(())
    if st != 0:
        raise_status(st, "ck_str_result_arena")
    return mb


_LOW_BYTES = np.uint64(0x0101010101010101)
_HIGH_BYTES = np.uint64(0x8080808080808080)     # 0x80 in every byte


@register_jitable
def _zero_byte(x):
    """Whether the word ``x`` (uint64) has a zero byte."""
    return ((x - _LOW_BYTES) & ~x & _HIGH_BYTES) != _ZERO


@register_jitable
def has_byte(b, e, c):
    """Byte ``c`` occurs in ``[b, e)``: 8 bytes a step (a word with a zero
    byte after xor), the last 1-7 bytes as one word overlapping the one
    before (no read outside ``[b, e)``), bytes only for texts under 8.  The
    word arithmetic is uint64: Numba's signed ``*`` and ``-`` are ``nsw``,
    and ``0x0101.. * c`` overflows int64 for a byte ``c >= 0x80`` (poison
    LLVM may fold into any answer)."""
    pat = _LOW_BYTES * np.uint64(c)
    p = b
    while p + 8 <= e:
        if _zero_byte(np.uint64(load_word(p)) ^ pat):
            return True
        p += 8
    if p < e and e - b >= 8:
        return _zero_byte(np.uint64(load_word(e - 8)) ^ pat)
    while p < e:
        if load_u8(p) == c:
            return True
        p += 1
    return False


@overload_method(CkStringType, "replace", prefer_literal=True)
def _ov_replace(s, old, new, count=-1):
    if _is_text(old) and _is_text(new) and _ok_index(count):
        def impl(s, old, new, count=-1):
            p, m = _text(old)
            # most texts hold no first byte of `old`: then they are their
            # own result, found inline without a call or an arena
            if m > 0 and not has_byte(s.begin, s.end, load_u8(p)):
                return s
            q, k = _text(new)
            st, b, e = _ck_replace((result_arena(), s.begin, s.end - s.begin, p, m, q, k,
                                    _or(count, -1)))
            if st != 0:
                raise_status(st, "ck_str_replace")
            return make_string(b, e)
        return impl


_ck_zfill = c_call("ck_str_zfill", "i32", ["p", "p", "i64", "i64"], (("i64", 2),))
_ck_pad = c_call("ck_str_pad", "i32", ["p", "p", "i64", "i64", "p", "i64", "i32"],
                 (("i64", 2),))
_ck_expandtabs = c_call("ck_str_expandtabs", "i32", ["p", "p", "i64", "i64"], (("i64", 2),))
_ck_repeat = c_call("ck_str_repeat", "i32", ["p", "p", "i64", "i64"], (("i64", 2),))


@overload_method(CkStringType, "zfill")
def _ov_zfill(s, width):
    if isinstance(width, types.Integer):
        def impl(s, width):
            st, b, e = _ck_zfill((current_arena(), s.begin, s.end - s.begin, width))
            if st != 0:
                raise_status(st, "ck_str_zfill")
            return make_string(b, e)
        return impl


def _pad_method(method, align):
    @overload_method(CkStringType, method)
    def _ov(s, width, fillchar=" "):
        if isinstance(width, types.Integer) and _absent(fillchar):
            def impl(s, width, fillchar=" "):
                p, m = _text(" ")
                st, b, e = _ck_pad((current_arena(), s.begin, s.end - s.begin, width, p, m,
                                    align))
                if st != 0:
                    raise_status(st, "ck_str_pad")
                return make_string(b, e)
            return impl
        if isinstance(width, types.Integer) and _is_text(fillchar):
            def impl(s, width, fillchar=" "):
                p, m = _text(fillchar)
                st, b, e = _ck_pad((current_arena(), s.begin, s.end - s.begin, width, p, m,
                                    align))
                if st != 0:
                    raise_status(st, "ck_str_pad")
                return make_string(b, e)
            return impl


_pad_method("ljust", 1)
_pad_method("rjust", 2)
_pad_method("center", 3)


@overload_method(CkStringType, "expandtabs")
def _ov_expandtabs(s, tabsize=8):
    if _absent(tabsize) or isinstance(tabsize, types.Integer):
        def impl(s, tabsize=8):
            st, b, e = _ck_expandtabs((current_arena(), s.begin, s.end - s.begin,
                                       _or(tabsize, 8)))
            if st != 0:
                raise_status(st, "ck_str_expandtabs")
            return make_string(b, e)
        return impl


@register_jitable
def _repeat(s, count):
    st, b, e = _ck_repeat((current_arena(), s.begin, s.end - s.begin, count))
    if st != 0:
        raise_status(st, "ck_str_repeat")
    return make_string(b, e)


@overload(operator.mul)
def _ov_mul(a, b):
    if isinstance(a, CkStringType) and isinstance(b, types.Integer):
        return lambda a, b: _repeat(a, b)
    if isinstance(a, types.Integer) and isinstance(b, CkStringType):
        return lambda a, b: _repeat(b, a)


# ------------------------------------------------------------ numbers --
_ck_to_int = c_call("ck_str_to_int64", "i32", ["p", "i64", "i32"], (("i64", 1),))
_ck_to_double = c_call("ck_str_to_double", "i32", ["p", "i64"], (("f64", 1),))
_ck_ord = c_call("ck_str_ord", "i32", ["p", "i64"], (("i64", 1),))


@register_jitable
def to_int(s, base):
    """int(s, base) of a view (Python's rules; OverflowError beyond int64)."""
    st, v = _ck_to_int((s.begin, s.end - s.begin, base))
    if st != 0:
        raise_status(st, "ck_str_to_int64")
    return v


@register_jitable
def to_float(s):
    """float(s) of a view (Python's rules and message)."""
    st, v = _ck_to_double((s.begin, s.end - s.begin))
    if st != 0:
        raise_status(st, "ck_str_to_double")
    return v


@overload(int)
def _ov_int(s, base=10):
    if isinstance(s, CkStringType) and (_absent(base) or isinstance(base, types.Integer)):
        return lambda s, base=10: to_int(s, _or(base, 10))


@overload(float)
def _ov_float(s):
    if isinstance(s, CkStringType):
        return lambda s: to_float(s)


@overload(ord)
def _ov_ord(s):
    if isinstance(s, CkStringType):
        def impl(s):
            st, v = _ck_ord((s.begin, s.end - s.begin))
            if st != 0:
                raise_status(st, "ck_str_ord")
            return v
        return impl




__all__ = ["c_call", "current_arena", "set_string_arena", "free_scratch", "str_length",
           "char_at", "to_int", "to_float", "INT64_MAX"]
