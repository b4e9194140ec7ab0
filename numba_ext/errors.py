"""Exceptions raised by ckernel.

Every C function of libckernel returns a ``ck_status`` and records a message in
a thread-local buffer.  :func:`check` turns a failing status into the matching
exception class below, carrying that message.  Each class also derives from
the closest Python built-in exception, so ``except ValueError`` keeps working.
"""

from __future__ import annotations


class CKernelError(Exception):
    """Base class of every error reported by libckernel."""

    #: the ck_status code (``CK_ERR_*``) this error came from
    status: int = -1

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidArgumentError(CKernelError, ValueError):
    status = 1


class OutOfMemoryError(CKernelError, MemoryError):
    status = 2


class CKOverflowError(CKernelError, OverflowError):
    status = 3


class InvalidStateError(CKernelError, RuntimeError):
    status = 4


class CKTypeError(CKernelError, TypeError):
    status = 5


class CKIndexError(CKernelError, IndexError):
    status = 6


class ParseError(CKernelError, ValueError):
    status = 7


class CKValueError(CKernelError, ValueError):
    status = 8


class CKZeroDivisionError(CKernelError, ZeroDivisionError):
    status = 9


class NotSupportedError(CKernelError, TypeError):
    status = 10


class JitOnlyError(CKernelError, TypeError):
    """A ``ckernels.nb`` function that exists only inside jitted code was called
    from the Python interpreter."""
    status = 5


class BackendError(CKernelError, RuntimeError):
    status = 11


class UserKernelError(CKernelError, RuntimeError):
    status = 12


_BY_STATUS: dict[int, type[CKernelError]] = {
    cls.status: cls
    for cls in (
        InvalidArgumentError, OutOfMemoryError, CKOverflowError, InvalidStateError,
        CKTypeError, CKIndexError, ParseError, CKValueError, CKZeroDivisionError,
        NotSupportedError, BackendError, UserKernelError,
    )
}


def error_class(status: int) -> type[CKernelError]:
    """The exception class for a ck_status code."""
    return _BY_STATUS.get(status, CKernelError)


__all__ = [
    "CKernelError", "InvalidArgumentError", "OutOfMemoryError", "CKOverflowError",
    "InvalidStateError", "CKTypeError", "CKIndexError", "ParseError", "CKValueError",
    "CKZeroDivisionError", "NotSupportedError", "BackendError", "UserKernelError",
    "JitOnlyError",
    "error_class",
]
