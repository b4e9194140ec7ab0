"""Jitted functions for the Dask tests (tests/python/interop/test_dask.py), in an
importable module: Dask workers unpickle them by reference (module and
qualified name), so this directory is on the workers' PYTHONPATH."""

import os

import ckernels


@ckernels.jit("float64(float64, float64)")
def axpy(x, y):
    return 2.0 * x + y


@ckernels.jit("float64(float64)")
def reciprocal(x):
    return 1.0 / x          # CKZeroDivisionError at 0 (the default error model)


@ckernels.jit("float64(float64)")
def checked_sqrt(x):
    if x < 0.0:
        raise ValueError("checked_sqrt: negative input")
    return x ** 0.5


@ckernels.jit("string(string)")
def shout(s):
    return s.upper() + "!"


def worker_facts():
    """What a worker process says about itself: pid, library threads, the
    thread rule's answer, the cores it may run on, CK_NUM_THREADS."""
    import ckernels.dask as ckd
    rule = ckd.worker_threads()
    return {"pid": os.getpid(), "threads": ckernels.get_num_threads(),
            "rule": rule, "cores": len(os.sched_getaffinity(0)),
            "env": os.environ.get("CK_NUM_THREADS"),
            "omp": os.environ.get("OMP_NUM_THREADS")}


def wrong_arity():
    """A library error (not a kernel's): an operation called with one operand."""
    return ckernels.ops.add(1.0)


@ckernels.jit(["int64(int64, int64)", "float64(float64, float64)"], identity=0)
def plus(x, y):
    return x + y


@ckernels.jit("float64(float64, float64)")
def bigger(x, y):       # no identity: reductions one axis at a time
    return x if x > y else y


@ckernels.jit("float64(int64)")
def half(n):
    return n / 2
