"""The context-level Python API for OpenCL: ``ctx.array``, ``ctx.empty``,
``arr.to(ctx)``, ``ckernels.opencl.to``, ``out=`` with device arrays, mixing
contexts, pyopencl interop, and a differential run of functions of the CPU
corpus (``test_jit_corpus``) through ``ctx.array`` -> jitted call ->
``.to_numpy()`` against the CPU results.  Skipped without an OpenCL platform."""

import math

import numpy as np
import pytest

import ckernels
from ckernels import errors
from ckernels.opencl import DeviceArray
from device_compare import compare  # the one device-result comparison (tests/python)

rng = np.random.default_rng(11)


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


@pytest.fixture(scope="module")
def ctx2(new_opencl_context):
    return new_opencl_context()


@pytest.fixture(scope="module")
def cpu():
    return ckernels.Context("cpu")


@ckernels.jit(["float32(float32, float32)", "float64(float64, float64)",
              "int64(int64, int64)"])
def axpy(x, y):
    return 2 * x + y


@ckernels.jit("int64(int64, int64)")
def idiv(a, b):
    return a // b


# ------------------------------------------------------------ ctx.array --
def test_array_from_numpy(ctx):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = ctx.array(a)
    assert isinstance(d, DeviceArray)
    assert d.context is ctx and d.shape == (3, 4) and d.dtype == np.float32
    np.testing.assert_array_equal(d.to_numpy(), a)


def test_array_from_list_with_type(ctx):
    d = ctx.array([1, 2, 3], type="float32")
    assert d.dtype == np.float32
    np.testing.assert_array_equal(d.to_numpy(), np.array([1, 2, 3], np.float32))
    d = ctx.array([[1, 2, 3], [4, 5, 6]], type="2 * 3 * int16")
    assert d.dtype == np.int16 and d.shape == (2, 3)
    np.testing.assert_array_equal(d.to_numpy(), [[1, 2, 3], [4, 5, 6]])
    d = ctx.array([True, False])
    assert d.dtype == np.bool_


def test_array_type_mismatch(ctx):
    with pytest.raises(errors.InvalidArgumentError, match="does not match"):
        ctx.array([1, 2, 3], type="2 * int32")


def test_array_unsupported(ctx):
    assert ctx.array(["a", "b"]).tolist() == ["a", "b"]   # strings live on devices now
    with pytest.raises(errors.NotSupportedError):
        ctx.array(np.zeros(3, np.complex128))
    assert ctx.array([[1], [2, 3]], type="2 * var * int32").tolist() == [[1], [2, 3]]


def test_array_from_ckernel_array(ctx):
    h = ckernels.array([1.5, 2.5])
    d = ctx.array(h)
    np.testing.assert_array_equal(d.to_numpy(), [1.5, 2.5])


def test_array_cpu_context(cpu):
    h = cpu.array([1, 2, 3], type="int32")
    assert isinstance(h, ckernels.Array)
    assert h.to_list() == [1, 2, 3] and str(h.dtype) == "int32"


# ------------------------------------------------------------ ctx.empty --
def test_empty_forms(ctx):
    e = ctx.empty((2, 3), "float32")
    assert e.shape == (2, 3) and e.dtype == np.float32 and e.context is ctx
    e = ctx.empty(5)
    assert e.shape == (5,) and e.dtype == np.float64
    e = ctx.empty("int32", (4,))
    assert e.shape == (4,) and e.dtype == np.int32
    e = ctx.empty("3 * 2 * uint8")
    assert e.shape == (3, 2) and e.dtype == np.uint8
    e = ctx.empty(np.float32, (7,))
    assert e.shape == (7,) and e.dtype == np.float32
    e = ctx.empty("int64")
    assert e.shape == () and e.size == 1
    e = ctx.empty((0,), "float32")
    assert e.to_numpy().shape == (0,)


def test_empty_cpu_context(cpu):
    h = cpu.empty("float32", (3,))
    assert isinstance(h, ckernels.Array) and h.shape == (3,)
    h = cpu.empty((2,), "int64")
    assert h.shape == (2,) and str(h.dtype) == "int64"


# ------------------------------------------------------------------ to() --
def test_to_cpu_and_back(ctx, cpu):
    a = rng.standard_normal((4, 5)).astype(np.float32)
    d = ctx.array(a)
    h = d.to(cpu)
    assert isinstance(h, ckernels.Array)
    np.testing.assert_array_equal(np.asarray(h), a)
    d2 = ckernels.opencl.to(ctx, h)
    assert isinstance(d2, DeviceArray) and d2.context is ctx
    np.testing.assert_array_equal(d2.to_numpy(), a)


def test_to_same_context_is_noop(ctx):
    d = ctx.array(np.arange(3))
    assert d.to(ctx) is d
    assert ckernels.opencl.to(ctx, d) is d


def test_to_other_opencl_context(ctx, ctx2):
    d = ctx.array(np.arange(6, dtype=np.int32))
    e = d.to(ctx2)
    assert e is not d and e.context is ctx2 and ctx2 != ctx
    np.testing.assert_array_equal(e.to_numpy(), np.arange(6))
    # a kernel on the copy runs in ctx2
    r = axpy(ctx2.array(np.arange(3.0)), ctx2.array(np.ones(3)))
    assert r.context is ctx2
    np.testing.assert_array_equal(r.to_numpy(), [1.0, 3.0, 5.0])


def test_to_host_numpy_and_list(ctx, cpu):
    d = ckernels.opencl.to(ctx, [1.0, 2.0])
    np.testing.assert_array_equal(d.to_numpy(), [1.0, 2.0])
    h = ckernels.opencl.to(cpu, np.arange(3))
    assert isinstance(h, ckernels.Array) and h.to_list() == [0, 1, 2]
    assert ctx.to(np.ones(2)).context is ctx


def test_to_rejects_non_context(ctx):
    with pytest.raises(errors.InvalidArgumentError):
        ctx.array([1.0]).to("cpu")
    with pytest.raises(errors.InvalidArgumentError):
        ckernels.opencl.to(None, [1])


def test_roundtrip_dtypes(ctx, cpu):
    for dt in (np.int8, np.uint16, np.int32, np.uint64, np.float32, np.float64, np.bool_):
        a = (rng.integers(0, 100, (3, 3)) % 2 == 0) if dt is np.bool_ else \
            rng.integers(0, 100, (3, 3)).astype(dt)
        back = np.asarray(ctx.array(a).to(cpu).to_numpy()) if dt is not np.bool_ else \
            ctx.array(a).to_numpy()
        np.testing.assert_array_equal(back, a)
        assert back.dtype == a.dtype


def test_device_copy(ctx):
    d = ctx.array(np.arange(5.0))
    c = d.copy()
    assert c.buffer is not d.buffer
    np.testing.assert_array_equal(c.to_numpy(), np.arange(5.0))


def test_context_equality(ctx, ctx2, cpu):
    assert ctx == ctx and ctx != ctx2 and ctx != cpu
    assert len({ctx, ctx, ctx2}) == 2


# --------------------------------------------------------------- out= ----
def test_out_device(ctx):
    x = ctx.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = ctx.array(np.ones(3, np.float32))
    out = ctx.empty((2, 3), "float32")
    r = axpy(x, y, out=out)
    assert r is out
    np.testing.assert_array_equal(out.to_numpy(),
                                  2 * np.arange(6, dtype=np.float32).reshape(2, 3) + 1)


def test_out_in_place(ctx):
    x = ctx.array(np.arange(4, dtype=np.float64))
    axpy(x, x, out=x)
    np.testing.assert_array_equal(x.to_numpy(), 3 * np.arange(4.0))


def test_out_dtype_mismatch(ctx):
    x = ctx.array(np.arange(3, dtype=np.float32))
    with pytest.raises(errors.CKTypeError, match="dtype"):
        axpy(x, x, out=ctx.empty((3,), "float64"))


def test_out_shape_mismatch(ctx):
    # the library's one broadcasting rule (as on the CPU): sources broadcast to out=
    x = ctx.array(np.arange(3, dtype=np.float32))
    with pytest.raises(errors.CKValueError, match=r"cannot broadcast shape \(3,\) to \(4,\)"):
        axpy(x, x, out=ctx.empty((4,), "float32"))
    with pytest.raises(ValueError, match=r"broadcast"):     # NumPy's (the ufunc path)
        axpy(np.arange(3, dtype=np.float32), 1.0, out=np.empty(4, np.float32))


def test_out_broadcasts_sources_like_the_cpu(ctx):
    x = np.arange(3, dtype=np.float32)
    out = ctx.empty((2, 3), "float32")
    assert axpy(ctx.array(x), np.float32(1), out=out) is out
    host = np.empty((2, 3), np.float32)
    axpy(x, np.float32(1), out=host)
    np.testing.assert_array_equal(out.to_numpy(), host)
    np.testing.assert_array_equal(host, np.broadcast_to(2 * x + 1, (2, 3)))


def test_out_wrong_kind_or_context(ctx, ctx2):
    x = ctx.array(np.arange(3, dtype=np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="DeviceArray"):
        axpy(x, x, out=np.empty(3, np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="different context"):
        axpy(x, x, out=ctx2.empty((3,), "float32"))


def test_out_error_path(ctx):
    a = ctx.array(np.array([1, 2, 3], np.int64))
    b = ctx.array(np.array([1, 0, 1], np.int64))
    with pytest.raises(errors.CKZeroDivisionError):
        idiv(a, b, out=ctx.empty((3,), "int64"))


# ------------------------------------------------------- mixing contexts --
def test_mixing_contexts(ctx, ctx2):
    x = ctx.array(np.ones(3))
    y = ctx2.array(np.ones(3))
    with pytest.raises(errors.InvalidArgumentError, match="different context"):
        axpy(x, y)


def test_mixing_host_and_device(ctx):
    x = ctx.array(np.ones(3))
    with pytest.raises(errors.InvalidArgumentError, match="copy host arrays"):
        axpy(x, np.ones(3))


def test_cpu_context_result_to_device(ctx, cpu):
    h = cpu.array([1.0, 2.0, 3.0])
    r = axpy(ctx.to(h), ctx.to(h))
    np.testing.assert_array_equal(np.asarray(r.to(cpu)), [3.0, 6.0, 9.0])


# ------------------------------------------------------------- pyopencl --
def test_from_pyopencl(ctx):
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla
    try:
        pctx = cl.create_some_context(interactive=False)
    except Exception as exc:  # noqa: BLE001 - any pyopencl set-up failure
        pytest.skip(f"pyopencl has no context: {exc}")
    q = cl.CommandQueue(pctx)
    a = rng.standard_normal(100).astype(np.float32)
    pa = cla.to_device(q, a)
    d = ckernels.opencl.from_pyopencl(ctx, pa)
    assert isinstance(d, DeviceArray) and d.context is ctx
    np.testing.assert_array_equal(d.to_numpy(), a)
    r = axpy(d, d)
    back = ckernels.opencl.to_pyopencl(r, q)
    np.testing.assert_array_equal(back.get(), 3 * a)
    buf = cl.Buffer(pctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    d2 = ckernels.opencl.from_pyopencl_buffer(ctx, q, buf, (10, 10), np.float32)
    np.testing.assert_array_equal(d2.to_numpy(), a.reshape(10, 10))
    with pytest.raises(errors.InvalidArgumentError):
        ckernels.opencl.from_pyopencl_buffer(ctx, q, buf, (200,), np.float32)
    with pytest.raises(errors.InvalidArgumentError):
        ckernels.opencl.from_pyopencl(ctx, a)


# --------------------------------------------- differential: CPU corpus --
corpus = pytest.importorskip("test_jit_corpus")
PICK = ["f_add", "f_div", "f_poly", "f_axpy", "f_floordiv", "f_mod", "i_floordiv", "i_mod",
        "i_bits", "i_minmax", "m_sin", "m_exp", "sign", "clamp", "gcd"]
CASES = [c for c in corpus.CORPUS if c[0] in PICK]


def _dtype(t):
    return np.dtype(np.bool_ if t == "bool" else t)


_compare = compare     # tests/python/device_compare.py


def test_corpus_pick():
    assert len(CASES) >= 10, [c[0] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_corpus_differential(ctx, cpu, case):
    name, sig, fn, jk, domains, rtol, _ = case
    from ckernels.jit import parse_signature
    psig = parse_signature(sig)
    if any(t == "float64" for t in (psig.ret,) + tuple(psig.args)) and not ctx.supports_fp64:
        pytest.skip("device without fp64")
    rows = []
    for args in corpus._inputs(domains):
        try:
            fn(*[a.item() if isinstance(a, np.generic) else a for a in args])
        except (ZeroDivisionError, ValueError, OverflowError):
            continue   # Python raises: left out (the error path is tested separately)
        rows.append(args)
    cols = [np.array([r[j] for r in rows], dtype=_dtype(t)) for j, t in enumerate(psig.args)]
    want = np.asarray(jk(*cols))                                  # CPU @ckernels.jit
    host = [cpu.array(c) for c in cols]                           # host arrays (cpu ctx)
    got = jk(*[ctx.array(h) for h in host])                       # ctx.array -> device
    assert isinstance(got, DeviceArray) and got.context is ctx
    _compare(got.to_numpy(), want, name)
    if rtol == 0.0 and want.dtype.kind == "f":
        # the same through to(): device -> cpu context
        _compare(np.asarray(got.to(cpu)), want, name)


def test_corpus_zero_division_on_device(ctx):
    case = next(c for c in corpus.CORPUS if c[0] == "i_floordiv")
    jk = case[3]
    with pytest.raises(ZeroDivisionError):
        jk(ctx.array(np.array([5, 6], np.int64)), ctx.array(np.array([1, 0], np.int64)))


def test_nan_inf_roundtrip(ctx, cpu):
    a = np.array([math.nan, math.inf, -math.inf, -0.0, 5e-324], np.float64)
    back = np.asarray(ctx.array(a).to(cpu))
    assert np.isnan(back[0]) and back[1] == math.inf and back[2] == -math.inf
    assert math.copysign(1.0, back[3]) == -1.0 and back[4] == 5e-324
