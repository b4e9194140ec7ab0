"""OpenCL-only parts of the context layer: zero-copy interop with pyopencl.

* :func:`from_pyopencl` -- a :class:`DeviceArray` over a ``pyopencl.array.Array``'s
  memory.  Without a context it uses the context wrapping the array's queue
  (:meth:`Context.from_pyopencl`: the same cl_context, device and queue), so
  nothing is copied: a write through either side is read through the other.
  The device array keeps the pyopencl buffer alive (a memory pool's buffer
  does not go back to the pool while the device array lives).
* :func:`to_pyopencl` (also ``DeviceArray.to_pyopencl``) -- a
  ``pyopencl.array.Array`` over a device array's ``cl_mem`` on the context's
  own queue (or any pyopencl queue of the same cl_context); the pyopencl
  buffer retains the ``cl_mem`` and keeps the device array alive.

Only when the two sides live in *different* cl_contexts (a ``ckernels``
context made with ``Context("opencl")`` and a pyopencl context made with
``pyopencl.create_some_context``, say) is the data copied, through the host:
OpenCL memory cannot be shared between contexts.  ``same_memory(d, p)`` says
which case applies.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError, NotSupportedError
from . import cl_interop
from .context import Context, check_context
from .device_array import DeviceArray


def _cl_context(ctx: Context) -> int:
    if ctx.kind != "opencl":
        raise NotSupportedError(f"pyopencl interop needs an OpenCL context, not "
                                f"{ctx.brief}")
    return ctx.native_handles()[0]


def from_pyopencl(arr, ctx: Context | None = None) -> DeviceArray:
    """A :class:`DeviceArray` sharing a ``pyopencl.array.Array``'s memory (see
    the module docstring); a copy (through the host) only when ``ctx`` is
    given and lives in another cl_context.  ``from_pyopencl(ctx, arr)`` is
    accepted too."""
    if isinstance(arr, Context):
        arr, ctx = ctx, arr
    if not cl_interop.is_pyopencl_array(arr):
        raise InvalidArgumentError(f"from_pyopencl: expected a pyopencl.array.Array, not "
                                   f"{type(arr).__name__}")
    if ctx is None:
        if arr.queue is None:
            raise InvalidArgumentError("from_pyopencl: the pyopencl array has no queue; "
                                       "pass ctx=")
        ctx = Context.from_pyopencl(arr.queue)
    check_context(ctx, "from_pyopencl")
    if _cl_context(ctx) != arr.context.int_ptr:
        return ctx.array(arr.get())
    if arr.size == 0:
        return DeviceArray.empty(ctx, arr.shape, arr.dtype)
    mem, size, owner, offset, shape, strides, dtype = cl_interop.array_memory(arr)
    buf = ctx.wrap_buffer(mem, size, owner=(owner, arr))
    return DeviceArray(buf, offset, shape, dtype, strides)


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
    if _cl_context(ctx) == buf.context.int_ptr and n:
        return DeviceArray(ctx.wrap_buffer(buf.int_ptr, buf.size, owner=buf), 0, shape, dt)
    host = np.empty(shape, dt)
    if n:
        cl.enqueue_copy(queue, host, buf)
    return ctx.to(host)


def to_pyopencl(arr: DeviceArray, queue=None):
    """A ``pyopencl.array.Array`` sharing ``arr``'s memory (see the module
    docstring); on ``queue`` if given -- a copy through the host when that
    queue lives in another cl_context."""
    if not isinstance(arr, DeviceArray):
        raise InvalidArgumentError(f"to_pyopencl: expected a DeviceArray, not "
                                   f"{type(arr).__name__}")
    return arr.to_pyopencl(queue)


def same_memory(d: DeviceArray, p) -> bool:
    """Whether a device array and a pyopencl array live in the same cl_context
    (so :func:`from_pyopencl` / :func:`to_pyopencl` share instead of copying)."""
    return d.context.kind == "opencl" and _cl_context(d.context) == p.context.int_ptr


__all__ = ["from_pyopencl", "from_pyopencl_buffer", "to_pyopencl", "same_memory"]
