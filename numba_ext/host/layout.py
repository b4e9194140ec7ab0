"""``ckernels.host.layout``: the old path of ckernels.host.arrmeta (a host
array's memory walked from Python through its arrmeta; "layout" is the C
library's ABI layout table).  Importing this name gives that module itself
(it replaces this one in ``sys.modules``), so old imports see the same objects."""

import sys

from . import arrmeta as _module

sys.modules[__name__] = _module
