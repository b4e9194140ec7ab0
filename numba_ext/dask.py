"""ckernels on Dask: lazy dask arrays through jitted functions and operations,
Dask reductions, per-worker device contexts and the worker thread rule.

The Dask target of the package.  ``import ckernels`` does not import Dask;
this module is imported on first use, by the hooks that meet a Dask
collection (recognised by Dask's own test, ``dask.is_dask_collection``:
:func:`is_dask_collection`; an xarray object holding NumPy data is none):

* ``f(dask_array, ...)`` for a jitted function ``f``: calls whose operands
  NumPy takes go through ``f.ufunc`` (a real NumPy ufunc), which dask runs
  lazily through ``__array_ufunc__``.  Every other call with a dask operand
  (string signatures: chunks of NumPy ``StringDType``) comes here,
  :func:`call`: a blockwise graph calling ``f`` on every chunk, with NumPy
  broadcasting, the result dtype and ``meta`` from the function's signature
  (found by calling it on empty chunks: no element is computed).  A string
  result chunk becomes a ``StringDType`` array and its arena is released
  with the chunk's ckernels array (at once).  ``out=`` a dask array is
  refused (:class:`~ckernels.errors.NotSupportedError`): a dask array is an
  immutable graph.
* ``ckernels.ops.sum/prod/min/max/any/all(dask_array, axis=, keepdims=)``:
  :func:`reduce`, a ``dask.array.reduction`` whose chunk and aggregate steps
  are the library's reductions; ``f.reduce(dask_array, ...)`` for a jitted
  binary function: :func:`ufunc_reduce` (functions with ``identity=``
  reduce over several axes at once).
* ``dask.array.from_array(ckernels_array)`` needs nothing here: a
  :class:`ckernels.Array` implements ``__array_function__``, so Dask keeps
  ckernels arrays as chunks (meta: an empty ckernels array of the same
  type); ``from_array(numpy.asarray(a))`` gives NumPy chunks instead
  (``numpy.asarray`` of a ckernels array of a builtin type is a zero-copy view).
* :func:`map_blocks`: ``da.map_blocks`` with ``dtype``/``meta`` from the
  kernel's signature (plain ``da.map_blocks(f, x)`` infers them by running
  ``f`` on zeros unless given).
* On a cluster: :func:`context` -- one device context per worker process,
  cached -- and :func:`on_device`, ``map_blocks`` moving each chunk to that
  context, running a jitted function there and bringing the result back.
* Threads: :func:`worker_threads` is the library's default thread count
  inside a Dask worker: the worker's share of the host, its cores over the
  Dask threads of all workers on the host (the scheduler's ``ncores``), see
  ``docs/distributed.md``; ``ckernels`` applies it when it is imported in a
  worker process (:func:`apply_worker_thread_rule`) and refreshes it on the
  worker's event loop as workers come and go.  An explicit
  ``CK_NUM_THREADS`` or :func:`ckernels.set_num_threads` with a count wins;
  the rule wins over ``OMP_NUM_THREADS`` (which Dask's nanny sets to 1 in
  every worker, whatever its threads) and ``NUMBA_NUM_THREADS``.
"""

from __future__ import annotations

import functools
import os
import sys

import dask
import dask.array as da
import numpy as np

from . import _foreign, _threads, ufuncs
from .arraylike.shapes import broadcast_shape
from .host.array import Array
from .host.array import empty as _empty_array
from .host.array import reduce_op as _reduce_op
from .errors import InvalidArgumentError, NotSupportedError

_STRING = np.dtypes.StringDType()


#: whether an object is a Dask collection: Dask's own test (``_foreign``)
is_dask_collection = _foreign.is_dask_collection
any_dask = _foreign.any_dask_collection


# --------------------------------------------------------------- elementwise --
def _as_chunk_result(res, meta_like: bool = False):
    """A kernel's result on one chunk as a NumPy array: builtin element types
    stay zero-copy views, strings become ``StringDType`` (a copy, after which
    the result's arena goes with its ckernels array)."""
    if isinstance(res, Array):
        if res._numpy_exact():
            return np.asarray(res)
        return res.to_numpy()
    return np.asarray(res)


def _chunk_call(kernel, *blocks):
    return _as_chunk_result(kernel(*blocks))


def _empty_like_meta(x):
    """An empty operand standing for the chunks of dask array ``x`` (NumPy
    infers no element type from an empty ``StringDType`` array: strings get an
    empty ckernels string array)."""
    if x.dtype.kind == "T":
        return _empty_array((0,) * x.ndim, "string")
    return np.empty((0,) * x.ndim, dtype=x.dtype)


def call(kernel, args, out=None):
    """``kernel(*args)`` with Dask operands: a lazy dask array (see the module
    docstring).  ``kernel`` is any callable of the package taking arrays
    elementwise (a jitted function, an operation)."""
    name = getattr(kernel, "__name__", None) or getattr(kernel, "name", "kernel")
    if out is not None:
        raise ufuncs.dask_out_error(kernel)
    xs = [da.asarray(a) if is_dask_collection(a) or getattr(a, "ndim", 0) else a
          for a in args]   # arrays among dask arrays join the graph (one chunk)
    darrs = [a for a in xs if isinstance(a, da.Array)]
    if not darrs:
        raise InvalidArgumentError(f"{name}: no dask array among the arguments")
    meta = _meta_of(kernel, xs)   # the result type from the signature
    shape = broadcast_shape([a.shape for a in darrs])   # the C library's rule
    nd = len(shape)
    pairs = []
    for a in xs:
        if isinstance(a, da.Array):
            pairs += [a, tuple(range(nd - a.ndim, nd))]
        else:
            pairs += [a, None]
    token = dask.base.tokenize(kernel, *xs)
    return da.blockwise(_chunk_call, tuple(range(nd)), kernel, None, *pairs,
                        dtype=meta.dtype, meta=np.empty((0,) * nd, dtype=meta.dtype),
                        name=f"{name}-{token}", concatenate=True)


# ---------------------------------------------------------------- reductions --
def _chunk_reduce(block, axis=None, keepdims=False, opname="sum"):
    res = _reduce_op(opname, block, axis, keepdims)
    return res if isinstance(block, Array) else np.asarray(res)


def reduce(opname: str, x, axis=None, keepdims: bool = False, split_every=None):
    """The library reduction ``opname`` (``sum``, ``product``, ``min``, ``max``,
    ``any``, ``all``) of a dask array as a ``dask.array.reduction``: each chunk
    reduced by the library, the partial results reduced again (NumPy's result
    types: ``sum`` of ``int8`` is ``int64``, ``any`` is ``bool``)."""
    x = da.asarray(x)
    # the result type: the library's reduction of one element
    probe = np.asarray(_reduce_op(opname, np.ones((1,), dtype=x.dtype), None, False))
    fn = functools.partial(_chunk_reduce, opname=opname)
    return da.reduction(x, fn, fn, axis=axis, keepdims=keepdims, dtype=probe.dtype,
                        split_every=split_every, name=f"ckernels-{opname}",
                        concatenate=True)


def _ufunc_chunk_reduce(block, axis=None, keepdims=False, kernel=None):
    if len(axis) == 1:
        return kernel.reduce(block, axis=axis[0], keepdims=keepdims)
    return kernel.reduce(block, axis=axis, keepdims=keepdims)


def ufunc_reduce(kernel, x, axis=0, dtype=None, out=None, keepdims: bool = False,
                 split_every=None, **kwargs):
    """``kernel.reduce(x, axis=..., keepdims=...)`` of a dask array for a
    jitted binary function: each chunk reduced by its ufunc, the partial
    results reduced again.  As with NumPy's ufuncs, reducing over several axes
    (``axis=None`` on more than one dimension, or a tuple) needs an identity
    (``@ckernels.jit(..., identity=...)``): the function is then taken as
    associative and commutative."""
    name = kernel.__name__
    if out is not None:
        raise NotSupportedError(f"{name}.reduce(dask_array, out=...): a dask array is an "
                                "immutable task graph; use the returned dask array")
    if kwargs:
        raise NotSupportedError(f"{name}.reduce(dask_array): {', '.join(map(repr, kwargs))} "
                                "not supported with dask arrays (axis, dtype, keepdims are)")
    x = da.asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if not isinstance(axis, tuple) else axis)
    axes = tuple(a + x.ndim if a < 0 else a for a in axes)
    if kernel.identity is None and len(axes) > 1:
        raise InvalidArgumentError(
            f"{name}.reduce over axes {axes} of a dask array: a function without an identity "
            "reduces one axis at a time (declare it with @ckernels.jit(..., identity=...) "
            "when it is associative and commutative)")
    if dtype is not None:
        x = x.astype(dtype)
    probe = kernel.reduce(np.ones((2,), dtype=x.dtype), axis=0)
    fn = functools.partial(_ufunc_chunk_reduce, kernel=kernel)
    return da.reduction(x, fn, fn, axis=axes, keepdims=keepdims, dtype=np.asarray(probe).dtype,
                        split_every=split_every, name=f"{name}-reduce", concatenate=True)


# ------------------------------------------------------------ device chunks --
@functools.lru_cache(maxsize=None)
def context(kind: str = "opencl"):
    """This process's context of ``kind`` (``"opencl"``, ...), opened once and
    cached: on a Dask worker, one per worker process for every task."""
    from .device.place import Context
    return Context(kind)


def _meta_of(kernel, xs):
    """The result of ``kernel`` on chunks like ``xs`` (empty: nothing runs)."""
    metas = [_empty_like_meta(a) if isinstance(a, da.Array) else a for a in xs]
    return _as_chunk_result(kernel(*metas))


def map_blocks(kernel, *arrays, **kwargs):
    """``dask.array.map_blocks(kernel, *arrays, **kwargs)`` with the result's
    ``dtype`` and ``meta`` from the kernel's signature (it runs on empty
    chunks).  Plain ``da.map_blocks`` infers the dtype by calling the kernel
    on a chunk of zeros when no ``dtype=``/``meta=`` is given, which fails
    for a kernel that raises there (``1.0 / x`` under the default error
    model)."""
    xs = [da.asarray(a) if is_dask_collection(a) else a for a in arrays]
    if "meta" not in kwargs:
        meta = _meta_of(kernel, xs)
        kwargs.setdefault("dtype", meta.dtype)
        kwargs["meta"] = np.empty((0,) * meta.ndim, dtype=meta.dtype)
    return da.map_blocks(kernel, *xs, **kwargs)


def _device_block(kernel, kind, *blocks):
    ctx = context(kind)
    args = [ctx.array(np.ascontiguousarray(b)) if isinstance(b, np.ndarray) else b
            for b in blocks]
    res = kernel(*args)
    return res.to_numpy()


def on_device(kernel, *arrays, kind: str = "opencl", **map_blocks_kwargs):
    """``dask.array.map_blocks`` running ``kernel`` on the device: on each
    worker, every chunk is copied to that worker's context of ``kind``
    (:func:`context`: opened once per process), ``kernel`` runs there and the
    result comes back to host memory.  The result dtype and meta are the
    kernel's on the host (the same signature on every target)."""
    xs = [da.asarray(a) if is_dask_collection(a) or isinstance(a, np.ndarray) else a
          for a in arrays]
    meta = _meta_of(kernel, xs)
    map_blocks_kwargs.setdefault("dtype", meta.dtype)
    map_blocks_kwargs.setdefault("meta", meta)
    map_blocks_kwargs.setdefault("name", f"{getattr(kernel, '__name__', 'kernel')}-{kind}")
    return da.map_blocks(_device_block, kernel, kind, *xs, **map_blocks_kwargs)


# ------------------------------------------------------------- thread rule --
# Per process: the Dask worker threads on this host as the scheduler last
# reported them ({worker address: threads on its host}), for the workers of
# this process.  Filled by _refresh (one ``ncores`` call to the scheduler),
# on the worker's event loop: at once when the rule is first applied, then
# every _REFRESH_HEARTBEATS heartbeat intervals, so that workers joining or
# leaving the host change the share of the others.
_host_threads: dict[str, int] = {}
_REFRESH_HEARTBEATS = 4         # refresh period, in the worker's heartbeat intervals
_REFRESH_MIN_S = 2.0            # ... but not more often than this
_SYNC_TIMEOUT_S = 5.0           # a task thread waiting for the first answer
_CALLBACK = "ckernels-thread-rule"
_GONE = ("stopping", "stopped", "closing", "closed", "failed")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):   # pragma: no cover - Linux has it
        return os.cpu_count() or 1


def _workers() -> list:
    """The running Dask workers of this process (none outside a worker)."""
    dist = sys.modules.get("distributed")
    if dist is None:
        return []
    instances = getattr(getattr(dist, "Worker", None), "_instances", None) or ()
    return [w for w in list(instances)
            if getattr(getattr(w, "status", None), "name", "running") not in _GONE
            and getattr(w, "address", None)]


def _on_loop(worker) -> bool:
    """Whether this thread runs ``worker``'s event loop (a blocking wait
    for the scheduler here would deadlock)."""
    import asyncio
    try:
        return asyncio.get_running_loop() is worker.loop.asyncio_loop
    except RuntimeError:
        return False


async def _refresh(worker) -> None:
    """Ask the scheduler for every worker's thread count (``ncores``), keep the
    sum over the workers on ``worker``'s host and apply the rule with it."""
    from distributed.comm.addressing import get_address_host
    try:
        ncores = await worker.scheduler.ncores()
    except Exception:       # the scheduler is gone or the worker is closing
        return
    host = get_address_host(worker.address)
    _host_threads[worker.address] = sum(
        int(n) for addr, n in ncores.items() if get_address_host(addr) == host)
    _apply()


def _install(worker) -> None:
    """On ``worker``'s event loop: the periodic refresh (stopped with the
    worker: a Server stops its ``periodic_callbacks`` when it closes) and a
    first refresh now."""
    if _CALLBACK in worker.periodic_callbacks or worker.status.name in ("closing", "closed"):
        return
    from tornado.ioloop import PeriodicCallback
    hb = worker.periodic_callbacks.get("heartbeat")
    period_ms = max(_REFRESH_MIN_S * 1000,
                    _REFRESH_HEARTBEATS * (hb.callback_time if hb is not None else 500))
    pc = PeriodicCallback(lambda: _refresh(worker), period_ms)
    worker.periodic_callbacks[_CALLBACK] = pc
    pc.start()
    worker.loop.add_callback(_refresh, worker)


def _ensure(workers) -> None:
    """Install the refresh on every worker of this process that lacks it;
    when the host count of one is still unknown, wait for the scheduler's
    answer here if this is not the worker's event loop (a task's thread)."""
    for w in workers:
        if _CALLBACK in w.periodic_callbacks:
            continue
        if _on_loop(w):
            _install(w)
        else:
            w.loop.add_callback(_install, w)
    missing = [w for w in workers if w.address not in _host_threads]
    for w in missing:
        if _on_loop(w):
            continue        # the refresh scheduled above answers soon
        from distributed.utils import sync
        try:
            sync(w.loop, _refresh, w, callback_timeout=_SYNC_TIMEOUT_S)
        except Exception:   # no answer in time: the local estimate below
            pass


def _share(workers) -> int:
    """The rule with what is known now: the cores of this process over the
    Dask threads on its host (several workers in one process share a host:
    the largest host count known, at least this process's own threads)."""
    local = sum(int(getattr(getattr(w, "state", None), "nthreads", 0) or
                    getattr(w, "nthreads", 1) or 1) for w in workers)
    host = max([local] + [_host_threads.get(w.address, 0) for w in workers])
    return max(1, _cores() // max(1, host))


def worker_threads() -> int | None:
    """The library's default thread count in this process if it is a Dask
    worker process, else None: the worker's share of the host, the cores
    this process may run on (``sched_getaffinity``) divided by the Dask
    threads of all workers on this host (from the scheduler's worker list:
    the ``nthreads`` of every worker whose address has this host), at least
    1.  Until the scheduler has answered (asked on the worker's event loop;
    a task's thread waits for the first answer), the threads of this
    process's own workers stand for the host's."""
    workers = _workers()
    if not workers:
        return None
    _ensure(workers)
    return _share(workers)


def _explicit() -> bool:
    return _threads.explicit or _threads.from_environment() == "CK_NUM_THREADS"


def _apply() -> int | None:
    """Set the library's thread count to the rule's share, unless an explicit
    ``CK_NUM_THREADS`` / ``set_num_threads(n)`` set it (they win)."""
    workers = _workers()
    if _explicit() or not workers:
        return None
    n = _share(workers)
    from ._native import check, lib
    check(lib.ck_set_num_threads(n))
    return n


def apply_worker_thread_rule() -> int | None:
    """Set the library's thread count to :func:`worker_threads` when this is a
    Dask worker process and neither ``CK_NUM_THREADS`` nor
    :func:`ckernels.set_num_threads` with a count set it; returns the count
    set (None: nothing done).  It also starts the refresh that re-applies the
    rule as workers join or leave the host."""
    workers = _workers()
    if _explicit() or not workers:
        return None
    _ensure(workers)
    return _apply()


__all__ = ["is_dask_collection", "any_dask", "call", "reduce", "ufunc_reduce", "map_blocks",
           "context",
           "on_device", "worker_threads", "apply_worker_thread_rule"]
