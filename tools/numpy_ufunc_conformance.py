#!/usr/bin/env python3
"""NumPy's own ufunc tests run against ckernels' registry ufuncs.

NumPy's ``_core/tests/test_umath.py`` and ``test_ufunc.py`` (shipped with the
installed NumPy) are run twice with pytest: once as they are (the baseline),
once with every NumPy ufunc that has a registry operation of the same name
(``numpy.add``, ``numpy._core.umath.add``, ...) replaced by
``ckernels.ops.<name>.ufunc`` before the test modules are imported.  A test
that passes in the baseline and fails with ckernels' ufuncs is a
disagreement with NumPy: either a bug or a documented choice (the list in
``docs/kernel-registry.md``, "Where the registry differs from NumPy").

Only names are replaced in ``numpy`` and ``numpy._core.umath``, the modules the
tests call through (``np.add``, ``ncu.add``); NumPy's own machinery and
``numpy.testing`` keep NumPy's ufuncs, so the oracle stays NumPy's.  A ufunc
of ckernels has loops for the builtin numeric dtypes only: tests of object,
datetime, string or longdouble loops fail with it by construction.

Usage (not part of CI: the full files take minutes)::

    .venv/bin/python tools/numpy_ufunc_conformance.py           # both files
    .venv/bin/python tools/numpy_ufunc_conformance.py -k "sign or power"
    .venv/bin/python tools/numpy_ufunc_conformance.py --file test_umath.py --json out.json

``tests/python/ufuncs/test_ufunc_conformance.py`` runs a bounded subset in CI.

As a pytest plugin (``-p numpy_ufunc_conformance``, this folder on the
path), ``CKERNELS_CONFORMANCE=1`` makes the replacement and
``CKERNELS_CONFORMANCE_OUT=<file>`` records each test's outcome as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

FILES = ("test_umath.py", "test_ufunc.py")


# ----------------------------------------------------------------- the plugin --
def replaced_names() -> list[str]:
    """The NumPy ufunc names that have a registry operation with a ufunc."""
    import numpy as np

    from ckernels import ops
    names = []
    for name in sorted(dir(np)):
        if not isinstance(getattr(np, name), np.ufunc):
            continue
        op = getattr(ops, name, None)
        if op is not None and getattr(op, "ufunc", None) is not None:
            names.append(name)
    return names


def install() -> list[str]:
    """Put ckernels' registry ufuncs in place of NumPy's (in ``numpy`` and
    ``numpy._core.umath``); returns the replaced names."""
    import numpy as np
    import numpy._core.umath as um

    from ckernels import ops
    names = replaced_names()
    for name in names:
        uf = getattr(ops, name).ufunc
        setattr(np, name, uf)
        if isinstance(getattr(um, name, None), np.ufunc):
            setattr(um, name, uf)
    return names


_OUTCOMES: dict[str, str] = {}


def pytest_configure(config):
    if os.environ.get("CKERNELS_CONFORMANCE") == "1":
        install()


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        prev = _OUTCOMES.get(report.nodeid)
        if prev is None or prev == "passed":
            _OUTCOMES[report.nodeid] = report.outcome


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("CKERNELS_CONFORMANCE_OUT")
    if out:
        with open(out, "w") as f:
            json.dump(_OUTCOMES, f, indent=0, sort_keys=True)


# ----------------------------------------------------------------- the runner --
def test_paths(files) -> list[str]:
    import numpy
    base = os.path.join(os.path.dirname(numpy.__file__), "_core", "tests")
    return [os.path.join(base, f) for f in files]


def run(files, keyword: str | None, replaced: bool, extra=()) -> dict[str, str]:
    """Outcomes by test id of one pytest run (a subprocess)."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        env = dict(os.environ, CKERNELS_CONFORMANCE="1" if replaced else "0",
                   CKERNELS_CONFORMANCE_OUT=out.name,
                   PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(__file__),
                                                            os.environ.get("PYTHONPATH")])))
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "numpy_ufunc_conformance", "-p",
               "no:cacheprovider", *test_paths(files), *extra]
        if keyword:
            cmd += ["-k", keyword]
        subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        text = out.read()
    return json.loads(text) if text else {}


def compare(base: dict[str, str], ck: dict[str, str]) -> dict[str, list[str]]:
    """Tests by what happened to them with ckernels' ufuncs."""
    both = sorted(set(base) & set(ck))
    return {
        "agree": [t for t in both if base[t] == "passed" and ck[t] == "passed"],
        "disagree": [t for t in both if base[t] == "passed" and ck[t] == "failed"],
        "skipped_with_ckernels": [t for t in both if base[t] == "passed"
                                  and ck[t] == "skipped"],
        "baseline_not_passing": [t for t in both if base[t] != "passed"],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--file", action="append", choices=FILES,
                   help="NumPy test file(s) to run (default: both)")
    p.add_argument("-k", dest="keyword", help="pytest -k expression")
    p.add_argument("--json", help="write the comparison here")
    p.add_argument("--show", type=int, default=60, help="disagreements listed (default 60)")
    args = p.parse_args(argv)
    files = args.file or list(FILES)
    base = run(files, args.keyword, replaced=False)
    ck = run(files, args.keyword, replaced=True)
    result = compare(base, ck)
    print(f"NumPy's {', '.join(files)} with ckernels' registry ufuncs "
          f"({len(replaced_names())} replaced):")
    for k, v in result.items():
        print(f"  {k}: {len(v)}")
    groups: dict[str, int] = {}
    for t in result["disagree"]:
        short = t.split("/tests/")[-1].split("[")[0]
        groups[short] = groups.get(short, 0) + 1
    for short, n in sorted(groups.items())[:args.show]:
        print(f"  disagree: {short}" + (f" ({n} cases)" if n > 1 else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
