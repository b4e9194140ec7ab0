"""Run-time errors inside jitted functions name the failing element (its index
in the result's dims, outermost first) and the user's ``file:line``, on every
CPU path (NumPy ufunc and gufunc loops, ckernels arrays, var dims, strings,
threads) and on OpenCL (PoCL).  The oracle for the element is NumPy: the
first element where the function's Python version raises.

The functions are compiled once, at import."""

import re

import numpy as np
import pytest

import ckernels
from ckernels import errors

FILE = __file__


def _line(fn, text):
    """The line of ``fn``'s source holding ``text``."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def _where(exc):
    """(function, file, line, element) from an error message."""
    m = re.search(r"\[(\w+) at (.+):(\d+)(?:, element (\(?[\d, ]+\)?))?\]$", str(exc))
    assert m is not None, str(exc)
    el = m.group(4)
    if el is not None:
        el = tuple(int(v) for v in el.strip("()").split(",") if v.strip())
        el = el[0] if len(el) == 1 else el
    return m.group(1), m.group(2), int(m.group(3)), el


def _py_first_failure(py, arr):
    """The index of the first element (C order) where ``py`` raises."""
    for idx in np.ndindex(arr.shape):
        try:
            py(arr[idx])
        except Exception:
            return idx[0] if len(idx) == 1 else idx
    raise AssertionError("no element fails")


# ---------------------------------------------------------------- kernels --
def _too_big(x):
    if x > 10:
        raise ValueError("too big")
    return x * 2


too_big = ckernels.jit("float64(float64)")(_too_big)


@ckernels.jit("float64(float64)")
def table(x):
    t = [1.0, 2.0, 3.0]
    return t[int(x)]                         # getitem out of range


@ckernels.jit("int64(string)")
def third(s):
    return ord(s[2])                         # string index out of range


@ckernels.jit("float64(N * float64)")
def pick(r):
    t = [1.0, 2.0]
    return t[int(r[0])]                      # getitem out of range


@ckernels.jit("float64(var * float64)")
def row_check(r):
    s = 0.0
    for x in r:
        if x < 0:
            raise ValueError("negative in row")
        s += x
    return s


@ckernels.jit("float64(N * float64)")
def first_pos(r):
    if r[0] < 0:
        raise ValueError("negative first")
    return r[0]


@ckernels.jit("float64(float64)")
def helper(x):
    if x > 10:
        raise ValueError("helper says no")
    return x


@ckernels.jit("float64(float64)")
def outer(x):
    y = x + 1.0
    return helper(y)                         # the outer function's line


# ------------------------------------------------------------------- tests --
@pytest.mark.parametrize("make", [
    lambda: np.arange(20.0),
    lambda: np.arange(24.0).reshape(4, 6)[:, ::2],
    lambda: np.arange(24.0).reshape(4, 6).T,
    lambda: np.arange(24.0).reshape(2, 3, 4)[:, ::-1],
    lambda: ckernels.asarray(np.arange(24.0).reshape(4, 6)[::-1, 1:]),
    lambda: (np.arange(300000.0) % 1000.0)[::-1],          # threads
], ids=["1d", "strided", "transposed", "3d_reversed", "ckernels", "large"])
def test_user_raise_names_line_and_element(make):
    a = make()
    with pytest.raises(ValueError, match="too big") as ei:
        too_big(a)
    assert isinstance(ei.value, errors.CKValueError)
    fn, path, line, el = _where(ei.value)
    assert (fn, path, line) == ("_too_big", FILE, _line(_too_big, "raise ValueError"))
    arr = np.asarray(a)
    if arr.size < 1000:
        assert el == _py_first_failure(_too_big, arr)
    else:       # threads: some failing element
        assert arr[el] > 10


def test_out_parameter_and_scalar_calls():
    out = np.zeros(10)
    with pytest.raises(ValueError) as ei:
        too_big(np.arange(10.0) * 3, out=out)
    assert _where(ei.value)[3] == 4
    with pytest.raises(ValueError) as ei:     # a scalar: no element
        too_big(11.0)
    assert "_too_big at" in str(ei.value)


def test_internal_errors_name_the_users_line():
    with pytest.raises(IndexError, match="getitem out of range") as ei:
        table(np.array([0.0, 1.0, 2.0, 3.0, 1.0]))
    assert _where(ei.value) == ("table", FILE, _line(table.py_func, "return t[int(x)]"), 3)


def test_strings():
    with pytest.raises(IndexError, match="string index out of range") as ei:
        third(["abc", "xyz", "é", "東京都"])
    assert _where(ei.value) == ("third", FILE, _line(third.py_func, "ord(s[2])"), 2)
    with pytest.raises(IndexError) as ei:     # NumPy text: the same element
        third(np.array(["abc", "x", "xyz"]))
    assert _where(ei.value)[3] == 1


def test_dims_and_var_dims():
    m = np.array([[0.0, 1.0], [1.0, 0.0], [5.0, 0.0], [7.0, 0.0]])
    with pytest.raises(IndexError) as ei:     # the NumPy gufunc path
        pick(m)
    assert _where(ei.value) == ("pick", FILE, _line(pick.py_func, "return t[int(r[0])]"), 2)
    with pytest.raises(IndexError) as ei:     # outer dims (2, 4), core dim 2
        pick(np.stack([m[::-1], m]))
    assert _where(ei.value)[3] == (0, 0)
    with pytest.raises(ValueError) as ei:     # the ckernels-array path
        first_pos(ckernels.asarray(np.array([[1.0, 2.0], [3.0, 1.0], [-3.0, 1.0]])))
    assert _where(ei.value)[2:] == (_line(first_pos.py_func, "raise ValueError"), 2)
    rows = ckernels.array([[1.0, 2.0], [], [3.0, -1.0], [-2.0]], type="var * var * float64")
    with pytest.raises(ValueError, match="negative in row") as ei:
        row_check(rows)
    assert _where(ei.value) == ("row_check", FILE,
                                _line(row_check.py_func, "raise ValueError"), 2)


def test_nested_function_names_the_call_site():
    with pytest.raises(ValueError, match="helper says no") as ei:
        outer(np.array([1.0, 2.0, 30.0]))
    assert _where(ei.value) == ("outer", FILE, _line(outer.py_func, "return helper(y)"), 2)


def test_no_stale_location_after_an_error():
    with pytest.raises(ValueError):
        too_big(np.arange(20.0))
    with pytest.raises(errors.CKernelError) as ei:   # a library error, not a kernel's
        ckernels.asarray(np.arange(3.0)).reshape(4)
    assert "element" not in str(ei.value) and "_too_big" not in str(ei.value)


def test_opencl(new_opencl_context):
    ctx = new_opencl_context()
    with pytest.raises(ValueError, match="too big") as ei:
        too_big(ctx.array(np.arange(24.0).reshape(4, 6)))
    fn, path, line, el = _where(ei.value)
    assert (fn, path, line) == ("_too_big", FILE, _line(_too_big, "raise ValueError"))
    assert np.arange(24.0).reshape(4, 6)[el] > 10        # some failing element
    o = ctx.array(np.zeros((6, 4)))
    with pytest.raises(ValueError) as ei:
        too_big(ctx.array(np.arange(24.0).reshape(4, 6)).T, out=o)
    assert np.arange(24.0).reshape(4, 6).T[_where(ei.value)[3]] > 10
    with pytest.raises(ValueError, match="negative first") as ei:   # core dims
        first_pos(ctx.array(np.array([[1.0, 2.0], [3.0, -1.0], [-3.0, 1.0]])))
    assert _where(ei.value)[2:] == (_line(first_pos.py_func, "raise ValueError"), 2)
