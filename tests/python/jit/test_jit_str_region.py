"""View results of jitted functions stored through the result region
(src/lib/strings/utf8_arena.c, numba_ext/jit/string_views.py): one
allocation per call in the destination arena, sized from the bytes of the
string arguments, its front handed out inline by the entry point's store
and by the first case mapping or ``replace`` of each element, its unused end
given back when the call ends.  CPython's str is the oracle; each function
is compiled once (module level)."""
from __future__ import annotations

import gc

import pytest

import ckernels
from ckernels import errors
from ckernels.host.rewrite import arena_stats

ROWS = ["  Hello World ", "", "straße ΣΑΣ ", "\u3000ÉCOLE normale\u00a0", "ŉ" * 40 + "abc",
        "o" * 300, "the quick brown fox", "ǅemal İstanbul", " ", "x"] * 40


@ckernels.jit("string(string)")
def strip(s):
    return s.strip()


@ckernels.jit("string(string)")
def rstrip_x(s):
    return s.rstrip("x ")


@ckernels.jit("string(string)")
def upper(s):
    return s.upper()


@ckernels.jit("string(string)")
def grow(s):
    return s.replace("o", "ooo")        # the result outgrows its first region


@ckernels.jit("string(string)")
def replace_then_lower(s):
    return s.replace("o", "0").lower()  # replace made the text: lower is copied


@ckernels.jit("string(string)")
def literals(s):
    return s.replace("ß", "ss").replace("", "|", 3)    # literals: constants of the code


@ckernels.jit("string(string, string)")
def pick(s, t):
    return t.strip() if len(s) > len(t) else s.lower()


@ckernels.jit("string(string)")
def raise_on_boom(s):
    t = s.strip()
    if t == "boom":
        raise ValueError("boom")
    return t


CASES = [(strip, str.strip), (rstrip_x, lambda s: s.rstrip("x ")), (upper, str.upper),
         (grow, lambda s: s.replace("o", "ooo")),
         (replace_then_lower, lambda s: s.replace("o", "0").lower()),
         (literals, lambda s: s.replace("ß", "ss").replace("", "|", 3))]


def _payload(values) -> int:
    return sum(len(v.encode()) for v in values)


@pytest.mark.parametrize("f, want", CASES, ids=[c[0].__name__ for c in CASES])
def test_results_match_cpython_and_the_arena_holds_the_payload(f, want):
    a = ckernels.array(ROWS)
    r = f(a)
    expect = [want(s) for s in ROWS]
    assert r.tolist() == expect
    # the region's unused end went back: the arena holds the returned text
    # (and at most one unused made text per element: none for these)
    assert arena_stats(r._a)[1] == _payload(expect)
    # strided input, one element at a time (the single entry point)
    assert f(a[::-3]).tolist() == [want(s) for s in ROWS[::-3]]
    assert [f(s) for s in ROWS[:10]] == expect[:10]


def test_two_string_arguments():
    a, b = ckernels.array(ROWS), ckernels.array(ROWS[::-1])
    want = [t.strip() if len(s) > len(t) else s.lower() for s, t in zip(ROWS, ROWS[::-1])]
    assert pick(a, b).tolist() == want


def test_results_outlive_the_input():
    """The input freed before the result is read: the result's text lives in
    its own arena (the memblock balance fixture checks nothing leaks)."""
    a = ckernels.array(ROWS)
    r1, r2 = strip(a), upper(a[::2])
    del a
    gc.collect()
    assert r1.tolist() == [s.strip() for s in ROWS]
    assert r2.tolist() == [s.upper() for s in ROWS[::2]]


def test_out_into_an_existing_array():
    out = ckernels.array(["keep"] * len(ROWS))
    view = out[:2]                      # shared: written into its arena, after "keep"
    strip(ckernels.array(ROWS), out=out)
    assert out.tolist() == [s.strip() for s in ROWS]
    assert view.tolist() == [s.strip() for s in ROWS[:2]]
    assert arena_stats(out._a)[1] >= _payload(s.strip() for s in ROWS)


def test_error_ends_the_region():
    rows = ["abc", " boom ", "def"]
    with pytest.raises(errors.CKernelError, match="boom"):
        raise_on_boom(ckernels.array(rows))
    # the next calls write where they should, and exactly
    r = strip(ckernels.array(ROWS))
    assert r.tolist() == [s.strip() for s in ROWS]
    assert arena_stats(r._a)[1] == _payload(s.strip() for s in ROWS)
    assert raise_on_boom(ckernels.array([" a ", "b"])).tolist() == ["a", "b"]


def test_threads(threads):
    rows = ROWS * 25
    a = ckernels.array(rows)
    assert upper(a).tolist() == [s.upper() for s in rows]
    assert grow(a).tolist() == [s.replace("o", "ooo") for s in rows]
