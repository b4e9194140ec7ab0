"""Fixed-precision float fields in jitted string results (``{x:.2f}``,
``{x:.3%}``): the digits come from ``ckernel/format_view.h``'s exact integer
path (``ck_fv_fixed_digits``: ``|x| < 2**64``, up to 19 places) or, beyond
it, from the C library; either way they equal CPython's ``format(x, spec)``
character for character -- on random values of every magnitude, exact
half-way cases (``j / 2**(p + 1)``, j odd: half to even on the exact binary
value) and the doubles either side of them, values that round up across a
power of ten, subnormals, -0.0, values near 2**64 and huge ones.

Two module-level functions hold the specs (compiled once; a long f-string
compiles in more than linear time)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ckernels


@ckernels.jit("string(float64)")
def short(x):
    return f"{x:.0f}|{x:.1f}|{x:.2f}|{x:.3f}|{x:.6f}|{x:.9f}"


@ckernels.jit("string(float64)")
def wide(x):
    return f"{x:.12f}|{x:.17f}|{x:.19f}|{x:.20f}|{x:.30f}|{x:.2%}|{x:+012,.3f}"


SPECS = {short: [".0f", ".1f", ".2f", ".3f", ".6f", ".9f"],
         wide: [".12f", ".17f", ".19f", ".20f", ".30f", ".2%", "+012,.3f"]}


def python_texts(f, x: float) -> str:
    return "|".join(format(x, s) for s in SPECS[f])


def values(seed: int) -> np.ndarray:
    """Random magnitudes 1e-25..1e25, exact ties at 0..20 places and their
    neighbours, power-of-ten crossings and the edges."""
    rng = np.random.default_rng(seed)
    mags = rng.standard_normal(600) * 10.0 ** rng.integers(-25, 26, 600)
    p = rng.integers(0, 21, 300)
    bits = rng.integers(1, 54, 300)
    j = (rng.integers(0, 2**62, 300) >> (62 - bits)) | 1
    ties = np.ldexp(j.astype(np.float64), -(p + 1).astype(np.int32))
    cross = np.array([10.0**k - 0.5 * 10.0**-q for k in range(-6, 20) for q in range(0, 20, 3)])
    edges = np.array([0.125, 0.375, 2.5, 0.5, 1.5, 9.995, 9.9951, 0.045, -0.0, 0.0, 5e-324,
                      2.2250738585072014e-308, 18446744073709549568.0, 2.0**64, 1e19, 0.1,
                      1e22, 1e300, -1e300, 1.7976931348623157e308, math.inf, -math.inf,
                      math.nan, -0.001, 0.9999999999999999, 999.9999999999999])
    x = np.concatenate([mags, ties, cross, edges])
    finite = x[np.isfinite(x) & (np.abs(x) < 1e300)]
    return np.concatenate([x, np.nextafter(finite, 0.0), np.nextafter(finite, np.inf), -ties])


@pytest.mark.parametrize("f", [short, wide], ids=["short", "wide"])
def test_fixed_precision_specs_equal_cpython(f):
    x = values(29)
    got = f(x).tolist()
    want = [python_texts(f, v) for v in x.tolist()]
    bad = [(v, g, w) for v, g, w in zip(x.tolist(), got, want) if g != w]
    assert not bad, bad[:5]


def test_ties_round_half_to_even_on_the_exact_value():
    got = short(np.array([0.125, 0.375, 2.5, 3.5, 9.995])).tolist()
    assert [g.split("|")[2] for g in got] == ["0.12", "0.38", "2.50", "3.50", "9.99"]
    assert [g.split("|")[0] for g in got] == ["0", "0", "2", "4", "10"]
