"""Struct results of jitted functions (CPU): how a returned value is written
into the struct element of the result.

:func:`struct_store_plan` checks what the function returns against the
struct (a tuple with one item per field in field order, nested tuples for
nested structs and fixed dims; a namedtuple with the struct's field names; a
struct value of the same type) and :func:`store_struct` writes it.

A struct holding ``string`` fields (at any nesting level; var dims are
refused in results) needs arenas for their text: its kernels are
``ck_jit_struct_kernel`` (``ckernel/jit.h``), with one arena per string field
-- the ``blockref`` of that field's arrmeta in the destination, so each
field's text lands in the arena the result's arrmeta owns for it -- and the
entry points hand the element code the address of those arenas where a
``string`` result gets its one arena.  :func:`struct_string_storer` writes
the other fields first (string slots empty), then each string field's text
into its arena (a Numba ``str``, a ``CkString`` view of an argument, copied;
``None`` is a ``TypeError`` naming the field).
"""

from __future__ import annotations

import functools

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload, register_jitable

from .._numba.stringtype import CkStringType, ck_string_type
from ..errors import JitOnlyError
from .string_elements import store_string_result

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i64 = ir.IntType(64)


def struct_store_plan(rec, value, where="result"):
    """How a value the function returns is written into a struct ``rec``: a
    nested plan ``("copy", size)`` (a struct of the same type), ``("fields",
    [(offset, index, subplan)])`` (tuples in field order, namedtuples by field
    name; nested structs and fixed dims take nested tuples) or ``("scalar",
    from_type, to_type)``.  A value of another shape is a typing error that
    names the field."""
    from numba.core.errors import TypingError
    if isinstance(rec, types.Record):
        if isinstance(value, types.Record):
            if value != rec:
                raise TypingError(f"ckernels.jit: the {where} is a struct of another type "
                                  f"({value}) than the signature's")
            # string slots are cleared after the copy (they would point into
            # the argument's arenas); struct_string_storer writes them
            return ("copy", rec.size, [off for off, _, _ in _string_leaves(rec, value)])
        names = list(rec.fields)
        if isinstance(value, types.BaseNamedTuple):
            have = list(value.fields)
            if sorted(have) != sorted(names):
                raise TypingError(f"ckernels.jit: the {where} is a namedtuple with fields "
                                  f"({', '.join(have)}); the struct has "
                                  f"({', '.join(names)})")
            order = [have.index(n) for n in names]
        elif isinstance(value, types.BaseTuple):
            if len(value) != len(names):
                raise TypingError(f"ckernels.jit: the {where} is a tuple of {len(value)} "
                                  f"items; the struct has {len(names)} fields "
                                  f"({', '.join(names)})")
            order = list(range(len(names)))
        else:
            raise TypingError(f"ckernels.jit: the {where} is {value}; a struct result is "
                              "returned as a tuple (one item per field, in order), a "
                              "namedtuple with the struct's field names, or a struct")
        return ("fields", [(rec.offset(n), i,
                            struct_store_plan(rec.typeof(n), value[i], f"{where}.{n}"))
                           for n, i in zip(names, order)])
    if isinstance(rec, types.NestedArray):
        n = rec.shape[0]
        inner = (rec.dtype if len(rec.shape) == 1 else
                 types.NestedArray(rec.dtype, rec.shape[1:]))
        step = rec.strides[0]
        if not isinstance(value, types.BaseTuple) or len(value) != n:
            raise TypingError(f"ckernels.jit: the {where} is {value}; a field of {n} "
                              "elements takes a tuple of that many")
        return ("fields", [(k * step, k, struct_store_plan(inner, value[k], f"{where}[{k}]"))
                           for k in range(n)])
    if isinstance(rec, CkStringType):
        if not _text_value(value):
            raise TypingError(f"ckernels.jit: the {where} is {value}; the field is a string")
        return ("string",)
    if not isinstance(value, (types.Boolean, types.Integer, types.Float, types.Complex)):
        raise TypingError(f"ckernels.jit: the {where} is {value}; the field is {rec}")
    return ("scalar", value, rec)


def _text_value(t) -> bool:
    """A value a string field of a struct result is written from: a Numba
    ``str``, a ``CkString`` view or an ``Optional`` str (None: an error)."""
    t = types.unliteral(t)
    return (isinstance(t, (types.UnicodeType, CkStringType)) or
            (isinstance(t, types.Optional) and isinstance(t.type, types.UnicodeType)))


def _string_leaves(rec, value, base=0, access="r", record=None, names=()):
    """The string fields of struct ``rec`` written from ``value``, depth-first
    in field order (the order of ``ck_jit_struct_kernel.arenas``):
    ``[(offset in the struct, source expression of the value, field path)]``.
    Items of tuples are ``r[i]``; a field of a Record value is read at its
    offset (``_vat(record, offset)``: a ``CkString`` view)."""
    out = []
    if isinstance(rec, types.Record):
        fields = list(rec.fields)
        if isinstance(value, types.Record):
            rec_expr, rel = (access, 0) if record is None else record
            for n in fields:
                out += _string_leaves(rec.typeof(n), value.typeof(n), base + rec.offset(n),
                                      access, (rec_expr, rel + rec.offset(n)), names + (n,))
            return out
        if isinstance(value, types.BaseNamedTuple):
            have = list(value.fields)
            order = [have.index(n) for n in fields]
        else:
            order = range(len(fields))
        for n, i in zip(fields, order):
            out += _string_leaves(rec.typeof(n), value[i], base + rec.offset(n),
                                  f"{access}[{i}]", None, names + (n,))
        return out
    if isinstance(rec, CkStringType):
        expr = access if record is None else f"_vat({record[0]}, {record[1]})"
        out.append((base, expr, ".".join(names)))
    return out


def store_struct(context, builder, plan, value, ptr):
    """Write ``value`` at ``ptr`` (``i8*``) following :func:`struct_store_plan`."""
    kind = plan[0]
    if kind == "copy":
        src = builder.bitcast(value, _i8p)
        dst = builder.bitcast(ptr, _i8p)
        cgutils.memcpy(builder, dst, src, ir.Constant(_i64, plan[1]))
        for off in plan[2]:
            cgutils.memset(builder, builder.gep(dst, [ir.Constant(_i64, off)]),
                           ir.Constant(_i64, 16), 0)
    elif kind == "string":   # an empty slot: struct_string_storer writes the text
        cgutils.memset(builder, builder.bitcast(ptr, _i8p), ir.Constant(_i64, 16), 0)
    elif kind == "fields":
        base = builder.bitcast(ptr, _i8p)
        for off, idx, sub in plan[1]:
            store_struct(context, builder, sub, builder.extract_value(value, idx),
                         builder.gep(base, [ir.Constant(_i64, off)]))
    else:
        _, fromty, toty = plan
        v = context.cast(builder, value, fromty, toty)
        context.pack_value(builder, toty, v,
                           builder.bitcast(ptr, context.get_data_type(toty).as_pointer()))


@functools.lru_cache(maxsize=None)
def fields_storer(rec):
    """Intrinsic ``store(ptr: voidptr, value)`` writing a returned value into
    the struct ``rec`` at ``ptr`` (:func:`struct_store_plan`; string slots
    are left empty)."""
    @intrinsic
    def _ck_store_struct(typingctx, ptr, value):
        if ptr != types.voidptr:
            return None
        if isinstance(value, types.NoneType):   # the function always raises
            def codegen_none(context, builder, sig, args):
                return context.get_dummy_value()
            return types.none(types.voidptr, value), codegen_none
        plan = struct_store_plan(rec, value)

        def codegen(context, builder, sig, args):
            store_struct(context, builder, plan, args[1], args[0])
            return context.get_dummy_value()
        return types.none(types.voidptr, value), codegen
    return _ck_store_struct


@intrinsic
def _vat(typingctx, rec, offset):
    """The ``ck_string`` at ``offset`` of a Record value, as a ``CkString``."""
    if not isinstance(rec, types.Record) or not isinstance(offset, types.IntegerLiteral):
        return None

    def codegen(context, builder, sig, args):
        p = builder.gep(builder.bitcast(args[0], _i8p),
                        [ir.Constant(_i64, offset.literal_value)])
        words = builder.bitcast(p, _i64.as_pointer())
        st = cgutils.create_struct_proxy(ck_string_type)(context, builder)
        st.begin = builder.load(words)
        st.end = builder.load(builder.gep(words, [ir.Constant(_i64, 1)]))
        return st._getvalue()
    return ck_string_type(rec, offset), codegen


@intrinsic
def _arena_at(typingctx, table, k):
    """``((intptr_t *)table)[k]``: the arena of string field ``k``
    (``ck_jit_struct_kernel.arenas``)."""
    if not isinstance(table, types.Integer) or not isinstance(k, types.IntegerLiteral):
        return None

    def codegen(context, builder, sig, args):
        t = builder.inttoptr(context.cast(builder, args[0], sig.args[0], types.intp),
                             _i64.as_pointer())
        return builder.load(builder.gep(t, [ir.Constant(_i64, k.literal_value)]))
    return types.intp(table, k), codegen


@intrinsic
def _at(typingctx, ptr, offset):
    """``ptr + offset`` (voidptr)."""
    if ptr != types.voidptr or not isinstance(offset, types.IntegerLiteral):
        return None

    def codegen(context, builder, sig, args):
        return builder.gep(builder.bitcast(args[0], _i8p),
                           [ir.Constant(_i64, offset.literal_value)])
    return types.voidptr(ptr, offset), codegen


def _none_field(path):
    """A jitted function raising the TypeError of a None string field."""
    msg = (f"ckernels.jit: the function returned None for string field '{path}' of the "
           "struct result")

    @register_jitable
    def fail():
        raise TypeError(msg)
    return fail


@functools.lru_cache(maxsize=None)
def struct_string_storer(rec):
    """A function ``store(arenas, dst, value)`` (jitted code only) writing a
    returned ``value`` into the struct ``rec`` at ``dst`` when ``rec`` holds
    strings: the other fields as :func:`storer` writes them (string slots
    empty), then each string field's text into its own arena --
    ``arenas`` is the address of ``ck_jit_struct_kernel.arenas`` (one per
    string field, depth-first in field order, ``ckernel/jit.h``)."""
    store_fields = fields_storer(rec)

    def store(arenas, dst, value):
        raise JitOnlyError("a struct result store is callable from jitted code only")

    @overload(store)
    def _ov(arenas, dst, value):
        if isinstance(value, types.NoneType):   # the function always raises
            return lambda arenas, dst, value: None
        leaves = _string_leaves(rec, value, access="value")
        glb = {"_fields": store_fields, "_ss": store_string_result, "_arena_at": _arena_at,
               "_at": _at, "_vat": _vat}
        lines = ["def impl(arenas, dst, value):", "    _fields(dst, value)"]
        for k, (off, expr, path) in enumerate(leaves):
            lines.append(f"    v{k} = {expr}")
            glb[f"_none{k}"] = _none_field(path)
            lines.append(f"    if v{k} is None:")
            lines.append(f"        _none{k}()")
            lines.append(f"    _ss(_arena_at(arenas, {k}), _at(dst, {off}), v{k})")
        ns: dict = {}
        exec(compile("\n".join(lines) + "\n", f"<ckernels.jit struct store {rec}>", "exec"),
             glb, ns)
        return ns["impl"]
    return store


def has_struct_strings(ret) -> bool:
    """Whether a result element type is a struct holding strings."""
    return getattr(ret, "kind", None) == "V" and getattr(ret, "strings", False)


def struct_arenas_offset() -> int:
    """Offset of ``ck_jit_struct_kernel.arenas`` (the library's layout table):
    its address is the arena word of a struct result holding strings."""
    from .._native import layout_row
    return layout_row("ck_jit_struct_kernel", "arenas")[0]


__all__ = ["struct_store_plan", "store_struct", "fields_storer", "struct_string_storer",
           "has_struct_strings", "struct_arenas_offset"]
