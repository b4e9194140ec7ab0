"""What one context kind adds to the backend-neutral surface, found by kind.

:class:`~ckernels.Context`, :class:`~ckernels.DeviceArray` and friends are the
same for every backend.  A kind that needs more -- set-up before its first
context, a context constructor taking arguments, adopting other libraries'
device arrays without a copy, exporting its arrays through their protocols --
has one module listed in :data:`BACKENDS` (``"cuda"`` ->
:mod:`ckernels.context.cuda`, ``"opencl"`` -> :mod:`ckernels.context.opencl`),
imported on first use, and the shared code asks it through :func:`hook`.  A
module provides any of:

``prepare()``                          before a context of the kind is made
``new_context(platform, device)``      the ``ck_context *`` for explicit arguments
``adopt(ctx, obj)``                    ``obj`` (a foreign array) as a DeviceArray
                                       of ``ctx`` sharing its memory, or None
``cuda_array_interface(arr)``          ``arr.__cuda_array_interface__``
``to_pyopencl(arr, queue)``            ``arr.to_pyopencl(queue)``
``dlpack(arr, stream, max_version, dl_device, copy)`` / ``dlpack_device(arr)``
                                       ``arr.__dlpack__`` / ``__dlpack_device__``
``dlpack_context_device(ctx)``         the DLPack device of ``ctx``'s arrays
``dlpack_stream(ctx)``                 the ``stream`` a DLPack producer is given
``dlpack_adopt(ctx, imported)``        a consumed tensor (:class:`~ckernels.context.
                                       dlpack.Imported`) as a DeviceArray of ``ctx``

DLPack's shared parts (capsules, validation, copies) are
:mod:`ckernels.context.dlpack`; a kind without the ``dlpack*`` hooks neither
exports nor imports device tensors.
"""

from __future__ import annotations

import importlib

#: context kind -> module with that kind's hooks
BACKENDS = {"cuda": "ckernels.context.cuda", "opencl": "ckernels.context.opencl"}


def hook(kind: str, name: str):
    """The hook ``name`` of context kind ``kind``, or None."""
    mod = BACKENDS.get(kind)
    if mod is None:
        return None
    return getattr(importlib.import_module(mod), name, None)


__all__ = ["BACKENDS", "hook"]
