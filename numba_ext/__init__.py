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
from .array import Array, array, asarray, debug_repr, empty, from_dlpack  # noqa: E402
from .memory import MemBlock, PodAllocator, live_count  # noqa: E402
from .context import Buffer, Context, DeviceArray  # noqa: E402
from .jit import JitKernel, jit  # noqa: E402  (ckernels.jit: the decorator)
from . import opencl  # noqa: E402  (ckernels.opencl: OpenCL conveniences)
from .display import bench, show  # noqa: E402  (pictures, rich displays, timing plots)

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
           "Array", "array", "asarray", "empty", "from_dlpack", "debug_repr", "ops",
           "kernels", "assign", "set_num_threads", "get_num_threads", "Context",
           "Buffer", "DeviceArray", "dtypes", "jit", "JitKernel", "opencl",
           "lowlevel", "get_include", "get_library_dir", "__version__", "abi_version",
           "show", "bench"]
