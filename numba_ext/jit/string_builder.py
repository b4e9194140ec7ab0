"""The one-pass string builder: a string result built in one pass from the
"rope" of a returned concatenation.

A ``@ckernels.jit`` function with a ``string`` result usually returns a
concatenation::

    return "item-" + str(i)          # or f"item-{i}", f"{name}-{i:05d}"

Numba evaluates that as written: ``str(i)`` allocates a Numba ``str``, each
``+`` allocates another, and the entry point then encodes the last one into
the destination arena.  For the entry points (and only for them), the jit
lowers a *rope variant* of the function instead: the same typed IR, but the
returned chain of ``+`` is replaced by a tuple of its leaves, and the entry
point writes the leaves straight into the arena
(:func:`ckernels.jit.string_elements.emit_store`: the lengths summed, one
arena allocation, numbers formatted into the arena bytes by libckernel's
``ckernel/text.h``).  The function called from Python or from other jitted
code is unchanged.

What is recognised (:func:`find_rope`): the function's single ``return``
returns (through Numba's return ``cast``) a chain of ``+`` whose operands are
both Numba ``str`` (typed ``unicode_type`` by the ``+``), where every
intermediate value is a temporary defined once, in the return's block, and
used only by the chain.  Its leaves are then

* ``str(x)`` of an integer (any width, signed or unsigned), a bool or a
  float (float32/float64) -- when that ``str(x)`` is itself a temporary used
  once -- written as Python's ``str``;
* an f-string field (:func:`ckernels.jit.fstrings.format_value`) of such a
  number or of a ``str``, with its constant format spec (``{i:05d}``,
  ``{x:.3f}``, ``{s:>10}``), written as Python's ``format``;
* a ``string`` argument typed as a view (:mod:`ckernels.jit.string_views`)
  in a field without a spec or as ``str(s)``: its UTF-8 bytes copied as
  they are (no Numba ``str`` made);
* a string constant, copied from the code;
* the pieces of ``"".join(L)`` of a list ``L`` built by appends just before
  (what CPython makes of an f-string of more than 30 pieces);
* any other ``str`` value (string arguments, results of calls, locals),
  copied as UTF-8.

Anything else keeps today's code (the entry point encodes the returned
``str``): a chain value used elsewhere (``s = "a" + str(i); n = len(s)``),
several ``return`` statements, an ``Optional`` result.  A single leaf
(``return str(i)`` alone, ``return f"{x:.2f}"``) is a chain of one.
"""

from __future__ import annotations

import operator

from numba.core import ir, types

from . import fstrings
from .string_elements import Piece, parse_spec, value_kind
from .string_views import is_view

#: abi tag that names the rope variant of a function (its own mangled name)
ROPE_ABI_TAG = "ckrope"


class Rope:
    """A recognised chain: the return block, the statement positions to drop
    and the leaves ``[(kind, var, spec)]``: ``("const", text, None)``,
    ``("str", var, None)`` (a Numba str), ``("num", var, spec)`` (a number;
    spec None: ``str(x)``), ``("text", var, spec)`` (a str with a spec) or
    ``("view", var, None)`` (a string view, copied as UTF-8)."""

    __slots__ = ("label", "drop", "ret_index", "leaves")

    def __init__(self, label, drop, ret_index, leaves):
        self.label, self.drop, self.ret_index, self.leaves = label, drop, ret_index, leaves

    def __repr__(self):
        return f"Rope(leaves={[(k, getattr(v, 'name', v), sp) for k, v, sp in self.leaves]})"


def _use_counts(func_ir):
    counts: dict[str, int] = {}
    for blk in func_ir.blocks.values():
        for st in blk.body:
            if isinstance(st, ir.Assign):
                v = st.value
                vs = [v] if isinstance(v, ir.Var) else (
                    v.list_vars() if isinstance(v, ir.Expr) else [])
            else:
                vs = st.list_vars()
            for v in vs:
                counts[v.name] = counts.get(v.name, 0) + 1
    return counts


def _is_str_builtin(func_ir, var):
    try:
        d = func_ir.get_definition(var)
    except Exception:       # noqa: BLE001 - no single definition: not ours
        return False
    return isinstance(d, (ir.Global, ir.FreeVar)) and d.value in (str, fstrings.str_value)


def _format_leaf(func_ir, typemap, e):
    """The leaf of an f-string field ``format_value(x, spec, conversion)``,
    or None (the field's Numba ``str`` is then an ordinary leaf)."""
    value, spec, conv = e.args
    text = fstrings.constant_text(func_ir, spec)
    conversion = fstrings.constant_text(func_ir, conv)
    if text is None or conversion is None:
        return None
    if is_view(typemap[value.name]):      # a string argument's bytes, as they are
        return ("view", value, None) if text == "" and conversion in ("", "s") else None
    kind = value_kind(typemap[value.name])
    if kind is None:
        return None
    if kind == "str":
        if conversion not in ("", "s"):
            return None
        return ("text", value, text) if text else ("str", value, None)
    if conversion and text:          # str(number) formatted as text: general path
        return None
    return ("num", value, text or None)


def find_rope(func_ir, typemap, calltypes, restype):
    """The :class:`Rope` of the returned value, or None (see the module doc)."""
    if not isinstance(restype, types.UnicodeType):
        return None
    rets = [(label, blk) for label, blk in func_ir.blocks.items()
            if isinstance(blk.terminator, ir.Return)]
    if len(rets) != 1:
        return None
    label, blk = rets[0]
    body = blk.body
    where = {}                      # var name -> index of its assignment in blk
    for i, st in enumerate(body):
        if isinstance(st, ir.Assign):
            where[st.target.name] = None if st.target.name in where else i
    ret_var = blk.terminator.value
    ri = where.get(ret_var.name)
    if ri is None:
        return None
    cast = body[ri].value
    if not (isinstance(cast, ir.Expr) and cast.op == "cast"):
        return None
    uses = _use_counts(func_ir)
    defs = func_ir._definitions

    def temp_def(var):
        """The assignment index of a temporary used once, defined once here."""
        i = where.get(var.name)
        if i is None or uses.get(var.name, 0) != 1 or len(defs.get(var.name, ())) != 1:
            return None
        return i

    drop, leaves = [], []

    def join_parts(i, e):
        """The values appended to ``L`` in ``"".join(L)`` (``e``, statement
        ``i``: how CPython compiles an f-string of more than 30 pieces), with
        the statements that go with them, or None."""
        if not (e.op == "call" and len(e.args) == 1 and not e.kws and e.vararg is None):
            return None
        fi = temp_def(e.func)
        g = body[fi].value if fi is not None else None
        if not (isinstance(g, ir.Expr) and g.op == "getattr" and g.attr == "join"):
            return None
        sep = typemap.get(g.value.name)
        if not (isinstance(sep, types.StringLiteral) and sep.literal_value == ""):
            return None
        lst = e.args[0]
        li = where.get(lst.name)
        bl = body[li].value if li is not None else None
        if not (isinstance(bl, ir.Expr) and bl.op == "build_list" and not bl.items
                and len(defs.get(lst.name, ())) == 1):
            return None
        parts, stmts, seen = [], [fi, li], 1      # the join's own use of L
        for j in range(li + 1, i):
            st = body[j]
            if not any(v.name == lst.name for v in st.list_vars()):
                continue
            a = st.value if isinstance(st, ir.Assign) else None
            if not isinstance(a, ir.Expr):
                return None
            if not (a.op == "getattr" and a.attr == "append" and
                    uses.get(st.target.name, 0) == 1):
                return None
            k = next((k for k in range(j + 1, i) if isinstance(body[k], ir.Assign)
                      and isinstance(body[k].value, ir.Expr) and body[k].value.op == "call"
                      and body[k].value.func.name == st.target.name), None)
            c = body[k].value if k is not None else None
            if c is None or len(c.args) != 1 or c.kws or uses.get(body[k].target.name, 0):
                return None
            parts.append(c.args[0])
            stmts += [j, k]
            seen += 1
        if seen != uses.get(lst.name, 0):
            return None
        return parts, stmts

    def walk(var):
        i = temp_def(var)
        if i is not None:
            e = body[i].value
            joined = join_parts(i, e) if isinstance(e, ir.Expr) else None
            if joined is not None:
                drop.append(i)
                drop.extend(joined[1])
                for part in joined[0]:
                    walk(part)
                return
            if isinstance(e, ir.Expr) and e.op == "binop" and e.fn is operator.add:
                sig = calltypes.get(e)
                if sig is not None and sig.return_type == types.unicode_type and all(
                        a == types.unicode_type for a in sig.args):
                    drop.append(i)
                    walk(e.lhs)
                    walk(e.rhs)
                    return
            if (isinstance(e, ir.Expr) and e.op == "call" and len(e.args) == 1
                    and not e.kws and e.vararg is None and _is_str_builtin(func_ir, e.func)):
                if value_kind(typemap[e.args[0].name]) in ("int", "bool", "float"):
                    drop.append(i)
                    leaves.append(("num", e.args[0], None))
                    return
                if is_view(typemap[e.args[0].name]):
                    drop.append(i)
                    leaves.append(("view", e.args[0], None))
                    return
            if fstrings.is_format_call(func_ir, e):
                leaf = _format_leaf(func_ir, typemap, e)
                if leaf is not None:
                    drop.append(i)
                    leaves.append(leaf)
                    return
        t = typemap.get(var.name)
        if isinstance(t, types.StringLiteral) and _utf8_ok(t.literal_value):
            leaves.append(("const", t.literal_value, None))
            return
        if not isinstance(t, types.UnicodeType):
            raise _NotRope
        leaves.append(("str", var, None))

    try:
        walk(cast.value)
    except _NotRope:
        return None
    if not drop:            # the returned value is a plain str: nothing to save
        return None
    return Rope(label, sorted(drop), ri, leaves)


class _NotRope(Exception):
    pass


def _utf8_ok(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:      # lone surrogates: Numba's encoder raises
        return False
    return True


def leaf_type(typemap, kind, var):
    if kind == "view":
        return typemap[var.name]
    if kind in ("str", "text"):
        return types.unicode_type
    return types.unliteral(typemap[var.name])


def variant_ir(func_ir, typemap, rope):
    """``(func_ir, typemap, restype)`` of the rope variant: the return block
    without the chain, returning the tuple of the leaves."""
    new_ir = func_ir.copy()
    blk = new_ir.blocks[rope.label]
    scope, loc = blk.scope, blk.terminator.loc
    tys = [leaf_type(typemap, k, v) for k, v, _ in rope.leaves if k != "const"]
    tup_ty = types.Tuple(tys)
    tmap = dict(typemap)
    drop = set(rope.drop)
    items = [v for k, v, _ in rope.leaves if k != "const"]
    leaf_names = list(dict.fromkeys(v.name for v in items))
    # the chain's temporaries are gone; the leaves' own ``del`` (their last
    # use was in the chain) moves after the tuple that takes them
    gone = {blk.body[i].target.name for i in drop} | set(leaf_names)
    deleted = {st.value for st in blk.body if isinstance(st, ir.Del)}
    leaf_names = [n for n in leaf_names if n in deleted]
    body = [st for i, st in enumerate(blk.body)
            if i not in drop and i != rope.ret_index
            and not (isinstance(st, ir.Del) and st.value in gone)]
    term = body.pop()          # the Return
    # not registered in the scope, which the function's own IR shares
    tup = ir.Var(scope, "$ck_rope", loc)
    ret = ir.Var(scope, "$ck_rope_ret", loc)
    body.append(ir.Assign(ir.Expr.build_tuple(items, loc), tup, loc))
    body.extend(ir.Del(name, loc) for name in leaf_names)
    body.append(ir.Assign(ir.Expr.cast(tup, loc), ret, loc))
    body.append(ir.Del(tup.name, loc))
    body.append(ir.Return(ret, term.loc))
    blk.body = body
    tmap[tup.name] = tup_ty
    tmap[ret.name] = tup_ty
    return new_ir, tmap, tup_ty


def lower_variant(lowerer):
    """Lower the rope variant of the function ``lowerer`` just lowered, into
    the same library: its ``(fndesc, leaf tuple type, layout)``, or None."""
    from numba.core import funcdesc
    fndesc = lowerer.fndesc
    rope = find_rope(lowerer.func_ir, fndesc.typemap, fndesc.calltypes, fndesc.restype)
    if rope is None or lowerer.generator_info is not None:
        return None
    new_ir, tmap, tup_ty = variant_ir(lowerer.func_ir, fndesc.typemap, rope)
    fd = funcdesc.PythonFunctionDescriptor.from_specialized_function(
        new_ir, tmap, tup_ty, fndesc.calltypes, mangler=lowerer.context.mangler,
        inline=fndesc.inline, noalias=fndesc.noalias,
        abi_tags=tuple(fndesc.abi_tags) + (ROPE_ABI_TAG,))
    # the variant shares the function's Environment (globals and the
    # constants of object-mode helpers such as print): Numba finds it by this
    # name (Environment.from_fndesc), and sets the global of that name when it
    # makes the function executable or loads it from the cache
    fd.env_name = fndesc.env_name
    low = type(lowerer)(lowerer.context, lowerer.library, fd, new_ir)
    # Lower.lower() for a normal function, except that the helpers Numba
    # names by content (the unwrap function of a raise with run-time
    # arguments), already defined by the function itself in this library,
    # are made linkonce_odr here: the linker keeps one of the identical copies
    low.emit_environment_object()
    low.genlower = None
    low.lower_normal_function(fd)
    low.context.post_lowering(low.module, low.library)
    for fn in low.module.functions:
        if fn.name.startswith("__excinfo_unwrap_args") and not fn.is_declaration:
            fn.linkage = "linkonce_odr"
    low.library.add_ir_module(low.module)
    return fd, tup_ty, layout(rope, tmap)


def layout(rope, typemap):
    """The store's layout of the leaves, in order: ``("const", bytes)`` or
    ``("item", k, kind, spec bytes or None)`` (the k-th item of the variant's
    tuple, written as a :class:`~ckernels.jit.string_elements.Piece` of
    ``kind``; the spec parsed for its value)."""
    out, k = [], 0
    for kind, v, spec in rope.leaves:
        if kind == "const":
            enc = v.encode("utf-8")
            if enc:
                out.append(("const", enc))
            continue
        parsed = None
        if spec:
            parsed = parse_spec(spec, "str" if kind == "text" else
                                value_kind(typemap[v.name]))
        out.append(("item", k, kind, parsed))
        k += 1
    return tuple(out)


def pieces(layout_, context, builder, tup_type, tup):
    """The :class:`~ckernels.jit.string_elements.Piece` list of a layout for
    the variant's returned tuple ``tup`` (an LLVM value of ``tup_type``)."""
    out = []
    for entry in layout_:
        if entry[0] == "const":
            out.append(Piece("const", entry[1]))
            continue
        _, k, kind, spec = entry
        out.append(Piece(kind, builder.extract_value(tup, k), tup_type[k], spec))
    return out


__all__ = ["find_rope", "lower_variant", "layout", "pieces", "ROPE_ABI_TAG", "Rope"]
