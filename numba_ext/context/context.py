"""``ckernels.context.context``: the old path of ckernels.device.place (the public Context) and ckernels.context.handle
(moved by the device-wing split; kept for code that imports it by this name)."""

from ..device.place import *  # noqa: F401,F403
from ..device.place import __all__  # noqa: F401
