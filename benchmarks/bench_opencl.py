"""``@ckernels.jit`` on OpenCL against hand-written pyopencl kernels.

On the same data (float32, N printed; ``CK_BENCH_OPENCL_N`` overrides):
- ``2*x + y`` and ``sin(x)*exp(-x)``: a jitted call on device arrays (result
  allocated by the call, as the API does) vs a ``pyopencl.elementwise.ElementwiseKernel``
  writing into a preallocated array (both wait for completion);
- host->device and device->host bandwidth through ckernel buffers and through
  ``pyopencl.enqueue_copy``;
- cold compile (first call of a new function: Numba typing, OpenCL C emission,
  clBuildProgram) vs warm (cached program) for ckernel, and the same for a new
  ``ElementwiseKernel``.

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


if __name__ == "__main__":
    sys.exit(main())
