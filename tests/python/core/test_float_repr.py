"""``str(float)`` without a spec is CPython's ``repr``, exactly.

The C core finds the shortest round-trip digits of a float64 with the Ryu
algorithm (``core/shortest.c``, integer arithmetic) instead of trying
``%.*e`` texts and reading them back with ``strtod``; these tests hold it to
``repr`` over random bit patterns (every exponent, subnormals), the
notation thresholds (1e16, 1e-5 / 1e-4), signed zeros and the non-finite
values -- through the C function itself and through jitted ``str(x)`` and
``f"{x}"``.  float32 keeps NumPy's ``str`` (its own digits).
"""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ckernels
from ckernels import _native

EDGE = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 5e-324, -5e-324, 1e-323,
        2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
        1e16, 9999999999999998.0, 1e15, 1e-5, 1e-4, 0.0001, 9.999999999999999e-05,
        0.1, 0.2, 0.3, 0.1 + 0.2, 1e22, 1e23, 8.41e21, 9007199254740993.0, 2.0 ** 60,
        123456789012345680.0, 1 / 3, 2 / 3, 100.0, 4.35, 5e-310, 2.0 ** -1022 * 3]


def c_repr(v: float) -> str:
    ffi, lib = _native.ffi, _native.lib
    buf = ffi.new("char[]", 64)
    n = ffi.new("size_t *")
    assert lib.ck_format_float64(buf, 64, ffi.NULL, v, n) == 0
    return ffi.unpack(buf, n[0]).decode()


def _doubles(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint64).view(np.float64)


def test_edge_cases_match_repr():
    for v in EDGE:
        assert c_repr(v) == repr(v), v
        assert c_repr(-v) == repr(-v), v


def test_random_bit_patterns_match_repr():
    rng = np.random.default_rng(29)
    bits = rng.integers(0, 2 ** 63, 60_000, dtype=np.uint64)
    bits[::3] &= np.uint64((1 << 52) - 1)                         # subnormals
    bits[1::3] &= np.uint64(0x7FF << 52) | np.uint64(7)           # near powers of two
    for v in _doubles(bits).tolist():
        assert c_repr(v) == repr(v), v.hex()


def test_every_exponent_at_its_boundaries():
    for e in range(2047):
        for m in (0, 1, 2, (1 << 52) - 1, 1 << 51):
            v = struct.unpack("<d", struct.pack("<Q", (e << 52) | m))[0]
            assert c_repr(v) == repr(v), v.hex()


def test_decimal_neighbours_match_repr():
    """Short decimals of every magnitude and the doubles on either side."""
    for p in range(-324, 309):
        for text in ("1e%d", "5e%d", "2.5e%d", "9.999999999999999e%d"):
            v = float(text % p)
            if v == 0.0 or v == float("inf"):
                continue
            for w in (np.nextafter(v, 0.0), v, np.nextafter(v, np.inf)):
                w = float(w)
                if w != float("inf"):
                    assert c_repr(w) == repr(w), w.hex()


@settings(max_examples=50, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_hypothesis_floats_match_repr(v):
    assert c_repr(v) == repr(v)


@ckernels.jit("string(float64)")
def _plain(x):
    return str(x)


@ckernels.jit("string(float64)")
def _fstring(x):
    return f"[{x}]"


@ckernels.jit("string(float32)")
def _plain32(x):
    return str(x)


def test_jitted_str_and_fstring_match_repr():
    rng = np.random.default_rng(7)
    x = np.concatenate([np.array(EDGE), rng.standard_normal(2000) *
                        10.0 ** rng.integers(-30, 30, 2000)])
    want = [repr(v) for v in x.tolist()]
    assert _plain(x).tolist() == want
    assert _fstring(x).tolist() == [f"[{w}]" for w in want]


def test_float32_keeps_numpy_str():
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(2000) * 10.0 ** rng.integers(-8, 8, 2000)).astype(np.float32)
    x = np.concatenate([x, np.array([1e-4, 1e6, 16777217.0, 3.4028235e38, 1e-45],
                                    np.float32)])
    assert _plain32(x).tolist() == [str(v) for v in x]
