"""Low-level access to libckernel: the cffi ``ffi``/``lib`` pair and thin wrappers.

``lib`` exposes every public C function (API-mode cffi, generated from the
public headers).  The wrappers raise :mod:`ckernels.errors` exceptions.
"""

from ._native import check, ffi, last_error, layout_mismatches, lib
from .kernels import Kernel, KernelBuilder, make_assignment_kernel
from .memory import Allocation, MemBlock, PodAllocator, PodStats, live_count


def alloc_count() -> int:
    """Heap allocations libckernel has attempted so far (process-wide)."""
    return lib.ck_debug_alloc_count()


def fail_alloc_after(k: int) -> None:
    """Make the k-th library allocation from now fail (0 disables): for tests."""
    lib.ck_debug_fail_alloc_after(k)


__all__ = ["ffi", "lib", "check", "last_error", "layout_mismatches", "MemBlock",
           "PodAllocator", "Allocation", "PodStats", "live_count", "alloc_count",
           "fail_alloc_after", "Kernel", "KernelBuilder", "make_assignment_kernel"]
