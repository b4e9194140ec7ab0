"""Host arrays agree with NumPy where a user would trip (the third hardening
round): NumPy dtype strings and codes, creation defaults, mean of float16 and
of empty axes, buffers, axis errors, element assignment of sequences, index
tuples, huge slice bounds, NumPy scalars from full reductions, and NumPy
functions that write into their argument (they write into the Array or raise)."""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np
import pytest

import ckernels
from ckernels import errors, ops


@pytest.mark.parametrize("spec, want", [("f4", np.float32), ("i2", np.int16), ("<f8", np.float64),
                                        ("d", np.float64), ("u1", np.uint8), ("c8", np.complex64)])
def test_numpy_dtype_strings_and_codes(spec, want):
    assert ckernels.zeros(3, dtype=spec).dtype == want
    assert ckernels.zeros(3, spec).dtype == want
    assert ckernels.ones(2).astype(spec).dtype == want
    assert ckernels.array([1, 2], dtype=spec).dtype == want
    with pytest.raises(errors.ParseError):
        ckernels.zeros(3, "not-a-type")


def test_creation_defaults_and_shapes():
    assert ckernels.ones(3).dtype == np.float64 and ckernels.ones(3).tolist() == [1.0] * 3
    assert ckernels.ones(3, "int8").dtype == np.int8
    assert ckernels.ones(np.array(3)).shape == (3,)
    assert ckernels.zeros(np.int64(2)).shape == (2,)


def test_mean_float16_and_empty():
    x = ckernels.ones(70000, "float16")            # float16 sums overflow at 65504
    m = np.mean(x)
    assert m == np.mean(np.ones(70000, np.float16)) == 1.0 and m.dtype == np.float16
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        r = np.mean(ckernels.zeros((0, 3)), axis=0)
    assert np.isnan(r.to_numpy()).all()


def test_memoryview_is_a_buffer():
    assert ckernels.array(memoryview(b"abc")).tolist() == [97, 98, 99]
    a = ckernels.array(memoryview(np.arange(6.0).reshape(2, 3)))
    assert a.dtype == np.float64 and a.shape == (2, 3)


def test_axis_errors():
    x = ckernels.zeros((2, 3))
    with pytest.raises(np.exceptions.AxisError):
        x.swapaxes(4, 0)
    with pytest.raises(np.exceptions.AxisError):
        x.swapaxes(0, -3)
    assert x.swapaxes(1, -2).shape == (3, 2) and x.swapaxes(1, 1).shape == (2, 3)


def test_sequence_into_one_element_is_refused():
    x = ckernels.zeros(3)
    for v in ([1], (1,), np.array([1.0]), ckernels.array([1.0])):
        with pytest.raises(ValueError, match="setting an array element with a sequence"):
            x[0] = v
    x[0] = np.float64(2.0)
    x[1:2] = [3.0]
    assert x.tolist() == [2.0, 3.0, 0.0]


def test_index_tuples():
    x = ckernels.zeros((2, 3))
    x[:, (0,)] = 2.0
    x[:, (1, 2)] = [[3.0, 4.0], [5.0, 6.0]]
    assert x.tolist() == [[2.0, 3.0, 4.0], [2.0, 5.0, 6.0]]
    assert x[:, (2, 0)].tolist() == [[4.0, 2.0], [6.0, 2.0]]
    P = namedtuple("P", "row col")
    assert x[P(1, 2)] == 6.0                      # a tuple subclass is a tuple
    x[P(0, slice(None))] = 7.0
    assert x[0].tolist() == [7.0] * 3


def test_ravel_orders():
    a = np.arange(12.0).reshape(3, 4)
    x = ckernels.asarray(a)
    for order in "CFAK":
        np.testing.assert_array_equal(x.ravel(order=order).to_numpy(), a.ravel(order=order))
        np.testing.assert_array_equal(x.T.ravel(order=order).to_numpy(), a.T.ravel(order=order))
        np.testing.assert_array_equal(x[:, ::2].ravel(order=order).to_numpy(),
                                      a[:, ::2].ravel(order=order))
    with pytest.raises(ValueError, match="order must be"):
        x.ravel(order="Q")


@pytest.mark.parametrize("key", [slice(None, None, 2 ** 63), slice(2 ** 63, None),
                                 slice(-2 ** 64, 3), slice(None, None, -2 ** 70),
                                 slice(-2 ** 80, 2 ** 80, 2), slice(2 ** 64, -2 ** 64, -1)])
def test_huge_slice_bounds_clamp(key):
    a = np.arange(5)
    x = ckernels.array(a)
    assert x[key].tolist() == a[key].tolist()
    assert x[key, ...].tolist() == a[key, ...].tolist()


def test_full_reductions_of_numpy_operands_are_numpy_scalars():
    assert type(ops.sum(np.arange(3.0))) is np.float64
    assert type(ops.max(np.arange(3, dtype=np.int16))) is np.int16
    assert type(ops.sum(ckernels.array([1.0, 2.0]))) is np.float64


def _num():
    return ckernels.zeros(4)


def _str():
    return ckernels.array(["a", "b", "c", "d"])


#: NumPy functions that write into their argument: (name, call, NumPy oracle input)
WRITERS = [
    ("put", lambda x, v: np.put(x, [0, 2], v)),
    ("putmask", lambda x, v: np.putmask(x, [True, False, True, False], v)),
    ("place", lambda x, v: np.place(x, [True, False, False, True], [v])),
    ("copyto", lambda x, v: np.copyto(x, v, where=np.array([False, True, False, False]))),
    ("put_along_axis", lambda x, v: np.put_along_axis(x, np.array([3]), v, axis=0)),
    ("add.at", lambda x, v: np.add.at(x, [1, 1], v)),
    ("take out=", lambda x, v: np.take(np.array([v, v, v, v], dtype=x.dtype), [0, 1, 2, 3],
                                       out=x)),
]


@pytest.mark.parametrize("name, call", WRITERS, ids=[w[0] for w in WRITERS])
@pytest.mark.parametrize("make, value", [(_num, 5.0), (_str, "z")], ids=["float64", "string"])
def test_numpy_functions_write_into_the_array(name, call, make, value):
    x = make()
    want = x.to_numpy().copy()
    if want.dtype.kind == "T":         # the oracle on objects: numpy.place crashes on
        want = want.astype(object)     # StringDType (NumPy 2.4)
    try:
        call(want, value)
    except TypeError:          # NumPy itself has no such loop (add.at on strings)
        with pytest.raises(TypeError):
            call(x, value)
        return
    call(x, value)
    assert x.tolist() == want.tolist()


def test_fill_diagonal_and_read_only():
    x = ckernels.zeros((3, 3))
    np.fill_diagonal(x, 1.0)
    assert x.tolist() == np.eye(3).tolist()
    s = ckernels.array([["a", "b"], ["c", "d"]])
    np.fill_diagonal(s, "z")
    assert s.tolist() == [["z", "b"], ["c", "z"]]
    for r in (ckernels.zeros(3), ckernels.array(["a", "b", "c"])):
        r.set_readonly()
        with pytest.raises(ValueError, match="read-only"):
            np.put(r, [0], r[1])


def test_out_is_never_broadcast():
    x = ckernels.array(1.0)
    f = ckernels.jit("float64(float64, float64)")(lambda a, b: a + b)
    for call in (lambda: np.add(x, [1], x), lambda: ops.add(x, [1], out=x),
                 lambda: x.__iadd__([1]), lambda: f(x, [1.0], out=x),
                 lambda: ops.add(ckernels.zeros(3), ckernels.zeros((1, 3)),
                                 out=ckernels.zeros(3))):
        with pytest.raises(ValueError, match="non-broadcastable output operand"):
            call()
    assert x.tolist() == 1.0
    out = ckernels.zeros((2, 3))
    assert ops.add(out, [1.0, 2.0, 3.0], out=out).tolist() == [[1.0, 2.0, 3.0]] * 2


def test_huge_integer_index_is_an_index_error():
    x = ckernels.arange(5)
    for k in (2 ** 64, -2 ** 70, 2 ** 63):
        with pytest.raises(IndexError, match=f"index {k} is out of bounds"):
            x[k]
        with pytest.raises(IndexError):
            x[k] = 1


@pytest.mark.parametrize("kind", ["cpu", "opencl"])
def test_context_creation_takes_numpys_signatures(kind, new_opencl_context):
    ctx = ckernels.Context("cpu") if kind == "cpu" else new_opencl_context()
    a = ctx.empty((2, 3), dtype="float32")
    assert a.shape == (2, 3) and a.dtype == np.float32
    assert ctx.empty(shape=4, dtype="int8").shape == (4,)
    assert ctx.zeros(3, dtype="i2").to_numpy().tolist() == [0, 0, 0]
    assert ctx.zeros(3, dtype="i2").dtype == np.int16
    assert ctx.ones((2,)).to_numpy().tolist() == [1.0, 1.0] and ctx.ones(2).dtype == np.float64
    assert ctx.full(2, 7.5, dtype=np.float64).to_numpy().tolist() == [7.5, 7.5]
    with pytest.raises(ValueError, match="dtype given twice"):
        ctx.empty(3, "int8", dtype="int8")


@pytest.mark.parametrize("make", [
    lambda t: ckernels.empty((2, 3), type=t), lambda t: ckernels.zeros(2, type=t),
    lambda t: ckernels.full((2, 3), 1.0, type=t), lambda t: ckernels.empty((), type=t),
    lambda t: ckernels.empty_like(ckernels.zeros(3), type=t),
    lambda t: ckernels.array([1.0, 2.0], type=t),
    lambda t: ckernels.asarray(np.zeros(2), type=t)])
@pytest.mark.parametrize("t", ["N * float64", "2 * N * float64", "N * M * int8"])
def test_pattern_types_are_refused_by_array_creation_saying_why(make, t):
    """A type with a dimension variable is a signature pattern, never an
    array's type: the library's error says so (not a shape mismatch)."""
    with pytest.raises(errors.CKTypeError, match="is a pattern type: the dimension variable"):
        make(t)
