"""f-string format specs in jitted string results (``ckernels.jit.fstrings``,
``ckernel/text.h``), with Python as the oracle: the jitted function's results
equal the original Python function's (``fn.py_func``) for every value, in the
one-pass builder and outside it; the C formatters equal ``format()`` over
random values and specs; specs Python refuses, or that are not constants, are
compile-time errors naming the spec and the line.

Compiled functions are module-level (shared by the tests): each compile costs
about a second of Numba time."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels import _native
from ckernels.jit import string_builder

I64 = np.iinfo(np.int64)
U64 = np.iinfo(np.uint64)
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def uses_rope(fn, *numba_args) -> bool:
    cres = fn.dispatcher.overloads[tuple(numba_args)]
    return string_builder.ROPE_ABI_TAG in cres.library.get_llvm_str()


def same(fn, *columns):
    """fn over arrays of the columns == fn.py_func element by element."""
    got = fn(*columns).tolist()
    rows = zip(*[c.tolist() if isinstance(c, np.ndarray) else c for c in columns])
    want = [fn.py_func(*row) for row in rows]
    assert got == want


# ------------------------------------------------------- compiled functions --
@ckernels.jit("string(int64)")
def ints(i):
    return (f"{i:05d}|{i:x}|{i:#X}|{i:#o}|{i:+,}|{i:_b}|{i: }|{i:*^12}|{i:=+9,}|{i:e}"
            f"|{i:.3%}|{i:g}|{i:,.2f}|{i!r}|{i!s}|{i:_}|{i:é<8}")


@ckernels.jit(["string(uint64)", "string(int8)", "string(uint8)", "string(int32)"])
def widths(i):
    return f"{i:d}|{i:#x}|{i:020_}|{i:>4}|{i:.1e}"


@ckernels.jit("string(float64)")
def floats(x):
    return (f"{x}|{x:.3f}|{x:e}|{x:.0E}|{x:g}|{x:#.3g}|{x:G}|{x:.2%}|{x:,.1f}|{x:>+12.4}"
            f"|{x:010.2f}|{x:z.1f}|{x:.17g}|{x:_}|{x:F}|{x!r}|{x: .5}|{x:#}|{x:^9}")


@ckernels.jit("string(bool, int64)")
def bools(b, i):
    return f"{b}|{b:d}|{b:>5}|{b:#x}|{b!s:>6}|{b:.1f}" + str(b) + f"{i > 0}"


@ckernels.jit("string(string)")
def texts(s):
    return f"[{s:>10}][{s:<7}][{s:^9}][{s:*^11}][{s:.2}][{s:é>6.3}][{s!s:😀<4}][{s:05}]"


@ckernels.jit("string(float32)")
def floats32(x):
    return f"{x}|{x:.3f}|{x:>10}|" + str(x)


@ckernels.jit("string(int64, float64, string)")
def general(i, x, s):
    a = f"{x:.2f}"                # used twice: a Numba str, not a leaf
    n = len(f"{i:05d}")
    return a + "/" + a + f"#{n}:{s!s:>4}" + str(x)


@ckernels.jit("int64(int64)")
def numeric_result(i):
    return len(f"{i:,}") + len(f"{i:>20}")


@ckernels.jit("string(int64)")
def char(i):
    return f"<{i:c}>"


@ckernels.jit("string(int64)")
def char_general(i):
    c = f"{i:^3c}"
    return c + c


@ckernels.jit("string(string, int64)")
def wide(s, i):
    return f"{s:~>5000}{i:_^6000}" + f"{1.0 / 3.0:.4000f}"


# ------------------------------------------------------------------ values --
INT_EDGE = [0, 1, -1, 7, -42, 255, 1000, -1000, 65536, 10**15, I64.max, I64.min,
            I64.min + 1, 1234567890123]
FLOAT_EDGE = [0.0, -0.0, 1.0, -1.5, 0.1, 1 / 3, 2 / 3, 1e16, 1e-5, 123456.789, 1e300,
              -1e-300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.5, 2.5,
              1e22, 9.995, 0.0001, -0.00001, 1e15, 123456789012345678.0, math.inf,
              -math.inf, math.nan, -math.nan, 0.125, 2.0 ** 60, 2.0 ** -30]
TEXT_EDGE = ["", "a", "abc", "héllo", "日本語", "😀x", "x" * 12, "ÿ", "\x00", "tab\tnl\n"]


def test_integers_match_python():
    x = np.array(INT_EDGE, dtype=np.int64)
    same(ints, x)
    import numba
    assert uses_rope(ints, numba.types.int64)


@SETTINGS
@given(st.lists(st.integers(I64.min, I64.max), min_size=1, max_size=20))
def test_integers_random(vals):
    same(ints, np.array(vals, dtype=np.int64))


@pytest.mark.parametrize("dt", ["uint64", "int8", "uint8", "int32"])
def test_integer_widths(dt):
    info = np.iinfo(dt)
    vals = sorted({0, 1, int(info.max), int(info.min), int(info.max) - 1,
                   int(info.min) + (info.min < 0)})
    same(widths, np.array(vals, dtype=dt))


def test_floats_match_python():
    same(floats, np.array(FLOAT_EDGE))


@SETTINGS
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True) |
                st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("d", struct.pack(
                    "Q", b))[0]), min_size=1, max_size=20))
def test_floats_random(vals):
    same(floats, np.array(vals, dtype=np.float64))


def test_bools():
    same(bools, np.array([True, False, True]), np.array([3, -1, 0]))


@SETTINGS
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=14),
                min_size=1, max_size=10))
def test_texts_random(vals):
    same(texts, ckernels.array(vals))


def test_texts_edges():
    same(texts, ckernels.array(TEXT_EDGE))
    from ckernels.jit.cpu_codegen import numba_type
    assert uses_rope(texts, numba_type("string"))


def test_float32_rule():
    """A float32 without a spec prints as NumPy's str(np.float32(x)) (its
    shortest float32 digits, positional for 1e-4 <= |x| < 1e6, as ckernels'
    float32 -> string conversion; `{x}` is str(x), as in Numba); with a
    spec it is formatted as the double of the same value (NumPy's
    float32.__format__)."""
    vals = np.array([0.1, 1e6, 1.5, -0.0, 3.4028235e38, 1e-45, np.inf, np.nan, 16777217.0,
                     123456.7, 1e-4, 999999.94], dtype=np.float32)
    got = floats32(vals).tolist()
    for v, g in zip(vals, got):
        short = str(v)
        d = float(v)
        assert g == f"{short}|{d:.3f}|{d:>10}|{short}", (v, g)


def test_outside_the_chain():
    i = np.array([0, -7, 123456, I64.min])
    x = np.array([1.005, -0.0, 1e300, math.nan])
    s = ckernels.array(["", "ab", "日本語", "x" * 9])
    same(general, i, x, s)
    assert numeric_result(i).tolist() == [numeric_result.py_func(v) for v in i.tolist()]
    # str(float) now matches Python in plain njit code too (was "<object type:float64>")
    import numba
    assert numba.njit(lambda v: str(v))(0.1) == "0.1"


def test_char_and_its_range_error():
    same(char, np.array([65, 0x1F600, 0, 0x10FFFF]))
    same(char_general, np.array([97, 0xE9]))
    with pytest.raises(OverflowError, match=r"range\(0x110000\)"):
        char(np.array([65, 0x110000]))
    with pytest.raises(OverflowError, match=r"range\(0x110000\)"):
        char_general(np.array([-1]))


def test_widths_beyond_an_arena_chunk():
    s = ckernels.array(["é", "abc"])
    same(wide, s, np.array([1, -2]))


_HUGE_FIELDS = r"""
import numpy as np, ckernels

@ckernels.jit("string(int64)")
def four(i):
    return (f"{i:4611686018427387904}{i:4611686018427387904}"
            f"{i:4611686018427387904}{i:4611686018427387904}")

@ckernels.jit("string(int64, string)")
def two(i, s):
    return f"{s:>4611686018427387904}{i:4611686018427387904}|"

@ckernels.jit("string(int64)")
def one(i):
    return f"<{i:4611686018427387904}>"

for fn, args, want in [(four, (np.arange(2),), OverflowError),
                       (two, (np.arange(2), ckernels.array(["a", "b"])),
                        (MemoryError, OverflowError)),
                       (one, (np.arange(2),), (MemoryError, OverflowError))]:
    try:
        fn(*args)
    except want as exc:
        print(fn.__name__, type(exc).__name__, exc)
    else:
        raise SystemExit(fn.__name__ + ": no error")
"""


def test_field_widths_whose_sum_overflows():
    """Issue 29: four fields of width 2**62 measured one by one fit int64,
    their sum wrapped to 0 and the writes ran 2**64 bytes (a crash, so the
    check runs in a subprocess).  The sum is checked: OverflowError, as
    Python's MemoryError/OverflowError for the same f-string; one or two
    such fields ask the arena for 2**62 bytes or more: MemoryError, or
    OverflowError past what an allocation can be."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _HUGE_FIELDS], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-3000:])
    lines = r.stdout.splitlines()
    assert lines[0].startswith("four CKOverflowError") and "overflow 64 bits" in lines[0]
    assert lines[1].startswith("two ") and lines[2].startswith("one ")
    # CPython refuses the same field with an error, never a result
    with pytest.raises((MemoryError, OverflowError)):
        f"{1:4611686018427387904}"


def test_results_written_through_one_region():
    """Formatted pieces go straight into the result's arena, through the
    call's result region: exactly the text (the region's unused end given
    back), in a few allocations for 1000 strings, not one per string."""
    from ckernels.lowlevel import MemBlock, ffi
    x = ckernels.array(np.arange(1000, dtype=np.int64))   # ckernels in, ckernels out
    r = ints(x)
    am = ffi.cast("ck_string_arrmeta *", r._arrmeta + ffi.sizeof("ck_dim_arrmeta"))
    stats = MemBlock(am.blockref, incref=True).stats
    assert stats.used == sum(len(s.encode()) for s in r.tolist())
    assert 1 <= stats.allocations <= 8


# --------------------------------------------------------------- refusals --
def _compile(src, sig):
    ns = {}
    exec(compile(src, "fstring_case.py", "exec"), ns)
    return ckernels.jit(sig)(ns["f"])


@pytest.mark.parametrize("src,sig,needle", [
    ("def f(i):\n    return f'{i:q}'\n", "string(int64)",
     "{i:q} (format spec 'q' of an int, int64): Unknown format code 'q'"),
    ("def f(i):\n    w = 5\n    return f'{i:{w}}'\n", "string(int64)",
     "format spec must be a constant"),
    ("def f(s):\n    return 'a' + f'{s!r}'\n", "string(string)",
     "{s!r}: the conversion !r of a str is not supported"),
    ("def f(x):\n    return f'{x:,d}'\n", "string(float64)",
     "Unknown format code 'd' for object of type 'float'"),
    ("def f(x):\n    return f'{x:n}'\n", "string(float64)", "locale"),
    ("def f(s):\n    return f'{s:=5}'\n", "string(string)",
     "'=' alignment not allowed in string format specifier"),
])
def test_refused_specs_name_the_spec_and_line(src, sig, needle):
    with pytest.raises(TypeError) as info:
        _compile(src, sig)
    msg = str(info.value)
    assert needle in msg and "fstring_case.py" in msg, msg
    line = src.count("\n")        # the f-string is on the last line
    assert f"line {line}" in msg, msg


# ------------------------------------------------ the C formatters directly --
def c_format(value, spec, kind):
    ffi, lib = _native.ffi, _native.lib
    sp = ffi.NULL
    if spec is not None:
        data = spec.encode()
        sp = ffi.new("ck_format_spec *")
        if lib.ck_format_spec_parse(data, len(data), {"int": 1, "bool": 2, "float": 3,
                                                       "str": 4}[kind], sp) != 0:
            return ("error", _native.last_error())
    n = ffi.new("size_t *")
    buf = ffi.new("char[]", 1 << 14)
    if kind == "int":
        st = (lib.ck_format_int64 if value < 2**63 else lib.ck_format_uint64)(
            buf, len(buf), sp, value, n)
    elif kind == "bool":
        st = lib.ck_format_bool(buf, len(buf), sp, value, n)
    elif kind == "float":
        st = lib.ck_format_float64(buf, len(buf), sp, value, n)
    else:
        data = value.encode("utf-32-le")
        st = lib.ck_format_text(buf, len(buf), sp, data, 4, len(value), n)
    if st != 0:
        return ("error", _native.last_error())
    return ffi.unpack(buf, n[0]).decode()


def py_format(value, spec):
    try:
        return str(value) if spec is None else format(value, spec)
    except (ValueError, OverflowError) as exc:
        return ("error", str(exc))


specs = st.builds(
    lambda fa, sign, z, alt, zero, width, group, prec, typ: fa + sign + z + alt + zero +
    width + group + prec + typ,
    st.sampled_from(["", "<", ">", "^", "=", "*<", "0>", "é^", "😀=", " <"]),
    st.sampled_from(["", "+", "-", " "]), st.sampled_from(["", "", "z"]),
    st.sampled_from(["", "#"]), st.sampled_from(["", "0"]),
    st.sampled_from(["", "1", "7", "12", "25"]), st.sampled_from(["", "", ",", "_"]),
    st.sampled_from(["", "", ".0", ".1", ".3", ".12", ".20"]),
    st.sampled_from(list("bcdoxXeEfFgG%s") + ["", ""]))


def _agree(value, spec, kind):
    want, got = py_format(value, spec), c_format(value, spec, kind)
    if isinstance(want, tuple) or isinstance(got, tuple):
        # refused by both (the C message is Python's); 'n' is refused by ckernels only
        assert isinstance(want, tuple) and isinstance(got, tuple), (value, spec, want, got)
        assert want[1] in got[1], (value, spec, want, got)
    else:
        assert got == want, (value, spec)


@settings(max_examples=400, deadline=None)
@given(st.integers(I64.min, U64.max), specs)
def test_c_format_int_matches_python(v, spec):
    _agree(v, spec, "int")


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(FLOAT_EDGE), specs)
def test_c_format_float_matches_python(v, spec):
    _agree(v, spec, "float")


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=12), specs)
def test_c_format_text_matches_python(v, spec):
    _agree(v, spec, "str")


@settings(max_examples=100, deadline=None)
@given(st.booleans(), specs | st.just(""))
def test_c_format_bool_matches_python(v, spec):
    _agree(v, spec, "bool")


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_c_repr_of_any_double(bits):
    v = struct.unpack("d", struct.pack("Q", bits))[0]
    assert c_format(v, None, "float") == repr(v)


def test_format_spec_on_a_string_literal():
    # a spec on a literal field ({'lit':^7}) crashed the compile: the literal's
    # value went to the formatter as if it were a Numba str
    @ckernels.jit("string(int64)")
    def lit(i):
        return f"{'lit':^7}|{i}|{'é':>3}|{'x':<2}"

    xs = np.array([0, -7, 10**12], dtype=np.int64)
    assert lit(xs).tolist() == [lit.py_func(int(i)) for i in xs]
