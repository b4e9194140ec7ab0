"""Case mappings of the C string library (ckernel/utf8.h) on mostly-ASCII
text: the word loop maps 8 ASCII bytes at a time and hands the bytes from
the first non-ASCII one to the per-code-point path, title carries "the
previous character is cased" across words, capitalize maps the first byte,
and a lengthening mapping (``ß`` -> ``SS``) grows the allocation part way.
Every non-ASCII insert at every position of ASCII texts, against CPython's
``str`` methods; tests/python/core/test_utf8_strings.py has the hypothesis
and every-code-point oracles."""
from __future__ import annotations

import random

import pytest
from utf8_cstr import C

METHODS = ("lower", "upper", "casefold", "title", "capitalize", "swapcase")
BASES = ["hello World", "aBc dEf", "x", "", "the Quick brown FOX jumps over the lazy dog 42",
         "a'b c-d e_f G1h", "ABCDEFGHIJKLMNOP", "abcdefghijklmnopq", "@[`{ AZaz"]
INSERTS = ["é", "ß", "Σ", "ŉ", "ΐ", "ﬃ", "東", "😀", "\u0301", "ǅ", "İ", "Ω", "ς", "\u00b5"]


def _texts():
    out = []
    for b in BASES:
        out.append(b)
        for c in INSERTS:
            out += [b[:p] + c + b[p:] for p in range(len(b) + 1)]
    rng = random.Random(1)
    pieces = ["a", "B", " ", "z", "Q", ".", "é", "ß", "Σ", "ﬃ", "ΐ", "x y", "Ab", "'", "1"]
    out += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
            for _ in range(600)]
    # long: the allocation grown (and moved to a new chunk) far into the text
    out += ["ß" * 5000 + "abc", "a" * 70000 + "ß" * 30000 + "Σ", "ŉ" * 40000]
    return out


TEXTS = _texts()


@pytest.mark.parametrize("method", METHODS)
def test_inserts_at_every_position(method):
    bad = [(s[:40], getattr(C, method)(s)[:40]) for s in TEXTS
           if getattr(C, method)(s) != getattr(s, method)()]
    assert bad[:5] == []
