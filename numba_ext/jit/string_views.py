"""``string`` arguments and results of jitted entry points as UTF-8 *views*
(``CkString``), so that ``str`` methods run on the C string library in
place (:mod:`ckernels._numba.str_methods`): no decoding into Numba's
``unicode_type`` on the way in, no encoding on the way out.

A function with ``string`` arguments is first typed with those arguments as
views (:func:`view_args`).  When that typing fails -- the body uses a
``str`` feature the view does not have (``s + "x"``, an f-string field of a
string, iteration over characters ...) -- it is typed as before, with
Numba ``str`` arguments (the old path; ``docs/strings.md`` lists which is
which).  The entry points then:

* load a view argument as its ``{begin, end}``, as it is: string elements
  hold valid UTF-8 (every way text enters the library checks it: Arrow
  import, NumPy and Python conversions, the NumPy string loops as they load
  ``StringDType`` operands; ``ckernel/utf8.h``), so the view
  is not validated again per element (the C string library stays within
  its views whatever the bytes);
* store a view result inline (:func:`emit_store_view`): entry points with
  a view result make their destination arena the thread's *result arena*
  for the call (:func:`emit_result_arena`, ``ck_str_result_region``), which
  is written through one region (one allocation, sized from the bytes of the
  call's string arguments: :func:`emit_text_bytes`); the store copies the
  view to the region's front (a bump of its cursor, no call) -- or keeps it
  in place when it is the text the element's first case mapping or
  ``replace`` wrote straight into the region -- and calls
  ``ck_str_region_store`` only when the region is full; the call ends the
  region (:func:`emit_result_end`, or ``ck_str_scratch_free``);
* when the function can write temporaries into the thread's scratch string
  arena (its code, or code it calls, asks for the current arena:
  :func:`uses_scratch`), bump the thread's element counter after each
  element (``ck_str_scratch_epoch``, a store, no call): the first use of the
  arena 16 or more elements on frees it once it grew past 1 MiB; and free it when
  the entry point returns (``ck_str_scratch_free``; on an error too): no
  arena outlives a call.

The element code of every signature with ``string`` types is one internal
function the entry points call (:func:`outline_strings`).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types

from numba.core.errors import NumbaError

from .._numba.stringtype import CkStringType, ck_string_type

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)

SIGNATURES = {
    "ck_pod_allocate": ir.FunctionType(_i32, [_i8p, _i64, _i64, _i8p.as_pointer(),
                                              _i8p.as_pointer()]),
    "ck_str_scratch_epoch": ir.FunctionType(_i64.as_pointer(), []),
    "ck_str_scratch_free": ir.FunctionType(ir.VoidType(), []),
    "ck_str_set_result_arena": ir.FunctionType(ir.VoidType(), [_i8p]),
    "ck_str_result_region": ir.FunctionType(_i8p, [_i8p, _i64]),
    "ck_str_region_store": ir.FunctionType(_i32, [_i8p, _i8p, _i8p, _i8p]),
}

#: the C functions that write into the thread's current (or result) arena
_ARENA_USERS = ("ck_str_arena", "ck_str_case", "ck_str_result_arena")

#: ck_str_region's fields (ckernel/utf8.h; checked against the library's
#: layout table by ckernels._numba.symbols)
REGION_CUR, REGION_LIM, REGION_MADE_B, REGION_MADE_E, REGION_ARENA = 0, 1, 2, 3, 4


def _declare(module, name):
    return cgutils.get_or_insert_function(module, SIGNATURES[name], name)


def view_args(arg_elements) -> tuple | None:
    """The Numba argument types with every ``string`` argument a view, or
    None when there is no ``string`` argument."""
    if not any(e.kind == "s" for e in arg_elements):
        return None
    return tuple(ck_string_type if e.kind == "s" else e.numba for e in arg_elements)


def view_arg_types(user_dispatcher, args):
    """The Numba argument types with every string argument a view
    (``CkString``; ``Optional(CkString)`` for ``?string``) when the function
    compiles with them, else None (it takes Numba ``str`` then).  Views are
    read in place, where a ``str`` argument is decoded or wrapped per element
    (``load_string``)."""
    if not any((e.value if getattr(e, "option", False) else e).kind == "s" for e in args):
        return None
    nb = []
    for e in args:
        opt = getattr(e, "option", False)
        vt = e.value if opt else e
        t = ck_string_type if vt.kind == "s" else vt.numba
        nb.append(types.Optional(t) if opt else t)
    nb = tuple(nb)
    try:
        user_dispatcher.compile(nb)
    except NumbaError:
        forget_failed_typing()
        return None
    except RuntimeError:   # compilation disabled
        return None
    return nb


def is_view(t) -> bool:
    return isinstance(t, CkStringType)


def result_fits(ret_element, return_type) -> bool:
    """Whether a function typed with view arguments returns something the
    entry points store for ``ret_element`` (None: inferred)."""
    if isinstance(return_type, (CkStringType, types.UnicodeType)):
        return ret_element is None or ret_element.kind == "s"
    if ret_element is not None and ret_element.kind == "s":
        return False
    return isinstance(return_type, (types.Boolean, types.Integer, types.Float,
                                    types.Complex))


def forget_failed_typing() -> int:
    """Drop what a typing with view arguments that failed left in Numba's
    overload caches; returns how many entries went.

    Numba caches each overload's failure to type a call, keyed by the
    argument types, literals included (``_impl_cache``: ``x + "1"`` with a
    view ``x`` leaves ``(CkString, Literal[str]("1")) -> (None, None)`` in
    every ``+`` overload tried).  A literal is new with each definition, so
    those entries grew by one set per definition that fell back to ``str``
    arguments, for the life of the process.  The failures whose argument
    types hold a view and a literal are dropped (a failure is never needed
    again: typing the same call again fails again); successes and failures
    without literals stay (bounded by the types)."""
    from numba.core.typing import templates
    bases = [getattr(templates, n, None) for n in ("_OverloadFunctionTemplate",
                                                   "_OverloadAttributeTemplate")]
    stack = [b for b in bases if b is not None]
    seen = set(stack)
    dropped = 0
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
        cache = cls.__dict__.get("_impl_cache")
        if not cache:
            continue
        for key in [k for k, v in cache.items() if v == (None, None) and _view_literal_key(k)]:
            del cache[key]
            dropped += 1
    return dropped


def _view_literal_key(key) -> bool:
    """Whether an ``_impl_cache`` key's argument types hold a view and a literal."""
    args = key[1] if isinstance(key, tuple) and len(key) > 1 else None
    def view(a):
        return isinstance(a, CkStringType) or (isinstance(a, types.Optional) and
                                               isinstance(a.type, CkStringType))
    return isinstance(args, tuple) and any(view(a) for a in args) and \
        any(isinstance(a, types.Literal) for a in args)


def result_element(return_type):
    """The ``string`` element for a view result, else None."""
    if isinstance(return_type, CkStringType):
        from .signature import element_type
        return element_type("string")
    return None


def emit_load_view(context, builder, ptr):
    """The ``ck_string`` at ``ptr`` (i8*) as a view (its bytes are valid
    UTF-8: the invariant of string elements)."""
    p = builder.bitcast(ptr, _i64.as_pointer())
    s = cgutils.create_struct_proxy(ck_string_type)(context, builder)
    s.begin = builder.load(p)
    s.end = builder.load(builder.gep(p, [ir.Constant(_i32, 1)]))
    return s._getvalue()


def uses_scratch(library) -> bool:
    """Whether the finalized code ``library`` (with what it linked in) can
    write into the thread's current string arena: it declares
    ``ck_str_arena`` or ``ck_str_case`` (every method making new text or
    spans calls one)."""
    mod = getattr(library, "_final_module", None)
    if mod is None or getattr(library, "_disable_inspection", False):
        return True      # object code only (a cache): assume it can
    return any(f.name in _ARENA_USERS for f in mod.functions)


def emit_store_view(context, builder, region, dst, value, on_error):
    """Store the view ``value`` as the ``ck_string`` at ``dst`` (i8*) of the
    array whose arena is the call's result arena, written through the
    thread's region (``region``: i64, the ``ck_str_region`` address of
    :func:`emit_result_arena`): kept in place when it is the element's made
    text, else copied to the region's front inline (over the made text when
    that is the region's last: it is dead once the element returns);
    ``ck_str_region_store`` when the region has no room (it opens another)."""
    s = cgutils.create_struct_proxy(ck_string_type)(context, builder, value=value)
    rec = builder.inttoptr(region, _i8p.as_pointer())

    def field(k):
        return builder.gep(rec, [ir.Constant(_i32, k)])
    b = builder.inttoptr(s.begin, _i8p)
    e = builder.inttoptr(s.end, _i8p)
    made_b = builder.load(field(REGION_MADE_B))
    made_e = builder.load(field(REGION_MADE_E))
    null = ir.Constant(_i8p, None)
    builder.store(null, field(REGION_MADE_B))     # the element is over
    builder.store(null, field(REGION_MADE_E))
    made = builder.and_(builder.and_(builder.icmp_unsigned("==", b, made_b),
                                     builder.icmp_unsigned("==", e, made_e)),
                        builder.icmp_unsigned("!=", b, null))
    out = builder.bitcast(dst, _i64.as_pointer())
    out_end = builder.gep(out, [ir.Constant(_i32, 1)])

    def put(begin, end):          # dst may be unaligned (strided arrays)
        builder.store(builder.ptrtoint(begin, _i64), out, align=1)
        builder.store(builder.ptrtoint(end, _i64), out_end, align=1)
    with builder.if_else(made, likely=True) as (kept, copied):
        with kept:
            put(b, e)
        with copied:
            # the element's made text, not returned, is dead now: when it is
            # the region's last text its bytes are taken back (the copy may
            # overlap it: t = s.lower(); return t[1:])
            cur0 = builder.load(field(REGION_CUR))
            dead = builder.and_(builder.icmp_unsigned("==", made_e, cur0),
                                builder.icmp_unsigned("!=", made_b, null))
            cur = builder.select(dead, made_b, cur0)
            builder.store(cur, field(REGION_CUR))
            lim = builder.load(field(REGION_LIM))
            n = builder.sub(s.end, s.begin)
            room = builder.sub(builder.ptrtoint(lim, _i64), builder.ptrtoint(cur, _i64))
            # strictly less: no region open (cur NULL) has no room for ""
            fits = builder.icmp_signed("<", n, room)
            with builder.if_else(fits, likely=True) as (inline, full):
                with inline:
                    cgutils.raw_memmove(builder, cur, b, n, 1)
                    end = builder.gep(cur, [n])
                    builder.store(end, field(REGION_CUR))
                    put(cur, end)
                with full:
                    st = builder.call(_declare(builder.module, "ck_str_region_store"),
                                      [builder.bitcast(rec, _i8p), b, e, dst])
                    with builder.if_then(builder.icmp_signed("!=", st, ir.Constant(_i32, 0)),
                                         likely=False):
                        on_error(builder, st)


def emit_result_arena(builder, arena, hint):
    """Make ``arena`` (i64 address) the thread's result arena for the call,
    its first region sized ``hint`` bytes (i64); returns the address (i64)
    of the thread's ``ck_str_region``, which the element code gets in place
    of the arena.  The call ends it with :func:`emit_result_end` (or
    ``ck_str_scratch_free``), on errors too."""
    rec = builder.call(_declare(builder.module, "ck_str_result_region"),
                       [builder.inttoptr(arena, _i8p), hint])
    return builder.ptrtoint(rec, _i64)


def emit_result_end(builder):
    """Give the unused end of the result region back; no result arena."""
    builder.call(_declare(builder.module, "ck_str_set_result_arena"),
                 [ir.Constant(_i8p, None)])


def emit_call_end(builder, emit):
    """What an entry point of element code ``emit`` does when it returns (on
    an error too): free the scratch arena (which ends the result region), or
    end the result region."""
    if getattr(emit, "frees_scratch", False):
        emit_scratch_free(builder)
    elif getattr(emit, "result_arena", False):
        emit_result_end(builder)


def emit_text_bytes(builder, count, srcs, strides, which):
    """The bytes of the ``string`` arguments ``which`` (indices into
    ``srcs``, element pointers ``strides`` bytes apart; a NULL one counts
    nothing) over ``count`` elements (i64): the result region's size hint."""
    total = cgutils.alloca_once_value(builder, ir.Constant(_i64, 0))
    for j in which:
        # a NULL source: a null `?string` slot the null-aware wrapper passes alone
        with builder.if_then(cgutils.is_not_null(builder, srcs[j]), likely=True):
            with cgutils.for_range(builder, count) as lp:
                p = builder.bitcast(builder.gep(srcs[j], [builder.mul(lp.index, strides[j])]),
                                    _i64.as_pointer())
                b = builder.load(p)
                e = builder.load(builder.gep(p, [ir.Constant(_i32, 1)]))
                builder.store(builder.add(builder.load(total), builder.sub(e, b)), total)
    return builder.load(total)


def emit_scratch_epoch(builder):
    """The address (i64*) of the calling thread's element counter."""
    return builder.call(_declare(builder.module, "ck_str_scratch_epoch"), [])


def emit_next_element(builder, epoch):
    """After an element: bump the counter at ``epoch`` (no call)."""
    builder.store(builder.add(builder.load(epoch), ir.Constant(_i64, 1)), epoch)


def emit_scratch_free(builder):
    builder.call(_declare(builder.module, "ck_str_scratch_free"), [])


def outline_strings(module, name, emit, nsrc, args, ret):
    """For a signature with ``string`` types, the element code as one
    internal function ``int32 name(char *dst, char *src0, ..., i64 arena)``
    (not inlined) that the entry points call: string loads and stores are
    long, and three inlined copies (single, the two strided loops) cost each
    jitted function's code library about three times the memory, with
    nothing for LLVM to vectorise.  Other signatures keep ``emit``, and so
    do elements that read views and return a number (``emit.inline``: a
    few loads and calls, which the loops keep inline)."""
    if all(e.kind != "s" for e in (ret, *args)) or getattr(emit, "inline", False):
        return emit
    fnty = ir.FunctionType(_i32, [_i8p] * (nsrc + 1) + [_i64])
    fn = ir.Function(module, fnty, name=name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    emit(b, fn.args[0], list(fn.args[1:nsrc + 1]), fn.args[nsrc + 1])
    b.ret(ir.Constant(_i32, 0))

    def call(builder, dst, srcs, arena):
        st = builder.call(fn, [dst, *srcs, arena])
        with builder.if_then(builder.icmp_signed("!=", st, ir.Constant(_i32, 0)),
                             likely=False):
            emit_call_end(builder, call)
            builder.ret(st)
    call.frees_scratch = getattr(emit, "frees_scratch", False)
    call.result_arena = getattr(emit, "result_arena", False)
    call.view_srcs = getattr(emit, "view_srcs", ())
    call.hint_per_element = getattr(emit, "hint_per_element", 0)
    return call


__all__ = ["view_args", "view_arg_types", "is_view", "result_fits", "result_element",
           "forget_failed_typing", "emit_load_view",
           "emit_store_view", "uses_scratch", "emit_scratch_epoch", "emit_next_element",
           "emit_scratch_free", "emit_result_arena", "emit_result_end", "emit_call_end",
           "emit_text_bytes", "outline_strings"]
