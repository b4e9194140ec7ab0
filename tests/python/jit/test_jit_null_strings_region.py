"""``?string`` results of null-aware functions taking string views go
through the call's result region (numba_ext/jit/cpu_element.py
``region_result``, string_elements.py ``store_string_region``): the first
case mapping of an element is written into the destination's region and
kept there, any other view is copied to the region's front, a Numba
``str`` is encoded into the region's arena; runs of valid slots and slots
holding a null alone (a NULL source: no size hint from it) each open the
region.  CPython is the oracle, on pyarrow arrays with nulls at every
position of short and long texts."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ckernels


@ckernels.jit("?string(?string)")
def title_or_unknown(s):
    if s is None:
        return "unknown"
    return s.title()


@ckernels.jit("?string(?string)")
def upper_or_null(s):
    if s is None or len(s) == 2:
        return None             # a null result after a case mapping or not
    t = s.upper()
    if len(t) > 6:
        return t[1:]            # a view into the made text: copied
    return t


@ckernels.jit("?string(?string)")
def length_text(s):
    if s is None:
        return None
    return str(len(s))          # a Numba str through the region's arena


@ckernels.jit("?string(?string, ?string)")
def lower_pair(a, b):
    if a is None:
        return b
    if b is None:
        return a.lower()
    return b.lower()


def _oracle_title(s):
    return "unknown" if s is None else s.title()


def _oracle_upper(s):
    if s is None or len(s) == 2:
        return None
    t = s.upper()
    return t[1:] if len(t) > 6 else t


def _oracle_len(s):
    return None if s is None else str(len(s))


def _oracle_pair(a, b):
    if a is None:
        return b
    return a.lower() if b is None else b.lower()


WORDS = ["Ana", "bob", "Émile", "zoë", "李", "ΣΟΦΙΑΣ", "straße", "x", "", "ŉ ǅ İ",
         "the quick brown fox " * 20, "Ω" * 300]


def _rows(n, null_every, shift):
    return [None if (i + shift) % null_every == 0 else WORDS[i % len(WORDS)] for i in range(n)]


CASES = [(f, o) for f, o in ((title_or_unknown, _oracle_title), (upper_or_null, _oracle_upper),
                             (length_text, _oracle_len))]


@pytest.mark.parametrize("f, oracle", CASES, ids=["title", "upper_or_null", "str_len"])
def test_one_argument(f, oracle):
    for null_every, shift in ((2, 0), (3, 1), (7, 3), (50, 0), (10**9, 1)):
        rows = _rows(600, null_every, shift)
        arr = pa.array(rows, type=pa.string())
        got = f(arr).to_pylist()
        assert got == [oracle(s) for s in rows], (null_every, shift)
        got = f(ckernels.asarray(arr)).tolist()
        assert got == [oracle(s) for s in rows], (null_every, shift)


def test_two_arguments_and_slices():
    a = _rows(500, 3, 0)
    b = _rows(500, 4, 1)[::-1]
    got = lower_pair(pa.array(a), pa.array(b)).to_pylist()
    assert got == [_oracle_pair(x, y) for x, y in zip(a, b)]
    # sliced at odd bit offsets
    pa_a, pa_b = pa.array(a).slice(3, 400), pa.array(b).slice(5, 400)
    got = lower_pair(pa_a, pa_b).to_pylist()
    assert got == [_oracle_pair(x, y) for x, y in zip(a[3:403], b[5:405])]
