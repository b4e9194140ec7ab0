"""``s.upper()``/``s.lower()`` of any text on devices: Python's full Unicode case
mappings ("ß".upper() == "SS", the final sigma of lower) from the C core's
tables compiled into the program (``ckernels.jit.c_emit.case_map``).  Checked
against the CPU jit (and CPython) on PoCL and as CUDA C through NVRTC + ptxas +
the host shim."""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("string(string)")
def up(s):
    return s.upper()


@ckernels.jit("string(string)")
def low(s):
    return s.lower()


@ckernels.jit("string(string, string)")
def both(s, t):
    return s.upper() + "|" + t.lower() + "|" + s[1:].lower()


ALPHA = st.characters(codec="utf-8", exclude_categories=("Cs",))
GREEK = st.text(alphabet="ΣσςΑαΟΔ ·'\u0301\u00ad.a1", max_size=12)
SPECIAL = st.text(alphabet="ßŉǰΐİıﬀﬁﬓꭰᾳᾼῼΣ𐐀𐐨𞤀ǅǈaZé", max_size=12)
TEXT = (st.text(alphabet=ALPHA, max_size=20) | GREEK | SPECIAL |
        st.sampled_from(["", "ß", "ΣΑΣ", "ΟΔΟΣ ΟΔΟΣ.", "Σ", "aΣ", "ﬃ" * 300, "İ" * 70]))
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _host(f, *cols):
    return f(*[ckernels.array(c, dtype="string") for c in cols]).tolist()


def test_tables_map_every_code_point_as_cpython():
    # the compact tables, looked up as the device does, against CPython's str methods
    # (lower, upper, title, casefold; Uppercase/Lowercase for swapcase)
    import numpy as np
    from ckernels.jit.c_emit.case_map import _SHIFT, case_tables, table_bytes
    t = case_tables()
    ix1, ix2, ext, limit = t["ix1"], t["ix2"], t["ext"], t["limit"]
    rec = np.array(t["rec"], np.int64)
    cps = np.arange(0x110000)
    r = np.zeros(len(cps), np.int64)
    r[:limit] = ix2[(ix1[cps[:limit] >> _SHIFT] << _SHIFT) | (cps[:limit] & ((1 << _SHIFT) - 1))]
    maps = (str.lower, str.upper, str.title, str.casefold)
    changed = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and
               any(m(chr(cp)) != chr(cp) for m in maps)]
    same = np.ones(len(cps), bool)
    same[changed] = False
    # code points CPython leaves alone: delta 0, no full mapping
    assert not rec[r[same], :4].any() and not (rec[r[same], 4] & 60).any()

    def mapped(cp, which):
        v, flags = int(rec[r[cp], which]), int(rec[r[cp], 4])
        if flags & (4 << which):
            i = v & 0xFFFFFF
            return "".join(chr(c) for c in ext[i:i + (v >> 24)])
        return chr(cp + v)
    bad = [cp for cp in changed if cp != 0x3A3 and
           any(mapped(cp, k) != m(chr(cp)) for k, m in enumerate(maps))]
    assert bad == []
    upper = [cp for cp in range(0x110000) if chr(cp).isupper()]
    lower = [cp for cp in range(0x110000) if chr(cp).islower()]
    assert sorted(np.nonzero(rec[r, 4] & 64)[0].tolist()) == upper
    assert sorted(np.nonzero(rec[r, 4] & 128)[0].tolist()) == lower
    # the final sigma's context: Cased and Case_Ignorable as the C core has them
    from ckernels._ffi import lib
    for cp in (0x41, 0x3A3, 0x2BC, 0x301, 0xAD, 0x27, 0x2E, 0x20, 0xE0001, 0x1D4D0):
        f = lib.ck_unicode_flags(cp)
        assert rec[r[cp], 4] & 3 == (bool(f & lib.CK_UNICODE_CASED) |
                                     bool(f & lib.CK_UNICODE_CASE_IGNORABLE) << 1)
    assert table_bytes() < 64 * 1024        # the constant memory of every device


def test_documented_cases_on_the_device(ctx):
    s = ["ß", "straße", "ΟΔΟΣ ΟΔΟΣ.", "Σ", "aΣb", "ΑΣ'", "ŉ", "İstanbul", "ﬁ", "", "abc"]
    assert up(ctx.array(s)).tolist() == [x.upper() for x in s]
    assert low(ctx.array(s)).tolist() == [x.lower() for x in s]
    assert up(ctx.array(["ß"])).tolist() == ["SS"]
    assert low(ctx.array(["ΟΔΟΣ"])).tolist() == ["οδος"]


@SETTINGS
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=30))
def test_case_mapping_matches_the_cpu_jit(ctx, pairs):
    s, t = [p[0] for p in pairs], [p[1] for p in pairs]
    got = both(ctx.array(s), ctx.array(t)).tolist()
    assert got == _host(both, s, t) == [both.py_func(x, y) for x, y in zip(s, t)]


def test_program_build_time_on_pocl(ctx):
    # the tables are one program constant: a fresh program builds in seconds
    @ckernels.jit("string(string)")
    def fresh(s):
        return s.lower() + "!"
    t0 = time.perf_counter()
    assert fresh(ctx.array(["ÀÉ"])).tolist() == ["àé!"]
    assert time.perf_counter() - t0 < 120


def test_case_mapping_as_cuda_c_matches_the_cpu(tmp_path):
    from cuda_string_shim import build
    run = build(tmp_path, {"ck_both": (both, 6)})
    s = ["", "ß", "ΟΔΟΣ ΟΔΟΣ.", "aΣb", "İﬁŉ", "é" * 200, "𐐀𞤀Z", "ǅ"]
    t = ["ΑΣ'", "Σ", "ÀÉÎ", "ß", "", "xΣ\u0301 ", "ΣΣ", "ǈ"]
    assert run("ck_both", [s, t]) == [both.py_func(x, y) for x, y in zip(s, t)]
