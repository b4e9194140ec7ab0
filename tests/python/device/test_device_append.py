"""Var results of data-dependent length on devices (``ckernels.jit.device_append``):
functions building their row by ``out.append(x)`` run with a device arena
(``ckernel/device_arena.h``: an atomic bump pointer, overflow detected, one
retry with the capacity the counter reports, compaction into Arrow offsets +
values).  Checked on OpenCL (PoCL) and as CUDA C (NVRTC + ptxas, then run on
the host shim) against the CPU jit over the same rows, with hypothesis over
ragged rows (empty and long rows)."""

import ctypes

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.errors import NotSupportedError


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("var * float64(var * float64)")
def positive(r, out):
    for x in r:
        if x > 0:
            out.append(x)


@ckernels.jit("var * int64(var * int64, int64)")
def multiples(r, k, out):
    for i in range(len(r)):
        if r[i] % k == 0:
            out.append(r[i] * 2)
            if r[i] > 50:
                out.append(len(out))


@ckernels.jit("var * int64(int64)")
def digits(n, out):
    if n < 0:
        raise ValueError("negative")
    while True:
        out.append(n % 10)
        n //= 10
        if n == 0:
            break


@ckernels.jit("var * int32(int64)")
def upto(n, out):
    for i in range(n):
        out.append(i)


@ckernels.jit("var * bool(var * float64)")
def signs(r, out):
    for x in r:
        if x != 0.0:
            out.append(x > 0)


ROWS = st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=12) |
                st.lists(st.sampled_from([-1.5, 0.0, 2.5]), min_size=100, max_size=400),
                min_size=1, max_size=30)
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _host(a, t):
    return ckernels.array(a, type=f"{len(a)} * {t}")


def _cpu(f, *args):
    return f(*[_host(a, t) if t else a for a, t in args]).tolist()


def _dev(ctx, f, *args):
    return f(*[ctx.array(_host(a, t)) if t else a for a, t in args])


@SETTINGS
@given(ROWS)
def test_filtered_rows_match_the_cpu_jit(ctx, rows):
    got = _dev(ctx, positive, (rows, "var * float64"))
    assert type(got).__name__ == "DeviceVarArray" and str(got.type) == f"{len(rows)} * var * float64"
    assert got.tolist() == _cpu(positive, (rows, "var * float64")) == [
        [x for x in r if x > 0] for r in rows]
    assert _dev(ctx, signs, (rows, "var * float64")).tolist() == _cpu(signs, (rows, "var * float64"))


def test_index_loops_scalars_and_len_of_the_result(ctx):
    rows = [[], [3, 6, 7, 60, 90], list(range(-30, 300)), [1]]
    assert _dev(ctx, multiples, (rows, "var * int64"), (3, None)).tolist() == \
        _cpu(multiples, (rows, "var * int64"), (3, None))


def test_rows_from_numbers_and_the_arena_retry(ctx):
    v = np.array([0, 7, 10, 2**62, 123456789012], np.int64)
    assert digits(ctx.array(v)).tolist() == digits(v).tolist()
    # long rows: the first arena (8 per row) overflows, the retry has the room
    n = np.array([0, 3000, 1, 17, 0, 5000], np.int64)
    for _ in range(2):      # the second call starts from the room the first needed
        got = upto(ctx.array(n))
        assert got.values.dtype == np.int32
        assert got.tolist() == upto(n).tolist()
    assert upto(ctx.array(np.zeros(0, np.int64))).tolist() == []
    assert upto(ctx.array(np.zeros(3, np.int64))).tolist() == [[], [], []]


def test_errors_come_back_as_on_the_cpu(ctx):
    with pytest.raises(ValueError, match="negative") as cpu:
        digits(np.array([5, -1], np.int64))
    with pytest.raises(ValueError, match="negative") as dev:
        digits(ctx.array(np.array([5, -1], np.int64)))
    assert type(dev.value) is type(cpu.value)


@ckernels.jit("var * float64(var * float64)")
def doubled(r, out):
    xs = [x * 2.0 for x in r]
    for x in xs:
        out.append(x)


def test_refusals_are_one_line(ctx):
    d = ctx.array(_host([[1.0]], "var * float64"))
    assert doubled(_host([[1.0]], "var * float64")).tolist() == [[2.0]]
    with pytest.raises(NotSupportedError) as exc:
        doubled(d)
    msg = str(exc.value)
    assert "\n" not in msg and "test_device_append.py:" in msg and "list" in msg

    # views and built text append on devices (test_device_string_rows.py,
    # test_device_built_rows.py)


def test_source_names_the_arena():
    src = positive.source("opencl")
    assert "ck_arow_append_float64" in src and "atom_add" in src
    assert "atomicAdd" in positive.source("cuda")


# ---- CUDA C: NVRTC + ptxas, then the kernel on the host shim -------------------------------
def _cuda_source(f, ns):
    from ckernels.jit import c_emit, device_append
    from ckernels.jit.device import target
    comp = next(iter(f.compiled.values()))
    src = device_append.source(target("cuda"), f, comp)
    return (f"namespace {ns} {{\n" + src.replace(f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") +
            f"}}  // {ns}\n")


def test_arena_kernels_as_cuda_c_compile_assemble_and_match_the_cpu(tmp_path):
    from ckernels import dialects
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    srcs = _cuda_source(positive, "ck_pos") + _cuda_source(digits, "ck_dig")
    ptx_assembled_or_skip(tmp_path, srcs)
    sig = ("unsigned char *out, const unsigned char **in, const unsigned long long *off, "
           "const long long *stride, long long cap, const long long *meta, "
           "unsigned long long n, int *err, unsigned int block")
    wrappers = ""
    for ns, k in (("ck_pos", 3), ("ck_dig", 1)):    # the function's operands
        ins = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in range(k))
        ins += f", in[{k}], 0, 0, in[{k + 1}], 0, 0, cap, in[{k + 2}], 0, 8"
        wrappers += (f'extern "C" void {ns}_run({sig}) {{\n'
                     f"  ck_shim_grid(n, block, [&] {{ {ns}::{ns}_kernel(out, 0, 8"
                     f"{ins}, meta, 1, n, err); }});\n}}\n")
    lib = host_shim_library(tmp_path, srcs + wrappers)

    def run(ns, ins, offs, strides, n, dtype, cap):
        """The kernel with an arena of `cap`, then (after the retry) the
        compaction by NumPy: the rows."""
        fn = getattr(lib, f"{ns}_run")
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64, ctypes.c_void_p,
                                               ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint]
        for _ in range(2):
            arena = np.zeros(max(cap, 1), dtype)
            counter = np.zeros(1, np.int64)
            starts = np.zeros(n, np.int64)
            lens = np.zeros(n + 1, np.int64)
            err = np.zeros(4, np.int32)
            p = [a.ctypes.data for a in ins] + [arena.ctypes.data, counter.ctypes.data,
                                                 starts.ctypes.data]
            k = len(p)
            o = list(offs) + [0] * 3
            s = list(strides) + [0] * 3
            fn(lens.ctypes.data, (ctypes.c_void_p * k)(*p), (ctypes.c_uint64 * k)(*o),
               (ctypes.c_int64 * k)(*s), cap, np.zeros(1, np.int64).ctypes.data, n,
               err.ctypes.data, dialects.CUDA_BLOCK)
            if err[0]:
                return ("error", int(err[0]))
            if counter[0] <= cap:
                break
            assert (starts < 0).any()
            cap = int(counter[0])
        assert (starts[lens[:n] > 0] >= 0).all()
        return [arena[starts[i]:starts[i] + lens[i]].tolist() for i in range(n)]

    rows = [[1.0, -2.0, 3.0], [], [-1.0] * 50, [0.5] * 300, [2.0]]
    o = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    vals = np.array([x for r in rows for x in r] + [0.0])
    got = run("ck_pos", [o, o, vals], [0, 8, 0], [8, 8, 0], len(rows), np.float64, 16)
    assert got == _cpu(positive, (rows, "var * float64"))
    v = np.array([0, 7, 10, 2**62, 123456789012], np.int64)
    assert run("ck_dig", [v], [0], [8], len(v), np.int64, 4) == digits(v).tolist()
    assert run("ck_dig", [np.array([3, -1], np.int64)], [0], [8], 2, np.int64, 64)[0] == "error"


@ckernels.jit("string(int64)")
def pieces(n):
    s = ""
    for i in range(n):
        if i % 3 == 0:
            s += "*"
        else:
            s += str(i) + "é"
    return s


def test_strings_built_in_loops_of_data_dependent_length(ctx):
    """Text built by += in a loop takes the sizing pass (the loop runs in both
    passes, the first counting), not the arena: the same text as the CPU."""
    v = np.array([0, 1, 5, 12, 40, 3], np.int64)
    assert pieces(ctx.array(v)).tolist() == pieces(v).tolist() == [pieces.py_func(i)
                                                                   for i in v.tolist()]
