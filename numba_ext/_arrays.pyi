"""``ckernels._arrays`` (``src/python/arrays/arrays.c``, ``subscript.c``): cheap
conversions between ckernels host arrays and NumPy arrays, and the small-call
fast path of ``ckernels.Array``.  Arrays are named by the address (int) of
their C ``ck_array_preamble``."""

from collections.abc import Callable
from typing import Any

import numpy as np

class ArrayRef:
    """One reference to a ckernels C array: the base of the NumPy views of
    :func:`view` (keeps their memory alive)."""

class Subscript:
    """Base of ``ckernels.Array``: its subscript in C (ints, slices and tuples
    of them on numeric strided arrays), every other key through the general
    methods ``ArrayLike.__getitem__`` / ``__setitem__`` / ``__delitem__``."""

    def __new__(cls, *args: object, **kwargs: object) -> Subscript: ...
    def __getitem__(self, key: Any, /) -> Any: ...
    def __setitem__(self, key: Any, value: Any, /) -> None: ...
    def __delitem__(self, key: Any, /) -> None: ...

def view(address: int, dtype: np.dtype, writable: bool, /) -> np.ndarray:
    """A NumPy view of the C array (fixed/strided dims over ``dtype``); its
    base owns a reference to the C array."""

def wrap(ndarray: np.ndarray, type_address: int, /) -> int:
    """Address of a new C array of that type over the ndarray's memory (an
    external memblock keeps the ndarray alive)."""

def dims(address: int, /) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(shape, strides)`` of the C array."""

def reduce_all(name: bytes, address: int, dtypes: dict, /) -> np.generic | None:
    """The NumPy scalar of the reduction ``name`` over every element of the C
    array (None: no dtype for the result type)."""

def setup(array_type: type, slots: dict, ops: Any, strided_of: Any, error_class: type,
          strided_of_fn: Callable[..., Any],
          subscript: tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]],
          /) -> None:
    """Tell the module the ``Array`` class, its slots, the operations and the
    general subscript methods."""

def apply(name: bytes, out: Any, /, *operands: Any) -> Any:
    """The fast path of an operation on host arrays, or NotImplemented (take
    the general path)."""

def ref(address: int, /) -> ArrayRef:
    """An :class:`ArrayRef` that takes over one reference to the C array."""

def array_ufunc_method(ufunc_ops: dict, general: Callable[..., Any], /) -> Callable[..., Any]:
    """The C ``Array.__array_ufunc__`` (after :func:`setup`)."""

def wrap_result(ndarray: np.ndarray, /) -> Any:
    """An ``Array`` over a new ndarray nobody else holds."""

def stop() -> None:
    """Interpreter exit: releases of :func:`wrap`'s blocks no longer touch
    Python objects."""
