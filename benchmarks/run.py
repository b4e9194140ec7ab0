"""Python-level benchmarks (make bench): ckernel against NumPy in the same run.

Each case prints best-of-N times and the ratio ckernel / baseline (> 1 means
ckernel is slower).  Sizes are chosen to exceed the caches (10M elements).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import ckernel
from ckernel.kernels import make_assignment_kernel

N = int(os.environ.get("CK_BENCH_N", 10_000_000))
REPS = int(os.environ.get("CK_BENCH_REPS", 7))


def best(fn, reps=REPS) -> float:
    fn()  # warm up (page faults, lazy init)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def report(name: str, t: float, base_name: str, t_base: float) -> None:
    print(f"{name:46s} {t * 1e3:9.2f} ms   {base_name:30s} {t_base * 1e3:9.2f} ms   "
          f"ratio {t / t_base:5.2f}x")


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


def main() -> None:
    print(f"ckernel {ckernel.__version__} Python benchmarks, N={N}, best of {REPS}, "
          f"numpy {np.__version__}, {os.cpu_count()} CPUs")
    bench_conversion()
    extra = [name for name in dir(sys.modules[__name__]) if name.startswith("bench_")
             and name != "bench_conversion"]
    for name in sorted(extra):
        getattr(sys.modules[__name__], name)()


if __name__ == "__main__":
    main()
