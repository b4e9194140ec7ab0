"""ckernels functions as NumPy ufuncs: the Python side of :mod:`ckernels._ufuncs`.

Two kinds of ckernels callables own a real ``numpy.ufunc``: jitted functions
(:class:`ckernels.JitKernel`, one loop per compiled numeric signature) and
registry operations (:class:`ckernels.ops.Op`, one loop per kernel of the
operation whose types NumPy has).  Both are :class:`Function` objects -- the
C callable of ``ckernels._ufuncs`` -- so that a call whose operands NumPy
takes (ndarrays, NumPy and Python numbers, pandas / xarray / dask objects and
anything else implementing ``__array_ufunc__``) goes straight to the ufunc,
in C, and every other call (ckernels and device arrays, lists, strings) to
the function's general path through ``ck_array_apply``.

This module is what they share:

* :func:`numpy_dtypes`: element types -> NumPy dtypes (from the one table,
  :mod:`ckernels.dtypes`);
* :func:`adopt`: a ufunc made for a function knows it (:func:`function_of`),
  is named after it (``__module__``, ``__qualname__`` = ``"<function
  qualname>.ufunc"``) and pickles through it;
* :func:`function_of`: the jitted function or operation that owns a ufunc
  (``None`` for any other object) -- what an ``__array_ufunc__``
  implementation uses to route one of our ufuncs back to its owner;
* :func:`call_wrapped`: calls on pandas / xarray / dask operands (the
  ``wrappers`` hook of :class:`Function`) pass the result dtype NumPy
  resolves as ``dtype=``: dask otherwise infers it by running the kernel on
  zeros, which a kernel that raises on zero (``1.0 / x`` under the default
  error model) turns into a ``TypeError``;
* pickling: NumPy pickles a ufunc by its ``__name__``, found in its module,
  which an interactively defined function's ufunc never is.  A ufunc made
  here pickles as ``getattr(owner, "ufunc")``, and its owner pickles by
  reference (a module-level function, an operation by name) or by value
  (cloudpickle, as Dask does): both work on a Dask cluster.  Any other ufunc
  pickles as NumPy pickles it (this module wraps NumPy's ``copyreg`` entry
  for ``numpy.ufunc`` and hands every other ufunc to it).
"""

from __future__ import annotations

import copyreg
import re

import numpy as np

from . import _ufuncs, _foreign, dtypes
from . import string_operands as text   # the text operands of string ufuncs

#: the C callable jitted functions and operations are (see ckernels._ufuncs)
Function = _ufuncs.Function


#: the key under which a ufunc's ``__dict__`` holds its owner
_OWNER = "_ckernels_function"


def numpy_dtypes(names) -> tuple[np.dtype, ...] | None:
    """NumPy dtypes of element type names (a signature's arguments, then its
    result: ``string`` is ``StringDType``, whose loops are
    ``src/python/ufuncs/string_loops.c``; an instant or duration its
    ``M8[unit]`` / ``m8[unit]``); None when one has none (structs)."""
    out = []
    for n in names:
        if n == "string":
            out.append(text.STRING)
            continue
        d = dtypes.by_name.get(n) or _time_element(n)   # structs (jit signatures): none
        if d is None or d.numpy is None:
            return None
        out.append(d.numpy)
    return tuple(out)


#: a jit signature's instant / duration type name without a time zone
#: (``datetime[unit='s']``, ``timedelta[unit='ms']``)
_TIME_NAME = re.compile(r"(datetime|timedelta)\[unit='(\w+)'\]")


class _TimeDtype:
    """The NumPy dtype of an instant or duration (``numpy`` as a row of
    :mod:`ckernels.dtypes` has it)."""

    __slots__ = ("numpy",)

    def __init__(self, numpy):
        self.numpy = numpy


def _time_element(name: str):
    """The NumPy dtype (``M8[unit]`` / ``m8[unit]``, whose loops are
    ``src/python/ufuncs/time_loops.c``) of an instant / duration type name of
    a jit signature, else None -- also for an instant with a time zone, which
    no NumPy dtype holds (such signatures serve the general path only)."""
    m = _TIME_NAME.fullmatch(name)
    if m is None:
        return None
    return _TimeDtype(np.dtype(f"{'M' if m.group(1) == 'datetime' else 'm'}8[{m.group(2)}]"))


def adopt(ufunc: np.ufunc, owner, qualname: str, module: str) -> np.ufunc:
    """Mark ``ufunc`` as ``owner``'s (a :class:`Function`): named
    ``"<qualname>.ufunc"`` in ``module``, pickled through ``owner``."""
    d = ufunc.__dict__
    d["__module__"] = module
    d["__qualname__"] = f"{qualname}.ufunc"
    d[_OWNER] = owner     # a cycle owner -> ufunc -> owner; the GC visits both
    return ufunc


def function_of(ufunc):
    """The jitted function (:class:`ckernels.JitKernel`) or registry operation
    (:class:`ckernels.ops.Op`) whose ufunc ``ufunc`` is, else None.

    An ``__array_ufunc__`` implementation (``ckernels.Array``'s) uses it to run
    one of our ufuncs on its own operands through the owner's general path:
    ``function_of(ufunc)(*inputs, **kwargs)``."""
    if type(ufunc) is not np.ufunc:
        return None
    return ufunc.__dict__.get(_OWNER)


def result_dtype(ufunc: np.ufunc, args) -> np.dtype | None:
    """The result dtype ``ufunc`` resolves for these operands (without running
    a kernel; compiles one for lazily compiled functions), None when NumPy
    cannot say (operands without a NumPy dtype, no loop)."""
    dts = []
    for a in args:
        t = type(a)
        if t is int or t is float or t is complex:
            dts.append(t)                     # a weak Python scalar
            continue
        dt = getattr(a, "dtype", None)
        if not isinstance(dt, np.dtype):      # e.g. a pandas extension dtype
            return None
        dts.append(dt)
    try:
        return ufunc.resolve_dtypes(tuple(dts) + (None,) * ufunc.nout)[-1]
    except Exception:
        return None


def call_wrapped(function, *args, **kwargs):
    """``function.ufunc(*args, **kwargs)`` for operands of a library that
    implements ``__array_ufunc__`` (pandas, xarray, dask): with ``dtype=`` set
    to the result dtype when the call fixes neither it nor ``signature=`` nor
    ``out=``, so that the library needs not run the kernel to learn it."""
    out = kwargs.get("out")
    if _foreign.any_container((*args, out)):     # ckernels.containers, by the general path
        extra = [k for k in kwargs if k != "out"]
        if extra:    # Python's words (polars' map_batches retries without return_dtype)
            name = getattr(function, "__name__", None) or getattr(function, "name", "kernel")
            raise TypeError(f"{name}() got an unexpected keyword argument {extra[0]!r} (a call "
                            "on pyarrow, polars or pandas containers takes no keywords)")
        return function.fallback(function, *args, **kwargs)
    if out is not None and _foreign.any_dask_collection(
            out if isinstance(out, tuple) else (out,)):
        raise dask_out_error(function)
    uf = function.ufunc
    if getattr(function, "_string_loops", False):   # text held as objects -> StringDType
        if text.has_pandas(args):
            return text.call_pandas(function, args, kwargs)
        args = text.operands(args)
    if (kwargs.get("out") is None and "dtype" not in kwargs and "signature" not in kwargs
            and len(args) == uf.nin):
        dt = result_dtype(uf, args)
        if dt is not None:
            # a parametric new-style DType (StringDType) is passed as its class
            kwargs["dtype"] = type(dt) if dt.kind == "T" else dt
    return uf(*args, **kwargs)


def _operand_text(dt) -> tuple[str, object]:
    """``(text, dtype or kinds)`` of an operand DType NumPy hands a promoter:
    a concrete DType gives its name and its dtype, Python's weak scalars
    (int, float, complex) a phrase and the kinds they may become."""
    weak = {"_PyLongDType": ("a Python int", "iufc"), "_PyFloatDType": ("a Python float", "fc"),
            "_PyComplexDType": ("a Python complex", "c")}.get(getattr(dt, "__name__", ""))
    if weak is not None:
        return weak
    try:
        d = np.dtype(dt.type)
    except Exception:
        return str(getattr(dt, "__name__", dt)), None
    return str(d), d


def _takes(op, to: np.dtype) -> bool:
    if op is None:
        return False
    if isinstance(op, str):             # a weak Python scalar: by kind
        return to.kind in op
    return bool(np.can_cast(op, to, "safe"))


def no_loop_error(ufunc: np.ufunc, op_dtypes) -> Exception:
    """The error for a call of a jitted function's ufunc whose operands
    (``op_dtypes``, the DTypes NumPy hands the promoter) no compiled
    signature takes under NumPy's ``'safe'`` rule for picking a loop
    (``src/python/ufuncs/promoter.c`` raises it): names the argument, its type, the
    casting rule and the signatures -- a :class:`ckernels.errors.NoLoopError`,
    a subclass of the ``UFuncTypeError`` NumPy raises for the same call."""
    from .errors import NoLoopError
    owner = function_of(ufunc)
    name = getattr(owner, "__name__", None) or ufunc.__name__
    params = [p[0] for p in getattr(owner, "_params", ())]
    ops = [_operand_text(dt) for dt in op_dtypes]
    nin = len(ops)
    loops = [tuple(np.dtype(c) for c in t.replace("->", "")) for t in ufunc.types]
    sigs = ", ".join(getattr(owner, "signatures", None) or
                     [f"{lp[-1]}({', '.join(str(x) for x in lp[:-1])})" for lp in loops])

    def arg(i):
        return f"argument {i} ({params[i]!r})" if i < len(params) else f"argument {i}"

    bad = [i for i in range(nin)
           if not any(_takes(ops[i][1], lp[i]) for lp in loops if len(lp) == nin + 1)]
    if bad and len(loops) == 1:
        i = bad[0]
        to = loops[0][i]
        fix = (f"convert it first (.astype(np.{to})), pass casting='unsafe' with "
               f"signature=, or compile a signature for {ops[i][0]}")
        msg = (f"{name}: {arg(i)} is {ops[i][0]}, which does not cast to {to} under the "
               f"'safe' casting rule NumPy applies to pick a loop (signature {sigs}); {fix}")
    elif bad:
        i = bad[0]
        msg = (f"{name}: {arg(i)} is {ops[i][0]}, which no signature of {name} takes under "
               f"the 'safe' casting rule NumPy applies to pick a loop (signatures: {sigs}); "
               "convert it first or compile a signature for it")
    else:
        got = ", ".join(t for t, _ in ops)
        msg = (f"{name}: no signature takes the arguments ({got}) together under the 'safe' "
               f"casting rule NumPy applies to pick a loop (signatures: {sigs}); convert "
               "them first or compile a signature for them")
    return NoLoopError(msg, ufunc, tuple(op_dtypes))


def dask_out_error(function) -> Exception:
    """The error for ``function(..., out=<dask array>)`` (also raised by
    :func:`ckernels.dask.call`): a dask array cannot be written into."""
    from .errors import NotSupportedError
    name = getattr(function, "__name__", None) or getattr(function, "name", "kernel")
    return NotSupportedError(
        f"{name}(..., out=...) with dask arrays: a dask array is an immutable task graph, "
        "so there is nothing to write into; use the returned dask array (and "
        "dask.array.store / .compute() to materialise it)")


# ---------------------------------------------------------------- pickling --
def _ufunc_of(owner):
    """Unpickling: the ufunc of a (rebuilt) owner."""
    uf = owner.ufunc
    if uf is None:
        from .errors import InvalidStateError
        raise InvalidStateError(f"{owner!r} has no NumPy ufunc in this process")
    return uf


def _install_reducer() -> None:
    numpy_reduce = copyreg.dispatch_table.get(np.ufunc)
    if getattr(numpy_reduce, "_ckernels", False):
        return

    def reduce_ufunc(uf):
        owner = uf.__dict__.get(_OWNER)
        if owner is not None:
            return (_ufunc_of, (owner,))
        if numpy_reduce is not None:
            return numpy_reduce(uf)
        return uf.__name__

    reduce_ufunc._ckernels = True
    reduce_ufunc.__qualname__ = reduce_ufunc.__name__ = "reduce_ufunc"
    reduce_ufunc.__module__ = __name__
    copyreg.pickle(np.ufunc, reduce_ufunc)


_install_reducer()

__all__ = ["Function", "numpy_dtypes", "adopt", "function_of", "result_dtype",
           "call_wrapped", "no_loop_error", "dask_out_error"]
