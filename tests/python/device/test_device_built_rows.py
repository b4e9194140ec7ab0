"""Rows built of new values on devices (issue 32): ``var * string`` results
whose items are strings the function builds (``out.append(w.upper())``,
``out.append(f"{w}-{i}")``, ``out.append(w + "!")``, ``out.append(str(i))``),
sized by the sizing pass as ``string(...)`` results are (written straight
into the row when built just before the append, else through the work item's
scratch text), and returned lists (``return [w.upper() for w in s.split()]``,
``return [x * 2.0 for x in row if x > 0]``): the list is the result's row
(``jit/c_emit/out_lists.py``), built by the kernels of the ``out.append`` form
(``jit/device_split.py`` for strings, the device arena of
``jit/device_append.py`` for numbers).  Checked against the CPU jit and
CPython on the device contexts, with hypothesis over non-ASCII and empty
strings and empty rows; the CUDA C through NVRTC + ptxas and the host shim."""

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


@ckernels.jit("var * string(string, int64)")
def built(s, k, out):
    if k < 0:
        raise ValueError("negative k")
    i = 0
    for w in s.split():
        t = w.lower()               # used twice: stored in the scratch text
        out.append(w.upper())       # the rest: written straight into the row
        out.append(f"{w}-{i}")
        out.append(t + "|" + t)
        out.append(t)
        out.append(w + "!")
        out.append(str(i * k))
        i += 1
    out.append(s[:k])


def built_py(s, k):
    out = []
    for i, w in enumerate(s.split()):
        t = w.lower()
        out += [w.upper(), f"{w}-{i}", t + "|" + t, t, w + "!", str(i * k)]
    return out + [s[:k]]


@ckernels.jit("var * string(string)")
def upper_words(s):
    return [w.upper() for w in s.split()]


@ckernels.jit("var * string(string)")
def doubled_words(s):
    xs = ["<"]
    for w in s.split():
        xs.append(w.lower() * 2)      # typed ?str by Numba: appended as a string
    return xs


@ckernels.jit("var * string(string)")
def none_items(s):
    return [w if len(w) > 1 else None for w in s.split()]


@ckernels.jit("var * string(string, int64)")
def prefixes(s, n):
    return [s[:i] for i in range(n)]


@ckernels.jit("var * float64(var * float64)")
def doubled_positive(row):
    return [x * 2.0 for x in row if x > 0]


@ckernels.jit("var * int32(int64)")
def counted(n):
    xs = [1, 2]
    for i in range(n):
        xs.append(i * len(xs))
    return xs


WORD = st.text(alphabet="abßé€𝄞İ \t\u3000", max_size=8)
TEXT = st.lists(WORD, max_size=6).map(" ".join) | st.sampled_from(["", " ", "é" * 90])
ROWS = st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=12),
                min_size=1, max_size=25)
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.lists(st.tuples(TEXT, st.integers(0, 4)), min_size=1, max_size=25))
def test_appended_built_text_matches_python_and_the_cpu_jit(ctx, rows):
    s, k = [r[0] for r in rows], np.array([r[1] for r in rows], np.int64)
    got = built(ctx.array(s), ctx.array(k))
    assert str(got.type) == f"{len(s)} * var * string"
    want = [built_py(x, n) for x, n in rows]
    assert got.tolist() == want
    assert built(ckernels.array(s, dtype="string"), k).tolist() == want
    assert upper_words(ctx.array(s)).tolist() == [[w.upper() for w in x.split()] for x in s] \
        == upper_words(ckernels.array(s, dtype="string")).tolist()
    assert doubled_words(ctx.array(s)).tolist() == [
        ["<"] + [w.lower() * 2 for w in x.split()] for x in s]
    assert prefixes(ctx.array(s), ctx.array(k)).tolist() == [
        [x[:i] for i in range(n)] for x, n in rows]


@SETTINGS
@given(ROWS)
def test_returned_number_lists_match_the_cpu_jit(ctx, rows):
    h = ckernels.array(rows, type=f"{len(rows)} * var * float64")
    got = doubled_positive(ctx.array(h))
    assert str(got.type) == f"{len(rows)} * var * float64"
    assert got.tolist() == doubled_positive(h).tolist() == [
        [x * 2.0 for x in r if x > 0] for r in rows]


def test_literal_items_len_and_empty_inputs(ctx):
    v = np.array([0, 3, 40, 1], np.int64)
    got = counted(ctx.array(v))
    assert got.values.dtype == np.int32
    assert got.tolist() == counted(v).tolist() == [counted.py_func(int(n)) for n in v]
    assert counted(ctx.array(np.zeros(0, np.int64))).tolist() == []
    assert built(ctx.array(["", " "]), 0).tolist() == [[""], [""]]
    assert upper_words(ctx.array([""] * 3)).tolist() == [[], [], []]


def test_errors_come_back_as_on_the_cpu(ctx):
    with pytest.raises(ValueError, match="negative k"):
        built(ctx.array(["a b", "c"]), ctx.array(np.array([1, -1], np.int64)))
    # a None item of a var * string row: the CPU's error
    assert none_items(ctx.array(["ab cd", ""])).tolist() == [["ab", "cd"], []]
    with pytest.raises(ckernels.errors.CKTypeError, match="got None") as cpu:
        none_items(ckernels.array(["ab c"]))
    with pytest.raises(ckernels.errors.CKTypeError, match="got None") as dev:
        none_items(ctx.array(["ab c"]))
    assert type(dev.value) is type(cpu.value)


def test_documented_case(ctx):
    assert upper_words(ctx.array(["ab cd", "", "straße"])).tolist() == \
        [["AB", "CD"], [], ["STRASSE"]]


@ckernels.jit("var * float64(var * float64)")
def b_second(row):
    xs = [x for x in row]
    return [x for x in xs]


@ckernels.jit("var * float64(var * float64)")
def b_sort(row):
    xs = [x for x in row]
    xs.sort()
    return xs


@ckernels.jit("var * string(string)")
def b_loop(s):
    xs = [""]
    for w in s.split():
        xs = [w]
    return xs


@pytest.mark.parametrize("f", [b_second, b_sort, b_loop], ids=["second-list", "sort", "loop"])
def test_other_lists_are_refused_in_one_line(ctx, f):
    arg = ctx.array(["a b"]) if f is b_loop else \
        ctx.array(ckernels.array([[1.0]], type="1 * var * float64"))
    with pytest.raises(NotSupportedError) as exc:
        f(arg)
    msg = str(exc.value)
    assert "\n" not in msg and "test_device_built_rows.py:" in msg and "list" in msg


def test_source_writes_built_text_into_the_row():
    src = str(built.source("opencl"))
    assert "ck_rr->d + ck_rr->at" in src and "ck_scr" in src
    assert "ck_ol" in str(upper_words.source("opencl"))
    assert "ck_arow_append_float64" in str(doubled_positive.source("cuda"))


# ---- CUDA C: NVRTC + ptxas, then built's kernel on the host shim --------------------------
def test_built_rows_as_cuda_c_match_python(tmp_path):
    from ckernels import dialects
    from ckernels.jit import c_emit
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    def cuda(fs):
        return "".join(f"namespace {ns} {{\n" + str(f.source("cuda")).replace(
            f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") + f"}}  // {ns}\n" for ns, f in fs)
    # one program (one NVRTC + ptxas run, CI time); one case-mapping function in it
    # (each holds a copy of the 53 KiB case tables): returned lists of strings are
    # prefixes' and none_items' kernels
    fs = (("ck_bt", built), ("ck_px", prefixes), ("ck_dp", doubled_positive),
          ("ck_ct", counted), ("ck_ni", none_items))
    src = cuda(fs)
    ptx = ptx_assembled_or_skip(tmp_path, src)
    assert all(f"{ns}_kernel" in ptx for ns, _ in fs)
    # built: string (3 operands), k, per-row bytes, offsets, data, the pass, scratch
    # text, per-row scratch bytes
    sig = ("unsigned char *out, const unsigned char **in, const unsigned long long *off, "
           "const long long *stride, int mode, const long long *meta, unsigned long long n, "
           "int *err, unsigned int block")
    ins = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in range(7))
    scr = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in (7, 8))
    lib = host_shim_library(tmp_path, src + (
        f'extern "C" void ck_bt_run({sig}) {{\n  ck_shim_grid(n, block, [&] {{ '
        f"ck_bt::ck_bt_kernel(out, 0, 8{ins}, mode{scr}, meta, 1, n, err); }});\n}}\n"))
    fn = lib.ck_bt_run
    fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                                           ctypes.c_void_p, ctypes.c_uint]
    strings = ["ab Cd", "", "héllo wörld ß", "  x\u3000yz ", "é" * 40]
    ks = np.array([2, 0, 3, 1, 7], np.int64)
    n = len(strings)
    enc = [x.encode() for x in strings]
    so = np.cumsum([0] + [len(b) for b in enc]).astype(np.int64)
    text = np.frombuffer(b"".join(enc) + b"\0", np.uint8)
    err, meta = np.zeros(4, np.int32), np.zeros(1, np.int64)

    def launch(out, starts, inner, data, mode, sdata, soffs):
        arrs = [so, so, text, ks, starts, inner, data, sdata, soffs]
        p = [a.ctypes.data for a in arrs]
        o, st_ = [0, 8, 0, 0, 0, 0, 0, 0, 0], [8, 8, 0, 8, 8, 0, 0, 0, 8]
        fn(out.ctypes.data, (ctypes.c_void_p * 9)(*p), (ctypes.c_uint64 * 9)(*o),
           (ctypes.c_int64 * 9)(*st_), mode, meta.ctypes.data, n, err.ctypes.data,
           dialects.CUDA_BLOCK)
        assert err[0] == 0, err
    scan = lambda a: np.concatenate([[0], np.cumsum(a[:n])]).astype(np.int64)  # noqa: E731
    counts, nbytes, sbytes = (np.zeros(n + 1, np.int64) for _ in range(3))
    one = np.zeros(1, np.uint8)
    launch(counts, nbytes, np.zeros(1, np.int64), one, 0, one, sbytes)
    outer, starts, soffs = scan(counts), scan(nbytes), scan(sbytes)
    inner = np.zeros(outer[-1] + 1, np.int64)
    inner[-1] = starts[-1]
    data = np.zeros(max(int(starts[-1]), 1), np.uint8)
    sdata = np.zeros(max(int(soffs[-1]), 1), np.uint8)
    launch(outer, starts, inner, data, 1, sdata, soffs)
    raw = data.tobytes()
    got = [[raw[inner[j]:inner[j + 1]].decode() for j in range(outer[i], outer[i + 1])]
           for i in range(n)]
    assert got == [built_py(x, int(k)) for x, k in zip(strings, ks)]


@ckernels.jit("var * ?int64(string)")
def maybe_lengths(s, out):
    for w in s.split():
        out.append(len(w) if len(w) > 1 else None)


def test_option_number_rows_of_string_arguments_match_the_cpu(ctx):
    # var * ?T rows of numbers: the arena with presence bytes (test_device_var_null_numbers.py)
    data = ["a bb", "", "ccc d ee", "x"]
    got = maybe_lengths(ctx.array(data))
    assert str(got.type) == "4 * var * ?int64"
    assert got.tolist() == maybe_lengths(ckernels.array(data)).tolist() == [
        [None, 2], [], [3, None, 2], [None]]
