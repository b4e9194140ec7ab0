"""What one target's C looks like (:class:`Dialect`): the base the OpenCL
and CUDA dialects fill in (``jit/opencl.py``, ``jit/cuda.py``)."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes
from .. import structs as _structs
from .numba_types import _unlit, _int_bits, _float_bits


class Dialect:
    """What one target's C looks like.  Subclasses set the class attributes
    and may override the methods; the emitter asks only through them.

    ``name``            the column of :mod:`ckernels.dtypes` holding C types
                        (``DType.c_type(name)``), and the name in messages
    ``title``           the target's name in messages (``"OpenCL"``)
    ``function_prefix`` qualifiers of device functions (``"static"``)
    ``kernel_prefix``   qualifiers and result type of the kernel
    ``global_space``    address-space qualifier of buffer pointers (or "")
    ``thread_index``    C expression of the work item's flat index
    ``int64_suffix`` / ``uint64_suffix``   literal suffixes of 64-bit ints
    """

    name = "?"
    title = "?"
    function_prefix = "static"
    kernel_prefix = "void"
    global_space = ""
    thread_index = "0"
    int64_suffix = "L"
    uint64_suffix = "UL"

    def __init__(self):
        self.int64 = dtypes.by_name["int64"].c_type(self.name)
        self.uint64 = dtypes.by_name["uint64"].c_type(self.name)
        self.uint8 = dtypes.by_name["uint8"].c_type(self.name)
        self.int32 = dtypes.by_name["int32"].c_type(self.name)

    # ---- types -------------------------------------------------------------
    def scalar_type(self, t) -> str | None:
        """C type of a Numba scalar type (bool, ints, floats), or None."""
        d = dtypes.of_numba(t)
        return d.c_type(self.name) if d is not None and d.builtin else None

    def c_type(self, t) -> str | None:
        """C type of a Numba value type, or None (not representable)."""
        from numba.core import types
        t = _unlit(t)
        if isinstance(t, types.RangeType):
            return "ck_range_t"
        if isinstance(t, types.RangeIteratorType):
            return "ck_range_iter_t"
        if isinstance(t, types.Pair) and isinstance(_unlit(t.first_type), types.Integer):
            return "ck_range_pair_t"
        if isinstance(t, types.Record):     # a struct: the typedef of ckernels.c_api
            return _structs.of_record(t).c_name
        return self.scalar_type(t)

    def pointer(self, ct: str, const: bool = False) -> str:
        """A pointer into a kernel buffer."""
        space = f"{self.global_space} " if self.global_space else ""
        return f"{space}{'const ' if const else ''}{ct} *"

    def prelude(self) -> str:
        """Types every program defines (the ``range`` structs)."""
        i64 = self.int64
        return (f"typedef struct {{ {i64} start, stop, step; }} ck_range_t;\n"
                f"typedef struct {{ {i64} cur, count, step; }} ck_range_iter_t;\n"
                f"typedef struct {{ {i64} first; bool second; }} ck_range_pair_t;\n")

    def header(self, prog) -> str:
        """Text before everything else (pragmas, includes)."""
        return ""

    # ---- literals ----------------------------------------------------------
    def int_literal(self, v: int, t) -> str:
        """A C literal of Numba integer type ``t`` (wrapped to its width)."""
        v = int(v)
        ct = self.c_type(t)
        bits, signed = _int_bits(t)
        if not signed:
            return f"(({ct}){v % 2 ** 64}{self.uint64_suffix})"
        if v == -2**63:
            text = f"(-9223372036854775807{self.int64_suffix} - 1{self.int64_suffix})"
        else:
            text = f"{v}{self.int64_suffix}"
        return text if bits == 64 else f"(({ct}){text})"

    def float_literal(self, v: float, t) -> str:
        v = float(v)
        ct = self.c_type(t)
        if math.isnan(v):
            return self.nan(ct)
        if math.isinf(v):
            return self.inf(ct) if v > 0 else f"(-{self.inf(ct)})"
        if _float_bits(t) == 32:
            r = str(np.float32(v))
            if "." not in r and "e" not in r:
                r += ".0"
            return f"{r}f" if not r.startswith("-") else f"({r}f)"
        r = repr(v)
        if "." not in r and "e" not in r and "inf" not in r:
            r += ".0"
        return r if not r.startswith("-") else f"({r})"

    def nan(self, ct: str) -> str:
        return f"(({ct})NAN)"

    def inf(self, ct: str) -> str:
        return f"(({ct})INFINITY)"

    # ---- built-ins and the error buffer -------------------------------------
    def math(self, name: str, ct: str) -> str | None:
        """The C function for ``math.<name>`` on ``ct`` values (``name`` is a key
        of the tables below: its generic C name), or None if there is none."""
        return name

    def error_store(self, buf: str, code: str) -> str:
        """Statement keeping the first error code of the launch in ``*buf``."""
        raise NotImplementedError
