"""What ``split``, ``rsplit`` and ``splitlines`` of a ``CkString`` view
return, and ``sep.join`` of it (the C string library, ``ckernel/utf8.h``).

* ``s.split(sep, maxsplit)`` is a :class:`CkStrSplitType`: the arguments
  only (the text, the separator's bytes, ``maxsplit``), no list.  ``len``
  counts the pieces in one scan (``ck_str_split_count``), iteration steps
  from piece to piece (``ck_str_split_next``), ``x[i]`` steps to piece
  ``i`` from the start (``ck_str_split_item``: each index is a scan;
  negative ones count first), ``sep.join(x)`` and anything that needs
  the pieces at once make the span array (:func:`materialise`).  Nothing
  is allocated for ``len(s.split())`` or ``for w in s.split()``; the
  pieces are views into ``s``.  The separator must outlive the value: a
  view (its text lives as long as the element), a literal (its bytes are
  a constant of the code) or a Numba ``str`` (copied into the arena).
* ``rsplit`` and ``splitlines`` make the pieces at once: a
  :class:`CkStrSpansType`, ``count`` views ``ck_str_span {offset,
  length}`` (an array in the current string arena) into the text.
"""

from __future__ import annotations

import operator

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import RefType, iternext_impl
from numba.cpython.unicode import _cmp_region, _get_code_point, _PyUnicode_IsSpace
from numba.extending import (intrinsic, lower_builtin, make_attribute_wrapper, models,
                             overload, overload_method, register_jitable, register_model)

from .memblock import raise_status
from .str_methods import _absent, _is_text, _ok_index, _or, _text, c_call, current_arena
from .stringtype import CkStringType, ck_string_type, make_string
from .utf8 import load_intp, str_encode_into, str_utf8_nbytes

_i8 = ir.IntType(8)
_i8p = _i8.as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)

# ------------------------------------------------------- split results --
class CkStrSpansType(types.IterableType):
    """The pieces of a split: ``count`` views ``ck_str_span {offset, length}``
    (an array at ``spans`` in the arena) into the text at ``base``."""

    def __init__(self):
        super().__init__(name="ckernels.CkStrSpans")

    @property
    def iterator_type(self):
        return ck_str_spans_iter_type


class CkStrSpansIterType(types.SimpleIteratorType):
    def __init__(self):
        super().__init__("ckernels.CkStrSpansIter", ck_string_type)


ck_str_spans_type = CkStrSpansType()
ck_str_spans_iter_type = CkStrSpansIterType()


@register_model(CkStrSpansType)
class _SpansModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("base", types.intp), ("spans", types.intp),
                                        ("count", types.intp)])


@register_model(CkStrSpansIterType)
class _SpansIterModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("base", types.intp), ("spans", types.intp),
                                        ("count", types.intp),
                                        ("index", types.EphemeralPointer(types.intp))])


make_attribute_wrapper(CkStrSpansType, "base", "base")
make_attribute_wrapper(CkStrSpansType, "spans", "spans")
make_attribute_wrapper(CkStrSpansType, "count", "count")


@intrinsic
def _make_spans(typingctx, base, spans, count):
    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(ck_str_spans_type)(context, builder)
        st.base = context.cast(builder, args[0], sig.args[0], types.intp)
        st.spans = context.cast(builder, args[1], sig.args[1], types.intp)
        st.count = context.cast(builder, args[2], sig.args[2], types.intp)
        return st._getvalue()
    return ck_str_spans_type(base, spans, count), codegen


@register_jitable
def _piece(sp, k):
    q = sp.spans + 16 * k
    b = sp.base + load_intp(q)
    return make_string(b, b + load_intp(q + 8))


@overload(len)
def _ov_spans_len(sp):
    if isinstance(sp, CkStrSpansType):
        return lambda sp: sp.count


@overload(operator.getitem)
def _ov_spans_getitem(sp, i):
    if isinstance(sp, CkStrSpansType) and isinstance(i, types.Integer):
        def impl(sp, i):
            k = i
            if k < 0:
                k += sp.count
            if k < 0 or k >= sp.count:
                raise IndexError("list index out of range")
            return _piece(sp, k)
        return impl


@lower_builtin("getiter", CkStrSpansType)
def _spans_getiter(context, builder, sig, args):
    sp = cgutils.create_struct_proxy(ck_str_spans_type)(context, builder, value=args[0])
    it = cgutils.create_struct_proxy(ck_str_spans_iter_type)(context, builder)
    it.base = sp.base
    it.spans = sp.spans
    it.count = sp.count
    index = cgutils.alloca_once_value(builder, ir.Constant(_i64, 0))
    it.index = index
    return it._getvalue()


@lower_builtin("iternext", CkStrSpansIterType)
@iternext_impl(RefType.BORROWED)
def _spans_iternext(context, builder, sig, args, result):
    it = cgutils.create_struct_proxy(ck_str_spans_iter_type)(context, builder, value=args[0])
    k = builder.load(it.index)
    valid = builder.icmp_signed("<", k, it.count)
    result.set_valid(valid)
    with builder.if_then(valid):
        q = builder.add(it.spans, builder.mul(k, ir.Constant(_i64, 16)))
        qp = builder.inttoptr(q, _i64.as_pointer())
        off = builder.load(qp)
        n = builder.load(builder.gep(qp, [ir.Constant(_i32, 1)]))
        st = cgutils.create_struct_proxy(ck_string_type)(context, builder)
        st.begin = builder.add(it.base, off)
        st.end = builder.add(st.begin, n)
        result.yield_(st._getvalue())
        builder.store(builder.add(k, ir.Constant(_i64, 1)), it.index)


# (arena, s, n, sep, m, maxsplit, &spans, &count)
_SPLIT_OUTS = (("i64", 1), ("i64", 1))
_ck_split = c_call("ck_str_split", "i32", ["p", "p", "i64", "p", "i64", "i64"], _SPLIT_OUTS)
_ck_rsplit = c_call("ck_str_rsplit", "i32", ["p", "p", "i64", "p", "i64", "i64"], _SPLIT_OUTS)
_ck_splitlines = c_call("ck_str_splitlines", "i32", ["p", "p", "i64", "bool"], _SPLIT_OUTS)


def _split_method(method, fn, cname):
    @overload_method(CkStringType, method)
    def _ov(s, sep=None, maxsplit=-1):
        if not _ok_index(maxsplit):
            return None
        if _absent(sep):
            def impl(s, sep=None, maxsplit=-1):
                st, sp, k = fn((current_arena(), s.begin, s.end - s.begin, 0, 0,
                                _or(maxsplit, -1)))
                if st != 0:
                    raise_status(st, cname)
                return _make_spans(s.begin, sp, k)
            return impl
        if _is_text(sep):
            def impl(s, sep=None, maxsplit=-1):
                p, m = _text(sep)
                st, sp, k = fn((current_arena(), s.begin, s.end - s.begin, p, m,
                                _or(maxsplit, -1)))
                if st != 0:
                    raise_status(st, cname)
                return _make_spans(s.begin, sp, k)
            return impl


_split_method("rsplit", _ck_rsplit, "ck_str_rsplit")


def _keep(keepends):
    """``keepends`` as a bool (False when left out)."""


@overload(_keep)
def _ov_keep(keepends):
    if _absent(keepends):
        return lambda keepends: False
    if isinstance(keepends, types.Boolean):
        return lambda keepends: keepends


@overload_method(CkStringType, "splitlines")
def _ov_splitlines(s, keepends=False):
    if _absent(keepends) or isinstance(keepends, types.Boolean):
        def impl(s, keepends=False):
            st, sp, k = _ck_splitlines((current_arena(), s.begin, s.end - s.begin,
                                        _keep(keepends)))
            if st != 0:
                raise_status(st, "ck_str_splitlines")
            return _make_spans(s.begin, sp, k)
        return impl


# ------------------------------------------------------------ split, lazily --
class CkStrSplitType(types.IterableType):
    """``s.split(sep, maxsplit)`` not yet split: the text ``[base, base +
    n)``, the separator's ``m`` bytes at ``sep`` (0: whitespace) and
    ``maxsplit`` (-1: no limit)."""

    def __init__(self):
        super().__init__(name="ckernels.CkStrSplit")

    @property
    def iterator_type(self):
        return ck_str_split_iter_type


class CkStrSplitIterType(types.SimpleIteratorType):
    def __init__(self):
        super().__init__("ckernels.CkStrSplitIter", ck_string_type)


ck_str_split_type = CkStrSplitType()
ck_str_split_iter_type = CkStrSplitIterType()

_SPLIT_FIELDS = ("base", "n", "sep", "m", "maxsplit")


@register_model(CkStrSplitType)
class _SplitModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [(f, types.intp) for f in _SPLIT_FIELDS])


@register_model(CkStrSplitIterType)
class _SplitIterModel(models.StructModel):
    # state: {pos, left} (ck_str_split_state) on the stack of the loop's function
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("base", types.intp), ("n", types.intp),
                                        ("sep", types.intp), ("m", types.intp),
                                        ("state", types.EphemeralPointer(types.intp))])


for _f in _SPLIT_FIELDS:
    make_attribute_wrapper(CkStrSplitType, _f, _f)


@intrinsic
def _make_split(typingctx, base, n, sep, m, maxsplit):
    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(ck_str_split_type)(context, builder)
        for f, v, t in zip(_SPLIT_FIELDS, args, sig.args):
            setattr(st, f, context.cast(builder, v, t, types.intp))
        return st._getvalue()
    return ck_str_split_type(base, n, sep, m, maxsplit), codegen


@intrinsic
def _literal_address(typingctx, lit):
    """The address of a string literal's UTF-8 bytes, a constant of the code."""
    if not isinstance(lit, types.StringLiteral):
        return None
    data = bytearray(lit.literal_value.encode("utf-8"))

    def codegen(context, builder, sig, args):
        if not data:
            return ir.Constant(_i64, 0)
        const = ir.Constant(ir.ArrayType(_i8, len(data)), data)
        gv = cgutils.global_constant(builder.module, "ck_str_split_sep", const)
        return builder.ptrtoint(gv, _i64)
    return types.intp(lit), codegen


def _owned_text(x):
    """``(address, nbytes)`` of a separator that outlives the split value."""


@overload(_owned_text, prefer_literal=True)
def _ov_owned_text(x):
    if isinstance(x, types.StringLiteral):
        try:
            size = len(x.literal_value.encode("utf-8"))
        except UnicodeEncodeError:          # a lone surrogate: the general path
            return None
        return lambda x: (_literal_address(x), size)
    if isinstance(x, CkStringType):
        return lambda x: (x.begin, x.end - x.begin)
    if isinstance(x, types.UnicodeType):
        def impl(x):                        # copied: a temporary str may die first
            n = str_utf8_nbytes(x)
            st, b, e = _ck_allocate((current_arena(), n, 1))
            if st != 0:
                raise_status(st, "ck_pod_allocate")
            str_encode_into(x, b)
            return b, n
        return impl


_ck_allocate = c_call("ck_pod_allocate", "i32", ["p", "i64", "i64"], (("i64", 1), ("i64", 1)))
_ck_split_count = c_call("ck_str_split_count", "i64", ["p", "i64", "p", "i64", "i64"])
_ck_split_item = c_call("ck_str_split_item", "i32", ["p", "i64", "p", "i64", "i64", "i64"],
                        (("i64", 2),))


@overload_method(CkStringType, "split", prefer_literal=True)
def _ov_split(s, sep=None, maxsplit=-1):
    if not _ok_index(maxsplit):
        return None
    if _absent(sep):
        def impl(s, sep=None, maxsplit=-1):
            return _make_split(s.begin, s.end - s.begin, 0, 0, _or(maxsplit, -1))
        return impl
    if _is_text(sep):
        def impl(s, sep=None, maxsplit=-1):
            p, m = _owned_text(sep)
            if m == 0:
                raise ValueError("empty separator")
            return _make_split(s.begin, s.end - s.begin, p, m, _or(maxsplit, -1))
        return impl


@overload(len)
def _ov_split_len(sp):
    if isinstance(sp, CkStrSplitType):
        return lambda sp: _ck_split_count((sp.base, sp.n, sp.sep, sp.m, sp.maxsplit))


@overload(operator.getitem)
def _ov_split_getitem(sp, i):
    if isinstance(sp, CkStrSplitType) and isinstance(i, types.Integer):
        def impl(sp, i):
            st, off, n = _ck_split_item((sp.base, sp.n, sp.sep, sp.m, sp.maxsplit, i))
            if st != 0:
                raise_status(st, "ck_str_split_item")
            return make_string(sp.base + off, sp.base + off + n)
        return impl


_SPLIT_NEXT = ir.FunctionType(_i8, [_i8p, _i64, _i8p, _i64, _i64.as_pointer(),
                                    _i64.as_pointer()])


@lower_builtin("getiter", CkStrSplitType)
def _split_getiter(context, builder, sig, args):
    sp = cgutils.create_struct_proxy(ck_str_split_type)(context, builder, value=args[0])
    it = cgutils.create_struct_proxy(ck_str_split_iter_type)(context, builder)
    for f in ("base", "n", "sep", "m"):
        setattr(it, f, getattr(sp, f))
    state = cgutils.alloca_once(builder, _i64, size=2)
    builder.store(ir.Constant(_i64, 0), state)
    neg = builder.icmp_signed("<", sp.maxsplit, ir.Constant(_i64, 0))
    left = builder.select(neg, ir.Constant(_i64, 2**63 - 1), sp.maxsplit)
    builder.store(left, builder.gep(state, [ir.Constant(_i32, 1)]))
    it.state = state
    return it._getvalue()


@lower_builtin("iternext", CkStrSplitIterType)
@iternext_impl(RefType.BORROWED)
def _split_iternext(context, builder, sig, args, result):
    it = cgutils.create_struct_proxy(ck_str_split_iter_type)(context, builder, value=args[0])
    out = cgutils.alloca_once(builder, _i64, size=2)
    fn = cgutils.get_or_insert_function(builder.module, _SPLIT_NEXT, "ck_str_split_next")
    r = builder.call(fn, [builder.inttoptr(it.base, _i8p), it.n,
                          builder.inttoptr(it.sep, _i8p), it.m, it.state, out])
    valid = builder.icmp_unsigned("!=", r, ir.Constant(_i8, 0))
    result.set_valid(valid)
    with builder.if_then(valid):
        off = builder.load(out)
        n = builder.load(builder.gep(out, [ir.Constant(_i32, 1)]))
        st = cgutils.create_struct_proxy(ck_string_type)(context, builder)
        st.begin = builder.add(it.base, off)
        st.end = builder.add(st.begin, n)
        result.yield_(st._getvalue())


@register_jitable
def materialise(sp):
    """The pieces of a :class:`CkStrSplitType` as a span array in the arena."""
    st, spans, k = _ck_split((current_arena(), sp.base, sp.n, sp.sep, sp.m, sp.maxsplit))
    if st != 0:
        raise_status(st, "ck_str_split")
    return _make_spans(sp.base, spans, k)


_ck_join_spans = c_call("ck_str_join_spans", "i32", ["p", "p", "i64", "p", "p", "i64"],
                        (("i64", 2),))


@register_jitable
def _join(sep, parts):
    p, m = _text(sep)
    st, b, e = _ck_join_spans((current_arena(), p, m, parts.base, parts.spans, parts.count))
    if st != 0:
        raise_status(st, "ck_str_join_spans")
    return make_string(b, e)


@overload_method(CkStringType, "join")
def _ov_join(sep, parts):
    if isinstance(parts, CkStrSpansType):
        return lambda sep, parts: _join(sep, parts)
    if isinstance(parts, CkStrSplitType):
        return lambda sep, parts: _join(sep, materialise(parts))


def _join_template(numba_join):
    def join(sep, parts):
        if isinstance(parts, CkStrSpansType):
            return lambda sep, parts: _join(sep, parts)
        if isinstance(parts, CkStrSplitType):
            return lambda sep, parts: _join(sep, materialise(parts))
        return numba_join(sep, parts)
    return join


def _extend_str_join():
    """``sep.join(pieces)`` for a Numba str ``sep`` (``" ".join(s.split())``).
    Numba binds ``str.join`` to the first template registered for it (its
    own): a second ``overload_method`` would never be asked, so its
    template's overload function is wrapped to answer for split results
    first and ask Numba's for everything else."""
    from numba.core.typing.templates import builtin_registry
    from numba.cpython.unicode import unicode_join
    for tmpl in builtin_registry.attributes:
        if (getattr(tmpl, "_attr", None) == "join" and tmpl.key is types.UnicodeType
                and getattr(tmpl, "_overload_func", None) is unicode_join):
            join = _join_template(unicode_join)
            overload(join)(join)    # as overload_method registers its function
            tmpl._overload_func = staticmethod(join)


_extend_str_join()


def _split_template(numba_split):
    def split(a, sep=None, maxsplit=-1):
        if not (_absent(maxsplit) or isinstance(maxsplit, types.Integer)):
            return numba_split(a, sep, maxsplit)
        if _absent(sep):
            return _split_whitespace
        if isinstance(sep, types.UnicodeType) and not _absent(maxsplit):
            return _split_sep
        return numba_split(a, sep, maxsplit)
    return split


def _split_whitespace(a, sep=None, maxsplit=-1):
    """``s.split(None, maxsplit)`` of a Numba ``str``: CPython's
    ``split_whitespace`` (``Objects/stringlib/split.h``): after ``maxsplit``
    pieces the rest, left-stripped, is one more piece."""
    n = len(a)
    left = maxsplit if maxsplit >= 0 else n + 1
    parts = []
    i = 0
    while left > 0:
        while i < n and _PyUnicode_IsSpace(_get_code_point(a, i)):
            i += 1
        if i == n:
            break
        j = i
        i += 1
        while i < n and not _PyUnicode_IsSpace(_get_code_point(a, i)):
            i += 1
        parts.append(a[j:i])
        left -= 1
    if i < n:
        while i < n and _PyUnicode_IsSpace(_get_code_point(a, i)):
            i += 1
        if i != n:
            parts.append(a[i:n])
    return parts


def _split_sep(a, sep=None, maxsplit=-1):
    """``s.split(sep, maxsplit)`` of Numba ``str`` values, any negative
    ``maxsplit`` meaning no limit (Python's rule)."""
    n = len(a)
    m = len(sep)
    if m == 0:
        raise ValueError("empty separator")
    left = maxsplit if maxsplit >= 0 else n + 1
    parts = []
    last = 0
    i = 0
    while left > 0 and i + m <= n:
        if _cmp_region(a, i, sep, 0, m) == 0:
            parts.append(a[last:i])
            i += m
            last = i
            left -= 1
        else:
            i += 1
    parts.append(a[last:n])
    return parts


def _extend_str_split():
    """``s.split(None, maxsplit)`` / ``s.split(sep, maxsplit)`` of a Numba
    ``str`` as Python's: Numba's whitespace split drops the rest after
    ``maxsplit`` pieces (``"a b c".split(None, 1)`` gave ``['a']``) and
    ignores ``maxsplit=0``; with a separator it takes a negative
    ``maxsplit`` other than -1 as 0.  Its template is wrapped as for
    ``join`` (above); ``s.split(sep)`` keeps Numba's."""
    from numba.core.typing.templates import builtin_registry
    from numba.cpython.unicode import unicode_split
    for tmpl in builtin_registry.attributes:
        if (getattr(tmpl, "_attr", None) == "split" and tmpl.key is types.UnicodeType
                and getattr(tmpl, "_overload_func", None) is unicode_split):
            split = _split_template(unicode_split)
            overload(split)(split)
            tmpl._overload_func = staticmethod(split)


_extend_str_split()


__all__ = ["CkStrSpansType", "ck_str_spans_type", "CkStrSplitType", "ck_str_split_type",
           "materialise"]
