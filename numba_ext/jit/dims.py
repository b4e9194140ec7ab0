"""Signatures with dims: the one place the jit learns what a core dim is.

A jitted function's signature may hold dims in its argument and result
types (``docs/dims.md``)::

    "float64(N * float64, N * float64)"          a dot product
    "float64(var * float64)"                     the sum of a ragged row
    "N * float64(N * float64)"                   a cumulative sum
    "3 * float64(3 * float64, 3 * float64)"      a cross product
    "M * float64(M * N * float64, N * float64)"  matrix times vector
    "var * float64(var * float64)"               a filtered row
    "var * string(string)"                       the tokens of a string
    "int64(var * string)"                        a count of strings

Fixed dims (``3 *``), ``var`` dims and dimension variables (``N *``,
upper-case, bound per call and matched across arguments) are the operand's
*core dims*: the function sees each such argument whole, the C lifter maps
it over the operands' other ("outer") dims (``ck_array_apply_core``,
``core_dims.h``).  :class:`CoreType` is one such type; :func:`core` parses
it (cached), :func:`check_signature` checks a whole signature.

What the function gets (CPU):

* an argument whose dims are fixed/symbolic, or one ``var`` dim first and
  fixed/symbolic ones after it, over numbers, bool or a struct of numbers:
  a read-only Numba array (``types.Array(dtype, ndim, "A", readonly=True)``)
  -- ``len``, indexing, slicing, iteration and Numba's NumPy support
  (``np.sum``, ``x.mean()``, ``np.cumsum``, ``a @ b``);
* one over strings: a :class:`ckernels._numba.arraytype.CkArrayType` view
  (``len``, indexing, iteration; elements are ``CkString`` views);
* a result with fixed/symbolic dims: the function returns an array, list or
  tuple of exactly that shape (checked) -- or takes one more parameter, a
  writable Numba array over the destination's element, and writes it in
  place (``numba.guvectorize``'s style);
* a ``var * T`` result: the function returns an array, list or tuple (copied
  into one allocation of the destination's arena), or takes one more
  parameter, a :class:`~ckernels._numba.varbuilder.VarBuilderType` whose
  ``append`` writes straight into the arena;
* a ``var * string`` result: the same with strings (a list or tuple of
  ``str`` or string views; the output parameter is a
  :class:`~ckernels._numba.varstrings.VarStringBuilderType`): the text goes
  into the destination's string arena;
* option elements (``var * ?R``, ``N * ?R``, ``var * ?string``,
  ``N * ?string``): the same forms with ``None`` for a null
  (:mod:`ckernels.jit.cpu_dims`).

Var dims below the first core dim of an argument (``N * var * T``),
results with more than one var dim and plain string results with fixed
dims (``3 * string``; ``3 * ?string`` is taken) are refused with a clear
error.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from .. import dtypes
from .._native import lib
from ..errors import NotSupportedError
from ..types import Type, as_type
from . import structs as _structs

FIXED, SYMBOLIC, VAR = "fixed", "symbolic", "var"
_KINDS = {lib.CK_TYPE_FIXED_DIM: FIXED, lib.CK_TYPE_SYMBOLIC_DIM: SYMBOLIC,
          lib.CK_TYPE_VAR_DIM: VAR}


class CoreDim(NamedTuple):
    """One core dim of a signature type: ``kind`` (fixed, symbolic, var), the
    size of a fixed dim, the name of a symbolic one."""

    kind: str
    size: int | None = None
    name: str | None = None

    def __str__(self) -> str:
        return (str(self.size) if self.kind == FIXED else
                self.name if self.kind == SYMBOLIC else "var")


class CoreType:
    """A signature type with dims (a pattern such as ``N * float64``)."""

    __slots__ = ("text", "type", "dims", "dtype", "dtype_type", "null_rows", "rows_text")

    def __init__(self, t: Type):
        self.type = t
        self.text = str(t)
        # `?var * T`: null-able rows (an Arrow list with null entries); the
        # function gets None or the row (`rows_text`, `var * T`)
        self.null_rows = bool(t.is_option)
        if self.null_rows:
            t = t.value_type
        self.rows_text = str(t)
        dims = []
        while t.is_dim:
            kind = _KINDS.get(t.type_id)
            if kind is None:
                raise TypeError(f"'{self.text}': signatures take fixed (3 *), symbolic (N *) "
                                "and var dims, not strided ones")
            dims.append(CoreDim(kind, t.fixed_size, t.dim_name))
            t = t.element
        self.dims = tuple(dims)
        self.dtype_type = t
        self.dtype = str(t)

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def has_var(self) -> bool:
        return any(d.kind == VAR for d in self.dims)

    @property
    def names(self) -> tuple[str, ...]:
        """The dimension variables, in order of appearance."""
        return tuple(d.name for d in self.dims if d.kind == SYMBOLIC)

    def __repr__(self) -> str:
        return f"CoreType({self.text!r})"


def is_dimensioned(name) -> bool:
    """Whether a signature part (a canonical type string) has dims."""
    return isinstance(name, str) and "*" in name and not name.lstrip().startswith("{") and \
        core(name) is not None


@functools.lru_cache(maxsize=512)
def core(name: str) -> CoreType | None:
    """The :class:`CoreType` of a canonical type string with dims, else None."""
    t = as_type(name)
    return CoreType(t) if t.is_dim or (t.is_option and t.value_type.is_dim) else None


def element_name(name: str) -> str:
    """The element type name of a signature part (its dtype for a type with dims)."""
    c = core(name) if "*" in name and not name.lstrip().startswith("{") else None
    return c.dtype if c is not None else name


def _element_ok(dtype: str, what: str) -> str | None:
    """Why elements of ``dtype`` are refused in a dimensioned ``what``, or None."""
    if dtype.startswith("?"):       # option elements: jit/option_rows.py
        value = dtype[1:]
        if value == "string":
            return None
        jit_types = [d.name for d in dtypes.JIT]
        if value not in jit_types:
            return f"option elements under dims are ?T for T in {', '.join(jit_types)}, string"
        return None
    if dtype == "string":
        return None      # results: var * string only (signature_type)
    if _structs.is_struct_name(dtype):
        try:
            st = _structs.element(dtype)
        except Exception as exc:          # noqa: BLE001 - named in the message
            return str(exc)
        if st.views:
            return ("structs with string or var fields are not supported under dims "
                    "(their numbers-only structs are)")
        return None if what == "argument" else "dimensioned results hold numbers or bool"
    jit_types = [d.name for d in dtypes.JIT]
    if dtype not in jit_types:
        return f"element types are {', '.join(jit_types)}"
    return None


def _element(name: str):
    """The table row or StructType of an element type name."""
    if name.startswith("?"):
        return _element(name[1:])
    d = dtypes.by_name.get(name)
    return d if d is not None else _structs.element(name)


def signature_type(t: Type, what: str, where: str) -> str:
    """Check a dimensioned signature part; its canonical string (``type_name``
    of :mod:`ckernels.jit.signature` calls this for types with dims)."""
    try:
        c = core(str(t))
    except TypeError as exc:
        raise TypeError(f"ckernels.jit: bad {what} type '{t}' in signature {where!r}: "
                        f"{exc}") from None
    why = _element_ok(c.dtype, what)
    if why is None and c.null_rows and (c.ndim != 1 or c.dims[0].kind != VAR):
        why = ("null-able rows are one var dim (?var * T, ?var * ?T): an argument's row "
               "arrives as None or the row" if what == "argument" else
               "null-able rows are one var dim (?var * R, ?var * ?R): return None for a "
               "null row")
    elif why is None and c.dtype.startswith("?") and c.ndim != 1:
        why = ("option elements take one core dim (var * ?T, N * ?T, 3 * ?T); "
               "the row arrives as an OptionRow of None or values")
    elif why is None and what == "argument":
        if any(d.kind == VAR for d in c.dims[1:]):
            why = ("a var dim below the first core dim (a ragged row of ragged rows) is "
                   "not supported; var may be the first core dim")
        elif c.dtype == "string" and c.ndim > 1 and c.dims[0].kind == VAR:
            why = "string elements take one var dim or fixed/symbolic dims"
    elif why is None:
        nvar = sum(d.kind == VAR for d in c.dims)
        if nvar and (nvar > 1 or c.ndim > 1):
            why = "a var result is one var dim over numbers, bool or strings (var * T)"
        elif c.dtype == "string" and not nvar:
            why = ("string elements of a dimensioned result take one var dim "
                   "(var * string): return a list of str")
    if why is not None:
        raise NotSupportedError(f"ckernels.jit: unsupported {what} type '{c.text}' in "
                                f"signature {where!r}: {why}")
    return c.text


def check_signature(ret: str | None, args, where: str) -> None:
    """Signature-wide rules: a dimension variable of the result is bound by an
    argument (its size comes from there)."""
    bound = {n for a in args if is_dimensioned(a) for n in core(a).names}
    if ret is not None and is_dimensioned(ret):
        for n in core(ret).names:
            if n not in bound:
                raise TypeError(f"ckernels.jit: signature {where!r}: the result's dimension "
                                f"variable {n} is bound by no argument")


def has_dims(sig) -> bool:
    """Whether a :class:`~ckernels.jit.signature.Signature` has dims anywhere."""
    return any(is_dimensioned(a) for a in sig.args) or (
        sig.ret is not None and is_dimensioned(sig.ret))


def output_parameter(sigs, params) -> str | None:
    """The name of a function's output parameter: its last one, when every
    signature has a dimensioned result and one argument fewer than the
    function has parameters (``def f(x, out)`` for ``"N * float64(N *
    float64)"``), else None."""
    if not sigs or not params:
        return None
    if all(s.ret is not None and is_dimensioned(s.ret) and len(s.args) + 1 == len(params)
           for s in sigs):
        return params[-1][0]
    return None


# ---------------------------------------------------------------- Numba ----
def is_option_core(c: CoreType) -> bool:
    """Whether the elements under the core dims are an option ``?T``."""
    return c.dtype.startswith("?")


def option_value_numba(dtype: str):
    """The Numba type of an option element's value (``?T`` -> T)."""
    if dtype == "?string":      # a Numba str (string_elements.load_string)
        from numba.core import types
        return types.unicode_type
    return _element(dtype).numba


def array_mode(c: CoreType) -> bool:
    """Whether an argument of this type is a real Numba array (else a view)."""
    return c.dtype != "string" and not is_option_core(c)


def numba_argument(name: str):
    """The Numba type the function sees for a signature argument (option
    elements under dims: ``cpu_dims.numba_argument``)."""
    c = core(name) if is_dimensioned(name) else None
    if c is None:
        return _element(name).numba
    from numba.core import types
    if c.null_rows:          # None or the row
        return types.Optional(numba_argument(c.rows_text))
    if array_mode(c):
        return types.Array(_element(c.dtype).numba, c.ndim, "A", readonly=True)
    from .._numba.arraytype import STRIDED, CkArrayType
    from .._numba.stringtype import ck_string_type
    return CkArrayType((STRIDED,) * c.ndim, ck_string_type)


def numba_output(name: str):
    """The Numba type of the output parameter for a dimensioned result: a
    writable array (fixed/symbolic dims) or a var builder (``var * T``)."""
    from numba.core import types
    c = core(name)
    el = _element(c.dtype).numba
    if c.has_var and c.dtype == "string":
        from .._numba.varstrings import var_string_builder_type
        return var_string_builder_type
    if c.has_var:
        from .._numba.varbuilder import VarBuilderType
        return VarBuilderType(el)
    # layout "A": the destination's core strides are whatever the operand has
    # (``out=o[:, ::2]``, ``out=buf[::-1]``, a transposed ``out``); a "C" array
    # would ignore them and write its elements contiguously (numba.guvectorize's
    # array arguments are "A" too)
    return types.Array(el, c.ndim, "A")


def gufunc_signature(ret: str, args) -> str | None:
    """NumPy's gufunc signature (``"(n),(n)->()"``) of a signature whose dims
    are all fixed or symbolic, else None (var dims: the general path)."""
    parts = []
    for name in list(args) + [ret]:
        c = core(name) if is_dimensioned(name) else None
        if c is None:
            parts.append("()")
        elif c.has_var:
            return None
        else:
            parts.append("(" + ",".join(str(d.size) if d.kind == FIXED else d.name.lower()
                                        for d in c.dims) + ")")
    return ",".join(parts[:-1]) + "->" + parts[-1]


def numpy_dtypes(sig):
    """The NumPy dtypes of a dimensioned signature's elements (args + result),
    or None when one has none."""
    out = []
    for d in sig.arg_elements + (sig.ret_element,):    # resolved by the signature
        if d is None or getattr(d, "option", False) or d.kind in "sV" or d.numpy is None:
            return None
        out.append(d.numpy)
    return out


__all__ = ["CoreDim", "CoreType", "core", "is_dimensioned", "element_name", "signature_type",
           "check_signature", "has_dims", "output_parameter", "numba_argument", "numba_output", "array_mode",
           "is_option_core", "option_value_numba",
           "gufunc_signature", "numpy_dtypes", "FIXED", "SYMBOLIC", "VAR"]
