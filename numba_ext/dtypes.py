"""The one table of element types, and the one rule for Python scalars.

Every element type a ckernels array or a jitted kernel can hold has one row
here: its ckernel name, ``ck_type_id`` (read from the compiled library's enum),
data size (from the library), NumPy kind and dtype, Numba type and cffi C
type (the C types of each backend are the dialect table's,
:mod:`ckernels.dialects`).  Every other module derives what it needs from this
table (``types``, ``jit``, the CPU code generator, the C emitter and its
dialects, the Numba array views, device arrays); nothing else lists element
types.  Numba is imported lazily: :attr:`DType.numba` imports it on first use,
importing ``ckernels`` does not.

>>> from ckernels import dtypes
>>> dtypes.by_name["int32"].numpy, dtypes.by_name["int32"].cffi
(dtype('int32'), 'int32_t')
>>> dtypes.weak_result("int8", 3), dtypes.weak_result("int8", 1.5)
('int8', 'float64')

Python scalars follow NumPy 2 (NEP 50): a Python ``int``, ``float`` or
``complex`` is *weak* -- it takes the type of the other operands when that type
has its kind (or a higher one) -- while NumPy scalars and Python ``bool`` are
*strong* (``bool`` is the lowest kind, so it never changes a result).  Value
ranges are not part of the rule: ``int8`` combined with the Python int ``300``
is ``int8``, and converting 300 to ``int8`` then fails with an
``OverflowError`` (:class:`ckernels.errors.CKOverflowError`), as in NumPy.
:func:`weak_result` is that rule -- the C library's ``ck_weak_result``, which
the ufunc promoter and the host arrays' fast path use too; :func:`scalar_type`
and :func:`is_weak` classify one value; ``ckernels.ops``, the CPU jit and every
device target use them.
"""

from __future__ import annotations

import numpy as np

from ._ffi import ffi, lib


class DType:
    """One row of the element-type table (immutable)."""

    __slots__ = ("name", "type_id", "size", "kind", "numpy", "numba_name", "cffi", "jit")

    def __init__(self, name, type_id, size, kind, numpy, numba_name, cffi, jit):
        for k, v in zip(self.__slots__, (name, type_id, size, kind, numpy, numba_name, cffi,
                                         jit)):
            object.__setattr__(self, k, v)

    def __setattr__(self, name, value):
        raise AttributeError("ckernels.dtypes.DType is immutable")

    @property
    def numba(self):
        """The Numba type (imports Numba), or None where Numba has no equivalent
        a kernel can use."""
        if self.numba_name is None:
            return None
        from numba.core import types
        return getattr(types, self.numba_name)

    @property
    def builtin(self) -> bool:
        """A builtin scalar (encoded in the ``ck_type`` pointer value)."""
        return self.kind in "biufc"

    def __repr__(self) -> str:
        return f"ckernels.dtypes.by_name[{self.name!r}]"


def _size(type_id: int) -> int:
    return int(lib.ck_type_data_size(ffi.cast("ck_type", type_id)))


_TYPE_IDS = {name: value for value, name in ffi.typeof("ck_type_id").elements.items()}

#   name,         kind, NumPy,          Numba,        cffi,       jit
_ROWS = (
    ("bool",       "b",  np.bool_,       "boolean",    "bool",     True),
    ("int8",       "i",  np.int8,        "int8",       "int8_t",   True),
    ("int16",      "i",  np.int16,       "int16",      "int16_t",  True),
    ("int32",      "i",  np.int32,       "int32",      "int32_t",  True),
    ("int64",      "i",  np.int64,       "int64",      "int64_t",  True),
    ("uint8",      "u",  np.uint8,       "uint8",      "uint8_t",  True),
    ("uint16",     "u",  np.uint16,      "uint16",     "uint16_t", True),
    ("uint32",     "u",  np.uint32,      "uint32",     "uint32_t", True),
    ("uint64",     "u",  np.uint64,      "uint64",     "uint64_t", True),
    ("float16",    "f",  np.float16,     None,         None,       False),
    ("float32",    "f",  np.float32,     "float32",    "float",    True),
    ("float64",    "f",  np.float64,     "float64",    "double",   True),
    ("complex64",  "c",  np.complex64,   "complex64",  None,       True),
    ("complex128", "c",  np.complex128,  "complex128", None,       True),
    # not a builtin scalar (a refcounted descriptor): ck_string {begin, end} data
    ("string",     "s",  None,           "unicode_type", None,       True),
)


def _make(row) -> DType:
    name, kind, npt, nb, cffi, jit = row
    tid = _TYPE_IDS["CK_TYPE_" + name.upper()]
    size = ffi.sizeof("ck_string") if kind == "s" else _size(tid)
    return DType(name, tid, size, kind, None if npt is None else np.dtype(npt), nb, cffi, jit)


#: every row, in ``ck_type_id`` order
ALL: tuple[DType, ...] = tuple(_make(r) for r in _ROWS)
#: the builtin scalars (no ``string``)
BUILTINS: tuple[DType, ...] = tuple(d for d in ALL if d.builtin)
#: element types a jitted kernel may take and return
JIT: tuple[DType, ...] = tuple(d for d in ALL if d.jit)

by_name: dict[str, DType] = {d.name: d for d in ALL}
by_id: dict[int, DType] = {d.type_id: d for d in ALL}
by_numpy: dict[np.dtype, DType] = {d.numpy: d for d in BUILTINS}
#: ``ck_type_id`` -> NumPy dtype, for every builtin element type (what the C
#: helpers that make NumPy results are given: ufunc loops, whole-array
#: reductions of host arrays)
DTYPE_OF_ID: dict[int, np.dtype] = {d.type_id: d.numpy for d in BUILTINS}


#: the buffer-protocol (PEP 3118 / ``struct``) format of each builtin element
#: type, as NumPy exports it
BUFFER_FORMATS: dict[str, str] = {d.name: memoryview(np.empty(0, d.numpy)).format
                                  for d in BUILTINS}


def of_numpy(dt) -> DType | None:
    """The row of a NumPy dtype (any byte order), or None."""
    dt = np.dtype(dt)
    return by_numpy.get(dt if dt.isnative else dt.newbyteorder("="))


def of_numba(nbty) -> DType | None:
    """The row of a Numba type (``Optional(T)`` gives T's, literals their
    type's), or None."""
    try:
        return _BY_NUMBA[nbty]
    except KeyError:
        pass
    except TypeError:   # unhashable
        return None
    from numba.core import types
    t = nbty.type if isinstance(nbty, types.Optional) else nbty
    t = types.unliteral(t)
    found = None
    for d in JIT:
        if d.numba_name is not None and d.numba == t:
            found = d
            break
    _BY_NUMBA[nbty] = found
    return found


_BY_NUMBA: dict = {}


# ------------------------------------------------------------ Python scalars --
def is_weak(value) -> bool:
    """Whether ``value`` is a weak Python scalar (exactly ``int``, ``float`` or
    ``complex``; ``bool`` and NumPy scalars are strong), as NumPy decides."""
    return type(value) in _WEAK_KIND


_WEAK_KIND = {int: "i", float: "f", complex: "c"}

#: exact Python scalar types -> their element type on their own (an ``int``
#: beyond int64's range is uint64: :func:`scalar_type`)
PYTHON_SCALARS = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


def _default_int(value: int) -> str:
    if -2**63 <= value < 2**63:
        return "int64"
    if 0 <= value < 2**64:
        return "uint64"
    from .errors import CKOverflowError
    raise CKOverflowError(f"Python integer {value} does not fit in int64 or uint64")


def scalar_type(value) -> str | None:
    """The element type of a scalar on its own (a weak one takes its default):
    NumPy scalars their dtype's, ``bool`` -> bool, ``int`` -> int64 (uint64
    above its range), ``float`` -> float64, ``complex`` -> complex128,
    ``str`` -> string (subclasses of these likewise, but strong); None for
    anything else."""
    t = type(value)
    name = PYTHON_SCALARS.get(t)
    if name is not None:
        return _default_int(value) if t is int else name
    if isinstance(value, np.generic):
        if isinstance(value, np.str_):
            return "string"
        d = of_numpy(value.dtype)
        return d.name if d is not None else None
    if isinstance(value, str):
        return "string"
    # subclasses of the Python number types (IntEnum, ...): strong, as in NumPy
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return _default_int(int(value))
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    return None


def weak_result(name: str, value) -> str:
    """NEP 50: the element type of a strong operand of type ``name`` combined
    with the Python scalar ``value`` (``np.result_type(dtype, value)``).  For
    a weak ``value`` that is ``name`` when its kind is at least the scalar's
    (int < float < complex), else the lowest type of the scalar's kind that
    keeps ``name``'s precision; a strong ``value`` (bool, NumPy scalar)
    combines by ordinary promotion."""
    kind = _WEAK_KIND.get(type(value))
    if kind is not None:   # depends on the scalar's type only: memoised
        key = (name, kind)
        r = _WEAK_RESULTS.get(key)
        if r is None:
            r = _WEAK_RESULTS[key] = _weak_result(by_name[name], kind)
        if not r:
            raise TypeError(f"ckernels: cannot combine a Python {type(value).__name__} with "
                            f"{name}")
        return r
    d = by_name[name]
    other = scalar_type(value)
    if other is None or other == "string" or not d.builtin:
        raise TypeError(f"ckernels: cannot combine {type(value).__name__} with {name}")
    return promote(name, other)


_WEAK_RESULTS: dict = {}


_WEAK_CODES = {"i": lib.CK_WEAK_INT, "f": lib.CK_WEAK_FLOAT, "c": lib.CK_WEAK_COMPLEX}


def _weak_result(d: DType, kind: str) -> str:
    """The rule for a weak scalar of kind ``kind`` ("" for a non-builtin
    type): the library's ``ck_weak_result``, the one implementation the C
    extensions use too."""
    if not d.builtin:
        return ""
    out = ffi.new("ck_type_id *")
    if lib.ck_weak_result(d.type_id, _WEAK_CODES[kind], out) != lib.CK_OK:
        return ""
    return by_id[out[0]].name


def weak_matches(name: str, value) -> bool:
    """Whether the weak Python scalar ``value`` passes as an operand of type
    ``name`` without changing it (``weak_result(name, value) == name``)."""
    kind = _WEAK_KIND.get(type(value))
    if kind is not None:
        r = _WEAK_RESULTS.get((name, kind))
        if r is not None:
            return r == name
    try:
        return weak_result(name, value) == name
    except TypeError:
        return False


def promote(*names: str) -> str:
    """NumPy's promotion of builtin element types (``np.result_type``)."""
    return of_numpy(np.result_type(*(by_name[n].numpy for n in names))).name


def weak_scalar_type(value, strong: list[str]) -> str:
    """The element type a scalar takes in an operation whose strong operands
    have the builtin element types ``strong``: NEP 50 against their promoted
    type; its own type (:func:`scalar_type`) when there is none."""
    builtin = [n for n in strong if by_name[n].builtin] if strong else []
    if not is_weak(value) or not builtin:
        return scalar_type(value)
    return weak_result(promote(*builtin) if len(builtin) > 1 else builtin[0], value)


__all__ = ["DType", "ALL", "BUILTINS", "JIT", "PYTHON_SCALARS", "by_name", "by_id", "by_numpy",
           "DTYPE_OF_ID",
           "BUFFER_FORMATS",
           "of_numpy", "of_numba", "is_weak", "scalar_type", "weak_result", "weak_matches",
           "promote", "weak_scalar_type"]
