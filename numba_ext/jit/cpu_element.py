"""The element function of a jitted signature that the direct emitter
(:func:`ckernels.jit.cpu_codegen.element_direct`) does not take: null-aware
signatures (``?T`` arguments as ``None`` or a value, ``?R`` results with a
validity byte), struct results holding strings, results Numba types as
``Optional``.  Generated as Python source and compiled by Numba
(``compile_subroutine`` in :func:`~ckernels.jit.cpu_codegen.build_trampolines`);
string arguments are views where the function takes them, Numba ``str``
otherwise; plus the intrinsics it and the option rows load and store
elements with."""

from __future__ import annotations

import functools

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from .string_elements import (load_string, load_view, store_string_region,
                              store_string_result)
from .struct_results import (has_struct_strings, store_struct, struct_store_plan,
                             struct_string_storer)

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i64 = ir.IntType(64)


# ------------------------------------------------------------- intrinsics --
@functools.lru_cache(maxsize=None)
def loader(nbty):
    """Intrinsic ``load(ptr: voidptr) -> nbty`` reading one element."""
    @intrinsic
    def _ck_load(typingctx, ptr):
        if ptr != types.voidptr:
            return None

        def codegen(context, builder, sig, args):
            p = builder.bitcast(args[0], context.get_data_type(nbty).as_pointer())
            return context.unpack_value(builder, nbty, p)
        return nbty(types.voidptr), codegen
    return _ck_load


@functools.lru_cache(maxsize=None)
def storer(nbty):
    """Intrinsic ``store(ptr: voidptr, value)`` writing one element (casting
    the value to ``nbty`` as Numba's return conversion would)."""
    @intrinsic
    def _ck_store(typingctx, ptr, value):
        if ptr != types.voidptr:
            return None
        if isinstance(value, types.NoneType):
            # a function that never returns normally (it always raises) is
            # typed as returning none: nothing to store
            def codegen_none(context, builder, sig, args):
                return context.get_dummy_value()
            return types.none(types.voidptr, value), codegen_none
        if isinstance(nbty, types.Record):
            plan = struct_store_plan(nbty, value)

            def codegen_struct(context, builder, sig, args):
                store_struct(context, builder, plan, args[1], args[0])
                return context.get_dummy_value()
            return types.none(types.voidptr, value), codegen_struct
        if value != nbty and typingctx.can_convert(value, nbty) is None:
            return None

        def codegen(context, builder, sig, args):
            v = context.cast(builder, args[1], sig.args[1], nbty)
            p = builder.bitcast(args[0], context.get_data_type(nbty).as_pointer())
            context.pack_value(builder, nbty, v, p)
            return context.get_dummy_value()
        return types.none(types.voidptr, value), codegen
    return _ck_store


@intrinsic
def _is_null(typingctx, ptr):
    """Whether a source pointer is NULL (a null ``?T`` argument)."""
    if ptr != types.voidptr:
        return None

    def codegen(context, builder, sig, args):
        return builder.icmp_unsigned("==", builder.ptrtoint(args[0], _i64),
                                     ir.Constant(_i64, 0))
    return types.boolean(types.voidptr), codegen


@intrinsic
def _set_flag(typingctx, ptr, offset, value):
    """``((uint8 *)ptr)[offset] = value``: the validity byte of a ``?R``
    result (``ck_jit_option_desc``, ``ckernel/jit.h``)."""
    if ptr != types.voidptr or not isinstance(offset, types.IntegerLiteral):
        return None

    def codegen(context, builder, sig, args):
        p = builder.gep(builder.bitcast(args[0], _i8p), [ir.Constant(_i64, offset.literal_value)])
        builder.store(ir.Constant(_i8, 1 if value.literal_value else 0), p)
        return context.get_dummy_value()
    if not isinstance(value, types.BooleanLiteral):
        return None
    return types.none(ptr, offset, value), codegen


# ---------------------------------------------------------- element source --
def element_function(user_dispatcher, args, ret, views=False):
    """Generate and exec the element function for one signature (``args``,
    ``ret``: element types, :class:`~ckernels.jit.signature.Signature`).
    Null-aware signatures: a ``?T`` argument whose pointer is NULL is None
    (``Optional(T)`` in the function); a ``?R`` result writes its value and
    then a validity byte after it (0 for None).  ``views``: string arguments
    are loaded as views (:func:`view_arg_types` said the function takes
    them), else as Numba ``str``."""
    n = len(args)
    params = [f"s{i}" for i in range(n)]
    glb = {"_user": user_dispatcher, "_nil": _is_null, "_flag": _set_flag}
    call_args = []
    for i, e in enumerate(args):
        vt = e.value if getattr(e, "option", False) else e
        if vt.kind == "s":
            glb[f"_ld{i}"] = load_view if views else load_string
        else:
            glb[f"_ld{i}"] = loader(vt.numba)
        if getattr(e, "option", False):
            call_args.append(f"(None if _nil(s{i}) else _ld{i}(s{i}))")
        else:
            call_args.append(f"_ld{i}(s{i})")
    call = f"_user({', '.join(call_args)})"
    rv = ret.value if getattr(ret, "option", False) else ret
    if rv.kind == "s":
        # with views, ``arena`` is the call's result region (region_result)
        glb["_st"] = store_string_region if views else store_string_result
        store = "_st(arena, dst, {})"
    elif has_struct_strings(rv):   # arena: the address of the arenas, one per field
        glb["_st"] = struct_string_storer(rv.numba)
        store = "_st(arena, dst, {})"
    else:
        glb["_st"] = storer(rv.numba)
        store = "_st(dst, {})"
    if getattr(ret, "option", False):
        body = (f"    r = {call}\n"
                f"    if r is None:\n"
                f"        _flag(dst, {rv.size}, False)\n"
                f"    else:\n"
                f"        {store.format('r')}\n"
                f"        _flag(dst, {rv.size}, True)\n")
    else:
        body = f"    {store.format(call)}\n"
    src = f"def _ck_elem(dst, {''.join(p + ', ' for p in params)}arena):\n{body}"
    ns: dict = {}
    exec(compile(src, f"<ckernels.jit element {ret.name}({', '.join(e.name for e in args)})>",
                 "exec"),
         glb, ns)
    fn = ns["_ck_elem"]
    sig = types.none(*([types.voidptr] * (n + 1) + [types.intp]))
    return fn, sig, src


def region_result(args, ret, views) -> tuple | None:
    """When the element function of :func:`element_function` stores its
    ``string`` (or ``?string``) result through the call's result region --
    views in: the entry points then make the region and pass its address as
    the arena -- the indices of the string arguments (the region's size
    hint); else None."""
    rv = ret.value if getattr(ret, "option", False) else ret
    if not views or rv.kind != "s":
        return None
    return tuple(j for j, e in enumerate(args)
                 if (e.value if getattr(e, "option", False) else e).kind == "s")


__all__ = ["loader", "storer", "element_function", "region_result"]
