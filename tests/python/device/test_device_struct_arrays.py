"""Struct arrays on devices: a ckernels struct array up (``ctx.array``) and
down (``.to_host()``, ``.get()``), struct arguments and struct results of
jitted functions on OpenCL (PoCL) against the CPU jit over the same data."""

import numpy as np
import pytest

import ckernels

P = "{x: float64, y: float64}"


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


@ckernels.jit(f"{P}(float64, float64)")
def point(r, t):
    return (r * 2.0, t - r)


@ckernels.jit(f"float64({P})")
def norm1(p):
    return abs(p.x) + abs(p.y)


def test_struct_arrays_up_and_down(ctx):
    a = ckernels.array([{"x": 1.0, "y": 2.0}, {"x": -3.0, "y": 0.5}, {"x": 0.0, "y": -0.0}])
    d = ctx.array(a)
    back = d.to_host()
    assert isinstance(back, ckernels.Array) and str(back.type) == str(a.type)
    assert back.tolist() == a.tolist()
    np.testing.assert_array_equal(d.get(), np.asarray(a))


def test_struct_results_and_arguments_match_the_cpu(ctx):
    r = np.array([0.0, 1.5, -2.0, 1e300], np.float64)
    t = np.array([1.0, -0.5, 3.0, -1e300], np.float64)
    dev = point(ctx.array(r), ctx.array(t))
    assert dev.to_host().tolist() == point(r, t).tolist()
    assert norm1(dev).get().tolist() == norm1(point(r, t)).tolist()
