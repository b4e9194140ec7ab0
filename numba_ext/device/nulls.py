"""Missing values on devices: option arrays ``N * ?T`` in device buffers
(``docs/nulls.md`` "On devices", ``docs/device-code.md``).

A :class:`DeviceOptionArray` is Arrow's layout of a nullable array:

* :attr:`~DeviceOptionArray.values` -- the values as any device array holds
  them: a :class:`~ckernels.device.array.DeviceArray` of numbers or bools, a
  :class:`~ckernels.device.varlen.DeviceVarArray` of strings; the bytes
  under a null are unspecified and never read as a value;
* :attr:`~DeviceOptionArray.validity` -- Arrow's validity bitmap in a device
  buffer (a ``uint8`` device array: LSB first, 1 = valid), with
  :attr:`~DeviceOptionArray.bit_offset` (0..7): element ``i`` is valid when
  bit ``bit_offset + i`` is set.  An upload writes the bitmap the C core's
  Arrow export gives (the source's bytes at a byte boundary, else the
  export's copy at bit 0; one write); a slice ``a[i:j]`` is a view whose bit
  offset moves; what Arrow's export hands out is at bit offset 0 (moved on
  the device first when needed).

One outer dim (as :class:`DeviceVarArray`).  ``get()``/``to_host()`` give a
host ``?T`` array (one read per buffer, imported without another copy),
``tolist()`` has ``None`` for nulls, ``null_count`` is counted from the
bitmap.  Elementwise work -- jitted functions (:mod:`ckernels.jit.device_nulls`)
and registry operations (:func:`elementwise`, operators, ``ckernels.ops``) --
propagates nulls: the result's bitmap is the AND of the operands' (one small
kernel, :func:`ckernels.context.device_validity.and_source`; shared with the
operand when only one has nulls) and the element kernel skips null slots
(``kernel_wrapper(validity=...)``), writing 0 there.
"""

from __future__ import annotations

import numpy as np

from .. import dialects, dtypes
from .. import types as _t
from .._native import check, ffi, lib
from ..context.device_program import DeviceProgram, kernel_wrapper
from ..context.device_validity import AND_KERNEL, and_source
from ..errors import CKIndexError, InvalidArgumentError, NotSupportedError
from ..host.array import Array
from ..host.array import array as _host_array
from ..host.array import asarray as _host_asarray
from ..host.arrow import is_arrow
from ..host.nulls import text_nulls
from . import arrow as _arrow_dev
from . import varlen as _varlen
from .array import DeviceArray
from .base import DeviceArrayBase
from .varlen import DeviceVarArray


def _launch():
    """:mod:`.launch`, imported on first use: a process that never touches a
    device does not pay for loading it."""
    from . import launch
    return launch


__all__ = ["DeviceOptionArray", "upload", "upload_leaf", "host_option", "is_option_host", "combine", "validity_operands",
           "elementwise", "flat_values", "result_shape"]

_UINT8 = dtypes.by_name["uint8"]
_UINT64 = dtypes.by_name["uint64"]


def _nbytes(bit_offset: int, n: int) -> int:
    return (bit_offset + n + 7) // 8


class DeviceOptionArray:
    """A device array of ``?T`` (see the module docstring): the values and
    the bitmap are flat, in C order; ``shape`` gives more than one dim to
    numbers and bools (``2 * 3 * ?float64``)."""

    __slots__ = ("_values", "_bits", "_bit_offset", "_null_count", "_shape", "__weakref__")

    def __init__(self, values, validity: DeviceArray, bit_offset: int = 0,
                 null_count: int | None = None, shape: tuple | None = None):
        if not isinstance(values, (DeviceArray, DeviceVarArray)) or values.ndim != 1:
            raise InvalidArgumentError("DeviceOptionArray: the values must be a 1-d device "
                                       "array (numbers, bools or strings)")
        if isinstance(values, DeviceArray) and (values.dtype.fields is not None or
                                                not values.is_contiguous):
            raise InvalidArgumentError("DeviceOptionArray: values of numbers or bools, "
                                       "contiguous")
        if isinstance(values, DeviceVarArray) and str(values.element) != "string":
            raise NotSupportedError(f"DeviceOptionArray: ?{values.element} on a device "
                                    "(numbers, bools and strings)")
        n = len(values)
        if not isinstance(validity, DeviceArray) or validity.dtype != np.uint8 or \
                validity.ndim != 1 or not validity.is_contiguous:
            raise InvalidArgumentError("DeviceOptionArray: the validity bitmap must be a "
                                       "contiguous 1-d uint8 device array")
        if validity.context != values.context:
            raise InvalidArgumentError("DeviceOptionArray: values and bitmap in different "
                                       "contexts")
        if bit_offset < 0 or validity.size < _nbytes(bit_offset, n):
            raise InvalidArgumentError(
                f"DeviceOptionArray: a bitmap of {validity.size} bytes at bit offset "
                f"{bit_offset} is too small for {n} elements")
        if shape is not None:
            shape = tuple(int(x) for x in shape)
            if len(shape) < 1 or int(np.prod(shape)) != n or min(shape) < 0:
                raise InvalidArgumentError(f"DeviceOptionArray: shape {shape} for {n} values")
            if len(shape) == 1:
                shape = None
            elif isinstance(values, DeviceVarArray):
                raise NotSupportedError("DeviceOptionArray: ?string with more than one dim on "
                                        "a device")
        self._values = values
        self._bits = validity
        self._bit_offset = int(bit_offset)
        self._null_count = null_count
        self._shape = shape

    def _flat(self) -> "DeviceOptionArray":
        """The same elements with one dim (shares everything)."""
        if self._shape is None:
            return self
        return DeviceOptionArray(self._values, self._bits, self._bit_offset, self._null_count)

    def reshape(self, *shape) -> "DeviceOptionArray":
        """The same elements (C order) with another shape (shares everything;
        one ``-1`` is inferred)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if list(shape).count(-1) == 1:
            rest = int(np.prod([x for x in shape if x != -1]))
            shape = tuple(self.size // rest if x == -1 and rest else x for x in shape)
        return DeviceOptionArray(self._values, self._bits, self._bit_offset, self._null_count,
                                 shape=shape)

    # ---- attributes -------------------------------------------------------------
    @property
    def values(self):
        """The values (a :class:`DeviceArray` or :class:`DeviceVarArray`);
        under a null they are unspecified."""
        return self._values

    @property
    def validity(self) -> DeviceArray:
        """Arrow's validity bitmap (``uint8`` device array), from :attr:`bit_offset`."""
        return self._bits

    @property
    def bit_offset(self) -> int:
        """The bit of :attr:`validity` that element 0 has."""
        return self._bit_offset

    @property
    def context(self):
        return self._values.context

    @property
    def value_type(self) -> _t.Type:
        """``T`` of ``?T``."""
        v = self._values
        return v.element if isinstance(v, DeviceVarArray) else _t.as_type(v._element.name)

    @property
    def type(self) -> _t.Type:
        """``N * ?T`` (``N * M * ?T`` with more dims)."""
        t = _t.option(self.value_type)
        for k in reversed(self.shape):
            t = _t.fixed_dim(k, t)
        return t

    @property
    def dtype(self):
        """The values' dtype (NumPy has no nullable dtype of its own)."""
        return self._values.dtype

    @property
    def shape(self) -> tuple:
        return self._shape if self._shape is not None else (len(self._values),)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return len(self._values)

    @property
    def nbytes(self) -> int:
        return self._values.nbytes + _nbytes(self._bit_offset, self.size)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def null_count(self) -> int:
        """The number of nulls, counted from the bitmap (one read of its
        bytes, remembered: the array is never written in place)."""
        if self._null_count is None:
            n = self.size
            valid = self._valid_bits() if n else np.zeros(0, bool)
            self._null_count = int(n - np.count_nonzero(valid))
        return self._null_count

    def _valid_bits(self) -> np.ndarray:
        """The validity of every element on the host (a bool array)."""
        n, b = self.size, self._bit_offset
        raw = self._bits[:_nbytes(b, n)].get() if n else np.zeros(0, np.uint8)
        return np.unpackbits(raw, bitorder="little")[b:b + n].astype(bool)

    def arrow_bitmap(self) -> DeviceArray:
        """The validity bitmap from bit 0 (what Arrow's export hands out: the
        values start at element 0): :attr:`validity` itself at bit offset 0,
        else moved there on the device (:func:`combine`)."""
        if self._bit_offset == 0:
            return self._bits
        return combine(self.context, [(self._bits, self._bit_offset)], self.size,
                       force=True)[0]

    def is_valid(self) -> np.ndarray:
        """A host bool array: True where a value is present."""
        return self._valid_bits().reshape(self.shape)

    def is_null(self) -> np.ndarray:
        """A host bool array: True where the value is missing."""
        return ~self._valid_bits().reshape(self.shape)

    # ---- transfers ----------------------------------------------------------------
    def to_host(self) -> Array:
        """A host ``ckernels.Array`` of ``N * ?T``: the values and the bitmap
        read once each, then imported without another copy (a bitmap at a bit
        offset is moved to bit 0 on the host).  With more dims the host array
        is built from the nested elements (:meth:`tolist`): the C core's Arrow
        import takes no nulls under fixed-size lists."""
        if self._shape is not None:
            return _host_array(self.tolist(), type=self.type)
        n = self.size
        node, keep = _varlen._host_node(self._values)
        bits = np.packbits(self._valid_bits(), bitorder="little") if n else \
            np.zeros(1, np.uint8)
        keep.append(bits)
        node.buffers[0] = ffi.cast("void *", bits.ctypes.data)
        node.null_count = self.null_count
        return _varlen.import_host_node(node, keep,
                                        _varlen._schema_of(_t.option(self.value_type)))

    get = to_host

    def tolist(self) -> list:
        """The values as Python objects, ``None`` for a null (nested lists
        with more dims)."""
        flat = self._flat().to_host().tolist()
        for k in reversed(self.shape[1:]):
            flat = [flat[i:i + k] for i in range(0, len(flat), k)]
        return flat

    to_list = tolist

    def to_numpy(self, na_value=None):
        """As the host array's ``to_numpy(na_value=...)``."""
        return self.to_host().to_numpy(na_value=na_value)

    def to(self, ctx):
        if ctx == self.context:
            return self
        host = self.to_host()
        return upload(ctx, host) if ctx.is_device else host

    def copy(self) -> "DeviceOptionArray":
        """A device-side copy (values and bitmap)."""
        n, b = self.size, self._bit_offset
        return DeviceOptionArray(self._values.copy(), self._bits[:max(_nbytes(b, n), 1)].copy(),
                                 b, self._null_count, self._shape)

    # ---- elements -------------------------------------------------------------------
    def __getitem__(self, key):
        if self._shape is not None:
            return self._nd_item(key)
        n = self.size
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if i < -n or i >= n:
                raise CKIndexError(f"index {i} is out of bounds for axis 0 with size {n}")
            i %= n
            return self[i:i + 1].tolist()[0]
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                raise NotSupportedError("DeviceOptionArray: slices with a step other than 1 "
                                        "(copy to the host with .get() first)")
            stop = max(stop, start)
            bit = self._bit_offset + start
            nb = max(_nbytes(bit % 8, stop - start), 1)
            bits = self._bits[bit // 8:bit // 8 + nb] if bit // 8 + nb <= self._bits.size \
                else self._bits[bit // 8:]
            if bits.size < nb:      # an empty slice at the very end
                bits = DeviceArray.from_host(self.context, np.zeros(1, np.uint8))
                bit = 0
            return DeviceOptionArray(self._values[start:stop], bits, bit % 8)
        raise NotSupportedError(f"DeviceOptionArray: index {key!r} (integers and slices "
                                "only)")

    def _nd_item(self, key):
        """``d[i]`` (a row), ``d[a:b]`` (rows) and ``d[i, j, ...]`` (one
        element) of an array with more than one dim: flat ranges of the
        values and bits, no copy."""
        shape = self.shape
        row = int(np.prod(shape[1:]))
        flat = self._flat()
        if isinstance(key, tuple) and len(key) == len(shape) and \
                all(isinstance(k, (int, np.integer)) for k in key):
            idx = 0
            for k, m in zip(key, shape):
                k = int(k)
                if k < -m or k >= m:
                    raise CKIndexError(f"index {k} is out of bounds for size {m}")
                idx = idx * m + k % m
            return flat[idx]
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if i < -shape[0] or i >= shape[0]:
                raise CKIndexError(f"index {i} is out of bounds for axis 0 with size "
                                   f"{shape[0]}")
            i %= shape[0]
            return flat[i * row:(i + 1) * row].reshape(shape[1:])
        if isinstance(key, slice):
            start, stop, step = key.indices(shape[0])
            if step != 1:
                raise NotSupportedError("DeviceOptionArray: slices with a step other than 1 "
                                        "(copy to the host with .get() first)")
            stop = max(stop, start)
            return flat[start * row:stop * row].reshape((stop - start,) + shape[1:])
        raise NotSupportedError(f"DeviceOptionArray: index {key!r} of a {len(shape)}-dim "
                                "option array (an integer, a slice of rows or one integer "
                                "per dim)")

    def __iter__(self):
        return iter(self.tolist())

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a device array is not converted implicitly: copy it to the host "
                        "with .get() or .to_numpy(na_value=...)")

    def _reduction(self, name: str, axis=None, out=None, keepdims: bool = False, dtype=None):
        """``sum`` and ``mean`` skipping nulls (the values with 0 written
        under every null by a guarded kernel, then the device reduction; a
        0-d device array, None when every element is null); other reductions
        are refused."""
        if axis is not None and self.ndim > 1:
            raise NotSupportedError(f"{name} of an option device array along an axis (the "
                                    "whole array skips nulls on a device; reduce on the host: "
                                    f"d.get().{name}(axis=...))")
        if name not in ("sum", "mean") or axis not in (None, 0, -1, (0,)) or out is not None \
                or keepdims or dtype is not None:
            raise NotSupportedError(
                f"{name} of an option device array (sum and mean over the whole array "
                "skip nulls on a device; reduce on the host: d.get()."
                f"{name if name != 'product' else 'prod'}() skips them)")
        count = self.size - self.null_count
        if count == 0:
            return None
        zeroed = elementwise("add", (self, False if self.dtype == np.bool_ else 0))._values
        total = zeroed.sum()
        return total if name == "sum" else total / count

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """The sum of the present values (see :meth:`_reduction`)."""
        return self._reduction("sum", axis, out, keepdims, dtype)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """The mean of the present values (see :meth:`_reduction`)."""
        return self._reduction("mean", axis, out, keepdims, dtype)

    def __reduce__(self):
        # as DeviceArray: a host copy in the pickle, uploaded into the default
        # context of the same kind when unpickled
        return (_unpickle, (type(self.context), self.context.kind, self.to_host()))

    # ---- operations ---------------------------------------------------------------------
    def _apply(self, name: str, args, out):
        return elementwise(name, args, out)

    # ---- display ------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (f"<ckernels.DeviceArray {self.type} {self.shape} on "
                f"{self.context.brief}, {self.null_count} null"
                f"{'' if self.null_count == 1 else 's'}>")

    def __str__(self) -> str:
        if self.ndim > 1:
            rows = [str(self[i]) for i in range(len(self))] if len(self) <= 6 else \
                [str(self[i]) for i in (0, 1, 2)] + ["..."] + \
                [str(self[i]) for i in range(len(self) - 3, len(self))]
            return "[" + ", ".join(rows) + "]"
        if self.size <= 10:
            return str(self.tolist())
        n = self.size
        head, tail = self[:3].tolist(), self[n - 3:].tolist()
        return "[" + ", ".join(map(repr, head)) + ", ..., " + ", ".join(map(repr, tail)) + "]"

    # ---- leaving the device: Arrow's C device interface --------------------------------
    def __arrow_c_schema__(self):
        return _arrow_dev.schema_capsule(_varlen._schema_of(_t.option(self.value_type)))

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """``(arrow_schema, arrow_device_array)`` capsules over the device
        buffers: the values' (as their own export) and the validity bitmap as
        buffer 0 with the null count; a bitmap at a bit offset is moved to
        bit 0 on the device first (the values start at element 0)."""
        if self.ndim > 1:
            raise NotSupportedError(f"__arrow_c_device_array__: {self.type} (option arrays of "
                                    "one dim; d.reshape(-1) exports the elements)")
        schema = _varlen._schema_of(_t.option(self.value_type))
        try:
            _arrow_dev.check_export_args(requested_schema, kwargs, schema)
            node, keep = _arrow_dev.device_node(self)
        except BaseException:
            if schema.release != ffi.NULL:
                schema.release(schema)
            raise
        return _arrow_dev.wrap_capsules(self.context, node, keep, schema)

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        """Arrow's C device stream interface: a stream of this one array
        (:func:`ckernels.device.arrow.export_device_stream`)."""
        return _arrow_dev.export_device_stream(self, requested_schema, **kwargs)


def _unpickle(context_class, kind, host):
    return context_class.default(kind).array(host)


def _op(name):
    def method(self, *others):
        return elementwise(name, (self,) + others)
    method.__name__ = name
    return method


def _rop(name):
    def method(self, other):
        return elementwise(name, (other, self))
    method.__name__ = name
    return method


for _dunder, _name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "divide"), ("floordiv", "floor_divide"),
                       ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                       ("or", "bitwise_or"), ("xor", "bitwise_xor")):
    setattr(DeviceOptionArray, f"__{_dunder}__", _op(_name))
    setattr(DeviceOptionArray, f"__r{_dunder}__", _rop(_name))
for _dunder, _name in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal"),
                       ("neg", "negative"), ("abs", "absolute"), ("invert", "invert")):
    setattr(DeviceOptionArray, f"__{_dunder}__", _op(_name))
DeviceOptionArray.__hash__ = None


# ------------------------------------------------------------------ upload --
def is_option_host(obj) -> bool:
    """Whether ``obj`` is a host ``ckernels.Array`` whose elements are ``?T``
    under fixed dims (``N * var * ?T`` is a var-dim array with an option
    child: :mod:`.varlen`)."""
    return isinstance(obj, Array) and obj.type.dtype.is_option and \
        not _has_var(obj.type)


def _has_var(t: _t.Type) -> bool:
    return "var" in str(t)


def host_option(obj, type=None):
    """``obj`` as a host ``ckernels.Array`` of ``?T``, if it holds nulls or
    has an option type (a host option array; an Arrow producer whose import
    is ``?T``; NumPy ``StringDType`` with an ``na_object`` or object text
    with ``None``; a list with ``None``; ``type`` an option type), else None."""
    if type is not None:
        t = type if isinstance(type, _t.Type) else _t.Type(type)
        if not t.dtype.is_option or _has_var(t):
            return None
        return obj if isinstance(obj, Array) and obj.type == t else _host_array(obj, type=t)
    if isinstance(obj, Array):
        return obj if is_option_host(obj) else None
    if isinstance(obj, DeviceOptionArray):
        return obj.to_host()
    if isinstance(obj, (DeviceArrayBase, DeviceVarArray)):
        return None
    if is_arrow(obj):      # zero-copy on the host: the upload is the one copy
        h = _host_asarray(obj)
        return h if is_option_host(h) else None
    if (isinstance(obj, np.ndarray) and text_nulls(obj)) or \
            (isinstance(obj, (list, tuple)) and _has_none(obj)):
        h = _host_array(obj)
        return h if is_option_host(h) else None
    return None


def _has_none(obj, depth: int = 0) -> bool:
    """Whether a (nested) list holds ``None``."""
    for v in obj:
        if v is None or (depth < 32 and isinstance(v, (list, tuple)) and
                         _has_none(v, depth + 1)):
            return True
    return False


def upload(ctx, host: Array) -> DeviceOptionArray:
    """A :class:`DeviceOptionArray` of ``ctx`` holding a copy of ``host`` (``N
    * ?T``, T a number, bool or string): exported by the C core (values
    shared; the bitmap shared at a byte boundary, else copied to bit 0), the
    values written as a non-option upload writes them and the bitmap's bytes
    covering the elements in one write, with the export's bit offset (0..7)."""
    t = host.type
    if t.ndim < 1 or not t.dtype.is_option or not all(host.shape):
        raise NotSupportedError(f"Context.array: {t} on a {ctx.kind} device (option arrays "
                                "of fixed dims: N * ?T, N * M * ?T)")
    vt = t.dtype.value_type
    if t.ndim > 1 and str(vt) == "string":
        raise NotSupportedError(f"Context.array: {t} on a {ctx.kind} device (?string arrays "
                                "have one dim there)")
    if not (str(vt) == "string" or (vt.is_builtin and vt.to_numpy_dtype().kind in "biuf")):
        raise NotSupportedError(f"Context.array: ?{vt} cannot live on a {ctx.kind} device "
                                "(options of numbers, bools and strings)")
    schema = ffi.new("struct ArrowSchema *")
    arr = ffi.new("struct ArrowArray *")
    check(lib.ck_arrow_export(host._a, ffi.NULL, schema, arr))
    top_schema, top_arr = schema, arr
    try:
        n, off = int(arr.length), int(arr.offset)
        for k in host.shape[1:]:     # fixed dims: fixed-size lists down to the ?T leaf
            if arr.n_children != 1 or arr.null_count != 0:
                raise NotSupportedError(f"Context.array: {t} exported with nulls above "
                                        "its elements")
            schema, arr = schema.children[0], arr.children[0]
            n, off = n * k, off * k + int(arr.offset)
        flat = upload_leaf(ctx, vt, schema, arr, off, n)
    finally:
        top_arr.release(top_arr)
        top_schema.release(top_schema)
    return DeviceOptionArray(flat._values, flat._bits, flat._bit_offset, flat._null_count,
                             host.shape)


def upload_leaf(ctx, vt: _t.Type, schema, arr, off: int, n: int) -> DeviceOptionArray:
    """The one-dim :class:`DeviceOptionArray` of ``n`` elements of ``?vt``
    from element ``off`` of an exported Arrow node (a nullable ``vt``
    node): the values as a non-option upload writes them, the bitmap's
    bytes covering the elements in one write at the export's bit offset
    (0..7; all valid without a bitmap).  The leaf of :func:`upload` and the
    option child of ``var * ?T`` (``varlen.upload(..., option_leaf=)``)."""
    if not (str(vt) == "string" or (vt.is_builtin and vt.to_numpy_dtype().kind in "biuf")):
        raise NotSupportedError(f"Context.array: ?{vt} cannot live on a {ctx.kind} device "
                                "(options of numbers, bools and strings)")
    values = _varlen._upload_node(ctx, vt, schema, arr, off, n, nulls_ok=True)
    if arr.buffers[0] == ffi.NULL or arr.null_count == 0:
        raw = np.full(max(_nbytes(0, n), 1), 0xFF, np.uint8)
        bit, count = 0, 0
    else:
        raw = _varlen._host_view(arr.buffers[0], np.uint8, off // 8, _nbytes(off % 8, n))
        whole = off == int(arr.offset) and n == int(arr.length)   # else counted when asked
        bit, count = off % 8, (int(arr.null_count) if arr.null_count >= 0 and whole else None)
        if raw.size == 0:
            raw = np.zeros(1, np.uint8)
    bits = DeviceArray.from_host(ctx, raw)
    return DeviceOptionArray(values, bits, bit, count)


# ------------------------------------------------------- result validity --
def combine(ctx, parts, n: int, force: bool = False):
    """``(bitmap, bit offset)`` of the AND of ``parts`` (``(bitmap, bit
    offset)`` pairs over ``n`` elements): the one part itself (shared: device
    bitmaps are never written in place) unless ``force``, else a new bitmap
    at bit offset 0 written by :data:`AND_KERNEL`."""
    if len(parts) == 1 and not force:
        return parts[0]
    nb = _nbytes(0, n)
    out = DeviceArray.empty(ctx, (max(nb, 1),), np.uint8)
    if nb:
        d = dialects.device(ctx.kind)
        prog = ctx.build_program(and_source(d, len(parts)))
        args = [(out.buffer, out.offset), np.uint64(n)]
        for bits, off in parts:
            args += [(bits.buffer, bits.offset), np.uint64(off)]
        prog.launch(AND_KERNEL, nb, *args, local_size=_launch().LOCAL_SIZE)
    return out, 0


def validity_operands(fname: str, args):
    """For a call with option device arrays among ``args``: ``(values, bitmap,
    bit offset, n)`` -- the arguments with each option array replaced by its
    values, and the result's validity.  Every option array has one dim and
    the same length; other device arrays must have that shape too (no
    broadcasting against the bitmap's flat index)."""
    opts = [a for a in args if isinstance(a, DeviceOptionArray)]
    shapes = {a.shape for a in opts}
    if len(shapes) != 1:
        what = "lengths" if all(len(x) == 1 for x in shapes) else "shapes"
        got = sorted(x[0] for x in shapes) if what == "lengths" else sorted(shapes)
        raise InvalidArgumentError(f"{fname}: option device arrays of {what} {got} "
                                   f"(one {what[:-1]} for all)")
    shape = shapes.pop()
    n = int(np.prod(shape))
    for i, a in enumerate(args):
        if isinstance(a, (DeviceArrayBase, DeviceVarArray)) and tuple(a.shape) != shape:
            raise NotSupportedError(f"{fname}: argument {i} has shape {tuple(a.shape)} next "
                                    f"to option arrays of shape {shape} (no broadcasting of "
                                    "option arrays on devices)")
    ctxs = {a.context for a in opts}
    if len(ctxs) != 1:
        raise InvalidArgumentError(f"{fname}: option device arrays in different contexts")
    ctx = ctxs.pop()
    bits, off = combine(ctx, [(a._bits, a._bit_offset) for a in opts], n)
    values = [a._values if isinstance(a, DeviceOptionArray) else
              flat_values(a) if isinstance(a, DeviceArrayBase) else a for a in args]
    return values, bits, off, n


def flat_values(a):
    """A device array of numbers with one dim over the same elements (C
    order: a contiguous one shares them, another is copied)."""
    if a.ndim == 1:
        return a
    return (a if a.is_contiguous else a.copy()).reshape(-1)


def result_shape(args):
    """The shape of the option arrays among ``args`` (one shape:
    :func:`validity_operands`)."""
    for a in args:
        if isinstance(a, DeviceOptionArray):
            return a.shape
    return None


# ----------------------------------------------------- registry operations --
def elementwise(op: str, args, out=None) -> DeviceOptionArray:
    """Registry operation ``op`` over option device arrays (and device
    arrays, scalars): the result's bitmap the AND of the operands', the
    element function skipped on null slots (no error can come from the value
    under a null)."""
    from .ops import element_functions as _ef
    from .ops import programs as _pr
    where = f"ckernels.ops.{op}"
    if out is not None:
        raise NotSupportedError(f"{where}: out= with option device arrays (the result is "
                                "a new ?T array)")
    if op not in _ef.OPS:
        raise NotSupportedError(f"{where}: no device kernel for this operation")
    values, bits, off, n = validity_operands(where, args)
    if any(isinstance(v, DeviceVarArray) for v in values):
        raise NotSupportedError(f"{where}: strings on a device (registry operations take "
                                "numbers and bools there)")
    ctx = _launch().context_of(where, values)
    tgt = _pr.dialect_of(ctx)
    names = _pr.operand_types(values, where)
    kargs, ret = _pr.resolve(op, names)
    _pr.check_device_types(tgt, where, kargs + (ret,))
    inputs = tuple((a._element if isinstance(a, DeviceArrayBase) else dtypes.by_name[nm],
                    not isinstance(a, DeviceArrayBase)) for a, nm in zip(values, names))
    full = inputs + ((_UINT8, False), (_UINT64, True))
    st = _launch().state(ctx)
    pkey = ("op?", op, inputs, tuple(a._key if isinstance(a, DeviceArrayBase) else None
                                     for a in values))
    plan = st.plans.get(pkey)
    if plan is None:
        _pr.check_fp64(ctx, where, kargs + (ret,) + tuple(d.name for d, _ in inputs))

        def make():
            prog = DeviceProgram(tgt, "python")
            ts = [dtypes.by_name[x] for x in kargs]
            rt = dtypes.by_name[ret]
            if dialects.uses_fp64((*kargs, ret, *(d.name for d, _ in inputs))):
                prog.fp64_user = where
            fn = _ef.element_function(prog, op, ts, rt, where)
            prog.finish(kernel_wrapper(tgt, fn, [(tgt.ctype(x), x.kind == "b") for x in ts],
                                       (tgt.ctype(rt), rt.kind == "b"), list(full), rt,
                                       validity=len(inputs)))
            return prog
        prog = _pr.cached_program(tgt, ("op?", op, kargs, ret,
                                        tuple((d.name, v) for d, v in inputs)), make)
        layouts = [(a._shape, a._strides) if isinstance(a, DeviceArrayBase) else ((), ())
                   for a in values] + [((), ()), ((), ())]
        plan = _launch().remember(st.plans, pkey, _launch().build_plan(
            ctx, prog.source, prog.errors, where, prog.dialect.title, full,
            list(values) + [bits, 0], dtypes.by_name[ret].numpy, operand_layouts=layouts,
            out_layout=((n,), (dtypes.by_name[ret].numpy.itemsize,))),
            4 * _launch().PLAN_LIMIT, st.lock)
    operands = [a if isinstance(a, DeviceArrayBase) else _scalar(a, nm)
                for a, nm in zip(values, names)] + [bits, off]
    res = DeviceArray.empty(ctx, (n,), dtypes.by_name[ret].numpy)
    plan(res, operands)
    return DeviceOptionArray(res, bits, off, shape=result_shape(args))


def _scalar(v, name):
    if isinstance(v, np.generic):
        v = v.item()
    return bool(v) if dtypes.by_name[name].kind == "b" else v
