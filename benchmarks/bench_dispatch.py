"""Call overhead of jitted functions and registry operations, which are NumPy
ufuncs (``f.ufunc``) behind a C callable (``f`` itself, a
``ckernels._ufuncs.Function``), against ``numba.vectorize``, NumPy and the
general path (``ck_array_apply``, which ckernels arrays take), float64
``2*x + y`` with ``out=`` given:

* 10 elements (target <= 2x numba.vectorize), 100,000 elements (<= 1.1x),
  through ``f`` and through ``f.ufunc``,
* a call on two Python floats (<= 2x numba.vectorize),
* ``ops.add`` on 10 elements (<= 1.1x numpy.add),
* 1e7 elements, 1 vs 2 threads (must not be slower than the general path),
  and a transcendental kernel where the library's threads pay.

    python benchmarks/bench_dispatch.py      (CK_BENCH_REPS, CK_BENCH_N)

Small calls are timed as the best of REPS batches of many calls (per-call
time); large ones as the best of REPS single calls.  Ratios are time /
baseline time in the same run (> 1: slower than the baseline).
"""

from __future__ import annotations

import math
import os
import time

import numba
import numpy as np

import ckernels


REPS = int(os.environ.get("CK_BENCH_REPS", 7))
N_LARGE = int(os.environ.get("CK_BENCH_N", 10_000_000))


# ---------------------------------------------------------------- kernels --
@ckernels.jit("float64(float64, float64)")
def ck_axpy(x, y):
    return 2.0 * x + y


@numba.vectorize(["float64(float64, float64)"])
def nb_axpy(x, y):
    return 2.0 * x + y


@ckernels.jit("float64(float64, float64)")
def ck_trans(x, y):
    return math.exp(math.sin(x)) * math.cos(y)


@numba.vectorize(["float64(float64, float64)"])
def nb_trans(x, y):
    return math.exp(math.sin(x)) * math.cos(y)


# ---------------------------------------------------------------- timing --
def _batch(fn, min_time: float) -> int:
    """Calls per batch so that a batch takes about min_time (at least one)."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / 4:
            return max(1, round(n * min_time / dt))
        n *= 4


def per_call(*fns, min_time: float = 0.01) -> list[float]:
    """Best per-call time (s) of each function over REPS rounds; the
    functions' batches alternate within a round, so load changes on the
    (shared) machine hit all of them alike."""
    sizes = [_batch(fn, min_time) for fn in fns]
    bests = [math.inf] * len(fns)
    for _ in range(REPS):
        for i, (fn, n) in enumerate(zip(fns, sizes)):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            bests[i] = min(bests[i], (time.perf_counter() - t0) / n)
    return bests


def arrays(n: int, k: int = 3) -> list[np.ndarray]:
    """k float64 arrays of n random values, 64-byte aligned, at different
    offsets within a page (no 4 KiB aliasing between them)."""
    out = []
    for i in range(k):
        raw = np.empty(n + 1024, np.float64)
        start = (-raw.ctypes.data // 8) % 8 + 64 * i
        a = raw[start:start + n]
        a[...] = np.random.rand(n)
        out.append(a)
    return out


def line(what: str, t: float, base_name: str, t_base: float, target: float | None = None,
         unit: str = "us") -> float:
    scale = 1e6 if unit == "us" else 1e3
    ratio = t / t_base
    tgt = "" if target is None else f"  (target <= {target:g}x: {'met' if ratio <= target else 'MISSED'})"
    print(f"{what:40s} {t * scale:9.3f} {unit}  {base_name:24s} {t_base * scale:9.3f} {unit}  "
          f"ratio {ratio:5.2f}x{tgt}")
    return ratio


def main() -> None:
    add = ckernels.ops.add
    threads0 = ckernels.get_num_threads()
    print(f"jitted functions and ops as ufuncs, best of {REPS}; numpy {np.__version__}, "
          f"numba {numba.__version__}, {threads0} library thread(s)")

    print("\n-- small calls (per call), float64 2*x + y, out= given")
    uf_axpy = ck_axpy.ufunc
    for n, target in ((10, 2.0), (100_000, 1.1)):
        x, y, o = arrays(n)
        cx, cy, co = (ckernels.asarray(a) for a in (x, y, o))   # zero-copy views
        t_fn, t_uf, t_nb, t_ck = per_call(
            lambda: ck_axpy(x, y, out=o), lambda: uf_axpy(x, y, out=o),
            lambda: nb_axpy(x, y, out=o), lambda: ck_axpy(cx, cy, out=co))
        line(f"f(x, y), {n} elements", t_fn, "numba.vectorize", t_nb, target)
        line(f"f.ufunc(x, y), {n} elements", t_uf, "numba.vectorize", t_nb, target)
        line(f"general path, {n} elements", t_ck, "numba.vectorize", t_nb)
    t_fn, t_uf, t_nb = per_call(lambda: ck_axpy(2.0, 3.0), lambda: uf_axpy(2.0, 3.0),
                                lambda: nb_axpy(2.0, 3.0))
    line("f, two Python floats", t_fn, "numba.vectorize", t_nb, 2.0)
    line("f.ufunc, two Python floats", t_uf, "numba.vectorize", t_nb, 2.0)
    x, y, o = arrays(10)
    cx, cy, co = (ckernels.asarray(a) for a in (x, y, o))
    t_op, t_np, t_gen = per_call(lambda: add(x, y, out=o), lambda: np.add(x, y, out=o),
                                 lambda: add(cx, cy, out=co))
    line("ops.add, 10 elements", t_op, "numpy.add", t_np, 1.1)
    line("ops.add general path, 10 elements", t_gen, "numpy.add", t_np)

    print(f"\n-- large arrays ({N_LARGE:.0e} float64, out= given; per call)")
    x, y, o = arrays(N_LARGE)
    cx, cy, co = (ckernels.asarray(a) for a in (x, y, o))

    def threads(nt, fn):
        def run():
            ckernels.set_num_threads(nt)
            fn()
        return run

    for name, jk, nb in (("2*x + y", ck_axpy, nb_axpy), ("exp(sin x)*cos y", ck_trans, nb_trans)):
        t_f1, t_ck1, t_f2, t_ck2, t_nb = per_call(
            threads(1, lambda: jk(x, y, out=o)), threads(1, lambda: jk(cx, cy, out=co)),
            threads(2, lambda: jk(x, y, out=o)), threads(2, lambda: jk(cx, cy, out=co)),
            lambda: nb(x, y, out=o), min_time=0)
        for nt, t_f, t_ck in ((1, t_f1, t_ck1), (2, t_f2, t_ck2)):
            line(f"{name}, f, {nt} thread(s)", t_f, "general path", t_ck, 1.0, unit="ms")
            line(f"{name}, f, {nt} thread(s)", t_f, "numba.vectorize", t_nb, unit="ms")
        line(f"{name}, f, 2 vs 1 thread(s)", t_f2, "f, 1 thread", t_f1, unit="ms")
    ckernels.set_num_threads(threads0)
    t_op, t_np = per_call(lambda: add(x, y, out=o), lambda: np.add(x, y, out=o), min_time=0)
    line("ops.add, large", t_op, "numpy.add", t_np, unit="ms")


if __name__ == "__main__":
    main()
