"""Null-aware jitted functions on devices (``docs/device-code.md`` "Null-aware
functions"): ``?T`` arguments that see ``None``, ``?R`` results that may be
``None``, checked against the CPU jit on PoCL (random nulls, bit offsets 1-7
from sliced pyarrow arrays) and, as CUDA C, through NVRTC + ptxas + the host
shim."""

import ctypes

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.array import DeviceArray
from ckernels.device.nulls import DeviceOptionArray
from ckernels.errors import NotSupportedError

pa = pytest.importorskip("pyarrow")

SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("?float64(?float64)")
def zero_null(x):
    if x is None:
        return 0.0
    return x * 2.0


@ckernels.jit("?int64(?int64, int64)")
def maybe_div(x, y):
    if x is None:
        return -1
    if y == 0:
        return None
    return x // y


@ckernels.jit("?bool(?bool)")
def flip(b):
    if b is None:
        return True
    if b:
        return None
    return False


@ckernels.jit("int64(?int64)")
def count_or(x):
    if x is not None:
        return x + 1
    return -7


@ckernels.jit("?int64(?int64)")
def too_big(x):
    if x is None:
        return None
    if x > 40:
        raise ValueError("too big")
    return x


@ckernels.jit("?float64(?float64)")
def unwrap(x):
    return x * 2.0


ints_with_nulls = st.lists(st.one_of(st.none(), st.integers(-50, 50)), min_size=0, max_size=40)


def _sliced(values, start, typ):
    """``values`` as a pyarrow array at bit offset ``start`` (a slice)."""
    return pa.array([None] * start + values + [None] * 3, type=typ).slice(start, len(values))


def _host(p):
    return ckernels.asarray(p)


@SETTINGS
@given(values=ints_with_nulls, start=st.integers(1, 7))
def test_float_null_aware_matches_the_cpu(ctx, values, start):
    p = _sliced([None if v is None else v / 4 for v in values], start, pa.float64())
    want = zero_null(_host(p)).tolist()
    got = zero_null(ctx.array(p))
    assert got.tolist() == want
    assert want == [0.0 if v is None else v / 2 for v in values]


@SETTINGS
@given(a=ints_with_nulls, b=ints_with_nulls, start=st.integers(1, 7))
def test_int_null_aware_with_a_plain_argument_matches_the_cpu(ctx, a, b, start):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    pa_ = _sliced(a, start, pa.int64())
    pb = _sliced([None if v is None else v % 3 for v in b], (start + 3) % 8, pa.int64())
    # nulls of the plain argument propagate; a 0 there gives None from the body
    want = maybe_div(_host(pa_), _host(pb)).tolist()
    got = maybe_div(ctx.array(pa_), ctx.array(pb))
    assert isinstance(got, DeviceOptionArray) and got.tolist() == want
    want_s = maybe_div(_host(pa_), 2).tolist()
    assert maybe_div(ctx.array(pa_), 2).tolist() == want_s


@SETTINGS
@given(values=st.lists(st.one_of(st.none(), st.booleans()), max_size=40),
       start=st.integers(1, 7))
def test_bool_null_aware_matches_the_cpu(ctx, values, start):
    p = _sliced(values, start, pa.bool_())
    want = flip(_host(p)).tolist()
    assert flip(ctx.array(p)).tolist() == want
    got = count_or(ctx.array(_sliced([None if v is None else int(v) for v in values], start,
                                     pa.int64())))
    assert isinstance(got, DeviceArray)      # a plain result: no nulls
    assert got.tolist() == [-7 if v is None else int(v) + 1 for v in values]


def test_plain_device_arrays_scalars_and_errors(ctx):
    d = ctx.array(np.arange(5, dtype=np.float64))
    assert zero_null(d).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert maybe_div(ctx.array([1, None, 9]), 0).tolist() == [None, -1, None]
    assert maybe_div(None, ctx.array([1, 2])).tolist() == [-1, -1]
    assert zero_null(ctx.array(pa.array([], pa.float64()))).tolist() == []
    with pytest.raises(ckernels.errors.CKValueError, match="too big") as dev:
        too_big(ctx.array([1, None, 45, 3]))
    with pytest.raises(ckernels.errors.CKValueError, match="too big") as cpu:
        too_big(ckernels.array([1, None, 45, 3]))
    assert "element 2" in str(dev.value) and "test_device_null_aware.py" in str(dev.value)
    assert type(dev.value) is type(cpu.value)
    # a None read as a number: Numba's TypeError, as on the CPU
    with pytest.raises(Exception) as cpu:
        unwrap(ckernels.array([1.0, None]))
    with pytest.raises(Exception) as dev:
        unwrap(ctx.array([1.0, None]))
    assert type(dev.value) is type(cpu.value) and "got None" in str(dev.value)
    assert unwrap(ctx.array([1.0, 2.5])).tolist() == [2.0, 5.0]


def test_refusals(ctx):
    with pytest.raises(NotSupportedError, match="numbers and bools"):
        too_big(ctx.array(["a", None]))
    assert zero_null(ctx.array(np.ones((2, 2)))).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(NotSupportedError, match="one shape"):
        maybe_div(ctx.array(np.ones(3, np.int64)), ctx.array(np.ones(2, np.int64)))
    with pytest.raises(NotSupportedError, match="out="):
        zero_null(ctx.array([1.0, None]), out=ctx.empty(2, "float64"))


def test_source_shows_the_optional_struct():
    src = zero_null.source("opencl")
    assert "ck_opt_float64_t" in src and "ck_some_float64" in src


# ---- CUDA C: NVRTC + ptxas + the host shim, against the CPU jit ---------------------------
def test_null_aware_kernels_as_cuda_c_match_the_cpu(tmp_path):
    from ckernels import dialects
    from ckernels.jit.c_emit import optionals
    from ckernels.jit.c_emit.program import EmittedKernel
    from ckernels.jit.signature import element_type
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    i64, u8 = element_type("int64"), element_type("uint8")
    comp = next(iter(maybe_div.compiled.values()))
    prog = EmittedKernel(dialects.get("cuda"), "python")
    prog.entry = prog.function(maybe_div.py_func, comp.sig.numba_args,
                               comp.sig.ret_element.numba)
    specs = [(i64, False, True), (i64, False, False)]
    prog.finish(optionals.aware_kernels(prog, specs, i64, True))
    src = prog.source
    ptx = ptx_assembled_or_skip(tmp_path, src)
    assert optionals.AWARE_KERNEL in ptx and optionals.PACK_KERNEL in ptx
    shim = (
        'extern "C" void ck_run(unsigned char *out, unsigned char *ok, const unsigned char *a, '
        "const unsigned char *ba, unsigned long long bita, const unsigned char *b, "
        "const unsigned char *g, unsigned long long gbit, unsigned long long n, int *err, "
        "unsigned char *bits, unsigned int block) {\n"
        f"  ck_shim_grid(n, block, [&] {{ {optionals.AWARE_KERNEL}(out, 0, ok, 0, a, 0, ba, 0, "
        "bita, b, 0, g, 0, gbit, n, err); });\n"
        f"  ck_shim_grid((n + 7) / 8, block, [&] {{ {optionals.PACK_KERNEL}(bits, 0, ok, 0, n); "
        "});\n"
        "}\n")
    lib = host_shim_library(tmp_path, src + shim)
    lib.ck_run.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_uint64] + [ctypes.c_void_p] * 2 + \
        [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
    rng = np.random.default_rng(32)
    n = 200
    a = rng.integers(-60, 60, n).astype(np.int64)
    b = rng.integers(-2, 3, n).astype(np.int64)
    va, vb = rng.random(n) < 0.7, rng.random(n) < 0.8
    oa, ob = 5, 3
    ra = np.packbits(np.concatenate([np.zeros(oa, bool), va]), bitorder="little")
    rb = np.packbits(np.concatenate([np.zeros(ob, bool), vb]), bitorder="little")
    out = np.full(n, 99, np.int64)
    ok = np.zeros(n, np.uint8)
    bits = np.zeros((n + 7) // 8, np.uint8)
    err = np.zeros(4, np.int32)
    lib.ck_run(out.ctypes.data, ok.ctypes.data, a.ctypes.data, ra.ctypes.data, oa,
               b.ctypes.data, rb.ctypes.data, ob, n, err.ctypes.data, bits.ctypes.data,
               dialects.CUDA_BLOCK)
    assert err[0] == 0
    valid = np.unpackbits(bits, bitorder="little")[:n].astype(bool)
    want = maybe_div(ckernels.asarray(pa.array(a, mask=~va)),
                     ckernels.asarray(pa.array(b, mask=~vb))).tolist()
    assert [int(x) if v else None for x, v in zip(out, valid)] == want
    assert not out[~valid].any()
