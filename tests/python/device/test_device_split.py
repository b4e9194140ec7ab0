"""``s.split([sep[, maxsplit]])`` and ``sep.join(...)`` on devices: the pieces
of a split are views of the argument (a lazy ``ck_strlist_t``: nothing is
allocated), read by ``len``, indexing and ``for``, and joined into string
results by the sizing and writing passes.  Checked against CPython (and the CPU
jit where its Numba ``str`` path agrees) on PoCL and as CUDA C through NVRTC +
ptxas + the host shim."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.errors import NotSupportedError


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("int64(string)")
def nwords(s):
    return len(s.split())


@ckernels.jit("int64(string, string)")
def piece_hash(s, sep):
    h = 0
    for w in s.split(sep):
        h = (h * 31 + len(w) + 1) % 1000003
    parts = s.split()
    if len(parts) > 0:
        h = h * 7 + len(parts[0]) + 3 * len(parts[-1])
    return h


@ckernels.jit("string(string, string)")
def split_text(s, sep):
    return (str(len(s.split())) + "|" + "_".join(s.split()) + "|" + sep.join(s.split(sep, 2)) +
            "|" + "·".join(s.split(None, 1)) + "|" + "+".join(s.split("ab")) + "|" +
            "/".join(s.split(sep)))


@ckernels.jit("var * string(string, string)")
def pieces(s, sep):
    return s.split(sep)


@ckernels.jit("var * string(string)")
def words(s):
    return s.split()


WS = st.sampled_from([" ", "  ", "\t", "\n", "\x1c", "\x85", "\xa0", "\u2003", "\u3000"])
WORD = st.text(alphabet="abé€𝄞,;", max_size=6)
SENTENCE = st.lists(st.one_of(WORD, WS), max_size=12).map("".join)
TEXT = SENTENCE | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                          max_size=20) | st.sampled_from(["", " ", "ab" * 40, " a  b ", "é,é,,"])
SEP = st.sampled_from([",", "é", "ab", ";,", " ", "€𝄞"])
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _host(f, *cols):
    return np.asarray(f(*[ckernels.array(c, dtype="string") for c in cols])).tolist()


@SETTINGS
@given(st.lists(st.tuples(TEXT, SEP), min_size=1, max_size=30))
def test_split_counts_and_pieces_match_the_cpu_jit(ctx, pairs):
    s, sep = [p[0] for p in pairs], [p[1] for p in pairs]
    d, dsep = ctx.array(s), ctx.array(sep)
    assert nwords(d).tolist() == _host(nwords, s) == [len(x.split()) for x in s]
    assert piece_hash(d, dsep).tolist() == _host(piece_hash, s, sep) == \
        [piece_hash.py_func(x, y) for x, y in zip(s, sep)]


@SETTINGS
@given(st.lists(st.tuples(TEXT, SEP), min_size=1, max_size=30))
def test_split_join_results_match_python(ctx, pairs):
    # the oracle is CPython (Numba's str.split with a maxsplit differs on some inputs)
    s, sep = [p[0] for p in pairs], [p[1] for p in pairs]
    got = split_text(ctx.array(s), ctx.array(sep)).tolist()
    assert got == [split_text.py_func(x, y) for x, y in zip(s, sep)]


@SETTINGS
@given(st.lists(st.tuples(TEXT, SEP), min_size=1, max_size=30))
def test_split_results_are_rows_of_strings(ctx, pairs):
    # sizing (pieces and bytes per row) -> two scans -> writing: var * string on the device
    s, sep = [p[0] for p in pairs], [p[1] for p in pairs]
    got = pieces(ctx.array(s), ctx.array(sep))
    assert str(got.type) == f"{len(s)} * var * string"
    assert got.tolist() == [x.split(y) for x, y in zip(s, sep)]
    assert words(ctx.array(s)).tolist() == [x.split() for x in s]


def test_empty_separator_raises_as_on_the_cpu(ctx):
    with pytest.raises(ValueError, match="empty separator") as e:
        piece_hash(ctx.array(["a b", "c"]), ctx.array([",", ""]))
    assert "element 1" in str(e.value)
    with pytest.raises(ValueError, match="empty separator"):
        _host(piece_hash, ["c"], [""])


@ckernels.jit("int64(string)")
def long_sep(s):
    return len(s.split("a-separator-longer-than-16"))


def test_long_literal_separator_is_one_line(ctx):
    with pytest.raises(NotSupportedError) as e:
        long_sep(ctx.array(["a"]))
    msg = str(e.value)
    assert "\n" not in msg and "separator" in msg and __file__ in msg


def test_split_as_cuda_c_matches_python(tmp_path):
    from cuda_string_shim import build
    run = build(tmp_path, {"ck_split": (split_text, 6)})
    s = ["", " a  b ", "é,é,,", "ab" * 9, "x\u3000y\x1cz", "a,b;,c", " ", "€𝄞a€𝄞"]
    sep = [",", "é", ",", "ab", " ", ";,", ",", "€𝄞"]
    assert run("ck_split", [s, sep]) == [split_text.py_func(x, y) for x, y in zip(s, sep)]
