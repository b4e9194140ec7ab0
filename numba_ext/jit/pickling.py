"""Pickling jitted functions: by reference, else by value, rebuilt by compiling.

:class:`Pickling` is a mixin of :class:`ckernels.jit.kernel.JitKernel`.  A
function reachable by module and qualified name pickles as that name; any
other (interactively defined, closures) pickles by value: its Python function
(Numba's ``serialize``, cloudpickle) and how it was decorated, rebuilt by
compiling (or loading from the cache), never from raw addresses -- once per
process (:data:`_BY_UUID`).  The class is part of the pickle (as Numba's
``serialize._rebuild_reduction`` takes it), so this module needs no import of
the kernel; pickles made before the split name
``ckernels.jit.decorator._rebuild``, which stays there for them.
"""

from __future__ import annotations

import pickle
import sys
import uuid
import weakref
from typing import Any


class Pickling:
    """``__reduce__`` of a :class:`~ckernels.jit.kernel.JitKernel` (a mixin)."""

    def __reduce__(self):
        """By reference (module and qualified name) when the function is reachable
        so in an importable module; else by value: its Python function (with
        cloudpickle: interactively defined functions, closures) and how it was
        decorated, rebuilt by compiling (or loading from the cache) -- once per
        process: unpickling the same function again gives the same object."""
        if _by_reference(self):
            return self.__qualname__
        from numba.core import serialize
        with self._lock:
            if self._uuid is None:
                self._uuid = uuid.uuid4().hex
                _remember(self._uuid, self)
        sigs = [c.sig.text for c in self._compiled.values()] if self._explicit else []
        return (_rebuild, (type(self), serialize.dumps(self.py_func), sigs, self._cache,
                           self._options, self.error_model, self.identity, self._uuid))


def _by_reference(kernel) -> bool:
    """Does pickling by module and qualified name find ``kernel`` (and would
    cloudpickle pickle a function of its module by reference)?"""
    module = kernel.__module__
    if module == "__main__" or module not in sys.modules:
        return False
    obj: Any = sys.modules[module]
    for part in kernel.__qualname__.split("."):
        obj = getattr(obj, part, None)
    if obj is not kernel:
        return False
    cp = sys.modules.get("cloudpickle")
    if cp is not None:   # cloudpickle.register_pickle_by_value(module)
        try:
            return not cp.cloudpickle._is_registered_pickle_by_value(sys.modules[module])
        except Exception:
            pass
    return True


#: functions pickled or unpickled by value in this process, by their uuid
#: (weakly): unpickling a function the process has gives that function (a
#: Dask worker unpickling a graph that holds it again compiles nothing)
_BY_UUID: "weakref.WeakValueDictionary[str, Any]" = weakref.WeakValueDictionary()


def _remember(key: str, kernel) -> None:
    _BY_UUID[key] = kernel


def _rebuild(cls, func_bytes, sigs, cache, options, error_model="python",
             identity=None, key=None):
    """The function ``cls(py_func, sigs, ...)`` pickled by value (the one this
    process already has under ``key``, if any)."""
    if key is not None:
        have = _BY_UUID.get(key)
        if have is not None:
            return have
    py_func = pickle.loads(func_bytes)
    kernel = cls(py_func, sigs, cache=cache, error_model=error_model, identity=identity,
                 **options)
    if key is not None:
        kernel._uuid = key
        _remember(key, kernel)
    return kernel
