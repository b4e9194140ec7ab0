"""Does what a jitted function returns fit its declared result?  Checked at
decoration, for the CPU target, so that a misfit is a ckernels ``TypeError``
naming the function, its file and line, what it returns and the declared
result -- never Numba's internal ``TypingError`` (``docs/dims.md``).

* Scalar results (:func:`numba_misfit`): Numba compiles the function with
  the declared result type and reports "No conversion from X to Y" for the
  ``return``; that report becomes the misfit error, and so does Numba's
  "Can't unify return type" (returns of types with no common type).
* Results of functions with core dims (:func:`check_dims_result`): Numba
  infers the result type (the element function stores it:
  :mod:`ckernels.jit.cpu_dims`), which is checked here before the element
  function is built: a scalar result takes a number or bool (converted as
  Numba converts a return value), a dimensioned one an array, list or tuple.
  A function that returns ``None`` (``return None``, or a path that ends
  without ``return``) does not fit, except into a ``?var * R`` result
  (a null row) or ``?R`` elements; one that only raises does (Numba types
  it as returning ``none`` too, but it has no ``return``).
"""

from __future__ import annotations

import dis
import os
import re

#: Numba's report of a return value that does not convert to the declared type
_NO_CONVERSION = re.compile(r"No conversion from (.+?) to (.+?) for '\$[^']*return_value")
#: ... of return values of types that have no common type (result inferred)
_NO_UNIFY = re.compile(r"Can't unify return type from the following types: ([^\n]+)")


def return_lines(py_func) -> list[int]:
    """The source lines of ``py_func``'s return instructions (an implicit
    ``return None`` at the end counts; a function that only raises has none)."""
    lines: list[int] = []
    for ins in dis.get_instructions(py_func):
        if ins.opname in ("RETURN_VALUE", "RETURN_CONST"):
            pos = getattr(ins, "positions", None)
            ln = pos.lineno if pos is not None and pos.lineno else ins.starts_line
            if ln is not None and ln not in lines:
                lines.append(ln)
    return lines


def misfit_error(kernel, sig, got, lines) -> TypeError:
    """``TypeError("ckernels.jit: f (file.py, line 4) returns none, which does
    not fit its declared result float64 (signature float64(float64))")``."""
    code = kernel.py_func.__code__
    lines = list(lines) or [code.co_firstlineno]
    where = (f"line {lines[0]}" if len(lines) == 1
             else "lines " + ", ".join(str(n) for n in lines))
    return TypeError(f"ckernels.jit: {kernel.__qualname__} "
                     f"({os.path.basename(code.co_filename)}, {where}) returns {got}, which "
                     f"does not fit its declared result {sig.ret} (signature {sig.text})")


def numba_misfit(kernel, sig, exc) -> TypeError | None:
    """The misfit error for Numba's error ``exc`` when it reports a return
    value of the wrong type, else None."""
    text = str(exc)
    m = _NO_CONVERSION.search(text)
    if m is None:
        m = _NO_UNIFY.search(text)
        if m is None:
            return None
        got = " or ".join(_top_level(m.group(1))) + " (on different paths)"
        return misfit_error(kernel, sig, got, return_lines(kernel.py_func))
    loc = getattr(exc, "loc", None)
    line = getattr(loc, "line", None)
    return misfit_error(kernel, sig, m.group(1),
                        [line] if line else return_lines(kernel.py_func))


def _top_level(text: str) -> list[str]:
    """``"array(float64, 1d, C), float64"`` -> its comma-separated types."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c in "([") - (c in ")]")
        if c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out


def check_dims_result(kernel, sig, returned) -> None:
    """Raise the misfit error when ``returned`` (the Numba type Numba inferred
    for the function's result) cannot be stored in ``sig``'s result, a
    signature with core dims whose function returns its result (not one
    writing an output parameter)."""
    from numba.core import types
    from numba.core.registry import cpu_target

    from . import dims as _dims

    c = _dims.core(sig.ret) if _dims.is_dimensioned(sig.ret) else None
    if c is not None and c.null_rows:
        # ?var * R: None is a null row; else a row (an Optional of one)
        from .option_rows import OptionRowType
        row = returned.type if isinstance(returned, types.Optional) else returned
        if not isinstance(row, (types.NoneType, types.Array, types.Sequence,
                                types.BaseTuple, types.ListType, OptionRowType)):
            raise misfit_error(kernel, sig, returned, return_lines(kernel.py_func))
        return
    if getattr(sig.ret_element, "option", False):
        # ?R, N * ?R: None is a null; Optional values, numbers, sequences
        if sig.ret_element.value.kind == "s" and not _dims.is_dimensioned(sig.ret):
            return                  # ?string: None, str or a view (checked where stored)
        if isinstance(returned, (types.NoneType, types.Optional, types.Number,
                                 types.Boolean)) and not _dims.is_dimensioned(sig.ret):
            return
        from .option_rows import OptionRowType
        if _dims.is_dimensioned(sig.ret) and isinstance(
                returned, (types.Array, types.Sequence, types.BaseTuple, OptionRowType)):
            return
        if not isinstance(returned, types.NoneType):
            raise misfit_error(kernel, sig, returned, return_lines(kernel.py_func))
    if isinstance(returned, types.NoneType):
        lines = return_lines(kernel.py_func)
        if lines:
            raise misfit_error(kernel, sig, returned, lines)
        return                      # it only raises: nothing is stored
    if _dims.is_dimensioned(sig.ret):
        ok = isinstance(returned, (types.Array, types.Sequence, types.BaseTuple,
                                   types.ListType))
    else:
        el = sig.ret_element
        if el.kind in "sV":         # strings and structs: checked where they are stored
            return
        ok = (isinstance(returned, (types.Number, types.Boolean))
              and (returned == el.numba
                   or cpu_target.typing_context.can_convert(returned, el.numba) is not None))
    if not ok:
        raise misfit_error(kernel, sig, returned, return_lines(kernel.py_func))


__all__ = ["return_lines", "misfit_error", "numba_misfit", "check_dims_result"]
