"""``ckernels.context.context``: the old path of ckernels.device.place (the public
Context; the handle is ckernels.context.handle), moved by the device-wing split.
Importing this name gives that module itself (it replaces this one in
``sys.modules``), so old imports see the same objects."""

import sys

from ..device import place as _module

sys.modules[__name__] = _module
