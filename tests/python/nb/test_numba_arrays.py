"""ckernel arrays in @numba.njit code (ckernels._numba.arraytype): typed views,
indexing, slicing, iteration, writes, strings and var dims, boxing, and the
code generated for the element loop."""

import gc
import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")
from numba import njit  # noqa: E402
from numba.core.errors import TypingError  # noqa: E402
from numba.core.runtime import _nrt_python, rtsys  # noqa: E402

import ckernels  # noqa: E402
import ckernels.nb as nb  # noqa: E402
from ckernels import errors  # noqa: E402

_nrt_python.memsys_enable_stats()


def _nrt_live():
    st = rtsys.get_allocation_stats()
    return st.alloc - st.free, st.mi_alloc - st.mi_free


class _Balance:
    def __init__(self):
        self.allowed = (0, 0)


@pytest.fixture(autouse=True)
def nrt_balance():
    """Views borrow: no NRT allocation may outlive a test (raising ones
    included), except Numba's own leak of a raising function's str argument."""
    gc.collect()
    before = _nrt_live()
    bal = _Balance()
    yield bal
    gc.collect()
    leaked = tuple(a - b for a, b in zip(_nrt_live(), before))
    assert leaked == bal.allowed, "NRT allocations leaked"


def _raises_leaking_str_arg(nrt_balance, exc, fn, *args):
    """fn(*args) must raise ``exc``; Numba does not release the live NRT
    locals of a function that raises (numba#1549): an unboxed ``str``
    argument (one allocation + one meminfo) may leak, nothing else."""
    gc.collect()
    before = _nrt_live()
    with pytest.raises(exc):
        fn(*args)
    gc.collect()
    leaked = tuple(a - b for a, b in zip(_nrt_live(), before))
    assert leaked in ((0, 0), (1, 1)), leaked
    nrt_balance.allowed = tuple(a + b for a, b in zip(nrt_balance.allowed, leaked))


# ------------------------------------------------------------ jitted helpers --
@njit
def sum_index(a):
    s = 0.0
    for i in range(len(a)):
        s += a[i]
    return s


@njit
def sum_iter(a):
    s = 0.0
    for x in a:
        s += x
    return s


@njit
def isum_index(a):
    s = 0
    for i in range(len(a)):
        s += a[i]
    return s


@njit
def copy1(a, out):
    for i in range(len(a)):
        out[i] = a[i]


@njit
def copy1_iter(a, out):
    i = 0
    for x in a:
        out[i] = x
        i += 1
    return i


@njit
def copy2(a, out):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            out[i, j] = a[i, j]


@njit
def copy2_rows(a, out):
    i = 0
    for row in a:
        j = 0
        for x in row:
            out[i, j] = x
            j += 1
        i += 1


@njit
def sum2(a):
    s = 0.0
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            s += a[i, j]
    return s


@njit
def getitem(a, i):
    return a[i]


@njit
def getitem2(a, i, j):
    return a[i, j]


@njit
def setitem(a, i, v):
    a[i] = v


@njit
def setitem2(a, i, j, v):
    a[i, j] = v


@njit
def info(a):
    return a.shape, a.strides, a.ndim, len(a), a.writable


def _all_dtypes():
    return [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
            np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
            np.complex128]


def _sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dt)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


# ------------------------------------------------------------------- typing --
def test_typeof_names_the_structure():
    assert str(numba.typeof(ckernels.asarray(np.zeros(3)))) == "ckernels.Array(strided * float64)"
    v = ckernels.array([[1], [2, 3]], type="strided * var * int32")
    assert str(numba.typeof(v)) == "ckernels.Array(strided * var * int32)"
    s = ckernels.array(["a"])
    assert str(numba.typeof(s)) == "ckernels.Array(strided * string)"
    f = ckernels.array([[True, False], [False, True]], type="2 * 2 * bool")
    t = numba.typeof(f)
    assert isinstance(t, nb.CkArrayType)
    assert t.dims == ("strided", "strided") and t.dtype == numba.types.boolean
    assert nb.array_type_of("var * 3 * string") == nb.CkArrayType(("var", "strided"),
                                                                  nb.ck_string_type)


def test_attributes_match_python():
    n = np.arange(24, dtype=np.int16).reshape(2, 3, 4)[:, ::-1, ::2]
    for a in (ckernels.asarray(n), ckernels.array(n.tolist(), type="2 * 3 * 2 * int16"),
              ckernels.asarray(np.zeros(0))):
        shape, strides, ndim, length, writable = info(a)
        assert shape == a.shape and strides == a.strides
        assert ndim == a.ndim and length == len(a) and writable is True
    v = ckernels.array([[[1, 2, 3]], [], [[4, 5, 6], [7, 8, 9]]],
                      type="strided * var * 3 * int32")
    assert info(v) == (v.shape, v.strides, 3, 3, True)
    assert v.shape == (3, -1, 3)


# ---------------------------------------------------------------- reading --
@pytest.mark.parametrize("dtype", _all_dtypes())
def test_1d_read_every_dtype(dtype):
    x = _sample(dtype, 37)
    a = ckernels.asarray(x)
    # Numba's CPU target has no float16 arrays: float16 elements read as float32
    out_dtype = np.float32 if x.dtype == np.float16 else x.dtype
    out = np.zeros(x.shape, out_dtype)
    copy1(a, out)
    np.testing.assert_array_equal(out, x)
    out2 = np.zeros(x.shape, out_dtype)
    assert copy1_iter(a, out2) == len(x)
    np.testing.assert_array_equal(out2, x)
    assert getitem(a, -1) == x[-1] and getitem(a, 5) == x[5]


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.uint64])
def test_integer_sums(dtype):
    x = _sample(dtype, 101, seed=3) // 4
    a = ckernels.asarray(x)
    expect = sum(int(v) for v in x)
    got = isum_index(a)
    if x.dtype == np.uint64:  # 64-bit wrap-around (Numba's int64/uint64 promotion)
        assert int(got) % 2**64 == expect % 2**64
    else:
        assert got == expect


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sums_1d_and_2d(dtype):
    x = _sample(dtype, (13, 7), seed=1)
    a = ckernels.asarray(x)
    assert sum2(a) == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-12)
    row = ckernels.asarray(x[3])
    assert sum_index(row) == pytest.approx(float(x[3].astype(np.float64).sum()), rel=1e-12)
    assert sum_iter(row) == sum_index(row)
    out = np.zeros_like(x)
    copy2(a, out)
    np.testing.assert_array_equal(out, x)
    out = np.zeros_like(x)
    copy2_rows(a, out)
    np.testing.assert_array_equal(out, x)


def test_arrays_made_by_ckernel_array_and_fixed_dims():
    data = [[1.5, 2.5, 3.5], [4.0, 5.0, 6.0]]
    for t in ("2 * 3 * float64", "strided * strided * float64", "strided * 3 * float64"):
        a = ckernels.array(data, type=t)
        out = np.zeros((2, 3))
        copy2(a, out)
        np.testing.assert_array_equal(out, data)
        assert getitem2(a, 1, -1) == 6.0
        assert sum2(a) == 22.5


@pytest.mark.parametrize("make", [
    lambda n: n[::-1],
    lambda n: n[::-3],
    lambda n: n[7:1:-2],
])
def test_negative_strides_1d(make):
    n = make(np.arange(20.0) * 1.5)
    a = ckernels.asarray(n)
    assert a.strides[0] < 0
    out = np.zeros_like(n)
    copy1(a, out)
    np.testing.assert_array_equal(out, n)
    assert sum_index(a) == sum_iter(a) == pytest.approx(n.sum())


def test_negative_strides_2d_and_fortran_order():
    base = np.arange(60, dtype=np.int32).reshape(6, 10)
    for n in (base[::-1, ::-2], base[::-2, 3:], np.asfortranarray(base), base.T[::-1]):
        a = ckernels.asarray(n)
        out = np.zeros(n.shape, n.dtype)
        copy2(a, out)
        np.testing.assert_array_equal(out, n)
        out = np.zeros(n.shape, n.dtype)
        copy2_rows(a, out)
        np.testing.assert_array_equal(out, n)
        assert getitem2(a, -1, -2) == n[-1, -2]


def test_zero_dim_array():
    z = ckernels.array(3.5)
    assert z.ndim == 0

    @njit
    def read(a):
        return a[()], a.shape, a.ndim

    assert read(z) == (3.5, (), 0)


# ---------------------------------------------------------------- indexing --
def test_index_errors():
    a = ckernels.asarray(np.arange(10.0))
    for i in (10, -11, 2**40, -(2**40)):
        with pytest.raises(IndexError, match="out of range") as ei:
            getitem(a, i)
        assert isinstance(ei.value, errors.CKIndexError)
    assert getitem(a, -10) == 0.0 and getitem(a, 9) == 9.0
    empty = ckernels.asarray(np.zeros(0))
    with pytest.raises(IndexError):
        getitem(empty, 0)
    b = ckernels.asarray(np.zeros((3, 4)))
    with pytest.raises(IndexError):
        getitem2(b, 0, 4)
    with pytest.raises(IndexError):
        getitem2(b, -4, 0)
    with pytest.raises(IndexError):
        setitem2(b, 3, 0, 1.0)
    assert not np.asarray(b).any()


def test_unsigned_and_literal_indices():
    a = ckernels.asarray(np.arange(5, dtype=np.int64))

    @njit
    def f(a, i):
        return a[i] + a[-1] + a[np.uint8(2)]

    assert f(a, np.uint32(1)) == 1 + 4 + 2
    assert getitem(a, np.uint64(4)) == 4
    with pytest.raises(IndexError):  # no wrap-around for unsigned indices
        getitem(a, np.uint64(2**64 - 1))
    with pytest.raises(IndexError):
        getitem(a, np.uint8(5))


def test_index_typing_errors():
    a = ckernels.asarray(np.zeros((2, 2)))
    with pytest.raises(TypingError, match="too many indices"):
        njit(lambda a: a[0, 0, 0])(a)
    with pytest.raises(TypingError, match="integers or slices"):
        njit(lambda a: a[0.5])(a)
    # (fresh dispatchers: Numba caches a failed typing, with its arguments,
    # on the dispatcher)
    def set_row(a, v):
        a[0] = v

    with pytest.raises(TypingError, match="sub-array"):
        njit(set_row)(a, 1.0)
    z = ckernels.array(1.0)
    with pytest.raises(TypingError, match="0-d"):
        njit(lambda a: len(a))(z)
    v = ckernels.array([[1], [2, 3]], type="strided * var * int32")
    with pytest.raises(TypingError, match="var dim"):
        njit(lambda a: a[:, 0])(v)


# ----------------------------------------------------------------- slicing --
@njit
def slices1(a, out):
    """Copies of a[::-1], a[1:5], a[::2], a[8:2:-2], a[-3:], a[5:2] into out rows."""
    k = 0
    for view in (a[::-1], a[1:5], a[::2], a[8:2:-2], a[-3:], a[5:2]):
        j = 0
        for x in view:
            out[k, j] = x
            j += 1
        out[k, 10] = len(view)
        k += 1


def test_slices_1d():
    n = np.arange(10.0) + 0.5
    for src in (n, n[::-1]):
        a = ckernels.asarray(src)
        out = np.full((6, 11), -1.0)
        slices1(a, out)
        views = [src[::-1], src[1:5], src[::2], src[8:2:-2], src[-3:], src[5:2]]
        for k, view in enumerate(views):
            assert out[k, 10] == len(view)
            np.testing.assert_array_equal(out[k, :len(view)], view)


@njit
def slices2(a):
    c = a[::2, 1]
    d = a[::-1, ::-1]
    e = a[1:, :2][-1]
    return c[0], c[1], len(c), d[0, 0], d.shape, d.strides, e[1], a[::-1][0][2], a[1:3].shape


def test_slices_2d():
    n = np.arange(20, dtype=np.int64).reshape(4, 5)
    a = ckernels.asarray(n)
    c0, c1, lc, d00, dshape, dstrides, e1, x, s13 = slices2(a)
    assert (c0, c1, lc) == (n[0, 1], n[2, 1], 2)
    d = n[::-1, ::-1]
    assert d00 == d[0, 0] and dshape == d.shape and dstrides == d.strides
    assert e1 == n[1:, :2][-1][1] and x == n[::-1][0][2] and s13 == (2, 5)


def test_slice_step_zero_raises():
    a = ckernels.asarray(np.zeros(4))
    with pytest.raises(ValueError):
        njit(lambda a, s: len(a[::s]))(a, 0)


# ------------------------------------------------------------------ writes --
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.int64, np.float16,
                                   np.float32, np.float64, np.complex128])
def test_writes_visible_from_python(dtype):
    x = np.zeros(6, dtype)
    a = ckernels.asarray(x)
    v = _sample(dtype, 6, seed=7)
    for i in range(6):
        setitem(a, i - 6 if i % 2 else i, v[i].item())
    np.testing.assert_array_equal(x, v)
    np.testing.assert_array_equal(np.asarray(a), v)


def test_writes_2d_and_through_slices():
    n = np.zeros((3, 4), np.int32)
    a = ckernels.asarray(n)
    setitem2(a, 1, -1, 7)
    setitem2(a, 2, 0, 3.0)  # Numba's cast rules

    @njit
    def through_views(a):
        a[::-1][0, 1] = 5      # a[2, 1]
        r = a[0, ::-2]         # a[0, 3], a[0, 1]
        r[1] = 9
        for row in a[1:2]:
            row[0] = -1

    through_views(a)
    expect = np.zeros((3, 4), np.int32)
    expect[1, 3], expect[2, 0], expect[2, 1], expect[0, 1], expect[1, 0] = 7, 3, 5, 9, -1
    np.testing.assert_array_equal(n, expect)
    b = ckernels.array([[0, 0], [0, 0]], type="2 * 2 * float64")
    setitem2(b, 1, 0, 2.5)
    assert b.to_list() == [[0.0, 0.0], [2.5, 0.0]]


def test_read_only_arrays_refuse_writes():
    n = np.arange(4.0)
    n.flags.writeable = False
    a = ckernels.asarray(n)
    assert info(a)[4] is False
    with pytest.raises(errors.InvalidStateError, match="read-only"):
        setitem(a, 0, 1.0)

    @njit
    def write_view(a):
        v = a[::-1]
        v[0] = 2.0

    with pytest.raises(RuntimeError):  # InvalidStateError is a RuntimeError
        write_view(a)

    @njit
    def write_row(a):
        a[0][1] = 1.0

    b = ckernels.array([[1.0, 2.0]]).set_readonly()
    with pytest.raises(errors.InvalidStateError):
        write_row(b)
    np.testing.assert_array_equal(n, np.arange(4.0))
    assert b.to_list() == [[1.0, 2.0]]
    assert sum_index(a) == 6.0  # reading is fine


# ----------------------------------------------------------------- strings --
STRINGS = ["", "a", "héllo", "日本語テキスト", "𝄞 music", "a\0b", "mixed é € 𝄞 z" * 20]


@njit
def string_stats(a):
    n = 0
    nbytes = 0
    for s in a:
        n += len(s)
        nbytes += s.nbytes
    return n, nbytes, str(a[2]), len(a[-1]), a[3] == "日本語テキスト", a[0] < a[1], a[4][0]


def test_reading_strings():
    a = ckernels.array(STRINGS)
    n, nbytes, s2, last, eq, lt, c = string_stats(a)
    assert n == sum(len(s) for s in STRINGS)
    assert nbytes == sum(len(s.encode()) for s in STRINGS)
    assert (s2, last, eq, lt, c) == ("héllo", len(STRINGS[-1]), True, True, "𝄞")
    assert [getitem(a, i) for i in range(len(STRINGS))] == STRINGS  # CkString -> str

    @njit
    def hashes(a):
        return hash(a[2]), hash(str(a[3]))

    assert hashes(a) == (hash("héllo"), hash("日本語テキスト"))


def test_strings_2d_and_slices():
    data = [["ab", "é"], ["日本", ""], ["x", "𝄞"]]
    a = ckernels.array(data)

    @njit
    def f(a):
        return str(a[1, 0]), str(a[::-1, 1][0]), len(a[2][1]), a[-1, -1] == "𝄞"

    assert f(a) == ("日本", "𝄞", 1, True)


def test_writing_strings(nrt_balance):
    a = ckernels.array(["x", "y", "z"])
    setitem(a, 1, "héllo wörld 𝄞")
    setitem(a, -1, "")

    @njit
    def fill(a):
        for i in range(len(a)):
            a[i] = str(i) + "é"

    assert a.to_list() == ["x", "héllo wörld 𝄞", ""]
    b = ckernels.array([["", ""], ["", ""]])
    fill(b[0])
    setitem2(b, 1, 1, "日本")
    assert b.to_list() == [["0é", "1é"], ["", "日本"]]
    ro = ckernels.array(["q"]).set_readonly()
    _raises_leaking_str_arg(nrt_balance, errors.InvalidStateError, setitem, ro, 0, "w")
    assert ro.to_list() == ["q"]


# ---------------------------------------------------------------- var dims --
RAGGED = [[1, 2, 3], [], [4], [], [5, 6, 7, 8, 9]]


@njit
def ragged_stats(a, out_sums, out_lens):
    for i in range(len(a)):
        row = a[i]
        out_lens[i] = len(row)
        s = 0
        for x in row:
            s += x
        out_sums[i] = s


def test_var_dims_with_empty_rows():
    a = ckernels.array(RAGGED, type="strided * var * int32")
    sums = np.zeros(len(RAGGED), np.int64)
    lens = np.zeros(len(RAGGED), np.int64)
    ragged_stats(a, sums, lens)
    assert sums.tolist() == [sum(r) for r in RAGGED]
    assert lens.tolist() == [len(r) for r in RAGGED]

    @njit
    def f(a):
        row = a[4]
        return row[-1], row[1:4][::-1][0], row.shape, row.strides, row[::2].shape, a[0][0]

    assert f(a) == (9, 8, (5,), (4,), (3,), 1)
    with pytest.raises(IndexError):
        njit(lambda a: a[1][0])(a)
    with pytest.raises(IndexError):
        njit(lambda a, i: a[i][0])(a, -2)


def test_var_dims_nested_and_iteration():
    data = [[[1.0, 2.0], []], [], [[3.0], [4.0, 5.0, 6.0]]]
    a = ckernels.array(data, type="strided * var * var * float64")

    @njit
    def total(a):
        s = 0.0
        count = 0
        for outer in a:
            for inner in outer:
                for x in inner:
                    s += x
                    count += 1
        return s, count, a[2][1][-1], len(a[0][1]), a.shape

    assert total(a) == (21.0, 6, 6.0, 0, (3, -1, -1))
    top = ckernels.array([7, 8, 9], type="var * int64")
    assert isum_index(top) == 24 and getitem(top, -1) == 9


def test_var_dim_rows_of_fixed_and_strings():
    a = ckernels.array([[[1, 2, 3]], [], [[4, 5, 6], [7, 8, 9]]],
                      type="strided * var * 3 * int32")

    @njit
    def f(a):
        r = a[2]
        return r.shape, r[1, ::-1][0], r[-1][0], len(a[1]), r.ndim

    assert f(a) == ((2, 3), 9, 7, 0, 2)
    s = ckernels.array([["a", "bé"], [], ["日本"]], type="strided * var * string")

    @njit
    def g(s):
        out = 0
        for row in s:
            for x in row:
                out += len(x)
        return out, str(s[0][1]), s[2][0] == "日本"

    assert g(s) == (5, "bé", True)

    @njit
    def write_row(s):
        s[1 - 1][1] = "changed"
    write_row(s)
    assert s.to_list() == [["a", "changed"], [], ["日本"]]


# --------------------------------------------------- structs (not yet) --
def test_struct_elements_are_a_clear_typing_error():
    a = ckernels.array([{"x": 1, "y": 2.0}, {"x": 3, "y": 4.0}])
    assert info(a)[:4] == ((2,), a.strides, 1, 2)
    with pytest.raises(TypingError, match="struct elements are not supported in jitted code"):
        njit(lambda a: a[0])(a)
    with pytest.raises(TypingError, match="struct elements are not supported"):
        njit(lambda a: [x for x in a])(a)


# ------------------------------------------------------------------ boxing --
@njit
def identity(a):
    return a


@njit
def views(a):
    return a[::-2], a[1:3]


def test_returning_the_argument_is_refcount_correct():
    a = ckernels.asarray(np.arange(5.0))
    before = ckernels.live_count()
    r = identity(a)
    assert isinstance(r, ckernels.Array) and r.address == a.address
    assert ckernels.live_count() == before
    del r
    gc.collect()
    s = ckernels.array(["a", "é"])
    assert identity(s).to_list() == ["a", "é"]


def test_returned_views_share_memory_and_own_a_reference():
    n = np.arange(6.0)
    a = ckernels.asarray(n)
    live = ckernels.live_count()
    v1, v2 = views(a)
    assert ckernels.live_count() == live + 2
    assert v1.to_list() == [5.0, 3.0, 1.0] and v2.to_list() == [1.0, 2.0]
    assert v1.strides == (-16,) and v1.writable
    v1[0] = 50.0  # shares memory with the argument
    assert n[5] == 50.0
    del a, n
    gc.collect()
    assert v1.to_list() == [50.0, 3.0, 1.0]  # kept alive by the view
    ro = ckernels.asarray(np.arange(3.0)).set_readonly()
    assert not views(ro)[0].writable
    ragged = ckernels.array(RAGGED, type="strided * var * int32")
    row = getitem(ragged, 4)
    del ragged
    gc.collect()
    assert row.type == ckernels.types.parse("strided * int32")
    assert row.to_list() == [5, 6, 7, 8, 9]


def test_returned_views_of_non_builtin_data_are_copies():
    s = ckernels.array(["a", "bé", "日本"])
    r, = njit(lambda s: (s[::-1],))(s)
    assert r.to_list() == ["日本", "bé", "a"] and str(r.type) == "strided * string"
    v = ckernels.array(RAGGED, type="strided * var * int32")
    r = njit(lambda v: v[::2])(v)
    assert r.to_list() == RAGGED[::2]
    rows = njit(lambda v: v[4])(ckernels.array([["x"], [], [], [], ["y", "z"]],
                                              type="strided * var * string"))
    assert rows.to_list() == ["y", "z"]


# ------------------------------------------------------ generated code --
def _function_ir(dispatcher, sig):
    """The optimised LLVM IR of the jitted function itself (not its wrappers)."""
    name = dispatcher.overloads[sig].fndesc.mangled_name
    llvm = dispatcher.inspect_llvm(sig)
    m = re.search(r"^define [^\n]*@\"?" + re.escape(name) + r"\"?\(.*?^}", llvm, re.M | re.S)
    assert m, name
    return m.group(0)


def _calls(ir_text):
    return [ln for ln in ir_text.splitlines()
            if re.search(r"\b(call|invoke)\b", ln) and "@llvm." not in ln]


def test_contiguous_float64_loop_has_no_calls():
    a = ckernels.asarray(np.arange(1000.0))
    sum_index(a)
    sum_iter(a)
    sig = (nb.array_type_of("strided * float64"),)
    for fn in (sum_index, sum_iter):
        text = _function_ir(fn, sig)
        assert _calls(text) == [], _calls(text)
        assert re.search(r"load double", text)
    # the 2-d loop too
    b = ckernels.asarray(np.ones((3, 4)))
    sum2(b)
    text = _function_ir(sum2, (nb.array_type_of("strided * strided * float64"),))
    assert _calls(text) == []


def test_cache_true_roundtrip(tmp_path):
    import subprocess
    import sys
    import textwrap
    mod = tmp_path / "ckarr_cached.py"
    mod.write_text(textwrap.dedent("""
        import ckernels, ckernels.nb
        from numba import njit

        @njit(cache=True)
        def total(a):
            s = 0.0
            for x in a[::-1]:
                s += x
            return s
    """))
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np, ckernels, ckarr_cached as m
        print(m.total(ckernels.asarray(np.arange(5.0))), sum(m.total.stats.cache_hits.values()))
    """)
    outs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert outs[0] == ["10.0", "0"] and outs[1] == ["10.0", "1"]
