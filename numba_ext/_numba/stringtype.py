"""The ``CkString`` Numba type: a view of UTF-8 bytes ``[begin, end)``.

Defined apart from :mod:`.strings` so that the error path
(:func:`ckernels._numba.memblock.raise_status`) can use it: a CkString boxes to
a Python ``str`` with ``PyUnicode_DecodeUTF8`` and needs no NRT allocation.
A view owns nothing; see :mod:`.strings` for its operations.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import lower_cast
from numba.extending import box, intrinsic, make_attribute_wrapper, models, register_model


class CkStringType(types.Type):
    """A view of a ``ck_string`` value: UTF-8 bytes ``[begin, end)``."""

    def __init__(self):
        super().__init__(name="ckernels.CkString")

    def unify(self, typingctx, other):
        """A string literal unifies with a view (``return "n/a" if ... else
        s.strip()``): the literal becomes a view of its UTF-8 bytes, a
        constant of the code (:func:`_literal_as_view`)."""
        if isinstance(other, types.StringLiteral) and utf8_literal(other) is not None:
            return self
        return None


ck_string_type = CkStringType()


@register_model(CkStringType)
class CkStringModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("begin", types.intp), ("end", types.intp)])


make_attribute_wrapper(CkStringType, "begin", "begin")
make_attribute_wrapper(CkStringType, "end", "end")


@intrinsic
def make_string(typingctx, begin, end):
    """A CkString view of the bytes ``[begin, end)`` (addresses)."""
    if not (isinstance(begin, types.Integer) and isinstance(end, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(ck_string_type)(context, builder)
        st.begin = context.cast(builder, args[0], sig.args[0], types.intp)
        st.end = context.cast(builder, args[1], sig.args[1], types.intp)
        return st._getvalue()
    return ck_string_type(begin, end), codegen


def utf8_literal(lit) -> bytes | None:
    """The UTF-8 bytes of a string literal type's value; None for one that
    has none (a lone surrogate)."""
    try:
        return lit.literal_value.encode("utf-8")
    except UnicodeEncodeError:
        return None


def emit_constant_bytes(builder, data: bytes):
    """The address (i64) of ``data`` as a constant of the module (0 when
    empty)."""
    if not data:
        return ir.Constant(ir.IntType(64), 0)
    const = ir.Constant(ir.ArrayType(ir.IntType(8), len(data)), bytearray(data))
    return builder.ptrtoint(cgutils.global_constant(builder.module, "ck_str_literal", const),
                            ir.IntType(64))


@lower_cast(types.StringLiteral, CkStringType)
def _literal_as_view(context, builder, fromty, toty, val):
    data = utf8_literal(fromty)
    st = cgutils.create_struct_proxy(ck_string_type)(context, builder)
    st.begin = emit_constant_bytes(builder, data)
    st.end = builder.add(st.begin, ir.Constant(ir.IntType(64), len(data)))
    return st._getvalue()


@box(CkStringType)
def _box_ck_string(typ, val, c):
    st = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    ptr = c.builder.inttoptr(st.begin, c.pyapi.cstring)
    n = c.builder.sub(st.end, st.begin)
    fnty = ir.FunctionType(c.pyapi.pyobj, [c.pyapi.cstring, c.pyapi.py_ssize_t, c.pyapi.cstring])
    fn = cgutils.get_or_insert_function(c.builder.module, fnty, "PyUnicode_DecodeUTF8")
    return c.builder.call(fn, [ptr, n, cgutils.get_null_value(c.pyapi.cstring)])  # strict



__all__ = ["CkStringType", "ck_string_type", "make_string", "utf8_literal", "emit_constant_bytes"]
