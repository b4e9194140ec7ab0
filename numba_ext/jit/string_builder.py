"""The one-pass string builder: a string result built in one pass from the
"rope" of a returned concatenation.

A ``@ckernels.jit`` function with a ``string`` result usually returns a
concatenation::

    return "item-" + str(i)          # or f"item-{i}"

Numba evaluates that as written: ``str(i)`` allocates a Numba ``str``, each
``+`` allocates another, and the entry point then encodes the last one into
the destination arena.  For the entry points (and only for them), the jit
lowers a *rope variant* of the function instead: the same typed IR, but the
returned chain of ``+`` is replaced by a tuple of its leaves, and the entry
point writes the leaves straight into the arena -- the lengths summed, one
arena allocation, integers formatted into the arena bytes.  The function
called from Python or from other jitted code is unchanged.

What is recognised (:func:`find_rope`): the function's single ``return``
returns (through Numba's return ``cast``) a chain of ``+`` whose operands are
both Numba ``str`` (typed ``unicode_type`` by the ``+``), where every
intermediate value is a temporary defined once, in the return's block, and
used only by the chain.  Its leaves are then

* ``str(x)`` of an integer (any width, signed or unsigned) or a bool, also
  what an f-string's ``{x}`` becomes (``FORMAT_VALUE`` is ``str(x)`` in
  Numba) -- when that ``str(x)`` is itself a temporary used once; written in
  decimal (``"True"``/``"False"``) exactly as Python's ``str``;
* any other ``str`` value (constants, string arguments, results of calls,
  locals, ``str(float)`` -- Numba's own), copied as UTF-8.

Anything else keeps today's code (the entry point encodes the returned
``str``): a chain value used elsewhere (``s = "a" + str(i); n = len(s)``),
several ``return`` statements, an ``Optional`` result, a single leaf
(``return str(i)`` alone is still a chain of one: it is recognised too).
"""

from __future__ import annotations

import operator

import numpy as np
from numba.core import ir, types
from numba.extending import overload, register_jitable

from .._numba.allocator import allocate
from .._numba.memblock import memblock_from_address
from .._numba.strings import store_string
from .._numba.utf8 import load_intp, memcpy, store_u8, str_encode_into, str_utf8_nbytes

#: abi tag that names the rope variant of a function (its own mangled name)
ROPE_ABI_TAG = "ckrope"


class Rope:
    """A recognised chain: the return block, the statement positions to drop
    and the leaves ``[(kind, var)]`` (``kind`` is ``"str"`` or ``"num"``)."""

    __slots__ = ("label", "drop", "ret_index", "leaves")

    def __init__(self, label, drop, ret_index, leaves):
        self.label, self.drop, self.ret_index, self.leaves = label, drop, ret_index, leaves

    def __repr__(self):
        return f"Rope(leaves={[(k, getattr(v, 'name', v)) for k, v in self.leaves]})"


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
    return isinstance(d, (ir.Global, ir.FreeVar)) and d.value is str


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

    def walk(var):
        i = temp_def(var)
        if i is not None:
            e = body[i].value
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
                t = types.unliteral(typemap[e.args[0].name])
                if isinstance(t, (types.Integer, types.Boolean)):
                    drop.append(i)
                    leaves.append(("num", e.args[0]))
                    return
        t = typemap.get(var.name)
        if isinstance(t, types.StringLiteral) and _utf8_ok(t.literal_value):
            leaves.append(("const", t.literal_value))
            return
        if not isinstance(t, types.UnicodeType):
            raise _NotRope
        leaves.append(("str", var))

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
    t = types.unliteral(typemap[var.name])
    if kind == "str":
        return types.unicode_type
    return t


def variant_ir(func_ir, typemap, rope):
    """``(func_ir, typemap, restype)`` of the rope variant: the return block
    without the chain, returning the tuple of the leaves."""
    new_ir = func_ir.copy()
    blk = new_ir.blocks[rope.label]
    scope, loc = blk.scope, blk.terminator.loc
    tys = [leaf_type(typemap, k, v) for k, v in rope.leaves if k != "const"]
    tup_ty = types.Tuple(tys)
    tmap = dict(typemap)
    drop = set(rope.drop)
    items = [v for k, v in rope.leaves if k != "const"]
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
    the same library: its ``(fndesc, leaf tuple type)``, or None."""
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
    return fd, tup_ty, layout(rope)


def layout(rope):
    """``(pieces, constants)``: the store's layout of the leaves, in order --
    ``("const",)`` (the next constant) or ``("item", k)`` (the k-th item of the
    variant's tuple) -- and the constants' bytes: their total length, each
    one's length (int64 words) and their UTF-8 one after the other.  The
    layout names neither text nor lengths, so one store function serves every
    function of the same shape."""
    import struct
    out, lens, k = [], [], 0
    data = b""
    for kind, v in rope.leaves:
        if kind == "const":
            enc = v.encode("utf-8")
            if enc:
                out.append(("const",))
                lens.append(len(enc))
                data += enc
        else:
            out.append(("item", k))
            k += 1
    blob = struct.pack(f"<{len(lens) + 1}q", len(data), *lens) + data
    return tuple(out), blob


# ------------------------------------------------------------- the store --
@register_jitable
def _udigits(v):
    ten = np.uint64(10)
    n = 1
    while v >= ten:
        v //= ten
        n += 1
    return n


@register_jitable
def _uwrite(p, v, n):
    ten = np.uint64(10)
    q = p + n - 1
    for _ in range(n):
        store_u8(q, np.int64(v % ten) + 48)
        q -= 1
        v //= ten


@register_jitable
def _abs_u64(v):
    """``(|v| as uint64, v < 0)`` for an int64 (INT64_MIN included)."""
    if v < 0:
        return np.uint64(-(v + 1)) + np.uint64(1), True
    return np.uint64(v), False


def piece_nbytes(x):
    """Bytes of the decimal / UTF-8 text of a rope leaf (jitted code only)."""


def piece_write(x, p):
    """Write a rope leaf at address ``p``; the address after it (jitted code only)."""


@overload(piece_nbytes)
def _ov_piece_nbytes(x):
    if isinstance(x, types.UnicodeType):
        return lambda x: str_utf8_nbytes(x)
    if isinstance(x, types.Boolean):
        return lambda x: 4 if x else 5
    if isinstance(x, types.Integer):
        if x.signed:
            def impl(x):
                u, neg = _abs_u64(np.int64(x))
                return _udigits(u) + (1 if neg else 0)
            return impl
        return lambda x: _udigits(np.uint64(x))


@overload(piece_write)
def _ov_piece_write(x, p):
    if isinstance(x, types.UnicodeType):
        return lambda x, p: p + str_encode_into(x, p)
    if isinstance(x, types.Boolean):
        def impl_bool(x, p):
            if x:
                store_u8(p, 84)       # True
                store_u8(p + 1, 114)
                store_u8(p + 2, 117)
                store_u8(p + 3, 101)
                return p + 4
            store_u8(p, 70)           # False
            store_u8(p + 1, 97)
            store_u8(p + 2, 108)
            store_u8(p + 3, 115)
            store_u8(p + 4, 101)
            return p + 5
        return impl_bool
    if isinstance(x, types.Integer):
        if x.signed:
            def impl(x, p):
                u, neg = _abs_u64(np.int64(x))
                if neg:
                    store_u8(p, 45)   # '-'
                    p += 1
                n = _udigits(u)
                _uwrite(p, u, n)
                return p + n
            return impl

        def impl_u(x, p):
            u = np.uint64(x)
            n = _udigits(u)
            _uwrite(p, u, n)
            return p + n
        return impl_u


_store_functions: dict = {}


def store_function(pieces):
    """``store(arena, dst, leaves, constants)`` for a :func:`layout`: the
    summed length, one allocation from the arena, the pieces written in order
    (the constant ones copied from the address ``constants``), the
    ``ck_string`` at ``dst`` set.  One Python function per layout, compiled
    by Numba per leaf types (and kept, like any Numba subroutine: layouts
    name lengths, not text, so there are few)."""
    fn = _store_functions.get(pieces)
    if fn is None:
        nconst = sum(1 for piece in pieces if piece[0] == "const")
        sizes = ["load_intp(c)"] + [f"piece_nbytes(t[{piece[1]}])" for piece in pieces
                                    if piece[0] == "item"]
        lines = ["def rope_store(arena, dst, t, c):",
                 "    if arena == 0:",
                 "        raise ValueError('a string result needs a destination arena')",
                 "    n = " + " + ".join(sizes),
                 "    b, e = allocate(memblock_from_address(arena), n, 1)",
                 "    p = b",
                 f"    q = c + {8 * (nconst + 1)}"]
        glb = {"piece_nbytes": piece_nbytes, "piece_write": piece_write,
               "allocate": allocate, "memblock_from_address": memblock_from_address,
               "store_string": store_string, "memcpy": memcpy, "load_intp": load_intp}
        j = 0
        for piece in pieces:
            if piece[0] == "item":
                lines.append(f"    p = piece_write(t[{piece[1]}], p)")
            else:
                j += 1
                lines += [f"    m = load_intp(c + {8 * j})",
                          "    memcpy(p, q, m)",
                          "    p += m",
                          "    q += m"]
        lines.append("    store_string(dst, b, e)")
        ns: dict = {}
        exec(compile("\n".join(lines) + "\n", "<ckernels.jit rope store>", "exec"),
             glb, ns)
        fn = _store_functions[pieces] = ns["rope_store"]
    return fn


__all__ = ["find_rope", "lower_variant", "store_function", "ROPE_ABI_TAG", "Rope"]
