"""pyopencl objects <-> OpenCL handles, for zero-copy interop.

The only module that touches pyopencl (imported lazily, when interop is
used).  It knows pyopencl's objects -- ``CommandQueue`` (``int_ptr``,
``context``, ``device``), ``Buffer`` / ``PooledBuffer`` (``int_ptr``,
``size``), ``pyopencl.array.Array`` (``base_data``, ``offset``, ``shape``,
``strides``, ``dtype``) -- and nothing about ckernels' arrays.
"""

from __future__ import annotations

import sys

from ..errors import InvalidArgumentError


def _cl():
    try:
        import pyopencl as cl
        import pyopencl.array as cla
    except ImportError as exc:   # pragma: no cover - pyopencl is a test dependency
        raise InvalidArgumentError(f"pyopencl interop needs pyopencl ({exc})") from None
    return cl, cla


def queue_handles(queue) -> tuple:
    """``(cl_context, cl_device_id, cl_command_queue)`` addresses of a
    ``pyopencl.CommandQueue``."""
    cl, _ = _cl()
    if not isinstance(queue, cl.CommandQueue):
        raise InvalidArgumentError(f"expected a pyopencl.CommandQueue, not "
                                   f"{type(queue).__name__}")
    return queue.context.int_ptr, queue.device.int_ptr, queue.int_ptr


def pyopencl_queue(cl_context: int, cl_device: int, cl_queue: int):
    """A ``pyopencl.CommandQueue`` object over an existing queue (retained)."""
    cl, _ = _cl()
    return cl.CommandQueue.from_int_ptr(cl_queue, retain=True)


def is_pyopencl_array(obj) -> bool:
    # an object can only be a pyopencl array once pyopencl.array is imported:
    # asking never imports pyopencl
    cla = sys.modules.get("pyopencl.array")
    return cla is not None and isinstance(obj, cla.Array)


def array_memory(arr) -> tuple:
    """``(cl_mem address, its size, owner, offset, shape, strides, dtype)`` of
    a ``pyopencl.array.Array``; ``owner`` is the object whose life keeps the
    memory allocated (its buffer: a memory pool's ``PooledBuffer`` goes back to
    the pool when that dies)."""
    buf = arr.base_data
    if buf is None:
        raise InvalidArgumentError("from_pyopencl: the pyopencl array has no data "
                                   "(an empty array)")
    return (buf.int_ptr, buf.size, buf, arr.offset, arr.shape, arr.strides, arr.dtype)


def make_array(queue, cl_mem: int, offset: int, shape, strides, dtype, owner):
    """A ``pyopencl.array.Array`` on ``queue`` over ``cl_mem`` (retained by the
    pyopencl ``Buffer``), which keeps ``owner`` alive as long as that buffer
    lives -- every view and copy pyopencl makes of the array shares it."""
    cl, cla = _cl()
    buf = cl.Buffer.from_int_ptr(cl_mem, retain=True)
    buf._ckernels_owner = owner
    return cla.Array(queue, shape, dtype, data=buf, offset=offset, strides=strides)


__all__ = ["queue_handles", "pyopencl_queue", "is_pyopencl_array", "array_memory",
           "make_array"]
