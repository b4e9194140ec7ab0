"""Device arrays: element data in a buffer of a device context.

A :class:`DeviceArray` is ``(buffer, offset, shape, strides, dtype)`` over a
:class:`~ckernels.context.buffer.Buffer` -- nothing in it is specific to one
backend (OpenCL now; CUDA through the same buffer calls).  Its element types
are the rows of the one table (:mod:`ckernels.dtypes`) that have a C type in
the context's device dialect.  ``ctx.array`` / ``ctx.empty`` / ``ctx.to``
(:class:`ckernels.Context`) are the usual ways to make one.

It behaves like a NumPy array whose data stays on the device (as CuPy's
arrays do):

* the NumPy attributes (``shape, ndim, size, nbytes, itemsize, strides,
  dtype, T, flags``), ``type`` (the ckernel type), ``context``, ``len``;
* basic indexing and slicing are views (integers, slices with any step,
  ``...``, ``None``); one integer index array (a list, a NumPy array or an
  integer device array) among them gathers into a new array, as NumPy does;
  a fully indexed element is a 0-d device array;
* ``reshape`` (a view where the strides allow, NumPy's rule, else a copy),
  ``transpose``, ``ravel``, ``squeeze``, ``copy``, ``astype``, ``fill``, and
  the reductions ``sum/prod/min/max/any/all/mean`` run on the device;
* operators and NumPy ufuncs (``d + 1``, ``np.sin(d)``, ``np.add(d, d,
  out=d)``) run on the device through the operation table of
  :mod:`ckernels.jit.device_ops` (the same operations as ``ckernels.ops``);
* nothing goes to the host unless asked: ``np.asarray(d)`` raises TypeError
  naming ``.get()`` / ``.to_numpy()``, NumPy functions without a device
  implementation raise too; ``bool(d)``, ``int(d)``, ``float(d)``,
  ``d.item()`` and ``d.tolist()`` read what they return;
* the attributes describing memory are read-only, and the constructor checks
  that every element addressed lies inside the buffer, so no assignment can
  make a later kernel read or write outside its memory.

The kernels themselves live in the jit layer (they are generated device C);
:func:`install_kernels` is how that layer plugs them in when ``ckernels`` is
imported, so this module never imports upward.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import dtypes
from ..errors import (CKIndexError, CKTypeError, InvalidArgumentError, NotSupportedError)
from . import cl_interop
from .buffer import Buffer

#: the device kernels (``ckernels.jit.device_ops``), installed at import
_KERNELS = None


def install_kernels(impl) -> None:
    """Plug in the object that runs device kernels for device arrays
    (``ckernels.jit.device_ops`` does this when it is imported): it provides
    ``elementwise(op, args, out)``, ``assign(dst, src)``, ``astype(a, dtype,
    errmode)``, ``reduce(op, a, axis, keepdims, dtype, out)``,
    ``gather(a, ...)`` and ``array_ufunc(...)``."""
    global _KERNELS
    _KERNELS = impl


def _kernels():
    if _KERNELS is None:   # only if ckernels.jit failed to import
        raise NotSupportedError("DeviceArray: the device kernels are not installed "
                                "(import ckernels)")
    return _KERNELS


def _contiguous_strides(shape, itemsize: int) -> tuple:
    st, acc = [], itemsize
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def _f_strides(shape, itemsize: int) -> tuple:
    st, acc = [], itemsize
    for s in shape:
        st.append(acc)
        acc *= max(s, 1)
    return tuple(st)


def element_of(kind: str, dtype, where: str = "DeviceArray") -> "dtypes.DType":
    """The table row of ``dtype`` if devices of context kind ``kind`` hold it."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise CKTypeError(f"{where}: {dtype!r} is not a dtype") from None
    d = dtypes.of_numpy(dt)
    try:
        ok = d is not None and d.c_type(kind) is not None
        names = ", ".join(x.name for x in dtypes.device_types(kind))
    except ValueError:
        raise NotSupportedError(f"{where}: '{kind}' contexts hold no device arrays") from None
    if not ok:
        raise NotSupportedError(f"{where}: dtype {dt} is not supported on {kind} devices "
                                f"({names})")
    return d


def _index(v, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise CKTypeError(f"DeviceArray: {what} must be integers, not "
                          f"{type(v).__name__}") from None


class Flags:
    """NumPy-like flags of a device array (read-only): ``c_contiguous``,
    ``f_contiguous``, ``owndata``, ``writeable`` (always true), ``aligned``
    (always true: offsets and strides are multiples of the item size); also
    readable as ``flags["C_CONTIGUOUS"]``."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")
    writeable = True
    aligned = True

    def __init__(self, c, f, own):
        object.__setattr__(self, "c_contiguous", c)
        object.__setattr__(self, "f_contiguous", f)
        object.__setattr__(self, "owndata", own)

    def __setattr__(self, name, value):
        raise AttributeError("DeviceArray.flags are read-only")

    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS":
             "f_contiguous", "F": "f_contiguous", "OWNDATA": "owndata", "O": "owndata",
             "WRITEABLE": "writeable", "W": "writeable", "ALIGNED": "aligned", "A": "aligned"}

    def __getitem__(self, key):
        try:
            return getattr(self, self._KEYS[key.upper()])
        except (KeyError, AttributeError):
            raise KeyError(key) from None

    @property
    def contiguous(self) -> bool:
        return self.c_contiguous

    def __repr__(self) -> str:
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}\n"
                f"  OWNDATA : {self.owndata}\n  WRITEABLE : True\n  ALIGNED : True")


# ufunc name -> operation (registry names; the rest are equal)
_UFUNC_ALIAS = {"remainder": "mod", "true_divide": "divide", "conjugate": None}


class DeviceArray:
    """An array in a buffer of a device context (see the module docstring)."""

    __slots__ = ("_buffer", "_offset", "_shape", "_strides", "_element", "_base", "_key",
                 "__weakref__")
    # NumPy defers binary operators with an ndarray to us (and then to
    # __array_ufunc__, which refuses host operands instead of copying)
    __array_priority__ = 1000

    def __init__(self, buffer: Buffer, offset: int, shape, dtype, strides=None, *,
                 base=None):
        if not isinstance(buffer, Buffer):
            raise InvalidArgumentError(f"DeviceArray needs a ckernels Buffer, not "
                                       f"{type(buffer).__name__}")
        element = element_of(buffer.context.kind, dtype)
        itemsize = element.size
        if isinstance(shape, (numbers.Integral, np.integer)):
            shape = (shape,)
        shape = tuple(_index(s, "shape entries") for s in shape)
        if any(s < 0 for s in shape):
            raise InvalidArgumentError(f"DeviceArray: negative dimension in {shape}")
        if strides is None:
            strides = _contiguous_strides(shape, itemsize)
        else:
            strides = tuple(_index(s, "strides") for s in strides)
            if len(strides) != len(shape):
                raise InvalidArgumentError(f"DeviceArray: {len(strides)} strides for "
                                           f"{len(shape)} dims")
            if any(s % itemsize for s in strides):
                raise InvalidArgumentError(
                    f"DeviceArray: strides {strides} are not multiples of the item size "
                    f"{itemsize} (device kernels need aligned elements)")
        offset = _index(offset, "offset")
        if offset < 0 or offset % itemsize:
            raise InvalidArgumentError(f"DeviceArray: offset {offset} is negative or not a "
                                       f"multiple of the item size {itemsize}")
        if all(shape):
            lo = offset + sum(st * (n - 1) for n, st in zip(shape, strides) if st < 0)
            hi = offset + sum(st * (n - 1) for n, st in zip(shape, strides) if st > 0) \
                + itemsize
            cap = buffer.capacity
            if lo < 0 or hi > cap:
                raise CKIndexError(
                    f"DeviceArray: shape {shape} with strides {strides} at offset {offset} "
                    f"addresses bytes [{lo}, {hi}) outside the buffer's capacity {cap}")
        self._buffer = buffer
        self._offset = offset
        self._shape = shape
        self._strides = strides
        self._element = element
        self._base = base
        # what a launch plan depends on (ckernels.jit.device)
        self._key = (element.name, shape, strides)

    # ---- construction ------------------------------------------------------
    @classmethod
    def empty(cls, ctx, shape, dtype) -> "DeviceArray":
        """A new C-contiguous array (uninitialised) in its own buffer of ``ctx``."""
        element = element_of(ctx.kind, dtype)
        if isinstance(shape, (numbers.Integral, np.integer)):
            shape = (shape,)
        shape = tuple(_index(s, "shape entries") for s in (shape or ()))
        n = 1
        for s in shape:
            if s < 0:
                raise InvalidArgumentError(f"DeviceArray: negative dimension in {shape}")
            n *= s
        nbytes = max(n * element.size, 8)
        buf = ctx.new_buffer(nbytes)
        off = buf.allocate(nbytes, align=max(element.size, 8))
        return cls(buf, off, shape, element.numpy)

    @classmethod
    def from_host(cls, ctx, obj, dtype=None) -> "DeviceArray":
        """A new array in ``ctx`` holding a copy of host data."""
        host = np.asarray(obj, dtype=dtype)
        self = cls.empty(ctx, host.shape, host.dtype)
        if host.size:
            host = np.ascontiguousarray(host, dtype=self.dtype)
            self._buffer.write(self._offset, host.reshape(-1).view(np.uint8))
        return self

    def _view(self, offset, shape, strides) -> "DeviceArray":
        return DeviceArray(self._buffer, offset, shape, self.dtype, strides,
                           base=self._base if self._base is not None else self)

    # ---- attributes (read-only) --------------------------------------------
    @property
    def buffer(self) -> Buffer:
        """The :class:`~ckernels.context.buffer.Buffer` holding the data."""
        return self._buffer

    @property
    def offset(self) -> int:
        """Byte offset of element ``[0, ..., 0]`` in :attr:`buffer`."""
        return self._offset

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def strides(self) -> tuple:
        """Byte strides (NumPy's convention; negative for reversed views)."""
        return self._strides

    @property
    def dtype(self) -> np.dtype:
        return self._element.numpy

    @property
    def element(self) -> "dtypes.DType":
        """The element type's row of :mod:`ckernels.dtypes`."""
        return self._element

    @property
    def type(self):
        """The ckernel type (``3 * 4 * float32``; the element type for 0-d)."""
        from ..types import Type
        return Type(" * ".join([*(str(s) for s in self._shape), self._element.name]))

    @property
    def context(self):
        """The :class:`ckernels.Context` holding the data."""
        return self._buffer.context

    @property
    def base(self):
        """The array this one is a view of (None if it owns its buffer region)."""
        return self._base

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self._element.size

    @property
    def nbytes(self) -> int:
        return self.size * self._element.size

    @property
    def is_contiguous(self) -> bool:
        """C-contiguous (dims of size 1 may have any stride, as in NumPy)."""
        return _is_c_contiguous(self._shape, self._strides, self._element.size)

    @property
    def flags(self) -> Flags:
        it = self._element.size
        return Flags(_is_c_contiguous(self._shape, self._strides, it),
                     _is_c_contiguous(self._shape[::-1], self._strides[::-1], it),
                     self._base is None)

    @property
    def T(self) -> "DeviceArray":
        return self.transpose()

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    # ---- host transfers (explicit only) ------------------------------------
    def to_numpy(self) -> np.ndarray:
        """A host copy (device to host), C-contiguous.  A non-contiguous array
        is first copied on the device, so only its elements travel."""
        src = self if self.is_contiguous else self.copy()
        out = np.empty(self._shape, self.dtype)
        if out.size:
            src._buffer.read_into(src._offset, out)
        return out

    get = to_numpy

    def set(self, host) -> None:
        """Copy host data (anything ``np.asarray`` accepts, broadcast to this
        shape, converted to this dtype) into this array."""
        arr = np.asarray(host)
        if arr.dtype.kind not in "biuf":
            raise CKTypeError(f"DeviceArray.set: host data of dtype {arr.dtype} cannot go to "
                              "a device")
        arr = np.ascontiguousarray(np.broadcast_to(arr, self._shape), dtype=self.dtype)
        if self.is_contiguous:
            if arr.size:
                self._buffer.write(self._offset, arr.reshape(-1).view(np.uint8))
        else:
            _kernels().assign(self, DeviceArray.from_host(self.context, arr))

    def to(self, ctx):
        """This array in ``ctx`` (see :meth:`ckernels.Context.to`): ``self`` in its
        own context, a host ``ckernels.Array`` for a ``"cpu"`` context, a copy
        through the host for another device context (two contexts share no
        memory)."""
        to = getattr(ctx, "to", None)
        if to is None or not hasattr(ctx, "is_device"):
            raise InvalidArgumentError(f"DeviceArray.to: expected a ckernels.Context, not "
                                       f"{type(ctx).__name__}")
        return to(self)

    def item(self, *args):
        """The element as a Python scalar (reads one element)."""
        if args:
            return self[args if len(args) > 1 else args[0]].item()
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        one = np.empty((), self.dtype)
        idx = self._offset
        self._buffer.read_into(idx, one.reshape(1))
        return one.item()

    def tolist(self):
        """Nested Python lists (copies the array to the host)."""
        return self.to_numpy().tolist()

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "ckernels.DeviceArray lives on a device: NumPy cannot use it without a copy to "
            "the host, which is never made implicitly; copy it explicitly with .get() or "
            ".to_numpy()")

    def __bool__(self) -> bool:
        n = self.size
        if n == 0:
            raise ValueError("The truth value of an empty array is ambiguous. Use "
                             "`array.size > 0` to check that an array is not empty.")
        if n > 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.item())

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self.ndim or self._element.kind not in "biu":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def _scalar(self, what):
        if self.size != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python scalars "
                            f"({what}() of shape {self._shape})")
        return self.item()

    # ---- views -------------------------------------------------------------
    def __getitem__(self, key):
        return _getitem(self, key)

    def __setitem__(self, key, value) -> None:
        target = _getitem(self, key)
        if not isinstance(target, DeviceArray) or target._buffer is not self._buffer:
            raise NotSupportedError("DeviceArray: assignment through an index array "
                                    "(advanced indexing) is not supported; assign to a "
                                    "view (slices, integers, ...) instead")
        _kernels().assign(target, value)

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            yield self[i]

    def __contains__(self, value) -> bool:
        return bool((self == value).any())

    def transpose(self, *axes) -> "DeviceArray":
        """A view with the axes permuted (reversed without arguments)."""
        nd = self.ndim
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], numbers.Integral)):
            axes = axes[0]
        if axes is None or axes == ():
            axes = tuple(range(nd))[::-1]
        axes = tuple(_norm_axis(_index(a, "axes"), nd) for a in axes)
        if sorted(axes) != list(range(nd)):
            raise InvalidArgumentError(f"transpose: axes {axes} are not a permutation of "
                                       f"{nd} axes")
        return self._view(self._offset, tuple(self._shape[a] for a in axes),
                          tuple(self._strides[a] for a in axes))

    def swapaxes(self, a: int, b: int) -> "DeviceArray":
        ax = list(range(self.ndim))
        a, b = _norm_axis(a, self.ndim), _norm_axis(b, self.ndim)
        ax[a], ax[b] = ax[b], ax[a]
        return self.transpose(ax)

    def reshape(self, *shape, order: str = "C") -> "DeviceArray":
        """A view with a new shape where the strides allow one (NumPy's rule),
        else a C-contiguous copy with that shape.  ``-1`` infers one size."""
        if order not in ("C", "A"):
            raise NotSupportedError("DeviceArray.reshape: only order='C' is supported")
        if len(shape) == 1 and not isinstance(shape[0], (numbers.Integral, np.integer)):
            shape = shape[0]
        shape = tuple(_index(s, "shape entries") for s in shape)
        view = _reshaped_strides(self._shape, self._strides, self.dtype, shape)
        if view is not None:
            new_shape, new_strides = view
            return self._view(self._offset, new_shape, new_strides)
        c = self.copy()
        new_shape, new_strides = _reshaped_strides(c._shape, c._strides, c.dtype, shape)
        return DeviceArray(c._buffer, c._offset, new_shape, c.dtype, new_strides)

    def ravel(self) -> "DeviceArray":
        """A 1-d view (a copy when the array is not contiguous)."""
        return self.reshape(-1)

    def flatten(self) -> "DeviceArray":
        """A 1-d copy."""
        return self.copy().reshape(-1)

    def squeeze(self, axis=None) -> "DeviceArray":
        if axis is None:
            keep = [i for i, s in enumerate(self._shape) if s != 1]
        else:
            axes = {_norm_axis(a, self.ndim) for a in
                    ((axis,) if isinstance(axis, numbers.Integral) else axis)}
            for a in axes:
                if self._shape[a] != 1:
                    raise InvalidArgumentError("cannot select an axis to squeeze out which "
                                               "has size not equal to one")
            keep = [i for i in range(self.ndim) if i not in axes]
        return self._view(self._offset, tuple(self._shape[i] for i in keep),
                          tuple(self._strides[i] for i in keep))

    # ---- device operations -------------------------------------------------
    def copy(self, order: str = "C") -> "DeviceArray":
        """A C-contiguous device-side copy in the same context."""
        if order not in ("C", "K", "A"):
            raise NotSupportedError("DeviceArray.copy: only order='C' is supported")
        new = DeviceArray.empty(self.context, self._shape, self.dtype)
        if self.size:
            if self.is_contiguous:
                new._buffer.copy_from(new._offset, self._buffer, self._offset, self.nbytes)
            else:
                _kernels().assign(new, self)
        return new

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def astype(self, dtype, errmode: str = "nocheck", copy: bool = True) -> "DeviceArray":
        """A converted copy, computed on the device.  ``errmode`` is the
        library's (``ckernels.kernels``): ``"nocheck"`` (NumPy's unchecked
        ``astype``: ints wrap, floats to ints truncate and saturate, NaN gives
        0), ``"overflow"``, ``"fractional"`` / ``"default"`` (also refuse a
        dropped fractional part)."""
        dt = np.dtype(dtype)
        if not copy and dt == self.dtype:
            return self
        return _kernels().astype(self, dt, errmode)

    def fill(self, value) -> None:
        """Set every element to ``value`` (converted to the dtype as NumPy does)."""
        _kernels().assign(self, value)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _kernels().reduce("sum", self, axis, keepdims, dtype, out)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return _kernels().reduce("prod", self, axis, keepdims, dtype, out)

    def min(self, axis=None, out=None, keepdims=False):
        return _kernels().reduce("min", self, axis, keepdims, None, out)

    def max(self, axis=None, out=None, keepdims=False):
        return _kernels().reduce("max", self, axis, keepdims, None, out)

    def any(self, axis=None, out=None, keepdims=False):
        return _kernels().reduce("any", self, axis, keepdims, None, out)

    def all(self, axis=None, out=None, keepdims=False):
        return _kernels().reduce("all", self, axis, keepdims, None, out)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _kernels().reduce("mean", self, axis, keepdims, dtype, out)

    # ---- operators (device kernels) ----------------------------------------
    def _binary(self, op, other, reflected=False):
        if not _operand_ok(other):
            return NotImplemented
        args = (other, self) if reflected else (self, other)
        return _kernels().elementwise(op, args)

    def _inplace(self, op, other):
        if not _operand_ok(other):
            return NotImplemented
        _kernels().elementwise(op, (self, other), out=self)
        return self

    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o, True)
    def __iadd__(self, o): return self._inplace("add", o)
    def __sub__(self, o): return self._binary("subtract", o)
    def __rsub__(self, o): return self._binary("subtract", o, True)
    def __isub__(self, o): return self._inplace("subtract", o)
    def __mul__(self, o): return self._binary("multiply", o)
    def __rmul__(self, o): return self._binary("multiply", o, True)
    def __imul__(self, o): return self._inplace("multiply", o)
    def __truediv__(self, o): return self._binary("divide", o)
    def __rtruediv__(self, o): return self._binary("divide", o, True)
    def __itruediv__(self, o): return self._inplace("divide", o)
    def __floordiv__(self, o): return self._binary("floor_divide", o)
    def __rfloordiv__(self, o): return self._binary("floor_divide", o, True)
    def __ifloordiv__(self, o): return self._inplace("floor_divide", o)
    def __mod__(self, o): return self._binary("mod", o)
    def __rmod__(self, o): return self._binary("mod", o, True)
    def __imod__(self, o): return self._inplace("mod", o)
    def __pow__(self, o): return self._binary("power", o)
    def __rpow__(self, o): return self._binary("power", o, True)
    def __ipow__(self, o): return self._inplace("power", o)
    def __lshift__(self, o): return self._binary("left_shift", o)
    def __rlshift__(self, o): return self._binary("left_shift", o, True)
    def __ilshift__(self, o): return self._inplace("left_shift", o)
    def __rshift__(self, o): return self._binary("right_shift", o)
    def __rrshift__(self, o): return self._binary("right_shift", o, True)
    def __irshift__(self, o): return self._inplace("right_shift", o)
    def __and__(self, o): return self._binary("bitwise_and", o)
    def __rand__(self, o): return self._binary("bitwise_and", o, True)
    def __iand__(self, o): return self._inplace("bitwise_and", o)
    def __or__(self, o): return self._binary("bitwise_or", o)
    def __ror__(self, o): return self._binary("bitwise_or", o, True)
    def __ior__(self, o): return self._inplace("bitwise_or", o)
    def __xor__(self, o): return self._binary("bitwise_xor", o)
    def __rxor__(self, o): return self._binary("bitwise_xor", o, True)
    def __ixor__(self, o): return self._inplace("bitwise_xor", o)
    def __eq__(self, o): return self._binary("equal", o)
    def __ne__(self, o): return self._binary("not_equal", o)
    def __lt__(self, o): return self._binary("less", o)
    def __le__(self, o): return self._binary("less_equal", o)
    def __gt__(self, o): return self._binary("greater", o)
    def __ge__(self, o): return self._binary("greater_equal", o)

    def __divmod__(self, o):
        if not _operand_ok(o):
            return NotImplemented
        return self // o, self % o

    def __rdivmod__(self, o):
        if not _operand_ok(o):
            return NotImplemented
        return o // self, o % self

    def __neg__(self): return _kernels().elementwise("negative", (self,))
    def __abs__(self): return _kernels().elementwise("absolute", (self,))
    def __invert__(self): return _kernels().elementwise("invert", (self,))

    def __pos__(self):
        if self._element.kind == "b":
            raise CKTypeError("The numpy boolean unary positive (+) is not supported")
        return self.copy()

    __hash__ = None   # elementwise __eq__, mutable: unhashable, as NumPy arrays

    # ---- NumPy protocols ---------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _kernels().array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = _ARRAY_FUNCTIONS.get(func)
        if impl is None:
            raise TypeError(
                f"numpy.{func.__name__} has no device implementation for "
                "ckernels.DeviceArray, and device data is never copied to the host "
                "implicitly; copy it explicitly with .get() or .to_numpy()")
        return impl(*args, **kwargs)

    def __dlpack_device__(self) -> tuple:
        return _kernels().dlpack_device(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return _kernels().dlpack(self, stream=stream, max_version=max_version,
                                 dl_device=dl_device, copy=copy)

    def to_pyopencl(self, queue=None):
        """A ``pyopencl.array.Array`` sharing this array's memory: on the
        context's own queue, or on ``queue`` (any pyopencl queue of the same
        cl_context; a queue of another cl_context gets a copy, through the
        host, since OpenCL memory is not shared between contexts).  The
        pyopencl buffer retains the ``cl_mem`` and keeps this array alive."""
        ctx = self.context
        if ctx.kind != "opencl":
            raise NotSupportedError(f"to_pyopencl: {ctx.brief} is not an OpenCL context")
        if queue is None:
            queue = ctx.pyopencl_queue()
        elif queue.context.int_ptr != ctx.native_handles()[0]:
            import pyopencl.array as cla
            return cla.to_device(queue, self.to_numpy())
        return cl_interop.make_array(queue, self._buffer.native_handle, self._offset,
                                     self._shape, self._strides, self.dtype, owner=self)

    def __reduce__(self):
        # pickling copies the data to the host; unpickling copies it into the
        # default context of the same kind (see docs/contexts.md)
        return (_unpickle, (self.context.kind, self.to_numpy()))

    # ---- display -----------------------------------------------------------
    def __repr__(self) -> str:
        shape = "(" + ", ".join(map(str, self._shape)) + ("," if self.ndim == 1 else "") + ")"
        return f"<ckernels.DeviceArray {self.dtype} {shape} on {self.context.brief}>"

    def preview(self, edgeitems: int = 3) -> str:
        """The values as NumPy prints them, summarised with ``...`` past
        ``2 * edgeitems`` per axis: only the shown elements leave the device
        (time and transfer independent of the size)."""
        return _kernels().preview(self, edgeitems)

    def _repr_html_(self) -> str:
        import html
        return (f"<b>ckernels.DeviceArray</b> <code>{html.escape(str(self.dtype))} "
                f"{self._shape}</code> on <code>{html.escape(self.context.brief)}</code>")


def _unpickle(kind, host):
    from .context import default_context
    return default_context(kind).array(host)


def _operand_ok(v) -> bool:
    return isinstance(v, DeviceArray) or type(v) in (bool, int, float) or (
        isinstance(v, np.generic) and v.dtype.kind in "biuf") or (
        isinstance(v, numbers.Number) and not isinstance(v, complex))


def _is_c_contiguous(shape, strides, itemsize) -> bool:
    acc = itemsize
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1 and st != acc:
            return False
        acc *= n
    return True


def _norm_axis(a, nd) -> int:
    a = _index(a, "axes")
    if not -nd <= a < nd:
        raise CKIndexError(f"axis {a} is out of bounds for array of dimension {nd}")
    return a % nd


def _reshaped_strides(shape, strides, dtype, new_shape):
    """``(shape, strides)`` of the view NumPy's reshape would give, or None
    when it needs a copy (NumPy's own algorithm, run on a stand-in array over
    one element: no data is touched)."""
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape=shape,
                                               strides=strides)
    try:
        r = np.reshape(stand_in, new_shape, copy=False)
    except ValueError as exc:
        if "copy" in str(exc):
            return None
        raise InvalidArgumentError(f"DeviceArray.reshape: {exc}") from None
    return r.shape, r.strides


# ---- indexing ---------------------------------------------------------------
def _getitem(a: DeviceArray, key):
    if not isinstance(key, tuple):
        key = (key,)
    adv = [i for i, k in enumerate(key) if _is_index_array(k)]
    if len(adv) > 1:
        raise NotSupportedError("DeviceArray: only one index array (advanced index) per "
                                "subscript is supported")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise CKIndexError("an index can only have a single ellipsis ('...')")
    if n_real > a.ndim:
        raise CKIndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                           f"{n_real} were indexed")
    offset = a.offset
    shape, strides = [], []
    dim = 0
    gather_at = gather_idx = None
    for k in key:
        if k is Ellipsis:
            for _ in range(a.ndim - n_real):
                shape.append(a.shape[dim])
                strides.append(a.strides[dim])
                dim += 1
        elif k is None:
            shape.append(1)
            strides.append(0)
        elif isinstance(k, slice):
            start, stop, step = k.indices(a.shape[dim])
            n = len(range(start, stop, step))
            if n:
                offset += start * a.strides[dim]
            shape.append(n)
            strides.append(a.strides[dim] * step)
            dim += 1
        elif _is_index_array(k):
            gather_at, gather_idx = len(shape), (k, dim)
            shape.append(a.shape[dim])
            strides.append(a.strides[dim])
            dim += 1
        else:
            if isinstance(k, (bool, np.bool_)):
                raise NotSupportedError("DeviceArray: boolean scalar indices are not "
                                        "supported")
            try:
                i = operator.index(k)
            except TypeError:
                raise CKIndexError(
                    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                    f"and integer or boolean arrays are valid indices, not "
                    f"{type(k).__name__}") from None
            n = a.shape[dim]
            if not -n <= i < n:
                raise CKIndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            offset += (i % n) * a.strides[dim]
            dim += 1
    while dim < a.ndim:
        shape.append(a.shape[dim])
        strides.append(a.strides[dim])
        dim += 1
    view = a._view(offset, tuple(shape), tuple(strides))
    if gather_at is None:
        return view
    idx, axis = gather_idx
    return _kernels().take(view, idx, gather_at, a.shape[axis])


def _is_index_array(k) -> bool:
    return isinstance(k, (list, np.ndarray, DeviceArray))


# ---- NumPy functions with a device implementation ---------------------------
def _reduction(name):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        _no_extra(name, kw)
        if name in ("sum", "prod", "mean"):
            return _kernels().reduce(name, a, axis, keepdims, dtype, out)
        if dtype is not None:
            raise TypeError(f"numpy.{name}: dtype= is not accepted")
        return _kernels().reduce(name, a, axis, keepdims, None, out)
    return f


def _no_extra(name, kw):
    kw = {k: v for k, v in kw.items() if v is not np._NoValue}
    if kw:
        raise NotSupportedError(f"numpy.{name} on a DeviceArray: unsupported arguments "
                                f"{', '.join(kw)}")


def _np_reshape(a, shape=None, order="C", **kw):
    if shape is None:
        shape = kw.pop("newshape")
    _no_extra("reshape", {k: v for k, v in kw.items() if k != "copy"})
    return a.reshape(shape, order=order)


_ARRAY_FUNCTIONS = {
    np.sum: _reduction("sum"), np.prod: _reduction("prod"), np.min: _reduction("min"),
    np.max: _reduction("max"), np.amin: _reduction("min"), np.amax: _reduction("max"),
    np.any: _reduction("any"), np.all: _reduction("all"), np.mean: _reduction("mean"),
    np.reshape: _np_reshape,
    np.transpose: lambda a, axes=None: a.transpose(axes),
    np.ravel: lambda a, order="C": a.reshape(-1, order=order),
    np.squeeze: lambda a, axis=None: a.squeeze(axis),
    np.swapaxes: lambda a, axis1, axis2: a.swapaxes(axis1, axis2),
    np.copy: lambda a, order="K", subok=False: a.copy(),
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.size:
    lambda a, axis=None: a.size if axis is None else a.shape[axis],
}


__all__ = ["DeviceArray", "Flags", "element_of", "install_kernels"]
