"""Host arrays (``ckernels.Array``) against NumPy, in one run:

* operators (``a + b``, ``a * 2.0``, ``a < b``, ``-a``, ``a.sum()``) on 10 and
  1e7 float64 elements, results allocated by the call (no ``out=``) and with
  ``out=`` / in place;
* element access: ``a[1] = 2.0``, ``a[3]``, ``a[1:5]``, a loop of scalar swaps;
* conversions: ``np.asarray(a)`` of a host array and ``ckernels.asarray(x)``
  of an ndarray, against ``np.asarray(x)`` of an ndarray (NumPy's no-op);
* ``ckernels.empty`` against ``numpy.empty`` (80 MB) and ``ckernels.zeros``
  against ``numpy.zeros``;
* ``repr`` of a 2e7-element array (summarised; before this benchmark existed
  it took 5 s and 860 MB).

    python benchmarks/bench_arrays.py      (CK_BENCH_REPS, CK_BENCH_N)

Small calls are timed as the best of REPS batches of many calls (per-call
time), large ones as the best of REPS single calls.  Ratios are time /
NumPy's time in the same run (> 1: slower than NumPy).  The machine is
shared: repeat the run and compare best-of-N figures.
"""

from __future__ import annotations

import os
import time

import numpy as np

import ckernels
from _timing import REPS, best

N_LARGE = int(os.environ.get("CK_BENCH_N", 10_000_000))


def per_call(fn, calls: int) -> float:
    """Best of REPS batches of ``calls`` calls, per call (seconds)."""
    fn()
    times = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return min(times)


def line(name: str, t: float, t_np: float) -> None:
    unit, scale = ("us", 1e6) if t_np < 1e-3 else ("ms", 1e3)
    print(f"  {name:34s} ckernels {t * scale:9.2f} {unit}   numpy {t_np * scale:9.2f} {unit}"
          f"   ratio {t / t_np:6.2f}x")


def operators(n: int) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    a, b = ckernels.array(x), ckernels.array(y)
    out_np, out_ck = np.empty(n), ckernels.empty(n)
    small = n <= 1000
    time_it = (lambda f: per_call(f, 20000)) if small else best
    print(f"operators on {n:,} float64 elements:")
    cases = [
        ("a + b", lambda: a + b, lambda: x + y),
        ("a * 2.0", lambda: a * 2.0, lambda: x * 2.0),
        ("a < b", lambda: a < b, lambda: x < y),
        ("-a", lambda: -a, lambda: -x),
        ("np.add(a, b, out=out)", lambda: np.add(a, b, out=out_ck),
         lambda: np.add(x, y, out=out_np)),
        ("a += 1.0", lambda: a.__iadd__(1.0), lambda: x.__iadd__(1.0)),
        ("np.sin(a)", lambda: np.sin(a), lambda: np.sin(x)),
        ("a.sum()", lambda: a.sum(), lambda: x.sum()),
        ("a[1:-1] (a view)", lambda: a[1:-1], lambda: x[1:-1]),
        ("np.add(a, b)", lambda: np.add(a, b), lambda: np.add(x, y)),
    ]
    for name, ck, ref in cases:
        t_ck, t_np = time_it(ck), time_it(ref)
        line(name, t_ck, t_np)
    # conversions: against NumPy's own no-op conversion (np.asarray of an
    # ndarray), so the ratio shows what crossing the boundary costs
    conv = [
        ("np.asarray(a)", lambda: np.asarray(a), lambda: np.asarray(x)),
        ("ckernels.asarray(x)", lambda: ckernels.asarray(x), lambda: np.asarray(x)),
    ]
    for name, ck, ref in conv:
        t_ck, t_np = time_it(ck), time_it(ref)
        line(name, t_ck, t_np)


def creation() -> None:
    n = 10_000_000
    print(f"creation of {n:,} float64 elements (80 MB):")
    line("empty(n)", best(lambda: ckernels.empty(n)), best(lambda: np.empty(n)))
    line("zeros(n)", best(lambda: ckernels.zeros(n)), best(lambda: np.zeros(n)))
    line("zeros(n) then fill(1.0)", best(lambda: ckernels.zeros(n).fill(1.0)),
         best(lambda: np.zeros(n).fill(1.0)))
    line("array(list of 1e5 floats)", best(lambda: ckernels.array(LIST)),
         best(lambda: np.array(LIST)))


LIST = list(np.arange(100_000.0))


def element_access() -> None:
    """Scalar reads and writes, small slices and a loop of swaps on 10 float64."""
    x = np.arange(10.0)
    a = ckernels.array(x)
    print("element access on 10 float64 elements:")

    def swaps(v):
        for i in range(4):
            v[i], v[9 - i] = v[9 - i], v[i]
        return v[2:6]

    cases = [("a[1] = 2.0", lambda v: v.__setitem__(1, 2.0)),
             ("a[3]", lambda v: v[3]),
             ("a[1:5]", lambda v: v[1:5]),
             ("4 scalar swaps + a[2:6]", swaps)]
    for name, fn in cases:
        line(name, per_call(lambda: fn(a), 20000), per_call(lambda: fn(x), 20000))


def representation() -> None:
    n = 20_000_000
    a = ckernels.zeros(n)
    x = np.zeros(n)
    print(f"repr of {n:,} elements (summarised with '...'):")
    line("repr(a)", best(lambda: repr(a)), best(lambda: repr(x)))
    s = ckernels.full(1_000_000, "abc", type="string")
    sn = np.full(1_000_000, "abc", dtype=np.dtypes.StringDType())
    line("repr of 1e6 strings", best(lambda: repr(s)), best(lambda: repr(sn)))


def main() -> None:
    print(f"bench_arrays: best of {REPS}; threads {ckernels.get_num_threads()}")
    operators(10)
    element_access()
    operators(N_LARGE)
    creation()
    representation()


if __name__ == "__main__":
    main()
