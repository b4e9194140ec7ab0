"""The CUDA target of ``@ckernels.jit``: the CUDA C dialect of the emitter.

Calls with CUDA device arrays run through the shared device path
(:mod:`ckernels.jit.device`: operands, signature, broadcasting, launch, error
buffer), exactly as OpenCL calls do; the library compiles the source with NVRTC
to PTX for the device's architecture and launches it through the driver API
(``ck_context_build_program`` / ``ck_context_launch``).  What is CUDA-specific
is how the C reads (:class:`CUDADialect`):

* it is C++ (NVRTC): the kernel is ``extern "C" __global__`` so the library
  finds it by name, device functions and helpers are ``static __device__``;
* the flat index is ``blockIdx.x * (unsigned long long)blockDim.x +
  threadIdx.x`` (the library launches ``ceil(n / 256)`` blocks of at most 256
  threads, so the kernel's ``if (i >= ck_n) return;`` guard matters;
  ``__launch_bounds__(256)`` keeps the register use compatible with that block);
* math built-ins are named by type (``sinf`` for ``float``, ``sin`` for
  ``double``), ``math.degrees``/``radians`` have none (the emitter multiplies by
  Numba's factor); ``nan``/``inf`` are built from their bits
  (``__int_as_float`` / ``__longlong_as_double``: NVRTC has no ``<math.h>``);
* 64-bit literals carry ``LL``/``ULL``; the element C types are the ``cuda_c``
  column of :mod:`ckernels.dtypes` (``long long``, ``unsigned char``, ...);
* the first error code of a launch is kept with ``atomicCAS``.

Every CUDA device CUDA 11+ supports has fp64, so the shared fp64 check never
refuses (the context says ``supports_fp64``).
"""

from __future__ import annotations

from .c_emit import Dialect
from .device import DeviceTarget

#: threads per block the library launches at most (``ck_context_launch``)
BLOCK = 256

# the generic names of c_emit's math tables whose CUDA built-ins take an
# ``f`` suffix for float (the predicates isnan/isinf/isfinite are overloaded)
_SUFFIXED = frozenset({
    "sqrt", "exp", "log", "log10", "log2", "log1p", "expm1", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "erf", "erfc",
    "tgamma", "lgamma", "exp2", "cbrt", "atan2", "pow", "hypot", "copysign", "fmod", "floor",
    "ceil", "trunc", "rint", "ldexp", "nextafter", "fmin", "fmax"})
_OVERLOADED = frozenset({"isnan", "isinf", "isfinite"})


class CUDADialect(Dialect):
    name = "cuda"
    title = "CUDA"
    function_prefix = "static __device__"
    kernel_prefix = f'extern "C" __global__ void __launch_bounds__({BLOCK})'
    global_space = ""
    thread_index = "(blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x)"
    int64_suffix = "LL"
    uint64_suffix = "ULL"

    def math(self, name: str, ct: str) -> str | None:
        if name in _OVERLOADED:
            return name
        if name not in _SUFFIXED:
            return None       # degrees, radians: no CUDA built-in
        if ct == "float":
            return name + "f"
        if ct == "double":
            return name
        return None

    def nan(self, ct: str) -> str:
        if ct == "float":
            return "__int_as_float(0x7fc00000)"
        return "__longlong_as_double(0x7ff8000000000000LL)"

    def inf(self, ct: str) -> str:
        if ct == "float":
            return "__int_as_float(0x7f800000)"
        return "__longlong_as_double(0x7ff0000000000000LL)"

    def error_store(self, buf: str, code: str) -> str:
        return f"atomicCAS({buf}, 0, {code});"


#: what the dispatcher uses for contexts of kind "cuda"
TARGET = DeviceTarget("cuda", CUDADialect())

__all__ = ["CUDADialect", "TARGET", "BLOCK"]
