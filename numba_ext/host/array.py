"""Host arrays: :class:`Array` over ``ck_array_preamble`` memblocks, and the
functions that make them.

An :class:`Array` behaves like a NumPy array (the surface is
:class:`ckernels.arraylike.ArrayLike`, shared with device arrays; see
``docs/arrays.md``) and holds any ckernel type: builtin scalars, strings, var
dims, structs.

* :func:`array` copies Python data (nested lists/tuples, str, bytes, dicts,
  NumPy arrays) into a new array, inferring the type when none is given:
  regular nesting gives ``strided`` dims, ragged lists give ``var`` dims,
  ``str`` gives ``string``, ``dict`` gives a struct.  ``dtype=`` fixes the
  element type, ``type=`` the whole type.
* :func:`asarray` shares memory with a NumPy array (builtin element types and
  aligned structs) and keeps it alive through an external memblock;
  ``numpy.asarray(a)`` shares the other way (``__array_interface__``, the
  buffer protocol, DLPack).
* :func:`empty`, :func:`zeros`, :func:`ones`, :func:`full`, the ``*_like``
  functions and :func:`arange` take NumPy's arguments.
* Integers and slices give views; integer arrays and boolean masks copies;
  ``a["x"]`` a view of a struct field.

An :class:`Array` owns one reference to its C array memblock.  Python values
are converted by :mod:`ckernels.host.convert`; the operators and whole-array
reductions take the fast path of :mod:`ckernels.host.fastpath` first; sharing
with NumPy, buffers, DLPack and Arrow is the mixin of
:mod:`ckernels.host.sharing`; arguments are checked by
:mod:`ckernels.host.arguments`.
"""

from __future__ import annotations

import atexit
import builtins
import math
import operator
import pickle
import threading
from typing import Any

import numpy as np

from .. import dtypes as _dtypes
from .. import types as _t
from .._cargs import c_shape, c_text
from .._native import check, ffi, lib
from ..arraylike import ArrayLike, Flags, c_strides, format_values
from ..arraylike.shapes import broadcast_shape
from ..errors import (CKIndexError, CKTypeError, CKValueError, InvalidArgumentError,
                      NotSupportedError)
from ..context.handle import shared
from ..memory import MemBlock, memblock_at
from ..types import Type
from . import convert as _convert
from . import fastpath as _fastpath
from . import records as _records
# ERRMODES and errmode_value are imported from here too (ckernels.kernels)
from .arguments import (ERRMODES, _BOUND, _SLICE_NONE, _array_type, _bound,  # noqa: F401
                        _creation_type, _element_type, _errmode, _index, _is_full_type,
                        _is_scalar, _legacy, _missing, _shape_arg, errmode_value)
from .convert import check_scalar as _check_scalar
from .convert import infer_type, read as _read
from .fastpath import SLOW as _SLOW
from .fastpath import STRIDED_OF as _STRIDED_OF
from .fastpath import fast_apply as _fast_apply
from .fastpath import strided_of as _strided_of
from .fastpath import wrap_ndarray as _wrap_ndarray
from .nulls import Nulls, set_null
from .nulls import first_text as _first_text
from .nulls import nans_to_none as _nans_to_none
from .nulls import text_nulls as _text_nulls
from .layout import (_BYTES, _FIXED, _STRIDED, _STRING, _STRUCT, _VAR, _addr, clear_var_slots,
                     count_elements, dim_kinds, has_pointer, has_var_anywhere, numpy_dtype)
from .layout import elem_id as _elem_id
from .layout import f_strides as _f_strides
from .layout import strided as _strided
from .sharing import Sharing

_OPTION = lib.CK_TYPE_OPTION

from .. import _arrays   # cheap NumPy <-> host array conversions (src/python/arrays/arrays.c)
from .. import _convert as _c_convert   # values <-> Python / NumPy text (src/python/convert/*.c)
from . import arrow as _arrow_io   # the Arrow PyCapsule interface (arrow.py)

# at exit, arrays still held by C objects are released after Python's state
# is gone: their NumPy owners are left alone then (as ckernels.memory does)
atexit.register(_arrays.stop)

try:   # the buffer protocol (PEP 3118): a tiny C base type (src/python/buffer/buffer.c)
    from .._buffer import BufferExporter as _Base
except ImportError:   # pragma: no cover - the extension is part of every build
    _Base = object
# the subscript (a[key], a[key] = value) in C: ints, slices and tuples of them
# on numeric strided arrays, else ArrayLike's general methods
# (src/python/arrays/subscript.c; fastpath.install hands it those methods)
# NumPy/buffer/DLPack/Arrow sharing (host/sharing.py) comes before ArrayLike:
# its _numpy_exact/_numpy_view/to_numpy are this class's primitives
_BASES: tuple = ((_Base,) if _Base is not object else ()) + (_arrays.Subscript, Sharing,
                                                             Nulls, ArrayLike)


# ---- the Python object ---------------------------------------------------------

class Array(*_BASES):
    """A ckernel array in host memory (a view of a C array memblock): the
    NumPy-like surface of :class:`ckernels.arraylike.ArrayLike` over any
    ckernel type.  Made by :func:`ckernels.array`, :func:`ckernels.asarray`,
    :func:`ckernels.empty` and friends, never by calling the class."""

    # _r: the owned reference to the C array, an ArrayRef (ckernels._arrays:
    # a C object that drops it when freed; no Python __del__), _ad its
    # address; _p the cffi pointer ``_a`` (made on first use).  Everything
    # else caches what never changes for one C array (its type, dims, data
    # and address are fixed at creation; only set_readonly changes the
    # flags, and it clears the caches that depend on them):
    #   _tp  Type            _dt  NumPy dtype
    #   _sh  shape           _st  strides              _bi  _buffer_info tuple
    #   _nd  the NumPy view of the fast path (see _fast_view): an ndarray,
    #        writable when the array is, or False when the array has none
    #        (fixed dims, var dims, strings, structs, non-native types)
    __slots__ = ("_r", "_p", "_tp", "_dt", "_ad", "_sh", "_st", "_bi", "_nd", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("use ckernels.array(obj, dtype=None, *, type=None), "
                        "ckernels.asarray(obj) or ckernels.empty(shape, dtype)")

    def __new__(cls, *args, **kwargs):
        raise TypeError("use ckernels.array(obj, dtype=None, *, type=None), "
                        "ckernels.asarray(obj) or ckernels.empty(shape, dtype)")

    @classmethod
    def _own(cls, ptr) -> "Array":
        """Wrap a ``ck_array_preamble *``, taking over one reference."""
        address = _addr(ptr)
        try:
            ref = _arrays.ref(address)
        except BaseException:
            lib.ck_array_decref(ptr)
            raise
        self = _new_instance(cls)
        self._r = ref
        self._p = ptr
        self._ad = address
        self._tp = self._dt = self._sh = self._st = self._bi = self._nd = None
        return self

    @classmethod
    def _own_address(cls, address: int) -> "Array":
        """Wrap the ``ck_array_preamble *`` at ``address`` (an int from
        :mod:`ckernels._arrays`), taking over one reference."""
        return cls._own(ffi.cast("ck_array_preamble *", address))

    @property
    def _a(self, _cast=ffi.cast, _ptr_t=ffi.typeof("ck_array_preamble *")):
        """The ``ck_array_preamble *`` (cffi), valid while this object lives."""
        p = self._p
        if p is None:
            p = self._p = _cast(_ptr_t, self._ad)
        return p

    @classmethod
    def _from_address(cls, address: int) -> "Array":
        """Wrap a ``ck_array_preamble *`` borrowed from C (adds a reference)."""
        ptr = ffi.cast("ck_array_preamble *", memblock_at(
            address, "Array._from_address", kind=lib.CK_MEMBLOCK_ARRAY,
            size=ffi.sizeof("ck_array_preamble")))
        lib.ck_array_incref(ptr)
        return cls._own(ptr)

    # ---- structure -------------------------------------------------------
    @property
    def address(self) -> int:
        """Address of the ``ck_array_preamble`` (valid while this object lives)."""
        return self._ad

    @property
    def memblock(self) -> MemBlock:
        """A new owning :class:`MemBlock` reference to this array's block."""
        return MemBlock(ffi.cast("ck_memblock *", self._a), incref=True)

    @property
    def type(self) -> Type:
        """The ckernel type of the whole array (dims and element)."""
        tp = self._tp
        if tp is None:
            tp = self._tp = Type._borrow(lib.ck_array_type(self._a))
        return tp

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the elements (:func:`numpy_dtype`: ``StringDType``
        for strings, ``object`` for structs holding strings/var dims)."""
        dt = self._dt
        if dt is None:
            row = _dtypes.by_id.get(_elem_id(self._a))
            dt = row.numpy if row is not None and row.numpy is not None else \
                numpy_dtype(self.type.dtype)
            self._dt = dt
        return dt

    @property
    def ndim(self) -> int:
        sh = self._sh
        return len(sh) if sh is not None else len(self.shape)

    def _read_dims(self) -> None:
        self._sh, self._st = _arrays.dims(self.address)

    @property
    def shape(self) -> tuple[int, ...]:
        """Sizes of the dims (-1 for a var dim below axis 0: its size differs
        per element)."""
        sh = self._sh
        if sh is None:
            self._read_dims()
            sh = self._sh
        return sh

    @property
    def strides(self) -> tuple[int, ...]:
        """Byte strides of the dims (a var dim: its elements' stride)."""
        st = self._st
        if st is None:
            self._read_dims()
            st = self._st
        return st

    @property
    def context(self):
        """The process's CPU context (host arrays live in CPU memory): the
        public :class:`ckernels.Context` (``ctx.array(...)`` and the other
        placing methods included), the same object as
        ``ckernels.Context.default("cpu")``.  It comes through
        :func:`ckernels.context.handle.shared`, whose class the device layer
        publishes, so the host layer imports nothing above it."""
        return shared("cpu")

    @property
    def flags(self) -> Flags:
        """NumPy-style flags plus the ckernel access flags (``read``,
        ``write``, ``immutable``)."""
        f = lib.ck_array_flags(self._a)
        k = self._regular_ndim()
        shape, strides = self.shape[:k], self.strides[:k]
        full = k == self.ndim
        isz = self.type.dtype.data_size
        size = math.prod(shape)
        c = full and (size == 0 or all(st == want for s, st, want in
                                       zip(shape, strides, c_strides(shape, isz)) if s > 1))
        fo = full and (size == 0 or all(st == want for s, st, want in
                                        zip(shape, strides, _f_strides(shape, isz)) if s > 1))
        align = self.type.dtype.data_alignment
        return Flags(c_contiguous=c, f_contiguous=fo, writeable=bool(f & lib.CK_ARRAY_WRITE),
                     aligned=self._data % max(align, 1) == 0,
                     owndata=lib.ck_array_data(self._a) != ffi.NULL and
                     self._a.data_ref == ffi.NULL,
                     read=bool(f & lib.CK_ARRAY_READ), write=bool(f & lib.CK_ARRAY_WRITE),
                     immutable=bool(f & lib.CK_ARRAY_IMMUTABLE))

    @property
    def writable(self) -> bool:
        return bool(lib.ck_array_flags(self._a) & lib.CK_ARRAY_WRITE)

    def set_readonly(self) -> "Array":
        """Drop the write flag (views made later inherit it; no way back)."""
        check(lib.ck_array_set_readonly(self._a))
        self._bi = self._nd = None   # cached with the write flag
        return self

    @property
    def _data(self) -> int:
        return _addr(lib.ck_array_data(self._a))

    @property
    def _arrmeta(self) -> int:
        return _addr(lib.ck_array_arrmeta(self._a))

    # ---- primitives of ArrayLike -------------------------------------------
    def _view(self, key: tuple) -> "Array":
        cur, owned = self._a, False
        axis = 0
        out = ffi.new("ck_array_preamble **")
        try:
            for k in key:
                if isinstance(k, slice):
                    step = 1 if k.step is None else _bound(k.step)
                    start = _SLICE_NONE if k.start is None else _bound(k.start)
                    stop = _SLICE_NONE if k.stop is None else _bound(k.stop)
                    st = lib.ck_array_slice(cur, axis, start, stop, step, out)
                    axis += 1
                else:
                    i = _index(k)
                    if not -_BOUND <= i <= _BOUND:     # past any dim (and intptr_t)
                        raise CKIndexError(f"index {i} is out of bounds for axis {axis}")
                    st = lib.ck_array_index(cur, axis, i, out)
                check(st)
                if owned:
                    lib.ck_array_decref(cur)
                cur, owned = out[0], True
        except BaseException:
            if owned:
                lib.ck_array_decref(cur)
            raise
        if not owned:
            return self._strided_view(0, (), ())
        return Array._own(cur)

    def _strided_view(self, k, shape, strides, offset: int = 0, readonly: bool = False):
        n = len(shape)
        out = ffi.new("ck_array_preamble **")
        check(lib.ck_array_view_dims(self._a, k, n, ffi.new("intptr_t[]", list(shape) or [0]),
                                     ffi.new("intptr_t[]", list(strides) or [0]), offset, out))
        v = Array._own(out[0])
        if readonly:
            v.set_readonly()
        return v

    def _scalar(self):
        t = self.type
        if t.is_builtin:
            dt = _t.builtin_numpy_dtype(t)
            return np.frombuffer(ffi.buffer(lib.ck_array_data(self._a), dt.itemsize), dt)[0]
        return _read(t, self._data, self._arrmeta)

    def _empty(self, shape, element) -> "Array":
        return _new_array(_strided(_element_type(element), len(shape)), shape)

    def _assign(self, value, errmode: str = "default") -> None:
        if value is None:               # a null (option types only: host/nulls.py)
            set_null(self)
            return
        src = value if isinstance(value, Array) else _as_source(value, self.type)
        t = self.type
        if has_var_anywhere(t):
            # Python assignment replaces var dim values whatever their old
            # sizes (the kernels only fill unallocated ones): the slots are
            # cleared first, after copying a source that might alias them.
            if src is value and _slots_overlap(src, self):
                src = src.copy()
            if not self.writable:
                check(lib.ck_array_writable_data(self._a, ffi.new("char **")))
            clear_var_slots(t, self._data, self._arrmeta, (), ())
        check(lib.ck_array_assign(self._a, src._a, _errmode(errmode)))

    def _apply(self, name: str, args, out) -> "Array":
        r = _arrays.apply(name, out, *args)
        if r is NotImplemented:
            r = _fast_apply(name, args, out)
            if r is _SLOW:
                return apply_op(name, args, out)
        return r

    def _array_ufunc_general(self, ufunc, method, *inputs, **kwargs):
        # Array.__array_ufunc__ is C (_arrays.array_ufunc_method, installed
        # below): calls it does not take come here.  The fast path first: a
        # plain call of a NumPy ufunc (or a registry operation's) that the
        # kernel registry runs, on numeric arrays (priming the caches the C
        # method reads), else ArrayLike's general method.
        if method == "__call__":
            name = _fastpath.UFUNC_OPS.get(ufunc)
            if name is None:
                name = _fastpath.ufunc_op(ufunc)
            if name:
                if not kwargs:
                    r = _arrays.apply(name, None, *inputs)
                    if r is NotImplemented:
                        r = _fast_apply(name, inputs, None)
                    if r is not _SLOW:
                        return r
                elif len(kwargs) == 1 and "out" in kwargs:
                    out = kwargs["out"]
                    if type(out) is tuple and len(out) == 1:
                        out = out[0]
                        r = _arrays.apply(name, out, *inputs)
                        if r is NotImplemented:
                            r = _fast_apply(name, inputs, out)
                        if r is not _SLOW:
                            return r
            if not kwargs and any(isinstance(x, Array) and x.type.dtype.is_option
                                  for x in inputs):
                return apply_op(name, inputs, None)   # ?T: the C kernels carry the nulls
        return ArrayLike.__array_ufunc__(self, ufunc, method, *inputs, **kwargs)

    def _reduce(self, name: str, axis, keepdims: bool) -> "Array":
        return reduce_op(name, self, axis, keepdims)

    def _wrap_numpy(self, arr):
        if isinstance(arr, np.ndarray):
            if arr.dtype.kind in "biufc" and arr.dtype.isnative:
                return asarray(arr)
            if arr.dtype.kind == "T":
                return array(arr)
        return arr

    def _from_value(self, value, dtype=None) -> "Array":
        return value if isinstance(value, Array) else array(value, dtype)

    def _new_like(self, t: Type, shape) -> "Array":
        return _new_array(t, shape)

    def _take(self, indices):
        if self._numpy_exact():
            return self._numpy(False)[np.ix_(*indices)]
        dt = self.dtype
        out = np.empty(tuple(len(i) for i in indices), dtype=dt if dt.kind == "T" else object)
        for pos in np.ndindex(*out.shape):   # the few elements shown, read one by one
            v = self._view(tuple(int(indices[k][p]) for k, p in enumerate(pos)))
            out[pos] = _read(v.type, v._data, v._arrmeta)
        return out

    def _is_scalar_type(self) -> bool:
        tid = lib.ck_type_id_of(lib.ck_array_type(self._a))
        return tid in _dtypes.by_id and tid != _STRING or tid in (_STRING, _BYTES, _OPTION)

    def _field(self, name: str) -> "Array":
        if self.type.dtype.type_id != _STRUCT:
            raise CKIndexError(f"only integers, slices, ellipsis, None and integer or boolean "
                               f"arrays are valid indices; an array of type '{self.type}' "
                               f"has no fields (index {name!r})")
        raw = c_text(name, "field name", error=CKIndexError)   # no field has a NUL
        out = ffi.new("ck_array_preamble **")
        check(lib.ck_array_field(self._a, raw, len(raw), out))
        return Array._own(out[0])

    def _var_size(self) -> int:
        return count_elements(self.type, self._data, self._arrmeta)

    # ---- values ------------------------------------------------------------
    def tolist(self) -> Any:
        """The value as nested Python lists / scalars / str / dicts."""
        return _read(self.type, self._data, self._arrmeta)

    to_list = tolist

    def __iter__(self):
        # 1-d strings, bytes and structs: their Python values, read in one C pass
        # (what a[i] gives, without a view per element)
        if self.ndim == 1 and lib.ck_type_id_of(self.type.element.c_type) in (
                _STRING, _BYTES, _STRUCT):
            return iter(self.tolist())
        return super().__iter__()

    def copy(self, order: str = "C") -> "Array":
        """A C-contiguous copy of the same type (fixed dims stay fixed)."""
        k = self._regular_ndim()
        out = _new_array(self.type, self.shape[:k])
        out._assign(self)
        return out

    # ---- pickle / copy ----------------------------------------------------------
    def __reduce_ex__(self, protocol):
        t = self.type
        if has_pointer(t):
            raise pickle.PicklingError(f"an array of type '{t}' holds pointers, which do "
                                       "not survive pickling")
        k = self._regular_ndim()
        shape = self.shape[:k]
        if self._numpy_exact():
            data = np.ascontiguousarray(self._numpy(False))
            payload = pickle.PickleBuffer(data) if protocol >= 5 else data.tobytes()
            return (_unpickle_raw, (str(t), shape, payload))
        return (_unpickle_values, (str(t), shape, self.tolist()))

    # ---- display -------------------------------------------------------------
    def debug_repr(self) -> str:
        return debug_repr(self)

    def __repr__(self) -> str:
        prefix = "ckernels.array("
        text, summarised = self._format(prefix)
        shape = f", shape={self.shape}" if summarised else ""
        return f"{prefix}{text}{shape}, type='{self.type}')"

    def _repr_html_(self) -> str:
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)


# ---- helpers of the class -------------------------------------------------------

def _new_instance(cls):
    return _Base.__new__(cls) if _Base is not object else object.__new__(cls)


def _extent(a: Array) -> tuple:
    """[lo, hi) of the bytes an array's own data (its dims and items, not
    arena contents) occupies."""
    k = a._regular_ndim()
    shape, strides = a.shape[:k], a.strides[:k]
    base = a._data
    if math.prod(shape) == 0:
        return base, base
    lo = base + builtins.sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = base + builtins.sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return lo, hi + a._element_below(k).data_size


def _slots_overlap(src: Array, dst: Array) -> bool:
    """Whether the source's own data overlaps the destination's, whose var
    slots are about to be cleared."""
    s0, s1 = _extent(src)
    d0, d1 = _extent(dst)
    return s0 < d1 and d0 < s1


def _unpickle_raw(type_str: str, shape, payload) -> Array:
    t = _t.parse(type_str)
    a = _new_array(t, shape)
    view = a._numpy(True)
    src = np.frombuffer(payload, dtype=view.dtype)
    view.reshape(-1)[...] = src if view.size else src[:0]
    return a


def _unpickle_values(type_str: str, shape, values) -> Array:
    return array(values, type=_t.parse(type_str))


# ---- applying operations --------------------------------------------------------

def _scalar_array(value, name: str) -> Array:
    """A 0-d array of the builtin element type ``name`` holding ``value``
    (checked: a weak int too large for the type is an OverflowError)."""
    if name == "string":
        return array(str(value), type=_t.string)
    t = _BUILTIN_BY_NAME[name]
    tv = type(value)
    if (tv is float and name == "float64") or (tv is bool and name == "bool") or (
            tv is int and name == "int64" and -2**63 <= value < 2**63):
        return _new_c_scalar(t, _C_POINTER[name], value)   # held exactly, no check needed
    if tv is int and name == "float64" and -2**53 <= value <= 2**53:
        return _new_c_scalar(t, _C_POINTER[name], float(value))
    fast = _EXACT_SCALARS.get((tv, name))
    if fast is not None:
        return _new_scalar(t, fast(value))
    v = value.item() if isinstance(value, np.generic) else value
    return _new_scalar(t, _check_scalar(t, v))


#: (Python scalar type, element type) pairs whose conversion cannot fail
_EXACT_SCALARS = {(complex, "complex128"): np.complex128}
_C_POINTER = {d.name: d.cffi + " *" for d in _dtypes.BUILTINS if d.cffi is not None}


_BUILTIN_BY_NAME = {str(t): t for t in _t.BUILTIN_TYPES}


def _new_scalar(t: Type, v: np.generic) -> Array:
    out = _scratch()
    check(lib.ck_array_empty_uninit(t.c_type, ffi.NULL, 0, lib.CK_ARRAY_DEFAULT_FLAGS, out))
    a = Array._own(out[0])
    ffi.memmove(lib.ck_array_data(out[0]), v.tobytes(), v.itemsize)
    return a


def _new_c_scalar(t: Type, ctype: str, value) -> Array:
    """A 0-d array written through cffi (no NumPy scalar in between)."""
    out = _scratch()
    check(lib.ck_array_empty_uninit(t.c_type, ffi.NULL, 0, lib.CK_ARRAY_DEFAULT_FLAGS, out))
    a = Array._own(out[0])
    ffi.cast(ctype, lib.ck_array_data(out[0]))[0] = value
    return a


_LOCAL = threading.local()


def _scratch():
    """This thread's ``ck_array_preamble **`` for results read right after a
    call (saves an allocation per operation)."""
    try:
        return _LOCAL.out
    except AttributeError:
        _LOCAL.out = ffi.new("ck_array_preamble **")
        return _LOCAL.out


def _operand(a, i: int, where: str):
    if isinstance(a, Array):
        return a
    if isinstance(a, ArrayLike):
        raise CKTypeError(f"{where}: argument {i} is a {type(a).__name__} in "
                          f"{a.context!r}; host arrays and device arrays do not mix (copy it "
                          "with .to_numpy() or ctx.to(...))")
    if isinstance(a, np.ndarray):
        return asarray(a) if a.dtype.kind in "biufc" and a.dtype.isnative else array(a)
    if _is_scalar(a):
        return None
    return array(a)


def apply_op(name: str, args, out=None) -> Array:
    """The registry operation ``name`` applied elementwise to ``args`` (host
    arrays, NumPy arrays, nested lists, scalars: NEP 50 for Python scalars),
    with broadcasting, into ``out`` (a host or NumPy array) when given.
    ``ckernels.ops.<name>`` and the operators of :class:`Array` call this.
    Numeric host arrays with strided dims take the fast path first
    (``_arrays.apply``: the operation's NumPy ufunc over cached views)."""
    if type(out) is Array or out is None:
        r = _arrays.apply(name, out, *args)
        if r is not NotImplemented:
            return r
    conv = [a if type(a) is Array else _operand(a, i, name) for i, a in enumerate(args)]
    if len(conv) != builtins.sum(type(c) is Array for c in conv):
        strong = []
        for c in conv:
            if c is not None:
                row = _dtypes.by_id.get(_elem_id(c._a))
                if row is not None and row.builtin:
                    strong.append(row.name)
        for i, a in enumerate(args):
            if conv[i] is None:
                conv[i] = _scalar_array(a, _dtypes.weak_scalar_type(a, strong))
    if out is not None and not isinstance(out, Array):
        if isinstance(out, np.ndarray):
            out = asarray(out)
        else:
            raise CKTypeError("out= must be a ckernels.Array or a NumPy array")
    if out is not None:
        check_out_dims(out, conv)
    cname = _OP_NAMES.get(name)
    if cname is None:
        cname = _OP_NAMES[name] = c_text(name, "operation name")
    res = _scratch()
    check(lib.ck_array_apply_op(cname, len(conv), [a._a for a in conv] or [ffi.NULL],
                                out._a if out is not None else ffi.NULL, res))
    result = Array._own(res[0])
    return out if out is not None else result


_OP_NAMES: dict = {}


def check_out_dims(out: "Array", operands) -> None:
    """NumPy's rule for ``out=``: operands broadcast to the output's shape, and
    the output is never broadcast, so no operand may have more dims than it
    (``np.add(x0d, [1], out=x0d)`` is refused even though the extra dim has
    size 1)."""
    nd = out.ndim
    if any(a.ndim > nd for a in operands):
        shape = broadcast_shape([tuple(max(s, 0) for s in a.shape) for a in operands])
        raise CKValueError(f"non-broadcastable output operand with shape {out.shape} "
                           f"doesn't match the broadcast shape {shape}")


def reduce_op(name: str, a, axis=None, keepdims: bool = False) -> Array:
    """The reduction ``name`` (sum, product, min, max, any, all) over ``axis``
    (None, an int or a tuple; normalised here); a new array (0-d for a full
    reduction without ``keepdims``)."""
    from ..arraylike import normalize_axis
    arr = a if isinstance(a, Array) else _operand(a, 0, name)
    if arr is None:
        arr = array(a)
    axes = normalize_axis(axis, arr.ndim)
    out = ffi.new("ck_array_preamble **")
    cname = c_text(name, "operation name")
    if axes is None:
        check(lib.ck_array_reduce(cname, arr._a, ffi.NULL, 0, keepdims, out))
    else:
        caxes = ffi.new("size_t[]", list(axes) or [0])
        check(lib.ck_array_reduce(cname, arr._a, caxes, len(axes), keepdims, out))
    return Array._own(out[0])


# ---- making arrays ---------------------------------------------------------------

def _new_array(t: Type, shape, zero: bool = False) -> Array:
    """A new C-contiguous array of type ``t`` (``shape``: the strided dims'
    sizes, as ck_array_empty); POD data uninitialised unless ``zero``."""
    shape = [operator.index(s) for s in shape]
    for s in shape:
        if s < 0:
            raise CKValueError(f"negative dimensions are not allowed (shape {tuple(shape)})")
    shape = c_shape(shape, "shape")   # sizes that do not fit intptr_t
    out = ffi.new("ck_array_preamble **")
    cshape = ffi.new("intptr_t[]", shape) if shape else ffi.NULL
    fn = lib.ck_array_empty if zero else lib.ck_array_empty_uninit
    check(fn(t.c_type, cshape, len(shape), lib.CK_ARRAY_DEFAULT_FLAGS, out))
    return Array._own(out[0])


def empty(shape=(), dtype=None, *, type=None) -> Array:
    """A new array whose elements are not initialised (as ``numpy.empty``;
    strings and var dims start empty): ``empty((2, 3), "float32")``,
    ``empty(4, type="strided * 3 * int8")`` (a full type; ``shape`` gives its
    strided dims).  ``dtype`` defaults to float64.  The old form
    ``empty(type, shape)`` still works."""
    legacy = _legacy(shape, dtype)
    if legacy is not None and type is None:
        shape, type = legacy
        dtype = None
    t, shp = _creation_type(shape, dtype, type, "empty")
    return _new_array(t, shp)


def zeros(shape=(), dtype=None, *, type=None) -> Array:
    """A new array of zeros (empty strings, empty var dims)."""
    t, shp = _creation_type(shape, dtype, type, "zeros")
    return _new_array(t, shp, zero=True)


def ones(shape=(), dtype=None, *, type=None) -> Array:
    """A new array of ones (float64 unless ``dtype``/``type`` says otherwise,
    as ``numpy.ones``)."""
    if dtype is None and type is None:
        dtype = "float64"
    return full(shape, 1, dtype, type=type)


def full(shape, fill_value, dtype=None, *, type=None) -> Array:
    """A new array with every element ``fill_value`` (converted with the
    usual checks); the dtype is inferred from ``fill_value`` when not given."""
    if dtype is None and type is None:
        dtype = infer_type(fill_value)
    t, shp = _creation_type(shape, dtype, type, "full")
    a = _new_array(t, shp)
    a._assign(fill_value)
    return a


def _like(proto, dtype, type, shape):
    if not isinstance(proto, ArrayLike):
        proto = asarray(proto)
    if type is not None:
        return _creation_type(shape if shape is not None else proto.shape, None, type, "like")
    if shape is None and dtype is None:
        k = proto._regular_ndim()
        return proto.type, proto.shape[:k]
    el = proto.type.dtype if dtype is None else _element_type(dtype)
    shp = proto.shape if shape is None else _shape_arg(shape)
    return _strided(el, len(shp)), shp


def empty_like(a, dtype=None, *, type=None, shape=None) -> Array:
    t, shp = _like(a, dtype, type, shape)
    return _new_array(t, shp)


def zeros_like(a, dtype=None, *, type=None, shape=None) -> Array:
    t, shp = _like(a, dtype, type, shape)
    return _new_array(t, shp, zero=True)


def ones_like(a, dtype=None, *, type=None, shape=None) -> Array:
    return full_like(a, 1, dtype, type=type, shape=shape)


def full_like(a, fill_value, dtype=None, *, type=None, shape=None) -> Array:
    t, shp = _like(a, dtype, type, shape)
    out = _new_array(t, shp)
    out._assign(fill_value)
    return out


def arange(start, stop=None, step=None, dtype=None, *, type=None) -> Array:
    """Evenly spaced values in ``[start, stop)`` (``numpy.arange``)."""
    if type is not None:
        dtype = _element_type(type)
    npdt = None if dtype is None else _element_type(dtype).to_numpy_dtype()
    args = (start,) if stop is None else (start, stop) if step is None else (start, stop, step)
    return asarray(np.arange(*args, dtype=npdt))


def _as_source(value, dst_type: Type) -> Array:
    """``value`` as an array to assign into an array of type ``dst_type``:
    its own dims, the destination's element type (values checked while
    converting)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc" and value.dtype.isnative:
        return asarray(value)
    el = dst_type.dtype
    if _is_scalar(value) and el.is_builtin:
        return _new_scalar(el, _check_scalar(el, value))
    return array(value, dtype=el)


def array(obj, dtype=None, *, type=None, copy: bool = True, fill_value=None,
          nan_is_null: bool = False) -> Array:
    """A new array holding a copy of ``obj`` (NumPy's argument order):
    ``dtype`` fixes the element type (a NumPy dtype-like, a type string such
    as ``"string"``, or a :class:`~ckernels.types.Type`; dims come from the
    data: regular nesting gives strided dims, ragged var dims); ``type`` fixes
    the whole type (``"3 * var * int32"``); with neither, both are inferred
    (NumPy's kinds: bool < int64 < float64 < complex128; str -> string;
    dict -> struct).  Conversion is checked (no silent overflow or
    truncation).  ``copy=False`` returns ``obj`` itself when it is already a
    host array of that type.  Missing values: ``None`` in lists (numbers,
    bools, strings, bytes) and nulls of ``StringDType`` / object text arrays
    make the element an option ``?T`` with those slots null, as pyarrow
    infers (``docs/nulls.md``); ``fill_value`` gives a value to use instead.
    NaN is a float value, not a null, unless ``nan_is_null=True`` (Arrow's
    keyword).  Missing values the layout cannot hold yet (struct fields,
    ragged lists, Arrow nulls) are a ``CKValueError`` with their count and
    the first one's index.  Lists, tuples, dicts and NumPy text arrays are
    converted in C (``docs/strings.md``)."""
    if nan_is_null:
        obj = _nans_to_none(obj)
    if isinstance(dtype, (str, Type)) and type is None and _is_full_type(dtype):
        type, dtype = dtype, None
    if type is not None and dtype is not None:
        raise InvalidArgumentError("array: give dtype= or type=, not both")
    want = None if type is None else _array_type(type)
    el = None if dtype is None else _element_type(_records.c_layout(dtype))
    st = _records.struct_of(want, el)
    if st is not None:               # tuples and numpy.void are records, as in NumPy
        obj = _records.as_records(obj, st)
    if isinstance(obj, Array):
        if not copy and (want is None or want == obj.type) and (el is None or
                                                                el == obj.type.dtype):
            return obj
        return _copy_array(obj, want, el)
    if _arrow_io.is_arrow(obj):      # pyarrow, polars, nanoarrow, duckdb, pandas ArrowDtype
        imported = from_arrow(obj, fill_value=fill_value)
        if imported.flags.writeable and want is None and el is None:
            return imported          # a concatenated stream: a copy of its own already
        return _copy_array(imported, want, el)
    if isinstance(obj, ArrayLike):   # another array class: through NumPy, explicitly
        obj = obj.to_numpy()
    if isinstance(obj, memoryview):  # a buffer: its format and shape, as numpy.array
        obj = np.array(obj)
    if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
        obj = np.asarray(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "biufc":
        src = asarray(obj if obj.dtype.isnative else obj.astype(obj.dtype.newbyteorder("=")))
        return _copy_array(src, want, el)
    if isinstance(obj, np.ndarray) and obj.dtype.fields is not None:
        # a structured array: its struct type from the dtype (asarray checks
        # the layout), never the tuples' items taken as nested lists; one not
        # laid out as a C struct is copied into the C layout of its fields
        return _copy_array(asarray(obj.astype(_records.c_layout(obj.dtype))), want, el)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "TUSO" and want is None:
        try:
            text = _numpy_text(obj, el, fill_value)
        except CKValueError:
            if fill_value is not None or not _text_nulls(obj):
                raise
            # StringDType(na_object=...) / object text with nulls: an option
            # array, the nulls' bits cleared by the same C pass
            text = _numpy_text(obj, _t.option(el if el is not None else (
                _t.bytes_type(1) if _first_text(obj) is bytes else _t.string)), None)
        if text is not None:
            return text
    if want is None and isinstance(obj, (list, tuple)) and _convert.is_plain(obj):
        try:
            arr = np.array(obj)
        except (ValueError, TypeError, OverflowError):
            arr = None
        # NumPy promotes int64 and uint64 Python ints to float64 (lossy): values
        # that large take the exact path below
        if arr is not None and arr.dtype.kind in "biufc" and not (
                arr.dtype.kind == "f" and arr.size and (np.abs(arr) >= 2.0**63).any()):
            return _copy_array(asarray(arr), None, el)
    t, shape, value = _convert.prepare(obj, want, el, fill_value)
    a = _new_array(t, shape)
    _convert.write(t, a._data, a._arrmeta, value, fill_value)
    return a


def _numpy_text(obj: np.ndarray, el: Type | None, fill_value) -> Array | None:
    """A NumPy ``StringDType`` / ``U`` / ``S`` array, or an object array of
    ``str`` / ``bytes`` (its first present element says which; NaN, None and
    ``pandas.NA`` are missing values), as a new array of strings (``S``,
    ``bytes`` objects: bytes) in one C pass (``_convert.from_numpy``: sizes
    first, one arena allocation; bytes into strings checked UTF-8); None when
    the element type asked for (or found) is no string or bytes type."""
    kind = obj.dtype.kind
    if kind == "O" and el is None:
        first = next((x for x in obj.flat if not _missing(x)), None)
        if isinstance(first, str):
            el = _t.string
        elif isinstance(first, bytes):
            el = _t.bytes_type(1)
        else:
            return None       # numbers, dicts, lists, only missing values: the lists path
    if el is None:
        el = _t.bytes_type(1) if kind == "S" else _t.string
    elif el.value_type.type_id not in (_STRING, _BYTES):
        return None
    if obj.dtype.kind == "U" and not obj.flags.aligned:
        obj = obj.copy()
    a = _new_array(_strided(el, obj.ndim), obj.shape)
    _c_convert.from_numpy(a.address, obj, fill_value)
    return a


def _copy_array(src: Array, want: Type | None, el: Type | None) -> Array:
    """A new array holding ``src`` converted to the full type ``want`` or the
    element type ``el`` (checked conversion, broadcasting none)."""
    k = src._regular_ndim()
    if want is not None:
        nwant = len(dim_kinds(want))
        if nwant != src.ndim:
            raise CKValueError(f"data of shape {src.shape} has {src.ndim} dims; type "
                               f"'{want}' has {nwant}")
        shape = []
        cur = want
        for i, n in enumerate(src.shape):
            if cur.type_id == _FIXED:
                if n != cur.fixed_size:
                    raise CKValueError(f"data of shape {src.shape} does not fit type "
                                       f"'{want}' (dim {i} has size {n})")
            elif cur.type_id == _STRIDED:
                shape.append(n)
            else:
                break
            cur = cur.element
        if _VAR in dim_kinds(want):
            return array(src.tolist(), type=want)
        out = _new_array(want, shape)
    elif el is not None:
        inner = src._element_below(k)
        from ..arraylike import _replace_dtype
        out = _new_array(_strided(_replace_dtype(inner, el), k) if k else
                         _replace_dtype(inner, el), src.shape[:k])
    else:
        out = _new_array(src.type, src.shape[:k])
    out._assign(src)
    return out


def asarray(obj, dtype=None, *, type=None, fill_value=None) -> Array:
    """Share memory with ``obj`` when it is a NumPy array (or an
    ``__array_interface__`` / DLPack exporter) of a builtin or aligned struct
    dtype; otherwise copy (:func:`array`).  Host arrays are returned as they
    are (converted when ``dtype``/``type`` differ).  ``fill_value``: see
    :func:`array`."""
    if dtype is None and type is None:
        tobj = builtins.type(obj)
        if tobj is np.ndarray:
            cached = _STRIDED_OF.get((obj.dtype, obj.ndim))
            if cached is not None:   # seen before: no checks left to make
                return _wrap_ndarray(obj)
        elif tobj is Array:
            return obj
    if isinstance(obj, Array):
        if (dtype is None or _element_type(dtype) == obj.type.dtype) and \
                (type is None or _element_type(type) == obj.type):
            return obj
        return array(obj, dtype, type=type)
    if _arrow_io.is_arrow(obj):
        return asarray(from_arrow(obj, fill_value=fill_value), dtype, type=type)
    if not isinstance(obj, (np.ndarray, ArrayLike)) and (hasattr(obj, "__array_interface__")
                                                         or hasattr(obj, "__dlpack__")):
        obj = np.asarray(obj) if hasattr(obj, "__array_interface__") else np.from_dlpack(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind not in "OUSTM" and \
            (obj.dtype.kind != "V" or obj.dtype.fields is not None):
        key = (obj.dtype, obj.ndim)
        cached = _STRIDED_OF.get(key)
        if cached is None:
            cached = _strided_of(*key)
        dtype_t, t, _ = cached
        if type is not None and _array_type(type) != t:
            raise CKTypeError(f"asarray: NumPy array has type '{t}', not '{type}'")
        if dtype is not None and _element_type(dtype) != dtype_t:
            return array(obj, dtype)
        return _wrap_ndarray(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "OUST" and dtype is None and \
            type is None:
        return array(obj, fill_value=fill_value)
    return array(obj, dtype, type=type, fill_value=fill_value)


def from_arrow(obj, *, fill_value=None, copy: bool = False) -> Array:
    """An array holding Arrow data: any object implementing the Arrow PyCapsule
    interface (pyarrow arrays and chunked arrays, polars Series and
    DataFrames, nanoarrow arrays, duckdb relations) or a pandas object backed
    by Arrow.  One Arrow array is shared where the layout allows (numbers,
    the text of strings, the elements of lists of numbers: the result is
    read-only and keeps the Arrow data alive); a stream of several arrays is
    concatenated into an array of its own.  Nulls raise ``CKValueError``
    naming the field and how many, unless ``fill_value`` gives the value to
    use (null lists become empty lists).  ``copy=True`` always returns an
    array of its own (writable).  ``asarray`` / ``array`` call this for Arrow
    objects (``docs/interop.md``)."""
    fill = None if fill_value is None else array(fill_value)
    if fill is not None and fill.ndim != 0:
        raise InvalidArgumentError("from_arrow: fill_value must be a scalar")
    out = Array._own_address(_arrow_io.import_address(obj, None if fill is None else fill._ad))
    if copy and not out.flags.writeable:
        out = out.copy()
    return out


def from_dlpack(x) -> Array:
    """Zero-copy import of a DLPack tensor in CPU memory."""
    device = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if device[0] not in (1, 3):  # kDLCPU, kDLCUDAHost
        raise NotSupportedError(f"DLPack device {device} is not host memory; ckernel "
                                "arrays of device memory come with contexts")
    return asarray(np.from_dlpack(x))


def debug_repr(a: Array) -> str:
    """DyND-style dump of an array's preamble, arrmeta and data reference."""
    if not isinstance(a, Array):
        raise CKTypeError(f"debug_repr needs a ckernels.Array, not {type(a).__name__}")
    n = ffi.new("size_t *")
    check(lib.ck_array_debug_repr(a._a, ffi.NULL, 0, n))
    buf = ffi.new("char[]", n[0] + 1)
    check(lib.ck_array_debug_repr(a._a, buf, n[0] + 1, n))
    return ffi.string(buf).decode()


# the C side of the fast path (ckernels._arrays.apply / wrap_result) works on
# the same caches as the Python side

_fastpath.install(Array)   # operators, reductions, the C half of the fast path


__all__ = ["Array", "array", "asarray", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "arange", "from_dlpack", "debug_repr",
           "infer_type", "numpy_dtype", "apply_op", "reduce_op", "format_values"]
