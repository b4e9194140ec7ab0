"""``ckernels.context``: contexts, buffers, programs and device arrays."""

from .context import Buffer, Context, Program
from .device_array import DeviceArray

__all__ = ["Context", "Buffer", "Program", "DeviceArray"]
