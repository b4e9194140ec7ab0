"""``str(x)`` of a float32 on devices: NumPy's str of a float32 (its own
shortest digits, positional for 1e-4 <= |x| < 1e6), from ``ckernel/format_view.h``
(``ck_fv_float32_str``: Ryu on the float32's rounding interval).  Checked against
the CPU jit (the C library's ``ck_format_float32``) and NumPy on PoCL and as
CUDA C through NVRTC + ptxas + the host shim."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("string(float32)")
def f32_text(x):
    return str(x) + "|" + f"{x:>14}"


@ckernels.jit("string(float32)")
def f32_field(x):
    return f"{x}"


FIXED = np.array([0.0, -0.0, 1.0, -1.5, 0.1, 1e-4, 9.9999e-5, 1e-5, 999999.94, 1e6, 3.4028235e38,
                  -3.4028235e38, 1e-45, 1.1754942e-38, 1.1754944e-38, 16777216.0, 0.3, 123456.7,
                  np.inf, -np.inf, np.nan, 2.0 ** -126, 2.0 ** 100, 33554432.0], np.float32)


def _host(col, f=f32_text):
    return np.asarray(f(col)).tolist()


def _numpy(col):
    # str() is NumPy's str; a spec formats a float32 as a double (float32.__format__)
    return [f"{str(x)}|{float(x):>14}" for x in col]


def test_fixed_values_match_numpy_and_the_cpu_jit(ctx):
    got = f32_text(ctx.array(FIXED)).tolist()
    assert got == _host(FIXED) == _numpy(FIXED)
    assert f32_field(ctx.array(FIXED)).tolist() == _host(FIXED, f32_field) == \
        [str(x) for x in FIXED]


@settings(max_examples=30, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, 2 ** 32 - 1), min_size=1, max_size=200))
def test_random_bit_patterns_match_the_cpu_jit(ctx, bits):
    v = np.array(bits, np.uint32).view(np.float32)
    assert f32_text(ctx.array(v)).tolist() == _host(v) == _numpy(v)


def test_float32_str_as_cuda_c_matches_numpy(tmp_path):
    from cuda_string_shim import build
    run = build(tmp_path, {"ck_f32": (f32_text, 1)})
    rng = np.random.default_rng(7)
    v = np.concatenate([FIXED, rng.integers(0, 2 ** 32, 300, dtype=np.uint64)
                        .astype(np.uint32).view(np.float32)])
    assert run("ck_f32", [v]) == _numpy(v)
