#!/usr/bin/env python3
"""Generate src/lib/strings/unicode_tables.c: the Unicode character records of
ckernel/utf8.h, from the Unicode Character Database of the running Python.

Every property is read from what the running interpreter does (its str
methods and `unicodedata`), so the C library answers as that Python's `str`
does:

* case mappings: `c.lower()`, `c.upper()`, `c.title()` (of one character:
  its full titlecase mapping), `c.casefold()` -- full mappings, special
  casing included ("ß".upper() == "SS");
* predicates of one character: isalpha, isdecimal, isdigit, isnumeric,
  isspace, islower (the Lowercase property), Uppercase (`c.istitle()` of a
  non-titlecase letter), titlecase (category Lt), line breaks (splitlines),
  XID_Start / XID_Continue (isidentifier of `c` and of `"a" + c`),
  isprintable (what repr() escapes);
* Cased and Case_Ignorable, which Python does not expose, from their
  effect: `(c + "a").title()` keeps "a" lowercase exactly when c is cased,
  and the final-sigma rule of `lower()` skips exactly the case-ignorable
  characters (probed with "Σ" after c);
* decimal and digit values from `unicodedata.decimal` / `unicodedata.digit`;
* the fast paths of lower / upper / casefold (utf8_case.c): for each 2-byte
  UTF-8 sequence, the UTF-8 of its mapping when that is one 2-byte code
  point and needs no context (`ck__case2`), and which blocks of 64 3-byte
  code points every one of those mappings leaves alone (`ck__case3_plain`);
  the same 2-byte tables for title and swapcase, which 2-byte code points
  are cased (`ck__case2_cased`) and which 3-byte blocks every mapping leaves
  alone and hold no cased code point (`ck__case3_inert`): the fast paths of
  title / capitalize / swapcase.

Layout (two-level, as CPython's unicodetype_db.h): a code point's record is
records[index2[(index1[cp >> SHIFT] << SHIFT) + (cp & MASK)]]; SHIFT is
chosen for the smallest tables.  Records hold mappings as deltas, or
(count << 24 | offset) into `ck__ucd_ext` when a mapping has several code
points.

Usage: python tools/gen_unicode_tables.py [--out src/lib/strings/unicode_tables.c]
tests/python/core/test_utf8_strings.py checks the result against the running
Python for every code point.
"""
from __future__ import annotations

import argparse
import os
import sys
import unicodedata

FLAGS = ["ALPHA", "DECIMAL", "DIGIT", "NUMERIC", "SPACE", "LOWER", "UPPER", "TITLE",
         "CASED", "CASE_IGNORABLE", "XID_START", "XID_CONTINUE", "LINEBREAK", "PRINTABLE",
         "EXT_LOWER", "EXT_UPPER", "EXT_TITLE", "EXT_FOLD"]
BIT = {name: 1 << i for i, name in enumerate(FLAGS)}
MAX_CP = 0x110000


def properties(cp: int, ext: list[int], ext_index: dict) -> tuple:
    c = chr(cp)
    flags = 0
    if c.isalpha():
        flags |= BIT["ALPHA"]
    if c.isdecimal():
        flags |= BIT["DECIMAL"]
    if c.isdigit():
        flags |= BIT["DIGIT"]
    if c.isnumeric():
        flags |= BIT["NUMERIC"]
    if c.isspace():
        flags |= BIT["SPACE"]
    title = unicodedata.category(c) == "Lt"
    if c.islower():
        flags |= BIT["LOWER"]
    if title:
        flags |= BIT["TITLE"]
    elif c.istitle():
        flags |= BIT["UPPER"]
    cased = (c + "a").title()[-1] == "a"
    if cased:
        flags |= BIT["CASED"]
        ignorable = (c + "\u03a3").lower()[-1] == "\u03c3"
    else:
        ignorable = ("a" + c + "\u03a3").lower()[-1] == "\u03c2"
    if ignorable:
        flags |= BIT["CASE_IGNORABLE"]
    if c.isidentifier():
        flags |= BIT["XID_START"]
    if ("a" + c).isidentifier():
        flags |= BIT["XID_CONTINUE"]
    if len(("a" + c + "b").splitlines()) == 2:
        flags |= BIT["LINEBREAK"]
    if c.isprintable():
        flags |= BIT["PRINTABLE"]
    maps = []
    for name, mapped in (("LOWER", c.lower()), ("UPPER", c.upper()),
                         ("TITLE", c.title()), ("FOLD", c.casefold())):
        if len(mapped) == 1:
            maps.append(ord(mapped) - cp)
        else:
            seq = tuple(ord(x) for x in mapped)
            if seq not in ext_index:
                ext_index[seq] = len(ext)
                ext.extend(seq)
            assert len(seq) < 256 and ext_index[seq] < (1 << 24)
            maps.append((len(seq) << 24) | ext_index[seq])
            flags |= BIT["EXT_" + name]
    return (*maps, flags, unicodedata.decimal(c, -1), unicodedata.digit(c, -1))


def split_bins(values: list[int]):
    """The two-level index of smallest size: (shift, index1, index2)."""
    best = None
    for shift in range(4, 11):
        size = 1 << shift
        blocks: dict[tuple, int] = {}
        index1, index2 = [], []
        for start in range(0, len(values), size):
            block = tuple(values[start:start + size])
            if block not in blocks:
                blocks[block] = len(blocks)
                index2.extend(block)
            index1.append(blocks[block])
        total = 2 * (len(index1) + len(index2))
        if best is None or total < best[0]:
            best = (total, shift, index1, index2)
    return best[1:]


def emit_array(ctype: str, name: str, values, per_line: int = 16, fmt=str) -> str:
    lines = [f"const {ctype} {name}[{len(values)}] = {{"]
    for i in range(0, len(values), per_line):
        lines.append("  " + ", ".join(fmt(v) for v in values[i:i + per_line]) + ",")
    lines.append("};")
    return "\n".join(lines)


FAST_OPS = ("lower", "upper", "casefold")  # ck__case2's order (CK__LOWER, CK__UPPER, CK__FOLD)
# the tables of ck__case2 in order: FAST_OPS, then title and swapcase (utf8_case.c's
# ck__case2_of: title and capitalize take the title or the lower table by context)
CASE2_OPS = FAST_OPS + ("title", "swapcase")


def case2_table() -> list[int]:
    """ck__case2[op * 2048 + v]: for the 2-byte UTF-8 sequence of 11-bit
    value v (U+0080-U+07FF), the UTF-8 bytes of its mapping by op (CASE2_OPS)
    as `b0 | b1 << 8` when that is one 2-byte code point that needs no
    context (not the capital sigma of lower and swapcase: the final sigma);
    0 (the general path) otherwise, and for v < 0x80 (overlong sequences)."""
    out = []
    for op in CASE2_OPS:
        table = [0] * 2048
        for cp in range(0x80, 0x800):
            if op in ("lower", "swapcase") and cp == 0x3A3:
                continue
            m = getattr(chr(cp), op)().encode("utf-8")
            if len(m) == 2:
                table[cp] = m[0] | (m[1] << 8)
        out.extend(table)
    return out


def case3_plain() -> list[int]:
    """Bit (b & 63) of ck__case3_plain[b >> 6]: every code point of the block
    b of 64 (cp >> 6 == b, U+0800-U+FFFF, surrogates excepted) is its own
    lower, upper and casefold mapping."""
    words = [0] * 16
    for b in range(0x800 >> 6, 0x10000 >> 6):
        cps = range(b << 6, (b + 1) << 6)
        if any(0xD800 <= cp <= 0xDFFF for cp in cps):
            continue
        if all(getattr(chr(cp), op)() == chr(cp) for cp in cps for op in FAST_OPS):
            words[b >> 6] |= 1 << (b & 63)
    return words


def case2_cased() -> list[int]:
    """Bit (v & 63) of ck__case2_cased[v >> 6]: the code point v
    (U+0080-U+07FF) is cased (title's state: the next letter is lowered)."""
    words = [0] * 32
    for cp in range(0x80, 0x800):
        if (chr(cp) + "a").title()[-1] == "a":
            words[cp >> 6] |= 1 << (cp & 63)
    return words


def case3_inert() -> list[int]:
    """Bit (b & 63) of ck__case3_inert[b >> 6]: every code point of the block
    b of 64 (U+0800-U+FFFF, surrogates excepted) is its own mapping by every
    method (CASE2_OPS) and is not cased (title, capitalize, swapcase copy it
    and title's next letter is titlecased)."""
    words = [0] * 16
    for b in range(0x800 >> 6, 0x10000 >> 6):
        cps = range(b << 6, (b + 1) << 6)
        if any(0xD800 <= cp <= 0xDFFF for cp in cps):
            continue
        if all(getattr(chr(cp), op)() == chr(cp) and (chr(cp) + "a").title()[-1] == "A"
               for cp in cps for op in CASE2_OPS):
            words[b >> 6] |= 1 << (b & 63)
    return words


def flags2(per_cp: list[int], flags_of: list[int]) -> list[int]:
    """ck__flags2[cp]: the public flags (CK__U_PUBLIC) of the code points
    U+0000-U+07FF (ASCII and the 2-byte sequences) in one load -- what the
    predicates read (utf8_case.c ck__flags)."""
    return [flags_of[per_cp[cp]] & ((1 << 14) - 1) for cp in range(0x800)]


def generate() -> str:
    ext: list[int] = []
    ext_index: dict = {}
    records: dict[tuple, int] = {}
    # record 0: no properties (what an out-of-range value reads)
    records[(0, 0, 0, 0, 0, -1, -1)] = 0
    per_cp = []
    for cp in range(MAX_CP):
        rec = properties(cp, ext, ext_index)
        if rec not in records:
            records[rec] = len(records)
        per_cp.append(records[rec])
    shift, index1, index2 = split_bins(per_cp)
    # the most UTF-8 bytes a case mapping writes per input byte: results are
    # allocated at this many times the input's size, then trimmed
    growth = 1
    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        size = len(c.encode())
        for mapped in (c.lower(), c.upper(), c.title(), c.casefold()):
            growth = max(growth, -(-len(mapped.encode()) // size))
    assert len(records) < 65536 and max(index1) < 65536
    rec_lines = ["const ck__ucd_record ck__ucd_records[%d] = {" % len(records)]
    for rec in records:
        lower, upper, title, fold, flags, dec, dig = rec
        rec_lines.append(f"  {{{lower}, {upper}, {title}, {fold}, {flags}u, {dec}, {dig}, 0}},")
    rec_lines.append("};")
    version = unicodedata.unidata_version
    py = ".".join(map(str, sys.version_info[:3]))
    out = [
        "/*",
        " * unicode_tables.c -- GENERATED by tools/gen_unicode_tables.py from the",
        f" * Unicode Character Database {version} of Python {py}.  Do not edit; run",
        " * the script again (tests/python/core/test_utf8_strings.py checks every code",
        " * point against the running Python).",
        " *",
        f" * {len(records)} records, {len(index1)} + {len(index2)} index entries (shift {shift}),",
        f" * {len(ext)} code points of multi-character mappings.",
        " */",
        '#include "strings/strings_internal.h"',
        "",
        f'const char ck__ucd_version[] = "{version}";',
        f"const int ck__ucd_shift = {shift};",
        f"const int ck__ucd_max_growth = {growth};",
        "",
        "\n".join(rec_lines),
        "",
        emit_array("uint32_t", "ck__ucd_ext", ext or [0]),
        "",
        emit_array("uint16_t", "ck__ucd_index1", index1, 24),
        "",
        emit_array("uint16_t", "ck__ucd_index2", index2, 24),
        "",
        emit_array("uint16_t", "ck__case2", case2_table(), 16),
        "",
        emit_array("uint64_t", "ck__case3_plain", case3_plain(), 2,
                   lambda v: f"0x{v:016x}ull"),
        "",
        emit_array("uint64_t", "ck__case2_cased", case2_cased(), 2,
                   lambda v: f"0x{v:016x}ull"),
        "",
        emit_array("uint64_t", "ck__case3_inert", case3_inert(), 2,
                   lambda v: f"0x{v:016x}ull"),
        "",
        emit_array("uint16_t", "ck__flags2", flags2(per_cp, [rec[4] for rec in records]), 16),
        "",
    ]
    return "\n".join(out)


def main() -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "src/lib/strings/unicode_tables.c"))
    args = ap.parse_args()
    text = generate()
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.out} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
