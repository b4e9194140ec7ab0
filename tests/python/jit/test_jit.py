"""@ckernels.jit: signatures, calling, errors, strings, instantiate, registry,
calls between jitted functions, pickling, cache=True and a C caller.

Besides the live-memblock check of conftest, every test here checks that
Numba's NRT allocation counters are balanced (``_nrt_balance``)."""

import gc
import os
import pickle
import subprocess
import sys
import textwrap
import threading

import numba
import numpy as np
import pytest
from numba.core.runtime import nrt as _nrt_mod

import ckernels
from ckernels import errors
from ckernels._native import ffi, lib

_nrt_mod._nrt.memsys_enable_stats()


@pytest.fixture(autouse=True)
def _nrt_balance(request):
    gc.collect()
    s0 = _nrt_mod.rtsys.get_allocation_stats()
    yield
    gc.collect()
    s1 = _nrt_mod.rtsys.get_allocation_stats()
    if not getattr(request.function, "nrt_leak_ok", False):
        assert s1.alloc - s0.alloc == s1.free - s0.free, (s0, s1)
        assert s1.mi_alloc - s0.mi_alloc == s1.mi_free - s0.mi_free, (s0, s1)


# ---------------------------------------------------------------- kernels --
@ckernels.jit("float64(float64, float64)")
def axpy(x, y):
    return 2.0 * x + y


@ckernels.jit(["int64(int64, int64)", "float64(float64, float64)"])
def floordiv(a, b):
    return a // b


@ckernels.jit("float64(float64)")
def checked(x):
    if x > 100.0:
        raise ValueError("x is too large")
    return x + 1.0


class MyError(Exception):
    pass


@ckernels.jit("float64(float64)")
def custom(x):
    if x < 0:
        raise MyError("negative input")
    return x


@ckernels.jit("float64(int64)")
def pick(i):
    t = (10.0, 20.0, 30.0)
    return t[i]


@ckernels.jit("string(string)")
def shout(s):
    return s.upper() + "!"


@ckernels.jit("string(int64)")
def stars(n):
    return "*" * n


@ckernels.jit("int64(string)")
def nchars(s):
    return len(s)


@ckernels.jit("string(string, string)")
def join2(a, b):
    return a + "|" + b


@ckernels.jit("bool(float32)")
def is_big(x):
    return x > 1.5


@ckernels.jit
def anytype(x):
    return x * 2


anytype(1)  # compile int64 at import (compiled signatures keep their code block)


@ckernels.jit("float64(float64)")
def calls_other(x):
    return checked(x) * axpy(x, 1.0)


@numba.njit
def njit_caller(x):
    return axpy(x, 1.0) + checked(x)


@ckernels.jit("float64(float64)")
def ident(x):
    return x


# ---------------------------------------------------------------- signatures --
@pytest.mark.parametrize("sig", ["float64", "float64(", "(float64)", "floatx(float64)",
                                 "float64(float16)", "float64(3 * bytes)", "float64(strided * int32)",
                                 "float64(bytes)", "float64(float64,)", 42])
def test_bad_signature_is_type_error(sig):
    with pytest.raises(TypeError):
        ckernels.jit(sig)(lambda x: x)


def test_uncompilable_function_is_type_error():
    with pytest.raises(TypeError, match="cannot compile"):
        @ckernels.jit("float64(string)")
        def f(s):
            return s + 1.0


def test_signature_list_and_types():
    assert floordiv.signatures == ["int64(int64, int64)", "float64(float64, float64)"]
    assert "ckernels.jit floordiv" in repr(floordiv)


def test_numba_signature_objects():
    f = ckernels.jit(numba.float64(numba.float64))(lambda x: x + 0.5)
    assert f.signatures == ["float64(float64)"]
    assert f(1.0) == 1.5


# ---------------------------------------------------------------- calling --
def test_scalars_give_numpy_scalars():
    # scalar calls go through the ufunc: NumPy scalars, as from any ufunc
    assert axpy(1.0, 2.0) == 4.0
    assert axpy(1, 2) == 4.0            # Python ints take the float signature
    assert type(axpy(1.0, 2.0)) is np.float64 and type(axpy(1, 2)) is np.float64
    assert floordiv(7, 2) == 3 and type(floordiv(7, 2)) is np.int64
    assert floordiv(7.5, 2.0) == 3.0 and type(floordiv(7.5, 2.0)) is np.float64
    assert type(floordiv(np.int8(7), np.int8(2))) is np.int64     # safe cast


def test_lists_arrays_numpy():
    assert axpy([1.0, 2.0], 10.0).to_list() == [12.0, 14.0]
    a = ckernels.array([[1.0, 2.0], [3.0, 4.0]])
    r = axpy(a, [100.0, 200.0])       # broadcasting
    assert isinstance(r, ckernels.Array)
    assert r.to_list() == [[102.0, 204.0], [106.0, 208.0]]
    x = np.arange(6.0).reshape(2, 3)
    r = axpy(x, np.arange(3.0))
    assert isinstance(r, np.ndarray)
    np.testing.assert_array_equal(r, 2 * x + np.arange(3.0))
    # non-contiguous and negative strides
    y = np.arange(20.0)[::-3]
    np.testing.assert_array_equal(axpy(y, y[::-1]), 2 * y + y[::-1])
    # ragged lists: var dims
    assert axpy([[1.0], [2.0, 3.0]], 1.0).to_list() == [[3.0], [5.0, 7.0]]


def test_out_argument():
    x = np.linspace(0, 1, 101)
    out = np.empty_like(x)
    assert axpy(x, 1.0, out=out) is out
    np.testing.assert_allclose(out, 2 * x + 1)
    cout = ckernels.empty("strided * float64", [101])
    assert axpy(x, x, out=cout) is cout
    np.testing.assert_allclose(np.asarray(cout), 3 * x)
    out32 = np.zeros(101, np.float32)     # other dtype: converted
    axpy(x, 0.0, out=out32)
    np.testing.assert_allclose(out32, (2 * x).astype(np.float32))
    out2 = np.zeros((3, 101))             # out broadcasts the inputs
    axpy(x, 1.0, out=out2)
    np.testing.assert_allclose(out2, np.broadcast_to(2 * x + 1, (3, 101)))
    with pytest.raises(ValueError):
        axpy(x, 1.0, out=np.zeros(5))
    ro = np.zeros(101)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        axpy(x, 1.0, out=ro)
    with pytest.raises(TypeError):
        axpy(x, 1.0, out=[0.0] * 101)


def test_argument_type_selection():
    i = np.arange(5)
    np.testing.assert_array_equal(floordiv(i, 2), i // 2)
    assert floordiv(i, 2).dtype == np.int64
    assert floordiv(np.arange(5.0), 2).dtype == np.float64
    assert floordiv(np.arange(5, dtype=np.int8), np.int8(2)).dtype == np.int64  # safe cast
    # the argument and NumPy's casting rule named (ckernels.errors.NoLoopError, a
    # subclass of NumPy's own _UFuncNoLoopError, so NumPy's except clauses still work)
    with pytest.raises(np._core._exceptions._UFuncNoLoopError,
                       match=r"argument 1 .* complex128.*'safe' casting rule"):
        floordiv(np.arange(3, dtype=np.uint64), np.arange(3, dtype=np.int64) + 1j)
    with pytest.raises(TypeError, match="no signature"):                 # the general path
        floordiv(ckernels.asarray(np.arange(3, dtype=np.uint64)), 1j)
    with pytest.raises(TypeError, match="unsupported type"):
        axpy({"a": 1}, 1.0)
    # NumPy operands: float16 casts safely to float64, as in any ufunc; ckernels
    # arrays of float16 have no jitted signature
    assert axpy(np.zeros(2, np.float16), 1.0).dtype == np.float64
    with pytest.raises(TypeError, match="element type"):
        axpy(ckernels.asarray(np.zeros(2, np.float16)), 1.0)
    with pytest.raises(TypeError):
        axpy(["a", "b"], 1.0)


def test_bool_and_float32():
    x = np.array([0.5, 1.5, 2.5], np.float32)
    r = is_big(x)
    assert r.dtype == np.bool_
    assert r.tolist() == [False, False, True]


def test_no_signature_compiles_per_type():
    f = ckernels.jit(lambda x: x * 2)
    assert f.signatures == []
    assert f(3) == 6
    assert f(1.5) == 3.0
    assert f(np.arange(3, dtype=np.int32)).dtype == np.int64   # Numba: int32 * 2
    assert f("ab") == "abab"
    assert f.signatures == ["int64(int64)", "float64(float64)", "int64(int32)",
                            "string(string)"]
    g = ckernels.jit(lambda: (1, 2))
    with pytest.raises(TypeError, match="not a ckernel element type"):
        g()


def test_threads_give_same_results():
    x = np.random.default_rng(1).standard_normal(300_000)
    old = ckernels.get_num_threads()
    try:
        ckernels.set_num_threads(1)
        r1 = axpy(x, x[::-1].copy())
        ckernels.set_num_threads(2)
        r2 = axpy(x, x[::-1].copy())
    finally:
        ckernels.set_num_threads(old)
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(r1, 2 * x + x[::-1])


# ---------------------------------------------------------------- errors --
def test_zero_division_int():
    with pytest.raises(ZeroDivisionError, match="division by zero") as ei:
        floordiv([1, 2, 3], [1, 0, 1])
    assert isinstance(ei.value, errors.CKZeroDivisionError)
    assert ei.value.status == lib.CK_ERR_ZERO_DIVISION


def test_zero_division_float():
    with pytest.raises(errors.CKZeroDivisionError):
        floordiv(1.0, 0.0)


def test_index_error():
    assert pick([0, 2, -1]).to_list() == [10.0, 30.0, 30.0]
    with pytest.raises(IndexError, match="tuple index out of range") as ei:
        pick([0, 7])
    assert ei.value.status == lib.CK_ERR_INDEX


def test_explicit_raise():
    with pytest.raises(ValueError, match=r"^x is too large \[checked at .*test_jit\.py:\d+, "
                       r"element 1\]$") as ei:
        checked(np.array([1.0, 1000.0]))
    assert ei.value.status == lib.CK_ERR_VALUE
    with pytest.raises(errors.UserKernelError,
                       match=r"^MyError: negative input \[custom at .*test_jit\.py:\d+\]$") as ei:
        custom(-1.0)
    assert ei.value.status == lib.CK_ERR_USER


def test_dynamic_exception_message():
    @ckernels.jit("float64(float64)")
    def dyn(x):
        raise ValueError("bad value", x)
    with pytest.raises(ValueError, match=r"\('bad value', 2.5\)"):
        dyn(2.5)



def test_no_warning_printed(capfd):
    with pytest.raises(ZeroDivisionError):
        floordiv(1, 0)
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_strided_stops_at_failing_element():
    k = checked.instantiate("float64", ["float64"], "strided")
    src = np.array([1.0, 2.0, 500.0, 3.0, 4.0])
    dst = np.full(5, -7.0)
    with pytest.raises(ValueError, match="too large"):
        k(dst, src)
    assert dst.tolist() == [2.0, 3.0, -7.0, -7.0, -7.0]
    # general (non-unit stride) path
    src2 = np.array([1.0, 0, 2.0, 0, 500.0, 0, 3.0])[::2]
    dst2 = np.full(4, -7.0)
    with pytest.raises(ValueError):
        k(dst2, src2)
    assert dst2.tolist() == [2.0, 3.0, -7.0, -7.0]


def test_parallel_error_propagates():
    x = np.ones(400_000)
    x[333_333] = 1e9
    old = ckernels.get_num_threads()
    try:
        ckernels.set_num_threads(2)
        for _ in range(3):
            with pytest.raises(errors.CKValueError, match="x is too large"):
                checked(x)
    finally:
        ckernels.set_num_threads(old)


def test_error_from_other_thread():
    box = {}

    def work():
        try:
            checked([1e6])
        except ValueError as e:
            box["e"] = e
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert "too large" in str(box["e"])


# ---------------------------------------------------------------- strings --
STRINGS = ["", "a", "hello world", "héllo", "日本語テキスト", "emoji 😀🎉", "x" * 100_000,
           "ünïcödé" * 5000]


def test_string_to_string():
    r = shout(STRINGS)
    assert r.to_list() == [s.upper() + "!" for s in STRINGS]
    assert shout("abc") == "ABC!"
    assert shout(np.array(["ab", "c"])).tolist() == ["AB!", "C!"]   # NumPy in, NumPy out


def test_string_inputs_and_outputs_mixed():
    assert nchars(STRINGS).to_list() == [len(s) for s in STRINGS]
    assert stars([0, 1, 5]).to_list() == ["", "*", "*****"]
    assert join2(STRINGS, "z").to_list() == [s + "|z" for s in STRINGS]
    assert join2([["a", "b"], ["c", "d"]], ["x", "y"]).to_list() == \
        [["a|x", "b|y"], ["c|x", "d|y"]]


def test_string_results_large_serial():
    words = [f"w{i}é" for i in range(100_000)]
    r = shout(words)
    assert r.to_list()[::9999] == [w.upper() + "!" for w in words][::9999]


def test_string_out_argument():
    out = ckernels.array(["", "", ""])
    assert shout(["a", "bé", ""], out=out) is out
    assert out.to_list() == ["A!", "BÉ!", "!"]


def test_string_error_message():
    @ckernels.jit("string(string)")
    def first(s):
        return s[0]
    assert first(["ab", "c"]).to_list() == ["a", "c"]
    with pytest.raises(IndexError):
        first(["ab", ""])


# ---------------------------------------------------------------- instantiate --
def test_instantiate_single_and_strided():
    code = axpy.compiled[("float64", "float64")].code
    refs = lib.ck_memblock_refcount(code.ptr)
    ks = axpy.instantiate("float64", ["float64", "float64"], "single")
    kt = axpy.instantiate(ckernels.types.float64, (ckernels.types.float64,) * 2, "strided")
    assert ks.single and ks.strided is None and ks.address
    assert kt.strided and kt.single is None
    assert ks.single != kt.strided
    dump = kt.debug_repr()
    assert "axpy" in dump and "[strided]" in dump
    a, b = np.arange(4.0), np.full(4, 0.5)
    np.testing.assert_array_equal(kt(np.empty(4), a, b), 2 * a + b)
    assert ks(np.empty(1), a[2:3], b[:1])[0] == 4.5
    assert lib.ck_memblock_refcount(code.ptr) == refs + 2   # each kernel holds the code
    del ks, kt
    gc.collect()
    assert lib.ck_memblock_refcount(code.ptr) == refs
    with pytest.raises(TypeError, match="no compiled signature"):
        axpy.instantiate("float32", ["float64", "float64"])
    with pytest.raises(ValueError):
        axpy.instantiate("float64", ["float64", "float64"], "triple")


def test_instantiate_string_kernel_owns_arena():
    k = shout.instantiate("string", "string", "single")
    src = ffi.new("ck_string *")
    data = ffi.new("char[]", "héllo".encode())
    src.begin = data
    src.end = data + len("héllo".encode())
    dst = ffi.new("ck_string *")
    srcs = ffi.new("const char *[]", [ffi.cast("const char *", src)])
    assert lib.ck_kernel_call_single(ffi.cast("ck_prefix *", k.address),
                                     ffi.cast("char *", dst), srcs) == 0
    assert ffi.buffer(dst.begin, dst.end - dst.begin)[:].decode() == "HÉLLO!"


def test_kernel_keeps_code_alive():
    before = ckernels.live_count()

    def make():
        f = ckernels.jit("float64(float64)")(lambda x: x * 3.0)
        return f.instantiate("float64", "float64", "strided")
    k = make()
    gc.collect()
    assert ckernels.live_count() == before + 1   # only the kernel's code reference
    np.testing.assert_array_equal(k(np.empty(3), np.arange(3.0)), [0.0, 3.0, 6.0])
    del k
    gc.collect()
    assert ckernels.live_count() == before


def test_dispatcher_is_exposed():
    assert isinstance(axpy.dispatcher, numba.core.registry.CPUDispatcher)
    assert axpy.py_func(1.0, 2.0) == 4.0


# ---------------------------------------------------------------- calls --
def test_call_from_jit_and_njit():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(calls_other(x), (x + 1) * (2 * x + 1))
    assert njit_caller(2.0) == 5.0 + 3.0
    assert anytype(3) == 6    # (a new signature would keep a code block for good)
    f = ckernels.jit(lambda x: anytype(x) + 1)
    assert f(np.int32(3)) == 7
    assert njit_caller.py_func(2.0) == 8.0


def test_call_from_jit_propagates_errors():
    with pytest.raises(ValueError, match="too large"):
        calls_other(1000.0)


# ---------------------------------------------------------------- registry --
def test_register_and_dispatch():
    f = ckernels.jit(["float64(float64, float64)", "int64(int64, int64)"])(
        lambda a, b: a * 10 + b)
    f.register("jit_test_op")
    try:
        op = ffi.new("const ck_op **")
        assert lib.ck_op_find(b"jit_test_op", op) == 0
        assert lib.ck_op_arity(op[0]) == 2
        assert lib.ck_op_kernel_count(op[0]) == 2
        if hasattr(ckernels, "ops"):
            r = ckernels.ops.jit_test_op(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
            np.testing.assert_array_equal(np.asarray(r), [13.0, 24.0])
            assert ckernels.ops.jit_test_op(ckernels.array([1, 2]), 5).to_list() == [15, 25]
        with pytest.raises(errors.NotSupportedError):
            shout.register("jit_test_strop")
    finally:
        f.unregister("jit_test_op")
    assert lib.ck_op_kernel_count(op[0]) == 0


def test_register_at_decoration_and_later_signatures():
    g = ckernels.jit(register="jit_test_op2")(lambda x: x + 1)
    try:
        g(1.5)
        g(np.int32(1))
        op = ffi.new("const ck_op **")
        assert lib.ck_op_find(b"jit_test_op2", op) == 0
        assert lib.ck_op_kernel_count(op[0]) == 2
    finally:
        g.unregister("jit_test_op2")


# ---------------------------------------------------------------- pickling --
def test_pickle_by_reference():
    assert pickle.loads(pickle.dumps(axpy)) is axpy


def test_pickle_by_value_rebuilds():
    k = 4.0
    f = ckernels.jit("float64(float64)")(lambda x: x * k)
    blob = pickle.dumps(f)
    assert pickle.loads(blob) is f          # the process has it: the same object
    sigs = f.signatures
    del f
    gc.collect()
    g = pickle.loads(blob)                  # rebuilt (compiled again)
    assert isinstance(g, ckernels.JitKernel) and g.signatures == sigs
    assert g([1.0, 2.0]).to_list() == [4.0, 8.0]
    assert pickle.loads(blob) is g


def _globals_named(blob: bytes) -> set:
    """The ``module name`` pairs a pickle stream looks up (GLOBAL and
    STACK_GLOBAL after two strings)."""
    import pickletools
    out, pushed, memo = set(), [None], {}
    for op, arg, _ in pickletools.genops(blob):
        if op.name == "GLOBAL":
            out.add(arg)
        elif op.name == "STACK_GLOBAL":
            out.add(" ".join(map(str, pushed[-2:])))
        elif op.name == "MEMOIZE":
            memo[len(memo)] = pushed[-1]
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            pushed.append(memo.get(arg))
        elif "UNICODE" in op.name:
            pushed.append(arg)
    return out


def test_pickles_made_before_the_split_still_load():
    """Jitted functions pickled by value before ``jit/decorator.py`` was split
    name ``ckernels.jit.decorator._rebuild`` with its old arguments (no class):
    such a pickle still loads; new pickles name ``ckernels.jit.pickling`` and
    the kernel's class."""
    from numba.core import serialize

    from ckernels.jit import decorator

    class Old:     # what JitKernel.__reduce__ returned before the split
        def __init__(self, py_func, sigs, key):
            self.args = (serialize.dumps(py_func), sigs, False, {}, "numpy", 0.0, key)

        def __reduce__(self):
            return (decorator._rebuild, self.args)

    k = 3.0
    old = pickle.dumps(Old(lambda x, y: x * k + y, ["float64(float64, float64)"], "old-key-1"))
    assert "ckernels.jit.decorator _rebuild" in _globals_named(old)
    g = pickle.loads(old)
    assert isinstance(g, ckernels.JitKernel) and g.signatures == ["float64(float64, float64)"]
    assert g.error_model == "numpy" and g.identity == 0.0
    assert g([1.0, 2.0], 1.0).to_list() == [4.0, 7.0]
    assert pickle.loads(old) is g           # remembered under its key, as before
    new = pickle.dumps(g)
    assert {"ckernels.jit.pickling _rebuild", "ckernels.jit.kernel JitKernel"} <= \
        _globals_named(new)
    assert not any(n.startswith("ckernels.jit.decorator") for n in _globals_named(new))
    assert pickle.loads(new) is g


# ---------------------------------------------------------------- cache=True --
def test_cache_second_interpreter_loads(tmp_path):
    mod = tmp_path / "jitcachemod.py"
    mod.write_text(textwrap.dedent("""
        import math
        import ckernels

        @ckernels.jit(["float64(float64)", "string(string)"], cache=True)
        def f(x):
            return x + x

        @ckernels.jit("float64(float64)", cache=True)
        def g(x):
            if x < 0:
                raise ValueError("negative")
            return math.sqrt(x) + f(x)
    """))
    script = textwrap.dedent("""
        import json, sys
        import jitcachemod as m
        out = {"f": m.f([1.5]).to_list(), "s": m.f("ab"), "g": m.g(4.0)}
        try:
            m.g(-1.0)
        except ValueError as e:
            out["err"] = str(e)
        st = [m.f.stats, m.g.stats]
        out["disp_hits"] = sum(sum(s.dispatcher_hits.values()) for s in st)
        out["disp_misses"] = sum(sum(s.dispatcher_misses.values()) for s in st)
        out["kern_hits"] = sum(sum(s.kernel_hits.values()) for s in st)
        out["kern_misses"] = sum(sum(s.kernel_misses.values()) for s in st)
        print(json.dumps(out))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    import json
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    first, second = runs
    for r in runs:
        assert r["f"] == [3.0] and r["s"] == "abab" and r["g"] == 10.0
        assert r["err"].startswith("negative [g at ")   # the user's line, cached too
    assert first["kern_misses"] == 3 and first["kern_hits"] == 0
    assert first["disp_misses"] == 3
    assert second["kern_misses"] == 0 and second["kern_hits"] == 3
    assert second["disp_misses"] == 0 and second["disp_hits"] == 3


# ---------------------------------------------------------------- C caller --
C_CALLER = r"""
#include <string.h>
#include <ckernel/ckernel.h>

int call_single(ck_prefix *k, double *dst, const double *a, const double *b) {
  const char *src[2] = {(const char *)a, (const char *)b};
  return ck_prefix_single(k)((char *)dst, src, k);
}

int call_strided(ck_prefix *k, double *dst, const double *a, const double *b,
                 size_t n, char *msg, size_t msglen) {
  const char *src[2] = {(const char *)a, (const char *)b};
  intptr_t strides[2] = {sizeof(double), sizeof(double)};
  int st = ck_prefix_strided(k)((char *)dst, sizeof(double), src, strides, n, k);
  if (st != 0 && msg != NULL && msglen > 0) {
    strncpy(msg, ck_last_error(), msglen - 1);
    msg[msglen - 1] = '\0';
  }
  return st;
}
"""


def test_c_program_calls_jitted_kernel(tmp_path):
    import ctypes
    import shutil
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "caller.c"
    src.write_text(C_CALLER)
    so = tmp_path / "libcaller.so"
    libdir = ckernels.get_library_dir()
    subprocess.run([cc, "-std=c11", "-shared", "-fPIC", "-O1", f"-I{ckernels.get_include()}",
                    str(src), "-o", str(so), f"-L{libdir}", "-lckernel",
                    f"-Wl,-rpath,{libdir}"], check=True)
    caller = ctypes.CDLL(str(so))
    dp = ctypes.POINTER(ctypes.c_double)
    caller.call_single.argtypes = [ctypes.c_void_p, dp, dp, dp]
    caller.call_strided.argtypes = [ctypes.c_void_p, dp, dp, dp, ctypes.c_size_t,
                                    ctypes.c_char_p, ctypes.c_size_t]

    def p(a):
        return a.ctypes.data_as(dp)
    ks = axpy.instantiate("float64", ["float64", "float64"], "single")
    out, a, b = np.zeros(1), np.array([3.0]), np.array([0.25])
    assert caller.call_single(ks.address, p(out), p(a), p(b)) == 0
    assert out[0] == 6.25
    kt = checked.instantiate("float64", ["float64"], "strided")
    # checked is unary: the second source pointer is ignored
    a = np.array([1.0, 2.0, 3.0, 1e6, 5.0])
    out = np.zeros(5)
    msg = ctypes.create_string_buffer(256)
    st = caller.call_strided(kt.address, p(out), p(a), p(a), 5, msg, 256)
    assert st == lib.CK_ERR_VALUE
    assert msg.value.decode().startswith("x is too large [checked at ")   # the user's line
    assert out.tolist() == [2.0, 3.0, 4.0, 0.0, 0.0]
    st = caller.call_strided(kt.address, p(out), p(a), p(a), 3, msg, 256)
    assert st == 0
