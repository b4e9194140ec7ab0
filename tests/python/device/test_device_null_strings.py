"""Null-aware strings on devices (``docs/nulls.md`` "On devices"): ``?string``
arguments that see ``None``, ``?string`` results that may be ``None`` (a null
slot of length 0 with Arrow's bitmap), ``?int64``/``?float64``/``?bool``
results of ``?string`` arguments, and nulls propagating through plain
``string`` signatures, checked against the CPU jit over the same host array
(hypothesis: non-ASCII and empty strings, random nulls, bit offsets 0-7 from
sliced pyarrow arrays, all-null and no-null arrays) on OpenCL (PoCL) and
CUDA where a GPU is lent; the CUDA C through NVRTC + ptxas."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.array import DeviceArray
from ckernels.device.nulls import DeviceOptionArray
from ckernels.device.varlen import DeviceVarArray
from ckernels.errors import NotSupportedError

pa = pytest.importorskip("pyarrow")

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
ARROW_DEVICE_OPENCL = 4
ARROW_DEVICE_CUDA = 2


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("?string(?string)")
def upper_or_none(s):
    return None if s is None else s.upper()


@ckernels.jit("int64(?string)")
def length_or(s):
    if s is None:
        return -1
    return len(s)


@ckernels.jit("?int64(?string)")
def find_e(s):
    if s is None:
        return 100
    i = s.find("é")
    if i < 0:
        return None
    return i


@ckernels.jit("?float64(?string)")
def half_len(s):
    if s is None:
        return None
    return len(s) / 2.0


@ckernels.jit("?bool(?string)")
def starts_a(s):
    if s is None:
        return None
    return s.startswith("a")


@ckernels.jit("?bool(?string, ?string)")
def less(s, t):
    if s is None or t is None:
        return None
    return s < t


@ckernels.jit("?string(?string, int64)")
def labelled(s, k):
    if s is None:
        return "<null>"
    if len(s) == 0:
        return None
    return f"[{s[:k]}]"


@ckernels.jit("string(string)")
def shout(s):
    return s.upper() + "!"


@ckernels.jit("?string(?string)")
def unwrap(s):
    return s + "x"


texts = st.text(alphabet=st.sampled_from("abcé€𝄞 Aß"), max_size=8)
strings_with_nulls = st.lists(st.one_of(st.none(), texts), max_size=40)


def _sliced(values, start):
    """``values`` as a pyarrow string array at bit offset ``start``."""
    return pa.array([None] * start + values + ["z"] * 3, pa.string()).slice(start, len(values))


def _check(ctx, f, p, *extra):
    want = f(ckernels.asarray(p), *extra).tolist()
    got = f(ctx.array(p), *extra)
    assert got.tolist() == want
    return got, want


@SETTINGS
@given(values=strings_with_nulls, start=st.integers(0, 7))
def test_string_results_match_the_cpu(ctx, values, start):
    p = _sliced(values, start)
    got, want = _check(ctx, upper_or_none, p)
    assert want == [None if v is None else v.upper() for v in values]
    assert isinstance(got, DeviceOptionArray) and got.null_count == values.count(None)
    _, want = _check(ctx, labelled, p, 2)
    assert want == [("<null>" if v is None else None if v == "" else f"[{v[:2]}]")
                    for v in values]


@SETTINGS
@given(values=strings_with_nulls, start=st.integers(0, 7))
def test_number_results_match_the_cpu(ctx, values, start):
    p = _sliced(values, start)
    got, want = _check(ctx, length_or, p)
    assert isinstance(got, DeviceArray)          # a plain result: no nulls
    assert want == [-1 if v is None else len(v) for v in values]
    for f in (find_e, half_len, starts_a):
        got, _ = _check(ctx, f, p)
        assert isinstance(got, DeviceOptionArray)
    # two ?string arguments, each with its own bitmap at its own bit offset
    q = _sliced(values[::-1], (start + 5) % 8)
    want = less(ckernels.asarray(p), ckernels.asarray(q)).tolist()
    assert less(ctx.array(p), ctx.array(q)).tolist() == want
    assert want == [None if x is None or y is None else x < y
                    for x, y in zip(values, values[::-1])]


@SETTINGS
@given(values=strings_with_nulls, start=st.integers(0, 7))
def test_nulls_propagate_through_plain_string_signatures(ctx, values, start):
    p = _sliced(values, start)
    got, want = _check(ctx, shout, p)
    assert want == [None if v is None else v.upper() + "!" for v in values]
    assert isinstance(got, DeviceOptionArray) == (None in values)


@pytest.mark.parametrize("values", [[], [None] * 9, ["a", "é", ""], [None, "", None]],
                         ids=["empty", "all-null", "no-null", "empty-and-null"])
def test_edge_arrays(ctx, values):
    p = pa.array(values, pa.string())
    for f in (upper_or_none, length_or, find_e, shout):
        _check(ctx, f, p)
    _check(ctx, labelled, p, 1)
    # a plain device string array (no bitmap) into a ?string parameter
    d = ctx.array(ckernels.array(["ab", "é"]))
    assert upper_or_none(d).tolist() == ["AB", "É"]
    assert length_or(d).tolist() == [2, 1]


def test_results_leave_the_device_with_their_nulls(ctx):
    values = ["ab", None, "é€", "", None, "𝄞x"]
    got = upper_or_none(ctx.array(pa.array(values)))
    host = got.get()
    assert host.tolist() == [None if v is None else v.upper() for v in values]
    assert str(got.type) == "6 * ?string" and got.null_count == 2
    assert isinstance(got.values, DeviceVarArray)
    offs = got.values.offsets.get()
    assert offs[2] == offs[1] and offs[5] == offs[4]    # a null is a slot of length 0
    schema, array = got.__arrow_c_device_array__()
    nanoarrow = pytest.importorskip("nanoarrow")
    from nanoarrow import device as nd
    view = nd.c_device_array(got)
    assert view.device_type_id == {"opencl": ARROW_DEVICE_OPENCL,
                                     "cuda": ARROW_DEVICE_CUDA}[ctx.kind]
    assert view.array.null_count == 2 and view.array.n_buffers == 3
    del schema, array, view, nanoarrow


def test_errors_and_none_read_as_a_string(ctx):
    # a None read as a string: Numba's TypeError, as on the CPU
    with pytest.raises(Exception) as cpu:
        unwrap(ckernels.array(["a", None]))
    with pytest.raises(Exception) as dev:
        unwrap(ctx.array(pa.array(["a", None])))
    assert type(dev.value) is type(cpu.value) and "got None" in str(dev.value)
    assert unwrap(ctx.array(pa.array(["a", "é"]))).tolist() == ["ax", "éx"]


def test_refusals(ctx):
    d = ctx.array(pa.array(["a b", None]))
    with pytest.raises(NotSupportedError, match="out=") as e:
        upper_or_none(d, out=ctx.empty(2, "float64"))
    assert "\n" not in str(e.value)


def test_source_shows_the_optional_string():
    src = upper_or_none.source("opencl")
    assert "ck_opt_str_t" in src and "ck_none_str" in src
    assert "ck_opt_str_t" in upper_or_none.source("cuda")


# ---- CUDA C: NVRTC + ptxas ---------------------------------------------------------------
def test_null_string_kernels_as_cuda_c_compile_and_assemble(tmp_path):
    from cuda_tools import ptx_assembled_or_skip
    from ckernels.jit import c_emit, device_null_strings
    from ckernels.jit.device import target
    cases = [(f, False) for f in (upper_or_none, length_or, find_e, half_len, starts_a,
                                  labelled)] + [(shout, True)]     # nulls propagating
    srcs = ["", ""]        # the case tables of two functions exceed 64 KiB of constants
    for k, (f, guard) in enumerate(cases):
        comp = next(iter(f.compiled.values()))
        src = device_null_strings.source(target("cuda"), f, comp, guard)
        assert ("ck_opt_" in src) != guard
        ns = f"ck_ns{k}"
        srcs[guard] += (f"namespace {ns} {{\n" + src.replace(f" {c_emit.KERNEL_NAME}(",
                                                             f" {ns}_kernel(") + "}\n")
    for k, src in enumerate(srcs):
        (tmp_path / str(k)).mkdir()
        ptx = ptx_assembled_or_skip(tmp_path / str(k), src)
        assert f"ck_ns{6 * k}_kernel" in ptx


def _shim_run(lib, name, inputs, operands, n):
    """Run kernel wrapper ``name`` of the host shim over ``operands`` (per
    input: a NumPy array, or an int by value); the output is ``operands``'
    first entry (int64 per row)."""
    import ctypes
    from ckernels import dialects
    ptrs, offs, strides, vals = [], [], [], []
    for (dt, by_value), a in zip(inputs, operands[1:]):
        if by_value:
            ptrs.append(0), offs.append(0), strides.append(0), vals.append(int(a))
        else:
            arr, off, stride = a
            ptrs.append(arr.ctypes.data), offs.append(off), strides.append(stride)
            vals.append(0)
    k = len(inputs)
    err = np.zeros(4, np.int32)
    meta = np.zeros(2, np.int64)
    fn = getattr(lib, name)
    fn.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                                           ctypes.c_uint]
    fn(operands[0].ctypes.data, (ctypes.c_void_p * k)(*ptrs), (ctypes.c_uint64 * k)(*offs),
       (ctypes.c_int64 * k)(*strides), (ctypes.c_uint64 * k)(*vals), meta.ctypes.data, n,
       err.ctypes.data, dialects.CUDA_BLOCK)
    assert err[0] == 0, err


def test_null_string_kernels_run_as_cuda_c_on_the_host_shim(tmp_path):
    """Both passes of ``?string(?string)`` and of ``string(string)`` with
    nulls propagating, as CUDA C on the host shim (NumPy's cumsum as the
    scan), against the CPU jit over the same strings and bitmap."""
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    from ckernels.jit import c_emit, device_null_strings
    from ckernels.jit.device import target
    values = ["ab", None, "é€", "", None, "𝄞x", "aß", None, "Z"] * 3
    start = 3
    srcs, progs, wrappers = "", {}, []
    for ns, f, guard in (("ck_up", upper_or_none, False), ("ck_shout", shout, True)):
        comp = next(iter(f.compiled.values()))
        src, inputs = device_null_strings.program(target("cuda"), f, comp, guard)
        progs[ns] = (f, inputs)
        one = f"namespace {ns} {{\n" + src.replace(f" {c_emit.KERNEL_NAME}(",
                                                    f" {ns}_kernel(") + "}\n"
        (tmp_path / ns).mkdir()
        ptx_assembled_or_skip(tmp_path / ns, one)   # each: its own case tables
        srcs += one
        args = "".join(f", (const unsigned char *)in[{j}], off[{j}], st[{j}]" if not bv
                       else f", v[{j}]" for j, (_, bv) in enumerate(inputs))
        wrappers.append(
            f'extern "C" void {ns}_run(unsigned char *out, const void **in, '
            "const unsigned long long *off, const long long *st, const unsigned long long *v, "
            "const long long *meta, unsigned long long n, int *err, unsigned int block) {\n"
            f"  ck_shim_grid(n, block, [&] {{ {ns}::{ns}_kernel(out, 0, 8{args}, meta, 1, n, "
            "err); });\n}\n")
    lib = host_shim_library(tmp_path, srcs + "".join(wrappers))
    n = len(values)
    enc = [(v or "").encode() for v in values]
    o = np.cumsum([0] + [len(b) for b in enc]).astype(np.int64)
    data = np.frombuffer(b"".join(enc) + b"\0", np.uint8).copy()
    valid = np.array([v is not None for v in values])
    bits = np.packbits(np.concatenate([np.zeros(start, bool), valid]), bitorder="little")
    host = ckernels.asarray(pa.array(values, pa.string()))
    for ns, (f, inputs) in progs.items():
        aware = ns == "ck_up"
        ok = np.zeros(n, np.uint8)
        sizes = np.zeros(n + 1, np.int64)
        scr_sizes = np.zeros(n + 1, np.int64)
        one = np.zeros(1, np.uint8)
        # the string's 3 operands, a bitmap and its bit offset (the argument's
        # or the guard's), the presence bytes (aware); then data (, scratch), pass
        scratch = len(inputs) - 5 - aware == 4

        def ops(out, text, scr, mode):
            got = [out, (o, 0, 8), (o, 8, 8), (data, 0, 0), (bits, 0, 0), start]
            if aware:
                got.append((ok, 0, 1))
            got.append((text, 0, 0))
            if scratch:
                got += [(scr, 0, 0), (scr_sizes, 0, 8)]
            return got + [mode]
        _shim_run(lib, f"{ns}_run", inputs, ops(sizes, one, one, 0), n)
        offsets = np.concatenate([[0], np.cumsum(sizes[:n])]).astype(np.int64)
        scr_sizes[:] = np.concatenate([[0], np.cumsum(scr_sizes[:n])])
        out_text = np.zeros(max(int(offsets[-1]), 1), np.uint8)
        scr = np.zeros(max(int(scr_sizes[-1]), 1), np.uint8)
        _shim_run(lib, f"{ns}_run", inputs, ops(offsets, out_text, scr, 1), n)
        raw = out_text.tobytes()
        present = ok.astype(bool) if aware else valid
        got = [raw[offsets[i]:offsets[i + 1]].decode() if present[i] else None
               for i in range(n)]
        assert got == f(host).tolist()
        assert all(offsets[i] == offsets[i + 1] for i in range(n) if not present[i])
