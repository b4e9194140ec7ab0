"""Arrays of core dims in device C: what the emitter does with them.

A dimensioned argument of a jitted function on a device
(:mod:`ckernels.jit.device_dims`) is the Numba array the CPU function sees
(``types.Array(dtype, ndim, "A", readonly=True)``); in C it is a small view
struct, ``ck_view<nd>_t`` (``ck_wview<nd>_t`` when writable: the output
parameter)::

    typedef struct { __global const uchar *p; long n[nd]; long s[nd]; } ck_view2_t;

-- the element pointer, the core dims' sizes and byte strides.  The emitter
(:class:`ckernels.jit.c_emit.FunctionEmitter`, ``fe`` below) asks this module
for the C type of arrays (:func:`c_type`) and for what it does with them
(:func:`array_expr`: ``len(x)``, ``x.shape``, ``x.size``, ``x.ndim``, ``x[i]``,
``x[i, j]``, ``m[i]`` of a 2-d array (a row view); :func:`setitem`: ``out[i] =
v``).  Indices wrap when negative, as in Numba, and an index out of bounds
raises ``IndexError("index is out of bounds")`` (Numba's message under
``boundscheck=True``) instead of reading past the data.  A function writing
its output parameter returns ``None``: C ``ck_none_t``.  Slicing, iterating
over an array and NumPy's array functions are CPU-only (the emitter's
one-line ``NotSupportedError`` naming the line).
"""

from __future__ import annotations

from ... import dtypes


def _unlit(t):
    from numba.core import types
    return types.unliteral(t)


def _is_bool(t) -> bool:
    from numba.core import types
    return _unlit(t) == types.boolean


def _is_int(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), types.Integer)


def _int64_t():
    from numba.core import types
    return types.int64


_NONE_T = "ck_none_t"


def c_type(fe, t) -> str | None:
    """The C type of a core-dim array (a view struct, declared in the program
    on first use) or of ``None`` (what a function writing its output
    parameter returns)."""
    from numba.core import types
    d = fe.d
    if isinstance(t, types.NoneType):
        return fe.prog.helper(_NONE_T, f"typedef {d.uint8} {_NONE_T};\n")
    el = _unlit(t.dtype)
    if not (_is_bool(el) or el in _SCALARS()) or d.c_type(el) is None:
        return None     # structs, complex, ...: CPU-only under dims
    name = f"ck_{'w' if t.mutable else ''}view{t.ndim}_t"
    i64 = d.int64
    return fe.prog.helper(name, f"typedef struct {{ {d.pointer(d.uint8, not t.mutable)}p; "
                                f"{i64} n[{t.ndim}]; {i64} s[{t.ndim}]; }} {name};\n")


def iter_c_type(fe, t) -> str | None:
    """The C types of ``for x in row`` over a one-dimensional array: its
    iterator (the view and the next index) and, for float and bool elements,
    the (value, more?) pair of each step (integers use the range pair);
    None for other types."""
    from numba.core import types
    d = fe.d
    if isinstance(t, types.ArrayIterator):
        at = t.array_type
        if not isinstance(at, types.Array) or isinstance(at, types.NestedArray) or \
                at.ndim != 1:
            return None
        vt = c_type(fe, at)
        if vt is None:
            return None
        name = vt.replace("view1_t", "viter1_t")
        return fe.prog.helper(name, f"typedef struct {{ {vt} v; {d.int64} i; }} {name};\n")
    if isinstance(t, types.Pair) and _is_bool(t.second_type) and not _is_int(t.first_type):
        first = _unlit(t.first_type)
        ct = d.c_type(first)
        if ct is None or not (_is_bool(first) or first in _SCALARS()):
            return None
        name = f"ck_pair_{dtypes.of_numba(first).name}_t"
        return fe.prog.helper(name, f"typedef struct {{ {ct} first; bool second; }} {name};\n")
    return None


def _iteration(fe, target, e, loc) -> list[str] | None:
    """``getiter``/``iternext`` of a one-dimensional array (``for x in row``)."""
    from numba.core import types
    dst = fe.var(target.name)
    if e.op == "getiter":
        at = _array(fe, e.value)
        if at is None or at.ndim != 1:
            return None
        return [f"{dst}.v = {fe.use(e.value, loc)}; {dst}.i = 0;"]
    it_t = fe.tyof(e.value)
    if not isinstance(it_t, types.ArrayIterator) or iter_c_type(fe, it_t) is None:
        return None
    at = it_t.array_type
    el = _unlit(at.dtype)
    it = fe.use(e.value, loc)
    val = f"*({_element_ptr(fe, at, el)})({it}.v.p + {it}.i * {it}.v.s[0])"
    val = f"({val} != 0)" if _is_bool(el) else val
    return [f"{dst}.second = {it}.i < {it}.v.n[0];",
            f"if ({dst}.second) {{ {dst}.first = {val}; {it}.i += 1; }}"]


def _SCALARS():
    return {d.numba for d in dtypes.JIT if d.kind in "iuf"}


def _array(fe, var):
    from numba.core import types
    t = _unlit(fe.tyof(var))
    # a struct's array field (NestedArray, an Array subclass) is a plain
    # pointer (c_emit.struct_fields), not a view
    return t if isinstance(t, types.Array) and not isinstance(t, types.NestedArray) else None


def array_expr(fe, target, tt, e, loc) -> list[str] | None:
    """``target = e`` when ``e`` works on a core-dim array (``len(x)``,
    ``x.shape``/``.size``/``.ndim``, ``x[...]``), else None (not ours)."""
    op = e.op
    if op in ("getiter", "iternext"):
        return _iteration(fe, target, e, loc)
    if op in ("getitem", "static_getitem"):
        at = _array(fe, e.value)
        return None if at is None else _getitem(fe, target, tt, at, e, loc)
    if op == "getattr":
        at = _array(fe, e.value)
        if at is None:
            return None
        v = fe.use(e.value, loc)
        dst = fe.var(target.name)
        if e.attr == "shape":
            return [f"{dst}_{k} = {v}.n[{k}];" for k in range(at.ndim)]
        if e.attr == "size":
            return [f"{dst} = " + " * ".join(f"{v}.n[{k}]" for k in range(at.ndim)) + ";"]
        if e.attr == "ndim":
            return [f"{dst} = {at.ndim};"]
        raise fe.fail(f"attribute '.{e.attr}' of an array of core dims", loc)
    if op == "call" and len(e.args) == 1 and not e.kws and _array(fe, e.args[0]) is not None:
        key = getattr(fe.tyof(e.func), "typing_key", None)
        if key is len:
            return [f"{fe.var(target.name)} = {fe.use(e.args[0], loc)}.n[0];"]
    return None


def _indices(fe, e, loc):
    """The index expressions of ``x[...]``: ``[(C expression, Numba type)]``,
    or None for an index that is not integers (a slice, an array)."""
    from numba.core import types
    idx = e.index if e.op == "static_getitem" else None
    if isinstance(idx, int):
        return [(str(idx), _int64_t())]
    if isinstance(idx, tuple) and all(isinstance(k, int) for k in idx):
        return [(str(k), _int64_t()) for k in idx]
    iv = e.index if e.op == "getitem" else e.index_var
    if iv is None:
        return None
    it = _unlit(fe.tyof(iv))
    if _is_int(it):
        return [(fe.var(iv.name), it)]
    if isinstance(it, types.BaseTuple):
        elems = fe.tuple_elems(it)
        if elems is not None and all(map(_is_int, elems)):
            return [(f"{fe.var(iv.name)}_{k}", et) for k, et in enumerate(elems)]
    return None


def _offset(fe, v, parts, loc) -> tuple[list[str], str]:
    """Bounds checks (IndexError) and the byte offset of ``v[parts]``; the
    lines declare ``ck_ix<k>`` in a block the caller closes."""
    i64 = fe.d.int64
    code = fe.error_code(IndexError, ("index is out of bounds",))
    out = []
    terms = []
    for k, (ix, ixt) in enumerate(parts):
        out += [f"{i64} ck_ix{k} = {fe.cast(ix, ixt, _int64_t())};",
                f"if (ck_ix{k} < 0) ck_ix{k} += {v}.n[{k}];",
                f"if (ck_ix{k} < 0 || ck_ix{k} >= {v}.n[{k}]) {fe.raise_code(code)}"]
        terms.append(f"ck_ix{k} * {v}.s[{k}]")
    return out, " + ".join(terms)


def _element_ptr(fe, at, el) -> str:
    st = fe.d.uint8 if _is_bool(el) else fe.d.c_type(el)
    return fe.d.pointer(st, not at.mutable)


def _getitem(fe, target, tt, at, e, loc) -> list[str]:
    parts = _indices(fe, e, loc)
    if parts is None or len(parts) > at.ndim:
        raise fe.fail("indexing an array of core dims by other than integers (slices, "
                      "arrays: CPU-only)", loc)
    v = fe.use(e.value, loc)
    dst = fe.var(target.name)
    checks, off = _offset(fe, v, parts, loc)
    lines = ["{"] + ["  " + ln for ln in checks]
    if len(parts) < at.ndim:         # a sub-array view (a row of a matrix)
        rest = at.ndim - len(parts)
        lines.append(f"  {dst}.p = {v}.p + {off};")
        lines += [f"  {dst}.n[{k}] = {v}.n[{k + len(parts)}]; "
                  f"{dst}.s[{k}] = {v}.s[{k + len(parts)}];" for k in range(rest)]
    else:
        el = _unlit(at.dtype)
        val = f"*({_element_ptr(fe, at, el)})({v}.p + {off})"
        lines.append(f"  {dst} = {'(' + val + ' != 0)' if _is_bool(el) else fe.cast(val, el, tt)};")
    lines.append("}")
    return lines


def setitem(fe, stmt, loc) -> list[str]:
    """``out[i] = v`` into a writable core-dim array (the output parameter);
    any other item assignment is refused."""
    from numba.core import ir
    at = _array(fe, stmt.target)
    if at is None or not at.mutable:
        raise fe.fail("item assignment (setitem)", loc)
    if isinstance(stmt, ir.StaticSetItem):
        e = ir.Expr.static_getitem(stmt.target, stmt.index, stmt.index_var, loc)
    else:
        e = ir.Expr.getitem(stmt.target, stmt.index, loc)
    parts = _indices(fe, e, loc)
    if parts is None or len(parts) != at.ndim:
        raise fe.fail(f"item assignment into the {at.ndim}-d output with "
                      f"{'a non-integer index' if parts is None else f'{len(parts)} indices'}",
                      loc)
    el = _unlit(at.dtype)
    v = fe.use(stmt.target, loc)
    checks, off = _offset(fe, v, parts, loc)
    val = fe.use(stmt.value, loc)
    vt = fe.tyof(stmt.value)
    val = f"({val} ? 1 : 0)" if _is_bool(el) else fe.cast(val, vt, el)
    return (["{"] + ["  " + ln for ln in checks] +
            [f"  *({_element_ptr(fe, at, el)})({v}.p + {off}) = {val};", "}"])


__all__ = ["c_type", "iter_c_type", "array_expr", "setitem"]
