"""OpenCL-only parts of the context layer: interop with pyopencl.

These copy through the host: a ckernels buffer owns its ``cl_mem`` (the C layer
has no call to adopt a foreign one yet) and pyopencl's context is a different
``cl_context``, so a device-to-device copy is not possible.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError
from .context import Context, check_context
from .device_array import DeviceArray


def from_pyopencl(ctx: Context, arr) -> DeviceArray:
    """A :class:`DeviceArray` of ``ctx`` holding a copy of a ``pyopencl.array.Array``
    (see :func:`from_pyopencl_buffer` for a raw ``pyopencl.Buffer``)."""
    check_context(ctx, "from_pyopencl")
    if not hasattr(arr, "get") or not hasattr(arr, "queue"):
        raise InvalidArgumentError(f"from_pyopencl: expected a pyopencl.array.Array, not "
                                   f"{type(arr).__name__}")
    return ctx.to(arr.get())


def from_pyopencl_buffer(ctx: Context, queue, buf, shape, dtype) -> DeviceArray:
    """A :class:`DeviceArray` of ``ctx`` holding a copy of a raw ``pyopencl.Buffer``
    read as a C-contiguous array of ``shape`` and ``dtype`` (through the host)."""
    import pyopencl as cl
    check_context(ctx, "from_pyopencl_buffer")
    host = np.empty(shape, dtype)
    if host.nbytes > buf.size:
        raise InvalidArgumentError(f"from_pyopencl_buffer: {host.nbytes} bytes requested but "
                                   f"the buffer holds {buf.size}")
    cl.enqueue_copy(queue, host, buf)
    return ctx.to(host)


def to_pyopencl(arr: DeviceArray, queue):
    """A ``pyopencl.array.Array`` on ``queue`` holding a copy of ``arr`` (through
    the host, for the same reason as :func:`from_pyopencl`)."""
    import pyopencl.array as cla
    if not isinstance(arr, DeviceArray):
        raise InvalidArgumentError(f"to_pyopencl: expected a DeviceArray, not "
                                   f"{type(arr).__name__}")
    return cla.to_device(queue, arr.to_numpy())


__all__ = ["from_pyopencl", "from_pyopencl_buffer", "to_pyopencl"]
