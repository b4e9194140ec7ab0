"""``ckernels.context.dlpack``: the old path of ckernels.backends.dlpack,
moved by the device-wing split.  Importing this name gives that module itself
(it replaces this one in ``sys.modules``), so old imports see the same objects."""

import sys

from ..backends import dlpack as _module

sys.modules[__name__] = _module
