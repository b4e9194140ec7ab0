"""Python operators of arrays: the registry operation behind each dunder
(``+`` is ``ckernels.ops.add``) and NumPy's binop deferral; the names that map
NumPy ufuncs and dunders to registry operations are :mod:`ckernels.opnames`'.

:mod:`ckernels.ops` sits above this package and registers itself here on
import (:func:`use_operations`).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import CKTypeError
# the operations' other spellings, written once (ckernels.opnames)
from ..opnames import BINARY as _BINARY
from ..opnames import COMPARE as _COMPARE
from ..opnames import OP_TO_UFUNC
from .base import ArrayBase


def _op_exists(name: str) -> bool:
    """Whether the kernel registry has an operation ``name`` (asked each time
    for a miss: users may register operations at any time)."""
    if name in _KNOWN_OPS:
        return True
    from .._cargs import c_text   # the C registry, below this module
    from .._native import ffi, lib
    from ..errors import CKernelError
    try:
        raw = c_text(name, "operation name")
    except CKernelError:   # NUL or a lone surrogate: no operation has that name
        return False
    out = ffi.new("const ck_op **")
    if lib.ck_op_find(raw, out) == 0:
        _KNOWN_OPS.add(name)
        return True
    return False


_KNOWN_OPS: set = set()


#: the operations API, :mod:`ckernels.ops`; it sits above this module and
#: registers itself here when imported (:func:`use_operations`)
_OPERATIONS = None


def use_operations(module) -> None:
    """Called by :mod:`ckernels.ops` on import: NumPy ufuncs on arrays of ours
    then run as ``module.<name>(*inputs, out=...)``, the documented operations
    API (which runs device operands on their device and host operands through
    ``ck_array_apply_op``: the ``_apply`` primitives)."""
    global _OPERATIONS
    _OPERATIONS = module


def _registry_op(name: str):
    """``ckernels.ops.<name>`` (the package imports :mod:`ckernels.ops`
    before any array can exist)."""
    return getattr(_OPERATIONS, name)


def _defer(other) -> bool:
    """NumPy's binop deferral: let ``other``'s reflected operator run when it
    opts out of ufuncs or is a foreign duck array (dask, xarray, ...)."""
    if type(other) in _PLAIN_OPERANDS:
        return False
    if isinstance(other, (ArrayBase, np.ndarray, np.generic, numbers.Number, str, bytes,
                          list, tuple)):
        _PLAIN_OPERANDS.add(type(other))
        return False
    au = getattr(type(other), "__array_ufunc__", False)
    return au is None or au is not False


def _numeric(args) -> bool:
    """Whether every array operand has a builtin numeric or a time element
    type (the registry's kernels, the time kernels); other operands (strings, structs) take NumPy's
    ufuncs through :meth:`ArrayLike.__array_ufunc__` instead."""
    for a in args:
        if isinstance(a, ArrayBase) and a.dtype.kind not in "biufcMm":
            return False
    return True


def _operate(self, op: str, args, out):
    """An operator: the registry operation when the operands are numeric,
    else NumPy's ufunc (which comes back through ``__array_ufunc__``)."""
    if _numeric(args):
        return self._apply(op, args, out)
    ufunc = getattr(np, OP_TO_UFUNC.get(op, op))
    return ufunc(*args) if out is None else ufunc(*args, out=out)


_PLAIN_OPERANDS = {int, float, complex, bool, np.ndarray, list, tuple}


def _binary(stem: str, op: str):
    def forward(self, other):
        if _defer(other):
            return NotImplemented
        return _operate(self, op, (self, other), None)

    def reflected(self, other):
        if _defer(other):
            return NotImplemented
        return _operate(self, op, (other, self), None)

    def inplace(self, other):
        if _defer(other):
            return NotImplemented
        _operate(self, op, (self, other), self)
        return self

    for f, name in ((forward, f"__{stem}__"), (reflected, f"__r{stem}__"),
                    (inplace, f"__i{stem}__")):
        f.__name__ = f.__qualname__ = name
        f.__doc__ = f"``{name}``: the registry operation ``{op}`` (``ckernels.ops.{op}``)."
    return forward, reflected, inplace


def _compare(stem: str, op: str):
    def cmp(self, other):
        if _defer(other):
            return NotImplemented
        if other is None and stem in ("eq", "ne"):
            return NotImplemented
        return _operate(self, op, (self, other), None)
    cmp.__name__ = cmp.__qualname__ = f"__{stem}__"
    cmp.__doc__ = f"elementwise ``{op}`` (``ckernels.ops.{op}``)."
    return cmp


class Operators(ArrayBase):
    """Mixin: the arithmetic, bitwise and comparison operators."""

    __slots__ = ()

    for _stem, _op in _BINARY.items():
        (locals()[f"__{_stem}__"], locals()[f"__r{_stem}__"],
         locals()[f"__i{_stem}__"]) = _binary(_stem, _op)
    for _stem, _op in _COMPARE.items():
        locals()[f"__{_stem}__"] = _compare(_stem, _op)
    del _stem, _op

    def __neg__(self):
        return self._apply("negative", (self,), None)

    def __pos__(self):
        if self.dtype.kind not in "iufc":   # NumPy's positive has no bool/str loops
            raise CKTypeError(f"unary + is not defined for arrays of '{self.type.dtype}'")
        return self.copy()

    def __abs__(self):
        return self._apply("absolute", (self,), None)

    def __invert__(self):
        return self._apply("invert", (self,), None)

    def __divmod__(self, other):
        if _defer(other):
            return NotImplemented
        return self // other, self % other

    def __rdivmod__(self, other):
        if _defer(other):
            return NotImplemented
        return self._apply("floor_divide", (other, self), None), \
            self._apply("mod", (other, self), None)

    def __matmul__(self, other):
        if _defer(other):
            return NotImplemented
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        if _defer(other):
            return NotImplemented
        return np.matmul(other, self)
