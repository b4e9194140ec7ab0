"""How ``make test-python`` (``pytest -n JOBS --dist loadfile``) hands test
files to its xdist workers (the ``pytest_xdist_make_scheduler`` and
``pytest_ignore_collect`` hooks of ``conftest.py``).

xdist's ``loadfile`` gives each worker one file (a work unit) at a time, in
the order of the queue (by default the number of tests per file, largest
first), and every worker first collects -- imports -- every test file.  Three
changes, all about where and when a test runs, none about what it checks:

* The slowest files have few tests (a notebook, a page of doc blocks, a leak
  measurement in subprocesses are one test each), so they came last and one
  worker ran alone at the end.  Files whose parametrisations are independent
  (each runs its own fresh interpreter or kernel, nothing compiled is shared
  between them) are split into one work unit per parameter (``SPLIT``: one
  notebook, one docs page, one signature of the redefinition leak test), and
  the queue starts with the slowest units (``RUN``: the seconds a unit's
  tests took on CI).
* A test module's import compiles its module-level jitted functions (up to
  ~20 s on CI for the heaviest), and every worker paid it
  for every file.  The files whose collection is slow (``COLLECT`` >=
  ``PIN_MIN`` s, with the files they import as corpora: ``TOGETHER``) are
  split between the workers before collection (the same
  partition computed on each, heaviest first onto the least loaded): a
  worker collects only its share of them (and all the others), and runs
  them; the scheduler accepts the workers' different collections and hands
  each unit only to a worker that collected it, a worker's own share first.
  Measured (the whole of tests/python collected as gw0 and gw1 of two, a
  loaded 2-core box): 2906 and 3359 of 3542 tests, 124 and 117 s of CPU
  each instead of 200 s (every file), the union the same 3542 tests.
* Everything else is handed out as before, to whichever worker is free.

A stale or missing weight only changes the order or the partition, never
which tests run.  Both tables live in ci_weights.json (``tools/ci_weights.py``
refreshes them).  Without xdist, with another ``--dist`` or one worker,
nothing here applies.
"""

from __future__ import annotations

import functools
import json
import os
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

_TABLES = json.loads((pathlib.Path(__file__).parent / "ci_weights.json").read_text())
#: work unit (file, or file::[parameter] of SPLIT, relative to tests/python)
#: -> seconds its tests took on CI (a JUnit report); others weigh 0
RUN: dict = _TABLES["run"]
#: test file -> seconds its collection (import) took (``--collect-only``)
COLLECT: dict = _TABLES["collect"]
#: files collecting at least this long are split between the workers
#: (CK_TEST_PIN_MIN overrides it; "inf": no split, every worker collects all)
PIN_MIN = float(os.environ.get("CK_TEST_PIN_MIN", "2.0"))

_ROOT = "tests/python/"


def _rel(path: str) -> str:
    return path[len(_ROOT):] if path.startswith(_ROOT) else path


def unit_of(nodeid: str) -> str:
    """The work unit of a test (its file, or file::[parameter] for SPLIT)."""
    path, _, rest = nodeid.partition("::")
    funcs = SPLIT.get(_rel(path))
    if funcs and "[" in rest:
        func, _, param = rest.partition("[")
        if func in funcs:
            return f"{path}::[{param.rstrip(']').split(':')[0]}]"
    return path


def weight_of(unit: str) -> float:
    """Seconds of a unit: its tests, and its collection when it is pinned."""
    path = _rel(unit.partition("::")[0])
    pinned = COLLECT.get(path, 0) if COLLECT.get(path, 0) >= PIN_MIN else 0
    return RUN.get(_rel(unit), 0) + pinned


#: test files that import each other as corpora (``import test_x``): a
#: group goes to one worker, which imports them once (a module's collection
#: time is measured on the file imported first, so the group moves whole)
TOGETHER = (
    ("jit/test_cuda_codegen.py", "jit/test_jit_structs.py", "jit/test_c_emit.py",
     "jit/test_error_model.py", "jit/test_jit_corpus.py", "device/test_opencl_api.py",
     "jit/test_opencl_jit.py", "device/test_cuda_device.py", "jit/test_jit_dims_devices.py",
     "jit/test_jit_dims.py"),
)


@functools.lru_cache(maxsize=None)
def partition(workers: int) -> dict:
    """test file -> worker, for the files slow to collect: groups (TOGETHER)
    and files, the slowest to collect first, each onto the least loaded worker."""
    heavy = {f for f, s in COLLECT.items() if s >= PIN_MIN}
    items = [tuple(group) for group in TOGETHER if heavy.intersection(group)]
    grouped = {f for item in items for f in item}
    items += [(f,) for f in sorted(heavy - grouped)]
    # balanced on collection alone: scheduling starts once every worker has
    # collected; the run time of a share is evened out by the free units
    cost = {i: sum(COLLECT.get(f, 0) for f in i) for i in items}
    load = [0.0] * workers
    out = {}
    for item in sorted(items, key=lambda i: (-cost[i], i)):
        w = min(range(workers), key=lambda k: (load[k], k))
        load[w] += cost[item]
        out.update((f, w) for f in item)
    return out


def owner_of(rel_path: str, workers: int) -> int | None:
    """The worker (0..workers-1) that collects and runs a test file whose
    collection is slow, or None: every worker collects it."""
    if workers < 2:
        return None
    return partition(workers).get(rel_path)


def ignore_collect(rel_path: str, workerinput: dict) -> bool:
    """Whether this xdist worker leaves a test file to another worker."""
    workers = int(workerinput.get("workercount", 1))
    wid = str(workerinput.get("workerid", ""))
    if not wid.startswith("gw") or not wid[2:].isdigit() or int(wid[2:]) >= workers:
        return False             # a replacement worker collects everything
    owner = owner_of(rel_path, workers)
    return owner is not None and owner != int(wid[2:])


def make_scheduler(config, log):
    """xdist's ``loadfile`` scheduler with SPLIT's units, the slowest units
    first, and each unit only on a worker that collected it."""
    from xdist.scheduler import LoadFileScheduling

    class WeightedFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def add_node_collection(self, node, collection) -> None:
            assert node in self.assigned_work
            # the workers' collections differ by the pinned files: no
            # comparison (a replacement worker collects everything)
            self.registered_collections[node] = list(collection)

        def _has(self, node, scope: str) -> bool:
            """Whether the node collected every test of a queued unit."""
            known = self.__dict__.setdefault("_has_cache", {})
            if (node, scope) not in known:
                sets = self.__dict__.setdefault("_sets", {})
                if node not in sets:
                    sets[node] = set(self.registered_collections[node])
                known[node, scope] = all(nid in sets[node] for nid in self.workqueue[scope])
            return known[node, scope]

        def _next_scope(self, node):
            return next((s for s in self.workqueue if self._has(node, s)), None)

        def schedule(self) -> None:
            assert self.collection_is_completed
            if self.collection is not None:
                for node in self.nodes:
                    self._reschedule(node)
                return
            seen: dict = {}
            for coll in self.registered_collections.values():
                for nid in coll:
                    seen.setdefault(nid, None)
            self.collection = list(seen)       # the union of the collections
            if not self.collection:
                return
            units: dict = {}
            for nid in self.collection:
                units.setdefault(self._split_scope(nid), {})[nid] = False
            order = list(units.items())
            if self.config.option.loadscopereorder:
                order.sort(key=lambda u: -len(u[1]))
            # a unit only some workers collected first (it can go nowhere
            # else), then the slowest; ties keep xdist's order
            everyone = [set(c) for c in self.registered_collections.values()]
            shared = {scope for scope, nids in order
                      if all(all(n in c for n in nids) for c in everyone)}
            order.sort(key=lambda u: (u[0] in shared, -weight_of(u[0])))
            self.workqueue = OrderedDict(order)
            session = getattr(self.config, "_ck_session", None)
            if session is not None:    # the progress counts the union
                session.testscollected = len(self.collection)
            for node in self.nodes:
                self._assign_work_unit(node)
            for node in self.nodes:
                self._reschedule(node)

        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if self._next_scope(node) is None:
                node.shutdown()              # after its pending tests
                return
            if self._pending_of(self.assigned_work[node]) > 2:
                return
            self._assign_work_unit(node)

        def _assign_work_unit(self, node) -> None:
            scope = self._next_scope(node)
            if scope is None:
                return
            work_unit = self.workqueue.pop(scope)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            coll = self.registered_collections[node]
            node.send_runtest_some([coll.index(nid) for nid, done in work_unit.items()
                                    if not done])

    return WeightedFileScheduling(config, log)
