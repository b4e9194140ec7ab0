"""``s.split(None, maxsplit)`` and ``s.split(sep, maxsplit)`` where ``s`` is
a Numba ``str`` (Numba's string path: ``var * string`` results, output
parameters, ``numba.njit`` code), against CPython's ``str.split``.

Numba's own whitespace split dropped the rest after ``maxsplit`` pieces
(``"a b c".split(None, 1)`` gave ``['a']``) and ignored ``maxsplit=0``; with
a separator it took a negative ``maxsplit`` other than -1 as 0.  Compiled
once, at import."""

import numba
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels

TEXTS = ["", "a", " a ", "a b", "a b c", "  a  b c ", "x\ty\nz  ", " \u3000x\u2003y  z ",
         "naïve café ☕ 東京 𝄞", "a,b,,c", ",", "one two three four"]
MAXSPLITS = (-5, -1, 0, 1, 2, 5)


@ckernels.jit("var * string(string)")
def first_rest(s, out):          # an output parameter, iterated pieces (Numba str)
    for t in (s + "").split(None, 1):
        out.append(t)


@ckernels.jit("var * string(string)")
def first_rest_view(s, out):     # the same on the string view
    for t in s.split(None, 1):
        out.append(t)


@numba.njit(cache=False)
def nb_split_ws(s, m):
    out = []
    for t in s.split(None, m):
        out.append(t)
    return out


@numba.njit(cache=False)
def nb_split_sep(s, sep, m):
    return s.split(sep, m)


@numba.njit(cache=False)
def nb_split_all(s):
    return s.split()


def test_output_parameter_split_maxsplit_one():
    a = np.array(TEXTS, dtype=np.dtypes.StringDType())
    want = [s.split(None, 1) for s in TEXTS]
    assert first_rest(a).tolist() == want
    assert first_rest_view(a).tolist() == want


def test_numba_str_split_against_cpython():
    for s in TEXTS:
        assert nb_split_all(s) == s.split()
        for m in MAXSPLITS:
            assert nb_split_ws(s, m) == s.split(None, m), (s, m)
            for sep in (" ", ",", "ab"):
                assert nb_split_sep(s, sep, m) == s.split(sep, m), (s, sep, m)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(" \t\n\u3000\u2003\x1caé東😀,b"), max_size=12),
       st.integers(-3, 4))
def test_split_hypothesis(s, m):
    assert nb_split_ws(s, m) == s.split(None, m)
    assert nb_split_sep(s, ",", m) == s.split(",", m)
