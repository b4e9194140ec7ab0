"""What a backend hook hands back for another library's memory: raw parts,
never an array (:mod:`ckernels.backends`)."""

from __future__ import annotations

from typing import Any, NamedTuple


class Raw(NamedTuple):
    """Another library's device memory as raw parts: ``nbytes`` bytes at
    ``native`` (a ``cl_mem`` or a device pointer, as an int; 0 for an empty
    array) kept alive by ``owner``, read as an array of ``shape``,
    ``strides`` (bytes) and ``dtype`` starting ``offset`` bytes in."""
    native: int
    nbytes: int
    owner: Any
    offset: int
    shape: tuple
    strides: tuple | None
    dtype: Any
    readonly: bool = False


__all__ = ["Raw"]
