"""Strings and var dims on devices: Arrow's layout in device buffers.

A :class:`DeviceVarArray` is a one-dimensional device array whose elements
have variable length -- ``N * string`` or ``N * var * T`` -- kept as Arrow
keeps them (``docs/device-code.md``, the device string model):

* ``N * string``: :attr:`~DeviceVarArray.offsets`, ``N + 1`` int64 byte
  offsets starting at 0 (Arrow's ``large_utf8``), and
  :attr:`~DeviceVarArray.values`, the UTF-8 bytes of every string one after
  the other (a ``uint8`` device array);
* ``N * var * T``: ``N + 1`` int64 offsets into :attr:`~DeviceVarArray.values`,
  the elements of every row one after the other -- a :class:`DeviceArray`
  of ``T`` for numbers and bools (bools one byte each on the device), or
  another :class:`DeviceVarArray` for ``var * string`` and
  ``var * var * T`` (Arrow's ``large_list``);
* ``N * var * ?T`` (``T`` a string, number or bool): the same offsets, and
  :attr:`~DeviceVarArray.values` a
  :class:`~ckernels.device.nulls.DeviceOptionArray` -- the items and the
  child's validity bitmap in a device buffer (Arrow's list of a nullable
  child; a null item is a slot of length 0 under a 0 bit).  The option
  child is the one device ``?T`` array there is: its bitmap, bit offset,
  slicing and export are its own.

Each buffer is a device array of its own, in its own device allocation at
offset 0 (a memblock of the context: :class:`ckernels.context.buffer.Buffer`),
so every buffer is one Arrow buffer and leaves the device zero-copy:
:meth:`DeviceVarArray.__arrow_c_device_array__` (and the one of
:class:`DeviceArray`, :mod:`ckernels.device.arrow`) describe the device
memory by Arrow's C device interface (``ARROW_DEVICE_OPENCL`` with ``cl_mem``
handles as buffer pointers, ``ARROW_DEVICE_CUDA`` with device pointers),
through ``ck_arrow_wrap`` (``ckernel/arrow_wrap.h``), which keeps the device
arrays alive until the consumer releases the last node.

Transfers are one copy per buffer each way: :func:`upload` takes any host
string or ragged data (a ``ckernels.Array``, lists, NumPy ``StringDType`` or
``str_`` arrays, pyarrow and other Arrow producers, through
:func:`ckernels.array`), exports it with the C core's Arrow export (the text
shared, no copy) and writes offsets and values in one write each;
:meth:`DeviceVarArray.to_host` reads each buffer in one read and imports
them as a ``ckernels.Array`` without a further copy (``ck_arrow_wrap`` of
the host copies, then ``ck_arrow_import_device``).
"""

from __future__ import annotations

import numpy as np

from .. import types as _t
from .._native import check, ffi, lib
from ..errors import CKIndexError, InvalidArgumentError, NotSupportedError
from ..host.array import Array
from ..host.array import array as _host_array
from ..host.array import asarray as _host_asarray
from ..host.arrow import is_arrow
from ..memory import release_callback
from . import arrow as _arrow_dev
from .array import DeviceArray

__all__ = ["DeviceVarArray", "upload", "host_varlen", "is_varlen_type", "offsets_from_lengths",
           "from_lengths"]

_ARROW_DEVICE_CPU = 1     # arrow.h (a macro: not in the cffi declarations)
_STRING_FORMATS = {b"u": np.int32, b"U": np.int64}
_LIST_FORMATS = {b"+l": np.int32, b"+L": np.int64}


def is_varlen_type(t: _t.Type) -> bool:
    """Whether ``t`` (an element type) is a string or a var dim: what a
    :class:`DeviceVarArray` holds."""
    s = str(t)
    return s == "string" or s.startswith("var *")


def _leaf_ok(t: _t.Type) -> bool:
    # a number or bool: one device element each
    return str(t) != "string" and t.is_builtin and t.to_numpy_dtype().kind in "biuf"


def _element_ok(t: _t.Type) -> bool:
    s = str(t)
    if s == "string":
        return True
    if s.startswith("var *"):
        e = t.element
        if e.is_option:       # var * ?T: an option child of strings, numbers or bools
            v = e.value_type
            return str(v) == "string" or _leaf_ok(v)
        return _element_ok(e) or _leaf_ok(e)
    return False


def _is_option_child(x) -> bool:
    # a DeviceOptionArray (known by its parts: device.nulls sits beside this module)
    return hasattr(x, "validity") and hasattr(x, "bit_offset")


class DeviceVarArray:
    """A one-dimensional device array of strings or var-dim rows, in Arrow's
    layout (see the module docstring).  ``shape``, ``type``, ``len``,
    ``repr``, the Jupyter picture, ``a[i]`` (one element to the host),
    ``a[i:j]`` (a copy on the device), ``get()``/``to_host()``/``tolist()``/
    ``to_numpy()`` and the Arrow C device interface."""

    __slots__ = ("_ctx", "_element", "_length", "_offsets", "_values", "__weakref__")

    def __init__(self, ctx, element: _t.Type, offsets: DeviceArray, values):
        if not isinstance(offsets, DeviceArray) or offsets.dtype != np.int64 or \
                offsets.ndim != 1 or offsets.size < 1:
            raise InvalidArgumentError("DeviceVarArray: offsets must be a 1-d int64 device "
                                       "array of at least one element")
        if not _element_ok(element):
            raise NotSupportedError(f"DeviceVarArray: element type {element} (strings and "
                                    "var dims of numbers, bools or strings only)")
        if str(element).startswith("var *") and \
                element.element.is_option != _is_option_child(values):
            raise InvalidArgumentError(f"DeviceVarArray: {element} needs values "
                                       f"{'with' if element.element.is_option else 'without'} "
                                       "a validity bitmap (a DeviceOptionArray for var * ?T)")
        self._ctx = ctx
        self._element = element
        self._length = offsets.size - 1
        self._offsets = offsets
        self._values = values

    # ---- attributes ------------------------------------------------------------
    @property
    def context(self):
        """The :class:`ckernels.Context` holding the buffers."""
        return self._ctx

    @property
    def offsets(self) -> DeviceArray:
        """The ``len(self) + 1`` int64 offsets (bytes for strings, elements for
        var dims), starting at 0."""
        return self._offsets

    @property
    def values(self):
        """The data: UTF-8 bytes (uint8) for strings, the row elements for var
        dims (a :class:`DeviceArray`, or a :class:`DeviceVarArray` when they
        vary in length too, or a :class:`~ckernels.device.nulls.DeviceOptionArray`
        for ``var * ?T``: the items and their validity bitmap)."""
        return self._values

    @property
    def null_items(self) -> int:
        """The number of null items of a ``var * ?T`` array (0 for other
        element types): counted from the child's bitmap."""
        v = self._values
        return v.null_count if _is_option_child(v) else 0

    @property
    def element(self) -> _t.Type:
        """The element type (``string``, ``var * float64``, ...)."""
        return self._element

    @property
    def shape(self) -> tuple:
        return (self._length,)

    @property
    def ndim(self) -> int:
        return 1

    @property
    def size(self) -> int:
        return self._length

    @property
    def type(self) -> _t.Type:
        """The ckernel type, ``N * string`` / ``N * var * T``."""
        return _t.fixed_dim(self._length, self._element)

    @property
    def dtype(self):
        """NumPy's dtype of :meth:`to_numpy`'s result: ``StringDType`` for
        strings, ``object`` (one array per row) for var dims."""
        if str(self._element) == "string":
            return np.dtypes.StringDType()
        return np.dtype(object)

    @property
    def nbytes(self) -> int:
        """Bytes of every buffer (offsets and values, nested ones too)."""
        return self._offsets.nbytes + self._values.nbytes

    def __len__(self) -> int:
        return self._length

    # ---- transfers ---------------------------------------------------------------
    def to_host(self) -> Array:
        """A host ``ckernels.Array`` of :attr:`type`: one read per buffer, then
        the host copies imported without another copy."""
        node, keep = _host_node(self)
        return import_host_node(node, keep, _schema_of(self._element))

    get = to_host

    def tolist(self) -> list:
        """The values as Python lists of str / lists."""
        return self.to_host().tolist()

    to_list = tolist

    def to_numpy(self) -> np.ndarray:
        """A NumPy array of the values (``StringDType`` for strings)."""
        return self.to_host().to_numpy()

    def to(self, ctx):
        """This array in ``ctx``: itself in its own context, a host array in a
        ``"cpu"`` one, else a copy through the host."""
        if ctx == self._ctx:
            return self
        if not ctx.is_device:
            return self.to_host()
        return ctx.array(self.to_host())

    def copy(self) -> "DeviceVarArray":
        """A device-side copy (each buffer copied on the device)."""
        return DeviceVarArray(self._ctx, self._element, self._offsets.copy(),
                              self._values.copy())

    # ---- elements ----------------------------------------------------------------
    def _offset_at(self, k: int) -> int:
        # one 8-byte read (the offsets own their buffer region, C-contiguous)
        o = self._offsets
        return int(o.buffer.to_numpy(o.offset + 8 * k, np.int64, 1)[0])

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            i = int(key)
            n = self._length
            if i < -n or i >= n:
                raise CKIndexError(f"index {i} is out of bounds for axis 0 with size {n}")
            i %= n
            return self[i:i + 1].tolist()[0]
        if isinstance(key, slice):
            start, stop, step = key.indices(self._length)
            if step != 1:
                raise NotSupportedError("DeviceVarArray: slices with a step other than 1 "
                                        "(copy to the host with .get() first)")
            stop = max(stop, start)
            lo, hi = self._offset_at(start), self._offset_at(stop)
            offsets = self._offsets[start:stop + 1] - lo if stop > start else \
                DeviceArray.from_host(self._ctx, np.zeros(1, np.int64))
            values = self._values[lo:hi].copy()
            return DeviceVarArray(self._ctx, self._element, offsets, values)
        raise NotSupportedError(f"DeviceVarArray: index {key!r} (integers and slices only)")

    def __iter__(self):
        return iter(self.tolist())

    def __array__(self, dtype=None, copy=None):
        # nothing goes to the host unless asked (as DeviceArray)
        raise TypeError("a device array is not converted implicitly: copy it to the host "
                        "with .get() or .to_numpy()")

    # ---- display -------------------------------------------------------------------
    def __repr__(self) -> str:
        nulls = ""
        if _is_option_child(self._values):
            k = self._values.null_count
            nulls = f", {k} null item{'' if k == 1 else 's'}"
        return (f"<ckernels.DeviceArray {self.type} ({self._length},) on "
                f"{self._ctx.brief}{nulls}>")

    def __str__(self) -> str:
        if self._length <= 10:
            return str(self.tolist())
        head, tail = self[:3].tolist(), self[self._length - 3:].tolist()
        return "[" + ", ".join(map(repr, head)) + ", ..., " + ", ".join(map(repr, tail)) + "]"

    def _repr_html_(self) -> str:
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)

    # ---- leaving the device: Arrow's C device interface ---------------------------
    def __arrow_c_schema__(self):
        """The ``arrow_schema`` capsule of what :meth:`__arrow_c_device_array__`
        gives (``large_utf8`` / ``large_list``: int64 offsets)."""
        return _arrow_dev.schema_capsule(_schema_of(self._element))

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """``(arrow_schema, arrow_device_array)`` capsules over the device
        buffers (no copy): ``ARROW_DEVICE_OPENCL`` (buffer pointers are the
        ``cl_mem`` handles) or ``ARROW_DEVICE_CUDA`` (device pointers).  A
        ``requested_schema`` other than this array's own is refused."""
        schema = _schema_of(self._element)
        try:
            _arrow_dev.check_export_args(requested_schema, kwargs, schema)
            node, keep = _arrow_dev.device_node(self)
        except BaseException:
            schema.release(schema)
            raise
        return _arrow_dev.wrap_capsules(self._ctx, node, keep, schema)

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        """Arrow's C device stream interface: a stream of this one array
        (:func:`ckernels.device.arrow.export_device_stream`)."""
        return _arrow_dev.export_device_stream(self, requested_schema, **kwargs)


# ------------------------------------------------- lengths -> offsets --
def offsets_from_lengths(lengths: DeviceArray) -> DeviceArray:
    """Arrow offsets (``len(lengths) + 1`` int64, from 0) of rows of these
    lengths, computed on the device: the lengths copied (converted to int64)
    and scanned in place by the C core's exclusive scan
    (``ck_device_scan_exclusive_i64``); the last offset is the total."""
    if not isinstance(lengths, DeviceArray) or lengths.ndim != 1 or \
            lengths.dtype.kind not in "iu":
        raise InvalidArgumentError("offsets_from_lengths: a 1-d device array of integers")
    n = lengths.size
    out = DeviceArray.empty(lengths.context, (n + 1,), np.int64)
    out[n:] = 0
    if n:
        out[:n] = lengths
    check(lib.ck_device_scan_exclusive_i64(out.buffer._buf, out.offset, n + 1, ffi.NULL))
    return out


def from_lengths(lengths: DeviceArray, values, element=None) -> DeviceVarArray:
    """A :class:`DeviceVarArray` of rows of ``lengths`` over ``values`` (a
    device array of numbers or bools, or of UTF-8 bytes with ``element=
    "string"``): the offsets scanned on the device, checked to end at
    ``len(values)``."""
    offsets = offsets_from_lengths(lengths)
    total = int(offsets.buffer.to_numpy(offsets.offset + 8 * lengths.size, np.int64, 1)[0])
    if total != len(values) or lengths.size and int(lengths.min().get()) < 0:
        raise InvalidArgumentError(f"from_lengths: the lengths sum to {total} (none may be "
                                   f"negative), the values hold {len(values)}")
    if element is None:
        element = _t.Type(f"var * {values.element.name}")
    elif not isinstance(element, _t.Type):
        element = _t.Type(element)
    return DeviceVarArray(lengths.context, element, offsets, values)


# ------------------------------------------------------------------ upload --
def host_varlen(obj, type=None):
    """``obj`` as a host ``ckernels.Array`` of strings or var dims, if it is
    such data (a host array of such a type; lists of str or ragged lists;
    NumPy ``StringDType``/``str_``/object arrays of str; Arrow producers), else
    None (numbers go the way of NumPy)."""
    if type is not None:
        t = type if isinstance(type, _t.Type) else _t.Type(type)
        if "string" in str(t) or "var" in str(t):
            return _host_array(obj, type=t) if not isinstance(obj, Array) else obj
        return None
    if isinstance(obj, Array):
        return obj if _holds_varlen(obj.type) else None
    if isinstance(obj, (DeviceArray, DeviceVarArray)):   # Arrow producers, not host data
        return None
    if is_arrow(obj):      # zero-copy on the host: the upload is the one copy
        h = _host_asarray(obj)
        return h if _holds_varlen(h.type) else None
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "UTO":
            return None
        h = _host_array(obj)
        return h if _holds_varlen(h.type) else None
    if isinstance(obj, (list, tuple)):
        try:
            probe = np.asarray(obj)
        except ValueError:            # ragged: var dims
            probe = None
        if probe is not None and probe.dtype.kind not in "UO":
            return None
        h = _host_array(obj)
        return h if _holds_varlen(h.type) else None
    return None


def _holds_varlen(t: _t.Type) -> bool:
    s = str(t)
    return "string" in s or "var" in s


def upload(ctx, host: Array, option_leaf=None) -> DeviceVarArray:
    """A :class:`DeviceVarArray` of ``ctx`` holding a copy of ``host`` (``N *
    string`` or ``N * var * T``): exported by the C core (text shared),
    offsets and values written in one write each.  ``N * var * ?T`` needs
    ``option_leaf`` (:func:`ckernels.device.nulls.upload_leaf`, which makes
    the option child: items and bitmap)."""
    t = host.type
    element = t.element if t.is_dim and not str(t).startswith("var") else None
    if element is None or (element.is_dim and not str(element).startswith("var")):
        raise NotSupportedError(f"Context.array: {t} on a {ctx.kind} device (strings and "
                                "var dims with one outer dim only: N * string, N * var * T)")
    if element.is_option:
        raise NotSupportedError(f"Context.array: {t} on a {ctx.kind} device (null rows, "
                                f"{element}, stay on the host; items of var dims may be "
                                "null: N * var * ?T)")
    if not _element_ok(element):
        raise NotSupportedError(f"Context.array: element type {element} cannot live on a "
                                f"{ctx.kind} device (strings and var dims of numbers, bools "
                                "or strings)")
    schema = ffi.new("struct ArrowSchema *")
    arr = ffi.new("struct ArrowArray *")
    check(lib.ck_arrow_export(host._a, ffi.NULL, schema, arr))
    try:
        return _upload_node(ctx, element, schema, arr, arr.offset, arr.length,
                            option_leaf=option_leaf)
    finally:
        arr.release(arr)
        schema.release(schema)


def _host_view(ptr, dtype, start: int, count: int) -> np.ndarray:
    dt = np.dtype(dtype)
    if count <= 0:
        return np.empty(0, dt)
    base = ffi.cast("char *", ptr) + start * dt.itemsize
    return np.frombuffer(ffi.buffer(base, count * dt.itemsize), dtype=dt)


def _upload_node(ctx, element: _t.Type, schema, arr, offset: int, length: int,
                 nulls_ok: bool = False, option_leaf=None):
    """The device array of ``length`` elements of ``element`` from ``offset``
    of an exported Arrow node (``nulls_ok``: the caller uploads its bitmap,
    :mod:`ckernels.device.nulls`; ``option_leaf(ctx, T, schema, arr, offset,
    length)`` makes the device array of an option element ``?T``)."""
    if element.is_option:
        if option_leaf is None:
            raise NotSupportedError(f"Context.array: {element} items here (upload through "
                                    "Context.array)")
        return option_leaf(ctx, element.value_type, schema, arr, offset, length)
    if arr.null_count != 0 and not nulls_ok:
        raise NotSupportedError("Context.array: null values cannot go to a device yet")
    fmt = ffi.string(schema.format)
    if str(element) != "string" and element.is_builtin:     # numbers or bools
        dt = element.to_numpy_dtype()
        if fmt == b"b":
            bits = _host_view(arr.buffers[1], np.uint8, 0, (offset + length + 7) // 8)
            vals = np.unpackbits(bits, bitorder="little")[offset:offset + length].astype(bool)
        else:
            vals = _host_view(arr.buffers[1], dt, offset, length)
        return DeviceArray.from_host(ctx, vals)
    width = _STRING_FORMATS.get(fmt) or _LIST_FORMATS.get(fmt)
    if width is None:
        raise NotSupportedError(f"Context.array: Arrow format {fmt.decode()} of {element}")
    offs = _host_view(arr.buffers[1], width, offset, length + 1).astype(np.int64)
    lo, hi = int(offs[0]), int(offs[-1])
    offs -= lo
    dev_offsets = DeviceArray.from_host(ctx, offs)
    if str(element) == "string":
        values = DeviceArray.from_host(ctx, _host_view(arr.buffers[2], np.uint8, lo, hi - lo))
    else:
        child = arr.children[0]
        values = _upload_node(ctx, element.element, schema.children[0], child,
                              child.offset + lo, hi - lo, option_leaf=option_leaf)
    return DeviceVarArray(ctx, element, dev_offsets, values)


# ---------------------------------------------------------- Arrow nodes --
def _schema_host(element: _t.Type) -> Array:
    # an empty host array of the element type: what the C export names it
    return _host_array([], type=_t.Type(f"0 * {element}"))


def _schema_of(element: _t.Type):
    """A new ArrowSchema (cffi-owned struct, the caller releases or moves it)
    of ``N * element``, as the C core exports that type; the device layout
    (int64 offsets) must be what it names."""
    schema = ffi.new("struct ArrowSchema *")
    proto = _schema_host(element)       # alive during the call
    check(lib.ck_arrow_export_schema(proto._a, ffi.NULL, schema))
    _check_large(schema, element)
    return schema


#: the 64-bit-offset formats the device layout has (static: a schema made by
#: the C core frees its own copy of the format, never the pointer it shows)
_LARGE = {b"u": ffi.new("char[]", b"U"), b"+l": ffi.new("char[]", b"+L")}


def _check_large(schema, element) -> None:
    """Name the device's int64 offsets in a schema the C core made for
    ``element``: ``utf8``/``list`` (what it exports small arrays as) become
    ``large_utf8``/``large_list``, the same types with 64-bit offsets."""
    fmt = ffi.string(schema.format)
    if fmt in _LARGE:
        schema.format = _LARGE[fmt]
    for k in range(schema.n_children):
        _check_large(schema.children[k], element)


def _host_node(d: DeviceVarArray):
    """``(node, keep)``: the host copies of ``d``'s buffers (one read each) as
    a ``ck_arrow_node`` tree; ``keep`` holds what the node points into."""
    keep: list = []

    def host_buffer(x: DeviceArray):
        h = np.ascontiguousarray(x.to_numpy())
        if h.dtype == np.bool_:
            h = np.packbits(h, bitorder="little")
        if h.size == 0:
            h = np.zeros(1, h.dtype)     # a real address for empty buffers
        keep.append(h)
        return ffi.cast("void *", h.ctypes.data)

    return _arrow_dev.node_of(d, host_buffer, keep), keep


def import_host_node(node, keep, schema) -> Array:
    """A host ``ckernels.Array`` over a ``ck_arrow_node`` of host buffers
    (``keep``: what holds them, released with the array) and its Arrow
    ``schema`` (released here): wrapped and imported without another copy."""
    out = ffi.new("ck_array_preamble **")
    dev = ffi.new("struct ArrowDeviceArray *")
    release, handle = release_callback(keep)
    st = lib.ck_arrow_wrap(node, _ARROW_DEVICE_CPU, -1, release, handle, dev)
    if st != 0:
        release(handle)
        schema.release(schema)
        check(st)
    try:
        check(lib.ck_arrow_import_device(schema, dev, ffi.NULL, out))
    finally:
        if schema.release != ffi.NULL:
            schema.release(schema)
    return Array._own(out[0])
