"""``ckernels._convert`` (``src/python/convert/*.c``): values of any ckernel
type <-> Python objects and NumPy string arrays in one C pass.  Arrays are
named by the address (int) of their C ``ck_array_preamble``; ``type``,
``data`` and ``arrmeta`` are addresses too."""

from collections.abc import Callable
from typing import Any

import numpy as np

class Unsupported(TypeError):
    """A value only the Python conversion path reads (the caller takes that
    path)."""

def setup(check_scalar: Callable[[int, Any], np.generic], /) -> None:
    """The Python check of one scalar value, ``(type_id, value) -> NumPy scalar``."""

def tolist(address: int, /) -> Any:
    """The value of the C array as nested lists, Python scalars, str, bytes and
    dicts."""

def read(type: int, data: int, arrmeta: int, /) -> Any:
    """The value of that type at ``data``, as ``tolist()``."""

def scan(obj: Any, na: Any, /) -> tuple[Any, ...] | None:
    """``(sizes, kind, lo, hi, fields)``: what ``ckernels.array`` infers from
    ``obj``, or None (the Python path decides)."""

def write(address: int, obj: Any, na: Any, /) -> None:
    """``obj`` into the C array at ``address`` (just made)."""

def write_at(type: int, data: int, arrmeta: int, obj: Any, na: Any, /) -> None:
    """``obj`` written at ``data`` as :func:`write`."""

def to_strings(address: int, dtype: np.dtype, /) -> np.ndarray:
    """A new StringDType array of the C array's strings."""

def to_objects(address: int, /) -> np.ndarray:
    """A new object array of the C array's elements."""

def from_numpy(address: int, ndarray: np.ndarray, na: Any, /) -> None:
    """A StringDType/'U'/'S'/object array into the C array at ``address``
    (just made, same shape)."""

def to_stringdtype(ndarray: np.ndarray, dtype: np.dtype, na: str | None, /) -> np.ndarray:
    """A new StringDType array of the text of a StringDType / 'U' / 'S' (UTF-8)
    / object array: missing values refused with their count unless ``na``
    replaces them."""
