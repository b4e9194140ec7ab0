"""Where the library's thread count comes from (``docs/dispatch.md``, "Threads"):
``set_num_threads(n)``, ``CK_NUM_THREADS``, (a Dask worker's share: test_dask.py),
``OMP_NUM_THREADS``, ``NUMBA_NUM_THREADS``, the affinity mask; an invalid value is
skipped with one warning.  Each case is a fresh interpreter (the environment is
read at import and when the default is restored)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

VARS = ("CK_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS")

SCRIPT = """
import json, os, warnings
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import ckernels
    from ckernels import _threads
    import ckernels.ops
    n = ckernels.get_num_threads()
    ckernels.set_num_threads(0)          # restoring the default warns no more
print(json.dumps({"n": n, "source": _threads.from_environment(),
                  "cpus": len(os.sched_getaffinity(0)),
                  "warnings": [[x.category.__name__, str(x.message)] for x in w]}))
"""


def _run(**env):
    e = {k: v for k, v in os.environ.items() if k not in VARS}
    e.update(env)
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=e, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env, n, source", [
    ({}, None, "cpus"),
    ({"NUMBA_NUM_THREADS": "3"}, 3, "NUMBA_NUM_THREADS"),
    ({"NUMBA_NUM_THREADS": "3", "OMP_NUM_THREADS": "5"}, 5, "OMP_NUM_THREADS"),
    ({"OMP_NUM_THREADS": "4,2"}, 4, "OMP_NUM_THREADS"),
    ({"NUMBA_NUM_THREADS": "3", "OMP_NUM_THREADS": "5", "CK_NUM_THREADS": "2"}, 2,
     "CK_NUM_THREADS"),
])
def test_precedence(env, n, source):
    out = _run(**env)
    assert out["source"] == source
    assert out["n"] == (out["cpus"] if n is None else n)
    assert out["warnings"] == []


@pytest.mark.parametrize("bad", ["abc", "2x", "1e3", "0", "-2"])
def test_invalid_value_warns_once_and_is_skipped(bad):
    out = _run(CK_NUM_THREADS=bad, OMP_NUM_THREADS="3")
    assert out["n"] == 3 and out["source"] == "OMP_NUM_THREADS"
    assert len(out["warnings"]) == 1, out["warnings"]
    cat, msg = out["warnings"][0]
    assert cat == "RuntimeWarning"
    assert f"CK_NUM_THREADS='{bad}'" in msg and "ignored" in msg


def test_omp_num_threads_one_means_serial_outside_dask():
    """Dask's nanny sets OMP_NUM_THREADS=1; outside a worker it is honoured
    (inside one the worker rule comes first: test_dask.test_cluster_thread_rule)."""
    out = _run(OMP_NUM_THREADS="1")
    assert out["n"] == 1 and out["source"] == "OMP_NUM_THREADS"
