"""Device arrays: element data in a buffer of a device context.

A :class:`DeviceArray` is ``(buffer, offset, shape, strides, dtype)`` over a
:class:`~ckernels.context.buffer.Buffer` -- nothing in it is specific to one
backend (OpenCL and CUDA go through the same buffer calls).  Its element types
are the rows of the one table (:mod:`ckernels.dtypes`) that have a C type in
the context's device dialect.  ``ctx.array`` / ``ctx.empty`` / ``ctx.to``
(:class:`ckernels.Context`) are the usual ways to make one.

Its NumPy-like surface is :class:`ckernels.arraylike.ArrayLike`, the one
host arrays (:class:`ckernels.Array`) have too; this class provides the
primitives that surface is written over (views, an empty array, assignment,
applying a registry operation, a reduction, fetching chosen elements), each
running on the device, so:

* attributes (``shape, ndim, size, nbytes, itemsize, strides, dtype, type,
  T, flags, context``), ``len``, iteration;
* basic indexing and slicing are views (integers, slices with any step,
  ``...``, ``None``); an integer index array or a host boolean mask on one
  axis gathers on the device; a fully indexed element is a **0-d device
  array** (as CuPy: no transfer until asked), and so is a full reduction;
* ``reshape`` (a view where the strides allow), ``transpose``, ``ravel``,
  ``squeeze``, ``broadcast_to``, ``copy``, ``astype``, ``fill``, ``sum prod
  min max any all mean``, operators and ``ckernels.ops.<name>`` run on the
  device (:mod:`ckernels.device.ops`, from one operation table);
* nothing goes to the host unless asked: ``np.asarray(d)`` raises TypeError
  naming ``.get()`` / ``.to_numpy()``; NumPy ufuncs without a device kernel
  and NumPy functions without a device implementation raise too, and so do
  host (NumPy) operands and ``out=`` arrays; ``str(d)`` prints the values,
  fetching only the elements shown; ``repr(d)`` names the dtype, shape and
  context only; ``bool/int/float(d)``, ``d.item()``, ``d.tolist()``,
  ``d.get()`` read what they return;
* the attributes describing memory are read-only properties, and every
  array is checked at construction to address only bytes inside its buffer,
  aligned for its element type -- nothing can make a kernel read or write
  outside its memory;
* pickling copies the values to the host and unpickles them into the
  default context of the same kind (:func:`ckernels.device.place.default_context`);
  sharing with other libraries goes through the context kind's hooks
  (:func:`ckernels.backends.hook`): DLPack on every device kind
  (:mod:`ckernels.backends.dlpack`: the ``cl_mem`` for OpenCL, the device
  pointer for CUDA), ``__cuda_array_interface__`` on CUDA arrays
  (:mod:`ckernels.backends.cuda`), ``to_pyopencl`` on OpenCL arrays
  (:mod:`ckernels.backends.opencl`).

The layers below this class: :class:`~ckernels.device.base.DeviceArrayBase`
(the memory, views, transfers, sharing) and the device kernels of
:mod:`ckernels.device.ops` (generated device C, launched through
:mod:`ckernels.device.launch`); this class adds the operations to the base.
"""

from __future__ import annotations

import numpy as np

from ..errors import CKTypeError
from . import arrow as _arrow_dev
from .base import DeviceArrayBase, StructElement, element_of


def _ops():
    """:mod:`.ops`, imported on first use: a process that never touches a
    device does not pay for loading it."""
    from . import ops
    return ops


class DeviceArray(DeviceArrayBase):
    """An array in a buffer of a device context (see the module docstring)."""

    __slots__ = ()

    def set(self, host) -> None:
        """Copy host data (broadcast to this shape, converted to this dtype with
        NumPy's rules) into this array: an explicit host-to-device transfer."""
        arr = np.asarray(host)
        if arr.dtype.kind not in "biuf" and not (arr.dtype.kind in "Mm" and
                                                 arr.dtype.kind == self.dtype.kind):
            raise CKTypeError(f"DeviceArray.set: host data of dtype {arr.dtype} cannot go to "
                              "a device")
        self._check_writable()
        arr = np.ascontiguousarray(np.broadcast_to(arr, self._shape), dtype=self.dtype)
        if self.is_contiguous:
            if arr.size:
                self._buffer.write(self._offset, arr.reshape(-1).view(np.uint8))
        else:
            _ops().assign(self, DeviceArray.from_host(self.context, arr), "nocheck")

    def _assign(self, value, errmode: str = "default") -> None:
        self._check_writable()
        _ops().assign(self, value, errmode)

    def _apply(self, name: str, args, out) -> "DeviceArray":
        if out is not None and isinstance(out, DeviceArray):
            out._check_writable()
        return _ops().elementwise(name, args, out)

    def _reduce(self, name: str, axis, keepdims: bool) -> "DeviceArray":
        return _ops().reduce("prod" if name == "product" else name, self, axis,
                                 keepdims, None, None)

    def _take(self, indices):
        return _ops().gather(self, [np.asarray(i, np.int64) for i in indices]).to_numpy()

    def _getitem_advanced(self, entries):
        arrays = [i for i, k in enumerate(entries) if _is_index_array(k)]
        if len(arrays) == 1 and all(isinstance(k, slice) for i, k in enumerate(entries)
                                    if i != arrays[0]):
            i = arrays[0]
            view = self._view(tuple(entries[:i]) + (slice(None),) + tuple(entries[i + 1:]))
            return _ops().take(view, entries[i], i, self._shape[i])
        return super()._getitem_advanced(entries)

    def _reduction(self, name, axis, out, keepdims, dtype=None):
        # as the shared surface, but a full reduction stays a 0-d device array
        r = _ops().reduce("prod" if name == "product" else name, self, axis,
                              bool(keepdims), dtype, None)
        if out is not None:
            out._assign(r, "nocheck") if isinstance(out, DeviceArray) else \
                _refuse_host_out()
            return out
        return r

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """Arithmetic mean: the sum divided by the count (float64 for integer
        and bool arrays, the array's type for floats), a 0-d device array for
        a full reduction."""
        r = _ops().reduce("mean", self, axis, bool(keepdims), dtype, None)
        if out is not None:
            if not isinstance(out, DeviceArray):
                _refuse_host_out()
            out._assign(r, "nocheck")
            return out
        return r

    def copy(self, order: str = "C") -> "DeviceArray":
        """A C-contiguous device-side copy in the same context."""
        new = DeviceArray.empty(self.context, self._shape, self.dtype)
        if self.size:
            if self.is_contiguous:
                new._buffer.copy_from(new._offset, self._buffer, self._offset, self.nbytes)
            else:
                _ops().assign(new, self, "nocheck")
        return new

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _ops().check_ufunc_operands(ufunc, inputs, kwargs)
        return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.where and len(args) == 3 and not kwargs:
            return _ops().where(*args)     # one kernel, not masked copies
        return super().__array_function__(func, types, args, kwargs)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        """Arrow's C device interface over the device memory (no copy; bools
        packed to bits on the device): one-dimensional numbers and bools
        (:func:`ckernels.device.arrow.export_device_array`)."""
        return _arrow_dev.export_device_array(self, requested_schema, **kwargs)

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        """Arrow's C device stream interface: a stream of this one array
        (:func:`ckernels.device.arrow.export_device_stream`)."""
        return _arrow_dev.export_device_stream(self, requested_schema, **kwargs)

    def __reduce__(self):
        # pickling copies the data to the host; unpickling copies it into the
        # default context of the same kind (see docs/contexts.md)
        return (_unpickle, (type(self.context), self.context.kind, self.to_numpy()))


def _refuse_host_out():
    raise TypeError("out= must be a device array of the same context (no implicit copies "
                    "to the host)")


def _unpickle(context_class, kind, host):
    # the Context class comes with the pickle: this module never imports it
    return context_class.default(kind).array(host)


def _is_index_array(k) -> bool:
    return isinstance(k, (list, np.ndarray, DeviceArray))


__all__ = ["DeviceArray", "StructElement", "element_of"]
