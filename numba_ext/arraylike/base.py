"""The root of the shared array surface: attributes, conversion to Python
values, copies and element-type conversion (``astype``).

:class:`ArrayBase` is the base of every mixin of :mod:`ckernels.arraylike`
(the package's modules test ``isinstance(x, ArrayBase)``, true exactly for
the arrays of the library: every one is an :class:`~ckernels.arraylike.ArrayLike`);
:class:`Flags` is the NumPy-style ``flags`` object.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import types as _t

_REGULAR_DIMS = None   # filled below from the C enum
_SCALAR_KINDS = None


def _init_ids():
    global _REGULAR_DIMS, _SCALAR_KINDS
    from .._native import lib
    _REGULAR_DIMS = (lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM)
    _SCALAR_KINDS = (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES)


_init_ids()


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


class ArrayBase:
    """Mixin root: attributes, Python conversions and copies over the
    primitives (see :mod:`ckernels.arraylike`).  ``__slots__ = ()`` so
    classes keep their own slots."""

    __slots__ = ()

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

    def _is_scalar_type(self) -> bool:
        t = self.type
        return t.is_builtin or t.type_id in _SCALAR_KINDS

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
        if not isinstance(v, ArrayBase):
            return v.item() if isinstance(v, np.generic) else v
        if v.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        v = v.reshape(()) if v.ndim else v
        s = v._scalar()
        return s.item() if isinstance(s, np.generic) else s

    def tolist(self):
        """Nested Python lists of Python scalars (as ``ndarray.tolist``)."""
        return self.to_numpy().tolist()

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
    from .._native import lib
    tid = t.type_id
    if tid == lib.CK_TYPE_FIXED_DIM:
        return _t.fixed_dim(t.fixed_size, inner)
    if tid == lib.CK_TYPE_STRIDED_DIM:
        return _t.strided_dim(inner)
    return _t.var_dim(inner)
