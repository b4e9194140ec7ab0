"""The contiguous variant of a jitted function's device kernel.

A call whose output and array operands are all contiguous (one coalesced
dimension, byte stride = element size) launches ``ck_kernel_contig`` (plain
indexing); every other layout -- strided, reversed, offset views that are not
contiguous, broadcast operands, transposed 2-d arrays -- the general kernel.
Both must write the same values and report an error at the same element.
Skipped without an OpenCL platform (the CUDA text of both kernels is checked
against each other through the host shim in ``jit/test_cuda_codegen.py``)."""

import numpy as np
import pytest

import ckernels
from ckernels import errors
from ckernels.context.device_program import CONTIG_KERNEL_NAME, KERNEL_NAME
from ckernels.jit.device import target


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


@ckernels.jit(["float32(float32, float32)", "int64(int64, int64)"])
def axpy(x, y):
    return 2 * x + y


@ckernels.jit("int64(int64, int64)")
def idiv(a, b):
    return a // b


@ckernels.jit("bool(float64)")
def positive(x):
    return x > 0


def _kernel_of_last_call(fn, ctx, sig):
    """The kernel name the plan of ``fn``'s most recent layout launches."""
    comp = fn.compiled[sig]
    plans = target(ctx.kind).plans(comp, ctx)
    return list(plans.values())[-1].kernel.decode()


def test_contiguous_operands_take_the_contiguous_kernel(ctx):
    x = np.arange(1000, dtype=np.float32)
    y = np.linspace(-5, 5, 1000, dtype=np.float32)
    dx, dy = ctx.array(x), ctx.array(y)
    got = axpy(dx, dy)
    np.testing.assert_array_equal(got.to_numpy(), 2 * x + y)
    assert _kernel_of_last_call(axpy, ctx, ("float32", "float32")) == CONTIG_KERNEL_NAME
    out = ctx.empty((1000,), "float32")
    axpy(dx, dy, out=out)
    np.testing.assert_array_equal(out.to_numpy(), 2 * x + y)
    assert _kernel_of_last_call(axpy, ctx, ("float32", "float32")) == CONTIG_KERNEL_NAME


def test_two_dimensional_c_contiguous_coalesces_to_the_contiguous_kernel(ctx):
    x = np.arange(60, dtype=np.int64).reshape(6, 10)
    dx = ctx.array(x)
    np.testing.assert_array_equal(axpy(dx, dx).to_numpy(), 3 * x)
    assert _kernel_of_last_call(axpy, ctx, ("int64", "int64")) == CONTIG_KERNEL_NAME


@pytest.mark.parametrize("layout", ["strided", "reversed", "offset", "broadcast_row",
                                    "transposed", "scalar", "out_strided"])
def test_other_layouts_match_numpy(ctx, layout):
    """Every layout gives NumPy's values; only all-contiguous ones take the
    contiguous kernel (an offset contiguous view does: its offset is a
    multiple of the element size)."""
    base = np.arange(240, dtype=np.int64).reshape(12, 20)
    other = (np.arange(240, dtype=np.int64) * 7 - 800).reshape(12, 20)
    db, do = ctx.array(base), ctx.array(other)
    want_contig = False
    if layout == "strided":
        a, b, ha, hb = db[:, ::2], do[:, ::2], base[:, ::2], other[:, ::2]
    elif layout == "reversed":
        a, b, ha, hb = db[::-1], do[::-1], base[::-1], other[::-1]
    elif layout == "offset":
        a, b, ha, hb = db[3:], do[3:], base[3:], other[3:]
        want_contig = True
    elif layout == "broadcast_row":
        a, b, ha, hb = db, do[0], base, other[0]
    elif layout == "transposed":
        a, b, ha, hb = db.T, do.T, base.T, other.T
    elif layout == "scalar":
        a, b, ha, hb = db, 5, base, 5
        want_contig = True       # a scalar is passed by value
    else:
        a, b, ha, hb = db, do, base, other
    if layout == "out_strided":
        big = ctx.empty((12, 40), "int64")
        out = big[:, ::2]
        axpy(a, b, out=out)
        got = out.to_numpy()
    else:
        got = axpy(a, b).to_numpy()
    np.testing.assert_array_equal(got, 2 * ha + hb)
    kernel = _kernel_of_last_call(axpy, ctx, ("int64", "int64"))
    assert kernel == (CONTIG_KERNEL_NAME if want_contig else KERNEL_NAME), layout


def test_bool_results_on_the_contiguous_kernel(ctx):
    x = np.random.default_rng(5).standard_normal(513)
    if not ctx.supports_fp64:
        pytest.skip("no fp64 on this device")
    got = positive(ctx.array(x)).to_numpy()
    np.testing.assert_array_equal(got, x > 0)
    assert _kernel_of_last_call(positive, ctx, ("float64",)) == CONTIG_KERNEL_NAME


@pytest.mark.parametrize("strided", [False, True])
def test_errors_name_the_same_element(ctx, strided):
    a = np.arange(1, 301, dtype=np.int64)
    b = np.ones(600, dtype=np.int64)
    b[2 * 137] = 0
    db = ctx.array(b)
    operand = db[::2] if strided else ctx.array(b[::2].copy())
    with pytest.raises(errors.CKZeroDivisionError, match=r"element 137\b"):
        idiv(ctx.array(a), operand)
    want = KERNEL_NAME if strided else CONTIG_KERNEL_NAME
    assert _kernel_of_last_call(idiv, ctx, ("int64", "int64")) == want
