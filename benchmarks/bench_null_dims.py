"""Option elements under dims (docs/nulls.md, "Option elements under dims"),
ratios against the alternative in the same run (> 1: slower):

* ``float64(var * ?float64)``, the sum of each row's values skipping nulls,
  over 100k Arrow list rows of ~10 ``?float64`` (5% nulls) / the same
  function over the rows with the nulls filled, ``float64(var * float64)``
  (the cost of reading the bits);
* the same / pyarrow: ``pc.list_flatten`` + ``pc.list_parent_indices`` +
  a ``group_by`` sum (what pyarrow offers for a per-row sum);
* ``float64(var * float64)`` on the rows with nulls (the propagation
  variant: a null for each row holding one) / the same on the filled rows;
* ``float64(?var * ?float64)`` over the rows with 5% null rows / the same
  function over the rows without null rows (the cost of the rows' bits);
* ``var * ?float64(var * ?float64)``, a forward fill appended row by row
  (``out.append``), over the rows with nulls / ``var * float64(var *
  float64)`` appending the same values on the filled rows (the cost of a
  result with nulls: records, then one copy into Arrow's layout).

    python benchmarks/bench_null_dims.py          (CK_BENCH_REPS, CK_BENCH_ROWS)

Times are the best of REPS calls.  The machine is shared: numbers from a
loaded machine are noise, the ratios of one run are what counts.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import ckernels

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best, report  # noqa: E402

ROWS = int(os.environ.get("CK_BENCH_ROWS", 100_000))


@ckernels.jit("float64(var * ?float64)")
def opt_sum(row):
    s = 0.0
    for v in row:
        if v is not None:
            s += v
    return s


@ckernels.jit("float64(?var * ?float64)")
def rows_sum(row):
    if row is None:
        return -1.0
    s = 0.0
    for v in row:
        if v is not None:
            s += v
    return s


@ckernels.jit("float64(var * float64)")
def plain_sum(row):
    s = 0.0
    for v in row:
        s += v
    return s


@ckernels.jit("var * ?float64(var * ?float64)")
def opt_ffill(row, out):
    last = None
    for v in row:
        if v is not None:
            last = v
        out.append(last)


@ckernels.jit("var * float64(var * float64)")
def plain_copy(row, out):
    for v in row:
        out.append(v)


def main() -> None:
    rng = np.random.default_rng(0)
    lens = rng.integers(0, 20, ROWS)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    values = rng.random(int(offsets[-1]))
    mask = rng.random(values.size) < 0.05
    flat = pa.array(values, mask=mask)
    rows = pa.ListArray.from_arrays(pa.array(offsets), flat)
    filled = pa.ListArray.from_arrays(pa.array(offsets), pc.fill_null(flat, 0.0))
    ck_rows, ck_filled = ckernels.asarray(rows), ckernels.asarray(filled)
    assert np.allclose(np.asarray(opt_sum(ck_rows)), np.asarray(plain_sum(ck_filled)))

    def pa_sum():
        parents = pc.list_parent_indices(rows)
        t = pa.table({"p": parents, "v": pc.list_flatten(rows)})
        return t.group_by("p").aggregate([("v", "sum")])

    t_opt = best(lambda: opt_sum(ck_rows))
    t_plain = best(lambda: plain_sum(ck_filled))
    report("float64(var * ?float64) row sums", t_opt, "float64(var * float64), filled", t_plain)
    report("float64(var * ?float64) row sums", t_opt, "pyarrow flatten + group_by sum",
           best(pa_sum))
    t_prop = best(lambda: plain_sum(ck_rows))
    report("float64(var * float64) on rows with nulls", t_prop, "the same on filled rows",
           t_plain)
    row_mask = pa.array(rng.random(ROWS) < 0.05)
    null_rows = pa.ListArray.from_arrays(pa.array(offsets), flat, mask=row_mask)
    ck_null_rows = ckernels.asarray(null_rows)
    report("float64(?var * ?float64), 5% null rows", best(lambda: rows_sum(ck_null_rows)),
           "the same without null rows", best(lambda: rows_sum(ck_rows)))
    report("var * ?float64 result (ffill, append)", best(lambda: opt_ffill(ck_rows)),
           "var * float64 result (append), filled", best(lambda: plain_copy(ck_filled)))


if __name__ == "__main__":
    main()
