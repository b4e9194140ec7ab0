"""Python-level benchmarks (make bench): ckernel against NumPy in the same run.

Each case prints best-of-N times and the ratio ckernel / baseline (> 1 means
ckernel is slower).  Sizes are chosen to exceed the caches (10M elements).
"""

from __future__ import annotations

import os
import time

import numpy as np

import ckernels
from _timing import best, report
from ckernels.kernels import make_assignment_kernel

N = int(os.environ.get("CK_BENCH_N", 10_000_000))
REPS = int(os.environ.get("CK_BENCH_REPS", 7))


def bench_conversion() -> None:
    src = np.arange(N, dtype=np.int32)
    dst = np.empty(N, dtype=np.float64)
    k = make_assignment_kernel("float64", "int32", "strided", errmode="nocheck")
    t = best(lambda: k(dst, src))
    t_np = best(lambda: np.copyto(dst, src, casting="unsafe"))
    report("int32->float64 kernel (nocheck)", t, "numpy copyto/astype into out", t_np)
    kd = make_assignment_kernel("float64", "int32", "strided", errmode="default")
    report("int32->float64 kernel (default checks)", best(lambda: kd(dst, src)),
           "numpy copyto/astype into out", t_np)
    assert np.array_equal(dst, src)


def bench_elementwise() -> None:
    from ckernels import ops
    x = np.random.default_rng(0).standard_normal(N)
    y = np.random.default_rng(1).standard_normal(N)
    out = np.empty(N)
    cx, cy, cout = ckernels.asarray(x), ckernels.asarray(y), ckernels.asarray(out)
    t_np = best(lambda: np.add(x, y, out=out))
    for threads in (1, 2):
        ckernels.set_num_threads(threads)
        t = best(lambda: ops.add(cx, cy, out=cout))
        report(f"float64 add, {threads} thread(s)", t, "numpy.add(out=)", t_np)
    ckernels.set_num_threads(1)
    t1 = best(lambda: ops.sin(cx, out=cout))
    ckernels.set_num_threads(2)
    t2 = best(lambda: ops.sin(cx, out=cout))
    ckernels.set_num_threads(0)
    report("float64 sin, 2 threads", t2, "ckernel sin, 1 thread", t1)
    report("float64 sin, 1 thread", t1, "numpy.sin(out=)", best(lambda: np.sin(x, out=out)))


def bench_elementwise_2d() -> None:
    """C-contiguous 2-D operation: the dims coalesce into one run (one leaf
    call over every element, not one per row)."""
    from ckernels import ops
    rows, cols = 1000, N // 1000
    x = np.random.default_rng(0).standard_normal((rows, cols))
    y = np.random.default_rng(1).standard_normal((rows, cols))
    out = np.empty_like(x)
    cx, cy, cout = ckernels.asarray(x), ckernels.asarray(y), ckernels.asarray(out)
    t_np = best(lambda: np.add(x, y, out=out))
    for threads in (1, 2):
        ckernels.set_num_threads(threads)
        report(f"float64 add {rows}x{cols}, {threads} thread(s)",
               best(lambda: ops.add(cx, cy, out=cout)), "numpy.add(out=)", t_np)
    ckernels.set_num_threads(0)


def bench_minmax() -> None:
    from ckernels import ops
    x = np.random.default_rng(3).standard_normal(N)
    y = np.random.default_rng(4).standard_normal(N)
    out = np.empty(N)
    cx, cy, cout = ckernels.asarray(x), ckernels.asarray(y), ckernels.asarray(out)
    ckernels.set_num_threads(1)
    report("float64 maximum, 1 thread (vectorised)", best(lambda: ops.maximum(cx, cy, out=cout)),
           "numpy.maximum(out=)", best(lambda: np.maximum(x, y, out=out)))
    ckernels.set_num_threads(0)


def bench_reduction() -> None:
    from ckernels import ops
    x = np.random.default_rng(2).standard_normal(N)
    cx = ckernels.asarray(x)
    report("float64 sum (pairwise)", best(lambda: ops.sum(cx)), "numpy.sum", best(lambda: x.sum()))
    # the thread pool: 1e8 elements (CK_BENCH_SUM_N), same result for every
    # thread count (split along NumPy's pairwise recursion)
    n = int(os.environ.get("CK_BENCH_SUM_N", 100_000_000))
    z = np.random.default_rng(5).standard_normal(n)
    cz = ckernels.asarray(z)
    t_np = best(lambda: z.sum(), 5)
    for threads in (1, 2):
        ckernels.set_num_threads(threads)
        report(f"float64 sum {n:.0e}, {threads} thread(s)", best(lambda: ops.sum(cz), 5),
               "numpy.sum", t_np)
        assert ops.sum(cz) == z.sum()
    ckernels.set_num_threads(0)


def bench_transcendental() -> None:
    """Issue 14's transcendental kernel: library threads against one-thread
    numba.vectorize (the thread scaling of the parallel outer loop)."""
    import math

    import numba

    @ckernels.jit("float64(float64)")
    def f(x):
        return math.exp(-x * x) * math.cos(3.0 * x) + math.log1p(abs(x))

    @numba.vectorize(["float64(float64)"])
    def g(x):
        return math.exp(-x * x) * math.cos(3.0 * x) + math.log1p(abs(x))

    x = np.random.default_rng(6).standard_normal(N)
    out, ref = np.empty(N), np.empty(N)
    t_nb = best(lambda: g(x, out=ref))
    for threads in (1, 2):
        ckernels.set_num_threads(threads)
        report(f"exp(-x*x)*cos(3x)+log1p(|x|) jit, {threads} thread(s)",
               best(lambda: f(x, out=out)), "numba.vectorize, 1 thread", t_nb)
    ckernels.set_num_threads(0)
    assert np.allclose(out, ref)


def main() -> None:
    print(f"ckernel {ckernels.__version__} Python benchmarks, N={N}, best of {REPS}, "
          f"numpy {np.__version__}, {os.cpu_count()} CPUs")
    bench_conversion()
    bench_elementwise()
    bench_elementwise_2d()
    bench_minmax()
    bench_reduction()
    bench_transcendental()


if __name__ == "__main__":
    main()
