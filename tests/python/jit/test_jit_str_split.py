"""``s.split(sep, maxsplit)`` of a jitted string view is not a list
(numba_ext/_numba/str_split.py, ``ck_str_split_count/next/item`` in
src/lib/strings/utf8_split.c): ``len`` counts in one scan, iteration steps
from piece to piece, ``x[i]`` steps to piece ``i``, ``join``  makes the
pieces.  CPython's ``str.split`` is the oracle;
the functions are compiled once, at import."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ckernels
from ckernels._numba.stringtype import CkStringType
from ckernels.jit.string_views import uses_scratch

# ASCII words and every kind of whitespace str.isspace knows, in runs, with
# non-ASCII letters around them (the 8-byte ASCII steps and the byte steps)
SPACES = " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
TEXT = st.one_of(
    st.text(alphabet="ab,|xyz0" + SPACES + "é東😀\u2003", max_size=40),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=16))
SEPS = st.sampled_from([",", "|", "ab", " ", "é", "東😀", "\u2003", "xyzw"])
SETTINGS = settings(max_examples=40, deadline=None)


def _strings(values):
    return ckernels.array(list(values), dtype="string")


@ckernels.jit("int64(string, string, int64)")
def count(s, sep, k):
    if k == 0:
        return len(s.split())
    elif k == 1:
        return len(s.split(sep))
    elif k == 2:
        return len(s.split(None, 1))
    elif k == 3:
        return len(s.split(sep, 2))
    elif k == 4:
        return len(s.split(maxsplit=0))
    return len(s.split(","))


def py_count(s, sep, k):
    return len([s.split(), s.split(sep), s.split(None, 1), s.split(sep, 2),
                s.split(maxsplit=0), s.split(",")][k])


def _split(s, sep, k):
    if k == 0:
        return s.split()
    elif k == 1:
        return s.split(sep)
    elif k == 2:
        return s.split(None, 1)
    elif k == 3:
        return s.split(sep, 2)
    elif k == 4:
        return s.split("東😀")
    return s.split(sep, 0)


@ckernels.jit("int64(string, string, int64)")
def steps(s, sep, k):
    # the pieces iterated: how many
    n = 0
    if k == 0:
        for w in s.split():
            n += 1
    elif k == 1:
        for w in s.split(sep):
            n += 1
    elif k == 2:
        for w in s.split(None, 1):
            n += 1
    elif k == 3:
        for w in s.split(sep, 2):
            n += 1
    elif k == 4:
        for w in s.split("東😀"):
            n += 1
    else:
        for w in s.split(sep, 0):
            n += 1
    return n


@ckernels.jit("string(string, string, int64, int64)")
def nth(s, sep, k, i):
    # piece i as iteration reaches it ("" past the last)
    j = 0
    if k == 0:
        for w in s.split():
            if j == i:
                return w
            j += 1
    elif k == 1:
        for w in s.split(sep):
            if j == i:
                return w
            j += 1
    elif k == 2:
        for w in s.split(None, 1):
            if j == i:
                return w
            j += 1
    elif k == 3:
        for w in s.split(sep, 2):
            if j == i:
                return w
            j += 1
    elif k == 4:
        for w in s.split("東😀"):
            if j == i:
                return w
            j += 1
    else:
        for w in s.split(sep, 0):
            if j == i:
                return w
            j += 1
    return s[:0]


def _iterated(f_steps, f_nth, a, b, k):
    """The pieces of each row, as the jitted iteration sees them."""
    counts = f_steps(a, b, k).tolist()
    top = max(counts, default=0)
    cols = [f_nth(a, b, k, i).tolist() for i in range(top)]
    return [[cols[i][r] for i in range(c)] for r, c in enumerate(counts)]


@ckernels.jit("string(string, string, int64)")
def joined(s, sep, k):
    if k == 0:
        return "|".join(s.split())
    elif k == 1:
        return sep.join(s.split(sep))
    return "+".join(s.split(None, 2))


@ckernels.jit("string(string, string, int64)")
def item(s, sep, i):
    return s.split(sep)[i]


@ckernels.jit("string(string, int64)")
def word(s, i):
    return s.split()[i]


@ckernels.jit("int64(string, int64)")
def numba_str_sep(s, k):
    sep = "," * k            # a Numba str made at run time: copied, so it outlives
    n = 0                    # the temporary while the pieces are stepped through
    for w in s.split(sep + ";"):
        n = n * 7 + len(w)
    return n


def _py_numba_str_sep(s, k):
    n = 0
    for w in s.split("," * k + ";"):
        n = n * 7 + len(w)
    return n


@SETTINGS
@given(st.lists(st.tuples(TEXT, SEPS), min_size=1, max_size=6))
def test_len_and_steps_match_cpython(pairs):
    a = _strings(s for s, _ in pairs)
    b = _strings(sep for _, sep in pairs)
    for k in range(6):
        assert count(a, b, k).tolist() == [py_count(s, sep, k) for s, sep in pairs], k
        assert _iterated(steps, nth, a, b, k) == [_split(s, sep, k) for s, sep in pairs], k
    for k in range(3):
        assert joined(a, b, k).tolist() == [
            ["|".join(s.split()), sep.join(s.split(sep)), "+".join(s.split(None, 2))][k]
            for s, sep in pairs], k


@SETTINGS
@given(TEXT, SEPS, st.integers(-4, 4))
def test_items_match_cpython(s, sep, i):
    for f, args, pieces in ((item, (_strings([s]), _strings([sep]), i), s.split(sep)),
                            (word, (_strings([s]), i), s.split())):
        if -len(pieces) <= i < len(pieces):
            assert f(*args).tolist() == [pieces[i]]
        else:
            with pytest.raises(IndexError, match="list index out of range"):
                f(*args)


def test_word_counts_at_the_8_byte_steps():
    # words across 8-byte boundaries, runs of ASCII whitespace of every kind,
    # non-ASCII whitespace and letters right before and after a boundary
    rows = ["a" * k + " " + "b" * j for k in range(18) for j in range(3)]
    rows += ["x\x1c\x1fy\t\x0bz" * 5, "abcdefg\u3000hijklmn\xa0o", "1234567é 89",
             "\x1f" * 9 + "w", "w" + "\x85" * 7 + "w", " " * 16, "\u2028" * 4 + "q " * 9,
             "(!/09:@[`{~" * 4, "\x08\x0e\x1b!" * 6]
    a = _strings(rows)
    b = _strings([","] * len(rows))
    assert count(a, b, 0).tolist() == [len(s.split()) for s in rows]
    assert _iterated(steps, nth, a, b, 0) == [s.split() for s in rows]


def test_separators_that_are_numba_strings_and_literals():
    rows = ["a,;b;;c", ";", "", "x,,;y,;"]
    for k in range(3):
        assert numba_str_sep(_strings(rows), k).tolist() == [
            _py_numba_str_sep(s, k) for s in rows]
    assert _iterated(steps, nth, _strings(["a東😀b東😀", "東😀"]), _strings([","] * 2), 4) == [
        ["a", "b", ""], ["", ""]]


def test_an_empty_separator_is_a_value_error():
    with pytest.raises(ValueError, match="empty separator"):
        count(_strings(["a b"]), _strings([""]), 1)
    with pytest.raises(ValueError, match="empty separator"):
        steps(_strings(["a b"]), _strings([""]), 1)


def test_the_functions_take_views():
    for f in (count, steps, nth, joined, item, word, numba_str_sep):
        assert any(isinstance(t, CkStringType) for sig in f.dispatcher.overloads
                   for t in sig), f.__name__


def test_counting_and_stepping_allocate_nothing():
    # the split value is its arguments: no span array, so the code asks for no
    # arena (the entry point then keeps no per-element scratch bookkeeping)
    for f in (count, steps):         # (nth's s[:0] asks for one)
        for cres in f.dispatcher.overloads.values():
            assert not uses_scratch(cres.library), f.__name__
    for cres in joined.dispatcher.overloads.values():
        assert uses_scratch(cres.library)


def test_numpy_operands():
    x = np.array(["a b", " c  d e "], dtype=np.dtypes.StringDType())
    assert count(x, np.array([","] * 2, dtype=np.dtypes.StringDType()), 0).tolist() == [2, 3]
