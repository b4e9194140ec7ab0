"""Memory of repeated in-place string writes: ``f(x, g, out=s)`` rewriting
every string of ``s`` (issue 29: +148 MB for 500 rewrites before the fix).

    python benchmarks/bench_string_rewrite.py
    (CK_BENCH_REWRITE_N strings, default 100000; CK_BENCH_REWRITES, default 1000)

Each case runs in a fresh interpreter and reports the growth of its resident
set (RSS) from after the first write to after the last, the destination's
arena bytes where it has one, and the time per rewrite:

  ckernels            a ckernels string array that alone owns its strings:
                      every rewrite goes to a fresh arena, the old one is
                      dropped (``ckernels.host.rewrite``)
  ckernels + view     the same while a view of it is alive: the arena is
                      shared, the old strings are kept (documented
                      behaviour; fewer rewrites, it grows by one generation
                      each)
  StringDType (jit)   the same jitted function into a NumPy StringDType out=
  StringDType (numpy) np.strings.add into a StringDType out= (no ckernels)

The target: ckernels' growth within 2x of NumPy StringDType's (both flat).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

N = int(os.environ.get("CK_BENCH_REWRITE_N", 100_000))
REWRITES = int(os.environ.get("CK_BENCH_REWRITES", 1000))
#: rewrites of the shared case (it keeps every generation)
SHARED_REWRITES = min(REWRITES, 20)

CASES = ("ckernels", "ckernels + view", "StringDType (jit)", "StringDType (numpy)")


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _child(case: str) -> dict:
    import numpy as np

    import ckernels
    from ckernels.host.rewrite import arena_stats

    @ckernels.jit("string(int64, int64)")
    def label(i, gen):
        return f"item-{i}-generation-{gen}"

    T = np.dtypes.StringDType()
    xs = np.arange(N)
    arena = None
    rewrites = SHARED_REWRITES if case == "ckernels + view" else REWRITES
    keep = None
    if case.startswith("ckernels"):
        x = ckernels.asarray(xs)
        s = label(x, 0)
        if case == "ckernels + view":
            keep = s[::2]

        def write(g):
            label(x, g, out=s)

        def check(g):
            assert s[N - 1] == f"item-{N - 1}-generation-{g}"
    elif case == "StringDType (jit)":
        s = label(xs, 0)

        def write(g):
            label(xs, g, out=s)

        def check(g):
            assert s[N - 1] == f"item-{N - 1}-generation-{g}"
    else:
        prefix = np.strings.add("item-", xs.astype(T))
        s = np.empty(N, dtype=T)

        def write(g):
            np.strings.add(prefix, f"-generation-{g}", out=s)

        def check(g):
            assert s[N - 1] == f"item-{N - 1}-generation-{g}"
    write(0)
    r0 = _rss()
    if case.startswith("ckernels"):
        arena = arena_stats(s._a)
    t0 = time.perf_counter()
    for g in range(1, rewrites + 1):
        write(g)
    dt = time.perf_counter() - t0
    check(rewrites)
    out = {"rss_growth": _rss() - r0, "rewrites": rewrites, "per_rewrite_ms": dt / rewrites * 1e3}
    if case.startswith("ckernels"):
        out["arena_first"] = arena[0]
        out["arena_last"] = arena_stats(s._a)[0]
    del keep
    return out


def main() -> None:
    import numpy as np

    import ckernels
    print(f"ckernels {ckernels.__version__}: {N} strings 'item-<i>-generation-<g>' rewritten "
          f"in place, numpy {np.__version__}, {os.cpu_count()} CPUs; each case in a fresh "
          "interpreter")
    results = {}
    for case in CASES:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case],
                           capture_output=True, text=True, check=True)
        results[case] = r = json.loads(p.stdout.strip().splitlines()[-1])
        arena = (f"   arena {r['arena_first'] / 1e6:7.2f} -> {r['arena_last'] / 1e6:8.2f} MB"
                 if "arena_first" in r else "")
        print(f"{case:22s} {r['rewrites']:5d} rewrites: RSS {r['rss_growth'] / 1e6:+9.2f} MB"
              f"{arena}   {r['per_rewrite_ms']:7.2f} ms/rewrite")
    ours = results["ckernels"]["rss_growth"]
    base = max(results["StringDType (numpy)"]["rss_growth"], 1 << 20)
    print(f"ckernels RSS growth / StringDType (numpy) growth (floor 1 MB): {ours / base:5.2f}x"
          f"   target <= 2x: {'met' if ours / base <= 2 else 'NOT MET'}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2])))
    else:
        main()
