"""The fast path of host arrays, Python side: small numeric calls on
:class:`~ckernels.host.array.Array` run as NumPy ufunc calls over the arrays'
cached NumPy views (``Array._nd``), with the result wrapped in C without a copy.

The C half is ``ckernels._arrays`` (``src/python/arrays/arrays.c``: ``apply``,
``wrap_result``, ``reduce_all``, ``Array.__array_ufunc__``; ``Subscript``,
the subscript of ``Array``, is ``src/python/arrays/subscript.c``); this
module holds what both halves share -- the registry operations by name
(:data:`OPS`), the strided types of NumPy arrays by (dtype, ndim)
(:data:`STRIDED_OF`), the NumPy ufuncs that run as registry operations
(:data:`UFUNC_OPS`) -- and the Python versions of the rules
(:func:`fast_apply`), taken when the C half declines (an operand whose view is
not cached yet).  :func:`install` gives ``Array`` its operators, unary
operators and whole-array reductions (fast path first, else
:class:`~ckernels.arraylike.ArrayLike`'s general methods) and hands the class
and the caches to the C half; :mod:`ckernels.host.array` calls it once, with
the class, when it defines it.
"""

from __future__ import annotations

import numpy as np

from .. import _arrays
from .. import arraylike as _al
from .. import dtypes as _dtypes
from .. import types as _t
from .. import ufuncs as _ufuncs
from ..arraylike import ArrayLike, _op_exists, _registry_op
from ..opnames import BINARY as _BINARY
from ..opnames import COMPARE as _COMPARE
from ..opnames import UFUNC_TO_OP
from ..errors import CKernelError
from .arrmeta import _addr, strided

_DTYPE_OF_ID = _dtypes.DTYPE_OF_ID   # ck_type_id -> NumPy dtype (results of reductions)

#: the host array class (``install``)
_ARRAY = None


class _Slow:
    """Marker: the fast path does not apply, take the general one."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<slow path>"


SLOW = _Slow()
#: errors of a fast-path call that are the answer (kernel errors; floating-point
#: conditions under ``numpy.errstate(...="raise")``); any other refusal by NumPy
#: sends the call to the general path, which raises its own error
PROPAGATE = (CKernelError, FloatingPointError)
#: Python scalars the fast path hands to ufuncs as they are (bool, and the
#: NEP 50 weak int, float and complex, as the general path treats them)
WEAK = frozenset({bool, int, float, complex})


def scalar_fits_out(x, odt: np.dtype) -> bool:
    """Whether the Python scalar ``x`` goes with an ``out=`` of dtype ``odt``
    without a cast: a bool with any builtin type, a weak scalar when the NEP
    50 rule keeps ``odt`` (``dtypes.weak_matches``: the library's
    ``ck_weak_result``, as ``_arrays.apply`` in C asks it)."""
    d = _dtypes.of_numpy(odt)
    return d is not None and (type(x) is bool or _dtypes.weak_matches(d.name, x))
UFUNC_OPS: dict = {}   # NumPy ufunc -> registry operation name (hits only)


def ufunc_op(ufunc) -> str:
    """The registry operation a NumPy ufunc call runs as (``""``: none; the
    general ``__array_ufunc__`` decides): NumPy's ufuncs by name
    (``UFUNC_TO_OP``), a registry operation's ufunc by its owner; jitted
    functions' ufuncs keep their own path."""
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1:
        return ""
    owner = _ufuncs.function_of(ufunc)
    if owner is not None:
        name = owner.name if isinstance(owner, _al.operators._OPERATIONS.Op) else None
    else:
        name = UFUNC_TO_OP.get(ufunc.__name__, ufunc.__name__)
    if not name or not _op_exists(name):
        return ""
    if len(UFUNC_OPS) < 4096:
        UFUNC_OPS[ufunc] = name
    return name


def fast_apply(name: str, args, out):
    """The registry operation ``name`` on ``args`` through its NumPy ufunc
    (``ckernels.ops.<name>`` called with ndarrays: the C dispatcher, NumPy's
    broadcasting and overlap handling, the registry's kernels), with the
    operands' cached views and the result wrapped without a copy; ``SLOW``
    when the general path must run: an operand that is not a numeric host
    array with strided dims or a Python scalar, an ``out=`` that would need a
    cast, and any refusal by NumPy (type resolution, casting, scalar range:
    the general path then raises its own error, as before)."""
    nds = []
    for x in args:
        tx = type(x)
        if tx is _ARRAY:
            nd = x._nd
            if nd is None:
                nd = x._fast_view()
            if nd is False:
                return SLOW
            nds.append(nd)
        elif tx in WEAK:
            nds.append(x)
        else:
            return SLOW
    op = OPS.get(name)
    if op is None:
        op = operation(name)
    if out is None:
        try:
            r = op(*nds)
        except PROPAGATE:
            raise
        except Exception:
            return SLOW
        if type(r) is np.ndarray:
            return wrap_result(r)
        if isinstance(r, np.generic):   # a ufunc's 0-d result
            return wrap_result(np.asarray(r))
        return r if type(r) is _ARRAY else SLOW
    if type(out) is not _ARRAY:
        return SLOW
    ond = out._nd
    if ond is None:
        ond = out._fast_view()
    if ond is False or not ond.flags.writeable:
        return SLOW
    odt = ond.dtype
    for x, nd in zip(args, nds):
        if nd is x:
            if not scalar_fits_out(x, odt):
                return SLOW
        elif nd.dtype != odt:
            return SLOW
    try:
        # casting="no": the loop's types are exactly out's (else the general
        # path converts, with its own checks)
        op(*nds, out=ond, casting="no")
    except PROPAGATE:
        raise
    except Exception:
        return SLOW
    return out


def wrap_result(arr: np.ndarray):
    """A host array over ``arr``, a ufunc's new result that nobody else
    holds: it becomes the array's cached view as well (one C call)."""
    return _arrays.wrap_result(arr)


def wrap_ndarray(arr: np.ndarray, _wrap=_arrays.wrap_result):
    """A host array sharing ``arr``'s memory (strided dims over its dtype;
    an external memblock keeps ``arr`` alive): one C call.  ``arr`` is a
    caller's array: its own attributes may change later (``arr.shape = ...``),
    so the fast path's view is made anew from the C array, not ``arr``."""
    a = _wrap(arr)
    a._nd = None
    return a


def strided_of(dtype: np.dtype, ndim: int) -> tuple:
    """(element Type, strided Type, its ``ck_type`` address) of NumPy arrays
    of ``dtype`` and ``ndim`` dims (cached: ``STRIDED_OF``)."""
    dtype_t = _t.from_numpy_dtype(dtype)
    t = strided(dtype_t, ndim)
    cached = (dtype_t, t, _addr(t.c_type))
    if len(STRIDED_OF) < 1024:
        STRIDED_OF[(dtype, ndim)] = cached
    return cached


OPS: dict = {}   # registry operation name -> ckernels.ops.<name> (an Op: it rebuilds
                  # its ufunc itself when the registry changes)


def operation(name: str):
    op = OPS.get(name)
    if op is None:
        op = OPS[name] = _registry_op(name)
    return op


def operators(stem: str, name: str, forms: str):
    """Array's operator methods for the registry operation ``name``: the fast
    path (:func:`fast_apply` inlined for one or two operands) first, else
    ArrayLike's (the general path, NumPy's binop deferral included)."""
    apply = _arrays.apply

    def call(x, y):
        nd = x._nd
        if nd is None:
            nd = x._fast_view()
        ty = type(y)
        if ty is _ARRAY:
            o = y._nd
            if o is None:
                o = y._fast_view()
        elif ty in WEAK:
            o = y
        else:
            return SLOW
        if nd is False or o is False:
            return SLOW
        op = OPS.get(name)
        if op is None:
            op = operation(name)
        return op, nd, o

    def binary(self, other, reflect, general):
        """self <op> other (other <op> self when ``reflect``): the C fast path,
        the registry op's ufunc over cached views, else the general path."""
        r = apply(name, None, other, self) if reflect else apply(name, None, self, other)
        if r is not NotImplemented:
            return r
        c = call(self, other)
        if c is not SLOW:
            try:
                r = c[0](c[2], c[1]) if reflect else c[0](c[1], c[2])
            except PROPAGATE:
                raise
            except Exception:
                r = None
            if type(r) is np.ndarray:
                return wrap_result(r)
        return general(self, other)

    def forward(self, other, _general=getattr(ArrayLike, f"__{stem}__")):
        return binary(self, other, False, _general)

    def reflected(self, other, _general=getattr(ArrayLike, f"__r{stem}__", None)):
        return binary(self, other, True, _general)

    def inplace(self, other, _general=getattr(ArrayLike, f"__i{stem}__", None)):
        if apply(name, self, self, other) is NotImplemented and \
                fast_apply(name, (self, other), self) is SLOW:
            return _general(self, other)
        return self

    out = {f"__{stem}__": forward}
    if "r" in forms:
        out[f"__r{stem}__"] = reflected
    if "i" in forms:
        out[f"__i{stem}__"] = inplace
    for mname, f in out.items():
        f.__name__ = mname
        f.__qualname__ = f"Array.{mname}"
        f.__doc__ = getattr(ArrayLike, mname).__doc__
    return out


def unary(mname: str, name: str):
    def unary(self, _general=getattr(ArrayLike, mname), _apply=_arrays.apply):
        r = _apply(name, None, self)
        if r is not NotImplemented:
            return r
        nd = self._nd
        if nd is None:
            nd = self._fast_view()
        if nd is not False:
            op = OPS.get(name)
            if op is None:
                op = operation(name)
            try:
                r = op(nd)
            except PROPAGATE:
                raise
            except Exception:
                r = None
            if type(r) is np.ndarray:
                return wrap_result(r)
        return _general(self)
    unary.__name__ = mname
    unary.__qualname__ = f"Array.{mname}"
    unary.__doc__ = getattr(ArrayLike, mname).__doc__
    return unary




def reduction(method: str, name: str):
    """Array's ``method`` (``sum``, ``min``, ...) over all elements: one C call
    (``_arrays.reduce_all``: ``ck_array_reduce``, the same kernels and
    result type as the general path) giving the NumPy scalar; any argument
    takes ArrayLike's general method."""
    cname = name.encode()
    general = getattr(ArrayLike, method)

    def reduction(self, *args, **kwargs):
        if not args and not kwargs:
            nd = self._nd
            if nd is None:
                nd = self._fast_view()
            if nd is not False:
                r = _arrays.reduce_all(cname, self._ad, _DTYPE_OF_ID)
                if r is not None:
                    return r
        return general(self, *args, **kwargs)
    reduction.__name__ = method
    reduction.__qualname__ = f"Array.{method}"
    reduction.__doc__ = general.__doc__
    return reduction


STRIDED_OF: dict = {}   # (NumPy dtype, ndim) -> (element Type, strided Type, address)


def install(array_class) -> None:
    """Give ``array_class`` (:class:`~ckernels.host.array.Array`) its fast
    operators and reductions and set up the C half (``_arrays.setup``) with
    the class and the caches of this module."""
    global _ARRAY
    _ARRAY = array_class
    for m, name in (("sum", "sum"), ("prod", "product"), ("min", "min"), ("max", "max"),
                    ("any", "any"), ("all", "all")):
        setattr(array_class, m, reduction(m, name))
    for stem, name in _BINARY.items():
        for m, f in operators(stem, name, "ri").items():
            setattr(array_class, m, f)
    for stem, name in _COMPARE.items():
        for m, f in operators(stem, name, "").items():
            setattr(array_class, m, f)
    for m, name in (("__neg__", "negative"), ("__abs__", "absolute"), ("__invert__", "invert")):
        setattr(array_class, m, unary(m, name))
    # the C side of the fast path (ckernels._arrays.apply / wrap_result) works on
    # the same caches as the Python side
    _arrays.setup(array_class, {k: array_class.__dict__[k] for k in array_class.__slots__
                                if k != "__weakref__"},
                  OPS, STRIDED_OF, CKernelError, strided_of,
                  (ArrayLike.__getitem__, ArrayLike.__setitem__, ArrayLike.__delitem__))
    array_class.__array_ufunc__ = _arrays.array_ufunc_method(
        UFUNC_OPS, array_class._array_ufunc_general)
