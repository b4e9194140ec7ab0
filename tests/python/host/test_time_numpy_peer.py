"""NumPy's own datetime tests as a peer: the cases of
``numpy/_core/tests/test_datetime.py`` that need no NumPy internals
(``test_datetime_add``, ``_subtract``, ``_multiply``, ``_divide``,
``test_timedelta_floor_divide``, ``test_datetime_compare``,
``_compare_nat``, ``_minmax``, ``test_different_unit_comparison``,
``test_datetime_maximum_reduce``), translated to one table of
``(operation, a, b)`` and run through ``ckernels.ops`` and through a jitted
function of the same operator, with NumPy's result (value and dtype) as the
oracle.  Cases NumPy refuses (``TypeError``) must be refused too.

Where ckernels differs from NumPy, the case is listed in ``OPS_DIFFER`` /
``JIT_DIFFER`` with the reason (and docs/type-grammar.md "NumPy's datetime
tests" lists them): the test checks that exactly those differ, so the list
stays true.  Cases with NumPy's multiples of units (``M8[2m]``) and generic
units are left out: ckernels has no such units (they are refused on the way
in, ``tests/python/host/test_time_types.py``).
"""

import operator
import warnings

import numpy as np
import pytest

import ckernels

M, m = np.datetime64, np.timedelta64

#: the operations: ckernels.ops name, NumPy function, Python operator
OPS = {
    "add": (np.add, operator.add), "subtract": (np.subtract, operator.sub),
    "multiply": (np.multiply, operator.mul), "true_divide": (np.true_divide, operator.truediv),
    "floor_divide": (np.floor_divide, operator.floordiv),
    "equal": (np.equal, operator.eq), "not_equal": (np.not_equal, operator.ne),
    "less": (np.less, operator.lt), "less_equal": (np.less_equal, operator.le),
    "greater": (np.greater, operator.gt), "greater_equal": (np.greater_equal, operator.ge),
    "minimum": (np.minimum, None), "maximum": (np.maximum, None),
}

dta, dtb = np.array(["2012-12-21"], "M8[D]"), np.array(["2012-12-24"], "M8[D]")
dtc = np.array(["1940-12-24T00"], "M8[h]")
dtd = np.array(["1940-12-24T00"], "M8[h]")
dtnat = np.array(["NaT"], "M8[D]")
tda, tdb = np.array([3], "m8[D]"), np.array([11], "m8[h]")
tdc = np.array([3 * 24 + 11], "m8[h]")
t6, t9, t12, t6m = (np.array([6], "m8[h]"), np.array([9], "m8[h]"), np.array([12], "m8[h]"),
                    np.array([6], "m8[m]"))
tdnat = np.array(["NaT"], "m8[h]")
cmp_a = np.array(["2000-03-12T18:00:00.000000"], "M8[us]")
cmp_b = np.array(["2000-03-12T18:00:00.000000", "2000-03-12T17:59:59.999999",
                  "2000-03-12T18:00:00.000001", "1970-01-11T12:00:00.909090",
                  "2016-01-11T12:00:00.909090"], "M8[us]")
dt_nat, dt_other = np.array(["NaT"], "M8[D]"), np.array(["2000-01-01"], "M8[D]")
td_nat, td_other = np.array(["NaT"], "m8[h]"), np.array([1], "m8[h]")
mm_b = np.array(["1999-03-12T12"], "M8[s]")
mm_a = np.array(["1999-03-12T13"], "M8[m]")
mh, ms = np.array([3], "m8[h]"), np.array([3 * 3600 - 3], "m8[s]")

CASES = {
    # test_datetime_add
    "m8+m8": ("add", tda, tdb), "m8+int": ("add", tdb, np.int64(72)),
    "int+m8": ("add", np.int64(72), tdb), "M8+int": ("add", dta, np.int64(3)),
    "NaT+int": ("add", dtnat, np.int64(3)), "int+M8": ("add", np.int64(3), dta),
    "M8+m8": ("add", dta, tda), "NaT+m8": ("add", dtnat, tda), "m8+M8": ("add", tda, dta),
    "M8[D]+m8[h]": ("add", dta, tdb), "m8[h]+M8[D]": ("add", tdb, dta),
    "M8+M8 refused": ("add", dta, dtb),
    # test_datetime_subtract
    "m8-m8": ("subtract", tda, tdb), "m8[h]-m8[D]": ("subtract", tdb, tda),
    "m8-int": ("subtract", tdc, np.int64(72)), "int-m8": ("subtract", np.int64(72), tdb),
    "M8-int": ("subtract", dtb, np.int64(3)), "NaT-int": ("subtract", dtnat, np.int64(3)),
    "M8-m8": ("subtract", dtb, tda), "NaT-m8": ("subtract", dtnat, tda),
    "M8[h]-m8[h]": ("subtract", dtc, tdb), "M8-M8 units": ("subtract", dtc, dtd),
    "M8[D]-M8[D]": ("subtract", dtb, dta),
    "m8-M8 refused": ("subtract", tda, dta), "int-M8 refused": ("subtract", np.int64(3), dta),
    # test_datetime_multiply
    "m8*int": ("multiply", t6, np.int64(2)), "int*m8": ("multiply", np.int64(2), t6),
    "m8*float": ("multiply", t6, np.float64(1.5)), "float*m8": ("multiply", 1.5, t6),
    "NaT*int": ("multiply", tdnat, np.int64(2)), "NaT*0": ("multiply", tdnat, np.int64(0)),
    "m8*m8 refused": ("multiply", t6, t9), "M8*m8 refused": ("multiply", dta, t6),
    "M8*int refused": ("multiply", dta, np.int64(2)),
    # test_datetime_divide
    "m8/int": ("true_divide", t12, np.int64(2)), "m8/float": ("true_divide", t6, 0.5),
    "m8/m8": ("true_divide", t6, t9), "m8[h]/m8[m]": ("true_divide", t6, t6m),
    "m8[m]/m8[h]": ("true_divide", t6m, t6), "NaT/int": ("true_divide", tdnat, np.int64(2)),
    "NaT/m8": ("true_divide", tdnat, t6),
    "int/m8 refused": ("true_divide", np.int64(2), t9), "M8/m8 refused": ("true_divide", dta, t6),
    # test_timedelta_floor_divide
    "7s//4s": ("floor_divide", np.array([7], "m8[s]"), np.array([4], "m8[s]")),
    "7s//-4s": ("floor_divide", np.array([7], "m8[s]"), np.array([-4], "m8[s]")),
    "8s//-4s": ("floor_divide", np.array([8], "m8[s]"), np.array([-4], "m8[s]")),
    "1m//31s": ("floor_divide", np.array([1], "m8[m]"), np.array([31], "m8[s]")),
    "2Y//13M": ("floor_divide", np.array([2], "m8[Y]"), np.array([13], "m8[M]")),
    # test_datetime_compare
    **{f"cmp {op}": (op, cmp_a, cmp_b) for op in
       ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")},
    # test_datetime_compare_nat
    **{f"NaT {op} {w}": (op, x, y) for op in
       ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
       for w, (x, y) in {"dt nat,nat": (dt_nat, dt_nat), "dt nat,x": (dt_nat, dt_other),
                         "dt x,nat": (dt_other, dt_nat), "td nat,nat": (td_nat, td_nat),
                         "td nat,x": (td_nat, td_other), "td x,nat": (td_other, td_nat)}.items()},
    # test_different_unit_comparison (units ckernels has)
    **{f"1945 {u1}=={u2}": ("equal", np.array(["1945"], f"M8[{u1}]"),
                            np.array(["1945"], f"M8[{u2}]"))
       for u1 in "YMD" for u2 in "YMD"},
    **{f"18h {u1}=={u2}": ("equal", np.array(["1945-03-12T18"], f"M8[{u1}]"),
                           np.array(["1945-03-12T18"], f"M8[{u2}]"))
       for u1 in ("h", "m", "s", "ms", "us") for u2 in ("h", "us")},
    "M8<m8 refused": ("less", dta, tda),
    # test_datetime_minmax (M8[2m] becomes M8[m]: no multiples of units here)
    "min M8": ("minimum", mm_a, mm_b), "max M8": ("maximum", mm_a, mm_b),
    "min NaT": ("minimum", mm_a, np.array(["NaT"], "M8[h]")),
    "max NaT": ("maximum", np.array(["NaT"], "M8[h]"), mm_a),
    "min m8": ("minimum", mh, ms), "max m8": ("maximum", mh, ms),
}

#: cases where ckernels.ops differs from NumPy, and why
OPS_DIFFER: dict[str, str] = {}
_INT = ("Numba has no datetime64/timedelta64 +/- integer (NumPy counts the integer "
        "in the time operand's unit): a TypeError when compiling")
_FLOORDIV = ("Numba's timedelta64 // timedelta64 fails to compile (its lowering mixes "
             "int64 and double): llvmlite's ValueError")
_MINMAX = "Numba has no min/max of datetime64/timedelta64: a TypeError when compiling"
#: cases where the jitted operator differs from NumPy (Numba's rules), and why
JIT_DIFFER: dict[str, str] = {
    **{c: _INT for c in ("m8+int", "int+m8", "M8+int", "NaT+int", "int+M8", "m8-int",
                         "int-m8", "M8-int", "NaT-int")},
    **{c: _FLOORDIV for c in ("7s//4s", "7s//-4s", "8s//-4s", "1m//31s", "2Y//13M")},
    **{c: _MINMAX for c in ("min M8", "max M8", "min NaT", "max NaT", "min m8", "max m8")},
}


def _numpy(op, a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return OPS[op][0](a, b)
        except TypeError:
            return TypeError


def _same(got, want) -> bool:
    if want is TypeError:
        return got is TypeError
    if got is TypeError:
        return False
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind in "Mm":
        return bool(np.array_equal(got.view(np.int64), want.view(np.int64)))
    return bool(np.array_equal(got, want, equal_nan=want.dtype.kind == "f"))


def _ops(op, a, b):
    try:     # ckernels.ops.divide is NumPy's true_divide
        return getattr(ckernels.ops, "divide" if op == "true_divide" else op)(a, b)
    except TypeError:
        return TypeError


_JITTED = {}


def _jit(op, a, b):
    if OPS[op][1] is None:
        f = _JITTED.get(op)
        if f is None:       # minimum / maximum: Python's min / max of two values
            f = _JITTED[op] = ckernels.jit(
                (lambda x, y: min(x, y)) if op == "minimum" else (lambda x, y: max(x, y)))
    else:
        f = _JITTED.get(op)
        if f is None:
            py = OPS[op][1]
            f = _JITTED[op] = ckernels.jit(lambda x, y: py(x, y))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return f(a, b)
    except TypeError:
        return TypeError
    except ValueError:      # Numba's lowering of timedelta // timedelta (JIT_DIFFER)
        return ValueError


@pytest.mark.parametrize("case", list(CASES))
def test_ops_as_numpy(case):
    op, a, b = CASES[case]
    same = _same(_ops(op, a, b), _numpy(op, a, b))
    assert same != (case in OPS_DIFFER), (case, _ops(op, a, b), _numpy(op, a, b))


def test_reductions_as_numpy():
    # test_datetime_maximum_reduce, and sum/min of durations
    a = np.array(["2010-01-02", "1999-03-14", "1833-03"], "M8[D]")
    assert ckernels.ops.max(a) == np.maximum.reduce(a)
    assert ckernels.ops.max(a).dtype == np.dtype("M8[D]")
    d = np.array([1, 5, -3], "m8[h]")
    for name, ref in (("sum", np.sum), ("min", np.min), ("max", np.max)):
        got, want = getattr(ckernels.ops, name)(d), ref(d)
        assert got == want and got.dtype == want.dtype, name
        nat = np.append(d, np.timedelta64("NaT", "h"))
        assert np.isnat(getattr(ckernels.ops, name)(nat)) and np.isnat(ref(nat)), name


#: the cases run through the jit: one per distinct signature (each compiles)
JIT_CASES = [c for c in CASES if not c.startswith(("1945", "18h", "NaT ", "cmp "))] + \
    ["cmp less", "NaT less dt nat,x", "NaT not_equal td x,nat", "1945 Y==D", "18h s==us"]


@pytest.mark.allow_memblock_leak   # each case compiles a signature, kept by its function
@pytest.mark.parametrize("case", JIT_CASES)
def test_jit_as_numpy(case):
    op, a, b = CASES[case]
    got, want = _jit(op, a, b), _numpy(op, a, b)
    assert _same(got, want) != (case in JIT_DIFFER), (case, got, want)
