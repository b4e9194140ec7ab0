"""Device arrays from another producer's Arrow C device interface
(``ctx.array(obj)`` for an object with ``__arrow_c_device_array__`` or
``__arrow_c_device_stream__`` that is no NumPy-like array, ``docs/interop.md``).

* ``ARROW_DEVICE_CPU``: imported by the C core as host data
  (``ck_arrow_import`` of the CPU device array), then placed as any host
  array is (one upload).
* ``ARROW_DEVICE_OPENCL`` / ``ARROW_DEVICE_CUDA``: the array must live on
  this context's device (the device type and id of its DLPack device), and
  each buffer is wrapped without a copy (``ck_buffer_wrap``, which checks that
  a ``cl_mem`` belongs to this context's ``cl_context``: a clear error naming
  both otherwise), then copied on the device into arrays of our own; the
  producer's array is released when the copies are made.  Numbers, bools
  (packed bits, unpacked through the host), ``utf8`` / ``large_utf8``
  strings, each with or without a validity bitmap, at any array offset.  A
  sync event is refused (the producer must have finished writing).

A stream gives one array: a stream of more than one is refused (concatenate
on the producer's side).
"""

from __future__ import annotations

import ctypes

import numpy as np

from .. import _arrow, backends
from .. import types as _t
from .._native import ffi
from ..context.buffer import Buffer
from ..errors import InvalidArgumentError, NotSupportedError
from ..host.array import Array
from .array import DeviceArray

__all__ = ["is_device_producer", "import_device"]

#: Arrow formats of numbers -> NumPy dtype
_NUMBERS = {"c": np.int8, "C": np.uint8, "s": np.int16, "S": np.uint16, "i": np.int32,
            "I": np.uint32, "l": np.int64, "L": np.uint64, "f": np.float32, "g": np.float64}
_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA_HOST", 4: "OPENCL", 7: "VULKAN", 8: "METAL",
                 10: "ROCM", 13: "CUDA_MANAGED", 14: "ONEAPI"}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def is_device_producer(obj) -> bool:
    """Whether ``obj`` speaks Arrow's C device interface and is no NumPy-like
    array (pyarrow and ckernels' host arrays go their own ways)."""
    tp = type(obj)
    return (hasattr(tp, "__arrow_c_device_array__") or
            hasattr(tp, "__arrow_c_device_stream__")) and not hasattr(tp, "__array__")


def _capsules(obj):
    """``(schema capsule, device array capsule)`` of ``obj``'s one array."""
    tp = type(obj)
    if hasattr(tp, "__arrow_c_device_array__"):
        return obj.__arrow_c_device_array__()
    stream = obj.__arrow_c_device_stream__()
    p = _get_pointer(stream, b"arrow_device_array_stream")
    s = ffi.cast("struct ArrowDeviceArrayStream *", p)
    if s.release == ffi.NULL:
        raise InvalidArgumentError("Context.array: a released Arrow device stream")
    schema = ffi.new("struct ArrowSchema *")
    first = ffi.new("struct ArrowDeviceArray *")
    more = ffi.new("struct ArrowDeviceArray *")

    def fail(what, rc):
        msg = s.get_last_error(s)
        why = ffi.string(msg).decode(errors="replace") if msg != ffi.NULL else f"errno {rc}"
        raise InvalidArgumentError(f"Context.array: the Arrow device stream's {what} "
                                   f"failed: {why}")
    rc = s.get_schema(s, schema)
    if rc:
        fail("get_schema", rc)
    try:
        rc = s.get_next(s, first)
        if rc:
            fail("get_next", rc)
        if first.array.release == ffi.NULL:
            raise NotSupportedError("Context.array: an empty Arrow device stream (no array)")
        rc = s.get_next(s, more)
        if rc:
            first.array.release(ffi.addressof(first.array))
            fail("get_next", rc)
        if more.array.release != ffi.NULL:
            more.array.release(ffi.addressof(more.array))
            first.array.release(ffi.addressof(first.array))
            raise NotSupportedError("Context.array: an Arrow device stream of more than one "
                                    "array (concatenate them first)")
    except BaseException:
        schema.release(schema)
        raise
    return _arrow.wrap_device_array(int(ffi.cast("uintptr_t", schema)),
                                    int(ffi.cast("uintptr_t", first)))


def import_device(ctx, obj):
    """A copy of ``obj``'s Arrow device array in ``ctx`` (see the module
    docstring): a ``DeviceArray``, ``DeviceVarArray`` or
    ``DeviceOptionArray``; a host ``ckernels.Array`` in a ``"cpu"`` context."""
    schema_cap, array_cap = _capsules(obj)
    dev = ffi.cast("struct ArrowDeviceArray *", _get_pointer(array_cap, b"arrow_device_array"))
    if dev.array.release == ffi.NULL:
        raise InvalidArgumentError("Context.array: a released Arrow device array")
    dtype = int(dev.device_type)
    if dtype == 1:
        host = Array._own_address(_arrow.import_array(schema_cap, array_cap, None))
        return ctx.array(host)
    name = _DEVICE_NAMES.get(dtype, str(dtype))
    if not ctx.is_device:
        raise NotSupportedError(f"Context.array: an ARROW_DEVICE_{name} array into a "
                                f"{ctx.kind} context (copy it to the host first)")
    hook = backends.hook(ctx.kind, "dlpack_device")
    mine = hook(ctx) if hook is not None else None
    if mine is None or mine[0] != dtype:
        raise NotSupportedError(f"Context.array: an ARROW_DEVICE_{name} array into a "
                                f"{ctx.kind} context ({ctx.brief})")
    if int(dev.device_id) != mine[1]:
        raise InvalidArgumentError(f"Context.array: the array lives on device "
                                   f"{int(dev.device_id)}, this context on device {mine[1]} "
                                   f"({ctx.brief})")
    if dev.sync_event != ffi.NULL:
        raise NotSupportedError("Context.array: an Arrow device array with a sync event "
                                "(the producer must have finished writing it)")
    fmt = _arrow.schema_format(schema_cap)
    a = dev.array
    n, off = int(a.length), int(a.offset)
    nulls = a.n_buffers > 0 and a.buffers[0] != ffi.NULL and a.null_count != 0
    owner = (schema_cap, array_cap)     # released when the last wrap dies

    if a.n_buffers < 2 or (fmt in ("u", "U") and a.n_buffers < 3):
        raise InvalidArgumentError(f"Context.array: an Arrow array of format {fmt!r} with "
                                   f"{int(a.n_buffers)} buffers")

    def wrapped(k, start, count, dt):
        """Elements ``start .. start + count`` of buffer ``k`` read as
        ``dt``: a view over the wrapped memory (None when there is none)."""
        dt = np.dtype(dt)
        nbytes = (start + count) * dt.itemsize
        if nbytes == 0:
            return None
        if a.buffers[k] == ffi.NULL:
            raise InvalidArgumentError(f"Context.array: buffer {k} of a non-empty Arrow "
                                       "array is NULL")
        buf = Buffer.wrap(ctx, int(ffi.cast("uintptr_t", a.buffers[k])), nbytes, owner)
        return DeviceArray(buf, start * dt.itemsize, (count,), dt, (dt.itemsize,))

    if fmt in _NUMBERS:
        dt = np.dtype(_NUMBERS[fmt])
        raw = wrapped(1, off, n, dt)
        values = raw.copy() if raw is not None and n else DeviceArray.empty(ctx, (n,), dt)
        vt = str(_t.Type(dt.name))
    elif fmt == "b":
        raw = wrapped(1, 0, (off + n + 7) // 8, np.uint8)
        bits = np.unpackbits(raw.get(), bitorder="little")[off:off + n].astype(bool) \
            if raw is not None and n else np.zeros(n, bool)
        values = DeviceArray.from_host(ctx, bits)
        vt = "bool"
    elif fmt in ("u", "U"):
        values = _strings(ctx, wrapped, fmt, off, n)
        vt = "string"
    else:
        raise NotSupportedError(f"Context.array: Arrow format {fmt!r} from a device producer "
                                "(numbers, bools and utf8/large_utf8 strings)")
    if not nulls:
        return values
    from .nulls import DeviceOptionArray
    vbits = wrapped(0, off // 8, (off % 8 + n + 7) // 8, np.uint8)
    return DeviceOptionArray(values, vbits.copy(), off % 8,
                             int(a.null_count) if a.null_count >= 0 else None)


def _strings(ctx, wrapped, fmt, off, n):
    """A ``DeviceVarArray`` of strings from Arrow's offsets and data (int32
    or int64 offsets, re-based to 0 and widened on the device)."""
    from .varlen import DeviceVarArray
    ot = np.dtype(np.int32 if fmt == "u" else np.int64)
    o = wrapped(1, off, n + 1, ot)
    first, last = int(o[0:1].get()[0]), int(o[n:n + 1].get()[0])
    if first < 0 or last < first:
        raise InvalidArgumentError(f"Context.array: Arrow string offsets from {first} to "
                                   f"{last} (they must rise)")
    offsets = o.astype(np.int64)
    offsets -= first
    dataraw = wrapped(2, first, last - first, np.uint8)
    data = dataraw.copy() if dataraw is not None else DeviceArray.empty(ctx, (0,), np.uint8)
    return DeviceVarArray(ctx, _t.Type("string"), offsets, data)
