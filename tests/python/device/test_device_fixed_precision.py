"""Fixed-precision fields (``{x:.2f}``, ``{x:.3%}``) in device string results:
``ckernel/format_view.h``'s exact integer path (``ck_fv_fixed_digits``:
``|x| < 2**64``, up to 19 places; the big-integer path beyond) compiled into
the OpenCL program (PoCL) equals CPython's ``format()`` and the CPU jit on
random magnitudes, exact half-way cases ``j / 2**(p + 1)`` and their
neighbours, power-of-ten crossings and the edges."""

import math

import numpy as np
import pytest

import ckernels


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


@ckernels.jit("string(float64)")
def fixed(x):
    return f"{x:.0f}|{x:.2f}|{x:.7f}|{x:.19f}|{x:.20f}|{x:.3%}"


SPECS = [".0f", ".2f", ".7f", ".19f", ".20f", ".3%"]


def _values() -> np.ndarray:
    rng = np.random.default_rng(32)
    mags = rng.standard_normal(400) * 10.0 ** rng.integers(-22, 23, 400)
    p = np.array([0, 2, 7, 19], np.int32)[rng.integers(0, 4, 400)]
    bits = rng.integers(1, 54, 400)
    j = (rng.integers(0, 2**62, 400) >> (62 - bits)) | 1
    ties = np.ldexp(j.astype(np.float64), -(p + 1))
    cross = np.array([10.0**k - 0.5 * 10.0**-q for k in range(-3, 20) for q in (0, 2, 7)])
    edges = np.array([0.125, 0.375, 2.5, 9.995, 9.9951, -0.0, 5e-324, 18446744073709549568.0,
                      2.0**64, 1e300, math.inf, math.nan, 0.9999999999999999])
    x = np.concatenate([mags, ties, cross])
    return np.concatenate([x, np.nextafter(x, 0.0), np.nextafter(x, np.inf), -ties, edges])


def test_fixed_precision_on_opencl_equals_cpython(ctx):
    x = _values()
    got = fixed(ctx.array(x)).tolist()
    want = ["|".join(format(v, s) for s in SPECS) for v in x.tolist()]
    bad = [(v, g, w) for v, g, w in zip(x.tolist(), got, want) if g != w]
    assert not bad, bad[:5]
    assert np.asarray(fixed(x)).tolist() == want
