"""``ckernels.context.user_kernel_args``: the old path of ckernels.user_kernels.args,
moved by the device-wing split.  Importing this name gives that module itself
(it replaces this one in ``sys.modules``), so old imports see the same objects."""

import sys

from ..user_kernels import args as _module

sys.modules[__name__] = _module
