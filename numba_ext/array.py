"""ckernel arrays: Python objects over ``ck_array_preamble`` memblocks.

* :func:`array` copies Python data (nested lists/tuples, str, bytes, dicts,
  NumPy arrays) into a new array, inferring the type when none is given:
  regular nesting gives ``strided`` dims, ragged lists give ``var`` dims, ``str``
  gives ``string``, ``dict`` gives a struct.
* :func:`asarray` shares memory with a NumPy array (builtin element types and
  aligned structs) and keeps it alive through an external memblock;
  ``numpy.asarray(a)`` shares the other way.  DLPack goes through the same
  zero-copy NumPy views (CPU memory).
* Indexing with integers and slices (steps included, negative too) gives views;
  a fully indexed scalar element comes back as a Python value.

An :class:`Array` owns one reference to its C array memblock.
"""

from __future__ import annotations

import html
import weakref
from typing import Any

import numpy as np

from . import types as _t
from ._cargs import c_shape, c_text
from ._native import check, ffi, lib
from .errors import (CKIndexError, CKOverflowError, CKTypeError, CKValueError,
                     InvalidArgumentError, NotSupportedError)
from .memory import MemBlock, memblock_at
from .types import Type, as_type

_DIM_AM = ffi.sizeof("ck_dim_arrmeta")
_VAR_AM = ffi.sizeof("ck_var_dim_arrmeta")
_PTR_AM = ffi.sizeof("ck_pointer_arrmeta")
_FIXED, _STRIDED, _VAR = lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM, lib.CK_TYPE_VAR_DIM
_STRING, _BYTES, _STRUCT, _POINTER = (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES,
                                      lib.CK_TYPE_STRUCT, lib.CK_TYPE_POINTER)
_REPR_LIMIT = 200
_SLICE_NONE = -(2**63)  # CK_SLICE_NONE (INTPTR_MIN): an omitted slice bound

FLAG_NAMES = {lib.CK_ARRAY_READ: "read", lib.CK_ARRAY_WRITE: "write",
              lib.CK_ARRAY_IMMUTABLE: "immutable"}


def _addr(p) -> int:
    return int(ffi.cast("uintptr_t", p))


def _ptr(addr: int):
    return ffi.cast("char *", addr)


class _Interface:
    """A one-off ``__array_interface__`` exporter; NumPy keeps it as the base
    of the view, and it keeps ``owner`` (whatever owns the memory) alive."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, addr, shape, strides, dtype, readonly, owner):
        self.owner = owner
        self.__array_interface__ = {
            "version": 3, "data": (addr, readonly), "shape": tuple(shape),
            "strides": tuple(strides), "typestr": dtype.str,
            "descr": dtype.descr if dtype.fields is not None else [("", dtype.str)],
        }


def _numpy_view(addr, shape, strides, dtype, readonly, owner) -> np.ndarray:
    return np.asarray(_Interface(addr, shape, strides, dtype, readonly, owner))


# ---- element access (the recursive reader and writer) -----------------------

def _struct_layout(t: Type):
    """[(name, type, arrmeta offset)] of a struct; data offsets live in arrmeta."""
    out = []
    am_off = ffi.new("size_t *")
    for i, (name, ftype) in enumerate(t.fields):
        check(lib.ck_struct_field(t.c_type, i, ffi.NULL, ffi.NULL, ffi.NULL, am_off))
        out.append((name, ftype, am_off[0]))
    return out


def _read(t: Type, data: int, arrmeta: int) -> Any:
    tid = t.type_id
    if t.is_builtin:
        dt = _t.builtin_numpy_dtype(t)
        return np.frombuffer(ffi.buffer(_ptr(data), dt.itemsize), dt)[0].item()
    if tid in (_FIXED, _STRIDED):
        am = ffi.cast("ck_dim_arrmeta *", arrmeta)
        el = t.element
        fast = _numpy_dims(t, data, arrmeta)
        if fast is not None:
            return fast.tolist()
        return [_read(el, data + i * am.stride, arrmeta + _DIM_AM) for i in range(am.size)]
    if tid == _VAR:
        am = ffi.cast("ck_var_dim_arrmeta *", arrmeta)
        d = ffi.cast("ck_var_dim_data *", data)
        if d.size == 0:
            return []
        base = _addr(d.begin) + am.offset
        el = t.element
        return [_read(el, base + i * am.stride, arrmeta + _VAR_AM) for i in range(d.size)]
    if tid in (_STRING, _BYTES):
        s = ffi.cast("ck_string *", data)
        raw = ffi.buffer(s.begin, _addr(s.end) - _addr(s.begin))[:] if s.begin != ffi.NULL else b""
        return raw.decode("utf-8") if tid == _STRING else raw
    if tid == _STRUCT:
        offsets = ffi.cast("uintptr_t *", arrmeta)
        return {name: _read(ft, data + offsets[i], arrmeta + am_off)
                for i, (name, ft, am_off) in enumerate(_struct_layout(t))}
    if tid == _POINTER:
        p = ffi.cast("char **", data)[0]
        if p == ffi.NULL:
            return None
        am = ffi.cast("ck_pointer_arrmeta *", arrmeta)
        return _read(t.element, _addr(p) + am.offset, arrmeta + _PTR_AM)
    raise CKTypeError(f"cannot read values of type '{t}'")


def _check_scalar(t: Type, value):
    """Python value -> NumPy scalar of builtin type t, with DyND's default
    (fractional) checking: no silent overflow, truncation or type change."""
    dt = _t.builtin_numpy_dtype(t)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (str, bytes, list, tuple, dict)) or value is None:
        raise CKTypeError(f"cannot assign {type(value).__name__} value {value!r} to {t}")
    kind = dt.kind
    if kind in "iu":
        if isinstance(value, complex):
            raise CKTypeError(f"cannot assign complex value {value!r} to {t}")
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise CKValueError(f"cannot assign float value {value!r} to {t}")
            if not value.is_integer():
                raise CKValueError(f"fractional part lost assigning {value!r} to {t}")
            value = int(value)
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            raise CKOverflowError(f"value {value!r} is out of range for {t}")
        return dt.type(value)
    if kind == "b":
        if isinstance(value, (bool, np.bool_)) or value in (0, 1):
            return dt.type(bool(value))
        raise CKValueError(f"cannot assign {value!r} to bool (only 0, 1, False, True)")
    if kind == "f":
        if isinstance(value, complex):
            if value.imag != 0:
                raise CKValueError(f"imaginary part lost assigning {value!r} to {t}")
            value = value.real
        with np.errstate(over="raise"):
            try:
                out = dt.type(value)
            except (FloatingPointError, OverflowError):
                raise CKOverflowError(f"value {value!r} overflows {t}") from None
        if np.isinf(out) and np.isfinite(float(value)):
            raise CKOverflowError(f"value {value!r} overflows {t}")
        return out
    return dt.type(value)  # complex


def _write(t: Type, data: int, arrmeta: int, value: Any) -> None:
    tid = t.type_id
    if t.is_builtin:
        v = _check_scalar(t, value)
        ffi.memmove(_ptr(data), v.tobytes(), v.itemsize)
        return
    if tid in (_FIXED, _STRIDED):
        am = ffi.cast("ck_dim_arrmeta *", arrmeta)
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
            raise CKTypeError(f"expected a sequence of {am.size} for '{t}', got {value!r}")
        if len(value) != am.size:
            raise CKValueError(f"expected {am.size} elements for '{t}', got {len(value)}")
        view = _numpy_dims(t, data, arrmeta, writable=True)
        if view is not None:
            try:
                arr = np.asarray(value)
            except ValueError:
                arr = None
            if arr is not None and arr.shape == view.shape and arr.dtype.kind in "biufc":
                _write_numpy(t.dtype, view, arr)
                return
        el = t.element
        for i, v in enumerate(value):
            _write(el, data + i * am.stride, arrmeta + _DIM_AM, v)
        return
    if tid == _VAR:
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
            raise CKTypeError(f"expected a sequence for '{t}', got {value!r}")
        n = len(value)
        check(lib.ck_var_dim_alloc(t.c_type, _ptr(data), _ptr(arrmeta), n))
        am = ffi.cast("ck_var_dim_arrmeta *", arrmeta)
        d = ffi.cast("ck_var_dim_data *", data)
        base = _addr(d.begin) + am.offset if n else 0
        el = t.element
        for i, v in enumerate(value):
            _write(el, base + i * am.stride, arrmeta + _VAR_AM, v)
        return
    if tid == _STRING:
        if isinstance(value, bytes):
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CKValueError(f"bytes are not valid UTF-8: {exc}") from None
            raw = value
        elif isinstance(value, (str, np.str_)):
            raw = c_text(str(value), "string value", error=CKValueError, allow_nul=True)
        else:
            raise CKTypeError(f"cannot assign {type(value).__name__} value {value!r} to string")
        check(lib.ck_string_assign(_ptr(data), _ptr(arrmeta), raw, len(raw)))
        return
    if tid == _BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise CKTypeError(f"cannot assign {type(value).__name__} value to '{t}'")
        raw = bytes(value)
        check(lib.ck_bytes_assign(t.c_type, _ptr(data), _ptr(arrmeta), raw, len(raw)))
        return
    if tid == _STRUCT:
        layout = _struct_layout(t)
        offsets = ffi.cast("uintptr_t *", arrmeta)
        if isinstance(value, dict):
            names = [n for n, _, _ in layout]
            if set(value) != set(names):
                raise CKValueError(f"struct '{t}' needs exactly the fields {names}, "
                                   f"got {sorted(value)}")
            items = [value[n] for n in names]
        elif isinstance(value, (tuple, list)) and len(value) == len(layout):
            items = list(value)
        else:
            raise CKTypeError(f"cannot assign {value!r} to struct '{t}'")
        for i, ((_, ft, am_off), v) in enumerate(zip(layout, items)):
            _write(ft, data + offsets[i], arrmeta + am_off, v)
        return
    if tid == _POINTER:
        raise NotSupportedError(f"pointer values cannot be built from Python objects ('{t}')")
    raise CKTypeError(f"cannot write values of type '{t}'")


def _write_numpy(dtype_t: Type, view: np.ndarray, arr: np.ndarray) -> None:
    """Bulk assignment with the same checks as _check_scalar."""
    dt = view.dtype
    if dt.kind in "iu" and arr.dtype.kind in "iub":
        if arr.size and arr.dtype.kind != "b":
            info = np.iinfo(dt)
            lo, hi = arr.min(), arr.max()
            if int(lo) < info.min or int(hi) > info.max:
                bad = lo if int(lo) < info.min else hi
                raise CKOverflowError(f"value {bad.item()!r} is out of range for {dtype_t}")
        view[...] = arr
        return
    if np.can_cast(arr.dtype, dt, casting="safe"):
        view[...] = arr
        return
    for idx in np.ndindex(arr.shape):  # checked element by element
        view[idx] = _check_scalar(dtype_t, arr[idx].item())


def _numpy_dims(t: Type, data: int, arrmeta: int, writable: bool = False):
    """A NumPy view of leading fixed/strided dims over a builtin dtype, or None."""
    shape, strides = [], []
    cur, am = t, arrmeta
    while cur.type_id in (_FIXED, _STRIDED):
        d = ffi.cast("ck_dim_arrmeta *", am)
        shape.append(d.size)
        strides.append(d.stride)
        cur, am = cur.element, am + _DIM_AM
    dt = _t.builtin_numpy_dtype(cur)
    if dt is None:
        return None
    return _numpy_view(data, shape, strides, dt, not writable, None)


# ---- the Python object ---------------------------------------------------------

class Array:
    """A ckernel array (a view of a C array memblock)."""

    __slots__ = ("_a", "_finalizer", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("use ckernels.array(obj, type=None) or ckernels.asarray(obj)")

    @classmethod
    def _own(cls, ptr) -> "Array":
        self = object.__new__(cls)
        self._a = ptr
        self._finalizer = weakref.finalize(self, lib.ck_array_decref, ptr)
        return self

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
        return _addr(self._a)

    @property
    def memblock(self) -> MemBlock:
        """A new owning :class:`MemBlock` reference to this array's block."""
        return MemBlock(ffi.cast("ck_memblock *", self._a), incref=True)

    @property
    def type(self) -> Type:
        return Type._borrow(lib.ck_array_type(self._a))

    @property
    def dtype(self) -> Type:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return lib.ck_array_ndim(self._a)

    def _dims(self, fn) -> tuple[int, ...]:
        n = self.ndim
        out = ffi.new("intptr_t[]", max(n, 1))
        check(fn(self._a, out, n, ffi.NULL))
        return tuple(out[i] for i in range(n))

    @property
    def shape(self) -> tuple[int, ...]:
        """Sizes of the leading dims (-1 for a var dim below axis 0)."""
        return self._dims(lib.ck_array_shape)

    @property
    def strides(self) -> tuple[int, ...]:
        return self._dims(lib.ck_array_strides)

    @property
    def flags(self) -> tuple[str, ...]:
        f = lib.ck_array_flags(self._a)
        return tuple(name for bit, name in FLAG_NAMES.items() if f & bit)

    @property
    def writable(self) -> bool:
        return bool(lib.ck_array_flags(self._a) & lib.CK_ARRAY_WRITE)

    def set_readonly(self) -> "Array":
        check(lib.ck_array_set_readonly(self._a))
        return self

    @property
    def _data(self) -> int:
        return _addr(lib.ck_array_data(self._a))

    @property
    def _arrmeta(self) -> int:
        return _addr(lib.ck_array_arrmeta(self._a))

    # ---- values ------------------------------------------------------------
    def to_list(self) -> Any:
        """The value as nested Python lists / scalars / str / dicts."""
        return _read(self.type, self._data, self._arrmeta)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError(f"len() of a 0-d array of type '{self.type}'")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def _normalize_key(self, key) -> tuple:
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > self.ndim:
            raise CKIndexError(f"too many indices ({len(key)}) for an array with "
                               f"{self.ndim} dimension(s) of type '{self.type}'")
        return key

    def _view(self, key) -> "Array":
        cur = self
        axis = 0
        for k in self._normalize_key(key):
            out = ffi.new("ck_array_preamble **")
            if isinstance(k, slice):
                step = 1 if k.step is None else _index(k.step)
                start = _SLICE_NONE if k.start is None else _index(k.start)
                stop = _SLICE_NONE if k.stop is None else _index(k.stop)
                check(lib.ck_array_slice(cur._a, axis, start, stop, step, out))
                axis += 1
            else:
                check(lib.ck_array_index(cur._a, axis, _index(k), out))
            cur = Array._own(out[0])
        return cur

    def __getitem__(self, key):
        view = self._view(key)
        t = view.type
        if t.is_builtin or t.type_id in (_STRING, _BYTES):
            return view.to_list()
        return view

    def __setitem__(self, key, value) -> None:
        view = self._view(key)
        data = ffi.new("char **")
        check(lib.ck_array_writable_data(view._a, data))
        _write(view.type, _addr(data[0]), view._arrmeta, value)

    # ---- NumPy / DLPack ------------------------------------------------------
    def _numpy(self, writable: bool) -> np.ndarray:
        view = _numpy_dims(self.type, self._data, self._arrmeta)
        t = self.type
        if view is None:
            dtype_t = t.dtype
            try:
                dt = dtype_t.to_numpy_dtype()
            except CKTypeError:
                raise CKTypeError(
                    f"an array of type '{t}' has no NumPy equivalent (element type "
                    f"'{dtype_t}'); use .to_list() or .to_numpy() for an explicit copy"
                ) from None
            if t.ndim and not all(k in (_FIXED, _STRIDED) for k in _dim_kinds(t)):
                raise CKTypeError(f"an array of type '{t}' has var dims, which NumPy "
                                  "cannot hold; use .to_list()")
            view = _numpy_dims_struct(t, self._data, self._arrmeta, dt)
        readonly = not (writable and self.writable)
        return _numpy_view(self._data, view.shape, view.strides, view.dtype, readonly, self)

    def __array__(self, dtype=None, copy=None):
        arr = self._numpy(writable=True)
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("a dtype change needs a copy")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def to_numpy(self) -> np.ndarray:
        """A NumPy copy; strings become ``StringDType``, other types as __array__."""
        if self.dtype.type_id == _STRING and all(k in (_FIXED, _STRIDED)
                                                 for k in _dim_kinds(self.type)):
            return np.array(self.to_list(), dtype=np.dtypes.StringDType())
        return np.array(self, copy=True)

    def __dlpack__(self, **kwargs):
        return self._numpy(writable=True).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: every ckernel array lives in host memory (for now)

    # ---- display -------------------------------------------------------------
    def debug_repr(self) -> str:
        return debug_repr(self)

    def __repr__(self) -> str:
        value = repr(self.to_list())
        if len(value) > _REPR_LIMIT:
            value = value[:_REPR_LIMIT] + " ..."
        return f"ckernels.array({value}, type='{self.type}')"

    def _repr_html_(self) -> str:
        value = repr(self.to_list())
        if len(value) > 2000:
            value = value[:2000] + " ..."
        return ("<div><b>ckernels.Array</b> <code>" + html.escape(str(self.type)) +
                "</code><pre>" + html.escape(value) + "</pre><details><summary>debug_repr"
                "</summary><pre>" + html.escape(debug_repr(self)) + "</pre></details></div>")


def _dim_kinds(t: Type) -> list[int]:
    kinds = []
    while t.type_id in (_FIXED, _STRIDED, _VAR):
        kinds.append(t.type_id)
        t = t.element
    return kinds


def _numpy_dims_struct(t, data, arrmeta, dt):
    shape, strides = [], []
    while t.type_id in (_FIXED, _STRIDED):
        d = ffi.cast("ck_dim_arrmeta *", arrmeta)
        shape.append(d.size)
        strides.append(d.stride)
        t, arrmeta = t.element, arrmeta + _DIM_AM
    return _numpy_view(data, shape, strides, dt, True, None)


def _index(i) -> int:
    try:
        return int(i.__index__())
    except AttributeError:
        raise CKTypeError(f"indices must be integers or slices, not {type(i).__name__}") from None


# ---- type inference -------------------------------------------------------------

_KIND_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}


class _Info:
    """What a Python value looks like: per-level sizes (None = ragged), the
    scalar kind, and for dicts the field infos."""

    __slots__ = ("sizes", "kind", "fields", "ints", "empty")

    def __init__(self, sizes, kind, fields=None, ints=(), empty=False):
        self.sizes, self.kind, self.fields, self.ints, self.empty = sizes, kind, fields, ints, empty


def _scalar_kind(v):
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, (complex, np.complexfloating)):
        return "complex"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    return None


def _merge_kind(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a in _KIND_ORDER and b in _KIND_ORDER:
        return a if _KIND_ORDER[a] > _KIND_ORDER[b] else b
    raise CKTypeError(f"cannot mix {a} and {b} values in one array")


def _info(v) -> _Info:
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, dict):
        return _Info([], "struct", {k: [_info(x)] for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        children = [_info(c) for c in v]
        return _merge_children(len(v), children)
    kind = _scalar_kind(v)
    if kind is None:
        raise CKTypeError(f"cannot infer a ckernel type for {type(v).__name__} value {v!r}")
    return _Info([], kind, ints=(v,) if kind == "int" else ())


def _merge_children(n, children) -> _Info:
    nonempty = [c for c in children if not c.empty]
    depth = max((len(c.sizes) for c in nonempty), default=0)
    for c in nonempty:
        if len(c.sizes) != depth:
            raise CKValueError("inconsistent nesting depth in nested lists")
    sizes = [n]
    for level in range(depth):
        vals = {c.sizes[level] for c in children if level < len(c.sizes)}
        sizes.append(vals.pop() if len(vals) == 1 and None not in vals else None)
    kind, fields, ints = None, None, []
    for c in children:
        kind = _merge_kind(kind, c.kind)
        ints.extend(c.ints)
        if c.kind == "struct":
            if fields is None:
                fields = {k: list(vs) for k, vs in c.fields.items()}
            elif set(fields) != set(c.fields):
                raise CKValueError(f"structs with different fields: {sorted(fields)} "
                                   f"and {sorted(c.fields)}")
            else:
                for k in fields:
                    fields[k].extend(c.fields[k])
    return _Info(sizes, kind, fields, tuple(ints), empty=(n == 0))


def _dtype_of(info: _Info) -> Type:
    kind = info.kind
    if kind is None or kind == "float":
        return _t.float64
    if kind == "bool":
        return _t.bool_
    if kind == "int":
        lo = min(info.ints, default=0)
        hi = max(info.ints, default=0)
        if -(2**63) <= lo and hi < 2**63:
            return _t.int64
        if lo >= 0 and hi < 2**64:
            return _t.uint64
        raise CKOverflowError(f"integer {hi if hi >= 2**63 else lo} does not fit in "
                              "int64 or uint64")
    if kind == "complex":
        return _t.complex128
    if kind == "string":
        return _t.string
    if kind == "bytes":
        return _t.bytes_type(1)
    if kind == "struct":
        return _t.struct({name: _field_type(vals) for name, vals in info.fields.items()})
    raise CKTypeError(f"cannot infer a type for {kind}")


def _field_type(infos) -> Type:
    merged = _merge_children(len(infos), infos)
    # Fields need a fixed data size: regular dims become fixed dims.
    return _build_type(merged.sizes[1:], merged, fixed_outer=True)


def _build_type(sizes, info, fixed_outer=False) -> Type:
    t = _dtype_of(info)
    seen_var = fixed_outer
    kinds = []
    for s in sizes:
        if s is None:
            kinds.append(("var", None))
            seen_var = True
        elif seen_var:
            kinds.append(("fixed", s))
        else:
            kinds.append(("strided", s))
    for kind, s in reversed(kinds):
        t = _t.var_dim(t) if kind == "var" else (_t.fixed_dim(s, t) if kind == "fixed"
                                                 else _t.strided_dim(t))
    return t


def infer_type(obj) -> Type:
    """The type :func:`array` would give ``obj``."""
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "biufcV":
        t = _t.from_numpy_dtype(obj.dtype)
        for _ in range(obj.ndim):
            t = _t.strided_dim(t)
        return t
    info = _info(obj)
    return _build_type(info.sizes, info)


def _shape_for(t: Type, obj) -> list[int]:
    """Sizes of the leading fixed/strided dims of t, read off obj."""
    shape = []
    cur = obj
    while t.type_id in (_FIXED, _STRIDED):
        if t.type_id == _FIXED:  # the type knows; _write checks the value
            shape.append(t.fixed_size)
            cur = cur[0] if cur is not None and hasattr(cur, "__len__") and len(cur) else None
        elif cur is None:  # below an empty dim: nothing to read sizes from
            shape.append(0)
        else:
            if isinstance(cur, (str, bytes, dict)) or not hasattr(cur, "__len__"):
                raise CKValueError(f"value {cur!r} does not match the dimensions of '{t}'")
            shape.append(len(cur))
            cur = cur[0] if len(cur) else None
        t = t.element
    return shape


def empty(type, shape=()) -> Array:
    """A new zero-filled array of ``type`` (``shape`` gives strided dim sizes)."""
    t = as_type(type)
    shape = c_shape(shape, "empty: shape")
    out = ffi.new("ck_array_preamble **")
    cshape = ffi.new("intptr_t[]", shape) if shape else ffi.NULL
    check(lib.ck_array_empty(t.c_type, cshape, len(shape), lib.CK_ARRAY_DEFAULT_FLAGS, out))
    return Array._own(out[0])


def array(obj, type=None) -> Array:
    """A new array holding a copy of ``obj`` (type inferred unless given)."""
    if isinstance(obj, Array):
        src = obj
        t = as_type(type) if type is not None else src.type
        obj = src.to_list()
    else:
        t = as_type(type) if type is not None else infer_type(obj)
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "OUST":
        obj = obj.tolist()
    if isinstance(obj, np.ndarray):
        leading = sum(1 for k in _dim_kinds(t) if k != _VAR) if t.ndim else 0
        shape = list(obj.shape[:leading]) if not (t.ndim and _VAR in _dim_kinds(t)) \
            else _shape_for(t, obj)
    else:
        shape = _shape_for(t, obj) if t.ndim else []
    a = empty(t, shape)
    _write(t, a._data, a._arrmeta, obj)
    return a


def asarray(obj, type=None) -> Array:
    """Share memory with ``obj`` when it is a NumPy array (or DLPack / array
    interface exporter) of a builtin or aligned struct dtype; otherwise copy
    (ckernel arrays are returned as they are)."""
    if isinstance(obj, Array) and type is None:
        return obj
    if not isinstance(obj, np.ndarray) and (hasattr(obj, "__array_interface__") or
                                            hasattr(obj, "__dlpack__")):
        obj = np.asarray(obj) if hasattr(obj, "__array_interface__") else np.from_dlpack(obj)
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "OUST":
            raise CKTypeError(f"NumPy dtype {obj.dtype} cannot be shared with ckernel; "
                              "use ckernels.array(obj) for an explicit copy")
        dtype_t = _t.from_numpy_dtype(obj.dtype)
        t = dtype_t
        for _ in range(obj.ndim):
            t = _t.strided_dim(t)
        if type is not None and as_type(type) != t:
            raise CKTypeError(f"asarray: NumPy array has type '{t}', not '{as_type(type)}'")
        owner = MemBlock.external(obj)
        flags = lib.CK_ARRAY_READ | (lib.CK_ARRAY_WRITE if obj.flags.writeable else 0)
        out = ffi.new("ck_array_preamble **")
        shape = ffi.new("intptr_t[]", list(obj.shape) or [0])
        strides = ffi.new("intptr_t[]", list(obj.strides) or [0])
        try:
            check(lib.ck_array_view_external(t.c_type, _ptr(obj.__array_interface__["data"][0]),
                                             shape, strides, obj.ndim, flags, owner.ptr, out))
        finally:
            owner.close()  # the view holds its own reference
        return Array._own(out[0])
    return array(obj, type)


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


__all__ = ["Array", "array", "asarray", "empty", "from_dlpack", "debug_repr", "infer_type"]
