"""``str.strip``/``lstrip``/``rstrip`` (Python's Unicode whitespace, or a
set of characters) in device code: views of the argument
(``ckernel/utf8_view.h``), in string results and in functions that read
them.  Checked on OpenCL (PoCL) against CPython and the CPU jit."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("string(string, string)")
def stripped(s, c):
    return s.strip() + "|" + s.lstrip() + "|" + s.rstrip() + "|" + s.strip(c) + "|" + \
        s.lstrip(c) + "|" + s.rstrip("é ")


@ckernels.jit("int64(string)")
def stripped_len(s):
    return len(s.strip()) * 1000 + s.rstrip().find("a")


SPACE = " \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_SPACE = "\u200b\u180e\x00ab é€𝄞"
TEXT = st.text(alphabet=SPACE + NOT_SPACE, max_size=16) | st.text(max_size=10) | \
    st.sampled_from(["", " ", "é" * 50, "  a  "])
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.lists(st.tuples(TEXT, st.text(alphabet="aé€ \t", max_size=3)), min_size=1,
                max_size=20))
def test_strip_matches_python_and_the_cpu_jit(ctx, pairs):
    s, c = [p[0] for p in pairs], [p[1] for p in pairs]
    got = stripped(ctx.array(s), ctx.array(c)).tolist()
    assert got == [stripped.py_func(x, y) for x, y in pairs]
    host = np.asarray(stripped(ckernels.array(s, dtype="string"),
                               ckernels.array(c, dtype="string"))).tolist()
    assert got == host
    assert stripped_len(ctx.array(s)).tolist() == [stripped_len.py_func(x) for x in s]
