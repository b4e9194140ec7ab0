"""``s.title()``, ``s.capitalize()``, ``s.swapcase()`` and ``s.casefold()`` on
devices: Python's full Unicode mappings (``"ß".casefold() == "ss"``,
``"ǆ".title() == "ǅ"``, ``"ŉ".capitalize() == "ʼN"``, the final sigma where a
capital sigma is lowered) from the C core's tables compiled into the program
(``ckernels.jit.c_emit.case_map``), as string results: returned in place,
pieces of a concatenation, of slices.  Checked against CPython and the CPU jit
on the device contexts and as CUDA C through NVRTC + ptxas + the host shim.
Reading a case map's text (``len(s.title())``) is refused in one line
(``test_device_string_jit.py``)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("string(string)")
def title(s):
    return s.title()


@ckernels.jit("string(string, string)")
def four(s, t):
    return (s.title() + "|" + s.capitalize() + "|" + t.swapcase() + "|" + s.casefold() + "|" +
            t[1:].title() + "|" + s[:3].capitalize())


@ckernels.jit("string(string, int64)")
def picked(s, k):
    if k == 0:
        r = s.casefold()
    elif k == 1:
        r = s.swapcase()
    else:
        r = s.capitalize()
    return r + "!"


ALPHA = st.characters(codec="utf-8", exclude_categories=("Cs",))
GREEK = st.text(alphabet="ΣσςΑαΟΔ ·'\u0301\u00ad.a1", max_size=12)
SPECIAL = st.text(alphabet="ßŉǰΐİıﬀﬁﬓꭰᾳᾼῼΣ𐐀𐐨𞤀ǅǈǆǄaZé1 -'ႠⴀᏸᲐა", max_size=12)
WORDS = st.lists(st.sampled_from(["hello", "WORLD", "ǆemal", "ǅ", "straße", "ΟΔΟΣ", "ŉa",
                                  "they're", "3rd", "ﬁne", "ⴀbc", "Ⴀ", "ᲐᲑ", "aΣ"]),
                 max_size=6).map(" ".join)
TEXT = (st.text(alphabet=ALPHA, max_size=20) | GREEK | SPECIAL | WORDS |
        st.sampled_from(["", "ß", "ΣΑΣ", "Σ", "ǅǆǄ", "ﬃ" * 300, "İ" * 70, "a" * 500]))
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _host(f, *cols):
    import numpy as np
    return np.asarray(f(*[ckernels.array(c, dtype="string") if isinstance(c[0], str) else
                          np.asarray(c, np.int64) for c in cols])).tolist()


def test_documented_cases(ctx):
    s = ["ß", "ǆemal ǅ", "ŉ", "hello world", "ΟΔΟΣ ΟΔΟΣ.", "they're 3rd", "", "ﬁne", "ᲐᲑ ა"]
    assert title(ctx.array(s)).tolist() == [x.title() for x in s]
    assert title(ctx.array(["ǆemal"])).tolist() == ["ǅemal"]
    t = s[::-1]
    assert four(ctx.array(s), ctx.array(t)).tolist() == \
        [four.py_func(x, y) for x, y in zip(s, t)] == _host(four, s, t)


@SETTINGS
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=30))
def test_case_maps_match_python_and_the_cpu_jit(ctx, pairs):
    s, t = [p[0] for p in pairs], [p[1] for p in pairs]
    got = four(ctx.array(s), ctx.array(t)).tolist()
    assert got == [four.py_func(x, y) for x, y in zip(s, t)] == _host(four, s, t)
    assert title(ctx.array(s)).tolist() == [x.title() for x in s]


@SETTINGS
@given(st.lists(st.tuples(TEXT, st.integers(0, 2)), min_size=1, max_size=30))
def test_case_maps_in_branches_go_through_scratch(ctx, rows):
    import numpy as np
    s, k = [r[0] for r in rows], [r[1] for r in rows]
    got = picked(ctx.array(s), ctx.array(np.array(k, np.int64))).tolist()
    assert got == [picked.py_func(x, y) for x, y in rows]


def test_case_maps_as_cuda_c_match_python(tmp_path):
    from cuda_string_shim import build
    run = build(tmp_path, {"ck_four": (four, 6)})
    s = ["", "ß", "ΟΔΟΣ ΟΔΟΣ.", "aΣb", "İﬁŉ", "é" * 200, "𐐀𞤀Z", "ǆemal ǅ", "they're"]
    t = ["ΑΣ'", "Σ", "ÀÉÎ", "ß", "", "xΣ\u0301 ", "ΣΣ", "ǈ", "ᲐᲑ ა"]
    assert run("ck_four", [s, t]) == [four.py_func(x, y) for x, y in zip(s, t)]
