"""``var * string`` results built by ``out.append(s)`` on devices: the strings
appended are views (arguments, slices, pieces of splits, a row's strings,
literals), so the sizing pass counts them and their bytes, two scans place
each row, and the writing pass writes them (``jit/device_split.py``, the
output parameter ``ck_srow_t`` of ``jit/c_emit/arena.py``): no arena, no
device ``malloc``.  Checked against the CPU jit and CPython on the device
contexts; the CUDA C through NVRTC + ptxas.  Appending text the function built:
``test_device_built_rows.py``."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("var * string(string, int64)")
def long_words(s, k, out):
    for w in s.rsplit():
        if len(w) > k:
            out.append(w)
    out.append(s[:k])
    if len(out) == 1:
        out.append("none")


@ckernels.jit("var * string(var * string, string)")
def with_sep(r, sep, out):
    for x in r:
        if sep in x:
            out.append(x.strip())
    for line in sep.splitlines():
        out.append(line)


def long_words_py(s, k):
    out = [w for w in s.rsplit() if len(w) > k] + [s[:k]]
    return out + ["none"] if len(out) == 1 else out


def with_sep_py(r, sep):
    return [x.strip() for x in r if sep in x] + sep.splitlines()


WORD = st.text(alphabet="abé€𝄞 \t\u3000,", max_size=8)
TEXT = st.lists(WORD, max_size=6).map(" ".join) | st.sampled_from(["", " ", "é" * 90])
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.lists(st.tuples(TEXT, st.integers(0, 3)), min_size=1, max_size=30))
def test_appended_views_match_python_and_the_cpu_jit(ctx, rows):
    import numpy as np
    s, k = [r[0] for r in rows], [r[1] for r in rows]
    got = long_words(ctx.array(s), ctx.array(np.array(k, np.int64)))
    assert str(got.type) == f"{len(s)} * var * string"
    want = [long_words_py(x, n) for x, n in rows]
    assert got.tolist() == want
    assert long_words(ckernels.array(s, dtype="string"), np.array(k, np.int64)).tolist() == want


@SETTINGS
@given(st.lists(st.tuples(st.lists(TEXT, max_size=5), st.sampled_from([",", "é", " ", "a\nb"])),
                min_size=1, max_size=20))
def test_appended_row_strings_match_python(ctx, rows):
    r, sep = [x[0] for x in rows], [x[1] for x in rows]
    got = with_sep(ctx.array(r, type=f"{len(r)} * var * string"), ctx.array(sep))
    assert got.tolist() == [with_sep_py(x, y) for x, y in rows]


def test_documented_case(ctx):
    got = long_words(ctx.array(["ab abc abcd", "", "héllo w"]), 2).tolist()
    assert got == [["abc", "abcd", "ab"], ["", "none"], ["héllo", "hé"]]


def test_string_rows_as_cuda_c_match_python(tmp_path):
    # NVRTC + ptxas of both functions, then long_words' kernel on the host shim:
    # sizing, NumPy's cumsum as the two scans, writing
    import ctypes

    import numpy as np
    from ckernels import dialects
    from ckernels.jit import c_emit
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    src = "".join(f"namespace {ns} {{\n" + str(f.source("cuda")).replace(
        f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") + f"}}  // {ns}\n"
        for ns, f in (("ck_lw", long_words), ("ck_ws", with_sep)))
    ptx = ptx_assembled_or_skip(tmp_path, src)
    assert "ck_lw_kernel" in ptx and "ck_ws_kernel" in ptx
    sig = ("unsigned char *out, const unsigned char **in, const unsigned long long *off, "
           "const long long *stride, int mode, const long long *meta, unsigned long long n, "
           "int *err, unsigned int block")
    ins = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in range(7))
    lib = host_shim_library(tmp_path, src + (
        f'extern "C" void ck_lw_run({sig}) {{\n  ck_shim_grid(n, block, [&] {{ '
        f"ck_lw::ck_lw_kernel(out, 0, 8{ins}, mode, meta, 1, n, err); }});\n}}\n"))
    fn = lib.ck_lw_run
    fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                                           ctypes.c_void_p, ctypes.c_uint]
    strings = ["ab abc abcd", "", "héllo w", "  x\u3000yz ", "é" * 40]
    ks = np.array([2, 0, 2, 1, 3], np.int64)
    n = len(strings)
    enc = [x.encode() for x in strings]
    so = np.cumsum([0] + [len(b) for b in enc]).astype(np.int64)
    text = np.frombuffer(b"".join(enc) + b"\0", np.uint8)
    err, meta = np.zeros(4, np.int32), np.zeros(1, np.int64)

    def launch(out, starts, inner, data, mode):
        arrs = [so, so, text, ks, starts, inner, data]
        p = [a.ctypes.data for a in arrs]
        o, st = [0, 8, 0, 0, 0, 0, 0], [8, 8, 0, 8, 8, 0, 0]
        fn(out.ctypes.data, (ctypes.c_void_p * 7)(*p), (ctypes.c_uint64 * 7)(*o),
           (ctypes.c_int64 * 7)(*st), mode, meta.ctypes.data, n, err.ctypes.data,
           dialects.CUDA_BLOCK)
        assert err[0] == 0, err
    counts, nbytes, one = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64), np.zeros(1)
    launch(counts, nbytes, one, one, 0)
    outer = np.concatenate([[0], np.cumsum(counts[:n])]).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(nbytes[:n])]).astype(np.int64)
    inner = np.zeros(outer[-1] + 1, np.int64)
    inner[-1] = starts[-1]
    data = np.zeros(max(int(starts[-1]), 1), np.uint8)
    launch(outer, starts, inner, data, 1)
    raw = data.tobytes()
    got = [[raw[inner[j]:inner[j + 1]].decode() for j in range(outer[i], outer[i + 1])]
           for i in range(n)]
    assert got == [long_words_py(x, int(k)) for x, k in zip(strings, ks)]
