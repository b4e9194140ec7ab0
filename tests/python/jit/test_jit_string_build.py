"""Strings built in jitted code: the returned ``+`` / f-string chain written
into the arena in one pass (``ckernels.jit.string_builder``), with Python's own
``str()`` / f-strings as the oracle, and the fallback to Numba's ``str``
where the chain's value is used otherwise."""

import numpy as np
import pytest

import ckernels
from ckernels.jit import string_builder as rope
from ckernels.jit.cpu_codegen import numba_type

I64 = np.iinfo(np.int64)
U64 = np.iinfo(np.uint64)


def uses_rope(fn, *args) -> bool:
    """Whether the entry points of ``fn`` for these Numba argument types call
    a rope variant (its mangled name carries the variant's abi tag)."""
    import numba
    key = tuple(numba.from_dtype(np.dtype(a)) if not isinstance(a, numba.types.Type) else a
                for a in args)
    cres = fn.dispatcher.overloads[key]
    return rope.ROPE_ABI_TAG in cres.library.get_llvm_str()


# one compiled function per behaviour, shared by the tests (CI time)
@ckernels.jit("string(int64)")
def label(i):
    return "item-" + str(i)


@ckernels.jit("string(int64)")
def label_f(i):
    return f"item-{i}"


@ckernels.jit("string(int64)")
def only_str(i):
    return str(i)


@ckernels.jit(["string(int8)", "string(int16)", "string(int32)", "string(uint8)",
               "string(uint16)", "string(uint32)", "string(uint64)", "string(bool)"])
def widths(x):
    return f"<{x}>"


@ckernels.jit("string(int64)")
def non_ascii(i):
    return "é" + str(i) + "日本" + "" + str(-i) + "😀"


@ckernels.jit("string(int64)")
def empty_pieces(i):
    return "" + "" + str(i) + ""


@ckernels.jit("string(int64)")
def only_consts(i):
    return "a" + "é"


@ckernels.jit("string(string, int64)")
def with_arg(s, i):
    return s + ":" + str(i) + "/" + s


@ckernels.jit("string(string, int64, bool)")
def mixed(s, i, b):
    t = s.upper()
    return f"{t}[{i}]={b}" + str(i * 2) + str(1.5)


LONG = "L" * 5000 + "ü" * 3000    # beyond the arena's first chunk (4096 bytes)


@ckernels.jit("string(int64)")
def long_const(i):
    return LONG + str(i) + LONG


@ckernels.jit("string(int64)")
def used_twice(i):
    s = "n" + str(i)
    return s + s


@ckernels.jit("string(int64)")
def len_of_chain(i):
    s = "n" + str(i)
    n = len(s)
    return s + "#" + str(n)


@ckernels.jit("string(int64)")
def two_returns(i):
    if i < 0:
        return "neg" + str(i)
    return "pos" + str(i)


@ckernels.jit("string(int64)")
def branches_then_chain(i):
    k = i
    if i % 2 == 0:
        k = i // 2
    return "k=" + str(k) + "," + str(i)


@ckernels.jit("string(int64)")
def raises_inside(i):
    if i == 3:
        raise ValueError("bad " + str(i))
    return "ok" + str(i)


@ckernels.jit("string(int64)")
def raises_late(i):
    if i == 100_000:
        raise ValueError("late " + str(i))
    return "ok" + str(i)


@ckernels.jit("string(string)")
def bracket_view(s):
    return f"<{s}>"


@ckernels.jit("string(string, int64)")
def view_fields(s, i):
    return f"{s!s}#{i}|" + str(s) + f"{s}"


EDGE = [0, 1, -1, 9, 10, -10, 99, 100, 12345, -987654321, I64.max, I64.min, I64.min + 1]


def test_int64_edge_values_match_python():
    x = np.array(EDGE, dtype=np.int64)
    assert label(x).tolist() == ["item-" + str(v) for v in EDGE]
    assert label_f(x).tolist() == [f"item-{v}" for v in EDGE]
    assert only_str(x).tolist() == [str(v) for v in EDGE]
    assert uses_rope(label, np.int64) and uses_rope(label_f, np.int64)
    assert uses_rope(only_str, np.int64)


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "uint8", "uint16", "uint32",
                                "uint64"])
def test_integer_widths_match_python(dt):
    info = np.iinfo(dt)
    vals = sorted({0, 1, info.max, info.min, info.max - 1, info.min + (info.min < 0)})
    x = np.array(vals, dtype=dt)
    assert widths(x).tolist() == [f"<{v}>" for v in vals]
    assert uses_rope(widths, np.dtype(dt))


def test_every_digit_count_boundary_matches_python():
    """The digit count (leading zeros and a table of powers of ten) and the
    two-digits-a-step writer at every 10**k - 1 / 10**k / 10**k + 1, both
    signs, and random values of every magnitude."""
    vals = {0, 1, -1}
    for k in range(1, 19):
        vals |= {10**k - 1, 10**k, 10**k + 1, -(10**k) + 1, -(10**k), -(10**k) - 1}
    rng = np.random.default_rng(29)
    vals |= {int(v) for v in rng.integers(I64.min, I64.max, 2000)}
    vals |= {int(v) >> int(k) for v, k in zip(rng.integers(I64.min, I64.max, 2000),
                                              rng.integers(0, 63, 2000))}
    x = np.array(sorted(vals), dtype=np.int64)
    assert label_f(x).tolist() == [f"item-{v}" for v in x.tolist()]
    u = sorted({10**k + d for k in range(20) for d in (-1, 0, 1) if 0 <= 10**k + d <= U64.max}
               | {int(U64.max)})
    assert widths(np.array(u, dtype=np.uint64)).tolist() == [f"<{v}>" for v in u]


def test_bool_matches_python():
    assert widths(np.array([True, False])).tolist() == ["<True>", "<False>"]


def test_uint64_max():
    x = np.array([U64.max, 2**63, 2**63 - 1], dtype=np.uint64)
    assert widths(x).tolist() == [f"<{int(v)}>" for v in x]


def test_non_ascii_constants_and_empty_pieces():
    x = np.array([0, 7, -42, I64.max])
    assert non_ascii(x).tolist() == ["é" + str(v) + "日本" + str(-v) + "😀" for v in x]
    assert empty_pieces(x).tolist() == [str(v) for v in x]
    assert only_consts(x[:2]).tolist() == ["aé", "aé"]


def test_string_arguments_in_the_chain():
    words = ["", "a", "héllo", "日本語", "😀" * 3, "x" * 10_000]
    idx = np.arange(len(words)) - 2
    r = with_arg(words, idx)
    assert r.tolist() == [f"{w}:{i}/{w}" for w, i in zip(words, idx)]
    assert uses_rope(with_arg, numba_type("string"), np.int64)


def test_string_view_fields_copied_in_one_pass():
    """A string argument typed as a view in an f-string field (or ``str(s)``)
    is a leaf of the one-pass builder: its bytes are copied, no Numba
    ``str`` made per field (before: three allocations per element, 8x
    slower)."""
    import pyarrow as pa
    from ckernels._numba.stringtype import ck_string_type
    words = ["", "a", "héllo", "日本語", "😀" * 3, "x" * 10_000, None, "end"]
    r = bracket_view(pa.array(words, type=pa.string()))
    assert r.to_pylist() == [None if w is None else f"<{w}>" for w in words]
    present = [w for w in words if w is not None]
    idx = np.arange(len(present)) - 3
    assert view_fields(present, idx).tolist() == [f"{w}#{i}|{w}{w}"
                                                   for w, i in zip(present, idx)]
    assert uses_rope(bracket_view, ck_string_type)
    assert uses_rope(view_fields, ck_string_type, np.int64)


def test_mixed_pieces_and_float_str():
    words = ["ab", "é", ""]
    idx = np.array([3, -4, 0])
    flags = np.array([True, False, True])
    r = mixed(words, idx, flags).tolist()
    # str(1.5) is Python's "1.5" (Numba alone gives "<object type:float64>")
    assert r == [f"{w.upper()}[{i}]={b}" + str(i * 2) + str(1.5)
                 for w, i, b in zip(words, idx, flags)]


def test_long_strings_beyond_a_chunk():
    r = long_const(np.array([1, -2, 30]))
    assert r.tolist() == [LONG + str(v) + LONG for v in (1, -2, 30)]


def test_fallback_chain_value_used_elsewhere():
    x = np.array([0, -5, 123])
    assert used_twice(x).tolist() == [("n" + str(v)) * 2 for v in x]
    assert len_of_chain(x).tolist() == [f"n{v}#{len('n' + str(v))}" for v in x]
    # the inner chain stays a Numba str (used twice); the returned one is
    # still written in one pass with it as a leaf
    assert uses_rope(used_twice, np.int64) and uses_rope(len_of_chain, np.int64)


def test_several_returns_fall_back():
    x = np.array([-3, 0, 4])
    assert two_returns(x).tolist() == [("neg" if v < 0 else "pos") + str(v) for v in x]
    assert not uses_rope(two_returns, np.int64)


def test_chain_after_branches():
    x = np.arange(-3, 5)
    assert branches_then_chain(x).tolist() == [
        f"k={v // 2 if v % 2 == 0 else v},{v}" for v in x]
    assert uses_rope(branches_then_chain, np.int64)


def test_two_dimensional_input_and_out():
    x = np.arange(-6, 6).reshape(3, 4)
    assert label(x).dtype == np.dtypes.StringDType()    # NumPy in, NumPy out
    assert label(x).tolist() == [[f"item-{v}" for v in row] for row in x]
    assert label(x[:, ::-2]).tolist() == [[f"item-{v}" for v in row] for row in x[:, ::-2]]
    out = ckernels.array(["old"] * 5)
    assert label_f(np.arange(5), out=out) is out
    assert out.tolist() == [f"item-{v}" for v in range(5)]


def test_exceptions_inside_string_code():
    with pytest.raises(ValueError, match="bad 3"):
        raises_inside(np.arange(5))
    assert raises_inside(np.arange(3)).tolist() == ["ok0", "ok1", "ok2"]


def test_called_from_jitted_code_and_python_unchanged():
    import numba

    @numba.njit
    def outer(i):
        return label(i) + "!"
    assert outer(-7) == "item--7!"
    assert label.dispatcher(12) == "item-12"


def _arena_capacity(arr):
    from ckernels.lowlevel import MemBlock, ffi
    am = ffi.cast("ck_string_arrmeta *", arr._arrmeta + ffi.sizeof("ck_dim_arrmeta"))
    return MemBlock(am.blockref, incref=True).stats


def test_arena_bytes_per_string_within_arrow():
    n = 200_000
    r = label(ckernels.asarray(np.arange(n)))     # ckernels in, ckernels (the arena) out
    st = _arena_capacity(r)
    payload = sum(len(f"item-{i}") for i in range(n))
    assert st.used == payload                  # one exact allocation per string
    arrow = payload + 4 * (n + 1)              # Arrow: int32 offsets + data
    assert st.capacity <= arrow
    del r


# ---- string results on the library's threads (ck_array_apply) ---------------

N_PAR = 150_000      # above the split threshold (64 Ki elements)


@pytest.fixture
def num_threads():
    old = ckernels.get_num_threads()
    yield ckernels.set_num_threads
    ckernels.set_num_threads(old)


def test_threads_give_the_serial_strings(num_threads):
    """Split over two threads, each writing into an arena of its own whose
    chunks the result's arena adopts: the serial strings, Python's as the
    oracle, held alive by the result alone.  (How many rows the second
    thread writes depends on scheduling; tests/c/kernels/test_apply.c checks
    that its rows land in the result's arena.)"""
    x = ckernels.asarray(np.arange(N_PAR) - N_PAR // 2)
    words = ckernels.array(["", "é", "ab", "日本"] * (N_PAR // 4))
    got = {}
    for nt in (1, 2):
        num_threads(nt)
        got[nt] = (label_f(x), non_ascii(x), with_arg(words, x[:len(words)]))
    vals = np.asarray(x).tolist()
    want = ([f"item-{v}" for v in vals],
            ["é" + str(v) + "日本" + str(-v) + "😀" for v in vals],
            [f"{w}:{v}/{w}" for w, v in zip(words.tolist(), vals)])
    del words, x                               # the results keep what they need
    for nt in (1, 2):
        assert [r.tolist() for r in got[nt]] == list(want)
        st = _arena_capacity(got[nt][0])       # every thread's bytes, counted once
        assert st.used == sum(len(w) for w in want[0])


def test_error_on_a_worker_thread(num_threads):
    """An error raised by the kernel on any thread reaches the caller with
    its class and message; rows written before it stay valid in out=."""
    num_threads(2)
    x = ckernels.asarray(np.arange(N_PAR))
    with pytest.raises(ValueError, match="late 100000"):
        raises_late(x)
    out = ckernels.array([""] * N_PAR)
    with pytest.raises(ValueError, match="late 100000"):
        raises_late(x, out=out)
    rows = out.tolist()
    assert all(r in ("", f"ok{i}") for i, r in enumerate(rows))
    assert 0 < sum(r != "" for r in rows) < N_PAR
    assert raises_late(x[:100_000]).tolist()[-1] == "ok99999"
