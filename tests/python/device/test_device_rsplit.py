"""``s.rsplit([sep[, maxsplit]])`` and ``s.splitlines([keepends])`` on devices:
lazy lists of views of the argument, as ``split`` (``ck_strlist_t``), read by
``len``, indexing, ``for`` and ``join`` and returned as ``var * string``
results.  An ``rsplit`` with a ``maxsplit`` keeps its remainder whole at the
left; a separator that overlaps itself (``"aa"``) is matched from the right,
as CPython does.  Checked against CPython (and the CPU jit where its Numba
``str`` path agrees) on the device contexts and as CUDA C through NVRTC +
ptxas + the host shim."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("int64(string, string, int64)")
def rpiece_hash(s, sep, k):
    h = len(s.rsplit(sep, k)) * 1009 + len(s.rsplit(None, k)) * 101 + len(s.splitlines())
    for w in s.rsplit(sep, k):
        h = (h * 31 + len(w) + 1) % 1000003
    parts = s.rsplit()
    if len(parts) > 0:
        h = h * 7 + len(parts[0]) + 3 * len(parts[-1])
    lines = s.splitlines(True)
    for i in range(len(lines)):
        h = (h * 17 + len(lines[i])) % 1000003
    for w in s.rsplit("aa", k):
        h = (h * 13 + len(w)) % 1000003
    for w in s.rsplit(None, k):
        h = (h * 11 + len(w)) % 1000003
    return h


@ckernels.jit("string(string, string, int64)")
def rsplit_text(s, sep, k):
    # two joins: each costs the CPU jit seconds of compiling
    return "_".join(s.rsplit(sep, k)) + "|" + "~".join(s.splitlines(True))


# one function for the returned results: a CPU compile of a list result is costly
@ckernels.jit("var * string(string, string, int64, int64)")
def pieces_of(s, sep, k, mode):
    if mode == 0:
        return s.rsplit(sep, k)
    if mode == 1:
        return s.rsplit(None, k)
    if mode == 2:
        return s.splitlines()
    return s.splitlines(True)


WS = st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d",
                      "\x1e", "\x85", "\xa0", "\u2028", "\u2029", "\u3000"])
WORD = st.text(alphabet="abé€𝄞,;a", max_size=6)
SENTENCE = st.lists(st.one_of(WORD, WS), max_size=12).map("".join)
TEXT = SENTENCE | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                          max_size=20) | st.sampled_from(
    ["", " ", "aaa", "aaaa" * 20, " a  b ", "é,é,,", "a\r\nb\n\nc\r", "\n", "abab" * 30])
SEP = st.sampled_from([",", "é", "ab", "aa", "aba", ";,", " ", "€𝄞", "\n"])
K = st.integers(-2, 4)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _host(f, *cols):
    import numpy as np
    return np.asarray(f(*[ckernels.array(c, dtype="string") if isinstance(c[0], str) else
                          np.asarray(c, np.int64) for c in cols])).tolist()


def _cols(rows):
    return [list(c) for c in zip(*rows)]


@SETTINGS
@given(st.lists(st.tuples(TEXT, SEP, K), min_size=1, max_size=30))
def test_rsplit_and_splitlines_counts_and_pieces_match_python(ctx, rows):
    import numpy as np
    s, sep, k = _cols(rows)
    want = [rpiece_hash.py_func(*r) for r in rows]
    got = rpiece_hash(ctx.array(s), ctx.array(sep), ctx.array(np.array(k, np.int64)))
    assert got.tolist() == want


@SETTINGS
@given(st.lists(st.tuples(TEXT, SEP, K), min_size=1, max_size=30))
def test_rsplit_and_splitlines_joined_match_python(ctx, rows):
    import numpy as np
    s, sep, k = _cols(rows)
    got = rsplit_text(ctx.array(s), ctx.array(sep), ctx.array(np.array(k, np.int64)))
    assert got.tolist() == [rsplit_text.py_func(*r) for r in rows]


@SETTINGS
@given(st.lists(st.tuples(TEXT, SEP, K), min_size=1, max_size=30))
def test_rsplit_and_splitlines_results_are_rows_of_strings(ctx, rows):
    import numpy as np
    s, sep, k = _cols(rows)
    ds, dsep, dk = ctx.array(s), ctx.array(sep), ctx.array(np.array(k, np.int64))
    got = pieces_of(ds, dsep, dk, 0)
    assert str(got.type) == f"{len(s)} * var * string"
    assert got.tolist() == [x.rsplit(y, n) for x, y, n in rows]
    assert pieces_of(ds, dsep, dk, 1).tolist() == [x.rsplit(None, n) for x, n in zip(s, k)]
    assert pieces_of(ds, dsep, dk, 2).tolist() == [x.splitlines() for x in s]
    assert pieces_of(ds, dsep, dk, 3).tolist() == [x.splitlines(True) for x in s]


def test_documented_cases(ctx):
    import numpy as np
    rows = [("aaa", "aa", -1), ("a,b,c", ",", 1), ("  a b  c  ", " ", 0), ("", ",", 2),
            ("abc", ",", 0), ("aaaaa", "aa", 1), ("x\r\ny\rz\n", "\n", -1)]
    s, sep, k = _cols(rows)
    ds, dsep = ctx.array(s), ctx.array(sep)
    got = pieces_of(ds, dsep, ctx.array(np.array(k, np.int64)), 0)
    assert got.tolist()[:3] == [["a", ""], ["a,b", "c"], ["  a b  c  "]]
    assert got.tolist() == [x.rsplit(y, n) for x, y, n in rows]
    w = ctx.array(["  a b  c  ", "   "])
    assert pieces_of(w, w, 1, 1).tolist() == [["  a b", "c"], []]
    t = ctx.array(["a\r\nb\u2028c\x85", ""])
    assert pieces_of(t, t, 0, 2).tolist() == [["a", "b", "c"], []]
    assert pieces_of(t, t, 0, 3).tolist() == [["a\r\n", "b\u2028", "c\x85"], []]


def test_the_cpu_jit_agrees_on_plain_cases():
    # the CPU jit's Numba str path, on inputs where it follows CPython
    s = ["a,b,c", "x y  z", "a\nb\r\nc", ""]
    assert _host(rpiece_hash, s, [",", ",", ",", ","], [1, -1, 0, 2]) == \
        [rpiece_hash.py_func(x, ",", k) for x, k in zip(s, [1, -1, 0, 2])]


def test_rsplit_and_splitlines_as_cuda_c_match_python(tmp_path):
    import numpy as np
    from cuda_string_shim import build
    run = build(tmp_path, {"ck_rsplit": (rsplit_text, 7)})
    s = ["", " a  b ", "é,é,,", "aaaa" * 5, "x\u3000y\x1cz", "a\r\nb\n\nc\r", " ", "aaa"]
    sep = [",", "é", ",", "aa", " ", "\n", ",", "aa"]
    k = np.array([-1, 1, 2, 1, 0, 3, 1, -1], np.int64)
    assert run("ck_rsplit", [s, sep, k]) == \
        [rsplit_text.py_func(*r) for r in zip(s, sep, k.tolist())]
