"""Jitted functions with fixed and symbolic core dims on OpenCL (PoCL), with
the CPU jit as the oracle (issue 22, docs/dims.md "Devices"): one work item
per outer element looping over the core dims; dimension variables bound by two
arguments; the library's errors for mismatched sizes; errors raised inside;
what stays CPU-only is a one-line NotSupportedError.  The CUDA C of the same
functions is checked in test_cuda_codegen.py (NVRTC, ptxas, host shim).

Few programs are built (PoCL compiles dominate): dot, cross, matvec and
``checked``, each for one operand layout, shared by every test."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels import errors

import test_jit_dims as cpu     # dot, cross (and the CPU-only rowsum, cumsum, mean_checked)

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@ckernels.jit("M * float64(M * N * float64, N * float64)")
def matvec(m, v, out):
    for i in range(m.shape[0]):
        row = m[i]
        s = 0.0
        for j in range(len(row)):
            s += m[i, j] * v[j] if j % 2 else row[j] * v[j]   # both ways of indexing
        out[i] = s


@ckernels.jit("int64(N * int64, int64)")
def checked(x, k):
    """Errors raised inside: ValueError, ZeroDivisionError, IndexError."""
    if len(x) == 0:
        raise ValueError("empty row")
    return x[k] // k + x[-1] + x.size + x.shape[0]


# (a function that slices: CPU-only)
@ckernels.jit("float64(N * float64)")
def sliced(x):
    return x[1:][0]


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


def to_host(a):
    return a.to_numpy()


def _outcome(f, *args):
    """``(None, result on the host)`` or ``((exception class, message), None)``."""
    try:
        r = f(*args)
    except errors.CKernelError as exc:
        return (type(exc), str(exc)), None
    return None, (r.to_numpy() if hasattr(r, "to_numpy") else np.asarray(r))


@SETTINGS
@given(outer=st.lists(st.integers(0, 3), min_size=0, max_size=2), n=st.integers(0, 5),
       broadcast=st.booleans(), seed=st.integers(0, 2**16))
def test_dot_matches_cpu_jit(ctx, outer, n, broadcast, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*outer, n))
    b = rng.standard_normal((n,) if broadcast else (*outer, n))
    got = to_host(cpu.dot(ctx.array(a), ctx.array(b)))
    want = cpu.dot(a, b)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_dot_on_strided_views_and_out(ctx):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 10))
    x = ctx.array(a)[::2, ::3]          # non-contiguous outer and core dims
    want = cpu.dot(a[::2, ::3], a[::2, ::3])
    np.testing.assert_allclose(to_host(cpu.dot(x, x)), want, rtol=1e-12)
    out = ctx.array(np.zeros(3))
    assert cpu.dot(x, x, out=out) is out
    np.testing.assert_allclose(to_host(out), want, rtol=1e-12)


def test_cross_and_matvec_write_through_the_output_parameter(ctx):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 4, 3))
    np.testing.assert_allclose(to_host(cpu.cross(ctx.array(x), ctx.array(y))),
                               np.cross(x, y), rtol=1e-12)
    m, v = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    got = matvec(ctx.array(m), ctx.array(v))
    assert got.shape == (2, 3)
    np.testing.assert_allclose(to_host(got), m @ v, rtol=1e-12)
    np.testing.assert_allclose(to_host(got), matvec(m, v), rtol=1e-12)   # the CPU jit
    out = ctx.array(np.zeros((2, 3)))
    matvec(ctx.array(m), ctx.array(v), out=out)
    np.testing.assert_allclose(to_host(out), m @ v, rtol=1e-12)


def test_mismatched_sizes_are_the_librarys_errors(ctx):
    """The same messages as the CPU's general path (ck_core_result_type)."""
    cases = [(cpu.dot, (np.ones((2, 3)), np.ones((2, 4)))),       # N is 3 and 4
             (cpu.cross, (np.ones(2), np.ones(2))),                # 3 * wants 3
             (matvec, (np.ones((2, 3)), np.ones(4))),              # N from m and v
             (cpu.dot, (np.ones(()), np.ones(())))]                # too few dims
    for f, args in cases:
        host = [ckernels.asarray(a) for a in args]
        want, _ = _outcome(f, *host)
        got, _ = _outcome(f, *[ctx.array(a) for a in args])
        assert want is not None and got == want, (f, got, want)
    with pytest.raises(errors.CKValueError, match="dimension variable N is 3 in argument 0 "
                                                  "and 4 in argument 1"):
        cpu.dot(ctx.array(np.ones(3)), ctx.array(np.ones(4)))
    with pytest.raises(errors.CKValueError, match="the result"):   # out= of the wrong size
        matvec(ctx.array(np.ones((2, 3))), ctx.array(np.ones(3)), out=ctx.array(np.ones((2, 4))))
    with pytest.raises(errors.CKTypeError, match="element types of dimensioned arguments"):
        cpu.dot(ctx.array(np.ones(3, np.float32)), ctx.array(np.ones(3, np.float32)))


def test_errors_raised_inside_match_the_cpu(ctx):
    rows = np.array([[3, 1, 4], [1, 5, 9]], dtype=np.int64)
    for k in (1, 2, -3, 0):         # 0: ZeroDivisionError
        want = _outcome(checked, rows, k)
        got = _outcome(checked, ctx.array(rows), k)
        assert got[0] == want[0], (k, got, want)
        if want[1] is not None:
            np.testing.assert_array_equal(got[1], want[1])
    for k in (3, -4):
        # the CPU jit does not check bounds (Numba's default): the device does
        with pytest.raises(errors.CKIndexError,
                           match=r"^index is out of bounds \[checked at .*, element 0\]$"):
            checked(ctx.array(rows), k)
    with pytest.raises(errors.CKValueError, match="empty row"):
        checked(ctx.array(np.zeros((2, 0), np.int64)), 1)


def test_what_stays_on_the_cpu_is_one_line(ctx):
    x = ctx.array(np.ones((2, 3)))
    with pytest.raises(errors.NotSupportedError, match="var dims run on the CPU only"):
        cpu.rowsum(x)
    with pytest.raises(errors.NotSupportedError, match="written through the output parameter"):
        cpu.cumsum(x)
    for f in (cpu.mean_checked, sliced):
        with pytest.raises(errors.NotSupportedError, match=r"not supported at .*\.py:\d+") as ei:
            f(x)
        assert "\n" not in str(ei.value)


def test_source_shows_the_core_dims_kernel():
    src = cpu.dot.source("opencl")
    assert "ck_view1_t" in src and "ck_core[2]" in src and "__kernel void ck_kernel(" in src
