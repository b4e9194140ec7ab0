"""The kernel of benchmarks/bench_dask.py, in a module the Dask workers import
(bench_dask.py puts this folder on their PYTHONPATH): the same transcendental
function as a ckernels jitted function and as a ``numba.vectorize`` ufunc."""

import math

import numba

import ckernels


def _trans(x):
    return math.exp(-x * x) * math.sin(3.0 * x) + math.log1p(x * x)


ck_trans = ckernels.jit("float64(float64)", error_model="numpy", cache=True)(_trans)
nb_trans = numba.vectorize(["float64(float64)"], cache=True)(_trans)


def trans_block(block):
    """The ckernels kernel on one NumPy chunk (the map_blocks form)."""
    return ck_trans(block)


def nb_block(block):
    """``numba.vectorize`` on one NumPy chunk: the way to hand it to Dask.  A
    graph holding the DUFunc itself pickles it by value into every task (it
    rebuilds on each worker per task); this module-level function pickles by
    reference, so the baseline pays no per-task rebuild."""
    return nb_trans(block)
