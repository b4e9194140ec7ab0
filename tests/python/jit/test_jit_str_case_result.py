"""Case mappings in jitted functions with a string result
(numba_ext/jit/string_views.py, src/lib/strings/utf8_arena.c): the entry
point makes its destination arena the thread's result arena, the first case
mapping of each element is written there and the store keeps it without a
copy; any other returned view is copied, and the result arena ends with the
call (also on an error).  CPython's str is the oracle; each function is
compiled once."""
from __future__ import annotations

import pytest

import ckernels
from ckernels import errors

ROWS = ["Hello World", "", "straße ΣΑΣ", "ÉCOLE normale", "ŉ" * 50 + "abc", "x" * 300,
        "the quick brown fox", "ǅemal İstanbul"] * 50


@ckernels.jit("string(string)")
def lower(s):
    return s.lower()


@ckernels.jit("string(string)")
def lower_then_title(s):
    return s.lower().title()


@ckernels.jit("string(string)")
def lowered_not_returned(s):
    t = s.lower()
    if len(t) > 12:
        return t[1:]        # a view into the mapping: copied
    return s                # the input: copied


@ckernels.jit("string(string)")
def swap_or_raise(s):
    t = s.swapcase()
    if t == "BOOM":
        raise ValueError("boom")
    return t


@ckernels.jit("string(string)")
def domain(e):
    return e[e.find("@") + 1:].lower()


CASES = [(lower, str.lower), (lower_then_title, lambda s: s.lower().title()),
         (lowered_not_returned, lambda s: s.lower()[1:] if len(s.lower()) > 12 else s),
         (swap_or_raise, str.swapcase),
         (domain, lambda e: e[e.find("@") + 1:].lower())]


@pytest.mark.parametrize("f, want", CASES, ids=[c[0].__name__ for c in CASES])
def test_results_match_cpython(f, want):
    a = ckernels.array(ROWS)
    assert f(a).tolist() == [want(s) for s in ROWS]
    # strided input and a second call: no state left from the first
    assert f(a[::-3]).tolist() == [want(s) for s in ROWS[::-3]]


def test_results_outlive_the_input_and_share_nothing():
    a = ckernels.array(ROWS)
    r1, r2 = lower(a), lower(a[::-1])
    del a
    assert r1.tolist() == [s.lower() for s in ROWS]
    assert r2.tolist() == [s.lower() for s in ROWS[::-1]]


def test_error_ends_the_result_arena():
    rows = ["abc", "boom", "def"]
    with pytest.raises(errors.CKernelError, match="boom"):
        swap_or_raise(ckernels.array(rows))
    # the next calls (jitted and not) write where they should
    assert lower(ckernels.array(ROWS)).tolist() == [s.lower() for s in ROWS]
    assert swap_or_raise(ckernels.array(["ab", "Cd"])).tolist() == ["AB", "cD"]


def test_out_argument_and_threads():
    rows = ROWS * 40
    a = ckernels.array(rows)
    out = ckernels.array([""] * len(rows))
    lower(a, out=out)
    assert out.tolist() == [s.lower() for s in rows]
    n = ckernels.get_num_threads()
    ckernels.set_num_threads(2)
    try:
        assert domain(a).tolist() == [e[e.find("@") + 1:].lower() for e in rows]
        assert lower_then_title(a).tolist() == [s.lower().title() for s in rows]
    finally:
        ckernels.set_num_threads(n)
