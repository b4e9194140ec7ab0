"""String elements of jitted entry points, emitted as LLVM IR around
libckernel's text functions (``ckernel/text.h``): no Numba compilation.

* :func:`emit_load_string` -- a ``string`` argument (a ``ck_string {begin,
  end}``, strict UTF-8) as a Numba ``str``: checked by ``ck_utf8_measure``;
  ASCII bytes used in place (the argument's bytes -- a NumPy StringDType
  buffer, a ckernels arena -- outlive the call: no copy, no allocation),
  anything else decoded into one NRT allocation of the narrowest kind
  (``ck_utf8_decode``).
* :func:`emit_store` -- a ``string`` result written into the destination
  arena in one pass from its *pieces*: constants (bytes in the code), Numba
  ``str`` values, numbers with or without a format spec, ``str`` values with
  a spec.  Every piece is measured (numbers are formatted into a small stack
  buffer on the way; integers without a spec are counted inline and written
  two digits at a time), the lengths are summed, the text takes the front of
  the call's result region (a bump of its cursor: the entry points' stores;
  ``ck_str_region_reserve`` when it is full) or one allocation of the arena
  (``ck_pod_allocate``), and the pieces are written into it; the returned
  ``str`` of a function that is not a recognised concatenation is the store
  of one piece.
* :func:`emit_format_str` -- one formatted value as a new Numba ``str`` (an
  f-string's ``{x:spec}`` outside a one-pass chain).

Failures are a ``ck_status`` whose message the C function (or
``ck_set_error`` here) recorded on the calling thread: the emitters call
``on_error(builder, status)``, which emits the caller's way out (release what
it owns, return the status).  The code calls only libckernel and Numba's NRT
by name, so it is cachable (``cache=True``) and, with the NRT routed to
libckernel, a native library (:mod:`ckernels.jit.native_cache`).

The Numba-compiled ``load_string`` / ``store_string_result`` serve the
generated element functions (:func:`ckernels.jit.cpu_element.element_function`)
that Numba compiles for signatures the direct entry points do not cover.
"""

from __future__ import annotations

import hashlib

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload, register_jitable

from .. import _native
from ..errors import (CKOverflowError, CKTypeError, CKValueError, JitOnlyError,
                      OutOfMemoryError)
from .._numba.memblock import memblock_from_address, raise_status
from .._numba.allocator import allocate
from .._numba.stringtype import CkStringType, ck_string_type
from .._numba.strings import store_str, store_string
from .._numba.utf8 import borrow_utf8, memcpy
from .string_views import (REGION_ARENA, REGION_CUR, REGION_LIM, REGION_MADE_B,
                           REGION_MADE_E, emit_load_view, emit_store_view)

_i1 = ir.IntType(1)
_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)
_i64p = _i64.as_pointer()
_f32 = ir.FloatType()
_f64 = ir.DoubleType()

#: bytes of the stack buffer a number is formatted into while measuring
#: (longer texts -- wide fields, long 'f' precisions -- are formatted twice:
#: measured, then written straight into the arena)
NUMBER_BUFFER = 64

_SPEC = ir.ArrayType(_i8, 32)     # ck_format_spec (32 bytes, text.h)

#: the C functions the emitted code calls, by name
SIGNATURES = {
    "ck_utf8_measure": ir.FunctionType(_i32, [_i8p, _i64, _i64p, ir.IntType(32).as_pointer()]),
    "ck_utf8_decode": ir.FunctionType(_i32, [_i8p, _i64, _i8p, _i32]),
    "ck_format_int64": ir.FunctionType(_i32, [_i8p, _i64, _i8p, _i64, _i64p]),
    "ck_format_uint64": ir.FunctionType(_i32, [_i8p, _i64, _i8p, _i64, _i64p]),
    "ck_format_bool": ir.FunctionType(_i32, [_i8p, _i64, _i8p, _i8, _i64p]),
    "ck_format_float64": ir.FunctionType(_i32, [_i8p, _i64, _i8p, _f64, _i64p]),
    "ck_format_float32": ir.FunctionType(_i32, [_i8p, _i64, _i8p, _f32, _i64p]),
    "ck_format_text": ir.FunctionType(_i32, [_i8p, _i64, _i8p, _i8p, _i32, _i64, _i64p]),
    "ck_pod_allocate": ir.FunctionType(_i32, [_i8p, _i64, _i64, _i8p.as_pointer(),
                                              _i8p.as_pointer()]),
    "ck_set_error": ir.FunctionType(_i32, [_i32, _i8p]),
    "ck_str_region_reserve": ir.FunctionType(_i32, [_i8p, _i64]),
}


def _declare(module, name):
    return cgutils.get_or_insert_function(module, SIGNATURES[name], name)


def _status(cls) -> int:
    return int(cls.status)


# ------------------------------------------------------------ format specs --
_KINDS = {"int": 1, "bool": 2, "float": 3, "str": 4}


def parse_spec(spec: str, kind: str) -> bytes:
    """The 32 bytes of the ``ck_format_spec`` of ``spec`` for values of
    ``kind`` ("int", "bool", "float", "str"); ValueError (Python's message)
    when Python refuses that spec for that kind of value."""
    ffi, lib = _native.ffi, _native.lib
    data = spec.encode("utf-8", "surrogatepass")
    out = ffi.new("ck_format_spec *")
    status = lib.ck_format_spec_parse(data, len(data), _KINDS[kind], out)
    if status != 0:
        msg = _native.last_error()
        raise ValueError(msg.split(": ", 1)[1] if msg.startswith("ck_format_spec_parse: ")
                         else msg)
    return bytes(ffi.buffer(out))


def value_kind(t) -> str | None:
    """The format kind of Numba type ``t`` ("int", "bool", "float", "str"),
    or None when the builder does not format it."""
    t = types.unliteral(t)
    if isinstance(t, types.Boolean):
        return "bool"
    if isinstance(t, types.Integer):
        return "int"
    if t in (types.float32, types.float64):
        return "float"
    if isinstance(t, types.UnicodeType):
        return "str"
    return None


def _global_bytes(module, data: bytes, align: int = 1):
    """An internal constant holding ``data`` (named by its content), as i8*."""
    name = f"ckjit_bytes_{hashlib.sha256(data).hexdigest()[:16]}_{len(data)}"
    try:
        gv = module.get_global(name)
    except KeyError:
        ty = ir.ArrayType(_i8, len(data))
        gv = ir.GlobalVariable(module, ty, name=name)
        gv.linkage = "internal"
        gv.global_constant = True
        gv.unnamed_addr = True
        gv.align = align
        gv.initializer = ir.Constant(ty, bytearray(data))
    return gv.bitcast(_i8p)


def _spec_ptr(module, spec: bytes | None):
    if spec is None:
        return ir.Constant(_i8p, None)
    return _global_bytes(module, spec, 8)


def _set_error(builder, status: int, message: str):
    text = _global_bytes(builder.module, message.encode() + b"\0")
    return builder.call(_declare(builder.module, "ck_set_error"), [ir.Constant(_i32, status),
                                                                  text])


def _check(builder, st, on_error):
    with builder.if_then(builder.icmp_signed("!=", st, ir.Constant(_i32, 0)), likely=False):
        on_error(builder, st)


# ---------------------------------------------------------------- numbers --
def _number_call(builder, nbty, value, out, cap, spec, lenp):
    """``ck_format_<T>(out, cap, spec, value, lenp)`` for Numba type ``nbty``."""
    module = builder.module
    t = types.unliteral(nbty)
    if isinstance(t, types.Boolean):
        v = builder.zext(value, _i8) if value.type.width < 8 else value
        return builder.call(_declare(module, "ck_format_bool"), [out, cap, spec, v, lenp])
    if isinstance(t, types.Integer):
        if value.type.width < 64:
            value = builder.sext(value, _i64) if t.signed else builder.zext(value, _i64)
        name = "ck_format_int64" if t.signed else "ck_format_uint64"
        return builder.call(_declare(module, name), [out, cap, spec, value, lenp])
    if t == types.float32:
        return builder.call(_declare(module, "ck_format_float32"), [out, cap, spec, value, lenp])
    if t == types.float64:
        return builder.call(_declare(module, "ck_format_float64"), [out, cap, spec, value, lenp])
    raise TypeError(f"ckernels.jit: no text form for {t}")


def _plain_integer(nbtype, spec) -> bool:
    """An integer written as ``str(x)``: its decimal digits are emitted inline
    (a C call and two copies cost a third of a short string's time)."""
    t = types.unliteral(nbtype)
    return spec is None and isinstance(t, types.Integer)


#: 10**k for k in 0..19 (u64), the digit count's table
_POW10 = b"".join((10 ** k).to_bytes(8, "little") for k in range(20))
#: "00" .. "99": the digits are written two at a time
_DIGIT_PAIRS = "".join(f"{k:02d}" for k in range(100)).encode()


def _decimal(builder, nbtype, value):
    """``(magnitude as u64, negative i1, byte count)`` of ``str(value)``.
    The digit count without a division or a chain of compares: ``t`` =
    ``floor(log10(2) * (log2(m) + 1))`` from the leading zeros, less one when
    ``m < 10**t`` (``m | 1``: 0 has one digit)."""
    t = types.unliteral(nbtype)
    if value.type.width < 64:
        value = builder.sext(value, _i64) if t.signed else builder.zext(value, _i64)
    zero = ir.Constant(_i64, 0)
    if t.signed:
        neg = builder.icmp_signed("<", value, zero)
        mag = builder.select(neg, builder.sub(zero, value), value)  # INT64_MIN: 2**63 as u64
    else:
        neg, mag = ir.Constant(_i1, 0), value
    m1 = builder.or_(mag, ir.Constant(_i64, 1))
    ctlz = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_i64, [_i64, _i1]),
                                          "llvm.ctlz.i64")
    bits = builder.sub(ir.Constant(_i64, 64), builder.call(ctlz, [m1, ir.Constant(_i1, 1)]))
    tk = builder.lshr(builder.mul(bits, ir.Constant(_i64, 1233)), ir.Constant(_i64, 12))
    table = builder.bitcast(_global_bytes(builder.module, _POW10, 8), _i64p)
    below = builder.icmp_unsigned("<", m1, builder.load(builder.gep(table, [tk]), align=8))
    ndig = builder.sub(builder.add(tk, ir.Constant(_i64, 1)), builder.zext(below, _i64))
    return mag, neg, builder.add(ndig, builder.zext(neg, _i64))


def _write_decimal(builder, pos, mag, neg, n):
    """Write the digits of ``mag`` (with '-' when ``neg``) in the ``n`` bytes
    at ``pos``: two digits per step from the end ("00".."99"), the last one
    alone."""
    with builder.if_then(neg):
        builder.store(ir.Constant(_i8, ord("-")), pos)
    pairs = _global_bytes(builder.module, _DIGIT_PAIRS, 2)
    i16p = ir.IntType(16).as_pointer()
    hundred = ir.Constant(_i64, 100)
    end = builder.gep(pos, [n])
    pre = builder.block
    loop = builder.append_basic_block("ck_digits2")
    tail = builder.append_basic_block("ck_digits_tail")
    done = builder.append_basic_block("ck_digits_done")
    builder.cbranch(builder.icmp_unsigned(">=", mag, hundred), loop, tail)
    builder.position_at_end(loop)
    v = builder.phi(_i64)
    q = builder.phi(_i8p)
    v.add_incoming(mag, pre)
    q.add_incoming(end, pre)
    rest = builder.udiv(v, hundred)
    two = builder.sub(v, builder.mul(rest, hundred))
    src = builder.bitcast(builder.gep(pairs, [builder.shl(two, ir.Constant(_i64, 1))]), i16p)
    q2 = builder.gep(q, [ir.Constant(_i64, -2)])
    builder.store(builder.load(src, align=1), builder.bitcast(q2, i16p), align=1)
    v.add_incoming(rest, loop)
    q.add_incoming(q2, loop)
    builder.cbranch(builder.icmp_unsigned(">=", rest, hundred), loop, tail)
    builder.position_at_end(tail)
    vt = builder.phi(_i64)
    qt = builder.phi(_i8p)
    vt.add_incoming(mag, pre)
    qt.add_incoming(end, pre)
    vt.add_incoming(rest, loop)
    qt.add_incoming(q2, loop)
    # 0..99 left: two digits when >= 10, else one
    src = builder.bitcast(builder.gep(pairs, [builder.shl(vt, ir.Constant(_i64, 1))]), i16p)
    two_left = builder.icmp_unsigned(">=", vt, ir.Constant(_i64, 10))
    with builder.if_else(two_left) as (both, one):
        with both:
            builder.store(builder.load(src, align=1),
                          builder.bitcast(builder.gep(qt, [ir.Constant(_i64, -2)]), i16p),
                          align=1)
        with one:
            builder.store(builder.add(builder.trunc(vt, _i8), ir.Constant(_i8, ord("0"))),
                          builder.gep(qt, [ir.Constant(_i64, -1)]))
    builder.branch(done)
    builder.position_at_end(done)


# ----------------------------------------------------------------- strings --
def _unicode(context, builder, value):
    return cgutils.create_struct_proxy(types.unicode_type)(context, builder, value=value)


def _text_call(builder, s, out, cap, spec, lenp):
    return builder.call(_declare(builder.module, "ck_format_text"),
                        [out, cap, spec, builder.bitcast(s.data, _i8p), s.kind, s.length, lenp])


def _ascii_str(context, builder, data, length):
    """A Numba ``str`` over ASCII bytes in place: no copy, no meminfo (like a
    string constant: nothing to free); valid while the bytes are."""
    s = cgutils.create_struct_proxy(types.unicode_type)(context, builder)
    s.data = builder.bitcast(data, s.data.type)
    s.length = length
    s.kind = ir.Constant(s.kind.type, 1)
    s.is_ascii = ir.Constant(s.is_ascii.type, 1)
    s.hash = ir.Constant(s.hash.type, -1)
    s.meminfo = cgutils.get_null_value(s.meminfo.type)
    s.parent = cgutils.get_null_value(s.parent.type)
    return s._getvalue()


def _measure(builder, begin, nbytes, on_error):
    lenp = cgutils.alloca_once(builder, _i64)
    maxp = cgutils.alloca_once(builder, _i32)
    st = builder.call(_declare(builder.module, "ck_utf8_measure"), [begin, nbytes, lenp, maxp])
    _check(builder, st, on_error)
    return builder.load(lenp), builder.load(maxp)


def emit_str_from_utf8(context, builder, begin, nbytes, on_error, measured=None):
    """A new Numba ``str`` (owned) from ``nbytes`` (i64) of UTF-8 at ``begin``
    (i8*), checked strictly (CK_ERR_VALUE naming the byte otherwise);
    ``measured``: its ``(length, largest code point)`` when known."""
    module = builder.module
    length, maxc = measured or _measure(builder, begin, nbytes, on_error)
    one, two, four = (ir.Constant(_i32, k) for k in (1, 2, 4))
    kind = builder.select(builder.icmp_unsigned("<", maxc, ir.Constant(_i32, 0x100)), one,
                          builder.select(builder.icmp_unsigned("<", maxc,
                                                               ir.Constant(_i32, 0x10000)),
                                         two, four))
    ascii_ = builder.icmp_unsigned("<", maxc, ir.Constant(_i32, 0x80))
    width = builder.zext(kind, _i64)
    size = builder.mul(width, builder.add(length, ir.Constant(_i64, 1)))
    mi = context.nrt.meminfo_alloc_unchecked(builder, size)
    with builder.if_then(cgutils.is_null(builder, mi), likely=False):
        on_error(builder, _set_error(builder, _status(OutOfMemoryError),
                                     "no memory for a string argument"))
    data = context.nrt.meminfo_data(builder, mi)
    with builder.if_else(ascii_, likely=True) as (asc, wide):
        with asc:
            cgutils.memcpy(builder, data, begin, nbytes)
        with wide:
            builder.call(_declare(module, "ck_utf8_decode"), [begin, nbytes, data, kind])
    # the terminator Numba's strings carry
    cgutils.memset(builder, builder.gep(data, [builder.mul(width, length)]), width, 0)
    s = cgutils.create_struct_proxy(types.unicode_type)(context, builder)
    s.data = data
    s.length = length
    s.kind = kind
    s.is_ascii = builder.zext(ascii_, _i32)
    s.hash = ir.Constant(s.hash.type, -1)
    s.meminfo = mi
    s.parent = cgutils.get_null_value(s.parent.type)
    return s._getvalue()


def emit_load_string(context, builder, ptr, on_error):
    """The ``ck_string`` at ``ptr`` (i8*) -- a kernel argument, whose bytes
    outlive the call -- as a Numba ``str`` (owned): ASCII bytes used in place
    (no copy, no allocation), anything else decoded into a new one; empty is
    Numba's constant ``""``."""
    p = builder.bitcast(ptr, _i64p)
    b = builder.load(p)
    e = builder.load(builder.gep(p, [ir.Constant(_i32, 1)]))
    n = builder.sub(e, b)
    out = cgutils.alloca_once(builder, context.get_value_type(types.unicode_type))
    with builder.if_else(builder.icmp_signed(">", n, ir.Constant(_i64, 0)),
                         likely=True) as (text, empty):
        with text:
            begin = builder.inttoptr(b, _i8p)
            length, maxc = _measure(builder, begin, n, on_error)
            ascii_ = builder.icmp_unsigned("<", maxc, ir.Constant(_i32, 0x80))
            with builder.if_else(ascii_, likely=True) as (asc, wide):
                with asc:
                    builder.store(_ascii_str(context, builder, begin, length), out)
                with wide:
                    builder.store(emit_str_from_utf8(context, builder, begin, n, on_error,
                                                     (length, maxc)), out)
        with empty:
            builder.store(context.get_constant_generic(builder, types.unicode_type, ""), out)
    return builder.load(out)


class Piece:
    """One piece of a string result: ``kind`` "const" (``value``: bytes),
    "str" (a Numba ``str``), "num" (a number of Numba type ``nbtype``),
    "text" (a Numba ``str`` with a spec) or "view" (a ``CkString`` view of
    UTF-8 bytes, ``nbtype`` its type); ``spec``: ``ck_format_spec`` bytes or
    None (plain ``str(x)``)."""

    __slots__ = ("kind", "value", "nbtype", "spec")

    def __init__(self, kind, value, nbtype=None, spec=None):
        self.kind, self.value, self.nbtype, self.spec = kind, value, nbtype, spec

    def __repr__(self) -> str:
        return f"Piece({self.kind}, {self.nbtype}, spec={self.spec is not None})"


def emit_store(context, builder, arena, dst, pieces, on_error, region=False):
    """Write ``pieces`` (:class:`Piece`) as one string into ``arena`` (the
    ``ck_memblock *`` as i64, 0: none) and point the ``ck_string`` at ``dst``
    (i8*) to it: measure, one allocation, write (see the module doc).

    With ``region``, ``arena`` is the address of the call's result region
    (``ck_str_region``, :func:`~ckernels.jit.string_views.emit_result_arena`):
    the text goes to the region's front, a bump of its cursor and no call
    (``ck_str_region_reserve`` only when the region has no room); when the
    element's made text (its first case mapping or ``replace``, written into
    the region) is the region's last text, it is dead once the pieces are
    written, and the new text moves down over it."""
    module = builder.module
    zero = ir.Constant(_i64, 0)
    total = ir.Constant(_i64, sum(len(p.value) for p in pieces if p.kind == "const"))
    # the lengths are summed with a carry: fields of width 2**62 measure
    # fine one by one, and four of them wrapped the sum to 0 bytes
    carry = ir.Constant(_i1, 0)
    plan = []
    for p in pieces:
        if p.kind == "const":
            if p.value:
                plan.append((p, None, None))
            continue
        lenp = cgutils.alloca_once(builder, _i64)
        spec = _spec_ptr(module, p.spec)
        if p.kind == "num" and _plain_integer(p.nbtype, p.spec):
            mag, neg, n = _decimal(builder, p.nbtype, p.value)
            builder.store(n, lenp)
            plan.append((p, lenp, (mag, neg)))
        elif p.kind == "num":
            buf = cgutils.alloca_once(builder, ir.ArrayType(_i8, NUMBER_BUFFER))
            out = builder.bitcast(buf, _i8p)
            st = _number_call(builder, p.nbtype, p.value, out,
                              ir.Constant(_i64, NUMBER_BUFFER), spec, lenp)
            _check(builder, st, on_error)
            plan.append((p, lenp, out))
        elif p.kind == "view":
            # UTF-8 bytes [begin, end): the length is the byte count
            v = cgutils.create_struct_proxy(p.nbtype)(context, builder, value=p.value)
            builder.store(builder.sub(v.end, v.begin), lenp)
            plan.append((p, lenp, builder.inttoptr(v.begin, _i8p)))
        else:
            s = _unicode(context, builder, p.value)
            if p.kind == "str":
                # ASCII: the length is the byte count, no call
                builder.store(s.length, lenp)
                with builder.if_then(builder.icmp_unsigned("==", s.is_ascii,
                                                           ir.Constant(s.is_ascii.type, 0)),
                                     likely=False):
                    st = _text_call(builder, s, ir.Constant(_i8p, None), zero, spec, lenp)
                    _check(builder, st, on_error)
            else:
                st = _text_call(builder, s, ir.Constant(_i8p, None), zero, spec, lenp)
                _check(builder, st, on_error)
            plan.append((p, lenp, s))
        summed = builder.uadd_with_overflow(total, builder.load(lenp))
        total = builder.extract_value(summed, 0)
        carry = builder.or_(carry, builder.extract_value(summed, 1))
    with builder.if_then(carry, likely=False):
        on_error(builder, _set_error(builder, _status(CKOverflowError),
                                     "the string result is too long: the lengths of its "
                                     "pieces overflow 64 bits"))
    bp = cgutils.alloca_once(builder, _i8p)
    ep = cgutils.alloca_once(builder, _i8p)
    if region:
        rec, made_b, made_e = _region_take(builder, arena, total, bp, on_error)
    else:
        with builder.if_then(builder.icmp_unsigned("==", arena, zero), likely=False):
            on_error(builder, _set_error(builder, _status(CKValueError),
                                         "a string result needs a destination arena"))
        st = builder.call(_declare(module, "ck_pod_allocate"),
                          [builder.inttoptr(arena, _i8p), total, ir.Constant(_i64, 1), bp, ep])
        _check(builder, st, on_error)
    pos = builder.load(bp)
    consts = b"".join(p.value for p, _, _ in plan if p.kind == "const")
    cbase = _global_bytes(module, consts) if consts else None
    coff = 0
    scratch = cgutils.alloca_once(builder, _i64)
    for p, lenp, extra in plan:
        if p.kind == "const":
            n = len(p.value)
            cgutils.memcpy(builder, pos, builder.gep(cbase, [ir.Constant(_i64, coff)]),
                           ir.Constant(_i64, n))
            coff += n
            pos = builder.gep(pos, [ir.Constant(_i64, n)])
            continue
        n = builder.load(lenp)
        spec = _spec_ptr(module, p.spec)
        if p.kind == "num" and _plain_integer(p.nbtype, p.spec):
            _write_decimal(builder, pos, extra[0], extra[1], n)
        elif p.kind == "num":
            fits = builder.icmp_unsigned("<=", n, ir.Constant(_i64, NUMBER_BUFFER))
            with builder.if_else(fits, likely=True) as (small, big):
                with small:
                    cgutils.memcpy(builder, pos, extra, n)
                with big:
                    _number_call(builder, p.nbtype, p.value, pos, n, spec, scratch)
        elif p.kind == "view":
            cgutils.memcpy(builder, pos, extra, n)
        elif p.kind == "str":
            s = extra
            with builder.if_else(builder.icmp_unsigned("!=", s.is_ascii,
                                                       ir.Constant(s.is_ascii.type, 0)),
                                 likely=True) as (asc, wide):
                with asc:
                    cgutils.memcpy(builder, pos, builder.bitcast(s.data, _i8p), n)
                with wide:
                    _text_call(builder, s, pos, n, spec, scratch)
        else:
            _text_call(builder, extra, pos, n, spec, scratch)
        pos = builder.gep(pos, [n])
    if region:
        _region_done(builder, rec, made_b, made_e, total, bp, ep)
    d = builder.bitcast(dst, _i8p.as_pointer())
    # dst may be unaligned (strided arrays)
    builder.store(builder.load(bp), d, align=1)
    builder.store(builder.load(ep), builder.gep(d, [ir.Constant(_i32, 1)]), align=1)


def _region_field(builder, rec, k):
    return builder.gep(rec, [ir.Constant(_i32, k)])


def _region_take(builder, region, total, bp, on_error):
    """The front ``total`` bytes of the result region at ``region`` (i64) into
    ``*bp``: inline when the region has room, else after
    ``ck_str_region_reserve``.  Returns the record (i8**) and the element's
    made text as it was (made_b, made_e; both NULL after a reserve: a made
    text in the region closed stays there, even when the next region starts
    right after it)."""
    rec = builder.inttoptr(region, _i8p.as_pointer())
    with builder.if_then(cgutils.is_null(builder, builder.load(
            _region_field(builder, rec, REGION_ARENA))), likely=False):
        on_error(builder, _set_error(builder, _status(CKValueError),
                                     "a string result needs a destination arena"))
    null = ir.Constant(_i8p, None)
    made_b = cgutils.alloca_once_value(builder, builder.load(
        _region_field(builder, rec, REGION_MADE_B)))
    made_e = builder.load(_region_field(builder, rec, REGION_MADE_E))
    cur = builder.load(_region_field(builder, rec, REGION_CUR))
    lim = builder.load(_region_field(builder, rec, REGION_LIM))
    room = builder.sub(builder.ptrtoint(lim, _i64), builder.ptrtoint(cur, _i64))
    # strictly less: no region open (cur NULL) has no room for ""
    with builder.if_else(builder.icmp_unsigned("<", total, room), likely=True) as (fits, full):
        with fits:
            builder.store(cur, bp)
        with full:
            st = builder.call(_declare(builder.module, "ck_str_region_reserve"),
                              [builder.bitcast(rec, _i8p), total])
            _check(builder, st, on_error)
            builder.store(builder.load(_region_field(builder, rec, REGION_CUR)), bp)
            builder.store(null, made_b)
    return rec, builder.load(made_b), made_e


def _region_done(builder, rec, made_b, made_e, total, bp, ep):
    """After the pieces are written at ``*bp``: move them down over the
    element's made text when that was the region's last text (the pieces
    have read it), move the cursor past the text, end the element (no made
    text), and set ``*ep``."""
    pos = builder.load(bp)
    over = builder.and_(cgutils.is_not_null(builder, made_b),
                        builder.icmp_unsigned("==", made_e, pos))
    with builder.if_then(over, likely=False):
        cgutils.raw_memmove(builder, made_b, pos, total, 1)
        builder.store(made_b, bp)
    end = builder.gep(builder.load(bp), [total])
    builder.store(end, ep)
    builder.store(end, _region_field(builder, rec, REGION_CUR))
    null = ir.Constant(_i8p, None)
    builder.store(null, _region_field(builder, rec, REGION_MADE_B))
    builder.store(null, _region_field(builder, rec, REGION_MADE_E))


def emit_store_optional(context, builder, arena, dst, value, on_error, region=False):
    """Store an ``Optional(str)`` result: None is an error (CK_ERR_TYPE)."""
    opt = context.make_helper(builder, types.Optional(types.unicode_type), value=value)
    with builder.if_then(builder.not_(cgutils.as_bool_bit(builder, opt.valid)), likely=False):
        on_error(builder, _set_error(builder, _status(CKTypeError),
                                     "the function returned None for a string result"))
    emit_store(context, builder, arena, dst, [Piece("str", opt.data)], on_error, region)
    return opt.data


def emit_format_str(context, builder, nbtype, value, spec, on_error):
    """``format(value, spec)`` (``spec``: ``ck_format_spec`` bytes or None for
    ``str(value)``) as a new Numba ``str`` (owned)."""
    module = builder.module
    lenp = cgutils.alloca_once(builder, _i64)
    scratch = cgutils.alloca_once(builder, _i64)
    specp = _spec_ptr(module, spec)
    buf = builder.bitcast(cgutils.alloca_once(builder, ir.ArrayType(_i8, NUMBER_BUFFER)), _i8p)
    cap = ir.Constant(_i64, NUMBER_BUFFER)
    if isinstance(types.unliteral(nbtype), types.UnicodeType):
        s = _unicode(context, builder, value)
        st = _text_call(builder, s, buf, cap, specp, lenp)
    else:
        st = _number_call(builder, nbtype, value, buf, cap, specp, lenp)
    _check(builder, st, on_error)
    n = builder.load(lenp)
    text = cgutils.alloca_once_value(builder, buf)
    big = builder.icmp_unsigned(">", n, cap)
    with builder.if_then(big, likely=False):
        heap = context.nrt.allocate_unchecked(builder, n)
        with builder.if_then(cgutils.is_null(builder, heap), likely=False):
            on_error(builder, _set_error(builder, _status(OutOfMemoryError),
                                         "no memory for a formatted value"))
        if isinstance(types.unliteral(nbtype), types.UnicodeType):
            _text_call(builder, s, heap, n, specp, scratch)
        else:
            _number_call(builder, nbtype, value, heap, n, specp, scratch)
        builder.store(heap, text)

    def release_and_fail(b, status):
        with b.if_then(big):
            context.nrt.free(b, b.load(text))
        on_error(b, status)

    out = emit_str_from_utf8(context, builder, builder.load(text), n, release_and_fail)
    with builder.if_then(big, likely=False):
        context.nrt.free(builder, builder.load(text))
    return out


# ------------------------------------- Numba-compiled element functions --
@intrinsic
def _ptr_to_intp(typingctx, ptr):
    if ptr != types.voidptr:
        return None

    def codegen(context, builder, sig, args):
        return builder.ptrtoint(args[0], _i64)
    return types.intp(types.voidptr), codegen


@intrinsic
def _load_ck_string(typingctx, ptr):
    """(begin, end) of the ``ck_string`` at ``ptr``, as intp."""
    if ptr != types.voidptr:
        return None
    ret = types.UniTuple(types.intp, 2)

    def codegen(context, builder, sig, args):
        p = builder.bitcast(args[0], _i64.as_pointer())
        b = builder.load(p)
        e = builder.load(builder.gep(p, [ir.Constant(_i32, 1)]))
        return context.make_tuple(builder, ret, [b, e])
    return ret(types.voidptr), codegen


@intrinsic
def _unwrap_optional(typingctx, v):
    """The value of an Optional known not to be None (a new reference)."""
    if not isinstance(v, types.Optional):
        return None

    def codegen(context, builder, sig, args):
        res = context.cast(builder, args[0], sig.args[0], sig.return_type)
        context.nrt.incref(builder, sig.return_type, res)
        return res
    return v.type(v), codegen


@intrinsic
def load_view(typingctx, ptr):
    """The ``ck_string`` at ``ptr`` as a view (``CkString``; its bytes are
    valid UTF-8, the invariant of string elements): no decoding, no
    allocation."""
    if ptr != types.voidptr:
        return None

    def codegen(context, builder, sig, args):
        return emit_load_view(context, builder, args[0])
    return ck_string_type(types.voidptr), codegen


@register_jitable
def load_string(ptr):
    """A Numba str of the ck_string at ``ptr`` (a kernel argument, whose bytes
    outlive the call): ASCII bytes used in place (no copy, no allocation),
    anything else decoded (strict UTF-8) into a new str."""
    b, e = _load_ck_string(ptr)
    if e <= b:
        return ""
    return borrow_utf8(b, e - b, True)


def store_string_result(arena, ptr, s):
    """Write ``s`` (a Numba ``str``, a ``CkString`` view, an Optional str)
    into ``arena`` (a ck_memblock address) and point the ck_string at ``ptr``
    to it (jitted code only)."""
    raise JitOnlyError("store_string_result is callable from jitted code only")


@overload(store_string_result)
def _ov_store_string_result(arena, ptr, s):
    if isinstance(s, types.NoneType):   # the function always raises
        return lambda arena, ptr, s: None
    if isinstance(s, types.UnicodeType):
        def impl(arena, ptr, s):
            if arena == 0:
                raise ValueError("a string result needs a destination arena")
            store_str(memblock_from_address(arena), _ptr_to_intp(ptr), s)
        return impl
    if isinstance(s, CkStringType):        # a view (of an argument): its bytes copied
        def impl_view(arena, ptr, s):
            if arena == 0:
                raise ValueError("a string result needs a destination arena")
            n = max(s.end - s.begin, 0)
            b, e = allocate(memblock_from_address(arena), n, 1)
            if n > 0:
                memcpy(b, s.begin, n)
            store_string(_ptr_to_intp(ptr), b, e)
        return impl_view
    if isinstance(s, types.Optional) and isinstance(s.type, (types.UnicodeType, CkStringType)):
        def impl_opt(arena, ptr, s):
            if s is None:
                raise TypeError("the function returned None for a string result")
            store_string_result(arena, ptr, _unwrap_optional(s))
        return impl_opt


@intrinsic
def _region_store_view(typingctx, region, ptr, s):
    """Store the view ``s`` through the result region at address ``region``
    (kept in place when it is the element's made text, else copied to the
    region's front: :func:`~ckernels.jit.string_views.emit_store_view`);
    returns the ck_status."""
    if not isinstance(s, CkStringType) or ptr != types.voidptr:
        return None

    def codegen(context, builder, sig, args):
        st = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(32), 0))

        def on_error(b, code):
            b.store(code, st)
        emit_store_view(context, builder, args[0], args[1], args[2], on_error)
        return builder.load(st)
    return types.int32(region, ptr, s), codegen


@intrinsic
def _region_arena(typingctx, region):
    """The arena of the result region at address ``region``; the element's
    made text is left behind (a ``str`` result is stored instead)."""
    if not isinstance(region, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        rec = builder.inttoptr(args[0], ir.IntType(8).as_pointer().as_pointer())
        null = ir.Constant(ir.IntType(8).as_pointer(), None)
        for k in (REGION_MADE_B, REGION_MADE_E):
            builder.store(null, builder.gep(rec, [ir.Constant(ir.IntType(32), k)]))
        arena = builder.load(builder.gep(rec, [ir.Constant(ir.IntType(32), REGION_ARENA)]))
        return builder.ptrtoint(arena, ir.IntType(64))
    return types.int64(region), codegen


def store_string_region(region, ptr, s):
    """As :func:`store_string_result`, through the call's result region
    (``region``: the ``ck_str_region`` address the entry point made,
    ``ck_str_result_region``): a view is stored without a call (kept in
    place when it is the element's first case mapping or replace), a
    ``str`` encoded into the region's arena (jitted code only)."""
    raise JitOnlyError("store_string_region is callable from jitted code only")


@overload(store_string_region)
def _ov_store_string_region(region, ptr, s):
    if isinstance(s, types.NoneType):   # the function always raises
        return lambda region, ptr, s: None
    if isinstance(s, CkStringType):
        def impl_view(region, ptr, s):
            st = _region_store_view(region, ptr, s)
            if st != 0:
                raise_status(st, "ck_str_region_store")
        return impl_view
    if isinstance(s, types.UnicodeType):
        def impl(region, ptr, s):
            store_str(memblock_from_address(_region_arena(region)), _ptr_to_intp(ptr), s)
        return impl
    if isinstance(s, types.Optional) and isinstance(s.type, (types.UnicodeType, CkStringType)):
        def impl_opt(region, ptr, s):
            if s is None:
                raise TypeError("the function returned None for a string result")
            store_string_region(region, ptr, _unwrap_optional(s))
        return impl_opt


__all__ = ["emit_load_string", "emit_str_from_utf8", "emit_store", "emit_store_optional",
           "emit_format_str", "Piece", "parse_spec", "value_kind", "load_string", "load_view",
           "store_string_result", "store_string_region", "NUMBER_BUFFER", "SIGNATURES"]
