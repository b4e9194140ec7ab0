"""``ckernels.opencl``: the public path of ckernels.pyopencl_interop (device arrays
shared with pyopencl, and the historical names of placing arrays); OpenCL's
backend is ckernels.backends.opencl.  Importing this name gives that module
itself (it replaces this one in ``sys.modules``), so ``ckernels.opencl.*`` names
the same objects."""

import sys

from . import pyopencl_interop as _module

sys.modules[__name__] = _module
