"""``ckernels.context.device_array``: the old path of ckernels.device.array,
moved by the device-wing split.  Importing this name gives that module itself
(it replaces this one in ``sys.modules``), so old imports see the same objects."""

import sys

from ..device import array as _module

sys.modules[__name__] = _module
