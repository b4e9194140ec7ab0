"""LLVM's optimisation passes without what they used to leave behind.

Numba never unloads compiled code, so each jitted definition keeps its code
library for the life of the process.  Most of what a definition retained,
though, was not code: it was the optimisation passes that made it.

* **Pass pipelines were never freed.**  llvmlite's ``FunctionPassManager``
  and ``ModulePassManager`` list ``ffi.ObjectRef`` before the mixin whose
  ``_dispose`` deletes the native pipeline, so ObjectRef's empty
  ``_dispose`` wins: every pipeline built stays allocated (about 15 KiB a
  function pipeline, 30 KiB a module one).  Numba builds a function
  pipeline for each function of each module it adds to a library and two
  module pipelines per library, so a ``string(string)`` definition left
  about 0.9 MB of dead pipelines, under ``numba.njit`` as under
  ``ckernels.jit``.  :func:`release_pass_managers` gives both classes the
  ``_dispose`` that frees them, once, when ``ckernels.jit`` first readies
  Numba (``ckernels.jit.kernel._ensure_numba``); a llvmlite whose classes
  already dispose is left as it is.  It applies to the whole process:
  ``numba.njit`` functions compiled after it retain less too.
* **One pass builder per declaration.**  Numba's
  ``CPUCodeLibrary._optimize_functions`` makes a pass builder for every
  function of a module, declarations included, although running passes on a
  declaration does nothing; each builder leaves its instrumentation
  callbacks allocated (about 1.5 KiB: llvmlite never frees them, and nothing
  from Python can).  The libraries ``ckernels.jit`` compiles into
  (:func:`defined_functions_only`) build them for defined functions only:
  the entry-point module of a string function has 17 functions, 3 defined.

``benchmarks/bench_hardening.py memory`` measures what a definition keeps
(``tests/python/jit/test_jit_leaks.py`` bounds it).
"""

from __future__ import annotations

import functools
import inspect
import threading

_lock = threading.Lock()
_released = False


def release_pass_managers() -> bool:
    """Make llvmlite's new-pass-manager objects free their native pipelines
    when they die (see the module docstring); idempotent.  True when the
    pass managers dispose (fixed here or already by llvmlite)."""
    global _released
    if _released:
        return True
    with _lock:
        if _released:
            return True
        try:
            from llvmlite.binding import ffi
            from llvmlite.binding import newpassmanagers as npm
        except ImportError:     # an llvmlite without the new pass managers
            return False
        mixin = getattr(npm, "NewPassManager", None)
        fixed = True
        for name in ("FunctionPassManager", "ModulePassManager"):
            cls = getattr(npm, name, None)
            if cls is None or mixin is None or not issubclass(cls, mixin):
                fixed = False
                continue
            # only the exact defect: the class resolves _dispose to ObjectRef's
            # no-op while the mixin defines the real one
            if cls._dispose is ffi.ObjectRef._dispose and \
                    "_dispose" in vars(mixin):
                cls._dispose = vars(mixin)["_dispose"]
        _released = fixed
        return fixed


def _optimize_defined(codegen, timings, ll_module) -> None:
    """``CPUCodeLibrary._optimize_functions`` for the defined functions of
    ``ll_module`` only: the same function pipeline, run the same way, with
    no pass builder made for a declaration (where the run would return at
    once).  Takes the library's codegen and timings, not the library (no
    reference cycle through the library's own attribute)."""
    ll_module.data_layout = codegen._data_layout
    for func in ll_module.functions:
        if func.is_declaration:
            continue
        fpm, pb = codegen._function_pass_manager()
        with timings.record(f"Function passes on {func.name!r}", pb):
            fpm.run(func, pb)


def _new_pass_manager(codegen) -> bool:
    """Whether ``codegen`` builds new-pass-manager pipelines
    (``_function_pass_manager()`` returning ``(pipeline, pass builder)``);
    Numbas on llvmlite's legacy pass managers take the module instead."""
    fpm = getattr(codegen, "_function_pass_manager", None)
    if fpm is None:
        return False
    try:
        params = inspect.signature(fpm).parameters.values()
    except (TypeError, ValueError):
        return False
    return not any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)
                   for p in params)


def defined_functions_only(library) -> None:
    """Have ``library`` (a Numba ``CPUCodeLibrary`` not yet finalized) run its
    per-function optimisation over defined functions only
    (:func:`_optimize_defined`).  A library of another shape (a Numba
    without these internals) is left as it is."""
    if "_optimize_functions" in vars(library):
        return
    codegen = getattr(library, "_codegen", None)
    if not (callable(getattr(type(library), "_optimize_functions", None)) and
            _new_pass_manager(codegen) and
            hasattr(codegen, "_data_layout") and hasattr(library, "_recorded_timings")):
        return
    library._optimize_functions = functools.partial(_optimize_defined, codegen,
                                                    library._recorded_timings)


__all__ = ["release_pass_managers", "defined_functions_only"]
