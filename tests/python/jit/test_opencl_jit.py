"""``@ckernels.jit`` on OpenCL (PoCL): OpenCL C emitted from Numba's typed IR,
compared element for element with the CPU ``@ckernels.jit`` results (exact for
integers, within 2 ulp for floats, same nan/inf).  Skipped when no OpenCL
platform is available (the emitter-only tests still run)."""

import math

import numpy as np
import pytest

import ckernels
from ckernels import errors
from ckernels.opencl import DeviceArray, empty, to_device
from device_compare import compare  # the one device-result comparison (tests/python)

rng = np.random.default_rng(7)


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


# ----------------------------------------------------------------- corpus --
@ckernels.jit(["float64(float64)", "float32(float32)"])
def c_scale(x):
    return 2.5 * x - 1.0


@ckernels.jit("int64(int64, int64)")
def c_floordiv(a, b):
    return a // b


@ckernels.jit("int64(int64, int64)")
def c_mod(a, b):
    return a % b


@ckernels.jit("float64(float64, float64)")
def c_fmod_floor(a, b):
    return a // b + (a % b) * 0.5


@ckernels.jit("int32(int32, int32)")
def c_divmod32(a, b):
    return a // b * 3 + a % b


@ckernels.jit("float64(int64, int64)")
def c_truediv_int(a, b):
    return a / b


@ckernels.jit("float64(float64)")
def c_math1(x):
    return math.exp(-abs(x)) + 2.0


@ckernels.jit("float64(float64, float64)")
def c_math2(x, y):
    return math.atan2(x, y) + math.hypot(x, y) + math.sqrt(abs(x)) + math.floor(y) \
        + math.ceil(x) + math.fabs(y)


def math2_terms(x, y):
    """The magnitudes of c_math2's terms (``device_compare.compare``'s ``terms``)."""
    with np.errstate(all="ignore"):
        x, y = np.abs(np.asarray(x, np.float64)), np.abs(np.asarray(y, np.float64))
        return np.pi + np.hypot(x, y) + np.sqrt(x) + 2 * (x + y) + 2


@ckernels.jit("float64(float64)")
def c_logs(x):
    return math.log(x) * 0.0 + math.log1p(x)


@ckernels.jit("float32(float32, float32)")
def c_math32(x, y):
    return math.sqrt(x * x + y * y) + min(x, y) - max(x, y, 0.5)


@ckernels.jit("int64(int64)")
def c_branches(x):
    if x < -100:
        return -1
    elif x < 0:
        return x * x
    elif x == 0:
        return 42
    return x + 7


@ckernels.jit("int64(int64)")
def c_loop(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        s += i * i - (i // 2)
    return s


@ckernels.jit("int64(int64)")
def c_while_early(n):
    k = 0
    while n != 1:
        if k > 500:
            return -k
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k


@ckernels.jit("float64(float64, int64)")
def c_mixed(x, k):
    r = x
    for j in range(k, 0, -1):
        r = r * 0.5 + j / 3
    return r + k


@ckernels.jit
def c_helper(x):
    return x * x + 1.0


@ckernels.jit("float64(float64)")
def c_calls(x):
    return c_helper(x) - c_helper(x * 0.5) + c_scale(x)


@ckernels.jit("bool(float64, float64)")
def c_compare(x, y):
    return (x < y and not math.isnan(x)) or math.isinf(y)


@ckernels.jit("uint32(uint32, uint32)")
def c_unsigned(a, b):
    return (a * 2654435761 + (b >> 3)) ^ (a & b)


@ckernels.jit("int64(int64, int64)")
def c_power(a, b):
    return a ** b + abs(a) * -3


@ckernels.jit("float64(float64, int64)")
def c_fpow(x, k):
    return x ** k + x ** 0.5


@ckernels.jit("int16(int8, int16)")
def c_small_ints(a, b):
    return a * b - (a << 2)


@ckernels.jit("float64(float64, float64)")
def c_nan_inf(x, y):
    return x * y + x / 1e-300


F_EDGE = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.25, 3.7, 1e-300, 1e300, -1e300,
                   np.inf, -np.inf, np.nan, 1e-5, 100.0, math.pi])


def _f(n=200, scale=10.0):
    return np.concatenate([F_EDGE, rng.standard_normal(n) * scale])


def _i(n=200, lo=-1000, hi=1000, edge=True):
    e = np.array([0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, 100, -100], np.int64)
    r = rng.integers(lo, hi, n)
    return np.concatenate([e, r]) if edge else r


def _nz(a):
    a = np.asarray(a).copy()
    a[a == 0] = 1
    return a


def _pair(a, b):
    n = min(len(a), len(b))
    return a[:n], b[:n]


CORPUS = [
    ("scale64", c_scale, lambda: [_f()]),
    ("scale32", c_scale, lambda: [_f().astype(np.float32)]),
    ("floordiv", c_floordiv, lambda: list(_pair(_i(), _nz(_i(edge=False, lo=-50, hi=50))))),
    ("mod", c_mod, lambda: list(_pair(_i(), _nz(_i(edge=False, lo=-50, hi=50))))),
    ("fmod_floor", c_fmod_floor, lambda: [_f(), _nz(rng.standard_normal(217) * 3)]),
    ("divmod32", c_divmod32, lambda: [_i().astype(np.int32),
                                      _nz(_i(edge=True, lo=-9, hi=9)).astype(np.int32)]),
    ("truediv_int", c_truediv_int, lambda: list(_pair(_i(), _nz(_i())))),
    ("math1", c_math1, lambda: [_f(scale=3.0)]),
    ("math2", c_math2, lambda: [_f(), _f()[::-1].copy()]),
    ("logs", c_logs, lambda: [np.abs(_f(scale=50.0))]),
    ("math32", c_math32, lambda: [_f(scale=3).astype(np.float32),
                                  _f(scale=3)[::-1].astype(np.float32)]),
    ("branches", c_branches, lambda: [_i()]),
    ("loop", c_loop, lambda: [_i(lo=-5, hi=300)]),
    ("while_early", c_while_early, lambda: [np.abs(_nz(_i(lo=1, hi=100000)))]),
    ("mixed", c_mixed, lambda: [_f()[:100], _i(lo=-3, hi=40)[:100]]),
    ("calls", c_calls, lambda: [_f()]),
    ("compare", c_compare, lambda: [_f(), _f()[::-1].copy()]),
    ("unsigned", c_unsigned, lambda: [rng.integers(0, 2**32, 300, dtype=np.uint32),
                                      rng.integers(0, 2**32, 300, dtype=np.uint32)]),
    ("power", c_power, lambda: [_nz(_i(lo=-6, hi=6)), np.resize(np.arange(-2, 15), 213)]),
    ("fpow", c_fpow, lambda: [np.abs(_nz(_f()))[:150], np.resize(np.arange(-4, 9), 150)]),
    ("small_ints", c_small_ints, lambda: [rng.integers(-128, 128, 300).astype(np.int8),
                                          rng.integers(-300, 300, 300).astype(np.int16)]),
    ("nan_inf", c_nan_inf, lambda: [_f(), _f()[::-1].copy()]),
]


_compare = compare     # tests/python/device_compare.py (the CUDA tests call it from here)


@pytest.mark.parametrize("name,fn,make", CORPUS, ids=[c[0] for c in CORPUS])
def test_differential(ctx, name, fn, make):
    args = make()
    n = min(len(a) for a in args)
    args = [np.ascontiguousarray(a[:n]) for a in args]
    want = np.asarray(fn(*args))
    dev = fn(*[to_device(ctx, a) for a in args])
    assert isinstance(dev, DeviceArray) and dev.context is ctx
    _compare(dev.to_numpy(), want, name)


def test_corpus_size():
    assert len(CORPUS) >= 15


# float -> integer conversions out of range and of NaN: C leaves them undefined
# and devices differ (CUDA saturates), so the emitted program converts as the
# CPU jit does on x86-64; every pair of float and integer type
F2I_EDGE = np.array([1e300, -1e300, np.nan, np.inf, -np.inf, -1.0, -1.5, 2.0 ** 63,
                     1.5 * 2 ** 63, 2.0 ** 64, -2.0 ** 63, -2.0 ** 63 - 4096, 2.0 ** 32 + 5,
                     -2.0 ** 31 - 1, -2.0 ** 31 - 0.5, 2.0 ** 31, 300.7, -300.7, 70000.2,
                     -70000.2, 4e9, -4e9, 1e10, 0.0, -0.0, 255.9, 256.0, -129.0, 1.0e-300])
F2I_PAIRS = [(f, i) for f in ("float64", "float32")
             for i in ("int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8")]


def f2i_kernel(frm, to):
    return ckernels.jit(f"{to}({frm})")(lambda x: x)


def f2i_input(frm):
    with np.errstate(all="ignore"):
        return F2I_EDGE.astype(frm)


def f2i_rule(x: np.ndarray, to: str) -> np.ndarray:
    """The devices' conversion (``ArithEmission.float_to_int``) in Python."""
    def i64(v):
        t = math.trunc(v) if math.isfinite(v) else None
        return t if t is not None and -2 ** 63 <= t < 2 ** 63 else -2 ** 63

    dt = np.dtype(to)
    bits = dt.itemsize * 8
    out = []
    for v in x.astype(np.float64):
        if to == "int32":
            t = math.trunc(v) if math.isfinite(v) else None
            r = t if t is not None and -2 ** 31 <= t < 2 ** 31 else -2 ** 31
        elif to == "uint64":
            lo, hi = i64(v) % 2 ** 64, i64(v - 2.0 ** 63) % 2 ** 64
            r = lo | (hi if lo >> 63 else 0)
        else:
            r = i64(v) % 2 ** bits
            if dt.kind == "i" and r >= 2 ** (bits - 1):
                r -= 2 ** bits
        out.append(r)
    return np.array(out, dtype=dt)


def check_f2i(device_result, frm, to):
    """Devices follow the rule everywhere; the CPU jit agrees with it on
    int64/int32 everywhere and on every type within its range."""
    k, x = f2i_kernel(frm, to), f2i_input(frm)
    want = f2i_rule(x, to)
    np.testing.assert_array_equal(device_result(k, x), want)
    cpu = k(x)
    info = np.iinfo(to)
    # in range, exactly (2**64 - 1 is 2**64 as a float: Python ints compare exactly)
    inside = np.array([math.isfinite(v) and info.min <= math.trunc(v) <= info.max
                       for v in x.astype(np.float64)])
    if to in ("int64", "int32"):
        inside[:] = True
    np.testing.assert_array_equal(cpu[inside], want[inside])


@pytest.mark.parametrize("frm,to", F2I_PAIRS)
def test_float_to_int_out_of_range_one_rule(ctx, frm, to):
    check_f2i(lambda k, x: k(to_device(ctx, x)).to_numpy(), frm, to)


# one math function per kernel: the device's built-ins against the CPU's libm,
# within 2 ulp each (sums of several would add their errors up)
MATH1 = ["sqrt", "exp", "log", "log10", "log2", "log1p", "expm1", "sin", "cos", "tan",
         "atan", "sinh", "cosh", "tanh", "asinh", "floor", "ceil", "fabs", "erf", "trunc"]
MATH2 = ["atan2", "hypot", "pow", "copysign"]


def _math_kernel(name, nargs):
    fn = getattr(math, name)
    if nargs == 1:
        return ckernels.jit("float64(float64)")(lambda x: fn(x) * 1.0)
    return ckernels.jit("float64(float64, float64)")(lambda x, y: fn(x, y))


@pytest.mark.parametrize("name", MATH1 + MATH2)
def test_math_builtins(ctx, name):
    nargs = 2 if name in MATH2 else 1
    k = _math_kernel(name, nargs)
    pos = name in ("sqrt", "log", "log10", "log2")
    x = np.abs(_f(300, 5.0)) if pos else _f(300, 5.0)
    if name == "log1p":
        x = np.abs(x)
    args = [x] if nargs == 1 else [x, _f(300, 3.0)[::-1].copy()]
    if name in ("fmod",):
        args[1] = _nz(args[1])
    want = np.asarray(k(*args))
    got = k(*[to_device(ctx, a) for a in args]).to_numpy()
    _compare(got, want, name)


# ------------------------------------------------------- broadcasting / N-d --
def test_scalar_and_nd_broadcast(ctx):
    # its own generator: the module's rng is shared with test_cuda_codegen, so
    # its state here depends on which tests ran first
    r = np.random.default_rng(20)
    a = r.standard_normal((4, 1, 3))
    b = r.standard_normal((5, 1))
    got = c_math2(to_device(ctx, a), to_device(ctx, b)).to_numpy()
    want = np.asarray(c_math2(a, b))
    assert got.shape == want.shape == (4, 5, 3)
    # a sum of six math results: cancellation can make its last bits differ by
    # more than 2 ulp of the (small) sum while each term is within 2 ulp
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14 * np.abs(want).max())
    got = c_mixed(to_device(ctx, a), 3).to_numpy()
    _compare(got, np.asarray(c_mixed(a, np.int64(3))), "scalar")
    x = to_device(ctx, np.arange(6.0).reshape(2, 3))
    got = c_scale(x, ).to_numpy()
    np.testing.assert_array_equal(got, 2.5 * np.arange(6.0).reshape(2, 3) - 1.0)


def test_device_array_basics(ctx):
    e = empty(ctx, (2, 3), np.int32)
    assert e.shape == (2, 3) and e.dtype == np.int32 and e.context is ctx
    d = to_device(ctx, np.arange(5, dtype=np.uint16))
    np.testing.assert_array_equal(d.to_numpy(), np.arange(5, dtype=np.uint16))
    assert c_scale(to_device(ctx, np.zeros(0))).shape == (0,)


# ------------------------------------------------------------- errors ----
def test_zero_division_on_device(ctx):
    a = to_device(ctx, np.array([5, 6, 7], np.int64))
    b = to_device(ctx, np.array([1, 0, 2], np.int64))
    with pytest.raises(ZeroDivisionError) as ei:
        c_floordiv(a, b)
    assert isinstance(ei.value, errors.CKZeroDivisionError)
    with pytest.raises(ZeroDivisionError):
        c_truediv_int(a, b)
    with pytest.raises(ZeroDivisionError, match="negative power"):
        c_power(to_device(ctx, np.array([0, 2])), to_device(ctx, np.array([-1, 2])))


@ckernels.jit("float64(float64)")
def c_raises(x):
    if x > 10.0:
        raise ValueError("too big")
    return x


def test_user_raise_on_device(ctx):
    np.testing.assert_array_equal(c_raises(to_device(ctx, np.array([1.0, 2.0]))).to_numpy(),
                                  [1.0, 2.0])
    with pytest.raises(ValueError, match="too big"):
        c_raises(to_device(ctx, np.array([1.0, 20.0])))


def test_mixing_contexts_and_host_arrays(ctx):
    other = ckernels.Context("opencl")
    a, b = to_device(ctx, np.ones(3)), to_device(other, np.ones(3))
    with pytest.raises(errors.InvalidArgumentError, match="different context"):
        c_math2(a, b)
    with pytest.raises(errors.InvalidArgumentError, match="host arrays"):
        c_math2(a, np.ones(3))
    # one casting rule on every target (issue 9): an int8 array converts
    # safely to the float64 signature, as on the CPU; float32 to int64 does not
    x8 = np.array([1, -2, 3], np.int8)
    r = c_scale(to_device(ctx, x8))
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r.to_numpy(), np.asarray(c_scale(x8)))
    with pytest.raises(TypeError, match="no signature"):
        c_floordiv(to_device(ctx, np.ones(3, np.float32)), 2)


# ----------------------------------------------------------- the emitter --
def test_source_text():
    src = c_loop.source("opencl")
    assert "__kernel void ck_kernel(" in src
    assert "goto L" in src and "if (" in src and ") goto L" in src
    assert "ck_floordiv_int64" in src and "ck_mod_int64" in src
    assert "get_global_id(0)" in src and "if (i >= ck_n) return;" in src
    s32 = c_scale.source("opencl", "float32(float32)")
    assert "float ck_a0" in s32 and "*(__global float *)(ck_out + o_out) = r;" in s32
    calls = c_calls.source()
    assert calls.count("static double ck_fn_c_helper_") == 1
    assert calls.index("ck_fn_c_helper_") < calls.index("ck_fn_c_calls_")
    assert "atan2(" in c_math2.source() and "hypot(" in c_math2.source()


def test_unsupported_constructs_name_line():
    def lst(x):
        t = [x, x + 1.0]
        return t[0]
    k = ckernels.jit("float64(float64)")(lst)
    line = lst.__code__.co_firstlineno + 1
    with pytest.raises(errors.NotSupportedError, match=rf"lists.*:{line}\b"):
        k.source("opencl")

    def prints(x):
        print(x)
        return x
    k2 = ckernels.jit("float64(float64)")(prints)
    with pytest.raises(errors.NotSupportedError, match=r"print\(\).*:%d" %
                       (prints.__code__.co_firstlineno + 1)):
        k2.source("opencl")
    with pytest.raises(errors.NotSupportedError, match="complex128"):
        ckernels.jit("complex128(complex128)")(lambda z: z * 2).source("opencl")
    with pytest.raises(errors.NotSupportedError, match="target"):
        c_loop.source("metal")
