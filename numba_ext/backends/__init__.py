"""``ckernels.backends``: each device backend's Python half, below the
arrays -- they know the cffi library and raw memory only, never an array
class.

* ``opencl.py``: what OpenCL memory means to pyopencl and to DLPack
  (``cl_interop.py`` is the one module that touches pyopencl's objects);
* ``cuda.py``: NVRTC set-up, device queries, the CUDA Array Interface and
  DLPack for CUDA memory;
* ``dlpack.py``: DLPack capsules both ways, for every device kind.

:data:`BACKENDS` is the kind -> module table and :func:`hook` finds a kind's
hook in it.  A hook that reads foreign memory hands back :class:`~ckernels.backends.raw.Raw` parts
(the native memory, its owner, offset, shape, strides, dtype); the device
layer (:mod:`ckernels.device.interop`) makes arrays of them.
"""

from __future__ import annotations

from collections.abc import Mapping

from .raw import Raw


class _Backends(Mapping):
    """context kind -> the module of its hooks, each module imported on first
    access (a process that never makes a CUDA context does not load the CUDA
    backend)."""

    _KINDS = ("opencl", "cuda")

    def __getitem__(self, kind):
        if kind == "opencl":
            from . import opencl as module
        elif kind == "cuda":
            from . import cuda as module
        else:
            raise KeyError(kind)
        return module

    def __iter__(self):
        return iter(self._KINDS)

    def __len__(self):
        return len(self._KINDS)


#: context kind -> the module of its hooks (the kinds without one: "cpu")
BACKENDS = _Backends()


def hook(kind: str, name: str):
    """The hook ``name`` of context kind ``kind`` (a function of its module in
    :data:`BACKENDS`), or None."""
    module = BACKENDS.get(kind)
    return getattr(module, name, None) if module is not None else None


__all__ = ["BACKENDS", "Raw", "hook"]
