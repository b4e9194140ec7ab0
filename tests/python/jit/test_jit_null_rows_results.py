"""Results of null-able rows (``?var * R``: an Arrow list with null entries).

A function whose result is ``?var * R`` (R a number, bool, string or ``?T``)
returns None for a null row, or the row; in the output-parameter form it
calls ``out.set_null()``.  A plain ``var * R`` result over arguments with
null rows (or nulls in their rows) becomes ``?var * R``: a null row out,
the body never run there; so does a null in a number or string argument
without dims (``var * int64(string)``).  Empty rows and null rows stay
distinct.  pandas Series in: a Series of ``pd.ArrowDtype(pa.list_(...))``
out, the index kept.
Oracles: pyarrow (``pa.array`` of the expected lists) and CPython over the
inputs' ``to_pylist()``; rows at bit offsets 0-7 (sliced inputs).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.errors import NotSupportedError

pa = pytest.importorskip("pyarrow")


def _doubled(r):
    return None if r is None or len(r) == 0 else [x * 2 for x in r]


doubled = ckernels.jit("?var * int64(?var * int64)")(_doubled)


def _halves(r, out):                     # the output-parameter form
    if r is None:
        out.set_null()
        return
    for x in r:
        if x is not None:
            out.append(x / 2.0)


halves = ckernels.jit("?var * float64(?var * ?float64)")(_halves)


def _words(s):
    if s is None or s == "":
        return None
    return [w if w else None for w in s.split(" ")]


words = ckernels.jit("?var * ?string(?string)")(_words)


def _upper(r):
    return None if r is None else [s.upper() for s in r]


upper = ckernels.jit("?var * string(?var * string)")(_upper)


@ckernels.jit("var * int64(var * int64)")
def plus_one(r):                         # plain rows: a null row propagates
    return [x + 1 for x in r]


@ckernels.jit("var * float64(var * float64)")
def cumsum(r, out):                      # ... in the output-parameter form too
    s = 0.0
    for x in r:
        s += x
        out.append(s)


@ckernels.jit("var * string(var * string)")
def shout(r):                            # string rows: a null row propagates
    return [s.upper() for s in r if len(s) > 0]


@ckernels.jit("var * int64(string)")
def lengths(s):                          # a null scalar string: a null row
    return [len(w) for w in s.split(" ")]


@ckernels.jit("?var * int64(int64)")
def nothing(n):                          # every row null
    return None


@ckernels.jit("?var * int64(var * int64)")
def bad_null(r, out):                    # elements and a null: an error
    out.append(1)
    out.set_null()


@ckernels.jit("var * int64(var * int64)")
def plain_null(r, out):                  # set_null() without null rows: an error
    out.set_null()


# the null-propagating variants are compiled at their first call and kept
# (the memblock balance of each test counts their code): made here
plus_one(pa.array([None, [1, None]], pa.list_(pa.int64())))
plus_one(pa.array([[1, None]], pa.list_(pa.int64())))
cumsum(pa.array([None], pa.list_(pa.float64())))
upper(pa.array([["a"], None], pa.list_(pa.string())))    # (a first call keeps one block)
shout(pa.array([["a"], None], pa.list_(pa.string())))
lengths(pa.array(["a b", None]))

ROWS = [[1, 2], None, [], [3], None, [4, 5, 6], [], None, [7]]
FROWS = [[1.0, None, 3.0], None, [], [None], [5.0], None, [2.0, 4.0], [], [8.0]]


def _check(res, want, typ):
    got = res if isinstance(res, (pa.Array, pa.ChunkedArray)) else pa.array(res)
    # text leaves as large_string (64-bit offsets: ckernels' string layout)
    assert got.type in (typ, pa.list_(pa.large_string()))
    assert got.to_pylist() == want
    assert got.cast(typ).equals(pa.array(want, typ))
    assert got.null_count == sum(w is None for w in want)
    got.validate(full=True)


@pytest.mark.parametrize("start", range(8))
def test_returned_rows_at_every_bit_offset(start):
    base = pa.array(ROWS * 3, pa.list_(pa.int64()))
    sl = base.slice(start, 17)
    _check(doubled(sl), [_doubled(r) for r in sl.to_pylist()], pa.list_(pa.int64()))
    fbase = pa.array(FROWS * 3, pa.list_(pa.float64()))
    fsl = fbase.slice(start, 15)
    want = [None if r is None else [x / 2.0 for x in r if x is not None]
            for r in fsl.to_pylist()]
    _check(halves(fsl), want, pa.list_(pa.float64()))


_rows = st.lists(st.one_of(st.none(), st.lists(st.integers(-2**40, 2**40), max_size=5)),
                 max_size=40)


@settings(max_examples=40, deadline=None)
@given(_rows, st.integers(0, 7))
def test_random_rows_against_cpython(rows, start):
    sl = pa.array(rows, pa.list_(pa.int64())).slice(min(start, len(rows)))
    pyrows = sl.to_pylist()
    _check(doubled(sl), [_doubled(r) for r in pyrows], pa.list_(pa.int64()))
    _check(plus_one(sl), [None if r is None else [x + 1 for x in r] for r in pyrows],
           pa.list_(pa.int64()))


def test_empty_rows_and_null_rows_are_distinct():
    a = pa.array([[], None, [], None], pa.list_(pa.int64()))
    res = plus_one(a)
    _check(res, [[], None, [], None], pa.list_(pa.int64()))
    out = ckernels.asarray(a)
    got = doubled(out)
    assert got.tolist() == [None, None, None, None]
    assert got.null_count == 4


def test_all_null_and_no_null():
    allnull = pa.array([None] * 9, pa.list_(pa.int64()))
    _check(doubled(allnull), [None] * 9, pa.list_(pa.int64()))
    nonull = pa.array([[1], [2, 3], [4]], pa.list_(pa.int64()))
    _check(doubled(nonull), [[2], [4, 6], [8]], pa.list_(pa.int64()))
    res = nothing(ckernels.array([1, 2, 3]))
    assert res.tolist() == [None, None, None] and res.null_count == 3


def test_strings_and_option_elements():
    s = pa.array(["a b", None, "", "c  d", "é ü x"] * 2)
    for start in range(3):
        sl = s.slice(start)
        _check(words(sl), [_words(v) for v in sl.to_pylist()], pa.list_(pa.string()))
    rows = pa.array([["ab", "c"], None, [], ["é"]] * 3, pa.list_(pa.string()))
    for start in range(4):
        sl = rows.slice(start)
        _check(upper(sl), [_upper(r) for r in sl.to_pylist()], pa.list_(pa.string()))


@pytest.mark.parametrize("start", [0, 3, 7])
def test_plain_rows_propagate_null_rows(start):
    base = pa.array(ROWS * 3, pa.list_(pa.int64()))
    sl = base.slice(start, 16)
    want = [None if r is None else [x + 1 for x in r] for r in sl.to_pylist()]
    _check(plus_one(sl), want, pa.list_(pa.int64()))
    fl = pa.array([[1.0, 2.0], None, [], [3.0]] * 3, pa.list_(pa.float64())).slice(start)
    want = []
    for r in fl.to_pylist():
        if r is None:
            want.append(None)
            continue
        acc, row = 0.0, []
        for x in r:
            acc += x
            row.append(acc)
        want.append(row)
    _check(cumsum(fl), want, pa.list_(pa.float64()))


def test_string_rows_and_scalar_nulls_propagate():
    rows = pa.array([["ab", "", "é"], None, [], ["c"]] * 3, pa.list_(pa.string()))
    for start in (0, 1, 5):
        sl = rows.slice(start)
        want = [None if r is None else [v.upper() for v in r if v] for r in sl.to_pylist()]
        _check(shout(sl), want, pa.list_(pa.string()))
    s = pa.array(["a bc", None, "", "déf g h", None] * 3)
    for start in range(8):
        sl = s.slice(start)
        want = [None if v is None else [len(w) for w in v.split(" ")] for v in sl.to_pylist()]
        _check(lengths(sl), want, pa.list_(pa.int64()))


def test_pandas_series_in_give_arrow_list_series_out():
    pd = pytest.importorskip("pandas")
    s = pd.Series(["a bc", None, "déf g"], index=[10, 20, 30], name="t",
                  dtype="string[pyarrow]")
    res = lengths(s)
    assert isinstance(res, pd.Series) and res.name == "t"
    assert list(res.index) == [10, 20, 30]
    assert res.dtype == pd.ArrowDtype(pa.list_(pa.int64()))
    assert res.isna().tolist() == [False, True, False]
    assert pa.array(res.array).to_pylist() == [[1, 2], None, [3, 1]]
    rows = pd.Series(pd.arrays.ArrowExtensionArray(pa.array([[1, 2], None, [], [3]])),
                     index=list("abcd"))
    res = doubled(rows)
    assert list(res.index) == list("abcd")
    assert isinstance(res.dtype, pd.ArrowDtype)
    assert pa.array(res.array).to_pylist() == [[2, 4], None, None, [6]]
    res = words(pd.Series(["x  y", None, ""], dtype="string[python]"))
    assert isinstance(res.dtype, pd.ArrowDtype)
    assert pa.array(res.array).to_pylist() == [["x", None, "y"], None, None]


def test_nulls_inside_rows_make_a_null_row():
    a = pa.array([[1, None], [2], None, []], pa.list_(pa.int64()))
    _check(plus_one(a), [None, [3], None, []], pa.list_(pa.int64()))


def test_ckernels_arrays_and_export():
    a = ckernels.asarray(pa.array(ROWS, pa.list_(pa.int64())))
    res = doubled(a)
    assert str(res.type).endswith(" * ?var * int64")
    want = [_doubled(r) for r in ROWS]
    assert res.tolist() == want
    assert res.null_count == sum(w is None for w in want)
    _check(pa.array(res), want, pa.list_(pa.int64()))
    na = pytest.importorskip("nanoarrow")
    c = na.c_array(res)              # nanoarrow's full validation of the exported nodes
    v = c.view()
    kids = [na.c_array_from_buffers(c.schema.child(0), v.child(0).length,
                                    [v.child(0).buffer(i) for i in range(v.child(0).n_buffers)],
                                    offset=v.child(0).offset, validation_level="full")]
    na.c_array_from_buffers(c.schema, v.length, [v.buffer(i) for i in range(v.n_buffers)],
                            null_count=v.null_count, offset=v.offset, children=kids,
                            validation_level="none")    # (structural: pyarrow's above)
    assert v.null_count == res.null_count


def test_out_keyword_into_null_rows():
    a = ckernels.asarray(pa.array(ROWS, pa.list_(pa.int64())))
    out = doubled(a)
    again = doubled(a, out=out)
    assert again is out and out.tolist() == [_doubled(r) for r in ROWS]


def test_errors():
    a = pa.array([[1]], pa.list_(pa.int64()))
    with pytest.raises(ValueError, match="a null row holds none"):
        bad_null(a)
    with pytest.raises(ValueError, match="declare the result \\?var \\* R"):
        plain_null(a)
    # rows under an outer var dim: separate allocations, no bitmap covers them
    assert doubled(ckernels.array([[[1], [2, 3]], [[4]]])).tolist() == [[[2], [4, 6]], [[8]]]
    with pytest.raises(NotSupportedError, match="1 null rows under a var dim"):
        doubled(ckernels.array([[[1], [], [2, 3]], [[4]]]))
    with pytest.raises(NotSupportedError, match="one var dim"):
        ckernels.jit("?3 * int64(int64)")(lambda x: None)
    with pytest.raises(TypeError, match="does not fit"):
        ckernels.jit("?var * int64(int64)")(lambda x: x)
