"""``ckernels.context``: what a context owns -- the handle arrays point at
(``handle.py``: :class:`~ckernels.context.handle.ContextHandle`, its kind,
description and the shared context of each kind), its buffers
(``buffer.py``), programs (``program.py``), device programs
(``device_program.py``: the one kernel wrapper).  Hand-written kernels' sources
are :mod:`ckernels.user_kernels.source`'s.

Nothing here makes an array.  The public :class:`ckernels.Context` -- this
handle plus placing arrays in it -- is :mod:`ckernels.device.place`'s;
device arrays are :mod:`ckernels.device`'s, each backend's Python half
:mod:`ckernels.backends`'s.  The names this package exported before the
device wing was split out (``Context``, ``DeviceArray``, ``default_context``,
``check_context``, ``same_context``; ``Buffer`` and ``Program`` are here) are
still found here on first use (:func:`__getattr__`); the modules that moved
keep their old paths as thin modules here (``backend_cuda``, ``backend_opencl``,
``dlpack``, ``device_array``, ``device_ops``, ``user_kernels``,
``user_kernel_args``, ``user_kernel_compile``, ``context``, ``kernel_source``), each of which
replaces itself with the moved module in ``sys.modules``.
"""

from .buffer import Buffer
from .program import Program

#: names this package exported before the split -> the module that holds them now
#: (taken on first use: that module sits above this package)
COMPAT = {"Context": "ckernels.device.place", "default_context": "ckernels.device.place",
          "check_context": "ckernels.device.place", "same_context": "ckernels.device.place",
          "DeviceArray": "ckernels.device.array"}


def __getattr__(name: str):
    """The names of :data:`COMPAT` (``ckernels.context.Context``,
    ``from ckernels.context import DeviceArray``), from their modules now."""
    where = COMPAT.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if where == "ckernels.device.place":
        from ..device import place as module
    else:
        from ..device import array as module
    return getattr(module, name)


__all__ = ["Buffer", "Program", "Context", "DeviceArray", "check_context", "same_context",
           "default_context"]
