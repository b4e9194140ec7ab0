"""Numba's entry point for ckernels (``numba_extensions``: ``init``), kept outside
the ``ckernels`` package so that loading it imports nothing of ckernels.

Numba runs every installed extension's ``init`` at its first compilation, in
every program.  A program that has not imported ckernels holds no ckernels
object that could reach Numba, so nothing is registered then: a plain
``numba.njit`` program pays for one small module.  In a program that has
imported ckernels, the extension is registered as before
(``ckernels._numba._init_extension``).  A program that imports ckernels after
Numba's first compilation gets its registrations when ckernels meets Numba: its
objects type themselves through ``_numba_type_`` (importing
``ckernels._numba``), and ``ckernels.nb`` and ``@ckernels.jit`` import it.
"""

import sys


def init() -> None:
    if "ckernels" not in sys.modules:
        return
    from ckernels._numba import _init_extension
    _init_extension()
