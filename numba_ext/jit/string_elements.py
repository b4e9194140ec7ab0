"""String elements of jitted entry points: the shared subroutines that load a
``string`` argument (a ``ck_string {begin, end}``, strict UTF-8) into a Numba
``str`` -- ASCII bytes in place, without a copy or an allocation (the
argument's bytes outlive the call: a NumPy StringDType buffer, a ckernels
arena) -- and store a ``str`` result into the destination arena (the pod
allocator, :func:`ckernels._numba.strings.store_str`).

They are compiled once per process, only when a signature with ``string``
is first compiled or loaded from a cache (:func:`ensure_string_functions`:
Numba's typing of its unicode operations costs about a second), into a
library of their own, and exported by stable names so cached entry points
find them.  A ``string`` result that is a returned concatenation is written
by the one-pass builder instead (:mod:`ckernels.jit.string_builder`).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, compiler, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target
from numba.extending import intrinsic, overload, register_jitable

from ..errors import JitOnlyError
from .._numba.memblock import memblock_from_address
from .._numba.strings import store_str
from .._numba.utf8 import borrow_utf8
from .error_path import ensure_shared_functions, export, shared_library

_i32 = ir.IntType(32)
_i64 = ir.IntType(64)
_string_library = None


@intrinsic
def _ptr_to_intp(typingctx, ptr):
    if ptr != types.voidptr:
        return None

    def codegen(context, builder, sig, args):
        return builder.ptrtoint(args[0], _i64)
    return types.intp(types.voidptr), codegen


@intrinsic
def _load_ck_string(typingctx, ptr):
    """(begin, end) of the ``ck_string`` at ``ptr``, as intp."""
    if ptr != types.voidptr:
        return None
    ret = types.UniTuple(types.intp, 2)

    def codegen(context, builder, sig, args):
        p = builder.bitcast(args[0], _i64.as_pointer())
        b = builder.load(p)
        e = builder.load(builder.gep(p, [ir.Constant(_i32, 1)]))
        return context.make_tuple(builder, ret, [b, e])
    return ret(types.voidptr), codegen


@intrinsic
def _unwrap_optional(typingctx, v):
    """The value of an Optional known not to be None (a new reference)."""
    if not isinstance(v, types.Optional):
        return None

    def codegen(context, builder, sig, args):
        res = context.cast(builder, args[0], sig.args[0], sig.return_type)
        context.nrt.incref(builder, sig.return_type, res)
        return res
    return v.type(v), codegen


@register_jitable
def load_string(ptr):
    """A Numba str of the ck_string at ``ptr`` (a kernel argument, whose bytes
    outlive the call): ASCII bytes used in place (no copy, no allocation),
    anything else decoded (strict UTF-8) into a new str."""
    b, e = _load_ck_string(ptr)
    if e <= b:
        return ""
    return borrow_utf8(b, e - b, True)


def store_string_result(arena, ptr, s):
    """Write ``s`` into ``arena`` (a ck_memblock address) and point the
    ck_string at ``ptr`` to it (jitted code only)."""
    raise JitOnlyError("store_string_result is callable from jitted code only")


@overload(store_string_result)
def _ov_store_string_result(arena, ptr, s):
    if isinstance(s, types.NoneType):   # the function always raises
        return lambda arena, ptr, s: None
    if isinstance(s, types.UnicodeType):
        def impl(arena, ptr, s):
            if arena == 0:
                raise ValueError("a string result needs a destination arena")
            store_str(memblock_from_address(arena), _ptr_to_intp(ptr), s)
        return impl
    if isinstance(s, types.Optional) and isinstance(s.type, types.UnicodeType):
        def impl_opt(arena, ptr, s):
            if s is None:
                raise TypeError("the function returned None for a string result")
            store_string_result(arena, ptr, _unwrap_optional(s))
        return impl_opt


def ensure_string_functions() -> None:
    """Compile the string subroutines (:func:`shared_function`) into a library
    of their own, once per process, exported by stable names.  Only functions
    with ``string`` in a signature call them, and compiling them costs about a
    second (Numba typing of its unicode operations), so this runs when such a
    signature is first compiled or loaded from a cache
    (:meth:`ckernels.jit.JitKernel.compile`, :func:`load_cached`) -- never
    for numeric functions."""
    global _string_library
    ensure_shared_functions()
    if _string_library is None:
        with global_compiler_lock:
            if _string_library is None:
                context = cpu_target.target_context
                library, mod = shared_library("ckernels_jit_strings")
                symbols = []
                flags = compiler.Flags()
                flags.nrt = True
                for symbol, impl, sig in _shared_signatures().values():
                    with context.push_code_library(library):   # linked into it
                        cres = context.compile_subroutine(None, impl, sig, flags=flags,
                                                          caching=False)
                    # exported under a stable name (Numba's mangled names carry a
                    # per-process id; cached entry points must find them)
                    fnty = context.call_conv.get_function_type(sig.return_type, sig.args)
                    wrapper = ir.Function(mod, fnty, name=symbol)
                    b = ir.IRBuilder(wrapper.append_basic_block("entry"))
                    b.ret(b.call(context.declare_function(mod, cres.fndesc), wrapper.args))
                    symbols.append(symbol)
                _string_library = export(library, mod, symbols)


def _store_result(arena, ptr, s):
    store_string_result(arena, ptr, s)


def _shared_signatures():
    """The Numba subroutines every string entry point calls, by the stable
    symbol each is exported under: name -> (symbol, implementation, signature)."""
    ustr = types.unicode_type
    return {
        "load_string": ("ckernels_jit_load_string_v1", load_string, ustr(types.voidptr)),
        "store_string": ("ckernels_jit_store_string_v1", _store_result,
                         types.none(types.intp, types.voidptr, ustr)),
        "store_optional_string": ("ckernels_jit_store_optional_string_v1", _store_result,
                                  types.none(types.intp, types.voidptr, types.Optional(ustr))),
    }


def shared_function(context, module, name):
    """Declare one of the shared subroutines in ``module``:
    ``(function, signature)``, called through Numba's calling convention."""
    ensure_string_functions()
    symbol, _, sig = _shared_signatures()[name]
    fnty = context.call_conv.get_function_type(sig.return_type, sig.args)
    return cgutils.get_or_insert_function(module, fnty, symbol), sig


__all__ = ["load_string", "store_string_result", "ensure_string_functions", "shared_function"]
