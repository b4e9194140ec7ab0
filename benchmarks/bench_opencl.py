"""``@ckernels.jit`` on OpenCL against hand-written pyopencl kernels.

On the same data (float32, N printed; ``CK_BENCH_OPENCL_N`` overrides):
- ``2*x + y`` and ``sin(x)*exp(-x)``: a jitted call on device arrays (result
  allocated by the call, as the API does) vs a ``pyopencl.elementwise.ElementwiseKernel``
  writing into a preallocated array (both wait for completion);
- host->device and device->host bandwidth through ckernel buffers and through
  ``pyopencl.enqueue_copy``;
- cold compile (first call of a new function: Numba typing, OpenCL C emission,
  clBuildProgram) vs warm (cached program) for ckernel, and the same for a new
  ``ElementwiseKernel``;
- call overhead (issue 15's target): a jitted call on device arrays of 10
  elements with ``out=`` vs a hand-written pyopencl kernel launch plus
  ``queue.finish()`` (the plain ``kernel(queue, ...)`` call, and the same with
  ``set_scalar_arg_dtypes``, pyopencl's fastest path), interleaved rounds,
  best of each;
- operators on device arrays (``d + d``, ``d * 2.5``, ``np.sin(d)``, ``d.sum()``,
  ``d[::2] + 1``) on 10 and ``N`` elements vs the same on ``pyopencl.array``
  arrays (results allocated by the call on both sides).  With pyopencl
  available both run in *one* cl_context (``ckernels.Context.from_pyopencl``),
  so the comparison is the same device and driver state.

Ratios are printed as ``ratio X.XXx`` = ckernel time / pyopencl time.  Without
an OpenCL platform the script says so and exits 0; without pyopencl only the
ckernel numbers are printed.
"""

import math
import os
import sys
import time

import numpy as np

import ckernels
from ckernels import errors


def best(fn, repeat=5, number=1):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        ts.append((time.perf_counter() - t0) / number)
    return min(ts)


def ratio(a, b):
    return f"ratio {a / b:.2f}x" if b > 0 else "ratio n/a"


def main() -> int:
    try:
        ctx = ckernels.Context("opencl")
    except errors.BackendError as exc:
        print(f"bench_opencl: no OpenCL platform ({exc}); skipped")
        return 0
    try:
        import pyopencl as cl
        import pyopencl.array as cla
        from pyopencl.elementwise import ElementwiseKernel
        pctx = cl.create_some_context(interactive=False)
        queue = cl.CommandQueue(pctx)
    except Exception as exc:  # noqa: BLE001 - optional baseline
        print(f"bench_opencl: pyopencl unavailable ({exc}); ckernel numbers only")
        cl = None

    n = int(os.environ.get("CK_BENCH_OPENCL_N", 10_000_000))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    print(f"bench_opencl: N={n} float32, ckernel device: {ctx.describe()}")
    if cl is not None:
        print(f"bench_opencl: pyopencl device: {queue.device.name} "
              f"({queue.device.platform.name})")

    @ckernels.jit("float32(float32, float32)")
    def axpy(a, b):
        return 2.0 * a + b

    @ckernels.jit("float32(float32)")
    def sinexp(a):
        return math.sin(a) * math.exp(-a)

    dx, dy = ctx.array(x), ctx.array(y)
    out = ctx.empty((n,), "float32")
    axpy(dx, dy)
    sinexp(dx)           # warm up (compile + build)
    if cl is not None:
        px, py = cla.to_device(queue, x), cla.to_device(queue, y)
        pout = cla.empty_like(px)
        k_axpy = ElementwiseKernel(pctx, "const float *x, const float *y, float *z",
                                   "z[i] = 2.0f * x[i] + y[i]", "axpy")
        k_sinexp = ElementwiseKernel(pctx, "const float *x, float *z",
                                     "z[i] = sin(x[i]) * exp(-x[i])", "sinexp")
        k_axpy(px, py, pout).wait()
        k_sinexp(px, pout).wait()
        # same results?
        k_axpy(px, py, pout).wait()
        np.testing.assert_allclose(axpy(dx, dy).to_numpy(), pout.get(), rtol=1e-6, atol=1e-6)

    # ---- kernels
    for name, ck_call, pcl_call in [
            ("2*x + y", lambda: axpy(dx, dy),
             (lambda: k_axpy(px, py, pout).wait()) if cl else None),
            ("2*x + y (out=)", lambda: axpy(dx, dy, out=out),
             (lambda: k_axpy(px, py, pout).wait()) if cl else None),
            ("sin(x)*exp(-x)", lambda: sinexp(dx),
             (lambda: k_sinexp(px, pout).wait()) if cl else None),
            ("sin(x)*exp(-x) (out=)", lambda: sinexp(dx, out=out),
             (lambda: k_sinexp(px, pout).wait()) if cl else None)]:
        t_ck = best(ck_call)
        line = f"kernel {name:24s} ckernel {t_ck * 1e3:8.2f} ms"
        if pcl_call is not None:
            t_p = best(pcl_call)
            line += f"  pyopencl {t_p * 1e3:8.2f} ms  {ratio(t_ck, t_p)}"
        print(line)

    # ---- transfers
    nbytes = x.nbytes
    buf = ctx.new_buffer(nbytes)
    off = buf.allocate(nbytes, align=64)
    host_back = np.empty_like(x)
    t_h2d = best(lambda: buf.write(off, x))
    t_d2h = best(lambda: buf.read_into(off, host_back))   # into preallocated memory
    t_d2h_new = best(lambda: buf.read(off, nbytes))       # into a new bytearray
    line_h2d = f"transfer host->device ckernel {nbytes / t_h2d / 1e9:7.2f} GB/s"
    line_d2h = f"transfer device->host ckernel {nbytes / t_d2h / 1e9:7.2f} GB/s"
    if cl is not None:
        pbuf = cl.Buffer(pctx, cl.mem_flags.READ_WRITE, nbytes)
        hb = np.empty_like(x)
        p_h2d = best(lambda: cl.enqueue_copy(queue, pbuf, x).wait())
        p_d2h = best(lambda: cl.enqueue_copy(queue, hb, pbuf).wait())
        line_h2d += f"  pyopencl {nbytes / p_h2d / 1e9:7.2f} GB/s  {ratio(t_h2d, p_h2d)}"
        line_d2h += f"  pyopencl {nbytes / p_d2h / 1e9:7.2f} GB/s  {ratio(t_d2h, p_d2h)}"
    print(line_h2d)
    print(line_d2h)
    print(f"transfer device->host ckernel Buffer.read (new bytearray each time) "
          f"{nbytes / t_d2h_new / 1e9:7.2f} GB/s")
    t_arr = best(lambda: ctx.array(x))
    t_np = best(lambda: dx.to_numpy())
    print(f"transfer ctx.array(x) {nbytes / t_arr / 1e9:7.2f} GB/s   "
          f"arr.to_numpy() {nbytes / t_np / 1e9:7.2f} GB/s")

    if cl is not None:
        call_overhead(ckernels, cl, cla, pctx, queue)
        operators(ckernels, cl, cla, queue, n)

    # ---- cold vs warm compile (a new function each round; a unique constant
    # defeats the program caches of ckernel, pyopencl and PoCL)
    small = ctx.array(x[:1024])
    stamp = time.time_ns()
    colds, warms, pcolds, pwarms = [], [], [], []
    for r in range(3):
        c = 1.0 + (stamp % 100000 + r) * 1e-7
        ns = {"ckernels": ckernels, "math": math}
        exec(f"@ckernels.jit('float32(float32)')\ndef fresh(a):\n"
             f"    return math.sin(a) * {c!r} + a\n", ns)
        fresh = ns["fresh"]
        t0 = time.perf_counter()
        fresh(small).to_numpy()
        colds.append(time.perf_counter() - t0)
        warms.append(best(lambda: fresh(small).to_numpy()))
        if cl is not None:
            psmall = cla.to_device(queue, x[:1024])
            pz = cla.empty_like(psmall)
            t0 = time.perf_counter()
            k = ElementwiseKernel(pctx, "const float *x, float *z",
                                  f"z[i] = sin(x[i]) * {c!r}f + x[i]", f"fresh{r}")
            k(psmall, pz).wait()
            pz.get()
            pcolds.append(time.perf_counter() - t0)
            pwarms.append(best(lambda: (k(psmall, pz).wait(), pz.get())))
    cold, warm = min(colds), min(warms)
    line = f"compile cold (first call) ckernel {cold * 1e3:8.2f} ms"
    line2 = f"compile warm (cached)     ckernel {warm * 1e3:8.3f} ms"
    if cl is not None:
        line += f"  pyopencl {min(pcolds) * 1e3:8.2f} ms  {ratio(cold, min(pcolds))}"
        line2 += f"  pyopencl {min(pwarms) * 1e3:8.3f} ms  {ratio(warm, min(pwarms))}"
    print(line)
    print(line2)
    print(f"compile cold/warm ckernel {ratio(cold, warm)}")
    return 0


def call_overhead(ckernels, cl, cla, pctx, queue):
    """A jitted call with out= on 10 float64 elements vs pyopencl launch+finish,
    in the same cl_context, interleaved, best of many rounds."""
    ctx = ckernels.Context.from_pyopencl(queue)

    @ckernels.jit("float64(float64, float64)")
    def axpy64(a, b):
        return 2.0 * a + b

    x = np.arange(10.0)
    dx, dy, dz = ctx.array(x), ctx.array(x), ctx.empty(10, "float64")
    px, py, pz = cla.to_device(queue, x), cla.to_device(queue, x), cla.empty(queue, 10,
                                                                            np.float64)
    prg = cl.Program(pctx, """
__kernel void axpy(__global double *z, __global const double *x,
                   __global const double *y, ulong n) {
  size_t i = get_global_id(0);
  if (i < n) z[i] = 2.0 * x[i] + y[i];
}""").build()
    k_plain = cl.Kernel(prg, "axpy")
    k_typed = cl.Kernel(prg, "axpy")
    k_typed.set_scalar_arg_dtypes([None, None, None, np.uint64])

    def plain():
        k_plain(queue, (10,), None, pz.data, px.data, py.data, np.uint64(10))
        queue.finish()

    def typed():
        k_typed(queue, (10,), None, pz.data, px.data, py.data, 10)
        queue.finish()

    def ck():
        axpy64(dx, dy, out=dz)

    ck(), plain(), typed()
    np.testing.assert_array_equal(dz.get(), pz.get())
    t = {"ck": [], "plain": [], "typed": []}
    number = 200
    for _ in range(15):          # interleaved rounds: load changes hit all three
        for name, fn in (("ck", ck), ("plain", plain), ("typed", typed)):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            t[name].append((time.perf_counter() - t0) / number)
    ck_t, pl_t, ty_t = (min(t[k]) for k in ("ck", "plain", "typed"))
    print(f"call overhead: jitted call, 10 float64, out=  ckernel {ck_t * 1e6:7.1f} us  "
          f"pyopencl launch+finish {pl_t * 1e6:7.1f} us  {ratio(ck_t, pl_t)} (target <= 1.5x)")
    print(f"call overhead: same, vs pyopencl with set_scalar_arg_dtypes "
          f"{ty_t * 1e6:7.1f} us  {ratio(ck_t, ty_t)}")


def operators(ckernels, cl, cla, queue, n):
    """Operators on device arrays vs pyopencl arrays (one cl_context)."""
    import pyopencl.clmath as clmath
    ctx = ckernels.Context.from_pyopencl(queue)
    for size in (10, n):
        h = np.random.default_rng(1).standard_normal(size).astype(np.float32)
        d = ctx.array(h)
        p = cla.to_device(queue, h)
        cases = [
            ("d + d", lambda: d + d, lambda: (p + p).finish()),
            ("d * 2.5", lambda: d * 2.5, lambda: (p * 2.5).finish()),
            ("sin(d)", lambda: np.sin(d), lambda: clmath.sin(p).finish()),
            ("d.sum()", lambda: d.sum(), lambda: cla.sum(p).get()),
            ("d[::2] + 1", lambda: d[::2] + 1, lambda: (p[::2] + 1).finish()),
        ]
        np.testing.assert_allclose((d + d).get(), (p + p).get())
        for name, fck, fpy in cases:
            fck(), fpy()
            reps = 50 if size <= 1000 else 3
            number = 20 if size <= 1000 else 1
            t_ck, t_py = [], []
            for _ in range(reps):
                for f, acc in ((fck, t_ck), (fpy, t_py)):
                    t0 = time.perf_counter()
                    for _ in range(number):
                        f()
                    acc.append((time.perf_counter() - t0) / number)
            a, b = min(t_ck), min(t_py)
            unit, scale = ("us", 1e6) if size <= 1000 else ("ms", 1e3)
            print(f"operator {name:10s} n={size:<9d} ckernel {a * scale:9.2f} {unit}  "
                  f"pyopencl.array {b * scale:9.2f} {unit}  {ratio(a, b)}")


if __name__ == "__main__":
    sys.exit(main())
