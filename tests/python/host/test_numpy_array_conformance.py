"""NumPy's own array tests (test_indexing, test_dlpack, test_multiarray's
indexing/assignment/creation classes) with ckernels arrays in place of
ndarrays, run by ``tools/numpy_array_conformance.py`` in a subprocess: every
test passes except those listed with their causes in
``numpy_array_divergences.txt``, and every listed one still fails (a listed
divergence that went away is a list to update).  Also the fixes those runs
found, each checked against NumPy."""

import importlib.util
import operator
import os

import numpy as np
import pytest

import ckernels
from ckernels.errors import CKTypeError

HERE = os.path.dirname(__file__)
TOOL = os.path.join(HERE, "..", "..", "..", "tools", "numpy_array_conformance.py")
LIST = os.path.join(HERE, "numpy_array_divergences.txt")


def listed():
    """(NumPy major.minor the list was recorded with, {test id: cause})."""
    version, causes = None, {}
    with open(LIST) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("numpy "):
                version = line.split()[1]
                continue
            test, _, cause = line.partition("  |  ")
            assert cause, f"{LIST}: no cause given for {test}"
            assert test not in causes, f"{LIST}: {test} listed twice"
            causes[test] = cause
    return version, causes


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("numpy_array_conformance", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_numpys_array_tests_fail_only_where_listed(tool):
    version, causes = listed()
    installed = ".".join(np.__version__.split(".")[:2])
    if installed != version:
        pytest.skip(f"{LIST} was recorded with NumPy {version}, this is {installed}: "
                    f"rerun tools/numpy_array_conformance.py --failures and update it")
    outcomes, output = tool.run(tool.DEFAULT, timeout=600)
    assert len(outcomes) > 200, output[-3000:]
    failing = {t for t, o in outcomes.items() if o in ("failed", "error")}
    new = sorted(failing - set(causes))
    assert not new, ("NumPy's tests that pass with ndarrays now fail with ckernels arrays "
                     "(fix them, or list them with their cause in "
                     f"numpy_array_divergences.txt): {new}")
    gone = sorted(set(causes) - failing)
    assert not gone, ("listed divergences no longer fail (passing or not run): remove "
                      f"them from numpy_array_divergences.txt: {gone}")
    assert sum(o == "passed" for o in outcomes.values()) >= 214


# ---- the fixes those runs found (NumPy is the oracle) ------------------------------
def test_slice_bounds_that_are_no_integers_are_type_errors():
    x = np.array([[5]])
    a = ckernels.asarray(x)
    for key in [slice(0.0, None), (slice(None), slice(0.0, 2)), slice(None, 1.0),
                slice(None, None, 1.0), slice(a, a, a), slice(np.float64(1), None)]:
        with pytest.raises(TypeError):
            x[key]
        with pytest.raises(CKTypeError, match="slice indices must be integers"):
            a[key]
        with pytest.raises(CKTypeError, match="slice indices must be integers"):
            a[key] = 1


def test_integer_and_zero_d_array_keys_for_every_dim_give_numpys_scalar():
    class Zero:
        def __index__(self):
            return 0

    class ArrayLike0:
        def __array__(self, dtype=None, copy=None):
            return np.array(0)

    x = np.arange(6.0).reshape(2, 3)
    a = ckernels.asarray(x)
    for key in [(Zero(), np.array(0)), (Zero(), ArrayLike0()), (np.array(1), np.array(2)),
                (1, np.array(-1, dtype=np.int8))]:
        want = x[key]
        got = a[key]
        assert type(got) is type(want) is np.float64 and got == want
    r = a[np.array(1)]   # one 0-d array: a row, a copy (as NumPy)
    assert isinstance(r, ckernels.Array) and r.tolist() == x[np.array(1)].tolist()


@pytest.mark.parametrize("shape", [(True, -1), (np.True_, -1), (False,), True])
def test_bools_are_no_sizes(shape):
    x = np.arange(3.0)
    a = ckernels.asarray(x)
    with pytest.raises(TypeError):
        np.reshape(x, shape)
    with pytest.raises(TypeError):
        np.reshape(a, shape)
    with pytest.raises(TypeError):
        a.reshape(shape)
    with pytest.raises(TypeError):
        np.zeros(shape)
    with pytest.raises(TypeError):
        ckernels.zeros(shape)
    assert operator.index(np.int8(2)) == 2 and a.reshape(np.int8(3)).shape == (3,)


def test_take_and_repeat_methods_as_numpys():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = ckernels.asarray(x)
    for args, kw in [(([0, 2],), {}), (([[1], [3]],), {"axis": 1}), (([5, -1],), {}),
                     (([7, 40],), {"mode": "wrap"}), (([7, 40],), {"mode": "clip", "axis": 0})]:
        got = a.take(*args, **kw)
        want = x.take(*args, **kw)
        assert isinstance(got, ckernels.Array) and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    out = ckernels.zeros(2, "int32")
    assert a.take([1, 2], out=out) is out and out.tolist() == [1, 2]
    with pytest.raises(IndexError):
        a.take([12])
    for args, kw in [((2,), {}), ((2,), {"axis": 0}), (([1, 0, 2],), {"axis": 0})]:
        np.testing.assert_array_equal(np.asarray(a.repeat(*args, **kw)),
                                      x.repeat(*args, **kw))
    assert isinstance(a.repeat(2), ckernels.Array)
