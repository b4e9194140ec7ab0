"""Strings across boundaries: ratios against the best
alternative in the same run.

    python benchmarks/bench_strings.py                 # every section
    python benchmarks/bench_strings.py arrow_export    # one section

Sections:
  arrow_export      ckernels -> pa.array (1M strings) / pa.array(StringDType array)
  arrow_end_to_end  pandas Series of 1M ints -> f"item-{i}" by a jitted function
                    -> pyarrow / pc.binary_join_element_wise over pc.cast
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import REPS, best, report  # noqa: E402

import ckernels  # noqa: E402

N = int(os.environ.get("CK_BENCH_STRINGS_N", 1_000_000))


@ckernels.jit("string(int64)")
def label(i):
    return f"item-{i}"


def bench_arrow_export() -> None:
    import pyarrow as pa
    idx = np.arange(N)
    a = label(idx)                                   # ckernels strings (the arena)
    s = a.to_numpy()                                 # the same as StringDType
    assert pa.array(a).to_pylist()[:2] == ["item-0", "item-1"]
    print(f"-- {N} strings 'item-<i>' to pyarrow --")
    t_base = best(lambda: pa.array(s))
    t_view = best(lambda: pa.array(a))
    report("pa.array(ckernels) string_view (no text copy)", t_view,
           "pa.array(StringDType array)", t_base)
    t_utf8 = best(lambda: pa.array(a, type=pa.string()))
    report("pa.array(ckernels, type=pa.string()) utf8", t_utf8,
           "pa.array(StringDType array)", t_base)


def bench_arrow_end_to_end() -> None:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    ser = pd.Series(np.arange(N))
    label(np.arange(2))

    def ck():
        return pa.array(label(ckernels.asarray(ser.to_numpy())))

    def arrow():
        return pc.binary_join_element_wise("item-", pc.cast(pa.array(ser), pa.string()), "")

    assert ck().to_pylist()[-1] == arrow().to_pylist()[-1] == f"item-{N - 1}"
    print(f"-- pandas Series of {N} ints -> 'item-<i>' in pyarrow --")
    report("jitted f'item-{i}' -> pa.array", best(ck), "pc.binary_join(pc.cast)",
           best(arrow))


SECTIONS = {"arrow_export": bench_arrow_export, "arrow_end_to_end": bench_arrow_end_to_end}


def main(names) -> None:
    print(f"ckernels {ckernels.__version__} string benchmarks, N={N}, best of {REPS}, "
          f"numpy {np.__version__}, {os.cpu_count()} CPUs")
    for name in names or SECTIONS:
        SECTIONS[name]()


if __name__ == "__main__":
    unknown = [a for a in sys.argv[1:] if a not in SECTIONS]
    if unknown:
        sys.exit(f"bench_strings.py: unknown section(s) {unknown}; choose from {sorted(SECTIONS)}")
    main(sys.argv[1:])
