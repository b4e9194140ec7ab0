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

A ``var * string`` result's output parameter (the CPU's
:class:`~ckernels._numba.varstrings.VarStringBuilderType`) is a
``ck_srow_t *``: ``out.append(s)`` of a string that is a view (an argument, a
slice, a piece of a split, a row's string, a literal) counts the string and
its bytes in the sizing pass and writes its offset and bytes in the writing
pass (:mod:`ckernels.jit.device_split`): the bytes are known before they are
written, so no arena is needed.  Text built in the function
(``out.append(w.upper())``, ``out.append(f"{w}-{i}")``) is sized the same
way, by the string-length functions of ``string(...)`` results
(:mod:`.string_results`): built just before its append, it is written
straight into the row's bytes (the sink is the row); otherwise into the work
item's scratch text, then copied by the append.
"""

from __future__ import annotations

from .numba_types import _is_bool, _key, _unlit
from .strings import installed_header

_HEADER = "ckernel/device_arena.h"


def _builder_type():
    from ..._numba.varbuilder import VarBuilderType
    return VarBuilderType


def is_builder(t) -> bool:
    """Whether ``t`` is the output parameter of a var result of numbers or
    bools (``var * T`` or ``var * ?T``: a row in the device arena)."""
    return isinstance(t, _builder_type()) or is_option_builder(t)


def is_option_builder(t) -> bool:
    """Whether ``t`` is the output parameter of a ``var * ?T`` result of
    numbers or bools (Numba's ``VarOptionBuilder`` of a number): a
    ``ck_aorow_<T>_t`` whose items have presence bytes in the arena's byte
    twin (``out.append(None)`` appends a null, value slot 0)."""
    return isinstance(t, _option_builder_type()) and not t.text


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


def _string_builder_type():
    from ..._numba.varstrings import VarStringBuilderType
    return VarStringBuilderType


def _option_builder_type():
    from ..._numba.varoptions import VarOptionBuilderType
    return VarOptionBuilderType


def is_option_string_builder(t) -> bool:
    """Whether ``t`` is the output parameter of a ``var * ?string`` result
    (Numba's ``VarOptionBuilder`` of text): a ``ck_srow_t`` whose items have
    presence bytes (``out.append(None)`` appends a null, a slot of length 0)."""
    return isinstance(t, _option_builder_type()) and t.text


SROW_T = "ck_srow_t"


def is_string_builder(t) -> bool:
    """Whether ``t`` is the output parameter of a ``var * string`` or ``var *
    ?string`` result (both rows are a ``ck_srow_t``)."""
    return isinstance(t, _string_builder_type()) or is_option_string_builder(t)


def _srow_c(fe) -> str:
    """``ck_srow_t``: a row of a ``var * string`` result being built (``w``:
    the writing pass; ``cnt``/``at``: strings and bytes so far, from the row's
    first string / byte in the writing pass, ``c0``/``a0`` the first; ``o``/``d``: the
    strings' offsets and the data buffer; ``pr``: per string its presence
    byte, written by a ``var * ?string`` row only)."""
    d = fe.d
    return (f"typedef struct {{ int w; {d.int64} c0; {d.int64} a0; {d.int64} cnt; "
            f"{d.int64} at; "
            f"{d.pointer(d.int64)}o; "
            f"{d.pointer(d.uint8)}d; "
            f"{d.pointer(d.uint8)}pr; }} {SROW_T};\n")


def c_type(fe, t) -> str | None:
    """``ck_arow_<T>_t *`` for a var result's output parameter (the header
    and the row type of ``T`` declared in the program on first use); None
    for other types."""
    if is_string_builder(t):
        return f"{fe.prog.helper(SROW_T, _srow_c(fe))} *"
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
    kind = "OPTION_ROW" if is_option_builder(t) else "ROW"
    name = f"ck_aorow_{key}_t" if is_option_builder(t) else f"ck_arow_{key}_t"
    prog.helper(name, f"CK_DEVICE_ARENA_{kind}({key}, {element_ct(fe, t)}, {d.global_space})\n")
    return f"{name} *"


def call(fe, dst, tt, e, fnty, sig, loc) -> list[str] | None:
    """``out.append(x)`` and ``len(out)`` of the output parameter; None for
    other calls (those of a returned list: :mod:`.out_lists`)."""
    from numba.core import types
    if isinstance(fnty, types.BoundFunction) and (is_builder(fnty.this) or
                                                  is_string_builder(fnty.this)):
        recv = _receiver(fe, e.func)
        tk = fnty.typing_key
        name = tk[-1] if isinstance(tk, tuple) else str(tk).rsplit(".", 1)[-1]
        what = ("a var * ?string" if is_option_string_builder(fnty.this) else
                "a var * ?T" if is_option_builder(fnty.this) else
                "a var * string" if is_string_builder(fnty.this) else "a var")
        if recv is None or name != "append" or len(e.args) != 1:
            raise fe.fail(f"'.{name}' of {what} result's output parameter (only "
                          "out.append(x) and len(out) on devices)", loc)
        out = append_item(fe, fe.use(recv, loc), fnty.this, e.args[0], loc)
        if fe.ct(tt) is not None:
            out.append(f"{dst} = 0;")
        return out
    if getattr(fnty, "typing_key", None) is len and len(e.args) == 1:
        if is_string_builder(fe.tyof(e.args[0])):
            r = fe.use(e.args[0], loc)
            return [f"{dst} = ({fe.ct(tt)})({r}->cnt - {r}->c0);"]
        if is_builder(fe.tyof(e.args[0])):
            return [f"{dst} = ({fe.ct(tt)}){fe.use(e.args[0], loc)}->len;"]
    return None


def append_item(fe, row: str, builder, item, loc) -> list[str]:
    """The C lines appending the IR variable ``item`` to the row ``row`` (a C
    expression: the row state pointer) of the output parameter type
    ``builder``."""
    if is_string_builder(builder):
        return _append_string(fe, row, item, loc, is_option_string_builder(builder))
    el = _unlit(builder.dtype)
    if is_option_builder(builder):
        return _append_option(fe, row, builder, item, loc)
    x = fe.use_as(item, el, loc)
    if _is_bool(el):
        x = f"(({element_ct(fe, builder)})({x} != 0))"
    return [f"ck_arow_append_{_key(el)}({row}, {x});"]


def _append_option(fe, row: str, builder, item, loc) -> list[str]:
    """``out.append(x)`` of a ``var * ?T`` row of numbers or bools: ``x``
    None (a null: value slot 0, presence byte 0), an optional number (its
    presence) or a number (present)."""
    from numba.core import types
    el = _unlit(builder.dtype)
    ect = element_ct(fe, builder)
    fn = f"ck_aorow_append_{_key(el)}"
    t = _unlit(fe.tyof(item))
    if isinstance(t, (types.NoneType, types.Omitted)):
        return [f"{fn}({row}, ({ect})0, 0);"]
    if isinstance(t, types.Optional):
        vt = _unlit(t.type)
        if not isinstance(vt, (types.Number, types.Boolean)):
            raise fe.fail(f"out.append() of a {t} to a var * ?{el} result", loc)
        v = fe.use(item, loc)
        x = fe.cast(f"({v}).v", vt, el)
        if _is_bool(el):
            x = f"({x} != 0)"
        return [f"{fn}({row}, ({ect})({x}), ({v}).ok);"]
    if not isinstance(t, (types.Number, types.Boolean)):
        raise fe.fail(f"out.append() of a {t} to a var * ?{el} result", loc)
    x = fe.use_as(item, el, loc)
    if _is_bool(el):
        x = f"({x} != 0)"
    return [f"{fn}({row}, ({ect})({x}), 1);"]


def _append_string(fe, r, item, loc, option: bool = False) -> list[str]:
    """``out.append(s)`` of a ``var * string`` result: ``s`` a view (copied
    in the writing pass) or text built in the function (written straight
    into the row when built just before, else read from the scratch
    buffer).  With ``option`` (a ``var * ?string`` row) ``s`` may also be
    ``None`` or an optional string: a null item is a slot of length 0 with
    presence byte 0, any other item has presence byte 1."""
    from numba.core import types
    from . import strings as _strings
    t = _unlit(fe.tyof(item))
    i64 = fe.d.int64
    if option and isinstance(t, (types.NoneType, types.Omitted)):
        return [f"{{ {SROW_T} *ck_r = {r};",
                "  if (ck_r->w) { ck_r->o[ck_r->cnt] = ck_r->at; ck_r->pr[ck_r->cnt] = 0; }",
                "  ck_r->cnt += 1; }"]
    if option and isinstance(t, types.Optional) and _strings.is_str(t.type):
        if fe.string_built(item):
            raise fe.fail("out.append() of text built in the function that may be None, to "
                          "a var * ?string result on a device (append None and the built "
                          "text in separate branches)", loc)
        v = fe.use(item, loc)
        return [f"{{ {SROW_T} *ck_r = {r}; {i64} ck_n = {v}.ok ? {v}.v.n : 0;",
                f"  if (ck_r->w) {{ ck_r->o[ck_r->cnt] = ck_r->at; ck_r->pr[ck_r->cnt] = {v}.ok;",
                f"      for ({i64} ck_j = 0; ck_j < ck_n; ck_j++) ck_r->d[ck_r->at + ck_j] = "
                f"({v}.v.p)[ck_j]; }}",
                "  ck_r->cnt += 1; ck_r->at += ck_n; }"]
    if not _strings.is_str(fe.tyof(item)):
        what = "var * ?string" if option else "var * string"
        raise fe.fail(f"out.append() of a {fe.tyof(item)} to a {what} result", loc)
    sp, p, n = _strings.operand(fe, item, loc, built_ok=True)
    # text built into the row in place is not copied onto itself
    same = f"    if (({p}) != ck_r->d + ck_r->at)" if sp == "g" else "    "
    mark = " ck_r->pr[ck_r->cnt] = 1;" if option else ""
    return [f"{{ {SROW_T} *ck_r = {r}; {i64} ck_n = {n};",
            f"  if (ck_r->w) {{ ck_r->o[ck_r->cnt] = ck_r->at;{mark}",
            same,
            f"      for ({i64} ck_j = 0; ck_j < ck_n; ck_j++) ck_r->d[ck_r->at + ck_j] = "
            f"({p})[ck_j]; }}",
            "  ck_r->cnt += 1; ck_r->at += ck_n; }"]


def _receiver(fe, func_var):
    """The output parameter a bound method (``out.append``) was taken from."""
    from numba.core import ir
    defn = fe.tir.func_ir.get_definition(func_var)
    if isinstance(defn, ir.Expr) and defn.op == "getattr":
        return defn.value
    return None
