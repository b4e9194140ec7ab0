"""Lists whose element types differ only by unification, joined in one variable.

Numba unifies ``list(none)`` with ``list(Optional(str))`` (and
``list(int64)`` with ``list(float64)``) into one list type, so a function
returning ``[None]`` in one branch and ``[s, None]`` in another types -- but
its lowering then casts the ``list(none)`` value to ``list(Optional(str))``
as a view (``numba/cpython/listobj.py list_to_list``: an assertion that the
element types are equal).  The two lists have different item layouts, so a
view cannot exist: :func:`lower_converted_list` builds a new list of the
target type with every item cast (``None`` into ``Optional(T)``, ``T`` into
``Optional(T)``, number to number), as CPython's list would simply hold the
same objects.

It is called by the ``@ckernels.jit`` lowering (``jit/cpu_codegen.py``
``CkLower.lower_assign``) for an assignment of a variable or a ``cast``
expression: the value it returns is a new reference, which that assignment
owns (Numba's own path increfs a cast because a cast is a view; doing so
here would leak the new list).  Failing to allocate the list raises
``MemoryError`` in the function, as a list display does.
"""

from __future__ import annotations

from numba.core import cgutils, ir, types


def _list_types(lower, ty, value):
    """The source type of ``value`` when assigning it to a variable of list
    type ``ty`` needs a converted list (element types differ), else None."""
    if not isinstance(ty, types.List):
        return None
    if isinstance(value, ir.Expr) and value.op == "cast":
        value = value.value
    if not isinstance(value, ir.Var):
        return None
    fromty = lower.typeof(value.name)
    if not isinstance(fromty, types.List) or fromty.dtype == ty.dtype:
        return None
    return fromty, value


def lower_converted_list(lower, ty, inst):
    """The LLVM value (a new reference) of ``inst``'s value converted to the
    list type ``ty``, or None when Numba's own lowering applies."""
    found = _list_types(lower, ty, inst.value)
    if found is None:
        return None
    from numba.cpython.listobj import ListInstance
    fromty, var = found
    context, builder = lower.context, lower.builder
    src = ListInstance(context, builder, fromty, lower.loadvar(var.name))
    n = src.size
    dst = ListInstance.allocate(context, builder, ty, n)
    dst.size = n
    with cgutils.for_range(builder, n) as loop:
        item = context.cast(builder, src.getitem(loop.index), fromty.dtype, ty.dtype)
        dst.inititem(loop.index, item, incref=True)
    return dst.value


__all__ = ["lower_converted_list"]
