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
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("string(float64)")
def float_specs(x):
    return (str(x) + f"|{x:.2f}|{x:.3e}|{x:.3g}|{x:+.1%}|{x:_^16,.1f}|{x!r:>25}|{x:#.0f}|"
            f"{x:010.4E}|{x:z.1f}|{x:.30f}")


@ckernels.jit("string(int64)")
def int_specs(i):
    return f"{i:05d}|{i:#x}|{i:_b}|{i:=+12,}|{i:.1f}|{i!r:^9}|{i > 0}|{i > 0:d}|{i % 1000:c}"


@ckernels.jit("string(string, int64)")
def text_specs(s, k):
    return f"{s:>10}|{s:*^7}|{s:.3}|{s!s}|{s:<4}|{s[1:]:€>5}|{k}"


SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[
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
    got = float_specs(ctx.array(v)).tolist()
    assert got == _host(float_specs, v) == [float_specs.py_func(x) for x in v.tolist()]
    assert [g.split("|")[0] for g in got] == [repr(x) for x in v.tolist()]


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
def f32_spec(x):
    return f"{x:.3f}"


@ckernels.jit("string(float64)")
def conv_precision(x):
    return f"{x!r:.3}"


@pytest.mark.parametrize("f, arg, what", [
    (conv_precision, np.array([1.5]), "conversion with a precision")])
def test_refused_with_the_users_line(ctx, f, arg, what):
    with pytest.raises(NotSupportedError) as e:
        f(ctx.array(arg))
    msg = str(e.value)
    assert "\n" not in msg and what in msg and __file__ in msg


def test_float32_with_a_spec_is_formatted_as_double(ctx):
    v = np.array([1.5, 0.1, -3.25], np.float32)
    assert f32_spec(ctx.array(v)).tolist() == _host(f32_spec, v)


# ---- CUDA C: NVRTC + ptxas, then both passes on the host shim -------------------------------
@ckernels.jit("string(float64, int64)")
def cuda_mix(x, i):
    return (str(x) + f"|{x:.2f}|{x!r:>25}|{x:.3e}|{x:+.1%}|{x:.30f}|{i:05d}|{i:#x}|{i:=+12,}|"
            f"{i % 1000:c}|{i > 0}")


def test_formatting_as_cuda_c_compiles_assembles_and_matches_python(tmp_path):
    import ctypes
    from ckernels import dialects
    from ckernels.jit import c_emit, device_strings
    from ckernels.jit.device import target
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    sig = ("unsigned char *out, const unsigned char **in, const unsigned long long *off, "
           "const long long *stride, int mode, const long long *meta, unsigned long long n, "
           "int *err, unsigned int block")
    libs, scratch = {}, {}
    for ns, f in {"ck_mx": cuda_mix}.items():
        comp = next(iter(f.compiled.values()))
        prog = device_strings._program(target("cuda"), f, comp)
        scratch[ns] = device_strings.scratch_of(prog[0])
        src = device_strings.source(target("cuda"), f, comp, emitted=prog).replace(
            f" {c_emit.KERNEL_NAME}(", f" {ns}_k(")
        (tmp_path / ns).mkdir()
        ptx_assembled_or_skip(tmp_path / ns, src)
        k = 3 + (2 if scratch[ns] else 0)
        ins = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in range(k))
        wrapper = (f'extern "C" void {ns}_run({sig}) {{\n  ck_shim_grid(n, block, [&] {{ '
                   f"{ns}_k(out, 0, 8{ins}, mode, meta, 1, n, err); }});\n}}\n")
        libs[ns] = host_shim_library(tmp_path / ns, src + wrapper)

    def run(ns, cols):
        n = len(cols[0])
        err = np.zeros(4, np.int32)
        meta = np.zeros(1, np.int64)
        sizes = np.zeros(n + 1, np.int64)
        s_offs = np.zeros(n + 1, np.int64)
        fn = getattr(libs[ns], f"{ns}_run")
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                                               ctypes.c_void_p, ctypes.c_uint]

        def launch(out, text, scr, mode):
            p = [c.ctypes.data for c in cols] + [text.ctypes.data] + (
                [scr.ctypes.data, s_offs.ctypes.data] if scratch[ns] else [])
            s = [8] * len(cols) + [0] + ([0, 8] if scratch[ns] else [])
            m = len(p)
            fn(out.ctypes.data, (ctypes.c_void_p * m)(*p), (ctypes.c_uint64 * m)(*[0] * m),
               (ctypes.c_int64 * m)(*s), mode, meta.ctypes.data, n, err.ctypes.data,
               dialects.CUDA_BLOCK)
            assert err[0] == 0
        one = np.zeros(1, np.uint8)
        launch(sizes, one, one, 0)
        offsets = np.concatenate([[0], np.cumsum(sizes[:n])]).astype(np.int64)
        s_offs[:] = np.concatenate([[0], np.cumsum(s_offs[:n])])
        text = np.zeros(max(int(offsets[-1]), 1), np.uint8)
        scr = np.zeros(max(int(s_offs[-1]), 1), np.uint8)
        launch(offsets, text, scr, 1)
        raw = text.tobytes()
        return [raw[offsets[i]:offsets[i + 1]].decode() for i in range(n)]

    x = np.array([0.0, -0.0, 1.5, 2.5, 0.125, 1e16, 5e-324, 1e300, -math.inf, math.nan,
                  0.1 + 0.2, 9.995], np.float64)
    i = np.array([0, -5, 65, 123456789, -2**63, 2**63 - 1, 7, 8, 9, 10, 11, 12], np.int64)
    assert run("ck_mx", [x, i]) == [cuda_mix.py_func(a, b) for a, b in
                                    zip(x.tolist(), i.tolist())]
