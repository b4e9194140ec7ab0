"""NumPy's protocols: ``__array_ufunc__`` (registry operations and the
ufuncs of jitted functions run here; the rest on NumPy views) and
``__array_function__`` (the table of :mod:`.functions`; the rest on NumPy
views), with the operand mapping both share."""

from __future__ import annotations

import numpy as np

from .. import ufuncs as _ufuncs
from ..errors import CKValueError
from . import operators as _operators
from .base import ArrayBase
from .functions import FUNCTIONS, _Unsupported
from .operators import REDUCE_OF_UFUNC, UFUNC_TO_OP, _numeric, _op_exists, _registry_op


class NumpyProtocols(ArrayBase):
    """Mixin: ``__array_ufunc__`` and ``__array_function__``."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy ufuncs: those the kernel registry has run as
        ``ckernels.ops.<name>(*inputs, out=...)`` (results are arrays of this
        class, ``out=`` included; ``numpy.add(a, b)`` is ``ckernels.ops.add(a,
        b)``); the others run on NumPy views (host) or raise TypeError
        (device)."""
        cls = type(self)
        for x in inputs + tuple(kwargs.get("out", ()) or ()):
            if isinstance(x, ArrayBase):
                if not isinstance(x, cls):
                    return NotImplemented
            elif not isinstance(x, (np.ndarray, np.generic)) and \
                    getattr(type(x), "__array_ufunc__", None) is not None:
                return NotImplemented   # a foreign duck array (dask, xarray): theirs
        out = kwargs.get("out")
        if out is not None:
            out = out if isinstance(out, tuple) else (out,)
        plain = not (set(kwargs) - {"out"})
        owner = _ufuncs.function_of(ufunc)
        if owner is not None:
            # The ufunc of a jitted function or registry operation: a plain call
            # runs through its owner's general path (this array's target).
            if method == "__call__" and plain and (out is None or len(out) == 1):
                return owner(*inputs, out=out[0]) if out else owner(*inputs)
            if not isinstance(owner, _operators._OPERATIONS.Op):
                # a jitted function's kernel: NumPy views
                return self._numpy_ufunc(ufunc, method, inputs, kwargs)
        name = UFUNC_TO_OP.get(ufunc.__name__, ufunc.__name__)
        if method == "__call__" and plain and name is not None and ufunc.nout == 1 and \
                _numeric(inputs) and _op_exists(name):
            dst = out[0] if out else None
            if dst is not None and not isinstance(dst, cls):
                dst = None if not isinstance(dst, np.ndarray) else dst
                if dst is not None:
                    r = _registry_op(name)(*inputs)
                    np.copyto(dst, r.to_numpy(), casting="same_kind")
                    return dst
            return _registry_op(name)(*inputs, out=dst)
        if method == "reduce" and ufunc.__name__ in REDUCE_OF_UFUNC and len(inputs) == 1 and \
                isinstance(inputs[0], ArrayBase) and \
                set(kwargs) <= {"axis", "keepdims", "out", "dtype"} and \
                kwargs.get("dtype") is None and inputs[0].dtype.kind in "biufc":
            a = inputs[0]
            r = a._reduction(REDUCE_OF_UFUNC[ufunc.__name__], kwargs.get("axis", 0),
                             out[0] if out else None, kwargs.get("keepdims", False))
            return r
        return self._numpy_ufunc(ufunc, method, inputs, kwargs)

    def _numpy_ufunc(self, ufunc, method, inputs, kwargs):
        back = []          # (array, NumPy copy) written by NumPy: assigned back after
        # ufunc.at writes into its first operand
        args = [_writable_operand(x, back) if method == "at" and i == 0 else
                _to_numpy_operand(x, False) for i, x in enumerate(inputs)]
        orig_out = kwargs.get("out")
        if orig_out is not None:
            kwargs = dict(kwargs, out=tuple(_writable_operand(x, back) for x in orig_out))
        result = getattr(ufunc, method)(*args, **kwargs)
        _write_back(back)
        if orig_out is not None:   # results written through views: hand back the originals
            return orig_out[0] if len(orig_out) == 1 else tuple(orig_out)
        return _map_results(self, result)

    # ------------------------------------------------------- NumPy: functions --
    def __array_function__(self, func, types, args, kwargs):
        """NumPy functions: those in :data:`FUNCTIONS` run here (over the
        primitives); the rest run on NumPy views (host) or raise TypeError
        (device)."""
        cls = type(self)
        for t in types:
            if issubclass(t, ArrayBase) and not issubclass(t, cls) and \
                    not issubclass(cls, t):
                return NotImplemented
            if not issubclass(t, (ArrayBase, np.ndarray)):
                return NotImplemented
        impl = FUNCTIONS.get(func)
        if impl is not None:
            try:
                return impl(*args, **kwargs)
            except _Unsupported:
                pass
        return self._numpy_function(func, args, kwargs)

    def _numpy_function(self, func, args, kwargs):
        back = []          # (array, NumPy copy) written by NumPy: assigned back after
        written = _WRITES_INTO.get(func, ())
        # numpy.place crashes on StringDType (NumPy 2.4): an object copy there
        as_object = func is np.place
        conv_args = [_writable_operand(a, back, as_object) if i in written else
                     _map_operands(a, False) for i, a in enumerate(args)]
        conv_kwargs = {k: (_map_writable(v, back) if k == "out" else _map_operands(v, False))
                       for k, v in kwargs.items()}
        result = func(*conv_args, **conv_kwargs)
        _write_back(back)
        if "out" in kwargs and kwargs["out"] is not None:
            return kwargs["out"]
        return _map_results(self, result)


def _to_numpy_operand(x, writable: bool):
    return x._numpy_view(writable) if isinstance(x, ArrayBase) else x


def _map_operands(x, writable: bool):
    if isinstance(x, ArrayBase):
        return x._numpy_view(writable)
    if isinstance(x, (list, tuple)):
        return type(x)(_map_operands(v, writable) for v in x)
    return x


#: NumPy functions that write into positional arguments (by position); any
#: function's ``out=`` is written too
_WRITES_INTO = {np.put: (0,), np.putmask: (0,), np.place: (0,), np.copyto: (0,),
                np.fill_diagonal: (0,), np.put_along_axis: (0,)}


def _writable_operand(x, back: list, as_object: bool = False):
    """``x`` for NumPy to write into: an array's writable NumPy view when its
    memory has one (NumPy writes into the array itself; a read-only array is
    refused there), else a NumPy copy recorded in ``back`` and assigned back
    after the call (strings, structs holding strings: the writes are not lost)."""
    if not isinstance(x, ArrayBase):
        return x
    if x._numpy_exact():
        return x._numpy_view(True)
    if not x.flags.writeable:
        raise CKValueError("assignment destination is read-only")
    copy = np.array(x._numpy_view(False), copy=True)
    if as_object and copy.dtype.kind == "T":
        copy = copy.astype(object)
    back.append((x, copy))
    return copy


def _map_writable(x, back: list):
    if isinstance(x, (list, tuple)):
        return type(x)(_map_writable(v, back) for v in x)
    return _writable_operand(x, back)


def _write_back(back: list) -> None:
    for arr, copy in back:
        arr._assign(copy)


def _map_results(self, r):
    if isinstance(r, np.ndarray):
        return self._wrap_numpy(r)
    if isinstance(r, tuple) and not hasattr(r, "_fields"):
        return tuple(_map_results(self, v) for v in r)
    if isinstance(r, list):
        return [_map_results(self, v) for v in r]
    return r
