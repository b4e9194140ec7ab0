"""The speed table of the hardening round, every row in one run: each row is a
ratio (ckernels time / baseline time, < 1: faster than the baseline), the two
sides measured alternately, ``CK_BENCH_REPS`` rounds (default 5), the median
ratio of the rounds printed with the target.

    python benchmarks/bench_hardening.py                 # every row
    python benchmarks/bench_hardening.py float opencl    # some rows

Rows (the target after each):
  dot       dims ``dot`` 1e6 x 8, 1 thread / numba.guvectorize              (<= 1.0x)
  ragged    row sum of 1e6 ragged rows, 1 thread, result allocated /
            awkward offsets + numba.njit into a preallocated out            (<= 1.0x)
  opencl    axpy 1e7 float32 into out= / a plain pyopencl kernel (PoCL,
            one work item per element, groups of 64)                       (<= 1.0x)
  compile   first compile of a string function in a fresh interpreter /
            numba.njit                                                      (<= 1.0x)
  cold      fresh interpreter: import + decorate + first call /
            numba.vectorize                                                 (<= 1.0x)
  pandas    pandas Series of 1e6 ints -> f"item-{i}" Series / pandas        (<= 0.5x)
  memory    RSS retained per string(string) definition, minus numba.njit's  (<= 100 KiB)
  float     ``str(x)`` of 1e6 random float64 / ``f"{x:.2f}"`` (both jitted)  (<= 1.5x)
  fixed     jitted ``f"{x:.2f}"`` of 1e6 random float64 / CPython's
            ``[f"{v:.2f}" for v in x.tolist()]`` and / NumPy's
            ``np.strings.mod("%.2f", x)``, the three sides alternately      (<= 1.0x)
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ckernels  # noqa: E402

ROUNDS = int(os.environ.get("CK_BENCH_REPS", 5))


def _time(fn, inner: int = 3) -> float:
    """Best of ``inner`` timed calls (one round of one side)."""
    t = float("inf")
    for _ in range(inner):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def _alternate(ck, base, rounds: int = ROUNDS, inner: int = 3):
    """Both sides timed in turn, ``rounds`` times: (ck times, base times)."""
    ck(), base()
    a, b = [], []
    for _ in range(rounds):
        a.append(_time(ck, inner))
        b.append(_time(base, inner))
    return a, b


def _row(name: str, a, b, goal: float, unit: str = "ms") -> None:
    ratios = [x / y for x, y in zip(a, b)]
    r = statistics.median(ratios)
    scale = 1e3 if unit == "ms" else 1.0
    print(f"{name:44s} ck {statistics.median(a) * scale:9.2f} {unit}  base "
          f"{statistics.median(b) * scale:9.2f} {unit}  ratio median {r:5.2f}x "
          f"(min {min(ratios):4.2f} max {max(ratios):4.2f})  target <= {goal}x: "
          f"{'met' if r <= goal else 'NOT MET'}", flush=True)


# ------------------------------------------------------------------ rows --
def _gdot(x, y, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    out[0] = s


def _dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


def _rowsum(r):
    s = 0.0
    for x in r:
        s += x
    return s


def _nb_rowsum(offsets, content, out):
    for i in range(len(offsets) - 1):
        s = 0.0
        for k in range(offsets[i], offsets[i + 1]):
            s += content[k]
        out[i] = s


def _one_thread(fn):
    threads = ckernels.get_num_threads()
    ckernels.set_num_threads(1)
    try:
        return fn()
    finally:
        ckernels.set_num_threads(threads)


def row_dot() -> None:
    import numba
    ck_dot = ckernels.jit("float64(N * float64, N * float64)")(_dot)
    nb_dot = numba.guvectorize(["void(float64[:], float64[:], float64[:])"],
                               "(n),(n)->()")(_gdot)
    n = 1_000_000
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((n, 8)), rng.standard_normal((n, 8))
    out, out2 = np.empty(n), np.empty(n)
    a, b = _one_thread(lambda: _alternate(lambda: ck_dot(x, y, out=out),
                                          lambda: nb_dot(x, y, out2)))
    assert np.allclose(out, out2)
    _row("dims dot 1e6x8, 1 thread / guvectorize", a, b, 1.0)


def row_ragged() -> None:
    import numba
    import pyarrow as pa
    ck_rowsum = ckernels.jit("float64(var * float64)")(_rowsum)
    nb_rowsum = numba.njit(_nb_rowsum)
    n = 1_000_000
    rng = np.random.default_rng(0)
    lens = rng.integers(0, 21, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    content = rng.standard_normal(int(offsets[-1]))
    # the same buffers, zero-copy through Arrow (as awkward's ListOffsetArray)
    ca = ckernels.asarray(pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(content)))
    res = np.empty(n)
    a, b = _one_thread(lambda: _alternate(lambda: ck_rowsum(ca),
                                          lambda: nb_rowsum(offsets, content, res)))
    assert np.allclose(np.asarray(ck_rowsum(ca)), res)
    _row("ragged row sum 1e6, 1 thread / ak+njit", a, b, 1.0)


def row_opencl() -> None:
    from ckernels import errors
    try:
        ctx = ckernels.Context("opencl")
        import pyopencl as cl
        import pyopencl.array as cla
    except (errors.BackendError, ImportError) as exc:
        print(f"{'opencl axpy':44s} skipped ({exc})")
        return
    pctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(pctx)
    n = 10_000_000
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)

    @ckernels.jit("float32(float32, float32)")
    def axpy(a, b):
        return 2.0 * a + b

    dx, dy, out = ctx.array(x), ctx.array(y), ctx.empty((n,), "float32")
    px, py = cla.to_device(queue, x), cla.to_device(queue, y)
    pout = cla.empty_like(px)
    # a plain kernel: one work item per element, groups of 64 as ckernels
    # launches (n is a multiple of 64, so it needs no bounds check)
    prg = cl.Program(pctx, "__kernel void axpy(__global const float *x, "
                     "__global const float *y, __global float *z) {\n"
                     "  size_t i = get_global_id(0); z[i] = 2.0f * x[i] + y[i]; }").build()
    k = cl.Kernel(prg, "axpy")

    def plain():
        k(queue, (n,), (64,), px.data, py.data, pout.data).wait()
    axpy(dx, dy, out=out)
    plain()
    np.testing.assert_array_equal(out.to_numpy(), pout.get())
    a, b = _alternate(lambda: axpy(dx, dy, out=out), plain)
    _row("OpenCL axpy 1e7 out= / plain pyopencl", a, b, 1.0)
    # the same launch forced onto the general kernel (strides, N-d branch):
    # what contiguous operands ran before the contiguous variant existed
    from ckernels.jit.device import target
    plan = list(target("opencl").plans(axpy.compiled[("float32", "float32")], ctx).values())[-1]
    contig = plan.kernel

    def general():
        plan.kernel = b"ck_kernel"
        try:
            axpy(dx, dy, out=out)
        finally:
            plan.kernel = contig
    a, b = _alternate(general, plain)
    _row("  (general kernel forced) / plain pyopencl", a, b, 1.0)


_STR_COLD = """
import sys, time
t0 = time.perf_counter()
import numpy as np
side = sys.argv[1]
def f(i):
    return f"item-{i}"
if side == "ck":
    import ckernels
    g = ckernels.jit("string(int64)")(f)
    g(np.arange(3))
else:
    import numba
    g = numba.njit("unicode_type(int64)")(f)
    g(3)
print(time.perf_counter() - t0)
"""

_COLD = """
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
"""


def _subprocess_pairs(src_ck, src_nb, args_ck=(), args_nb=(), rounds=ROUNDS):
    a, b = [], []
    for _ in range(rounds):
        for src, args, acc in ((src_ck, args_ck, a), (src_nb, args_nb, b)):
            p = subprocess.run([sys.executable, "-c", src, *args], capture_output=True,
                               text=True, check=True)
            acc.append(float(p.stdout.split()[-1]))
    return a, b


def row_compile() -> None:
    a, b = _subprocess_pairs(_STR_COLD, _STR_COLD, ("ck",), ("nb",))
    _row('first compile f"item-{i}" / numba.njit', a, b, 1.0, unit="s")


def row_cold() -> None:
    ck = _COLD.format(module="ckernels", decorator='@ckernels.jit("float64(float64, float64)")')
    nb = _COLD.format(module="numba", decorator='@numba.vectorize(["float64(float64, float64)"])')
    a, b = _subprocess_pairs(ck, nb)
    _row("import + decorate + call / numba.vectorize", a, b, 1.0, unit="s")


def row_pandas() -> None:
    import pandas as pd

    @ckernels.jit("string(int64)")
    def label(i):
        return f"item-{i}"

    s = pd.Series(np.arange(1_000_000), name="n")
    assert label(s).iloc[7] == "item-7"
    a, b = _alternate(lambda: label(s), lambda: "item-" + s.astype(str), inner=2)
    _row('pandas f"item-{i}" Series / pandas', a, b, 0.5)


def row_memory() -> None:
    path = os.path.join(HERE, "..", "tests", "python", "jit", "test_jit_leaks.py")
    src = open(path).read()
    define = src.split('_DEFINE = r"""', 1)[1].split('"""', 1)[0]
    n, sig = 30, "string(string)"
    # numba-released: numba.njit with llvmlite's pass pipelines freed as
    # ckernels.jit frees them (ckernels.jit.llvm_passes): what ckernels adds
    got = {"ckernels": [], "numba": [], "numba-released": []}
    for _ in range(max(1, ROUNDS // 2)):
        for mode in got:
            p = subprocess.run([sys.executable, "-c", define, mode, str(n), sig],
                               capture_output=True, text=True, check=True)
            got[mode].append(json.loads(p.stdout.strip().splitlines()[-1])["rss_kib"])
    ck, nb = statistics.median(got["ckernels"]), statistics.median(got["numba"])
    rel = statistics.median(got["numba-released"])
    print(f"{'RSS per string(string) definition':44s} ck {ck:7.0f} KiB  numba.njit {nb:7.0f} KiB"
          f"  difference {ck - nb:+6.0f} KiB  target <= +100 KiB: "
          f"{'met' if ck - nb <= 100 else 'NOT MET'}; numba.njit with its pass pipelines "
          f"freed {rel:7.0f} KiB (ck {ck - rel:+6.0f} KiB)", flush=True)


def row_float() -> None:
    @ckernels.jit("string(float64)")
    def plain(x):
        return str(x)

    @ckernels.jit("string(float64)")
    def fixed(x):
        return f"{x:.2f}"

    rng = np.random.default_rng(3)
    x = rng.standard_normal(1_000_000) * 10.0 ** rng.integers(-8, 9, 1_000_000)
    assert plain(x[:1000]).tolist() == [repr(float(v)) for v in x[:1000]]
    a, b = _alternate(lambda: plain(x), lambda: fixed(x), inner=2)
    _row("str(float) / f'{x:.2f}' (1e6, jitted)", a, b, 1.5)


def row_fixed() -> None:
    @ckernels.jit("string(float64)")
    def fixed(x):
        return f"{x:.2f}"

    rng = np.random.default_rng(3)
    x = rng.standard_normal(1_000_000) * 10.0 ** rng.integers(-8, 9, 1_000_000)
    want = [f"{v:.2f}" for v in x.tolist()]
    assert fixed(x).tolist() == want
    assert np.strings.mod("%.2f", x[:1000]).tolist() == want[:1000]
    sides = {"ck": lambda: fixed(x), "cpython": lambda: [f"{v:.2f}" for v in x.tolist()],
             "numpy": lambda: np.strings.mod("%.2f", x)}
    got = {k: [] for k in sides}
    for _ in range(ROUNDS):
        for k, fn in sides.items():
            got[k].append(_time(fn, 1 if k == "numpy" else 2))
    _row("f'{x:.2f}' jitted / CPython list (1e6)", got["ck"], got["cpython"], 1.0)
    _row("f'{x:.2f}' jitted / np.strings.mod (1e6)", got["ck"], got["numpy"], 1.0)


ROWS = {"dot": row_dot, "ragged": row_ragged, "opencl": row_opencl, "compile": row_compile,
        "cold": row_cold, "pandas": row_pandas, "memory": row_memory, "float": row_float,
        "fixed": row_fixed}


def main(names) -> None:
    print(f"bench_hardening: {ROUNDS} alternating rounds per row; medians "
          f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    for name in names or ROWS:
        ROWS[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
