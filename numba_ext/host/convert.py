"""Python values <-> host array memory: the one place that converts between
nested Python values (lists, tuples, dicts, str, bytes, numbers, NumPy
arrays) and the layout of a ckernel type.

Entry points (all over ``(type, data address, arrmeta address)``):

* :func:`read` -- the value at ``data`` as nested lists / scalars / ``str`` /
  ``bytes`` / ``dict`` (``Array.tolist``);
* :func:`prepare` -- a Python value made safe to convert with the type and
  shape of the array that holds it (the given type, or one inferred:
  :func:`infer_type`);
* :func:`write` -- a prepared value written into memory of its type (the
  array made for it by the caller), every scalar checked
  (:func:`check_scalar`: no silent overflow, truncation or type change).

:func:`is_plain` tells the caller when NumPy may convert a list directly.

The work is C (``ckernels._convert``, ``src/python/convert/*.c``): one pass
reads a value, one scan infers the type of nested lists, tuples, dicts,
``str``, ``bytes`` and numbers (they cannot change while C reads them: no
snapshot is needed), and one pass writes them, every arena sized first and
allocated once.  Everything else -- other sequence types, NumPy arrays
inside lists, NumPy scalars in the inference -- is read once by
:func:`snapshot` (hostile sequences are a clear error) and then takes the
same C writer, or, for NumPy arrays inside the value, the Python writer
(``_write_py``, with the same checks and messages).

Missing values (``None`` where a scalar, string or bytes is needed) make
the inferred element type an option ``?T`` (as pyarrow infers; the writer
clears their validity bits), unless ``fill_value`` gives the value to use
instead.  ``None`` inside struct fields, in ragged lists, or where a type
without an option is given is a :class:`CKValueError` with their count and
the first one's index (``docs/nulls.md``).
"""

from __future__ import annotations

import datetime as _dt
import numbers
from typing import Any

import numpy as np

from .. import _convert as _c          # the C conversions (src/python/convert/*.c)
from .. import types as _t
from . import time_values as _tv
from .time_values import time_scalar  # noqa: F401  (ckernels.host.convert.time_scalar)
from .._native import check, ffi, lib
from ..arraylike import ArrayLike
from ..errors import CKOverflowError, CKTypeError, CKValueError, NotSupportedError
from ..types import Type
from .arrmeta import (_FIXED, _STRIDED, _VAR, _STRING, _BYTES, _STRUCT, _POINTER, DIM_AM,
                     PTR_AM, VAR_AM, _addr, _ptr, dim_kinds, numpy_dims, numpy_view, strided,
                     struct_layout)

_OPTION = lib.CK_TYPE_OPTION
#: instants and durations: NumPy's datetime64 / timedelta64 kinds
_TIME_KINDS = {int(lib.CK_TYPE_DATETIME): "M", int(lib.CK_TYPE_TIMEDELTA): "m"}
_OPTION_AM = ffi.sizeof("ck_option_arrmeta")

#: most nesting levels a Python value may have (a ckernel type nests at most
#: CK_TYPE_MAX_DEPTH levels, the element included)
MAX_DEPTH = lib.CK_TYPE_MAX_DEPTH - 1


#: Python containers the C scan and writer read directly (exact types: their
#: length cannot lie and reading them runs no user code)
_C_READS = (list, tuple, dict, str, bytes)


def _type_address(t: Type) -> int:
    return int(ffi.cast("uintptr_t", t.c_type))


# ---- memory -> values ------------------------------------------------------------

def read(t: Type, data: int, arrmeta: int) -> Any:
    """The value of type ``t`` at ``data`` (C: ``_convert.read``)."""
    return _c.read(_type_address(t), data, arrmeta)


def _read_py(t: Type, data: int, arrmeta: int) -> Any:
    """:func:`read` in Python (cffi per element): the reference the C
    reader is tested against."""
    tid = t.type_id
    if t.is_builtin:
        dt = _t.builtin_numpy_dtype(t)
        return np.frombuffer(ffi.buffer(_ptr(data), dt.itemsize), dt)[0].item()
    if tid in (_FIXED, _STRIDED):
        am = ffi.cast("ck_dim_arrmeta *", arrmeta)
        el = t.element
        fast = numpy_dims(t, data, arrmeta)
        if fast is not None:
            return fast.tolist()
        return [_read_py(el, data + i * am.stride, arrmeta + DIM_AM) for i in range(am.size)]
    if tid == _VAR:
        am = ffi.cast("ck_var_dim_arrmeta *", arrmeta)
        d = ffi.cast("ck_var_dim_data *", data)
        if d.size == 0:
            return []
        base = _addr(d.begin) + am.offset
        el = t.element
        if el.is_builtin:
            return numpy_view(base, (d.size,), (am.stride,), _t.builtin_numpy_dtype(el),
                               True, None).tolist()
        return [_read_py(el, base + i * am.stride, arrmeta + VAR_AM) for i in range(d.size)]
    if tid in (_STRING, _BYTES):
        s = ffi.cast("ck_string *", data)
        raw = ffi.buffer(s.begin, _addr(s.end) - _addr(s.begin))[:] if s.begin != ffi.NULL else b""
        return raw.decode("utf-8") if tid == _STRING else raw
    if tid == _STRUCT:
        offsets = ffi.cast("uintptr_t *", arrmeta)
        return {name: _read_py(ft, data + offsets[i], arrmeta + am_off)
                for i, (name, ft, am_off) in enumerate(struct_layout(t))}
    if tid == _POINTER:
        p = ffi.cast("char **", data)[0]
        if p == ffi.NULL:
            return None
        am = ffi.cast("ck_pointer_arrmeta *", arrmeta)
        return _read_py(t.element, _addr(p) + am.offset, arrmeta + PTR_AM)
    raise CKTypeError(f"cannot read values of type '{t}'")


# ---- values -> memory ------------------------------------------------------------

def check_scalar(t: Type, value):
    """Python value -> NumPy scalar of builtin type t, with DyND's default
    (fractional) checking: no silent overflow, truncation or type change."""
    dt = _t.builtin_numpy_dtype(t)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (str, bytes, list, tuple, dict)) or value is None:
        raise CKTypeError(f"cannot assign {type(value).__name__} value {value!r} to {t}")
    if not isinstance(value, (numbers.Number, np.generic)):
        raise CKTypeError(f"cannot assign {type(value).__name__} value to {t}")
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


def write(t: Type, data: int, arrmeta: int, value: Any, fill_value=None) -> None:
    """Write a prepared Python value (see :func:`prepare`) into data of type
    ``t``, just made: C (``_convert.write_at``: arenas sized first, one
    allocation each); a value holding NumPy arrays is snapshotted and written
    by :func:`_write_py`.  Missing values: see the module docstring."""
    try:
        _c.write_at(_type_address(t), data, arrmeta, value, fill_value)
    except _c.Unsupported:
        snap = snapshot(value)
        _write_py(t, data, arrmeta, snap if fill_value is None else _filled(snap, fill_value))


def _filled(snap, fill_value):
    """A snapshot with its ``None`` leaves replaced by ``fill_value``."""
    if snap is None:
        return fill_value
    if isinstance(snap, list):
        return [_filled(v, fill_value) for v in snap]
    if isinstance(snap, dict):
        return {k: _filled(v, fill_value) for k, v in snap.items()}
    return snap


def _write_py(t: Type, data: int, arrmeta: int, value: Any) -> None:
    """Write a snapshotted Python value (see :func:`snapshot`: lists, dicts,
    scalars, str, bytes, NumPy arrays) into data of type ``t``."""
    tid = t.type_id
    if t.is_builtin:
        v = check_scalar(t, value)
        ffi.memmove(_ptr(data), v.tobytes(), v.itemsize)
        return
    if tid == _OPTION:
        check(lib.ck_option_set_valid(ffi.cast("ck_option_arrmeta *", arrmeta), _ptr(data),
                                      value is not None))
        if value is not None:
            _write_py(t.element, data, arrmeta + _OPTION_AM, value)
        return
    if tid in (_FIXED, _STRIDED):
        am = ffi.cast("ck_dim_arrmeta *", arrmeta)
        if isinstance(value, np.ndarray):
            if value.ndim == 0:
                raise CKValueError(f"a 0-d value where '{t}' needs {am.size} elements")
            view = numpy_dims(t, data, arrmeta, writable=True)
            if view is not None and value.dtype.kind in "biufc":
                if value.shape != view.shape:
                    raise CKValueError(f"data of shape {value.shape} does not fit "
                                       f"dims {view.shape} of type '{t}'")
                _write_numpy(t.dtype, view, value)
                return
            value = list(value)
        if not isinstance(value, list):
            raise CKTypeError(f"expected a sequence of {am.size} for '{t}', got {value!r}")
        if len(value) != am.size:
            raise CKValueError(f"expected {am.size} elements for '{t}', got {len(value)}")
        view = numpy_dims(t, data, arrmeta, writable=True)
        if view is not None:
            arr = _regular_numpy(value)
            if arr is not None and arr.shape == view.shape and arr.dtype.kind in "biufc":
                _write_numpy(t.dtype, view, arr)
                return
        el = t.element
        for i, v in enumerate(value):
            _write_py(el, data + i * am.stride, arrmeta + DIM_AM, v)
        return
    if tid == _VAR:
        if isinstance(value, np.ndarray):
            value = list(value) if value.ndim else value
        if not isinstance(value, list):
            raise CKTypeError(f"expected a sequence for '{t}', got {value!r}")
        n = len(value)
        check(lib.ck_var_dim_alloc(t.c_type, _ptr(data), _ptr(arrmeta), n))
        am = ffi.cast("ck_var_dim_arrmeta *", arrmeta)
        d = ffi.cast("ck_var_dim_data *", data)
        base = _addr(d.begin) + am.offset if n else 0
        el = t.element
        if n and el.is_builtin:
            view = numpy_view(base, (n,), (am.stride,), _t.builtin_numpy_dtype(el), False,
                               None)
            arr = _regular_numpy(value)
            if arr is not None and arr.shape == (n,) and arr.dtype.kind in "biufc":
                _write_numpy(el, view, arr)
                return
        for i, v in enumerate(value):
            _write_py(el, base + i * am.stride, arrmeta + VAR_AM, v)
        return
    if tid == _STRING:
        if isinstance(value, bytes):
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CKValueError(f"bytes are not valid UTF-8: {exc}") from None
            raw = value
        elif isinstance(value, (str, np.str_)):
            try:
                raw = str(value).encode("utf-8")
            except UnicodeEncodeError as exc:
                raise CKValueError(f"string is not valid Unicode (UTF-8): {exc}") from None
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
        layout = struct_layout(t)
        offsets = ffi.cast("uintptr_t *", arrmeta)
        if isinstance(value, dict):
            names = [n for n, _, _ in layout]
            if set(value) != set(names):
                raise CKValueError(f"struct '{t}' needs exactly the fields {names}, "
                                   f"got {sorted(map(str, value))}")
            items = [value[n] for n in names]
        elif isinstance(value, (list, np.void)) and len(value) == len(layout):
            items = [value[i] for i in range(len(layout))]
        else:
            raise CKTypeError(f"cannot assign {value!r} to struct '{t}'")
        for i, ((_, ft, am_off), v) in enumerate(zip(layout, items)):
            _write_py(ft, data + offsets[i], arrmeta + am_off, v)
        return
    if tid == _POINTER:
        raise NotSupportedError(f"pointer values cannot be built from Python objects ('{t}')")
    if int(tid) in _TIME_KINDS:
        v = time_scalar(t, value)
        ffi.memmove(_ptr(data), v.tobytes(), v.itemsize)
        return
    if _tv.write_calendar(t, _ptr(data), value):     # dates, times of day
        return
    raise CKTypeError(f"cannot write values of type '{t}'")


def _regular_numpy(value: list):
    """``value`` (a snapshot list) as a numeric NumPy array when it is regular
    and every level is a list (no objects of ours inside), else None."""
    try:
        arr = np.array(value)
    except (ValueError, TypeError, OverflowError):
        return None
    if arr.dtype.kind == "f" and arr.size and (np.abs(arr) >= 2.0**63).any():
        return None   # possibly int64 and uint64 ints promoted to float64 (lossy)
    return arr if arr.dtype.kind in "biufc" else None


def _write_numpy(dtype_t: Type, view: np.ndarray, arr: np.ndarray) -> None:
    """Bulk assignment with the same checks as check_scalar."""
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
        view[idx] = check_scalar(dtype_t, arr[idx].item())


# ---- Python values, read once (hardened) ---------------------------------------------

def snapshot(obj, depth: int = 0, path: tuple = ()):
    """``obj`` as a tree of plain lists, dicts and leaves, each sequence read
    exactly once (its ``len`` checked against what it yields), so nothing a
    conversion does later depends on user code: a sequence that changes while
    being read, lies about its length, contains itself or nests deeper than
    :data:`MAX_DEPTH` levels is a clear error, never a crash."""
    if isinstance(obj, (str, bytes, bytearray, memoryview, numbers.Number, np.generic)) or \
            obj is None:
        return bytes(obj) if isinstance(obj, (bytearray, memoryview)) else obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "OUSTV" or obj.dtype.fields is not None:
            return snapshot(obj.tolist(), depth, path) if obj.ndim else \
                snapshot(obj.item(), depth, path)
        return obj.copy() if obj.ndim else obj[()]
    if isinstance(obj, ArrayLike):
        return snapshot(obj.tolist(), depth, path)
    if depth >= MAX_DEPTH:
        raise CKValueError(f"the value nests deeper than {MAX_DEPTH} levels (a ckernel "
                           "type has at most that many dims)")
    if id(obj) in path:
        raise CKValueError(f"the {type(obj).__name__} contains itself; a self-referencing "
                           "value has no array equivalent")
    if isinstance(obj, dict):
        inner = path + (id(obj),)
        return {k: snapshot(v, depth + 1, inner) for k, v in list(obj.items())}
    if not (hasattr(obj, "__len__") and hasattr(obj, "__getitem__")):
        return obj   # not a sequence (sets, generators, ...): a leaf the inference names
    try:
        n = len(obj)
        items = list(obj)
    except RecursionError:
        raise CKValueError("the value nests too deeply to convert") from None
    if len(items) != n:
        raise CKValueError(f"a {type(obj).__name__} reported len() == {n} but produced "
                           f"{len(items)} items (was it changed while being converted?)")
    inner = path + (id(obj),)
    return [snapshot(v, depth + 1, inner) for v in items]


def is_plain(obj) -> bool:
    """Whether ``obj`` is a list/tuple whose nested sequences are all lists,
    tuples or NumPy arrays (their lengths are honest), checked level by level
    along the rows: then ``np.array(obj)`` may convert it directly.  A value
    whose first leaf is no number is not (strings, dicts: answered at once)."""
    first = obj
    for _ in range(MAX_DEPTH):
        if type(first) not in (list, tuple) or not first:
            break
        first = first[0]
    if type(first) not in _LEAF_TYPES and not isinstance(first, (np.ndarray, list, tuple)):
        return False
    level = [obj]
    for _ in range(MAX_DEPTH):
        nxt = []
        for x in level:
            if isinstance(x, np.ndarray):
                continue
            if type(x) not in (list, tuple):
                return False
            if x and isinstance(x[0], (list, tuple, np.ndarray)) or \
                    any(type(v) not in _LEAF_TYPES for v in x):
                nxt.extend(v for v in x if not isinstance(v, np.ndarray))
        if not nxt:
            return True
        if any(type(v) in _LEAF_TYPES for v in nxt):
            return False   # mixed nesting: NumPy errs, the slow path explains
        level = nxt
    return False


_LEAF_TYPES = {bool, int, float, complex, np.bool_, np.int8, np.int16, np.int32, np.int64,
               np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64,
               np.complex64, np.complex128}

# ---- type inference ------------------------------------------------------------

_KIND_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}


class _Info:
    """What a Python value looks like: per-level sizes (None = ragged), the
    scalar kind, and for dicts the field infos."""

    __slots__ = ("sizes", "kind", "fields", "ints", "empty", "nulls", "null_rows", "none")

    def __init__(self, sizes, kind, fields=None, ints=(), empty=False, nulls=0,
                 null_rows=frozenset(), none=False):
        self.sizes, self.kind, self.fields, self.ints, self.empty = sizes, kind, fields, ints, empty
        self.nulls = nulls      # None leaves (an option element type)
        #: the levels (indices into sizes) where None stands for a list: a
        #: null row, `?var * T` there (as pa.array infers a list with nulls)
        self.null_rows = null_rows
        self.none = none        # this value is None itself


def _scalar_kind(v):
    if isinstance(v, np.timedelta64):      # a subclass of np.signedinteger
        return None
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
    if a.startswith("time ") and b.startswith("time "):
        return _tv.merge_time_kinds(a, b)
    raise CKTypeError(f"cannot mix {a} and {b} values in one array")


_NUMBER_KINDS = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}


def _info(v) -> _Info:
    """The shape of a snapshot (see :func:`snapshot`)."""
    if isinstance(v, np.ndarray):
        kind = _NUMBER_KINDS.get(v.dtype.kind)
        if kind is None:      # datetime64, timedelta64, ...: snapshot keeps no others
            raise _t.unsupported_dtype(v.dtype)
        ints = (int(v.min()), int(v.max())) if kind == "int" and v.size else ()
        info = _Info(list(v.shape), kind, ints=ints, empty=v.size == 0 and v.ndim > 0)
        info.sizes = [int(s) for s in v.shape]
        return info
    if isinstance(v, dict):
        return _Info([], "struct", {k: [_info(x)] for k, x in v.items()})
    if isinstance(v, list):
        children = [_info(c) for c in v]
        return _merge_children(len(v), children)
    if v is None:
        return _Info([], None, nulls=1, none=True)
    kind = _scalar_kind(v)
    if kind is None:
        kind = _tv.time_kind(v)
    if kind is None and isinstance(v, np.generic):
        raise _t.unsupported_dtype(v.dtype)
    if kind is None:
        raise CKTypeError(f"cannot infer a ckernel type for {type(v).__name__} value {v!r}")
    return _Info([], kind, ints=(v,) if kind == "int" else ())


def _merge_children(n, children) -> _Info:
    # None among lists is a null row (it counts as a ragged, empty list here)
    rows = [c for c in children if not c.none]
    nrows = len(children) - len(rows) if any(c.sizes for c in rows) else 0
    if nrows:
        children = rows
    nonempty = [c for c in children if not c.empty]
    depth = max((len(c.sizes) for c in nonempty), default=0)
    for c in nonempty:
        if len(c.sizes) != depth:
            raise CKValueError("inconsistent nesting depth in nested lists")
    if not nonempty:   # only empty lists below: NumPy's [[], []] is (2, 0)
        depth = max((len(c.sizes) for c in children), default=0)
    sizes = [n]
    for level in range(depth):
        vals = {c.sizes[level] for c in children if level < len(c.sizes)}
        if any(len(c.sizes) <= level for c in children):
            vals.add(None)
        sizes.append(vals.pop() if len(vals) == 1 and None not in vals and
                     not (nrows and level == 0) else None)
    null_rows = {lv + 1 for c in children for lv in c.null_rows}
    if nrows:
        null_rows.add(1)
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
    return _Info(sizes, kind, fields, tuple(ints), empty=(n == 0),
                 nulls=sum(c.nulls for c in children), null_rows=frozenset(null_rows))


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
    if kind.startswith("time "):
        return _t.parse(kind[5:])
    raise CKTypeError(f"cannot infer a type for {kind}")


def _field_type(infos) -> Type:
    merged = _merge_children(len(infos), infos)
    # Fields need a fixed data size: regular dims become fixed dims.
    return _build_type(merged.sizes[1:], merged, fixed_outer=True)


def _build_type(sizes, info, fixed_outer=False, dtype: Type | None = None) -> Type:
    t = _dtype_of(info) if dtype is None else dtype
    seen_var = fixed_outer
    kinds = []
    rows = info.null_rows
    for s in sizes:
        if s is None:
            kinds.append(("var", None))
            seen_var = True
        elif seen_var:
            kinds.append(("fixed", s))
        else:
            kinds.append(("strided", s))
    for level, (kind, s) in reversed(list(enumerate(kinds))):
        t = _t.var_dim(t) if kind == "var" else (_t.fixed_dim(s, t) if kind == "fixed"
                                                 else _t.strided_dim(t))
        if level in rows:     # null rows: `?var * T`
            t = _t.option(t)
    return t


def prepare(obj, want: Type | None = None, el: Type | None = None,
            fill_value=None) -> tuple:
    """``(type, shape, value)`` for a new array holding ``obj``: the whole
    type ``want`` (its dims checked against the value), else a type inferred
    from the value with the element type ``el`` when given; ``shape`` is the
    sizes of the type's leading fixed/strided dims (what ``ck_array_empty``
    takes), ``value`` what :func:`write` then writes (``obj`` itself when C
    reads it directly, else its :func:`snapshot`)."""
    snap = obj if type(obj) in _C_READS else snapshot(obj)
    if want is not None:
        t = want
        shape = shape_for(t, snap) if t.ndim else []
        check_dims(t, snap)
        return t, shape, snap
    vel = el.value_type if el is not None and el.is_option else el
    scanned = None
    if vel is not None and int(vel.type_id) in _TIME_KINDS:    # shape and nulls only
        info = _info(_time_leaves(snapshot(obj) if fill_value is None else
                                  _filled(snapshot(obj), fill_value)))
    else:
        scanned = _c.scan(snap, fill_value)     # C; None: the Python inference decides
    if scanned is not None:
        info = _from_scan(scanned[:5])
        info.nulls = scanned[5]
    elif vel is None or int(vel.type_id) not in _TIME_KINDS:
        if snap is obj:
            snap = snapshot(obj)
        info = _info(snap if fill_value is None else _filled(snap, fill_value))
    if info.nulls:                          # None leaves: the element is an option ?T
        if info.kind == "struct":
            raise CKValueError(f"{info.nulls} missing value(s) (None) inside struct fields; "
                               "option fields are not supported here yet: pass "
                               "fill_value=... to use a value in their place")
        el = _t.option(_dtype_of(info) if el is None else el)
    t = _build_type(info.sizes, info, dtype=el)
    shape = shape_for(t, snap) if t.ndim else []
    return t, shape, snap


def _time_leaves(snap):
    """A snapshot with its instants and durations as 0: its shape and nulls,
    what the inference reads when the element type is a given time type (the
    values are checked when written, :func:`time_scalar`)."""
    if isinstance(snap, list):
        return [_time_leaves(v) for v in snap]
    if isinstance(snap, np.ndarray) and snap.dtype.kind in "Mm":
        return np.zeros(snap.shape, np.int64)
    if isinstance(snap, (np.datetime64, np.timedelta64, _dt.date, _dt.timedelta)):
        return 0
    return snap


def _from_scan(scanned, field: bool = False) -> _Info:
    """The :class:`_Info` of what ``_convert.scan`` found: ``(sizes, kind,
    lo, hi, fields)``, each field's entry already merged over all its values
    (its sizes start with their count).  A field becomes the one child whose
    merge :func:`_field_type` makes."""
    sizes, kind, lo, hi, fields = scanned
    if fields is not None:
        fields = {k: [_from_scan(v, field=True)] for k, v in fields.items()}
    ints = () if lo is None else (lo, hi)
    if field:
        return _Info(list(sizes[1:]), kind, fields, ints)
    return _Info(list(sizes), kind, fields, ints, empty=bool(sizes) and sizes[0] == 0)


def infer_type(obj) -> Type:
    """The type :func:`array` would give ``obj``."""
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "biufc":
        return strided(_t.from_numpy_dtype(obj.dtype), obj.ndim)
    return prepare(obj)[0]


def shape_for(t: Type, obj) -> list[int]:
    """Sizes of the leading fixed/strided dims of t, read off a snapshot."""
    shape = []
    cur = obj
    level = 0
    while t.type_id in (_FIXED, _STRIDED):
        if isinstance(cur, np.ndarray) and cur.ndim == 0:
            cur = cur[()]
        if t.type_id == _FIXED:  # the type knows; write checks the value
            shape.append(t.fixed_size)
            cur = cur[0] if isinstance(cur, (list, tuple, np.ndarray)) and len(cur) else None
        elif cur is None:  # below an empty dim: nothing to read sizes from
            shape.append(0)
        else:
            if not isinstance(cur, (list, tuple, np.ndarray)):
                raise CKValueError(f"the value has {level} dims where type '{t}' needs more "
                                   f"(at {cur!r})")
            shape.append(len(cur))
            cur = cur[0] if len(cur) else None
        t = t.element
        level += 1
    return shape


def check_dims(t: Type, snap) -> None:
    """A value with more regular dims than ``t`` is a clear error (NumPy would
    say "the truth value is ambiguous" deep inside)."""
    if isinstance(snap, np.ndarray):
        nreg = len(dim_kinds(t))
        if snap.ndim > nreg and t.dtype.type_id != _STRUCT:
            raise CKValueError(f"data of shape {snap.shape} has {snap.ndim} dims; type "
                               f"'{t}' has {nreg}")
        if snap.ndim < len(dim_kinds(t)) and _VAR not in dim_kinds(t):
            raise CKValueError(f"data of shape {snap.shape} has {snap.ndim} dims; type "
                               f"'{t}' has {len(dim_kinds(t))}")


# the C writer's checked conversion of scalars it does not store itself
_BUILTIN_BY_ID = {t.type_id: t for t in _t.BUILTIN_TYPES}
_c.setup(lambda type_id, value: check_scalar(_BUILTIN_BY_ID[type_id], value))
