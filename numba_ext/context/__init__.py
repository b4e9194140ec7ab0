"""``ckernels.context``: contexts, buffers, programs and device arrays -- one
surface for every backend (CPU memory, OpenCL, CUDA).

``context.py`` (:class:`Context`, placing arrays), ``buffer.py``
(:class:`Buffer`), ``program.py`` (:class:`Program`), ``device_array.py``
(:class:`DeviceArray`); per-kind additions found through the dialect table
(:func:`ckernels.dialects.hook`):
``backend_opencl.py`` (zero-copy pyopencl interop, over ``cl_interop.py``, the one
module that knows pyopencl's objects) and ``cuda.py`` (NVRTC set-up,
``__cuda_array_interface__`` both ways); ``dlpack.py`` (DLPack capsules both
ways, for every device kind and host memory).
"""

from .buffer import Buffer
from .context import Context, check_context, default_context, same_context
from ..device.array import DeviceArray
from .program import Program

__all__ = ["Context", "Buffer", "Program", "DeviceArray", "check_context", "same_context",
           "default_context"]
