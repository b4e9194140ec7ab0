"""Option elements under dims in jitted signatures (docs/nulls.md, "Option
elements under dims"): ``var * ?float64``, ``N * ?int64``, ``3 * ?bool`` and
``var * ?string`` rows arrive as rows of ``None`` or values; ``?R`` and
``N * ?R`` results may hold nulls; plain ``T`` signatures with dims
propagate a row's null to its result.  Python over lists with ``None`` and
pyarrow.compute are the oracles.  Functions are compiled once, at module
level."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ckernels
from ckernels.errors import NotSupportedError

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


@ckernels.jit("float64(var * ?float64)")
def vsum(row):
    s = 0.0
    for v in row:
        if v is not None:
            s += v
    return s


@ckernels.jit("int64(var * ?float64)")
def counts(row):
    """1000 * the slots (len counts nulls too) + the nulls (row[i] is None)."""
    n = 0
    for i in range(len(row)):
        if row[i] is None:
            n += 1
    return 1000 * len(row) + n


def nnull(a):
    return [c % 1000 for c in counts(a).tolist()]


def slots(a):
    return [c // 1000 for c in counts(a).tolist()]


@ckernels.jit("?float64(var * ?float64)")
def vmax(row):
    best = None
    for v in row:
        if v is not None:
            if best is None or v > best:
                best = v
    return best


@ckernels.jit("int64(N * ?int64)")
def isum(row):
    s = 0
    for v in row:
        if v is not None:
            s += v
    return s


@ckernels.jit("int64(3 * ?bool)")
def ntrue(row):
    n = 0
    for i in range(3):
        if not row.is_null(i) and row[i - 3]:      # the bit alone; a negative index
            n += 1
    return n


@ckernels.jit("int64(var * ?string)")
def textlen(words):
    n = 0
    for w in words:
        if w is not None:
            n += len(w)
    return n


@ckernels.jit("N * ?float64(N * ?float64)")
def ffill(row, out):
    last = None
    for i in range(len(row)):
        v = row[i]
        if v is not None:
            last = v
        out[i] = last


@ckernels.jit("N * ?float64(N * ?float64)")
def halves(row):
    return [None if v is None else v / 2.0 for v in row]


@ckernels.jit("float64(var * float64)")
def psum(row):
    return np.sum(row)


@ckernels.jit("N * float64(N * float64)")
def pcum(row):
    return np.cumsum(row)


def _lists_sum(rows):
    return [sum(v for v in r if v is not None) for r in rows]


ROWS = [[1.0, None, 2.5], [], [None], [3.0, 4.0], [None, None, 7.0]]


def test_var_rows_of_optionals_from_pyarrow():
    a = ckernels.asarray(pa.array(ROWS, pa.list_(pa.float64())))
    assert str(a.type).endswith("var * ?float64")
    assert vsum(a).tolist() == _lists_sum(ROWS)
    assert nnull(a) == [sum(v is None for v in r) for r in ROWS]
    got = slots(a)
    assert got == pc.list_value_length(pa.array(ROWS)).to_pylist()
    assert vmax(a).tolist() == [max((v for v in r if v is not None), default=None)
                                for r in ROWS]


def test_pyarrow_in_pyarrow_out():
    arr = pa.array(ROWS, pa.list_(pa.float64()))
    r = vmax(arr)
    assert isinstance(r, pa.Array)
    assert r.to_pylist() == [max((v for v in x if v is not None), default=None)
                             for x in ROWS]


def test_sliced_pyarrow_bit_offsets():
    base = pa.array(ROWS * 3, pa.list_(pa.float64()))
    for start in range(0, 8):
        sl = base.slice(start)
        a = ckernels.asarray(sl)
        want = _lists_sum(sl.to_pylist())
        assert vsum(a).tolist() == want, start
        assert vmax(a).tolist() == [max((v for v in r if v is not None), default=None)
                                    for r in sl.to_pylist()]


def test_fixed_rows_and_bools_from_lists():
    m = ckernels.array([[1, None, 3], [None, None, 5]])
    assert m.shape == (2, 3) and str(m.type).endswith("?int64")
    assert isum(m).tolist() == [4, 5]
    b = ckernels.array([[True, None, True], [None, False, None]])
    assert ntrue(b).tolist() == [2, 0]


def test_string_rows():
    data = [["ab", None, "héllo"], [], [None], ["x"]]
    a = ckernels.asarray(pa.array(data))
    assert textlen(a).tolist() == [sum(len(w) for w in r if w is not None) for r in data]


def test_numpy_operands_are_plain_rows():
    x = np.arange(12.0).reshape(3, 4)
    assert vsum(x).tolist() == x.sum(axis=1).tolist()
    assert nnull(x) == [0, 0, 0]
    assert np.asarray(ffill(x).fill_null(-1.0)).tolist() == x.tolist()


def test_fixed_option_results_out_parameter_and_returned():
    m = ckernels.array([[None, 1.0, None, 4.0], [2.0, None, None, None]])
    want = [[None, 1.0, 1.0, 4.0], [2.0, 2.0, 2.0, 2.0]]
    r = ffill(m)
    assert r.shape == (2, 4) and str(r.type).endswith("?float64")
    assert r.tolist() == want
    assert pa.array(r.tolist()).to_pylist() == want
    h = halves(m)
    assert h.tolist() == [[None, 0.5, None, 2.0], [1.0, None, None, None]]
    assert h.null_count == 5


@pytest.mark.allow_memblock_leak   # the null-propagating variants, compiled at the first
def test_plain_signatures_propagate_row_nulls():   # call with nulls, stay with psum / pcum
    a = ckernels.asarray(pa.array(ROWS, pa.list_(pa.float64())))
    got = psum(a)
    assert got.shape == (5,) and str(got.type).endswith("?float64")
    assert got.tolist() == [None if None in r else float(sum(r)) for r in ROWS]
    m = ckernels.array([[1.0, 2.0, 3.0], [4.0, None, 6.0]])
    c = pcum(m)
    assert c.tolist() == [[1.0, 3.0, 6.0], [None, None, None]]
    p = psum(pa.array(ROWS, pa.list_(pa.float64())))     # pyarrow in, pyarrow out
    assert isinstance(p, pa.Array) and p.null_count == 3
    # without nulls: the plain path, as before
    assert psum(ckernels.asarray(pa.array([[1.0, 2.0], []]))).tolist() == [3.0, 0.0]


@ckernels.jit("float64(var * float64, float64)")
def scaled(row, k):
    return np.sum(row) * k


@ckernels.jit("var * float64(var * float64)")
def keep(r):
    return r


# a null in a row of a var * R result's argument: a null row (?var * R); a
# null scalar beside rows: a null out.  The variants are compiled at their
# first call and kept: made here
keep(ckernels.asarray(pa.array([[1.0, None]])))
scaled(ckernels.asarray(pa.array([[1.0]])), ckernels.array([None]))


def test_errors_name_the_argument():
    # a null scalar argument beside the rows propagates (?float64 in the variant)
    assert scaled(ckernels.asarray(pa.array([[1.0], [2.0]])),
                  ckernels.array([3.0, None])).tolist() == [3.0, None]
    with pytest.raises(NotSupportedError, match="one core dim"):
        ckernels.jit("N * M * ?float64(N * M * float64)")(lambda r: r)
    with pytest.raises(NotSupportedError, match="one core dim"):
        ckernels.jit("float64(N * M * ?float64)")(lambda r: 0.0)
    with pytest.raises(NotSupportedError, match=r"var \* string"):
        ckernels.jit("N * string(N * string)")(lambda r: r)
    assert keep(ckernels.asarray(pa.array([[1.0, None], [2.0]]))).tolist() == [None, [2.0]]


def test_nulls_into_a_numpy_out_are_an_error():
    out = np.zeros((1, 2))
    with pytest.raises(ckernels.errors.CKValueError, match="1 null"):
        ffill(ckernels.array([[None, 1.0]]), out=out)
    ffill(ckernels.array([[2.0, None]]), out=out)      # no null in the result: written
    assert out.tolist() == [[2.0, 2.0]]


_opt_floats = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(_opt_floats, max_size=9), max_size=12), st.integers(0, 7))
def test_hypothesis_against_pyarrow(rows, start):
    # a slice: the rows' and the values' bitmaps start at bit offsets
    pa_rows = pa.array([[None]] * start + rows, pa.list_(pa.float64())).slice(start)
    a = ckernels.asarray(pa_rows)
    assert nnull(a) == [sum(v is None for v in r) for r in rows]
    assert slots(a) == pc.list_value_length(pa_rows).to_pylist()
    assert vsum(a).tolist() == pytest.approx(_lists_sum(rows))
    assert vsum(a).tolist() == pytest.approx(      # pc.sum: null when all are null
        [pc.sum(pa.array(r, pa.float64())).as_py() or 0.0 for r in rows])
    prop = psum(a).tolist()
    assert prop == pytest.approx([None if None in r else sum(r) for r in rows])


_CACHED = textwrap.dedent("""
    import json
    import ckernels
    import pyarrow as pa

    @ckernels.jit("?float64(var * ?float64)", cache=True)
    def vmax(row):
        best = None
        for v in row:
            if v is not None:
                if best is None or v > best:
                    best = v
        return best

    a = ckernels.asarray(pa.array([[1.0, None, 3.0], [], [None]]))
    print(json.dumps({"m": vmax(a).tolist(), "hits": sum(vmax.stats.kernel_hits.values())}))
""")


def test_cache_true(tmp_path):
    (tmp_path / "nulldimsmod.py").write_text(_CACHED)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "c"))
    runs = [json.loads(subprocess.run([sys.executable, "-c", "import nulldimsmod"], env=env,
                                      capture_output=True, text=True, check=True,
                                      timeout=300).stdout) for _ in range(2)]
    for r in runs:
        assert r["m"] == [3.0, None, None]
    assert runs[0]["hits"] == 0 and runs[1]["hits"] == 1
