"""``ckernels.context.dlpack``: the old path of ckernels.backends.dlpack
(moved by the device-wing split; kept for code that imports it by this name)."""

from ..backends.dlpack import *  # noqa: F401,F403
from ..backends.dlpack import __all__  # noqa: F401
