"""The pod allocator API in jitted code.

``allocate``, ``resize`` and ``finalize`` call ``ck_pod_allocate``,
``ck_pod_resize`` and ``ck_pod_finalize`` by name.  The arena argument is a
``MemBlockPtr`` (borrowed) or a ``MemBlockRef`` (owned; it stays owned by the
caller): these functions never change reference counts.

Addresses are ``intp`` integers (``begin``, ``end``), the same numbers the
Python layer uses; ``[begin, end)`` is the allocation.  A non-zero status
raises the ckernel exception for it (``OutOfMemoryError`` is a MemoryError,
``InvalidArgumentError`` a ValueError, ``InvalidStateError`` a RuntimeError,
...) with the C library's message (``ck_last_error()``), e.g. resizing an
allocation that is no longer the arena's most recent one.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing.templates import signature
from numba.extending import intrinsic, overload

from ..errors import JitOnlyError
from . import symbols
from .memblock import _MEMBLOCK_TYPES, _get_ptr, raise_status

_i8p = ir.IntType(8).as_pointer()
_i64 = ir.IntType(64)

_status_span = types.Tuple((types.int32, types.intp, types.intp))


@intrinsic
def _ck_pod_allocate(typingctx, mb, size, align):
    if not (isinstance(mb, _MEMBLOCK_TYPES) and isinstance(size, types.Integer)
            and isinstance(align, types.Integer)):
        return None
    sig = _status_span(mb, size, align)

    def codegen(context, builder, sig, args):
        p = _get_ptr(context, builder, sig.args[0], args[0])
        b = cgutils.alloca_once_value(builder, cgutils.get_null_value(_i8p))
        e = cgutils.alloca_once_value(builder, cgutils.get_null_value(_i8p))
        n = context.cast(builder, args[1], sig.args[1], types.intp)
        a = context.cast(builder, args[2], sig.args[2], types.intp)
        st = builder.call(symbols.declare(builder, "ck_pod_allocate"), [p, n, a, b, e])
        return context.make_tuple(builder, sig.return_type,
                                  [st, builder.ptrtoint(builder.load(b), _i64),
                                   builder.ptrtoint(builder.load(e), _i64)])
    return sig, codegen


@intrinsic
def _ck_pod_resize(typingctx, mb, size, begin, end):
    if not (isinstance(mb, _MEMBLOCK_TYPES) and all(
            isinstance(t, types.Integer) for t in (size, begin, end))):
        return None
    sig = _status_span(mb, size, begin, end)

    def codegen(context, builder, sig, args):
        p = _get_ptr(context, builder, sig.args[0], args[0])
        bv = builder.inttoptr(context.cast(builder, args[2], sig.args[2], types.intp), _i8p)
        ev = builder.inttoptr(context.cast(builder, args[3], sig.args[3], types.intp), _i8p)
        b = cgutils.alloca_once_value(builder, bv)
        e = cgutils.alloca_once_value(builder, ev)
        n = context.cast(builder, args[1], sig.args[1], types.intp)
        st = builder.call(symbols.declare(builder, "ck_pod_resize"), [p, n, b, e])
        return context.make_tuple(builder, sig.return_type,
                                  [st, builder.ptrtoint(builder.load(b), _i64),
                                   builder.ptrtoint(builder.load(e), _i64)])
    return sig, codegen


@intrinsic
def _ck_pod_finalize(typingctx, mb):
    if not isinstance(mb, _MEMBLOCK_TYPES):
        return None

    def codegen(context, builder, sig, args):
        p = _get_ptr(context, builder, sig.args[0], args[0])
        return builder.call(symbols.declare(builder, "ck_pod_finalize"), [p])
    return signature(types.int32, mb), codegen


def allocate(mb, size, align=1):
    """``(begin, end)``: ``size`` bytes aligned to ``align`` from arena ``mb`` (njit only)."""
    raise JitOnlyError("ckernels.nb.allocate is callable from jitted code; "
                              "use MemBlock.allocator.allocate() from Python")


def resize(mb, size, begin, end):
    """``(begin, end)`` of the most recent allocation ``[begin, end)`` resized to
    ``size`` bytes; it may move, contents are kept up to the smaller size (njit only)."""
    raise JitOnlyError("ckernels.nb.resize is callable from jitted code; "
                              "use MemBlock.allocator.resize() from Python")


def finalize(mb):
    """Release unused capacity of arena ``mb``; no allocation afterwards (njit only)."""
    raise JitOnlyError("ckernels.nb.finalize is callable from jitted code; "
                              "use MemBlock.allocator.finalize() from Python")


@overload(allocate)
def _ov_allocate(mb, size, align=1):
    if not isinstance(mb, _MEMBLOCK_TYPES):
        return None

    def impl(mb, size, align=1):
        if size < 0:
            raise ValueError("allocate: size must be non-negative")
        if align <= 0:
            raise ValueError("allocate: align must be positive")
        st, b, e = _ck_pod_allocate(mb, size, align)
        if st != 0:
            raise_status(st, "ck_pod_allocate failed")
        return b, e
    return impl


@overload(resize)
def _ov_resize(mb, size, begin, end):
    if not isinstance(mb, _MEMBLOCK_TYPES):
        return None

    def impl(mb, size, begin, end):
        if size < 0:
            raise ValueError("resize: size must be non-negative")
        st, b, e = _ck_pod_resize(mb, size, begin, end)
        if st != 0:
            raise_status(st, "ck_pod_resize failed")
        return b, e
    return impl


@overload(finalize)
def _ov_finalize(mb):
    if not isinstance(mb, _MEMBLOCK_TYPES):
        return None

    def impl(mb):
        st = _ck_pod_finalize(mb)
        if st != 0:
            raise_status(st, "ck_pod_finalize failed")
    return impl


__all__ = ["allocate", "resize", "finalize"]
