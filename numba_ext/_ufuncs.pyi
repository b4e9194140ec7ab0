"""``ckernels._ufuncs`` (``src/python/ufuncs/module.c``, ``function.c``, ``ufunc.c``,
``gufunc.c``, ``loops.c``, ...): NumPy ufuncs whose inner loops are ckernels --
jitted functions' loops (``add_jit_loop``; ``gufunc`` for signatures with core
dims), the registry's operations (``op_ufunc``) -- and ``Function``, the C
callable that sends NumPy-like calls to its ufunc."""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

MAX_NIN: int
PROBE_ELEMENTS: int

class Fallback(TypeError):
    """Raised while a ufunc resolves a call (by a compile hook) when the call
    can only run on the general path: a Function that sent the call to its
    ufunc then calls its fallback."""

class UFuncData:
    """What a ufunc made by ckernels._ufuncs owns (its loops and kernels)."""

class Function:
    """A callable that sends calls whose operands NumPy takes straight to
    ``ufunc``, in C, and every other call to ``fallback(self, *args, **kwargs)``."""

    ufunc: np.ufunc | None
    fallback: Callable[..., Any] | None
    fallback_types: tuple[type, ...]
    fallback_kinds: str
    wrappers: Callable[..., Any] | None

    def __new__(cls, *args: object, **kwargs: object) -> Function: ...
    def __init__(self, ufunc: np.ufunc | None = None,
                 fallback: Callable[..., Any] | None = None,
                 fallback_types: tuple[type, ...] = ..., fallback_kinds: str = ..., *,
                 wrappers: Callable[..., Any] | None = None) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

def ufunc(name: str, nin: int, *, doc: str | None = None, identity: Any = None,
          reorderable: bool | None = None,
          compile: Callable[[tuple, Any], None] | None = None) -> np.ufunc:
    """A new numpy.ufunc with ``nin`` inputs, one output and no loops yet
    (:func:`add_jit_loop` adds them)."""

def add_jit_loop(ufunc: np.ufunc, desc: int, dtypes: Sequence[np.dtype], /) -> None:
    """Add the loop of one compiled signature of a jitted function (``desc``:
    the address of its ``ck_jit_kernel_desc``)."""

def gufunc(name: str, signature: str, loops: Sequence[tuple[int, Sequence[np.dtype]]], *,
           doc: str | None = None) -> np.ufunc:
    """A new generalized numpy.ufunc (one output) whose loops are jitted
    kernels with core dims."""

def op_ufunc(op_name: str, dtype_of_id: dict[int, np.dtype], *, name: str | None = None,
             doc: str | None = None, identity: Any = None,
             reorderable: bool | None = None) -> np.ufunc:
    """A numpy.ufunc for the registry operation ``op_name``: one loop per
    kernel the operation holds now."""

def loops(ufunc: np.ufunc, /) -> list[tuple[tuple[np.dtype, ...], str]]:
    """The loops of a ufunc made here, in registration (= resolution) order:
    the NumPy dtypes (inputs..., output) and the kernel's name."""

def data_of(obj: object, /) -> UFuncData | None:
    """What a ufunc made here owns (None for any other object)."""

def set_parallel_min_time(seconds: float, /) -> None:
    """Split a loop's run over the library's threads when its estimated serial
    time is at least ``seconds``."""

def get_parallel_min_time() -> float:
    """The threshold set by :func:`set_parallel_min_time`, in seconds."""
