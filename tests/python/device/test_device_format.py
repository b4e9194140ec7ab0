"""``str(float)`` and f-string fields with format specs and conversions in
device string results: the C core's formatting compiled into the program
(``ckernel/format_view.h``: Ryu digits, exact fixed-precision digits,
CPython's layout).  Checked on OpenCL (PoCL) against the CPU jit and
CPython, and as CUDA C (NVRTC + ptxas + the host shim)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.errors import NotSupportedError


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


@ckernels.jit("string(float64)")
def float_repr(x):
    return str(x)


@ckernels.jit("string(float64)")
def float_specs(x):
    return (f"{x:.2f}|{x:e}|{x:.3g}|{x:>12}|{x:+.1%}|{x:,.3f}|{x!r:>25}|{x:#.0f}|{x:010.4e}|"
            f"{x:G}|{x:.17g}|{x:z.1f}|{x:_^16.1f}|" + str(x) + f"{x:.30f}")


@ckernels.jit("string(int64)")
def int_specs(i):
    return (f"{i:05d}|{i:#x}|{i:,}|{i:_b}|{i:>8}|{i:+}|{i:.1f}|{i:X}|{i:#o}|{i:=+12,}|"
            f"{i:e}|{i!r:^9}|{i > 0}|{i > 0:d}|{i % 1000:c}")


@ckernels.jit("string(string, int64)")
def text_specs(s, k):
    return f"{s:>10}|{s:*^7}|{s:.3}|{s!s}|{s:<4}|{s[1:]:€>5}|{k}"


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([
    0.0, -0.0, 0.5, 1.5, 2.5, 0.125, 9.995, 1e16, 1e-5, 5e-324, 1.7976931348623157e308,
    2.675, 0.005, -1234567.891, 1e22, 123456789012345678.0])
ALPHA = st.characters(codec="utf-8", exclude_categories=("Cs",))
TEXT = st.text(alphabet=ALPHA, max_size=14) | st.sampled_from(["", "é" * 40, "ab€𝄞"])


def _host(f, col):
    return np.asarray(f(ckernels.array(col, dtype="string") if isinstance(col, list)
                        else col)).tolist()


@SETTINGS
@given(st.lists(FLOATS, min_size=1, max_size=30))
def test_float_repr_and_specs_match_the_cpu_jit(ctx, xs):
    v = np.array(xs, np.float64)
    d = ctx.array(v)
    want_repr = [repr(x) for x in v.tolist()]
    assert float_repr(d).tolist() == _host(float_repr, v) == want_repr
    assert float_specs(d).tolist() == _host(float_specs, v) == \
        [float_specs.py_func(x) for x in v.tolist()]


@SETTINGS
@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-300, 300), min_size=1,
                max_size=30))
def test_integer_specs_match_the_cpu_jit(ctx, xs):
    v = np.array(xs, np.int64)
    assert int_specs(ctx.array(v)).tolist() == _host(int_specs, v) == \
        [int_specs.py_func(i) for i in xs]


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=20))
def test_text_specs_match_python(ctx, xs):
    got = text_specs(ctx.array(xs), 3).tolist()
    assert got == [text_specs.py_func(s, 3) for s in xs]


def test_extremes_and_rounding_ties(ctx):
    v = np.array([0.125, 0.375, 2.5, 1e300, 5e-324, -0.0, math.inf, -math.inf, math.nan,
                  0.1 + 0.2, 1 / 3, 2.0**-1074 * 3, 1e-7, 9.999999999999999e22], np.float64)
    assert float_specs(ctx.array(v)).tolist() == [float_specs.py_func(x) for x in v.tolist()]


@ckernels.jit("string(int64)")
def bad_char(i):
    return f"{i:c}"


def test_format_errors_come_back_as_on_the_cpu(ctx):
    with pytest.raises(OverflowError, match="range"):
        bad_char(ctx.array(np.array([65, 0x110000], np.int64)))
    assert bad_char(ctx.array(np.array([65, 0xE9], np.int64))).tolist() == ["A", "é"]


@ckernels.jit("string(float32)")
def f32_text(x):
    return str(x)


@ckernels.jit("string(float32)")
def f32_spec(x):
    return f"{x:.3f}"


@ckernels.jit("string(float64)")
def conv_precision(x):
    return f"{x!r:.3}"


@pytest.mark.parametrize("f, arg, what", [
    (f32_text, np.array([1.5], np.float32), "float32"),
    (conv_precision, np.array([1.5]), "conversion with a precision")])
def test_refused_with_the_users_line(ctx, f, arg, what):
    with pytest.raises(NotSupportedError) as e:
        f(ctx.array(arg))
    msg = str(e.value)
    assert "\n" not in msg and what in msg and __file__ in msg


def test_float32_with_a_spec_is_formatted_as_double(ctx):
    v = np.array([1.5, 0.1, -3.25], np.float32)
    assert f32_spec(ctx.array(v)).tolist() == _host(f32_spec, v)
