"""The column types of real tables: time rows (docs/type-grammar.md "Time
types", docs/interop.md), ratios against the best alternative in the same run
(> 1: slower than the alternative):

* ``t + 1 day`` over ROWS ``datetime64[s]``: ``ckernels.ops.add`` (the C time
  kernel: NaT and overflow checked) / a ``numba.vectorize`` loop over the
  int64 view (target <= 1.05x);
* the same through the jit: ``@ckernels.jit`` of ``t + np.timedelta64(1, "D")``
  (lazily compiled for ``datetime64[s]``, NumPy array in, NumPy array out) /
  the ``numba.vectorize`` loop above (a ``numba.vectorize`` signature over
  ``M8[s]`` compiles, but NumPy finds no loop for ``datetime64[s]`` arrays
  in it: its datetime loops are unit-generic) (target <= 1.05x);
* ISO 8601 text of 1M timestamps (``astype("string")``) /
  ``np.datetime_as_string`` (<= 1.0x);
* ``ckernels.asarray`` of a ROWS-row Arrow timestamp column / a copy of its
  value buffer (<= 0.05x: no copy is made).

    python benchmarks/bench_tables.py          (CK_BENCH_REPS, CK_BENCH_ROWS)

Times are the best of REPS calls.  The machine is shared: numbers from a
loaded machine are noise, the ratios of one run are what counts.
"""

from __future__ import annotations

import os
import sys
import time

import numba
import numpy as np
import pyarrow as pa

import ckernels

sys.path.insert(0, os.path.dirname(__file__))
from _timing import REPS, best, report  # noqa: E402

ROWS = int(os.environ.get("CK_BENCH_ROWS", 10_000_000))
TEXT_ROWS = min(ROWS, 1_000_000)
NAT = np.iinfo(np.int64).min


@numba.vectorize(["int64(int64)"])
def _nb_add_day(t):
    return t if t == NAT else t + 86400


def bench_add_day():
    x = np.arange(ROWS, dtype=np.int64).view("M8[s]")
    a = ckernels.asarray(x)
    day = ckernels.asarray(np.array([1], "m8[D]"))
    want = x + np.timedelta64(1, "D")
    np.testing.assert_array_equal(np.asarray(ckernels.ops.add(a, day)), want)
    iv = x.view(np.int64)
    t = best(lambda: ckernels.ops.add(a, day))
    tn = best(lambda: _nb_add_day(iv))
    print(f"-- t + 1 day over {ROWS} datetime64[s]")
    report("ckernels.ops.add (time kernel)", t, "numba.vectorize (int64 view)", tn)


@ckernels.jit
def _ck_jit_add_day(t):
    return t + np.timedelta64(1, "D")


def bench_jit_add_day():
    x = np.arange(ROWS, dtype=np.int64).view("M8[s]")
    x[::97] = np.datetime64("NaT")
    want = x + np.timedelta64(1, "D")
    got = _ck_jit_add_day(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    iv = x.view(np.int64)
    np.testing.assert_array_equal(_nb_add_day(iv).view("M8[s]"), want)
    t = best(lambda: _ck_jit_add_day(x))
    tn = best(lambda: _nb_add_day(iv))
    print(f"-- jitted t + np.timedelta64(1, 'D') over {ROWS} datetime64[s]")
    report("@ckernels.jit", t, "numba.vectorize (int64 view)", tn)


def bench_iso_text():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4_000_000_000, TEXT_ROWS).view("M8[s]")
    a = ckernels.asarray(x)
    assert a.astype("string").tolist()[:100] == np.datetime_as_string(x[:100]).tolist()
    t = best(lambda: a.astype("string"))
    tn = best(lambda: np.datetime_as_string(x))
    print(f"-- ISO 8601 text of {TEXT_ROWS} timestamps")
    report("astype('string')", t, "np.datetime_as_string", tn)


def bench_arrow_import():
    col = pa.array(np.arange(ROWS, dtype=np.int64)).view(pa.timestamp("us", tz="UTC"))
    buf = col.buffers()[1]
    a = ckernels.asarray(col)
    assert a._data == buf.address
    t = best(lambda: ckernels.asarray(col))
    tc = best(lambda: np.frombuffer(buf, np.int64).copy())
    print(f"-- Arrow timestamp column of {ROWS} rows")
    report("ckernels.asarray (zero-copy)", t, "a copy of its value buffer", tc)


if __name__ == "__main__":
    print(f"bench_tables: best of {REPS}; {ckernels.get_num_threads()} library threads; "
          f"{os.cpu_count()} CPUs (ratios compare both sides in this run)")
    t0 = time.perf_counter()
    bench_add_day()
    bench_jit_add_day()
    bench_iso_text()
    bench_arrow_import()
    print(f"({time.perf_counter() - t0:.0f} s)")
