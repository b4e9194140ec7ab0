"""Arrow strings in and out by whole words and ranges: nulls read 64 slots at
a time (words without nulls, words of nulls, mixed; bit offsets 0-7; bytes
under the nulls that are garbage or not UTF-8), the text of an export
shared when it is one range (alive after the ckernels array is gone) and
copied otherwise, and a pandas ``string[pyarrow]`` Series with NA through a
jitted f-string and back.  Oracles: pyarrow's ``to_pylist``, CPython
f-strings, pandas' own string operations."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import ckernels
from ckernels.errors import InvalidArgumentError

pa = pytest.importorskip("pyarrow")


@ckernels.jit
def bracket(s):
    return f"<{s}>"


# compiled once here, for strings with nulls, the only ones it is given
# (what a compile keeps is not the tests' to balance)
bracket(ckernels.asarray(pa.array(["a", None])))


def _valid(n: int) -> list[bool]:
    """All valid for 64 slots, all null for 64, then a mix."""
    return [i < 64 or (i >= 128 and i % 5 != 0 and i % 7 != 0) for i in range(n)]


def _strings(n: int, garbage: bytes, large: bool):
    valid = _valid(n)
    values = [f"s{i}-é".encode() if ok else garbage for i, ok in enumerate(valid)]
    offs = np.concatenate([[0], np.cumsum([len(v) for v in values])])
    offs = offs.astype(np.int64 if large else np.int32)
    bits = np.packbits(np.array(valid, dtype=bool), bitorder="little")
    arr = pa.Array.from_buffers(pa.large_string() if large else pa.string(), n,
                                [pa.py_buffer(bits.tobytes()), pa.py_buffer(offs.tobytes()),
                                 pa.py_buffer(b"".join(values))])
    return arr, [v.decode() if ok else None for v, ok in zip(values, valid)]


@pytest.mark.parametrize("garbage", [b"~x", b"\xff\x80", b""], ids=["ascii", "not-utf8", "empty"])
@pytest.mark.parametrize("large", [False, True], ids=["utf8", "large_utf8"])
def test_nulls_by_words_at_every_bit_offset(garbage, large):
    arr, want = _strings(300, garbage, large)
    for start in range(8):
        sl = arr.slice(start, 300 - 2 * start)
        a = ckernels.asarray(sl)
        assert a.null_count == sl.null_count
        assert a.tolist() == want[start:300 - start], start
        back = pa.array(a)
        back.validate(full=True)
        assert back.to_pylist() == want[start:300 - start]


def test_invalid_utf8_under_a_valid_slot_is_named():
    arr, _ = _strings(300, b"\xff", False)
    offs = np.frombuffer(arr.buffers()[1], np.int32)
    data = bytearray(arr.buffers()[2].to_pybytes())
    data[offs[201]] = 0xc3                          # a lead byte, then "201": invalid
    bad = pa.Array.from_buffers(pa.string(), 300, [arr.buffers()[0], arr.buffers()[1],
                                                   pa.py_buffer(bytes(data))])
    with pytest.raises(InvalidArgumentError, match="element 201 is not valid UTF-8"):
        ckernels.asarray(bad)
    with pytest.raises(InvalidArgumentError, match="element 198 is not valid UTF-8"):
        ckernels.asarray(bad.slice(3))


def test_export_shares_one_range_and_keeps_it_alive():
    x = pa.array([f"v{i}" for i in range(1000)], pa.large_string()).slice(5)
    a = ckernels.asarray(x)
    y = pa.array(a)
    # the imported text is one range of pyarrow's buffer: shared, not copied
    first = int(np.frombuffer(x.buffers()[1], np.int64)[x.offset])
    assert y.buffers()[2].address == x.buffers()[2].address + first
    del a, x
    gc.collect()
    y.validate(full=True)
    assert y.to_pylist() == [f"v{i}" for i in range(5, 1000)]
    # a jitted result: small enough for one region of its arena, shared;
    # the export outlives the ckernels array
    r = bracket(ckernels.asarray(pa.array(["a", None, "bc", "", "d"])))
    e1, e2 = pa.array(r), pa.array(r)
    assert e1.buffers()[2].address == e2.buffers()[2].address
    del r
    gc.collect()
    assert e1.to_pylist() == ["<a>", None, "<bc>", "<>", "<d>"]


def test_export_copies_what_is_not_one_range():
    x = pa.array([f"w{i}" for i in range(500)])
    a = ckernels.asarray(x)
    for view, want in [(a[::-1], x.to_pylist()[::-1]),           # every element a range
                       (a[::2], x.to_pylist()[::2]),
                       (a[250:], x.to_pylist()[250:])]:
        y = pa.array(view)
        y.validate(full=True)
        assert y.to_pylist() == want
    # a jitted result over many elements spans several regions: copied
    xs = pa.array([None if i % 20 == 3 else f"name {i}" for i in range(20_000)])
    want = [None if v is None else f"<{v}>" for v in xs.to_pylist()]
    r = bracket(ckernels.asarray(xs))
    for typ in (None, pa.string(), pa.large_string(), pa.string_view()):
        y = pa.array(r, type=typ)
        y.validate(full=True)
        assert y.to_pylist() == want, typ


def test_pandas_string_series_with_na_through_an_fstring():
    pd = pytest.importorskip("pandas")
    values = [None if i % 17 == 5 else f"item {i} é" for i in range(3000)]
    s = pd.Series(values, dtype="string[pyarrow]", index=np.arange(3000) * 2, name="names")
    r = bracket(s)
    want = "<" + s + ">"
    assert r.dtype == s.dtype
    assert r.name == "names" and r.index.equals(s.index)
    pd.testing.assert_series_equal(r, want)
    # an ArrowDtype column stays one
    t = pd.Series(pd.arrays.ArrowExtensionArray(pa.array(values, pa.large_string())))
    rt = bracket(t)
    assert isinstance(rt.dtype, pd.ArrowDtype)
    assert [None if v is pd.NA else v for v in rt.tolist()] == \
        [None if v is None else f"<{v}>" for v in values]
