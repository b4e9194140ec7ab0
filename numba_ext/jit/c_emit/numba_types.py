"""Numba types as the C emitter asks about them: literal types unwrapped,
integer and float widths, which values are compile-time only, the element
type name of a scalar type (for helper names) and the scalar types the
emitter casts through."""

from __future__ import annotations

from ... import dtypes


def _unlit(t):
    from numba.core import types
    return types.unliteral(t)


def _int_bits(t) -> tuple[int, bool]:
    from numba.core import types
    t = _unlit(t)
    if t == types.boolean:
        return 8, False
    return t.bitwidth, t.signed


def _float_bits(t) -> int:
    return _unlit(t).bitwidth


def _is_static(t) -> bool:
    """Compile-time-only values: no C variable."""
    from numba.core import types
    return isinstance(t, (types.Module, types.Function, types.Dispatcher, types.NumberClass,
                          types.BoundFunction, types.Omitted, types.ExceptionClass,
                          types.ExceptionInstance))


def _is_float(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), types.Float)


def _is_int(t) -> bool:
    from numba.core import types
    return isinstance(_unlit(t), types.Integer)


def _is_bool(t) -> bool:
    from numba.core import types
    return _unlit(t) == types.boolean


def _key(t) -> str:
    """The element type name of a Numba scalar type, for helper names."""
    return dtypes.of_numba(t).name


def _bool_t():
    from numba.core import types
    return types.boolean


def _int32_t():
    from numba.core import types
    return types.int32


def _int64_t():
    from numba.core import types
    return types.int64


def _f64_t():
    from numba.core import types
    return types.float64
