"""Where a call of a jitted function or a registry operation runs, decided
once for both (:meth:`ckernels.ops.Op._general`, :func:`ckernels.jit.targets.call`):

* a container of another library among the operands (a pyarrow array, a
  polars Series, a pandas Series of a nullable dtype, a dask Series of one):
  :mod:`ckernels.containers`, which makes them ckernels arrays, calls
  again and gives the result back in the container's kind;
* else a Dask collection among the operands (``out=`` included): lazily, on the
  Dask graph (:mod:`ckernels.dask`, imported on first use);
* else a device array among them: on that array's context (the first one's;
  every operand must be of it or a scalar);
* else on the host.

:func:`context_of` answers the other question about an operand: the public
:class:`ckernels.Context` it lives in (a device array's own; the process's
shared CPU context for everything else) -- what ``Array.context`` names with
the lower context handle, which the host layer can reach.
"""

from __future__ import annotations

from ._foreign import any_container, any_dask_collection
from .device.array import DeviceArray
from .device.place import Context, default_context
from .device.nulls import DeviceOptionArray
from .device.varlen import DeviceVarArray

#: the answer of :func:`runs_on` for Dask operands
DASK = "dask"
#: the answer of :func:`runs_on` for containers (:mod:`ckernels.containers`)
CONTAINERS = "containers"


def runs_on(args, out=None):
    """:data:`CONTAINERS`, :data:`DASK`, the first
    :class:`~ckernels.DeviceArray` among ``args`` and ``out``, or None (the
    host)."""
    if any_container((*args, out)):
        return CONTAINERS
    if any_dask_collection((*args, out)):
        return DASK
    for a in args:    # option arrays first: they propagate nulls (device/nulls.py)
        if isinstance(a, DeviceOptionArray):
            return a
    for a in args:
        if isinstance(a, (DeviceArray, DeviceVarArray)):
            return a
    return out if isinstance(out, DeviceArray) else None


def context_of(x) -> Context:
    """The public :class:`~ckernels.Context` that ``x`` lives in: a device
    array's context; for a host ``ckernels.Array`` (or anything else held in
    host memory) the process's shared CPU context, the same C context as
    ``x.context`` of a host array."""
    if isinstance(x, (DeviceArray, DeviceVarArray, DeviceOptionArray)):
        return x.context
    return default_context("cpu")


__all__ = ["runs_on", "context_of", "DASK", "CONTAINERS"]
