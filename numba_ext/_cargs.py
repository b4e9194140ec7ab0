"""Python values handed to C: text, sizes and addresses (one helper each).

Every public entry point converts its arguments for libckernel through these,
so that a value C cannot represent is a clear Python error naming the value
and what it was for, never a silently different value or cffi's raw
``OverflowError``:

* :func:`c_text` -- ``str`` -> UTF-8 ``bytes`` for a NUL-terminated C string.
  C would stop at the first NUL (``"int8\\x00junk"`` would be read as
  ``"int8"``), so a NUL is an error; a lone surrogate (not encodable as UTF-8)
  is an error too, of the same class, instead of ``UnicodeEncodeError``.
  ``lossy=True`` is for labels and messages that must never fail (a
  function's name in a kernel label, an error message): NULs and surrogates
  are escaped instead.
* :func:`c_size` / :func:`c_intp` -- an integer (``int``, NumPy integer,
  anything with ``__index__``) that must fit ``size_t`` / ``intptr_t`` (or a
  narrower range); floats and other types are a ``TypeError``.
* :func:`c_address` -- an integer address for a low-level wrapper: not NULL,
  aligned, and (:func:`readable`) mapped, checked without touching it.
"""

from __future__ import annotations

import errno
import operator
import os

from ._native import ffi
from .errors import CKTypeError, InvalidArgumentError, message_bytes

#: the ranges of the C integer types the library takes
SIZE_MAX: int = int(ffi.cast("size_t", -1))
INTPTR_MAX: int = SIZE_MAX >> 1
INTPTR_MIN: int = -INTPTR_MAX - 1

_SHOW = 60  # characters of an offending text shown in a message


def _shown(text: str) -> str:
    r = repr(text)
    return r if len(r) <= _SHOW else r[:_SHOW - 4] + "...'"


# ------------------------------------------------------------------- text --
def c_text(text, what: str, *, error: type = InvalidArgumentError,
           allow_nul: bool = False, lossy: bool = False) -> bytes:
    """``text`` (a ``str``) as UTF-8 bytes for C; ``what`` names it in errors.

    A NUL character is an ``error`` (C would cut the text there) unless
    ``allow_nul`` (for data passed with its length); a lone surrogate is an
    ``error`` too.  With ``lossy`` nothing raises: NUL becomes ``\\0`` and a
    surrogate its ``\\udXXX`` escape (for labels and messages)."""
    if lossy:
        return message_bytes(text)
    if not isinstance(text, str):
        raise CKTypeError(f"{what} must be a str, not {type(text).__name__}")
    if not allow_nul:
        i = text.find("\x00")
        if i >= 0:
            raise error(f"{what} {_shown(text)} contains a NUL character (at index {i}); "
                        "C text ends at a NUL, so it cannot be passed on")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start:exc.end]
        raise error(f"{what} {_shown(text)} is not valid Unicode text: lone surrogate "
                    f"{bad!r} at index {exc.start} cannot be encoded as UTF-8") from None


def c_message(text) -> bytes:
    """A message for ``ck_set_error`` (never raises): :func:`c_text` lossy."""
    return c_text(text, "message", lossy=True)


# ---------------------------------------------------------------- integers --
def _integer(n, what: str) -> int:
    if isinstance(n, int):
        return int(n)
    try:
        return operator.index(n)
    except TypeError:
        raise CKTypeError(f"{what} must be an integer, not {type(n).__name__} ({n!r})"
                          ) from None


def c_size(n, what: str, *, max: int | None = None, min: int = 0) -> int:
    """``n`` as a C ``size_t`` (``[min, max]``, by default ``[0, SIZE_MAX]``)."""
    v = _integer(n, what)
    hi = SIZE_MAX if max is None else max
    if not min <= v <= hi:
        raise InvalidArgumentError(f"{what} must be in [{min}, {_bound(hi)}], got {v}")
    return v


def c_intp(n, what: str, *, min: int = INTPTR_MIN, max: int = INTPTR_MAX) -> int:
    """``n`` as a C ``intptr_t`` (``[min, max]``)."""
    v = _integer(n, what)
    if not min <= v <= max:
        raise InvalidArgumentError(f"{what} must be in [{_bound(min)}, {_bound(max)}], "
                                   f"got {v}")
    return v


def c_shape(shape, what: str) -> list[int]:
    """A shape (a sequence of sizes) for C: each in ``[0, INTPTR_MAX]``."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        shape = (shape,)
    return [c_intp(s, f"{what}[{i}]", min=0) for i, s in enumerate(shape)]


_BOUND_NAMES = {2**64 - 1: "2**64-1", 2**63 - 1: "2**63-1", -2**63: "-2**63",
                2**32 - 1: "2**32-1", 2**31 - 1: "2**31-1", -2**31: "-2**31"}


def _bound(v: int) -> str:
    return _BOUND_NAMES.get(v, str(v))


# --------------------------------------------------------------- addresses --
def readable(address: int, size: int) -> bool:
    """Whether ``size`` bytes at ``address`` can be read, found out without
    reading them here: the kernel copies them into a pipe (``write(2)``
    fails with ``EFAULT`` on unmapped memory instead of faulting)."""
    r, w = os.pipe()
    try:
        os.write(w, ffi.buffer(ffi.cast("char *", address), size))
        return True
    except OSError as exc:
        if exc.errno == errno.EFAULT:
            return False
        raise
    finally:
        os.close(r)
        os.close(w)


def c_address(address, what: str, *, align: int = 1, size: int = 0) -> int:
    """An integer address for a low-level wrapper: not NULL, a multiple of
    ``align``, and ``size`` bytes readable (:func:`readable`).  What lives
    there is the caller's to check."""
    if isinstance(address, ffi.CData):
        address = int(ffi.cast("uintptr_t", address))
    v = c_size(address, f"{what}: address")
    if v == 0:
        raise InvalidArgumentError(f"{what}: NULL address")
    if v % align:
        raise InvalidArgumentError(f"{what}: address {v:#x} is not aligned to {align} bytes")
    if size and not readable(v, size):
        raise InvalidArgumentError(f"{what}: address {v:#x} is not mapped memory")
    return v


__all__ = ["c_text", "c_message", "c_size", "c_intp", "c_shape", "c_address", "readable",
           "SIZE_MAX", "INTPTR_MAX", "INTPTR_MIN"]
