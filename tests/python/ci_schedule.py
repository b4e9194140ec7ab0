"""How ``make test-python`` (``pytest -n JOBS --dist loadfile``) hands test
files to its xdist workers (the ``pytest_xdist_make_scheduler`` hook of
``conftest.py``).

xdist's ``loadfile`` gives each worker one file (a work unit) at a time, in
the order of the queue; its default queue order is the number of tests per
file, largest first.  The slowest files have few tests (a notebook, a page of
doc blocks, a leak measurement in subprocesses are one test each), so they
came last and one worker ran alone at the end of the run.  Two changes, both
about where and when a test runs, none about what it checks:

* Files whose parametrisations are independent (each runs its own fresh
  interpreter or kernel, nothing compiled is shared between them) are split
  into one work unit per parameter (``SPLIT``): one notebook, one docs page,
  one signature of the redefinition leak test.
* The queue starts with the slowest units (``WEIGHTS``: the seconds a unit's
  tests took on CI, ci_weights.json); the others keep xdist's order after
  them.

A stale or missing weight only changes the order, never which tests run.
"""

from __future__ import annotations

import json
import pathlib
from collections import OrderedDict

#: file (relative to tests/python) -> the test functions whose parameters are
#: independent work units; the unit of a test is named by its parameter id up
#: to the first ":" (a doc block's "page.md:line" goes with its page)
SPLIT = {
    "package/test_notebooks.py": ("test_notebook_runs", "test_no_output_line_is_cut",
                                  "test_promised_pictures_and_plots",
                                  "test_notebook_text_explains_every_output"),
    "package/test_doc_blocks.py": ("test_python_blocks_run", "test_c_blocks_compile"),
    "jit/test_jit_leaks.py": ("test_redefinition_retains_about_what_numba_retains",),
}

#: work unit (file, or file::[parameter] of SPLIT, relative to tests/python)
#: -> seconds it took on CI (2 cores, two workers): ci_weights.json, written
#: by ``tools/ci_weights.py`` from a run's JUnit report; other units weigh 0
#: and follow in xdist's order
WEIGHTS = json.loads((pathlib.Path(__file__).parent / "ci_weights.json").read_text())

_ROOT = "tests/python/"


def unit_of(nodeid: str) -> str:
    """The work unit of a test (its file, or file::[parameter] for SPLIT)."""
    path, _, rest = nodeid.partition("::")
    rel = path[len(_ROOT):] if path.startswith(_ROOT) else path
    funcs = SPLIT.get(rel)
    if funcs and "[" in rest:
        func, _, param = rest.partition("[")
        if func in funcs:
            return f"{path}::[{param.rstrip(']').split(':')[0]}]"
    return path


def weight_of(unit: str) -> float:
    rel = unit[len(_ROOT):] if unit.startswith(_ROOT) else unit
    return WEIGHTS.get(rel, 0)


def make_scheduler(config, log):
    """xdist's ``loadfile`` scheduler with SPLIT's units and the slowest units first."""
    from xdist.scheduler import LoadFileScheduling

    class WeightedFileScheduling(LoadFileScheduling):
        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:        # the first assignment: the queue is complete
                self._ordered = True
                units = sorted(self.workqueue.items(), key=lambda u: -weight_of(u[0]))
                self.workqueue = OrderedDict(units)
            super()._assign_work_unit(node)

    return WeightedFileScheduling(config, log)
