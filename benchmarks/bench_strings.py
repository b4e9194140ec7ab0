"""Variable-length data across the Python boundary (issue 21 §5): ckernels
against the best alternative, both sides in this process, back to back.

    python benchmarks/bench_strings.py [section ...]   (CK_BENCH_N, CK_BENCH_REPS)

Sections (all by default):

* ``numpy``: 1M short strings ckernels -> ``StringDType`` (``np.asarray``) /
  ``StringDType`` ``astype`` copy (target <= 2x); ``tolist()`` /
  ``StringDType.tolist()`` (<= 1.5x); ``list[str]`` -> ``ckernels.array`` /
  ``np.array(list, dtype=StringDType())`` (<= 1.5x).
* ``ufunc``: jitted ``len(s)`` over 1M ``StringDType`` strings /
  ``np.strings.str_len`` (<= 2x).
* ``pandas``: a Series of 1M ints -> ``f"item-{i}"`` Series through a jitted
  function / pandas ``"item-" + s.astype(str)`` (<= 0.5x).
* ``ragged``: ``tolist()`` of 100k ragged rows (mean length 10) /
  ``awkward.Array.to_list()`` (<= 1.0x).

The Arrow rows of the issue (ckernels -> ``pa.array``, the end-to-end
pipeline into pyarrow) belong to the Arrow interchange and join this script
as their own section.

Ratios are time / baseline time in the same run (< 1: faster than the
baseline); each line ends with the issue's target.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import ckernels
from _timing import best

N = min(int(os.environ.get("CK_BENCH_N", 1_000_000)), 1_000_000)
REPS = int(os.environ.get("CK_BENCH_REPS", 5))
T = np.dtypes.StringDType()


def row(name: str, t: float, base_name: str, t_base: float, target: float) -> None:
    ratio = t / t_base
    mark = "ok" if ratio <= target else "OVER"
    print(f"{name:44s} {t * 1e3:9.2f} ms   {base_name:40s} {t_base * 1e3:9.2f} ms   "
          f"ratio {ratio:5.2f}x (target <= {target}x: {mark})")


@ckernels.jit(["int64(string)"])
def ck_len(s):
    return len(s)


@ckernels.jit(["string(int64)"])
def ck_item(i):
    return f"item-{i}"


def bench_numpy() -> None:
    print(f"-- {N} short strings 'item-<i>': ckernels <-> NumPy StringDType and lists --")
    words = [f"item-{i}" for i in range(N)]
    sd = np.array(words, dtype=T)
    a = ckernels.array(words)
    row("np.asarray(ckernels array) -> StringDType", best(lambda: np.asarray(a), REPS),
        "StringDType astype(StringDType()) copy", best(lambda: sd.astype(T), REPS), 2.0)
    row("ckernels array .tolist()", best(lambda: a.tolist(), REPS),
        "StringDType .tolist()", best(lambda: sd.tolist(), REPS), 1.5)
    row("ckernels.array(list[str])", best(lambda: ckernels.array(words), REPS),
        "np.array(list[str], dtype=StringDType())",
        best(lambda: np.array(words, dtype=T), REPS), 1.5)


def bench_ufunc() -> None:
    print(f"-- jitted len(s) over {N} StringDType strings (the string ufunc loop) --")
    sd = np.array([f"item-{i}" for i in range(N)], dtype=T)
    assert (ck_len(sd) == np.strings.str_len(sd)).all()
    row("jitted len(s) on StringDType", best(lambda: ck_len(sd), REPS),
        "np.strings.str_len", best(lambda: np.strings.str_len(sd), REPS), 2.0)


def bench_pandas() -> None:
    try:
        import pandas as pd
    except ImportError:
        print("-- pandas not installed: skipped --")
        return
    print(f"-- end to end: a pandas Series of {N} ints -> 'item-<i>' Series --")
    s = pd.Series(np.arange(N), name="n")
    got = ck_item(s)
    assert isinstance(got, pd.Series) and got.iloc[7] == "item-7"
    row("jitted f'item-{i}' on the Series", best(lambda: ck_item(s), REPS),
        'pandas "item-" + s.astype(str)', best(lambda: "item-" + s.astype(str), REPS), 0.5)


def bench_ragged() -> None:
    try:
        import awkward as ak
    except ImportError:
        print("-- awkward not installed: skipped (pip install awkward) --")
        return
    rows = 100_000
    rng = np.random.default_rng(0)
    lens = rng.poisson(10, rows)
    print(f"-- tolist() of {rows} ragged int64 rows (mean length {lens.mean():.1f}) --")
    data = [list(range(k)) for k in lens]
    a = ckernels.array(data)
    ak_arr = ak.Array(data)
    assert a.tolist() == ak_arr.to_list() == data
    row("ckernels var-dim array .tolist()", best(lambda: a.tolist(), REPS),
        "awkward.Array.to_list()", best(lambda: ak_arr.to_list(), REPS), 1.0)


SECTIONS = {"numpy": bench_numpy, "ufunc": bench_ufunc, "pandas": bench_pandas,
            "ragged": bench_ragged}


def main(argv) -> None:
    names = argv or list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    print(f"ckernels {ckernels.__version__}, numpy {np.__version__}, "
          f"{ckernels.get_num_threads()} library thread(s)")
    for n in names:
        SECTIONS[n]()


if __name__ == "__main__":
    main(sys.argv[1:])
