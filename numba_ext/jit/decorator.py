"""``@ckernels.jit``: Python scalar functions compiled by Numba into real ckernels.

>>> import ckernels
>>> @ckernels.jit("float64(float64, float64)")
... def axpy(x, y):
...     return 2.0 * x + y
>>> axpy([1.0, 2.0], 10.0).to_list()
[12.0, 14.0]

Signatures use ckernel type names (``"string(string)"``, ``"bool(float32)"``,
``"complex128(complex128, float64)"``); element types: ``bool``, ``int8`` ..
``int64``, ``uint8`` .. ``uint64``, ``float32``, ``float64``, ``complex64``,
``complex128`` and ``string``.  A list of signatures compiles each one at
decoration; without signatures, one is compiled per argument types at the
first call (like ``numba.vectorize``).  ``cache=True`` caches both the Numba
function and the generated entry points on disk, and each numeric signature also
as a real shared library exporting its ckernel entry points
(:mod:`ckernels.jit.native_cache`, linked with the system C compiler): in a new
interpreter, a function whose signatures are all there is decorated by loading
those libraries, without importing Numba (its dispatcher is made when something
needs it); ``CKERNELS_JIT_NATIVE_CACHE=0`` turns that off.

What a decorated function is:

* a callable on ckernel arrays, NumPy arrays, nested lists and scalars, with
  NumPy broadcasting and ``out=``.  It runs through the library's own
  lifting (``ck_array_apply``): the jitted kernel is the child of the C
  dimension kernels, large results are split over the library's thread pool
  (string results run serially: an arena has one writer).  Scalars in give a
  scalar out; NumPy arrays in give a NumPy array out (a zero-copy view of the
  result) when the result type has a NumPy equivalent; anything else gives a
  :class:`ckernels.Array`.
* a source of real ckernels for C consumers: :meth:`JitKernel.instantiate`.
* callable from other ``@ckernels.jit`` functions and from ``@numba.njit``
  code: Numba types it as its underlying dispatcher (``f.dispatcher``).
* registrable as the implementation of a named operation
  (:meth:`JitKernel.register`, ``register=`` at decoration).
* picklable by reference (module + qualified name) and otherwise by value of
  its Python function and signatures: it is always rebuilt by compiling (or
  loading from the cache), never from raw addresses.

Errors: the error model.  The decorated function is Python code, and by
default it means what Python means, on every target (CPU, OpenCL, later
CUDA): ``error_model="python"`` (the default) checks divisors, so ``1.0 / x``
with ``x == 0`` raises ``ZeroDivisionError`` -- as
:class:`~ckernels.errors.CKZeroDivisionError` -- instead of silently giving
``inf`` (so do ``//`` and ``%``).  That is what is checked: the rest of the
arithmetic follows Numba (C and NumPy, not Python): integers wrap at their
width, a result stored into a narrower declared type wraps (``int8`` of 300
is 44), a float stored into an integer type is truncated, and math functions
outside their domain give IEEE values with NumPy's floating-point flags
(``math.sqrt(-1.0)`` is ``nan`` and warns; ``numpy.errstate`` applies).
``error_model="numpy"`` gives NumPy's (and
``numba.vectorize``'s) IEEE semantics instead: float ``x / 0`` is ``inf`` or
``nan``, float ``x // 0`` is ``x / 0``, float ``x % 0`` is ``nan``, integer
``x // 0`` and ``x % 0`` are ``0``, and integer ``0 ** -n`` is the most
negative value of the result type; no division check is emitted, which is
faster where those checks keep the loop from vectorising.  Both models give
the same answers on the CPU and on devices.  Recursion deeper than the stack
(a deeply recursive jitted function) crashes as in plain Numba.

Errors raised inside the function become a ``ck_status`` with the
exception's message (``ck_set_error``) and come back at the call site as the
matching :mod:`ckernels.errors` class, which derives from the built-in one:
ZeroDivisionError -> :class:`~ckernels.errors.CKZeroDivisionError`, IndexError
-> :class:`~ckernels.errors.CKIndexError`, ValueError ->
:class:`~ckernels.errors.CKValueError`, OverflowError ->
:class:`~ckernels.errors.CKOverflowError`, TypeError ->
:class:`~ckernels.errors.CKTypeError`; any other exception ->
:class:`~ckernels.errors.UserKernelError` with ``"ClassName: message"``.
Design notes: :mod:`ckernels.jit.cpu_codegen` (CPU), :mod:`ckernels.jit.c_emit`
(devices), :mod:`ckernels.jit.targets` (which target runs a call).
"""

from __future__ import annotations

from ..errors import InvalidArgumentError
from . import pickling as _pickling
# the kernel's names, importable from here as before the split (``from
# ckernels.jit.decorator import JitKernel``)
from .cpu import Compiled  # noqa: F401
from .kernel import (ERROR_MODELS, NUMBA_OPTIONS, CacheStats, JitKernel,  # noqa: F401
                     _numba_options, cpu_layout_problem)
from .signature import SUPPORTED_TYPES, Signature, parse_signature


def _rebuild(func_bytes, sigs, cache, options, error_model="python", identity=None,
             key=None):
    """The reduce function of jitted functions pickled by value before
    ``ckernels.jit.pickling`` (their pickles name this one): rebuilt as
    :func:`ckernels.jit.pickling._rebuild` rebuilds newer ones."""
    return _pickling._rebuild(JitKernel, func_bytes, sigs, cache, options, error_model,
                              identity, key)


# ------------------------------------------------------------ the decorator --
def jit(signatures=None, *, cache: bool = False, register: str | None = None,
        error_model: str = "python", identity=None, **numba_options):
    """Compile a Python scalar function into ckernels.

    ``@jit``, ``@jit("float64(float64)")``, ``@jit(["int64(int64)",
    "float64(float64)"], cache=True, register="myop")``.

    ``error_model`` -- ``"python"`` (default): the function means what Python
    means on every target, so ``x / 0`` raises ``ZeroDivisionError``
    (:class:`ckernels.errors.CKZeroDivisionError`), as ``//`` and ``%`` by
    zero do (only division is checked: other arithmetic follows Numba, see
    the module docstring); ``"numpy"``: NumPy's and ``numba.vectorize``'s IEEE semantics
    (float ``x / 0`` -> ``inf``/``nan``, integer ``x // 0`` and ``x % 0`` -> 0)
    without division checks, faster where those checks block vectorisation.
    Both models give the same results on the CPU and on devices, and on the
    ufunc path.

    ``cache`` -- ``True``: keep what is compiled on disk, next to Numba's cache
    files of the function (``NUMBA_CACHE_DIR`` or ``__pycache__``): Numba's
    cache, and for numeric signatures a shared library of the entry points that
    a new interpreter loads without Numba (a changed body, closure value,
    source file, Numba, Python, CPU or libckernel means a fresh compile).
    What a cache holds runs in this process, so the cache directory is trusted
    only when it is owned by you and writable by no one else (group write only
    for your private group), and every directory above it owned by you or root
    and not writable by others unless sticky (``/tmp``); otherwise the function
    is compiled without any cache (Numba's included) and an
    :class:`~ckernels.errors.UntrustedCacheWarning` says why.  A cached library
    is opened once, checked on that descriptor (regular file, owner, mode),
    hashed, and loaded from the same descriptor; a truncated or corrupt one is
    compiled again and rewritten.  This protects against other users (and
    against half-written or damaged files); it does not protect against your
    own account or root, a compromised compiler or ``libckernel``, or Numba's
    cache when Numba caches the function outside this rule's directories
    (``.numba_config.yaml``, a read-only ``__pycache__``).

    ``identity`` -- the identity of the function's reductions (``f.reduce``,
    the ufunc's ``identity``): e.g. ``0`` for a sum-like function.  With one,
    reducing an empty array gives it and reductions may run over several
    axes at once (the function is taken to be associative and commutative);
    without one (the default) reductions behave as those of NumPy's ufuncs
    without an identity (``numpy.maximum``): they start from the first
    element, reduce one axis at a time, and an empty reduction is a
    ``ValueError`` unless ``initial=`` is given.

    Numba's options that mean something for a kernel go to ``numba.njit``:
    ``fastmath``, ``boundscheck``, ``nogil``, ``locals``, ``inline``,
    ``debug`` (``nopython=True`` is accepted and implied); any other keyword is
    a ``TypeError`` naming it.

    Parameters are positional; defaults are allowed (a call may leave them
    out or pass them by name: they are bound before the call is dispatched),
    ``*args``, ``**kwargs`` and keyword-only parameters are refused at
    decoration.  A call with the wrong number of arguments says so
    (``"f() takes 4 arguments, 3 given"``)."""
    if error_model not in ERROR_MODELS:
        raise InvalidArgumentError(f"ckernels.jit: error_model must be 'python' or 'numpy', "
                                   f"not {error_model!r}")
    _numba_options(numba_options)         # a TypeError at decoration, naming the keyword
    if callable(signatures) and not isinstance(signatures, str) and hasattr(
            signatures, "__code__"):
        return JitKernel(signatures, (), cache=cache, register=register,
                         error_model=error_model, identity=identity, **numba_options)
    if signatures is not None and not isinstance(signatures, (str, list, tuple)):
        if not (hasattr(signatures, "return_type") and hasattr(signatures, "args")):
            raise TypeError(f"ckernels.jit: signatures must be a string or a list of strings, "
                            f"not {signatures!r}")
        signatures = [signatures]
    sigs = [signatures] if isinstance(signatures, str) else list(signatures or ())
    parsed = [parse_signature(s) for s in sigs]   # TypeError at decoration
    for p in parsed:
        if p.ret is None:
            raise TypeError(f"ckernels.jit: signature {p.text} needs a result type")

    def decorate(py_func):
        return JitKernel(py_func, parsed, cache=cache, register=register,
                         error_model=error_model, identity=identity, **numba_options)
    return decorate


__all__ = ["jit", "JitKernel", "Compiled", "Signature", "parse_signature", "SUPPORTED_TYPES",
           "CacheStats", "ERROR_MODELS"]
