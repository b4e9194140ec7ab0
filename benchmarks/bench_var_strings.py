"""Lists of strings (``var * string``), ratios against the best alternative in
the same run (> 1: slower than the alternative):

* import of an Arrow ``list<string>`` column, 1e6 rows of 0-5 words (a
  quarter of them non-ASCII): ``ckernels.from_arrow`` / ``ak.from_arrow``
  (target <= 1.0x).  Both share Arrow's offsets and text; ckernels also
  writes one ``ck_string {begin, end}`` per string and checks that the text
  is UTF-8 and every offset lies in it;
* the tokens of each row, 1e6 strings of 0-5 words, as a ``var * string``
  result (``return s.split()``) / CPython (``[s.split() for s in texts]``).

    python benchmarks/bench_var_strings.py          (CK_BENCH_REPS, CK_BENCH_ROWS)

Times are the best of REPS calls.  The machine is shared: numbers from a
loaded machine are noise, the ratios of one run are what counts.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import ckernels

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best, report  # noqa: E402

ROWS = int(os.environ.get("CK_BENCH_ROWS", 1_000_000))
WORDS = np.array(["alpha", "beta", "gamma", "délta", "東京", "x", "longer-word-here", "ñandú"])


def _columns(rows: int):
    rng = np.random.default_rng(0)
    lens = rng.integers(0, 6, rows)
    flat = WORDS[rng.integers(0, len(WORDS), int(lens.sum()))].tolist()
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    texts = [" ".join(flat[offsets[i]:offsets[i + 1]]) for i in range(rows)]
    return flat, offsets, texts


@ckernels.jit("var * string(string)")
def tokens(s):
    return s.split()


def main() -> None:
    import awkward as ak
    import pyarrow as pa

    flat, offsets, texts = _columns(ROWS)
    col = pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, type=pa.string()))
    assert ckernels.from_arrow(col[:1000]).tolist() == col[:1000].to_pylist()
    t_ck = best(lambda: ckernels.from_arrow(col))
    t_ak = best(lambda: ak.from_arrow(col))
    report(f"import list<string> {ROWS:.0e} rows", t_ck, "ak.from_arrow", t_ak)

    a = ckernels.array(texts)
    assert tokens(a[:1000]).tolist() == [s.split() for s in texts[:1000]]
    t_tok = best(lambda: tokens(a), reps=3)
    t_py = best(lambda: [s.split() for s in texts], reps=3)
    report(f"tokens var * string {ROWS:.0e} rows", t_tok, "CPython split", t_py)


if __name__ == "__main__":
    main()
