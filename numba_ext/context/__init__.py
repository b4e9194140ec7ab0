"""``ckernels.context``: contexts, buffers, programs and device arrays -- one
surface for every backend (CPU memory, OpenCL, CUDA).

``context.py`` (:class:`Context`, placing arrays), ``buffer.py``
(:class:`Buffer`), ``program.py`` (:class:`Program`), ``device_array.py``
(:class:`DeviceArray`); per-kind additions found through ``backends.py``:
``cuda.py`` (NVRTC set-up, ``__cuda_array_interface__`` and DLPack both ways),
with ``dlpack.py`` (DLPack capsules for device memory); ``opencl.py``
(pyopencl interop).
"""

from .buffer import Buffer
from .context import Context, check_context, same_context
from .device_array import DeviceArray
from .program import Program

__all__ = ["Context", "Buffer", "Program", "DeviceArray", "check_context", "same_context"]
