"""``ckernels.context.user_kernels``: the old path of ckernels.user_kernels.build
(moved by the device-wing split; kept for code that imports it by this name)."""

from ..user_kernels.build import *  # noqa: F401,F403
from ..user_kernels.build import __all__  # noqa: F401
