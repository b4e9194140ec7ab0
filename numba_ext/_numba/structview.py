"""Structs holding strings and var dims in jitted code (CPU): ``CkViewRecord``.

A struct type with ``string`` fields or ``var`` dims (of numbers or strings) is
a :class:`CkViewRecord`: Numba's ``Record`` (a pointer to the element's data,
the library's offsets) whose view fields have types of their own:

* a ``string`` field is typed :data:`~.stringtype.ck_string_type` directly: the
  data model of a ``CkString`` is ``{intp begin, intp end}``, the layout of a
  ``ck_string``, so Numba's record lowering loads the view at the field's
  offset (``len``, indexing, comparisons, ``str()``: :mod:`.strings`);
* a ``var`` dim field is stored as :class:`CkVarField` (``{begin, size}``, the
  layout of ``ck_var_dim_data``); reading ``p.xs`` gives the existing
  one-dimensional var-dim view (:class:`~.arraytype.CkArrayType`: ``len``,
  indexing, slicing, iteration) over ``size`` contiguous elements at ``begin``.

Views own nothing and are read-only: the struct's arena must outlive them
(during a call it does: the argument keeps it alive).  A var dim inside a
struct is read with offset 0 and the element's data size as stride, which is
how the library lays out var dims inside structs (``ck_var_dim_arrmeta`` of
such a field has ``offset`` 0 and a contiguous stride).

Offsets, sizes and field types come from the ckernels type
(:meth:`ckernels.types.Type.to_numpy_dtype`'s offsets, checked by
:mod:`ckernels.jit.structs`); nothing is re-derived here.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.core.imputils import impl_ret_borrowed, lower_getattr_generic
from numba.core.typing.templates import AttributeTemplate, infer_getattr
from numba.extending import register_model
from numba.np.arrayobj import record_getattr

from .._native import lib
from .array_views import _make_view
from .arraytype import array_type_of
from .stringtype import ck_string_type


class CkVarField(types.Type):
    """The stored value of a var dim inside a struct: ``{begin, size}``."""

    def __init__(self, array_type, elem_size: int):
        self.array_type = array_type
        self.elem_size = elem_size
        super().__init__(name=f"ckernels.VarField({array_type}, {elem_size})")


@register_model(CkVarField)
class CkVarFieldModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("begin", types.voidptr), ("size", types.intp)])


class CkViewRecord(types.Record):
    """A Record whose fields include strings / var dims (see the module)."""

    def __init__(self, fields, size, aligned, layout_dtype):
        self._layout_dtype = layout_dtype
        super().__init__(fields, size, aligned)

    @property
    def dtype(self):
        # NumPy cannot describe view fields: the stand-in layout dtype
        # (same offsets and size; view fields are two words)
        return self._layout_dtype


register_model(CkViewRecord)(models.RecordModel)


def _field_type(t, dt):
    """The Numba type of a struct field of ckernels type ``t`` (NumPy layout ``dt``)."""
    from numba.np import numpy_support
    tid = t.type_id
    if tid == lib.CK_TYPE_STRING:
        return ck_string_type
    if tid == lib.CK_TYPE_VAR_DIM:
        return CkVarField(array_type_of(t), t.element.data_size)
    if tid == lib.CK_TYPE_STRUCT and dt.fields is not None and _has_views(t):
        return view_record(t, dt)
    return numpy_support.from_dtype(dt)


def _has_views(t) -> bool:
    tid = t.type_id
    if tid in (lib.CK_TYPE_STRING, lib.CK_TYPE_VAR_DIM):
        return True
    if tid == lib.CK_TYPE_STRUCT:
        return any(_has_views(ft) for _, ft in t.fields)
    return False


def view_record(t, layout: np.dtype) -> CkViewRecord:
    """The :class:`CkViewRecord` of struct type ``t`` whose layout (the
    library's offsets and size) is the NumPy dtype ``layout``."""
    fields = []
    for name, ft in t.fields:
        dt, off = layout.fields[name][:2]
        fields.append((name, {"type": _field_type(ft, dt), "offset": off,
                              "alignment": None, "title": None}))
    return CkViewRecord(fields, layout.itemsize, layout.isalignedstruct, layout)


@infer_getattr
class CkViewRecordAttribute(AttributeTemplate):
    key = CkViewRecord

    def generic_resolve(self, record, attr):
        ty = record.typeof(attr)
        if isinstance(ty, CkVarField):
            return ty.array_type
        return None          # Numba's RecordAttribute


@lower_getattr_generic(CkViewRecord)
def _view_record_getattr(context, builder, typ, value, attr):
    fty = typ.typeof(attr)
    if not isinstance(fty, CkVarField):
        return record_getattr(context, builder, typ, value, attr)
    aty = fty.array_type
    field = cgutils.create_struct_proxy(fty)(
        context, builder,
        value=context.unpack_value(
            builder, fty,
            cgutils.get_record_member(builder, value, typ.offset(attr),
                                      context.get_data_type(fty))))
    null = cgutils.get_null_value(ir.IntType(8).as_pointer())
    view = _make_view(context, builder, aty, null, builder.bitcast(field.begin, null.type),
                      null, ir.Constant(ir.IntType(64), 0), cgutils.true_bit,
                      [field.size], [context.get_constant(types.intp, fty.elem_size)])
    return impl_ret_borrowed(context, builder, aty, view)


__all__ = ["CkViewRecord", "CkVarField", "view_record"]
