"""Option arrays ``?T`` on devices (``docs/nulls.md`` "On devices"): the
validity bitmap uploaded with the values, nulls brought back, null-propagating
jitted functions and ops checked against the CPU jit on PoCL (random nulls,
bit offsets from sliced pyarrow arrays), Arrow's C device interface with the
bitmap as buffer 0, and the same kernels as CUDA C through NVRTC + ptxas + the
host shim."""

import ctypes

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.nulls import DeviceOptionArray
from ckernels.errors import InvalidArgumentError, NotSupportedError

pa = pytest.importorskip("pyarrow")

ARROW_DEVICE_OPENCL = 4
ARROW_DEVICE_CUDA = 2
SETTINGS = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("int64(int64, int64)")
def fdiv(a, b):
    return a // b


@ckernels.jit("float64(float64, float64)")
def affine(x, y):
    return x * 2.0 + y


@ckernels.jit("int64(string)")
def vowels(s):
    n = len(s)
    if "é" in s:
        n += 100
    return n


@ckernels.jit("?int64(?int64)")
def null_aware(x):
    if x is None:
        return 0
    return x


ints_with_nulls = st.lists(st.one_of(st.none(), st.integers(-50, 50)), min_size=0, max_size=70)


def _sliced(values, start, typ):
    """``values`` as a pyarrow array at bit offset ``start`` (a slice)."""
    return pa.array([None] * start + values + [7] * 3, type=typ).slice(start, len(values))


# ---- upload and back ------------------------------------------------------------------------
@SETTINGS
@given(values=ints_with_nulls, start=st.integers(0, 11))
def test_round_trip_keeps_nulls_at_every_bit_offset(ctx, values, start):
    d = ctx.array(_sliced(values, start, pa.int64()))
    want_nulls = sum(v is None for v in values)
    assert d.tolist() == values
    if want_nulls == 0:      # no bitmap: a plain device array
        return
    assert isinstance(d, DeviceOptionArray)
    k = min(start % 4, len(values))      # a device slice: its bit offset moves by k
    assert d[k:].bit_offset == (d.bit_offset + k) % 8 and d[k:].tolist() == values[k:]
    assert d.null_count == want_nulls
    h = d.get()
    assert str(h.type).endswith("* ?int64") and h.tolist() == values
    assert pa.array(h).to_pylist() == values


def test_every_source_of_nulls_and_the_surface(ctx):
    d = ctx.array([1.5, None, 3.0])
    assert str(d.type) == "3 * ?float64" and d.shape == (3,) and len(d) == 3
    assert "?float64" in repr(d) and "1 null" in repr(d)
    assert d.tolist() == [1.5, None, 3.0] and d[1] is None and d[2] == 3.0
    assert d.is_null().tolist() == [False, True, False]
    assert d.to_numpy(na_value=np.nan)[1] != d.to_numpy(na_value=np.nan)[1]
    s = ctx.array(np.array(["a", None, "héllo"], dtype=np.dtypes.StringDType(na_object=None)))
    assert str(s.type) == "3 * ?string" and s.tolist() == ["a", None, "héllo"]
    assert s.null_count == 1
    b = ctx.array(pa.array([True, None, False, True]))
    assert str(b.type) == "4 * ?bool" and b.tolist() == [True, None, False, True]
    h = ctx.array(ckernels.array([1, None, 3]))
    assert h.tolist() == [1, None, 3] and str(h.type) == "3 * ?int64"
    assert ctx.array([1, None], type="2 * ?int32").tolist() == [1, None]
    # slices are views whose bit offset moves; copies and host round trips
    x = ctx.array(pa.array([None, 1, 2, None, 4, 5, None, 7, 8, None, 10]))
    assert x[3:10].tolist() == [None, 4, 5, None, 7, 8, None]
    assert x[3:10].bit_offset == 3 and x[9:].tolist() == [None, 10]
    assert x[11:].tolist() == [] and x[2:9].copy().tolist() == x[2:9].tolist()
    assert ckernels.Context("cpu").array(x).tolist() == x.tolist()
    assert ctx.array(x).tolist() == x.tolist() and ctx.to(x) is x
    assert ctx.array(ctx.array(np.arange(3))).tolist() == [0, 1, 2]
    assert str(x[:4]) == "[None, 1, 2, None]" and "..." in str(x)


def test_refusals_are_clear(ctx):
    assert null_aware(ctx.array([1, None])).tolist() == [1, 0]   # null-aware: runs there
    with pytest.raises(InvalidArgumentError, match="lengths"):
        fdiv(ctx.array([1, None]), ctx.array([1, None, 2]))
    with pytest.raises(NotSupportedError, match="shape"):
        fdiv(ctx.array([1, None]), ctx.array(np.ones((3, 2), np.int64)))
    with pytest.raises(NotSupportedError, match="out="):
        fdiv(ctx.array([1, None]), 1, out=ctx.empty(2, "int64"))
    with pytest.raises(TypeError, match="get"):
        np.asarray(ctx.array([1, None]))
    with pytest.raises(NotSupportedError, match="one dim"):
        ctx.array(ckernels.array([["a", None], ["b", "c"]]))


# ---- jitted functions: nulls propagate, the body never runs on a null -------------------
@SETTINGS
@given(a=ints_with_nulls, b=ints_with_nulls, start=st.integers(0, 9))
def test_jitted_floor_division_matches_the_cpu_jit(ctx, a, b, start):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    # a 0 under every null of b: the body must not run there
    ha = _sliced(a, start, pa.int64())
    hb = pa.array([0 if v is None else (v or 1) for v in b], mask=[v is None for v in b],
                  type=pa.int64())
    want = fdiv(ckernels.asarray(ha), ckernels.asarray(hb)).tolist()
    got = fdiv(ctx.array(ha), ctx.array(hb))
    assert got.tolist() == want
    # a plain device array and a scalar next to an option array
    want2 = fdiv(ckernels.asarray(ha), 3).tolist()
    assert fdiv(ctx.array(ha), 3).tolist() == want2
    plain = np.arange(1, n + 1, dtype=np.int64)
    assert fdiv(ctx.array(ha), ctx.array(plain)).tolist() == \
        fdiv(ckernels.asarray(ha), plain).tolist()


def test_errors_on_valid_slots_still_raise(ctx):
    with pytest.raises(ZeroDivisionError, match="element 1"):
        fdiv(ctx.array([1, 2, None]), ctx.array(pa.array([1, 0, 0])))


@SETTINGS
@given(xs=st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), max_size=40))
def test_jitted_floats_and_strings_match_the_cpu_jit(ctx, xs):
    hx = pa.array(xs, type=pa.float64())
    hy = pa.array([None if i % 3 == 0 else float(i) for i in range(len(xs))], pa.float64())
    want = affine(ckernels.asarray(hx), ckernels.asarray(hy)).tolist()
    got = affine(ctx.array(hx), ctx.array(hy)).tolist()
    assert got == want
    strs = [None if v is None else f"x{v:.3g}é" for v in xs]
    hs = pa.array(strs, pa.string())
    assert vowels(ctx.array(hs)).tolist() == vowels(ckernels.asarray(hs)).tolist()


# ---- ops and operators ---------------------------------------------------------------------
def test_ops_propagate_nulls_as_the_host_ops(ctx):
    ha = pa.array([4, None, -7, 9, None, 3])
    hb = pa.array([2, 0, None, -2, 5, 0], mask=[False, True, True, False, False, True])
    da, db = ctx.array(ha), ctx.array(hb)
    A, B = ckernels.asarray(ha), ckernels.asarray(hb)
    assert ckernels.ops.floor_divide(da, db).tolist() == \
        ckernels.ops.floor_divide(A, B).tolist() == [2, None, None, -5, None, None]
    assert (da + 1).tolist() == (A + 1).tolist()
    assert (10 // db).tolist() == (10 // B).tolist()
    assert ckernels.ops.sqrt(ctx.array([4.0, None])).tolist() == [2.0, None]
    # sum and mean skip nulls (as ops.sum on the host); an all-null array gives None
    assert int(ckernels.ops.sum(da).get()) == ckernels.ops.sum(A) == 9
    assert float(da.mean().get()) == 2.25
    assert ckernels.ops.sum(ctx.array([None, None], type="2 * ?int64")) is None
    with pytest.raises(NotSupportedError, match="on the host"):
        ckernels.ops.max(da)


# ---- Arrow's C device interface ----------------------------------------------------------
def _device_array_struct(capsule):
    ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
    ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    p = ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"arrow_device_array")
    return p, (ctypes.c_int64 * 11).from_address(p)


@pytest.mark.parametrize("start", [0, 5])
def test_arrow_device_export_carries_the_bitmap(ctx, start):
    values = [1, None, 3, None, None, 6, 7, 8, None, 10]
    d = ctx.array(pa.array([None] * start + values, pa.int32()))[start:]
    assert d.bit_offset == start
    schema, arr = d.__arrow_c_device_array__()
    p, w = _device_array_struct(arr)
    length, null_count, offset, n_buffers = w[0], w[1], w[2], w[3]
    assert (length, null_count, offset, n_buffers) == (10, 4, 0, 2)
    buffers = (ctypes.c_void_p * 2).from_address(w[5])
    assert buffers[0] is not None
    if start == 0:
        assert buffers[1] == d.values.buffer.native_handle + d.values.offset
    if start == 0:
        assert buffers[0] == d.validity.buffer.native_handle + d.validity.offset
    kind = ARROW_DEVICE_CUDA if ctx.kind == "cuda" else ARROW_DEVICE_OPENCL
    assert ctypes.c_int32.from_address(p + 88).value == kind
    del schema, arr
    na = pytest.importorskip("nanoarrow")
    from nanoarrow.device import c_device_array
    c = c_device_array(d)
    assert c.device_type_id == kind and c.schema.format == "i"
    assert c.array.null_count == 4 and c.array.length == 10
    assert na.c_schema(d).flags & 2      # nullable
    s = c_device_array(ctx.array(pa.array(["a", None, "bc"])))
    assert s.schema.format == "U" and s.array.null_count == 1 and s.array.n_buffers == 3
    # the bitmap the export names: moved to bit 0, the nulls where they were
    from ckernels.device.nulls import combine
    bits, off = combine(ctx, [(d.validity, d.bit_offset)], 10, force=True)
    got = np.unpackbits(bits.get(), bitorder="little")[:10].astype(bool).tolist()
    assert off == 0 and got == [v is not None for v in values]


def test_device_bitmap_and_matches_numpy(ctx):
    from ckernels.device.nulls import combine
    rng = np.random.default_rng(5)
    for n in (1, 8, 9, 63, 200):
        masks = [rng.random(n) < 0.7 for _ in range(3)]
        parts = []
        for k, m in enumerate(masks):
            off = (3 * k + 1) % 8
            raw = np.packbits(np.concatenate([np.zeros(off, bool), m]), bitorder="little")
            parts.append((ctx.array(raw), off))
        bits, off = combine(ctx, parts, n)
        got = np.unpackbits(bits.get(), bitorder="little")
        assert got[:n].astype(bool).tolist() == (masks[0] & masks[1] & masks[2]).tolist()
        assert not got[n:].any()


# ---- CUDA C: NVRTC + ptxas + the host shim, against the CPU jit ---------------------------
def test_null_kernels_as_cuda_c_compile_assemble_and_match_the_cpu(tmp_path):
    from ckernels import dialects
    from ckernels.context.device_validity import AND_KERNEL, and_source
    from ckernels.jit import c_emit
    from ckernels.jit.device import target
    from ckernels.jit.signature import element_type
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    tgt = target("cuda")
    comp = next(iter(fdiv.compiled.values()))
    prog = tgt.program(fdiv, comp)
    i64, u8, u64 = (element_type(x) for x in ("int64", "uint8", "uint64"))
    inputs = [(i64, False), (i64, False), (u8, False), (u64, True)]
    src = tgt.dialect.header(prog) + prog.text() + "\n" + \
        c_emit.entry_wrapper(prog, inputs, i64, validity=2)
    src = "namespace ck_fd {\n" + src.replace(f" {c_emit.KERNEL_NAME}(", " ck_fd_kernel(") + \
        "}\n" + and_source(dialects.get("cuda"), 2)
    # the string path's guarded kernel (one work item per string) compiles too
    from ckernels.jit import device_var
    vcomp = next(iter(vowels.compiled.values()))
    vprog, vlayout = device_var._program(tgt, vowels, vcomp)
    vin = vlayout.inputs([False])
    vsrc = device_var.source(tgt, vowels, vcomp, vin + ((u8, False), (u64, True)),
                             (vprog, vlayout), validity=len(vin))
    assert "ck_vbit" in vsrc
    vsrc = "namespace ck_vw {\n" + vsrc.replace(f" {c_emit.KERNEL_NAME}(", " ck_vw_kernel(") + \
        "}\n"
    ptx = ptx_assembled_or_skip(tmp_path, src + vsrc)
    assert "ck_fd_kernel" in ptx and AND_KERNEL in ptx and "ck_vw_kernel" in ptx
    shim = (
        'extern "C" void ck_and_run(unsigned char *out, unsigned long long n, '
        "const unsigned char *b0, unsigned long long o0, const unsigned char *b1, "
        "unsigned long long o1, unsigned int block) {\n"
        f"  ck_shim_grid((n + 7) / 8, block, [&] {{ {AND_KERNEL}(out, n, b0, o0, b1, o1); }});\n"
        "}\n"
        'extern "C" void ck_fd_run(unsigned char *out, const unsigned char *a, '
        "const unsigned char *b, const unsigned char *bits, unsigned long long bit0, "
        "unsigned long long n, int *err, const long long *meta, unsigned int block) {\n"
        "  ck_shim_grid(n, block, [&] { ck_fd::ck_fd_kernel(out, 0, 8, a, 0, 8, b, 0, 8, "
        "bits, 0, 0, bit0, meta, 1, n, err); });\n}\n")
    lib = host_shim_library(tmp_path, src + shim)
    lib.ck_and_run.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                               ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint]
    lib.ck_fd_run.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_uint64, ctypes.c_uint64,
                                                      ctypes.c_void_p, ctypes.c_void_p,
                                                      ctypes.c_uint]
    rng = np.random.default_rng(27)
    n = 300
    a = rng.integers(-100, 100, n).astype(np.int64)
    b = rng.integers(-3, 3, n).astype(np.int64)
    va, vb = rng.random(n) < 0.8, (rng.random(n) < 0.8) & (b != 0)   # every 0 under a null
    oa, ob = 3, 6
    ra = np.packbits(np.concatenate([np.zeros(oa, bool), va]), bitorder="little")
    rb = np.packbits(np.concatenate([np.zeros(ob, bool), vb]), bitorder="little")
    bits = np.zeros((n + 7) // 8, np.uint8)
    lib.ck_and_run(bits.ctypes.data, n, ra.ctypes.data, oa, rb.ctypes.data, ob,
                   dialects.CUDA_BLOCK)
    valid = np.unpackbits(bits, bitorder="little")[:n].astype(bool)
    assert valid.tolist() == (va & vb).tolist()
    out = np.full(n, 99, np.int64)
    err = np.zeros(4, np.int32)
    meta = np.zeros(1, np.int64)
    lib.ck_fd_run(out.ctypes.data, a.ctypes.data, b.ctypes.data, bits.ctypes.data, 0, n,
                  err.ctypes.data, meta.ctypes.data, dialects.CUDA_BLOCK)
    assert err[0] == 0
    want = fdiv(ckernels.asarray(pa.array(a, mask=~va)), ckernels.asarray(pa.array(b, mask=~vb)))
    assert [int(x) if v else None for x, v in zip(out, valid)] == want.tolist()
    assert not out[~valid].any()      # 0 under a null, the body never ran there
