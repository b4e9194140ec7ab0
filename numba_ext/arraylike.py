"""The NumPy-like surface of ckernels arrays, written once for every array class.

:class:`ArrayLike` is a mixin: host arrays (:class:`ckernels.Array`) and device
arrays (:class:`ckernels.DeviceArray`) derive from it and provide a handful of
*primitives*; everything a NumPy user reaches for (attributes, operators,
indexing, ``reshape``/``astype``/``copy``/``fill``, reductions, ``repr``,
``__array_ufunc__`` and ``__array_function__``) is written here, once, over
them.  See ``docs/arrays.md`` for the user-facing description.

Primitives a class provides (the whole interface; nothing else is assumed)
--------------------------------------------------------------------------
``shape``
    tuple of dim sizes (a var dim below axis 0 reports ``-1``).
``strides``
    tuple of byte strides (a var dim: its elements' stride).
``type``
    the :class:`ckernels.types.Type` of the whole array (dims and element).
``dtype``
    the NumPy dtype of the elements wherever one exists (see ``docs/arrays.md``).
``context``
    the :class:`ckernels.Context` holding the data.
``_view(key)``
    basic indexing: ``key`` is a tuple of ints and slices, one per leading
    axis (``len(key) <= ndim``); returns a view (an array of the same class,
    0-d when every axis is indexed).  Errors: ``IndexError`` subclasses.
``_strided_view(k, shape, strides, offset=0, readonly=False)``
    a view whose leading ``k`` dims (fixed/strided, never var) are replaced by
    ``len(shape)`` strided dims of these sizes and byte strides, the data
    moved by ``offset`` bytes; what lies below the ``k`` dims is unchanged.
    The view must stay inside the memory ``self`` can reach (checked).
``_scalar()``
    the value of a 0-d array of a scalar element type: a NumPy scalar for
    builtin types, ``str`` for strings (``bytes``, ``dict`` for others).
``_empty(shape, element)``
    a new, uninitialised, C-contiguous array in the same context: strided
    dims of ``shape`` over ``element`` (a :class:`~ckernels.types.Type`,
    possibly with dims of its own, e.g. ``var * int32``).
``_assign(value, errmode="default")``
    ``self[...] = value`` with broadcasting and checked conversion
    (``value``: a scalar, a nested list, a NumPy array or an array of this
    class).
``_apply(name, args, out)``
    the registry operation ``name`` (``"add"``, ``"sqrt"``, ...) applied
    elementwise to ``args`` (arrays of this class, NumPy arrays, Python
    scalars; NEP 50 for the scalars) with broadcasting, into ``out`` when
    it is not None; returns the result array (``out`` when given).
``_reduce(name, axis, keepdims)``
    the reduction ``name`` (``sum``, ``product``, ``min``, ``max``, ``any``,
    ``all``) over ``axis`` (``None`` or a tuple of normalised axes); returns
    an array (0-d for a full reduction without ``keepdims``).
``to_numpy()``
    a host copy as a :class:`numpy.ndarray`.
``_numpy_view(writable)``
    a NumPy array sharing this array's memory, for NumPy functions the
    library does not implement; host arrays give one (a copy of read-only
    operands whose type has no zero-copy view), device arrays raise
    ``TypeError`` (no silent host copies).
``_wrap_numpy(arr)``
    a NumPy result of such a function, made an array of this class (or
    returned as it is when the class cannot hold it).
``_from_value(value)``
    ``value`` (a scalar, nested list, NumPy array) as an array of this class
    in the same context (type inferred; ``concatenate``/``where`` use it).
``_numpy_exact()``
    whether ``_numpy_view`` shows exactly this array's elements (no
    conversion): advanced indexing then takes NumPy's path.

Optional (defaults here): ``_take(indices)`` (the elements at the outer
product of per-axis index lists, as NumPy; ``repr`` uses it to fetch only
the elements it shows), ``_var_size()`` (``size`` of an array with var dims),
``tolist()``, ``item()``, ``copy()`` and ``astype()``.

The module imports nothing above :mod:`ckernels.types`, so both array
classes can use it without import cycles.
"""

from __future__ import annotations

import builtins
import math
import numbers
import operator
import warnings

import numpy as np

from . import types as _t
from . import ufuncs as _ufuncs
from .errors import CKIndexError, CKTypeError, CKValueError, NotSupportedError

# ------------------------------------------------------------------ names --
#: NumPy ufunc names whose registry operation has another name
UFUNC_TO_OP = {"remainder": "mod", "true_divide": "divide", "abs": "absolute",
               "conjugate": None}
#: ufunc.reduce of these ufuncs is the library reduction named here
REDUCE_OF_UFUNC = {"add": "sum", "multiply": "product", "minimum": "min", "maximum": "max",
                   "logical_or": "any", "logical_and": "all", "fmin": "min", "fmax": "max"}

_BINARY = {  # dunder stem -> registry op
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "mod", "pow": "power", "lshift": "left_shift",
    "rshift": "right_shift", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}


def _op_exists(name: str) -> bool:
    """Whether the kernel registry has an operation ``name`` (asked each time
    for a miss: users may register operations at any time)."""
    if name in _KNOWN_OPS:
        return True
    from ._cargs import c_text   # the C registry, below this module
    from ._native import ffi, lib
    from .errors import CKernelError
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
    if isinstance(other, (ArrayLike, np.ndarray, np.generic, numbers.Number, str, bytes,
                          list, tuple)):
        _PLAIN_OPERANDS.add(type(other))
        return False
    au = getattr(type(other), "__array_ufunc__", False)
    return au is None or au is not False


#: registry operation -> the NumPy ufunc of the same meaning
OP_TO_UFUNC = {"mod": "remainder"}


def _numeric(args) -> bool:
    """Whether every array operand has a builtin numeric element type (the
    registry's kernels); other operands (strings, structs) take NumPy's
    ufuncs through :meth:`ArrayLike.__array_ufunc__` instead."""
    for a in args:
        if isinstance(a, ArrayLike) and a.dtype.kind not in "biufc":
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


class AxisError(CKIndexError, np.exceptions.AxisError):
    """An axis out of range: both ``ckernels.errors.CKIndexError`` and
    NumPy's ``AxisError`` (so ``IndexError`` and ``ValueError``)."""

    def __init__(self, axis: int, ndim: int):
        Exception.__init__(self, f"axis {axis} is out of bounds for array of dimension "
                                 f"{ndim}")
        self.axis, self.ndim = axis, ndim

    def __str__(self) -> str:
        return str(self.args[0])


def normalize_axis(axis, ndim: int) -> tuple | None:
    """``None`` or a tuple of distinct axes in ``[0, ndim)`` (NumPy's rules and
    messages: ``AxisError``, a ``ValueError`` and ``IndexError``)."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, numbers.Integral) or hasattr(axis, "__index__") \
        and not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for ax in axes:
        ax = operator.index(ax)
        if not -ndim <= ax < ndim:
            raise AxisError(ax, ndim)
        ax %= ndim if ndim else 1
        if ax in out:
            raise CKValueError("duplicate value in 'axis'")
        out.append(ax)
    return tuple(out)


def c_strides(shape, itemsize: int) -> tuple:
    """Byte strides of a C-contiguous array."""
    st, acc = [], itemsize
    for s in reversed(shape):
        st.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(st))


def reshape_strides(shape, strides, newshape, itemsize: int):
    """Strides that view (shape, strides) as ``newshape`` without a copy (C
    order), or None when no such view exists (NumPy's rule)."""
    if math.prod(shape) == 0:
        return c_strides(newshape, itemsize)
    old = [(s, st) for s, st in zip(shape, strides) if s != 1]
    odims = [s for s, _ in old]
    ostr = [st for _, st in old]
    new = list(newshape)
    nstr = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(odims):
        np_, op = new[ni], odims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= odims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if ostr[ok] != odims[ok + 1] * ostr[ok + 1]:
                return None
        nstr[nj - 1] = ostr[oj - 1]
        for nk in range(nj - 1, ni, -1):
            nstr[nk - 1] = nstr[nk] * new[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = nstr[ni - 1] if ni >= 1 else itemsize
    for nk in range(ni, len(new)):
        nstr[nk] = last
    return tuple(nstr)


def shape_entry(s) -> int:
    """One entry of a shape argument: an integer (``operator.index``), never a
    bool (NumPy refuses ``True`` as a size)."""
    if isinstance(s, bool):
        raise CKTypeError(f"shape entries must be integers, not {s!r}")
    return operator.index(s)


def _as_shape(args) -> tuple:
    if len(args) == 1 and not isinstance(args[0], (numbers.Integral, np.integer)):
        args = tuple(args[0]) if args[0] is not None else ()
    return tuple(shape_entry(s) for s in args)


def _is_index_array(k) -> bool:
    """An integer-array or boolean-mask index (advanced indexing, a copy, even
    for a 0-d array as in NumPy); NumPy integer scalars index like ints."""
    if isinstance(k, (np.generic, str, bytes)):
        return isinstance(k, np.bool_)
    return isinstance(k, (list, np.ndarray, ArrayLike)) or hasattr(k, "__array__")


class _Unsupported(Exception):
    """Raised by an ``__array_function__`` implementation for arguments it does
    not handle: the call then takes the NumPy fallback."""


class Flags:
    """NumPy-style flags of an array (read-only): ``c_contiguous``,
    ``f_contiguous``, ``writeable``, ``aligned``, ``owndata``, and the ckernel
    access flags ``read``/``write``/``immutable``.  ``a.flags["C_CONTIGUOUS"]``
    and ``"write" in a.flags`` work too."""

    __slots__ = ("c_contiguous", "f_contiguous", "writeable", "aligned", "owndata", "read",
                 "write", "immutable")

    def __init__(self, **kw):
        for k in self.__slots__:
            object.__setattr__(self, k, bool(kw.get(k, False)))

    def __setattr__(self, name, value):
        raise AttributeError("array flags are read-only here (use set_readonly())")

    def __getitem__(self, key: str) -> bool:
        k = {"C": "c_contiguous", "F": "f_contiguous", "W": "writeable", "A": "aligned",
             "O": "owndata", "CONTIGUOUS": "c_contiguous", "FORTRAN": "f_contiguous",
             "WRITEABLE": "writeable"}.get(key.upper(), key.lower())
        if k not in self.__slots__:
            raise KeyError(key)
        return getattr(self, k)

    def __contains__(self, name: str) -> bool:
        return name in ("read", "write", "immutable") and getattr(self, name)

    def __eq__(self, other):
        if isinstance(other, tuple):   # the access flags by name, as before
            return tuple(n for n in ("read", "write", "immutable") if getattr(self, n)) == other
        return isinstance(other, Flags) and all(getattr(self, k) == getattr(other, k)
                                                for k in self.__slots__)

    __hash__ = None

    def __repr__(self) -> str:
        return "\n".join(f"  {k.upper()} : {getattr(self, k)}" for k in self.__slots__)


class ArrayLike:
    """Mixin: the NumPy-like surface over the primitives listed in the module
    docstring.  ``__slots__ = ()`` so classes keep their own slots."""

    __slots__ = ()
    __array_priority__ = 20
    __hash__ = None   # mutable and compared elementwise, like ndarray

    # ---------------------------------------------------------- attributes --
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements (for var dims: counted, O(outer elements))."""
        shape = self.shape
        if any(s < 0 for s in shape):
            return self._var_size()
        return math.prod(shape)

    def _var_size(self) -> int:
        return builtins.sum(x.size for x in self)

    @property
    def itemsize(self) -> int:
        """Bytes of one element (of the innermost non-dim type)."""
        return self.type.dtype.data_size

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (``size * itemsize``; string/var-dim payloads
        in arenas are not counted, as NumPy's ``StringDType``)."""
        return self.size * self.itemsize

    @property
    def T(self):
        """The transposed view (``transpose()``)."""
        return self.transpose()

    def _regular_ndim(self) -> int:
        """Leading dims that are fixed or strided (above the first var dim)."""
        n, t = 0, self.type
        while t.type_id in _REGULAR_DIMS:
            n += 1
            t = t.element
        return n

    def _element_below(self, k: int) -> "_t.Type":
        t = self.type
        for _ in range(k):
            t = t.element
        return t

    # ------------------------------------------------------------- Python --
    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object (a 0-d array)")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    def __contains__(self, value) -> bool:
        return bool((self == value).any())

    def _size1(self, what: str):
        if self.ndim != 0:
            raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars "
                            f"({what}() of an array of shape {self.shape})")
        return self._scalar()

    def __bool__(self) -> bool:
        size = self.size
        if size == 0:
            raise ValueError("The truth value of an empty array is ambiguous. Use "
                             "`array.size > 0` to check that an array is not empty.")
        if size > 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.reshape(()).item())

    def __int__(self) -> int:
        return int(self._size1("int"))

    def __float__(self) -> float:
        return float(self._size1("float"))

    def __complex__(self) -> complex:
        return complex(self._size1("complex"))

    def __index__(self) -> int:
        if self.ndim != 0 or self.dtype.kind not in "iub" or self.dtype.kind == "b":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return operator.index(self._scalar())

    def item(self, *args):
        """The one element as a Python scalar (``item(i, j)``: that element)."""
        v = self[args] if args else self
        if not isinstance(v, ArrayLike):
            return v.item() if isinstance(v, np.generic) else v
        if v.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        v = v.reshape(()) if v.ndim else v
        s = v._scalar()
        return s.item() if isinstance(s, np.generic) else s

    def tolist(self):
        """Nested Python lists of Python scalars (as ``ndarray.tolist``)."""
        return self.to_numpy().tolist()

    # ----------------------------------------------------------- operators --
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

    # ------------------------------------------------------------ indexing --
    def _expand_key(self, key):
        """(entries, has_ellipsis, advanced): the key with ``...`` expanded."""
        if not isinstance(key, tuple):
            key = (key,)
        elif any(isinstance(k, tuple) for k in key):   # x[:, (0, 2)]: an index sequence
            key = tuple(list(k) if isinstance(k, tuple) else k for k in key)
        n_ell = builtins.sum(1 for k in key if k is Ellipsis)
        if n_ell > 1:
            raise CKIndexError("an index can only have a single ellipsis ('...')")
        consumed = 0
        advanced = False
        for k in key:
            if k is None or k is Ellipsis:
                continue
            if isinstance(k, (bool, np.bool_)):
                advanced = True   # a 0-d boolean index (NumPy: adds a dim)
                continue
            if _is_index_array(k):
                advanced = True
                arr = _index_array(k)
                consumed += arr.ndim if arr.dtype == np.bool_ else 1
            else:
                consumed += 1
        ndim = self.ndim
        if consumed > ndim:
            raise CKIndexError(f"too many indices for array: array is {ndim}-dimensional, "
                               f"but {consumed} were indexed")
        if n_ell:
            i = next(j for j, k in enumerate(key) if k is Ellipsis)
            key = key[:i] + (slice(None),) * (ndim - consumed) + key[i + 1:]
        return key, bool(n_ell), advanced

    def __getitem__(self, key):
        tk = type(key)
        if tk is int or tk is slice:   # the common case first
            view = self._view((key,))
            if tk is int and view.ndim == 0 and view._is_scalar_type():
                return view._scalar()
            return view
        if isinstance(key, str):
            return self._field(key)
        if isinstance(key, list) and key and all(isinstance(k, str) for k in key):
            raise NotSupportedError("selecting several struct fields at once; index one "
                                    "field at a time (a['x'])")
        entries, has_ell, advanced = self._expand_key(key)
        if advanced:
            return self._getitem_advanced(entries)
        basic = tuple(k if isinstance(k, slice) else _as_index(k)
                      for k in entries if k is not None)
        view = self._view(basic)   # a new view even for a[...] and a[()], as NumPy
        if any(k is None for k in entries):
            view = view._insert_axes([k is None for k in entries if not _is_int_key(k)])
        elif view.ndim == 0 and not has_ell and (basic or isinstance(key, tuple)) and \
                view._is_scalar_type():
            return view._scalar()
        return view

    def __setitem__(self, key, value) -> None:
        if isinstance(key, str):
            self._field(key)._assign(value)
            return
        entries, _, advanced = self._expand_key(key)
        if advanced:
            self._setitem_advanced(entries, value)
            return
        basic = tuple(k if isinstance(k, slice) else _as_index(k)
                      for k in entries if k is not None)
        view = self._view(basic) if basic else self
        if view.ndim == 0 and view.type.is_builtin and _is_sequence_value(value):
            raise CKValueError("setting an array element with a sequence.")
        view._assign(value)

    def __delitem__(self, key) -> None:
        raise CKValueError("cannot delete array elements")

    def _is_scalar_type(self) -> bool:
        t = self.type
        return t.is_builtin or t.type_id in _SCALAR_KINDS

    def _insert_axes(self, is_new: list) -> "ArrayLike":
        """A view with size-1 dims where ``is_new`` is True (``None`` in a key);
        the other entries walk the existing leading dims in order."""
        k = builtins.sum(1 for n in is_new if not n)
        k = max(k, 0)
        if k > self._regular_ndim():
            raise NotSupportedError("None (newaxis) between var dims")
        shape, strides = list(self.shape[:k]), list(self.strides[:k])
        new_shape, new_strides = [], []
        it = 0
        for n in is_new:
            if n:
                new_shape.append(1)
                new_strides.append(0)
            else:
                new_shape.append(shape[it])
                new_strides.append(strides[it])
                it += 1
        return self._strided_view(k, tuple(new_shape), tuple(new_strides))

    def _field(self, name: str):
        raise CKTypeError(f"an array of type '{self.type}' has no fields")

    # advanced (integer-array / boolean-mask) indexing: copies, as NumPy
    def _advanced_plan(self, entries):
        """Normalise an advanced key: (basic key for the view, the axes of that
        view indexed by arrays, the broadcast index arrays, where the new dims
        go).  Integers count as advanced indices, as in NumPy."""
        if any(k is None for k in entries):
            raise NotSupportedError("None (newaxis) combined with array indices")
        basic, adv_axes, arrays = [], [], []
        axis = 0
        for k in entries:
            if isinstance(k, slice):
                basic.append(k)
                axis += 1
            elif isinstance(k, (bool, np.bool_)) or _is_index_array(k):
                arr = _index_array(k)
                if arr.dtype == np.bool_:
                    if arr.ndim == 0:
                        raise NotSupportedError("0-d boolean indices")
                    shape = self.shape[axis:axis + arr.ndim]
                    if tuple(arr.shape) != tuple(shape):
                        raise CKIndexError(f"boolean index did not match indexed array along "
                                           f"axis {axis}; size of axis is {shape} but size "
                                           f"of boolean index is {arr.shape}")
                    for nz in np.nonzero(arr):
                        basic.append(slice(None))
                        adv_axes.append(axis)
                        arrays.append(nz)
                        axis += 1
                else:
                    basic.append(slice(None))
                    adv_axes.append(axis)
                    arrays.append(arr)
                    axis += 1
            else:
                basic.append(slice(None))
                adv_axes.append(axis)
                arrays.append(np.asarray(_as_index(k), dtype=np.intp))
                axis += 1
        try:
            arrays = np.broadcast_arrays(*arrays)
        except ValueError:
            raise CKIndexError("shape mismatch: indexing arrays could not be broadcast "
                               "together with shapes " +
                               " ".join(str(a.shape) for a in arrays)) from None
        for ax, arr in zip(adv_axes, arrays):
            n = self.shape[ax]
            if n >= 0 and arr.size and (arr.max() >= n or arr.min() < -n):
                bad = arr.max() if arr.max() >= n else arr.min()
                raise CKIndexError(f"index {bad} is out of bounds for axis {ax} with size {n}")
        adjacent = adv_axes == list(range(adv_axes[0], adv_axes[0] + len(adv_axes)))
        return tuple(basic), adv_axes, arrays, adjacent

    def _getitem_advanced(self, entries):
        view = None
        if self._numpy_exact():
            try:
                view = self._numpy_view(False)
            except (TypeError, NotSupportedError):
                view = None
        if view is not None:
            r = view[tuple(_numpy_key(k) for k in entries)]
            if isinstance(r, np.generic) and self.type.dtype.is_builtin:
                return r   # ints and 0-d integer arrays for every dim: NumPy's scalar
            return self._wrap_numpy(np.array(r))
        basic, adv_axes, arrays, adjacent = self._advanced_plan(entries)
        v = self._view(basic)
        bshape = arrays[0].shape if arrays else ()
        kept = [ax for ax in range(len(basic)) if ax not in adv_axes]
        vk = len(basic)
        reg = v._regular_ndim()
        rest_shape = tuple(v.shape[ax] for ax in kept if ax < reg)
        if len(kept) != len(rest_shape):
            raise NotSupportedError("array indices next to var dims other than the outermost")
        before = [ax for ax in kept if ax < adv_axes[0]] if adjacent else []
        after = [ax for ax in kept if ax not in before]
        out_shape = (tuple(v.shape[ax] for ax in before) + tuple(bshape) +
                     tuple(v.shape[ax] for ax in after))
        out = v._empty(out_shape, v._element_below(vk))
        nb = len(before)
        for j in np.ndindex(*bshape):
            src_key = [slice(None)] * vk
            for ax, arr in zip(adv_axes, arrays):
                src_key[ax] = int(arr[j])
            src = v._view(tuple(src_key))
            # src's dims: `kept` in order; the result puts `before` dims first
            dst = out._view((slice(None),) * nb + tuple(j)) if nb or j else out
            dst._assign(src)
        return out

    def _setitem_advanced(self, entries, value):
        view = None
        if self._numpy_exact():
            try:
                view = self._numpy_view(True)
            except (TypeError, NotSupportedError):
                view = None
        if view is not None:
            key = tuple(_numpy_key(k) for k in entries)
            sel = view[key]   # the selected shape; values converted with our checks
            tmp = self._empty(np.shape(sel), self.type.dtype)
            tmp._assign(value)
            view[key] = tmp._numpy_view(False)
            return
        basic, adv_axes, arrays, adjacent = self._advanced_plan(entries)
        v = self._view(basic)
        bshape = arrays[0].shape if arrays else ()
        kept = [ax for ax in range(len(basic)) if ax not in adv_axes]
        before = [ax for ax in kept if ax < adv_axes[0]] if adjacent else []
        after = [ax for ax in kept if ax not in before]
        sel_shape = (tuple(v.shape[ax] for ax in before) + tuple(bshape) +
                     tuple(v.shape[ax] for ax in after))
        vals = v._empty(sel_shape, v._element_below(len(basic)))
        vals._assign(value)
        nb = len(before)
        for j in np.ndindex(*bshape):
            dst_key = [slice(None)] * len(basic)
            for ax, arr in zip(adv_axes, arrays):
                dst_key[ax] = int(arr[j])
            dst = v._view(tuple(dst_key))
            src = vals._view((slice(None),) * nb + tuple(j)) if nb or j else vals
            dst._assign(src)

    def _numpy_exact(self) -> bool:
        """Whether ``_numpy_view`` shows exactly this array (same elements, no
        conversion): builtin and plain struct element types, no var dims."""
        return False

    # ------------------------------------------------------- shape methods --
    def transpose(self, *axes):
        """A view with the dims permuted (reversed by default), as NumPy."""
        nd = self.ndim
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        axes = tuple(range(nd))[::-1] if axes is None or axes == () else \
            tuple(operator.index(a) % nd if nd else operator.index(a) for a in axes)
        if sorted(axes) != list(range(nd)):
            raise CKValueError(f"axes {axes} don't match an array of {nd} dimension(s)")
        if axes == tuple(range(nd)):
            return self._strided_view(0, (), ())
        if self._regular_ndim() < nd:
            raise NotSupportedError(f"transposing var dims ('{self.type}')")
        sh, st = self.shape, self.strides
        return self._strided_view(nd, tuple(sh[a] for a in axes), tuple(st[a] for a in axes))

    def swapaxes(self, axis1: int, axis2: int):
        axes = list(range(self.ndim))
        (a1,), (a2,) = normalize_axis(axis1, self.ndim), normalize_axis(axis2, self.ndim)
        axes[a1], axes[a2] = axes[a2], axes[a1]
        return self.transpose(axes)

    def reshape(self, *shape, order: str = "C"):
        """The same elements in another shape: a view when the strides allow,
        else a C-contiguous copy (as NumPy).  One ``-1`` is inferred."""
        if order not in ("C", "F", "A"):
            raise CKValueError(f"reshape: order must be 'C' or 'F', not {order!r}")
        newshape = list(_as_shape(shape))
        k = self._regular_ndim()
        if k < self.ndim:
            raise NotSupportedError(f"reshape of an array with var dims ('{self.type}')")
        size = math.prod(self.shape)
        if newshape.count(-1) > 1:
            raise CKValueError("can only specify one unknown dimension")
        if -1 in newshape:
            known = math.prod(s for s in newshape if s != -1)
            if known == 0 or size % known:
                raise CKValueError(f"cannot reshape array of size {size} into shape "
                                   f"{tuple(newshape)}")
            newshape[newshape.index(-1)] = size // known
        if any(s < 0 for s in newshape) or math.prod(newshape) != size:
            raise CKValueError(f"cannot reshape array of size {size} into shape "
                               f"{tuple(newshape)}")
        newshape = tuple(newshape)
        if order == "F":
            return self.transpose().reshape(newshape[::-1]).transpose()
        strides = reshape_strides(self.shape, self.strides, newshape, self.itemsize)
        if strides is None:
            return self.copy().reshape(newshape)
        return self._strided_view(k, newshape, strides)

    def ravel(self, order: str = "C"):
        """The elements in one dim (a view when possible).  ``order``: ``"C"``,
        ``"F"``; ``"A"`` is ``"F"`` for an F-contiguous array, else ``"C"``;
        ``"K"`` is memory order: the axes walked by decreasing stride (as NumPy
        for strides of one sign)."""
        if order in ("A", "K"):
            fl = self.flags
            if fl.f_contiguous and not fl.c_contiguous:
                order = "F"
            elif order == "K" and not fl.c_contiguous and self._regular_ndim() == self.ndim \
                    and self.ndim > 1:
                perm = sorted(range(self.ndim), key=lambda a: -builtins.abs(self.strides[a]))
                return self.transpose(perm).reshape(-1)
            else:
                order = "C"
        elif order not in ("C", "F"):
            raise CKValueError(f"ravel: order must be 'C', 'F', 'A' or 'K', not {order!r}")
        return self.reshape(-1, order=order)

    def flatten(self, order: str = "C"):
        return self.copy().reshape(-1, order=order) if order != "F" else \
            self.transpose().copy().reshape(-1)

    def take(self, indices, axis=None, out=None, mode: str = "raise"):
        """``numpy.take`` of this array (a new array; ``out=`` written)."""
        return np.take(self, indices, axis=axis, out=out, mode=mode)

    def repeat(self, repeats, axis=None):
        """``numpy.repeat`` of this array (a new array)."""
        return np.repeat(self, repeats, axis=axis)

    def squeeze(self, axis=None):
        nd = self.ndim
        axes = normalize_axis(axis, nd)
        if axes is None:
            axes = tuple(i for i, s in enumerate(self.shape) if s == 1)
        for ax in axes:
            if self.shape[ax] != 1:
                raise CKValueError("cannot select an axis to squeeze out which has size "
                                   "not equal to one")
        k = self._regular_ndim()
        if any(ax >= k for ax in axes):
            raise NotSupportedError("squeeze of var dims")
        keep = [i for i in range(k) if i not in axes]
        return self._strided_view(k, tuple(self.shape[i] for i in keep),
                                  tuple(self.strides[i] for i in keep))

    def broadcast_to(self, shape):
        """A read-only view broadcast to ``shape`` (``numpy.broadcast_to``)."""
        shape = _as_shape((shape,))
        k = self._regular_ndim()
        if k < self.ndim:
            raise NotSupportedError("broadcast_to of var dims")
        sh, st = self.shape, self.strides
        if len(shape) < len(sh):
            raise CKValueError(f"cannot broadcast shape {sh} to {shape}")
        pad = len(shape) - len(sh)
        new_st = [0] * pad
        for s, stride, want in zip(sh, st, shape[pad:]):
            if s == want:
                new_st.append(stride)
            elif s == 1:
                new_st.append(0)
            else:
                raise CKValueError(f"operands could not be broadcast together with remapped "
                                   f"shapes [original->remapped]: {sh} and requested "
                                   f"shape {shape}")
        return self._strided_view(k, shape, tuple(new_st), readonly=True)

    # ------------------------------------------------------- value methods --
    def copy(self, order: str = "C"):
        """A C-contiguous copy (same element type)."""
        k = self._regular_ndim()
        out = self._empty(self.shape[:k], self._element_below(k))
        out._assign(self)
        return out

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def astype(self, dtype, errmode: str = "default", *, copy: bool = True, casting=None):
        """A copy converted to the element type ``dtype`` (a NumPy dtype-like,
        a type string or a :class:`~ckernels.types.Type`), checked under
        ``errmode`` (``nocheck``, ``overflow``, ``fractional``, ``inexact``,
        ``default``).  ``casting="unsafe"`` is ``errmode="nocheck"``."""
        if casting is not None:
            errmode = "nocheck" if casting == "unsafe" else errmode
        el = _element_type(dtype)
        if not copy and el == self.type.dtype:
            return self
        k = self._regular_ndim()
        inner = self._element_below(k)
        target = _replace_dtype(inner, el)
        out = self._empty(self.shape[:k], target)
        out._assign(self, errmode)
        return out

    def fill(self, value) -> None:
        """Set every element to ``value`` (converted with the usual checks)."""
        self._assign(value)

    # --------------------------------------------------------- reductions --
    def _reduction(self, name, axis, out, keepdims, dtype=None):
        src = self if dtype is None else self.astype(dtype)
        axes = normalize_axis(axis, self.ndim)
        r = src._reduce(name, axes, bool(keepdims))
        if out is not None:
            out._assign(r) if isinstance(out, ArrayLike) else np.copyto(out, r.to_numpy())
            return out
        return r._scalar() if r.ndim == 0 else r

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """Sum over ``axis`` (NumPy result types; pairwise float sums)."""
        return self._reduction("sum", axis, out, keepdims, dtype)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return self._reduction("product", axis, out, keepdims, dtype)

    def min(self, axis=None, out=None, keepdims=False):
        return self._reduction("min", axis, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return self._reduction("max", axis, out, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return self._reduction("any", axis, out, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return self._reduction("all", axis, out, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """Arithmetic mean: the sum divided by the count, in float64 for
        integer and bool arrays, in the array's type for float and complex."""
        axes = normalize_axis(axis, self.ndim)
        n = math.prod(self.shape) if axes is None else math.prod(self.shape[a] for a in axes)
        src = self
        result_dtype = None
        if dtype is not None:
            src = self.astype(dtype)
        elif self.dtype.kind in "biu":
            src = self.astype("float64")
        elif self.dtype == np.float16:      # NumPy accumulates float16 in float32
            src, result_dtype = self.astype(np.float32), self.dtype
        if n == 0:
            warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
        s = src._reduce("sum", axes, bool(keepdims))
        r = s._apply("divide", (s, n if n else float("nan")), None) if n else \
            s._apply("multiply", (s, float("nan")), None)
        if r.dtype != s.dtype:
            r = r.astype(s.dtype, "nocheck")
        if result_dtype is not None:
            r = r.astype(result_dtype, "nocheck")
        if out is not None:
            out._assign(r)
            return out
        return r._scalar() if r.ndim == 0 else r

    # ---------------------------------------------------------- NumPy: ufuncs --
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy ufuncs: those the kernel registry has run as
        ``ckernels.ops.<name>(*inputs, out=...)`` (results are arrays of this
        class, ``out=`` included; ``numpy.add(a, b)`` is ``ckernels.ops.add(a,
        b)``); the others run on NumPy views (host) or raise TypeError
        (device)."""
        cls = type(self)
        for x in inputs + tuple(kwargs.get("out", ()) or ()):
            if isinstance(x, ArrayLike):
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
            if not isinstance(owner, _OPERATIONS.Op):   # a jitted function's kernel: NumPy views
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
                isinstance(inputs[0], ArrayLike) and \
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
            if issubclass(t, ArrayLike) and not issubclass(t, cls) and \
                    not issubclass(cls, t):
                return NotImplemented
            if not issubclass(t, (ArrayLike, np.ndarray)):
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

    # ------------------------------------------------------------- display --
    def _take(self, indices):
        """The elements at the outer product of the index lists ``indices``
        (one per leading axis) as a NumPy array; the default copies the whole
        array (classes override it to fetch only those elements)."""
        return np.asarray(self.to_numpy())[np.ix_(*indices)]

    def _format(self, prefix: str) -> tuple:
        """(values text, summarised): the values as NumPy prints them, fetching
        only the elements shown (time independent of the size)."""
        return format_values(self, prefix)

    def __str__(self) -> str:
        return self._format("")[0]


_REGULAR_DIMS = None   # filled below from the C enum
_SCALAR_KINDS = None


def _init_ids():
    global _REGULAR_DIMS, _SCALAR_KINDS
    from ._native import lib
    _REGULAR_DIMS = (lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM)
    _SCALAR_KINDS = (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES)


_init_ids()


def _is_sequence_value(v) -> bool:
    """A value with dims (a list, a tuple, an array of ndim >= 1): not one
    number, whatever its length (NumPy refuses it for one element)."""
    if isinstance(v, (list, tuple)):
        return True
    nd = getattr(v, "ndim", 0)
    return isinstance(nd, int) and nd > 0 and not isinstance(v, np.generic)


def _is_int_key(k) -> bool:
    return not (k is None or isinstance(k, slice))


def _as_index(k) -> int:
    if isinstance(k, (bool, np.bool_)):
        raise CKIndexError("boolean scalars are not supported as indices here")
    try:
        return operator.index(k)
    except TypeError:
        raise CKIndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                           "(`None`) and integer or boolean arrays are valid indices, not "
                           f"{type(k).__name__}") from None


def _index_array(k) -> np.ndarray:
    if isinstance(k, ArrayLike):
        k = k.to_numpy()
    arr = np.asarray(k)
    if arr.dtype == np.bool_:
        return arr
    if arr.size == 0 and arr.dtype.kind not in "iu":
        return arr.astype(np.intp)
    if arr.dtype.kind not in "iu":
        raise CKIndexError("arrays used as indices must be of integer (or boolean) type")
    return arr.astype(np.intp, copy=False)


def _numpy_key(k):
    if isinstance(k, ArrayLike):
        return k.to_numpy()
    return k


def _element_type(dtype) -> "_t.Type":
    if isinstance(dtype, _t.Type):
        return dtype
    if isinstance(dtype, np.dtypes.StringDType) or dtype is str:
        return _t.string
    return _t.as_type(dtype)


def _replace_dtype(t: "_t.Type", el: "_t.Type") -> "_t.Type":
    """``t`` with its innermost non-dim type replaced by ``el``."""
    if not t.is_dim:
        return el
    inner = _replace_dtype(t.element, el)
    from ._native import lib
    tid = t.type_id
    if tid == lib.CK_TYPE_FIXED_DIM:
        return _t.fixed_dim(t.fixed_size, inner)
    if tid == lib.CK_TYPE_STRIDED_DIM:
        return _t.strided_dim(inner)
    return _t.var_dim(inner)


def _to_numpy_operand(x, writable: bool):
    return x._numpy_view(writable) if isinstance(x, ArrayLike) else x


def _map_operands(x, writable: bool):
    if isinstance(x, ArrayLike):
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
    if not isinstance(x, ArrayLike):
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


# ---------------------------------------------------------------- display --
def _corner_indices(shape, edge: int):
    """Per axis: every index when the axis is short, else the first ``edge``,
    one filler and the last ``edge`` (NumPy never prints the filler)."""
    out = []
    for n in shape:
        if n > 2 * edge:
            out.append(np.r_[0:edge, edge, n - edge:n].astype(np.intp))
        else:
            out.append(np.arange(n, dtype=np.intp))
    return out


def format_values(a: ArrayLike, prefix: str) -> tuple:
    """``(text, summarised)``: the values of ``a`` formatted by NumPy's
    ``array2string`` (``separator=', '`` after a non-empty ``prefix``, as in a
    repr), summarised with ``...`` like NumPy past its print threshold; only
    the shown elements are fetched (``_take``)."""
    opts = np.get_printoptions()
    sep = ", " if prefix else " "
    k = a._regular_ndim()
    if k < a.ndim or not (a.dtype.kind in "biufcT" or a.dtype.fields is not None
                          or a.dtype.kind == "O"):
        return _format_nested(a, opts["edgeitems"], opts["threshold"]), False
    shape = a.shape
    size = math.prod(shape)
    summarised = size > opts["threshold"]
    if summarised:
        small = a._take(_corner_indices(shape, opts["edgeitems"]))
        text = np.array2string(small, threshold=0, edgeitems=opts["edgeitems"],
                               separator=sep, prefix=prefix)
    else:
        small = a._take([np.arange(n, dtype=np.intp) for n in shape]) if shape else \
            a.to_numpy()
        text = np.array2string(small, separator=sep, prefix=prefix, threshold=size + 1)
    return text, summarised


def _format_nested(a, edge: int, threshold: int) -> str:
    """Nested lists for types NumPy cannot show (var dims), each level
    summarised past ``2 * edge`` entries when the array is large."""
    budget = [threshold]

    def fmt(v, depth):
        if not isinstance(v, ArrayLike) or v.ndim == 0:
            val = v._scalar() if isinstance(v, ArrayLike) and v._is_scalar_type() else v
            if isinstance(val, ArrayLike):
                return repr(val.tolist())
            return repr(val.item() if isinstance(val, np.generic) else val)
        n = len(v)
        if n > 2 * edge and (budget[0] <= 0 or n > threshold):
            idx = list(range(edge)) + [None] + list(range(n - edge, n))
        else:
            idx = list(range(n))
        budget[0] -= n
        parts = ["..." if i is None else fmt(v[i], depth + 1) for i in idx]
        return "[" + ", ".join(parts) + "]"
    return fmt(a, 0)


# ------------------------------------------------------ __array_function__ --
#: NumPy function -> implementation over the primitives
FUNCTIONS: dict = {}


def implements(*funcs):
    def deco(impl):
        for f in funcs:
            FUNCTIONS[f] = impl
        return impl
    return deco


def _first(arrays):
    for x in arrays:
        if isinstance(x, ArrayLike):
            return x
    raise _Unsupported


def _result_element(arrays, dtype):
    if dtype is not None:
        return _element_type(dtype)
    els = [x.type.dtype if isinstance(x, ArrayLike) else None for x in arrays]
    if all(e is not None and e.is_builtin for e in els):
        from . import dtypes
        return _t.as_type(dtypes.promote(*[str(e) for e in els]))
    if all(e is not None and e == els[0] for e in els):
        return els[0]
    raise _Unsupported


@implements(np.concatenate)
def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    first = _first(arrays)
    arrays = [x if isinstance(x, ArrayLike) else first._from_value(x) for x in arrays]
    if axis is None:
        arrays = [x.ravel() for x in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise CKValueError("zero-dimensional arrays cannot be concatenated")
    (ax,) = normalize_axis(axis, nd)
    shape0 = list(arrays[0].shape)
    for x in arrays[1:]:
        if x.ndim != nd:
            raise CKValueError("all the input array dimensions except for the concatenation "
                               "axis must match exactly, but along dimension 0, the array at "
                               f"index 0 has {nd} dimension(s) and another has {x.ndim}")
        for d in range(nd):
            if d != ax and x.shape[d] != shape0[d]:
                raise CKValueError("all the input array dimensions except for the "
                                   "concatenation axis must match exactly, but along "
                                   f"dimension {d}, the arrays have sizes {shape0[d]} and "
                                   f"{x.shape[d]}")
    if any(x._regular_ndim() < nd for x in arrays):
        raise _Unsupported
    el = _result_element(arrays, dtype)
    total = builtins.sum(x.shape[ax] for x in arrays)
    shape = tuple(shape0[:ax]) + (total,) + tuple(shape0[ax + 1:])
    res = first._empty(shape, el) if out is None else out
    if out is not None and tuple(out.shape) != shape:
        raise CKValueError(f"Output array has wrong dimensionality {out.shape}, "
                           f"expected {shape}")
    pos = 0
    for x in arrays:
        n = x.shape[ax]
        res._view((slice(None),) * ax + (slice(pos, pos + n),))._assign(
            x, "nocheck" if casting == "unsafe" else "default")
        pos += n
    return res


@implements(np.stack)
def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    first = _first(arrays)
    arrays = [x if isinstance(x, ArrayLike) else first._from_value(x) for x in arrays]
    if not arrays:
        raise CKValueError("need at least one array to stack")
    shapes = {x.shape for x in arrays}
    if len(shapes) != 1:
        raise CKValueError("all input arrays must have the same shape")
    nd = arrays[0].ndim + 1
    (ax,) = normalize_axis(axis, nd)
    expanded = [x[(slice(None),) * ax + (None,)] for x in arrays]
    return _concatenate(expanded, axis=ax, out=out, dtype=dtype, casting=casting)


@implements(np.where)
def _where(condition, *xy):
    if not xy:
        cond = condition.to_numpy() if isinstance(condition, ArrayLike) else \
            np.asarray(condition)
        first = condition if isinstance(condition, ArrayLike) else _first(())
        return tuple(first._wrap_numpy(i) for i in np.nonzero(cond))
    if len(xy) != 2:
        raise CKValueError("either both or neither of x and y should be given")
    x, y = xy
    first = _first((condition, x, y))
    ops = [v if isinstance(v, ArrayLike) else first._from_value(v) for v in (condition, x, y)]
    cond, xa, ya = ops
    shape = np.broadcast_shapes(cond.shape, xa.shape, ya.shape)
    el = _result_element([xa, ya], None)
    res = first._empty(shape, el)
    res._assign(ya)
    mask = cond.broadcast_to(shape).astype("bool")
    sel = xa.broadcast_to(shape)[mask]
    res[mask] = sel
    return res


def _reduction_function(method):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if kw or not isinstance(a, ArrayLike):
            raise _Unsupported
        kwargs = {"axis": axis, "out": out, "keepdims": keepdims}
        if method in ("sum", "prod", "mean"):
            kwargs["dtype"] = dtype
        elif dtype is not None:
            raise _Unsupported
        return getattr(a, method)(**kwargs)
    return impl


for _f, _m in ((np.sum, "sum"), (np.prod, "prod"), (np.min, "min"), (np.max, "max"),
               (np.amin, "min"), (np.amax, "max"), (np.any, "any"), (np.all, "all"),
               (np.mean, "mean")):
    FUNCTIONS[_f] = _reduction_function(_m)
del _f, _m


@implements(np.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, ArrayLike):
        raise _Unsupported
    if where is True:
        dst._assign(src, "nocheck" if casting == "unsafe" else "default")
        return None
    mask = where.to_numpy() if isinstance(where, ArrayLike) else np.asarray(where, bool)
    mask = np.broadcast_to(mask, dst.shape)
    srcv = src if isinstance(src, ArrayLike) else dst._from_value(src)
    dst[mask] = srcv.broadcast_to(dst.shape)[mask]
    return None


def _like(fill):
    def impl(prototype, dtype=None, order="K", subok=True, shape=None, *args):
        if not isinstance(prototype, ArrayLike):
            raise _Unsupported
        value = args[0] if fill is _FULL else fill
        shp = prototype.shape if shape is None else _as_shape((shape,))
        k = prototype._regular_ndim()
        if shape is not None or dtype is not None:
            el = prototype.type.dtype if dtype is None else _element_type(dtype)
            out = prototype._empty(shp, el)
        else:
            out = prototype._empty(shp[:k], prototype._element_below(k))
        if value is not None:
            out._assign(value)
        return out
    return impl


_FULL = object()
FUNCTIONS[np.empty_like] = _like(None)
FUNCTIONS[np.zeros_like] = _like(0)
FUNCTIONS[np.ones_like] = _like(1)


@implements(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return _like(_FULL)(a, dtype, order, subok, shape, fill_value)


@implements(np.copy)
def _copy(a, order="K", subok=False):
    if not isinstance(a, ArrayLike):
        raise _Unsupported
    return a.copy()


@implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if not isinstance(a, ArrayLike):
        raise _Unsupported
    r = a.reshape(shape if shape is not None else newshape, order=order)
    return r.copy() if copy else r


@implements(np.transpose)
def _transpose(a, axes=None):
    if not isinstance(a, ArrayLike):
        raise _Unsupported
    return a.transpose(axes)


@implements(np.ravel)
def _ravel(a, order="C"):
    return a.ravel(order)


@implements(np.squeeze)
def _squeeze(a, axis=None):
    return a.squeeze(axis)


@implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    return array.broadcast_to(shape)


@implements(np.shape)
def _shape(a):
    return a.shape


@implements(np.ndim)
def _ndim(a):
    return a.ndim


@implements(np.size)
def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@implements(np.astype)
def _astype(x, dtype, /, *, copy=True, device=None):
    return x.astype(dtype, copy=copy)


__all__ = ["ArrayLike", "Flags", "FUNCTIONS", "implements", "format_values",
           "normalize_axis", "reshape_strides", "c_strides", "UFUNC_TO_OP", "REDUCE_OF_UFUNC"]
