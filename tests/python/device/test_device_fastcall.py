"""Repeated jitted calls on device arrays (ckernels.jit.fastcall): a call that
differs from a remembered one in anything that decides it -- element types,
shapes, strides, the context, out=, scalar kinds, the compiled signatures --
must not run the remembered plan; errors raised inside still come back at
the call, through the merged launch-and-read too (ck_context_launch_read)."""

import gc
import math
import weakref

import numpy as np
import pytest

import ckernels
from ckernels.device import launch
from ckernels.jit import fastcall

# module level: compiled once for every test here
two = ckernels.jit(["float32(float32)", "float64(float64)"])(lambda x: x * 2 + 1)
axpy = ckernels.jit("float64(float64, float64, float64)")(lambda a, x, y: a * x + y)
div = ckernels.jit("int64(int64)")(lambda x: 10 // x)
wave = ckernels.jit("float64(float64)")(lambda x: math.sin(x) * 1.5 + x)


def _hits(f):
    return len(getattr(f, fastcall._ATTR, None) or {})


def test_types_then_other_types(device_ctx):
    x64 = np.linspace(0, 1, 37)
    a64 = device_ctx.array(x64)
    a32 = device_ctx.array(x64.astype(np.float32))
    for _ in range(2):   # the second round from remembered decisions
        r32 = two(a32)
        r64 = two(a64)
        assert r32.dtype == np.float32 and r64.dtype == np.float64
        np.testing.assert_array_equal(r32.get(), x64.astype(np.float32) * 2 + 1)
        np.testing.assert_array_equal(r64.get(), x64 * 2 + 1)
    assert _hits(two) >= 2


def test_contiguous_then_strided_then_2d(device_ctx):
    x = np.arange(24, dtype=np.float64)
    a = device_ctx.array(x)
    for _ in range(2):
        np.testing.assert_array_equal(two(a).get(), x * 2 + 1)
        s = a[::3]
        np.testing.assert_array_equal(two(s).get(), x[::3] * 2 + 1)
        r = a[::-2]
        np.testing.assert_array_equal(two(r).get(), x[::-2] * 2 + 1)
        m = a.reshape(4, 6).T
        got = two(m)
        assert got.shape == (6, 4)
        np.testing.assert_array_equal(got.get(), x.reshape(4, 6).T * 2 + 1)
        np.testing.assert_array_equal(two(a[:5]).get(), x[:5] * 2 + 1)


def test_scalars_python_and_numpy(device_ctx):
    x = np.linspace(-1, 1, 10)
    y = np.arange(10.0)
    ax, ay = device_ctx.array(x), device_ctx.array(y)
    for _ in range(2):
        np.testing.assert_array_equal(axpy(2, ax, ay).get(), 2 * x + y)
        np.testing.assert_array_equal(axpy(2.5, ax, ay).get(), 2.5 * x + y)
        np.testing.assert_array_equal(axpy(np.float32(0.5), ax, ay).get(), 0.5 * x + y)
        np.testing.assert_array_equal(axpy(np.int8(-3), ax, ay).get(), -3 * x + y)
        np.testing.assert_array_equal(axpy(ax, 3, ay).get(), 3 * x + y)
        # broadcasting: a row against a column
        got = axpy(1.0, ax.reshape(10, 1), ay.reshape(1, 10))
        np.testing.assert_array_equal(got.get(), x.reshape(10, 1) + y.reshape(1, 10))


def test_out_then_none(device_ctx):
    x = np.arange(8.0)
    a = device_ctx.array(x)
    out = device_ctx.empty(8, np.float64)
    for _ in range(2):
        res = two(a, out=out)
        assert res is out
        np.testing.assert_array_equal(out.get(), x * 2 + 1)
        fresh = two(a)
        assert fresh is not out and fresh.buffer is not out.buffer
        np.testing.assert_array_equal(fresh.get(), x * 2 + 1)
        # out= overlapping the input (through a temporary, as NumPy)
        b = device_ctx.array(x)
        two(b[:7], out=b[1:])
        np.testing.assert_array_equal(b.get(), np.concatenate([[0.0], x[:7] * 2 + 1]))
        # out= of the other dtype is refused each time, never run
        with pytest.raises(ckernels.errors.CKTypeError):
            two(a, out=device_ctx.empty(8, np.float32))


def test_two_contexts(device_ctx, new_device_context):
    target = "opencl" if device_ctx.kind == "opencl" else "cuda"
    other = new_device_context(target)
    x = np.arange(6.0)
    a1, a2 = device_ctx.array(x), other.array(x + 10)
    for _ in range(2):
        r1, r2 = two(a1), two(a2)
        assert r1.context is device_ctx and r2.context is other
        np.testing.assert_array_equal(r1.get(), x * 2 + 1)
        np.testing.assert_array_equal(r2.get(), (x + 10) * 2 + 1)
    with pytest.raises(ckernels.errors.InvalidArgumentError, match="different context"):
        axpy(1.0, a1, a2)


def test_entries_keep_no_context_alive(new_opencl_context):
    ctx = new_opencl_context()
    a = ctx.array(np.arange(4.0))
    np.testing.assert_array_equal(wave(a).get(), np.sin(np.arange(4.0)) * 1.5 + np.arange(4.0))
    wave(a)
    ref = weakref.ref(ctx)
    del a, ctx
    gc.collect()
    assert ref() is None      # the remembered call refers to it weakly
    ctx2 = new_opencl_context()
    a2 = ctx2.array(np.arange(4.0))
    np.testing.assert_allclose(wave(a2).get(), np.sin(np.arange(4.0)) * 1.5 + np.arange(4.0))


def test_lazy_function_gains_a_signature(device_ctx):
    lazy = ckernels.jit(lambda x: x + 1)
    ai = device_ctx.array(np.arange(5, dtype=np.int32))
    af = device_ctx.array(np.arange(5, dtype=np.float32))
    first = lazy(ai).dtype    # the type Numba infers for int32 + 1 (int64)
    for _ in range(2):
        ri = lazy(ai)
        assert ri.dtype == first
        np.testing.assert_array_equal(ri.get(), np.arange(5) + 1)
        rf = lazy(af)          # a second compiled signature: not int's plan
        assert rf.dtype.kind == "f"
        np.testing.assert_array_equal(rf.get(), np.arange(5, dtype=np.float32) + 1)


def _errors_come_back(ctx):
    a = ctx.array(np.array([5, 2, 0, 1], dtype=np.int64))
    ok = ctx.array(np.array([5, 2, 1], dtype=np.int64))
    for _ in range(3):
        with pytest.raises(ckernels.errors.CKZeroDivisionError, match="element 2"):
            div(a)
        np.testing.assert_array_equal(div(ok).get(), [2, 5, 10])


def test_errors_come_back_at_the_call(device_ctx):
    _errors_come_back(device_ctx)


def test_errors_through_the_merged_read(new_opencl_context):
    """A context whose flag is not host-addressable reads it behind the
    kernel (ck_context_launch_read) -- CUDA's way, forced here on PoCL."""
    ctx = new_opencl_context()
    st = launch.state(ctx)
    st.flag_host = None
    _errors_come_back(ctx)
    x = np.linspace(0, 2, 9)
    a = ctx.array(x)
    for _ in range(2):
        np.testing.assert_allclose(wave(a).get(), np.sin(x) * 1.5 + x)
