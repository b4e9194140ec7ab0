"""The whole program of a jitted function (:func:`emit_kernel`): its entry
function and the kernel around it (:func:`entry_wrapper`, over
:func:`ckernels.context.device_program.kernel_wrapper`)."""

from __future__ import annotations

from ... import dtypes
from .. import structs as _structs
from ...context.device_program import KERNEL_NAME, kernel_wrapper
from ...dialects import Dialect
from ...device.base import time_element
from .numba_types import _unlit, _is_bool
from .program import EmittedKernel


def emit_kernel(py_func, arg_types, return_type, dialect: Dialect,
                error_model: str = "python") -> EmittedKernel:
    """The program for one kernel over ``arg_types`` -> ``return_type`` (Numba
    types) in ``dialect``, with the kernel of :func:`kernel_wrapper` around
    its entry function (every operand an array of the signature's types;
    ``EmittedKernel.entry`` and :func:`kernel_wrapper` make others)."""
    d = dialect
    prog = EmittedKernel(d, error_model)
    ret = _unlit(return_type)
    fe = prog.function(py_func, tuple(_unlit(a) for a in arg_types), ret)
    prog.entry = fe
    prog.finish(entry_wrapper(prog, [(_element_of(t), False) for t in arg_types],
                              _element_of(ret)))
    return prog


def _element_of(t):
    """The element type (a ``dtypes`` row or a struct) of a Numba type."""
    from numba.core import types
    t = _unlit(t)
    if isinstance(t, types.Record):
        return _structs.of_record(t)
    if isinstance(t, (types.NPDatetime, types.NPTimedelta)):    # int64 counts
        kind = "M" if isinstance(t, types.NPDatetime) else "m"
        return time_element(f"{kind}8[{t.unit}]")
    return dtypes.of_numba(t)


def entry_wrapper(prog: EmittedKernel, inputs, out, validity=None) -> str:
    """:func:`kernel_wrapper` around ``prog.entry`` (a jitted function);
    ``validity``: see :func:`kernel_wrapper` (null slots skipped); without
    it, with the contiguous variant where the element types allow one."""
    fe = prog.entry
    params = [(fe.ct(t), _is_bool(t)) for t in fe.arg_types]
    return kernel_wrapper(prog.dialect, fe.cname, params,
                          (fe.ct(fe.ret_type), _is_bool(fe.ret_type)),
                          inputs, out, validity=validity, contiguous=validity is None)


__all__ = ["emit_kernel", "entry_wrapper", "kernel_wrapper", "KERNEL_NAME"]
