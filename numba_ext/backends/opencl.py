"""OpenCL-only parts of the context layer (the ``"opencl"`` hooks of
:func:`ckernels.dialects.hook`): zero-copy interop with pyopencl, and what
DLPack means for OpenCL memory.

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
which case applies.  ``ctx.to(p)`` / ``ctx.array(p)`` take pyopencl arrays
too (the :func:`adopt` hook): shared when they live in ``ctx``'s cl_context.

DLPack (the ``dlpack*`` hooks, :mod:`ckernels.backends.dlpack`): an OpenCL
device array exports ``(kDLOpenCL, 0)`` tensors whose ``data`` is the
``cl_mem`` and ``byte_offset`` the array's offset; ``stream`` must be None
(every ckernels operation has completed when it returns).
:meth:`Context.from_dlpack` wraps the ``cl_mem`` of a ``kDLOpenCL`` tensor
(the library refuses one of another cl_context).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgumentError, NotSupportedError
from . import cl_interop
from . import dlpack as _dl
from ..context.buffer import Buffer
from ..context.context import Context, check_context
from ..device.array import DeviceArray, element_of


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
    queue lives in another cl_context (also ``DeviceArray.to_pyopencl``)."""
    if not isinstance(arr, DeviceArray):
        raise InvalidArgumentError(f"to_pyopencl: expected a DeviceArray, not "
                                   f"{type(arr).__name__}")
    ctx = arr.context
    cl_context = _cl_context(ctx)
    if queue is None:
        queue = ctx.pyopencl_queue()
    elif queue.context.int_ptr != cl_context:
        import pyopencl.array as cla
        return cla.to_device(queue, arr.to_numpy())
    return cl_interop.make_array(queue, arr.buffer.native_handle, arr.offset, arr.shape,
                                 arr.strides, arr.dtype, owner=arr)


def adopt(ctx: Context, obj):
    """The ``adopt`` hook: a pyopencl array of ``ctx``'s cl_context as a
    DeviceArray sharing its memory; None for anything else (a pyopencl array
    of another cl_context is then copied through the host)."""
    if cl_interop.is_pyopencl_array(obj) and obj.context.int_ptr == _cl_context(ctx):
        return from_pyopencl(obj, ctx)
    return None


# ---------------------------------------------------------------- DLPack --
def dlpack_context_device(ctx: Context) -> tuple[int, int]:
    """``(kDLOpenCL, 0)``: the device's index in its (single-device) cl_context."""
    return (_dl.KDL_OPENCL, 0)


def dlpack_device(arr: DeviceArray) -> tuple[int, int]:
    return dlpack_context_device(arr.context)


def _dlpack_data(arr: DeviceArray) -> tuple[int, int]:
    return arr.buffer.native_handle, arr.offset       # the cl_mem, and where in it


def dlpack(arr: DeviceArray, stream=None, max_version=None, dl_device=None, copy=None):
    """``arr.__dlpack__(...)`` (see :func:`ckernels.backends.dlpack.export_array`)."""
    if stream is not None:
        raise InvalidArgumentError("__dlpack__: stream must be None for OpenCL arrays "
                                   "(ckernels operations have completed when they return)")
    return _dl.export_array(arr, dlpack_device(arr), _dlpack_data, max_version=max_version,
                            dl_device=dl_device, copy=copy)


def dlpack_adopt(ctx: Context, imported: _dl.Imported) -> DeviceArray:
    """A consumed ``kDLOpenCL`` tensor as a DeviceArray of ``ctx`` over its
    ``cl_mem`` (which must belong to ``ctx``'s cl_context); the ``Imported``
    is released when the last array over it dies."""
    d = imported.described
    element = element_of(ctx.kind, d.dtype, "from_dlpack")
    if not all(d.shape):
        imported.release()
        return DeviceArray.empty(ctx, d.shape, element.numpy)
    lo, nbytes = _dl.extent(d.shape, d.strides, element.size)
    if d.byte_offset + lo < 0:
        raise InvalidArgumentError(f"from_dlpack: shape {d.shape} with strides {d.strides} "
                                   f"reaches before the cl_mem (byte_offset {d.byte_offset})")
    buf = Buffer.wrap(ctx, d.handle, d.byte_offset + lo + nbytes, imported)
    return DeviceArray(buf, d.byte_offset, d.shape, element.numpy, d.strides,
                       readonly=d.readonly)


def same_memory(d: DeviceArray, p) -> bool:
    """Whether a device array and a pyopencl array live in the same cl_context
    (so :func:`from_pyopencl` / :func:`to_pyopencl` share instead of copying)."""
    return d.context.kind == "opencl" and _cl_context(d.context) == p.context.int_ptr


__all__ = ["from_pyopencl", "from_pyopencl_buffer", "to_pyopencl", "same_memory", "adopt",
           "dlpack", "dlpack_device", "dlpack_context_device", "dlpack_adopt"]
