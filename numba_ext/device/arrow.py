"""Arrow's C device interface over device memory (``docs/device-code.md``).

A device array's buffers are Arrow buffers as they are: numbers one data
buffer, a :class:`~ckernels.device.varlen.DeviceVarArray` (strings, var
dims) int64 offsets plus values.  This module describes them as an
``ArrowDeviceArray`` through ``ck_arrow_wrap`` (``ckernel/arrow_wrap.h``),
without a copy: ``ARROW_DEVICE_OPENCL`` with the ``cl_mem`` handles as
buffer pointers (each buffer must start its allocation: one that does not
is copied to one that does first), ``ARROW_DEVICE_CUDA`` with device
pointers.  The Python objects owning the buffers stay alive until the
consumer releases the last node.  Bools, one byte each on the device, are
packed to Arrow's bits on the device first.

It sits below the device array classes and knows them by their parts: an
array with ``validity`` and ``bit_offset`` is an option array (``?T``: its
values' node with the bitmap as buffer 0 -- the child of ``var * ?T``), one
with ``offsets`` and ``values`` is variable-length, any other is a
:class:`~ckernels.device.base.DeviceArrayBase` of numbers.
"""

from __future__ import annotations

import numpy as np

from .. import _arrow, backends
from .._native import check, ffi, lib
from ..errors import NotSupportedError
from ..host.array import empty as _host_empty
from ..memory import release_callback

__all__ = ["node_of", "device_node", "wrap_capsules", "check_export_args", "schema_capsule",
           "export_device_array", "export_device_stream"]


def _is_varlen(x) -> bool:
    return hasattr(x, "offsets") and hasattr(x, "values")


def _is_option(x) -> bool:
    return hasattr(x, "validity") and hasattr(x, "bit_offset")


def node_of(x, buffer_of, keep: list):
    """A ``ck_arrow_node`` (cffi-owned, kept in ``keep``) for the device array
    ``x``; ``buffer_of(device_array)`` gives a buffer pointer."""
    if _is_option(x):
        # ?T: the values' node, the validity bitmap (at bit 0) as buffer 0
        node = node_of(x.values, buffer_of, keep)
        node.buffers[0] = buffer_of(x.arrow_bitmap())
        node.null_count = x.null_count
        return node
    node = ffi.new("ck_arrow_node *")
    keep.append(node)
    if _is_varlen(x):
        node.length = x.size
        node.buffers[1] = buffer_of(x.offsets)
        if str(x.element) == "string":
            node.n_buffers = 3
            node.buffers[2] = buffer_of(x.values)
        else:
            node.n_buffers = 2
            node.child = node_of(x.values, buffer_of, keep)
        return node
    node.length = x.size
    node.n_buffers = 2
    node.buffers[1] = buffer_of(arrow_leaf(x))
    return node


def arrow_leaf(x) :
    """``x`` as Arrow's buffer of it: bools packed to bits (little-endian bit
    order) on the device, numbers as they are."""
    if x.dtype != np.bool_:
        return x
    n = x.size
    m = (n + 7) // 8
    padded = type(x).empty(x.context, (max(m, 1) * 8,), np.uint8)
    padded.fill(0)
    if n:
        padded[:n] = x.astype(np.uint8)
    weights = type(x).from_host(x.context, (1 << np.arange(8)).astype(np.uint8))
    packed = (padded.reshape(max(m, 1), 8) * weights).sum(axis=1, dtype=np.uint8)
    return packed


def device_node(x):
    """``(node, keep)`` over the device buffers themselves: a buffer pointer
    is what the backend's DLPack export names as its data (the ``cl_mem`` on
    OpenCL: a buffer must start at offset 0 there, else it is copied first)."""
    keep: list = [x]
    backend = backends.BACKENDS.get(x.context.kind)
    if backend is None or not hasattr(backend, "dlpack_data"):
        raise NotSupportedError(f"__arrow_c_device_array__: {x.context.kind} device arrays")

    def device_buffer(a):
        if not a.is_contiguous:
            a = a.copy()
        data, off = backend.dlpack_data(a.buffer.native_handle, a.offset)
        if off:
            a = a.copy()
            data, off = backend.dlpack_data(a.buffer.native_handle, a.offset)
        if off:
            raise NotSupportedError("__arrow_c_device_array__: a buffer not at the start "
                                    "of its device allocation")
        keep.append(a)
        return ffi.cast("void *", data)

    return node_of(x, device_buffer, keep), keep


def check_export_args(requested_schema, kwargs, own_schema) -> None:
    """Refuse keywords other than None (as the PyCapsule interface asks) and a
    requested schema whose top-level format is not ``own_schema``'s (a cffi
    ``struct ArrowSchema *``)."""
    extra = sorted(k for k, v in kwargs.items() if v is not None)
    if extra:
        raise NotImplementedError(f"__arrow_c_device_array__: unsupported keyword "
                                  f"argument(s): {extra}")
    own = ffi.string(own_schema.format).decode()
    if requested_schema is not None and _arrow.schema_format(requested_schema) != own:
        raise NotSupportedError(
            f"__arrow_c_device_array__: the array is {own!r}, "
            f"{_arrow.schema_format(requested_schema)!r} was requested (convert after import)")


def schema_capsule(schema):
    """An ``arrow_schema`` capsule holding ``schema`` (a cffi ``struct
    ArrowSchema *`` the C core made; moved in): carried out beside an empty
    array, which is dropped at once."""
    node = ffi.new("ck_arrow_node *")
    node.n_buffers = 1
    dev = ffi.new("struct ArrowDeviceArray *")
    check(lib.ck_arrow_wrap(node, 1, -1, ffi.NULL, ffi.NULL, dev))
    return _arrow.wrap_device_array(int(ffi.cast("uintptr_t", schema)),
                                    int(ffi.cast("uintptr_t", dev)))[0]


def wrap_capsules(ctx, node, keep, schema):
    device_type, device_id = backends.hook(ctx.kind, "dlpack_device")(ctx)
    dev = ffi.new("struct ArrowDeviceArray *")
    release, handle = release_callback(keep)
    st = lib.ck_arrow_wrap(node, device_type, device_id, release, handle, dev)
    if st != 0:
        release(handle)
        schema.release(schema)
        check(st)
    return _arrow.wrap_device_array(int(ffi.cast("uintptr_t", schema)),
                                    int(ffi.cast("uintptr_t", dev)))


def export_device_array(x, requested_schema=None, **kwargs):
    """``x.__arrow_c_device_array__()`` for a one-dimensional device array of
    numbers or bools (bools are packed to Arrow's bits on the device first)."""
    if x.ndim != 1 or x.dtype.fields is not None:
        raise NotSupportedError(f"__arrow_c_device_array__: {x.type} (one-dimensional "
                                "arrays of numbers and bools, strings and var dims)")
    proto = _host_empty(0, x.dtype)
    schema = ffi.new("struct ArrowSchema *")
    check(lib.ck_arrow_export_schema(proto._a, ffi.NULL, schema))
    try:
        check_export_args(requested_schema, kwargs, schema)
    except BaseException:
        schema.release(schema)
        raise
    node, keep = device_node(x)
    return wrap_capsules(x.context, node, keep, schema)


def export_device_stream(x, requested_schema=None, **kwargs):
    """``x.__arrow_c_device_stream__()``: an ``arrow_device_array_stream``
    capsule of one array, ``x.__arrow_c_device_array__()`` (Arrow's C device
    stream interface; ``ck_arrow_device_stream_of``, the C core's
    ``ckernel/arrow_device_stream.h``: get_schema, get_next, get_last_error,
    release)."""
    extra = sorted(k for k, v in kwargs.items() if v is not None)
    if extra:
        raise NotImplementedError(f"__arrow_c_device_stream__: unsupported keyword "
                                  f"argument(s): {extra}")
    schema, array = x.__arrow_c_device_array__(requested_schema)
    return _arrow.wrap_device_stream(schema, array)
