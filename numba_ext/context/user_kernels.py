"""``ckernels.context.user_kernels``: the old path of ckernels.user_kernels.build,
moved by the device-wing split.  Importing this name gives that module itself
(it replaces this one in ``sys.modules``), so old imports see the same objects."""

import sys

from ..user_kernels import build as _module

sys.modules[__name__] = _module
