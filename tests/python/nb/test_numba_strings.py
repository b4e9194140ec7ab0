"""ckernel strings in @numba.njit code: CkString views, UTF-8 coding, store_str
and the string builder (ckernels._numba.strings / ckernels.nb)."""

import ctypes
import gc

import numpy as np
import pytest

numba = pytest.importorskip("numba")
from numba import njit  # noqa: E402
from numba.core.runtime import _nrt_python, rtsys  # noqa: E402

import ckernels  # noqa: E402
import ckernels.nb as nb  # noqa: E402
from ckernels import errors  # noqa: E402
from ckernels._numba.utf8 import store_u8  # noqa: E402

_nrt_python.memsys_enable_stats()

SAMPLES = [
    "",
    "a",
    "hello, world",
    "é",                    # 2-byte UTF-8, latin-1 kind
    "ÿ\u00e9\u00c0",        # kind 1 but not ASCII
    "Ā€ж",                  # 2- and 3-byte UTF-8, 2-byte kind
    "日本語テキスト",
    "𝄞 music",              # 4-byte UTF-8, 4-byte kind
    "a\0b\0",               # embedded NULs
    "mixed: a é € 𝄞 \0 z",
    "\U0010ffff\ud7ff\ue000",
]


def _nrt_live():
    st = rtsys.get_allocation_stats()
    return st.alloc - st.free, st.mi_alloc - st.mi_free


class _Balance:
    """What a test may leave allocated in NRT (only Numba's own exception leak)."""

    def __init__(self):
        self.allowed = (0, 0)

    def allow(self, leaked):
        self.allowed = tuple(a + b for a, b in zip(self.allowed, leaked))


@pytest.fixture(autouse=True)
def nrt_balance():
    gc.collect()
    before = _nrt_live()
    bal = _Balance()
    yield bal
    gc.collect()
    leaked = tuple(a - b for a, b in zip(_nrt_live(), before))
    assert leaked == bal.allowed, "NRT allocations leaked"


def _raises_with_numba_leak(nrt_balance, exc, match, fn, *args):
    """Call fn(*args) expecting ``exc``; Numba does not release the live NRT
    locals of a function that raises (numba#1549): allow at most one NRT
    object (one allocation + one meminfo: the builder's struct, or an unboxed
    str argument) to leak, nothing else."""
    gc.collect()
    before = _nrt_live()
    with pytest.raises(exc, match=match) as ei:
        fn(*args)
    gc.collect()
    leaked = tuple(a - b for a, b in zip(_nrt_live(), before))
    assert leaked in ((0, 0), (1, 1)), leaked
    nrt_balance.allow(leaked)
    return ei.value


@pytest.fixture
def slots():
    """An array of ck_string structs (2 words each) to store strings into."""
    buf = np.zeros((8, 2), dtype=np.intp)
    return buf, buf.ctypes.data


@njit
def _store(mb, dst, s):
    nb.store_str(mb, dst, s)


@njit
def _to_str(dst):
    return str(nb.string_at(dst))


@njit
def _props(dst):
    s = nb.string_at(dst)
    return len(s), s.nbytes, hash(s)


@njit
def _getitem(dst, i):
    return nb.string_at(dst)[i]


@njit
def _cmp_ck(a, b):
    x = nb.string_at(a)
    y = nb.string_at(b)
    return x == y, x != y, x < y, x <= y, x > y, x >= y


@njit
def _cmp_str(a, y):
    x = nb.string_at(a)
    return (x == y, x != y, x < y, x <= y, x > y, x >= y,
            y == x, y < x, y >= x)


@pytest.mark.parametrize("s", SAMPLES)
def test_round_trip_and_properties(s, slots):
    buf, dst = slots
    with ckernels.MemBlock.pod() as mb:
        _store(mb, dst, s)
        raw = s.encode("utf-8")
        assert buf[0, 1] - buf[0, 0] == len(raw)
        assert ctypes.string_at(int(buf[0, 0]), len(raw)) == raw
        assert _to_str(dst) == s
        assert _props(dst) == (len(s), len(raw), hash(s))
        for i in range(-len(s), len(s)):
            assert _getitem(dst, i) == s[i]


def test_index_errors(slots):
    _, dst = slots
    with ckernels.MemBlock.pod() as mb:
        _store(mb, dst, "aé𝄞")
        for i in (3, -4, 100):
            with pytest.raises(IndexError):
                _getitem(dst, i)


def test_very_long_strings_round_trip(slots):
    _, dst = slots
    ascii_mb = "x" * (1 << 20)
    unicode_mb = ("aé€𝄞" * (1 << 18))[: 1 << 20]
    with ckernels.MemBlock.pod() as mb:
        for s in (ascii_mb, unicode_mb):
            _store(mb, dst, s)
            out = _to_str(dst)
            assert out == s
            n, nbytes, h = _props(dst)
            assert (n, nbytes, h) == (len(s), len(s.encode()), hash(s))


def test_compare_agrees_with_python(slots):
    buf, base = slots
    words = ["", "a", "ab", "abc", "b", "é", "e\u0301", "€", "𝄞", "a\0", "a\0b", "z"]
    with ckernels.MemBlock.pod() as mb:
        for x in words:
            for y in words:
                _store(mb, base, x)
                _store(mb, base + 16, y)
                expect = (x == y, x != y, x < y, x <= y, x > y, x >= y)
                assert _cmp_ck(base, base + 16) == expect, (x, y)
                assert _cmp_str(base, y) == expect + (y == x, y < x, y >= x), (x, y)


def test_returned_view_boxes_to_python_str(slots):
    @njit
    def view(dst):
        return nb.string_at(dst)

    _, dst = slots
    with ckernels.MemBlock.pod() as mb:
        for s in SAMPLES:
            _store(mb, dst, s)
            out = view(dst)
            assert type(out) is str and out == s


def test_invalid_utf8_raises(slots):
    @njit
    def corrupt(mb, dst):
        b, e = nb.allocate(mb, 2, 1)
        store_u8(b, 0xC3)      # truncated 2-byte sequence
        store_u8(b + 1, 0x28)
        nb.store_string(dst, b, e)

    _, dst = slots
    with ckernels.MemBlock.pod() as mb:
        corrupt(mb, dst)
        with pytest.raises(ValueError, match="invalid UTF-8"):
            _to_str(dst)


def test_surrogates_cannot_be_encoded(slots, nrt_balance):
    _, dst = slots
    with ckernels.MemBlock.pod() as mb:
        # (Numba leaks the unboxed str argument when a nested call raises)
        _raises_with_numba_leak(nrt_balance, ValueError, "surrogate", _store, mb, dst, "a\ud800")


def test_decode_and_encode_helpers():
    @njit
    def through(s):
        n = nb.str_utf8_nbytes(s)
        buf = np.empty(max(n, 1), dtype=np.uint8)
        written = nb.str_encode_into(s, buf.ctypes.data)
        return written, nb.decode_utf8(buf.ctypes.data, n, True), buf[:n].copy()

    for s in SAMPLES:
        n, back, raw = through(s)
        assert n == len(s.encode()) and back == s and raw.tobytes() == s.encode()


# ------------------------------------------------------------- builder -----
@njit
def _build(mb, dst, n, cap):
    b = nb.string_builder(mb, cap)
    for i in range(n):
        b.append("item")
        b.append(i)
        b.append(",")
        b.append("é")
        b.append_code_point(0x1F600)
    b.finish_into(dst)
    return b.nbytes


def _expected(n):
    return "".join(f"item{i},é\U0001F600" for i in range(n))


def test_builder_grows_and_shrinks_to_fit(slots):
    _, dst = slots
    with ckernels.MemBlock.pod(4096) as mb:
        nbytes = _build(mb, dst, 2000, 4)
        s = _expected(2000)
        assert nbytes == len(s.encode())
        assert _to_str(dst) == s
        st = mb.stats
        assert st.allocations == 1          # one allocate, then resizes only
        assert st.used == nbytes            # shrunk to fit exactly (align 1)
        assert st.capacity > 4096 and nbytes > 4096  # it grew past the first chunk
        _store(mb, dst + 16, "next")        # the arena is still usable after it
        assert mb.stats.used == nbytes + 4


def test_builder_empty_and_small(slots):
    buf, dst = slots
    with ckernels.MemBlock.pod() as mb:
        assert _build(mb, dst, 0, 16) == 0
        assert buf[0, 0] == buf[0, 1] and _to_str(dst) == ""
        assert mb.stats.used == 0
        _build(mb, dst, 3, 0)               # zero initial capacity
        assert _to_str(dst) == _expected(3)


def test_builder_appends_ints_views_and_chars(slots):
    @njit
    def f(mb, src, dst):
        b = nb.string_builder(mb)
        b.append(np.int64(-9223372036854775807 - 1))
        b.append(" ")
        b.append(np.uint64(18446744073709551615))
        b.append(" ")
        b.append(np.int32(-7))
        b.append(np.uint8(0))
        b.append(" ")
        b.append(nb.string_at(src))
        b.append("x"[0])
        return b.finish()

    _, base = slots
    with ckernels.MemBlock.pod() as mb:
        _store(mb, base, "view→ok")
        out = f(mb, base, base + 16)
        assert out == "-9223372036854775808 18446744073709551615 -70 view→okx"


def test_builder_with_owned_arena_returned():
    @njit
    def make(words):
        mb = nb.pod_memblock_new(0)
        slots = np.zeros((len(words), 2), dtype=np.intp)
        for k in range(len(words)):
            b = nb.string_builder(mb, 1)
            b.append(words[k])
            b.append("!")
            b.finish_into(slots[k].ctypes.data)
        return mb, slots

    words = numba.typed.List(["a", "héllo", "𝄞"])
    mb, slots = make(words)
    assert mb.refcount == 1

    @njit
    def read(slots, k):
        return str(nb.string_at(slots[k].ctypes.data))

    assert [read(slots, k) for k in range(3)] == ["a!", "héllo!", "𝄞!"]
    del mb
    gc.collect()


def test_builder_detects_interleaved_allocation(slots, nrt_balance):
    @njit
    def interleave(mb, dst):
        b = nb.string_builder(mb, 4)
        b.append("ab")
        nb.allocate(mb, 8, 1)           # breaks the one-builder-per-arena rule
        b.append("cdefgh")              # needs a resize -> C error
        b.finish_into(dst)

    @njit
    def finish_after_interleave(mb, dst):
        b = nb.string_builder(mb, 64)
        b.append("ab")
        nb.allocate(mb, 8, 1)
        b.finish_into(dst)              # the shrink-to-fit resize notices

    _, dst = slots
    with ckernels.MemBlock.pod() as mb:
        for fn in (interleave, finish_after_interleave):
            err = _raises_with_numba_leak(nrt_balance, errors.InvalidStateError,
                                          "most recent allocation", fn, mb, dst)
            assert isinstance(err, RuntimeError) and err.status == 4


def test_builder_use_after_finish_raises(slots, nrt_balance):
    @njit
    def twice(mb, dst):
        b = nb.string_builder(mb)
        b.append("a")
        b.finish_into(dst)
        b.append("b")

    _, dst = slots
    with ckernels.MemBlock.pod() as mb:
        _raises_with_numba_leak(nrt_balance, RuntimeError, "already finished", twice, mb, dst)
