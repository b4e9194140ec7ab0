"""``ckernels._dispatch``: the old name of the compiled module ckernels._ufuncs
(NumPy ufuncs and gufuncs over ckernels, their loops and ``Function``; renamed
for what it holds).  Importing this name gives that module itself (it replaces
this one in ``sys.modules``), so old imports see the same objects."""

import sys

from . import _ufuncs as _module

sys.modules[__name__] = _module
