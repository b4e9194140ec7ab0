"""The fast paths of ``lower`` / ``upper`` / ``casefold`` in jitted code
(src/lib/strings/utf8_case.c: ASCII 8 bytes at a time also between other
characters and for the last 1-7 bytes, 2-byte sequences mapped by a lookup
of their bytes, 3-byte code points of blocks no mapping changes copied; the
final sigma and length-changing mappings on the general path).  CPython's
``str`` is the oracle: every 2-byte code point at every offset of an ASCII
word, every 3-byte code point, and the final sigma next to them."""
from __future__ import annotations

import pytest

import ckernels


@ckernels.jit("string(string)")
def lower(s):
    return s.lower()


@ckernels.jit("string(string)")
def upper(s):
    return s.upper()


@ckernels.jit("string(string)")
def casefold(s):
    return s.casefold()


FUNCS = {"lower": lower, "upper": upper, "casefold": casefold}


def _check(rows, method):
    got = FUNCS[method](ckernels.array(rows, dtype="string")).tolist()
    bad = [(r, g) for r, g in zip(rows, got) if g != getattr(r, method)()]
    assert bad[:5] == [] and len(got) == len(rows)


def _two_byte_rows():
    rows = []
    for cp in range(0x80, 0x800):
        c = chr(cp)
        for k in range(10):                # ASCII runs of 0-9 bytes before, 9-0 after
            rows.append("AbCdEfGhIj"[:k] + c + "kLmNoPqRs"[k:])
        rows.append(c * 5 + "xY" + c)      # runs of the same character, short ASCII between
    return rows


TWO_BYTE = _two_byte_rows()


@pytest.mark.parametrize("method", list(FUNCS))
def test_every_two_byte_code_point(method):
    _check(TWO_BYTE, method)


@pytest.mark.parametrize("method", list(FUNCS))
def test_every_three_byte_code_point(method):
    cps = [cp for cp in range(0x800, 0x10000) if not 0xD800 <= cp <= 0xDFFF]
    rows = ["aB" + "".join(chr(c) for c in cps[i:i + 64]) + "Cd"
            for i in range(0, len(cps), 64)]
    _check(rows, method)


MIXED = ["Straße", "ΣΟΦΙΑ ΣΟΦΟΣ", "ΟΔΟΣ.", "AΣ.B Σ, BΣ", "東京Σ", "Σ", "aΣ", "ΣA",
         "José Zoë Łukasz", "Ωmega Ελλάδα 😀", "naïve café ÜBER GRÖSSE", "İstanbul ǅemal ŉ",
         "ﬃ ΐ ǰ", "𐐀𐐨 Deseret", "x" * 7 + "É", "É" + "y" * 7, "É" * 9, "ab" * 4 + "ж" + "cd" * 4,
         "", "a", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "ЖЖЖ abc ЖЖЖ", "ĳ Ǆ ǈ ǋ", "ÿ µ ı ſ K Å"]


@pytest.mark.parametrize("method", list(FUNCS))
def test_mixed_and_final_sigma(method):
    rows = MIXED + [a + " " + b for a in MIXED for b in MIXED[:8]]
    _check(rows, method)
