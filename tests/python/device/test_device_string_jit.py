"""String arguments of jitted functions on devices: ``int64(string)``-style
functions over a device string array (Arrow's layout) on OpenCL (PoCL) and as
CUDA C (NVRTC + ptxas, run on the host shim), against the CPU jit over the
host strings (and CPython's ``str`` through it).  The string operations are
``ckernel/utf8_view.h``'s, compiled into each device program."""

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


@ckernels.jit("int64(string)")
def slen(s):
    return len(s)


@ckernels.jit("int64(string)")
def first_ord(s):
    if len(s) == 0:
        return -1
    return ord(s[0]) * 1000003 + ord(s[-1])


@ckernels.jit("int64(string)")
def mid_is_e(s):
    n = len(s)
    k = 0
    for i in range(n):
        if s[i] == "é":
            k += i + 1
    return k


@ckernels.jit("int64(string)")
def with_constants(s):
    r = 0
    if s == "abc":
        r += 1
    if s < "m":
        r += 2
    if "é" in s:
        r += 4
    if s.startswith("a"):
        r += 8
    if s.endswith("€"):
        r += 16
    if s != "":
        r += 32
    if "b" <= s:
        r += 64
    return r * 1000 + s.find("b") + 10 * s.find("é", 1)


@ckernels.jit("int64(string, string)")
def two(s, t):
    r = 0
    if s == t:
        r += 1
    if s < t:
        r += 2
    if t in s:
        r += 4
    if s.startswith(t):
        r += 8
    if s.endswith(t):
        r += 16
    if s >= t:
        r += 32
    return r * 1000 + s.find(t) + 100 * s.find(t, 2, -1)


@ckernels.jit("int64(string, int64)")
def index_ord(s, i):
    return ord(s[i])


@ckernels.jit("int64(var * string)")
def long_words(words):
    n = 0
    for w in words:
        if len(w) > 2:
            n += 1
    if len(words) > 0 and words[-1] == "é":
        n += 100
    if len(words) > 1:
        n += 1000 * len(words[0])
    return n


FUNCS1 = [slen, first_ord, mid_is_e, with_constants]
ALPHA = st.characters(codec="utf-8", exclude_categories=("Cs",))
TEXT = st.text(alphabet=ALPHA, max_size=30) | st.text(alphabet="abé€m𝄞", max_size=8) | \
    st.sampled_from(["", "abc", "é" * 300, "a€", "b", "m", "𝄞x"])


def _host(f, *cols):
    return np.asarray(f(*[ckernels.array(c, dtype="string") if isinstance(c, list) else c
                          for c in cols])).tolist()


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(TEXT, min_size=1, max_size=40))
def test_one_string_functions_match_the_cpu_jit(ctx, strings):
    d = ctx.array(strings)
    for f in FUNCS1:
        assert f(d).to_numpy().tolist() == _host(f, strings), f.__name__
    assert slen(d).to_numpy().tolist() == [len(s) for s in strings]


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(TEXT, TEXT | st.sampled_from(["", "a", "é"])), min_size=1,
                max_size=30))
def test_two_string_functions_match_the_cpu_jit(ctx, pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    got = two(ctx.array(a), ctx.array(b)).to_numpy().tolist()
    assert got == _host(two, a, b)


@settings(max_examples=20, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(TEXT, max_size=6), min_size=1, max_size=20))
def test_rows_of_strings_match_the_cpu_jit(ctx, rows):
    d = ctx.array(ckernels.array(rows, type=f"{len(rows)} * var * string"))
    host = ckernels.array(rows, type=f"{len(rows)} * var * string")
    assert long_words(d).to_numpy().tolist() == np.asarray(long_words(host)).tolist()


def test_index_error_comes_back_as_on_the_cpu(ctx):
    d = ctx.array(["aé", "x"])
    assert index_ord(d, -1).to_numpy().tolist() == [ord("é"), ord("x")]
    with pytest.raises(IndexError, match="string index out of range"):
        index_ord(d, 2)
    with pytest.raises(IndexError, match="string index out of range"):
        index_ord(ckernels.array(["aé"], dtype="string"), 2)


@ckernels.jit("int64(string)")
def upper_len(s):
    return len(s.upper())


@ckernels.jit("int64(string)")
def title_len(s):
    return len(s.title())


@pytest.mark.parametrize("f, what", [(upper_len, "str.upper"), (title_len, "title")])
def test_unsupported_string_constructs_are_one_line(ctx, f, what):
    with pytest.raises(NotSupportedError) as e:
        f(ctx.array(["a"]))
    msg = str(e.value)
    assert "\n" not in msg and what in msg
    if f is upper_len:
        line = f.py_func.__code__.co_firstlineno + 2
        assert f"{__file__}:{line}" in msg


def test_source_of_string_signatures_is_the_device_program():
    src = slen.source("opencl")
    assert "ck_str_t" in src and "ck_sv_len_g" in src and "__kernel" in src
    assert "ck_strlist_t" in long_words.source("cuda")


# ---- the same functions as CUDA C: NVRTC + ptxas, then run on the host shim ---------------
def _cuda_source(f, ns):
    from ckernels.jit import c_emit, device_var
    from ckernels.jit.device import target
    comp = next(iter(f.compiled.values()))
    src = device_var.source(target("cuda"), f, comp)
    return (f"namespace {ns} {{\n" +
            src.replace(f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") + f"}}  // {ns}\n")


def test_string_functions_as_cuda_c_compile_assemble_and_match_the_cpu(tmp_path):
    from ckernels import dialects
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    fs = FUNCS1 + [two]
    srcs = "".join(_cuda_source(f, f"ck_{f.__name__}") for f in fs)
    rows_src = _cuda_source(long_words, "ck_long_words")   # compiled and assembled only
    ptx = ptx_assembled_or_skip(tmp_path, srcs + rows_src)
    assert "ck_long_words_kernel" in ptx
    wrappers = ""
    for f in fs:
        ns = f"ck_{f.__name__}"
        k = 3 * len(f.compiled[next(iter(f.compiled))].sig.args)
        ins = "".join(f", in[{j}], in_off[{j}], in_stride[{j}]" for j in range(k))
        wrappers += (
            f'extern "C" void {ns}_run(unsigned char *out, long long out_stride, '
            "const unsigned char **in, const unsigned long long *in_off, "
            "const long long *in_stride, const long long *meta, unsigned long long n, "
            "int *err, unsigned int block) {\n"
            f"  ck_shim_grid(n, block, [&] {{ {ns}::{ns}_kernel(out, 0, out_stride{ins}, meta, "
            "1, n, err); });\n}\n")
    lib = host_shim_library(tmp_path, srcs + wrappers)

    def run(f, *cols):
        keep, ptrs, offs, strides = [], [], [], []
        for col in cols:
            enc = [s.encode() for s in col]
            offsets = np.cumsum([0] + [len(b) for b in enc]).astype(np.int64)
            data = np.frombuffer(b"".join(enc) + b"\0", np.uint8)
            keep += [offsets, data]
            ptrs += [offsets.ctypes.data, offsets.ctypes.data, data.ctypes.data]
            offs += [0, 8, 0]
            strides += [8, 8, 0]
        n = len(cols[0])
        out = np.zeros(n, np.int64)
        err = np.zeros(4, np.int32)   # the code, a spare word, the failing offset
        meta = np.zeros(1, np.int64)
        fn = getattr(lib, f"ck_{f.__name__}_run")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                       ctypes.c_uint]
        k = len(ptrs)
        fn(out.ctypes.data, 8, (ctypes.c_void_p * k)(*ptrs), (ctypes.c_uint64 * k)(*offs),
           (ctypes.c_int64 * k)(*strides), meta.ctypes.data, n, err.ctypes.data,
           dialects.CUDA_BLOCK)
        assert err[0] == 0
        return out.tolist()

    strings = ["", "abc", "é" * 300, "a€", "b", "m", "𝄞x", "xébé€", "ab", "zz"]
    for f in FUNCS1:
        assert run(f, strings) == _host(f, strings), f.__name__
    other = ["", "a", "é", "b", "m", "x", "é", "ab", "b", "z"]
    assert run(two, strings, other) == _host(two, strings, other)
