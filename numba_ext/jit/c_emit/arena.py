"""Appending to a ``var * T`` result on a device: the output parameter of a
function with a var result (``out.append(x)``, ``len(out)``), in C a pointer
to the work item's row state in the device arena.

The CPU gives such a function a :class:`~ckernels._numba.varbuilder.VarBuilderType`
(appends into the destination's arena); the device program types the
function with the same Numba type, so Numba's typing of ``out.append`` is the
CPU's, and emits the calls as ``ckernel/device_arena.h``'s row functions
(installed with the package, placed in front of the program with the
dialect's 64-bit atomic add)::

    ck_arow_float64_t *out;     ck_arow_append_float64(out, (double)x);

The kernel around the function (:mod:`ckernels.jit.device_append`) owns the
row state, stores its start and length, and the host retries and compacts.
"""

from __future__ import annotations

from .numba_types import _is_bool, _key, _unlit
from .strings import installed_header

_HEADER = "ckernel/device_arena.h"


def _builder_type():
    from ..._numba.varbuilder import VarBuilderType
    return VarBuilderType


def is_builder(t) -> bool:
    """Whether ``t`` is the output parameter of a var result."""
    return isinstance(t, _builder_type())


def atomic_add(d) -> str:
    """The dialect's ``CK_DA_ATOMIC_ADD(p, v)``: add to a 64-bit counter in
    global memory, giving the old value."""
    if d.name == "opencl":
        return "atom_add((volatile __global long *)(p), (long)(v))"
    if d.name == "cuda":
        return "((long long)atomicAdd((unsigned long long *)(p), (unsigned long long)(v)))"
    return "__atomic_fetch_add((p), (v), __ATOMIC_RELAXED)"


def element_ct(fe, t) -> str:
    """The C type of an element of a ``var * T`` result in the arena (a bool
    as its byte, as device bool arrays hold them)."""
    return fe.field_ct(_unlit(t.dtype))


def c_type(fe, t) -> str | None:
    """``ck_arow_<T>_t *`` for a var result's output parameter (the header
    and the row type of ``T`` declared in the program on first use); None
    for other types."""
    if not is_builder(t):
        return None
    d = fe.d
    prog = fe.prog
    if _HEADER not in prog.helpers:
        pragma = ("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
                  if d.name == "opencl" else "")
        prog.helpers[_HEADER] = (
            f"{pragma}#define CK_DEVICE_ARENA_DEVICE_ONLY 1\n"
            f"#define CK_DA_FN {d.function_prefix}\n#define CK_DA_I64 {d.int64}\n"
            f"#define CK_DA_ATOMIC_ADD(p, v) {atomic_add(d)}\n{installed_header('device_arena.h')}\n")
    key = _key(_unlit(t.dtype))
    name = f"ck_arow_{key}_t"
    prog.helper(name, f"CK_DEVICE_ARENA_ROW({key}, {element_ct(fe, t)}, {d.global_space})\n")
    return f"{name} *"


def call(fe, dst, tt, e, fnty, sig, loc) -> list[str] | None:
    """``out.append(x)`` and ``len(out)`` of the output parameter; None for
    other calls."""
    from numba.core import types
    if isinstance(fnty, types.BoundFunction) and is_builder(fnty.this):
        recv = _receiver(fe, e.func)
        tk = fnty.typing_key
        name = tk[-1] if isinstance(tk, tuple) else str(tk).rsplit(".", 1)[-1]
        if recv is None or name != "append" or len(e.args) != 1:
            raise fe.fail(f"'.{name}' of a var result's output parameter (only "
                          "out.append(x) and len(out) on devices)", loc)
        el = _unlit(fnty.this.dtype)
        x = fe.use_as(e.args[0], el, loc)
        if _is_bool(el):
            x = f"(({element_ct(fe, fnty.this)})({x} != 0))"
        out = [f"ck_arow_append_{_key(el)}({fe.use(recv, loc)}, {x});"]
        if fe.ct(tt) is not None:
            out.append(f"{dst} = 0;")
        return out
    if getattr(fnty, "typing_key", None) is len and len(e.args) == 1:
        if is_builder(fe.tyof(e.args[0])):
            return [f"{dst} = ({fe.ct(tt)}){fe.use(e.args[0], loc)}->len;"]
    return None


def _receiver(fe, func_var):
    """The output parameter a bound method (``out.append``) was taken from."""
    from numba.core import ir
    defn = fe.tir.func_ir.get_definition(func_var)
    if isinstance(defn, ir.Expr) and defn.op == "getattr":
        return defn.value
    return None
