"""Differential tests: a corpus of scalar functions compiled by ``@ckernels.jit``
and compared with plain Python (element by element) and ``numba.vectorize``
(whole arrays) on random inputs plus edge values (0, -0.0, +-inf, nan,
min/max int64).

Python semantics are the reference, with two documented differences of
compiled code that the comparison accounts for: int64 arithmetic wraps
(Python ints do not: the Python result is wrapped to int64, as NumPy does),
and where Python raises ValueError/OverflowError for a domain error (``sqrt(-1)``,
``int(inf)``) compiled code returns nan/garbage, so those inputs are left
out.  Inputs where Python raises ZeroDivisionError must raise
ZeroDivisionError through the kernel too.
"""

import math

import numba
import numpy as np
import pytest

import ckernels

I64_MIN, I64_MAX = -2**63, 2**63 - 1
rng = np.random.default_rng(20240601)

# ------------------------------------------------------------- input domains --
F_EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.7, -2.25, 1e-300, -1e-300, 1e300, -1e300,
          5e-324, math.inf, -math.inf, math.nan, 1e-5, 100.0, math.pi]
I_EDGE = [0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, 100, -100, I64_MAX, I64_MIN, I64_MAX - 1,
          I64_MIN + 1, 2**31, -2**31]

DOMAINS = {
    "f": lambda n: F_EDGE + list(rng.standard_normal(n) * 10),
    "fpos": lambda n: [0.0, 1e-300, 0.5, 1.0, 2.0, 1e300, math.inf] +
    list(np.abs(rng.standard_normal(n)) * 100),
    "fmod": lambda n: [0.0, -0.0, 1.0, -1.0, 0.5, 3.7, -2.25, 1e15, -1e15, 1e-5] +
    list(rng.standard_normal(n) * 1e6),
    "i": lambda n: I_EDGE + [int(v) for v in rng.integers(-1000, 1000, n)],
    "ismall": lambda n: [0, 1, -1, 2, -2, 5, -5, 99, -99] +
    [int(v) for v in rng.integers(-10_000, 10_000, n)],
    "inat": lambda n: [0, 1, 2, 3, 10, 100] + [int(v) for v in rng.integers(0, 300, n)],
    "ipos": lambda n: [1, 2, 3, 7, 27, 97, 871] + [int(v) for v in rng.integers(1, 10_000, n)],
    "c": lambda n: [0j, 1 + 0j, -1j, complex(math.inf, 0), complex(0, math.nan), 3 - 4j] +
    [complex(a, b) for a, b in rng.standard_normal((n, 2)) * 5],
}


def _inputs(domains, n=60):
    cols = [DOMAINS[d](n) for d in domains]
    if len(cols) == 1:
        return [(v,) for v in cols[0]]
    # edge x edge products for the first 12 values of each, then random pairs
    out = []
    heads = [c[:12] for c in cols]
    if len(cols) == 2:
        out += [(a, b) for a in heads[0] for b in heads[1]]
    k = max(len(c) for c in cols)
    for i in range(k):
        out.append(tuple(c[(i * (j + 1) * 7) % len(c)] for j, c in enumerate(cols)))
    return out


# ------------------------------------------------------------------- corpus --
CORPUS = []


def case(sig, *domains, rtol=0.0, vectorize=True):
    def deco(fn):
        jk = ckernels.jit(sig)(fn)
        CORPUS.append((fn.__name__, sig, fn, jk, domains, rtol, vectorize))
        return jk
    return deco


# arithmetic (float)
@case("float64(float64, float64)", "f", "f")
def f_add(x, y):
    return x + y


@case("float64(float64, float64)", "f", "f")
def f_sub(x, y):
    return x - y


@case("float64(float64, float64)", "f", "f")
def f_mul(x, y):
    return x * y


@case("float64(float64, float64)", "f", "f")
def f_div(x, y):
    return x / y


@case("float64(float64)", "f")
def f_poly(x):
    return 3.0 * x * x - 2.0 * x + 1.0


@case("float64(float64, float64)", "f", "f")
def f_axpy(x, y):
    return 2.0 * x + y


@case("float64(float64)", "f")
def f_negabs(x):
    return -abs(x)


@case("float64(float64, float64)", "fmod", "fmod")
def f_floordiv(x, y):
    return x // y


@case("float64(float64, float64)", "fmod", "fmod")
def f_mod(x, y):
    return x % y


# arithmetic (int64, wrapping)
@case("int64(int64, int64)", "i", "i")
def i_add(a, b):
    return a + b


@case("int64(int64, int64)", "i", "i")
def i_mul(a, b):
    return a * b


@case("int64(int64, int64)", "i", "ismall")
def i_floordiv(a, b):
    return a // b


@case("int64(int64, int64)", "i", "ismall")
def i_mod(a, b):
    return a % b


@case("int64(int64, int64)", "ismall", "ismall")
def i_divmod(a, b):
    q, r = divmod(a, b)
    return q * 100000 + r


@case("int64(int64, int64)", "i", "i")
def i_bits(a, b):
    return (a & 0xFF) ^ (b | 3)


@case("int64(int64)", "ismall")
def i_shift(a):
    return (a << 3) >> 1


@case("int64(int64)", "i")
def i_abs(a):
    return abs(a)


@case("int64(int64, int64)", "ismall", "ismall")
def i_minmax(a, b):
    return max(a, b) - min(a, b)


@case("int64(int64)", "ismall")
def i_square(a):
    return a ** 2


@case("uint32(uint32, uint32)", "inat", "inat")
def u_sub(a, b):
    return a - b if a >= b else b - a


# mixed int/float
@case("float64(int64, float64)", "ismall", "f")
def mixed_axpy(a, x):
    return a * x + 1.0


@case("int64(float64)", "fmod")
def to_int(x):
    return int(x)


@case("bool(float64)", "f")
def in_range(x):
    return x > 0.0 and x < 10.0


@case("float32(float32)", "fmod")
def f32_half(x):
    return x * 0.5


@case("int32(int16, int8)", "ismall", "ismall")
def narrow_ints(a, b):
    return a + b


# math functions
@case("float64(float64)", "f", rtol=1e-14)
def m_sin(x):
    return math.sin(x)


@case("float64(float64)", "f", rtol=1e-14)
def m_cos(x):
    return math.cos(x)


@case("float64(float64)", "f", rtol=1e-14)
def m_exp(x):
    return math.exp(x)


@case("float64(float64)", "fpos", rtol=1e-14)
def m_log(x):
    return math.log(x)


@case("float64(float64)", "f", rtol=1e-15)
def m_sqrt(x):
    return math.sqrt(x)


@case("float64(float64)", "f", rtol=1e-14)
def m_tanh(x):
    return math.tanh(x)


@case("float64(float64, float64)", "f", "f", rtol=1e-14)
def m_atan2(y, x):
    return math.atan2(y, x)


@case("float64(float64, float64)", "f", "f", rtol=1e-15)
def m_hypot(x, y):
    return math.hypot(x, y)


@case("float64(float64)", "fmod")
def m_floor(x):
    return math.floor(x) + 0.0


@case("float64(float64, float64)", "f", "f")
def m_copysign(x, y):
    return math.copysign(x, y)


@case("float64(float64)", "f", rtol=1e-14)
def m_expm1_log1p(x):
    return math.expm1(x) if x < 1.0 else math.log1p(x)


@case("float64(float64)", "fpos", rtol=1e-14)
def m_pow(x):
    return x ** 2.5


@case("float64(float64)", "f")
def m_classify(x):
    if math.isnan(x):
        return 1.0
    if math.isinf(x):
        return 2.0
    return x


# branches and early returns
@case("int64(float64)", "f")
def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


@case("float64(float64, float64, float64)", "f", "f", "f")
def clamp(x, lo, hi):
    if lo > hi:
        lo, hi = hi, lo
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@case("float64(float64)", "f")
def piecewise(x):
    if x < -1.0:
        if x < -10.0:
            return -10.0
        return x * 2.0
    elif x < 1.0:
        return x * x
    return 1.0 + (x - 1.0) * 0.5


@case("int64(int64)", "ismall")
def leading_digit(a):
    if a < 0:
        a = -a
    while True:
        if a < 10:
            return a
        a //= 10


# loops
@case("int64(int64)", "inat")
def sum_to(n):
    s = 0
    for k in range(n):
        s += k
    return s


@case("int64(int64)", "inat")
def factorial_mod(n):
    p = 1
    for k in range(2, n + 1):
        p = (p * k) % 1000003
    return p


@case("int64(int64)", "ipos")
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@case("int64(int64, int64)", "ismall", "ismall")
def gcd(a, b):
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


@case("float64(int64)", "inat", rtol=1e-15)
def basel(n):
    s = 0.0
    for k in range(1, n + 1):
        s += 1.0 / (k * k)
    return s


@case("float64(float64)", "fpos", rtol=1e-15)
def newton_sqrt(x):
    if x == 0.0 or x != x or x == math.inf:
        return x
    g = x if x > 1.0 else 1.0
    for _ in range(2000):
        ng = 0.5 * (g + x / g)
        if ng == g:
            break
        g = ng
    return g


# tuples
@case("float64(float64, float64)", "f", "f")
def tuple_swap(x, y):
    t = (x, y)
    u = (t[1], t[0])
    return u[0] - u[1]


@case("float64(float64)", "f", rtol=1e-14)
def sincos_norm(x):
    s, c = math.sin(x), math.cos(x)
    return s * s + c * c


@case("int64(int64)", "ismall")
def tuple_index(i):
    t = (3, 1, 4, 1, 5, 9, 2, 6)
    return t[abs(i) % 8]


# calls to other jitted functions
@case("float64(float64, float64)", "f", "f")
def calls_poly(x, y):
    return f_poly(f_axpy(x, y))


@case("float64(int64)", "ismall", rtol=1e-14)
def calls_mixed(a):
    return m_sqrt(abs(a)) + sign(float(a))


# complex
@case("complex128(complex128)", "c")
def c_square(z):
    return z * z + 1j


@case("float64(complex128)", "c", rtol=1e-15)
def c_abs(z):
    return abs(z)


def test_corpus_size():
    assert len(CORPUS) >= 40


# ------------------------------------------------------------------- driver --
_NP = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
       "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
       "uint64": np.uint64, "float32": np.float32, "float64": np.float64,
       "complex128": np.complex128}


def _wrap(v, t):
    if t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        info = np.iinfo(_NP[t])
        span = int(info.max) - int(info.min) + 1
        return (int(v) - int(info.min)) % span + int(info.min)
    return v


def _fits(v, t):
    if t.startswith(("int", "uint")):
        info = np.iinfo(_NP[t])
        return info.min <= v <= info.max
    return True


def _check(got, expected, rtol, what):
    got = np.asarray(got)
    expected = np.asarray(expected, dtype=got.dtype)
    if rtol == 0.0 or got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, expected, err_msg=what)
        if got.dtype.kind == "f":   # signed zeros too
            np.testing.assert_array_equal(np.signbit(got), np.signbit(expected), err_msg=what)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, equal_nan=True,
                                   err_msg=what)


@pytest.mark.parametrize("entry", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_against_python(entry):
    name, sig, fn, jk, domains, rtol, vectorize = entry
    ret = sig[:sig.index("(")]
    argt = [a.strip() for a in sig[sig.index("(") + 1:-1].split(",")]
    ok, expected, zdiv = [], [], []
    for args in _inputs(domains):
        if not all(_fits(a, t) for a, t in zip(args, argt)):
            continue
        # what the function sees: values converted to the argument types
        conv = tuple(_NP[t](a).item() for a, t in zip(args, argt))
        if any(t == "float32" for t in argt) and any(
                isinstance(c, float) and math.isinf(c) and not math.isinf(a)
                for a, c in zip(args, conv)):
            continue
        try:
            with np.errstate(all="ignore"):
                r = fn(*conv)
        except ZeroDivisionError:
            zdiv.append(conv)
            continue
        except (ValueError, OverflowError):
            continue   # domain errors: compiled code returns nan / wraps
        if ret == "float32":
            r = float(np.float32(r))
        ok.append(conv)
        expected.append(_wrap(r, ret))
    assert len(ok) >= 20, f"{name}: too few comparable inputs"
    cols = [np.array([a[i] for a in ok], dtype=_NP[t]) for i, t in enumerate(argt)]
    got = jk(*cols)
    _check(got, expected, rtol, f"{name} (array)")
    # strided (non-unit) inputs and out=
    out = np.empty(2 * len(ok), dtype=_NP[ret])[::2]
    sparse = [np.repeat(c, 3)[::3] for c in cols]
    jk(*sparse, out=out)
    _check(out, expected, rtol, f"{name} (strided, out=)")
    # scalars
    for args, e in list(zip(ok, expected))[:8]:
        _check(jk(*args), e, rtol, f"{name}{args} (scalar)")
    # ZeroDivisionError parity
    for args in zdiv[:4]:
        with pytest.raises(ZeroDivisionError):
            jk(*args)
    # numba.vectorize on the same (valid) inputs
    if vectorize:
        vf = numba.vectorize([sig.replace("bool", "boolean")])(fn)
        with np.errstate(all="ignore"):
            want = vf(*cols)
        _check(got, want, rtol, f"{name} (vs numba.vectorize)")
