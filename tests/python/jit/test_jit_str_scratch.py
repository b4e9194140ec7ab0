"""The per-element bookkeeping of jitted functions over string views
(numba_ext/jit/string_views.py, src/lib/strings/utf8_arena.c): the scratch
arena holding the methods' temporaries is freed between elements once past
1 MiB (a thread counter the loops bump, checked by the next element's first
use), elements reading views into a number are inlined into the loops, and
view arguments are not re-validated per element.  CPython's str is the
oracle; each function is compiled once."""
from __future__ import annotations

import pytest

import ckernels
from ckernels import errors


@ckernels.jit("string(string)")
def shout(s):
    return " ".join(s.split()).upper()


@ckernels.jit("int64(string)")
def upper_len(s):
    return len(s.upper()) + len(s.split())


@ckernels.jit("int64(string)")
def fifth_word(s):
    return len(s.split()[5])


@ckernels.jit("bool(string)")
def starts(s):
    return s.startswith("é") or s.endswith("z") or s.find("q") == 2 or s.count("ab") > 1


def _rows():
    # 40 rows of about 100 KB: several MiB of temporaries in one call, so the
    # scratch arena is freed between elements (> 1 MiB) while results are kept
    return [(f"w{i}  é ß " * (9000 + i))[: 100_000 - i] for i in range(40)]


def test_temporaries_freed_between_elements_keep_every_result():
    rows = _rows()
    a = ckernels.array(rows)
    assert shout(a).tolist() == [" ".join(s.split()).upper() for s in rows]
    assert upper_len(a).tolist() == [len(s.upper()) + len(s.split()) for s in rows]
    # again: the arena state left by the first call is not stale
    assert shout(a[::-1]).tolist() == [" ".join(s.split()).upper() for s in rows[::-1]]


def test_error_in_an_inlined_element_and_the_next_call():
    rows = ["a b c d e ffff", "a b c d e f", "a b", "a b c d e gg"]
    with pytest.raises(errors.CKernelError, match="index out of range") as exc:
        fifth_word(ckernels.array(rows))
    assert isinstance(exc.value, IndexError)
    ok = [r for r in rows if len(r.split()) > 5] * 1000
    assert fifth_word(ckernels.array(ok)).tolist() == [len(s.split()[5]) for s in ok]


def test_whole_text_search_paths():
    rows = ["", "z", "éa", "ab", "abab", "xyqz", "ééq", "aéq", "é", "abcab z", "q"]
    got = starts(ckernels.array(rows)).tolist()
    want = [s.startswith("é") or s.endswith("z") or s.find("q") == 2 or s.count("ab") > 1
            for s in rows]
    assert got == want


@ckernels.jit("var * string(var * string)")
def upper_rows(r):
    return [s.upper() for s in r if len(s.split()) > 0]


def test_dims_entry_points_free_the_scratch_arena_when_they_return():
    # a dims signature runs through the C core kernel's strided entry point,
    # which frees the thread's scratch arena when it returns, as the plain
    # entry points do: nothing of the call outlives it but its result (the
    # arena was kept until some other string function freed it, which the
    # memblock balance of an unrelated later test counted as -1)
    import gc
    rows = ckernels.array([["a b", "é c"], [], ["x"]])
    assert upper_rows(rows).tolist() == [["A B", "É C"], [], ["X"]]
    assert shout(ckernels.array(["q  r"])).tolist() == ["Q R"]   # a plain entry: freed
    gc.collect()
    before = ckernels.live_count()
    res = upper_rows(rows)
    assert res.tolist() == [["A B", "É C"], [], ["X"]]
    del res
    gc.collect()
    assert ckernels.live_count() == before
