#!/usr/bin/env python3
"""Seconds per xdist work unit of a pytest run, for tests/python/ci_weights.json.

``make test-python`` writes a JUnit report (build/pytest-junit.xml) whose
testcases carry their setup + call + teardown seconds.  This sums them per
work unit of tests/python/ci_schedule.py (a file, or one notebook / docs page
/ leak signature) and prints the JSON that ci_schedule.py reads to put the
slowest units at the head of the queue::

    python3 tools/ci_weights.py build/pytest-junit.xml > tests/python/ci_weights.json

Refresh it from a CI run when files are added or their cost changes a lot; a
stale table only changes the order the units are handed out, never which
tests run.  (A module's collection -- its import, module-level compiles --
is paid by every worker before scheduling and is not in these numbers.)
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
    args = ap.parse_args(argv)
    totals: dict[str, float] = {}
    for case in ET.parse(args.junit).getroot().iter("testcase"):
        unit = unit_of(nodeid(case))
        totals[unit] = totals.get(unit, 0.0) + float(case.get("time", 0) or 0)
    root = "tests/python/"
    table = {u[len(root):] if u.startswith(root) else u: round(t)
             for u, t in sorted(totals.items(), key=lambda kv: -kv[1]) if t >= args.min}
    json.dump(table, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
