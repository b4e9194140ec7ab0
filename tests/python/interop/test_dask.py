"""ckernels on Dask (issue 11): lazy dask arrays through jitted functions and
operations, Dask reductions against NumPy, string chunks and their arenas,
``from_array``/``map_blocks`` meta, and a real cluster (``LocalCluster`` with
two worker processes, shared by the cluster tests of this module)."""

import logging
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ckernels
from ckernels.errors import CKValueError, CKZeroDivisionError, InvalidArgumentError, \
    NotSupportedError

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import dask_kernels as K  # noqa: E402  (tests/python: importable by the workers too)

HERE = pathlib.Path(__file__).parent
SD = np.dtypes.StringDType()
RNG = np.random.default_rng(11)


# ------------------------------------------------------------ lazy, local --
def test_import_ckernels_does_not_import_dask():
    code = "import sys, ckernels; assert 'dask' not in sys.modules, 'dask imported'; print('ok')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_jit_on_dask_is_lazy_with_signature_dtype_and_broadcasting():
    a = RNG.standard_normal((6, 8))
    b = RNG.standard_normal(8)
    x = da.from_array(a, chunks=(4, 3))
    y = da.from_array(b, chunks=3)
    r = K.axpy(x, y)
    assert isinstance(r, da.Array)
    assert r.dtype == np.float64 and isinstance(r._meta, np.ndarray) and r.shape == (6, 8)
    np.testing.assert_array_equal(r.compute(), 2.0 * a + b)
    np.testing.assert_array_equal(K.axpy(x, 1.5).compute(), 2.0 * a + 1.5)
    np.testing.assert_array_equal(K.axpy(b, x).compute(), 2.0 * b + a)   # NumPy + dask


def test_dtype_from_signature_through_the_ufunc():
    a = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
    x = da.from_array(a, chunks=2)
    r = K.half(x)
    assert isinstance(r, da.Array) and r.dtype == np.float64
    np.testing.assert_array_equal(r.compute(), a / 2)
    r = K.plus(x, x)
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r.compute(), 2 * a)


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (1, False),
                                           ((0, 2), False), (-1, True)])
def test_jit_reduce_on_dask(axis, keepdims):
    a = RNG.integers(-100, 100, (5, 6, 7)).astype(np.int64)
    x = da.from_array(a, chunks=(2, 4, 3))
    r = K.plus.reduce(x, axis=axis, keepdims=keepdims)
    assert isinstance(r, da.Array) and r.dtype == np.int64
    np.testing.assert_array_equal(r.compute(), np.add.reduce(a, axis=axis, keepdims=keepdims))
    f = a.astype(np.float64)
    np.testing.assert_allclose(K.plus.reduce(da.from_array(f, chunks=3), axis=axis,
                                             keepdims=keepdims).compute(),
                               np.add.reduce(f, axis=axis, keepdims=keepdims))


def test_jit_reduce_without_identity_on_dask():
    a = RNG.standard_normal((8, 9))
    x = da.from_array(a, chunks=(3, 4))
    np.testing.assert_array_equal(K.bigger.reduce(x, axis=1).compute(),
                                  np.maximum.reduce(a, axis=1))
    np.testing.assert_array_equal(K.bigger.reduce(x, axis=0, keepdims=True).compute(),
                                  np.maximum.reduce(a, axis=0, keepdims=True))
    with pytest.raises(InvalidArgumentError, match="identity"):
        K.bigger.reduce(x, axis=None)
    with pytest.raises(NotSupportedError, match="immutable"):
        K.plus.reduce(x, axis=0, out=x[0])


def test_jit_on_dask_errors_at_compute():
    x = da.from_array(np.array([1.0, 0.0, 2.0]), chunks=2)
    r = K.reciprocal(x)     # lazy: building the graph computes nothing
    # (the synchronous scheduler: a thread of the threaded one keeps the last
    # failed task's traceback, and its chunk, until it runs the next task)
    with pytest.raises(CKZeroDivisionError, match="division by zero"):
        r.compute(scheduler="sync")


def test_out_dask_array_refused():
    x = da.ones(4, chunks=2)
    with pytest.raises(NotSupportedError, match="immutable"):
        K.axpy(x, x, out=x)
    with pytest.raises(NotSupportedError, match="immutable"):
        K.axpy(np.ones(4), np.ones(4), out=x)
    with pytest.raises(NotSupportedError, match="immutable"):
        ckernels.ops.add(x, 1.0, out=x)


def test_ops_on_dask():
    a = RNG.integers(-50, 50, (5, 7)).astype(np.int16)
    x = da.from_array(a, chunks=3)
    r = ckernels.ops.add(x, x)
    assert isinstance(r, da.Array) and r.dtype == np.int16
    np.testing.assert_array_equal(r.compute(), a + a)
    s = ckernels.ops.sqrt(da.from_array(np.abs(a).astype(np.float32), chunks=3))
    assert s.dtype == np.float32
    np.testing.assert_allclose(s.compute(), np.sqrt(np.abs(a).astype(np.float32)), rtol=1e-6)


REDUCTIONS = [("sum", np.sum), ("prod", np.prod), ("min", np.min), ("max", np.max),
              ("any", np.any), ("all", np.all)]


@pytest.mark.parametrize("name,ref", REDUCTIONS, ids=[n for n, _ in REDUCTIONS])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ((0, 2), True),
                                           (-1, True)])
def test_ops_reductions_on_dask(name, ref, axis, keepdims):
    a = RNG.integers(-3, 4, (4, 5, 6)).astype(np.int8)
    if name == "prod":
        a = np.where(a == 0, 1, a).astype(np.int8)
    x = da.from_array(a, chunks=(3, 2, 4))
    r = getattr(ckernels.ops, name)(x, axis=axis, keepdims=keepdims)
    assert isinstance(r, da.Array)
    want = ref(a, axis=axis, keepdims=keepdims)
    assert r.dtype == want.dtype, (r.dtype, want.dtype)
    got = r.compute()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_float_reductions_on_dask():
    a = RNG.standard_normal((50, 40))
    x = da.from_array(a, chunks=(7, 9))
    np.testing.assert_allclose(ckernels.ops.sum(x, axis=0).compute(), a.sum(axis=0))
    assert ckernels.ops.max(x).compute() == a.max()


def test_string_kernel_over_dask_chunks_releases_arenas():
    words = np.array(["alpha", "béta", "", "gamma ray", "δ", "x" * 40, "z"], dtype=SD)
    x = da.from_array(words, chunks=3)
    assert x.dtype == SD
    before = ckernels.live_count()
    r = K.shout(x)
    assert isinstance(r, da.Array) and r.dtype == SD and r._meta.dtype == SD
    got = r.compute()
    assert got.dtype == SD
    assert got.tolist() == [w.upper() + "!" for w in words.tolist()]
    # every chunk's result arena went with its chunk
    assert ckernels.live_count() == before


def test_from_array_of_ckernels_array():
    a = RNG.standard_normal((6, 4))
    c = ckernels.asarray(a)
    x = da.from_array(c, chunks=(4, 3))
    assert isinstance(x._meta, ckernels.Array) and x._meta.shape == (0, 0)
    assert x.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(x.compute()), a)
    np.testing.assert_array_equal(np.asarray(ckernels.ops.sum(x, axis=1).compute()),
                                  a.sum(axis=1))
    assert isinstance(x.blocks[0, 0].compute(), ckernels.Array)
    r = K.axpy(x, 1.0)    # a jitted function over ckernels chunks
    np.testing.assert_array_equal(np.asarray(r.compute()), 2 * a + 1)
    s = ckernels.array(["a", "bc", "déf"])
    xs = da.from_array(s, chunks=2)
    assert xs.dtype == SD and isinstance(xs._meta, ckernels.Array)
    assert xs.compute().tolist() == ["a", "bc", "déf"]


def test_map_blocks_meta():
    a = RNG.standard_normal((5, 6))
    x = da.from_array(a, chunks=2)
    r = da.map_blocks(K.axpy, x, x)
    assert r.dtype == np.float64 and isinstance(r._meta, np.ndarray)
    np.testing.assert_array_equal(r.compute(), 3 * a)
    s = da.from_array(np.array(["ab", "c"], dtype=SD), chunks=1)
    rs = da.map_blocks(K.shout, s)      # a ckernels string array per chunk
    assert rs.dtype == SD
    assert [str(v) for v in np.asarray(rs.compute()).tolist()] == ["AB!", "C!"]
    # a kernel raising on the zeros plain map_blocks runs it on to infer the
    # dtype: ckernels.dask.map_blocks takes dtype and meta from the signature
    import ckernels.dask as ckd
    rr = ckd.map_blocks(K.reciprocal, x)
    assert rr.dtype == np.float64 and isinstance(rr._meta, np.ndarray)
    np.testing.assert_allclose(rr.compute(), 1.0 / a)
    rs = ckd.map_blocks(K.shout, s)
    assert rs.dtype == SD and rs._meta.dtype == SD
    assert rs.compute().tolist() == ["AB!", "C!"]


# ------------------------------------------------------------ the cluster --
@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("numba-cache")


@pytest.fixture(scope="module")
def client(cache_dir):
    distributed = pytest.importorskip("distributed")
    env = {"PYTHONPATH": os.pathsep.join([str(HERE)] + [p for p in os.environ.get(
               "PYTHONPATH", "").split(os.pathsep) if p]),
           "NUMBA_CACHE_DIR": str(cache_dir)}
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None, env=env,
                                  silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster) as cl:
        cl.wait_for_workers(2)
        yield cl


def _workers(client):
    return sorted(client.scheduler_info()["workers"])


def test_cluster_module_functions(client):
    a = RNG.standard_normal((400, 50))
    x = da.from_array(a, chunks=(50, 50))
    r = K.axpy(x, 1.0)
    pids = da.map_blocks(lambda b: np.full(b.shape[:1], os.getpid()), x[:, 0],
                         dtype=np.int64)
    got, where = client.compute([r, pids], sync=True)
    np.testing.assert_array_equal(got, 2 * a + 1.0)
    assert os.getpid() not in set(where.tolist())   # the workers computed it


@pytest.fixture(scope="module")
def interactive_fn():
    """A jitted function defined as in a notebook (module ``__main__``, a
    global it reads): pickled by value.  (Made once per module: a function
    compiled at run time keeps its compiled state, and a memblock, for the
    rest of the process -- Numba keeps its dispatchers.)"""
    ns = {"__name__": "__main__", "ckernels": ckernels}
    exec(textwrap.dedent("""
        OFFSET = 0.5

        @ckernels.jit("float64(float64)")
        def cube_plus(x):
            return x * x * x + OFFSET

        @ckernels.jit("float64(float64, float64)", identity=0.0)
        def plus2(x, y):
            return x + y
    """), ns)
    return ns


def test_cluster_interactive_function_by_value(client, interactive_fn):
    f = interactive_fn["cube_plus"]
    a = RNG.standard_normal(1000)
    r = f(da.from_array(a, chunks=250))
    np.testing.assert_allclose(client.compute(r, sync=True), a ** 3 + 0.5)
    # and a jitted reduction of an interactively defined function
    np.testing.assert_allclose(
        client.compute(interactive_fn["plus2"].reduce(da.from_array(a, chunks=250)), sync=True), a.sum())


def test_cluster_exceptions_reach_the_client(client):
    x = da.from_array(np.array([1.0, 2.0, 0.0, 4.0]), chunks=2)
    with pytest.raises(CKZeroDivisionError) as ei:
        client.compute(K.reciprocal(x), sync=True)
    assert type(ei.value) is CKZeroDivisionError
    assert "division by zero" in str(ei.value)
    y = da.from_array(np.array([1.0, -4.0]), chunks=1)
    with pytest.raises(CKValueError, match="checked_sqrt: negative input") as ei:
        client.compute(K.checked_sqrt(y), sync=True)
    assert type(ei.value) is CKValueError
    # errors of the library itself (an operation with wrong arguments) too
    with pytest.raises(InvalidArgumentError, match="takes 2 argument"):
        client.submit(K.wrong_arity, pure=False).result()


def test_cluster_strings_and_reductions(client):
    words = np.array([f"w{i}é" for i in range(40)], dtype=SD)
    got = client.compute(K.shout(da.from_array(words, chunks=7)), sync=True)
    assert got.tolist() == [w.upper() + "!" for w in words.tolist()]
    a = RNG.integers(0, 100, (60, 30)).astype(np.int32)
    x = da.from_array(a, chunks=(13, 11))
    s, m, p = client.compute([ckernels.ops.sum(x, axis=0), ckernels.ops.max(x, keepdims=True),
                              ckernels.ops.add(x, x)], sync=True)
    np.testing.assert_array_equal(p, a + a)
    np.testing.assert_array_equal(s, a.sum(axis=0))
    np.testing.assert_array_equal(m, a.max(keepdims=True))


def test_cluster_compile_cache(client, cache_dir):
    """cache=True: the first worker compiles and writes NUMBA_CACHE_DIR, the
    second loads the compiled code (cache hits, no misses) in less time."""
    first, second = _workers(client)

    def load():
        import dask_cached
        return dask_cached.report()

    r1 = client.submit(load, workers=[first], pure=False).result()
    r2 = client.submit(load, workers=[second], pure=False).result()
    assert r1["dispatcher_misses"] >= 1 and r1["kernel_misses"] >= 1, r1
    assert r2["dispatcher_hits"] >= 1 and r2["dispatcher_misses"] == 0, r2
    assert r2["kernel_hits"] >= 1 and r2["kernel_misses"] == 0, r2
    assert any(cache_dir.rglob("*.nbi"))
    print(f"\ncache=True on a worker: compile {r1['seconds'] * 1e3:.0f} ms, "
          f"load from the cache {r2['seconds'] * 1e3:.0f} ms")


def _facts_per_worker(client):
    """worker_facts run as a task on every worker (a task's thread: the rule
    there waits for the scheduler's first answer)."""
    return {w: client.submit(K.worker_facts, workers=[w], pure=False).result()
            for w in _workers(client)}


def _host_share(n_threads_on_host):
    return max(1, len(os.sched_getaffinity(0)) // n_threads_on_host)


def test_cluster_thread_rule(client):
    """Two worker processes with one thread each on this host: each gets its
    share of the host (cores // 2 library threads), not cores // 1."""
    facts = _facts_per_worker(client)
    assert len(facts) == 2 and len({f["pid"] for f in facts.values()}) == 2
    for f in facts.values():
        assert f["rule"] == _host_share(2), f
        # Dask's nanny set OMP_NUM_THREADS=1 (its pre-spawn-environ); the worker
        # rule comes before it (docs/dispatch.md, "Threads")
        assert f["omp"] == "1", f
        if f["env"]:      # an explicit CK_NUM_THREADS wins
            assert f["threads"] == int(f["env"])
        else:
            assert f["threads"] == f["rule"]

    def explicit_wins():
        import ckernels.dask as ckd
        ckernels.set_num_threads(3)
        ckd.apply_worker_thread_rule()      # as the periodic refresh does
        n3 = ckernels.get_num_threads()
        ckernels.set_num_threads(0)         # back to the default: the worker rule
        return n3, ckernels.get_num_threads(), ckd.worker_threads()

    for n3, n0, rule in client.run(explicit_wins).values():
        assert n3 == 3
        if not os.environ.get("CK_NUM_THREADS"):
            assert n0 == rule == _host_share(2)


def test_cluster_thread_rule_follows_the_host():
    """A one-worker cluster with one thread: the worker gets all the cores;
    when a second worker joins the host, the first one's share drops (the
    periodic refresh on its event loop, no task needed)."""
    distributed = pytest.importorskip("distributed")

    def rule_now():     # nested: pickled by value (the workers import no test module)
        import ckernels.dask as ckd
        return ckd.worker_threads(), ckernels.get_num_threads(), os.environ.get("CK_NUM_THREADS")

    t0 = time.monotonic()
    with distributed.LocalCluster(processes=True, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster) as cl:
        cl.wait_for_workers(1)
        first, = _workers(cl)
        t1 = time.monotonic()
        rule, threads, env = cl.submit(rule_now, pure=False).result()   # a task
        t2 = time.monotonic()
        assert rule == len(os.sched_getaffinity(0)) == _host_share(1)
        if not env:
            assert threads == rule
        cluster.scale(2)
        cl.wait_for_workers(2)
        t3 = time.monotonic()
        deadline = time.monotonic() + 30
        while True:     # on the event loop: what the refresh alone has set
            rule, threads, env = cl.run(rule_now, workers=[first])[first]
            if rule == _host_share(2) or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        t4 = time.monotonic()
        print(f"\ncluster {t1 - t0:.1f} s, first task {t2 - t1:.1f} s, scale {t3 - t2:.1f} s, "
              f"refresh seen after {t4 - t3:.1f} s")
        assert rule == _host_share(2)
        if not env:
            assert threads == rule


def test_cluster_opencl_contexts_per_worker(client):
    import ckernels.dask as ckd

    def probe():
        try:
            ctx = ckd.context("opencl")
        except ckernels.errors.BackendError as exc:
            return str(exc)
        return None

    reasons = [r for r in client.run(probe).values() if r]
    if reasons:
        pytest.skip(f"no OpenCL platform on the workers: {reasons[0]}")
    a = RNG.standard_normal((64, 32))
    x = da.from_array(a, chunks=(16, 32))
    r = ckd.on_device(K.axpy, x, x, kind="opencl")
    assert r.dtype == np.float64
    np.testing.assert_allclose(client.compute(r, sync=True), 3 * a, rtol=1e-12)

    def ctx_id(block):   # which context each chunk ran in, by process
        return np.array([[os.getpid(), id(ckd.context("opencl"))]])
    ids = client.compute(da.map_blocks(ctx_id, x, chunks=(1, 2), dtype=np.int64),
                         sync=True)
    by_pid = {}
    for pid, cid in ids.tolist():
        by_pid.setdefault(pid, set()).add(cid)
    assert all(len(c) == 1 for c in by_pid.values()), by_pid   # one per process, cached
