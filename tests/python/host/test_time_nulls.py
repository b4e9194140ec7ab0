"""Time types (``datetime`` / ``timedelta``) with missing values (``?T``):
operations, NumPy conversion and jitted functions keep the nulls, as
pyarrow.compute and pyarrow's ``to_numpy`` do (the oracles)."""

from datetime import datetime, timedelta

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

import ckernels  # noqa: E402
from ckernels.errors import CKTypeError  # noqa: E402

_DATES = [datetime(2024, 1, 1), None, datetime(2024, 3, 1)]
_PA_NS = pa.array(_DATES, pa.timestamp("ns"))
_PA_S = pa.array(_DATES, pa.timestamp("s"))

#: one compiled function for the module (a plain, null-propagating signature)
_plus30 = ckernels.jit("datetime[s](datetime[s])")(lambda t: t + np.timedelta64(30, "D"))


def _a():
    return ckernels.asarray(_PA_NS)


def _np(arr):
    """pyarrow -> NumPy with NaT at the nulls (pyarrow's own conversion)."""
    return arr.to_numpy(zero_copy_only=False)


def test_ops_keep_nulls_like_pyarrow_compute():
    a = _a()
    assert str(a.type.dtype) == "?datetime[unit='ns']"
    r = ckernels.ops.add(a, np.timedelta64(1, "D"))
    assert r.type.dtype.is_option
    expected = pc.add(_PA_NS, pa.scalar(timedelta(days=1)))
    np.testing.assert_array_equal(r.to_numpy(), _np(expected))
    assert pa.array(r).equals(expected)
    d = ckernels.ops.subtract(a, a)
    assert str(d.type.dtype) == "?timedelta[unit='ns']"
    assert pa.array(d).equals(pc.subtract(_PA_NS, _PA_NS))
    lt = ckernels.ops.less(a, np.datetime64("2024-02-01"))
    assert str(lt.type.dtype) == "?bool"
    assert lt.tolist() == [True, None, False]


def test_to_numpy_puts_nat_at_nulls():
    a = _a()
    got = a.to_numpy(na_value=np.datetime64("NaT"))
    assert got.dtype == np.dtype("M8[ns]")
    np.testing.assert_array_equal(got, _np(_PA_NS))
    # no na_value: NaT, as pyarrow's to_numpy and np.asarray of the Arrow array
    np.testing.assert_array_equal(a.to_numpy(), np.asarray(_PA_NS))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(_PA_NS))
    d = ckernels.ops.subtract(a, np.datetime64("2024-01-01"))
    got = d.to_numpy(na_value=np.timedelta64("NaT"))
    assert got.dtype == np.dtype("m8[ns]")
    np.testing.assert_array_equal(got, _np(pc.subtract(_PA_NS, pa.scalar(datetime(2024, 1, 1)))))
    # without nulls: the values as they are
    np.testing.assert_array_equal(a[::2].to_numpy(), np.asarray(_PA_NS.drop_null()))


def test_tolist_and_index_give_none_for_null():
    a = ckernels.asarray(_PA_S)
    assert a[1] is None
    assert a.tolist() == [datetime(2024, 1, 1), None, datetime(2024, 3, 1)]
    assert _a()[1] is None and _a().tolist()[1] is None


def test_fill_null_takes_time_values():
    a = _a()
    when = datetime(2020, 1, 1)
    filled = a.fill_null(when)
    assert not filled.type.dtype.is_option
    np.testing.assert_array_equal(filled.to_numpy(), _np(pc.fill_null(_PA_NS, when)))
    np.testing.assert_array_equal(a.fill_null(np.datetime64(when)).to_numpy(),
                                  filled.to_numpy())
    d = ckernels.ops.subtract(a, np.datetime64("2024-01-01"))
    assert d.fill_null(timedelta(hours=1)).to_numpy()[1] == np.timedelta64(1, "h")
    for bad in (5, True, timedelta(days=1), "2020-01-01"):
        with pytest.raises(CKTypeError, match="cannot assign"):
            a.fill_null(bad)


def test_plain_jit_signature_propagates_time_nulls():
    expected = pc.add(_PA_S, pa.scalar(timedelta(days=30), pa.duration("s")))
    r = _plus30(ckernels.asarray(_PA_S))
    assert str(r.type.dtype) == "?datetime[unit='s']"
    assert r.tolist() == expected.to_pylist()
    got = _plus30(_PA_S)          # pyarrow in, pyarrow out
    assert isinstance(got, pa.Array) and got.equals(expected)


def test_arrays_of_time_values_with_nulls_and_setitem():
    # the writer takes datetime / timedelta values (Python's and NumPy's) for
    # a given time type; None is a null, as pa.array of the same values
    got = ckernels.array(_DATES, dtype="datetime[unit='s']")
    assert str(got.type) == "strided * ?datetime[unit='s']"
    assert pa.array(got).equals(_PA_S)
    full = ckernels.array(_DATES, type="3 * ?datetime[unit='ns']")
    np.testing.assert_array_equal(full.to_numpy(), _np(_PA_NS))
    ms = ckernels.array([np.datetime64("2024-01-01T00:00:01.5"), None],
                        dtype="?datetime[unit='ms']")
    assert ms.tolist() == pa.array([datetime(2024, 1, 1, 0, 0, 1, 500000), None],
                                   pa.timestamp("ms")).to_pylist()
    durs = [[timedelta(hours=1)], [None]]
    assert ckernels.array(durs, dtype="timedelta[unit='s']").tolist() == durs
    full[1] = np.datetime64("2024-02-01")
    full[0] = None
    full[2] = datetime(2025, 1, 1)
    assert full.tolist()[0] is None
    np.testing.assert_array_equal(full.to_numpy()[1:],
                                  np.array(["2024-02-01", "2025-01-01"], "M8[ns]"))
    for bad in (5, timedelta(days=1)):
        with pytest.raises(CKTypeError, match="cannot assign"):
            full[2] = bad
        with pytest.raises(CKTypeError, match="cannot assign"):
            ckernels.array([bad, None], dtype="?datetime[unit='s']")
    assert full.tolist()[2] == 1735689600000000000   # unchanged by the refused writes


def test_time_values_with_nulls_are_inferred_as_pyarrow_does():
    got = ckernels.array(_DATES)
    assert str(got.type) == "strided * ?datetime[unit='us']"
    assert pa.array(got).equals(pa.array(_DATES))        # timestamp[us], as pa infers
    durs = [timedelta(days=1), None]
    got = ckernels.array(durs)
    assert str(got.type) == "strided * ?timedelta[unit='us']"
    assert got.tolist() == pa.array(durs).to_pylist()
    got = ckernels.array([np.datetime64("2024-01-01", "s"), None])
    assert str(got.type) == "strided * ?datetime[unit='s']"   # NumPy's unit kept
    with pytest.raises(CKTypeError, match="cannot mix"):
        ckernels.array([datetime(2024, 1, 1), 5])
