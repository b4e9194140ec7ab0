"""Strings across boundaries: ratios against the best alternative in the same
run, both sides in this process, back to back.

    python benchmarks/bench_strings.py                 # every section
    python benchmarks/bench_strings.py numpy ragged    # some sections
    (CK_BENCH_STRINGS_N, CK_BENCH_REPS)

Sections (the target after each ratio):
  numpy             1M short strings: ckernels -> StringDType (np.asarray) / StringDType
                    astype copy (<= 2x); tolist() / StringDType tolist() (<= 1.5x);
                    list[str] -> ckernels.array / np.array(list, dtype=StringDType())
                    (<= 1.5x)
  ufunc             jitted len(s) over 1M StringDType strings / np.strings.str_len
                    (<= 2x)
  pandas            a pandas Series of 1M ints -> f"item-{i}" Series by a jitted
                    function / pandas "item-" + s.astype(str) (<= 0.5x)
  ragged            tolist() of 100k ragged int64 rows (mean 10) /
                    awkward.Array.to_list() (<= 1.0x)
  arrow_export      ckernels -> pa.array (1M strings) / pa.array(StringDType array)
  arrow_end_to_end  pandas Series of 1M ints -> f"item-{i}" by a jitted function
                    -> pyarrow / pc.binary_join_element_wise over pc.cast

Ratios are time / baseline time (< 1: faster than the baseline).
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import REPS, best, report  # noqa: E402

import ckernels  # noqa: E402

N = int(os.environ.get("CK_BENCH_STRINGS_N", 1_000_000))
T = np.dtypes.StringDType()


@ckernels.jit("string(int64)")
def label(i):
    return f"item-{i}"


@ckernels.jit("int64(string)")
def length(s):
    return len(s)


def target(name: str, t: float, base_name: str, t_base: float, goal: float) -> None:
    """``report`` plus the target for the ratio."""
    report(name, t, base_name, t_base)
    print(f"{'':46s} target <= {goal}x: {'met' if t / t_base <= goal else 'NOT MET'}")


def bench_numpy() -> None:
    words = [f"item-{i}" for i in range(N)]
    sd = np.array(words, dtype=T)
    a = ckernels.array(words)
    print(f"-- {N} short strings 'item-<i>': ckernels <-> NumPy StringDType and lists --")
    target("np.asarray(ckernels strings) -> StringDType", best(lambda: np.asarray(a)),
           "StringDType astype(StringDType()) copy", best(lambda: sd.astype(T)), 2.0)
    target("ckernels strings .tolist()", best(lambda: a.tolist()),
           "StringDType .tolist()", best(lambda: sd.tolist()), 1.5)
    target("ckernels.array(list[str])", best(lambda: ckernels.array(words)),
           "np.array(list[str], dtype=StringDType())",
           best(lambda: np.array(words, dtype=T)), 1.5)


def bench_ufunc() -> None:
    sd = np.array([f"item-{i}" for i in range(N)], dtype=T)
    assert (length(sd) == np.strings.str_len(sd)).all()
    print(f"-- jitted len(s) over {N} StringDType strings (the string ufunc loop), "
          f"{ckernels.get_num_threads()} library thread(s) --")
    target("jitted len(s) on StringDType", best(lambda: length(sd)),
           "np.strings.str_len", best(lambda: np.strings.str_len(sd)), 2.0)


def bench_pandas() -> None:
    import pandas as pd
    s = pd.Series(np.arange(N), name="n")
    got = label(s)
    assert isinstance(got, pd.Series) and got.iloc[7] == "item-7"
    print(f"-- end to end: a pandas Series of {N} ints -> 'item-<i>' Series --")
    target("jitted f'item-{i}' on the Series", best(lambda: label(s)),
           'pandas "item-" + s.astype(str)', best(lambda: "item-" + s.astype(str)), 0.5)


def bench_ragged() -> None:
    import awkward as ak
    rows = 100_000
    lens = np.random.default_rng(0).poisson(10, rows)
    data = [list(range(k)) for k in lens]
    a = ckernels.array(data)
    ak_arr = ak.Array(data)
    assert a.tolist() == ak_arr.to_list() == data
    print(f"-- tolist() of {rows} ragged int64 rows (mean length {lens.mean():.1f}) --")
    target("ckernels var-dim array .tolist()", best(lambda: a.tolist()),
           "awkward.Array.to_list()", best(lambda: ak_arr.to_list()), 1.0)


def bench_arrow_export() -> None:
    import pyarrow as pa
    idx = ckernels.asarray(np.arange(N))
    a = label(idx)                                   # ckernels strings (the arena)
    s = a.to_numpy()                                 # the same as StringDType
    assert pa.array(a).to_pylist()[:2] == ["item-0", "item-1"]
    print(f"-- {N} strings 'item-<i>' to pyarrow --")
    t_base = best(lambda: pa.array(s))
    t_default = best(lambda: pa.array(a))
    report("pa.array(ckernels) large_utf8 (the default: text copied once)", t_default,
           "pa.array(StringDType array)", t_base)
    t_view = best(lambda: pa.array(a, type=pa.string_view()))
    report("pa.array(ckernels, type=pa.string_view()) (no text copy)", t_view,
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


SECTIONS = {"numpy": bench_numpy, "ufunc": bench_ufunc, "pandas": bench_pandas,
            "ragged": bench_ragged, "arrow_export": bench_arrow_export,
            "arrow_end_to_end": bench_arrow_end_to_end}


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
