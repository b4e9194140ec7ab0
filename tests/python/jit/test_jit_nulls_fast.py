"""The fast forms of null handling, with pyarrow.compute as the oracle:

* a jitted leaf that cannot fail runs over every slot in one call
  (``CK_NULLS_PROPAGATE_ALL_SLOTS``): the values under nulls (NaN, inf, any
  bytes) reach it, and never surface -- not in ``tolist``, ``repr``,
  ``pa.array``, ``to_numpy`` or ``fill_null``;
* a leaf that can raise or loop keeps the run-by-run form, so a value under a
  null never makes it raise or run long;
* ``ops.sum`` / ``mean`` / ``count`` of 1-d ``?float64`` read the bitmap
  directly (every bit offset, sliced arrays);
* ``repr`` of a 0-d null.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ckernels
from ckernels.errors import CKValueError


@ckernels.jit("float64(float64)")
def affine(x):
    return x * 2.0 + 1.0


@ckernels.jit("float64(float64, float64)")
def hyp(x, y):
    return x * x + y * y


@ckernels.jit("int64(int64)")
def floordiv(x):
    return 100 // x


@ckernels.jit("float64(float64)")
def recip(x):
    return 1.0 / x


@ckernels.jit("int64(int64)")
def triangle(n):
    s = 0
    for i in range(n):
        s += i
    return s


def _compiled(f):
    return list(f._compiled.values())


def _garbage_floats(n, seed):
    """A pa.Array of float64 with ~10% nulls and NaN / inf / huge values
    under them (what a producer may leave)."""
    rng = np.random.default_rng(seed)
    vals = rng.random(n)
    mask = rng.random(n) < 0.1
    under = np.array([np.nan, np.inf, -np.inf, 1e308])
    vals[mask] = under[np.arange(mask.sum()) % 4]
    bits = np.packbits(~mask, bitorder="little")
    arr = pa.Array.from_buffers(pa.float64(), n, [pa.py_buffer(bits.tobytes()),
                                                  pa.py_buffer(vals.tobytes())])
    return arr, vals, mask


def test_classification():
    affine(ckernels.array([1.0, None]))
    hyp(ckernels.array([1.0, None]), 2.0)
    floordiv(ckernels.array([1, None]))
    recip(ckernels.array([1.0, None]))
    triangle(ckernels.array([3, None]))
    assert [c.cannot_fail for c in _compiled(affine)] == [True]
    assert [c.cannot_fail for c in _compiled(hyp)] == [True]
    # checked division (ZeroDivisionError), a loop on the value: run by run
    assert [c.cannot_fail for c in _compiled(floordiv)] == [False]
    assert [c.cannot_fail for c in _compiled(recip)] == [False]
    assert [c.cannot_fail for c in _compiled(triangle)] == [False]


@pytest.mark.parametrize("offset", [0, 1, 3, 7])
def test_all_slots_matches_pyarrow(offset):
    arr, vals, mask = _garbage_floats(1000 + offset, offset)
    arr = arr.slice(offset)
    a = ckernels.asarray(arr)
    r = affine(a)
    assert str(r.type) == "strided * ?float64"
    want = pc.add(pc.multiply(arr, 2.0), 1.0)
    assert pa.array(r).equals(want)
    assert r.null_count == arr.null_count
    assert r.tolist() == want.to_pylist()
    # two operands, one plain
    r2 = hyp(a, np.arange(len(arr), dtype=np.float64))
    want2 = pc.add(pc.multiply(arr, arr), pa.array(np.arange(len(arr), dtype=np.float64) ** 2))
    np.testing.assert_allclose(np.asarray(pa.array(r2).fill_null(-1.0)),
                               np.asarray(want2.fill_null(-1.0)))


def test_values_under_nulls_never_surface():
    arr, vals, mask = _garbage_floats(64, 11)
    r = affine(ckernels.asarray(arr))
    lst = r.tolist()
    assert all((v is None) == m for v, m in zip(lst, mask))
    assert "nan" not in repr(r) and "inf" not in repr(r)
    with pytest.raises(CKValueError, match="null"):
        np.asarray(r)
    filled = r.to_numpy(na_value=-5.0)
    assert np.array_equal(filled[mask], np.full(mask.sum(), -5.0))
    assert np.array_equal(np.asarray(r.fill_null(0.0))[mask], np.zeros(mask.sum()))
    assert [r[i] for i in np.flatnonzero(mask)] == [None] * int(mask.sum())


def test_checked_and_looping_leaves_skip_nulls():
    # 0 under a null: no ZeroDivisionError; a huge count under a null: no long loop
    data = pa.Array.from_buffers(pa.int64(), 4, [
        pa.py_buffer(np.packbits([1, 0, 1, 0], bitorder="little").tobytes()),
        pa.py_buffer(np.array([5, 0, 4, 2**62], dtype=np.int64).tobytes())])
    a = ckernels.asarray(data)
    assert floordiv(a).tolist() == [20, None, 25, None]
    assert triangle(a).tolist() == [10, None, 6, None]
    assert recip(ckernels.array([2.0, None, 4.0])).tolist() == [0.5, None, 0.25]


def test_out_option_destination():
    a = ckernels.array([1.0, None, 3.0])
    out = ckernels.array([9.0, 9.0, 9.0], type="3 * ?float64")
    assert affine(a, out=out) is out
    assert out.tolist() == [3.0, None, 7.0]
    plain = ckernels.array([1.0, 2.0, 3.0])
    affine(plain, out=out)
    assert out.tolist() == [3.0, 5.0, 7.0] and out.null_count == 0


@pytest.mark.parametrize("n,offset", [(5, 3), (129, 1), (1000, 7), (100_003, 5)])
def test_sum_matches_pyarrow(n, offset):
    arr, _, _ = _garbage_floats(n + offset, n)
    arr = arr.slice(offset)
    a = ckernels.asarray(arr)
    want = pc.sum(arr).as_py()
    got = ckernels.ops.sum(a)
    if want is None:
        assert got is None
    else:
        assert got == pytest.approx(want, rel=1e-12)
    assert a.sum() == got
    vals = np.asarray(arr.fill_null(0.0))
    if want is not None:   # the same pairwise sum as NumPy over the values with 0 for nulls
        assert got == np.sum(vals)


def test_sum_all_null_and_float32():
    assert ckernels.ops.sum(ckernels.array([None, None], type="2 * ?float64")) is None
    arr = pa.array(np.arange(300, dtype=np.float32) / 7, mask=np.arange(300) % 5 == 0)
    got = ckernels.ops.sum(ckernels.asarray(arr))
    assert got == pytest.approx(pc.sum(arr).as_py(), rel=1e-6)
    # the library's float32 sum (pairwise, in double): the same with nulls as 0
    assert got == ckernels.ops.sum(ckernels.asarray(np.asarray(arr.fill_null(0.0))))


def test_repr_of_0d_null():
    for t in ("?float64", "?int64", "?bool", "?string"):
        z = ckernels.array(None, type=t)
        assert repr(z) == f"ckernels.array(None, type='{t}')"
        assert str(z) == "None"
    assert repr(ckernels.array(2.5, type="?float64")) == "ckernels.array(2.5, type='?float64')"
