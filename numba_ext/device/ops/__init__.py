"""The built-in operations on device arrays: one operation table, device C
generated per type signature through the context kind's dialect
(:mod:`ckernels.dialects`).

Operators, ``ckernels.ops.<name>`` and NumPy ufuncs on device arrays run
here.  Each registered operation of the C kernel registry
(``ckernel/registry.h``: ``add``, ``sqrt``, ``less``, ...) has one entry in
:data:`OPS`: a function that writes the C body of the element function for
the argument types the registry resolves (``ck_op_resolve``: NumPy's
promotion and loop search -- so the result types are exactly those of
``ckernels.ops`` on the host) and returns the result.  The semantics are the
host kernels' (``docs/kernel-registry.md``): integers wrap, Python floor
division and modulo, integer division by zero raises ``ZeroDivisionError``,
negative integer powers ``ValueError``, NaN propagation of ``minimum`` /
``maximum``, shifts by out-of-range counts give 0 or -1, ... .  Math
functions are the dialect's built-ins (OpenCL's ``sin`` etc., whose error
bounds the OpenCL specification gives in ulp, CUDA's ``sin``/``sinf``; see
``docs/contexts.md``).  Nothing here is specific to one device kind: the
same table serves every device dialect (:mod:`ckernels.dialects`).

Element functions are wrapped into a kernel by
:func:`~ckernels.context.device_program.kernel_wrapper` -- the same kernel
shape jitted functions use (array operands converted on read, scalars by
value, N-d broadcasting) -- and launched through the plans of
:mod:`ckernels.device.launch`.  Programs are cached per (dialect, operation,
operand layout); plans per context and layout.

Also here, as kernels of their own: assignment and conversion (``astype``,
``a[...] = b``, ``fill``) with the library's error modes, reductions
(``sum prod min max any all mean``: a tree of partial results, each work
item folding one chunk, until one value per output element is left), the
gather behind integer-array indexing and ``str(d)`` (only the elements shown
leave the device), the operand rule of NumPy ufuncs (no host operands).
:class:`~ckernels.context.DeviceArray` (the module above this package) calls
these; here a device array is any
:class:`~ckernels.device.base.DeviceArrayBase`, and new arrays are of
the class of the operands.

The package, one module per concern: :mod:`.element_functions` (the
operation table: C bodies of element functions), :mod:`.programs` (types
resolved by the registry, the checks every kernel shares, the program cache
per dialect), :mod:`.operations` (registry operations element by element and
``where``: programs and their launches), :mod:`.conversion` (assignment,
``astype``), :mod:`.reductions` and :mod:`.gathering` (integer-array
indexing, ``take``).
"""

from __future__ import annotations

from .conversion import assign, astype
from .element_functions import OPS, element_function
from .operations import check_ufunc_operands, elementwise, where
from .gathering import gather, take
from .programs import resolve
from .reductions import reduce

__all__ = ["OPS", "element_function", "resolve", "elementwise", "assign", "astype", "reduce",
           "take", "gather", "where", "check_ufunc_operands"]
