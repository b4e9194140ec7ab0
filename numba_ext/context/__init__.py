"""``ckernels.context``: contexts, buffers, programs and device arrays -- one
surface for every backend (CPU memory, OpenCL; CUDA slots in the same way).

``context.py`` (:class:`Context`, placing arrays), ``buffer.py``
(:class:`Buffer`), ``program.py`` (:class:`Program`), ``device_array.py``
(:class:`DeviceArray`), ``opencl.py`` (zero-copy pyopencl interop, over
``cl_interop.py``, the one module that knows pyopencl's objects),
``dlpack.py`` (DLPack capsules of device arrays).
"""

from .buffer import Buffer
from .context import Context, check_context, default_context, same_context
from .device_array import DeviceArray
from .program import Program

__all__ = ["Context", "Buffer", "Program", "DeviceArray", "check_context", "same_context",
           "default_context"]
