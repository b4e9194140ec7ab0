"""Jitted functions and registry operations as NumPy ufuncs, at the user's level.

``f = @ckernels.jit(...)`` is a ``ckernels._ufuncs.Function``: calls on NumPy
operands go to ``f.ufunc`` (NumPy scalars out of scalar calls), pandas /
xarray / dask objects through their ``__array_ufunc__``, everything else
(ckernels arrays, lists, strings) through the general path.  Checked here
against NumPy: the routing, ``reduce`` / ``accumulate`` / ``outer`` / ``at`` /
``where=`` and ``identity=``, both error models and kernel exceptions on one
and two threads, lazily compiled functions, pickling (module-level functions
by reference, interactively defined ones by value, in another process and in
a dask graph), and ``ckernels.ops``.  The ufunc machinery itself is tested in
test_dispatch.py.
"""

import json
import math
import os
import pickle
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import ckernels
from ckernels import _ufuncs, errors
from ckernels.ufuncs import function_of
from ufunc_kernels import checked, div, div_ieee  # shared with the other ufunc tests

pd = pytest.importorskip("pandas")
xr = pytest.importorskip("xarray")
da = pytest.importorskip("dask.array")
cloudpickle = pytest.importorskip("cloudpickle")

BIG = 200_000


# ---------------------------------------------------------------- kernels --
@ckernels.jit(["float64(float64, float64)", "int64(int64, int64)"], identity=0)
def add2(x, y):
    return x + y


@ckernels.jit(["float64(float64, float64)"])
def hyp(x, y):
    return math.sqrt(x * x + y * y)


@ckernels.jit(["string(string)", "float64(float64)"])
def twice(x):
    return x + x


@ckernels.jit(["float32(float32)"])
def half32(x):
    return x * 0.5


# ------------------------------------------------------------ the object --
def test_a_jitted_function_is_a_function_with_a_ufunc():
    assert isinstance(add2, _ufuncs.Function)
    assert "__call__" not in type(add2).__dict__           # the call is C's
    uf = add2.ufunc
    assert isinstance(uf, np.ufunc) and (uf.nin, uf.nout) == (2, 1)
    assert uf.__name__ == "add2" and uf.__qualname__ == "add2.ufunc"
    assert uf.__module__ == add2.__module__
    assert [d for d, _ in _ufuncs.loops(uf)] == [(np.dtype("f8"),) * 3,
                                                    (np.dtype("i8"),) * 3]
    assert uf.identity == 0 and add2.identity == 0
    assert hyp.ufunc.identity is None
    assert function_of(uf) is add2
    assert function_of(ckernels.ops.add.ufunc) is ckernels.ops.add
    assert function_of(np.add) is None and function_of(add2) is None
    # object arrays (text made StringDType there), structured arrays (struct
    # signatures) and datetime64/timedelta64 arrays (time signatures) take the
    # general path; NumPy text reaches the string loops
    assert twice.fallback_kinds == "OVMm" and add2.fallback_kinds == ""


def test_calls_route_by_operand():
    x = np.arange(5.0)
    r = add2(x, 1.0)
    assert type(r) is np.ndarray and r.tolist() == (x + 1).tolist()
    # scalar calls give NumPy scalars, as any ufunc does
    assert type(add2(1.0, 2.0)) is np.float64 and add2(1.0, 2.0) == 3.0
    assert type(add2(1, 2)) is np.int64
    # only Python scalars: a loop of their default type, else the first they fit
    assert type(hyp(3, 4)) is np.float64 and hyp(3, 4) == 5.0      # int -> float64 loop
    assert type(half32(1.5)) is np.float32 and half32(1.5) == 0.75  # also unary
    assert type(half32(3)) is np.float32
    with pytest.raises(TypeError):
        half32(1j)
    # a strong float64: no safe cast to f4 (NumPy's no-loop error, naming the argument)
    with pytest.raises(np._core._exceptions._UFuncNoLoopError,
                       match=r"argument 0 \('x'\) is float64, which does not cast to float32 "
                             "under the 'safe' casting rule"):
        half32(np.float64(1.5))
    assert type(half32(np.float64(1.5), dtype=np.float32)) is np.float32  # same_kind
    with pytest.raises(TypeError, match="casting rule 'safe'"):
        half32(np.float64(1.5), dtype=np.float32, casting="safe")
    assert type(add2(np.float64(1), 2)) is np.float64
    out = np.empty(5)
    assert add2(x, x, out=out) is out and out.tolist() == (2 * x).tolist()
    assert add2(x, 1.0, out=(out,)) is out
    # ckernels arrays and lists: the general path (ck_array_apply)
    r = add2(ckernels.array([1.0, 2.0]), 1.0)
    assert isinstance(r, ckernels.Array) and r.to_list() == [2.0, 3.0]
    assert add2([1, 2], 3).to_list() == [4, 5]
    with pytest.raises(TypeError, match="only out= applies"):
        add2(ckernels.array([1.0]), 1.0, where=True)
    # another arity: the general path says what is wrong
    with pytest.raises(TypeError, match=r"add2\(\) takes 2 arguments, 1 given"):
        add2(np.ones(2))


def test_string_signatures_have_string_loops():
    T = np.dtypes.StringDType()
    assert twice("ab") == "abab"                                   # Python in, Python out
    r = twice(np.array(["a", "bc"]))                               # NumPy in, NumPy out
    assert type(r) is np.ndarray and r.dtype == T and r.tolist() == ["aa", "bcbc"]
    r = twice(ckernels.array(["a", "bc"]))                         # ckernels in, ckernels out
    assert isinstance(r, ckernels.Array) and r.to_list() == ["aa", "bcbc"]
    assert twice(np.arange(3.0)).tolist() == [0.0, 2.0, 4.0]       # the ufunc
    assert [d for d, _ in _ufuncs.loops(twice.ufunc)] == [(T, T), (np.dtype("f8"),) * 2]


def test_lazy_function_with_string_results_gets_a_string_loop():
    @ckernels.jit
    def sign_name(x):
        if x > 0:
            return "pos"
        return "neg"

    r = sign_name(np.array([1, -2]))
    assert r.dtype == np.dtypes.StringDType() and r.tolist() == ["pos", "neg"]
    assert sign_name.signatures == ["string(int64)"]
    assert sign_name.ufunc(np.array([1, -2])).tolist() == ["pos", "neg"]
    assert sign_name(np.array([3])).tolist() == ["pos"]         # again: same answer
    r = sign_name(ckernels.asarray(np.array([4, -4])))
    assert isinstance(r, ckernels.Array) and r.to_list() == ["pos", "neg"]


def test_explicit_compile_after_resolved_calls_makes_a_new_ufunc():
    @ckernels.jit(["float64(float64)"])
    def inc(x):
        return x + 1

    first = inc.ufunc
    inc.compile("float32(float32)")                  # no call resolved yet: same ufunc
    assert inc.ufunc is first and len(_ufuncs.loops(first)) == 2
    assert inc(np.ones(2, np.int16)).dtype == np.float64     # resolved by the promoter
    inc.compile("int32(int32)")
    assert inc.ufunc is not first and function_of(inc.ufunc) is inc
    assert [d[0] for d, _ in _ufuncs.loops(inc.ufunc)] == [np.dtype("f8"), np.dtype("f4"),
                                                            np.dtype("i4")]
    assert inc(np.ones(2, np.int32)).dtype == np.int32
    assert first(np.ones(2, np.int32)).dtype == np.float64   # the old one: old loops


# -------------------------------------------------------- ufunc methods --
def test_methods_and_keywords_against_numpy():
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(add2.reduce(m), np.add.reduce(m))
    np.testing.assert_array_equal(add2.reduce(m, axis=1, keepdims=True),
                                  np.add.reduce(m, axis=1, keepdims=True))
    assert add2.reduce(m, axis=None) == m.sum()      # identity: reorderable
    assert add2.reduce(np.arange(10)).dtype == np.int64
    assert add2.reduce(np.array([])) == 0.0          # the identity
    np.testing.assert_array_equal(add2.reduce(m, axis=1, where=m > 4),
                                  np.add.reduce(m, axis=1, where=m > 4))
    np.testing.assert_array_equal(add2.accumulate(m, axis=1), np.add.accumulate(m, axis=1))
    a, b = np.arange(3.0), np.arange(4.0)
    np.testing.assert_array_equal(add2.outer(a, b), np.add.outer(a, b))
    x, y = np.zeros(5), np.zeros(5)
    add2.at(x, [0, 1, 1, 4], 2.0)
    np.add.at(y, [0, 1, 1, 4], 2.0)
    assert x.tolist() == y.tolist()
    mask = np.array([True, False, True, False, True])
    o1, o2 = np.full(5, -1.0), np.full(5, -1.0)
    add2(np.arange(5.0), 1.0, out=o1, where=mask)
    np.add(np.arange(5.0), 1.0, out=o2, where=mask)
    assert o1.tolist() == o2.tolist()
    i = np.arange(3)
    for kw in ({"dtype": np.float64}, {"dtype": np.int64, "casting": "unsafe"}):
        r, ref = add2(i + 0.5, 1, **kw), np.add(i + 0.5, 1, **kw)
        assert r.dtype == ref.dtype and r.tolist() == ref.tolist()
    with pytest.raises(TypeError, match="same_kind"):
        add2(i + 0.5, 1, dtype=np.int64)              # as np.add: float64 -> int64
    # no identity: as NumPy's ufuncs without one (numpy.maximum)
    np.testing.assert_allclose(hyp.reduce(m, axis=0),
                               [math.sqrt(sum(v * v for v in col)) for col in m.T])
    with pytest.raises(ValueError, match="identity"):
        hyp.reduce(np.array([]))
    with pytest.raises(ValueError, match="identity"):
        np.maximum.reduce(np.array([]))
    with pytest.raises(ValueError, match="reorderable"):
        hyp.reduce(m, axis=(0, 1))
    assert hyp.reduce(np.array([]), initial=3.0) == 3.0


def test_methods_need_a_ufunc():
    @ckernels.jit(["float64({x: float64, y: float64})"])
    def norm1(p):
        return abs(p.x) + abs(p.y)

    assert norm1.ufunc is None                  # struct signatures have no NumPy loop
    with pytest.raises(errors.NotSupportedError, match="no NumPy ufunc"):
        norm1.reduce(np.array([1.0]))


# ----------------------------------------------------------------- errors --
def test_error_models_on_the_ufunc_path(threads):
    y = np.ones(BIG)
    y[BIG - 10] = 0.0                           # a worker's chunk with 2 threads
    with pytest.raises(errors.CKZeroDivisionError, match="division by zero"):
        div(np.ones(BIG), y)
    with pytest.raises(errors.CKZeroDivisionError):
        div(1.0, 0.0)
    with pytest.raises(errors.CKZeroDivisionError):
        div.ufunc(np.ones(3), np.zeros(3))
    with np.errstate(divide="ignore"):
        r = div_ieee(np.ones(BIG), y)
        assert np.isinf(r[BIG - 10]) and np.isinf(div_ieee(1.0, 0.0))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        div_ieee(np.ones(BIG), y)


def test_kernel_exceptions_on_the_ufunc_path(threads):
    x = np.linspace(0, 200, BIG)
    with pytest.raises(errors.CKValueError, match="x is too large") as ei:
        checked(x)
    assert isinstance(ei.value, ValueError)
    with pytest.raises(errors.CKValueError, match="x is too large"):
        checked(101.0)
    with pytest.raises(errors.CKValueError, match="x is too large"):
        checked(pd.Series(x))
    np.testing.assert_array_equal(checked(np.arange(BIG) % 50.0), np.arange(BIG) % 50.0 + 1)


# ---------------------------------------------------- pandas, xarray, dask --
def test_pandas():
    s = pd.Series([1.0, 2.0, 3.0], index=list("abc"), name="s")
    for fn in (add2, add2.ufunc, ckernels.ops.add, ckernels.ops.add.ufunc):
        r = fn(s, 1.0)
        assert isinstance(r, pd.Series), fn
        pd.testing.assert_series_equal(r, s + 1.0)
    df = pd.DataFrame({"a": [3.0, 5.0], "b": [4.0, 12.0]})
    r = hyp(df, 0.0)
    assert isinstance(r, pd.DataFrame) and r.equals(df)
    r = hyp(df["a"], df["b"])
    assert r.tolist() == [5.0, 13.0]


def test_xarray():
    a = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("x", "y"),
                     coords={"x": [10, 20]}, name="a")
    for fn in (add2, add2.ufunc, ckernels.ops.add, ckernels.ops.add.ufunc):
        r = fn(a, a)
        assert isinstance(r, xr.DataArray) and r.dims == ("x", "y"), fn
        xr.testing.assert_identical(r, np.add(a, a))
    ds = xr.Dataset({"v": a})
    assert isinstance(add2(ds, 1.0), xr.Dataset)


def test_xarray_reductions_stay_xarray():
    """A NumPy-backed DataArray has ``__dask_graph__`` (answering None) but is no
    Dask collection: reductions map over its data and it stays a DataArray."""
    a = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("x", "y"),
                     coords={"x": [10, 20]}, name="a")
    for r, want in ((ckernels.ops.sum(a), a.sum()),
                    (ckernels.ops.sum(a, axis=1), a.sum(axis=1)),
                    (ckernels.ops.max(a, axis=0), a.max(axis=0)),
                    (add2.reduce(a, axis=1), a.sum(axis=1))):
        assert isinstance(r, xr.DataArray) and not isinstance(r.data, da.Array)
        xr.testing.assert_allclose(r, want)
    assert ckernels.ops.sum(a, axis=1, keepdims=True).dims == ("x", "y")
    lazy = xr.DataArray(da.from_array(a.values, chunks=1), dims=("x", "y"))
    r = ckernels.ops.sum(lazy, axis=1)
    assert isinstance(r, xr.DataArray) and isinstance(r.data, da.Array)
    np.testing.assert_array_equal(r.compute().values, [3.0, 12.0])


def test_dask_is_lazy_and_computes_like_numpy():
    x, y = np.linspace(0, 5, 1000), np.linspace(-3, 2, 1000)
    dx, dy = da.from_array(x, chunks=300), da.from_array(y, chunks=300)
    for fn, ref in ((add2, np.add), (add2.ufunc, np.add), (ckernels.ops.add, np.add),
                    (ckernels.ops.add.ufunc, np.add), (hyp, np.hypot)):
        r = fn(dx, dy)
        assert isinstance(r, da.Array), fn
        assert r.dtype == np.float64 and r.chunks == dx.chunks
        np.testing.assert_allclose(r.compute(), ref(x, y), rtol=1e-15)
    r = add2(da.from_array(np.arange(10), chunks=4), 1)
    assert r.dtype == np.int64 and r.compute().tolist() == list(range(1, 11))
    # dask infers a result dtype by running the function on zeros unless it is
    # given one; f (through its wrappers hook) gives it, so kernels raising on
    # zero work; f.ufunc needs dtype= for them (docs/dispatch.md)
    np.testing.assert_array_equal(div(dx, dx + 1).compute(), x / (x + 1))
    np.testing.assert_array_equal(div.ufunc(dx, dx + 1, dtype=np.float64).compute(),
                                  x / (x + 1))
    zeros = da.zeros(1000, chunks=300)
    lazy = div(dx, zeros)                        # nothing runs yet
    assert isinstance(lazy, da.Array)
    with pytest.raises(errors.CKZeroDivisionError, match="division by zero"):
        lazy.compute()
    # xarray over dask: lazy too
    xa = xr.DataArray(dx, dims="t")
    r = div(xa, xa + 1)
    assert isinstance(r, xr.DataArray) and isinstance(r.data, da.Array)
    np.testing.assert_array_equal(r.compute().values, x / (x + 1))


# ------------------------------------------------------------- pickling --
_MODULE_SRC = '''
import ckernels

@ckernels.jit(["float64(float64, float64)"], identity=0.0)
def modfunc(x, y):
    return 3.0 * x + y
'''

_LOAD = '''
import json, pickle, sys
import numpy as np
blobs = pickle.loads(sys.stdin.buffer.read())
out = {}
for name, blob in blobs.items():
    obj = pickle.loads(blob)
    if name.startswith("graph"):
        out[name] = obj.compute(scheduler="sync").tolist()
    else:
        out[name] = [type(obj).__name__, obj(np.arange(3.0), 1.0).tolist()]
print(json.dumps(out))
'''


def _interactive():
    """A jitted function as if typed at a prompt (module ``__main__``)."""
    src = "def inter(x, y):\n    return x * y - 1.0\n"
    ns = {"__name__": "__main__"}
    exec(compile(src, "<stdin>", "exec"), ns)
    return ckernels.jit(["float64(float64, float64)"])(ns["inter"])


def test_pickling_in_process():
    assert pickle.loads(pickle.dumps(add2)) is add2
    assert pickle.loads(pickle.dumps(add2.ufunc)) is add2.ufunc
    assert pickle.loads(pickle.dumps(ckernels.ops.add)) is ckernels.ops.add
    assert pickle.loads(pickle.dumps(ckernels.ops.add.ufunc)) is ckernels.ops.add.ufunc
    assert pickle.loads(pickle.dumps(np.add)) is np.add           # NumPy's, unchanged
    inter = _interactive()
    assert inter.__module__ == "__main__"
    for dumps in (pickle.dumps, cloudpickle.dumps):
        # by value; unpickled in the process that has it: the same object
        assert pickle.loads(dumps(inter)) is inter
        assert pickle.loads(dumps(inter.ufunc)) is inter.ufunc


@pytest.mark.allow_memblock_leak   # Numba's Environment keeps a module's globals (and
def test_pickling_to_another_process(tmp_path):   # its jitted functions) alive
    (tmp_path / "ck_pickle_mod.py").write_text(_MODULE_SRC)
    sys.path.insert(0, str(tmp_path))
    try:
        import ck_pickle_mod
        modfunc = ck_pickle_mod.modfunc
        inter = _interactive()
        x = da.from_array(np.arange(6.0), chunks=4)
        blobs = {
            "mod": pickle.dumps(modfunc),
            "mod_ufunc": pickle.dumps(modfunc.ufunc),
            "inter": cloudpickle.dumps(inter),
            "inter_ufunc": cloudpickle.dumps(inter.ufunc),
            "ops_ufunc": pickle.dumps(ckernels.ops.add.ufunc),
            "graph_mod": cloudpickle.dumps(modfunc(x, 1.0)),
            "graph_inter": cloudpickle.dumps(inter.ufunc(x, 2.0)),
            "graph_reduce": cloudpickle.dumps(da.reduction(   # one chunk: 3x + y is
                da.from_array(np.arange(6.0), chunks=6),       # not associative
                modfunc.reduce, modfunc.reduce, dtype=np.float64)),
        }
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
        p = subprocess.run([sys.executable, "-c", _LOAD], input=pickle.dumps(blobs),
                           capture_output=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr.decode()[-3000:]
        assert b"extern \"Python\"" not in p.stderr, p.stderr.decode()
        got = json.loads(p.stdout)
        a = np.arange(3.0)
        assert got["mod"] == ["JitKernel", (3 * a + 1).tolist()]
        assert got["mod_ufunc"] == ["ufunc", (3 * a + 1).tolist()]
        assert got["inter"] == ["JitKernel", (a - 1).tolist()]
        assert got["inter_ufunc"] == ["ufunc", (a - 1).tolist()]
        assert got["ops_ufunc"] == ["ufunc", (a + 1).tolist()]
        assert got["graph_mod"] == (3 * np.arange(6.0) + 1).tolist()
        assert got["graph_inter"] == (2 * np.arange(6.0) - 1).tolist()
        assert got["graph_reduce"] == modfunc.reduce(np.arange(6.0))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("ck_pickle_mod", None)


# ------------------------------------------------------------------ ops --
def test_ops_are_functions_with_ufuncs():
    add = ckernels.ops.add
    assert isinstance(add, _ufuncs.Function) and isinstance(add.ufunc, np.ufunc)
    assert add.ufunc.identity == 0 and add.ufunc.__qualname__ == "add.ufunc"
    assert type(add(1, 2)) is np.int64 and add(1, 2) == 3
    assert type(add(np.float32(1), 2.5)) is np.float32
    r = add(np.arange(3, dtype=np.int8), 1)
    assert r.dtype == np.int8 and r.tolist() == [1, 2, 3]
    r = add(ckernels.array([1, 2]), 1)                  # the general path
    assert isinstance(r, ckernels.Array) and r.to_list() == [2, 3]
    assert ckernels.ops.sum(ckernels.array([[1, 2], [3, 4]]), axis=0).to_list() == [4, 6]
    with pytest.raises(TypeError, match="only out= applies"):
        add(ckernels.array([1]), 1, where=True)
    with pytest.raises(errors.InvalidArgumentError, match="takes 2 argument"):
        add(np.ones(2))
    # NumPy's identity, also for bitwise ufuncs on unsigned types (-1: all bits)
    u8 = np.array([0xF0, 0x3C], np.uint8)
    band = ckernels.ops.bitwise_and
    assert band.ufunc.identity == -1
    assert band.ufunc.reduce(u8) == np.bitwise_and.reduce(u8)
    assert band.ufunc.reduce(u8[:0]) == np.bitwise_and.reduce(u8[:0]) == 255
    assert ckernels.ops.maximum.ufunc.identity is None


# ------------------------------------------------- ufuncs on ckernels arrays --
@ckernels.jit(["float64(float64, float64)"])
def subtract(x, y):           # shares its name with a registry operation on purpose
    return x * 10.0 + y


def test_our_ufuncs_on_ckernels_arrays_run_their_owner():
    """ArrayLike.__array_ufunc__ routes one of our ufuncs to its owner's general
    path (not to the registry operation that happens to share its name)."""
    a = ckernels.array([1.0, 2.0])
    r = subtract.ufunc(a, 1.0)
    assert isinstance(r, ckernels.Array) and r.to_list() == [11.0, 21.0]
    out = ckernels.empty((2,), "float64")
    assert subtract.ufunc(a, a, out=out) is out and out.to_list() == [11.0, 22.0]
    # other methods of a jitted function's ufunc run on NumPy views of host arrays
    assert np.asarray(subtract.ufunc.outer(a, a)).tolist() == [[11.0, 12.0], [21.0, 22.0]]
    r = ckernels.ops.add.ufunc(ckernels.array([1, 2]), 1)   # an operation's ufunc
    assert isinstance(r, ckernels.Array) and r.to_list() == [2, 3]
    r = np.subtract(a, 1.0)                                 # NumPy's own: the registry's
    assert isinstance(r, ckernels.Array) and r.to_list() == [0.0, 1.0]
