"""The CUDA C of ``string(...)`` device functions, compiled by NVRTC, assembled
by ptxas and run on the host shim (``jit/cuda_host_shim.h``): both passes of
``ckernels.jit.device_strings`` (sizing, NumPy's cumsum as the scan, writing).

``build(tmp_path, {ns: (f, k)})`` compiles each jitted function ``f`` (``k``:
its kernel's operand count without those of the string result) into one
shared library and returns ``run(ns, cols, scalars)``: string columns are
lists of ``str``, number columns int64/float NumPy arrays, scalars int64
values broadcast.  Skips the test where NVRTC, ptxas or a C++ compiler is
missing.
"""

import ctypes

import numpy as np


def cuda_source(f, ns):
    from ckernels.jit import c_emit, device_strings
    from ckernels.jit.device import target
    comp = next(iter(f.compiled.values()))
    src = device_strings.source(target("cuda"), f, comp)
    return (f"namespace {ns} {{\n" + src.replace(f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") +
            f"}}  // {ns}\n")


def build(tmp_path, fns):
    from ckernels import dialects
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    srcs = "".join(cuda_source(f, ns) for ns, (f, _) in fns.items())
    ptx_assembled_or_skip(tmp_path, srcs)
    sig = ("unsigned char *out, const unsigned char **in, const unsigned long long *off, "
           "const long long *stride, int mode, const long long *meta, unsigned long long n, "
           "int *err, unsigned int block")
    from ckernels.jit import device_strings
    from ckernels.jit.device import target
    scratch = {}
    for ns, (f, _) in fns.items():
        comp = next(iter(f.compiled.values()))
        prog, _ = device_strings._program(target("cuda"), f, comp)
        scratch[ns] = device_strings.scratch_of(prog)
    wrappers = ""
    for ns, (_, k) in fns.items():
        extra = 3 if scratch[ns] else 1       # data (, scratch, scratch offsets)
        ins = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in range(k + extra))
        wrappers += (f'extern "C" void {ns}_run({sig}) {{\n'
                     f"  ck_shim_grid(n, block, [&] {{ {ns}::{ns}_kernel(out, 0, 8"
                     f"{ins}, mode, meta, 1, n, err); }});\n}}\n")
    lib = host_shim_library(tmp_path, srcs + wrappers)
    scratch_of = scratch

    def run(ns, cols, scalars=()):
        keep, ptrs, offs, strides = [], [], [], []
        for col in cols:
            if isinstance(col, np.ndarray):
                keep.append(col)
                ptrs.append(col.ctypes.data)
                offs.append(0)
                strides.append(col.itemsize)
                continue
            enc = [s.encode() for s in col]
            o = np.cumsum([0] + [len(b) for b in enc]).astype(np.int64)
            data = np.frombuffer(b"".join(enc) + b"\0", np.uint8)
            keep += [o, data]
            ptrs += [o.ctypes.data, o.ctypes.data, data.ctypes.data]
            offs += [0, 8, 0]
            strides += [8, 8, 0]
        for v in scalars:
            a = np.array([v], np.int64)
            keep.append(a)
            ptrs.append(a.ctypes.data)
            offs.append(0)
            strides.append(0)
        n = len(cols[0])
        has_scratch = scratch_of[ns]
        err = np.zeros(4, np.int32)
        meta = np.zeros(1, np.int64)
        sizes = np.zeros(n + 1, np.int64)
        scratch = np.zeros(n + 1, np.int64)
        fn = getattr(lib, f"{ns}_run")
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                                               ctypes.c_void_p, ctypes.c_uint]

        def launch(out, text, scr, mode):
            p = ptrs + [text.ctypes.data, scr.ctypes.data, scratch.ctypes.data]
            o = offs + [0, 0, 0]
            s = strides + [0, 0, 8]
            if not has_scratch:
                p, o, s = p[:-2], o[:-2], s[:-2]
            k = len(p)
            fn(out.ctypes.data, (ctypes.c_void_p * k)(*p), (ctypes.c_uint64 * k)(*o),
               (ctypes.c_int64 * k)(*s), mode, meta.ctypes.data, n, err.ctypes.data,
               dialects.CUDA_BLOCK)
            assert err[0] == 0, err
        one = np.zeros(1, np.uint8)
        launch(sizes, one, one, 0)
        offsets = np.concatenate([[0], np.cumsum(sizes[:n])]).astype(np.int64)
        scratch[:] = np.concatenate([[0], np.cumsum(scratch[:n])])
        text = np.zeros(max(int(offsets[-1]), 1), np.uint8)
        scr = np.zeros(max(int(scratch[-1]), 1), np.uint8)
        launch(offsets, text, scr, 1)
        raw = text.tobytes()
        return [raw[offsets[i]:offsets[i + 1]].decode() for i in range(n)]
    return run
