"""Who decided the library's thread count: one flag shared by
:func:`ckernels.set_num_threads` (which sets it) and the Dask worker thread
rule in :mod:`ckernels.dask` (which leaves an explicit count alone), and the
environment's say (``ck_default_num_threads``).  A module of its own so that
neither of those two imports the other.

The precedence, first that applies wins (``docs/dispatch.md``, "Threads"):

1. ``ckernels.set_num_threads(n)`` with ``n >= 1``;
2. ``CK_NUM_THREADS``;
3. in a Dask worker process, the worker's share of the host
   (:func:`ckernels.dask.worker_threads`) -- Dask's nanny sets
   ``OMP_NUM_THREADS=1`` in every worker whatever its threads, and the rule
   is what that setting means for this library, measured;
4. ``OMP_NUM_THREADS`` (its first entry), then ``NUMBA_NUM_THREADS``;
5. the CPUs of the process's affinity mask.

An environment variable that is set but holds no positive whole number
(``abc``, ``2x``, ``1e3``) is skipped with one ``RuntimeWarning`` per process
(at ``import ckernels``)."""

from __future__ import annotations

import warnings

from ._native import ffi, lib

#: True while ``set_num_threads(n)`` with ``n >= 1`` is in force;
#: ``set_num_threads(0)`` (back to the default) clears it
explicit = False


def environment() -> tuple[int, str, str | None]:
    """``(count, source, problem)``: the default thread count as the
    environment gives it now, the variable it came from (or ``"cpus"``), and
    the message about a variable skipped as invalid (or None)."""
    n = ffi.new("unsigned *")
    src = ffi.new("const char **")
    status = lib.ck_default_num_threads(n, src)
    problem = ffi.string(lib.ck_last_error()).decode(errors="replace") if status else None
    return n[0], ffi.string(src[0]).decode(), problem


def from_environment() -> str:
    """The variable the default count comes from, or ``"cpus"``."""
    return environment()[1]


def warn_invalid_environment() -> None:
    """One ``RuntimeWarning`` naming a thread-count variable that was skipped."""
    problem = environment()[2]
    if problem:
        warnings.warn(f"ckernels: {problem.partition(': ')[2] or problem}", RuntimeWarning,
                      stacklevel=3)


warn_invalid_environment()
