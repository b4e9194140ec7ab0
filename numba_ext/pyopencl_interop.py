"""``ckernels.opencl`` (this module, ``ckernels.pyopencl_interop``; ``opencl.py`` is
its public path): OpenCL conveniences -- device arrays shared with pyopencl, and
the historical names of placing arrays.

* :func:`from_pyopencl` -- a :class:`DeviceArray` over a ``pyopencl.array.Array``'s
  memory.  Without a context it uses the context wrapping the array's queue
  (:meth:`Context.from_pyopencl`: the same cl_context, device and queue), so
  nothing is copied: a write through either side is read through the other.
  The device array keeps the pyopencl buffer alive.
* :func:`to_pyopencl` (also ``DeviceArray.to_pyopencl``) -- a
  ``pyopencl.array.Array`` over a device array's ``cl_mem``; the pyopencl
  buffer retains the ``cl_mem`` and keeps the device array alive.

Only when the two sides live in *different* cl_contexts is the data copied,
through the host (``same_memory(d, p)`` says which case applies).  What
OpenCL memory means in raw parts is :mod:`ckernels.backends.opencl`'s;
contexts, buffers and device arrays are the same for every backend
(:mod:`ckernels.context`, :mod:`ckernels.device`).
"""

from __future__ import annotations

import numpy as np

from .backends import cl_interop as _cl_interop
from .backends import opencl as _ocl
from .device.array import DeviceArray
from .device.interop import array_of
from .device.place import Context, check_context, same_context
from .errors import InvalidArgumentError


def from_pyopencl(arr, ctx: Context | None = None) -> DeviceArray:
    """A :class:`DeviceArray` sharing a ``pyopencl.array.Array``'s memory (see
    the module docstring); a copy (through the host) only when ``ctx`` is
    given and lives in another cl_context.  ``from_pyopencl(ctx, arr)`` is
    accepted too."""
    if isinstance(arr, Context):
        arr, ctx = ctx, arr
    if not _cl_interop.is_pyopencl_array(arr):
        raise InvalidArgumentError(f"from_pyopencl: expected a pyopencl.array.Array, not "
                                   f"{type(arr).__name__}")
    if ctx is None:
        if arr.queue is None:
            raise InvalidArgumentError("from_pyopencl: the pyopencl array has no queue; "
                                       "pass ctx=")
        ctx = Context.from_pyopencl(arr.queue)
    check_context(ctx, "from_pyopencl")
    if _ocl.cl_context(ctx) != arr.context.int_ptr:
        return ctx.array(arr.get())
    if arr.size == 0:
        return DeviceArray.empty(ctx, arr.shape, arr.dtype)
    return array_of(ctx, _ocl.pyopencl_parts(arr), "from_pyopencl")


def from_pyopencl_buffer(ctx: Context, queue, buf, shape, dtype) -> DeviceArray:
    """A :class:`DeviceArray` of ``ctx`` over a raw ``pyopencl.Buffer`` read as
    a C-contiguous array of ``shape`` and ``dtype``: shared when ``buf``
    belongs to ``ctx``'s cl_context, else a copy through the host."""
    import pyopencl as cl
    check_context(ctx, "from_pyopencl_buffer")
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if n > buf.size:
        raise InvalidArgumentError(f"from_pyopencl_buffer: {n} bytes requested but "
                                   f"the buffer holds {buf.size}")
    if _ocl.cl_context(ctx) == buf.context.int_ptr and n:
        return DeviceArray(ctx.wrap_buffer(buf.int_ptr, buf.size, owner=buf), 0, shape, dt)
    host = np.empty(shape, dt)
    if n:
        cl.enqueue_copy(queue, host, buf)
    return ctx.to(host)


def to_pyopencl(arr: DeviceArray, queue=None):
    """A ``pyopencl.array.Array`` sharing ``arr``'s memory (see the module
    docstring); on ``queue`` if given -- a copy through the host when that
    queue lives in another cl_context (also ``DeviceArray.to_pyopencl``)."""
    if not isinstance(arr, DeviceArray):
        raise InvalidArgumentError(f"to_pyopencl: expected a DeviceArray, not "
                                   f"{type(arr).__name__}")
    return arr.to_pyopencl(queue)


def same_memory(d: DeviceArray, p) -> bool:
    """Whether a device array and a pyopencl array live in the same cl_context
    (so :func:`from_pyopencl` / :func:`to_pyopencl` share instead of copying)."""
    return d.context.kind == "opencl" and _ocl.cl_context(d.context) == p.context.int_ptr


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
           "from_pyopencl", "from_pyopencl_buffer", "to_pyopencl", "same_memory"]
