"""Shared fixtures: every test must leave the library's live-memblock count
where it found it (after collecting garbage), so leaks fail the test that
caused them.  Also the fixtures several test files use, and the hooks of
`make test-python`'s xdist scheduling (ci_schedule.py)."""

import gc
import json
import os
import pathlib
import sys
import time

import pytest

import ckernels
from ckernels import _ufuncs

# The tests live in one folder per part of the package (host/, device/, jit/,
# ...; docs/architecture.md "Tests").  A test file imports the shared helpers
# here (cuda_tools) and, as the corpora of other targets, test modules of other
# folders (jit/test_cuda_codegen.py imports device/test_opencl_api.py): every
# folder is on sys.path, so a module imports by its name whichever file pytest
# collects first.  Test file names are unique across the folders.
_HERE = pathlib.Path(__file__).resolve().parent
for _folder in sorted(p for p in _HERE.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))


@pytest.fixture(autouse=True)
def _memblock_balance(request):
    gc.collect()
    before = ckernels.live_count()
    yield
    gc.collect()
    after = ckernels.live_count()
    # What survived this test's collection is moved to the permanent
    # generation, so the next test's collections scan only the objects made
    # since: full collections over the hundreds of thousands of objects a
    # session of Numba compiles accumulates took ~0.3 s each, about a third of
    # the suite's time.  An object frozen here that later becomes cyclic
    # garbage is never collected, which can hide a leak but never report one
    # (its memblocks count in "before" and "after" alike).
    gc.freeze()
    if "allow_memblock_leak" not in request.keywords:
        assert after == before, f"memblocks leaked: {after - before}"


@pytest.fixture(scope="session")
def new_opencl_context():
    """A factory of new OpenCL contexts; the test is skipped (with the library's
    reason) when no OpenCL platform is available."""
    def make():
        try:
            return ckernels.Context("opencl")
        except ckernels.errors.BackendError as exc:
            pytest.skip(f"no OpenCL platform: {exc}")
    return make


#: the device targets of the tests parametrised over devices (``device_ctx``);
#: ``make test-gpu`` selects the CUDA ones with ``-k cuda``
DEVICE_TARGETS = ("opencl", "cuda")


@pytest.fixture(scope="session")
def new_device_context(new_opencl_context):
    """A factory of new contexts of a device target ("opencl" or "cuda"); the
    test is skipped with the library's reason when the target has no device
    (for CUDA found once per session, before anything is compiled)."""
    no_cuda = []

    def make(target):
        if target == "opencl":
            return new_opencl_context()
        if not no_cuda:
            try:
                return ckernels.Context("cuda")
            except ckernels.errors.BackendError as exc:
                no_cuda.append(str(exc))
        pytest.skip(f"no CUDA device: {no_cuda[0]}")
    return make


@pytest.fixture(scope="module", params=DEVICE_TARGETS)
def device_ctx(request, new_device_context):
    """One context per test module and device target (ids ``opencl``,
    ``cuda``): the device tests run on PoCL everywhere and on CUDA where a GPU
    is lent."""
    return new_device_context(request.param)


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    """1 or 2 library threads; every long enough run is split (threshold 0)
    (test_dispatch.py, test_jit_ufunc.py)."""
    before, min_time = ckernels.get_num_threads(), _ufuncs.get_parallel_min_time()
    ckernels.set_num_threads(request.param)
    _ufuncs.set_parallel_min_time(0)
    yield request.param
    ckernels.set_num_threads(before)
    _ufuncs.set_parallel_min_time(min_time)


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_memblock_leak: skip the balance check")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the slowest files first, the notebooks, doc
    pages and leak signatures as units of their own, and the files slow to
    collect split between the workers (ci_schedule.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from ci_schedule import make_scheduler
    return make_scheduler(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    # the workers' own option says "no" distribution: tell them it is loadfile
    node.workerinput["ck_loadfile"] = node.config.getvalue("dist") == "loadfile"


def pytest_sessionstart(session):
    session.config._ck_session = session


_COLLECT_TIMES = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """CK_COLLECT_TIMES=file: each test module's collection seconds into a
    JSON file (tools/ci_weights.py --collect-times)."""
    start = time.perf_counter()
    yield
    if isinstance(collector, pytest.Module) and os.environ.get("CK_COLLECT_TIMES"):
        _COLLECT_TIMES[collector.nodeid] = time.perf_counter() - start


def pytest_collection_finish(session):
    path = os.environ.get("CK_COLLECT_TIMES")
    if path and _COLLECT_TIMES:
        pathlib.Path(path).write_text(json.dumps(_COLLECT_TIMES, indent=0))


def pytest_ignore_collect(collection_path, config):
    """On a ``--dist loadfile`` worker: leave the files slow to collect that
    ci_schedule.py gives to another worker (it collects and runs them)."""
    workerinput = getattr(config, "workerinput", None)
    if not workerinput or not workerinput.get("ck_loadfile"):
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    try:
        rel = collection_path.resolve().relative_to(_HERE).as_posix()
    except ValueError:
        return None
    from ci_schedule import ignore_collect
    return True if ignore_collect(rel, workerinput) else None
