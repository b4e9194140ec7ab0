"""The fast paths of ``lower`` / ``upper`` / ``casefold`` in jitted code
(numba_ext/_numba/str_case.py: ASCII rows inline into the result region;
src/lib/strings/utf8_case.c: ASCII 8 bytes at a time also between other
characters and for the last 1-7 bytes, 2-byte sequences mapped by a lookup
of their bytes, 3-byte code points of blocks no mapping changes copied; the
final sigma and length-changing mappings on the general path).  CPython's
``str`` is the oracle: every 2-byte code point at every offset of an ASCII
word, every 3-byte code point, and the final sigma next to them."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# ---- the inline ASCII path (numba_ext/_numba/str_case.py) -------------------
# ASCII rows are mapped 8 bytes at a time straight into the call's result
# region; a row with any byte >= 0x80 goes to the C library.  Rows of every
# length 0-40 (the word loop, the overlapping last word, the byte loop of
# rows under 8), every ASCII byte, non-ASCII at every offset, and arrays
# that switch between the two paths row by row.

ASCII_ALL = "".join(chr(c) for c in range(128))


def test_ascii_rows_every_length_and_byte():
    rows = [ASCII_ALL[k:k + n] for n in range(41) for k in range(0, 128 - n, 7)]
    for method in FUNCS:
        _check(rows, method)


def test_non_ascii_at_every_offset_between_ascii_rows():
    rows = []
    for n in range(1, 25):
        for k in range(n):
            base = "aBcDeFgHiJkLmNoPqRsTuVwXyZ"[:n]
            rows.append(base)
            rows.append(base[:k] + "ẞ" + base[k + 1:])     # U+1E9E: lower is ß
            rows.append(base[:k] + "Σ" + base[k + 1:])
    for method in FUNCS:
        _check(rows, method)


SPECIAL = ["ß", "STRASSE ß", "ΣΑΣ", "ΌΣΟΣ ΣΑ", "σς Σ", "İ", "İstanbul", "IIı", "ǰ", "ŉ",
           "ﬁ ﬂ ﬀ", "ΐ", "𐐀", "\U0001E900", "Ⓐ", "ǅ", "x" * 300 + "É", "y" * 700]


def test_special_casing_final_sigma_turkish_i():
    rows = SPECIAL + [a + b for a in SPECIAL for b in ("", "AbC", " Σ", "İ")]
    for method in FUNCS:
        _check(rows, method)


@ckernels.jit("string(string, int64)")
def chained(s, k):
    if k == 0:
        return s.replace("a", "b").lower()   # lower is not the element's first made text
    if k == 1:
        return s.lower().upper()
    if k == 2:
        return s.upper()[1:]                 # a view of the made text, returned
    t = s.lower()
    return t if len(t) > 3 else s


PY_CHAINED = [lambda s: s.replace("a", "b").lower(), lambda s: s.lower().upper(),
              lambda s: s.upper()[1:], lambda s: s.lower() if len(s.lower()) > 3 else s]


@ckernels.jit("int64(string)")
def lower_len(s):                            # no string result: no result region
    return len(s.lower()) + s.upper().count("A")


def test_not_returned_or_not_first():
    rows = ["aAbB", "Straße", "", "xyz", "ÀB", "abcdefghijklmnop", "İİ", "Σa"] * 3
    a = ckernels.array(rows, dtype="string")
    for k, f in enumerate(PY_CHAINED):
        assert chained(a, k).tolist() == [f(s) for s in rows], k
    assert lower_len(a).tolist() == [len(s.lower()) + s.upper().count("A") for s in rows]
    # the region sized from the input fills up (ŉ uppers to 3 bytes from 2):
    # the next ASCII row finds too little room and goes to the C library
    _check(["ŉ" * 100, "a" * 200, "b" * 10], "upper")


_ALL_PLANES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
_MOSTLY_ASCII = st.text(alphabet=st.sampled_from(list("aZ09 @.-_~\x7f\x00AzXy") +
                                                 ["ß", "Σ", "İ", "ı", "ǅ", "😀", "é"]),
                        max_size=40)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.one_of(_ALL_PLANES, _MOSTLY_ASCII), min_size=1, max_size=12))
def test_matches_cpython_hypothesis(rows):
    for method in FUNCS:
        _check(rows, method)
