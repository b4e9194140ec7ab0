"""``ckernels.context.backend_opencl``: the old path of ckernels.pyopencl_interop (the pyopencl
conveniences; OpenCL's raw parts are ckernels.backends.opencl's),
moved by the device-wing split.  Importing this name gives that module itself
(it replaces this one in ``sys.modules``), so old imports see the same objects."""

import sys

from .. import pyopencl_interop as _module

sys.modules[__name__] = _module
