"""``ckernels.context.backend_cuda``: the old path of ckernels.backends.cuda
(moved by the device-wing split; kept for code that imports it by this name)."""

from ..backends.cuda import *  # noqa: F401,F403
from ..backends.cuda import __all__  # noqa: F401
