"""Code generation for ``@ckernels.jit``: C-ABI ckernel entry points around a
Numba-compiled scalar function.

For one signature ``R(A0, ..., An-1)`` of a user function (a Numba
dispatcher), :func:`build_trampolines` produces one code library with two
functions, named ``<sym>_single`` and ``<sym>_strided`` (or
:func:`emit_entry_points` adds them to the user function's own library):

``int32 <sym>_single(char *dst, const char *const *src, ck_prefix *self)``
``int32 <sym>_strided(char *dst, intptr_t dst_stride, const char *const *src,
                      const intptr_t *src_stride, size_t count, ck_prefix *self)``
    The ``kernel.h`` entry points.  Both run the element code (below), which
    calls through Numba's calling convention (``call_conv.call_function``), so
    they see a status instead of a Python exception.  The strided entry has the
    loop inside the generated code, with a unit-stride fast path (every
    stride equal to its element size: addresses are ``base + i*size`` with a
    constant size, which LLVM vectorises after inlining the element function
    and the user function into the loop) and a general path for any strides
    (zero and negative included).  The loop stops at the first failing
    element and returns its status; elements before it are written.

A failing element calls the error path every entry point shares
(:mod:`ckernels.jit.error_path`: the exception's message recorded with
``ck_set_error`` on the calling thread, the status returned: ZeroDivisionError
-> CK_ERR_ZERO_DIVISION, IndexError -> CK_ERR_INDEX, ValueError ->
CK_ERR_VALUE, other exceptions -> CK_ERR_USER, ...).

What one element does is emitted in one of two ways:

* builtin element types (numbers, bool): directly -- load each argument
  (``context.unpack_value``), call the user function's compiled code
  (``cres.fndesc``, its library linked into ours with
  ``add_linking_library``) through ``call_conv.call_function``, check the
  status, convert (``context.cast``) and store (``context.pack_value``).  No
  second Numba compilation; LLVM inlines the user function into the loops.
* strings (or a result Numba types as ``Optional``): an *element function*,
  ordinary Python source generated per signature and compiled by Numba as a
  subroutine of the library::

    def _ck_elem(dst, s0, s1, arena):          # voidptr x3, intp
        _store(dst, _user(_load0(s0), _load1(s1)))

  ``_loadK``/``_store`` are intrinsics reading/writing one element of the
  signature's type (element types are baked into the code); for ``string``
  arguments the loader decodes the ``ck_string`` into a Numba ``str`` and for
  a ``string`` result the store writes the UTF-8 bytes into the destination
  arena (``store_str``; both in :mod:`ckernels.jit.string_elements`), which
  the trampolines read from the kernel data (``ck_jit_kernel.dst_arena``).
  Numba's reference counting inside the element function releases the
  temporary ``str`` values.

Everything is referenced by name (Numba helpers, the CPython API,
``ck_set_error``), so the library is cachable: :data:`TrampolineCache` stores
it next to Numba's own cache files of the user function
(``make_library_cache``), indexed by the user function's bytecode and the
signature.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re

from llvmlite import ir
from numba.core import cgutils, compiler, imputils, types
from numba.core.caching import make_library_cache
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import NumbaError
from numba.core.registry import cpu_target

from .. import dtypes
from .error_path import (RAISE_SYMBOL, ensure_shared_functions, locate_failures,
                         mark_source, native_raise_module, raise_function)
from .llvm_passes import defined_functions_only
from .signature import element_type
from .time_elements import of_numba as time_of_numba
from .cpu_element import element_function, loader, region_result, storer
from .string_elements import Piece, emit_load_string, emit_store, emit_store_optional
from .string_views import (emit_call_end, emit_load_view, emit_next_element,
                           emit_result_arena, emit_text_bytes,
                           emit_scratch_epoch, emit_scratch_free, emit_store_view, is_view,
                           outline_strings, uses_scratch, view_arg_types)
from .struct_results import has_struct_strings, struct_arenas_offset

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)


def numba_type(name: str):
    """The Numba type of a jit element type name (the one table; a struct
    type: Numba's Record over its layout, :mod:`ckernels.jit.structs`)."""
    return element_type(name).numba


# ------------------------------------------------------------ trampolines --
_SYM_RE = re.compile(r"[^A-Za-z0-9_]")
_counter = itertools.count()


def symbol_base(qualname: str, key: str, unique: bool) -> str:
    """``ckjit_<qualname>_<hash>``; deterministic (cachable) unless ``unique``."""
    h = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    base = f"ckjit_{_SYM_RE.sub('_', qualname)[:40]}_{h}"
    if unique:
        base += f"_{next(_counter)}"
    return base


#: the symbol of the one error-path function of the process (see
#: :func:`raise_function`); versioned with the code it emits


def _check_status(builder, status, raise_fn):
    """On error, return the status (and record the message) from here."""
    with builder.if_then(status.is_error, likely=False):
        builder.ret(builder.call(raise_fn, [status.code, status.excinfoptr]))


def inline_into_loops(cres) -> None:
    """Mark the compiled element function ``cres`` (a ``compile_subroutine``
    result, not yet linked) ``alwaysinline``: it lives in a module of its own,
    and LLVM's cost model left a long one (a loop over a core dim) as an
    indirect call per row, with its kernel-data loads, register saves and
    status stores, inside the entry points' row loop."""
    fn = cres.library._final_module.get_function(cres.fndesc.llvm_func_name)
    fn.add_function_attribute("alwaysinline")


def element_via_function(context, elem_fn, nsrc, raise_fn, scratch=False):
    """Emitter: one element through the generated element function.
    ``scratch``: the function reads string views, whose methods write
    temporaries into the thread's scratch string arena, which the entry
    points then bound per element and free at the end."""
    argtys = [types.voidptr] * (nsrc + 1) + [types.intp]

    def emit(builder, dst, srcs, arena):
        status, _ = context.call_conv.call_function(builder, elem_fn, types.none, argtys,
                                                    [dst, *srcs, arena])
        _check_status(builder, status, raise_fn)
    emit.frees_scratch = scratch
    return emit


def element_direct(context, library, user_fn, user_sig, args, ret, raise_fn,
                   rope_fn=None, rope_type=None, rope_layout=None, scratch=True):
    """Emitter of one element: load the arguments (a ``string`` argument is
    decoded into a new Numba ``str``, :func:`~ckernels.jit.string_elements.emit_load_string`),
    call the user function through the calling convention, release the
    decoded arguments (on the error path too), and convert and store the
    result (a ``string`` result is written into the destination arena,
    :func:`~ckernels.jit.string_elements.emit_store`).  IR only: no Numba
    compilation per jitted function; LLVM inlines the user function into the
    loops.

    With ``rope_fn`` (the function's rope variant, :mod:`ckernels.jit.string_builder`,
    returning the tuple ``rope_type`` of the returned concatenation's leaves)
    that is called instead, and the leaves (``rope_layout``) are written into
    the arena in one pass.

    ``scratch``: whether the function can write temporaries into the
    thread's scratch string arena (:func:`~ckernels.jit.string_views.uses_scratch`),
    which the entry points then bound per element and free at the end."""
    nb_args = [e.numba for e in args]
    nb_ret = ret.numba
    user_ret = user_sig.return_type
    user_args = list(user_sig.args)
    store = None
    if rope_fn is not None:
        user_fn, user_ret = rope_fn, rope_type
        user_sig = user_sig.replace(return_type=rope_type)
        store = "rope"
    elif ret.kind == "s" and not isinstance(user_ret, types.NoneType):
        store = ("str" if isinstance(user_ret, types.UnicodeType)
                 else "view" if is_view(user_ret) else "optional")
    views = any(is_view(t) for t in user_args) or store == "view"
    # views in, a number out: a short element, inlined into the loops (which
    # outline_strings then leaves as it is), so a failure frees the scratch
    # arena itself
    inline = views and store is None and all(
        e.kind != "s" or is_view(t) for e, t in zip(args, user_args))
    frees = views and scratch

    def fail_if(builder, status, owned):
        with builder.if_then(status.is_error, likely=False):
            for t, v in owned:
                context.nrt.decref(builder, t, v)
            code = builder.call(raise_fn, [status.code, status.excinfoptr])
            if inline and frees:
                emit_scratch_free(builder)
            builder.ret(code)

    def fail_status(owned):
        """on_error of the string emitters: release, return the ck_status."""
        def on_error(builder, st):
            for t, v in owned:
                context.nrt.decref(builder, t, v)
            builder.ret(st)
        return on_error

    def emit(builder, dst, srcs, arena):
        vals, owned = [], []
        for e, t, p, ut in zip(args, nb_args, srcs, user_args):
            if e.kind == "s" and is_view(ut):
                vals.append(emit_load_view(context, builder, p))
            elif e.kind == "s":
                v = emit_load_string(context, builder, p, fail_status(list(owned)))
                owned.append((types.unicode_type, v))
                vals.append(v)
            else:
                vals.append(context.unpack_value(builder, t, builder.bitcast(
                    p, context.get_data_type(t).as_pointer())))
        status, res = context.call_conv.call_function(builder, user_fn, user_ret, user_args,
                                                      vals)
        for t, v in owned:      # the function borrowed them
            context.nrt.decref(builder, t, v)
        fail_if(builder, status, [])
        if isinstance(user_ret, types.NoneType):
            return   # never returns normally
        # an Optional result comes back as its value, None as a status
        res = imputils.fix_returning_optional(context, builder, user_sig, status, res)
        if store is not None:
            done = fail_status([(user_ret, res)])
            # every store goes through the call's result region (``arena``
            # is its address): no allocation call per element
            if store == "rope":
                from .string_builder import pieces
                emit_store(context, builder, arena, dst,
                           pieces(rope_layout, context, builder, rope_type, res), done,
                           region=True)
            elif store == "str":
                emit_store(context, builder, arena, dst, [Piece("str", res)], done,
                           region=True)
            elif store == "view":
                emit_store_view(context, builder, arena, dst, res, done)
            else:
                emit_store_optional(context, builder, arena, dst, res, done, region=True)
            context.nrt.decref(builder, user_ret, res)
            return
        v = context.cast(builder, res, user_ret, nb_ret)
        context.pack_value(builder, nb_ret, v,
                           builder.bitcast(dst, context.get_data_type(nb_ret).as_pointer()))
    emit.frees_scratch = frees
    # a string result is stored through the result region (the element code
    # gets its address as the arena), where the first case mapping or
    # replace of an element may have written a view result already
    emit.result_arena = store is not None
    built = store not in (None, "view")
    # the region's size hint: the bytes of the string arguments (views; for
    # a built string every string argument), and for a built string these
    # bytes per element besides (its constants, a guess for each other
    # piece; a region too large gives its end back)
    emit.view_srcs = tuple(j for j, (e, t) in enumerate(zip(args, user_args))
                           if e.kind == "s" and (is_view(t) or built))
    emit.hint_per_element = 0 if store in (None, "view") else (
        _rope_guess(rope_layout) if store == "rope" else _PIECE_GUESS)
    emit.inline = inline
    return emit


#: bytes guessed for a piece of a built string whose length the code does
#: not know before it runs (a number, a ``str`` value), for the region hint
_PIECE_GUESS = 8


def _rope_guess(layout) -> int:
    """Bytes per element of a one-pass string of ``layout`` for the region
    hint: its constants' bytes, :data:`_PIECE_GUESS` per other piece but
    views (an argument's bytes: counted from the arguments)."""
    return sum(len(e[1]) if e[0] == "const" else 0 if e[2] == "view" else _PIECE_GUESS
               for e in layout)


def direct_ok(user_sig, args, ret) -> bool:
    """Whether :func:`element_direct` applies: the user function was compiled
    for exactly these argument types, and its result is a number, a bool, a
    string (or Optional string: None is an error when storing) or none (it
    always raises)."""
    if not all(u == e.numba or (e.kind == "s" and is_view(u))
               for u, e in zip(user_sig.args, args)) or len(user_sig.args) != len(args):
        return False
    r = user_sig.return_type
    if ret.kind == "s":
        return isinstance(r, (types.NoneType, types.UnicodeType)) or is_view(r) or (
            isinstance(r, types.Optional) and isinstance(r.type, types.UnicodeType))
    if ret.kind in "Mm":     # an instant / duration (Numba casts between units)
        return isinstance(r, (types.NoneType, types.NPDatetime, types.NPTimedelta))
    return isinstance(r, (types.NoneType, types.Boolean, types.Integer, types.Float,
                          types.Complex))


def arena_offset() -> int:
    """Offset of ``ck_jit_kernel.dst_arena`` (from the library's layout table),
    where the generated entry points read the string arena."""
    from .._native import layout_row
    return layout_row("ck_jit_kernel", "dst_arena")[0]


def _arena(builder, self_ptr, has_arena, arena_offset):
    """The arena word of the element code: 0 (no arena), the ``ck_memblock *``
    at ``arena_offset`` of the kernel data, or (``has_arena == "table"``, a
    struct result holding strings) the address of the arenas there."""
    if not has_arena:
        return ir.Constant(_i64, 0)
    p = builder.gep(self_ptr, [ir.Constant(_i64, arena_offset)])
    if has_arena == "table":
        return builder.ptrtoint(p, _i64)
    return builder.load(builder.bitcast(p, _i64.as_pointer()))


def _emit_single(module, name, emit, nsrc, has_arena, arena_offset):
    fnty = ir.FunctionType(_i32, [_i8p, _i8p.as_pointer(), _i8p])
    fn = ir.Function(module, fnty, name=name)
    dst, src, self_ptr = fn.args
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    srcs = [builder.load(builder.gep(src, [ir.Constant(_i64, j)])) for j in range(nsrc)]
    arena = _arena(builder, self_ptr, has_arena, arena_offset)
    if getattr(emit, "result_arena", False):
        arena = emit_result_arena(builder, arena, ir.Constant(_i64, 0))
    emit(builder, dst, srcs, arena)
    emit_call_end(builder, emit)
    builder.ret(ir.Constant(_i32, 0))
    return fn


def _emit_strided(module, name, emit, nsrc, dst_size, src_sizes, has_arena, arena_offset):
    fnty = ir.FunctionType(_i32, [_i8p, _i64, _i8p.as_pointer(), _i64.as_pointer(), _i64,
                                  _i8p])
    fn = ir.Function(module, fnty, name=name)
    dst, dst_stride, src, src_stride, count, self_ptr = fn.args
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    srcs = [builder.load(builder.gep(src, [ir.Constant(_i64, j)])) for j in range(nsrc)]
    strides = [builder.load(builder.gep(src_stride, [ir.Constant(_i64, j)]))
               for j in range(nsrc)]
    arena = _arena(builder, self_ptr, has_arena, arena_offset)
    frees = getattr(emit, "frees_scratch", False)
    epoch = emit_scratch_epoch(builder) if frees else None
    if getattr(emit, "result_arena", False):
        # one region for the call, sized by the bytes of the string arguments
        hint = emit_text_bytes(builder, count, srcs, strides, getattr(emit, "view_srcs", ()))
        per = getattr(emit, "hint_per_element", 0)
        if per:
            hint = builder.add(hint, builder.mul(count, ir.Constant(_i64, per)))
        arena = emit_result_arena(builder, arena, hint)

    contiguous = builder.icmp_signed("==", dst_stride, ir.Constant(_i64, dst_size))
    for st, size in zip(strides, src_sizes):
        contiguous = builder.and_(contiguous,
                                  builder.icmp_signed("==", st, ir.Constant(_i64, size)))

    def loop(dst_step, src_steps):
        with cgutils.for_range(builder, count) as lp:
            i = lp.index
            d = builder.gep(dst, [builder.mul(i, dst_step)])
            ss = [builder.gep(s, [builder.mul(i, step)]) for s, step in zip(srcs, src_steps)]
            before = set(map(id, fn.blocks)) - {id(builder.block)}
            emit(builder, d, ss, arena)
            locate_failures(fn, [k for k in fn.blocks if id(k) not in before], i, d)
            if epoch is not None:    # the element's scratch temporaries are dead
                emit_next_element(builder, epoch)

    with builder.if_else(contiguous, likely=True) as (fast, general):
        with fast:   # unit stride: constant element sizes
            loop(ir.Constant(_i64, dst_size), [ir.Constant(_i64, s) for s in src_sizes])
        with general:
            loop(dst_stride, strides)
    emit_call_end(builder, emit)   # the methods' temporaries, the result region
    builder.ret(ir.Constant(_i32, 0))
    return fn


# ------------------------------------------ entry points in Numba's library --
def entry_point_symbase(fndesc, arena_offset: int) -> str:
    """The symbol base of the entry points compiled into the library of the
    user function itself: Numba's mangled name (unique and stable) and the
    offset of ``ck_jit_kernel.dst_arena`` baked into the code (a library from
    a cache made with another layout is then not used)."""
    return f"ckjit_{fndesc.mangled_name}_a{arena_offset}"


def _elements(fndesc):
    """``(argument element types, result element type)`` (rows of
    :mod:`ckernels.dtypes`) of a Numba-compiled signature when the direct
    entry points apply to it (builtin element types), else None."""
    from numba.core.typing import signature

    def element(t):
        # a string view argument or result is a ``string`` element
        return dtypes.of_numba(t) or time_of_numba(t) or (
            dtypes.by_name["string"] if is_view(t) else None)
    args = [element(t) for t in fndesc.argtypes]
    ret = element(fndesc.restype)
    if ret is None or any(a is None for a in args):
        return None
    if not direct_ok(signature(fndesc.restype, *fndesc.argtypes), args, ret):
        return None
    return args, ret


def emit_entry_points(context, library, fndesc, lowerer=None) -> None:
    """Add the ``single`` and ``strided`` entry points of a just-lowered user
    function (builtin element types) to its own library, before Numba
    finalizes it: no library of their own (code libraries are never unloaded
    by Numba, so each one would stay for the life of the process), the user
    function inlined into the loops, and Numba's disk cache (``cache=True``)
    stores them with the function.  With the ``lowerer`` of a function whose
    ``string`` result is a recognised concatenation, its rope variant is
    lowered into the library too and the entry points call it
    (:mod:`ckernels.jit.string_builder`)."""
    elements = _elements(fndesc)
    if elements is None:
        return
    from numba.core.typing import signature

    args, ret = elements
    rope = None
    if lowerer is not None and ret.kind == "s":
        from .string_builder import lower_variant
        rope = lower_variant(lowerer)
    offset = arena_offset()
    symbase = entry_point_symbase(fndesc, offset)
    module = library.create_ir_module(symbase)
    raise_fn = raise_function(module)
    user_fn = context.declare_function(module, fndesc)
    rope_fn = rope_type = rope_layout = None
    if rope is not None:
        rope_fn = context.declare_function(module, rope[0])
        rope_type, rope_layout = rope[1], rope[2]
    emit = element_direct(context, library, user_fn,
                          signature(fndesc.restype, *fndesc.argtypes), args, ret,
                          raise_fn, rope_fn, rope_type, rope_layout)
    nsrc, has_arena = len(args), ret.kind == "s"
    emit = outline_strings(module, f"{symbase}_element", emit, nsrc, args, ret)
    _emit_single(module, f"{symbase}_single", emit, nsrc, has_arena, offset)
    _emit_strided(module, f"{symbase}_strided", emit, nsrc, ret.size,
                  [e.size for e in args], has_arena, offset)
    library.add_ir_module(module)


def in_library(cres, args, ret, from_cache=False):
    """The entry points compiled into ``cres.library`` for this signature
    (element types ``args`` -> ``ret``; :func:`emit_entry_points`), or None
    (string types, Optional results, or a library compiled without them, e.g.
    loaded from an older cache)."""
    have = _elements(cres.fndesc)
    if have is None or [e.name for e in have[0]] != [e.name for e in args] or \
            have[1].name != ret.name:
        return None
    symbase = entry_point_symbase(cres.fndesc, arena_offset())
    lib_ = cres.library
    if not (lib_.get_pointer_to_function(f"{symbase}_single") and
            lib_.get_pointer_to_function(f"{symbase}_strided")):
        return None
    return Trampolines(lib_, symbase, from_cache=from_cache)


def _lowering_classes():
    """The lowering class and pass of ``@ckernels.jit`` functions (made once,
    on first use: they subclass Numba's)."""
    from numba.core import ir as nir
    from numba.core.compiler_machinery import register_pass
    from numba.core.lowering import Lower
    from numba.core.typed_passes import NativeLowering

    from .._numba.listcast import lower_converted_list

    class CkLower(Lower):
        """Numba's lowering, plus the ckernel entry points (in the function's
        own library) and a leak-free dynamic ``raise``."""

        def __init__(self, context, library, *args, **kwargs):
            # the function, its wrapper, its rope variant and the entry points
            # are optimised without a pass builder per declaration
            defined_functions_only(library)
            super().__init__(context, library, *args, **kwargs)

        def create_cfunc_wrapper(self):
            super().create_cfunc_wrapper()
            emit_entry_points(self.context, self.library, self.fndesc, self)

        def lower_inst(self, inst):
            # every failing way out of this statement (a raise, an error
            # propagated from a call) records the statement's line first
            # (error_path.mark_source: cold blocks only)
            fn = self.builder.function
            start, n = self.builder.block, len(fn.blocks)
            super().lower_inst(inst)
            mark_source(self.context, fn, [start, *fn.blocks[n:]], self.fndesc, self.loc)

        def lower_assign(self, ty, inst):
            # list(none) joined with list(Optional(T)): a converted list
            # (a new reference), where Numba would assert (_numba/listcast.py)
            val = lower_converted_list(self, ty, inst)
            return val if val is not None else super().lower_assign(ty, inst)

        def lower_dynamic_raise(self, inst):
            # Numba increfs each variable the exception takes, but no `del`
            # follows a raise, so the variable's own reference was never
            # dropped: each raise with a run-time message leaked it.  The
            # exception takes over that reference instead (a variable used
            # twice gets one more).
            args, nb_types, taken = [], [], set()
            for arg in inst.exc_args:
                if isinstance(arg, nir.Var):
                    typ = self.typeof(arg.name)
                    val = self.loadvar(arg.name)
                    if arg.name in taken:
                        self.incref(typ, val)
                    taken.add(arg.name)
                else:
                    typ, val = None, arg
                nb_types.append(typ)
                args.append(val)
            self.return_dynamic_exception(inst.exc_class, tuple(args), tuple(nb_types),
                                          loc=self.loc)

    @register_pass(mutates_CFG=True, analysis_only=False)
    class CkNativeLowering(NativeLowering):
        _name = "ckernels_native_lowering"

        @property
        def lowering_class(self):
            return CkLower

    return NativeLowering, CkNativeLowering


@functools.lru_cache(maxsize=None)
def pipeline_class():
    """The Numba compiler class of ``@ckernels.jit`` functions (the
    ``pipeline_class`` of their dispatcher): Numba's nopython pipeline with
    :func:`emit_entry_points` and the leak-free dynamic raise in its
    lowering."""
    from numba.core.compiler import CompilerBase, DefaultPassBuilder
    from numba.core.compiler_machinery import PassManager
    from numba.core.typed_passes import NopythonTypeInference
    from .fstrings import pass_classes
    native, ck_native = _lowering_classes()
    translate, ck_translate, check_formats = pass_classes()
    ensure_shared_functions()   # before a dispatcher loads cached code using them

    class CkCompiler(CompilerBase):
        def define_pipelines(self):
            dpb = DefaultPassBuilder
            if self.state.flags.force_pyobject:
                return [dpb.define_objectmode_pipeline(self.state)]
            pm = PassManager("ckernels_nopython")
            # f-string fields with format specs (ckernels.jit.fstrings)
            pm.passes.extend((ck_translate if cls is translate else cls, desc) for cls, desc in
                             dpb.define_untyped_pipeline(self.state).passes)
            for cls, desc in dpb.define_typed_pipeline(self.state).passes:
                pm.passes.append((cls, desc))
                if cls is NopythonTypeInference:
                    pm.passes.append((check_formats, "check f-string format specs"))
            pm.passes.extend((ck_native if cls is native else cls, desc) for cls, desc in
                             dpb.define_nopython_lowering_pipeline(self.state).passes)
            pm.finalize()
            return [pm]

    return CkCompiler


class Trampolines:
    """A finalized code library and the addresses of its entry points."""

    __slots__ = ("library", "symbase", "single", "strided", "from_cache", "element_source",
                 "__weakref__")

    def __init__(self, library, symbase, from_cache, element_source=None):
        self.library = library
        self.symbase = symbase
        self.single = library.get_pointer_to_function(f"{symbase}_single")
        self.strided = library.get_pointer_to_function(f"{symbase}_strided")
        self.from_cache = from_cache
        self.element_source = element_source
        if not self.single or not self.strided:
            raise RuntimeError(f"ckernels.jit: entry points of {symbase} not found")


def build_trampolines(user_dispatcher, args, ret, symbase, arena_offset,
                      cachable=False, user_cres=None):
    """Generate the entry points into a new, finalized library (element types
    ``args`` -> ``ret``).

    With ``user_cres`` (the user function's compile result for exactly these
    argument types) and builtin element types, the element code is emitted
    directly around a call of the user function; otherwise (strings, Optional
    results) an element function is generated and compiled by Numba."""
    context = cpu_target.target_context.subtarget(enable_nrt=True)
    nullable = any(getattr(e, "option", False) for e in (*args, ret))
    direct = (user_cres is not None and not nullable and
              direct_ok(user_cres.signature, args, ret))
    src = None
    with global_compiler_lock:
        codegen = context.codegen()
        library = codegen.create_library(symbase)
        defined_functions_only(library)
        if cachable:
            library.enable_object_caching()
        module = library.create_ir_module(symbase)
        raise_fn = raise_function(module)
        nsrc = len(args)
        if direct:
            user_fn = context.declare_function(module, user_cres.fndesc)
            library.add_linking_library(user_cres.library)
            emit = element_direct(context, library, user_fn, user_cres.signature, args,
                                  ret, raise_fn, scratch=uses_scratch(user_cres.library))
        else:
            # views where the function takes them; not for the cache (the view
            # path's dynamic raises need Numba's helpers, see kernel.py)
            views = (not cachable and not has_struct_strings(ret) and
                     view_arg_types(user_dispatcher, args) is not None)
            flags = compiler.Flags()
            flags.nrt = True
            while True:
                elem, elem_sig, src = element_function(user_dispatcher, args, ret, views)
                try:
                    with context.push_code_library(library):
                        cres = context.compile_subroutine(None, elem, elem_sig, flags=flags,
                                                          caching=False)
                except NumbaError:
                    if not views:
                        raise
                    views = False    # a result the views' types cannot store: str
                    continue
                finally:
                    # compile_subroutine stores every result in the context's
                    # internal-function cache, even with caching=False; the
                    # element function is new per signature, so the entry would
                    # keep it (and its library) for the life of the process
                    for key in [k for k in context.cached_internal_func
                                if k[0] is elem.__code__]:
                        del context.cached_internal_func[key]
                break
            elem_fn = context.declare_function(module, cres.fndesc)
            emit = element_via_function(context, elem_fn, nsrc, raise_fn, scratch=views)
            region = region_result(args, ret, views)
            if region is not None:   # the element function stores through the region
                emit.result_arena, emit.view_srcs = True, region
        has_arena = ret.kind == "s"
        if has_struct_strings(ret):
            has_arena, arena_offset = "table", struct_arenas_offset()
        emit = outline_strings(module, f"{symbase}_element", emit, nsrc, args, ret)
        _emit_single(module, f"{symbase}_single", emit, nsrc, has_arena, arena_offset)
        _emit_strided(module, f"{symbase}_strided", emit, nsrc, ret.size,
                      [e.size for e in args], has_arena, arena_offset)
        library.add_ir_module(module)
        library.finalize()
    return Trampolines(library, symbase, from_cache=False, element_source=src)


#: caches trampoline libraries next to the user function's Numba cache files
TrampolineCache = make_library_cache("ckjit")


def cache_key(symbase, arg_names, ret_name, arena_offset):
    """The (picklable) signature key of a trampoline library in the cache (the
    arena offset is baked into the code)."""
    return ("ckernels.jit/3", symbase, ret_name, tuple(arg_names), arena_offset)


def load_cached(cache, key, symbase):
    context = cpu_target.target_context
    with global_compiler_lock:
        library = cache.load_overload(key, context)
    if library is None:
        return None
    return Trampolines(library, symbase, from_cache=True)


def save_cached(cache, key, tramp: Trampolines) -> None:
    cache.save_overload(key, tramp.library)


__all__ = ["numba_type", "loader", "storer", "emit_entry_points", "in_library",
           "entry_point_symbase", "pipeline_class", "element_function", "build_trampolines",
           "Trampolines", "TrampolineCache", "symbol_base", "cache_key", "load_cached",
           "save_cached", "native_object"]


# ------------------------------------------------------------- native cache --
def native_object(library, symbase: str, renames=None):
    """Position-independent object code of the entry points ``symbase`` in
    the finalized Numba ``library`` (what :mod:`ckernels.jit.native_cache`
    links into a shared library): a copy of its module in which only the two
    entry points stay visible, the error path is the native one
    (:func:`ckernels.jit.error_path.native_raise_module`), the functions
    named in ``renames`` are called by their new names (Numba's runtime ->
    libckernel's), and everything unreachable is dropped.
    Returns ``(object bytes, undefined symbols LLVM sees)``."""
    import llvmlite.binding as llvm
    keep = {f"{symbase}_single", f"{symbase}_strided"}
    mod = library._final_module.clone()
    if any(f.name == RAISE_SYMBOL and f.is_declaration for f in mod.functions):
        rmod = native_raise_module(RAISE_SYMBOL, mod.triple, str(mod.data_layout))
        mod.link_in(llvm.parse_assembly(str(rmod)))
    for f in mod.functions:
        if f.is_declaration and f.name in (renames or {}):
            f.name = renames[f.name]
    for f in mod.functions:
        if not f.is_declaration and f.name not in keep:
            f.linkage = "internal"
    for g in mod.global_variables:
        if not g.is_declaration:
            g.linkage = "internal"
    codegen = cpu_target.target_context.codegen()
    tm = llvm.Target.from_triple(mod.triple).create_target_machine(
        cpu=codegen._get_host_cpu_name(), features=codegen._tm_features, opt=3,
        reloc="pic", codemodel="default")
    pto = llvm.create_pipeline_tuning_options(speed_level=0)
    pb = llvm.create_pass_builder(tm, pto)
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_global_dead_code_eliminate_pass()
    mpm.run(mod, pb)
    mod.verify()
    undefined = sorted({f.name for f in mod.functions
                        if f.is_declaration and not f.name.startswith("llvm.")} |
                       {g.name for g in mod.global_variables if g.is_declaration})
    return tm.emit_object(mod), undefined
