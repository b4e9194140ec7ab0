"""ptxas for the tests that check CUDA C without a GPU (test_cuda_codegen.py,
test_context_kernels.py, test_jit_structs.py through test_cuda_codegen): found
as the C tests find it, and PTX assembled with it (no Numba, nothing jitted)."""

import os
import shutil
import subprocess

import pytest

from ckernels.backends import cuda as ccuda


def ptxas():
    """ptxas as the C tests find it: $CK_PTXAS, the toolkit, the nvcc wheel of
    this interpreter, PATH."""
    cands = [os.environ.get("CK_PTXAS")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            cands.append(os.path.join(root, "bin", "ptxas"))
    for d in ccuda.nvrtc_wheel_dirs():
        cands.append(os.path.join(os.path.dirname(d), "bin", "ptxas"))
    try:
        import importlib.util
        spec = importlib.util.find_spec("nvidia")
        for root in (spec.submodule_search_locations or []) if spec else []:
            cands += [os.path.join(root, "cu13", "bin", "ptxas"),
                      os.path.join(root, "cuda_nvcc", "bin", "ptxas")]
    except (ImportError, ValueError):
        pass
    cands.append(shutil.which("ptxas"))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def assemble_or_skip(files):
    """ptxas on each ``(arch, PTX file)`` (concurrently): each assembles into
    a non-empty cubin; a skip when ptxas is not installed (the NVRTC step,
    done by the caller, passed)."""
    exe = ptxas()
    if exe is None:
        pytest.skip("ptxas not found (CUDA toolkit or the nvidia-cuda-nvcc wheel: "
                    "make cuda-tools); the NVRTC step passed")
    procs = [(arch, f, subprocess.Popen([exe, f"-arch={arch}", str(f), "-o",
                                         str(f.with_suffix(".cubin"))],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True))
             for arch, f in files]
    for arch, f, p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"ptxas -arch={arch}: {err[-4000:]}"
        assert f.with_suffix(".cubin").stat().st_size > 0


# NVRTC's --Ofast-compile=mid (CUDA 12.8+): the same C++ front end and PTX code
# generation, fewer NVVM passes.  On test_cuda_codegen's device-ops module:
# 5 s of NVRTC instead of 27, and half the PTX (ptxas 12 s instead of 31).
# For one architecture of a big module; the other architecture and programs
# compiled exactly as emitted keep the library's own options.
FAST_COMPILE = "--Ofast-compile=mid"


def compile_ptx_fast(src: str, arch: str) -> tuple[str, str]:
    """``ccuda.compile_ptx(src, arch)`` with FAST_COMPILE (without it on an
    NVRTC that does not know the option)."""
    from ckernels import errors
    try:
        return ccuda.compile_ptx(src, arch, FAST_COMPILE)
    except errors.BackendError as exc:
        if "INVALID_OPTION" not in str(exc):
            raise
        return ccuda.compile_ptx(src, arch)


def ptx_assembled_or_skip(tmp_path, src: str, arch: str = "sm_80") -> str:
    """``src`` through NVRTC (no error in the log) and ptxas for ``arch``; the
    PTX.  Skips where NVRTC or ptxas is missing."""
    from ckernels import errors
    try:
        ccuda.nvrtc_version()
    except errors.BackendError as exc:
        pytest.skip(f"no NVRTC: {exc}")
    ptx, log = ccuda.compile_ptx(src, arch)
    assert "error" not in log.lower(), log
    (tmp_path / "s.ptx").write_text(ptx)
    assemble_or_skip([(arch, tmp_path / "s.ptx")])
    return ptx


def host_shim_library(tmp_path, text: str):
    """``text`` (CUDA C plus ``extern "C"`` wrappers) compiled as C++ over the
    host shim (``jit/cuda_host_shim.h``) into a shared library, loaded by
    ctypes.  Skips where no C++ compiler is found."""
    import ctypes
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jit")
    (tmp_path / "s.cpp").write_text('#include "cuda_host_shim.h"\n' + text)
    so = tmp_path / "s.so"
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-fPIC", "-shared", "-w", f"-I{here}",
                        str(tmp_path / "s.cpp"), "-o", str(so)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-6000:]
    return ctypes.CDLL(str(so))
