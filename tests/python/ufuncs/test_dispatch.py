"""ckernels._ufuncs: NumPy ufuncs whose loops are ckernels.

The ufuncs of jitted functions (``f.ufunc``) and registry operations
(``ckernels.ops.<name>.ufunc``), and ufuncs built directly with the module's
API, checked against NumPy's own ufuncs, plain Python and
``numba.vectorize``: type resolution (exact, safe casts, NEP 50 weak
scalars, lazy compilation), every ufunc method, errors raised inside kernels
on one and several threads (also in buffered chunks and reductions),
floating-point flags from pool threads, ``Function`` (the C call of jitted
functions and operations), and ownership (nothing leaks when ufuncs are made
and dropped).  The jit-level behaviour (calls, pickling, pandas / xarray /
dask) is in test_jit_ufunc.py.
"""

import gc
import math
import threading

import numba
import numpy as np
import pytest
from numba.core.runtime import nrt as _nrt_mod

import ckernels
from ckernels import _ufuncs, errors
from ckernels._native import ffi, lib
from ckernels.jit import Signature
from ufunc_kernels import checked, div, div_ieee  # shared with the other ufunc tests

_nrt_mod._nrt.memsys_enable_stats()

BIG = 200_000   # split over the threads (with the threshold at 0, as below)


@pytest.fixture(autouse=True)
def _nrt_balance():
    gc.collect()
    s0 = _nrt_mod.rtsys.get_allocation_stats()
    yield
    gc.collect()
    s1 = _nrt_mod.rtsys.get_allocation_stats()
    assert s1.alloc - s0.alloc == s1.free - s0.free, (s0, s1)


# ---------------------------------------------------------------- helpers --
def ck_name(dt) -> str:
    return str(ckernels.types.from_numpy_dtype(np.dtype(dt)))


def np_dtype(name: str) -> np.dtype:
    return np.dtype(name)


def loop_dtypes(comp):
    return [np_dtype(a) for a in comp.sig.args] + [np_dtype(comp.sig.ret)]


def desc_address(comp) -> int:
    return int(ffi.cast("uintptr_t", comp.desc))


def jit_ufunc(jk, **kw):
    """A new ufunc with one loop per compiled signature of ``jk`` (in order),
    made with the module's API (``jk.ufunc`` is made the same way)."""
    comps = list(jk.compiled.values())
    uf = _ufuncs.ufunc(jk.__name__, len(comps[0].sig.args), **kw)
    for comp in comps:
        _ufuncs.add_jit_loop(uf, desc_address(comp), loop_dtypes(comp))
    return uf


def lazy_ufunc(jk, log=None, **kw):
    """A ufunc compiling a loop for each new type combination (like
    numba.vectorize without signatures)."""
    holder = {}

    def compile_(in_dtypes, out_dtype):
        if log is not None:
            log.append((tuple(in_dtypes), out_dtype))
        args = tuple(ck_name(d) for d in in_dtypes)
        ret = None if out_dtype is None else ck_name(out_dtype)
        comp = jk.compile(Signature(ret, args))
        _ufuncs.add_jit_loop(holder["uf"], desc_address(comp), loop_dtypes(comp))

    uf = _ufuncs.ufunc(jk.__name__, jk.py_func.__code__.co_argcount, compile=compile_, **kw)
    holder["uf"] = uf
    return uf


DTYPE_OF_ID = {t.type_id: ckernels.types.builtin_numpy_dtype(t)
               for t in ckernels.types.BUILTIN_TYPES}


def op_ufunc(name):
    """A new registry ufunc made with the module's API (``ckernels.ops.<name>``
    makes its own the same way)."""
    np_uf = getattr(np, name, None)
    ident = None
    if isinstance(np_uf, np.ufunc) and np_uf.nin == 2 and np_uf.identity is not None:
        ident = np_uf.identity
    return _ufuncs.op_ufunc(name, DTYPE_OF_ID, identity=ident)


# ---------------------------------------------------------------- kernels --
@ckernels.jit(["float64(float64, float64)", "float32(float32, float32)",
               "int64(int64, int64)"])
def axpy(x, y):
    return 2 * x + y


@ckernels.jit(["float64(float64, float64)"])
def trans(x, y):
    return math.exp(math.sin(x)) * math.cos(y)


@ckernels.jit(["int64(int64, int64)", "float64(float64, float64)"], identity=0)
def plus(x, y):
    return x + y


@ckernels.jit(["float64(float64, float64, float64)"])
def fma3(x, y, z):
    return x * y + z


def slow_ref(x):
    acc = 0.0
    for k in range(1, 400):
        acc += math.sin(x * k) / k
    return acc


slow = ckernels.jit(["float64(float64)"])(slow_ref)   # ~us per element


AXPY = axpy.ufunc
DIV = div.ufunc
DIV_IEEE = div_ieee.ufunc
CHECKED = checked.ufunc
TRANS = trans.ufunc
PLUS = plus.ufunc
PLUS_NOID = jit_ufunc(plus)      # the same loops, no identity
FMA3 = fma3.ufunc
SLOW = slow.ufunc


def ref_axpy(x, y):
    return 2 * x + y


# ------------------------------------------------------------ basics --
def test_is_a_real_ufunc():
    assert isinstance(AXPY, np.ufunc)
    assert (AXPY.nin, AXPY.nout, AXPY.__name__) == (2, 1, "axpy")
    assert repr(AXPY) == "<ufunc 'axpy'>"
    loops = _ufuncs.loops(AXPY)
    assert [d for d, _ in loops] == [(np.dtype("f8"),) * 3, (np.dtype("f4"),) * 3,
                                     (np.dtype("i8"),) * 3]
    assert "axpy(float64, float64) -> float64" in loops[0][1]
    assert "3 loop(s)" in repr(_ufuncs.data_of(AXPY))
    assert _ufuncs.data_of(np.add) is None
    assert _ufuncs.data_of(object()) is None


@pytest.mark.parametrize("dt", ["f8", "f4", "i8"])
def test_exact_loops(dt):
    x = np.arange(10).astype(dt)
    y = (np.arange(10) * 3).astype(dt)
    r = AXPY(x, y)
    assert r.dtype == np.dtype(dt)
    np.testing.assert_array_equal(r, ref_axpy(x, y))


def test_broadcasting_strides_out_and_views():
    x = np.arange(24.0).reshape(4, 6)
    y = np.arange(6.0)
    np.testing.assert_array_equal(AXPY(x, y), ref_axpy(x, y))
    np.testing.assert_array_equal(AXPY(x[:, ::2], y[::2]), ref_axpy(x[:, ::2], y[::2]))
    np.testing.assert_array_equal(AXPY(x.T, 1.0), ref_axpy(x.T, 1.0))
    out = np.full((4, 6), -1.0)
    assert AXPY(x, y, out=out) is out
    np.testing.assert_array_equal(out, ref_axpy(x, y))
    z = x.copy()
    AXPY(z, z, out=z)                       # exactly in place
    np.testing.assert_array_equal(z, 3 * x)
    assert AXPY(np.empty((0, 3)), 1.0).shape == (0, 3)


def test_python_and_numpy_scalars():
    r = AXPY(2.0, 3.0)
    assert type(r) is np.float64 and r == 7.0
    r = AXPY(2, 3)                          # only Python ints: the default int
    assert type(r) is np.int64 and r == 7
    r = AXPY(np.float32(2), np.float32(3))
    assert type(r) is np.float32


def test_weak_python_scalars_nep50():
    f4 = np.arange(5, dtype=np.float32)
    assert AXPY(f4, 1.5).dtype == np.float32      # weak float keeps float32
    assert AXPY(f4, 2).dtype == np.float32        # weak int too
    assert AXPY(np.arange(5), 2).dtype == np.int64
    assert AXPY(np.arange(5), 2.5).dtype == np.float64
    np.testing.assert_array_equal(AXPY(f4, 1.5), ref_axpy(f4, np.float32(1.5)))


def test_safe_casts_in_signature_order():
    # int8 casts safely to the first loop, float64 (NumPy's linear search)
    i1 = np.arange(5, dtype=np.int8)
    r = AXPY(i1, i1)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, ref_axpy(i1.astype("f8"), i1.astype("f8")))
    # int64 longlong ('q') is equivalent to the int64 loop, not cast
    q = np.arange(5, dtype="q")
    assert AXPY(q, q).dtype == np.int64
    # float16 -> float64 (first safe loop)
    assert AXPY(np.ones(3, np.float16), np.ones(3, np.float16)).dtype == np.float64


def test_no_loop_is_numpys_type_error():
    with pytest.raises(TypeError, match="axpy"):
        AXPY(np.ones(3, np.complex128), 1.0)
    with pytest.raises(TypeError):
        AXPY(np.array(["a", "b"]), 1.0)


def test_uint64_int64_mix_goes_to_float64():
    # NumPy: uint64 and int64 both cast safely to float64 (first loop here)
    r = AXPY(np.ones(3, np.uint64), np.ones(3, np.int64))
    assert r.dtype == np.float64


def test_dtype_signature_and_casting_keywords():
    x = np.arange(5.0)
    r = AXPY(x, x, dtype=np.float32)
    assert r.dtype == np.float32
    r = AXPY(x.astype("i8"), x.astype("i8"), signature=(np.float64, np.float64, np.float64))
    assert r.dtype == np.float64
    with pytest.raises(TypeError):   # float64 -> int64 output is not same_kind
        AXPY(x, x, out=np.empty(5, np.int64))
    out = np.empty(5, np.int64)
    AXPY(x, x, out=out, casting="unsafe")
    np.testing.assert_array_equal(out, ref_axpy(x, x).astype(np.int64))
    with pytest.raises(TypeError):   # the float32 loop needs an unsafe input cast
        AXPY(x, x, dtype=np.float32, casting="safe")


def test_buffered_operands_cast_unaligned_byteswapped():
    n = 20000                                    # more than one buffer
    x = np.arange(n, dtype=np.float64)
    big_endian = x.astype(">f8")
    raw = np.zeros(n * 8 + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, dtype=np.float64, count=n, offset=1)
    unaligned[...] = x
    assert not unaligned.flags.aligned
    for a in (big_endian, unaligned, x.astype(np.int32)):
        np.testing.assert_array_equal(AXPY(a, 1.0), ref_axpy(x, 1.0))


def test_where():
    x = np.arange(6.0)
    mask = np.array([True, False, True, False, False, True])
    out = np.full(6, -1.0)
    AXPY(x, 1.0, out=out, where=mask)
    np.testing.assert_array_equal(out, np.where(mask, ref_axpy(x, 1.0), -1.0))


def test_three_inputs():
    x, y, z = np.arange(4.0), np.arange(4.0) + 1, 0.5
    np.testing.assert_array_equal(FMA3(x, y, z), x * y + z)


# ------------------------------------------------------ ufunc methods --
def test_reduce_and_accumulate_match_python():
    a = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    acc = a[0]
    accs = [acc]
    for v in a[1:]:
        acc = 2 * acc + v
        accs.append(acc)
    assert AXPY.reduce(a) == acc
    np.testing.assert_array_equal(AXPY.accumulate(a), accs)
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(PLUS.reduce(m, axis=0), m.sum(axis=0))
    np.testing.assert_array_equal(PLUS.reduce(m, axis=1, keepdims=True),
                                  m.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(PLUS.accumulate(m, axis=1), np.cumsum(m, axis=1))
    i = np.arange(10)
    assert PLUS.reduce(i) == 45 and PLUS.reduce(i).dtype == np.int64


def test_identity_initial_and_reorderable():
    assert PLUS.identity == 0
    assert PLUS_NOID.identity is None
    assert PLUS.reduce(np.array([], np.float64)) == 0.0
    with pytest.raises(ValueError, match="identity"):
        PLUS_NOID.reduce(np.array([], np.float64))
    m = np.arange(12.0).reshape(3, 4)
    assert PLUS.reduce(m, axis=None) == m.sum()        # reorderable: several axes
    assert PLUS.reduce(m, axis=(0, 1)) == m.sum()
    with pytest.raises(ValueError, match="reorderable"):
        PLUS_NOID.reduce(m, axis=(0, 1))
    assert PLUS_NOID.reduce(m, axis=0, initial=100.0).tolist() == (m.sum(0) + 100).tolist()
    assert PLUS.reduce(m, axis=1, where=m > 4).tolist() == np.sum(m, axis=1,
                                                                 where=m > 4).tolist()


def test_outer_and_at():
    a, b = np.arange(3.0), np.arange(4.0)
    np.testing.assert_array_equal(AXPY.outer(a, b), ref_axpy(a[:, None], b[None, :]))
    x = np.zeros(5)
    PLUS.at(x, [0, 1, 1, 4], 2.0)
    np.testing.assert_array_equal(x, [2.0, 4.0, 0, 0, 2.0])
    y = np.ones(4)
    AXPY.at(y, [3, 3], np.array([1.0, 10.0]))
    assert y.tolist() == [1.0, 1.0, 1.0, 2 * (2 * 1.0 + 1.0) + 10.0]


def test_resolve_dtypes():
    f8, f4 = np.dtype("f8"), np.dtype("f4")
    assert AXPY.resolve_dtypes((f4, f4, None)) == (f4, f4, f4)
    assert AXPY.resolve_dtypes((np.dtype("i1"), f4, None)) == (f8, f8, f8)


# ------------------------------------------------------------ lazy --
def test_lazy_compiles_each_new_type_combination_once():
    @ckernels.jit
    def lazy_axpy(x, y):
        return x + x + y                             # float32 stays float32 in Numba

    f = lazy_axpy
    uf = f.ufunc
    assert uf is not None and _ufuncs.loops(uf) == []
    i4 = np.arange(5, dtype=np.int32)
    r = f(i4, i4)
    assert r.dtype == np.int64                       # Numba's int32 + int32
    np.testing.assert_array_equal(r, ref_axpy(i4.astype("i8"), i4))
    assert f.signatures == ["int64(int32, int32)"]
    assert [d for d, _ in _ufuncs.loops(uf)] == [(np.dtype("i4"),) * 2 + (np.dtype("i8"),)]
    uf(i4, i4)
    assert len(f.signatures) == 1                    # cached, no new compile
    # a new type gets a new loop, not a safe cast to an existing one
    r = uf(np.arange(5.0), np.arange(5.0))
    assert r.dtype == np.float64 and len(f.signatures) == 2
    f4 = np.arange(5, dtype=np.float32)
    assert f(f4, f4).dtype == np.float32 and len(f.signatures) == 3
    # weak scalars match an existing loop of their kind ...
    assert f(f4, 1.5).dtype == np.float32 and len(f.signatures) == 3
    # ... or compile for NumPy's default dtype
    r = f(np.arange(3, dtype=np.int8), 1)
    assert f.signatures[-1] == "int64(int8, int64)"
    np.testing.assert_array_equal(r, [1, 3, 5])
    # earlier answers are still right (NumPy's dispatch cache)
    assert f(i4, i4).dtype == np.int64 and f(f4, 1.5).dtype == np.float32
    n = len(f.signatures)
    assert f(2.0, 3.0) == 7.0 and len(f.signatures) == n     # float64 loop exists
    # output dtype requested: compiled for it
    assert f(np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16),
             dtype=np.float64).dtype == np.float64
    assert f.signatures[-1] == "float64(int16, int16)"
    # ... unless the inputs have a signature with another result: then, as
    # NumPy does, the loop of the requested type, inputs cast (same_kind)
    r = f(i4, i4 + 100, dtype=np.int8)
    assert r.dtype == np.int8 and f.signatures[-1] == "int8(int8, int8)"
    np.testing.assert_array_equal(r, ref_axpy(i4.astype("i1"), (i4 + 100).astype("i1")))
    with pytest.raises(TypeError):                   # int32 -> int8 is not safe
        f(i4, i4, dtype=np.int8, casting="safe")
    # ... and when that one has another result too, no loop can be made
    with pytest.raises(TypeError, match=r"lazy_axpy\(int16, int16\) -> float64"):
        f(i4, i4, dtype=np.int16)
    # a reduction compiles the reduce-compatible loop it needs: the loop of
    # the inputs gives the accumulator's type (Numba: uint16 + uint16 is
    # uint64), then the loop (accumulator, input) -> accumulator
    r = f.reduce(np.array([1, 2, 3], np.uint16))
    assert r == 2 * (2 * 1 + 2) + 3 and r.dtype == np.uint64
    assert f.signatures[-2:] == ["uint64(uint16, uint16)", "uint64(uint64, uint16)"]
    # the raw API: a callback sees the input dtypes (weak scalars as NumPy's
    # defaults) and the fixed output dtype
    log = []
    raw = lazy_ufunc(f, log)
    raw(np.arange(3, dtype=np.int8), 1)
    raw(np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16), dtype=np.float64)
    assert log == [((np.dtype("i1"), np.dtype("i8")), None),
                   ((np.dtype("i2"), np.dtype("i2")), np.dtype("f8"))]
    del uf, raw


def test_lazy_compile_errors_propagate():
    @ckernels.jit
    def lazy_inc(x):
        return x + 1

    uf = lazy_ufunc(lazy_inc)
    with pytest.raises(TypeError):                    # no ckernel type for strings
        uf(np.array(["a"]))
    with pytest.raises(TypeError):
        uf(np.array([1], dtype="M8[s]"))
    np.testing.assert_array_equal(uf(np.arange(3)), [1, 2, 3])


def test_explicit_ufunc_refuses_loops_after_first_call():
    uf = jit_ufunc(plus)
    uf(np.ones(2, np.int32), 1)                       # resolved through the promoter
    comp = next(iter(axpy.compiled.values()))
    with pytest.raises(errors.InvalidStateError, match="make a new ufunc"):
        _ufuncs.add_jit_loop(uf, desc_address(comp), loop_dtypes(comp))


def test_argument_checks():
    comp = axpy.compiled[("float64", "float64")]
    uf = _ufuncs.ufunc("t", 2)
    with pytest.raises(errors.CKTypeError, match="does not hold ckernel type 'float64'"):
        _ufuncs.add_jit_loop(uf, desc_address(comp), ["f4", "f8", "f8"])
    with pytest.raises(errors.CKTypeError):
        _ufuncs.add_jit_loop(uf, desc_address(comp), [">f8", "f8", "f8"])
    with pytest.raises(errors.InvalidArgumentError, match="3 dtypes expected"):
        _ufuncs.add_jit_loop(uf, desc_address(comp), ["f8", "f8"])
    with pytest.raises(errors.InvalidArgumentError, match="takes 2 argument"):
        _ufuncs.add_jit_loop(_ufuncs.ufunc("t1", 1), desc_address(comp), ["f8", "f8"])
    _ufuncs.add_jit_loop(uf, desc_address(comp), ["f8", "f8", "f8"])
    _ufuncs.add_jit_loop(uf, desc_address(comp), ["f8", "f8", "f8"])   # same: no-op
    assert len(_ufuncs.loops(uf)) == 1
    other = div.compiled[("float64", "float64")]
    with pytest.raises(errors.InvalidArgumentError, match="already"):
        _ufuncs.add_jit_loop(uf, desc_address(other), ["f8", "f8", "f8"])
    with pytest.raises(errors.CKTypeError):
        _ufuncs.add_jit_loop(np.add, desc_address(comp), ["f8", "f8", "f8"])
    with pytest.raises(errors.InvalidArgumentError):
        _ufuncs.ufunc("t", 0)
    with pytest.raises(errors.CKTypeError):
        _ufuncs.ufunc("t", 1, compile=3)
    with pytest.raises(errors.CKIndexError):
        _ufuncs.op_ufunc("no_such_op", DTYPE_OF_ID)


# ------------------------------------------------------------ errors --
def test_kernel_error_raises_ckernels_exception(threads):
    y = np.ones(BIG)
    y[BIG // 2 + 123] = 0.0
    with pytest.raises(errors.CKZeroDivisionError, match="division by zero") as ei:
        DIV(np.ones(BIG), y)
    assert isinstance(ei.value, ZeroDivisionError)
    with pytest.raises(errors.CKValueError, match="x is too large"):
        CHECKED(np.linspace(0, 200, BIG))
    with pytest.raises(errors.CKValueError, match="x is too large"):
        CHECKED(np.array([1.0, 101.0]))
    with pytest.raises(errors.CKValueError, match="x is too large"):
        CHECKED(101.0)


def test_kernel_error_in_buffered_chunks_stops_the_loop(threads):
    # float32 inputs are cast to the float64 loop in buffers of 8192: the
    # failing element sits in a later chunk; the loop must stop there
    y = np.ones(100_000, np.float32)
    y[50_000] = 0
    out = np.zeros(100_000)
    with pytest.raises(errors.CKZeroDivisionError):
        DIV(np.ones(100_000, np.float32), y, out=out)
    assert out[60_000:].max() == 0.0   # chunks after the error never ran
    with pytest.raises(errors.CKValueError, match="too large"):
        CHECKED(np.linspace(0, 200, 100_000).astype(">f8"))
    raw = np.zeros(100_000 * 8 + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, dtype=np.float64, count=100_000, offset=1)
    unaligned[...] = 1.0
    unaligned[70_000] = 0.0
    with pytest.raises(errors.CKZeroDivisionError):
        DIV(1.0, unaligned)


def test_kernel_error_in_reduce_accumulate_where():
    with pytest.raises(errors.CKZeroDivisionError):
        DIV.reduce(np.array([1.0, 2.0, 0.0, 3.0]))
    with pytest.raises(errors.CKZeroDivisionError):
        DIV.accumulate(np.array([1.0, 2.0, 0.0, 3.0]))
    with pytest.raises(errors.CKZeroDivisionError):
        DIV(1.0, np.array([1.0, 0.0]), where=np.array([False, True]), out=np.zeros(2))
    x = np.ones(3)
    with pytest.raises(errors.CKZeroDivisionError):
        DIV.at(x, [0, 2], 0.0)
    # masked-out elements are not computed
    out = np.zeros(2)
    DIV(1.0, np.array([0.0, 2.0]), where=np.array([False, True]), out=out)
    assert out.tolist() == [0.0, 0.5]


def test_kernel_errors_from_python_threads():
    y = np.ones(BIG)
    y[-1] = 0.0
    seen = []

    def run():
        for _ in range(5):
            try:
                DIV(np.ones(BIG), y)
            except errors.CKZeroDivisionError as exc:
                seen.append(str(exc))

    ts = [threading.Thread(target=run) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # every message intact (it ends with the function and line: docs/dispatch.md)
    assert [s.split(" [")[0] for s in seen] == ["division by zero"] * 15


def test_error_model_numpy_gives_ieee_and_fp_flags(threads):
    x = np.ones(BIG)
    y = np.ones(BIG)
    y[BIG - 10] = 0.0                            # on a worker's chunk with 2 threads
    with np.errstate(divide="ignore"):
        r = DIV_IEEE(x, y)
    assert np.isinf(r[BIG - 10]) and np.isfinite(np.delete(r, BIG - 10)).all()
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError, match="divide"):
        DIV_IEEE(x, y)
    for pos in range(5000, BIG, BIG // 16):     # chunks of the caller and the worker
        y = np.ones(BIG)
        y[pos] = 0.0
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            DIV_IEEE(x, y)
    with np.errstate(divide="warn"), pytest.warns(RuntimeWarning, match="divide"):
        DIV_IEEE(x, y)
    with np.errstate(all="raise"):
        DIV_IEEE(x, np.ones(BIG))                # no flag: no error


# ------------------------------------------------------------ threads --
def test_large_arrays_match_on_every_thread_count(threads):
    x = np.linspace(-3, 3, BIG + 7)
    y = np.linspace(1, 2, BIG + 7)
    expect = np.exp(np.sin(x)) * np.cos(y)
    np.testing.assert_allclose(TRANS(x, y), expect, rtol=1e-13)
    np.testing.assert_allclose(TRANS(x[::-1], y[::-1]), expect[::-1], rtol=1e-13)
    z = x.copy()
    TRANS(z, y, out=z)                             # in place: may split
    np.testing.assert_allclose(z, expect, rtol=1e-13)
    # overlapping but not in place: NumPy copies, result as if out of place
    w = x.copy()
    PLUS(w[1:], w[:-1], out=w[1:])
    np.testing.assert_array_equal(w[1:], x[1:] + x[:-1])


def test_large_reductions_and_accumulations_stay_serial(threads):
    a = np.arange(BIG, dtype=np.float64)
    assert PLUS.reduce(a) == a.sum()
    np.testing.assert_array_equal(PLUS.accumulate(a), np.cumsum(a))
    i = np.arange(BIG, dtype=np.int64)
    np.testing.assert_array_equal(PLUS.accumulate(i), np.cumsum(i))
    m = np.ones((4, BIG))
    np.testing.assert_array_equal(PLUS.reduce(m, axis=0), m.sum(axis=0))


def test_thread_count_setting_applies():
    x = np.linspace(-3, 3, BIG)
    before, min_time = ckernels.get_num_threads(), _ufuncs.get_parallel_min_time()
    try:
        _ufuncs.set_parallel_min_time(0)
        lib.ck_thread_pool_shutdown()
        ckernels.set_num_threads(1)
        TRANS(x, x)
        assert lib.ck_thread_pool_size() == 0
        ckernels.set_num_threads(2)
        TRANS(x, x)
        assert lib.ck_thread_pool_size() == 1
    finally:
        ckernels.set_num_threads(before)
        _ufuncs.set_parallel_min_time(min_time)


def test_runs_are_split_by_estimated_time():
    """Default threshold (100 us): a costly kernel is split on a short run, a
    cheap one on the same run is not (it would not pay for waking threads)."""
    before = ckernels.get_num_threads()
    assert _ufuncs.get_parallel_min_time() == pytest.approx(1e-4)
    x = np.linspace(-3, 3, 3 * _ufuncs.PROBE_ELEMENTS)
    try:
        ckernels.set_num_threads(2)
        serial = []
        for _ in range(5):              # a preempted probe may overestimate: retry
            lib.ck_thread_pool_shutdown()
            PLUS(x, x)
            serial.append(lib.ck_thread_pool_size() == 0)
        assert any(serial)
        lib.ck_thread_pool_shutdown()
        slow = np.linspace(-3, 3, 3 * _ufuncs.PROBE_ELEMENTS)
        SLOW(slow)
        assert lib.ck_thread_pool_size() == 1
        np.testing.assert_allclose(SLOW(slow), [slow_ref(v) for v in slow])
    finally:
        ckernels.set_num_threads(before)
    with pytest.raises(errors.InvalidArgumentError):
        _ufuncs.set_parallel_min_time(-1)


# ------------------------------------------------------ registry ufuncs --
NUMERIC = [np.dtype(t) for t in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
                                 "f2", "f4", "f8", "c8", "c16")]
BINARY_OPS = ["add", "subtract", "multiply", "divide", "maximum", "less", "equal",
              "logical_and", "bitwise_and", "arctan2", "power"]
UNARY_OPS = ["negative", "absolute", "sqrt", "exp", "isnan", "invert", "logical_not"]
OP_UFUNCS = {name: getattr(ckernels.ops, name).ufunc for name in BINARY_OPS + UNARY_OPS}


def sample(dt, n=7):
    base = np.array([1, 2, 3, 4, 5, 6, 7][:n])
    if dt.kind == "b":
        return (base % 2).astype(dt)
    return base.astype(dt)


def ops_resolve(name, dts):
    try:
        return np.dtype(str(ckernels.types.as_type(getattr(ckernels.ops, name).resolve(
            *[ck_name(d) for d in dts]))))
    except (errors.CKTypeError, TypeError):
        return None


@pytest.mark.parametrize("name", BINARY_OPS)
def test_registry_binary_promotion_matches_numpy_and_ops(name):
    uf, np_uf = OP_UFUNCS[name], getattr(np, name)
    mismatches = []
    for a in NUMERIC:
        for b in NUMERIC:
            x, y = sample(a), sample(b)[::-1].copy()
            want = ops_resolve(name, (a, b))
            try:
                with np.errstate(all="ignore"):
                    got = uf(x, y)
            except TypeError:
                if want is not None:
                    mismatches.append((a, b, "ufunc: no loop", want))
                continue
            if got.dtype != want:
                mismatches.append((a, b, got.dtype, want))
                continue
            try:
                with np.errstate(all="ignore"):
                    ref = np_uf(x, y)
            except TypeError:
                continue               # NumPy refuses; the registry has a kernel
            if ref.dtype != got.dtype:
                mismatches.append((a, b, got.dtype, "numpy", ref.dtype))
                continue
            tol = 1e-3 if got.dtype in (np.float16,) else 1e-6
            np.testing.assert_allclose(got, ref, rtol=tol, err_msg=f"{name}{(a, b)}")
    assert not mismatches


@pytest.mark.parametrize("name", UNARY_OPS)
def test_registry_unary_matches_numpy(name):
    uf, np_uf = OP_UFUNCS[name], getattr(np, name)
    for a in NUMERIC:
        x = sample(a)
        want = ops_resolve(name, (a,))
        try:
            got = uf(x)
        except TypeError:
            assert want is None, (name, a)
            continue
        assert got.dtype == want, (name, a)
        try:
            ref = np_uf(x)
        except TypeError:
            continue
        assert ref.dtype == got.dtype, (name, a)
        np.testing.assert_allclose(got, ref, rtol=1e-3 if got.dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("dt", NUMERIC, ids=str)
@pytest.mark.parametrize("scalar", [1, 2.5, 1j, True], ids=["int", "float", "complex", "bool"])
def test_registry_weak_scalars_match_numpy(dt, scalar):
    for name in ("add", "multiply", "maximum"):
        uf, np_uf = OP_UFUNCS[name], getattr(np, name)
        x = sample(dt)
        try:
            ref = np_uf(x, scalar)
        except TypeError:
            continue
        got = uf(x, scalar)
        assert got.dtype == ref.dtype, (name, dt, scalar)
        np.testing.assert_allclose(got, ref, rtol=1e-3)
        assert uf(scalar, x).dtype == np_uf(scalar, x).dtype


def test_registry_scalar_overflow_like_numpy():
    with pytest.raises(OverflowError):
        OP_UFUNCS["add"](np.ones(3, np.uint8), -1)
    with pytest.raises(OverflowError):
        np.add(np.ones(3, np.uint8), -1)
    assert OP_UFUNCS["add"](np.ones(3, np.uint8), 255).dtype == np.uint8


def test_registry_methods_and_keywords():
    add = OP_UFUNCS["add"]
    m = np.arange(12).reshape(3, 4).astype(np.int8)
    assert add.identity == 0
    r = add.reduce(m)                             # add/multiply reduce ints as int64
    assert r.dtype == np.add.reduce(m).dtype
    np.testing.assert_array_equal(r, np.add.reduce(m))
    np.testing.assert_array_equal(add.accumulate(m, axis=1), np.add.accumulate(m, axis=1))
    np.testing.assert_array_equal(add.outer(np.arange(3), np.arange(4)),
                                  np.add.outer(np.arange(3), np.arange(4)))
    assert add(np.int8(1), np.int8(2), dtype=np.float64).dtype == np.float64
    x = np.zeros(4)
    add.at(x, [0, 0, 3], 1.0)
    assert x.tolist() == [2.0, 0.0, 0.0, 1.0]
    assert add.reduce(np.array([], np.float32)) == 0.0
    mx = OP_UFUNCS["maximum"]
    with pytest.raises(ValueError):
        mx.reduce(np.array([], np.float64))
    big = np.arange(BIG, dtype=np.float64)
    assert add.reduce(big) == big.sum()


def test_registry_large_arrays(threads):
    x = np.linspace(0, 1, BIG)
    np.testing.assert_array_equal(OP_UFUNCS["add"](x, x), x + x)
    np.testing.assert_allclose(OP_UFUNCS["sqrt"](x), np.sqrt(x))


def test_registry_ufunc_sees_registry_kernels_of_jitted_functions():
    @ckernels.jit(["float64(float64, float64)"])
    def hyp(x, y):
        return math.sqrt(x * x + y * y)

    hyp.register("ck_test_dispatch_hyp")
    try:
        op = ckernels.ops.ck_test_dispatch_hyp
        uf = op.ufunc
        np.testing.assert_allclose(uf(np.array([3.0]), 4), [5.0])
        np.testing.assert_allclose(uf(np.array([3], np.int32), np.array([4], np.int8)), [5.0])
        np.testing.assert_allclose(op(np.array([3.0]), 4), [5.0])
        # a kernel registered later: the operation's ufunc is rebuilt with its loop
        hyp.compile("float32(float32, float32)")
        assert op.ufunc is not uf
        r = op(np.array([3.0], np.float32), np.float32(4))
        assert r.dtype == np.float32 and r.tolist() == [5.0]
        del uf
    finally:
        hyp.unregister("ck_test_dispatch_hyp")
    assert ckernels.ops.ck_test_dispatch_hyp.ufunc is None   # no kernels left


# ------------------------------------------------------------ ownership --
def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def test_making_and_dropping_ufuncs_frees_everything():
    x = np.arange(10.0)
    for _ in range(20):           # warm up allocator pools
        jit_ufunc(axpy)(x, x)
        op_ufunc("add")(x, x)
    gc.collect()
    codes = [c.code for c in axpy.compiled.values()]
    refs0 = [c.refcount for c in codes]
    live0, rss0 = ckernels.live_count(), _rss_kib()
    for i in range(3000):
        uf = jit_ufunc(axpy, identity=0.0)
        # each loop's kernel holds a reference to its compiled code
        assert [c.refcount for c in codes] == [r + 1 for r in refs0]
        uf(x, x)
        uf.reduce(x)
        op_ufunc("add")(x, 1)
        del uf
        if i % 500 == 0:
            gc.collect()
    gc.collect()
    assert ckernels.live_count() == live0
    assert [c.refcount for c in codes] == refs0
    assert _rss_kib() - rss0 < 4096, "memory grew while making and dropping ufuncs"


def test_references_are_returned():
    import sys
    ident = np.float64(0.0)
    hook = lambda in_dtypes, out: None  # noqa: E731
    f8 = type(np.dtype("f8"))
    counts = lambda: (sys.getrefcount(ident), sys.getrefcount(hook),  # noqa: E731
                      sys.getrefcount(f8))
    gc.collect()
    before = counts()
    for _ in range(50):
        uf = jit_ufunc(axpy, identity=ident)
        uf.reduce(np.arange(3.0))
        _ufuncs.loops(uf)
        lz = _ufuncs.ufunc("lz", 2, compile=hook, identity=ident)
        with pytest.raises(TypeError):       # the hook adds nothing: no loop
            lz(np.ones(2), np.ones(2))
        fn = _ufuncs.Function(uf, hook)
        del uf, lz, fn
    gc.collect()
    assert counts() == before


def test_lazy_ufunc_cycle_is_collected():
    import weakref

    @ckernels.jit
    def lazy_sub(x, y):
        return x - y

    live0 = ckernels.live_count()
    uf = lazy_ufunc(lazy_sub)     # uf -> its data -> compile hook -> uf
    uf(np.arange(3), np.arange(3))
    assert ckernels.live_count() > live0
    del uf
    # the function's own: f -> f.ufunc -> its data -> compile hook (f's method)
    # -> f, and f.ufunc -> its owner f
    lazy_sub(np.arange(3.0), 1.0)
    r = weakref.ref(lazy_sub)       # (ufuncs take no weak references)
    del lazy_sub
    gc.collect()
    assert r() is None
    assert ckernels.live_count() == live0


def test_raising_kernels_do_not_leak():
    y = np.zeros(4)
    for _ in range(20):
        with pytest.raises(errors.CKZeroDivisionError):
            DIV(np.ones(4), y)
    gc.collect()
    rss0 = _rss_kib()
    for _ in range(20000):
        try:
            DIV(np.ones(4), y)
        except errors.CKZeroDivisionError:
            pass
    gc.collect()
    assert _rss_kib() - rss0 < 2048


def test_dispatch_against_numba_vectorize():
    nv = numba.vectorize(["float64(float64, float64)", "float32(float32, float32)",
                          "int64(int64, int64)"])(lambda x, y: 2 * x + y)
    f4, i8 = np.arange(5, dtype=np.float32), np.arange(5)
    cases = [(np.arange(5.0), 1.5), (np.arange(5, dtype=np.int8),) * 2, (2.0, 3.0),
             (f4, f4), (f4, 2.5), (i8, i8), (i8, 7)]
    for args in cases:
        np.testing.assert_allclose(AXPY(*args), nv(*args))
    for args in cases[:3]:
        assert np.asarray(AXPY(*args)).dtype == np.asarray(nv(*args)).dtype, args
    # The deliberate difference: an exact match (a weak Python scalar matching
    # by kind) wins over signature order; numba.vectorize's ufunc (NumPy's
    # legacy linear search) takes the first loop every input casts to safely.
    assert AXPY(f4, 2.5).dtype == np.float32 and nv(f4, 2.5).dtype == np.float64
    assert AXPY(f4, f4).dtype == np.float32 and nv(f4, f4).dtype == np.float64
    assert AXPY(i8, i8).dtype == np.int64 and nv(i8, i8).dtype == np.float64
    assert AXPY(i8, 7).dtype == np.int64 and nv(i8, 7).dtype == np.float64


# ------------------------------------------------------------ Function --
class Fn(_ufuncs.Function):
    """What a jitted function becomes in Phase B: the call in C, methods in Python."""

    def __init__(self, ufunc, fallback_types=(ckernels.Array,)):
        super().__init__(ufunc, Fn._general, fallback_types)
        self.general_calls = []

    def _general(self, *args, **kwargs):
        self.general_calls.append((args, kwargs))
        return "general"


class WithArrayUfunc:
    """A minimal __array_ufunc__ implementer (stands in for pandas/xarray/dask)."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = [i.a if isinstance(i, WithArrayUfunc) else i for i in inputs]
        return WithArrayUfunc(getattr(ufunc, method)(*inputs, **kwargs))


def test_function_sends_numpy_calls_to_the_ufunc():
    f = Fn(AXPY)
    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x, x), ref_axpy(x, x))
    assert f(2.0, 3.0) == 7.0 and f(2, 3) == 7 and f(True, np.float32(1)) == 3.0
    out = np.empty(4)
    assert f(x, 1.0, out=out) is out and f(x, 1.0, out=(out,)) is out
    r = f(WithArrayUfunc(x), 1.0)
    assert isinstance(r, WithArrayUfunc)
    np.testing.assert_array_equal(r.a, ref_axpy(x, 1.0))
    np.testing.assert_array_equal(f(np.ma.masked_array(x, [0, 1, 0, 0]), 1.0).mask,
                                  [False, True, False, False])
    assert f.general_calls == []
    assert f.ufunc is AXPY and "ufunc=<ufunc 'axpy'>" in repr(f)


def test_function_sends_other_calls_to_the_fallback():
    f = Fn(AXPY)
    x = np.arange(3.0)
    assert f([1.0, 2.0], 1.0) == "general"
    assert f(ckernels.array([1.0]), 1.0) == "general"
    assert f(x, 1.0, out=[0.0]) == "general"
    assert f(x, "s") == "general"
    assert [len(a) for a, _ in f.general_calls] == [2, 2, 2, 2]
    assert f.general_calls[2][1] == {"out": [0.0]}
    f.ufunc = None                      # no ufunc (e.g. string signatures)
    assert f(x, x) == "general"
    plain = _ufuncs.Function(AXPY)    # no fallback: NumPy says what is wrong
    with pytest.raises(TypeError):
        plain(x, "s")
    with pytest.raises(errors.InvalidStateError):
        _ufuncs.Function()(x)
    with pytest.raises(errors.CKTypeError):
        _ufuncs.Function(len)
    with pytest.raises(errors.CKTypeError):
        _ufuncs.Function(AXPY, 3)


def test_function_wrappers_hook():
    seen = []

    def wrappers(self, *args, **kwargs):
        seen.append((self, len(args), sorted(kwargs)))
        return "wrapped"

    f = _ufuncs.Function(AXPY, None, (), "", wrappers=wrappers)
    assert f.wrappers is wrappers
    x = np.arange(3.0)
    assert f(WithArrayUfunc(x), 1.0) == "wrapped"  # an __array_ufunc__ implementer
    assert seen == [(f, 2, [])]
    assert f(x, 1.0, out=(WithArrayUfunc(np.empty(3)),)) == "wrapped"   # also as out=
    assert seen[1][2] == ["out"]
    f(x, 1.0)                                      # ndarrays: straight to the ufunc
    f(np.ma.masked_array(x), 1.0)                  # ndarray subclasses too
    assert len(seen) == 2
    f.wrappers = None                              # none: those go to the ufunc
    assert isinstance(f(WithArrayUfunc(x), 1.0), WithArrayUfunc) and len(seen) == 2
    with pytest.raises(errors.CKTypeError):
        f.wrappers = 3


def test_function_is_collected():
    import weakref
    f = Fn(AXPY)
    f.self_ref = f                      # a cycle through the instance dict
    r = weakref.ref(f)
    del f
    gc.collect()
    assert r() is None


def test_function_fallback_kinds():
    f = Fn(AXPY)
    f.fallback_kinds = "OSUT"          # string signatures: strings take the general path
    assert f.fallback_kinds == "OSUT"
    assert f(np.array(["a"]), 1.0) == "general"
    assert f(np.str_("a"), 1.0) == "general"
    assert f(np.array([object()]), 1.0) == "general"
    np.testing.assert_array_equal(f(np.arange(2.0), np.float64(1)), [1.0, 3.0])
    with pytest.raises(errors.InvalidArgumentError):
        f.fallback_kinds = "x" * 40
