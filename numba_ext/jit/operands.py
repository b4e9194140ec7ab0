"""Call arguments of a jitted function, and choosing the compiled signature.

Shared by every target.  Each argument becomes an :class:`Operand` with the
element type it brings: host arrays (``ckernels.Array``, NumPy arrays, nested
lists) and NumPy scalars bring theirs (strong); Python ``int``/``float``/
``complex`` are weak and resolved by the one NEP 50 rule
(:func:`ckernels.dtypes.weak_matches`); device arrays bring their dtype and
mark the call as a device call.  :func:`select` picks the compiled signature
(exact strong types and weak scalars that fit first, compiling a new one for a
lazily compiled function, then -- where the target can convert -- the first
signature every argument casts to safely).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._native import check, ffi, lib
from ..host.array import Array
from ..host.array import array as _array
from ..host.array import asarray as _asarray
from ..device.array import DeviceArray
from ..kernels import errmode_value
from ..types import option as _option
from .dims import element_name
from .signature import SUPPORTED_TYPES, TIME_TYPES, element_type, is_struct, supported
from .structs import element as struct_element


class Operand:
    """One call argument: its element type name for resolution, whether it is
    a weak Python scalar, and what it is (host array, scalar, device array)."""

    __slots__ = ("value", "array", "name", "weak", "scalar", "numpy", "device", "option",
                 "null_rows")

    def __init__(self, value, fname: str, index: int):
        self.value = value
        self.array = None
        self.numpy = False
        self.device = False
        #: the operand's elements are an option ``?T`` (``name`` is T's): a
        #: function of plain ``T`` propagates its nulls (docs/nulls.md)
        self.option = False
        self.null_rows = False      # `?var * T` data (jit/cpu_dims.py)
        name = dtypes.PYTHON_SCALARS.get(type(value))
        if value is None:      # a null of whatever type the signature has
            self.scalar = self.weak = self.option = True
            self.name = None
            return
        if name is not None:   # the common scalar case first
            self.scalar = True
            self.weak = name != "bool"
            self.name = name if name != "int64" else dtypes.scalar_type(value)
            return
        self.weak = False
        self.scalar = False
        if isinstance(value, Array):
            self.array = value
            self.name = self._element(value.type.dtype, fname, index)
        elif isinstance(value, np.ndarray):
            self.numpy = value.dtype.kind not in "OUSTV"
            if value.dtype.kind in "OUST":
                self.array = _array(value)
            else:
                if not value.dtype.isnative:
                    value = value.astype(value.dtype.newbyteorder("="))
                try:
                    self.array = _asarray(value)
                except Exception as exc:
                    why = f": {exc}" if value.dtype.fields is not None else ""
                    raise TypeError(f"{fname}: argument {index}: unsupported NumPy dtype "
                                    f"{value.dtype}{why}") from None
            self.name = self._element(self.array.type.dtype, fname, index)
        elif isinstance(value, DeviceArray):
            self.device = True
            self.name = value.element.name
        elif isinstance(value, (list, tuple)):
            try:
                self.array = _array(value)
            except Exception as exc:
                raise TypeError(f"{fname}: argument {index}: cannot convert "
                                f"{type(value).__name__} to a ckernel array: {exc}") from None
            self.name = self._element(self.array.type.dtype, fname, index)
        elif isinstance(value, np.void) and value.dtype.fields is not None:
            # one element of a structured array: a 0-d struct array
            self.scalar = True
            self.value = np.array(value)
            try:
                self.array = _asarray(self.value)
            except Exception as exc:
                raise TypeError(f"{fname}: argument {index}: unsupported NumPy dtype "
                                f"{value.dtype}: {exc}") from None
            self.name = _elem_name(self.array.type.dtype, fname, index)
        else:
            if isinstance(value, np.bytes_):
                raise TypeError(f"{fname}: argument {index}: bytes are not supported")
            if isinstance(value, (np.datetime64, np.timedelta64)):
                self.scalar = True     # an instant or duration: its own type (strong)
                self.array = _asarray(np.asarray(value))
                self.name = self._element(self.array.type.dtype, fname, index)
                return
            name = dtypes.scalar_type(value)
            if name is None:
                raise TypeError(f"{fname}: argument {index} has unsupported type "
                                f"{type(value).__name__}; expected a ckernel array, a NumPy "
                                f"array, a (nested) list or a scalar")
            if not supported(name):
                raise TypeError(f"{fname}: argument {index} has element type '{name}', which "
                                f"a jitted kernel cannot take ({', '.join(SUPPORTED_TYPES)}, "
                                f"{TIME_TYPES})")
            self.scalar = True
            self.weak = dtypes.is_weak(value)
            self.name = name
            if isinstance(value, np.str_):
                self.value = str(value)

    def _element(self, t, fname: str, index: int) -> str:
        """The element type name of a host operand's dtype ``t`` (an option's
        value type, ``option`` set)."""
        if t.is_option and t.value_type.is_dim:
            # null rows (`?var * T`: an Arrow list with null entries): a
            # `?var * T` argument gets None for them, a plain `var * T` one
            # propagates them (a null result); T is the elements' type
            self.null_rows = True
            t = t.value_type.dtype
        if t.is_option:
            self.option = True
            t = t.value_type
        return _elem_name(t, fname, index)

    def describe(self) -> str:
        if self.name is None:
            return "None"
        if self.weak:
            return f"Python {type(self.value).__name__}"
        return f"?{self.name}" if self.option else self.name

    def exact(self, name: str) -> bool:
        """Passes as an argument of type ``name`` unchanged (a weak scalar: by
        the NEP 50 rule; ``?T`` takes what ``T`` takes, nulls or not)."""
        name = name[1:] if name.startswith("?") else name
        if self.name is None:
            return True        # None: a null of any type
        if self.weak:          # a Python number is no instant or duration
            return name in dtypes.by_name and dtypes.weak_matches(name, self.value)
        return self.name == name

    def castable(self, element) -> bool:
        """Converts safely to the element type ``element`` (a row of
        :mod:`ckernels.dtypes`, a struct type or an ``OptionElement``, as a
        signature resolved it: ``ck_can_cast_safely``; ``?T`` takes what
        ``T`` takes)."""
        if getattr(element, "option", False):
            element = element.value
        name = element.name
        if self.name is None:
            return True
        if self.weak:
            return name in dtypes.by_name and dtypes.weak_matches(name, self.value)
        if self.name == name:
            return True
        if element.kind in "sV" or self.name == "string" or is_struct(self.name):
            return False     # strings and structs pass exactly or not at all
        mine = element_type(self.name)
        if mine.kind in "Mm" or element.kind in "Mm":    # units matter: NumPy's rule
            return (mine.numpy is not None and element.numpy is not None and
                    np.can_cast(mine.numpy, element.numpy, "safe"))
        return bool(lib.ck_can_cast_safely(mine.type_id, element.type_id))

    def as_array(self, t) -> Array:
        """A host ckernel array of type ``t`` (converted where needed)."""
        if self.array is None:
            if self.value is None:   # a 0-d null
                t = _option(t.value_type)
            try:
                return _array(self.value, type=t)
            except Exception as exc:
                raise type(exc)(f"argument {self.value!r} as {t}: {exc}") from None
        a = self.array
        if self.null_rows or (t.is_option and t.value_type.is_dim):
            return a        # rows (null-able or not) as they are: the C matcher checks them
        if t.is_option:     # a null-aware argument: the value type, nulls kept
            t = t.value_type
        if self.option:     # the values convert, the nulls stay
            t = _option(t)
        if str(a.type.dtype) == str(t):
            return a
        return cast(a, t)


def _elem_name(t, fname: str, index: int) -> str:
    name = str(t)
    if is_struct(name):
        try:
            return struct_element(t).name
        except Exception as exc:
            raise TypeError(f"{fname}: argument {index} has element type '{name}', which a "
                            f"jitted kernel cannot take: {exc}") from None
    if not supported(name):
        raise TypeError(f"{fname}: argument {index} has element type '{name}', which a jitted "
                        f"kernel cannot take ({', '.join(SUPPORTED_TYPES)}, {TIME_TYPES})")
    return name


_ERRMODE = None


def cast(a: Array, t) -> Array:
    """A converted copy of ``a`` with element type ``t`` (the library's assignment
    kernel with the default error mode, lifted; parallel for large arrays)."""
    global _ERRMODE
    if _ERRMODE is None:
        _ERRMODE = ffi.new("ck_errmode *", errmode_value("default"))
    srcs = ffi.new("ck_array_preamble *[]", [a._a])
    out = ffi.new("ck_array_preamble **")
    check(lib.ck_array_apply(ffi.addressof(lib, "ck_assignment_child_factory"), _ERRMODE,
                             t.c_type, 1, srcs, ffi.NULL, out))
    return Array._own(out[0])


def operands(args, fname: str) -> list[Operand]:
    return [Operand(a, fname, i) for i, a in enumerate(args)]


def select(kernel, ops: list[Operand], *, casts: bool = True):
    """The :class:`~ckernels.jit.cpu.Compiled` signature of ``kernel`` for
    these operands, or None.

    1. a signature every strong operand matches exactly and every weak scalar
       passes unchanged (with only weak scalars: their default types);
    2. for a lazily compiled function: a new signature of the operands' types;
    3. with ``casts``: the first signature every operand converts to safely."""
    n = len(ops)
    cands = [c for c in kernel._compiled.values() if len(c.sig.args) == n]
    strong = any(not o.weak for o in ops)
    for c in cands:
        els = c.sig.arg_element_names
        if all(o.exact(a) for o, a in zip(ops, els)) and (
                strong or all(o.name == a for o, a in zip(ops, els))):
            return c
    if not kernel._explicit:
        if any(o.name is None for o in ops):
            raise TypeError(f"{kernel.__name__}: a None argument has no type to compile "
                            "for: give the function a signature")
        with kernel._lock:
            return kernel.compile(tuple(o.name for o in ops))
    if casts:
        for c in cands:
            if all(o.castable(e) for o, e in zip(ops, c.sig.arg_elements)):
                return c
    return None


def no_signature(kernel, ops, what: str = "the argument types") -> str:
    got = ", ".join(o.describe() for o in ops)
    have = "; ".join(kernel.signatures) or "none"
    return (f"{kernel.__name__}: no signature matches {what} ({got}); compiled signatures: "
            f"{have}")


__all__ = ["Operand", "operands", "select", "no_signature", "cast"]

