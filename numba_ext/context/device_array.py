"""``ckernels.context.device_array``: the old path of ckernels.device.array
(moved by the device-wing split; kept for code that imports it by this name)."""

from ..device.array import *  # noqa: F401,F403
from ..device.array import __all__  # noqa: F401
