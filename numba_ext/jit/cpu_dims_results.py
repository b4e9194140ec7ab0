"""Where the results of jitted kernels with core dims go (the storing half
of :mod:`ckernels.jit.cpu_dims`): the layout constants of the kernel data
(``ck_jit_core_kernel``, ``ckernel/jit.h``) and what the element function
calls to write what the user function returned -- a fixed result
(:func:`store_fixed`), the rows of a ``var * R``, ``var * string`` or
``var * ?R`` result (copied into one arena allocation, or finished from the
output parameter's builder), and ``?var * R`` results, whose null row is
``{CK_JIT_NULL_ROW, 0}`` (:func:`null_rows_store`, :func:`null_rows_finish`,
``out.set_null()``), made a null of the rows' bitmap by
``ck_jit_var_option_finish``.
"""

from __future__ import annotations

import functools

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, overload, register_jitable

from .._native import ffi
from .._numba import builder_state as bs
from .._numba import varbuilder as vb
from .._numba import varoptions as vo
from .._numba import varstrings as vs
from . import dims as _dims
from .dims import core, is_option_core, option_value_numba

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i64 = ir.IntType(64)

#: where the core dims start in ck_jit_core_kernel, and one record's size
DIMS_OFFSET = ffi.offsetof("ck_jit_core_kernel", "text_arena") + ffi.sizeof("intptr_t")
TEXT_ARENA_OFFSET = ffi.offsetof("ck_jit_core_kernel", "text_arena")
DIM_SIZE = ffi.sizeof("ck_jit_core_dim")
_KIND, _SIZE, _STRIDE, _OFFSET = (ffi.offsetof("ck_jit_core_dim", f)
                                  for f in ("kind", "size", "stride", "offset"))

def _rec(builder, kd, index, field):
    """Word ``field`` of core dim record ``index`` of the kernel at ``kd``.
    Kernel data never changes while the kernel runs (kernel-abi.md): the load
    is marked invariant, so LLVM hoists it out of the row loop even though
    the loop stores through the destination pointer."""
    base = builder.inttoptr(kd, _i8p)
    p = builder.gep(base, [ir.Constant(_i64, DIMS_OFFSET + DIM_SIZE * index + field)])
    ld = builder.load(builder.bitcast(p, _i64.as_pointer()), align=8)
    ld.set_metadata("invariant.load", builder.module.add_metadata([]))
    return ld


@intrinsic
def _dst_var(typingctx, kd):
    """(stride, offset) of the result's var core dim (record 0)."""
    if not isinstance(kd, types.Integer):
        return None
    rt = types.UniTuple(types.intp, 2)

    def codegen(context, builder, sig, args):
        return context.make_tuple(builder, rt, [_rec(builder, args[0], 0, _STRIDE),
                                                _rec(builder, args[0], 0, _OFFSET)])
    return rt(kd), codegen


@intrinsic
def _text_arena(typingctx, kd):
    """The address of a ``var * string`` result's text arena (kernel data)."""
    if not isinstance(kd, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        p = builder.gep(builder.inttoptr(args[0], _i8p), [ir.Constant(_i64, TEXT_ARENA_OFFSET)])
        ld = builder.load(builder.bitcast(p, _i64.as_pointer()), align=8)
        ld.set_metadata("invariant.load", builder.module.add_metadata([]))
        return ld
    return types.intp(kd), codegen


@functools.lru_cache(maxsize=None)
def var_option_builder(dtype: str):
    """The builder of a ``var * ?R`` result's rows (``dtype``: ``?R``):
    records of CK_JIT_VAR_OPTION_RECORD bytes (``ckernel/jit.h``)."""
    from .._native import lib
    from ..types import as_type
    rec = int(lib.ck_jit_var_option_record_size(as_type(dtype[1:]).c_type))
    return vo.VarOptionBuilderType(option_value_numba(dtype), rec)


# -------------------------------------------------------- storing results --
def store_fixed(out, value, where):
    """Copy what the function returned into the destination's element."""


@overload(store_fixed)
def _ov_store_fixed(out, value, where):
    if isinstance(value, types.Array):
        if value.ndim != out.ndim:
            from numba.core.errors import TypingError
            raise TypingError(f"ckernels.jit: the function returns a {value.ndim}-d array; "
                              f"the result has {out.ndim} dims")

        def impl_array(out, value, where):
            if value.shape != out.shape:
                raise ValueError("ckernels.jit: the returned array's shape differs from the "
                                 "result's core dims " + where)
            out[...] = value
        return impl_array
    if isinstance(value, (types.List, types.UniTuple)) and out.ndim == 1:
        def impl_seq(out, value, where):
            if len(value) != out.shape[0]:
                raise ValueError("ckernels.jit: the function returned " + str(len(value)) +
                                 " elements; the result's core dim " + where + " has " +
                                 str(out.shape[0]))
            for i in range(len(value)):
                out[i] = value[i]
        return impl_seq


@register_jitable
def _store_var(dst, kd, arena, value, dtype):
    b = vb.new(dtype, arena)
    vb.extend_from(b, value)
    st, off = _dst_var(kd)
    vb.finish(b, dst, st, off)


@register_jitable
def _store_var_strings(dst, kd, arena, value):
    b = vs.new_strings(arena, _text_arena(kd))
    vs.extend_from(b, value)
    st, off = _dst_var(kd)
    vs.finish(b, dst, st, off)


@register_jitable
def _finish_var_strings(b, dst, kd):
    st, off = _dst_var(kd)
    vs.finish(b, dst, st, off)


@register_jitable
def _store_var_options(dst, kd, b, value):
    vo.extend_from(b, value)
    st, off = _dst_var(kd)
    vo.finish(b, dst, off)


@register_jitable
def _finish_var_options(b, dst, kd):
    st, off = _dst_var(kd)
    vo.finish(b, dst, off)


@register_jitable
def _finish_var(b, dst, kd):
    st, off = _dst_var(kd)
    vb.finish(b, dst, st, off)


# ---- `?var * R` results: a null row is {CK_JIT_NULL_ROW, 0} (ckernel/jit.h),
# made a null in the rows' bitmap by ck_jit_var_option_finish
@functools.lru_cache(maxsize=None)
def null_rows_store(store):
    """``(dst, kd, arena, value, extra)``: a ``?var * R`` result's row from
    what the function returned -- None (a null row), or what ``store``
    writes (``extra``: the dtype of a ``var * R`` row, the builder of a
    ``var * ?R`` one, 0 for strings)."""
    def rows(dst, kd, arena, value, extra):
        pass

    @overload(rows)
    def _ov_rows(dst, kd, arena, value, extra):
        if isinstance(value, types.NoneType):
            return lambda dst, kd, arena, value, extra: bs.write_null_row(dst)
        if isinstance(value, types.Optional):
            def impl_opt(dst, kd, arena, value, extra):
                if value is None:
                    bs.write_null_row(dst)
                else:
                    store(dst, kd, arena, vo._unwrap(value), extra)
            return impl_opt
        return lambda dst, kd, arena, value, extra: store(dst, kd, arena, value, extra)
    return rows


@register_jitable
def _store_var_strings_x(dst, kd, arena, value, extra):
    _store_var_strings(dst, kd, arena, value)


@register_jitable
def _store_var_options_x(dst, kd, arena, value, extra):
    _store_var_options(dst, kd, extra, value)


@functools.lru_cache(maxsize=None)
def null_rows_finish(finish):
    """``(b, dst, kd)``: the end of a ``?var * R`` row built through the
    output parameter: a null row after ``out.set_null()`` (an error when
    elements were appended), else ``finish``'s."""
    @register_jitable
    def fin(b, dst, kd):
        null, n = bs.null_row_set(b)
        if null:
            if n != 0:
                raise ValueError("ckernels.jit: out.set_null() on a row with elements "
                                 "appended (a null row holds none)")
            bs.write_null_row(dst)
        else:
            finish(b, dst, kd)
    return fin


def _null_rows_result(glb, rc, call_args, out_param, set_null=True):
    """The lines of a ``?var * R`` result (``rc``), and its globals
    (``set_null``: the function may call ``out.set_null()``; not when its
    own signature's result is a plain ``var * R``)."""
    rows = core(rc.rows_text)
    if is_option_core(rows):          # ?var * ?R: one builder of records per row
        glb.update(_bty=var_option_builder(rows.dtype), _new=vo.new_options,
                   _text=_text_arena)
        text = "_text(kd)" if rows.dtype == "?string" else "0"
        new, store, finish, extra = (f"o = _new(_bty, arena, {text})", _store_var_options_x,
                                     _finish_var_options, "o")
    elif rows.dtype == "string":
        glb.update(_new=vs.new_strings, _text=_text_arena)
        new, store, finish, extra = ("o = _new(arena, _text(kd))", _store_var_strings_x,
                                     _finish_var_strings, "0")
    else:
        glb.update(_new=vb.new, _dt=_dims._element(rows.dtype).numba)
        new, store, finish, extra = ("o = _new(_dt, arena)", _store_var, _finish_var, "_dt")
    if out_param:
        glb["_finish"] = null_rows_finish(finish) if set_null else finish
        return [new, f"_user({', '.join(call_args + ['o'])})", "_finish(o, dst, kd)"]
    glb["_rows"] = null_rows_store(store)
    lines = [new] if extra == "o" else []
    return lines + [f"_rows(dst, kd, arena, _user({', '.join(call_args)}), {extra})"]


__all__ = ["DIMS_OFFSET", "DIM_SIZE", "TEXT_ARENA_OFFSET", "store_fixed", "var_option_builder",
           "null_rows_store", "null_rows_finish"]
