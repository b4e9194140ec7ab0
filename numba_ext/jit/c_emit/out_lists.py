"""Returned lists on devices: a ``var * T`` or ``var * string`` result that
the function returns as a list it builds (``return [w.upper() for w in
s.split()]``, ``return [x * 2.0 for x in row if x > 0]``, ``xs = []; ...
xs.append(v); return xs``).

The list is the result's row: the emitter gives the function the same output
parameter a function appending to ``out`` gets (:mod:`.arena`: a
``ck_arow_<T>_t *`` in the device arena for numbers, a ``ck_srow_t *`` of the
sizing and writing passes for strings), and every variable holding the list
is that pointer.  ``xs.append(v)`` is ``out.append(v)``, ``len(xs)`` is
``len(out)``, ``return xs`` ends the row.  So the kernels around the function
are those of the ``out.append`` form (:mod:`ckernels.jit.device_append`,
:mod:`ckernels.jit.device_split`).

Only a list that is made once (``[]`` or ``[a, b]``, not in a loop), then
only appended to, measured with ``len`` and returned is such a row; any other
use of a list (iterating it, indexing it, a second list) is a one-line
``NotSupportedError``.
"""

from __future__ import annotations

from .numba_types import _unlit

__all__ = ["OutList", "analyse", "assign", "call"]


class OutList:
    """The returned list of one function: ``names`` (the IR variables holding
    it), ``builder`` (the Numba type of the output parameter it stands for),
    ``param`` (its C parameter)."""

    param = "ck_ol"

    def __init__(self, names, builder, build_label):
        self.names = names
        self.builder = builder
        self.build_label = build_label


def _list_type():
    from numba.core import types
    return types.List


def _fail_use(fe, loc):
    return fe.fail("a list used other than by .append(), len() and return (on devices a "
                   "list is only the returned row)", loc)


def analyse(fe, builder) -> OutList | None:
    """The returned list of ``fe``'s function (whose output parameter has the
    Numba type ``builder``); refuses what is not such a list.  None for a
    ``var * string`` result that is not a built list (a split)."""
    from numba.core import ir
    from numba.core.analysis import compute_cfg_from_blocks
    fir = fe.tir.func_ir
    roots = []
    copies: dict = {}       # name -> source name
    for label, blk in fir.blocks.items():
        for st in blk.body:
            if not isinstance(st, ir.Assign):
                continue
            v = st.value
            if isinstance(v, ir.Expr) and v.op == "build_list":
                roots.append((st.target.name, label, st.loc))
            elif isinstance(v, ir.Var):
                copies.setdefault(st.target.name, []).append(v.name)
            elif isinstance(v, ir.Expr) and v.op == "cast":
                copies.setdefault(st.target.name, []).append(v.value.name)
    from . import arena as _arena
    if not roots and _arena.is_string_builder(builder):
        return None     # a returned split or row argument: c_emit.strings
    if len(roots) != 1:
        loc = roots[1][2] if roots else fir.loc
        raise fe.fail("a function returning other than one list it builds (on devices the "
                      "returned list is the result's row)" if not roots else
                      "a second list in a function", loc)
    names = {roots[0][0]}
    changed = True
    while changed:
        changed = False
        for name, srcs in copies.items():
            if name not in names and any(s in names for s in srcs):
                if not all(s in names for s in srcs):
                    raise fe.fail("a variable holding the returned list or another value",
                                  fir.loc)
                names.add(name)
                changed = True
    cfg = compute_cfg_from_blocks(fir.blocks)
    label = roots[0][1]
    for loop in cfg.loops().values():
        if label in loop.body:
            raise fe.fail("a list made in a loop (the returned row is made once)", roots[0][2])
    # every use: a copy, .append, len(), return
    appends = set()
    for blk in fir.blocks.values():
        for st in blk.body:
            if isinstance(st, ir.Del):
                continue
            if isinstance(st, ir.Return):
                if st.value.name not in names:
                    raise fe.fail("a return of other than the list the function builds "
                                  "(its result's row)", st.loc)
                continue
            if isinstance(st, ir.Assign):
                v = st.value
                if isinstance(v, ir.Var) or (isinstance(v, ir.Expr) and v.op == "cast"):
                    continue    # copies: checked above
                if isinstance(v, ir.Expr) and v.op == "getattr" and v.value.name in names:
                    if v.attr != "append":
                        raise fe.fail(f"'.{v.attr}' of a list (only .append(x), len() and "
                                      "return on devices)", st.loc)
                    appends.add(st.target.name)
                    continue
                if isinstance(v, ir.Expr) and v.op == "call":
                    used = {a.name for a in v.args}
                    if v.func.name in appends:
                        if len(v.args) != 1 or used & names:
                            raise _fail_use(fe, st.loc)
                        continue
                    if used & names:
                        if getattr(fe.tyof(v.func), "typing_key", None) is len and \
                                len(v.args) == 1:
                            continue
                        raise _fail_use(fe, st.loc)
                    continue
                if isinstance(v, ir.Expr) and v.op == "build_list":
                    continue
                used = {x.name for x in v.list_vars()} if isinstance(v, ir.Expr) else set()
                if used & names:
                    raise _fail_use(fe, st.loc)
                continue
            if {x.name for x in st.list_vars()} & names:
                raise _fail_use(fe, st.loc)
    return OutList(names, builder, label)


def assign(fe, target, value, loc) -> list[str]:
    """``target = value`` for a variable holding the returned list: the made
    list is the output parameter, emptied (its items appended); a copy is
    the pointer."""
    from numba.core import ir
    from . import arena as _arena
    dst = fe.var(target.name)
    if isinstance(value, ir.Expr) and value.op == "build_list":
        out = [f"{dst} = {OutList.param};"]
        if _arena.is_string_builder(fe.out_list.builder):
            out.append(f"{dst}->cnt = {dst}->c0; {dst}->at = {dst}->a0;")
        else:
            out.append(f"{dst}->len = 0;")
        for item in value.items:
            out += _arena.append_item(fe, dst, fe.out_list.builder, item, loc)
        return out
    src = value if isinstance(value, ir.Var) else value.value
    return [f"{dst} = {fe.var(src.name)};"]


def call(fe, dst, tt, e, fnty, loc) -> list[str] | None:
    """``xs.append(v)`` and ``len(xs)`` of the returned list; None for other
    calls."""
    from numba.core import ir, types
    ol = getattr(fe, "out_list", None)
    if ol is None:
        return None
    from . import arena as _arena
    if isinstance(fnty, types.BoundFunction) and isinstance(_unlit(fnty.this), _list_type()):
        defn = fe.tir.func_ir.get_definition(e.func)
        if isinstance(defn, ir.Expr) and defn.op == "getattr" and defn.value.name in ol.names:
            out = _arena.append_item(fe, fe.var(defn.value.name), ol.builder, e.args[0], loc)
            if fe.ct(tt) is not None:
                out.append(f"{dst} = 0;")
            return out
        return None
    if getattr(fnty, "typing_key", None) is len and len(e.args) == 1 and \
            e.args[0].name in ol.names:
        r = fe.var(e.args[0].name)
        if _arena.is_string_builder(ol.builder):
            return [f"{dst} = ({fe.ct(tt)})({r}->cnt - {r}->c0);"]
        return [f"{dst} = ({fe.ct(tt)}){r}->len;"]
    return None
