"""``ckernels.ops``: every operation of the C kernel registry, callable on arrays.

>>> import ckernels, numpy as np
>>> ckernels.ops.add([1, 2, 3], 10).to_list()
[11, 12, 13]
>>> ckernels.ops.add(np.arange(3), 10)
array([10, 11, 12])
>>> ckernels.ops.sum(ckernels.array([[1, 2], [3, 4]]), axis=0).to_list()
[4, 6]

Each registry operation is an :class:`Op` (``ckernels.ops.add``, ``ckernels.ops.sqrt``,
...; ``dir(ckernels.ops)`` lists them); calling it applies the operation elementwise
with NumPy broadcasting.  An ``Op`` is a :class:`ckernels._ufuncs.Function`, like a
jitted function: calls on NumPy operands (arrays, NumPy and Python scalars, pandas,
xarray and dask objects) go, in C, to the operation's NumPy ufunc (:attr:`Op.ufunc`,
one loop per registry kernel whose types NumPy has; NumPy scalars come out of scalar
calls, and every ufunc keyword and method works); calls on ckernels arrays, lists and
strings run through the library's dimension kernels (``ck_array_apply_op``, parallel
for large arrays), writing into ``out=`` when given.  Reductions (``sum``,
``product``, ``min``, ``max``, ``any``, ``all``) take ``axis`` and ``keepdims``.

Python scalars combine with arrays by NumPy 2's rule for "weak" scalars (NEP 50,
:func:`ckernels.dtypes.weak_scalar_type`, the rule the jit uses too):
``int8_array + 1`` stays int8, ``int8_array + 1.5`` becomes float64, and
``int8_array + 300`` raises ``OverflowError`` (300 does not fit int8), as in
NumPy.
"""

from __future__ import annotations

import builtins
import sys

import numpy as np

from . import _ufuncs, _foreign, dtypes, ufuncs
from .host import array as _array
from .host import dictionary as _dictionary
from . import arraylike as _arraylike
from . import types as _t
from . import _threads
from ._cargs import c_address, c_size, c_text
from ._native import c_text_out, check, ffi, lib
from .host.array import Array
from .routing import CONTAINERS, DASK, runs_on
from .device.array import DeviceArray
from .device.nulls import DeviceOptionArray
from .errors import CKTypeError, InvalidArgumentError
from .kernels import errmode_value

_REDUCTIONS = {"sum": "sum", "product": "product", "prod": "product", "min": "min",
               "max": "max", "any": "any", "all": "all"}


_UFUNC_SLOT = _ufuncs.Function.ufunc


#: binary operations whose reductions may run over several axes (and
#: axis=None) although they have no identity: NumPy's "reorderable, no
#: identity" ufuncs
_REORDERABLE = frozenset({"minimum", "maximum", "fmin", "fmax"})


class Op(_ufuncs.Function):
    """A named operation of the kernel registry.

    Callable like a ufunc (see the module docstring): NumPy operands go to
    :attr:`ufunc`, ckernels arrays, lists and strings to the registry's
    kernels through ``ck_array_apply_op``."""

    __slots__ = ("name", "_op", "_built", "__weakref__")

    def __init__(self, name: str):
        op = ffi.new("const ck_op **")
        check(lib.ck_op_find(c_text(name, "operation name"), op))
        # NumPy datetime64/timedelta64 operands take the general path too (the
        # ufunc has no loops for them): NumPy arrays out (_numpy_time_result)
        super().__init__(None, Op._general, (Array, DeviceArray), "OSUTMm",
                         wrappers=_dictionary.wrapped_call)
        self.name = name
        self._op = op[0]
        self._built = False

    @property
    def ufunc(self):
        """The operation's ``numpy.ufunc``: one loop per registry kernel whose
        types all have NumPy dtypes, types resolved as :meth:`resolve` does,
        ``identity`` that of NumPy's ufunc of the same name; None when no
        kernel has NumPy types.  Built on first use, rebuilt after kernels are
        registered into the operation."""
        if not self._built:
            self._build()
        return _UFUNC_SLOT.__get__(self)

    def _build(self) -> None:
        np_uf = getattr(np, self.name, None)
        identity = None
        if isinstance(np_uf, np.ufunc) and np_uf.nin == self.arity == 2:
            identity = np_uf.identity
        uf = _ufuncs.op_ufunc(self.name, dtypes.DTYPE_OF_ID, identity=identity,
                                reorderable=identity is not None or self.name in _REORDERABLE,
                                doc=f"The ckernels registry operation {self.name!r}.")
        if not _ufuncs.loops(uf):
            uf = None
        else:
            ufuncs.adopt(uf, self, self.name, __name__)
        _UFUNC_SLOT.__set__(self, uf)
        self._built = True

    def _changed(self) -> None:
        """Kernels were registered or removed: the next call rebuilds the ufunc."""
        _UFUNC_SLOT.__set__(self, None)
        self._built = False

    def __reduce__(self):
        return (_op_named, (self.name,))

    @property
    def arity(self) -> int:
        return lib.ck_op_arity(self._op)

    @property
    def signatures(self) -> list[str]:
        """``["(int8, int8) -> int8", ...]``"""
        text = c_text_out(lib.ck_op_signatures, self._op)
        return [s if s.startswith("(") else "(" + s for s in text.split(", (")] if text else []

    def resolve(self, *types) -> str:
        """The return type for these argument types (after promotion)."""
        ids = ffi.new("ck_type_id[]", [_t.as_type(t).type_id for t in types])
        ret = ffi.new("ck_type_id *")
        check(lib.ck_op_resolve(self._op, len(types), ids, ret, ffi.NULL))
        return _t.ID_NAMES.get(ret[0], "invalid")

    def _general(self, *args, out: Array | None = None, **kwargs):
        """The general path (the fallback of the C call); the first call also
        builds the ufunc and goes through it if it can."""
        if not self._built:
            self._build()
            if _UFUNC_SLOT.__get__(self) is not None:
                return self(*args, out=out, **kwargs)
        if kwargs:
            raise TypeError(f"{self.name}() got unexpected keyword argument(s) "
                            f"{', '.join(map(repr, kwargs))}: only out= applies to "
                            "ckernels arrays, lists and strings (NumPy operands take "
                            "every ufunc keyword)")
        if len(args) != self.arity:
            raise InvalidArgumentError(f"{self.name} takes {self.arity} argument(s), "
                                       f"got {len(args)}")
        if out is None:     # a dictionary column: once per distinct value
            res = _dictionary.per_value(self, args)
            if res is not NotImplemented:
                return res
        where = runs_on(args, out)
        if where is CONTAINERS:   # pyarrow, polars, pandas, dask Series in and out
            from . import containers
            return containers.call(self, args, None, out)
        if where is DASK:   # lazy: a dask graph (ckernels.dask)
            from . import dask as _dask
            return _dask.call(self, args, out)
        if where is not None:    # device arrays: the operation runs on their device
            return where._apply(self.name, args, out)
        result = _array.apply_op(self.name, args, out)
        if out is not None:
            return out
        all_scalar = not builtins.any(isinstance(a, (Array, np.ndarray, list, tuple))
                                      for a in args)
        if _numpy_time_operands(args):    # NumPy's M8/m8 in: NumPy out, as np.add
            res = np.asarray(result)
            return res[()] if all_scalar and res.ndim == 0 else res
        return result.tolist() if all_scalar and result.ndim == 0 else result

    def __repr__(self) -> str:
        sigs = self.signatures
        shown = ", ".join(sigs[:4]) + (f", ... ({len(sigs)} kernels)" if len(sigs) > 4 else "")
        return f"<ckernels.ops.{self.name} {shown}>"


def _numpy_time_operands(args) -> bool:
    """Whether a call has NumPy datetime64/timedelta64 operands and otherwise
    only NumPy arrays and scalars and Python numbers (its result is NumPy's)."""
    time = False
    for a in args:
        if isinstance(a, (np.ndarray, np.generic)):
            time = time or a.dtype.kind in "Mm"
        elif not isinstance(a, (bool, int, float)):
            return False
    return time


def _reduce(opname: str):
    def reduce(a, axis=None, keepdims: bool = False):
        if _foreign.is_xarray(a):   # over its data (NumPy or dask): it stays xarray
            return a.reduce(_reduce_data, axis=axis, keepdims=keepdims)
        if _foreign.is_dask_collection(a):   # a lazy dask reduction (ckernels.dask)
            from . import dask as _dask
            return _dask.reduce(opname, a, axis, keepdims)
        if isinstance(a, (DeviceArray, DeviceOptionArray)):   # on its device (0-d for all axes)
            return a._reduction(opname, axis, None, keepdims)
        result = _array.reduce_op(opname, a, axis, keepdims)
        if result.ndim:
            return result
        # a full reduction: a NumPy scalar, as numpy.sum gives
        if result.type.is_builtin:
            return result._scalar()
        if result.dtype.kind in "Mm":      # instants, durations: NumPy's scalars
            return np.asarray(result)[()]
        return result.tolist()

    def _reduce_data(x, axis=None):
        """``reduce`` of an xarray object's data: NumPy in, NumPy out."""
        r = reduce(x, axis)
        return np.asarray(r) if isinstance(r, Array) else r
    reduce.__name__ = opname
    reduce.__doc__ = (f"{opname} over `axis` (int, tuple, or None for all), "
                      "NumPy result types, `keepdims` keeps reduced axes as size 1.")
    return reduce


from . import errors as _errors  # noqa: E402

sum = _reduce("sum")  # noqa: A001
product = prod = _reduce("product")
min = _reduce("min")  # noqa: A001
max = _reduce("max")  # noqa: A001
any = _reduce("any")  # noqa: A001
all = _reduce("all")  # noqa: A001


def names() -> list[str]:
    """Names of every registered operation."""
    return [ffi.string(lib.ck_op_name_at(i)).decode() for i in range(lib.ck_op_count())]


def register_kernel(name: str, ret, args, single: int, strided: int) -> Op:
    """Register C entry points (addresses of ``ck_expr_single_t`` /
    ``ck_expr_strided_t`` functions without kernel data) as ``name(args) -> ret``;
    returns ``ckernels.ops.<name>``, whose ufunc then has the new loop."""
    ids = ffi.new("ck_type_id[]", [_t.as_type(t).type_id for t in args])
    check(lib.ck_op_register_kernel(c_text(name, "operation name"), len(args),
                                    _t.as_type(ret).type_id, ids,
                                    ffi.cast("ck_expr_single_t",
                                             c_address(single, "register_kernel: single")),
                                    ffi.cast("ck_expr_strided_t",
                                             c_address(strided, "register_kernel: strided"))))
    registry_changed(name)
    return __getattr__(name)


def registry_changed(name: str) -> None:
    """Kernels of operation ``name`` were registered or removed (by
    :func:`register_kernel`, :meth:`ckernels.JitKernel.register`, ...):
    ``ckernels.ops.<name>`` rebuilds its ufunc on its next use."""
    op = _cache.get(name)
    if op is not None:
        op._changed()


def _op_named(name: str) -> Op:
    """Unpickling: ``ckernels.ops.<name>``."""
    return __getattr__(name)


_cache: dict[str, Op] = {}


def __getattr__(name: str) -> Op:
    if name.startswith("__"):
        raise AttributeError(name)
    op = _cache.get(name)
    if op is None:
        try:
            op = Op(name)
        except _errors.CKernelError:
            raise AttributeError(f"ckernels.ops has no operation {name!r}; "
                                 f"registered: {', '.join(names())}") from None
        _cache[name] = op
    return op


def __dir__() -> list[str]:
    return sorted(set(names()) | set(_REDUCTIONS) | {"names", "register_kernel", "Op",
                                                       "registry_changed"})


def assign(dst: Array, src, errmode: str = "default") -> Array:
    """``dst[...] = src`` with broadcasting and checked conversion
    (errmode: nocheck, overflow, fractional, inexact, default)."""
    if isinstance(dst, np.ndarray):
        dst = _array.asarray(dst)
    if not isinstance(dst, Array):
        raise CKTypeError("assign: the destination must be a ckernels.Array or NumPy array")
    if not isinstance(src, Array):
        src = _array.asarray(src) if isinstance(src, np.ndarray) and src.dtype.kind not in "OUST" \
            else _array.array(src)
    check(lib.ck_array_assign(dst._a, src._a, errmode_value(errmode)))
    return dst


def set_num_threads(n: int) -> None:
    """Threads (caller included) used by large lifted operations; 0 = default:
    ``CK_NUM_THREADS``, else in a Dask worker process the worker's share of
    the host's cores (:func:`ckernels.dask.worker_threads`), else
    ``OMP_NUM_THREADS``, else ``NUMBA_NUM_THREADS``, else the CPUs this
    process may run on (``docs/dispatch.md``, "Threads").  A count other than
    0 stays until the next call."""
    n = c_size(n, "set_num_threads: n", max=lib.CK_MAX_THREADS)
    check(lib.ck_set_num_threads(n))
    _threads.explicit = n != 0   # the Dask worker rule leaves an explicit count alone
    if n == 0 and "distributed" in sys.modules:
        from . import dask as _dask
        _dask.apply_worker_thread_rule()


def get_num_threads() -> int:
    """The threads (caller included) large lifted operations use now (see
    :func:`set_num_threads` for where the count comes from)."""
    return lib.ck_get_num_threads()


# NumPy ufuncs on ckernels arrays (ArrayLike.__array_ufunc__) run through this module.
_arraylike.use_operations(sys.modules[__name__])
