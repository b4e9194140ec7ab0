"""The NumPy-like surface of ckernels arrays, written once for every array class.

:class:`ArrayLike` is a mixin: host arrays (:class:`ckernels.Array`) and device
arrays (:class:`ckernels.DeviceArray`) derive from it and provide a handful of
*primitives*; everything a NumPy user reaches for (attributes, operators,
indexing, ``reshape``/``astype``/``copy``/``fill``, reductions, ``repr``,
``__array_ufunc__`` and ``__array_function__``) is written here, once, over
them.  See ``docs/arrays.md`` for the user-facing description.

Primitives a class provides (the whole interface; nothing else is assumed)
--------------------------------------------------------------------------
``shape``
    tuple of dim sizes (a var dim below axis 0 reports ``-1``).
``strides``
    tuple of byte strides (a var dim: its elements' stride).
``type``
    the :class:`ckernels.types.Type` of the whole array (dims and element).
``dtype``
    the NumPy dtype of the elements wherever one exists (see ``docs/arrays.md``).
``context``
    the :class:`ckernels.Context` holding the data.
``_view(key)``
    basic indexing: ``key`` is a tuple of ints and slices, one per leading
    axis (``len(key) <= ndim``); returns a view (an array of the same class,
    0-d when every axis is indexed).  Errors: ``IndexError`` subclasses.
``_strided_view(k, shape, strides, offset=0, readonly=False)``
    a view whose leading ``k`` dims (fixed/strided, never var) are replaced by
    ``len(shape)`` strided dims of these sizes and byte strides, the data
    moved by ``offset`` bytes; what lies below the ``k`` dims is unchanged.
    The view must stay inside the memory ``self`` can reach (checked).
``_scalar()``
    the value of a 0-d array of a scalar element type: a NumPy scalar for
    builtin types, ``str`` for strings (``bytes``, ``dict`` for others).
``_empty(shape, element)``
    a new, uninitialised, C-contiguous array in the same context: strided
    dims of ``shape`` over ``element`` (a :class:`~ckernels.types.Type`,
    possibly with dims of its own, e.g. ``var * int32``).
``_assign(value, errmode="default")``
    ``self[...] = value`` with broadcasting and checked conversion
    (``value``: a scalar, a nested list, a NumPy array or an array of this
    class).
``_apply(name, args, out)``
    the registry operation ``name`` (``"add"``, ``"sqrt"``, ...) applied
    elementwise to ``args`` (arrays of this class, NumPy arrays, Python
    scalars; NEP 50 for the scalars) with broadcasting, into ``out`` when
    it is not None; returns the result array (``out`` when given).
``_reduce(name, axis, keepdims)``
    the reduction ``name`` (``sum``, ``product``, ``min``, ``max``, ``any``,
    ``all``) over ``axis`` (``None`` or a tuple of normalised axes); returns
    an array (0-d for a full reduction without ``keepdims``).
``to_numpy()``
    a host copy as a :class:`numpy.ndarray`.
``_numpy_view(writable)``
    a NumPy array sharing this array's memory, for NumPy functions the
    library does not implement; host arrays give one (a copy of read-only
    operands whose type has no zero-copy view), device arrays raise
    ``TypeError`` (no silent host copies).
``_wrap_numpy(arr)``
    a NumPy result of such a function, made an array of this class (or
    returned as it is when the class cannot hold it).
``_from_value(value)``
    ``value`` (a scalar, nested list, NumPy array) as an array of this class
    in the same context (type inferred; ``concatenate``/``where`` use it).
``_numpy_exact()``
    whether ``_numpy_view`` shows exactly this array's elements (no
    conversion): advanced indexing then takes NumPy's path.

Optional (defaults here): ``_take(indices)`` (the elements at the outer
product of per-axis index lists, as NumPy; ``repr`` uses it to fetch only
the elements it shows), ``_var_size()`` (``size`` of an array with var dims),
``tolist()``, ``item()``, ``copy()`` and ``astype()``.

One module per concept, each a mixin over :class:`~.base.ArrayBase`:
:mod:`.base` (attributes, Python conversions, copies, ``astype``, ``Flags``),
:mod:`.operators` (operators and the ufunc/operation names), :mod:`.indexing`,
:mod:`.shapes` (axes, strides, shape methods), :mod:`.reductions`,
:mod:`.protocols` (``__array_ufunc__``/``__array_function__``),
:mod:`.functions` (the NumPy functions implemented here) and
:mod:`.printing`.  The package imports nothing above :mod:`ckernels.types`
(and :mod:`ckernels.ufuncs`), so both array classes can use it without
import cycles.
"""

from __future__ import annotations

from .base import ArrayBase, Flags, _replace_dtype
from .functions import FUNCTIONS, implements
from .indexing import Indexing
from .operators import (REDUCE_OF_UFUNC, UFUNC_TO_OP, Operators, _op_exists, _registry_op,
                        use_operations)
from .printing import Printing, format_values
from .protocols import NumpyProtocols
from .reductions import Reductions
from .shapes import AxisError, ShapeMethods, c_strides, normalize_axis, reshape_strides, \
    shape_entry


class ArrayLike(Operators, Indexing, ShapeMethods, Reductions, NumpyProtocols, Printing,
                ArrayBase):
    """Mixin: the NumPy-like surface over the primitives listed in the module
    docstring.  ``__slots__ = ()`` so classes keep their own slots."""

    __slots__ = ()
    __array_priority__ = 20
    __hash__ = None   # mutable and compared elementwise, like ndarray


__all__ = ["ArrayLike", "Flags", "FUNCTIONS", "implements", "format_values",
           "normalize_axis", "reshape_strides", "c_strides", "UFUNC_TO_OP", "REDUCE_OF_UFUNC"]
