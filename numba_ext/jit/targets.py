"""Which target runs a call of a jitted function.

The seam between the shared part of ``ckernels.jit`` and its targets:

* a call whose arguments include a device array
  (:class:`ckernels.context.DeviceArray`) runs on that array's context through
  :func:`ckernels.jit.device.call`, with the device target of the context's
  kind (its dialect: :mod:`ckernels.dialects`);
* every other call runs on the host: :func:`ckernels.jit.cpu.call`
  (``ck_array_apply`` over ckernel/NumPy arrays, or one element for scalars).

A new device target is a row of the dialect table (how its C reads);
nothing here changes.  A host fast path
(the NumPy ufunc of a jitted function) plugs in before :func:`call` falls back
to the CPU target.  A call with a Dask collection among its arguments builds
a lazy dask array (:func:`ckernels.dask.call`).  A call with a dictionary
column among its arguments runs once per distinct value first
(:func:`ckernels.host.dictionary.per_value`).
"""

from __future__ import annotations

from .. import dialects
from ..errors import NotSupportedError
from ..device.nulls import DeviceOptionArray
from ..device.varlen import DeviceVarArray
from ..host import dictionary as _dictionary
from ..routing import CONTAINERS, DASK, runs_on
from . import cpu, fastcall


def call(kernel, args, out=None):
    """``kernel(*args, out=out)`` where the operands say
    (:func:`ckernels.routing.runs_on`)."""
    res = fastcall.call(kernel, args, out)   # a repeated device call
    if res is not NotImplemented:
        return res
    if out is None and not _dictionary.has_core_dims(kernel):
        res = _dictionary.per_value(kernel, args)   # once per distinct value
        if res is not NotImplemented:
            return res
    where = runs_on(args, out)
    if where is None:
        return cpu.call(kernel, args, out)
    if where is CONTAINERS:   # pyarrow, polars, pandas, dask Series in and out
        from .. import containers
        return containers.call(kernel, args, None, out)
    if where is DASK:   # lazy: ckernels.dask
        from .. import dask as _dask
        return _dask.call(kernel, args, out)
    if any(isinstance(a, DeviceOptionArray) for a in args) or \
            any((c.sig.ret or "").startswith("?") or any(a.startswith("?") for a in c.sig.args)
                for c in kernel._compiled.values()):
        from . import device_nulls   # nulls propagate, or the function sees None
        res = device_nulls.call(kernel, args, out)
        if res is not NotImplemented:
            return res
    if any(c.sig.ret == "string" for c in kernel._compiled.values()):
        from . import device_strings   # string results: sizing -> scan -> writing
        res = device_strings.call(kernel, args, out)
        if res is not None:
            return res
    if any(c.sig.ret in ("var * string", "var * ?string") for c in kernel._compiled.values()):
        from . import device_split   # rows of (optional) strings: sizing -> scans -> writing
        res = device_split.call(kernel, args, out)
        if res is not None:
            return res
    from . import device_append
    if device_append.wants(kernel):   # var results: appends into a device arena
        res = device_append.call(kernel, args, out)
        if res is not None:
            return res
    if any(isinstance(a, DeviceVarArray) for a in args):
        from . import device_var     # var-dim arguments: one row per work item
        return device_var.call(kernel, args, out)
    if any(getattr(c, "core", False) for c in kernel._compiled.values()):
        from . import device_dims    # signatures with core dims
        return device_dims.call(kernel, args, out)
    from . import device   # the device target (and the C emitter) load on a device call
    return device.call(kernel, args, out, remember_call=True)


def device_target(name: str, fname: str = "ckernels.jit") -> "device.DeviceTarget":
    """The device target called ``name`` (for ``f.source(name)``)."""
    from . import device
    try:
        return device.target(name)
    except NotSupportedError:
        raise NotSupportedError(f"{fname}: no source for target {name!r} "
                                f"(targets: {', '.join(map(repr, dialects.DEVICE_DIALECTS))})"
                                ) from None


__all__ = ["call", "device_target"]
