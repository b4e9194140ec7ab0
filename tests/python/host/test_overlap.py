"""Outputs that overlap inputs give NumPy's results (ck_array_apply /
ck_array_assign copy a partially overlapping source to a temporary first),
for ckernels arrays and for NumPy arrays viewed zero-copy; in-place
operations (out is an input) stay correct.  NumPy is the oracle: the same
expression is evaluated on a NumPy copy of the data."""
import numpy as np
import pytest

import ckernels
from ckernels import ops

# (name, destination slice, source slices) over a 1-d buffer of 16 elements
CASES_1D = [
    ("forward", np.s_[1:9], (np.s_[0:8], np.s_[0:8])),
    ("backward", np.s_[0:8], (np.s_[1:9], np.s_[1:9])),
    ("forward_mixed", np.s_[2:10], (np.s_[0:8], np.s_[8:16])),
    ("strided", np.s_[2::2], (np.s_[0:-2:2], np.s_[1:-2:2])),
    ("reversed", np.s_[:], (np.s_[::-1], np.s_[:])),
    ("reversed_strided", np.s_[::2], (np.s_[::-2], np.s_[1::2])),
    ("in_place", np.s_[:], (np.s_[:], np.s_[::-1])),
]


@pytest.mark.parametrize("kind", ["ckernels", "numpy"])
@pytest.mark.parametrize("name,dst,srcs", CASES_1D, ids=[c[0] for c in CASES_1D])
def test_add_with_overlapping_out(kind, name, dst, srcs):
    base = np.arange(16, dtype=np.float64) * 1.5 + 1
    want = base.copy()
    np.add(want[srcs[0]], want[srcs[1]], out=want[dst])
    if kind == "numpy":
        b = base.copy()
        ops.add(b[srcs[0]], b[srcs[1]], out=b[dst])
        got = b
    else:
        b = ckernels.array(base)
        ops.add(b[srcs[0]], b[srcs[1]], out=b[dst])
        got = np.asarray(b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["ckernels", "numpy"])
@pytest.mark.parametrize("dst,src", [(np.s_[1:], np.s_[:-1]), (np.s_[:-1], np.s_[1:]),
                                     (np.s_[:], np.s_[::-1]), (np.s_[::2], np.s_[:8]),
                                     (np.s_[3:], np.s_[:-3])])
def test_assign_overlapping_views(kind, dst, src):
    base = np.arange(16, dtype=np.int64)
    want = base.copy()
    want[dst] = want[src].copy()  # NumPy's assignment is as if through a copy
    if kind == "numpy":
        x = base.copy()
        ckernels.assign(x[dst], x[src])
        got = x
    else:
        x = ckernels.array(base)
        ckernels.assign(x[dst], x[src])
        got = np.asarray(x)
    np.testing.assert_array_equal(got, want)


def test_2d_overlap_and_broadcast_row():
    base = np.arange(20, dtype=np.int64).reshape(4, 5)
    # rows shifted down: a[1:] = a[:-1] * 2
    want = base.copy()
    np.multiply(want[:-1], 2, out=want[1:])
    a = base.copy()
    ops.multiply(a[:-1], 2, out=a[1:])
    np.testing.assert_array_equal(a, want)
    # a row of the destination broadcast over it: a += a[0]
    want = base.copy()
    np.add(want, want[0], out=want)
    a = base.copy()
    ops.add(a, a[0], out=a)
    np.testing.assert_array_equal(a, want)
    # a column broadcast: a = a - a[:, :1]
    want = base.copy()
    np.subtract(want, want[:, :1], out=want)
    a = base.copy()
    ops.subtract(a, a[:, :1], out=a)
    np.testing.assert_array_equal(a, want)
    # transposed view of a square block
    sq = np.arange(16, dtype=np.float64).reshape(4, 4)
    want = sq.copy()
    np.add(want.T, 0.5, out=want)
    s = sq.copy()
    ops.add(s.T, 0.5, out=s)
    np.testing.assert_array_equal(s, want)


def test_out_of_another_dtype_overlapping():
    base = np.arange(10, dtype=np.int32)
    want = base.astype(np.float64)
    f = want.copy()
    np.add(base[:8], base[:8], out=want[1:9])
    ops.add(base[:8], base[:8], out=f[1:9])
    np.testing.assert_array_equal(f, want)


def test_large_in_place_parallel():
    """In place over the thread pool: a += a, with no temporary."""
    x = np.arange(1_000_000, dtype=np.float64)
    want = x * 2
    ops.add(x, x, out=x)
    np.testing.assert_array_equal(x, want)
    y = np.arange(1_000_000, dtype=np.float64)
    ops.add(y[:-1], 1.0, out=y[1:])  # overlapping, parallel-sized
    want = np.arange(1_000_000, dtype=np.float64)
    np.add(want[:-1], 1.0, out=want[1:])
    np.testing.assert_array_equal(y, want)


def test_strings_assigned_over_themselves():
    s = ckernels.array(["a", "bb", "ccc", "dddd", "eeeee"])
    ckernels.assign(s[1:], s[:-1])
    assert s.to_list() == ["a", "a", "bb", "ccc", "dddd"]
    ckernels.assign(s, s[::-1])
    assert s.to_list() == ["dddd", "ccc", "bb", "a", "a"]
