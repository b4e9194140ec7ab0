"""OpenCL's Python half (below the arrays): what OpenCL memory means to
pyopencl and to DLPack, in raw parts.

* :func:`cl_context` -- the ``cl_context`` of an OpenCL context;
* :func:`adopt` (the hook behind ``ctx.to(p)`` / ``ctx.array(p)``) -- a pyopencl
  array of the context's cl_context as :class:`~ckernels.backends.raw.Raw`
  parts (its ``cl_mem``, offset, shape, strides, dtype; the pyopencl buffer is
  their owner), None for anything else;
* :func:`pyopencl_array` -- a ``pyopencl.array.Array`` over raw parts of a
  ``cl_mem`` on a queue of the same cl_context.

The arrays of those parts are made by :mod:`ckernels.device.interop`
(``ckernels.from_pyopencl``, ``to_pyopencl``; zero-copy when both sides live
in one cl_context, a copy through the host otherwise).

DLPack (the ``dlpack*`` hooks, :mod:`ckernels.backends.dlpack`): an OpenCL
device array exports ``(kDLOpenCL, 0)`` tensors whose ``data`` is the
``cl_mem`` and ``byte_offset`` the array's offset; ``stream`` must be None
(every ckernels operation has completed when it returns).
:meth:`Context.from_dlpack` wraps the ``cl_mem`` of a ``kDLOpenCL`` tensor
(the library refuses one of another cl_context).
"""

from __future__ import annotations

from ..errors import InvalidArgumentError, NotSupportedError
from . import cl_interop
from . import dlpack as _dl
from .raw import Raw


def cl_context(ctx) -> int:
    """The ``cl_context`` of an OpenCL context, as an int (NotSupportedError
    for a context of another kind)."""
    if ctx.kind != "opencl":
        raise NotSupportedError(f"pyopencl interop needs an OpenCL context, not "
                                f"{ctx.brief}")
    return ctx.native_handles()[0]


def pyopencl_parts(arr) -> Raw:
    """The memory of a ``pyopencl.array.Array`` as raw parts (an empty array:
    no memory)."""
    if arr.size == 0:
        return Raw(0, 0, None, 0, arr.shape, None, arr.dtype)
    mem, size, owner, offset, shape, strides, dtype = cl_interop.array_memory(arr)
    return Raw(mem, size, (owner, arr), offset, shape, strides, dtype)


def adopt(ctx, obj) -> Raw | None:
    """The ``adopt`` hook: a pyopencl array of ``ctx``'s cl_context as raw
    parts sharing its memory; None for anything else (a pyopencl array of
    another cl_context is then copied through the host)."""
    if cl_interop.is_pyopencl_array(obj) and obj.context.int_ptr == cl_context(ctx):
        return pyopencl_parts(obj)
    return None


def pyopencl_array(queue, cl_mem: int, offset: int, shape, strides, dtype, owner):
    """A ``pyopencl.array.Array`` on ``queue`` over ``cl_mem`` (read as
    ``shape``, byte ``strides`` and ``dtype`` from ``offset``); the pyopencl
    buffer retains the ``cl_mem`` and keeps ``owner`` alive."""
    return cl_interop.make_array(queue, cl_mem, offset, shape, strides, dtype, owner=owner)


# ---------------------------------------------------------------- DLPack --
def dlpack_device(ctx) -> tuple[int, int]:
    """``(kDLOpenCL, 0)``: the device's index in its (single-device) cl_context."""
    return (_dl.KDL_OPENCL, 0)


def dlpack_data(native: int, offset: int) -> tuple[int, int]:
    """DLPack's ``(data, byte_offset)``: the ``cl_mem``, and where in it."""
    return native, offset


def dlpack_check_stream(stream) -> None:
    if stream is not None:
        raise InvalidArgumentError("__dlpack__: stream must be None for OpenCL arrays "
                                   "(ckernels operations have completed when they return)")


def dlpack_adopt(ctx, imported: _dl.Imported) -> Raw:
    """A consumed ``kDLOpenCL`` tensor as raw parts over its ``cl_mem`` (which
    must belong to ``ctx``'s cl_context: the library checks when the buffer
    is wrapped); the ``Imported`` is their owner."""
    d = imported.described
    if not all(d.shape):
        imported.release()
        return Raw(0, 0, None, 0, d.shape, None, d.dtype, d.readonly)
    lo, nbytes = _dl.extent(d.shape, d.strides, d.dtype.itemsize)
    if d.byte_offset + lo < 0:
        raise InvalidArgumentError(f"from_dlpack: shape {d.shape} with strides {d.strides} "
                                   f"reaches before the cl_mem (byte_offset {d.byte_offset})")
    return Raw(d.handle, d.byte_offset + lo + nbytes, imported, d.byte_offset, d.shape,
               d.strides, d.dtype, d.readonly)


__all__ = ["cl_context", "pyopencl_parts", "adopt", "pyopencl_array", "dlpack_device",
           "dlpack_data", "dlpack_check_stream", "dlpack_adopt"]
