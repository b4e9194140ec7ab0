"""DLPack for device arrays: ``__dlpack__`` / ``__dlpack_device__`` and the
importer :meth:`ckernels.Context.from_dlpack`.

What DLPack can say about OpenCL memory (``dlpack.h``): the device type
``kDLOpenCL`` (4), a ``device_id``, and a ``data`` pointer which for OpenCL
*is the ``cl_mem`` handle* (not an address: OpenCL buffers have none), plus
``byte_offset``, shape, strides (in elements) and the element type.  It
cannot name the ``cl_context`` or the platform, and ``device_id`` has no
system-wide meaning for OpenCL.  Here ``device_id`` is the device's index in
its cl_context's device list (0 for the single-device contexts ckernels
makes); the ``cl_context`` itself is recoverable from the ``cl_mem``
(``clGetMemObjectInfo(CL_MEM_CONTEXT)``), which is how a consumer checks it
shares the context -- ``Context.from_dlpack`` wraps the ``cl_mem`` and fails
with the library's "belongs to another cl_context" error otherwise.  Few
consumers accept ``kDLOpenCL`` tensors (NumPy refuses them: device data is
never copied implicitly); the producer is there so that OpenCL libraries
that do (and ckernels itself) can share buffers.

Capsules are DLPack's "legacy" unversioned ``dltensor`` (allowed for any
``max_version``); ``stream`` must be None (every ckernels operation has
completed when it returns), ``copy=True`` and a ``dl_device`` other than the
array's own are refused (a copy would have to go through the host).
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ..errors import InvalidArgumentError, NotSupportedError

kDLCPU, kDLCUDA, kDLOpenCL = 1, 2, 4
_DEVICE_TYPES = {"opencl": kDLOpenCL, "cuda": kDLCUDA}
_CODES = {"b": 6, "i": 0, "u": 1, "f": 2}   # kDLBool, kDLInt, kDLUInt, kDLFloat


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter)]


_CAPSULE_NAME = b"dltensor"
_USED_NAME = b"used_dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

# address of a DLManagedTensor -> what it refers to (kept alive until deleted)
_LIVE: dict = {}
_LOCK = threading.Lock()


def _delete(addr):
    with _LOCK:
        _LIVE.pop(addr, None)


_DELETER = _Deleter(_delete)


def _capsule_destructor() -> int:
    """Address of the capsule destructor (C, in the cffi module: it may run
    with an exception pending, which a Python callback cannot)."""
    from .._native import ffi, lib
    return int(ffi.cast("uintptr_t", ffi.addressof(lib, "ck_py_dlpack_capsule_destructor")))


def device_of(ctx) -> tuple:
    """``(device_type, device_id)`` of a context's arrays (see the module
    docstring for what ``device_id`` means on OpenCL)."""
    dt = _DEVICE_TYPES.get(ctx.kind)
    if dt is None:
        raise NotSupportedError(f"DLPack: {ctx.kind} contexts have no DLPack device type")
    return (dt, 0)


def export(a, stream=None, max_version=None, dl_device=None, copy=None):
    """A ``dltensor`` capsule over device array ``a`` (no copy)."""
    dev = device_of(a.context)
    if stream is not None:
        raise InvalidArgumentError("__dlpack__: stream must be None (ckernels operations "
                                   "have completed when they return)")
    if dl_device is not None and tuple(dl_device) != dev:
        raise NotSupportedError(f"__dlpack__: cannot export to device {tuple(dl_device)} "
                                f"(the array is on {dev}; copies go through .get())")
    if copy:
        raise NotSupportedError("__dlpack__(copy=True) is not supported for device arrays")
    nd = a.ndim
    shape = (ctypes.c_int64 * max(nd, 1))(*a.shape)
    strides = (ctypes.c_int64 * max(nd, 1))(*(s // a.itemsize for s in a.strides))
    m = DLManagedTensor()
    t = m.dl_tensor
    t.data = a.buffer.native_handle
    t.device = DLDevice(*dev)
    t.ndim = nd
    t.dtype = DLDataType(_CODES[a.dtype.kind], a.itemsize * 8, 1)
    t.shape = shape
    t.strides = strides
    t.byte_offset = a.offset
    m.deleter = _DELETER
    addr = ctypes.addressof(m)
    with _LOCK:
        _LIVE[addr] = (m, shape, strides, a)
    return _api.PyCapsule_New(addr, _CAPSULE_NAME, _capsule_destructor())


def import_into(ctx, x, array_type):
    """A device array of ``ctx`` over the memory of a DLPack producer ``x`` on
    ``ctx``'s device type (OpenCL: its ``cl_mem`` must belong to ``ctx``'s
    cl_context).  The producer's tensor is released when the array's buffer
    dies."""
    if not hasattr(x, "__dlpack__"):
        raise InvalidArgumentError(f"from_dlpack: {type(x).__name__} has no __dlpack__")
    want = device_of(ctx)
    if hasattr(x, "__dlpack_device__"):
        got = tuple(x.__dlpack_device__())
        if got[0] != want[0]:
            raise NotSupportedError(f"from_dlpack: the tensor is on DLPack device {got}, "
                                    f"{ctx.brief} takes device type {want[0]}")
    capsule = x.__dlpack__()
    addr = _api.PyCapsule_GetPointer(ctypes.c_void_p(id(capsule)), _CAPSULE_NAME)
    m = DLManagedTensor.from_address(addr)
    t = m.dl_tensor
    if t.device.device_type != want[0]:
        raise NotSupportedError(f"from_dlpack: DLPack device type {t.device.device_type}, "
                                f"expected {want[0]}")
    if t.dtype.lanes != 1:
        raise NotSupportedError("from_dlpack: vector element types (lanes > 1)")
    kind = {v: k for k, v in _CODES.items()}.get(t.dtype.code)
    if kind is None:
        raise NotSupportedError(f"from_dlpack: DLPack type code {t.dtype.code}")
    dtype = np.dtype(f"{'?' if kind == 'b' else kind}{t.dtype.bits // 8}") if kind != "b" \
        else np.dtype(np.bool_)
    nd = t.ndim
    shape = tuple(t.shape[i] for i in range(nd))
    if t.strides:
        strides = tuple(t.strides[i] * dtype.itemsize for i in range(nd))
    else:
        strides = None
    # the capsule is ours now: the tensor is released through its deleter
    # when the buffer over it dies
    _api.PyCapsule_SetName(ctypes.c_void_p(id(capsule)), _USED_NAME)
    owner = _Consumed(addr, m.deleter)
    size = _extent(shape, strides, dtype.itemsize, t.byte_offset)
    buf = ctx.wrap_buffer(t.data, max(size, 1), owner=owner)
    return array_type(buf, t.byte_offset, shape, dtype, strides)


def _extent(shape, strides, itemsize, offset) -> int:
    if strides is None:
        n = 1
        for s in shape:
            n *= s
        return offset + n * itemsize
    if not all(shape):
        return offset + itemsize
    if any(st < 0 for st in strides):
        raise NotSupportedError("from_dlpack: negative strides")
    return offset + sum(st * (n - 1) for n, st in zip(shape, strides)) + itemsize


class _Consumed:
    """Calls a consumed DLManagedTensor's deleter when dropped."""

    def __init__(self, addr, deleter):
        self.addr = addr
        self.deleter = deleter

    def __del__(self):
        if self.deleter:
            self.deleter(self.addr)


__all__ = ["device_of", "export", "import_into", "kDLOpenCL", "kDLCUDA", "kDLCPU"]
