"""Device C from Numba's typed IR: one emitter, one dialect per target
(:mod:`ckernels.dialects`).

A custom Numba pipeline (bytecode -> IR -> untyped rewrites -> type inference)
stops right after ``NopythonTypeInference`` and hands back ``func_ir``,
``typemap``, ``calltypes`` and ``return_type``; no LLVM is involved.  The
emitter walks that IR:

* every IR block becomes a label ``L<n>:``; ``ir.Branch`` becomes
  ``if (c) goto La; goto Lb;``, ``ir.Jump`` ``goto L;``, ``ir.Return``
  ``return (T)v;``;
* every IR variable (Numba IR assigns each name independently; the pipeline
  does not build SSA/phis) is declared once at the top of the function with
  the C type of its inferred Numba type (the dialect's column of the one
  element-type table, :mod:`ckernels.dtypes`); variables of
  compile-time-only types (modules, functions, dispatchers, number classes)
  get no declaration;
* expressions: binary/unary operators with the operand casts chosen by type
  inference (``calltypes``), comparisons, casts, constants (floats with the
  right suffix, hex-exact when needed), ``range`` loops (small structs),
  ``math.*`` and NumPy's scalar ufuncs (``np.sqrt``, ...) -> the dialect's
  built-ins, ``operator.*`` functions, ``abs``/``min``/``max``/``int``/``float``/
  ``bool``/``round``, ``math.gcd``, integer ``//``, ``%`` and ``**`` and float
  ``//``/``%`` with Python semantics through helper functions; calls to other
  ``@ckernels.jit`` (or ``numba.njit``) functions become device functions
  emitted before their caller;
* tuples of numbers (building, unpacking ``a, b = b, a``, indexing with a
  constant or, for one element type, a run-time index) live in one C
  variable per element;
* errors raised by the code (division by zero, ``raise SomeError("msg")``
  with constant arguments, ``range`` step 0) store a code in the work item's
  private error variable and return; the kernel copies the first code into an
  error buffer which the host reads back and turns into the exception
  (``EmittedKernel.errors``: code -> (exception class, args)).

The error model is the decorated function's (``error_model=``): ``"python"``
checks divisors and raises ``ZeroDivisionError`` as Python does;
``"numpy"`` emits no checks for ``/`` (IEEE ``inf``/``nan``), gives 0 for
integer ``//`` and ``%`` by zero and ``x / 0`` for float ``//`` by zero, and
the most negative integer for ``0 ** -n`` -- what Numba does on the CPU.

What differs between targets is behind a :class:`~ckernels.dialects.Dialect`
(:mod:`ckernels.dialects`, one row per backend): C type names,
qualifiers of functions, kernels and pointers, the work-item index, math
built-in names, literal suffixes and the error-buffer store.  Everything
else (control flow, expressions, Python semantics helpers, the kernel's
broadcast indexing) is shared.  Anything the emitter cannot translate is a
one-line :class:`ckernels.errors.NotSupportedError` that names the construct
and the user's ``file:line``: constructs no device supports (dicts, sets,
lists, try/except, ``with``, generators, inner functions) are refused before
type inference, and Numba's typing errors are condensed to their reason.
``docs/device-code.md`` lists what device code supports.

Modules, lowest first: ``numba_types`` (questions about Numba types),
``tables`` (operators and math functions -> generic C names), ``typed_ir``
(the typing-only pipeline), the parts of
:class:`~ckernels.jit.c_emit.function.FunctionEmitter` -- ``tuples``,
``struct_fields``, ``arrays`` (arrays of core dims: view structs, ``docs/dims.md``),
``arith`` (operators, the Python-semantics helpers),
``calls`` -- and ``function`` itself, ``program`` (:class:`EmittedKernel`)
and ``kernel`` (the kernel around an entry function, :func:`emit_kernel`).
"""

from ...dialects import Dialect
from .function import FunctionEmitter
from .kernel import KERNEL_NAME, emit_kernel, entry_wrapper, kernel_wrapper
from .program import EmittedKernel
from .typed_ir import TypedIR, typed_ir

__all__ = ["Dialect", "EmittedKernel", "FunctionEmitter", "typed_ir", "TypedIR", "emit_kernel",
           "entry_wrapper", "kernel_wrapper", "KERNEL_NAME"]
