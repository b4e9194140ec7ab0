"""Python's ``str()`` and ``format()`` in device C: ``str(x)`` of a float
(Python's shortest repr), f-string fields with format specs
(``f"{x:.2f}"``, ``{i:05d}``, ``{s:>10}``, ``{b:#x}``) and conversions of
numbers (``{x!r:>12}``).

The C is ``ckernel/format_view.h`` (installed with the package), the C
core's formatting written once for C11, OpenCL C and CUDA: the shortest
digits are the Ryu code ``src/lib/core/shortest.c`` compiles for the host,
the fixed-precision digits are exact 64-bit integer arithmetic for
``abs(x) < 2**64`` up to 19 places (``ckernel/format_digits.h``, also the
host's digits) and big-integer arithmetic beyond (no ``snprintf``), the layout is CPython's as ``src/lib/core/text.c`` lays it
out (``tests/c/core/test_format_view.c`` checks every path against
``ckernel/text.h``).  The header writes into the string sinks of
:mod:`.string_results`, so the sizing pass counts exactly the bytes the
writing pass writes.  A spec is parsed on the host when the function is
compiled (``ck_format_spec_parse``: Python's errors) and embedded as a
constant; its fields are ``ck_format_spec``'s.

``str()`` of a float32 without a spec is NumPy's str of a float32 (its own
shortest digits: ``ck_fv_float32_str``).  Refused: a conversion with a precision
(``{x!r:.3}``), a spec on text the function built (its bytes are only
written).
"""

from __future__ import annotations

import functools
import struct

from .strings import installed_header

_HEADER = "ckernel/format_view.h"
_SPEC = struct.Struct("<qqIBccccB6x")


def format_view_h() -> str:
    """The text of ``ckernel/format_digits.h`` (the fixed-precision digits'
    integer path) and ``ckernel/format_view.h`` as installed with the
    package, in that order."""
    return installed_header("format_digits.h") + installed_header("format_view.h")


@functools.lru_cache(maxsize=None)
def pow5_rows() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The 128-bit powers of five of the Ryu tables, as
    ``tools/gen_pow5_table.py`` writes them for the host
    (``CK_POW5_INV[q]`` for q < 342, ``CK_POW5[i]`` for i < 326)."""
    inv, pw = [], []
    for q in range(342):
        p = 5 ** q
        inv.append((1 << (p.bit_length() - 1 + 125)) // p + 1)
    for i in range(326):
        p = 5 ** i
        s = p.bit_length() - 125
        pw.append(p >> s if s >= 0 else p << -s)
    return tuple(inv), tuple(pw)


def prelude(fe, sink: str) -> None:
    """Declare the header's functions in the program (once), writing into
    the emitter's string sinks (the C type ``sink``, declared already)."""
    prog = fe.prog
    if _HEADER in prog.helpers:
        return
    d = fe.d
    u64, u32 = d.uint64, d.uint32
    if d.global_space:       # OpenCL C
        table, bits, mulhi = "__constant const", "as_ulong(d)", "mul_hi((a), (b))"
    else:                    # CUDA C++
        table, bits, mulhi = ("__device__ const", "((unsigned long long)"
                              "__double_as_longlong(d))", "__umul64hi((a), (b))")
    mask = (1 << 64) - 1
    rows = []
    for name, tab in zip(("CK_POW5_INV", "CK_POW5"), pow5_rows()):
        body = ",".join(f"{{{v & mask}{d.uint64_suffix},{v >> 64}{d.uint64_suffix}}}"
                        for v in tab)
        rows.append(f"{table} {u64} {name}[{len(tab)}][2] = {{{body}}};\n")
    if prog.fp64_user is None:
        prog.fp64_user = fe.py_func.__qualname__
    c = "__constant" if d.global_space else ""
    prog.helpers[_HEADER] = (
        f"#define CK_FV_FN {d.function_prefix}\n#define CK_FV_I64 {d.int64}\n"
        f"#define CK_FV_U64 {u64}\n#define CK_FV_U32 {u32}\n#define CK_FV_U8 {d.uint8}\n"
        f"#define CK_FV_SINK {sink}\n#define CK_FV_BITS(d) {bits}\n"
        f"#define CK_FV_MULHI(a, b) {mulhi}\n" + "".join(rows) + format_view_h() +
        f"\nCK_FORMAT_VIEW_TEXT(g, {d.global_space})\nCK_FORMAT_VIEW_TEXT(c, {c})\n")


def spec_fields(text: str, kind: str) -> tuple:
    """The fields of the parsed spec (Python's ValueError for a spec Python
    refuses for that kind of value)."""
    from ..string_elements import parse_spec
    return _SPEC.unpack(parse_spec(text, kind))


def spec_literal(fe, text: str | None, kind: str) -> str:
    """A C initializer of ``ck_fv_spec`` for ``text`` (None: an empty spec,
    ``str()``)."""
    w, p, fill, k, align, sign, grouping, typ, flags = spec_fields(text or "", kind)

    def ch(b: bytes) -> str:
        return str(b[0])
    return (f"{{{w}{fe.d.int64_suffix}, {p}{fe.d.int64_suffix}, {fill}u, {k}, {ch(align)}, "
            f"{ch(sign)}, {ch(grouping)}, {ch(typ)}, {flags}}}")


def text(fe, sink: str, space: str, ptr: str, n: str, spec: str) -> list[str]:
    """C statements writing ``format(s, spec)`` of the string view (address
    space suffix, pointer, byte length) into the sink ``K``."""
    prelude(fe, sink)
    return [f"{{ ck_fv_spec ck_sp = {spec_literal(fe, spec, 'str')};",
            f"  ck_fv_text_{space}(K, &ck_sp, {ptr}, {n}); }}"]


def number(fe, sink: str, value, spec: str | None, conv: str | None, loc) -> list[str]:
    """C statements writing ``format(value, spec)`` of a number or bool
    (``str(value)`` for no spec; its str() laid out as text for a
    conversion) into the sink ``K``."""
    from .numba_types import _unlit
    prelude(fe, sink)
    vt = _unlit(fe.tyof(value))
    if conv:
        return _converted(fe, sink, value, vt, spec, loc)
    return _number(fe, value, vt, spec, loc)


def _number(fe, value, vt, spec, loc) -> list[str]:
    from numba.core import types
    if isinstance(vt, types.Boolean):
        sp = spec_literal(fe, spec, "bool")
        return [f"{{ ck_fv_spec ck_sp = {sp};",
                f"  ck_fv_int(K, &ck_sp, {fe.use(value, loc)} ? 1 : 0, 0, 1); }}"]
    if isinstance(vt, types.Integer):
        sp = spec_literal(fe, spec, "int")
        u64 = fe.d.uint64
        if vt.signed:
            v = fe.use_as(value, types.int64, loc)
            mag, neg = f"(({v}) < 0 ? ({u64})0 - ({u64})({v}) : ({u64})({v}))", f"({v}) < 0"
        else:
            mag, neg = fe.use_as(value, types.uint64, loc), "0"
        code = fe.error_code(OverflowError, ("%c arg not in range(0x110000)",))
        return [f"{{ ck_fv_spec ck_sp = {sp};",
                f"  if (ck_fv_int(K, &ck_sp, {mag}, {neg}, 0)) {fe.raise_code(code)} }}"]
    if isinstance(vt, types.Float):
        if vt.bitwidth == 32 and not spec:
            # NumPy's str of a float32: its own shortest digits
            return [f"ck_fv_float32_str(K, (double)({fe.use(value, loc)}));"]
        sp = spec_literal(fe, spec, "float")
        return [f"{{ ck_fv_spec ck_sp = {sp};",
                f"  ck_fv_float(K, &ck_sp, (double)({fe.use(value, loc)})); }}"]
    raise fe.fail(f"str() of {vt}", loc)


def _converted(fe, sink, value, vt, spec, loc) -> list[str]:
    """``{x!r:spec}`` of a number: its str() laid out as text (width, fill
    and alignment; measured by a counting sink first)."""
    inner = _number(fe, value, vt, None, loc)
    if not spec:
        return inner
    w, p, fill, _k, align, _s, _g, _t, _f = spec_fields(spec, "str")
    if p >= 0:
        raise fe.fail(f"a conversion with a precision ({{...:{spec}}}) on a device", loc)
    i64 = fe.d.int64
    align = align.decode()
    measure = [ln.replace("(K,", "(&ck_m,") for ln in inner]
    lpad = {"<": "0", ">": "ck_pad", "^": "ck_pad / 2"}.get(align, "0")
    return ([f"{{ {sink} ck_m = {{ K->p, 0, 0 }};"] + ["  " + ln for ln in measure] +
            [f"  {i64} ck_pad = {w} > ck_m.n ? {w} - ck_m.n : 0, ck_lp = {lpad};",
             f"  ck_fv_fill(K, {fill}u, ck_lp);"] + ["  " + ln for ln in inner] +
            [f"  ck_fv_fill(K, {fill}u, ck_pad - ck_lp); }}"])


__all__ = ["format_view_h", "number", "pow5_rows", "prelude", "spec_fields", "spec_literal",
           "text"]
