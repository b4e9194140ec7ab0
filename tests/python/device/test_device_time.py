"""Instants and durations on devices (``docs/device-code.md``, "Time values
on devices"): ``ctx.array`` of ``datetime64``/``timedelta64`` data of every
unit, what comes back (NumPy's values and ``tolist``), jitted functions with
time signatures on PoCL checked against the CPU jit (NaT included, random
counts), and the same kernels as CUDA C through NVRTC + ptxas + the host
shim."""

import ctypes

import numpy as np
import pytest

import ckernels
from ckernels.errors import CKTypeError, NotSupportedError

UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns")
NAT = np.iinfo(np.int64).min


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


# ---- the functions (compiled once, each run on PoCL, the shim and the CPU) --------------
@ckernels.jit("datetime64[s](datetime64[s], timedelta64[D])")
def shift(t, d):
    return t + d


@ckernels.jit("timedelta64[us](datetime64[s], datetime64[ms], timedelta64[us])")
def elapsed(a, b, c):
    return (a - b) - (c + c) + -c + abs(c - c - c)


@ckernels.jit("int64(datetime64[M], datetime64[Y], timedelta64[D], datetime64[D])")
def calendar(m, y, d, e):
    # months and years become days by the calendar (Numba's rule)
    return np.int64(m + d) * 3 + np.int64(e - y) + 5 * np.int64((d + m) - (y + d))


@ckernels.jit("int64(datetime64[s], datetime64[D], timedelta64[h], timedelta64[m])")
def compare(a, b, c, d):
    return (1 * (a < b) + 2 * (a <= b) + 4 * (a == b) + 8 * (a != b) + 16 * (a > b)
            + 32 * (a >= b) + 64 * (c < d) + 128 * (c == d) + 256 * (c != d) + 512 * (c >= d))


@ckernels.jit("float64(timedelta64[s], float64, int64, timedelta64[ms])")
def scale(d, x, n, e):
    t = d * x + d / x - 2 * d + d // n + d / n + n * d
    return np.int64(t) + d / e + 1000.0 * np.isnat(t)


@ckernels.jit("int64(datetime64[s])")
def features(t):
    later = t + np.timedelta64(1, "D") > np.datetime64("2000-01-01T00:00:00")
    return np.int64(t) + 1000 * np.isnat(t) + 7 * later


@ckernels.jit
def lazy(t, d):
    return t - d


def _times(rng, n, unit, lo=-10**9, hi=10**9, nat=0.1):
    v = rng.integers(lo, hi, n, dtype=np.int64)
    v[rng.random(n) < nat] = NAT
    return v.view(f"M8[{unit}]")


def _deltas(rng, n, unit, lo=-10**6, hi=10**6, nat=0.1):
    v = rng.integers(lo, hi, n, dtype=np.int64)
    v[rng.random(n) < nat] = NAT
    return v.view(f"m8[{unit}]")


def _cases(rng, n=257):
    """(function, host arguments) of every function above."""
    sec = _times(rng, n, "s", -10**6, 10**6)
    days = np.where(rng.random(n) < 0.3, sec.astype("M8[D]"), _times(rng, n, "D", -12, 12))
    return [
        (shift, (_times(rng, n, "s"), _deltas(rng, n, "D", -10**4, 10**4))),
        (elapsed, (_times(rng, n, "s"), _times(rng, n, "ms"), _deltas(rng, n, "us"))),
        (calendar, (_times(rng, n, "M", -30000, 30000), _times(rng, n, "Y", -3000, 3000),
                    _deltas(rng, n, "D", -10**6, 10**6), _times(rng, n, "D", -10**6, 10**6))),
        (compare, (sec, days, _deltas(rng, n, "h", -50, 50), _deltas(rng, n, "m", -3000, 3000))),
        (scale, (_deltas(rng, n, "s"), np.where(rng.random(n) < 0.1, 0.0, rng.normal(0, 3, n)),
                 rng.integers(-5, 5, n), _deltas(rng, n, "ms"))),
        (features, (_times(rng, n, "s"),)),
    ]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    if want.dtype.kind in "Mm":
        got, want = got.view(np.int64), want.view(np.int64)
    np.testing.assert_array_equal(got, want)


# ---- transfers ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["M", "m"])
def test_time_arrays_of_every_unit_go_to_the_device_and_back(ctx, kind):
    rng = np.random.default_rng(5)
    for unit in UNITS:
        host = (_times if kind == "M" else _deltas)(rng, 9, unit, -10**5, 10**5, nat=0.3)
        d = ctx.array(host)
        assert d.dtype == host.dtype and d.shape == (9,)
        assert str(d.type) == f"9 * {'datetime' if kind == 'M' else 'timedelta'}[unit='{unit}']"
        assert f"{host.dtype}" in repr(d)
        _same(d.get(), host)
        assert d.tolist() == host.tolist()          # datetime/timedelta objects, None at NaT
        assert d[2:5].tolist() == host[2:5].tolist()
        assert str(d) == str(host)
        _same(ctx.array(ckernels.asarray(host)).get(), host)    # a host ckernels.Array too


def test_time_arrays_refused_where_they_have_no_type(ctx):
    with pytest.raises(NotSupportedError, match="no ckernels time type"):
        ctx.array(np.zeros(3, "M8[5s]"))
    big = np.arange(3, dtype=">i8").view(">M8[s]")         # byte-swapped: converted
    assert ctx.array(big).tolist() == big.tolist()


def test_time_arrays_leave_the_device_as_arrow_time_types(ctx):
    pa = pytest.importorskip("pyarrow")
    for host, want in ((np.array(["2024-01-01", "NaT"], "M8[s]"), pa.timestamp("s")),
                       (np.array([1, -2], "m8[ms]"), pa.duration("ms"))):
        schema, _ = ctx.array(host).__arrow_c_device_array__()
        assert pa.Field._import_from_c_capsule(schema).type == want
    with pytest.raises(NotSupportedError, match="no Arrow type"):
        ctx.array(np.array([1], "M8[D]")).__arrow_c_device_array__()
    with pytest.raises(BufferError, match="no DLPack equivalent"):
        ctx.array(np.array([1], "M8[s]")).__dlpack__()


# ---- jitted functions on PoCL against the CPU jit -----------------------------------------
def test_time_functions_on_opencl_match_the_cpu_jit(ctx):
    rng = np.random.default_rng(31)
    for f, args in _cases(rng):
        want = f(*args)
        got = f(*[ctx.array(a) for a in args])
        _same(got.get(), want)


@pytest.mark.allow_memblock_leak   # each lazy signature compiled is kept by its function
def test_scalar_time_operands_and_lazy_units(ctx):
    rng = np.random.default_rng(2)
    t = _times(rng, 50, "s")
    d = ctx.array(t)
    one_day = np.timedelta64(1, "D")
    _same(shift(d, one_day).get(), shift(t, one_day))
    _same(shift(d, np.timedelta64(-3, "D")).get(), t + np.timedelta64(-3, "D"))
    got = lazy(d, np.timedelta64(90, "m"))          # compiled for the operands' units
    _same(got.get(), lazy(t, np.timedelta64(90, "m")))
    assert got.dtype == np.dtype("M8[s]")
    _same(lazy(d, ctx.array(t)).get(), t - t)       # instant - instant: a duration


def test_a_device_array_of_another_unit_is_refused(ctx):
    d = ctx.array(np.arange(4).view("M8[m]"))     # minutes cast safely to seconds
    with pytest.raises(CKTypeError, match="time units are not converted in device kernels"):
        shift(d, np.timedelta64(1, "D"))


def test_time_arrays_copy_convert_to_counts_and_refuse_device_ops(ctx):
    t = np.array(["2024-01-01", "NaT", "1969-12-31"], "M8[s]")
    d = ctx.array(t)
    _same(d[::-2].copy().get(), t[::-2])                       # a strided copy on the device
    _same(d.astype("int64").get(), t.astype("int64"))          # the counts, NaT as INT64_MIN
    _same(ctx.array(np.arange(3)).astype("M8[s]").get(), np.arange(3).astype("M8[s]"))
    _same(ctx.full(2, np.datetime64("2020-01-01", "s"), "M8[s]").get(),
          np.full(2, np.datetime64("2020-01-01", "s")))
    e = ctx.array(t)
    e[::2] = np.datetime64("2001-01-01")
    want = t.copy()
    want[::2] = np.datetime64("2001-01-01")
    _same(e.get(), want)
    e[1:] = np.array(["2002-03-04", "NaT"], "M8[D]")      # host data: units converted there
    want[1:] = np.array(["2002-03-04", "NaT"], "M8[D]")
    _same(e.get(), want)
    e.set(np.array(["2003-01-01T00:00:01"], "M8[ms]"))
    _same(e.get(), np.full(3, np.datetime64("2003-01-01T00:00:01", "s")))
    with pytest.raises(NotSupportedError, match="convert units on the host"):
        d.astype("M8[ms]")
    for op in (lambda: d + np.timedelta64(1, "D"), lambda: d < d, lambda: d.sum(),
               lambda: ckernels.ops.maximum(d, d)):
        with pytest.raises(NotSupportedError, match="no device kernel for datetime64"):
            op()


def test_dictionary_columns_are_refused_on_devices(ctx):
    pa = pytest.importorskip("pyarrow")
    col = pa.DictionaryArray.from_arrays(pa.array([0, 1, None], pa.int32()), pa.array(["a", "b"]))
    for obj in (col, ckernels.asarray(col), col.fill_null("a")):
        with pytest.raises(NotSupportedError, match="dictionary-encoded column .* cannot live"):
            ctx.array(obj)


# ---- CUDA C: NVRTC + ptxas + the host shim, against the CPU jit ---------------------------
def test_time_kernels_as_cuda_c_compile_assemble_and_match_the_cpu(tmp_path):
    from ckernels import dialects
    from ckernels.jit import c_emit
    from ckernels.jit.device import target
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    tgt = target("cuda")
    rng = np.random.default_rng(8)
    cases = _cases(rng, 300)
    units, shims = [], []
    for k, (f, args) in enumerate(cases):
        comp = next(iter(f.compiled.values()))
        prog = tgt.program(f, comp)
        src = prog.text() + "\n" + c_emit.entry_wrapper(
            prog, [(e, False) for e in comp.sig.arg_elements], comp.sig.ret_element)
        src = src.replace(f" {c_emit.KERNEL_NAME}(", f" ck_t{k}_kernel(")
        units.append(f"namespace ck_t{k} {{\n{tgt.dialect.header(prog)}{src}\n}}\n")
        params = ", ".join(f"const unsigned char *a{i}" for i in range(len(args)))
        kargs = "".join(f"a{i}, 0, 8, " for i in range(len(args)))
        shims.append(
            f'extern "C" void ck_t{k}_run(unsigned char *out, {params}, unsigned long long n, '
            "int *err, const long long *meta, unsigned int block) {\n"
            f"  ck_shim_grid(n, block, [&] {{ ck_t{k}::ck_t{k}_kernel(out, 0, 8, {kargs}"
            "meta, 1, n, err); });\n}\n")
    src = "".join(units)
    ptx_assembled_or_skip(tmp_path, src)
    lib = host_shim_library(tmp_path, src + "".join(shims))
    meta = np.zeros(1, np.int64)
    for k, (f, args) in enumerate(cases):
        want = np.asarray(f(*args))
        n = len(want)
        host = [np.ascontiguousarray(np.asarray(a).astype(e.numpy)).view(np.uint8)
                if np.asarray(a).dtype.kind not in "Mm" else
                np.ascontiguousarray(a).view(np.uint8)
                for a, e in zip(args, next(iter(f.compiled.values())).sig.arg_elements)]
        out = np.zeros(n, want.dtype if want.dtype.kind not in "Mm" else np.int64)
        err = np.zeros(4, np.int32)
        run = getattr(lib, f"ck_t{k}_run")
        run.argtypes = [ctypes.c_void_p] * (1 + len(args)) + [ctypes.c_uint64, ctypes.c_void_p,
                                                               ctypes.c_void_p, ctypes.c_uint]
        run(out.ctypes.data, *[h.ctypes.data for h in host], n, err.ctypes.data,
            meta.ctypes.data, dialects.CUDA_BLOCK)
        assert err[0] == 0, f.__name__
        _same(out.view(want.dtype) if want.dtype.kind in "Mm" else out, want)
