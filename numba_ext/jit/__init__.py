"""``ckernels.jit``: Python scalar functions compiled into ckernels.

The shared part -- the decorator (``decorator.py``), :class:`JitKernel`
(``kernel.py``: compiling, calls, the cache) with its NumPy ufunc/gufunc face
(``numpy_ufunc.py``) and pickling (``pickling.py``),
signatures with their resolved element types (``signature.py``), struct
element types (``structs.py``), operand resolution and signature selection
(``operands.py``), which target runs a call (``targets.py``) -- and the
targets: ``cpu.py`` (host calls through ``ck_array_apply``) with its code
generation (``cpu_codegen.py``: the entry points around Numba's code;
``error_path.py``: the shared raise function; ``string_elements.py`` and
``string_builder.py``: string arguments and results, the one-pass builder),
the native cache (``native_cache.py``), and the device target
(``device.py``: a target per device dialect, jitted calls on device arrays)
with its C emitter (the package ``c_emit``: C from Numba's typed IR in each
backend's dialect, :mod:`ckernels.dialects`).  What every device call shares
-- device arrays, their built-in operations, launch plans -- is the device
wing of :mod:`ckernels.context`, below this package.  ``ckernels.jit``
itself, on the package, is the decorator.
"""

from .cpu import Compiled
from .decorator import jit
from .kernel import ERROR_MODELS, CacheStats, JitKernel
from .signature import SUPPORTED_TYPES, Signature, parse_signature

__all__ = ["jit", "JitKernel", "Compiled", "Signature", "parse_signature", "SUPPORTED_TYPES",
           "CacheStats", "ERROR_MODELS"]
