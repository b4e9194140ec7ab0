#!/usr/bin/env python3
"""The two tables of tests/python/ci_weights.json (tests/python/ci_schedule.py).

``run``: seconds per xdist work unit (a file, or one notebook / docs page /
leak signature), summed from a JUnit report's testcases (setup + call +
teardown); ``make test-python`` writes build/pytest-junit.xml.
``collect``: seconds each test file's collection (its import, module-level
compiles) took, from ``--collect-times``: a JSON file that a collection run
writes when CK_COLLECT_TIMES names it::

    CK_COLLECT_TIMES=build/collect.json .venv/bin/python -m pytest tests/python --collect-only -q
    python3 tools/ci_weights.py build/pytest-junit.xml --collect-times build/collect.json \
        --collect-scale 1 > tests/python/ci_weights.json

Without ``--collect-times`` the current ``collect`` table is kept.
``--collect-scale`` turns a loaded box's collection seconds into CI's (the
checked-in table: a box twice as loaded, 0.5).  Refresh after a CI run when
files are added or their cost changes a lot; a stale table only changes the
order units are handed out and which worker collects a slow file, never
which tests run.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
from ci_schedule import unit_of  # noqa: E402


def nodeid(case: ET.Element) -> str:
    """The pytest node id of a JUnit testcase (classname a.b.c.Class, name test[p])."""
    parts = case.get("classname", "").split(".")
    file = case.get("file")
    if file:                      # junit_family=xunit1 writes the file
        depth = len(pathlib.PurePosixPath(file).with_suffix("").parts)
        return "::".join([file] + parts[depth:] + [case.get("name", "")])
    # xunit2 (pytest's default): tests.python.jit.test_x[.Class]
    for split in range(len(parts), 0, -1):
        path = pathlib.Path(*parts[:split]).with_suffix(".py")
        if (REPO / path).exists():
            return "::".join([path.as_posix()] + parts[split:] + [case.get("name", "")])
    return "/".join(parts) + ".py::" + case.get("name", "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("junit", help="a JUnit XML report of a pytest run of tests/python")
    ap.add_argument("--min", type=float, default=5.0,
                    help="leave out units under this many seconds (default 5)")
    ap.add_argument("--collect-times", help="CK_COLLECT_TIMES's JSON of a collection run")
    ap.add_argument("--collect-scale", type=float, default=1.0,
                    help="multiply the collection seconds by this (default 1)")
    args = ap.parse_args(argv)
    totals: dict[str, float] = {}
    for case in ET.parse(args.junit).getroot().iter("testcase"):
        unit = unit_of(nodeid(case))
        totals[unit] = totals.get(unit, 0.0) + float(case.get("time", 0) or 0)
    root = "tests/python/"
    run = {u[len(root):] if u.startswith(root) else u: round(t)
           for u, t in sorted(totals.items(), key=lambda kv: -kv[1]) if t >= args.min}
    if args.collect_times:
        times = json.loads(pathlib.Path(args.collect_times).read_text())
        collect = {f[len(root):] if f.startswith(root) else f: round(t * args.collect_scale, 1)
                   for f, t in sorted(times.items(), key=lambda kv: -kv[1])
                   if t * args.collect_scale >= 0.5}
    else:
        collect = json.loads((REPO / "tests" / "python" / "ci_weights.json").read_text())["collect"]
    json.dump({"run": run, "collect": collect}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
