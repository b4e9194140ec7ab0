"""Exceptions raised by ckernels, and the one mapping between them and ``ck_status``.

Every C function of libckernel returns a ``ck_status`` and records a message in
a thread-local buffer.  ``ckernels._native.check`` turns a failing status into
the matching exception class below, carrying that message.  Each class also
derives from the closest Python built-in exception, so ``except ValueError``
keeps working.

The mapping is derived from the C enum, never written as numbers here: each
class names its ``CK_ERR_*`` constant (:data:`STATUS_NAMES`), its ``status`` is
read from the compiled library, and importing this module fails if the enum
has a status without a class or a class names a status the enum lacks.  The
other direction -- a Python exception raised by kernel code (a jitted function
on the CPU, or the error table of device code) to a status and message -- is
:func:`classify`; :func:`record` stores the result as the calling thread's
libckernel error (what the generated CPU entry points call) and
:func:`exception_for` builds the exception a device error code stands for.
"""

from __future__ import annotations

from ._ffi import ffi, lib


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
    pass


class OutOfMemoryError(CKernelError, MemoryError):
    pass


class CKOverflowError(CKernelError, OverflowError):
    pass


class InvalidStateError(CKernelError, RuntimeError):
    pass


class CKTypeError(CKernelError, TypeError):
    pass


class CKIndexError(CKernelError, IndexError):
    pass


class ParseError(CKernelError, ValueError):
    pass


class CKValueError(CKernelError, ValueError):
    pass


class CKZeroDivisionError(CKernelError, ZeroDivisionError):
    pass


class NotSupportedError(CKernelError, TypeError):
    pass


class BackendError(CKernelError, RuntimeError):
    pass


class UserKernelError(CKernelError, RuntimeError):
    pass


class CompileError(BackendError):
    """Kernel source that a compiler rejected (a hand-written kernel on the CPU,
    OpenCL or CUDA): the message holds the compiler's log, with the user's file
    name and line numbers.  ``log`` is the whole log, ``target`` the C target
    (``"c"``, ``"opencl"``, ``"cuda"``).  Status ``CK_ERR_BACKEND``, as for
    every build failure of the library's programs."""

    def __init__(self, message: str, log: str = "", target: str = ""):
        super().__init__(message)
        self.log = log
        self.target = target


class JitOnlyError(CKernelError, TypeError):
    """A ``ckernels.nb`` function that exists only inside jitted code was called
    from the Python interpreter (status ``CK_ERR_TYPE``; not the class that
    status maps to)."""


def _numpy_no_loop_error() -> type:
    """NumPy's exception for a ufunc call no loop takes (``_UFuncNoLoopError``,
    private to NumPy: not in ``numpy.exceptions``)."""
    try:
        from numpy._core._exceptions import _UFuncNoLoopError
    except ImportError:  # pragma: no cover - NumPy without _core
        from numpy.core._exceptions import _UFuncNoLoopError
    return _UFuncNoLoopError


class NoLoopError(CKTypeError, _numpy_no_loop_error()):
    """A jitted function's ufunc was called with operands no compiled
    signature takes under NumPy's ``'safe'`` rule for picking a loop: the
    message names the argument, its type, the casting rule and the
    signatures.  A subclass of the exception NumPy raises for the same call
    (``numpy._core._exceptions._UFuncNoLoopError``, a ``UFuncTypeError``
    and ``TypeError``), so ``except`` clauses written for NumPy's keep
    working; status ``CK_ERR_TYPE`` (not the class that status maps to).
    ``ufunc`` and ``dtypes`` are NumPy's attributes."""

    def __init__(self, message: str, ufunc=None, dtypes=()):
        TypeError.__init__(self, message)
        self.ufunc = ufunc
        self.dtypes = tuple(dtypes)

    def __str__(self) -> str:
        return self.message


class UntrustedCacheWarning(UserWarning):
    """A cache directory or file was skipped because someone other than the
    current user could have written it (``ckernels._trust``: the native cache
    of ``@ckernels.jit(cache=True)``, the CPU kernel cache of
    ``Context.build_kernels``).  Nothing is loaded from it; the code is
    compiled instead."""


#: the ``ck_status`` enum as the library was compiled: name -> value
STATUS_VALUES: dict[str, int] = {name: value for value, name in
                                 ffi.typeof("ck_status").elements.items()}

#: exception class -> the name of its ``CK_ERR_*`` status
STATUS_NAMES: dict[type, str] = {
    InvalidArgumentError: "CK_ERR_INVALID_ARGUMENT",
    OutOfMemoryError: "CK_ERR_NO_MEMORY",
    CKOverflowError: "CK_ERR_OVERFLOW",
    InvalidStateError: "CK_ERR_INVALID_STATE",
    CKTypeError: "CK_ERR_TYPE",
    CKIndexError: "CK_ERR_INDEX",
    ParseError: "CK_ERR_PARSE",
    CKValueError: "CK_ERR_VALUE",
    CKZeroDivisionError: "CK_ERR_ZERO_DIVISION",
    NotSupportedError: "CK_ERR_NOT_SUPPORTED",
    BackendError: "CK_ERR_BACKEND",
    UserKernelError: "CK_ERR_USER",
}


def _bind_statuses() -> dict[int, type[CKernelError]]:
    errs = {n: v for n, v in STATUS_VALUES.items() if v != 0}
    unknown = sorted(set(STATUS_NAMES.values()) - set(errs))
    missing = sorted(set(errs) - set(STATUS_NAMES.values()))
    if unknown or missing:
        raise ImportError("ckernels.errors: the exception classes and libckernel's ck_status "
                          f"enum disagree (unknown to C: {unknown}; without a class: {missing})")
    for cls, name in STATUS_NAMES.items():
        cls.status = errs[name]
    JitOnlyError.status = NoLoopError.status = errs["CK_ERR_TYPE"]
    return {cls.status: cls for cls in STATUS_NAMES}


_BY_STATUS = _bind_statuses()

#: the largest ``ck_status`` value (generated code checks reported statuses
#: against ``1..MAX_STATUS``)
MAX_STATUS: int = max(_BY_STATUS)


def error_class(status: int) -> type[CKernelError]:
    """The exception class for a ck_status code."""
    return _BY_STATUS.get(status, CKernelError)


def status_name(status: int) -> str:
    """``"CK_ERR_VALUE"`` for 8 (the library's own name)."""
    return ffi.string(lib.ck_status_name(int(status))).decode()


# ---------------------------------------------- exceptions raised by kernel code --
#: a built-in exception raised by kernel code -> the ckernels class it comes
#: back as (most specific first; first match wins); anything else comes back
#: as :class:`UserKernelError` with ``"ClassName: message"``
FROM_BUILTIN: tuple[tuple[type, type[CKernelError]], ...] = (
    (ZeroDivisionError, CKZeroDivisionError),
    (IndexError, CKIndexError),
    (OverflowError, CKOverflowError),
    (ValueError, CKValueError),
    (TypeError, CKTypeError),
    (MemoryError, OutOfMemoryError),
)

_MAX_MESSAGE = 900  # the C buffer truncates anyway; keep the start readable


def classify(exc: BaseException | None) -> tuple[int, str]:
    """``(status, message)`` for an exception raised by kernel code.

    A ckernels exception keeps its status and message; a built-in exception of
    :data:`FROM_BUILTIN` gets that class's status, with the class name in the
    message when it is a subclass (``"UnicodeDecodeError: ..."``) or the
    message is empty; any other exception is ``CK_ERR_USER`` with
    ``"ClassName: message"``."""
    user = UserKernelError.status
    if exc is None:
        return user, "kernel failed without an exception"
    if isinstance(exc, CKernelError) and int(getattr(exc, "status", -1)) in _BY_STATUS:
        return int(exc.status), exc.message
    msg = str(exc)
    for base, cls in FROM_BUILTIN:
        if isinstance(exc, base):
            if type(exc) is not base or not msg:
                msg = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
            return cls.status, msg
    return user, f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def exception_for(exc: BaseException | None) -> CKernelError:
    """The ckernels exception a kernel's exception comes back as (the same
    status and message :func:`classify` gives)."""
    status, msg = classify(exc)
    return error_class(status)(msg, status)


def message_bytes(text) -> bytes:
    """``text`` as UTF-8 for C, never raising: a NUL becomes ``\\0`` and a
    lone surrogate its ``\\udXXX`` escape (the lossy encoding of labels and
    messages; ``_cargs.c_text(..., lossy=True)`` is this)."""
    return str(text).replace("\x00", "\\0").encode("utf-8", "backslashreplace")


def source_suffix() -> str:
    """``" [f at file.py:12]"``: where in the user's source the failing jitted
    function was (``ck_last_error_source``: recorded by the generated code on
    its way out of the failing statement), or "" when nothing was recorded."""
    fn, fl, ln = ffi.new("const char **"), ffi.new("const char **"), ffi.new("int64_t *")
    if not lib.ck_last_error_source(fn, fl, ln):
        return ""
    name = ffi.string(fn[0]).decode("utf-8", "replace")
    path = ffi.string(fl[0]).decode("utf-8", "replace")
    return f" [{name} at {path}:{ln[0]}]"


def element_suffix(message: str) -> str:
    """``message`` with the failing element (``ck_last_error_element``: its
    index in the destination's dims, outermost first) added: inside the
    ``[f at file:line]`` part when there is one, else as ``" [element i]"``;
    ``message`` itself when no element was recorded."""
    idx = ffi.new(f"int64_t[{lib.CK_ERROR_MAX_INDEX}]")
    n = lib.ck_last_error_element(idx, lib.CK_ERROR_MAX_INDEX, ffi.NULL)
    if n == 0:
        return message
    where = str(idx[0]) if n == 1 else "(" + ", ".join(str(idx[i]) for i in range(n)) + ")"
    if message.endswith("]") and " [" in message:
        return f"{message[:-1]}, element {where}]"
    return f"{message} [element {where}]"


def record(exc) -> int:
    """Record ``exc`` as the calling thread's libckernel error
    (``ck_set_error``) and return its status.  Called with the GIL by the
    generated CPU entry points (looked up by module and name, so cached code
    holds no addresses); never raises.  Where the user's function failed
    (:func:`source_suffix`) ends the message."""
    try:
        status, msg = classify(exc)
        msg += source_suffix()
        data = message_bytes(msg)
        if len(data) > _MAX_MESSAGE:
            data = data[:_MAX_MESSAGE] + b"..."
        lib.ck_set_error(status, data)
        return status
    except BaseException:  # pragma: no cover - defensive
        status = UserKernelError.status
        lib.ck_set_error(status, b"kernel raised an exception that could not be reported")
        return status


__all__ = [
    "CKernelError", "InvalidArgumentError", "OutOfMemoryError", "CKOverflowError",
    "InvalidStateError", "CKTypeError", "CKIndexError", "ParseError", "CKValueError",
    "CKZeroDivisionError", "NotSupportedError", "BackendError", "UserKernelError",
    "JitOnlyError", "NoLoopError", "CompileError", "UntrustedCacheWarning", "STATUS_VALUES",
    "STATUS_NAMES",
    "MAX_STATUS",
    "FROM_BUILTIN", "error_class", "status_name", "classify", "exception_for", "record",
    "source_suffix", "element_suffix",
]
