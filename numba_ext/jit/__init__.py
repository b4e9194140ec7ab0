"""``ckernels.jit``: Python scalar functions compiled into ckernels.

The shared part -- the decorator and :class:`JitKernel` (``decorator.py``),
signatures (``signature.py``), operand resolution and signature selection
(``operands.py``), which target runs a call (``dispatch.py``) -- and one module
per target: ``cpu.py`` (host calls through ``ck_array_apply``) with its code
generator ``cpu_codegen.py`` (entry points around Numba's code), and the
device targets: ``device.py`` (what every device shares: operands,
broadcasting, launch plans, error flag), ``device_ops.py`` (the built-in
operations, conversions, reductions and gathers on device arrays, from one
operation table), ``c_emit.py`` (C from Numba's typed IR,
one :class:`~ckernels.jit.c_emit.Dialect` per target), ``opencl.py`` (the
OpenCL C dialect) and ``cuda.py`` (the CUDA C dialect).  ``ckernels.jit``
itself, on the package, is the decorator.
"""

from . import device_ops  # noqa: F401  (installs the device kernels of DeviceArray)
from .cpu import Compiled
from .decorator import ERROR_MODELS, CacheStats, JitKernel, jit
from .signature import SUPPORTED_TYPES, Signature, parse_signature

__all__ = ["jit", "JitKernel", "Compiled", "Signature", "parse_signature", "SUPPORTED_TYPES",
           "CacheStats", "ERROR_MODELS"]
