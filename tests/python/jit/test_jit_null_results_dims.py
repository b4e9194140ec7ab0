"""Option elements in dimensioned results of the CPU jit (docs/nulls.md,
"Option elements under dims"): ``var * ?R`` (numbers, bool), ``var * ?string``
and ``N * ?string`` results, returned (a list, tuple, array or option row with
``None`` for a null) or written through an output parameter
(``out.append(None)``, ``out[i] = None``).  The oracle is the same Python
function run on ``to_pylist()`` rows; the result is Arrow's layout (a list
whose child values carry a validity bitmap).  Functions are compiled once,
at module level."""

from __future__ import annotations

import numpy as np
import pytest

import ckernels
from ckernels.errors import CKValueError, NotSupportedError

pa = pytest.importorskip("pyarrow")
pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


def _halves(row):
    return [None if v is None or v < 0 else v / 2.0 for v in row]


def _ffill(row, out):
    last = None
    for v in row:
        if v is not None:
            last = v
        out.append(last)


def _positive(row):
    out = []
    for v in row:
        out.append(None if v is None else v > 0)
    return out


def _tokens(s):
    # the split form, [p if p else None for p in s.split(",")], runs in
    # docs/nulls.md; a cheaper body here keeps the compile short
    return [p if p else None for p in [s, "", s]]


def _tokens_out(s, out):
    if s:
        out.append(s)
    out.append(None)
    if s != "a":
        out.append(s)


def _three(s):
    return [s, None if not s else s, None]


def _checked(row):
    out = []
    for v in row:
        if v is not None and v > 100.0:
            raise ValueError("a value over 100")
        out.append(v)
    return out


halves = ckernels.jit("var * ?float64(var * ?float64)")(_halves)
ffill = ckernels.jit("var * ?float64(var * ?float64)")(_ffill)
positive = ckernels.jit("var * ?bool(var * ?int64)")(_positive)
tokens = ckernels.jit("var * ?string(string)")(_tokens)
tokens(ckernels.array([None], dtype="?string"))      # its null variant, kept: made here
tokens_out = ckernels.jit("var * ?string(string)")(_tokens_out)
three = ckernels.jit("3 * ?string(string)")(_three)
checked = ckernels.jit("var * ?float64(var * ?float64)")(_checked)


@ckernels.jit("var * ?float64(var * ?float64)")
def same(row):
    return row                            # an option row: returned as it is


@ckernels.jit("N * ?string(N * ?string)")
def upper_out(row, out):
    for i in range(len(row)):
        v = row[i]
        out[i] = None if v is None or v == "b" else v


def py_out(fn, row):
    out = []
    fn(row, out)
    return out


def _rows_strategy(values):
    return st.lists(st.lists(st.one_of(st.none(), values), max_size=12), max_size=25)


FLOATS = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(rows=_rows_strategy(FLOATS), offset=st.integers(0, 7))
def test_var_option_float_results_match_python(rows, offset):
    pad = [[1.0, None]] * offset
    a = pa.array(pad + rows, type=pa.list_(pa.float64())).slice(offset)
    expect = [_halves(r) for r in a.to_pylist()]
    res = halves(a)
    assert isinstance(res, pa.ListArray)
    assert res.to_pylist() == expect
    res.validate(full=True)
    assert ffill(a).to_pylist() == [py_out(_ffill, r) for r in a.to_pylist()]
    assert same(a).to_pylist() == a.to_pylist()


@settings(max_examples=20, deadline=None)
@given(rows=_rows_strategy(st.integers(-5, 5)), offset=st.integers(0, 7))
def test_var_option_bool_results_on_ckernels_arrays(rows, offset):
    a = pa.array([[0]] * offset + rows, type=pa.list_(pa.int64())).slice(offset)
    res = positive(ckernels.asarray(a))
    assert str(res.type.dtype) == "?bool" and str(res.type).endswith("var * ?bool")
    expect = [_positive(r) for r in a.to_pylist()]
    assert res.tolist() == expect
    assert res.null_count == sum(v is None for r in expect for v in r)
    assert pa.array(res).to_pylist() == expect


TEXT = st.text(alphabet="ab ,é", max_size=10)


@settings(max_examples=25, deadline=None)
@given(strs=st.lists(TEXT, max_size=20), offset=st.integers(0, 7))
def test_var_option_string_results_match_python(strs, offset):
    a = pa.array(["x"] * offset + strs, type=pa.string()).slice(offset)
    got = tokens(a)
    assert got.type.value_type in (pa.string(), pa.large_string())
    assert got.to_pylist() == [_tokens(s) for s in strs]
    got.validate(full=True)
    assert tokens_out(ckernels.asarray(a)).tolist() == [py_out(_tokens_out, s) for s in strs]


def test_fixed_option_string_results():
    strs = ["ab", "", "Éc", "x"]
    assert three(ckernels.array(strs)).tolist() == [_three(s) for s in strs]
    assert three(pa.array(strs)).to_pylist() == [_three(s) for s in strs]
    rows = [["a", None, "bé"], [None, None, None], ["", "b", None]]
    res = upper_out(ckernels.array(rows))
    assert str(res.type).endswith(" * ?string") and res.shape == (3, 3)
    assert res.tolist() == [[None if v is None or v == "b" else v for v in r] for r in rows]


def test_empty_and_all_null_rows():
    a = pa.array([[], [None, None], [], None if False else [None]],
                 type=pa.list_(pa.float64()))
    assert halves(a).to_pylist() == [[], [None, None], [], [None]]
    assert halves(pa.array([], type=pa.list_(pa.float64()))).to_pylist() == []
    b = ckernels.asarray(pa.array([[None, None]], type=pa.list_(pa.float64())))
    res = ffill(b)
    assert res.tolist() == [[None, None]] and res.null_count == 2
    assert tokens(ckernels.array(["", ""])).tolist() == [[None, None, None]] * 2


def test_results_over_outer_dims():
    # a 2-d operand of rows: the result's rows under two outer dims
    a = ckernels.array([[[1.0, None], [-2.0]], [[], [4.0, 8.0]]])
    assert str(halves(a).type).endswith("var * ?float64")
    assert halves(a).tolist() == [[[0.5, None], [None]], [[], [2.0, 4.0]]]


def test_an_error_in_one_row_names_the_element():
    a = pa.array([[1.0, None], [], [5.0, 500.0], [2.0]])
    with pytest.raises(CKValueError, match=r"over 100.*element 2"):
        checked(a)
    assert checked(pa.array([[1.0, None]])).to_pylist() == [[1.0, None]]


def test_out_keyword_takes_the_result():
    a = ckernels.asarray(pa.array([[1.0, None], [-4.0]]))
    out = ckernels.array([[0.0, 0.0], [None]], dtype="?float64")   # the result's rows
    assert str(out.type).endswith("var * ?float64")
    halves(a, out=out)
    assert out.tolist() == [[0.5, None], [None]]


def test_plain_arguments_with_nulls():
    # a null in a plain scalar argument: a null row out (?var * ?string, the
    # variant of var * ?string(string); test_jit_null_rows_results.py)
    assert tokens(ckernels.array(["a,b", None])).tolist() == [_tokens("a,b"), None]
    with pytest.raises(NotSupportedError, match=r"null-able rows are one var dim"):
        ckernels.jit("?3 * ?float64(var * ?float64)")(lambda r: r)


def test_numpy_out_of_the_values():
    a = ckernels.asarray(pa.array([[1.0, 3.0], [5.0]]))
    res = halves(a)
    assert res.null_count == 0
    assert [np.asarray(r).tolist() for r in res.tolist()] == [[0.5, 1.5], [2.5]]
