"""CUDA's Python half (below the arrays): NVRTC set-up, device queries, and
sharing device memory with other libraries (``__cuda_array_interface__`` and
DLPack, both ways, without copies).

A ``"cuda"`` :class:`~ckernels.Context` is otherwise the shared surface
(buffers, programs, :class:`~ckernels.DeviceArray`, ``@ckernels.jit`` calls);
the shared code finds the hooks here through :func:`ckernels.backends.hook`
(the ``"cuda"`` row of :data:`ckernels.backends.BACKENDS`).  This module knows
the cffi library and raw memory only: exports read raw parts, imports hand
back :class:`~ckernels.backends.raw.Raw` parts that :mod:`ckernels.device.interop`
makes device arrays of.

* **NVRTC**: before the first CUDA context (and before :func:`compile_ptx`) the
  library is told where the ``nvidia-cuda-nvrtc`` wheel of *this* interpreter
  keeps ``libnvrtc`` (``ck_cuda_set_nvrtc_search_path``), ahead of the CUDA
  toolkit and the system path.
* **Exporting**: a CUDA device array has ``__cuda_array_interface__`` (version
  3; ``stream`` is None because every ckernels operation has completed when
  its call returns) and ``__dlpack__``/``__dlpack_device__`` (``kDLCUDA``, the
  device ordinal; legacy or versioned capsules by ``max_version``).  The
  pointer stays valid while the array lives.
* **Importing** (:func:`adopt`, used by ``ctx.to(obj)``, and through it
  ``ctx.array(obj)``): an object with ``__cuda_array_interface__`` (CuPy,
  numba-cuda, PyTorch) or a CUDA DLPack tensor becomes a DeviceArray over the
  same memory (``ck_buffer_wrap``: the library checks that the pointer is
  device memory of the context's device and that the array lies inside one
  allocation).  The foreign object (or the DLPack tensor, whose deleter then
  runs) is kept alive until the last array over it dies.  Synchronisation: a
  CAI ``stream`` is waited for with ``cuCtxSynchronize`` (``ctx.finish()``)
  before the array is used; a DLPack producer is handed the context's stream.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import threading
from typing import NamedTuple

import numpy as np

from .._cargs import c_text
from .._native import c_text_out, check, ffi, lib
from ..errors import InvalidArgumentError, NotSupportedError
from . import dlpack as _dl
from .dlpack import extent
from .raw import Raw

_prepared = False
_prepare_lock = threading.Lock()

#: where the NVIDIA wheels keep libnvrtc, under the ``nvidia`` namespace package
#: (CUDA 13 wheels: ``nvidia/cu13/lib``; CUDA 12: ``nvidia/cuda_nvrtc/lib``)
WHEEL_LIB_DIRS = ("cu13/lib", "cuda_nvrtc/lib", "cu12/lib")


# ------------------------------------------------------------------- NVRTC --
def nvrtc_wheel_dirs() -> list[str]:
    """Folders of this interpreter's ``nvidia-cuda-nvrtc`` wheels holding
    ``libnvrtc.so*`` (every ``nvidia`` namespace folder on ``sys.path``)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    out = []
    for root in roots:
        for sub in WHEEL_LIB_DIRS:
            d = os.path.join(root, sub)
            if ":" not in d and glob.glob(os.path.join(d, "libnvrtc.so*")) and d not in out:
                out.append(d)
    return out


def prepare() -> None:
    """Point the library at this interpreter's NVRTC wheels (once per process;
    ``CK_NVRTC_LIBRARY`` still wins, the toolkit and system path follow)."""
    global _prepared
    if _prepared:
        return
    with _prepare_lock:
        if not _prepared:
            dirs = ":".join(nvrtc_wheel_dirs())
            check(lib.ck_cuda_set_nvrtc_search_path(c_text(dirs, "NVRTC search path") if dirs else ffi.NULL))
            _prepared = True


class NVRTCVersion(NamedTuple):
    major: int
    minor: int
    path: str


def nvrtc_version() -> NVRTCVersion:
    """The NVRTC the library loads (BackendError listing where it looked if none)."""
    prepare()
    major, minor = ffi.new("int32_t *"), ffi.new("int32_t *")
    return NVRTCVersion(major[0], minor[0], c_text_out(lib.ck_cuda_nvrtc_version, major, minor))


def compile_ptx(source: str, arch: str | None = None, options: str = "") -> tuple[str, str]:
    """``(ptx, log)``: CUDA C++ ``source`` compiled by NVRTC for ``arch``
    (``"sm_80"``, ``"compute_90"``, ...; None: NVRTC's default), without a
    driver or a device (``ck_cuda_compile_ptx``).  A compile error is a
    BackendError whose message holds NVRTC's log."""
    prepare()
    ptx, size, log = ffi.new("char **"), ffi.new("size_t *"), ffi.new("char **")
    status = lib.ck_cuda_compile_ptx(c_text(source, "CUDA source"),
                                     c_text(options, "NVRTC options") if options else ffi.NULL,
                                     c_text(arch, "CUDA architecture") if arch else ffi.NULL, ptx, size, log)
    try:
        text = ffi.string(log[0]).decode("utf-8", "replace") if log[0] != ffi.NULL else ""
        check(status)
        return ffi.unpack(ptx[0], size[0]).decode(), text
    finally:
        lib.ck_cuda_free(ptx[0])
        lib.ck_cuda_free(log[0])


# ------------------------------------------------------------------ devices --
def device_count() -> int:
    """CUDA devices the driver shows (0 with a driver but no device;
    BackendError "no CUDA driver found" without a driver)."""
    out = ffi.new("uint32_t *")
    check(lib.ck_cuda_device_count(out))
    return int(out[0])


def new_context(platform, device):
    """The ``ck_context *`` of ``Context("cuda", device=N)``."""
    if platform is not None:
        raise InvalidArgumentError("Context('cuda'): platform= selects an OpenCL platform; "
                                   "a CUDA device is chosen with device=<ordinal>")
    if isinstance(device, bool) or not isinstance(device, (int, np.integer)) or device < 0:
        raise InvalidArgumentError(f"Context('cuda'): device must be a device ordinal "
                                   f"(an int >= 0), not {device!r}")
    out = ffi.new("ck_context **")
    check(lib.ck_context_new_cuda(int(device), out))
    return out[0]


class DeviceInfo(NamedTuple):
    ordinal: int
    compute_capability: tuple


def context_device(ctx) -> DeviceInfo:
    """The device of a CUDA context: ordinal and compute capability."""
    o, a, b = ffi.new("int32_t *"), ffi.new("int32_t *"), ffi.new("int32_t *")
    check(lib.ck_cuda_context_device(ctx._ctx, o, a, b))
    return DeviceInfo(o[0], (a[0], b[0]))


def context_stream(ctx) -> int:
    """The ``CUstream`` every operation of a CUDA context runs on, as an int."""
    s = ffi.new("void **")
    check(lib.ck_cuda_context_handles(ctx._ctx, ffi.NULL, s))
    return int(ffi.cast("uintptr_t", s[0]))


# ---------------------------------------------------------------- exporting --
def cuda_array_interface(address: int, shape, strides, dtype, readonly: bool,
                         contiguous: bool) -> dict:
    """``__cuda_array_interface__`` (version 3) of device memory at
    ``address`` (0 for an empty array)."""
    return {"shape": tuple(shape), "typestr": dtype.str,
            "descr": dtype.descr,   # [("", "<f8")]; the fields of a struct element
            "data": (address, readonly),
            "strides": None if contiguous else tuple(strides),
            "version": 3, "stream": None}


def dlpack_device(ctx) -> tuple[int, int]:
    """The DLPack device of a CUDA context's arrays: ``(kDLCUDA, ordinal)``."""
    return (_dl.KDL_CUDA, context_device(ctx).ordinal)


def dlpack_data(native: int, offset: int) -> tuple[int, int]:
    """DLPack's ``(data, byte_offset)`` of memory ``offset`` bytes into the
    allocation at device pointer ``native``."""
    return native + offset, 0


def dlpack_check_stream(stream) -> None:
    """``stream`` of ``__dlpack__``: None or a CUDA stream as an int -- every
    ckernels operation has completed when its call returned, so there is
    nothing to order on the consumer's stream."""
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)
                               or stream == 0):
        raise BufferError(f"__dlpack__: stream must be None or a CUDA stream as an int "
                          f"(not 0), not {stream!r}")


# ---------------------------------------------------------------- importing --
_CAI_KEYS = {"shape", "typestr", "data", "version", "strides", "descr", "mask", "stream"}


def parse_cuda_array_interface(cai, where: str = "__cuda_array_interface__"):
    """Validate a ``__cuda_array_interface__`` dict (versions 0-3): a
    :class:`ckernels.context._dl.Described` (device ordinal unknown: -1)
    and the stream to synchronise with (None or an int)."""
    if not isinstance(cai, dict):
        raise InvalidArgumentError(f"{where}: expected a dict, not {type(cai).__name__}")
    missing = [k for k in ("shape", "typestr", "data", "version") if k not in cai]
    if missing:
        raise InvalidArgumentError(f"{where}: missing {', '.join(repr(k) for k in missing)}")
    version = cai["version"]
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 3:
        raise NotSupportedError(f"{where}: version {version!r} (ckernels reads versions 0 to 3)")
    shape = cai["shape"]
    if not isinstance(shape, tuple) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
            for s in shape):
        raise InvalidArgumentError(f"{where}: shape must be a tuple of ints >= 0, not {shape!r}")
    shape = tuple(int(s) for s in shape)
    typestr = cai["typestr"]
    if not isinstance(typestr, str):
        raise InvalidArgumentError(f"{where}: typestr must be a str, not {typestr!r}")
    try:
        dt = np.dtype(typestr)
    except TypeError:
        raise InvalidArgumentError(f"{where}: typestr {typestr!r} is not a NumPy type "
                                   "string") from None
    if dt.fields is not None or dt.subdtype is not None or dt.kind not in "biufc":
        raise NotSupportedError(f"{where}: typestr {typestr!r} ({dt}) is not a plain number "
                                "type")
    if not dt.isnative:
        raise NotSupportedError(f"{where}: typestr {typestr!r} is not in the machine's byte "
                                "order")
    descr = cai.get("descr")
    if descr is not None:
        if (not isinstance(descr, list) or len(descr) != 1 or not isinstance(descr[0], tuple)
                or len(descr[0]) < 2 or descr[0][0] != ""):
            raise NotSupportedError(f"{where}: descr {descr!r} describes a structured type")
        try:
            same = np.dtype(descr[0][1]) == dt
        except TypeError:
            same = False
        if not same:
            raise InvalidArgumentError(f"{where}: descr {descr!r} does not match typestr "
                                       f"{typestr!r}")
    data = cai["data"]
    if (not isinstance(data, tuple) or len(data) != 2 or isinstance(data[0], bool)
            or not isinstance(data[0], (int, np.integer)) or not isinstance(data[1], bool)):
        raise InvalidArgumentError(f"{where}: data must be (pointer: int, read_only: bool), "
                                   f"not {data!r}")
    ptr, readonly = int(data[0]), data[1]
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if ptr < 0 or ptr >= 2 ** 64:
        raise InvalidArgumentError(f"{where}: data pointer {ptr} out of range")
    if ptr == 0 and size:
        raise InvalidArgumentError(f"{where}: null data pointer for {size} elements")
    strides = cai.get("strides")
    if strides is None:
        st, acc = [], dt.itemsize
        for s in reversed(shape):
            st.append(acc)
            acc *= max(s, 1)
        strides = tuple(reversed(st))
    else:
        if not isinstance(strides, tuple) or len(strides) != len(shape) or not all(
                isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in strides):
            raise InvalidArgumentError(f"{where}: strides must be None or {len(shape)} ints, "
                                       f"not {strides!r}")
        strides = tuple(int(s) for s in strides)
    if cai.get("mask") is not None:
        raise NotSupportedError(f"{where}: masked arrays (mask=...) are not supported")
    stream = cai.get("stream") if version >= 3 else None
    if stream is not None:
        if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)):
            raise InvalidArgumentError(f"{where}: stream must be None or an int, not {stream!r}")
        if int(stream) == 0:
            raise InvalidArgumentError(f"{where}: stream 0 is disallowed by the interface "
                                       "(use None, 1 or 2)")
        stream = int(stream)
    return _dl.Described(ptr if size else 0, shape, strides, dt, readonly,
                            (_dl.KDL_CUDA, -1)), stream


def _foreign_cai(obj):
    try:
        return obj.__cuda_array_interface__
    except AttributeError:
        return None


def _foreign_dlpack_device(obj):
    if not hasattr(obj, "__dlpack__"):
        return None
    f = getattr(obj, "__dlpack_device__", None)
    if f is None:
        return None
    try:
        dev = tuple(f())
    except (AttributeError, TypeError, ValueError, BufferError):
        return None
    return dev if len(dev) == 2 else None


def adopt(ctx, obj) -> Raw | None:
    """The memory of ``obj`` (another library's array with a
    ``__cuda_array_interface__``) as raw parts for ``ctx``, or None; its
    stream, if any, is waited for first."""
    cai = _foreign_cai(obj)
    if cai is None:
        return None
    desc, stream = parse_cuda_array_interface(cai)
    if stream is not None:      # the producer may still be writing: wait for it
        ctx.finish()
    return raw_parts(desc, obj)


def dlpack_producer(ctx, obj) -> bool:
    """Whether ``obj`` is another library's CUDA DLPack producer (adopted
    through ``ctx.from_dlpack``); InvalidArgumentError when it is on another
    device than ``ctx``'s."""
    dev = _foreign_dlpack_device(obj)
    if dev is None or dev[0] != _dl.KDL_CUDA:
        return False
    _check_ordinal(ctx, dev[1])
    return True


def _check_ordinal(ctx, ordinal: int) -> None:
    mine = context_device(ctx).ordinal
    if ordinal != mine:
        raise InvalidArgumentError(f"the DLPack tensor is on CUDA device {ordinal}, the "
                                   f"context on device {mine}; copy it to that device first")


def dlpack_stream(ctx) -> int:
    """The stream a DLPack producer is asked to make its data ready on."""
    return context_stream(ctx) or 1     # the legacy default stream has no handle


def dlpack_adopt(ctx, imported: _dl.Imported) -> Raw:
    """A consumed CUDA DLPack tensor as raw parts for ``ctx`` (the ``Imported``
    is their owner: released when the last array over it dies)."""
    _check_ordinal(ctx, imported.described.device[1])
    return raw_parts(imported.described, imported)


def raw_parts(desc, owner) -> Raw:
    """The memory ``desc`` describes as :class:`~ckernels.backends.raw.Raw`
    parts, the allocation spanning exactly the bytes the array touches;
    ``owner`` is kept alive while any array over it lives (an empty array
    needs no memory: a DLPack owner is released at once)."""
    item = desc.dtype.itemsize
    shape, strides = desc.shape, desc.strides
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if size == 0:
        if isinstance(owner, _dl.Imported):
            owner.release()
        return Raw(0, 0, None, 0, shape, None, desc.dtype, desc.readonly)
    if desc.address % item or any(s % item for s in strides):
        raise NotSupportedError(f"adopting a CUDA array: data 0x{desc.address:x} or strides "
                                f"{strides} not aligned to the element size {item}")
    lo, nbytes = extent(shape, strides, item)
    return Raw(desc.address + lo, nbytes, owner, -lo, shape, strides, desc.dtype,
               desc.readonly)


__all__ = ["prepare", "nvrtc_wheel_dirs", "nvrtc_version", "compile_ptx", "device_count",
           "context_device", "context_stream", "cuda_array_interface", "dlpack_device",
           "dlpack_data", "dlpack_check_stream", "dlpack_stream", "dlpack_adopt",
           "dlpack_producer", "parse_cuda_array_interface", "adopt", "raw_parts", "extent"]
