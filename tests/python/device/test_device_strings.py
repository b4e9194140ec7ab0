"""Strings and var dims on devices (OpenCL through PoCL): Arrow's layout in
device buffers (int64 offsets + values), uploads from every host source in
one copy per buffer, the way back, the NumPy-like surface, the picture, and
Arrow's C device interface (``__arrow_c_device_array__``) read by nanoarrow
as a consumer.  CPython's ``str.encode``, NumPy and pyarrow are the oracles."""

import ctypes

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.varlen import DeviceVarArray
from ckernels.errors import CKIndexError, NotSupportedError

ARROW_DEVICE_OPENCL = 4
ARROW_DEVICE_CUDA = 2


def _arrow_device(ctx):
    return ARROW_DEVICE_CUDA if ctx.kind == "cuda" else ARROW_DEVICE_OPENCL


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


def _layout(strings):
    """Arrow's large_utf8 buffers of ``strings``: (offsets, data)."""
    enc = [s.encode() for s in strings]
    return np.cumsum([0] + [len(b) for b in enc], dtype=np.int64), b"".join(enc)


def test_the_first_user_example_lives_on_the_device(ctx):
    d = ctx.array(ckernels.array(["a", "bb"]))
    assert isinstance(d, DeviceVarArray)
    assert d.shape == (2,) and len(d) == 2 and d.ndim == 1
    assert str(d.type) == "2 * string"
    assert repr(d).startswith(f"<ckernels.DeviceArray 2 * string (2,) on {ctx.kind}")
    assert d.tolist() == ["a", "bb"]
    host = d.get()
    assert isinstance(host, ckernels.Array) and host.tolist() == ["a", "bb"]
    assert d.to_numpy().tolist() == ["a", "bb"]
    # the layout is Arrow's: int64 offsets from 0, the UTF-8 bytes
    assert d.offsets.to_numpy().tolist() == [0, 1, 3]
    assert bytes(d.values.to_numpy()) == b"abb"


TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
               max_size=40)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(TEXT | st.sampled_from(["", "é" * 300, "€x", "𝄞"]), max_size=30))
def test_strings_round_trip_in_arrow_layout(ctx, strings):
    d = ctx.array(strings) if strings else ctx.array(ckernels.array(strings, dtype="string"))
    offsets, data = _layout(strings)
    assert d.offsets.to_numpy().tolist() == offsets.tolist()
    assert bytes(d.values.to_numpy()) == data
    assert d.tolist() == strings
    if strings:
        i = len(strings) // 2
        assert d[i] == strings[i] and d[-1] == strings[-1]
        assert d[1:].tolist() == strings[1:]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.floats(allow_nan=False, width=64), max_size=12), min_size=1,
                max_size=20))
def test_ragged_rows_round_trip(ctx, rows):
    d = ctx.array(rows, type=f"{len(rows)} * var * float64")
    assert str(d.type) == f"{len(rows)} * var * float64"
    assert d.offsets.to_numpy().tolist() == np.cumsum([0] + [len(r) for r in rows]).tolist()
    flat = [x for r in rows for x in r]
    assert d.values.to_numpy().tolist() == flat and d.values.dtype == np.float64
    assert d.tolist() == rows


@pytest.mark.parametrize("source", ["numpy_stringdtype", "numpy_str", "pyarrow_string",
                                    "pyarrow_large_string", "pyarrow_sliced", "list"])
def test_every_host_source_of_strings(ctx, source):
    values = ["x", "", "ünï", "long" * 50, "z"]
    if source == "numpy_stringdtype":
        obj = np.array(values, dtype=np.dtypes.StringDType())
    elif source == "numpy_str":
        obj = np.array(values)
    elif source == "list":
        obj = values
    else:
        pa = pytest.importorskip("pyarrow")
        if source == "pyarrow_sliced":
            obj = pa.array(["skip"] + values + ["skip"]).slice(1, len(values))
        else:
            obj = pa.array(values, type=pa.string() if source == "pyarrow_string"
                           else pa.large_string())
    d = ctx.array(obj)
    assert d.tolist() == values
    assert d.offsets.to_numpy()[0] == 0   # a sliced source is re-based


def test_var_dims_of_every_element_kind(ctx):
    cases = [([[1, 2, 3], [], [4]], "3 * var * int64"),
             ([[True, False, True], [], [False] * 9], "3 * var * bool"),
             ([["a", "éé"], [], ["ccc"]], "3 * var * string"),
             ([[[1], [2, 3]], [], [[]]], "3 * var * var * int32")]
    for rows, t in cases:
        d = ctx.array(rows, type=t)
        assert str(d.type) == t and d.tolist() == rows, t
    d = ctx.array([[1.5], [2.5, 3.5]])          # ragged lists: var dims by themselves
    assert str(d.type) == "2 * var * float64" and d.tolist() == [[1.5], [2.5, 3.5]]


def test_indexing_copies_and_transfers(ctx):
    d = ctx.array(["α", "bb", "", "dddd"])
    with pytest.raises(CKIndexError):
        d[4]
    with pytest.raises(NotSupportedError, match="step"):
        d[::2]
    s = d[1:3]
    assert s.tolist() == ["bb", ""] and s.offsets.to_numpy().tolist() == [0, 2, 2]
    assert d[3:1].tolist() == [] and d[3:1].offsets.to_numpy().tolist() == [0]
    c = d.copy()
    assert c.tolist() == d.tolist() and c.values.buffer is not d.values.buffer
    cpu = ckernels.Context("cpu")
    assert cpu.array(d).tolist() == d.tolist()
    assert ctx.to(d) is d and cpu.to(d).tolist() == d.tolist()
    assert ctx.array(d).tolist() == d.tolist()
    assert list(d) == ["α", "bb", "", "dddd"]
    assert str(d) == "['α', 'bb', '', 'dddd']"
    with pytest.raises(TypeError, match=r"\.get\(\)"):
        np.asarray(d)


def test_refusals_are_one_line_and_clear(ctx):
    with pytest.raises(NotSupportedError, match="one outer dim"):
        ctx.array(ckernels.array([["a", "b"], ["c", "d"]]))
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(NotSupportedError, match="null rows"):   # ?var: null rows (null
        ctx.array(pa.array([["a"], None]))                       # items upload: var * ?T)
    # numbers still take NumPy's way
    assert not isinstance(ctx.array([1.0, 2.0]), DeviceVarArray)


def test_picture_draws_every_buffer(ctx):
    d = ctx.array([["a", "b"], ["ccc"]], type="2 * var * string")
    html = d._repr_html_()
    for name in ("offsets", "values.offsets", "values.data (UTF-8)"):
        assert name in html
    assert "<svg" in html
    text = str(ckernels.show(d))
    assert "2 * var * string" in text and "capacity" in text


# ---- Arrow's C device interface ---------------------------------------------------------
def _device_array_struct(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    p = get(capsule, b"arrow_device_array")
    words = (ctypes.c_int64 * 16).from_address(p)
    return p, words


def test_arrow_device_export_of_strings_points_at_the_device_buffers(ctx):
    d = ctx.array(["a", "bb", "ccc"])
    schema, arr = d.__arrow_c_device_array__()
    p, w = _device_array_struct(arr)
    length, null_count, offset, n_buffers = w[0], w[1], w[2], w[3]
    assert (length, null_count, offset, n_buffers) == (3, 0, 0, 3)
    buffers = (ctypes.c_void_p * 3).from_address(w[5])
    assert buffers[0] is None
    # a cl_mem on OpenCL (offset 0), a device pointer on CUDA
    assert buffers[1] == d.offsets.buffer.native_handle + d.offsets.offset
    assert buffers[2] == d.values.buffer.native_handle + d.values.offset
    assert w[10] == 0 and ctypes.c_int32.from_address(p + 88).value == _arrow_device(ctx)
    na = pytest.importorskip("nanoarrow")
    from nanoarrow.device import c_device_array
    c = c_device_array(d)
    assert c.device_type_id == _arrow_device(ctx) and c.schema.format == "U"
    assert na.c_schema(d).format == "U"          # __arrow_c_schema__ says what is exported
    d.__arrow_c_device_array__(d.__arrow_c_schema__())   # its own schema requested: taken
    assert c.array.length == 3
    del schema, arr, c, na


def test_arrow_device_export_of_var_dims_numbers_and_bools(ctx):
    pytest.importorskip("nanoarrow")
    from nanoarrow.device import c_device_array
    d = ctx.array([[1.0], [], [2.0, 3.0]], type="3 * var * float64")
    c = c_device_array(d)
    assert c.schema.format == "+L" and c.array.length == 3
    assert c.array.child(0).length == 3
    x = ctx.array(np.arange(5, dtype=np.int32))
    c = c_device_array(x)
    assert c.schema.format == "i" and c.device_type_id == _arrow_device(ctx)
    _, arr = x.__arrow_c_device_array__()
    _, w = _device_array_struct(arr)
    assert (ctypes.c_void_p * 2).from_address(w[5])[1] == x.buffer.native_handle + x.offset
    b = ctx.array(np.array([True, False, True]))
    assert c_device_array(b).schema.format == "b"
    with pytest.raises(NotSupportedError, match="requested"):
        x.__arrow_c_device_array__(d.__arrow_c_schema__())


@pytest.mark.parametrize("n", [0, 9, 100])
def test_bools_are_packed_to_arrow_bits_on_the_device(ctx, n):
    from ckernels.device.arrow import arrow_leaf
    rng = np.random.default_rng(n)
    host = rng.random(n) < 0.5
    packed = arrow_leaf(ctx.array(host)).to_numpy()
    want = np.packbits(host, bitorder="little") if n else np.zeros(1, np.uint8)
    assert packed.tolist() == want.tolist()


# ---- jitted row reductions over var dims ------------------------------------------------
@ckernels.jit("float64(var * float64)")
def row_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@ckernels.jit("int64(var * int64, int64)")
def count_above(x, t):
    n = 0
    for i in range(len(x)):
        if x[i] > t:
            n += 1
    return n


@ckernels.jit("int64(var * int64)")
def first(x):
    return x[0]


@ckernels.jit("float64(var * float64)")
def inv_len(x):
    return 1.0 / len(x)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.floats(-1e6, 1e6), max_size=40), min_size=1, max_size=30))
def test_row_sums_match_the_cpu_jit(ctx, rows):
    t = f"{len(rows)} * var * float64"
    want = row_sum(ckernels.array(rows, type=t))
    got = row_sum(ctx.array(rows, type=t))
    assert got.shape == (len(rows),) and got.dtype == np.float64
    np.testing.assert_allclose(got.to_numpy(), np.asarray(want), rtol=1e-12, atol=1e-9)


def test_row_reduction_with_a_scalar_and_errors_as_on_the_cpu(ctx):
    rows = [[1, 5, 9], [], [10, 11], list(range(100))]
    t = "4 * var * int64"
    d = ctx.array(rows, type=t)
    assert count_above(d, 4).to_numpy().tolist() == \
        np.asarray(count_above(ckernels.array(rows, type=t), 4)).tolist()
    # the device checks bounds (Numba's CPU code does not): an empty row raises
    with pytest.raises(IndexError, match="out of bounds"):
        first(d)
    # errors both raise come back the same
    with pytest.raises(ZeroDivisionError) as cpu:
        inv_len(ckernels.array([[1.0], []], type="2 * var * float64"))
    with pytest.raises(ZeroDivisionError) as dev:
        inv_len(ctx.array([[1.0], []], type="2 * var * float64"))
    assert str(dev.value).split(" (")[0] == str(cpu.value).split(" (")[0]
    ok = ctx.array([[3], [4, 0]], type="2 * var * int64")
    assert first(ok).to_numpy().tolist() == [3, 4]


@ckernels.jit("int64(string)")
def strlen(s):
    return len(s)


def test_string_arguments_run_on_the_device(ctx):
    # once refused; test_device_string_jit.py has the differential tests
    assert strlen(ctx.array(["a", "bé", ""])).to_numpy().tolist() == [1, 2, 0]


@ckernels.jit("int64(int64)")
def padded_len(x):
    s = f"{x:>5}"
    return len(s)


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_fstring_read_in_a_number_function_is_a_one_line_not_supported_error(target):
    # Numba's UnsupportedBytecodeError (not a NumbaError) used to leak from the emitter;
    # format specs now work on devices (test_device_format.py), but text built in a
    # function whose result is a number is still refused, in one line
    with pytest.raises(NotSupportedError) as e:
        padded_len.source(target)
    msg = str(e.value)
    line = padded_len.py_func.__code__.co_firstlineno + 2
    assert "\n" not in msg and "result is not a string" in msg
    assert f"{__file__}:{line}" in msg and "padded_len" in msg


# ---- the same row kernels as CUDA C: NVRTC + ptxas, then run on the host shim -------------
def _cuda_var_source(f, ns):
    from ckernels.jit import c_emit, device_var
    from ckernels.jit.device import target
    comp = next(iter(f.compiled.values()))
    src = device_var.source(target("cuda"), f, comp)
    return comp, (f"namespace {ns} {{\n" +
                  src.replace(f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") + f"}}  // {ns}\n")


def test_row_kernels_as_cuda_c_compile_assemble_and_match_the_cpu(tmp_path):
    from ckernels import dialects
    from ckernels.jit.device import device_error, target
    from ckernels.jit import device_var
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    (_, sum_src), (first_comp, first_src) = (_cuda_var_source(row_sum, "ck_rs"),
                                             _cuda_var_source(first, "ck_first"))
    ptx = ptx_assembled_or_skip(tmp_path, sum_src + first_src)
    assert "ck_rs_kernel" in ptx and "ck_first_kernel" in ptx
    ins = "".join(f", in[{k}], in_off[{k}], in_stride[{k}]" for k in range(3))
    wrappers = "".join(
        f'extern "C" void {ns}_run(unsigned char *out, long long out_stride, '
        "const unsigned char **in, const unsigned long long *in_off, const long long *in_stride,"
        " const long long *meta, unsigned long long n, int *err, unsigned int block) {\n"
        f"  ck_shim_grid(n, block, [&] {{ {ns}::{ns}_kernel(out, 0, out_stride{ins}, meta, 1, "
        "n, err); });\n}\n" for ns in ("ck_rs", "ck_first"))
    lib = host_shim_library(tmp_path, sum_src + first_src + wrappers)

    def run(ns, rows, dtype):
        offsets = np.cumsum([0] + [len(x) for x in rows]).astype(np.int64)
        values = np.array([v for x in rows for v in x] or [0], dtype)
        out = np.zeros(len(rows), dtype)
        err = np.zeros(4, np.int32)   # the code, a spare word, the failing offset
        meta = np.zeros(1, np.int64)
        fn = getattr(lib, f"{ns}_run")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                       ctypes.c_uint]
        ptrs = (ctypes.c_void_p * 3)(offsets.ctypes.data, offsets.ctypes.data,
                                     values.ctypes.data)
        fn(out.ctypes.data, out.strides[0], ptrs, (ctypes.c_uint64 * 3)(0, 8, 0),
           (ctypes.c_int64 * 3)(8, 8, 0), meta.ctypes.data, len(rows), err.ctypes.data,
           dialects.CUDA_BLOCK)
        return int(err[0]), out

    rng = np.random.default_rng(32)
    rows = [rng.standard_normal(int(k)).tolist() for k in rng.integers(0, 30, 300)]
    code, got = run("ck_rs", rows, np.float64)
    want = np.asarray(row_sum(ckernels.array(rows, type=f"{len(rows)} * var * float64")))
    assert code == 0
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    code, got = run("ck_first", [[5], [7, 1]], np.int64)
    assert code == 0 and got.tolist() == [5, 7]
    code, _ = run("ck_first", [[5], []], np.int64)
    prog, _ = device_var._program(target("cuda"), first, first_comp)
    exc = device_error(prog.errors, code, "first", "CUDA")
    assert isinstance(exc, IndexError)


# ---- lengths -> offsets: the C core's exclusive scan on the device ------------------------
@pytest.mark.parametrize("n", [0, 1, 257, 70000])
def test_offsets_from_lengths_scan_on_the_device(ctx, n):
    from ckernels.device.varlen import offsets_from_lengths
    lengths = np.random.default_rng(n).integers(0, 20, n).astype(np.int32)
    got = offsets_from_lengths(ctx.array(lengths)).to_numpy()
    assert got.tolist() == np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).tolist()


def test_from_lengths_builds_rows_and_strings(ctx):
    from ckernels.device.varlen import from_lengths
    rows = from_lengths(ctx.array(np.array([2, 0, 1])), ctx.array(np.array([1.0, 2.0, 3.0])))
    assert str(rows.type) == "3 * var * float64" and rows.tolist() == [[1.0, 2.0], [], [3.0]]
    text = "aé€".encode()
    s = from_lengths(ctx.array(np.array([1, 2, 3])), ctx.array(np.frombuffer(text, np.uint8)),
                     "string")
    assert s.tolist() == ["a", "é", "€"]
    with pytest.raises(ckernels.errors.InvalidArgumentError, match="sum to 4"):
        from_lengths(ctx.array(np.array([2, 2])), ctx.array(np.array([1.0, 2.0, 3.0])))


# ---- on a GPU when one is lent (skipped here without a CUDA device) -----------------------
@pytest.fixture(scope="module")
def cuda_ctx():
    try:
        return ckernels.Context("cuda")
    except ckernels.errors.BackendError as exc:
        pytest.skip(f"no CUDA device: {exc}")


def test_cuda_strings_rows_scan_and_arrow_export(cuda_ctx):
    from ckernels.device.varlen import offsets_from_lengths
    d = cuda_ctx.array(["a", "é", "", "long" * 40])
    assert d.tolist() == ["a", "é", "", "long" * 40]
    r = cuda_ctx.array([[1.0, 2.0], [], [3.0]], type="3 * var * float64")
    assert row_sum(r).get().tolist() == [3.0, 0.0, 3.0]
    lengths = np.arange(1000) % 7
    assert offsets_from_lengths(cuda_ctx.array(lengths)).get().tolist() == \
        np.concatenate([[0], np.cumsum(lengths)]).tolist()
    _, arr = d.__arrow_c_device_array__()
    p, w = _device_array_struct(arr)
    assert ctypes.c_int32.from_address(p + 88).value == 2          # ARROW_DEVICE_CUDA
    bufs = (ctypes.c_void_p * 3).from_address(w[5])
    assert bufs[1] == d.offsets.buffer.native_handle + d.offsets.offset
    assert bufs[2] == d.values.buffer.native_handle + d.values.offset
