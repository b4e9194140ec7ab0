"""Strided operands of core dims (issue 29): ``out=`` and inputs whose core
dims are not contiguous -- non-unit, negative, transposed -- on the gufunc
path (NumPy operands) and the ckernels-array path, for functions that return
their result and for functions that write an output parameter, against
``numba.guvectorize`` as the oracle.  A broadcast ``out=`` is refused as
NumPy refuses it.

Before the fix the output parameter was a C-contiguous Numba array: a 1-d
core result ignored its stride (``out=o[:, ::2]`` filled ``o[0]`` with
``[2, 2, 0, 0]``), and a negative stride wrote past the buffer (glibc
aborted): the negative-stride cases run in a fresh interpreter."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ckernels

numba = pytest.importorskip("numba")


@ckernels.jit("N * float64(N * float64)")
def ret1(a):
    r = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        r[i] = a[i] * 2.0 + i
    return r


@ckernels.jit("N * float64(N * float64)")
def par1(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0 + i


@ckernels.jit("3 * float64(3 * float64)")
def fixed3(a, out):
    for i in range(3):
        out[i] = a[i] * 2.0 + i


@ckernels.jit("M * N * float64(M * N * float64)")
def ret2(a):
    r = np.empty(a.shape)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            r[i, j] = a[i, j] * 2.0 + 10 * i + j
    return r


@ckernels.jit("M * N * float64(M * N * float64)")
def par2(a, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * 2.0 + 10 * i + j


@numba.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
def oracle1(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0 + i


@numba.guvectorize(["void(float64[:, :], float64[:, :])"], "(m,n)->(m,n)")
def oracle2(a, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * 2.0 + 10 * i + j


ONE_D = {"ret1": ret1, "par1": par1, "fixed3": fixed3}
TWO_D = {"ret2": ret2, "par2": par2}


#: (name, shape of the base, the NumPy view, the same view of a ckernels array)
OUT_1D = [
    ("step2", (3, 8), lambda b: b[:, ::2]),
    ("step3_offset", (3, 13), lambda b: b[:, 1::3]),
    ("outer_step", (6, 4), lambda b: b[::2]),
    ("transposed", (4, 3), lambda b: b.T),
    ("outer_and_core_step", (6, 8), lambda b: b[::2, ::2]),
]
OUT_FIXED3 = [
    ("step2", (3, 6), lambda b: b[:, ::2]),
    ("step3_offset", (2, 9), lambda b: b[:, 1::3]),
    ("outer_step", (6, 3), lambda b: b[::2]),
    ("transposed", (3, 3), lambda b: b.T),
]
NEGATIVE_1D = [
    ("reversed", (3, 4), lambda b: b[:, ::-1]),
    ("reversed_step", (3, 8), lambda b: b[:, ::-2]),
    ("outer_reversed", (3, 4), lambda b: b[::-1]),
    ("both_reversed", (3, 4), lambda b: b[::-1, ::-1]),
    ("transposed_reversed", (4, 3), lambda b: b.T[:, ::-1]),
    ("one_row_reversed", (4,), lambda b: b[::-1]),
]
OUT_2D = [
    ("transposed_core", (3, 5, 4), lambda b: b.transpose(0, 2, 1)),
    ("core_steps", (3, 8, 10), lambda b: b[:, ::2, ::2]),
    ("all_transposed", (5, 4, 3), lambda b: b.T),
]
NEGATIVE_2D = [
    ("core_reversed", (3, 4, 5), lambda b: b[:, ::-1, ::-2]),
]


def _inputs(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _check_1d(name, base_shape, view, path, kernel_name):
    kernel = ONE_D[kernel_name]
    out_shape = view(np.zeros(base_shape)).shape
    x = _inputs(out_shape)
    want_base = np.full(base_shape, -1.0)
    oracle1(x, view(want_base))
    got_base = np.full(base_shape, -1.0)
    if path == "numpy":
        kernel(x, out=view(got_base))
    else:
        ck = ckernels.asarray(got_base)
        kernel(ckernels.asarray(x), out=view(ck))
        got_base = np.asarray(ck)
    return got_base, want_base


@pytest.mark.parametrize("path", ["numpy", "ckernels"])
@pytest.mark.parametrize("kernel_name", ["ret1", "par1"])
@pytest.mark.parametrize("name,base_shape,view", OUT_1D, ids=[c[0] for c in OUT_1D])
def test_strided_out_1d_core(name, base_shape, view, path, kernel_name):
    got, want = _check_1d(name, base_shape, view, path, kernel_name)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("path", ["numpy", "ckernels"])
@pytest.mark.parametrize("name,base_shape,view", OUT_FIXED3, ids=[c[0] for c in OUT_FIXED3])
def test_strided_out_fixed_core(name, base_shape, view, path):
    got, want = _check_1d(name, base_shape, view, path, "fixed3")
    np.testing.assert_array_equal(got, want)


def _check_2d(base_shape, view, path, kernel_name):
    kernel = TWO_D[kernel_name]
    out_shape = view(np.zeros(base_shape)).shape
    x = _inputs(out_shape)
    want_base = np.full(base_shape, -1.0)
    oracle2(x, view(want_base))
    got_base = np.full(base_shape, -1.0)
    if path == "numpy":
        kernel(x, out=view(got_base))
    else:
        ck = ckernels.asarray(got_base)
        kernel(ckernels.asarray(x), out=view(ck))
        got_base = np.asarray(ck)
    return got_base, want_base


@pytest.mark.parametrize("path", ["numpy", "ckernels"])
@pytest.mark.parametrize("kernel_name", ["ret2", "par2"])
@pytest.mark.parametrize("name,base_shape,view", OUT_2D, ids=[c[0] for c in OUT_2D])
def test_strided_out_2d_core(name, base_shape, view, path, kernel_name):
    got, want = _check_2d(base_shape, view, path, kernel_name)
    np.testing.assert_array_equal(got, want)


#: the negative-stride cases, in a fresh interpreter (they wrote past the
#: buffer before the fix); prints one JSON line of failures
NEGATIVE_SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, {here!r})
    import test_jit_dims_strided as t
    bad = []
    for path in ("numpy", "ckernels"):
        for kname in ("ret1", "par1"):
            for name, shape, view in t.NEGATIVE_1D:
                got, want = t._check_1d(name, shape, view, path, kname)
                if not np.array_equal(got, want):
                    bad.append([path, kname, name, got.tolist(), want.tolist()])
        for kname in ("ret2", "par2"):
            for name, shape, view in t.NEGATIVE_2D:
                got, want = t._check_2d(shape, view, path, kname)
                if not np.array_equal(got, want):
                    bad.append([path, kname, name])
        # fixed-size core dim, reversed
        got, want = t._check_1d("fixed", (2, 3), lambda b: b[:, ::-1], path, "fixed3")
        if not np.array_equal(got, want):
            bad.append([path, "fixed3", "reversed"])
    print(json.dumps(bad))
''')


def test_negative_strides_of_out_in_a_fresh_interpreter():
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, "-c", NEGATIVE_SCRIPT.format(here=here)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"crashed ({p.returncode}): {p.stderr[-3000:]}"
    assert json.loads(p.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("path", ["numpy", "ckernels"])
@pytest.mark.parametrize("kernel_name", ["ret1", "par1"])
@pytest.mark.parametrize("xview", [lambda b: b[:, ::2], lambda b: b[:, ::-1],
                                   lambda b: b.T, lambda b: b[::-1, ::-3]],
                         ids=["step2", "reversed", "transposed", "both"])
def test_strided_inputs(xview, path, kernel_name):
    """Strided core dims of the input, into a contiguous out and a returned one."""
    x = xview(_inputs((6, 12)))
    want = oracle1(x)
    kernel = ONE_D[kernel_name]
    got = kernel(x) if path == "numpy" else np.asarray(kernel(ckernels.asarray(x)))
    np.testing.assert_array_equal(got, want)
    out = np.zeros(want.shape)
    kernel(x if path == "numpy" else ckernels.asarray(x), out=out)
    np.testing.assert_array_equal(out, want)


def test_issue_example():
    f = ckernels.jit("N * float64(N * float64)")(lambda a: a * 2)
    o = np.zeros((3, 4))
    f(np.ones((3, 2)), out=o[:, ::2])
    np.testing.assert_array_equal(o[0], [2, 0, 2, 0])
    c = ckernels.asarray(np.zeros((3, 4)))
    f(ckernels.asarray(np.ones((3, 2))), out=c[:, ::2])
    np.testing.assert_array_equal(np.asarray(c)[0], [2, 0, 2, 0])


@pytest.mark.parametrize("kernel_name", ["ret1", "par1"])
def test_broadcast_out_is_refused_as_numpy_refuses(kernel_name):
    kernel = ONE_D[kernel_name]
    x = _inputs((3, 4))
    buf = np.zeros(4)
    bad = np.broadcast_to(buf, (3, 4))
    with pytest.raises(ValueError) as oracle:
        oracle1(x, bad)
    with pytest.raises(ValueError) as ours:
        kernel(x, out=bad)
    assert "read-only" in str(oracle.value) and "read-only" in str(ours.value)
    assert not buf.any()
    # the same on the ckernels path: a broadcast view is read-only
    ck = ckernels.asarray(np.zeros(4))
    with pytest.raises(ValueError, match="read-only"):
        kernel(ckernels.asarray(x), out=ck.broadcast_to((3, 4)))
    assert not np.asarray(ck).any()
