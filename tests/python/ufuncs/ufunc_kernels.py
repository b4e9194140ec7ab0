"""Jitted functions the ufunc tests share (tests/python/ufuncs/test_dispatch.py and
test_jit_ufunc.py): one definition, compiled once per process, importable by
reference (module and qualified name) as pickling and Dask need."""

import ckernels


@ckernels.jit(["float64(float64, float64)"])
def div(x, y):
    return x / y


@ckernels.jit(["float64(float64, float64)"], error_model="numpy")
def div_ieee(x, y):
    return x / y


@ckernels.jit(["float64(float64)"])
def checked(x):
    if x > 100.0:
        raise ValueError("x is too large")
    return x + 1.0
