"""String results of jitted functions stored through the result region
(src/lib/strings/utf8_arena.c, numba_ext/jit/string_views.py; strings built
in one pass: numba_ext/jit/string_elements.py, ``ck_str_region_reserve``): one
allocation per call in the destination arena, sized from the bytes of the
string arguments, its front handed out inline by the entry point's store
and by the first case mapping or ``replace`` of each element, its unused end
given back when the call ends.  CPython's str is the oracle; each function
is compiled once (module level)."""
from __future__ import annotations

import gc

import numpy as np
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


# strings built in one pass (f-strings, + chains, a str result): written at
# the region's front too
@ckernels.jit("string(int64)")
def label(i):
    return f"item-{i}"


@ckernels.jit("string(string)")
def bracket_lower(s):
    return f"<{s.lower()}>"             # the made text is read, then moved over


@ckernels.jit("string(string)")
def lower_bar_upper(s):
    return s.lower() + "|" + s.upper()  # the first mapping made, the second not


@ckernels.jit("string(string, int64)")
def built_or_raise(s, i):
    if i == 7:
        raise ValueError("seven")
    return f"{s.strip()}#{i}"


@ckernels.jit("string(string)")
def lower_head(s):
    return f"<{s.lower()[:2]}>"         # shorter than the made text it reads


BUILT = [(bracket_lower, lambda s: f"<{s.lower()}>"),
         (lower_bar_upper, lambda s: s.lower() + "|" + s.upper()),
         (lower_head, lambda s: f"<{s.lower()[:2]}>")]


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


@pytest.mark.parametrize("f, want", BUILT, ids=[c[0].__name__ for c in BUILT])
def test_built_strings_through_the_region(f, want):
    """A built string reads the element's made text (in the region), then
    takes its place: the arena holds the returned text, and a made text only
    where the region filled up under it (it stays in the region closed)."""
    a = ckernels.array(ROWS)
    expect = [want(s) for s in ROWS]
    r = f(a)
    assert r.tolist() == expect
    extra = arena_stats(r._a)[1] - _payload(expect)
    assert 0 <= extra <= 2 * max(len(s.encode()) for s in ROWS)
    assert f(a[::-3]).tolist() == [want(s) for s in ROWS[::-3]]
    assert [f(s) for s in ROWS[:10]] == expect[:10]


def test_built_numbers_fill_many_regions():
    """Longer texts than the hint guesses: new regions open as they fill,
    every unused end goes back."""
    x = ckernels.asarray(np.concatenate([np.arange(-3000, 3000),
                                         np.iinfo(np.int64).max - np.arange(5000)]))
    expect = [f"item-{v}" for v in x.tolist()]
    r = label(x)
    assert r.tolist() == expect
    assert arena_stats(r._a)[1] == _payload(expect)
    assert label(x[::-7]).tolist() == expect[::-7]
    assert label(np.int64(-12)) == "item--12"
    out = ckernels.array(["keep"] * len(x))
    label(x, out=out)
    assert out.tolist() == expect


def test_built_error_ends_the_region():
    a = ckernels.array([" a ", "b ", " c"] * 5)
    with pytest.raises(errors.CKernelError, match="seven"):
        built_or_raise(a, np.arange(15))
    r = built_or_raise(a, np.arange(15) + 8)
    assert r.tolist() == [f"{s.strip()}#{i + 8}" for i, s in enumerate([" a ", "b ", " c"] * 5)]
    r = label(ckernels.arange(100))
    assert arena_stats(r._a)[1] == _payload(f"item-{i}" for i in range(100))


def test_built_strings_on_threads(threads):
    rows = ROWS * 25
    a = ckernels.array(rows)
    assert bracket_lower(a).tolist() == [f"<{s.lower()}>" for s in rows]
    x = ckernels.arange(200_000)
    r = label(x)
    assert r.tolist() == [f"item-{i}" for i in range(200_000)]
    assert arena_stats(r._a)[1] == _payload(f"item-{i}" for i in range(200_000))
