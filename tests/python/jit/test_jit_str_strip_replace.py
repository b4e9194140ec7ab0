"""``strip`` / ``lstrip`` / ``rstrip`` and ``replace`` on string views in
jitted code, against CPython's ``str``: the inline whitespace strip (ASCII
by a byte test, non-ASCII by the lead byte and at most two more: every
code point at both ends, every whitespace code point beside the code
points that share its lead or last byte), ``chars=`` (the C library), and
``replace`` (the inline first-byte scan that returns the text itself, the
C library's one-byte swap and match offsets) over hypothesis text with
empty strings, empty ``old``/``new`` and ``count`` 0, -1, 1 and large."""
from __future__ import annotations

import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels

SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


@ckernels.jit("string(string)")
def strip(s):
    return s.strip()


@ckernels.jit("string(string)")
def lstrip(s):
    return s.lstrip()


@ckernels.jit("string(string)")
def rstrip(s):
    return s.rstrip()


@ckernels.jit("string(string, string)")
def strip_chars(s, c):
    return s.strip(c)


@ckernels.jit("string(string, string)")
def lstrip_chars(s, c):
    return s.lstrip(c)


@ckernels.jit("string(string, string)")
def rstrip_chars(s, c):
    return s.rstrip(c)


@ckernels.jit("string(string, string, string, int64)")
def replace(s, old, new, count):
    return s.replace(old, new, count)


@ckernels.jit("string(string, string, string)")
def replace_all(s, old, new):
    return s.replace(old, new)


@ckernels.jit("string(string)")
def replace_literal(s):
    return s.replace("o", "0")


def _arr(rows):
    return ckernels.array(rows, dtype="string")


def _strips(rows):
    a = _arr(rows)
    for f, m in ((strip, "strip"), (lstrip, "lstrip"), (rstrip, "rstrip")):
        got = f(a).tolist()
        bad = [(r, g) for r, g in zip(rows, got) if g != getattr(r, m)()]
        assert bad[:5] == [], m


def test_strip_every_code_point_at_both_ends():
    # every code point of 1-3 bytes (all the lead bytes whitespace has), the
    # 4-byte ones one in 61 (tests/c/strings/test_utf8_strip_replace.c: all)
    cps = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    rows = [chr(cp) * 2 + "x" + chr(cp) for cp in cps + list(range(0x10000, 0x110000, 61))]
    _strips(rows + [chr(cp) for cp in cps[::7]])


def test_strip_whitespace_beside_lookalikes():
    # code points sharing a whitespace code point's lead byte (C2, E1, E2,
    # E3) or last byte (80-8A, 9F, A0, A8, A9, AF): é is C3 A9, U+2029 E2 80 A9
    near = ["\u00a1", "\u0084", "\u1681", "\u200b", "\u2030", "\u205e", "\u2060",
            "\u3001", "\u00e9", "\u00c0", "\u0100", "\u30a0", "\U0001f600", "a"]
    rows = [""]
    for w in SPACES:
        for c in near:
            rows += [w + c + w, c + w, w + c, w * 3 + c + c + w * 2, c + w + c]
    _strips(rows)


text = st.text(alphabet=st.one_of(st.sampled_from(SPACES + ["a", "é", "日", "😀", "o", "0"]),
                                  st.characters(blacklist_categories=("Cs",))),
               max_size=12)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text, min_size=1, max_size=20), text)
def test_strip_hypothesis(rows, chars):
    _strips(rows)
    a = _arr(rows)
    c = _arr([chars] * len(rows))
    for f, m in ((strip_chars, "strip"), (lstrip_chars, "lstrip"),
                 (rstrip_chars, "rstrip")):
        assert f(a, c).tolist() == [getattr(r, m)(chars) for r in rows]


small = st.text(alphabet=st.sampled_from(["a", "o", "0", " ", "é", "ö", "日", "😀"]), max_size=3)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text(alphabet=st.sampled_from(["a", "o", "é", "ö", "日", "😀", " "]),
                                  max_size=40), small, small,
                          st.sampled_from([-1, 0, 1, 2, 5, 2**62])),
                min_size=1, max_size=20))
def test_replace_hypothesis(cases):
    s, old, new, count = (list(x) for x in zip(*cases))
    got = replace(_arr(s), _arr(old), _arr(new), ckernels.array(count, dtype="int64")).tolist()
    assert got == [a.replace(o, n, k) for a, o, n, k in cases]
    got = replace_all(_arr(s), _arr(old), _arr(new)).tolist()
    assert got == [a.replace(o, n) for a, o, n, _ in cases]


def test_replace_edges():
    rows = ["", "o", "oo", "hello world", "w\u00f6rld", "no match here" * 3, "o" * 100,
            "\u00f6" * 9, "x" * 7 + "o", "o" + "x" * 15]
    assert replace_literal(_arr(rows)).tolist() == [r.replace("o", "0") for r in rows]
    cases = [("", "", "A", -1), ("abc", "", "-", -1), ("abc", "", "-", 2), ("abc", "", "-", 0),
             ("h\u00e9", "", "\u00b7", -1), ("ab,ab," * 40, ",", ";;", -1),
             ("ab,ab," * 40, "b,", "", 70), ("\u00e9\u00f6", "\u00f6", "o", -1),
             ("abc", "abcd", "x", -1), ("aaaa", "a", "bb", 3), ("abc", "b", "b", -1)]
    s, old, new, count = (list(x) for x in zip(*cases))
    got = replace(_arr(s), _arr(old), _arr(new), ckernels.array(count, dtype="int64")).tolist()
    assert got == [a.replace(o, n, k) for a, o, n, k in cases]


def test_strip_empty_chars_strips_nothing():
    # an empty `chars` view has no address: it was taken for "whitespace"
    rows = ["\x85", " a ", "", "\u3000x\u3000"]
    empty = _arr([""] * len(rows))
    for f, m in ((strip_chars, "strip"), (lstrip_chars, "lstrip"), (rstrip_chars, "rstrip")):
        assert f(_arr(rows), empty).tolist() == [getattr(r, m)("") for r in rows]
