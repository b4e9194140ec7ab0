"""Converting Python values into arrays (issue 9, "Converting Python values").

Property-based tests (hypothesis) with NumPy as the oracle for regular data,
and the ragged -> var dims rule for ragged data; the hostile inputs that used
to overflow a heap buffer or exhaust the C stack run in a subprocess, so a
regression fails the test instead of killing pytest.
"""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ckernels
from ckernels import errors

BUILTINS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "complex64", "complex128"]
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def scalars(kind):
    return {"bool": st.booleans(),
            "int": st.integers(-2**63, 2**63 - 1),
            "float": st.floats(allow_nan=True, allow_infinity=True, width=64),
            "complex": st.complex_numbers(allow_nan=False, allow_infinity=False,
                                          max_magnitude=1e300)}[kind]


@st.composite
def regular_lists(draw):
    """Nested lists of one shape (0 to 3 dims, empty dims included) holding
    bools, ints, floats or complex numbers (mixed kinds promote)."""
    shape = draw(st.lists(st.integers(0, 3), min_size=0, max_size=3))
    kinds = draw(st.lists(st.sampled_from(["bool", "int", "float", "complex"]), min_size=1,
                          max_size=2))
    flat = draw(st.lists(st.one_of(*[scalars(k) for k in kinds]),
                         min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    return np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]


def ragged_lists():
    return st.lists(st.lists(st.integers(-1000, 1000), max_size=4), min_size=1, max_size=5)


@SETTINGS
@given(regular_lists())
def test_regular_lists_match_numpy(value):
    want = np.array(value)
    if want.dtype == object:   # ints past uint64: NumPy gives object, we refuse
        with pytest.raises((OverflowError, TypeError, ValueError)):
            ckernels.array(value)
        return
    a = ckernels.array(value)
    assert a.shape == want.shape and a.dtype == want.dtype, (value, a.type)
    np.testing.assert_array_equal(a.to_numpy(), want)
    np.testing.assert_array_equal(np.array(a.tolist(), dtype=want.dtype), want)
    # round trip through tolist
    b = ckernels.array(a.tolist(), dtype=a.dtype)
    np.testing.assert_array_equal(b.to_numpy(), want)


@SETTINGS
@given(ragged_lists())
def test_ragged_lists_become_var_dims(rows):
    a = ckernels.array(rows)
    lens = {len(r) for r in rows}
    if len(lens) == 1:
        np.testing.assert_array_equal(a.to_numpy(), np.array(rows, dtype=np.int64)
                                      .reshape(len(rows), lens.pop()))
    else:
        assert str(a.type) == "strided * var * int64"
        assert a.shape == (len(rows), -1) and a.size == sum(map(len, rows))
    assert a.tolist() == rows
    assert ckernels.array(a.tolist(), type=a.type).tolist() == rows


@SETTINGS
@given(st.sampled_from(BUILTINS).flatmap(
    lambda name: hnp.arrays(np.dtype(name), hnp.array_shapes(min_dims=0, max_dims=3,
                                                             min_side=0, max_side=4))))
def test_numpy_arrays_of_every_builtin_dtype(n):
    a = ckernels.array(n)
    assert a.shape == n.shape and a.dtype == n.dtype
    np.testing.assert_array_equal(a.to_numpy(), n)
    np.testing.assert_array_equal(ckernels.array(a.tolist(), dtype=n.dtype).to_numpy(),
                                  np.array(n.tolist(), dtype=n.dtype))
    view = ckernels.asarray(n)
    if n.size:
        assert np.shares_memory(np.asarray(view), n)
    # a non-contiguous source
    if n.ndim:
        np.testing.assert_array_equal(ckernels.array(n[..., ::-1]).to_numpy(), n[..., ::-1])


@SETTINGS
@given(st.sampled_from(BUILTINS), st.sampled_from(BUILTINS),
       st.lists(st.integers(-300, 300), min_size=1, max_size=6))
def test_checked_conversion_against_numpy(src, dst, ints):
    """Converting to another dtype either gives NumPy's values or raises (never
    a silent overflow or truncation)."""
    n = np.array(ints).astype(src)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = n.astype(dst)
        if np.dtype(dst).kind in "fc":
            lossy = not np.isfinite(want).all()   # rounding is allowed, overflow is not
        else:   # the value changed (wrapped, truncated, clipped to bool)
            lossy = not np.array_equal(want.astype(np.complex128), n.astype(np.complex128))
    try:
        got = ckernels.array(n, dtype=dst)
    except (OverflowError, ValueError, TypeError):
        assert lossy, (src, dst, ints)
        return
    assert not lossy, (src, dst, ints)
    np.testing.assert_array_equal(got.to_numpy(), want)


def test_empty_nested_lists_like_numpy():
    for value in ([], [[]], [[], [], []], [[[]]], [[[], []]]):
        a = ckernels.array(value)
        want = np.array(value)
        assert a.shape == want.shape and a.dtype == want.dtype == np.float64, value
    assert ckernels.array([[]], dtype="int8").shape == (1, 0)
    assert ckernels.array([[], [1]]).tolist() == [[], [1]]   # ragged: var dims


def test_numpy_arrays_that_do_not_fit_the_type_are_shape_errors():
    with pytest.raises(ValueError, match=r"\(2, 3\).*2 dims.*has 1"):
        ckernels.array(np.zeros((2, 3)), type="strided * float64")
    with pytest.raises(ValueError, match=r"\(2, 1\).*2 dims.*has 1"):
        ckernels.array(np.zeros((2, 1)), type="strided * float64")
    with pytest.raises(ValueError, match="dims"):
        ckernels.array(np.zeros(3), type="strided * strided * float64")
    with pytest.raises(ValueError, match="does not fit"):
        ckernels.array(np.zeros((2, 3)), type="2 * 4 * float64")
    with pytest.raises(ValueError):
        ckernels.array([np.zeros((2, 3))], type="strided * strided * float64")
    a = ckernels.zeros(3)
    with pytest.raises(ValueError):
        a[...] = np.zeros((2, 3))
    assert ckernels.array(np.zeros((2, 3)), type="2 * 3 * float64").shape == (2, 3)


class LyingSequence:
    def __init__(self, n, items):
        self.n, self.items = n, items

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.items[i]


def test_sequences_whose_len_lies_are_clear_errors():
    for n in (0, 2, 5, 1000):
        with pytest.raises(ValueError, match="reported len"):
            ckernels.array([LyingSequence(n, [1, 2, 3])])
        with pytest.raises(ValueError, match="reported len"):
            ckernels.array(LyingSequence(n, [1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="reported len"):
        ckernels.array([LyingSequence(9, [1])], type="strided * var * int8")
    assert ckernels.array([LyingSequence(3, [1, 2, 3])]).tolist() == [[1, 2, 3]]


def run_isolated(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_hostile_sequences_in_a_subprocess():
    """Inputs that used to overflow a heap buffer or recurse without bound:
    each must end in a clear exception, never a crash (checked in a child)."""
    r = run_isolated("""
        import sys
        import ckernels
        results = []

        class Growing:
            '''len says 2; every read appends to the shared list it came from'''
            def __init__(self, sink):
                self.sink = sink
            def __len__(self):
                return 2
            def __getitem__(self, i):
                return i
            def __iter__(self):
                for i in range(50):
                    self.sink.append([1] * 10)
                    yield i

        class Shrinking(list):
            def __iter__(self):
                self.clear()
                return iter([])

        def attempt(name, f):
            try:
                f()
                results.append((name, "ok"))
            except (ValueError, TypeError, OverflowError) as exc:
                kind = next(k for k in (ValueError, TypeError, OverflowError)
                            if isinstance(exc, k)).__name__
                results.append((name, kind + ": " + str(exc)[:80]))

        rows = [[1, 2], [3, 4]]
        rows.append(Growing(rows))
        attempt("growing", lambda: ckernels.array(rows))
        attempt("shrinking", lambda: ckernels.array([Shrinking([1, 2, 3])]))
        selfref = [1]
        selfref.append(selfref)
        attempt("selfref", lambda: ckernels.array(selfref))
        d = {"a": 1}
        d["b"] = d
        attempt("selfref-dict", lambda: ckernels.array([d]))
        deep = [1.0]
        for _ in range(100000):
            deep = [deep]
        attempt("deep", lambda: ckernels.array(deep))
        attempt("deep-typed", lambda: ckernels.array(deep, type="strided * float64"))
        sys.setrecursionlimit(60)
        attempt("low-recursion-limit", lambda: ckernels.array([[[1]]] * 3))
        for name, what in results:
            print(name, "|", what)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    got = dict(line.split(" | ", 1) for line in r.stdout.strip().splitlines())
    assert got["growing"].startswith("ValueError") and "reported len" in got["growing"]
    assert got["shrinking"].startswith("ValueError")
    assert "contains itself" in got["selfref"] and "contains itself" in got["selfref-dict"]
    assert "deeper than" in got["deep"] and got["deep-typed"].startswith("ValueError")
    assert got["low-recursion-limit"] in ("ok",) or "deep" in got["low-recursion-limit"]


def test_bad_leaves_are_clear_errors():
    for value, exc in [([1, "a"], TypeError), ([object()], TypeError), ([{1, 2}], TypeError),
                       ([2**64], OverflowError), ([[1], [[2]]], ValueError),
                       ([{"a": 1}, {"b": 2}], ValueError), (["\ud800"], ValueError)]:
        with pytest.raises(exc):
            ckernels.array(value)
    with pytest.raises(errors.CKOverflowError):
        ckernels.array([1, 300], dtype="int8")
    with pytest.raises(errors.CKValueError):
        ckernels.array([1.5], dtype="int32")
