"""The repeated call of a jitted function on device arrays, made cheap.

The first call of a jitted function on device arrays of one layout goes the
whole way: routing (:mod:`ckernels.jit.targets`), the signature and operand
layout (:func:`ckernels.jit.device.call`), the emitted and built program and
the launch plan (:mod:`ckernels.device.launch`).  Everything that way decides
depends only on what a repeated call has in common with it -- the **call
key**:

* the function and the number of its compiled signatures (a lazily compiled
  function that gains one may select differently);
* the context (its identity: every device array operand in that one context
  object, ``out=`` too);
* per argument: a device array's layout (``_key``: element type, shape,
  strides), a Python scalar's type (``bool``/``int``/``float``: NEP 50 weak
  scalars, whose values never select), a NumPy scalar's dtype;
* ``out=``'s layout, or none.

:func:`remember` (called by :func:`ckernels.jit.device.call` for the calls
:func:`ckernels.jit.targets.call` routes straight to it) keeps the decision
under that key: the launch plan, how NumPy scalar operands become kernel
values, and how the result is made.  :func:`call`, the first thing
:func:`ckernels.jit.targets.call` does, looks the key up; on a hit a call
costs building the key, storing the operands into the plan's argument array,
the result's buffer and the launch with its error flag (:class:`Plan`), and
nothing is derived again.  Any other call -- another class of operand (option,
var, string arrays, host arrays, containers, Dask), another context object,
a first layout -- is a miss and takes the whole way, which remembers it when
it ends in a plain device launch.

An entry refers weakly to the context and the plan; the plan lives in the
device target's caches, weakly keyed by the compiled signature and the
context, so an entry keeps neither alive and a dead one is a miss.  Entries
per function are bounded (:data:`~ckernels.device.launch.PLAN_LIMIT`: a full
table starts over).  Importing this module (``import ckernels`` does, through
:mod:`ckernels.jit.targets`) loads nothing of the device launch code.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..arraylike import c_strides
from ..device.array import DeviceArray
from ..device.base import element_of

#: the attribute of a jitted function holding its table {call key: entry}
#: (an attribute, not a weakly keyed table: a lookup per call)
_ATTR = "_device_calls"
_SCALARS = (bool, int, float)


def _key(kernel, args, out):
    """``(call key, context)`` of a call (see the module docstring), or None
    when the call is not one the fast path serves."""
    ctx = None
    parts = [len(kernel._compiled)]
    for a in args:
        t = type(a)
        if t is DeviceArray:
            c = a._buffer.context
            if ctx is None:
                ctx = c
            elif c is not ctx:
                return None
            parts.append(a._key)
        elif t in _SCALARS:
            parts.append(t)
        elif isinstance(a, np.generic):
            parts.append((a.dtype.str,))
        else:
            return None
    if ctx is None:
        return None
    if out is None:
        parts.append(None)
    elif type(out) is DeviceArray and out._buffer.context is ctx:
        parts.append((out._key,))
    else:
        return None
    parts.append(id(ctx))
    return tuple(parts), ctx


def call(kernel, args, out=None):
    """``kernel(*args, out=out)`` by a remembered decision, or
    ``NotImplemented`` when none fits (the whole way then)."""
    calls = getattr(kernel, _ATTR, None)
    if calls is None:
        return NotImplemented
    k = _key(kernel, args, out)
    if k is None:
        return NotImplemented
    entry = calls.get(k[0])
    if entry is None:
        return NotImplemented
    ctx_ref, plan_ref, elements, result = entry
    plan = plan_ref()
    if plan is None or ctx_ref() is not k[1]:
        return NotImplemented
    ctx = k[1]
    operands = args if elements is None else [
        scalar_value(a, e) if isinstance(a, np.generic) else a
        for a, e in zip(args, elements)]
    if out is not None:   # launch.run: a temporary when out= overlaps an operand
        from ..device.launch import run   # loaded with the plan's first call
        return run(plan, ctx, out, operands)
    res = DeviceArray._result(ctx, *result)
    plan(res, operands)
    return res


def remember(kernel, args, out, plan, elements) -> None:
    """Keep ``plan`` for the calls with the key of this one; ``elements``:
    the parameters' element types when NumPy scalars among ``args`` are
    converted (:func:`scalar_value`), else None."""
    k = _key(kernel, args, out)
    if k is None:
        return
    from ..device.launch import PLAN_LIMIT   # loaded by now (the plan's module)
    key, ctx = k
    calls = getattr(kernel, _ATTR, None)
    if calls is None:
        calls = {}
        setattr(kernel, _ATTR, calls)
    result = None
    if out is None:
        element = element_of(ctx.kind, plan.out_dtype)
        shape = tuple(plan.out_shape)
        strides = c_strides(shape, element.size)
        n = plan.n
        result = (shape, strides, element, (element.name, shape, strides),
                  max(n * element.size, 8),
                  max(getattr(element, "alignment", element.size), 8))
    if len(calls) >= PLAN_LIMIT:
        calls.clear()
    calls[key] = (weakref.ref(ctx), weakref.ref(plan), elements, result)


def scalar_value(a, element):
    """A NumPy scalar as the value a kernel parameter of ``element`` takes:
    an instant or duration as its count in the parameter's unit."""
    if isinstance(a, (np.datetime64, np.timedelta64)):
        return int(np.asarray(a).astype(element.numpy).view(np.int64))
    return a.item()


__all__ = ["call", "remember", "scalar_value"]
