"""``ckernels.context.backend_opencl``: the old path of ckernels.opencl and ckernels.backends.opencl
(moved by the device-wing split; kept for code that imports it by this name)."""

from ..backends.opencl import *  # noqa: F401,F403
from ..opencl import from_pyopencl, from_pyopencl_buffer, same_memory, to_pyopencl  # noqa: F401
