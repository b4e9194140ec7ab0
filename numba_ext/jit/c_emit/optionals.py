"""Numba's ``Optional(T)`` in device code: the values of null-aware
functions (``?T`` arguments and results, ``docs/nulls.md``).

An optional number or bool is a struct ``ck_opt_<T>_t {T v; uchar ok;}``
(declared in the program on first use, with ``ck_some_<T>(v)`` and
``ck_none_<T>()`` to make one).  ``x is None`` / ``x is not None`` read
``ok``; using an optional where a ``T`` is wanted (Numba's implicit cast)
reads ``v`` after the statement's check that the value is present, which
raises the ``TypeError`` Numba raises on the CPU (``expected float64, got
None``) -- the check is queued by :func:`cast` and emitted before the
statement by the function emitter (:func:`take_checks`).  An optional
string is ``ck_opt_str_t {ck_str_t v; uchar ok;}`` (a view of
:mod:`.strings` and its presence; ``None`` is an empty view with ``ok`` 0),
read as a string (``s.upper()``, ``len(s)``) the same way: the presence
check first.  Optional tuples and structs are not representable here
(refused by the emitter as any other type without a C type)."""

from __future__ import annotations

import operator

from .numba_types import _unlit, _is_bool


def _optional():
    from numba.core import types
    return types.Optional


def is_optional(t) -> bool:
    return isinstance(_unlit(t), _optional())


def _is_none(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), (types.NoneType, types.Omitted))


def c_type(fe, t) -> str | None:
    """The struct of ``Optional(T)`` (declared once per program), or None
    when ``T`` has no scalar C type in the dialect."""
    t = _unlit(t)
    d = fe.d
    vt = _unlit(t.type)
    u8, pre = d.uint8, d.function_prefix
    if _is_str(vt):      # a string view (c_emit.strings) and its presence
        from . import strings as _strings
        st = _strings.c_type(fe)
        name = f"ck_opt_{STR_KEY}_t"
        fe.prog.helper(name, (
            f"typedef struct {{ {st} v; {u8} ok; }} {name};\n"
            f"{pre} {name} ck_some_{STR_KEY}({st} v) {{ {name} r; r.v = v; r.ok = 1; "
            "return r; }\n"
            f"{pre} {name} ck_none_{STR_KEY}(void) {{ {name} r; r.v.p = 0; r.v.n = 0; "
            "r.ok = 0; return r; }\n"))
        return name
    vct = d.scalar_type(vt)
    if vct is None:
        return None
    key = _key(vt)
    name = f"ck_opt_{key}_t"
    fe.prog.helper(name, (
        f"typedef struct {{ {vct} v; {u8} ok; }} {name};\n"
        f"{pre} {name} ck_some_{key}({vct} v) {{ {name} r; r.v = v; r.ok = 1; return r; }}\n"
        f"{pre} {name} ck_none_{key}(void) {{ {name} r; r.v = ({vct})0; r.ok = 0; "
        "return r; }\n"))
    return name


#: the key of ``Optional(unicode_type)``: ``ck_opt_str_t``, ``ck_some_str``
STR_KEY = "str"


def _is_str(vt) -> bool:
    from numba.core import types
    return isinstance(vt, types.UnicodeType)


def _key(vt) -> str:
    if _is_str(vt):
        return STR_KEY
    from ... import dtypes
    return dtypes.of_numba(vt).name


def present(fe, t, ok: str, value: str) -> str:
    """An ``Optional(T)`` of the C value ``value`` (of ``T``) where the C
    condition ``ok`` holds, else ``None`` (a kernel reading a ``?T``
    argument: ``ok`` is its validity bit)."""
    c_type(fe, t)
    key = _key(_unlit(_unlit(t).type))
    return f"({ok}) ? ck_some_{key}({value}) : ck_none_{key}()"


def none_value(fe, t) -> str:
    """A null of ``Optional(T)``."""
    c_type(fe, t)
    return f"ck_none_{_key(_unlit(_unlit(t).type))}()"


def cast(fe, expr: str, from_t, to_t) -> str | None:
    """``expr`` (of ``from_t``) as ``to_t`` where either is optional, else
    None.  An optional read as a value queues its presence check for the
    statement being emitted."""
    f_opt, t_opt = is_optional(from_t), is_optional(to_t)
    if not (f_opt or t_opt):
        return None
    if t_opt:
        tv = _unlit(_unlit(to_t).type)
        key = _key(tv)
        c_type(fe, to_t)
        if _is_none(from_t):
            return f"ck_none_{key}()"
        if f_opt:
            if fe.ct(from_t) == fe.ct(to_t):
                return expr
            fv = _unlit(from_t).type
            return (f"(({expr}).ok ? ck_some_{key}({fe.cast(f'({expr}).v', fv, tv)}) : "
                    f"ck_none_{key}())")
        return f"ck_some_{key}({fe.cast(expr, from_t, tv)})"
    fv = _unlit(_unlit(from_t).type)
    code = fe.error_code(TypeError, (f"expected {_unlit(to_t)}, got None",))
    fe.pending_checks.append(f"if (!{expr}.ok) {fe.raise_code(code)}")
    return fe.cast(f"{expr}.v", fv, to_t)


def is_none_test(fe, dst, fn, lhs, rhs, loc) -> list[str] | None:
    """``dst = lhs is None`` (``is not``) where an operand is optional or
    None, else None."""
    if fn not in (operator.is_, operator.is_not):
        return None
    lt, rt = fe.tyof(lhs), fe.tyof(rhs)
    neg = "" if fn is operator.is_ else "!"
    if _is_none(lt) and _is_none(rt):
        return [f"{dst} = {'true' if fn is operator.is_ else 'false'};"]
    if is_optional(lt) and _is_none(rt):
        v = lhs
    elif is_optional(rt) and _is_none(lt):
        v = rhs
    elif _is_none(lt) or _is_none(rt):      # a plain value is never None
        return [f"{dst} = {'false' if fn is operator.is_ else 'true'};"]
    else:
        return None
    return [f"{dst} = {neg}(!{fe.var(v.name)}.ok);"]


def value_ctype(fe, t) -> tuple[str, bool]:
    """``(C type of T, T is bool)`` of ``Optional(T)``."""
    vt = _unlit(_unlit(t).type)
    return fe.d.scalar_type(vt), _is_bool(vt)


#: the kernels of a null-aware call (:func:`aware_kernels`)
AWARE_KERNEL = "ck_aware_kernel"
PACK_KERNEL = "ck_aware_pack"


def aware_kernels(prog, specs, out, guard: bool) -> str:
    """The kernels of a null-aware call of ``prog.entry`` (a function with
    ``Optional`` parameters or result), one work item per element:

    ``AWARE_KERNEL(out, out_off, ok, ok_off, per argument..., [guard,
    guard_off, guard_bit,] n, err)`` -- every buffer whole with its byte
    offset after it (OpenCL takes sub-buffers at aligned offsets only); per
    argument ``k`` (``specs[k] = (element row in memory, by value,
    bitmap?)``): the values (a buffer read at element ``i``; or
    ``ck_in<k>_val`` and ``ck_in<k>_ok``), then with a bitmap ``ck_b<k>``,
    its byte offset and its bit offset.  An ``Optional`` parameter gets ``None`` where its bit is
    0; ``guard`` (the AND of the bitmaps of option arrays passed for plain
    ``T`` parameters) skips the function on a 0 bit, as nulls propagate.
    The result's value (``out``: its row; 0 under a null) and one byte 0/1
    of presence per element are written; errors go to ``err`` as in every
    kernel (``Dialect.error_store_at``, the element's byte offset).

    ``PACK_KERNEL(bits, ok, n)`` packs the presence bytes into Arrow's
    bitmap, one byte of it per work item (no two items write one byte)."""
    d = prog.dialect
    fe = prog.entry
    u8, u64, i32 = d.uint8, d.uint64, d.int32
    params = [f"{d.pointer(u8)}ck_out", f"{u64} ck_out_off", f"{d.pointer(u8)}ck_ok0",
              f"{u64} ck_ok_off"]
    for k, (dt, by_value, bitmap) in enumerate(specs):
        st = u8 if dt.kind == "b" else d.ctype(dt)
        if by_value:
            params += [f"{st} ck_in{k}_val", f"{u8} ck_in{k}_ok"]
        else:
            params += [f"{d.pointer(u8, True)}ck_in{k}", f"{u64} ck_in{k}_off"]
        if bitmap:
            params += [f"{d.pointer(u8, True)}ck_b{k}", f"{u64} ck_b{k}_off",
                       f"{u64} ck_b{k}_bit"]
    if guard:
        params += [f"{d.pointer(u8, True)}ck_g", f"{u64} ck_g_off", f"{u64} ck_g_bit"]
    params += [f"{u64} ck_n", f"{d.pointer(i32)}ck_errbuf"]
    oct_ = u8 if out.kind == "b" else d.ctype(out)
    lines = [f"{d.kernel_prefix} {AWARE_KERNEL}({', '.join(params)})", "{",
             f"  {u64} i = {d.thread_index};",
             "  if (i >= ck_n) return;",
             f"  {d.pointer(oct_)}o = ({d.pointer(oct_)})(ck_out + ck_out_off);",
             f"  {d.pointer(u8)}ck_ok = ck_ok0 + ck_ok_off;"]
    if guard:
        lines += [f"  {{ {u64} g = ck_g_bit + i;",
                  "    if (!((ck_g[ck_g_off + (g >> 3)] >> (g & 7)) & 1)) "
                  f"{{ o[i] = ({oct_})0; ck_ok[i] = 0; return; }} }}"]
    cargs = []
    for k, ((dt, by_value, bitmap), pt) in enumerate(zip(specs, fe.arg_types)):
        opt = is_optional(pt)
        vct, vbool = value_ctype(fe, pt) if opt else (fe.ct(pt), _is_bool(pt))
        st = u8 if dt.kind == "b" else d.ctype(dt)
        raw = f"ck_in{k}_val" if by_value else \
            f"(({d.pointer(st, True)})(ck_in{k} + ck_in{k}_off))[i]"
        v = f"({raw} != 0)" if (dt.kind == "b" or vbool) else f"({vct}){raw}"
        if not opt:
            lines.append(f"  {vct} x{k} = {v};")
        else:
            ok = f"ck_in{k}_ok" if by_value else "1"
            if bitmap:
                ok = (f"((ck_b{k}[ck_b{k}_off + ((ck_b{k}_bit + i) >> 3)] >> "
                      f"((ck_b{k}_bit + i) & 7)) & 1)")
            key = _key(_unlit(_unlit(pt).type))
            lines.append(f"  {fe.ct(pt)} x{k} = {ok} ? ck_some_{key}({v}) : ck_none_{key}();")
        cargs.append(f"x{k}")
    rct = fe.ct(fe.ret_type)
    lines += [f"  {i32} err = 0;",
              f"  {rct} r = {fe.cname}({', '.join(cargs + ['&err'])});",
              f"  if (err) {{ {d.error_store_at('ck_errbuf', 'err', f'i * {out.size}')} "
              "return; }"]
    if is_optional(fe.ret_type):
        val, ok = "r.v", "r.ok"
    else:
        val, ok = "r", "1"
    conv = f"({val} ? 1 : 0)" if out.kind == "b" else f"({oct_}){val}"
    lines += [f"  if ({ok}) {{ o[i] = {conv}; ck_ok[i] = 1; }}",
              f"  else {{ o[i] = ({oct_})0; ck_ok[i] = 0; }}", "}"]
    return "\n".join(lines) + "\n" + pack_kernel(d)


def pack_kernel(d) -> str:
    """The text of :data:`PACK_KERNEL` (see :func:`aware_kernels`), a whole
    program by itself."""
    u8, u64 = d.uint8, d.uint64
    lines = [f"{d.kernel_prefix} {PACK_KERNEL}({d.pointer(u8)}bits0, {u64} bits_off, "
             f"{d.pointer(u8, True)}ok0, {u64} ok_off, {u64} n)", "{",
             f"  {d.pointer(u8)}bits = bits0 + bits_off;",
             f"  {d.pointer(u8, True)}ok = ok0 + ok_off;",
             f"  {u64} j = {d.thread_index};",
             "  if (j >= ((n + 7) >> 3)) return;",
             f"  {u8} r = 0;",
             "  for (int b = 0; b < 8; b++) {",
             f"    {u64} q = (j << 3) + ({u64})b;",
             f"    if (q < n && ok[q]) r |= ({u8})(1u << b);",
             "  }",
             "  bits[j] = r;", "}"]
    return "\n".join(lines) + "\n"


__all__ = ["is_optional", "c_type", "present", "none_value", "cast", "is_none_test", "value_ctype",
           "aware_kernels", "pack_kernel", "AWARE_KERNEL", "PACK_KERNEL"]
