"""String results of jitted functions on devices: ``string(...)`` signatures
over device arrays build a device string array by a sizing pass, the C core's
device scan and a writing pass (``ckernels.jit.device_strings``).  Checked on
OpenCL (PoCL) and as CUDA C (NVRTC + ptxas, both passes run on the host shim)
against the CPU jit over the same host data (and so CPython's ``str``)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.errors import NotSupportedError


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("string(int64)")
def numbers(i):
    if i < 0:
        r = "neg"
    else:
        r = str(i) + f"/{i > 3}"
    return f"item-{i}" + r + "!"


@ckernels.jit("string(string, string, int64, int64, int64)")
def mix(s, t, a, b, k):
    x = s + "-"
    if k > 2:
        y = t
    else:
        y = s[a:b]
    return (s + "·" + t + s + "|" + s[a:b] + "|" + s[:a] + "|" + s[b:] + "|" + s[-1:] + "|" +
            x * k + str(k) + "|" + s.replace("a", "é") + "/" + s.replace(t, "<>", 2) + "/" +
            y + t.replace("", "."))


@ckernels.jit("string(string)")
def cased(s):
    return s.upper() + s.lower()


ALPHA = st.characters(codec="utf-8", exclude_categories=("Cs",))
TEXT = st.text(alphabet=ALPHA, max_size=20) | st.text(alphabet="abé€𝄞", max_size=8) | \
    st.sampled_from(["", "a", "é" * 200, "ab" * 50])
ASCII = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=20)
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _host(f, *cols):
    return np.asarray(f(*[ckernels.array(c, dtype="string") if isinstance(c, list) else c
                          for c in cols])).tolist()


def _dev(ctx, f, *cols):
    return f(*[ctx.array(c) if isinstance(c, (list, np.ndarray)) else c for c in cols]).tolist()


def test_fstring_items_on_the_device(ctx):
    v = np.array([0, 7, -1, 10**18, -2**63, 2**63 - 1, 42], np.int64)
    got = numbers(ctx.array(v))
    assert type(got).__name__ == "DeviceVarArray" and str(got.type) == "7 * string"
    assert got.tolist() == _host(numbers, v) == [numbers.py_func(i) for i in v.tolist()]
    assert numbers(ctx.array(np.zeros(0, np.int64))).tolist() == []


@SETTINGS
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=25),
       st.integers(-25, 25), st.integers(-25, 25), st.integers(-1, 4))
def test_string_results_match_python(ctx, pairs, a, b, k):
    # the oracle is CPython: the CPU jit's str.replace (Numba's) differs from Python on
    # an empty string with an empty pattern ("".replace("", ".") gives ".." there)
    s, t = [p[0] for p in pairs], [p[1] for p in pairs]
    got = mix(ctx.array(s), ctx.array(t), a, b, k).tolist()
    assert got == [mix.py_func(x, y, a, b, k) for x, y in zip(s, t)]


@SETTINGS
@given(st.lists(ASCII, min_size=1, max_size=25))
def test_ascii_case_mapping_matches_the_cpu_jit(ctx, s):
    assert _dev(ctx, cased, s) == _host(cased, s)


def test_non_ascii_case_mapping_matches_the_cpu_jit(ctx):
    # refused at run time before the C core's case tables were compiled into programs
    s = ["ok", "é", "straße", "ΟΔΟΣ"]
    assert _dev(ctx, cased, s) == _host(cased, s) == [x.upper() + x.lower() for x in s]


@ckernels.jit("string(string)")
def reads_built(s):
    t = s + "x"
    return t[1:]


@ckernels.jit("int64(string)")
def builds_in_number(s):
    return len(s + "x")


@pytest.mark.parametrize("f, arg, what", [
    (reads_built, ["a"], "string built in the function"),
    (builds_in_number, ["a"], "whose result is not a string")])
def test_refused_constructs_are_one_line_with_the_users_line(ctx, f, arg, what):
    with pytest.raises(NotSupportedError) as e:
        f(ctx.array(arg))
    msg = str(e.value)
    assert "\n" not in msg and what in msg and __file__ in msg


def test_source_is_one_program_of_both_passes():
    from ckernels.jit import device_strings
    src = numbers.source("opencl")
    assert src.count("__kernel") == 1 and "ck_mode" in src and "ck_sk_i64" in src
    assert "ck_sink_t" in mix.source("cuda")
    # a str variable of two branches, x * k and s.upper() store text first (scratch);
    # f"item-{i}" is written in place (none); nothing is built on a device here
    from ckernels.jit.device import target

    @ckernels.jit("string(int64)")
    def item(i):
        return f"item-{i}"
    for f, scratch in ((numbers, True), (mix, True), (cased, True), (item, False)):
        comp = next(iter(f.compiled.values()))
        prog, _ = device_strings._program(target("opencl"), f, comp)
        assert device_strings.scratch_of(prog) is scratch


# ---- CUDA C: NVRTC + ptxas, then both passes on the host shim -------------------------------
def test_string_results_as_cuda_c_compile_assemble_and_match_the_cpu(tmp_path):
    from cuda_string_shim import build
    # operands without the string result's: numbers' int64; mix's two strings
    # (3 each: offsets twice, data) and three scalars
    run = build(tmp_path, {"ck_numbers": (numbers, 1), "ck_mix": (mix, 6 + 3)})
    v = np.array([0, -5, 123456789, -2**63, 2**63 - 1], np.int64)
    assert run("ck_numbers", [v], []) == _host(numbers, v)
    s = ["", "abc", "é" * 300, "a€", "𝄞xa"]
    t = ["x", "", "é", "bb", "€"]
    assert run("ck_mix", [s, t], [1, -2, 3]) == [mix.py_func(x, y, 1, -2, 3)
                                                 for x, y in zip(s, t)]
