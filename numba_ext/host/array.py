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
import pickle
from typing import Any

import numpy as np

from .. import dtypes as _dtypes
from .. import types as _t
from .._cargs import c_shape, c_text
from .._native import check, ffi, lib
from ..arraylike import ArrayLike, Flags, c_strides, format_values
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
from .arrmeta import (_BYTES, _FIXED, _STRIDED, _STRING, _STRUCT, _VAR, _addr, clear_var_slots,
                     count_elements, dim_kinds, has_pointer, has_var_anywhere, numpy_dtype)
from .arrmeta import elem_id as _elem_id
from .arrmeta import f_strides as _f_strides
from .arrmeta import strided as _strided
from .sharing import Sharing
# creation and operations sit below the class (it hands itself to them:
# install); their public spellings stay ckernels.host.array.*
from . import apply as _apply
from . import creation as _creation
from .apply import apply_op, check_out_dims, reduce_op  # noqa: F401
from .creation import (_as_source, _new_array, arange, array, asarray,  # noqa: F401
                       debug_repr, empty, empty_like, from_arrow, from_dlpack, full,
                       full_like, ones, ones_like, zeros, zeros_like)

_OPTION = lib.CK_TYPE_OPTION

from .. import _arrays   # cheap NumPy <-> host array conversions (src/python/arrays/arrays.c)
from .. import _convert as _c_convert   # values <-> Python / NumPy text (src/python/convert/*.c)
from . import arrow as _arrow_io   # the Arrow PyCapsule interface (arrow.py)

# at exit, arrays still held by C objects are released after Python's state
# is gone: their NumPy owners are left alone then (as ckernels.memory does)
atexit.register(_arrays.stop)

try:   # the buffer protocol (PEP 3118): a tiny C base type (src/python/pybuffer/pybuffer.c)
    from .._pybuffer import BufferExporter as _Base
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

    def _assign_elements(self, value, errmode: str = "default") -> None:
        """Assign into the elements this array's rows already hold, their
        lengths kept (broadcasting as the kernels do): the assignment through a
        slice of an inner var dim (``a[:, 1:] = x``), whose row slots are new
        but whose elements are ``a``'s."""
        src = value if isinstance(value, Array) else _as_source(value, self.type)
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
            if name and not kwargs and any(isinstance(x, Array) and x.type.dtype.is_option
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
        texts = _time_shown_as_text(self.type.dtype)
        if texts is None and self._numpy_exact():   # M8 / m8 print as NumPy prints them
            return self._numpy(False)[np.ix_(*indices)]
        dt = self.dtype
        out = np.empty(tuple(len(i) for i in indices), dtype=dt if dt.kind == "T" else object)
        for pos in np.ndindex(*out.shape):   # the few elements shown, read one by one
            v = self._view(tuple(int(indices[k][p]) for k, p in enumerate(pos)))
            val = _read(v.type, v._data, v._arrmeta)
            out[pos] = val if texts is None or val is None else _time_text(texts, v._data)
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
        if self.dtype.kind in "Mm" and self._numpy_exact() and \
                lib.ck_datetime_type_tz(self.type.dtype.c_type) == ffi.NULL:
            return self._numpy(False).tolist()    # NumPy's own objects
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
        return f"{prefix}{text}{shape}, type={str(self.type)!r})"

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


# the C side of the fast path (ckernels._arrays.apply / wrap_result) works on
# the same caches as the Python side

_creation.install(Array)   # the class the creation functions make
_apply.install(Array)      # ... and the operations return
_fastpath.install(Array)   # operators, reductions, the C half of the fast path


__all__ = ["Array", "array", "asarray", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "arange", "from_dlpack", "debug_repr",
           "infer_type", "numpy_dtype", "apply_op", "reduce_op", "format_values"]


_TIME_IDS = (int(lib.CK_TYPE_DATETIME), int(lib.CK_TYPE_TIMEDELTA), int(lib.CK_TYPE_DATE),
             int(lib.CK_TYPE_TIME))


def _time_shown_as_text(el: Type) -> Type | None:
    """The time type whose values an array of element type ``el`` prints as
    ISO 8601 text (``ck_time_format``: NumPy's ``datetime_as_string`` for
    instants, ``+00:00`` after a zoned one's UTC text, ``2024-01-01`` dates,
    ``10:30:00.5`` times of day, pandas' ``Timedelta.isoformat`` for
    durations under an option type), or None: plain ``datetime64`` /
    ``timedelta64`` print as NumPy prints them, other types as before."""
    vt = el.value_type
    tid = int(vt.type_id)
    if tid not in _TIME_IDS:
        return None
    if el.is_option or tid in _TIME_IDS[2:]:
        return vt
    return vt if lib.ck_datetime_type_tz(vt.c_type) != ffi.NULL else None


def _time_text(t: Type, data: int) -> str:
    """ISO 8601 text of the value of time type ``t`` at ``data``."""
    buf = ffi.new("char[]", 96)
    n = ffi.new("size_t *")
    check(lib.ck_time_format(t.c_type, ffi.cast("void *", data), buf, 96, n))
    return ffi.string(buf, n[0]).decode()
