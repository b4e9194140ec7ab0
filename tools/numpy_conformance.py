#!/usr/bin/env python3
"""NumPy's own array tests with ckernels arrays in place of ndarrays: a
conformance harness, run by hand (not in CI: NumPy's suites take minutes).

Each named NumPy test module (default: test_indexing, test_dlpack, and
test_multiarray's indexing/assignment/creation classes) runs under pytest with
its module-level ``np`` replaced by a proxy of NumPy whose array creators
(``array``, ``asarray``, ``arange``, ``zeros``, ``ones``, ``empty``, ``full``)
return ``ckernels.Array`` for numeric results (ckernels.asarray: zero-copy);
everything else is NumPy's.  Prints the pass/fail counts and the failures
grouped by their message's first line, for docs/arrays.md.

    .venv/bin/python tools/numpy_conformance.py [--timeout 300] [module[::Class] ...]
"""
import argparse
import collections
import importlib.util
import os
import re
import subprocess
import sys
import types

DEFAULT = ["test_indexing", "test_dlpack",
           "test_multiarray::TestCreation", "test_multiarray::TestAssignment",
           "test_multiarray::TestFancyIndexing", "test_multiarray::TestTake",
           "test_multiarray::TestPutmask"]

PLUGIN = r'''
import sys, types
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="*", default=DEFAULT)
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    spec = importlib.util.find_spec("numpy")
    tests = os.path.join(os.path.dirname(spec.origin), "_core", "tests")
    plugin_dir = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ck_np_conformance")
    os.makedirs(plugin_dir, exist_ok=True)
    with open(os.path.join(plugin_dir, "ck_np_proxy.py"), "w") as fh:
        fh.write(PLUGIN)
    ids = []
    for t in args.targets:
        mod, _, cls = t.partition("::")
        ids.append(os.path.join(tests, mod + ".py") + (f"::{cls}" if cls else ""))
    env = dict(os.environ, COLUMNS="1000",    # the short summary keeps whole messages
               PYTHONPATH=plugin_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "ck_np_proxy", "-q", "-rf",
                        "--tb=line", "-p", "no:cacheprovider", "-o", "addopts=", *ids],
                       env=env, capture_output=True, text=True, timeout=args.timeout,
                       cwd=plugin_dir)
    out = p.stdout
    summary = [line for line in out.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    print(summary[-1] if summary else (out + p.stderr)[-3000:])
    reasons = collections.Counter()
    for line in out.splitlines():
        if line.startswith("FAILED "):
            msg = line.split(" - ", 1)[1] if " - " in line else line.rsplit("::", 1)[-1]
            reasons[re.sub(r"0x[0-9a-f]+|\d+", "N", msg)[:110]] += 1
    for msg, n in reasons.most_common(40):
        print(f"{n:5d}  {msg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
