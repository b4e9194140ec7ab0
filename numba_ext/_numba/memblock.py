"""Memblocks in jitted code: ``MemBlockPtrType`` (borrowed) and ``MemBlockRefType`` (owned).

Ownership rules
---------------
``MemBlockPtrType`` -- a raw ``ck_memblock *``; Numba never counts it.
    * A :class:`ckernels.MemBlock` passed to a jitted function is unboxed as a
      ``MemBlockPtrType`` *borrowed* for the duration of the call (the Python
      object keeps its reference alive).
    * Returning one (boxing) creates a new owning :class:`ckernels.MemBlock`
      with an incref, so the Python result owns its own reference and the
      count stays balanced.  A NULL pointer boxes to ``None``.
    * ``mb.incref()`` / ``mb.decref()`` adjust the C count manually (inline
      atomics, NRT's ordering; the free path calls ``ck_memblock_free``).  A
      reference you create with ``incref`` is yours to drop or to store
      somewhere that owns it (e.g. a ``ck_string_arrmeta.blockref``).
``MemBlockRefType`` -- one *owned* reference managed by Numba's NRT.
    * Returned by the constructors (:func:`pod_memblock_new`,
      :func:`zeroinit_memblock_new`, :func:`fixed_size_pod_memblock_new`) and
      by :func:`new_reference`.  An NRT meminfo holds the ``ck_memblock *``;
      when the last jitted copy dies, the meminfo's destructor drops the C
      reference (inline decref).  Returning it to Python hands the reference
      over to a new :class:`ckernels.MemBlock` (refcount-correct).
    * It converts implicitly to ``MemBlockPtrType`` when passed to a function
      taking one (the pointer is borrowed from the owner, which stays alive
      until its last use); it never unifies with ``MemBlockPtrType`` in a
      branch merge (that would silently drop ownership).  ``ref.ptr`` gives the
      borrowed pointer explicitly; keep ``ref`` alive while using it.

Both types support ``.incref()``, ``.decref()``, ``.refcount`` (uint32),
``.kind`` (uint32, ``ck_memblock_kind``), ``.address`` (intp) and ``.is_null``;
:func:`borrow` gives the ``MemBlockPtr`` of either.

Errors: a failing C call raises the ckernel exception of its status with the
C message (:func:`raise_status`).  Caveat (Numba, numba#1549): a jitted
function that raises does not release its live NRT locals, so a
``MemBlockRef`` alive at that point leaks its C reference.  Borrowed pointers
leak nothing, which is why the allocator functions and the string builder
only borrow.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import lower_builtin, lower_cast, lower_getattr
from numba.core.typeconv import Conversion
from numba.core.typing.templates import (AttributeTemplate, bound_function,
                                         infer_getattr, signature)
from numba.extending import (NativeValue, box, intrinsic, models, overload,
                             register_jitable, register_model, typeof_impl,
                             unbox)

from ..errors import JitOnlyError
from .. import errors as _errors
from ..memory import MemBlock
from . import symbols
from .stringtype import make_string
from .utf8 import c_string_to_str, load_u8, str_data_address

_i8p = ir.IntType(8).as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)


# ---------------------------------------------------------------- types ----
class MemBlockPtrType(types.Type):
    """A borrowed, uncounted ``ck_memblock *`` (data model: pointer)."""

    def __init__(self):
        super().__init__(name="ckernels.MemBlockPtr")


class MemBlockRefType(types.Type):
    """One owned memblock reference, released by NRT when unused."""

    def __init__(self):
        super().__init__(name="ckernels.MemBlockRef")

    def can_convert_to(self, typingctx, other):
        # unsafe: accepted for call arguments, refused by unification
        if isinstance(other, MemBlockPtrType):
            return Conversion.unsafe
        return None


memblock_ptr_type = MemBlockPtrType()
memblock_ref_type = MemBlockRefType()
_MEMBLOCK_TYPES = (MemBlockPtrType, MemBlockRefType)

register_model(MemBlockPtrType)(models.OpaqueModel)


@register_model(MemBlockRefType)
class MemBlockRefModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("meminfo", types.MemInfoPointer(types.voidptr)),
                   ("ptr", memblock_ptr_type)]
        super().__init__(dmm, fe_type, members)


@typeof_impl.register(MemBlock)
def _typeof_memblock(val, c):
    return memblock_ptr_type


# ------------------------------------------------------- inline refcount ---
def _refcount_ptr(builder, mb):
    """``&mb->refcount`` as an i32 pointer (offset 0, checked at import)."""
    assert symbols.MEMBLOCK_REFCOUNT_OFFSET == 0
    return builder.bitcast(mb, _i32.as_pointer())


def _kind_ptr(builder, mb):
    addr = builder.add(builder.ptrtoint(mb, _i64), ir.Constant(_i64, symbols.MEMBLOCK_KIND_OFFSET))
    return builder.inttoptr(addr, _i32.as_pointer())


def emit_incref(builder, mb):
    """Inline ``ck_memblock_incref``: NULL check + relaxed ``atomicrmw add``."""
    with builder.if_then(cgutils.is_not_null(builder, mb), likely=True):
        builder.atomic_rmw("add", _refcount_ptr(builder, mb), ir.Constant(_i32, 1), "monotonic")


def emit_decref(builder, mb):
    """Inline ``ck_memblock_decref`` with NRT's protocol.

    release fence; old = atomicrmw sub monotonic; if old == 1: acquire fence,
    call ``ck_memblock_free`` (by name).
    """
    with builder.if_then(cgutils.is_not_null(builder, mb), likely=True):
        builder.fence("release")
        old = builder.atomic_rmw("sub", _refcount_ptr(builder, mb), ir.Constant(_i32, 1),
                                 "monotonic")
        with builder.if_then(builder.icmp_unsigned("==", old, ir.Constant(_i32, 1)),
                             likely=False):
            builder.fence("acquire")
            builder.call(symbols.declare(builder, "ck_memblock_free"), [mb])


def _get_ptr(context, builder, ty, val):
    """The raw ``ck_memblock *`` of a MemBlockPtr/MemBlockRef value."""
    if isinstance(ty, MemBlockRefType):
        return cgutils.create_struct_proxy(ty)(context, builder, value=val).ptr
    return val


_DTOR_NAME = "_ckernel_memblock_ref_dtor"


def _ref_dtor(module):
    """NRT destructor of a MemBlockRef payload: decref the stored pointer."""
    fnty = ir.FunctionType(ir.VoidType(), [_i8p, _i64, _i8p])
    fn = cgutils.get_or_insert_function(module, fnty, _DTOR_NAME)
    if fn.is_declaration:
        fn.linkage = "linkonce_odr"
        builder = ir.IRBuilder(fn.append_basic_block())
        slot = builder.bitcast(fn.args[0], _i8p.as_pointer())
        emit_decref(builder, builder.load(slot))
        builder.ret_void()
    return fn


def make_ref(context, builder, mb):
    """Wrap an owned ``ck_memblock *`` (a new reference) into a MemBlockRef value.

    The reference is transferred to NRT (it is dropped by the meminfo's
    destructor).  Raises MemoryError (NRT) if the meminfo cannot be allocated;
    the C reference is then dropped first.
    """
    size = ir.Constant(_i64, 8)
    mi = context.nrt.meminfo_alloc_dtor_unchecked(builder, size, _ref_dtor(builder.module))
    with builder.if_then(cgutils.is_null(builder, mi), likely=False):
        emit_decref(builder, mb)
        context.call_conv.return_user_exc(builder, MemoryError,
                                          ("cannot allocate an NRT meminfo for a memblock",))
    data = context.nrt.meminfo_data(builder, mi)
    builder.store(mb, builder.bitcast(data, _i8p.as_pointer()))
    ref = cgutils.create_struct_proxy(memblock_ref_type)(context, builder)
    ref.meminfo = mi
    ref.ptr = mb
    return ref._getvalue()


@lower_cast(MemBlockRefType, MemBlockPtrType)
def _ref_to_ptr(context, builder, fromty, toty, val):
    return _get_ptr(context, builder, fromty, val)


# ---------------------------------------------------------- boxing --------
def _box_memblock(address: int):
    """Boxing helper: a new owning MemBlock (incref) for ``address``; None if 0."""
    if address == 0:
        return None
    return MemBlock(address, incref=True)


@unbox(MemBlockPtrType)
def _unbox_memblock(typ, obj, c):
    addr_obj = c.pyapi.object_getattr_string(obj, "address")  # raises if closed
    out = cgutils.alloca_once_value(c.builder, cgutils.get_null_value(_i8p))
    with c.builder.if_then(cgutils.is_not_null(c.builder, addr_obj), likely=True):
        addr = c.pyapi.long_as_voidptr(addr_obj)
        c.pyapi.decref(addr_obj)
        c.builder.store(addr, out)
    is_error = cgutils.is_not_null(c.builder, c.pyapi.err_occurred())
    return NativeValue(c.builder.load(out), is_error=is_error)


def _box_address(c, mb):
    fn = c.pyapi.unserialize(c.pyapi.serialize_object(_box_memblock))
    addr_obj = c.pyapi.long_from_ssize_t(c.builder.ptrtoint(mb, c.pyapi.py_ssize_t))
    res = c.pyapi.call_function_objargs(fn, [addr_obj])
    c.pyapi.decref(addr_obj)
    c.pyapi.decref(fn)
    return res


@box(MemBlockPtrType)
def _box_memblock_ptr(typ, val, c):
    return _box_address(c, val)


@box(MemBlockRefType)
def _box_memblock_ref(typ, val, c):
    res = _box_address(c, _get_ptr(c.context, c.builder, typ, val))
    c.context.nrt.decref(c.builder, typ, val)  # boxing steals the native reference
    return res


# ------------------------------------------------- methods & attributes ---
class _MemBlockAttributes(AttributeTemplate):
    @bound_function("ckernels.memblock.incref")
    def resolve_incref(self, ty, args, kws):
        if not args and not kws:
            return signature(types.none)

    @bound_function("ckernels.memblock.decref")
    def resolve_decref(self, ty, args, kws):
        if not args and not kws:
            return signature(types.none)

    def resolve_refcount(self, ty):
        return types.uint32

    def resolve_kind(self, ty):
        return types.uint32

    def resolve_address(self, ty):
        return types.intp

    def resolve_is_null(self, ty):
        return types.boolean


@infer_getattr
class _MemBlockPtrAttributes(_MemBlockAttributes):
    key = MemBlockPtrType


@infer_getattr
class _MemBlockRefAttributes(_MemBlockAttributes):
    key = MemBlockRefType

    def resolve_ptr(self, ty):
        return memblock_ptr_type


for _cls in _MEMBLOCK_TYPES:
    @lower_builtin("ckernels.memblock.incref", _cls)
    def _lower_incref(context, builder, sig, args):
        emit_incref(builder, _get_ptr(context, builder, sig.recvr or sig.args[0], args[0]))
        return context.get_dummy_value()

    @lower_builtin("ckernels.memblock.decref", _cls)
    def _lower_decref(context, builder, sig, args):
        emit_decref(builder, _get_ptr(context, builder, sig.recvr or sig.args[0], args[0]))
        return context.get_dummy_value()

    @lower_getattr(_cls, "refcount")
    def _lower_refcount(context, builder, ty, val):
        mb = _get_ptr(context, builder, ty, val)
        return builder.load_atomic(_refcount_ptr(builder, mb), "monotonic", 4)

    @lower_getattr(_cls, "kind")
    def _lower_kind(context, builder, ty, val):
        return builder.load(_kind_ptr(builder, _get_ptr(context, builder, ty, val)))

    @lower_getattr(_cls, "address")
    def _lower_address(context, builder, ty, val):
        return builder.ptrtoint(_get_ptr(context, builder, ty, val), _i64)

    @lower_getattr(_cls, "is_null")
    def _lower_is_null(context, builder, ty, val):
        return cgutils.is_null(builder, _get_ptr(context, builder, ty, val))


@lower_getattr(MemBlockRefType, "ptr")
def _lower_ref_ptr(context, builder, ty, val):
    return _get_ptr(context, builder, ty, val)


# --------------------------------------------------------- C calls --------
@intrinsic
def _ck_last_error_address(typingctx):
    def codegen(context, builder, sig, args):
        return builder.ptrtoint(builder.call(symbols.declare(builder, "ck_last_error"), []), _i64)
    return signature(types.intp), codegen


@register_jitable
def last_error():
    """The calling thread's last libckernel error message (``ck_last_error``), a new str."""
    return c_string_to_str(_ck_last_error_address())


@register_jitable
def _error_message(what):
    """A CkString view of the C error message, or of ``what`` when there is none.

    A view, not a Numba str: exceptions raised with NRT-allocated arguments
    leak them (Numba's dynamic exceptions never free their arguments), while
    a view boxes straight to a Python str.  The C buffer is thread-local and
    only overwritten by the next failing library call on this thread, and the
    boxing happens when the exception leaves the jitted code, before any.
    ``what`` must be an ASCII string literal (a constant that lives as long
    as the compiled code).
    """
    addr = _ck_last_error_address()
    n = 0
    while load_u8(addr + n) != 0:
        n += 1
    if n == 0:
        w = str_data_address(what)
        return make_string(w, w + len(what))
    return make_string(addr, addr + n)


def _raise_status_function():
    """``raise_status(status, what)`` (jitted code; see its docstring),
    generated from the one status <-> exception table
    (:data:`ckernels.errors.STATUS_NAMES`): one branch per status, since a
    jitted ``raise`` needs its class at compile time."""
    lines = ["def raise_status(status, what):",
             "    msg = _error_message(what)",
             "    st = np.int64(status)"]
    for k, cls in enumerate(sorted(_errors.STATUS_NAMES, key=lambda c: c.status)):
        lines.append(f"    {'if' if k == 0 else 'elif'} st == {cls.status}:")
        lines.append(f"        raise _errors.{cls.__name__}(msg, st)")
    lines += ["    else:", "        raise _errors.CKernelError(msg, st)"]
    ns = {"np": np, "_errors": _errors, "_error_message": _error_message}
    exec(compile("\n".join(lines) + "\n", "<ckernels._numba.memblock raise_status>", "exec"),
         ns)
    fn = ns["raise_status"]
    fn.__module__ = __name__
    fn.__doc__ = """Raise the ckernel exception for a non-zero ``ck_status``.

    The message is the C library's (``ck_last_error()``, copied when the
    exception reaches Python); ``what`` (an ASCII literal naming the failed
    operation) is the message when the library recorded none.  The class is
    the one :func:`ckernels.errors.error_class` maps the status to (a subclass
    of MemoryError for CK_ERR_NO_MEMORY, of ValueError for invalid arguments,
    of RuntimeError for invalid states, ...); ``exc.status`` is the code.
    """
    return register_jitable(fn)


raise_status = _raise_status_function()


def _new_block_intrinsic(cname):
    """(status, ptr_or_null) from ``cname(size_t capacity, ck_memblock **out)``."""
    @intrinsic
    def _call(typingctx, capacity):
        if not isinstance(capacity, types.Integer):
            return None
        sig = types.Tuple((types.int32, memblock_ptr_type))(capacity)

        def codegen(context, builder, sig, args):
            out = cgutils.alloca_once_value(builder, cgutils.get_null_value(_i8p))
            cap = context.cast(builder, args[0], sig.args[0], types.intp)
            status = builder.call(symbols.declare(builder, cname), [cap, out])
            return context.make_tuple(builder, sig.return_type, [status, builder.load(out)])
        return sig, codegen
    return _call


_ck_pod_memblock_new = _new_block_intrinsic("ck_pod_memblock_new")
_ck_zeroinit_memblock_new = _new_block_intrinsic("ck_zeroinit_memblock_new")


@intrinsic
def _ck_fixed_size_pod_memblock_new(typingctx, size, align):
    if not (isinstance(size, types.Integer) and isinstance(align, types.Integer)):
        return None
    sig = types.Tuple((types.int32, memblock_ptr_type, types.intp))(size, align)

    def codegen(context, builder, sig, args):
        out = cgutils.alloca_once_value(builder, cgutils.get_null_value(_i8p))
        data = cgutils.alloca_once_value(builder, cgutils.get_null_value(_i8p))
        s = context.cast(builder, args[0], sig.args[0], types.intp)
        a = context.cast(builder, args[1], sig.args[1], types.intp)
        status = builder.call(symbols.declare(builder, "ck_fixed_size_pod_memblock_new"),
                              [s, a, out, data])
        return context.make_tuple(builder, sig.return_type,
                                  [status, builder.load(out),
                                   builder.ptrtoint(builder.load(data), _i64)])
    return sig, codegen


@intrinsic
def _ck_fixed_size_pod_memblock_data(typingctx, mb):
    if not isinstance(mb, _MEMBLOCK_TYPES):
        return None
    sig = types.UniTuple(types.intp, 3)(mb)

    def codegen(context, builder, sig, args):
        p = _get_ptr(context, builder, sig.args[0], args[0])
        data = cgutils.alloca_once_value(builder, cgutils.get_null_value(_i8p))
        size = cgutils.alloca_once_value(builder, ir.Constant(_i64, 0))
        status = builder.call(symbols.declare(builder, "ck_fixed_size_pod_memblock_data"),
                              [p, data, size])
        return context.make_tuple(builder, sig.return_type,
                                  [builder.sext(status, _i64),
                                   builder.ptrtoint(builder.load(data), _i64),
                                   builder.load(size)])
    return sig, codegen


@intrinsic
def _adopt(typingctx, mb):
    """Turn an owned raw pointer (a new reference) into a MemBlockRef."""
    if not isinstance(mb, MemBlockPtrType):
        return None

    def codegen(context, builder, sig, args):
        return make_ref(context, builder, args[0])
    return memblock_ref_type(mb), codegen


@intrinsic
def _incref_and_adopt(typingctx, mb):
    if not isinstance(mb, _MEMBLOCK_TYPES):
        return None

    def codegen(context, builder, sig, args):
        p = _get_ptr(context, builder, sig.args[0], args[0])
        emit_incref(builder, p)
        return make_ref(context, builder, p)
    return memblock_ref_type(mb), codegen


@intrinsic
def memblock_from_address(typingctx, address):
    """A borrowed ``MemBlockPtr`` for the integer ``address`` (0 gives a NULL pointer)."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.inttoptr(context.cast(builder, args[0], sig.args[0], types.intp), _i8p)
    return memblock_ptr_type(address), codegen


@intrinsic
def borrow(typingctx, mb):
    """The borrowed ``MemBlockPtr`` of a MemBlockPtr or MemBlockRef (no count change)."""
    if not isinstance(mb, _MEMBLOCK_TYPES):
        return None

    def codegen(context, builder, sig, args):
        return _get_ptr(context, builder, sig.args[0], args[0])
    return memblock_ptr_type(mb), codegen


# ------------------------------------------------ public jitted API -------
def pod_memblock_new(initial_capacity=0):
    """A new pod arena (``ck_pod_memblock_new``) as an owned MemBlockRef (njit only)."""
    raise JitOnlyError("ckernels.nb.pod_memblock_new is callable from jitted code; "
                              "use ckernels.MemBlock.pod() from Python")


def zeroinit_memblock_new(initial_capacity=0):
    """A new zero-filled arena (``ck_zeroinit_memblock_new``), owned MemBlockRef (njit only)."""
    raise JitOnlyError("ckernels.nb.zeroinit_memblock_new is callable from jitted code; "
                              "use ckernels.MemBlock.zeroinit() from Python")


def fixed_size_pod_memblock_new(size, align=16):
    """``(ref, data_address)``: a new fixed-size block with zeroed data (njit only)."""
    raise JitOnlyError("ckernels.nb.fixed_size_pod_memblock_new is callable from "
                              "jitted code; use ckernels.MemBlock.fixed_size_pod() from Python")


def fixed_size_pod_data(mb):
    """``(data_address, size)`` of a fixed-size block (njit only)."""
    raise JitOnlyError("ckernels.nb.fixed_size_pod_data is callable from jitted code; "
                              "use MemBlock.data from Python")


def new_reference(mb):
    """An owned MemBlockRef for ``mb`` (increments the C count) (njit only)."""
    raise JitOnlyError("ckernels.nb.new_reference is callable from jitted code; "
                              "use MemBlock.new_reference() from Python")


@overload(pod_memblock_new)
def _ov_pod_memblock_new(initial_capacity=0):
    def impl(initial_capacity=0):
        if initial_capacity < 0:
            raise ValueError("pod_memblock_new: initial_capacity must be non-negative")
        status, mb = _ck_pod_memblock_new(initial_capacity)
        if status != 0:
            raise_status(status, "ck_pod_memblock_new failed")
        return _adopt(mb)
    return impl


@overload(zeroinit_memblock_new)
def _ov_zeroinit_memblock_new(initial_capacity=0):
    def impl(initial_capacity=0):
        if initial_capacity < 0:
            raise ValueError("zeroinit_memblock_new: initial_capacity must be non-negative")
        status, mb = _ck_zeroinit_memblock_new(initial_capacity)
        if status != 0:
            raise_status(status, "ck_zeroinit_memblock_new failed")
        return _adopt(mb)
    return impl


@overload(fixed_size_pod_memblock_new)
def _ov_fixed_size_pod_memblock_new(size, align=16):
    def impl(size, align=16):
        if size < 0 or align <= 0:
            raise ValueError("fixed_size_pod_memblock_new: size and align must be non-negative")
        status, mb, data = _ck_fixed_size_pod_memblock_new(size, align)
        if status != 0:
            raise_status(status, "ck_fixed_size_pod_memblock_new failed")
        return _adopt(mb), data
    return impl


@overload(fixed_size_pod_data)
def _ov_fixed_size_pod_data(mb):
    if isinstance(mb, _MEMBLOCK_TYPES):
        def impl(mb):
            status, data, size = _ck_fixed_size_pod_memblock_data(mb)
            if status != 0:
                raise_status(status, "ck_fixed_size_pod_memblock_data failed")
            return data, size
        return impl


@overload(new_reference)
def _ov_new_reference(mb):
    if isinstance(mb, _MEMBLOCK_TYPES):
        def impl(mb):
            if mb.is_null:
                raise ValueError("new_reference: NULL memblock")
            return _incref_and_adopt(mb)
        return impl


__all__ = ["MemBlockPtrType", "MemBlockRefType", "memblock_ptr_type", "memblock_ref_type",
           "emit_incref", "emit_decref", "make_ref", "raise_status", "last_error",
           "memblock_from_address", "pod_memblock_new",
           "zeroinit_memblock_new", "fixed_size_pod_memblock_new", "fixed_size_pod_data",
           "new_reference", "borrow"]
