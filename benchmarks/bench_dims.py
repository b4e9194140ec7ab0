"""Jitted kernels over dims (issue 22, docs/dims.md), ratios against the best
alternative in the same run (> 1: slower than the alternative):

* dot ``(n),(n)->()``, 1e6 rows x 8 float64: ``f`` (its NumPy gufunc) on 1
  library thread / ``numba.guvectorize`` (target <= 1.0x); on the library's
  threads / ``guvectorize(target="parallel")`` (<= 1.0x);
* ragged row sum ``float64(var * float64)``, 1e6 rows of mean length 10, on a
  ckernels ``var * var * float64`` array / an awkward array summed by a
  ``numba.njit`` loop over its offsets (<= 1.0x) and / ``ak.sum(axis=1)``
  (<= 1.0x);
* a call on 10 rows / ``numba.guvectorize`` (<= 2x);
* filtered rows (a var result, positive elements), 1e6 rows: the builder form
  (``out.append``) and the list form (``return [x for x in r if x > 0]``) /
  awkward ``array[array > 0]`` (<= 1.0x).

    python benchmarks/bench_dims.py          (CK_BENCH_REPS, CK_BENCH_ROWS)

Times are the best of REPS calls.  The machine is shared: numbers from a
loaded machine are noise, the ratios of one run are what counts.
"""

from __future__ import annotations

import os
import sys
import time

import numba
import numpy as np

import ckernels

sys.path.insert(0, os.path.dirname(__file__))
from _timing import REPS, best, report  # noqa: E402

ROWS = int(os.environ.get("CK_BENCH_ROWS", 1_000_000))


# ---------------------------------------------------------------- kernels --
def _dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


ck_dot = ckernels.jit("float64(N * float64, N * float64)")(_dot)


def _gdot(x, y, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    out[0] = s


nb_dot = numba.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")(_gdot)
nb_dot_par = numba.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()",
                               target="parallel")(_gdot)


@ckernels.jit("float64(var * float64)")
def ck_rowsum(r):
    s = 0.0
    for x in r:
        s += x
    return s


@numba.njit
def nb_rowsum(offsets, content, out):
    for i in range(len(offsets) - 1):
        s = 0.0
        for k in range(offsets[i], offsets[i + 1]):
            s += content[k]
        out[i] = s


@ckernels.jit("var * float64(var * float64)")
def ck_positive(r, out):
    for x in r:
        if x > 0:
            out.append(x)


@ckernels.jit("var * float64(var * float64)")
def ck_positive_list(r):
    return [x for x in r if x > 0]


# ------------------------------------------------------------------- data --
def ragged_data(rows, seed=0):
    """Row lengths (mean 10) and values; the same data for every contender."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 21, rows)
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    content = rng.standard_normal(int(offsets[-1]))
    return offsets, content


def ck_ragged(offsets, content):
    """A ckernels ``var * var * float64`` array over the same values."""
    import awkward as ak
    arr = ak.Array(ak.contents.ListOffsetArray(ak.index.Index64(offsets),
                                               ak.contents.NumpyArray(content)))
    try:     # the Arrow import (issue 21), when the package has it
        return ckernels.asarray(arr), arr
    except Exception:
        return ckernels.array(ak.to_list(arr), type="var * var * float64"), arr


# ---------------------------------------------------------------- benches --
def bench_dot():
    print(f"-- dot (n),(n)->(), {ROWS} rows x 8 float64")
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((ROWS, 8)), rng.standard_normal((ROWS, 8))
    out, out2 = np.empty(ROWS), np.empty(ROWS)
    assert np.allclose(ck_dot(x, y), nb_dot(x, y))
    threads = ckernels.get_num_threads()
    ckernels.set_num_threads(1)
    t1 = best(lambda: ck_dot(x, y, out=out))
    tn = best(lambda: nb_dot(x, y, out2))
    report("ckernels f (1 thread)", t1, "numba.guvectorize", tn)
    ckernels.set_num_threads(threads)
    tp = best(lambda: ck_dot(x, y, out=out))
    tnp = best(lambda: nb_dot_par(x, y, out2))
    report(f"ckernels f ({threads} threads)", tp, "guvectorize(target='parallel')", tnp)
    xs, ys = x[:10].copy(), y[:10].copy()
    o10, o10b = np.empty(10), np.empty(10)
    n = 20000

    def many(fn, *a):
        def run():
            for _ in range(n):
                fn(*a)
        return run
    ts = best(many(ck_dot, xs, ys, o10)) / n
    tns = best(many(nb_dot, xs, ys, o10b)) / n
    print(f"{'call on 10 rows (per call)':46s} {ts * 1e6:9.2f} us   {'numba.guvectorize':34s} "
          f"{tns * 1e6:9.2f} us   ratio {ts / tns:5.2f}x")


def bench_ragged():
    import awkward as ak
    offsets, content = ragged_data(ROWS)
    ca, arr = ck_ragged(offsets, content)
    print(f"-- ragged rows: {ROWS} rows, mean length {len(content) / ROWS:.1f}")
    want = ak.to_numpy(ak.sum(arr, axis=1))
    assert np.allclose(np.asarray(ck_rowsum(ca)), want)
    res = np.empty(ROWS)
    t = best(lambda: ck_rowsum(ca))
    tn = best(lambda: nb_rowsum(offsets, content, res))
    report("row sum, ckernels", t, "awkward + numba.njit loop", tn)
    ta = best(lambda: ak.sum(arr, axis=1))
    report("row sum, ckernels", t, "ak.sum(array, axis=1)", ta)
    tf = best(lambda: ck_positive(ca))
    tl = best(lambda: ck_positive_list(ca))
    taf = best(lambda: arr[arr > 0])
    report("filtered rows, ckernels (out.append)", tf, "awkward array[array > 0]", taf)
    report("filtered rows, ckernels (list returned)", tl, "awkward array[array > 0]", taf)


if __name__ == "__main__":
    print(f"bench_dims: best of {REPS}; {ckernels.get_num_threads()} library threads; "
          f"{os.cpu_count()} CPUs (ratios compare both sides in this run)")
    t0 = time.perf_counter()
    bench_dot()
    bench_ragged()
    print(f"({time.perf_counter() - t0:.0f} s)")
