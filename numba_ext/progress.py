"""Progress on long work: what ckernels is compiling, said while it compiles.

A compile that takes longer than :data:`after` seconds (a string function's
eager compile takes 1.5-3 s, an OpenCL build 2.5 s) is reported twice: when it
passes the threshold (``compiling dot(float64(N * float64, N * float64)) for
cpu ...``) and when it ends (``... done in 2.31 s``).  Reports go

* to the ``ckernels`` :mod:`logging` logger, level INFO (Python shows them once
  logging is configured: ``logging.basicConfig(level=logging.INFO)``; ``make
  demo`` does), and
* in Jupyter, to a progress line in the running cell, updated in place when the
  work ends (no configuration needed).

Work shorter than the threshold says nothing.  The clock is one daemon
thread, started on first use, that looks at the running tasks four times a
second; entering :func:`reporting` costs a dictionary insert.  A task that
ends before the thread noticed it but took longer than the threshold still
gets its ``done`` record.

Usage (the jit and the device program builders do this)::

    with progress.reporting("dot(float64(N * float64, N * float64)) for cpu"):
        ...
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sys
import threading
import time

__all__ = ["after", "logger", "reporting"]

#: seconds a task runs before it is reported
after: float = 1.0
#: the package's logger (records at INFO)
logger = logging.getLogger("ckernels")

_POLL = 0.25
_lock = threading.Lock()       # guards _tasks
_say = threading.Lock()        # a task's "compiling" is said before its "done"
_tasks: dict[int, "_Task"] = {}
_ids = itertools.count()
_clock: threading.Thread | None = None


class _Task:
    __slots__ = ("what", "start", "shown", "line")

    def __init__(self, what: str) -> None:
        self.what = what
        self.start = time.perf_counter()
        self.shown = False
        self.line = None   # the Jupyter display handle, once shown


def _jupyter():
    """The IPython display function when running inside a Jupyter kernel."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
    except Exception:
        return None
    if shell is None or not hasattr(shell, "kernel"):
        return None
    from IPython.display import display
    return display


#: the widest progress line in Jupyter (a long signature is cut in its middle)
WIDTH = 100


def _fit(text: str, room: int) -> str:
    """``text`` cut in its middle with ``…`` to at most ``room`` characters."""
    if len(text) <= room:
        return text
    tail = room // 3
    return text[:room - tail - 1] + "…" + text[len(text) - tail:]


def _show(task: _Task) -> None:
    logger.info("compiling %s ...", task.what)
    display = _jupyter()
    if display is not None:
        try:
            line = f"ckernels: compiling {_fit(task.what, WIDTH - 24)} ..."
            task.line = display({"text/plain": line},
                                raw=True, display_id=True)
        except Exception:   # a display that cannot be written is not an error of the work
            task.line = None


def _done(task: _Task, seconds: float) -> None:
    logger.info("compiling %s ... done in %.2f s", task.what, seconds)
    if task.line is not None:
        try:
            line = f"ckernels: compiled {_fit(task.what, WIDTH - 34)} in {seconds:.2f} s"
            task.line.update({"text/plain": line},
                             raw=True)
        except Exception:
            pass


def _tick() -> None:
    while True:
        time.sleep(_POLL)
        now = time.perf_counter()
        with _say:
            with _lock:
                due = [t for t in _tasks.values() if not t.shown and now - t.start >= after]
                for t in due:
                    t.shown = True
            for t in due:
                _show(t)


def _start_clock() -> None:
    global _clock
    with _lock:
        if _clock is None or not _clock.is_alive():
            _clock = threading.Thread(target=_tick, name="ckernels-progress", daemon=True)
            _clock.start()


@contextlib.contextmanager
def reporting(what: str):
    """Report *what* if the enclosed work runs longer than :data:`after` seconds."""
    if _clock is None:
        _start_clock()
    task = _Task(what)
    key = next(_ids)
    with _lock:
        _tasks[key] = task
    try:
        yield task
    finally:
        seconds = time.perf_counter() - task.start
        with _say:
            with _lock:
                del _tasks[key]
            if task.shown or seconds >= after:
                _done(task, seconds)
