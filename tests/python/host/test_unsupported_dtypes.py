"""NumPy dtypes with no ckernel type (issue 29): every entry point gives
ckernels' ``CKTypeError`` (a ``TypeError``) naming the dtype and what is
supported -- never a bare ``KeyError``/``IndexError`` (``ckernels.array`` of a
``datetime64`` array leaked ``KeyError: 'M'`` from ``host/convert.py``)."""

import numpy as np
import pytest

import ckernels
from ckernels import errors

UNSUPPORTED = {
    # datetime64/timedelta64 of the units Y..ns are time types (test_time_types.py);
    # a generic unit, multiples and units below ns have none
    "datetime64": np.array(["NaT", "NaT"], dtype="datetime64"),
    "datetime64[ps]": np.array([0, 1], dtype="datetime64[ps]"),
    "timedelta64": np.array([1, 2], dtype="timedelta64[5s]"),
    "longdouble": np.ones(2, dtype=np.longdouble),
    "clongdouble": np.ones(2, dtype=np.clongdouble),
    "struct of datetime64": np.zeros(2, dtype=[("t", "M8[fs]")]),
    "struct of object": np.zeros(2, dtype=[("o", "O")]),
    "2-d datetime64": np.zeros((2, 3), dtype="M8[as]"),
    "empty datetime64": np.zeros(0, dtype="M8[ps]"),
}
if np.dtype(np.longdouble) == np.dtype(np.float64):     # platforms where they are one
    del UNSUPPORTED["longdouble"], UNSUPPORTED["clongdouble"]


def _assert_clear(exc, dtype):
    assert type(exc) is errors.CKTypeError and isinstance(exc, TypeError)
    msg = str(exc)
    assert str(np.dtype(dtype)) in msg and "no ckernel equivalent" in msg
    assert "supported: bool, int8-int64" in msg and "float16/32/64" in msg


@pytest.mark.parametrize("entry", ["asarray", "array"])
@pytest.mark.parametrize("name", list(UNSUPPORTED))
def test_arrays_of_unsupported_dtypes(name, entry):
    v = UNSUPPORTED[name]
    with pytest.raises(errors.CKTypeError) as info:
        getattr(ckernels, entry)(v)
    dt = v.dtype if v.dtype.fields is None else v.dtype[0]
    _assert_clear(info.value, dt)


@pytest.mark.parametrize("make", [
    lambda v: ckernels.array(v, dtype="int64"),
    lambda v: ckernels.array(v[0]),
    lambda v: ckernels.asarray(v[0]),
    lambda v: ckernels.array([v[0], v[1]]),
    lambda v: ckernels.array([[v[0]], [v[1]]]),
    lambda v: ckernels.empty(2, v.dtype),
    lambda v: ckernels.array([1, 2]).astype(v.dtype),
    lambda v: ckernels.array([1, 2]).__setitem__(slice(None), v),
    lambda v: ckernels.types.from_numpy_dtype(v.dtype),
], ids=["array-dtype", "array-scalar", "asarray-scalar", "list-of-scalars", "nested",
        "empty", "astype", "setitem", "from_numpy_dtype"])
@pytest.mark.parametrize("name", ["datetime64", "timedelta64"])
def test_every_entry_point_names_the_dtype(name, make):
    v = UNSUPPORTED[name]
    with pytest.raises(errors.CKTypeError) as info:
        make(v)
    _assert_clear(info.value, v.dtype)


def test_jitted_function_of_a_datetime_array_is_a_clear_error():
    f = ckernels.jit(lambda x: x + 1)
    with pytest.raises(TypeError, match="datetime64"):
        f(UNSUPPORTED["datetime64"])
    with pytest.raises(errors.CKTypeError, match="datetime64"):
        f(ckernels.array([1.0, 2.0]), out=UNSUPPORTED["datetime64"].copy())
    # jitted functions do not take the time types yet: a clear error too
    with pytest.raises(TypeError, match="datetime"):
        f(np.array(["2020-01-01"], "M8[D]"))


def test_supported_kinds_still_convert():
    for v in (np.zeros(2, "V4"), np.array([b"ab"]), np.array(["ab"]),
              np.array(["a", "b"], dtype=object), np.ones(2, np.float16),
              np.array(["x"], dtype=np.dtypes.StringDType())):
        assert ckernels.array(v).tolist() == ckernels.asarray(v).tolist()
