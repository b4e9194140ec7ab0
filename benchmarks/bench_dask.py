"""ckernels on a Dask cluster (issue 11): a transcendental kernel over a float64
dask array (2e8 elements in chunks of 1e7; CK_BENCH_DASK_N shrinks it, chunks
stay 1/20 of it at most), on a LocalCluster of worker processes with one
thread each:

* ckernels jitted function vs ``numba.vectorize`` (same body, mapped over the
  chunks by a module-level function), same cluster (goal: ratio <= 1.0x);
* 1 vs 2 worker processes with one library thread per worker
  (CK_NUM_THREADS=1: the process scaling; goal >= 1.7x on 2 cores), and the
  default thread rule, the worker's share of the host (1 worker: both cores
  through the library's threads; 2 workers: one library thread each);
* the scheduler's overhead per chunk (many tiny chunks through an identity).

Times are the best of CK_BENCH_REPS (default 3) computations of
``f(x).sum()`` on persisted input (the sum is the same work for both)."""

from __future__ import annotations

import logging
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

N = int(float(os.environ.get("CK_BENCH_DASK_N", 2e8)))
CHUNK = int(min(1e7, max(1, N // 20)))
REPS = int(os.environ.get("CK_BENCH_REPS", 3))


def best(fn, reps=REPS) -> float:
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def cluster(n_workers: int, cache_dir: str, threads_env: str | None):
    from distributed import Client, LocalCluster
    env = {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
           "NUMBA_CACHE_DIR": cache_dir}
    if threads_env is not None:
        env["CK_NUM_THREADS"] = threads_env
    lc = LocalCluster(processes=True, n_workers=n_workers, threads_per_worker=1,
                      dashboard_address=None, env=env, silence_logs=logging.CRITICAL)
    return lc, Client(lc)


def run(n_workers: int, cache_dir: str, threads_env: str | None, both: bool):
    import dask.array as da

    import dask_bench_kernels as K
    lc, client = cluster(n_workers, cache_dir, threads_env)
    try:
        x = da.random.default_rng(1).random(N, chunks=CHUNK).persist()
        client.wait_for_workers(n_workers)
        t_ck = best(lambda: K.ck_trans(x).sum().compute())
        # after the runs: the rule as applied while they ran (the workers
        # import ckernels with the first task and then ask the scheduler)
        threads = sorted(client.run(lambda: __import__("ckernels").get_num_threads()).values())
        t_nb = (best(lambda: x.map_blocks(K.nb_block, dtype=x.dtype).sum().compute())
                if both else None)
        ok = np.isclose(K.ck_trans(x).sum().compute(),
                        x.map_blocks(K.nb_block, dtype=x.dtype).sum().compute())
        per_chunk = None
        if both:
            tiny = da.zeros(2000, chunks=1).persist()
            t_tiny = best(lambda: tiny.map_blocks(lambda b: b, dtype=tiny.dtype)
                          .sum().compute())
            per_chunk = t_tiny / 2000
        del x
        return t_ck, t_nb, ok, threads, per_chunk
    finally:
        client.close()
        lc.close()


def main() -> None:
    import dask
    import distributed
    print(f"bench_dask: {N:.2e} float64, chunks of {CHUNK:.0e}, best of {REPS}; dask "
          f"{dask.__version__}, distributed {distributed.__version__}, "
          f"{len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="ck-dask-cache-") as cache:
        t2, tnb, ok, th2, per_chunk = run(2, cache, None, both=True)
        print(f"2 workers x 1 thread (library threads per worker {th2}):")
        print(f"  ckernels jit   {t2 * 1e3:9.1f} ms   numba.vectorize {tnb * 1e3:9.1f} ms   "
              f"ratio {t2 / tnb:5.2f}x (goal <= 1.0x)  same sum: {ok}")
        t1s, _, _, th1s, _ = run(1, cache, "1", both=False)
        t2s, _, _, th2s, _ = run(2, cache, "1", both=False)
        print("process scaling, CK_NUM_THREADS=1 on the workers:")
        print(f"  1 worker       {t1s * 1e3:9.1f} ms   2 workers       {t2s * 1e3:9.1f} ms   "
              f"speed-up {t1s / t2s:5.2f}x (goal >= 1.7x)")
        t1d, _, _, th1d, _ = run(1, cache, None, both=False)
        print(f"default thread rule: 1 worker x 1 thread uses {th1d} library thread(s): "
              f"{t1d * 1e3:.1f} ms; 2 workers ({th2} each): {t2 * 1e3:.1f} ms; "
              f"ratio {t1d / t2:5.2f}x")
        print(f"scheduler overhead per chunk (2000 one-element chunks, identity + sum): "
              f"{per_chunk * 1e6:.0f} us; per 1e7-element chunk of this kernel: "
              f"{t2 / max(1, N // CHUNK) * 2 * 1e3:.1f} ms of worker time")


if __name__ == "__main__":
    main()
