"""Dictionary-encoded (categorical) columns, ratios in one run:

* a jitted string function (``s.upper() + "!"``, its signature
  ``string(dictionary[int32, string])``) over 1M dictionary rows of
  100 distinct values (it runs once per value; the result stays
  dictionary-encoded) / the same function over the decoded column
  (target <= 0.2x);
* a jitted numeric function (``len(s)``) over the same rows (once per value,
  gathered in C) / over the decoded column;
* ``ckernels.ops.equal(col, "w7")`` on the dictionary column / on the
  decoded column through ``pyarrow.compute.equal`` (the peer);
* ``ckernels.asarray`` of a 10M-row Arrow dictionary column / a copy of its
  index buffer (``numpy.copy``; target <= 0.05x: the import shares it).

    python benchmarks/bench_dictionary.py      (CK_BENCH_REPS, CK_BENCH_N)

Times are the best of REPS calls after a warm-up (compilation); ratios are
time / the baseline's time in the same run.  The machine may be shared:
repeat and compare best-of-N figures.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import ckernels
from _timing import best, report

N = int(os.environ.get("CK_BENCH_N", 1_000_000))


@ckernels.jit("string(dictionary[int32, string])")   # compiled for string; once per value
def shout(s):
    return s.upper() + "!"


@ckernels.jit("int64(string)")
def width(s):
    return len(s)


def column(n: int, distinct: int = 100) -> pa.DictionaryArray:
    rng = np.random.default_rng(0)
    words = pa.array([f"word number {i:03d}" for i in range(distinct)])
    idx = pa.array(rng.integers(0, distinct, n, dtype=np.int32))
    return pa.DictionaryArray.from_arrays(idx, words)


def main() -> None:
    src = column(N)
    col = ckernels.asarray(src)
    dec = ckernels.asarray(src.dictionary_decode())
    print(f"dictionary columns: {N:,} rows over 100 values")
    t_dict = best(lambda: shout(col))
    t_dec = best(lambda: shout(dec))
    report("jitted string fn, dictionary column", t_dict, "decoded column", t_dec)
    t_dict = best(lambda: width(col))
    t_dec = best(lambda: width(dec))
    report("jitted len(s), dictionary column", t_dict, "decoded column", t_dec)
    plain = src.dictionary_decode()
    t_eq = best(lambda: ckernels.ops.equal(col, "word number 007"))
    t_pc = best(lambda: pc.equal(plain, "word number 007"))
    report("ops.equal(col, scalar), dictionary", t_eq, "pyarrow.compute.equal, decoded", t_pc)
    big = column(10 * N)
    codes = big.indices.to_numpy()
    t_in = best(lambda: ckernels.asarray(big))
    t_copy = best(lambda: codes.copy())
    report(f"asarray({10 * N:,}-row Arrow dictionary)", t_in, "numpy copy of its indices",
           t_copy)


if __name__ == "__main__":
    main()
