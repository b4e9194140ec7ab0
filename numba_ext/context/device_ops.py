"""``ckernels.context.device_ops``: the old path of ckernels.device.ops
(moved by the device-wing split; kept for code that imports it by this name)."""

from ..device.ops import *  # noqa: F401,F403
from ..device.ops import __all__  # noqa: F401
from ..device.ops import (conversion, element_functions, gathering,  # noqa: F401
                          operations, programs, reductions)
