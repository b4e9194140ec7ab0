"""``ckernels.context.kernel_source``: the old path of ckernels.user_kernels.source
(hand-written kernel sources prepared for a target; only hand-written kernels use
them).  Importing this name gives that module itself (it replaces this one in
``sys.modules``), so old imports see the same objects."""

import sys

from ..user_kernels import source as _module

sys.modules[__name__] = _module
