"""ckernels: array kernels as a plain C ABI, with a Python/Numba bridge.

Layers (see docs/architecture.md): the C library libckernel (memory blocks, the
pod allocator, ...), its cffi bindings (:mod:`ckernels.lowlevel`), and Pythonic
objects on top.
"""

from . import _native
from .errors import CKernelError

_native.verify_layout()

from . import dtypes, errors, kernels, lowlevel, ops, types  # noqa: E402
from .ops import assign, get_num_threads, set_num_threads  # noqa: E402
from .host.array import (Array, arange, array, asarray, debug_repr, empty, empty_like,  # noqa: E402
                    from_arrow, from_dlpack, full, full_like, ones, ones_like, zeros, zeros_like)
from .memory import MemBlock, PodAllocator, live_count  # noqa: E402
from .context.buffer import Buffer  # noqa: E402
from .device.array import DeviceArray  # noqa: E402
from .device.place import Context  # noqa: E402
from . import capi  # noqa: E402  (generated C APIs, hand-written kernel sources)
from .capi import CHeader, c_api  # noqa: E402
from .jit import JitKernel, jit  # noqa: E402  (ckernels.jit: the decorator)
from . import opencl  # noqa: E402  (ckernels.opencl: OpenCL conveniences)
from .pyopencl_interop import from_pyopencl, to_pyopencl  # noqa: E402

if "distributed" in __import__("sys").modules:   # in a Dask worker: its share of cores
    from .dask import apply_worker_thread_rule as _rule  # noqa: E402
    _rule()


def __getattr__(name: str):
    """``show``, ``bench`` and ``display`` (pictures, rich displays, timing
    plots) import :mod:`ckernels.display` on first use: a process that only
    computes does not pay for it (the fresh-process time of issue 23)."""
    if name in ("show", "bench", "display"):
        from .display import bench, show   # binds ckernels.display too
        globals().update(bench=bench, show=show)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"show", "bench", "display"})


__version__ = _native.ffi.string(_native.lib.ck_version_string()).decode()
abi_version = _native.lib.ck_abi_version()


def get_include() -> str:
    """Directory holding the C headers (``#include <ckernel/ckernel.h>``)."""
    import os
    return os.path.join(os.path.dirname(__file__), "include")


def get_library_dir() -> str:
    """Directory holding libckernel.so (and lib/libckernel.a)."""
    import os
    return os.path.dirname(__file__)


__all__ = ["CKernelError", "MemBlock", "PodAllocator", "live_count", "errors", "types",
           "Array", "array", "asarray", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "arange", "from_arrow", "from_dlpack", "debug_repr", "ops",
           "kernels", "assign", "set_num_threads", "get_num_threads", "Context",
           "Buffer", "DeviceArray", "dtypes", "jit", "JitKernel", "opencl",
           "from_pyopencl", "to_pyopencl",
           "lowlevel", "capi", "c_api", "CHeader", "get_include", "get_library_dir",
           "__version__", "abi_version", "show", "bench"]
