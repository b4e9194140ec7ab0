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
* store a view result by one allocation in the destination arena and one
  copy (:func:`emit_store_view`) -- unless it is the text a case mapping
  (``s.lower()`` ...) wrote straight into the destination arena: entry
  points that bound the scratch arena make their destination arena the
  thread's *result arena* for the call (:func:`emit_result_arena`), where
  the first case mapping of each element writes its text, which the store
  then keeps in place (``ck_str_store_view``);
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
    "ck_str_store_view": ir.FunctionType(_i32, [_i8p, _i8p, _i8p, _i8p]),
}

#: the C functions that write into the thread's current (or result) arena
_ARENA_USERS = ("ck_str_arena", "ck_str_case")


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


def emit_store_view(context, builder, arena, dst, value, on_error):
    """Store the view ``value`` as the ``ck_string`` at ``dst`` (i8*) of an
    array whose arena is ``arena`` (i64 address): copied into it, or kept in
    place when it is the element's text in the result arena
    (``ck_str_store_view``)."""
    s = cgutils.create_struct_proxy(ck_string_type)(context, builder, value=value)
    st = builder.call(_declare(builder.module, "ck_str_store_view"),
                      [builder.inttoptr(arena, _i8p), builder.inttoptr(s.begin, _i8p),
                       builder.inttoptr(s.end, _i8p), dst])
    with builder.if_then(builder.icmp_signed("!=", st, ir.Constant(_i32, 0)), likely=False):
        on_error(builder, st)


def emit_result_arena(builder, arena):
    """Make ``arena`` (i64 address) the thread's result arena for the call
    (only where the entry point frees the scratch arena at its end and on
    errors: ``ck_str_scratch_free`` clears it)."""
    builder.call(_declare(builder.module, "ck_str_set_result_arena"),
                 [builder.inttoptr(arena, _i8p)])


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

    frees = getattr(emit, "frees_scratch", False)

    def call(builder, dst, srcs, arena):
        st = builder.call(fn, [dst, *srcs, arena])
        with builder.if_then(builder.icmp_signed("!=", st, ir.Constant(_i32, 0)),
                             likely=False):
            if frees:
                emit_scratch_free(builder)
            builder.ret(st)
    call.frees_scratch = frees
    call.result_arena = getattr(emit, "result_arena", False)
    return call


__all__ = ["view_args", "view_arg_types", "is_view", "result_fits", "result_element",
           "forget_failed_typing", "emit_load_view",
           "emit_store_view", "uses_scratch", "emit_scratch_epoch", "emit_next_element",
           "emit_scratch_free", "emit_result_arena", "outline_strings"]
