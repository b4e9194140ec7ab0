"""Null-aware string signatures (``?string``) read their arguments as UTF-8
views, in place (``jit/cpu_codegen.py`` ``view_arg_types``), where they
used to be decoded into Numba ``str`` per element; a string literal unifies
with a view (``return "n/a" if ... else s.strip()``, a constant of the code).
The null-aware wrapper (``src/lib/jit/jit_option.c``) reads each bitmap by
its first bit and bit step.  CPython is the oracle, over pyarrow columns
sliced at every bit offset, strided NumPy ``StringDType`` arrays and several
null-aware arguments."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import ckernels

WORDS = ["Ana", "  bob ", "Émile", "zoë  ", "李 小龙", "", "   ", "o'neil", "ǅemal", "x" * 40]


@ckernels.jit("?string(?string)")
def clean(s):
    if s is None:
        return "unknown"
    t = s.strip()
    return t.title() if t else None


@ckernels.jit("?string(?string)")
def fallback(s):
    if s is None:
        return "n/a — ø"        # a non-ASCII literal as a view of its UTF-8 bytes
    return s.strip()


@ckernels.jit("int64(?string)")
def length(s):
    return -1 if s is None else len(s)


@ckernels.jit("?string(?string, ?string)")
def pick(a, b):
    if a is None:
        return b
    if b is None:
        return a.upper()
    return a if len(a) >= len(b) else b.lower()


@ckernels.jit("string(string)")
def literal_or_view(s):
    return "∅" if len(s.strip()) == 0 else s.strip()


def py_clean(s):
    if s is None:
        return "unknown"
    t = s.strip()
    return t.title() if t else None


def py_pick(a, b):
    if a is None:
        return b
    if b is None:
        return a.upper()
    return a if len(a) >= len(b) else b.lower()


def column(n, seed, null_every=3):
    rng = np.random.default_rng(seed)
    vals = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
    return [None if i % null_every == 1 else v for i, v in enumerate(vals)]


def tolist(r):
    return r.to_pylist() if isinstance(r, pa.Array) else ckernels.asarray(r).tolist()


@pytest.mark.parametrize("offset", [0, 1, 5, 8, 13])
def test_views_over_pyarrow_at_every_bit_offset(offset):
    vals = column(200, offset)
    arr = pa.array(vals)[offset:]
    vals = vals[offset:]
    assert tolist(clean(arr)) == [py_clean(v) for v in vals]
    assert tolist(fallback(arr)) == ["n/a — ø" if v is None else v.strip() for v in vals]
    assert tolist(length(arr)) == [-1 if v is None else len(v) for v in vals]


def test_two_null_aware_arguments_with_different_offsets():
    a, b = column(160, 1, 4), column(160, 2, 5)
    pa_a, pa_b = pa.array(a)[3:153], pa.array(b)[7:157]
    want = [py_pick(x, y) for x, y in zip(a[3:153], b[7:157])]
    assert tolist(pick(pa_a, pa_b)) == want


def test_a_shape_mismatch_is_not_blamed_on_the_nulls():
    from ckernels.errors import CKValueError
    a, b = pa.array(column(20, 1)), pa.array(column(17, 2))
    with pytest.raises(CKValueError, match="broadcast"):
        pick(a, b)


def test_strided_stringdtype_with_nulls():
    vals = column(101, 3)
    arr = np.array(vals, dtype=np.dtypes.StringDType(na_object=None))[::3]
    got = clean(arr)
    assert [None if x is None else str(x) for x in got.tolist()] == \
        [py_clean(v) for v in vals[::3]]


def test_many_rows_free_the_scratch_arena():
    # title() writes temporaries into the thread's scratch arena: bounded per
    # element and freed at the end of the call, where the wrapper used to
    # keep every row's (the memblock balance fixture checks the end)
    vals = column(30_000, 4)
    assert tolist(clean(pa.array(vals))) == [py_clean(v) for v in vals]


def test_the_functions_read_views():
    from numba.core import types
    from ckernels.jit.string_views import is_view
    clean(pa.array(["a", None]))
    fallback(pa.array(["a", None]))
    for f in (clean, fallback):
        assert any(isinstance(t, types.Optional) and is_view(t.type)
                   for sig in f.dispatcher.signatures for t in sig), f.dispatcher.signatures


def test_literal_unifies_with_a_view():
    vals = ["  a ", "", "   ", "é"]
    assert ckernels.asarray(literal_or_view(np.array(vals, dtype=np.dtypes.StringDType()))
                            ).tolist() == ["a", "∅", "∅", "é"]


# Python's semantics of a `?string` argument that is a view or None, case by
# case against CPython (Numba's generic rules would answer some of these
# wrongly for a view: `Optional == "x"` False, `if s:` raising on None)
SEM_DATA = ["", "a", None, "drop", "B c"]


def _sem(f, sig="?string(?string)"):
    return ckernels.jit(sig)(f), f


def s_truth(s):
    return "t" if s else "f"


def s_not(s):
    return "t" if not s else "f"


def s_in(s):
    return "in" if s in ("a", "drop") else "out"


def s_or(s):
    return s or "x"


def s_eq_none(s):
    return "n" if s == None else "v"    # noqa: E711 - the operator under test


def s_index(s):
    return s[0] if s else None


def s_rebind(s):
    t = s if s is not None else "dflt"
    return t.upper()


def b_eq(s):
    return s == "drop"


def b_ne(s):
    return s != "a"


def b_req(s):
    return "a" == s


SEMANTICS = [(f, "?string(?string)") for f in (s_truth, s_not, s_in, s_or, s_eq_none,
                                                 s_index, s_rebind)] + \
    [(f, "bool(?string)") for f in (b_eq, b_ne, b_req)]


@pytest.mark.parametrize("f,sig", SEMANTICS, ids=[f.__name__ for f, _ in SEMANTICS])
def test_python_semantics_of_optional_views(f, sig):
    k = ckernels.jit(sig)(f)
    assert tolist(k(pa.array(SEM_DATA))) == [f(v) for v in SEM_DATA]


@ckernels.jit("bool(?string, ?string)")
def both_eq(a, b):
    return a == b


@ckernels.jit("bool(?string, string)")
def less(a, b):
    return a < b


def test_comparisons_between_optional_views():
    a, b = ["a", None, None, "b"], ["a", None, "c", None]
    assert tolist(both_eq(pa.array(a), pa.array(b))) == [x == y for x, y in zip(a, b)]
    assert tolist(less(pa.array(["a", "c"]), pa.array(["b", "b"]))) == [True, False]
    with pytest.raises(ckernels.errors.NotSupportedError, match="not supported between"):
        less(pa.array(["a", None]), pa.array(["b", "b"]))


def test_a_literal_without_utf8_keeps_the_str_path():
    # a lone surrogate has no UTF-8 bytes: it does not unify with a view (the
    # function takes Numba str), where a view of it would fail to compile
    @ckernels.jit("bool(string)")
    def one_char(s):
        t = "\ud800" if len(s) == 0 else s.strip()
        return len(t) == 1

    got = one_char(np.array(["", " a ", "bc"], dtype=np.dtypes.StringDType()))
    assert got.tolist() == [True, True, False]
