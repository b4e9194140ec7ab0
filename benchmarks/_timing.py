"""Timing helpers shared by the Python benchmarks (run as scripts from this
folder, so this module is imported by name)."""

from __future__ import annotations

import os
import time

REPS = int(os.environ.get("CK_BENCH_REPS", 7))


def best(fn, reps: int = REPS) -> float:
    """Best of ``reps`` timed calls in seconds, after one warm-up call (page
    faults, lazy initialisation, compilation)."""
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def report(name: str, t: float, base_name: str, t_base: float, width: int = 46) -> None:
    """One result line: both times and the ratio (> 1: slower than the baseline)."""
    print(f"{name:{width}s} {t * 1e3:9.2f} ms   {base_name:34s} {t_base * 1e3:9.2f} ms   "
          f"ratio {t / t_base:5.2f}x")
