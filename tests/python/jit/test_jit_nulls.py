"""Missing values in jitted functions (docs/nulls.md, "Jitted functions"):
nulls propagate through plain-``T`` signatures (the body never runs on a null
slot), null-aware ``?T`` signatures get ``None`` or a value and may return
``None``, NumPy ``StringDType`` loops keep the nulls, ``f.reduce`` skips them,
and ``cache=True`` loads option signatures natively.  pyarrow.compute is the
oracle for null semantics.  Functions are compiled once, at module level."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ckernels
from ckernels import ops
from ckernels.errors import CKValueError, NotSupportedError

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

SNA = np.dtypes.StringDType(na_object=None)


@ckernels.jit("int64(int64)")
def inv(x):
    return 10 // x


@ckernels.jit("float64(float64, float64)", identity=0)
def fma(x, y):
    return x * 2.0 + y


@ckernels.jit("float64(float64, float64)")
def biggest(x, y):
    return max(x, y)


@ckernels.jit("string(string)")
def tag(s):
    return s + "-x"


@ckernels.jit("int64(string)")
def slen(s):
    return len(s)


@ckernels.jit("float64(?float64)")
def filled(x):
    if x is None:
        return -1.0
    return x * 2


@ckernels.jit("?float64(float64)")
def small(x):
    if x > 2:
        return None
    return x


@ckernels.jit("?string(?string)")
def shout(s):
    if s is None:
        return "missing"
    if s == "drop":
        return None
    return s.upper()


@ckernels.jit("?int64(?int64, int64)")
def plus(x, y):
    if x is None:
        return None
    return x + y


@ckernels.jit("bool(?bool)")
def absent(b):
    return b is None


# ---- propagation -------------------------------------------------------------------

def test_propagation_never_runs_the_body_on_a_null():
    # Arrow leaves a 0 under the null: 10 // 0 would raise
    src = pa.array([1, None, 2, 5])
    assert src.buffers()[1] is not None
    r = inv(ckernels.asarray(src))
    assert str(r.type) == "strided * ?int64"
    assert r.tolist() == [10, None, 5, 2]
    with pytest.raises(ZeroDivisionError):
        inv(ckernels.array([1, 0]))           # a real 0 still raises


def test_propagation_matches_pyarrow_compute():
    a = pa.array([1.5, None, 3.0, None, -2.0])
    b = pa.array([None, 1.0, 2.0, None, 4.0])
    want = pc.add(pc.multiply(a, 2.0), b).to_pylist()
    got = fma(ckernels.asarray(a), ckernels.asarray(b))
    assert got.tolist() == want
    assert pa.array(got).equals(pc.add(pc.multiply(a, 2.0), b))
    # a ?int64 operand is converted to ?float64 (the nulls kept), a scalar broadcasts
    ints = ckernels.array([1, None, 3])
    assert fma(ints, 1.0).tolist() == [3.0, None, 7.0]
    # strings
    s = pa.array(["a", None, "ccc"])
    assert tag(ckernels.asarray(s)).tolist() == pc.binary_join_element_wise(
        s, "-x", "").to_pylist()
    assert slen(ckernels.asarray(s)).tolist() == pc.utf8_length(s).to_pylist()


def test_propagation_at_bit_offsets_and_out():
    base = pa.array([1.0, None, 2.0, 3.0, None, 4.0, 5.0, None, 6.0, 7.0, 8.0])
    for off in range(8):
        sl = base.slice(off)
        want = pc.add(pc.multiply(sl, 2.0), 1.0).to_pylist()
        assert fma(ckernels.asarray(sl), 1.0).tolist() == want, off
    out = ckernels.array([0.0, 0.0, 0.0], dtype="?float64")
    fma(ckernels.array([1.0, None, 2.0]), 1.0, out=out)
    assert out.tolist() == [3.0, None, 5.0]
    plain = ckernels.zeros(3, "float64")
    with pytest.raises(CKValueError, match="1 null"):
        fma(ckernels.array([1.0, None, 2.0]), 1.0, out=plain)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-50, 50)), min_size=1, max_size=40))
def test_hypothesis_propagation_like_pyarrow(values):
    a = pa.array(values, type=pa.int64())
    got = inv(ckernels.asarray(a)) if not any(v == 0 for v in values) else None
    if got is not None:
        want = [None if v is None else 10 // v for v in values]
        assert got.tolist() == want
    f = fma(ckernels.asarray(pc.cast(a, pa.float64())), 0.5)
    assert f.tolist() == pc.add(pc.multiply(pc.cast(a, pa.float64()), 2.0), 0.5).to_pylist()


# ---- NumPy StringDType -------------------------------------------------------------

def test_stringdtype_loops_keep_the_nulls():
    x = np.array(["a", None, "ccc", None], dtype=SNA)
    r = tag(x)
    assert isinstance(r, np.ndarray) and r.dtype == SNA
    assert r.tolist() == ["a-x", None, "ccc-x", None]
    assert tag.ufunc(x).tolist() == ["a-x", None, "ccc-x", None]
    nan = np.dtypes.StringDType(na_object=np.nan)
    y = tag(np.array(["q", np.nan], dtype=nan))
    assert y.dtype == nan and y[0] == "q-x" and y[1] is np.nan
    # long runs over the pool: nulls in place
    big = np.array([None if i % 7 == 0 else f"w{i}" for i in range(10_000)], dtype=SNA)
    got = tag(big)
    assert got.tolist() == [None if v is None else v + "-x" for v in big.tolist()]


def test_numeric_numpy_result_with_nulls_names_the_count():
    x = np.array(["a", None, "bb", None], dtype=SNA)
    with pytest.raises(CKValueError, match=r"2 missing values .* first at element 1"):
        slen(x)
    # on ckernels arrays the result is an option
    assert slen(ckernels.array(x)).tolist() == [1, None, 2, None]


# ---- null-aware functions ----------------------------------------------------------

def test_option_arguments_arrive_as_none():
    a = ckernels.array([1.0, None, 3.0])
    r = filled(a)
    assert str(r.type) == "strided * float64" and r.tolist() == [2.0, -1.0, 6.0]
    assert filled(np.array([1.0, 2.0])).tolist() == [2.0, 4.0]    # no nulls: plain values
    assert absent(ckernels.array([True, None, False])).tolist() == [False, True, False]
    # scalars: None is a null of the signature's type
    assert filled(None) == -1.0 and filled(2.0) == 4.0
    assert inv(None) is None and shout(None) == "missing"
    assert shout("drop") is None and shout("abc") == "ABC"


def test_option_results_may_be_none():
    r = small(np.array([1.0, 5.0, 2.0]))
    assert str(r.type) == "strided * ?float64" and r.tolist() == [1.0, None, 2.0]
    # a null into a plain argument propagates
    assert small(ckernels.array([1.0, None, 3.0])).tolist() == [1.0, None, None]
    s = shout(ckernels.array(["a", None, "drop", "bcd"]))
    assert str(s.type) == "strided * ?string"
    assert s.tolist() == ["A", "missing", None, "BCD"]
    assert pa.array(s).to_pylist() == ["A", "missing", None, "BCD"]
    p = plus(ckernels.array([1, None, 3]), ckernels.array([1, 2, None]))
    assert p.tolist() == [2, None, None]


def test_signatures_and_refusals():
    assert shout.signatures == ["?string(?string)"]
    with pytest.raises(TypeError, match=r"option types are \?T"):
        ckernels.jit("float64(?{x: float64})")(lambda p: 1.0)

    @ckernels.jit("float64(N * float64)")
    def total(v):
        return v.sum()
    # a plain T signature with dims: a row holding a null gives a null
    # (docs/nulls.md, "Option elements under dims"; refused before)
    assert total(ckernels.array([[1.0, None], [2.0, 3.0]])).tolist() == [None, 5.0]


# ---- ops, reduce -------------------------------------------------------------------

def test_ops_and_ufunc_on_option_arrays():
    a = ckernels.array([1.0, None, 3.0])
    assert ops.add(a, 1).tolist() == [2.0, None, 4.0]
    assert fma.ufunc(a, 1.0).tolist() == [3.0, None, 7.0]
    assert np.add(a, 1).tolist() == [2.0, None, 4.0]


def test_reduce_skips_nulls():
    arr = pa.array([1.0, None, 3.0, None])
    a = ckernels.asarray(arr)
    assert biggest.reduce(a) == pc.max(arr).as_py()
    assert biggest.reduce(a, skip_nulls=False) is None
    assert biggest.reduce(ckernels.array([None, None], dtype="float64")) is None
    m = ckernels.array([[1.0, None], [None, None], [2.0, 5.0]])

    @ckernels.jit("float64(float64, float64)", identity=0)
    def add(x, y):
        return x + y
    assert add.reduce(a) == pc.sum(arr).as_py()
    assert add.reduce(m, axis=1).tolist() == [1.0, None, 7.0]
    assert add.reduce(m, axis=0).tolist() == [3.0, 5.0]
    assert add.reduce(m, axis=0, skip_nulls=False).tolist() == [None, None]
    with pytest.raises(NotSupportedError, match="identity="):
        biggest.reduce(m, axis=1)


# ---- cache=True --------------------------------------------------------------------

_CACHED = textwrap.dedent("""
    import json, sys
    import ckernels

    @ckernels.jit("?string(?string)", cache=True)
    def shout(s):
        if s is None:
            return "missing"
        return s.upper()

    @ckernels.jit("int64(int64)", cache=True)
    def inv(x):
        return 10 // x

    a = ckernels.array(["a", None])
    b = ckernels.array([1, None, 5])
    print(json.dumps({"s": shout(a).tolist(), "i": inv(b).tolist(),
                      "numba": "numba" in sys.modules,
                      "hits": sum(shout.stats.kernel_hits.values()) +
                              sum(inv.stats.kernel_hits.values())}))
""")


def test_cache_true_loads_option_signatures(tmp_path):
    import json
    mod = tmp_path / "nullmod.py"
    mod.write_text(_CACHED)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "c"))
    runs = [json.loads(subprocess.run([sys.executable, "-c", "import nullmod"], env=env,
                                      capture_output=True, text=True, check=True,
                                      timeout=240).stdout.splitlines()[-1])
            for _ in range(2)]
    for r in runs:
        assert r["s"] == ["A", "missing"] and r["i"] == [10, None, 2]
    assert runs[1]["hits"] >= 2
