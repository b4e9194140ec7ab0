"""``var * ?T`` results of numbers and bools on devices (``docs/nulls.md`` "On
devices", ``docs/device-code.md``): functions appending ``None`` or values to
their output parameter (``out.append(None if x < 0 else x * 2.0)``) or
returning a list with ``None`` items run in the device arena of
``jit/device_append.py`` with one presence byte per item in the arena's byte
twin (``ckernel/device_arena.h`` ``CK_DEVICE_ARENA_OPTION_ROW``), compacted
with the values and packed into the child's bitmap: a :class:`DeviceVarArray`
with a :class:`DeviceOptionArray` child.  Checked against the CPU jit and
CPython on OpenCL (PoCL) -- empty rows, all-null rows, long rows that overflow
the first arena (hypothesis) -- and as CUDA C through NVRTC + ptxas and the
host shim."""

import ctypes

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.nulls import DeviceOptionArray
from ckernels.device.varlen import DeviceVarArray
from ckernels.errors import NotSupportedError

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("var * ?float64(var * float64)")
def doubled_or_null(r, out):
    for x in r:
        out.append(None if x < 0 else x * 2.0)      # an optional float


@ckernels.jit("var * ?int64(var * int64)")
def halves(r):
    return [None if x % 2 else x // 2 for x in r]      # a returned list with None items


@ckernels.jit("var * ?bool(int64)")
def pattern(n, out):
    if n < 0:
        raise ValueError("negative n")
    for i in range(n):
        if len(out) % 3 == 0:                           # len() of the row, nulls counted
            out.append(None)                            # None itself
        else:
            out.append(i % 2 == 0)                      # a bool


def doubled_py(r):
    return [None if x < 0 else x * 2.0 for x in r]


def pattern_py(n):
    return [None if i % 3 == 0 else i % 2 == 0 for i in range(n)]


def _host(rows, t):
    return ckernels.array(rows, type=f"{len(rows)} * {t}")


FLOATS = [[1.5, -2.0, 0.0], [], [-1.0, -3.0], [-0.5] * 40 + [2.0] * 300, [7.0]]
INTS = [[1, 2, 3, 4], [], [1, 3, 5], list(range(-50, 400)), [0]]


def _check(got, cpu, t):
    assert isinstance(got, DeviceVarArray) and str(got.type) == f"{len(cpu)} * var * ?{t}"
    assert isinstance(got.values, DeviceOptionArray)
    assert got.tolist() == cpu
    nulls = sum(x is None for r in cpu for x in r)
    assert got.null_items == nulls and got.values.null_count == nulls


def test_results_match_the_cpu_jit_and_python(ctx):
    f_cpu = doubled_or_null(_host(FLOATS, "var * float64")).tolist()
    assert f_cpu == [doubled_py(r) for r in FLOATS]
    _check(doubled_or_null(ctx.array(_host(FLOATS, "var * float64"))), f_cpu, "float64")
    i_cpu = halves(_host(INTS, "var * int64")).tolist()
    assert i_cpu == [[None if x % 2 else x // 2 for x in r] for r in INTS]
    got = halves(ctx.array(_host(INTS, "var * int64")))
    _check(got, i_cpu, "int64")
    assert got.values.values.dtype == np.int64
    n = np.array([0, 1, 4, 700, 3, 0], np.int64)      # 700: past the first arena (8 per row)
    b_cpu = pattern(n).tolist()
    assert b_cpu == [pattern_py(int(k)) for k in n]
    for _ in range(2):      # the second call starts from the room the first needed
        _check(pattern(ctx.array(n)), b_cpu, "bool")


def test_results_leave_the_device_with_their_nulls(ctx):
    pa = pytest.importorskip("pyarrow")
    got = doubled_or_null(ctx.array(_host([[1.0, -1.0], [], [-2.0, -2.0]], "var * float64")))
    want = [[2.0, None], [], [None, None]]
    assert got.get().tolist() == want and str(got.get().type).endswith("var * ?float64")
    assert pa.array(got.get()).to_pylist() == want
    assert got[0] == [2.0, None] and got[1:].tolist() == want[1:]
    assert "3 null items" in repr(got)
    bits = got.values.arrow_bitmap().get()
    assert np.unpackbits(bits, bitorder="little")[:4].tolist() == [1, 0, 0, 0]
    assert got.values.values.get()[1:].tolist() == [0.0, 0.0, 0.0]    # null slots hold 0
    nanoarrow = pytest.importorskip("nanoarrow")
    from nanoarrow.device import c_device_array
    view = c_device_array(got)
    assert view.schema.format == "+L" and view.schema.child(0).format == "g"
    assert view.array.child(0).null_count == 3 and view.array.child(0).length == 4
    del view, nanoarrow


def test_empty_inputs_errors_and_refusals(ctx):
    assert halves(ctx.array(_host([[1]], "var * int64"))[:0]).tolist() == []
    assert pattern(ctx.array(np.zeros(3, np.int64))).tolist() == [[], [], []]
    with pytest.raises(ValueError, match="negative n") as cpu:
        pattern(np.array([2, -1], np.int64))
    with pytest.raises(ValueError, match="negative n") as dev:
        pattern(ctx.array(np.array([2, -1], np.int64)))
    assert type(dev.value) is type(cpu.value)
    with pytest.raises(NotSupportedError) as e:
        halves(ctx.array(_host([[1]], "var * int64")), out=ctx.empty(1, "int64"))
    assert "\n" not in str(e.value) and "out=" in str(e.value)
    with pytest.raises(NotSupportedError) as e:      # a null input row would be a null row
        pattern(ctx.array([2, None], type="2 * ?int64"))
    assert "\n" not in str(e.value) and "null row" in str(e.value)


def test_source_names_the_presence_bytes():
    src = doubled_or_null.source("opencl")
    assert "ck_aorow_append_float64" in src and "atom_add" in src
    assert "ck_aorow_init_int64" in halves.source("cuda")


ROWS = st.lists(st.lists(st.integers(-5, 5), max_size=10) |
                st.lists(st.sampled_from([-1, 3]), max_size=6) |          # all null
                st.lists(st.integers(-9, 9), min_size=100, max_size=300),  # long
                max_size=12)


@SETTINGS
@given(rows=ROWS)
def test_hypothesis_rows_against_the_cpu_jit(ctx, rows):
    h = _host(rows, "var * int64")
    d = ctx.array(h)
    assert halves(d).tolist() == halves(h).tolist()
    hf = _host([[float(x) for x in r] for r in rows], "var * float64")
    got = doubled_or_null(ctx.array(hf))
    assert got.tolist() == doubled_or_null(hf).tolist()


# ---- CUDA C: NVRTC + ptxas, then doubled_or_null's kernel on the host shim ------------------
def test_results_as_cuda_c_match_the_cpu_jit(tmp_path):
    from ckernels import dialects
    from ckernels.jit import c_emit, device_append
    from ckernels.jit.device import target
    from cuda_tools import host_shim_library, ptx_assembled_or_skip

    def cuda(f, ns):
        comp = next(iter(f.compiled.values()))
        src = device_append.source(target("cuda"), f, comp)
        return (f"namespace {ns} {{\n" + src.replace(f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(")
                + f"}}  // {ns}\n")
    srcs = cuda(doubled_or_null, "ck_dn") + cuda(halves, "ck_hv") + cuda(pattern, "ck_pt")
    ptx = ptx_assembled_or_skip(tmp_path, srcs)
    assert all(f"{ns}_kernel" in ptx for ns in ("ck_dn", "ck_hv", "ck_pt"))
    sig = ("unsigned char *out, const unsigned char **in, const unsigned long long *off, "
           "const long long *stride, long long cap, const long long *meta, "
           "unsigned long long n, int *err, unsigned int block")
    # the row's 3 operands, then the arena, its counter, the capacity, the starts, the presence
    ins = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in range(3))
    ins += ", in[3], 0, 0, in[4], 0, 0, cap, in[5], 0, 8, in[6], 0, 0"
    lib = host_shim_library(tmp_path, srcs + (
        f'extern "C" void ck_dn_run({sig}) {{\n  ck_shim_grid(n, block, [&] {{ '
        f"ck_dn::ck_dn_kernel(out, 0, 8{ins}, meta, 1, n, err); }});\n}}\n"))
    fn = lib.ck_dn_run
    fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64, ctypes.c_void_p, ctypes.c_uint64,
                                           ctypes.c_void_p, ctypes.c_uint]
    rows = FLOATS
    n = len(rows)
    o = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    vals = np.array([x for r in rows for x in r] + [0.0])
    cap = 16
    for _ in range(2):      # an arena of 16 overflows; the retry has the room
        arena, present = np.zeros(cap), np.full(cap, 7, np.uint8)
        counter, starts = np.zeros(1, np.int64), np.zeros(n, np.int64)
        lens, err = np.zeros(n + 1, np.int64), np.zeros(4, np.int32)
        arrs = [o, o, vals, arena, counter, starts, present]
        fn(lens.ctypes.data, (ctypes.c_void_p * 7)(*[a.ctypes.data for a in arrs]),
           (ctypes.c_uint64 * 7)(0, 8, 0, 0, 0, 0, 0), (ctypes.c_int64 * 7)(8, 8, 0, 0, 0, 8, 0),
           cap, np.zeros(1, np.int64).ctypes.data, n, err.ctypes.data, dialects.CUDA_BLOCK)
        assert err[0] == 0, err
        if counter[0] <= cap:
            break
        cap = int(counter[0])
    got = [[float(arena[s + j]) if present[s + j] else None for j in range(k)]
           for s, k in zip(starts.tolist(), lens[:n].tolist())]
    assert set(present[s + j] for s, k in zip(starts, lens[:n]) for j in range(k)) <= {0, 1}
    assert got == doubled_or_null(_host(rows, "var * float64")).tolist()
