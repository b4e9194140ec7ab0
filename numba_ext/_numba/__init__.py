"""The Numba extension of ckernels (registered through the ``numba_extensions``
entry point ``init = "_ckernels_numba:init"``, which calls
:func:`_init_extension` at Numba's first compilation when the program has
imported ckernels; otherwise ckernels' objects import this package when they
meet Numba).

Importing this package:

1. checks that libckernel's struct layout (``ck_layout_table``) matches the
   offsets the lowering hard-codes, raising ImportError otherwise;
2. makes every ``ck_*`` symbol of the installed libckernel resolvable by LLVM
   *by name* (``llvmlite.binding.load_library_permanently``), so generated
   code declares C functions by name and ``cache=True`` works;
3. registers the Numba types, models, boxing and lowering of memblocks
   (:mod:`.memblock`), the pod allocator (:mod:`.allocator`) and strings
   (:mod:`.strings`).

Ownership rules in jitted code, in short: a :class:`ckernels.MemBlock`
argument is a *borrowed* ``MemBlockPtr``; constructors return an *owned*
``MemBlockRef`` released by Numba's NRT; returning either to Python yields a
new owning :class:`ckernels.MemBlock`.  ``CkString`` values are views that own
nothing.  The public, njit-callable API is re-exported by :mod:`ckernels.nb`.
"""

from __future__ import annotations

from . import symbols

symbols.check_layout()
symbols.load_symbols()

from . import memblock, allocator, strings, str_methods, str_case  # noqa: E402,F401  (registration)
from . import str_slice, str_split  # noqa: E402,F401  (registration)
from . import arraytype, array_views, array_lowering  # noqa: E402,F401  (arrays: registration)


def _init_extension() -> None:
    """Numba entry point: everything happens at import; idempotent."""
    symbols.check_layout()
    symbols.load_symbols()


__all__ = ["symbols", "memblock", "allocator", "strings", "_init_extension"]
