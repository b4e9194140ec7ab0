"""The error path of jitted entry points: how a failing element becomes a
``ck_status`` and a message on the calling thread.

``int32 RAISE_SYMBOL(int32 code, excinfo *info)`` (cold, never inlined) is
called by every entry point (:mod:`ckernels.jit.cpu_codegen`) when the user
function returns an error status.  With the GIL taken,
``call_conv.raise_error`` turns the status into the Python exception (what
Numba's own cfunc wrappers do before *printing* it); it is fetched instead
and handed to :func:`ckernels.errors.record` (imported by name), which
records its message with ``ck_set_error`` and returns the status (the one
exception <-> status mapping of :mod:`ckernels.errors`).  A dynamic
exception (run-time arguments) releases everything it was made of.  It is
compiled once per process into a library of its own and exported by name
(:func:`ensure_shared_functions`), so cached entry points find it.

Native-cached libraries (:mod:`ckernels.jit.native_cache`) carry their own
copy, :func:`native_raise_module`: the Python C API and ``ck_set_error``
only, no Numba runtime.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target

from .. import errors as _errors

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)

#: the status of an exception nobody could classify (from the C enum)
CK_ERR_USER = _errors.UserKernelError.status

#: the symbol of the one error-path function of the process (see
#: :func:`raise_function`); versioned with the code it emits
RAISE_SYMBOL = "ckernels_jit_raise_v2"
_raise_library = None


def _unwrap_items_carry_extra_reference() -> bool:
    """Whether Numba's unwrap function of a dynamic exception (the one that
    boxes the exception's run-time arguments into a tuple) leaves each boxed
    argument with one reference too many: it packs the new objects with
    ``PyTuple_Pack``, which adds its own reference, and never drops theirs
    (``CPUCallConv.emit_unwrap_dynamic_exception_fn``, Numba 0.57 -- 0.68).
    The error path drops that reference where the bug is known to exist;
    elsewhere a leak is safer than a double release
    (``tests/python/test_py_hardening.py`` checks the count either way)."""
    import numba
    try:
        version = tuple(int(p) for p in numba.__version__.split(".")[:2])
    except ValueError:
        return False
    return (0, 57) <= version < (0, 69)


def _emit_raise_dynamic(builder, pyapi, info, fix_item_refs):
    """Raise the Python exception of a *dynamic* user exception (one with
    run-time arguments: ``raise ValueError("bad " + str(x))``) and release
    everything it was made of.  Numba's own ``raise_error`` does the same but
    keeps the static part's bytes, the argument tuple and (outside NRT-enabled
    code) the ``excinfo`` allocation: about 600 bytes per raise."""
    from numba.core.callconv import (HASH_BUF_IDX, PICKLE_BUF_IDX, PICKLE_BUFSZ_IDX,
                                     UNWRAP_FUNC_IDX)
    module = builder.module
    pyapi.err_clear()
    st = builder.load(info)
    static = pyapi.bytes_from_string_and_size(
        builder.extract_value(st, PICKLE_BUF_IDX),
        builder.sext(builder.extract_value(st, PICKLE_BUFSZ_IDX), pyapi.py_ssize_t))
    unwrap_ty = ir.FunctionType(pyapi.pyobj, [_i8p])
    unwrap = builder.bitcast(builder.extract_value(st, UNWRAP_FUNC_IDX), unwrap_ty.as_pointer())
    # the unwrap function boxes the arguments and frees their native buffer
    values = builder.call(unwrap, [builder.extract_value(st, HASH_BUF_IDX)])
    have_values = cgutils.is_not_null(builder, values)
    if fix_item_refs:
        with builder.if_then(have_values, likely=True):
            getitem = pyapi._get_function(
                ir.FunctionType(pyapi.pyobj, [pyapi.pyobj, pyapi.py_ssize_t]),
                name="PyTuple_GetItem")
            with cgutils.for_range(builder, pyapi.tuple_size(values)) as lp:
                pyapi.decref(builder.call(getitem, [values, lp.index]))   # borrowed item
    excobj = cgutils.alloca_once(builder, pyapi.pyobj, zfill=True)
    both = builder.and_(have_values, cgutils.is_not_null(builder, static))
    with builder.if_then(both, likely=True):
        builder.store(pyapi.build_dynamic_excinfo_struct(static, values), excobj)
    pyapi.decref(static)
    pyapi.decref(values)
    nrt_free = cgutils.get_or_insert_function(module, ir.FunctionType(ir.VoidType(), [_i8p]),
                                             "NRT_Free")
    builder.call(nrt_free, [builder.bitcast(info, _i8p)])   # the excinfo allocation
    exc = builder.load(excobj)
    # numba's builder answers None when an argument cannot be converted
    ok = builder.and_(cgutils.is_not_null(builder, exc),
                      builder.icmp_unsigned("!=", exc, pyapi.borrow_none()))
    with builder.if_else(ok, likely=True) as (good, bad):
        with good:
            pyapi.raise_object(exc)  # steals the reference
        with bad:
            pyapi.decref(exc)
            with builder.if_then(cgutils.is_null(builder, pyapi.err_occurred())):
                pyapi.err_set_string("PyExc_RuntimeError",
                                     "ckernels.jit: the exception's run-time arguments could "
                                     "not be converted to Python objects")


def _emit_raise_fn(context, module, name, fix_item_refs):
    """``int32 name(int32 code, excinfo *info)``: the cold error path."""
    from numba.core.callconv import ALLOC_FLAG_IDX, excinfo_ptr_t
    fnty = ir.FunctionType(_i32, [_i32, excinfo_ptr_t])
    fn = ir.Function(module, fnty, name=name)
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    code, info = fn.args
    status = context.call_conv._get_return_status(builder, code, info)
    pyapi = context.get_python_api(builder)
    gil = pyapi.gil_ensure()
    user = builder.and_(status.is_user_exc, cgutils.is_not_null(builder, info))
    dynamic = cgutils.alloca_once_value(builder, cgutils.false_bit)
    with builder.if_then(user):
        flag = builder.extract_value(builder.load(info), ALLOC_FLAG_IDX)
        builder.store(builder.icmp_signed(">", flag, ir.Constant(flag.type, 0)), dynamic)
    with builder.if_else(builder.load(dynamic)) as (dyn, other):
        with dyn:
            _emit_raise_dynamic(builder, pyapi, info, fix_item_refs)
        with other:
            context.call_conv.raise_error(builder, pyapi, status)
    pty = cgutils.alloca_once(builder, pyapi.pyobj, zfill=True)
    pval = cgutils.alloca_once(builder, pyapi.pyobj, zfill=True)
    ptb = cgutils.alloca_once(builder, pyapi.pyobj, zfill=True)
    pyapi.err_fetch(pty, pval, ptb)
    norm = pyapi._get_function(ir.FunctionType(ir.VoidType(), [pyapi.pyobjptr] * 3),
                               name="PyErr_NormalizeException")
    builder.call(norm, [pty, pval, ptb])
    result = cgutils.alloca_once_value(builder, ir.Constant(_i32, -1))
    resobj = cgutils.alloca_once(builder, pyapi.pyobj, zfill=True)
    modname = context.insert_const_string(module, "ckernels.errors")
    mod = pyapi.import_module(modname)
    with builder.if_then(cgutils.is_not_null(builder, mod), likely=True):
        rep = pyapi.object_getattr_string(mod, "record")
        with builder.if_then(cgutils.is_not_null(builder, rep), likely=True):
            val = builder.load(pval)
            arg = builder.select(cgutils.is_not_null(builder, val), val,
                                 pyapi.borrow_none())
            builder.store(pyapi.call_function_objargs(rep, [arg]), resobj)
            res = builder.load(resobj)
            with builder.if_then(cgutils.is_not_null(builder, res), likely=True):
                v = pyapi.long_as_longlong(res)
                builder.store(builder.trunc(v, _i32), result)
        pyapi.decref(rep)
    # drop everything (Py_DecRef is NULL-safe) and any error of the reporting
    pyapi.decref(builder.load(resobj))
    pyapi.decref(mod)
    pyapi.decref(builder.load(pty))
    pyapi.decref(builder.load(pval))
    pyapi.decref(builder.load(ptb))
    pyapi.err_clear()
    st = builder.load(result)
    bad = builder.or_(builder.icmp_signed("<=", st, ir.Constant(_i32, 0)),
                      builder.icmp_signed(">", st, ir.Constant(_i32, _errors.MAX_STATUS)))
    with builder.if_then(bad, likely=False):
        set_error = cgutils.get_or_insert_function(
            module, ir.FunctionType(_i32, [_i32, _i8p]), "ck_set_error")
        msg = context.insert_const_string(
            module, "ckernels.jit: a jitted kernel raised an exception that could not be "
                    "reported")
        builder.call(set_error, [ir.Constant(_i32, CK_ERR_USER), msg])
        builder.store(ir.Constant(_i32, CK_ERR_USER), result)
    pyapi.gil_release(gil)
    builder.ret(builder.load(result))
    return fn


def raise_function(module):
    """Declare, in ``module``, the error path every entry point shares:
    ``int32 RAISE_SYMBOL(int32 code, excinfo *info)``.  With the GIL taken,
    it turns the status into the Python exception (what Numba's own cfunc
    wrappers do before *printing* it), hands it to
    :func:`ckernels.errors.record` (imported by name), which records its
    message with ``ck_set_error`` on the calling thread and returns the
    status, and releases everything the exception was made of.

    It is compiled once per process into a library of its own and exported by
    name (``llvmlite.binding.add_symbol``), so a jitted function costs no
    second copy of it, and cached entry points find it by name."""
    from numba.core.callconv import excinfo_ptr_t
    ensure_shared_functions()
    return cgutils.get_or_insert_function(module, ir.FunctionType(_i32, [_i32, excinfo_ptr_t]),
                                          RAISE_SYMBOL)


def ensure_shared_functions() -> None:
    """Compile the error path every entry point shares
    (:func:`raise_function`) into a library of its own, once per process, and
    export it by a stable name.  Must happen before any code referring to it
    is compiled *or loaded from a cache* (the loader resolves symbols at
    once).  Cheap: IR only, no Numba compilation."""
    global _raise_library
    if _raise_library is None:
        with global_compiler_lock:
            if _raise_library is None:
                # Numba initialises its runtime (NRT_Free, ...) lazily, on a
                # first compilation: do it now, the raise function uses it
                cpu_target.typing_context.refresh()
                cpu_target.target_context.refresh()
                library, mod = shared_library("ckernels_jit_shared")
                _emit_raise_fn(cpu_target.target_context, mod, RAISE_SYMBOL,
                               _unwrap_items_carry_extra_reference())
                _raise_library = export(library, mod, [RAISE_SYMBOL])


def shared_library(name: str):
    library = cpu_target.target_context.codegen().create_library(name)
    return library, library.create_ir_module(name)


def export(library, mod, symbols):
    """Finalize ``library`` with ``mod`` and export ``symbols`` by name."""
    import llvmlite.binding as llvm
    library.add_ir_module(mod)
    library.finalize()
    for symbol in symbols:
        llvm.add_symbol(symbol, library.get_pointer_to_function(symbol))
    return library


def locate_failures(fn, blocks, index, dst) -> None:
    """Make every failing ``ret`` of entry point ``fn`` in ``blocks`` (the
    blocks of one element's code inside the strided loop) record where it
    failed first: ``ck_error_set_element(index, dst)`` (``ckernel/error.h``;
    the lifting layers above prepend their indices).  A ``ret`` of the
    constant 0 is success.  Cold code only: the loop itself is unchanged."""
    setter = cgutils.get_or_insert_function(
        fn.module, ir.FunctionType(ir.VoidType(), [_i64, _i8p]), "ck_error_set_element")
    for block in blocks:
        term = block.terminator
        if not isinstance(term, ir.Ret) or not term.operands:
            continue
        value = term.operands[0]
        if isinstance(value, ir.Constant) and value.constant == 0:
            continue
        b = ir.IRBuilder(block)
        b.position_before(term)
        b.call(setter, [index, b.bitcast(dst, _i8p)])


#: return codes of Numba's calling convention that are not failures:
#: RETCODE_OK, RETCODE_NONE (an Optional's None), RETCODE_STOPIT
_NOT_FAILURES = (0, -2, -3)


def mark_source(context, fn, blocks, fndesc, loc) -> None:
    """In the user function ``fn`` (lowered by ``@ckernels.jit``'s
    lowering), make every failing ``ret`` in ``blocks`` -- those of one
    statement: a ``raise``, or an error propagated from a call -- call
    ``ck_error_set_source(function, file, line)`` first (``ckernel/error.h``),
    so the error path names the user's line.  A ``ret`` of a constant that
    is not a failure (:data:`_NOT_FAILURES`) is left alone.  The outermost
    jitted function records last, so the line is the one in the function the
    kernel was made from."""
    line = getattr(loc, "line", None)
    if not line or line < 0:
        return
    setter = None
    for block in blocks:
        term = block.terminator
        if not isinstance(term, ir.Ret) or not term.operands:
            continue
        value = term.operands[0]
        if isinstance(value, ir.Constant) and value.constant in _NOT_FAILURES:
            continue
        if setter is None:
            setter = cgutils.get_or_insert_function(
                fn.module, ir.FunctionType(ir.VoidType(), [_i8p, _i8p, _i64]),
                "ck_error_set_source")
            name = context.insert_const_string(fn.module, str(fndesc.qualname))
            path = context.insert_const_string(fn.module, str(loc.filename or "?"))
        b = ir.IRBuilder(block)
        b.position_before(term)
        b.call(setter, [name, path, ir.Constant(_i64, line)])


def native_raise_module(name: str, triple: str, data_layout: str):
    """A module defining ``int32 name(int32 code, excinfo *info)``, the error
    path of native-cached libraries (:mod:`ckernels.jit.native_cache`): with
    the GIL, it hands the status, Numba's pickled static exception (if any)
    and a pending Python exception to ``native_cache.record_status``, which
    records the message with ``ck_set_error`` and returns the status.  Python
    C API and ``ck_set_error`` only: no Numba runtime or helper."""
    from numba.core.callconv import PICKLE_BUF_IDX, PICKLE_BUFSZ_IDX, excinfo_ptr_t
    mod = ir.Module(name=name)
    mod.triple = triple
    mod.data_layout = data_layout
    obj = _i8p

    def decl(fname, ret, args, var_arg=False):
        return cgutils.get_or_insert_function(mod, ir.FunctionType(ret, args, var_arg=var_arg),
                                              fname)

    gil_ensure = decl("PyGILState_Ensure", _i32, [])
    gil_release = decl("PyGILState_Release", ir.VoidType(), [_i32])
    from_bytes = decl("PyBytes_FromStringAndSize", obj, [_i8p, _i64])
    err_fetch = decl("PyErr_Fetch", ir.VoidType(), [obj.as_pointer()] * 3)
    err_norm = decl("PyErr_NormalizeException", ir.VoidType(), [obj.as_pointer()] * 3)
    err_clear = decl("PyErr_Clear", ir.VoidType(), [])
    import_mod = decl("PyImport_ImportModule", obj, [_i8p])
    getattr_ = decl("PyObject_GetAttrString", obj, [obj, _i8p])
    call = decl("PyObject_CallFunctionObjArgs", obj, [obj], var_arg=True)
    from_long = decl("PyLong_FromLongLong", obj, [_i64])
    as_long = decl("PyLong_AsLongLong", _i64, [obj])
    decref = decl("Py_DecRef", ir.VoidType(), [obj])
    set_error = decl("ck_set_error", _i32, [_i32, _i8p])
    none = ir.GlobalVariable(mod, _i8, "_Py_NoneStruct")
    none.linkage = "external"

    def cstr(text, gname):
        data = bytearray(text.encode() + b"\0")
        gv = ir.GlobalVariable(mod, ir.ArrayType(_i8, len(data)), gname)
        gv.initializer = ir.Constant(gv.type.pointee, data)
        gv.global_constant = True
        gv.linkage = "internal"
        return gv.bitcast(_i8p)

    fn = ir.Function(mod, ir.FunctionType(_i32, [_i32, excinfo_ptr_t]), name=name)
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    code, info = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    gil = b.call(gil_ensure, [])
    payload = cgutils.alloca_once_value(b, ir.Constant(obj, None))
    user = b.and_(b.icmp_signed(">", code, ir.Constant(_i32, 0)),
                  cgutils.is_not_null(b, info))
    with b.if_then(user):
        st = b.load(info)
        size = b.extract_value(st, PICKLE_BUFSZ_IDX)
        with b.if_then(b.icmp_signed(">", size, ir.Constant(size.type, 0))):
            b.store(b.call(from_bytes, [b.extract_value(st, PICKLE_BUF_IDX),
                                        b.sext(size, _i64)]), payload)
    pty, pval, ptb = (cgutils.alloca_once_value(b, ir.Constant(obj, None)) for _ in range(3))
    b.call(err_fetch, [pty, pval, ptb])
    b.call(err_norm, [pty, pval, ptb])
    result = cgutils.alloca_once_value(b, ir.Constant(_i32, -1))
    resobj = cgutils.alloca_once_value(b, ir.Constant(obj, None))
    func = cgutils.alloca_once_value(b, ir.Constant(obj, None))
    pycode = b.call(from_long, [b.sext(code, _i64)])
    mod_ = b.call(import_mod, [cstr("ckernels.jit.native_cache", "ckn_modname")])
    nonep = none.bitcast(obj)

    def or_none(v):
        return b.select(cgutils.is_not_null(b, v), v, nonep)

    with b.if_then(cgutils.is_not_null(b, mod_), likely=True):
        b.store(b.call(getattr_, [mod_, cstr("record_status", "ckn_fname")]), func)
        f = b.load(func)
        ok = b.and_(cgutils.is_not_null(b, f), cgutils.is_not_null(b, pycode))
        with b.if_then(ok, likely=True):
            b.store(b.call(call, [f, pycode, or_none(b.load(payload)), or_none(b.load(pval)),
                                  ir.Constant(obj, None)]), resobj)
            res = b.load(resobj)
            with b.if_then(cgutils.is_not_null(b, res), likely=True):
                b.store(b.trunc(b.call(as_long, [res]), _i32), result)
    for v in (b.load(resobj), b.load(func), mod_, pycode, b.load(payload), b.load(pty),
              b.load(pval), b.load(ptb)):
        b.call(decref, [v])      # NULL-safe
    b.call(err_clear, [])
    st = b.load(result)
    bad = b.or_(b.icmp_signed("<=", st, ir.Constant(_i32, 0)),
                b.icmp_signed(">", st, ir.Constant(_i32, _errors.MAX_STATUS)))
    with b.if_then(bad, likely=False):
        b.call(set_error, [ir.Constant(_i32, CK_ERR_USER),
                           cstr("ckernels.jit: a jitted kernel raised an exception that "
                                "could not be reported", "ckn_msg")])
        b.store(ir.Constant(_i32, CK_ERR_USER), result)
    b.call(gil_release, [gil])
    b.ret(b.load(result))
    return mod


__all__ = ["RAISE_SYMBOL", "CK_ERR_USER", "raise_function", "ensure_shared_functions",
           "shared_library", "export", "native_raise_module", "locate_failures",
           "mark_source"]
