"""Device arrays of other libraries' memory: adopting foreign arrays and
DLPack tensors without a copy.

The backends (:mod:`ckernels.backends`) read the foreign objects and hand back
raw parts (:class:`~ckernels.backends.raw.Raw`: the native memory, its owner,
offset, shape, strides, dtype); :func:`array_of` makes a
:class:`~ckernels.device.array.DeviceArray` of them, over a buffer that wraps
the memory (``ck_buffer_wrap``: the library checks that it belongs to the
context) and keeps the owner alive until the last array over it dies.

* :func:`adopt` (``ctx.to(obj)``, ``ctx.array(obj)``): the kind's ``adopt``
  hook (pyopencl arrays of the context's cl_context; objects with a
  ``__cuda_array_interface__``), then, where the kind's ``dlpack_producer``
  hook recognises one, a DLPack producer of the context's device;
* :func:`from_dlpack` (``ctx.from_dlpack(x)``).

Exports (``__cuda_array_interface__``, ``__dlpack__``) are the arrays' own:
:func:`ckernels.device.base.cuda_array_interface`,
:func:`ckernels.device.base.export_dlpack`.
"""

from __future__ import annotations

from .. import backends, dialects
from ..backends import dlpack as _dl
from ..backends.raw import Raw
from ..context.buffer import Buffer
from ..errors import InvalidArgumentError, NotSupportedError
from ..host.array import from_dlpack as _host_from_dlpack
from .array import DeviceArray
from .base import DeviceArrayBase, cuda_array_interface, element_of, export_dlpack


def array_of(ctx, raw: Raw, where: str) -> DeviceArray:
    """A DeviceArray of ``ctx`` over the memory ``raw`` describes (no copy);
    an empty one for parts without memory."""
    element = element_of(ctx.kind, raw.dtype, where)
    if not raw.nbytes:
        return DeviceArray.empty(ctx, raw.shape, element.numpy)
    buf = Buffer.wrap(ctx, raw.native, raw.nbytes, raw.owner)
    return DeviceArray(buf, raw.offset, raw.shape, element.numpy, raw.strides,
                       readonly=raw.readonly)


def adopt(ctx, obj):
    """``obj`` (another library's array in this context's device memory) as a
    DeviceArray sharing its memory, or None when the context's backend does
    not recognise it."""
    if isinstance(obj, DeviceArrayBase):
        return None
    hook = backends.hook(ctx.kind, "adopt")
    raw = hook(ctx, obj) if hook is not None else None
    if raw is not None:
        return array_of(ctx, raw, f"adopting a {dialects.DIALECTS[ctx.kind].title} array")
    producer = backends.hook(ctx.kind, "dlpack_producer")
    if producer is not None and producer(ctx, obj):
        return from_dlpack(ctx, obj)
    return None


def from_dlpack(ctx, x):
    """``ctx.from_dlpack(x)``: the memory of DLPack producer ``x`` as an array
    of ``ctx`` without a copy -- a device array over it for a device context
    (the kind's ``dlpack_device``, ``dlpack_stream`` and ``dlpack_adopt``
    hooks), a host ``ckernels.Array`` for a ``"cpu"`` one.  The producer's
    tensor is deleted when the last array over it dies."""
    if not hasattr(x, "__dlpack__"):
        raise InvalidArgumentError(f"from_dlpack: {type(x).__name__} has no __dlpack__")
    if not ctx.is_device:
        return _host_from_dlpack(x)
    context_device = backends.hook(ctx.kind, "dlpack_device")
    adopt_hook = backends.hook(ctx.kind, "dlpack_adopt")
    if context_device is None or adopt_hook is None:
        raise NotSupportedError(f"from_dlpack: {ctx.kind} contexts take no DLPack tensors")
    names = _dl.DEVICE_NAMES
    want = tuple(context_device(ctx))
    f = getattr(x, "__dlpack_device__", None)
    if f is not None:
        got = tuple(f())
        if got[0] != want[0]:
            raise NotSupportedError(
                f"from_dlpack: the tensor is on {names.get(got[0], got[0])} device "
                f"{got[1]}; {ctx.brief} takes {names[want[0]]} tensors (copy it first)")
    stream_of = backends.hook(ctx.kind, "dlpack_stream")
    stream = stream_of(ctx) if stream_of is not None else None
    try:
        capsule = x.__dlpack__(stream=stream, max_version=_dl.VERSION)
    except TypeError:               # a producer older than DLPack 1.0 (no max_version)
        capsule = x.__dlpack__(stream=stream) if stream is not None else x.__dlpack__()
    imported = _dl.consume(capsule)
    try:
        dev = imported.described.device
        if dev[0] != want[0]:
            raise NotSupportedError(f"from_dlpack: the tensor is on "
                                    f"{names.get(dev[0], dev[0])} device {dev[1]}; "
                                    f"{ctx.brief} takes {names[want[0]]} tensors")
        return array_of(ctx, adopt_hook(ctx, imported), "from_dlpack")
    except BaseException:
        imported.release()
        raise


__all__ = ["array_of", "adopt", "from_dlpack", "cuda_array_interface", "export_dlpack"]
