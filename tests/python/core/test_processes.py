"""Processes and threads around the library's thread pool and arenas.

Each scenario that could hang or crash runs in a fresh interpreter
(subprocess with a timeout), so a regression fails the test instead of
blocking or killing pytest:
  - os.fork() and multiprocessing (fork, forkserver, spawn) with a parallel
    operation before the fork and in the children (the pool is fork-safe:
    a child starts without workers and makes its own);
  - the default thread count follows the CPU affinity mask (taskset);
  - set_num_threads rejects out-of-range counts with ValueError;
  - Python threads assigning into one string array never interleave or
    corrupt strings (the arena's writer lock).
"""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import ckernels
from ckernels import ops

TIMEOUT = 120


def _run(tmp_path, code, *args, env=None):
    script = tmp_path / "scenario.py"
    script.write_text(textwrap.dedent(code))
    full_env = dict(os.environ)
    full_env.pop("CK_NUM_THREADS", None)
    full_env.update(env or {})
    res = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                         text=True, timeout=TIMEOUT, env=full_env, cwd=tmp_path)
    assert res.returncode == 0, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res.stdout


# A parallel operation: 2 threads, 1e6 elements (well above the split size).
PARALLEL = """
import numpy as np, ckernels
from ckernels import ops

def parallel_op(seed=0.0):
    x = np.arange(1_000_000, dtype=np.float64) + seed
    r = np.asarray(ops.add(x, x))
    assert r[-1] == 2 * x[-1] and r[0] == 2 * seed, (r[0], r[-1])
    return float(r[-1])
"""


def test_os_fork_after_parallel_operation(tmp_path):
    out = _run(tmp_path, PARALLEL + """
import os
ckernels.set_num_threads(2)
parallel_op()
for i in range(3):
    pid = os.fork()
    if pid == 0:
        try:
            parallel_op(float(i))
            parallel_op()
        except BaseException as exc:
            print("child failed:", repr(exc), flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    parallel_op()
print("ok")
""")
    assert out.strip() == "ok"


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_start_methods(tmp_path, method):
    out = _run(tmp_path, PARALLEL + """
import multiprocessing as mp, sys, warnings

def work(i):
    ckernels.set_num_threads(2)
    return parallel_op(float(i))

if __name__ == "__main__":
    warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
    ckernels.set_num_threads(2)
    parallel_op()                      # the parent's pool has workers now
    ctx = mp.get_context(sys.argv[1])
    with ctx.Pool(2) as pool:
        res = pool.map(work, range(4))
    assert res == [2 * (999_999.0 + i) for i in range(4)], res
    parallel_op()                      # and still works
    print("ok")
""", method)
    assert out.strip() == "ok"


def test_default_threads_follow_affinity(tmp_path):
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no sched_setaffinity")
    out = _run(tmp_path, """
import os
os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
import ckernels
print(ckernels.get_num_threads())
""")
    assert out.strip() == "1"


def test_default_threads_under_taskset(tmp_path):
    import shutil
    taskset = shutil.which("taskset")
    if taskset is None:
        pytest.skip("no taskset")
    cpu = sorted(os.sched_getaffinity(0))[0]
    env = dict(os.environ)
    env.pop("CK_NUM_THREADS", None)
    res = subprocess.run([taskset, "-c", str(cpu), sys.executable, "-c",
                          "import ckernels; print(ckernels.get_num_threads())"],
                         capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "1"


@pytest.mark.parametrize("bad", [-1, -(2 ** 40), 65, 2 ** 40])
def test_set_num_threads_out_of_range(bad):
    old = ckernels.get_num_threads()
    with pytest.raises(ValueError, match=str(bad)):
        ckernels.set_num_threads(bad)
    assert ckernels.get_num_threads() == old


def test_threads_assigning_into_one_string_array():
    """Python threads assigning whole string arrays into one destination (one
    arena): each string of the result is one of the sources' strings, whole;
    never a mix, never a crash."""
    n, nthreads, rounds = 2000, 4, 30
    dst = ckernels.empty("strided * string", (n,))
    sources = [ckernels.array([f"thread{t}-row{i}-" + "x" * (i % 37) for i in range(n)])
               for t in range(nthreads)]
    expected = [set() for _ in range(n)]
    for src in sources:
        for i, s in enumerate(src.to_list()):
            expected[i].add(s)
    errors = []

    def writer(t):
        try:
            for _ in range(rounds):
                ckernels.assign(dst, sources[t])
        except BaseException as exc:  # noqa: BLE001 -- reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    got = dst.to_list()
    assert all(g in expected[i] for i, g in enumerate(got)), \
        [g for i, g in enumerate(got) if g not in expected[i]][:5]
    # every assignment ran whole: the last one's array, intact
    assert got in [src.to_list() for src in sources]
