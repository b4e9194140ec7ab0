"""Option arrays of more than one dim on devices (``2 * 3 * ?float64``,
``docs/nulls.md`` "On devices"): uploads from host ``?T`` arrays and nested
lists, transfers, views, ``tolist``, operators and jitted functions against
the host arrays and the CPU jit, and the refusals."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.nulls import DeviceOptionArray
from ckernels.errors import CKIndexError, NotSupportedError

SETTINGS = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


@ckernels.jit("float64(float64, float64)")
def affine(x, y):
    return x * 2.0 + y


@ckernels.jit("?int64(?int64)")
def fill(x):
    if x is None:
        return -1
    return x * 3


def _nested(flat, shape):
    if len(shape) == 1:
        return list(flat)
    k = len(flat) // shape[0]
    return [_nested(flat[i * k:(i + 1) * k], shape[1:]) for i in range(shape[0])]


@st.composite
def nd_ints(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=2, max_size=3)))
    n = int(np.prod(shape))
    flat = draw(st.lists(st.one_of(st.none(), st.integers(-20, 20)), min_size=n, max_size=n))
    return shape, flat


def test_surface_of_a_2d_option_array(ctx):
    h = ckernels.array([[1.5, None, 3.0], [None, 5.0, 6.0]])
    d = ctx.array(h)
    assert isinstance(d, DeviceOptionArray)
    assert d.shape == (2, 3) and d.ndim == 2 and d.size == 6 and len(d) == 2
    assert str(d.type) == "2 * 3 * ?float64" and str(h.type).endswith("* ?float64")
    assert d.tolist() == h.tolist() and d.get().tolist() == h.tolist()
    assert str(d.get().type).endswith("3 * ?float64") and d.get().shape == (2, 3)
    assert d.null_count == 2 and "(2, 3)" in repr(d) and "2 nulls" in repr(d)
    assert d.is_null().tolist() == [[False, True, False], [True, False, False]]
    assert d[1].tolist() == [None, 5.0, 6.0] and d[-1].bit_offset == 3
    assert d[0, 1] is None and d[1, 2] == 6.0 and d[-1, -3] is None
    assert d[1:].tolist() == [[None, 5.0, 6.0]] and d[1:].shape == (1, 3)
    assert d.copy().tolist() == d.tolist() and d.reshape(-1).tolist() == \
        [1.5, None, 3.0, None, 5.0, 6.0]
    assert d.reshape(3, 2).tolist() == [[1.5, None], [3.0, None], [5.0, 6.0]]
    assert ckernels.Context("cpu").array(d).tolist() == h.tolist()
    assert ctx.array([[1, None], [None, 4]]).tolist() == [[1, None], [None, 4]]
    assert str(d) == "[[1.5, None, 3.0], [None, 5.0, 6.0]]"
    assert d.sum() == 15.5 and d.mean() == 15.5 / 4
    import pickle
    assert pickle.loads(pickle.dumps(d)).tolist() == d.tolist()


def test_3d(ctx):
    vals = [None if i % 5 == 1 else i for i in range(24)]
    h = ckernels.array(_nested(vals, (2, 3, 4)), type="2 * 3 * 4 * ?int32")
    d = ctx.array(h)
    assert d.shape == (2, 3, 4) and d.tolist() == h.tolist()
    assert d[1].shape == (3, 4) and d[1][2].tolist() == h.tolist()[1][2]
    assert d[1, 2, 3] == h.tolist()[1][2][3]
    assert (d + 1).tolist() == _nested([None if v is None else v + 1 for v in vals], (2, 3, 4))


@SETTINGS
@given(case=nd_ints())
def test_operators_and_jit_match_the_host(ctx, case):
    shape, flat = case
    h = ckernels.array(_nested(flat, shape), type=" * ".join(map(str, shape)) + " * ?int64")
    d = ctx.array(h)
    assert d.tolist() == h.tolist()
    want = _nested([None if v is None else v * 2 - 3 for v in flat], shape)
    assert (d * 2 - 3).tolist() == want
    assert (d * d).tolist() == _nested([None if v is None else v * v for v in flat], shape)
    hf = ckernels.array(_nested([None if v is None else v / 2 for v in flat], shape),
                        type=" * ".join(map(str, shape)) + " * ?float64")
    got = affine(ctx.array(hf), ctx.array(hf))
    assert got.shape == shape and got.tolist() == affine(hf, hf).tolist()
    plain = ctx.array(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))
    assert affine(ctx.array(hf), plain).tolist() == \
        affine(hf, np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)).tolist()
    assert fill(d).tolist() == fill(h).tolist()


def test_refusals(ctx):
    d = ctx.array(ckernels.array([[1, None], [2, 3]]))
    with pytest.raises(NotSupportedError, match="one integer per dim"):
        d[:, 0]
    with pytest.raises(CKIndexError):
        d[2]
    with pytest.raises(NotSupportedError, match="one dim"):
        d.__arrow_c_device_array__()
    assert ctx.array(ckernels.asarray(d.reshape(-1).get())).tolist() == [1, None, 2, 3]
    with pytest.raises(NotSupportedError, match="axis"):
        d.sum(axis=0)
    with pytest.raises(NotSupportedError, match="string"):
        ctx.array(ckernels.array([["a", None], ["b", "c"]]))
    with pytest.raises(NotSupportedError, match="shape"):
        d + ctx.array(np.ones(4, np.int64))
