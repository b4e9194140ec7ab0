"""ckernel arrays in jitted code: ``CkArrayType``, a typed *view* of a ``ck_array_preamble``.

A :class:`ckernels.Array` passed to a ``@numba.njit`` function is unboxed as a
``CkArrayType(dims, dtype)``:

* ``dims`` -- the kinds of the array's leading dimensions, ``"strided"`` (a
  fixed or a strided dim: both have ``{size, stride}`` arrmeta) or ``"var"``;
* ``dtype`` -- the element type: a Numba scalar for the builtin scalars
  (``bool`` -> ``boolean``, ``int8`` ... ``complex128``; ``float16`` elements
  read as ``float32`` and are rounded when stored), ``CkStringType``
  for ``string``, or :class:`CkUnsupportedElement` (structs, bytes, pointers:
  dims, ``len`` and iteration over outer dims work, reading or writing an
  element is a ``TypingError``).

The type is fixed when the function is compiled; sizes and strides are
runtime values.  Every view (an argument, a slice, a row) is one struct:

    preamble  the argument's ``ck_array_preamble *`` (borrowed, see below)
    data      the view's data pointer
    arrmeta   arrmeta of the first dim that is *not* cached (or of the dtype)
    flags     the argument's flags (``CK_ARRAY_WRITE`` checked by writes)
    derived   False for the argument itself, True for views made from it
    shape, strides   the *cached* leading dims

The cached ("materialised") dims are the leading fixed/strided dims, and a
var dim in position 0 (a single row: its ``{begin, size}`` is read once, the
view then addresses ``begin + offset`` like a strided dim).  A var dim below
position 0 has a size per row: it stays in arrmeta, ``a.shape`` reports -1
for it (as ``ck_array_shape``) and it is cached when indexing makes it the
first dim (``a[i]`` of a ``strided * var * int32`` array is a 1-d view of that
row).  Hence indexing and slicing the cached dims is pure arithmetic: a
contiguous ``float64`` loop compiles to plain loads (no calls).

Operations: ``a.shape``, ``a.strides`` (tuples of intp), ``a.ndim``,
``a.writable``, ``len(a)``, ``a[i]`` (negative indices; out of range raises
:class:`ckernels.errors.CKIndexError`, an IndexError), ``a[i, j]``, slices with
any step (``a[1:5]``, ``a[::-1]``, ``a[::2, 1]``; views of the same memory),
``for x in a``; ``a[i] = v`` / ``a[i, j] = v`` for builtin elements (Numba's
cast rules) and for ``string`` elements from a Numba ``str`` (UTF-8 into the
string arena of the array); writes check the WRITE flag and raise
:class:`ckernels.errors.InvalidStateError` ("ckernel array is read-only").
Reading a ``string`` element gives a ``CkString`` view (``len``, ``str()``,
indexing, comparisons, hashing: see :mod:`.strings`).

Ownership (borrowed views)
--------------------------
Unboxing *borrows*: no reference count changes and no allocation; the Python
argument keeps the array alive during the call.  Views made in jitted code
(slices, rows, elements) borrow the same memory: they own nothing and cost
nothing, and they are valid while the argument lives, i.e. during the call.
Do not let a view outlive the call (e.g. stored in a typed container read
after the call returned).

Returning a view to Python is refcount-correct and never fails:

* the argument itself (``derived`` False) boxes to a new :class:`ckernels.Array`
  owning a new reference to the same C array;
* a view made in jitted code with builtin elements and only cached dims (any
  slice/row of a fixed/strided array, a var row) boxes to a new C array made by
  ``ck_array_view_external`` over the same memory, whose data owner is the
  argument's array memblock (one reference taken): writes through it are
  visible in the argument and it keeps everything it reaches alive;
* other views made in jitted code (string, struct or bytes elements, or var
  dims still in arrmeta) box to a *copy* (``ckernels.array`` of the values, the
  outer dims strided): C has no constructor for a view of such data from raw
  pointers.

Layout offsets used here (preamble, dim, var-dim and string structs) are
checked against libckernel's ``ck_layout_table`` at import.

This module holds the type, its data model and ``typeof``; the view
arithmetic in LLVM IR is :mod:`.array_views`, the operations (boxing,
attributes, indexing, iteration) :mod:`.array_lowering`.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import models, register_model, typeof_impl

from .. import _native
from .. import dtypes as _dtypes
from .. import types as _ckt
from ..host.array import Array
from . import symbols
from .stringtype import CkStringType, ck_string_type

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i64 = ir.IntType(64)

STRIDED = "strided"
VAR = "var"

# ----------------------------------------------------------------- layout ----
#: (struct, field) -> (offset, size); a field of "" is (alignment, sizeof)
ASSUMED_LAYOUT = {
    ("ck_array_preamble", ""): (8, 40),
    ("ck_array_preamble", "memblock"): (0, 8),
    ("ck_array_preamble", "data"): (16, 8),
    ("ck_array_preamble", "flags"): (24, 8),
    ("ck_dim_arrmeta", ""): (8, 16),
    ("ck_dim_arrmeta", "size"): (0, 8),
    ("ck_dim_arrmeta", "stride"): (8, 8),
    ("ck_var_dim_data", ""): (8, 16),
    ("ck_var_dim_data", "begin"): (0, 8),
    ("ck_var_dim_data", "size"): (8, 8),
    ("ck_var_dim_arrmeta", ""): (8, 24),
    ("ck_var_dim_arrmeta", "stride"): (8, 8),
    ("ck_var_dim_arrmeta", "offset"): (16, 8),
    ("ck_string", "begin"): (0, 8),
    ("ck_string", "end"): (8, 8),
    ("ck_string_arrmeta", "blockref"): (0, 8),
}
PREAMBLE_DATA, PREAMBLE_FLAGS, PREAMBLE_SIZE = 16, 24, 40
DIM_SIZE, DIM_STRIDE, DIM_ARRMETA_SIZE = 0, 8, 16
VAR_BEGIN, VAR_SIZE = 0, 8
VAR_STRIDE, VAR_OFFSET, VAR_ARRMETA_SIZE = 8, 16, 24
STRING_BEGIN, STRING_END = 0, 8
FLAG_WRITE = 2


def layout_mismatches() -> list[str]:
    """Differences between :data:`ASSUMED_LAYOUT` and libckernel's layout table."""
    return symbols.layout_mismatches(ASSUMED_LAYOUT)


symbols.check_layout(ASSUMED_LAYOUT, "ckernels._numba.arraytype")


# ------------------------------------------------------------------ types ----
class CkUnsupportedElement(types.Opaque):
    """An element type jitted code cannot read yet (struct, bytes, pointer)."""

    def __init__(self, type_string: str, kind: str):
        self.type_string = type_string
        self.kind = kind
        super().__init__(name=f"ckernels.unsupported[{type_string}]")

    def error(self) -> str:
        return (f"{self.kind} elements are not supported in jitted code yet "
                f"(element type '{self.type_string}')")


register_model(CkUnsupportedElement)(models.OpaqueModel)


class CkHalfElement(types.Opaque):
    """``float16`` storage: elements read as ``float32`` (exact) and are
    rounded to nearest-even when stored (Numba's CPU target has no float16)."""

    def __init__(self):
        super().__init__(name="ckernels.float16")


register_model(CkHalfElement)(models.OpaqueModel)
ck_half_element = CkHalfElement()


def _nmat(dims) -> int:
    """Number of leading dims a view caches (see the module docstring)."""
    n = 0
    for pos, kind in enumerate(dims):
        if kind == VAR and pos > 0:
            break
        n += 1
    return n


def _dtype_name(dtype) -> str:
    if isinstance(dtype, CkStringType):
        return "string"
    if isinstance(dtype, CkUnsupportedElement):
        return dtype.type_string
    if dtype == types.boolean:
        return "bool"
    if isinstance(dtype, CkHalfElement):
        return "float16"
    return str(dtype)


class CkArrayType(types.IterableType):
    """A borrowed view of a ckernel array: ``dims`` (kinds) over ``dtype``."""

    def __init__(self, dims, dtype):
        self.dims = tuple(dims)
        assert all(k in (STRIDED, VAR) for k in self.dims), dims
        self.dtype = dtype
        self.ndim = len(self.dims)
        self.nmat = _nmat(self.dims)
        text = " * ".join(self.dims + (_dtype_name(dtype),))
        super().__init__(name=f"ckernels.Array({text})")

    @property
    def key(self):
        return self.dims, self.dtype

    @property
    def iterator_type(self):
        return CkArrayIterType(self)

    @property
    def shape_type(self):
        return types.UniTuple(types.intp, self.nmat)

    def drop(self, axis: int) -> CkArrayType:
        """The type of the view without dim ``axis``."""
        return CkArrayType(self.dims[:axis] + self.dims[axis + 1:], self.dtype)

    def element_type(self):
        """The Numba type of a read element; TypingError if unsupported."""
        if isinstance(self.dtype, CkUnsupportedElement):
            raise TypingError(self.dtype.error())
        if isinstance(self.dtype, CkHalfElement):
            return types.float32
        return self.dtype

    @property
    def is_builtin(self) -> bool:
        return isinstance(self.dtype, (types.Number, types.Boolean, CkHalfElement))


class CkArrayIterType(types.SimpleIteratorType):
    def __init__(self, array_type: CkArrayType):
        self.array_type = array_type
        if array_type.ndim == 0:
            raise TypingError(f"iteration over a 0-d {array_type}")
        yield_type = (array_type.element_type() if array_type.ndim == 1
                      else array_type.drop(0))
        super().__init__(f"iter({array_type})", yield_type)


@register_model(CkArrayType)
class CkArrayModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("preamble", types.voidptr),
                   ("data", types.voidptr),
                   ("arrmeta", types.voidptr),
                   ("flags", types.uint64),
                   ("derived", types.boolean),
                   ("shape", fe_type.shape_type),
                   ("strides", fe_type.shape_type)]
        super().__init__(dmm, fe_type, members)


@register_model(CkArrayIterType)
class CkArrayIterModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("index", types.EphemeralPointer(types.intp)),
                   ("array", fe_type.array_type)]
        super().__init__(dmm, fe_type, members)


# ----------------------------------------------------------------- typeof ----
# builtin element ids -> the Numba element type of the view, from the one table
# (float16, which Numba kernels do not take, reads as float32: ck_half_element)
_NUMBA_SCALARS = {d.type_id: (d.numba if d.numba is not None else ck_half_element)
                  for d in _dtypes.BUILTINS}
_CK_IDS = {v: k for k, v in _NUMBA_SCALARS.items()}
_DIM_IDS = {_native.lib.CK_TYPE_FIXED_DIM: STRIDED, _native.lib.CK_TYPE_STRIDED_DIM: STRIDED,
            _native.lib.CK_TYPE_VAR_DIM: VAR}
_UNSUPPORTED_KINDS = {_native.lib.CK_TYPE_STRUCT: "struct", _native.lib.CK_TYPE_BYTES: "bytes",
                      _native.lib.CK_TYPE_POINTER: "pointer"}


def array_type_of(t) -> CkArrayType:
    """The :class:`CkArrayType` of arrays of ckernel type ``t`` (a Type or string)."""
    t = _ckt.as_type(t)
    dims = []
    while t.type_id in _DIM_IDS:
        dims.append(_DIM_IDS[t.type_id])
        t = t.element
    tid = t.type_id
    if tid in _NUMBA_SCALARS:
        dtype = _NUMBA_SCALARS[tid]
    elif tid == _native.lib.CK_TYPE_STRING:
        dtype = ck_string_type
    else:
        dtype = CkUnsupportedElement(str(t), _UNSUPPORTED_KINDS.get(tid, "these"))
    return CkArrayType(dims, dtype)


# ck_type value -> (Type keeping the descriptor alive, CkArrayType).  Holding
# the Type means a cached address cannot be reused by another descriptor.
_TYPE_CACHE: dict[int, tuple] = {}


@typeof_impl.register(Array)
def _typeof_array(val, c):
    ctype = _native.lib.ck_array_type(val._a)
    key = int(_native.ffi.cast("uintptr_t", ctype))
    hit = _TYPE_CACHE.get(key)
    if hit is None:
        t = _ckt.Type._borrow(ctype)
        if len(_TYPE_CACHE) > 1024:
            _TYPE_CACHE.clear()
        hit = _TYPE_CACHE[key] = (t, array_type_of(t))
    return hit[1]


__all__ = ["CkArrayType", "CkArrayIterType", "CkUnsupportedElement", "array_type_of",
           "layout_mismatches", "ASSUMED_LAYOUT"]
