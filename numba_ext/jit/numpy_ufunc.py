"""The NumPy face of a jitted function: its ufunc or gufunc and the ufunc methods.

:class:`NumpyUfunc` is a mixin of :class:`ckernels.jit.kernel.JitKernel` (as
Numba's ``np/ufunc/`` keeps the ufunc builder apart from the dispatcher): it
builds the NumPy ufunc (one loop per compiled numeric signature, compiled
lazily through a compile hook for functions without signatures) or the gufunc
of signatures with core dims, keeps it in the ``ufunc`` slot of
:class:`ckernels._ufuncs.Function`, and gives ``reduce``, ``accumulate``,
``outer`` and ``at``.  It uses the kernel's ``compile``, ``_compiled``,
``_explicit``, ``_lock`` and ``identity``.
"""

from __future__ import annotations

import numpy as np

from .. import _ufuncs, _foreign, dtypes, ufuncs
from ..host.array import Array
from ..host.array import asarray as _asarray
from ..types import option as _option
from .._native import ffi
from ..errors import InvalidStateError, NotSupportedError
from . import dims as _dims
from . import time_elements
from .cpu import Compiled
from .signature import SUPPORTED_TYPES, Signature

#: dtype kinds of NumPy operands that take the general path (strings come
#: out as strings; structured arrays are struct arrays there; datetime64 and
#: timedelta64 are zero-copy time arrays there, and a NumPy array of the
#: result's M8/m8 dtype comes back)
_FALLBACK_KINDS = "OSUTVMm"
#: ... of functions with ``string`` loops: NumPy text (``StringDType``, ``U``,
#: ``S``) goes to the ufunc; object arrays to the general path, which makes
#: their text ``StringDType`` (``ckernels.string_operands``) before calling the ufunc
_TEXT_FALLBACK_KINDS = "OVMm"

#: the ``ufunc`` slot of :class:`ckernels._ufuncs.Function`
_UFUNC_SLOT = _ufuncs.Function.ufunc


class NumpyUfunc:
    """The ufunc/gufunc of a :class:`~ckernels.jit.kernel.JitKernel` (a mixin)."""

    def _make_ufunc(self):
        """A new ufunc with the loops of every compiled numeric signature (of
        the function's arity), or None when there is none; compiled lazily
        (a compile hook) for functions without signatures of fixed arity."""
        if any(c.core for c in self._compiled.values()):
            return self._make_gufunc()
        lazy = not self._explicit
        nin = self._ufunc_nin
        if nin is None and not lazy:
            for comp in self._compiled.values():
                if ufuncs.numpy_dtypes(comp.sig.args + (comp.sig.ret,)) is not None:
                    nin = self._ufunc_nin = len(comp.sig.args)
                    break
        if nin is None or not 1 <= nin <= _ufuncs.MAX_NIN:
            return None
        uf = _ufuncs.ufunc(self.__name__, nin, doc=self.__doc__, identity=self.identity,
                             compile=self._compile_for if lazy else None)
        loops = 0
        for comp in self._compiled.values():
            loops += self._add_loop_to(uf, comp)
        if not loops and not lazy:
            return None
        return ufuncs.adopt(uf, self, self.__qualname__, self.__module__)

    def _make_gufunc(self):
        """A NumPy gufunc over the signatures with core dims when they are all
        fixed/symbolic, share one gufunc signature (``"(n),(n)->()"``) and have
        NumPy dtypes; else None (the general path serves every call)."""
        comps = [c for c in self._compiled.values() if c.core]
        layouts = {_dims.gufunc_signature(c.sig.ret, c.sig.args) for c in comps}
        if len(layouts) != 1 or None in layouts:
            return None
        loops = []
        for c in comps:
            dts = _dims.numpy_dtypes(c.sig)
            if dts is not None:
                loops.append((int(ffi.cast("uintptr_t", c.desc)), dts))
        if not loops:
            return None
        uf = _ufuncs.gufunc(self.__name__, layouts.pop(), loops, doc=self.__doc__)
        return ufuncs.adopt(uf, self, self.__qualname__, self.__module__)

    def _set_ufunc(self, uf) -> None:
        _UFUNC_SLOT.__set__(self, uf)

    def _add_loop_to(self, uf, comp: Compiled) -> bool:
        dts = ufuncs.numpy_dtypes(comp.sig.args + (comp.sig.ret,))
        if dts is None or len(comp.sig.args) != uf.nin:
            return False
        _ufuncs.add_jit_loop(uf, int(ffi.cast("uintptr_t", comp.desc)), dts)
        return True

    def _add_loop(self, comp: Compiled) -> None:
        """A signature was compiled: its loop joins the ufunc (a new ufunc once
        the old one has resolved calls and takes no new loops)."""
        if not self._ufunc_made:
            return
        if comp.core:      # a gufunc is made whole (NumPy checks its signature)
            self._set_ufunc(self._make_gufunc())
            return
        uf = self.ufunc
        if uf is None:
            if self._explicit:     # perhaps the first numeric signature
                self._set_ufunc(self._make_ufunc())
            return
        try:
            self._add_loop_to(uf, comp)
        except InvalidStateError:
            self._set_ufunc(self._make_ufunc())

    def _compile_for(self, in_dtypes, out_dtype) -> None:
        """The lazy ufunc's compile hook: compile the signature of these NumPy
        dtypes (``dtype=`` / ``signature=`` fix the result: when the inputs
        have a signature with another result, compile the homogeneous
        signature of the result type, whose loop NumPy then casts the inputs
        to) and add its loop."""
        args = tuple(self._type_of_dtype(d) for d in in_dtypes)
        ret = None if out_dtype is None else self._type_of_dtype(out_dtype)
        with self._lock:
            have = self._compiled.get(args)
            if have is not None and ret is not None and have.sig.ret != ret:
                args = (ret,) * len(args)
                other = self._compiled.get(args)
                if other is not None and other.sig.ret != ret:
                    raise TypeError(
                        f"{self.__name__}: no loop with result {ret} for inputs "
                        f"({', '.join(have.sig.args)}) can be compiled: the function has "
                        f"{self.__name__}{have.sig.text[len(have.sig.ret):]} -> "
                        f"{have.sig.ret} and {self.__name__}"
                        f"{other.sig.text[len(other.sig.ret):]} -> {other.sig.ret}")
            comp = self.compile(Signature(ret, args))
            uf = self.ufunc
            if uf is not None and not self._add_loop_to(uf, comp):
                raise _ufuncs.Fallback(
                    f"{self.__name__}{comp.sig.text[len(comp.sig.ret):]} returns "
                    f"{comp.sig.ret}, which has no NumPy dtype: call {self.__name__}(...) "
                    "itself (the ckernels path)")

    def _type_of_dtype(self, dt) -> str:
        if np.dtype(dt).kind in "TUS":   # NumPy text: the string loops take it
            return "string"
        if np.dtype(dt).kind in "Mm":    # an instant / duration of the dtype's unit
            return _time_name(self.__name__, np.dtype(dt))
        d = dtypes.of_numpy(dt)
        if d is None or not d.jit:
            raise TypeError(f"{self.__name__}: NumPy dtype {np.dtype(dt)} is not an "
                            f"element type of jitted kernels ({', '.join(SUPPORTED_TYPES)})")
        return d.name

    def _the_ufunc(self, method: str):
        uf = self.ufunc
        if uf is None:
            raise NotSupportedError(
                f"{self.__name__}.{method}: no NumPy ufunc (it has no signature whose "
                "types all have NumPy dtypes, or several arities)")
        return uf

    def reduce(self, array, *args, **kwargs):
        """``numpy.ufunc.reduce`` of :attr:`ufunc` (binary functions): ``axis``,
        ``dtype``, ``out``, ``keepdims``, ``initial``, ``where``.  Empty
        reductions and reductions over several axes need ``identity=`` at
        decoration (as NumPy's ufuncs without an identity).  A dask array gives a
        lazy Dask reduction (:func:`ckernels.dask.ufunc_reduce`)."""
        if _foreign.is_xarray(array):   # xarray maps it over its data: it stays xarray
            return _xarray_reduce(array, self.reduce, args, kwargs)
        if _foreign.is_dask_collection(array):
            from .. import dask as _dask
            return _dask.ufunc_reduce(self, array, *args, **kwargs)
        if isinstance(array, Array) and array.type.dtype.is_option:
            return self._reduce_nulls(array, *args, **kwargs)
        return self._the_ufunc("reduce").reduce(array, *args, **kwargs)

    def _reduce_nulls(self, array, axis=0, *, keepdims=False, skip_nulls=True):
        """``reduce`` of a ``?T`` array: nulls skipped (Arrow's and pandas'
        rule; a lane of nulls only, or an empty one, gives a null), or with
        ``skip_nulls=False`` a null wherever the lane has one.  Over all of a
        1-d array or ``axis=None``: the valid values reduced; over an axis of a
        multi-dimensional array: NumPy's ``where=`` reduction, which needs
        ``identity=`` at decoration."""
        uf = self._the_ufunc("reduce")
        valid = np.asarray(array.is_valid())
        fill = 0 if self.identity is None else self.identity
        if time_elements.is_time_name(str(array.type.dtype.value_type)):
            # ?datetime / ?timedelta: the fill (under the nulls, never read) in
            # the values' unit (an int is no time value)
            fill = np.array(fill).astype(array.type.dtype.value_type.to_numpy_dtype())[()]
        values = np.asarray(array.fill_null(fill))
        if axis is None or array.ndim == 1:
            if not skip_nulls and not valid.all():
                res = None
            else:
                kept = values[valid]
                res = uf.reduce(kept) if kept.size else None
            if not keepdims or res is None:
                return res
            return _asarray(np.full((1,) * array.ndim, res))
        if self.identity is None:
            raise NotSupportedError(
                f"{self.__name__}.reduce: nulls are skipped along an axis of a "
                f"{array.ndim}-d array with NumPy's where= reduction, which needs "
                f"identity= at decoration (or reduce over axis=None)")
        res = np.asarray(uf.reduce(values, axis=axis, where=valid, initial=self.identity,
                                   keepdims=keepdims))
        nulls = ~(valid.all(axis=axis, keepdims=keepdims) if not skip_nulls
                  else valid.any(axis=axis, keepdims=keepdims))
        out = _asarray(res).astype(_option(str(_asarray(res).type.dtype)))
        flat = out.reshape(-1) if out.ndim != 1 else out
        for i in np.flatnonzero(nulls):
            flat[int(i)] = None
        return out

    def accumulate(self, array, *args, **kwargs):
        """``numpy.ufunc.accumulate`` of :attr:`ufunc` (binary functions)."""
        return self._the_ufunc("accumulate").accumulate(array, *args, **kwargs)

    def outer(self, a, b, /, **kwargs):
        """``numpy.ufunc.outer`` of :attr:`ufunc` (binary functions)."""
        return self._the_ufunc("outer").outer(a, b, **kwargs)

    def at(self, a, indices, *b):
        """``numpy.ufunc.at`` of :attr:`ufunc`: unbuffered in place ``a[indices] =
        f(a[indices], *b)`` (repeated indices applied repeatedly)."""
        return self._the_ufunc("at").at(a, indices, *b)


def _time_name(fname: str, dt: np.dtype) -> str:
    """The jit type of a ``datetime64`` / ``timedelta64`` dtype of a lazy
    ufunc's operand.  NumPy's promoter sees the unitless DType only (the
    units are resolved per call, ``src/python/ufuncs/time_loops.c``): that
    one compiles in nanoseconds to learn the result's DType, and every
    call then compiles the loop of its operands' units."""
    unit, count = np.datetime_data(dt)
    if unit == "generic":
        dt = np.dtype(f"{dt.kind}8[ns]")
    elif count != 1:
        raise TypeError(f"{fname}: NumPy dtype {dt} (a multiple of a unit) is not an element "
                        f"type of jitted kernels: cast it to {dt.kind}8[{unit}] first")
    el = time_elements.of_numpy(dt.newbyteorder("="))
    if el is None:
        raise TypeError(f"{fname}: NumPy dtype {dt} is not an element type of jitted kernels "
                        f"(time units Y, M, W, D, h, m, s, ms, us, ns)")
    return el.name


def _numpy_text(args, out) -> bool:
    """Whether a call for the string loops is NumPy's: arrays (no structured
    ones, no datetime64 / timedelta64), NumPy scalars, Python numbers and ``str`` / ``bytes``, with an
    array among them (object arrays of text are converted first)."""
    arrays = False
    for a in (*args, out):
        if isinstance(a, np.ndarray):
            if a.dtype.kind in "VMm":     # structs, times: the general path
                return False
            arrays = True
        elif isinstance(a, (np.datetime64, np.timedelta64)):
            return False
        elif not (a is None or isinstance(a, (np.generic, bool, int, float, complex, str,
                                              bytes))):
            return False
    return arrays


def _xarray_reduce(array, reduce, args, kwargs):
    """``f.reduce(array, ...)`` of an xarray object: xarray maps it over its data
    (NumPy or dask) and keeps its dims and coordinates."""
    kw = dict(zip(("axis", "dtype", "out", "keepdims", "initial", "where"), args))
    kw.update(kwargs)
    axis = kw.pop("axis", 0)
    keepdims = kw.pop("keepdims", False)
    return array.reduce(lambda x, axis=None: reduce(x, axis=axis, **kw), axis=axis,
                        keepdims=keepdims)
