"""CPU entry points of jitted kernels with core dims (:mod:`ckernels.jit.dims`).

The entry points have the ``kernel.h`` signatures; each source pointer is the
first byte of one argument's core element (a var core dim: its
``{begin, size}`` slot), the destination pointer that of the result's, and
``self`` is a ``ck_jit_core_kernel`` (``jit.h``): after the code and arena
words, one ``ck_jit_core_dim {kind, size, stride, offset}`` per core dim of
the result and of each argument, which ``ck_jit_make_core_kernel`` copied
from the operands' arrmeta (element types are baked in; sizes and strides
come from the kernel data, so one compiled function serves every shape).

One element runs an *element function*, ordinary Python source generated per
signature and compiled by Numba into the entry points' library::

    def _ck_elem(dst, s0, s1, arena, kd):
        _res(dst, kd, arena, _user(_a0(s0, kd), _a1(s1, kd)))

``_aK`` builds argument K's Numba value over its core element (a read-only
Numba array, or a ``CkArrayType`` view for strings: :func:`argument`);
``_res`` writes what the function returned (:func:`result_store`: a scalar,
an array/list/tuple of the result's fixed shape, checked, or the elements of
a var result, copied into one arena allocation).  A function that takes one
parameter more than the signature's arguments gets the output instead
(:func:`output`): a writable array over the destination's element, or a
:class:`~ckernels._numba.varbuilder.VarBuilderType` appending into the arena.
Numba inlines the user function and the element function into the loops.
"""

from __future__ import annotations

import functools

from llvmlite import ir
from numba.core import cgutils, compiler, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target
from numba.extending import intrinsic, overload, register_jitable

from .. import dtypes
from .._native import ffi
from .._numba import builder_state as bs
from .._numba import varbuilder as vb
from .._numba import varoptions as vo
from .._numba import varstrings as vs
from . import cpu_codegen as cg
from .cpu_dims_results import (DIM_SIZE, DIMS_OFFSET, _KIND, _OFFSET, _SIZE, _STRIDE,
                               _finish_var, _finish_var_options, _finish_var_strings,
                               _null_rows_result, _rec, _store_var, _store_var_options,
                               _store_var_strings, _text_arena, store_fixed,
                               var_option_builder)
from .error_path import locate_failures, raise_function
from .llvm_passes import defined_functions_only
from .string_elements import load_string, store_string_result
from .string_views import emit_scratch_free
from . import dims as _dims
from .dims import VAR, core, is_dimensioned, is_option_core, option_value_numba
from .option_rows import OptionRowType, make_row

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)

_VAR_KIND = 1            # CK_JIT_DIM_VAR
#: one ck_jit_core_option record (after the dims), and its fields
OPT_SIZE = ffi.sizeof("ck_jit_core_option")
_BITS, _BIT_OFFSET, _ORIGIN, _STEP = (ffi.offsetof("ck_jit_core_option", f)
                                      for f in ("bits", "bit_offset", "origin", "step"))


def _core_element(builder, kd, first, ndim, ptr, maybe_var):
    """(data pointer, shapes, strides) of an operand's core element."""
    shape = [_rec(builder, kd, first + i, _SIZE) for i in range(ndim)]
    strides = [_rec(builder, kd, first + i, _STRIDE) for i in range(ndim)]
    data = ptr
    if maybe_var:     # the first dim is var in the signature: var or strided here
        is_var = builder.icmp_signed("==", _rec(builder, kd, first, _KIND),
                                     ir.Constant(_i64, _VAR_KIND))
        data_slot = cgutils.alloca_once_value(builder, ptr)
        size_slot = cgutils.alloca_once_value(builder, shape[0])
        with builder.if_then(is_var):
            slot = builder.bitcast(ptr, _i64.as_pointer())
            begin = builder.load(slot)
            n = builder.load(builder.gep(slot, [ir.Constant(_i64, 1)]))
            off = _rec(builder, kd, first, _OFFSET)
            builder.store(builder.inttoptr(builder.add(begin, off), _i8p), data_slot)
            builder.store(n, size_slot)
        data = builder.load(data_slot)
        shape[0] = builder.load(size_slot)
    return data, shape, strides


@functools.lru_cache(maxsize=None)
def argument(nbty, first: int, maybe_var: bool):
    """Intrinsic ``(ptr: voidptr, kd: intp) -> nbty``: an argument's core
    element as a Numba array (or a string view), its dims read from core
    dim records ``first``, ``first + 1``, ... of the kernel data."""
    from .._numba.arraytype import CkArrayType

    @intrinsic
    def _ck_core_arg(typingctx, ptr, kd):
        if ptr != types.voidptr or not isinstance(kd, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            data, shape, strides = _core_element(builder, args[1], first, nbty.ndim, args[0],
                                                 maybe_var)
            if isinstance(nbty, CkArrayType):
                v = cgutils.create_struct_proxy(nbty)(context, builder)
                v.preamble = cgutils.get_null_value(_i8p)
                v.data = data
                v.arrmeta = cgutils.get_null_value(_i8p)
                v.flags = ir.Constant(_i64, 1)       # CK_ARRAY_READ
                v.derived = cgutils.true_bit
                v.shape = context.make_tuple(builder, nbty.shape_type, shape)
                v.strides = context.make_tuple(builder, nbty.shape_type, strides)
                return v._getvalue()
            return _make_array(context, builder, nbty, data, shape, strides)
        return nbty(types.voidptr, kd), codegen
    return _ck_core_arg


def _make_array(context, builder, nbty, data, shape, strides):
    from numba.np.arrayobj import populate_array
    ary = context.make_array(nbty)(context, builder)
    itemsize = context.get_abi_sizeof(context.get_data_type(nbty.dtype))
    populate_array(ary, data=builder.bitcast(data, ary.data.type),
                   shape=cgutils.pack_array(builder, shape),
                   strides=cgutils.pack_array(builder, strides),
                   itemsize=ir.Constant(_i64, itemsize), meminfo=None)
    return ary._getvalue()


@functools.lru_cache(maxsize=None)
def output(nbty, ndim: int):
    """Intrinsic ``(dst: voidptr, kd: intp) -> nbty``: the writable array over
    the destination's core element (core dim records 0 .. ndim-1)."""
    @intrinsic
    def _ck_core_out(typingctx, dst, kd):
        if dst != types.voidptr or not isinstance(kd, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            data, shape, strides = _core_element(builder, args[1], 0, ndim, args[0], False)
            return _make_array(context, builder, nbty, data, shape, strides)
        return nbty(types.voidptr, kd), codegen
    return _ck_core_out


def _opt_word(builder, kd, at):
    base = builder.inttoptr(kd, _i8p)
    p = builder.gep(base, [ir.Constant(_i64, at)])
    ld = builder.load(builder.bitcast(p, _i64.as_pointer()), align=8)
    ld.set_metadata("invariant.load", builder.module.add_metadata([]))
    return ld


def _option_row(context, builder, rowty, kd, opt_at, data, size, stride, arena=None):
    """An OptionRowType over ``size`` slots at ``data``, its bits from the
    ``ck_jit_core_option`` record at byte ``opt_at`` of the kernel data."""
    bits = builder.inttoptr(_opt_word(builder, kd, opt_at + _BITS), _i8p)
    origin = builder.inttoptr(_opt_word(builder, kd, opt_at + _ORIGIN), _i8p)
    return make_row(context, builder, rowty, data, size, stride, bits,
                    _opt_word(builder, kd, opt_at + _BIT_OFFSET), origin,
                    _opt_word(builder, kd, opt_at + _STEP), arena)


@functools.lru_cache(maxsize=None)
def option_argument(rowty, first: int, maybe_var: bool, opt_at: int):
    """Intrinsic ``(ptr: voidptr, kd: intp) -> OptionRowType``: an argument
    of ``?T`` elements under one core dim (record ``first``), its validity
    from the option record at byte ``opt_at`` of the kernel data."""
    @intrinsic
    def _ck_opt_arg(typingctx, ptr, kd):
        if ptr != types.voidptr or not isinstance(kd, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            data, shape, strides = _core_element(builder, args[1], first, 1, args[0], maybe_var)
            return _option_row(context, builder, rowty, args[1], opt_at, data, shape[0],
                               strides[0])
        return rowty(types.voidptr, kd), codegen
    return _ck_opt_arg


@functools.lru_cache(maxsize=None)
def option_output(rowty, opt_at: int, scalar: bool):
    """Intrinsic ``(dst: voidptr, kd: intp) -> OptionRowType`` (writable):
    the result's ``N * ?R`` core element (core dim record 0), or one slot for
    a scalar ``?R`` result."""
    @intrinsic
    def _ck_opt_out(typingctx, dst, kd):
        if dst != types.voidptr or not isinstance(kd, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            if scalar:
                step = _opt_word(builder, args[1], opt_at + _STEP)
                return _option_row(context, builder, rowty, args[1], opt_at, args[0],
                                   ir.Constant(_i64, 1), step)
            data, shape, strides = _core_element(builder, args[1], 0, 1, args[0], False)
            return _option_row(context, builder, rowty, args[1], opt_at, data, shape[0],
                               strides[0])
        return rowty(types.voidptr, kd), codegen
    return _ck_opt_out


@functools.lru_cache(maxsize=None)
def option_string_output(rowty, opt_at: int):
    """Intrinsic ``(dst: voidptr, kd: intp, arena: intp) -> OptionRowType``
    (writable, ``?string``): the result's ``N * ?string`` core element, its
    text written into ``arena``."""
    @intrinsic
    def _ck_opt_str_out(typingctx, dst, kd, arena):
        if dst != types.voidptr or not isinstance(kd, types.Integer) or \
                not isinstance(arena, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            data, shape, strides = _core_element(builder, args[1], 0, 1, args[0], False)
            return _option_row(context, builder, rowty, args[1], opt_at, data, shape[0],
                               strides[0], context.cast(builder, args[2], sig.args[2],
                                                        types.intp))
        return rowty(types.voidptr, kd, arena), codegen
    return _ck_opt_str_out


@functools.lru_cache(maxsize=None)
def row_valid(opt_at: int):
    """Intrinsic ``(ptr: voidptr, kd: intp) -> bool``: whether the row whose
    ``ck_var_dim_data`` is at ``ptr`` is present, from the rows' option
    record at byte ``opt_at`` of the kernel data (``bits`` NULL: every row
    is; ckernel/jit.h)."""
    @intrinsic
    def _ck_row_valid(typingctx, ptr, kd):
        if ptr != types.voidptr or not isinstance(kd, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            p, kdv = args
            bits = builder.inttoptr(_opt_word(builder, kdv, opt_at + _BITS), _i8p)
            out = cgutils.alloca_once_value(builder, cgutils.true_bit)
            with builder.if_then(cgutils.is_not_null(builder, bits)):
                delta = builder.sub(builder.ptrtoint(p, _i64),
                                    _opt_word(builder, kdv, opt_at + _ORIGIN))
                bit = builder.add(_opt_word(builder, kdv, opt_at + _BIT_OFFSET),
                                  builder.sdiv(delta, _opt_word(builder, kdv, opt_at + _STEP)))
                byte = builder.load(builder.gep(bits, [builder.ashr(bit, ir.Constant(_i64, 3))]))
                sh = builder.trunc(builder.and_(bit, ir.Constant(_i64, 7)), _i8)
                builder.store(builder.trunc(builder.lshr(byte, sh), ir.IntType(1)), out)
            return builder.load(out)
        return types.boolean(types.voidptr, kd), codegen
    return _ck_row_valid


def scalar_argument(name: str, element, opt_at: int):
    """The loader of an argument of a dims signature with no dims of its own
    (``float64``, ``string``, ``?string``), the call text for argument
    ``i``'s loader, and the ``opt_at`` of the next argument: a ``?T`` one has
    its option record at ``opt_at`` (ckernel/jit.h: one per operand whose
    pattern's element is an option, dims or not) and gives the function None
    for a null slot."""
    opt = name.startswith("?")
    inner = load_string if name in ("string", "?string") else cg.loader(
        element.value.numba if opt else element.numba)
    if not opt:
        return inner, "_a{i}(s{i})", opt_at
    return (null_row_argument(row_valid(opt_at), _with_kd(inner)), "_a{i}(s{i}, kd)",
            opt_at + OPT_SIZE)


@functools.lru_cache(maxsize=None)
def _with_kd(inner):
    def load(p, kd):
        return inner(p)
    return register_jitable(load)


@functools.lru_cache(maxsize=None)
def null_row_argument(valid, inner):
    """``(ptr, kd) -> Optional(row)``: None for a null row (``valid`` says
    which), else what ``inner`` loads (the ``var * T`` row)."""
    def load(p, kd):
        if valid(p, kd):
            return inner(p, kd)
        return None
    return register_jitable(load)


def store_option(out, value, where):
    """Write what the function returned into a writable OptionRowType: a
    scalar (None: a null) into slot 0 of a ``?R`` result, or an array, list
    or tuple of the row's length (None elements: nulls)."""


@overload(store_option)
def _ov_store_option(out, value, where):
    if not isinstance(out, OptionRowType):
        return None
    if isinstance(value, (types.Number, types.Boolean, types.NoneType, types.Optional)):
        def impl_scalar(out, value, where):
            out[0] = value
        return impl_scalar
    if isinstance(value, types.Array) and value.ndim != 1:
        from numba.core.errors import TypingError
        raise TypingError(f"ckernels.jit: the function returns a {value.ndim}-d array; "
                          "the result has 1 dim")
    if isinstance(value, (types.Array, types.List, types.BaseTuple, OptionRowType)):
        def impl_seq(out, value, where):
            if len(value) != len(out):
                raise ValueError("ckernels.jit: the function returned " + str(len(value)) +
                                 " elements; the result's core dim " + where + " has " +
                                 str(len(out)))
            for i in range(len(value)):
                out[i] = value[i]
        return impl_seq


def numba_argument(name: str):
    """The Numba type the function sees for a signature argument: an
    :class:`~ckernels.jit.option_rows.OptionRowType` for option elements under
    a core dim, else :func:`ckernels.jit.dims.numba_argument`'s."""
    c = core(name) if is_dimensioned(name) else None
    if c is not None and c.null_rows:    # `?var * T`: None or the row
        return types.Optional(numba_argument(c.rows_text))
    if c is not None and is_option_core(c):
        return OptionRowType(option_value_numba(c.dtype))
    return _dims.numba_argument(name)


def numba_output(name: str):
    """The Numba type of the output parameter of a dimensioned result (a
    writable OptionRowType for ``N * ?R``, else ``dims.numba_output``'s)."""
    c = core(name)
    if is_option_core(c) and c.has_var:
        return var_option_builder(c.dtype)
    if is_option_core(c):
        return OptionRowType(option_value_numba(c.dtype), writable=True)
    return _dims.numba_output(name)


# ------------------------------------------------------- element function --
def uses_output(kernel, sig) -> bool:
    """Whether the function takes the output as one more parameter
    (``JitKernel._out_param``, :func:`ckernels.jit.dims.output_parameter`)."""
    return kernel._out_param is not None and is_dimensioned(sig.ret)


def numba_arguments(kernel, sig) -> tuple:
    """The Numba argument types the function is compiled for."""
    nb = tuple(numba_argument(a) for a in sig.args)
    if uses_output(kernel, sig):
        nb += (numba_output(sig.ret),)
    return nb


def _options_at(sig, first: int) -> int:
    """Where the option records start in a core kernel's data: after every
    operand's core dims (``first``: the result's), ckernel/jit.h."""
    return DIMS_OFFSET + DIM_SIZE * (first + sum(core(a).ndim for a in sig.args
                                                 if is_dimensioned(a)))


def _dims_argument(name: str, first: int, opt_at: int):
    """The loader of the dimensioned argument ``name`` whose core dims start
    at dim ``first`` (a ``?T`` core also reads the option record at
    ``opt_at``), and the ``first`` and ``opt_at`` of the next argument."""
    c = core(name)
    if c.null_rows:     # the rows' record first, then the elements' (ckernel/jit.h)
        valid = row_valid(opt_at)
        inner, first, opt_at = _dims_argument(c.rows_text, first, opt_at + OPT_SIZE)
        return null_row_argument(valid, inner), first, opt_at
    var = c.dims[0].kind == VAR
    if is_option_core(c):
        return (option_argument(numba_argument(name), first, var, opt_at),
                first + c.ndim, opt_at + OPT_SIZE)
    return argument(numba_argument(name), first, var), first + c.ndim, opt_at


def _compile_element(sig, lines, glb, note: str):
    """``_ck_elem(dst, s0, ..., arena, kd)`` with body ``lines`` over the
    globals ``glb``: the function, its Numba signature and its source."""
    params = "".join(f"s{i}, " for i in range(len(sig.args)))
    src = f"def _ck_elem(dst, {params}arena, kd):\n" + "".join(f"    {ln}\n" for ln in lines)
    ns: dict = {}
    exec(compile(src, f"<ckernels.jit element {sig.text}{note}>", "exec"), glb, ns)
    nbsig = types.none(*([types.voidptr] * (len(sig.args) + 1) + [types.intp, types.intp]))
    return ns["_ck_elem"], nbsig, src


def element_function(user_dispatcher, sig, out_param: bool, plain=None):
    """Generate the element function for one signature (see the module doc).

    ``plain``: ``sig`` is the null-propagating variant of the user's
    signature ``plain`` (:func:`propagating_signature`): its promoted
    arguments arrive as option rows, and a row holding a null makes the
    result element null without running the function; otherwise the
    function gets the rows' values as the plain arrays it was compiled for."""
    if plain is not None:
        return _propagating_element(user_dispatcher, sig, out_param, plain)
    glb = {"_user": user_dispatcher}
    ret = sig.ret
    rc = core(ret) if is_dimensioned(ret) else None
    first = rc.ndim if rc is not None else 0
    opt_at = _options_at(sig, first)
    ret_opt_at = None
    # a `?var * R` result has no record for its rows (ckernel/jit.h)
    if (rc is None and ret.startswith("?")) or (rc is not None and is_option_core(rc)):
        ret_opt_at, opt_at = opt_at, opt_at + OPT_SIZE
    call_args = []
    for i, name in enumerate(sig.args):
        if is_dimensioned(name):
            glb[f"_a{i}"], first, opt_at = _dims_argument(name, first, opt_at)
            call_args.append(f"_a{i}(s{i}, kd)")
        else:
            glb[f"_a{i}"], call, opt_at = scalar_argument(name, sig.arg_elements[i], opt_at)
            call_args.append(call.format(i=i))
    lines = []
    if rc is not None and rc.null_rows:    # ?var * R: None (or out.set_null()) a null row
        lines += _null_rows_result(glb, rc, call_args, out_param)
    elif ret == "?string":             # None: a null; a str or a view: into the arena
        from . import option_rows as orows
        glb.update(_out=option_output(OptionRowType(types.unicode_type, writable=True),
                                      ret_opt_at, True),
                   _st=store_string_result, _wn=orows.write_null, _wv=orows.write_valid)
        lines += ["o = _out(dst, kd)", f"v = _user({', '.join(call_args)})",
                  "if v is None:", "    _wn(o, 0)", "else:", "    _st(arena, dst, v)",
                  "    _wv(o, 0)"]
    elif rc is not None and is_option_core(rc) and rc.has_var:
        # var * ?R: rows of records, laid out by ck_jit_var_option_finish
        glb.update(_bty=var_option_builder(rc.dtype), _new=vo.new_options, _text=_text_arena)
        text = "_text(kd)" if rc.dtype == "?string" else "0"
        lines.append(f"o = _new(_bty, arena, {text})")
        if out_param:
            glb["_finish"] = _finish_var_options
            lines += [f"_user({', '.join(call_args + ['o'])})", "_finish(o, dst, kd)"]
        else:
            glb["_store"] = _store_var_options
            lines.append(f"_store(dst, kd, o, _user({', '.join(call_args)}))")
    elif rc is not None and rc.dtype == "?string":     # N * ?string
        glb.update(_out=option_string_output(OptionRowType(types.unicode_type, writable=True),
                                             ret_opt_at),
                   _store=store_option)
        if out_param:
            lines += ["o = _out(dst, kd, arena)", f"_user({', '.join(call_args + ['o'])})"]
        else:
            lines.append(f"_store(_out(dst, kd, arena), _user({', '.join(call_args)}), "
                         f"{('(' + rc.text + ')')!r})")
    elif ret_opt_at is not None:     # ?R, N * ?R: a writable OptionRowType
        value = (sig.ret_element.value.numba if rc is None else
                 numba_output(ret).dtype)
        glb["_out"] = option_output(OptionRowType(value, writable=True), ret_opt_at,
                                    rc is None)
        if out_param:
            lines += ["o = _out(dst, kd)", f"_user({', '.join(call_args + ['o'])})"]
        else:
            glb["_store"] = store_option
            where = "(" + (rc.text if rc is not None else ret) + ")"
            lines.append(f"_store(_out(dst, kd), _user({', '.join(call_args)}), {where!r})")
    elif rc is None:
        call = f"_user({', '.join(call_args)})"
        if ret == "string":
            glb["_st"] = store_string_result
            lines.append(f"_st(arena, dst, {call})")
        else:
            glb["_st"] = cg.storer(sig.ret_element.numba)
            lines.append(f"_st(dst, {call})")
    elif rc.has_var and rc.dtype == "string":
        if out_param:
            # the builder's state is on this function's stack: made here
            glb.update(_new=vs.new_strings, _text=_text_arena, _finish=_finish_var_strings)
            lines += ["o = _new(arena, _text(kd))",
                      f"_user({', '.join(call_args + ['o'])})",
                      "_finish(o, dst, kd)"]
        else:
            glb["_store"] = _store_var_strings
            lines.append(f"_store(dst, kd, arena, _user({', '.join(call_args)}))")
    elif rc.has_var:
        glb["_dt"] = sig.ret_element.numba
        if out_param:
            glb.update(_new=vb.new, _finish=_finish_var)
            lines += ["o = _new(_dt, arena)",
                      f"_user({', '.join(call_args + ['o'])})",
                      "_finish(o, dst, kd)"]
        else:
            glb["_store"] = _store_var
            lines.append(f"_store(dst, kd, arena, _user({', '.join(call_args)}), _dt)")
    else:
        glb["_out"] = output(numba_output(ret), rc.ndim)
        if out_param:
            lines += ["o = _out(dst, kd)", f"_user({', '.join(call_args + ['o'])})"]
        else:
            glb["_store"] = store_fixed
            lines.append(f"_store(_out(dst, kd), _user({', '.join(call_args)}), "
                         f"{('(' + rc.text + ')')!r})")
    return _compile_element(sig, lines, glb, "")


def propagating_signature(plain, rows=()):
    """The signature a plain ``T`` signature with dims runs under when its
    operands hold nulls: every dimensioned argument over numbers or bool with
    one core dim takes ``?T`` (``var * float64`` -> ``var * ?float64``), so
    does every number, bool or string argument without dims (``string`` ->
    ``?string``), the result becomes ``?R`` (``N * R`` -> ``N * ?R``,
    ``var * R`` -> ``?var * R``).  A result element is null
    when any of its rows holds a null or is one (Arrow's and polars'
    default).  ``rows``: the indices of arguments whose operands have null
    rows; their ``var * T`` becomes ``?var * ?T`` (``?var * T`` for strings).
    Raises NotSupportedError for results that cannot hold a null this way."""
    from ..errors import NotSupportedError
    from .signature import Signature

    def promote(name):
        if not is_dimensioned(name):     # a scalar beside the rows: ?T, a null out
            return "?" + name if name in _NUMBERS or name == "string" else name
        c = core(name)
        # string rows stay plain: the function's view of them is no array over
        # an option row's memory (their null rows still propagate: ?var * string)
        if c is None or c.ndim != 1 or is_option_core(c) or c.dtype not in _NUMBERS or \
                c.dtype == "string":
            return name
        return name[:len(name) - len(c.dtype)] + "?" + c.dtype

    def promote_rows(i, name):
        c = core(name)
        if i not in rows or c is None or c.null_rows or c.ndim != 1 or c.dims[0].kind != VAR:
            return promote(name)
        return "?" + promote(name)

    ret = plain.ret
    rc = core(ret) if is_dimensioned(ret) else None
    if rc is None and (ret in _NUMBERS or ret == "string"):
        vret = "?" + ret
    elif rc is not None and not rc.has_var and rc.ndim == 1 and rc.dtype in _NUMBERS:
        vret = promote(ret)
    elif rc is not None and rc.null_rows:     # ?var * R: a null row
        vret = ret
    elif rc is not None and rc.has_var and rc.ndim == 1:     # var * R -> ?var * R
        vret = "?" + ret
    else:
        raise NotSupportedError(
            f"a result '{ret}' cannot hold the nulls of its arguments (null propagation "
            "under dims gives ?R, N * ?R or ?var * R results over numbers or bool, or "
            "?string; to give a row for a null, declare the argument ?T, or ?var * T for "
            "rows, and return one, such as [None], when it is None)")
    return Signature(vret, tuple(promote_rows(i, a) for i, a in enumerate(plain.args)))


_NUMBERS = frozenset(d.name for d in dtypes.JIT)


def _propagating_element(user_dispatcher, sig, out_param, plain):
    from . import option_rows as orows
    glb = {"_user": user_dispatcher, "_null": orows.has_null, "_set_all": orows.set_all,
           "_store": store_option}
    rc = core(sig.ret) if is_dimensioned(sig.ret) else None
    first = rc.ndim if rc is not None else 0
    opt_at = _options_at(sig, first)
    rows_ret = rc is not None and rc.null_rows      # ?var * R: a null row out
    if rows_ret:
        glb["_wnr"] = bs.write_null_row
        lines = []
        if is_option_core(rc):        # the elements' record (none for the rows)
            opt_at += OPT_SIZE
    else:
        value = sig.ret_element.value.numba
        glb["_out"] = option_output(OptionRowType(value, writable=True), opt_at, rc is None)
        opt_at += OPT_SIZE
        lines = ["o = _out(dst, kd)"]
    text = sig.ret == "?string"
    if text:
        glb.update(_st=store_string_result, _wv=orows.write_valid)
    call_args, rows = [], []
    for i, (name, pname) in enumerate(zip(sig.args, plain.args)):
        if not is_dimensioned(name):
            glb[f"_a{i}"], call, opt_at = scalar_argument(name, sig.arg_elements[i], opt_at)
            if name != pname:            # ?T for T: None is a null out
                glb["_uw"] = vo._unwrap
                lines.append(f"x{i} = {call.format(i=i)}")
                rows.append(f"x{i} is None")
                call_args.append(f"_uw(x{i})")
            else:
                call_args.append(call.format(i=i))
            continue
        c = core(name)
        if c.null_rows and not core(pname).null_rows:    # a null row: a null out
            glb[f"_rv{i}"] = row_valid(opt_at)
            rows.append(f"not _rv{i}(s{i}, kd)")
            name = c.rows_text
            opt_at += OPT_SIZE
        glb[f"_a{i}"], first, opt_at = _dims_argument(name, first, opt_at)
        if is_option_core(core(name)) and not is_option_core(core(pname)):
            glb[f"_v{i}"] = orows.values(numba_argument(pname))
            lines.append(f"r{i} = _a{i}(s{i}, kd)")
            rows.append(f"_null(r{i})")
            call_args.append(f"_v{i}(r{i})")
        else:
            call_args.append(f"_a{i}(s{i}, kd)")
    lines.append(f"if {' or '.join(rows) or 'False'}:")
    lines.append("    _wnr(dst)" if rows_ret else "    _set_all(o, False)")
    lines.append("else:")
    if rows_ret:
        body = _null_rows_result(glb, rc, call_args, out_param,
                                 set_null=core(plain.ret).null_rows)
        lines += ["    " + ln for ln in body]
    elif out_param:
        glb["_w"] = orows.values(numba_output(plain.ret))
        lines.append(f"    _user({', '.join(call_args + ['_w(o)'])})")
        lines.append("    _set_all(o, True)")
    elif text:
        lines.append(f"    _st(arena, dst, _user({', '.join(call_args)}))")
        lines.append("    _wv(o, 0)")
    else:
        where = "(" + (rc.text if rc is not None else sig.ret) + ")"
        lines.append(f"    _store(o, _user({', '.join(call_args)}), {where!r})")
    return _compile_element(sig, lines, glb, " (nulls propagated)")


# ------------------------------------------------------------- trampolines --
def _emit(module, symbase, elem_fn, context, raise_fn, nsrc, arena_offset, frees=False):
    """The single and strided entry points around the element function
    (``frees``: the strided entry frees the thread's scratch string arena
    when it returns, on an error too, as the plain entry points do: the
    temporaries of string methods never outlive the call)."""
    argtys = [types.voidptr] * (nsrc + 1) + [types.intp, types.intp]

    def emit(builder, dst, srcs, self_ptr, free=False):
        kd = builder.ptrtoint(self_ptr, _i64)
        p = builder.gep(self_ptr, [ir.Constant(_i64, arena_offset)])
        arena = builder.load(builder.bitcast(p, _i64.as_pointer()), align=8)
        status, _ = context.call_conv.call_function(builder, elem_fn, types.none, argtys,
                                                    [dst, *srcs, arena, kd])
        with builder.if_then(status.is_error, likely=False):
            code = builder.call(raise_fn, [status.code, status.excinfoptr])
            if free:
                emit_scratch_free(builder)
            builder.ret(code)

    fn = ir.Function(module, ir.FunctionType(_i32, [_i8p, _i8p.as_pointer(), _i8p]),
                     name=f"{symbase}_single")
    dst, src, self_ptr = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    emit(b, dst, [b.load(b.gep(src, [ir.Constant(_i64, j)])) for j in range(nsrc)], self_ptr)
    b.ret(ir.Constant(_i32, 0))

    fn = ir.Function(module, ir.FunctionType(_i32, [_i8p, _i64, _i8p.as_pointer(),
                                                    _i64.as_pointer(), _i64, _i8p]),
                     name=f"{symbase}_strided")
    dst, dst_stride, src, src_stride, count, self_ptr = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    srcs = [b.load(b.gep(src, [ir.Constant(_i64, j)])) for j in range(nsrc)]
    steps = [b.load(b.gep(src_stride, [ir.Constant(_i64, j)])) for j in range(nsrc)]
    with cgutils.for_range(b, count) as lp:
        i = lp.index
        d = b.gep(dst, [b.mul(i, dst_stride)])
        before = set(map(id, fn.blocks)) - {id(b.block)}
        emit(b, d, [b.gep(s, [b.mul(i, st)]) for s, st in zip(srcs, steps)], self_ptr, frees)
        locate_failures(fn, [k for k in fn.blocks if id(k) not in before], i, d)
    if frees:
        emit_scratch_free(b)
    b.ret(ir.Constant(_i32, 0))


def build(user_dispatcher, sig, symbase, out_param, cachable=False,
          plain=None) -> "cg.Trampolines":
    """Generate the entry points of one signature into a new, finalized library
    (``plain``: a null-propagating variant, :func:`element_function`)."""
    context = cpu_target.target_context.subtarget(enable_nrt=True)
    offset = cg.arena_offset()
    with global_compiler_lock:
        library = context.codegen().create_library(symbase)
        defined_functions_only(library)
        if cachable:
            library.enable_object_caching()
        module = library.create_ir_module(symbase)
        raise_fn = raise_function(module)
        elem, elem_sig, src = element_function(user_dispatcher, sig, out_param, plain)
        flags = compiler.Flags()
        flags.nrt = True
        with context.push_code_library(library):
            cres = context.compile_subroutine(None, elem, elem_sig, flags=flags, caching=False)
        # compile_subroutine keeps every result in the context's internal-function
        # cache; the element function is new per signature (see cpu_codegen)
        for key in [k for k in context.cached_internal_func if k[0] is elem.__code__]:
            del context.cached_internal_func[key]
        cg.inline_into_loops(cres)
        elem_fn = context.declare_function(module, cres.fndesc)
        _emit(module, symbase, elem_fn, context, raise_fn, len(sig.args), offset,
              frees="string" in str(sig))
        library.add_ir_module(module)
        library.finalize()
    return cg.Trampolines(library, symbase, from_cache=False, element_source=src)


def entry_points(kernel, sig, plain=None):
    """The entry points of ``kernel`` for the dimensioned signature ``sig``
    (built, or loaded from the on-disk cache with ``cache=True``); ``plain``:
    ``sig`` is the null-propagating variant of that signature."""
    out_param = uses_output(kernel, plain if plain is not None else sig)
    prop = f"|nulls={plain.text}" if plain is not None else ""
    key_text = (f"{kernel.__module__}.{kernel.__qualname__}|{sig.text}{prop}|out={out_param}|"
                f"{kernel._code_key()}|{kernel.error_model}|dims/5")
    symbase = cg.symbol_base(kernel.__qualname__, key_text, unique=not kernel._cache)
    if not kernel._cache:
        return build(kernel.dispatcher, sig, symbase, out_param, plain=plain)
    from .cpu import _LOADED
    tramp = _LOADED.get(symbase)
    if tramp is None:
        cache = kernel._trampoline_cache()
        key = cg.cache_key(symbase, sig.args, sig.ret, cg.arena_offset())
        tramp = cg.load_cached(cache, key, symbase)
        counts = kernel._kernel_hits
        if tramp is None:
            tramp = build(kernel.dispatcher, sig, symbase, out_param, cachable=True,
                          plain=plain)
            cg.save_cached(cache, key, tramp)
            counts = kernel._kernel_misses
        counts[sig.text] = counts.get(sig.text, 0) + 1
        _LOADED[symbase] = tramp
    return tramp


__all__ = ["argument", "output", "store_fixed", "option_argument", "option_output",
           "row_valid", "null_row_argument",
           "store_option", "propagating_signature", "element_function", "build", "entry_points",
           "uses_output", "numba_arguments", "DIMS_OFFSET", "DIM_SIZE"]
