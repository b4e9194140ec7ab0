#!/usr/bin/env python3
"""NumPy's own array tests with ckernels arrays in place of ndarrays: a
conformance harness (tests/python/host/test_numpy_array_conformance.py runs it in CI).

Each named NumPy test module (default: test_indexing, test_dlpack, and
test_multiarray's indexing/assignment/creation classes) runs under pytest with
its module-level ``np`` replaced by a proxy of NumPy whose array creators
(``array``, ``asarray``, ``arange``, ``zeros``, ``ones``, ``empty``, ``full``)
return ``ckernels.Array`` for numeric results (ckernels.asarray: zero-copy);
everything else is NumPy's.  Prints the pass/fail counts and the failures
grouped by their message's first line; ``--json FILE`` writes each test's
outcome (``passed``, ``failed``, ``skipped``, ``xfailed``, ...) by its id
relative to NumPy's test folder (``test_indexing.py::TestIndexing::test_x``).

The tests that fail, each with its cause (a documented divergence, a missing
feature, or a check the harness itself defeats), are listed in
``tests/python/host/numpy_array_divergences.txt``; ``--failures`` prints the ids
failing now, for updating that list.

    .venv/bin/python tools/numpy_array_conformance.py [--timeout 300] [--json FILE]
                                                      [--failures] [module[::Class] ...]
"""
import argparse
import collections
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

DEFAULT = ["test_indexing", "test_dlpack",
           "test_multiarray::TestCreation", "test_multiarray::TestAssignment",
           "test_multiarray::TestFancyIndexing", "test_multiarray::TestTake",
           "test_multiarray::TestPutmask"]

PLUGIN = r'''
import json, os, sys, types
import numpy
import pytest
import ckernels

_CREATORS = ("array", "asarray", "arange", "zeros", "ones", "empty", "full",
             "asanyarray", "ascontiguousarray")


def _wrap(fn):
    def creator(*args, **kwargs):
        r = fn(*args, **kwargs)
        if type(r) is numpy.ndarray and r.dtype.kind in "biufc" and r.dtype.isnative:
            return ckernels.asarray(r)
        return r
    creator.__name__ = fn.__name__
    return creator


class _NumPyProxy(types.ModuleType):
    def __getattr__(self, name):
        return getattr(numpy, name)


proxy = _NumPyProxy("numpy")
for _n in _CREATORS:
    setattr(proxy, _n, _wrap(getattr(numpy, _n)))


def _plain(x):
    if isinstance(x, ckernels.Array):
        return numpy.asarray(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


def _compare(fn):
    """NumPy's assert_* treat a non-ndarray as a scalar: compare the Array's
    NumPy view (the values, which is what the tests check)."""
    def check(actual, desired, *args, **kwargs):
        return fn(_plain(actual), _plain(desired), *args, **kwargs)
    check.__name__ = fn.__name__
    return check


_ASSERTS = ("assert_equal", "assert_array_equal", "assert_almost_equal",
            "assert_array_almost_equal", "assert_allclose")


_OUTCOMES = {}


def pytest_runtest_logreport(report):
    # a test's outcome: its call's, or the first setup/teardown that did not pass
    if report.when == "call" or report.outcome != "passed":
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else \
            report.outcome
        if _OUTCOMES.get(report.nodeid, "passed") == "passed":
            _OUTCOMES[report.nodeid] = outcome


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("CK_CONFORMANCE_OUT")
    if out:
        with open(out, "w") as fh:
            json.dump(_OUTCOMES, fh, indent=0, sort_keys=True)


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        mod = getattr(item, "module", None)
        if mod is not None and getattr(mod, "np", None) is numpy:
            mod.np = proxy
            for name in _ASSERTS:
                fn = getattr(mod, name, None)
                if fn is not None and not hasattr(fn, "_ck"):
                    wrapped = _compare(fn)
                    wrapped._ck = True
                    setattr(mod, name, wrapped)
'''


def tests_folder() -> str:
    spec = importlib.util.find_spec("numpy")
    return os.path.join(os.path.dirname(spec.origin), "_core", "tests")


def short_id(nodeid: str) -> str:
    """A test id relative to NumPy's test folder."""
    return nodeid.rsplit("_core/tests/", 1)[-1]


def run(targets, timeout: int):
    """(outcomes by short test id, pytest's output) of one run in a fresh
    interpreter."""
    tests = tests_folder()
    ids = []
    for t in targets:
        mod, _, cls = t.partition("::")
        ids.append(os.path.join(tests, mod + ".py") + (f"::{cls}" if cls else ""))
    with tempfile.TemporaryDirectory(prefix="ck_np_conformance") as work:
        with open(os.path.join(work, "ck_np_proxy.py"), "w") as fh:
            fh.write(PLUGIN)
        out_json = os.path.join(work, "outcomes.json")
        env = dict(os.environ, COLUMNS="1000",    # the short summary keeps whole messages
                   CK_CONFORMANCE_OUT=out_json,
                   PYTHONPATH=work + os.pathsep + os.environ.get("PYTHONPATH", ""))
        p = subprocess.run([sys.executable, "-m", "pytest", "-p", "ck_np_proxy", "-q", "-rf",
                            "--tb=line", "-p", "no:cacheprovider", "-o", "addopts=", *ids],
                           env=env, capture_output=True, text=True, timeout=timeout,
                           cwd=work)
        outcomes = {}
        if os.path.exists(out_json):
            with open(out_json) as fh:
                outcomes = {short_id(k): v for k, v in json.load(fh).items()}
    return outcomes, p.stdout + p.stderr


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="*", default=DEFAULT)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--json", help="write each test's outcome here")
    ap.add_argument("--failures", action="store_true", help="print the failing test ids")
    args = ap.parse_args()
    outcomes, out = run(args.targets, args.timeout)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(outcomes, fh, indent=0, sort_keys=True)
    if not outcomes:
        print(out[-3000:])
        return 1
    summary = [line for line in out.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    print(summary[-1] if summary else out[-3000:])
    reasons = collections.Counter()
    for line in out.splitlines():
        if line.startswith("FAILED "):
            msg = line.split(" - ", 1)[1] if " - " in line else line.rsplit("::", 1)[-1]
            reasons[re.sub(r"0x[0-9a-f]+|\d+", "N", msg)[:110]] += 1
    for msg, n in reasons.most_common(40):
        print(f"{n:5d}  {msg}")
    if args.failures:
        for t in sorted(k for k, v in outcomes.items() if v in ("failed", "error")):
            print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
