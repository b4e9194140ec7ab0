"""CUDA from Python: contexts, device arrays, ``@ckernels.jit`` on CUDA, and
sharing memory with other libraries (``__cuda_array_interface__``, DLPack).

Two halves.  What needs no GPU runs everywhere: the errors without a driver or
device, NVRTC found in this interpreter's wheels, the validation of foreign
``__cuda_array_interface__`` dicts, the DLPack capsule machinery (against
NumPy, on host memory), wrapping foreign memory in a buffer (on a CPU
context).  What needs a GPU is marked ``cuda`` and uses the ``cuda_ctx``
fixture, which skips with the library's reason when there is none; ``make
test-gpu`` runs it on a GPU machine (with CuPy, numba-cuda or PyTorch where
installed, each skipped otherwise).
"""

from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import ckernels
from ckernels import errors
from ckernels.backends import cuda as ccuda
from ckernels.backends import dlpack as dl
from ckernels.context.buffer import Buffer
from ckernels.device.base import cuda_array_interface, export_dlpack

import test_jit_dims_devices as dd   # imported here: its module-level functions hold memblocks
import test_opencl_jit as ocl_tests


def _cuda_unavailable_reason():
    try:
        n = ccuda.device_count()
    except errors.BackendError as exc:
        return str(exc)
    return None if n else "CUDA driver present but no device"


NO_GPU = _cuda_unavailable_reason()


@pytest.fixture(scope="module")
def cuda_ctx():
    if NO_GPU:
        pytest.skip(f"no CUDA device: {NO_GPU}")
    return ckernels.Context("cuda")


# ================================================================ no GPU ====
@pytest.mark.skipif(NO_GPU is None, reason="a CUDA device is present")
def test_no_device_is_a_clear_backend_error():
    with pytest.raises(errors.BackendError) as ei:
        ckernels.Context("cuda")
    msg = str(ei.value)
    assert "no CUDA driver found" in msg or "CUDA driver present but no device" in msg
    assert "\n" not in msg
    with pytest.raises(errors.BackendError):
        ckernels.Context("cuda", device=0)


def test_context_arguments_are_checked():
    with pytest.raises(errors.InvalidArgumentError, match="device=<ordinal>"):
        ckernels.Context("cuda", platform=0)
    for bad in (-1, 1.5, "0", True):
        with pytest.raises(errors.InvalidArgumentError, match="ordinal"):
            ckernels.Context("cuda", device=bad)
    with pytest.raises(errors.InvalidArgumentError, match="OpenCL"):
        ckernels.Context("cpu", device=0)


def test_nvrtc_from_this_interpreters_wheel(tmp_path):
    """A ``nvidia/cu13/lib`` folder on sys.path (as the nvidia-cuda-nvrtc wheel
    installs it) is where the library loads NVRTC from: before the toolkit."""
    try:
        real = ccuda.nvrtc_version().path
    except errors.BackendError as exc:
        pytest.skip(f"no NVRTC at all: {exc}")
    lib_dir = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    lib_dir.mkdir(parents=True)
    real_dir = os.path.dirname(os.path.realpath(real))
    for f in os.listdir(real_dir):
        if f.startswith(("libnvrtc.so", "libnvrtc-builtins.so")):
            os.symlink(os.path.join(real_dir, f), lib_dir / f)
    if not (lib_dir / "libnvrtc.so.13").exists() and not (lib_dir / "libnvrtc.so.12").exists():
        pytest.skip(f"the NVRTC found ({real}) is not libnvrtc.so.13/12")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path / 'site')!r})
        from ckernels.context import backend_cuda as cuda
        print(cuda.nvrtc_wheel_dirs()[0])
        print(cuda.nvrtc_version().path)
        ptx, _ = cuda.compile_ptx('extern "C" __global__ void k(int *p) {{ *p = 1; }}', "sm_80")
        print(".entry k" in ptx)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("CK_NVRTC_LIBRARY",)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    dirs, path, ok = r.stdout.split()
    assert dirs == str(lib_dir) and path.startswith(str(lib_dir)) and ok == "True"


def test_jitted_source_compiles_without_a_device():
    try:
        ccuda.nvrtc_version()
    except errors.BackendError as exc:
        pytest.skip(f"no NVRTC: {exc}")
    ptx, _ = ccuda.compile_ptx(ocl_tests.c_mixed.source("cuda"), "sm_90")
    assert ".visible .entry ck_kernel(" in ptx


# ---- __cuda_array_interface__ dicts ----------------------------------------
def _cai(**kw):
    d = {"shape": (3, 4), "typestr": "<f8", "data": (0x7F0000001000, False), "version": 3,
         "strides": None, "stream": None}
    d.update(kw)
    return {k: v for k, v in d.items() if v is not _DROP}


_DROP = object()


def test_cai_valid_dicts():
    desc, stream = ccuda.parse_cuda_array_interface(_cai())
    assert desc.shape == (3, 4) and desc.strides == (32, 8) and desc.dtype == np.float64
    assert desc.address == 0x7F0000001000 and not desc.readonly and stream is None
    desc, stream = ccuda.parse_cuda_array_interface(
        _cai(typestr="|u1", strides=(1, 3), stream=7, descr=[("", "|u1")]))
    assert desc.strides == (1, 3) and desc.dtype == np.uint8 and stream == 7
    # versions 0-2 have no stream; stream in an older dict is ignored
    desc, stream = ccuda.parse_cuda_array_interface(_cai(version=2, stream=_DROP))
    assert stream is None
    desc, _ = ccuda.parse_cuda_array_interface(_cai(shape=(0, 5), data=(0, False)))
    assert desc.address == 0
    desc, _ = ccuda.parse_cuda_array_interface(_cai(shape=(), typestr="<i4"))
    assert desc.shape == () and desc.strides == ()
    desc, _ = ccuda.parse_cuda_array_interface(_cai(data=(0x1000, True)))
    assert desc.readonly


@pytest.mark.parametrize("bad, exc, match", [
    ("not a dict", errors.InvalidArgumentError, "dict"),
    (_cai(typestr=_DROP), errors.InvalidArgumentError, "missing 'typestr'"),
    (_cai(data=_DROP, version=_DROP), errors.InvalidArgumentError, "'data', 'version'"),
    (_cai(version=4), errors.NotSupportedError, "version 4"),
    (_cai(version="3"), errors.NotSupportedError, "version"),
    (_cai(typestr="<q9"), errors.InvalidArgumentError, "not a NumPy type string"),
    (_cai(typestr=8), errors.InvalidArgumentError, "typestr must be a str"),
    (_cai(typestr=">f8"), errors.NotSupportedError, "byte order"),
    (_cai(typestr="|V8"), errors.NotSupportedError, "plain number"),
    (_cai(typestr="<U4"), errors.NotSupportedError, "plain number"),
    (_cai(descr=[("x", "<f8"), ("y", "<f8")]), errors.NotSupportedError, "structured"),
    (_cai(descr=[("", "<i8")]), errors.InvalidArgumentError, "does not match"),
    (_cai(shape=[3, 4]), errors.InvalidArgumentError, "shape must be a tuple"),
    (_cai(shape=(3, -1)), errors.InvalidArgumentError, "shape"),
    (_cai(shape=(3.0,)), errors.InvalidArgumentError, "shape"),
    (_cai(data=0x1000), errors.InvalidArgumentError, "data must be"),
    (_cai(data=(0x1000, 0)), errors.InvalidArgumentError, "data must be"),
    (_cai(data=(-8, False)), errors.InvalidArgumentError, "out of range"),
    (_cai(data=(0, False)), errors.InvalidArgumentError, "null data pointer"),
    (_cai(strides=(8,)), errors.InvalidArgumentError, "strides must be None or 2 ints"),
    (_cai(strides=[32, 8]), errors.InvalidArgumentError, "strides"),
    (_cai(mask=object()), errors.NotSupportedError, "masked"),
    (_cai(stream=0), errors.InvalidArgumentError, "stream 0 is disallowed"),
    (_cai(stream="s"), errors.InvalidArgumentError, "stream must be None or an int"),
])
def test_cai_invalid_dicts(bad, exc, match):
    with pytest.raises(exc, match=match):
        ccuda.parse_cuda_array_interface(bad)


def test_extent_of_strided_and_reversed_layouts():
    assert ccuda.extent((3, 4), (32, 8), 8) == (0, 96)
    assert ccuda.extent((3, 4), (-32, 8), 8) == (-64, 96)    # rows reversed
    assert ccuda.extent((5,), (-8,), 8) == (-32, 40)
    assert ccuda.extent((2, 3), (0, 8), 8) == (0, 24)          # broadcast rows
    assert ccuda.extent((4,), (16,), 8) == (0, 56)


# ---- DLPack capsules (host memory: NumPy is the other side) ----------------
class _Exporter:
    """An object exporting host memory through ckernels' DLPack code."""

    def __init__(self, a, device=(dl.KDL_CPU, 0)):
        self.a, self.device, self.calls = a, device, []

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append(max_version)
        versioned = max_version is not None and max_version[0] >= 1
        return dl.export(self.a, self.a.ctypes.data, self.a.shape, self.a.strides,
                         self.a.dtype, self.device, versioned)

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.uint64, np.bool_,
                                   np.complex128])
def test_dlpack_export_read_by_numpy(dtype):
    base = (np.arange(24) % 5).astype(dtype).reshape(4, 6)
    view = base[::-1, ::2]
    before = dl.live_exports()
    ex = _Exporter(view)
    got = np.from_dlpack(ex)
    np.testing.assert_array_equal(got, view)
    assert got.ctypes.data == view.ctypes.data            # no copy
    assert dl.live_exports() == before + 1
    owner = weakref.ref(ex.a) if dtype is np.float64 else None
    del ex, view
    gc.collect()
    assert dl.live_exports() == before + 1                # NumPy still holds it
    del got
    gc.collect()
    assert dl.live_exports() == before                    # the deleter ran, once
    if owner is not None:
        assert owner() is None or owner() is not None     # (base keeps the memory)


def test_dlpack_unconsumed_capsules_are_deleted():
    before = dl.live_exports()
    a = np.ones(3)
    for mv in (None, (1, 0)):
        cap = _Exporter(a).__dlpack__(max_version=mv)
        assert dl.live_exports() == before + 1
        del cap
        gc.collect()
        assert dl.live_exports() == before


def test_dlpack_consume_numpy_capsules():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1:]
    for cap in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0))):
        imp = dl.consume(cap)
        d = imp.described
        assert d.shape == (3, 3) and d.strides == (16, 4) and d.dtype == np.int32
        assert d.address == a.ctypes.data and d.device == (dl.KDL_CPU, 0)
        with pytest.raises(errors.InvalidArgumentError, match="unconsumed"):
            dl.consume(cap)                      # a capsule is consumed once
        assert not imp.released
        imp.release()
        imp.release()                            # idempotent: the deleter ran once
        assert imp.released
    with pytest.raises(errors.InvalidArgumentError, match="capsule"):
        dl.consume(object())


def test_dlpack_roundtrip_through_our_own_consumer():
    a = np.arange(6.0)
    before = dl.live_exports()
    imp = dl.consume(_Exporter(a).__dlpack__(max_version=(1, 0)))
    assert imp.described.address == a.ctypes.data and dl.live_exports() == before + 1
    del imp
    gc.collect()
    assert dl.live_exports() == before


def test_dlpack_bad_tensors_are_refused_and_deleted():
    before = dl.live_exports()
    a = np.ones(4)
    cap = _Exporter(a).__dlpack__(max_version=(1, 0))
    ptr = dl._get_pointer(cap, dl._name(b"dltensor_versioned"))
    m = dl.DLManagedTensorVersioned.from_address(ptr)
    m.version.major = 2
    with pytest.raises(errors.NotSupportedError, match="version 2"):
        dl.consume(cap)
    assert dl.live_exports() == before           # the deleter ran anyway
    cap = _Exporter(a).__dlpack__()
    ptr = dl._get_pointer(cap, dl._name(b"dltensor"))
    dl.DLManagedTensor.from_address(ptr).dl_tensor.dtype.lanes = 4
    with pytest.raises(errors.NotSupportedError, match="4 lanes"):
        dl.consume(cap)
    assert dl.live_exports() == before


def test_device_arrays_of_other_backends_do_not_claim_cuda(new_opencl_context):
    ctx = new_opencl_context()
    a = ctx.array(np.arange(3.0))
    assert not hasattr(a, "__cuda_array_interface__")
    assert a.__dlpack_device__() == (dl.KDL_OPENCL, 0)     # DLPack speaks OpenCL, not CUDA
    imp = dl.consume(a.__dlpack__(max_version=(1, 0)))
    assert imp.described.device == (dl.KDL_OPENCL, 0)
    assert imp.described.handle == a.buffer.native_handle   # the cl_mem
    imp.release()
    with pytest.raises(errors.NotSupportedError, match="OpenCL"):
        ctx.from_dlpack(np.arange(3.0))                     # a CPU tensor: no implicit copy


def test_cuda_exports_read_back(new_opencl_context, monkeypatch):
    """The CUDA export code on a device array of another backend (its handle
    stands in for the device pointer; nothing dereferences it): the CAI dict
    parses back to the same array, DLPack capsules describe it and are
    deleted once, the explicit host copy and the device copy work."""
    ctx = new_opencl_context()
    a = ctx.array(np.arange(12, dtype=np.int16).reshape(3, 4))
    cai = cuda_array_interface(a)
    assert cai["version"] == 3 and cai["stream"] is None and cai["strides"] is None
    assert cai["typestr"] == "<i2" and cai["descr"] == [("", "<i2")]
    assert cai["data"] == (a.buffer.native_handle + a.offset, False)
    desc, stream = ccuda.parse_cuda_array_interface(cai)
    assert (desc.address, desc.shape, desc.strides, desc.dtype) == \
        (cai["data"][0], (3, 4), (8, 2), np.int16) and stream is None
    monkeypatch.setattr(ccuda, "dlpack_device", lambda ctx: (dl.KDL_CUDA, 3))
    before = dl.live_exports()
    for mv in (None, (1, 0), (1, 3)):
        imp = dl.consume(export_dlpack(a, ccuda, stream=7, max_version=mv))
        d = imp.described
        assert (d.address, d.shape, d.strides, d.dtype, d.device) == \
            (cai["data"][0], (3, 4), (8, 2), np.int16, (dl.KDL_CUDA, 3))
        assert dl.live_exports() == before + 1
        imp.release()
        assert dl.live_exports() == before
    imp = dl.consume(export_dlpack(a, ccuda, copy=True))
    assert imp.described.address != cai["data"][0]
    imp.release()
    host = np.from_dlpack(_Host(a, ccuda))
    np.testing.assert_array_equal(host, np.arange(12).reshape(3, 4))
    for bad in (0, "1", True):
        with pytest.raises(BufferError, match="stream"):
            export_dlpack(a, ccuda, stream=bad)
    with pytest.raises(BufferError, match="another device"):
        export_dlpack(a, ccuda, dl_device=(dl.KDL_CUDA, 0))
    with pytest.raises(BufferError, match="another device"):
        export_dlpack(a, ccuda, dl_device=(dl.KDL_CPU, 0), copy=False)
    # struct elements: NumPy's descr in the CAI, no DLPack type
    st = np.dtype([("x", np.float64), ("n", np.int32)], align=True)
    sa = ctx.array(np.zeros(3, st))
    c = cuda_array_interface(sa)
    assert c["typestr"] == st.str and c["descr"] == st.descr and c["shape"] == (3,)
    with pytest.raises(BufferError, match="DLPack"):
        export_dlpack(sa, ccuda)
    with pytest.raises(errors.NotSupportedError, match="not a plain number type"):
        ccuda.parse_cuda_array_interface(c)      # (adopting foreign structs: not yet)
    assert dl.live_exports() == before


class _Host:
    """Asks for the host copy, as ``np.from_dlpack(x, device="cpu")`` does."""

    def __init__(self, arr, mod):
        self.arr, self.mod = arr, mod

    def __dlpack__(self, **kw):
        return export_dlpack(self.arr, self.mod, max_version=kw.get("max_version"),
                             dl_device=(dl.KDL_CPU, 0))

    def __dlpack_device__(self):
        return (dl.KDL_CPU, 0)


def test_buffer_wrap_keeps_the_owner_alive():
    """ck_buffer_wrap on a CPU context (host pointers): the same code path as
    CUDA device pointers, minus the device checks."""
    ctx = ckernels.Context("cpu")
    a = np.arange(16, dtype=np.uint8)

    class Owner:
        pass
    owner = Owner()
    owner.a = a
    ref = weakref.ref(owner)
    buf = Buffer.wrap(ctx, a.ctypes.data, a.nbytes, owner)
    del owner
    gc.collect()
    assert ref() is not None and buf.native_handle == a.ctypes.data
    assert bytes(buf.read(2, 3)) == bytes([2, 3, 4])
    buf.write(0, b"\xff")
    assert a[0] == 255
    with pytest.raises(errors.NotSupportedError):
        buf.grow(1024)
    del buf
    gc.collect()
    assert ref() is None
    with pytest.raises(errors.InvalidArgumentError):
        Buffer.wrap(ctx, 0, 8, object())
    with pytest.raises(errors.InvalidArgumentError):
        Buffer.wrap(ctx, a.ctypes.data, 0, object())


# ================================================================ on a GPU ====
cuda = pytest.mark.cuda


@cuda
def test_context_surface(cuda_ctx):
    ctx = cuda_ctx
    assert ctx.kind == "cuda" and ctx.is_device and ctx.supports_fp64
    assert "cuda" in repr(ctx).lower()
    info = ccuda.context_device(ctx)
    assert info.ordinal == 0 and info.compute_capability >= (5, 0)
    x = ctx.array([1.0, 2.0, 3.0])
    assert isinstance(x, ckernels.DeviceArray) and x.context == ctx
    np.testing.assert_array_equal(x.to_numpy(), [1.0, 2.0, 3.0])
    e = ctx.empty((2, 3), "int32")
    assert e.shape == (2, 3) and e.dtype == np.int32
    z = ctx.array(np.zeros((4, 5), np.float32))
    np.testing.assert_array_equal(z.to_numpy(), np.zeros((4, 5), np.float32))
    c = x.copy()
    np.testing.assert_array_equal(c.to_numpy(), x.to_numpy())
    assert ctx.to(x) is x
    assert ctx.empty(0).shape == (0,)
    np.testing.assert_array_equal(np.asarray(ckernels.Context("cpu").to(x)), [1.0, 2.0, 3.0])
    with pytest.raises(errors.NotSupportedError):
        ctx.array(np.zeros(3, np.complex128))
    assert ckernels.Context("cuda", device=0).kind == "cuda"


@cuda
@pytest.mark.parametrize("name,fn,make", ocl_tests.CORPUS, ids=[c[0] for c in ocl_tests.CORPUS])
def test_differential_on_cuda(cuda_ctx, name, fn, make):
    with np.errstate(all="ignore"):
        args = make()
    n = min(len(a) for a in args)
    args = [np.ascontiguousarray(a[:n]) for a in args]
    want = np.asarray(fn(*args))
    dev = fn(*[cuda_ctx.array(a) for a in args])
    assert isinstance(dev, ckernels.DeviceArray) and dev.context == cuda_ctx
    terms = ocl_tests.math2_terms(*args) if name == "math2" else None
    ocl_tests._compare(dev.to_numpy(), want, name, terms)


# CUDA's documented maximum errors (CUDA C Programming Guide, double precision)
# plus one for the host's libm, which is the oracle
_CUDA_ULP = {"sqrt": 1, "exp": 2, "log": 2, "log10": 2, "log2": 2, "log1p": 2, "expm1": 2,
             "sin": 3, "cos": 3, "tan": 3, "atan": 3, "sinh": 3, "cosh": 2, "tanh": 2,
             "asinh": 4, "floor": 0, "ceil": 0, "fabs": 0, "erf": 3, "trunc": 0, "atan2": 3,
             "hypot": 3, "pow": 3, "copysign": 0}


@cuda
@pytest.mark.parametrize("name", ocl_tests.MATH1 + ocl_tests.MATH2)
def test_math_builtins_on_cuda(cuda_ctx, name):
    nargs = 2 if name in ocl_tests.MATH2 else 1
    k = ocl_tests._math_kernel(name, nargs)
    pos = name in ("sqrt", "log", "log10", "log2", "log1p")
    x = np.abs(ocl_tests._f(300, 5.0)) if pos else ocl_tests._f(300, 5.0)
    args = [x] if nargs == 1 else [x, ocl_tests._f(300, 3.0)[::-1].copy()]
    want = np.asarray(k(*args))
    got = k(*[cuda_ctx.array(a) for a in args]).to_numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    np.testing.assert_array_max_ulp(got[fin], want[fin], maxulp=max(_CUDA_ULP[name], 1))


@cuda
@pytest.mark.parametrize("frm,to", ocl_tests.F2I_PAIRS)
def test_float_to_int_out_of_range_one_rule_on_cuda(cuda_ctx, frm, to):
    ocl_tests.check_f2i(lambda k, x: k(cuda_ctx.array(x)).to_numpy(), frm, to)


@cuda
def test_errors_broadcasting_and_out(cuda_ctx):
    ctx = cuda_ctx
    a = ctx.array(np.array([5, 6, 7], np.int64))
    b = ctx.array(np.array([1, 0, 2], np.int64))
    with pytest.raises(errors.CKZeroDivisionError, match="integer division by zero"):
        ocl_tests.c_floordiv(a, b)
    with pytest.raises(ValueError, match="too big"):
        ocl_tests.c_raises(ctx.array(np.array([1.0, 20.0])))
    x = rng_normal((4, 1, 3))
    y = rng_normal((5, 1))
    got = ocl_tests.c_math2(ctx.array(x), ctx.array(y)).to_numpy()
    terms = ocl_tests.math2_terms(x, y)
    ocl_tests._compare(got, np.asarray(ocl_tests.c_math2(x, y)), "nd", terms)
    out = ctx.empty((4, 5, 3), "float64")
    r = ocl_tests.c_math2(ctx.array(x), ctx.array(y), out=out)
    assert r is out
    ocl_tests._compare(out.to_numpy(), np.asarray(ocl_tests.c_math2(x, y)), "out=", terms)
    ocl_tests._compare(ocl_tests.c_mixed(ctx.array(x), 3).to_numpy(),
                       np.asarray(ocl_tests.c_mixed(x, np.int64(3))), "scalar")
    big = np.arange(1_000_003, dtype=np.float64)
    np.testing.assert_array_equal(ocl_tests.c_scale(ctx.array(big)).to_numpy(), 2.5 * big - 1.0)


def rng_normal(shape):
    return np.random.default_rng(5).standard_normal(shape)


@cuda
def test_core_dims_on_cuda(cuda_ctx):
    """Issue 22: fixed and symbolic core dims (dot, cross, matvec, errors raised
    inside, the library's size errors) on a GPU, with the checks the OpenCL
    tests make against the CPU jit (test_jit_dims_devices)."""
    dd.test_dot_on_strided_views_and_out(cuda_ctx)
    dd.test_cross_and_matvec_write_through_the_output_parameter(cuda_ctx)
    dd.test_mismatched_sizes_are_the_librarys_errors(cuda_ctx)
    dd.test_errors_raised_inside_match_the_cpu(cuda_ctx)


@cuda
def test_mixing_contexts(cuda_ctx, new_opencl_context):
    other = ckernels.Context("cuda")
    a, b = cuda_ctx.array(np.ones(3)), other.array(np.ones(3))
    with pytest.raises(errors.InvalidArgumentError, match="different context"):
        ocl_tests.c_math2(a, b)
    with pytest.raises(errors.InvalidArgumentError, match="host arrays"):
        ocl_tests.c_math2(a, np.ones(3))
    with pytest.raises(errors.InvalidArgumentError, match="out="):
        ocl_tests.c_math2(a, a, out=other.empty(3))
    c = new_opencl_context().array(np.ones(3))
    with pytest.raises(errors.InvalidArgumentError, match="different context"):
        ocl_tests.c_math2(a, c)
    np.testing.assert_array_equal(cuda_ctx.to(b).to_numpy(), np.ones(3))   # through the host


# ---- sharing with other libraries ------------------------------------------
class _Foreign:
    """A stand-in producer: any object with a CAI dict (what CuPy gives)."""

    def __init__(self, cai, keep=None):
        self.__cuda_array_interface__ = cai
        self.keep = keep


@cuda
def test_cai_export_and_adopt_roundtrip(cuda_ctx):
    ctx = cuda_ctx
    x = ctx.array(np.arange(12.0).reshape(3, 4))
    cai = x.__cuda_array_interface__
    assert cai["version"] == 3 and cai["stream"] is None and cai["typestr"] == "<f8"
    assert cai["shape"] == (3, 4) and cai["strides"] is None and cai["data"][1] is False
    assert cai["data"][0] == x.buffer.native_handle + x.offset
    foreign = _Foreign(dict(cai), keep=x)
    y = ctx.to(foreign)                                   # zero-copy
    assert y.__cuda_array_interface__["data"][0] == cai["data"][0]
    ocl_tests.c_scale(y, out=y)                           # writes land in x
    np.testing.assert_array_equal(x.to_numpy(), 2.5 * np.arange(12.0).reshape(3, 4) - 1.0)
    ref = weakref.ref(foreign)
    del foreign
    gc.collect()
    assert ref() is not None                              # y keeps the producer alive
    del y
    gc.collect()
    assert ref() is None
    # a reversed view (negative stride), with a stream to wait for
    v = 2.5 * np.arange(12.0) - 1.0
    rev = dict(cai, data=(cai["data"][0] + 88, False), shape=(12,), strides=(-8,), stream=1)
    z = ctx.to(_Foreign(rev, keep=x))
    assert z.shape == (12,) and z.strides == (-8,)
    np.testing.assert_array_equal(ocl_tests.c_scale(z).to_numpy(), 2.5 * v[::-1] - 1.0)
    # copies are copies
    w = ctx.array(_Foreign(dict(cai), keep=x))
    assert w.__cuda_array_interface__["data"][0] != cai["data"][0]
    # out of the allocation / host memory / read-only
    with pytest.raises(errors.CKIndexError):
        ctx.to(_Foreign(dict(cai, shape=(1000,)), keep=x))
    h = np.ones(4)
    with pytest.raises(errors.BackendError, match="not CUDA device memory"):
        ctx.to(_Foreign(dict(cai, data=(h.ctypes.data, False), shape=(4,)), keep=h))
    ro = ctx.to(_Foreign(dict(cai, data=(cai["data"][0], True)), keep=x))   # shared, read-only
    assert not ro.flags.writeable and ro.__cuda_array_interface__["data"][1] is True
    np.testing.assert_array_equal(ro.to_numpy(), x.to_numpy())
    with pytest.raises(errors.CKValueError, match="read-only"):
        ro[0, 0] = 1


@cuda
def test_dlpack_export_and_adopt_roundtrip(cuda_ctx):
    ctx = cuda_ctx
    x = ctx.array(np.arange(6, dtype=np.int32))
    assert x.__dlpack_device__() == (dl.KDL_CUDA, 0)
    before = dl.live_exports()

    class Producer:
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kw):
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()
    y = ctx.to(Producer(x))
    assert y.__cuda_array_interface__["data"][0] == x.__cuda_array_interface__["data"][0]
    assert dl.live_exports() == before + 1
    del y
    gc.collect()
    assert dl.live_exports() == before
    host = np.from_dlpack(x, device="cpu")                # an explicit host copy
    np.testing.assert_array_equal(host, np.arange(6))
    with pytest.raises(BufferError):
        x.__dlpack__(stream=0)
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(dl.KDL_CUDA, 5))


@cuda
def test_cupy_interop(cuda_ctx):
    cp = pytest.importorskip("cupy")
    ctx = cuda_ctx
    x = ctx.array(np.arange(10.0))
    c = cp.asarray(x)                                     # CuPy reads our CAI
    assert c.data.ptr == x.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(cp.asnumpy(c), np.arange(10.0))
    src = cp.arange(20, dtype=cp.float64)[::-2]
    y = ctx.to(src)                                       # we read CuPy's, zero-copy
    ocl_tests.c_scale(y, out=y)
    cp.testing.assert_array_equal(src, 2.5 * cp.arange(20, dtype=cp.float64)[::-2] - 1.0)
    z = ctx.to(cp.from_dlpack(x))
    np.testing.assert_array_equal(z.to_numpy(), np.arange(10.0))
    d = cp.from_dlpack(x)
    assert d.data.ptr == x.__cuda_array_interface__["data"][0]
    del src                                               # y keeps CuPy's memory alive
    gc.collect()
    a = 2.5 * np.arange(20.0)[::-2] - 1.0
    np.testing.assert_array_equal(ocl_tests.c_scale(y).to_numpy(), 2.5 * a - 1.0)


@cuda
def test_numba_cuda_interop(cuda_ctx):
    ncuda = pytest.importorskip("numba.cuda")
    if not ncuda.is_available():
        pytest.skip("numba.cuda: no usable device")
    x = cuda_ctx.array(np.arange(8, dtype=np.float32))
    d = ncuda.as_cuda_array(x)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(8, dtype=np.float32))
    back = cuda_ctx.to(ncuda.to_device(np.arange(5.0)))
    np.testing.assert_array_equal(back.to_numpy(), np.arange(5.0))


@cuda
def test_torch_interop(cuda_ctx):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch: no CUDA")
    x = cuda_ctx.array(np.arange(8.0))
    t = torch.from_dlpack(x)
    assert t.data_ptr() == x.__cuda_array_interface__["data"][0]
    t2 = torch.arange(6, dtype=torch.float64, device="cuda")
    y = cuda_ctx.to(t2)
    ocl_tests.c_scale(y, out=y)
    torch.cuda.synchronize()
    assert torch.equal(t2.cpu(), 2.5 * torch.arange(6, dtype=torch.float64) - 1.0)


def test_math_table_covers_the_opencl_list():
    assert set(_CUDA_ULP) == set(ocl_tests.MATH1 + ocl_tests.MATH2)
    assert all(isinstance(v, int) for v in _CUDA_ULP.values()) and math.isfinite(1.0)
