"""``@ckernels.jit`` benchmarks: jitted elementwise kernels against
``numba.vectorize`` and NumPy (all writing into ``out=``), 1 vs 2 threads,
the error models (``"python"``: checked division, vs ``"numpy"``: IEEE),
compile latency, cached load time, and string building.

    python benchmarks/bench_jit.py [section ...]   (CK_BENCH_N, CK_BENCH_REPS)

with sections elementwise, error_model, compile, cache, cold, entry,
compile_strings, cache_strings, strings, refcount and scalar (all of them by
default).

Ratios are time / baseline time in the same run (> 1: slower than the
baseline).
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numba
import numpy as np

import ckernels
from _timing import best, report

N = int(os.environ.get("CK_BENCH_N", 10_000_000))
REPS = int(os.environ.get("CK_BENCH_REPS", 7))


# ---------------------------------------------------------------- kernels --
@ckernels.jit("float64(float64, float64)")
def ck_axpy(x, y):
    return 2.0 * x + y


@numba.vectorize(["float64(float64, float64)"])
def nb_axpy(x, y):
    return 2.0 * x + y


@ckernels.jit("float64(float64)")
def ck_damped(x):
    return math.sin(x) * math.exp(-x)


@numba.vectorize(["float64(float64)"])
def nb_damped(x):
    return math.sin(x) * math.exp(-x)


# the error models: a division (checked for zero under "python")
@ckernels.jit("float64(float64, float64)")
def ck_ratio_py(x, y):
    return x / y + 1.0


@ckernels.jit("float64(float64, float64)", error_model="numpy")
def ck_ratio_np(x, y):
    return x / y + 1.0


@numba.vectorize(["float64(float64, float64)"])
def nb_ratio(x, y):
    return x / y + 1.0


@ckernels.jit("int64(int64, int64)")
def ck_idiv_py(a, b):
    return a // b + a % b


@ckernels.jit("int64(int64, int64)", error_model="numpy")
def ck_idiv_np(a, b):
    return a // b + a % b


@numba.vectorize(["int64(int64, int64)"])
def nb_idiv(a, b):
    return a // b + a % b


def np_axpy(x, y, out):
    np.multiply(x, 2.0, out=out)
    np.add(out, y, out=out)


def np_damped(x, out, tmp):
    np.negative(x, out=tmp)
    np.exp(tmp, out=tmp)
    np.sin(x, out=out)
    np.multiply(out, tmp, out=out)


def bench_elementwise() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(N) * 10
    y = rng.random(N)
    out = np.empty(N)
    tmp = np.empty(N)
    cx, cy, cout = ckernels.asarray(x), ckernels.asarray(y), ckernels.asarray(out)
    old = ckernels.get_num_threads()

    print("-- 2*x + y --")
    t_vec = best(lambda: nb_axpy(x, y, out=out))
    t_np = best(lambda: np_axpy(x, y, out))
    kern = ck_axpy.instantiate("float64", ["float64", "float64"], "strided")
    t_k = best(lambda: kern(out, x, y))
    res = {}
    for threads in (1, 2):
        ckernels.set_num_threads(threads)
        res[threads] = best(lambda: ck_axpy(cx, cy, out=cout))
        report(f"ckernels.jit, {threads} thread(s), out=", res[threads],
               "numba.vectorize(out=)", t_vec)
        report(f"ckernels.jit, {threads} thread(s), out=", res[threads],
               "numpy multiply+add (out=)", t_np)
    ckernels.set_num_threads(1)
    report("ckernels.jit, NumPy arrays in, out=", best(lambda: ck_axpy(x, y, out=out)),
           "numba.vectorize(out=)", t_vec)
    report("strided entry called directly", t_k, "numba.vectorize(out=)", t_vec)
    report("ckernels.jit 2 threads", res[2], "ckernels.jit 1 thread", res[1])
    assert np.array_equal(ck_axpy(x, y), 2 * x + y)

    print("-- sin(x) * exp(-x) --")
    t_vec = best(lambda: nb_damped(x, out=out))
    t_np = best(lambda: np_damped(x, out, tmp))
    for threads in (1, 2):
        ckernels.set_num_threads(threads)
        res[threads] = best(lambda: ck_damped(cx, out=cout))
        report(f"ckernels.jit, {threads} thread(s), out=", res[threads],
               "numba.vectorize(out=)", t_vec)
        report(f"ckernels.jit, {threads} thread(s), out=", res[threads],
               "numpy sin/exp/multiply (out=)", t_np)
    report("ckernels.jit 2 threads", res[2], "ckernels.jit 1 thread", res[1])
    ckernels.set_num_threads(old)
    np.testing.assert_allclose(ck_damped(x[:1000]), np.sin(x[:1000]) * np.exp(-x[:1000]),
                               rtol=1e-14)


def bench_error_model() -> None:
    """error_model="python" (the default: divisions checked, raising like Python)
    against "numpy" (IEEE results, no checks) and numba.vectorize (numpy model)."""
    rng = np.random.default_rng(1)
    x = rng.random(N) * 10
    y = rng.random(N) + 0.5
    out = np.empty(N)
    a = rng.integers(-10**6, 10**6, N)
    b = rng.integers(1, 1000, N)
    iout = np.empty(N, np.int64)
    old = ckernels.get_num_threads()
    ckernels.set_num_threads(1)
    print("-- error models, 1 thread: x / y + 1.0 (float64) --")
    t_vec = best(lambda: nb_ratio(x, y, out=out))
    t_py = best(lambda: ck_ratio_py(x, y, out=out))
    t_np = best(lambda: ck_ratio_np(x, y, out=out))
    report('error_model="python" (default)', t_py, "numba.vectorize(out=)", t_vec)
    report('error_model="numpy"', t_np, "numba.vectorize(out=)", t_vec)
    report('error_model="python"', t_py, 'error_model="numpy"', t_np)
    print("-- error models, 1 thread: a // b + a % b (int64) --")
    t_vec = best(lambda: nb_idiv(a, b, out=iout))
    t_py = best(lambda: ck_idiv_py(a, b, out=iout))
    t_np = best(lambda: ck_idiv_np(a, b, out=iout))
    report('error_model="python" (default)', t_py, "numba.vectorize(out=)", t_vec)
    report('error_model="numpy"', t_np, "numba.vectorize(out=)", t_vec)
    report('error_model="python"', t_py, 'error_model="numpy"', t_np)
    ckernels.set_num_threads(old)
    assert np.array_equal(ck_idiv_np(a, b), a // b + a % b)


# ---------------------------------------------------------------- latency --
_SRC = "def f{i}(x, y):\n    return math.sin(x) * {i}.5 + y * y\n"


def _fresh(i):
    ns = {"math": math}
    exec(_SRC.format(i=i), ns)
    return ns[f"f{i}"]


def bench_compile() -> None:
    print("-- compile latency (new function each time; median of 5) --")
    sig = "float64(float64, float64)"
    t_ck, t_vec = [], []
    for i in range(5):
        f = _fresh(100 + i)
        t0 = time.perf_counter()
        ckernels.jit(sig)(f)
        t_ck.append(time.perf_counter() - t0)
        g = _fresh(200 + i)
        t0 = time.perf_counter()
        numba.vectorize([sig])(g)
        t_vec.append(time.perf_counter() - t0)
    report("@ckernels.jit (njit + single/strided entries)", statistics.median(t_ck),
           "@numba.vectorize", statistics.median(t_vec))


_CACHE_MOD = textwrap.dedent("""
    import math
    import ckernels

    @ckernels.jit("float64(float64, float64)", cache=True)
    def f(x, y):
        return math.sin(x) * 2.5 + y * y
""")
_CACHE_RUN = textwrap.dedent("""
    import sys, time
    import numpy as np
    import ckernels                     # excluded, as the import of the module's other names
    x = np.ones(4)
    t0 = time.perf_counter()
    import benchcachemod as m           # decoration: compile, or load a cache
    m.f(x, x)                           # a usable kernel: one call
    t = time.perf_counter() - t0
    s = m.f.stats
    print(t, sum(s.kernel_hits.values()), sum(s.kernel_misses.values()),
          int("numba" in sys.modules))
""")


def bench_cache() -> None:
    print("-- cache=True: decoration + first call in a fresh interpreter (ckernels imported) --")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "benchcachemod.py"), "w") as fh:
            fh.write(_CACHE_MOD)
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(d, "cache"),
                   PYTHONPATH=d + os.pathsep + os.environ.get("PYTHONPATH", ""))
        numba_path = dict(env, CKERNELS_JIT_NATIVE_CACHE="0")
        times = []
        for e in (env, env, env, env, numba_path, numba_path, numba_path):
            p = subprocess.run([sys.executable, "-c", _CACHE_RUN], env=e, cwd=d,
                               capture_output=True, text=True, check=True)
            t, hits, misses, nb = p.stdout.split()
            times.append((float(t), int(hits), int(misses), int(nb)))
    t_miss, m0 = times[0][0], times[0][2]
    native, numba = times[1:4], times[4:]
    assert m0 == 1 and all(h == 1 and nb == 0 for _, h, _, nb in native), times
    assert all(h == 1 and nb == 1 for _, h, _, nb in numba), times
    t_native = min(t for t, *_ in native)
    t_numba = min(t for t, *_ in numba)
    report("native cached load (no Numba import)", t_native, "compile (1st run)", t_miss)
    report("native cached load (no Numba import)", t_native, "Numba-cache load (Numba imp.)",
           t_numba)


_COLD = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import math
    import numpy as np
    import {module}
    {decorator}
    def f(x, y):
        return math.sin(x) * 2.5 + y * y
    f(np.ones(4), np.ones(4))
    print(time.perf_counter() - t0)
""")
_COLD_CK = ("ckernels", '@ckernels.jit("float64(float64, float64)")')
_COLD_NB = ("numba", '@numba.vectorize(["float64(float64, float64)"])')


def bench_cold() -> None:
    print("-- a fresh interpreter: import, decorate a numeric function, call it once "
          "(min of 5, alternating) --")
    runs = {_COLD_CK: [], _COLD_NB: []}
    for _ in range(5):
        for which in runs:
            src = _COLD.format(module=which[0], decorator=which[1])
            p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                               check=True)
            runs[which].append(float(p.stdout.split()[-1]))
    report("import ckernels + @ckernels.jit + call", min(runs[_COLD_CK]),
           "import numba + @numba.vectorize + call", min(runs[_COLD_NB]))


_ENTRY = textwrap.dedent("""
    import sys, time
    import numba
    from numba.core import entrypoints
    t = time.perf_counter()
    entrypoints.init_all()          # what Numba's first compilation runs
    t = time.perf_counter() - t
    print(t, sum(m.split(".")[0] == "ckernels" for m in sys.modules))
""")


def bench_entry() -> None:
    print("-- a plain numba.njit program with ckernels installed: Numba's extension "
          "entry points at its first compilation (min of 5) --")
    out = []
    for _ in range(5):
        p = subprocess.run([sys.executable, "-c", _ENTRY], capture_output=True, text=True,
                           check=True)
        t, n = p.stdout.split()
        out.append((float(t), int(n)))
    t, n = min(out)
    print(f"  numba_extensions init: {t * 1e3:8.2f} ms, ckernels modules imported: {n}")


# --------------------------------------------- string functions: latency --
#: bodies of string functions, compiled in fresh interpreters by both sides
_STR_BODIES = {
    '"item-" + str(i)': ("(i)", "int64", '"item-" + str(i)'),
    'f"item-{i}"': ("(i)", "int64", 'f"item-{i}"'),
    's + ":" + s': ("(s)", "string", 's + ":" + s'),
}
_STR_COLD = textwrap.dedent("""
    import sys, time
    t0 = time.perf_counter()
    import numpy as np
    side, params, argty, body = sys.argv[1:5]
    src = f"def f{params}:\\n    return {body}\\n"
    ns = {}
    exec(src, ns)
    if side == "ck":
        import ckernels
        f = ckernels.jit(f"string({argty})")(ns["f"])
        r = f(np.arange(3) if argty == "int64" else ["a", "b"])
    else:
        import numba
        nbty = "int64" if argty == "int64" else "unicode_type"
        f = numba.njit(f"unicode_type({nbty})")(ns["f"])
        r = f(3 if argty == "int64" else "a")
    print(time.perf_counter() - t0)
""")


def bench_compile_strings() -> None:
    """First compile of a string function in a fresh interpreter (import,
    decorate with the signature, one call), ``@ckernels.jit`` against
    ``numba.njit`` of the same body: interleaved runs, ratios per pair."""
    reps = int(os.environ.get("CK_BENCH_COLD_REPS", 5))
    print(f"-- first compile of a string function in a fresh interpreter (import + decorate + "
          f"call; {reps} interleaved pairs; min and median of the per-pair ratios) --")
    for name, (params, argty, body) in _STR_BODIES.items():
        ck, nb = [], []
        for _ in range(reps):
            for side, out in (("ck", ck), ("nb", nb)):
                p = subprocess.run([sys.executable, "-c", _STR_COLD, side, params, argty, body],
                                   capture_output=True, text=True, check=True)
                out.append(float(p.stdout.split()[-1]))
        ratios = sorted(a / b for a, b in zip(ck, nb))
        print(f"  {name:22s} ckernels.jit {min(ck):6.2f} s (median {statistics.median(ck):5.2f})"
              f"   numba.njit {min(nb):6.2f} s (median {statistics.median(nb):5.2f})"
              f"   ratio min {ratios[0]:4.2f}x median {statistics.median(ratios):4.2f}x")


_STR_CACHE_MOD = textwrap.dedent("""
    import ckernels

    @ckernels.jit("string(int64, float64, string)", cache=True)
    def f(i, x, s):
        return f"{s:>6}-{i:05d}|{x:.3f}"
""")
_STR_CACHE_RUN = textwrap.dedent("""
    import sys, time
    import numpy as np
    import ckernels                     # excluded, as the import of the module's other names
    i, x = np.arange(3), np.ones(3)
    t0 = time.perf_counter()
    import benchstrmod as m             # decoration: compile, or load a cache
    r = m.f(i, x, ["a", "b", "c"])      # a usable kernel: one call
    t = time.perf_counter() - t0
    s = m.f.stats
    assert r.tolist()[0] == "     a-00000|1.000", r.tolist()
    print(t, sum(s.kernel_hits.values()), sum(s.kernel_misses.values()),
          int("numba" in sys.modules))
""")


def bench_cache_strings() -> None:
    print("-- cache=True, a string function: decoration + first call in a fresh interpreter "
          "(ckernels imported) --")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "benchstrmod.py"), "w") as fh:
            fh.write(_STR_CACHE_MOD)
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(d, "cache"),
                   PYTHONPATH=d + os.pathsep + os.environ.get("PYTHONPATH", ""))
        numba_path = dict(env, CKERNELS_JIT_NATIVE_CACHE="0")
        times = []
        for e in (env, env, env, env, numba_path, numba_path, numba_path):
            p = subprocess.run([sys.executable, "-c", _STR_CACHE_RUN], env=e, cwd=d,
                               capture_output=True, text=True, check=True)
            t, hits, misses, nb = p.stdout.split()
            times.append((float(t), int(hits), int(misses), int(nb)))
    t_miss = times[0][0]
    native, numba = times[1:4], times[4:]
    assert all(h == 1 and nb == 0 for _, h, _, nb in native), times
    t_native = min(t for t, *_ in native)
    t_numba = min(t for t, *_ in numba)
    report("native cached load (no Numba import)", t_native, "compile (1st run)", t_miss)
    report("native cached load (no Numba import)", t_native, "Numba-cache load (Numba imp.)",
           t_numba)


# ---------------------------------------------------------------- strings --
@ckernels.jit("string(int64)")
def ck_label(i):
    return "item-" + str(i)


@ckernels.jit("string(int64)")
def ck_label_f(i):
    return f"item-{i}"


def _arena_stats(arr):
    """Capacity/used of the arena holding a 1-d string array's bytes."""
    from ckernels.lowlevel import MemBlock, ffi
    am = ffi.cast("ck_string_arrmeta *", arr._arrmeta + ffi.sizeof("ck_dim_arrmeta"))
    return MemBlock(am.blockref, incref=True).stats


def bench_strings() -> None:
    n = min(N, 1_000_000)
    print(f"-- building {n} strings 'item-<i>' --")
    idx = np.arange(n)
    cidx = ckernels.array(idx)          # ckernels in, ckernels (arena) out
    ck_label(cidx[:2]), ck_label_f(cidx[:2])
    threads = ckernels.get_num_threads()
    rows = []
    for nt in (1, 2):
        ckernels.set_num_threads(nt)
        rows.append((f'"item-" + str(i), {nt} thread{"s" if nt > 1 else ""}',
                     best(lambda: ck_label(cidx), reps=3)))
        rows.append((f'f"item-{{i}}", {nt} thread{"s" if nt > 1 else ""}',
                     best(lambda: ck_label_f(cidx), reps=3)))
    ckernels.set_num_threads(threads)
    t_ck = rows[0][1]
    t_py = best(lambda: [f"item-{i}" for i in range(n)], reps=3)
    report("ckernels.jit string(int64) (arena)", t_ck, "Python list comprehension", t_py)
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        t_pa = best(lambda: pc.binary_join_element_wise(
            "item-", pc.cast(pa.array(idx), pa.string()), ""), reps=3)
        for what, t in rows:
            report(f"ckernels.jit {what}", t, "pyarrow compute cast+join", t_pa)
        pa_arr = pc.binary_join_element_wise("item-", pc.cast(pa.array(idx), pa.string()), "")
    except ImportError:
        pa_arr = None
        print("    pyarrow not installed: skipped (pip install pyarrow)")
    sdt = np.dtypes.StringDType()
    t_np = best(lambda: np.strings.add("item-", idx.astype(sdt)), reps=3)
    report("ckernels.jit string(int64) (arena)", t_ck, "numpy StringDType strings.add", t_np)
    t_sdt = best(lambda: ck_label(idx), reps=3)
    report("ckernels.jit NumPy int64 in -> StringDType out", t_sdt,
           "numpy StringDType strings.add", t_np)
    r = ck_label(cidx)
    assert r[:3].tolist() == ["item-0", "item-1", "item-2"]
    st = _arena_stats(r)
    payload = sum(len(f"item-{i}") for i in range(n))
    print(f"    bytes per string: payload {payload / n:.2f}; ckernel {(st.capacity + 16 * n) / n:.2f} "
          f"(16 B ck_string + arena {st.capacity / n:.2f}, used {st.used / n:.2f})"
          + (f"; arrow {pa_arr.nbytes / n:.2f} (offsets + data)" if pa_arr is not None else ""))
    del r


def bench_refcount_in_jitted_code() -> None:
    import ctypes
    from ckernels.lowlevel import ffi, lib
    # The exported C functions as plain function pointers (a call per operation).
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    c_incref, c_decref = (
        proto(int(ffi.cast("uintptr_t", ffi.addressof(lib, name))))
        for name in ("ck_memblock_incref", "ck_memblock_decref"))

    @numba.njit
    def inline_pairs(mb, n):
        for _ in range(n):
            mb.incref()
            mb.decref()
        return mb.refcount

    @numba.njit
    def c_call_pairs(addr, n):
        for _ in range(n):
            c_incref(addr)
            c_decref(addr)
        return 0

    mb = ckernels.MemBlock.pod()
    n = 20_000_000
    t_inline = best(lambda: inline_pairs(mb, n), reps=5) / n
    t_c = best(lambda: c_call_pairs(mb.address, n), reps=5) / n
    print("-- memblock incref+decref pair inside jitted code --")
    print(f"{'inline atomicrmw (ckernels.nb)':44s} {t_inline * 1e9:9.2f} ns   "
          f"{'call to the exported C symbol':34s} {t_c * 1e9:9.2f} ns   "
          f"ratio {t_inline / t_c:5.2f}x")
    assert inline_pairs(mb, 10) == 1
    mb.close()


def bench_scalar_call() -> None:
    print("-- one scalar call through the kernel path --")
    t = best(lambda: [ck_axpy(1.0, 2.0) for _ in range(1000)], reps=5) / 1000
    t_nb = best(lambda: [ck_axpy.dispatcher(1.0, 2.0) for _ in range(1000)], reps=5) / 1000
    report("ckernels.jit scalar call (f.ufunc, NumPy scalar out)", t, "numba dispatcher call", t_nb)


def main() -> None:
    print(f"ckernel {ckernels.__version__} jit benchmarks, N={N}, best of {REPS}, "
          f"numba {numba.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    bench_elementwise()
    bench_error_model()
    bench_compile()
    bench_cache()
    bench_cold()
    bench_entry()
    bench_compile_strings()
    bench_cache_strings()
    bench_strings()
    bench_refcount_in_jitted_code()
    bench_scalar_call()


#: sections that can be run alone: python benchmarks/bench_jit.py <section> [...]
SECTIONS = {"elementwise": bench_elementwise, "error_model": bench_error_model,
            "compile": bench_compile, "cache": bench_cache, "cold": bench_cold,
            "entry": bench_entry, "strings": bench_strings,
            "compile_strings": bench_compile_strings, "cache_strings": bench_cache_strings,
            "refcount": bench_refcount_in_jitted_code, "scalar": bench_scalar_call}


if __name__ == "__main__":
    unknown = [a for a in sys.argv[1:] if a not in SECTIONS]
    if unknown:
        sys.exit(f"bench_jit.py: unknown section(s) {unknown}; choose from {sorted(SECTIONS)}")
    if sys.argv[1:]:
        for name in sys.argv[1:]:
            SECTIONS[name]()
    else:
        main()
