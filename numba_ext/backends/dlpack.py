"""DLPack: capsules both ways, for every device kind (OpenCL, CUDA) and for
host memory.

This module speaks the C ABI of ``dlpack.h`` (DLPack 1.x:
``DLManagedTensorVersioned`` in a ``"dltensor_versioned"`` capsule, and the
legacy ``DLManagedTensor`` in a ``"dltensor"`` capsule) with ``ctypes``;
what differs between device kinds comes from the kind's hooks
(:func:`ckernels.backends.hook`): its DLPack device, what goes in ``data``
and ``byte_offset``, the stream rule, and how imported memory becomes raw
parts.  Host ``ckernels.Array`` objects share through NumPy
(``Array.__dlpack__``, :func:`ckernels.from_dlpack`).

Exporting (:func:`export`, behind ``DeviceArray.__dlpack__``,
:func:`ckernels.device.base.export_dlpack`): the managed tensor, its shape and strides live
in ctypes objects held, with the producer's owner object, in a table keyed
by the tensor's address until its deleter runs -- once, called by the
consumer that renamed the capsule ``"used_..."``, or by the capsule's
destructor (C, in the cffi module: it may run with an exception pending) if
nobody consumed it.  ``copy=True`` exports a device copy; ``dl_device=(kDLCPU,
0)`` (what ``np.from_dlpack(x, device="cpu")`` asks) an explicit host copy.

Importing (:func:`consume`, behind :meth:`ckernels.Context.from_dlpack`,
:func:`ckernels.device.interop.from_dlpack`): the capsule is validated, renamed
``"used_..."`` (so its destructor no longer deletes), and the returned
:class:`Imported` calls the producer's deleter exactly once when it is
released (:meth:`Imported.release`, or garbage collection -- for an adopted
array, when the last buffer over the memory dies).

What DLPack can say about OpenCL memory: the device type ``kDLOpenCL`` (4), a
``device_id``, and a ``data`` field which for OpenCL *is the ``cl_mem``
handle* (OpenCL buffers have no address), plus ``byte_offset``.  It cannot
name the ``cl_context``; ``device_id`` is the device's index in its
cl_context (0 for the single-device contexts ckernels makes).  The
``cl_context`` is recoverable from the ``cl_mem``, which is how
``Context.from_dlpack`` checks it shares the context (the library's "belongs
to another cl_context" error otherwise).  Few consumers accept ``kDLOpenCL``
tensors (NumPy refuses them: device data is never copied implicitly).  For
CUDA, ``data`` is the device pointer of the first element (``byte_offset``
0) and ``device_id`` the device ordinal.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import NamedTuple

import numpy as np

from ..errors import InvalidArgumentError, NotSupportedError

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_OPENCL = 1, 2, 3, 4
KDL_CUDA_MANAGED = 13
DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
                10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}
READ_ONLY, IS_COPIED = 1, 2
#: the DLPack version of the capsules made here
VERSION = (1, 0)

_INT, _UINT, _FLOAT, _COMPLEX, _BOOL = 0, 1, 2, 5, 6
_KIND_CODE = {"i": _INT, "u": _UINT, "f": _FLOAT, "c": _COMPLEX, "b": _BOOL}
_CODE_KIND = {v: k for k, v in _KIND_CODE.items()}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# the capsule API, through prototypes that keep the GIL (PYFUNCTYPE)
_api = ctypes.pythonapi
_P = ctypes.PYFUNCTYPE
_capsule_new = _P(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p,
                  ctypes.c_void_p)(("PyCapsule_New", _api))
_is_valid = _P(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(("PyCapsule_IsValid", _api))
_get_pointer = _P(ctypes.c_void_p, ctypes.py_object,
                  ctypes.c_void_p)(("PyCapsule_GetPointer", _api))
_set_name = _P(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(("PyCapsule_SetName", _api))

# capsule names: C strings that live as long as the process
_NAMES = {n: ctypes.create_string_buffer(n) for n in
          (b"dltensor", b"used_dltensor", b"dltensor_versioned", b"used_dltensor_versioned")}


def _name(n: bytes) -> int:
    return ctypes.addressof(_NAMES[n])


# ----------------------------------------------------------------- export --
_live: dict[int, tuple] = {}     # managed tensor address -> (ctypes objects, owner)
_live_lock = threading.Lock()


@_DELETER
def _deleter(ptr):            # called by the consumer (or our capsule destructor), once
    with _live_lock:
        _live.pop(int(ptr or 0), None)


def _capsule_destructor() -> int:
    """Address of the capsule destructor (C, in the cffi module): it deletes a
    capsule nobody consumed, setting a pending exception aside meanwhile."""
    from .._native import ffi, lib
    return int(ffi.cast("uintptr_t", ffi.addressof(lib, "ck_py_dlpack_capsule_destructor")))


def dtype_code(dtype) -> DLDataType:
    """The DLPack data type of a NumPy dtype (BufferError if it has none)."""
    dt = np.dtype(dtype)
    code = _KIND_CODE.get(dt.kind)
    if code is None or not dt.isnative:
        raise BufferError(f"DLPack: dtype {dt} has no DLPack equivalent")
    return DLDataType(code, dt.itemsize * 8, 1)


def export(owner, address: int, shape, strides, dtype, device: tuple[int, int],
           versioned: bool, readonly: bool = False, byte_offset: int = 0):
    """A DLPack capsule over ``address`` (``shape``, byte ``strides``, ``dtype``
    on ``device``; ``address`` is DLPack's ``data``: a pointer, or the
    ``cl_mem`` for OpenCL, with the first element ``byte_offset`` bytes in)
    that keeps ``owner`` alive until its consumer deletes it."""
    dt = np.dtype(dtype)
    item = dt.itemsize
    if any(s % item for s in strides):
        raise BufferError(f"DLPack: strides {tuple(strides)} are not multiples of the "
                          f"element size {item}")
    nd = len(shape)
    shape_arr = (ctypes.c_int64 * max(nd, 1))(*[int(s) for s in shape])
    strides_arr = (ctypes.c_int64 * max(nd, 1))(*[int(s) // item for s in strides])
    size = int(np.prod(shape, dtype=np.int64)) if nd else 1
    if versioned:
        m = DLManagedTensorVersioned()
        m.version = DLPackVersion(*VERSION)
        m.flags = READ_ONLY if readonly else 0
        t = m.dl_tensor
    else:
        m = DLManagedTensor()
        t = m.dl_tensor
    t.data = int(address) if size else None
    t.device = DLDevice(*device)
    t.ndim = nd
    t.dtype = dtype_code(dt)
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = int(byte_offset) if size else 0
    addr = ctypes.addressof(m)
    m.manager_ctx = addr
    m.deleter = ctypes.cast(_deleter, ctypes.c_void_p).value
    with _live_lock:
        _live[addr] = (m, shape_arr, strides_arr, owner)
    try:
        return _capsule_new(addr, _name(b"dltensor_versioned" if versioned else b"dltensor"),
                            _capsule_destructor())
    except BaseException:
        _deleter(addr)
        raise


def live_exports() -> int:
    """Capsules made here whose consumer has not deleted them yet (for tests)."""
    with _live_lock:
        return len(_live)


# ----------------------------------------------------------------- import --
class Described(NamedTuple):
    """What a foreign array says about itself (DLPack or ``__cuda_array_interface__``)."""
    address: int            # the first element (0 for zero-size arrays): handle + byte_offset
    shape: tuple
    strides: tuple          # in bytes
    dtype: np.dtype
    readonly: bool
    device: tuple           # (device_type, device_id)
    handle: int = 0         # DLPack's data (a cl_mem for OpenCL; 0 for zero-size arrays)
    byte_offset: int = 0    # of the first element from ``handle``


class Imported:
    """A consumed DLPack tensor: what it describes, and the producer's deleter,
    called exactly once by :meth:`release` (or when this object is collected)."""

    __slots__ = ("described", "_finalizer", "__weakref__")

    def __init__(self, described: Described, managed: int, deleter: int):
        self.described = described
        self._finalizer = weakref.finalize(self, _call_deleter, managed, deleter)

    def release(self) -> None:
        self._finalizer()

    @property
    def released(self) -> bool:
        return not self._finalizer.alive

    def __repr__(self) -> str:
        d = self.described
        return (f"<ckernels DLPack import shape={d.shape} dtype={d.dtype} "
                f"device={DEVICE_NAMES.get(d.device[0], d.device[0])}:{d.device[1]}"
                f"{' released' if self.released else ''}>")


def _call_deleter(managed: int, deleter: int) -> None:
    if deleter:
        _DELETER(deleter)(managed)


def describe_dtype(code: int, bits: int, lanes: int) -> np.dtype:
    """The NumPy dtype of a DLPack data type (InvalidArgumentError if none)."""
    kind = _CODE_KIND.get(int(code))
    if kind is None or lanes != 1 or bits % 8 or bits == 0:
        raise NotSupportedError(f"DLPack: data type (code {code}, {bits} bits, {lanes} lanes) "
                                "has no NumPy equivalent")
    try:
        return np.dtype(f"{kind}{bits // 8}") if kind != "b" else np.dtype(np.bool_)
    except TypeError:
        raise NotSupportedError(f"DLPack: data type (code {code}, {bits} bits) has no NumPy "
                                "equivalent") from None


def consume(capsule) -> Imported:
    """Take ownership of a DLPack capsule (legacy or versioned) and describe it."""
    is_valid, get = _is_valid, _get_pointer
    if is_valid(capsule, _name(b"dltensor_versioned")):
        versioned = True
        managed = get(capsule, _name(b"dltensor_versioned"))
        m = DLManagedTensorVersioned.from_address(managed)
        if m.version.major != VERSION[0]:
            # only the fields before dl_tensor are stable across major versions
            version, deleter = (m.version.major, m.version.minor), m.deleter
            _set_name(capsule, _name(b"used_dltensor_versioned"))
            _call_deleter(managed, deleter)
            raise NotSupportedError(f"DLPack: version {version[0]}.{version[1]} "
                                    f"(ckernels reads {VERSION[0]}.x)")
        flags, t = int(m.flags), m.dl_tensor
    elif is_valid(capsule, _name(b"dltensor")):
        versioned = False
        managed = get(capsule, _name(b"dltensor"))
        m = DLManagedTensor.from_address(managed)
        flags, t = 0, m.dl_tensor
    else:
        raise InvalidArgumentError(f"DLPack: {type(capsule).__name__} is not an unconsumed "
                                   "DLPack capsule (already used, or not a 'dltensor' capsule)")
    deleter = m.deleter or 0
    # from here on the capsule is ours: rename it, so its destructor leaves it
    _set_name(capsule, _name(b"used_dltensor_versioned" if versioned
                                          else b"used_dltensor"))
    try:
        nd = int(t.ndim)
        if nd < 0 or nd > 64:
            raise InvalidArgumentError(f"DLPack: ndim {nd}")
        shape = tuple(int(t.shape[i]) for i in range(nd))
        if any(s < 0 for s in shape):
            raise InvalidArgumentError(f"DLPack: negative dimension in shape {shape}")
        dt = describe_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        if nd and t.strides:
            strides = tuple(int(t.strides[i]) * dt.itemsize for i in range(nd))
        else:
            strides, acc = [], dt.itemsize
            for s in reversed(shape):
                strides.append(acc)
                acc *= max(s, 1)
            strides = tuple(reversed(strides))
        size = int(np.prod(shape, dtype=np.int64)) if nd else 1
        handle, byte_offset = (int(t.data or 0), int(t.byte_offset)) if size else (0, 0)
        desc = Described(handle + byte_offset, shape, strides, dt, bool(flags & READ_ONLY),
                         (int(t.device.device_type), int(t.device.device_id)),
                         handle, byte_offset)
    except BaseException:
        _call_deleter(managed, deleter)
        raise
    return Imported(desc, managed, deleter)


def extent(shape, strides, itemsize: int) -> tuple[int, int]:
    """``(lo, nbytes)``: the bytes a non-empty strided array touches start ``lo``
    (<= 0) bytes from its first element and span ``nbytes``."""
    lo = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
    hi = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0) + itemsize
    return lo, hi - lo


__all__ = ["export", "consume", "extent", "Imported", "Described",
           "dtype_code", "describe_dtype", "live_exports", "KDL_CPU", "KDL_CUDA", "KDL_OPENCL",
           "VERSION"]
