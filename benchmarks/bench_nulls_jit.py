"""Jitted functions over missing values (docs/nulls.md, "Jitted functions"),
ratios against the alternative in the same run (> 1: slower):

* jitted ``x * 2.0 + 1.0`` over 1M ``?float64`` (5% nulls) on 1 library
  thread / the same on 1M ``float64`` (target <= 1.2x: the cost of carrying
  the nulls);
* the same / ``pc.add(pc.multiply(a, 2.0), 1.0)`` (target <= 1.0x);
* jitted ``s + "-x"`` over 1M ``?string`` (5% nulls), the result to
  ``pa.array`` / ``pc.binary_join_element_wise(a, "-x", "")`` (<= 1.0x);
* the same over NumPy ``StringDType(na_object=None)`` (the ufunc loop keeping
  the nulls) / on a ``StringDType`` without nulls (the cost of the nulls);
* a null-aware ``?float64(?float64)`` (one element at a time) / the
  propagating form (informative: no target).

    python benchmarks/bench_nulls_jit.py          (CK_BENCH_REPS, CK_BENCH_ROWS)

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
from _timing import REPS, best, report  # noqa: E402

ROWS = int(os.environ.get("CK_BENCH_ROWS", 1_000_000))


@ckernels.jit("float64(float64)")
def affine(x):
    return x * 2.0 + 1.0


@ckernels.jit("?float64(?float64)")
def affine_aware(x):
    if x is None:
        return None
    return x * 2.0 + 1.0


@ckernels.jit("string(string)")
def suffix(s):
    return s + "-x"


def main() -> None:
    rng = np.random.default_rng(0)
    mask = rng.random(ROWS) < 0.05
    values = rng.random(ROWS)
    pa_f = pa.array(values, mask=mask)
    ck_f = ckernels.asarray(pa_f)
    ck_plain = ckernels.asarray(values)
    words = np.array([f"w{i % 9973}" for i in range(ROWS)], dtype=object)
    pa_s = pa.array(words, type=pa.string(), mask=mask)
    ck_s = ckernels.asarray(pa_s)
    sna = np.array(np.where(mask, None, words), dtype=np.dtypes.StringDType(na_object=None))
    splain = np.array(words, dtype=np.dtypes.StringDType())
    print(f"{ROWS} rows, 5% nulls, best of {REPS}")

    old = ckernels.get_num_threads()
    try:
        ckernels.set_num_threads(1)
        t_opt = best(lambda: affine(ck_f))
        t_plain = best(lambda: affine(ck_plain))
    finally:
        ckernels.set_num_threads(old)
    report("jit x*2+1 on ?float64 (1 thread)", t_opt, "the same on float64", t_plain)
    t_pc = best(lambda: pc.add(pc.multiply(pa_f, 2.0), 1.0))
    t_opt_all = best(lambda: affine(ck_f))
    report("jit x*2+1 on ?float64", t_opt_all, "pc.add(pc.multiply(a, 2.0), 1.0)", t_pc)

    t_s = best(lambda: pa.array(suffix(ck_s)))
    t_pcs = best(lambda: pc.binary_join_element_wise(pa_s, "-x", ""))
    report("jit s+'-x' on ?string -> pa.array", t_s, "pc.binary_join_element_wise", t_pcs)
    t_sna = best(lambda: suffix(sna))
    t_splain = best(lambda: suffix(splain))
    report("jit s+'-x' on StringDType(na_object)", t_sna, "the same without nulls", t_splain)

    t_aware = best(lambda: affine_aware(ck_f))
    report("null-aware ?float64(?float64)", t_aware, "propagating float64(float64)", t_opt_all)


if __name__ == "__main__":
    main()
