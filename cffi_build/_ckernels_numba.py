"""Numba's entry point for ckernels (``numba_extensions``: ``init``), kept outside
the ``ckernels`` package so that loading it imports nothing of ckernels.

Numba runs every installed extension's ``init`` at its first compilation, in
every program.  In a program that has imported ckernels, the extension is
registered then (``ckernels._numba._init_extension``).  A program that has not
imported ckernels holds no ckernels object that could reach Numba, so nothing
of ckernels is imported: a plain ``numba.njit`` program pays for this module
alone.  Should ckernels be imported later, its objects still type: one
``typeof`` rule for the classes of the ``ckernels`` package (an ABC whose
subclass hook looks at the class's module, so no ckernels class is needed to
register it) imports the extension at the first such object and hands it to
the extension's own rule.
"""

import abc
import sys


def init() -> None:
    if "ckernels" in sys.modules:
        _register()
    else:
        _defer()


def _register() -> None:
    from ckernels._numba import _init_extension
    _init_extension()


class _CkernelsObject(abc.ABC):
    """Any object whose class comes from the ``ckernels`` package."""

    @classmethod
    def __subclasshook__(cls, other):
        mod = getattr(other, "__module__", None) or ""
        return True if mod.split(".")[0] == "ckernels" else NotImplemented


def _defer() -> None:
    from numba.core.typing.typeof import typeof_impl

    generic = typeof_impl.dispatch(object)

    @typeof_impl.register(_CkernelsObject)
    def _typeof_ckernels_object(val, c):
        _register()                 # registers the classes' own rules
        impl = typeof_impl.dispatch(type(val))
        return (generic if impl is _typeof_ckernels_object else impl)(val, c)
