"""``ckernels.opencl``: OpenCL device arrays (compatibility names; the code
lives in :mod:`ckernels.context`)."""

from .context.device_array import (DeviceArray, array, call, emitted, empty, from_pyopencl,
                                   from_pyopencl_buffer, same_context, to, to_device,
                                   to_pyopencl)

__all__ = ["DeviceArray", "to_device", "empty", "call", "emitted", "array", "to",
           "same_context", "from_pyopencl", "from_pyopencl_buffer", "to_pyopencl"]
