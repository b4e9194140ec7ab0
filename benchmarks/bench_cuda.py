"""``@ckernels.jit`` on CUDA against the device's memory bandwidth, CuPy and numba-cuda.

On N elements (1e8 by default; ``CK_BENCH_CUDA_N`` overrides) of float32 and
float64, all in the same run:

- ``axpy`` (``2*x + y``) and a transcendental kernel (``sin(x) * exp(-|x|)``):
  a jitted call on device arrays writing into a preallocated ``out=`` (every
  ckernels call waits for completion) against
  * device-to-device memcpy of the same bytes (``Buffer.copy_from``:
    ``cuMemcpyDtoDAsync``): the effective bandwidth of the kernel (3 N elements
    moved for axpy, 2 N for the transcendental one) over the copy's
    (2 x bytes copied) -- goal >= 0.8 for axpy;
  * a CuPy ``ElementwiseKernel`` with the same expression and a numba-cuda
    ``@cuda.jit`` kernel on the same arrays (shared through
    ``__cuda_array_interface__``, no copies), each synchronised -- goal <= 1.1x;
- transfers: host->device and device->host of N float32 through ckernels
  buffers vs ``cupy.asarray`` / ``ndarray.get(out=...)``;
- compile latency: cold (first call of a new function: Numba typing, CUDA C
  emission, NVRTC, module load) and cached (the next call, program from the
  context's cache, on 1000 elements), and NVRTC alone on the emitted source;
  CuPy's ``ElementwiseKernel`` cold (new source) and cached.

``ratio X.XXx`` is ckernels time / the other's time (> 1: ckernels slower), or
bandwidth fraction where said.  Without a CUDA device the script says so and
exits 0; without CuPy or numba-cuda their columns are left out.
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

import ckernels
from ckernels import errors

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best  # noqa: E402


def line(name, t, other_name=None, t_other=None, note=""):
    s = f"{name:44s} {t * 1e3:9.3f} ms"
    if other_name is not None and t_other:
        s += f"   {other_name:30s} {t_other * 1e3:9.3f} ms   ratio {t / t_other:5.2f}x"
    print(s + (f"   {note}" if note else ""), flush=True)


@ckernels.jit(["float32(float32, float32)", "float64(float64, float64)"])
def axpy(x, y):
    return 2.0 * x + y


@ckernels.jit(["float32(float32)", "float64(float64)"])
def trans(x):
    return math.sin(x) * math.exp(-abs(x))


def optional_cupy():
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
        return cp
    except Exception as exc:  # noqa: BLE001 - an optional baseline
        print(f"  (CuPy unavailable: {type(exc).__name__}: {exc})")
        return None


def optional_numba_cuda():
    try:
        from numba import cuda
        if not cuda.is_available():
            raise RuntimeError("numba.cuda.is_available() is False")
        return cuda
    except Exception as exc:  # noqa: BLE001 - an optional baseline
        print(f"  (numba-cuda unavailable: {type(exc).__name__}: {exc})")
        return None


def numba_kernels(ncuda):
    @ncuda.jit
    def nb_axpy(x, y, out):
        i = ncuda.grid(1)
        if i < out.size:
            out[i] = 2.0 * x[i] + y[i]

    @ncuda.jit
    def nb_trans(x, out):
        i = ncuda.grid(1)
        if i < out.size:
            out[i] = math.sin(x[i]) * math.exp(-abs(x[i]))
    return nb_axpy, nb_trans


def bench_dtype(ctx, n, dtype, cp, ncuda):
    ct = dtype   # CuPy reads parameter types as NumPy names ("float" is float64 there)
    item = np.dtype(dtype).itemsize
    rng = np.random.default_rng(0)
    x = ctx.array(rng.standard_normal(n).astype(dtype))
    y = ctx.array(rng.standard_normal(n).astype(dtype))
    out = ctx.empty(n, dtype)
    print(f"\n{dtype}, N = {n:.0e} ({n * item / 2**30:.2f} GiB per array)")

    def memcpy():
        out.buffer.copy_from(out.offset, x.buffer, x.offset, n * item)
    t_copy = best(memcpy)
    copy_bw = 2 * n * item / t_copy
    line("device-to-device memcpy", t_copy, note=f"{copy_bw / 1e9:8.1f} GB/s (read + write)")

    t_axpy = best(lambda: axpy(x, y, out=out))
    bw = 3 * n * item / t_axpy
    line("ckernels axpy 2*x + y", t_axpy,
         note=f"{bw / 1e9:8.1f} GB/s = {bw / copy_bw:.2f} of memcpy (goal >= 0.8)")
    t_trans = best(lambda: trans(x, out=out))
    bw_t = 2 * n * item / t_trans
    line("ckernels sin(x)*exp(-|x|)", t_trans,
         note=f"{bw_t / 1e9:8.1f} GB/s = {bw_t / copy_bw:.2f} of memcpy")

    if cp is not None:
        cx, cy, cout = cp.asarray(x), cp.asarray(y), cp.asarray(out)   # the same memory
        k_axpy = cp.ElementwiseKernel(f"{ct} x, {ct} y", f"{ct} z", "z = 2 * x + y",
                                      f"ck_bench_axpy_{ct}")
        k_trans = cp.ElementwiseKernel(f"{ct} x", f"{ct} z", "z = sin(x) * exp(-abs(x))",
                                       f"ck_bench_trans_{ct}")
        sync = cp.cuda.get_current_stream().synchronize

        def cp_axpy():
            k_axpy(cx, cy, cout)
            sync()

        def cp_trans():
            k_trans(cx, cout)
            sync()
        line("ckernels axpy", t_axpy, "CuPy ElementwiseKernel", best(cp_axpy),
             "(goal <= 1.1x)")
        line("ckernels sin*exp", t_trans, "CuPy ElementwiseKernel", best(cp_trans),
             "(goal <= 1.1x)")
    if ncuda is not None:
        nb_axpy, nb_trans = numba_kernels(ncuda)
        nx, ny, nout = (ncuda.as_cuda_array(a) for a in (x, y, out))
        blocks = (n + 255) // 256

        def nb_a():
            nb_axpy[blocks, 256](nx, ny, nout)
            ncuda.synchronize()

        def nb_t():
            nb_trans[blocks, 256](nx, nout)
            ncuda.synchronize()
        try:
            nb_a()   # the first call compiles: a numba-cuda that does not work here is reported
        except Exception as exc:  # noqa: BLE001 - an optional baseline
            print(f"  (numba-cuda failed to compile: {type(exc).__name__}: {exc})")
        else:
            line("ckernels axpy", t_axpy, "numba-cuda @cuda.jit", best(nb_a), "(goal <= 1.1x)")
            line("ckernels sin*exp", t_trans, "numba-cuda @cuda.jit", best(nb_t),
                 "(goal <= 1.1x)")
    # correctness of what was timed (host check on a sample)
    idx = np.random.default_rng(1).integers(0, n, 1000)
    axpy(x, y, out=out)
    got = out.to_numpy()[idx]
    want = (2 * x.to_numpy()[idx] + y.to_numpy()[idx]).astype(dtype)
    if not np.allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-15):
        print("  !! axpy result differs from NumPy")
    del x, y, out


def bench_transfers(ctx, n, cp):
    host = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    back = np.empty_like(host)
    dev = ctx.empty(n, "float32")
    print(f"\ntransfers, N = {n:.0e} float32 ({host.nbytes / 2**30:.2f} GiB, pageable host memory)")
    t_h2d = best(lambda: dev.buffer.write(dev.offset, host))
    t_d2h = best(lambda: dev.buffer.read_into(dev.offset, back))
    if cp is not None:
        cdev = cp.empty(n, cp.float32)

        def cp_h2d():
            cdev.set(host)
            cp.cuda.get_current_stream().synchronize()
        line("ckernels host->device", t_h2d, "CuPy ndarray.set", best(cp_h2d),
             f"{host.nbytes / t_h2d / 1e9:.1f} GB/s")
        line("ckernels device->host", t_d2h, "CuPy ndarray.get(out=)",
             best(lambda: cdev.get(out=back)), f"{host.nbytes / t_d2h / 1e9:.1f} GB/s")
    else:
        line("ckernels host->device", t_h2d, note=f"{host.nbytes / t_h2d / 1e9:.1f} GB/s")
        line("ckernels device->host", t_d2h, note=f"{host.nbytes / t_d2h / 1e9:.1f} GB/s")
    np.testing.assert_array_equal(back, host)


def bench_compile(ctx, cp):
    from ckernels.backends import cuda as ccuda
    print("\ncompile latency")
    small = ctx.array(np.linspace(0, 1, 1000))
    colds = []
    for k in range(3):
        # a new function each time (its own constant): nothing is cached
        f = ckernels.jit("float64(float64)")(eval(f"lambda x: math.sin(x) * {k + 1.5} + x",
                                                  {"math": math}))
        t0 = time.perf_counter()
        f(small)
        colds.append(time.perf_counter() - t0)
    t_cached = best(lambda: f(small))
    t0 = time.perf_counter()
    ccuda.compile_ptx(f.source("cuda"))
    t_nvrtc = time.perf_counter() - t0
    line("ckernels cold (typing + emit + NVRTC + load)", min(colds))
    line("ckernels NVRTC alone on the emitted source", t_nvrtc)
    line("ckernels cached call (1000 elements)", t_cached)
    if cp is not None:
        ccold = []
        for k in range(3):
            kern = cp.ElementwiseKernel("float64 x", "float64 z", f"z = sin(x) * {k + 1.5} + x",
                                        f"ck_bench_cold_{k}_{os.getpid()}_{time.time_ns()}")
            cx = cp.linspace(0, 1, 1000)
            t0 = time.perf_counter()
            kern(cx)
            cp.cuda.get_current_stream().synchronize()
            ccold.append(time.perf_counter() - t0)

        def cp_cached():
            kern(cx)
            cp.cuda.get_current_stream().synchronize()
        line("ckernels cold", min(colds), "CuPy ElementwiseKernel cold", min(ccold))
        line("ckernels cached call", t_cached, "CuPy cached call", best(cp_cached))


def main() -> int:
    try:
        ctx = ckernels.Context("cuda")
    except errors.BackendError as exc:
        print(f"bench_cuda: no CUDA device available ({exc}); skipped")
        return 0
    n = int(float(os.environ.get("CK_BENCH_CUDA_N", 1e8)))
    print(f"bench_cuda on {ctx.describe()}")
    cp = optional_cupy()
    ncuda = optional_numba_cuda()
    for dtype in ("float32", "float64"):
        bench_dtype(ctx, n, dtype, cp, ncuda)
    bench_transfers(ctx, n, cp)
    bench_compile(ctx, cp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
