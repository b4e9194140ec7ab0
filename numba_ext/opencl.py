"""``ckernels.opencl``: OpenCL conveniences under their historical names.

The code lives in :mod:`ckernels.context` (contexts, buffers, device arrays --
the same for every backend) and :mod:`ckernels.backends.opencl` (pyopencl
interop); jitted functions run on OpenCL devices through
:mod:`ckernels.jit.device` with the OpenCL row of :mod:`ckernels.dialects`.
"""

from __future__ import annotations

import numpy as np

from .context.context import Context, check_context, same_context
from .device.array import DeviceArray
from .backends.opencl import from_pyopencl, from_pyopencl_buffer, to_pyopencl


def to_device(ctx: Context, array) -> DeviceArray:
    """A device copy of a host array (anything ``np.asarray`` accepts)."""
    return DeviceArray.from_host(check_context(ctx, "to_device"), array)


def empty(ctx: Context, shape, dtype=np.float64) -> DeviceArray:
    """An uninitialised device array."""
    return DeviceArray.empty(check_context(ctx, "empty"), shape, dtype)


def array(ctx: Context, obj, type=None):
    """``ctx.array(obj, type)``."""
    return check_context(ctx, "ckernels.opencl.array").array(obj, type)


def to(ctx: Context, obj):
    """``ctx.to(obj)``."""
    return check_context(ctx, "ckernels.opencl.to").to(obj)


__all__ = ["DeviceArray", "to_device", "empty", "array", "to", "same_context",
           "from_pyopencl", "from_pyopencl_buffer", "to_pyopencl"]
