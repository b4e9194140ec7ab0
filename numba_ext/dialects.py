"""The C dialect of each backend, in one table: one :class:`Dialect` per
backend, by the name of the context kind it serves (:data:`DIALECTS`).

What differs between the C of the host (``"c"``), OpenCL C (``"opencl"``) and
CUDA C++ (``"cuda"``) is written here once and nowhere else; everything that
writes C asks a dialect: the jit's emitter (:mod:`ckernels.jit.c_emit`), the
built-in operations on device arrays (:mod:`ckernels.device.ops`),
the generated C APIs of struct types and the hand-written kernel programs
(:mod:`ckernels.capi`).  A row says:

``name`` / ``title`` / ``language``   the context kind, its name in messages
                                      (``"OpenCL"``) and its language
                                      (``"OpenCL C"``)
``types``                             element type name -> C type (the element
                                      types devices of the kind hold)
``inline_function``                   qualifiers of the inline accessors and
                                      helpers of generated C APIs
``user_kernel``                       what ``CK_KERNEL`` means in a
                                      hand-written kernel program
``function_prefix``                   qualifiers of emitted device functions
``kernel_qualifier``                  qualifiers and result type of a kernel
                                      the library launches by name
``kernel_prefix``                     the same for an emitted kernel (CUDA
                                      adds its launch bounds)
``global_space``                      address space of buffer pointers
``thread_index``                      C expression of the work item's flat
                                      index (None on the host)
``group_end``                         C expression (64-bit) of the flat index
                                      one past the work item's group
``int64_suffix`` / ``uint64_suffix``  suffixes of 64-bit integer literals
:meth:`Dialect.math`                  the built-in for a generic math name and
                                      a C type (None: there is none)
:meth:`Dialect.nan` / :meth:`Dialect.inf` / :meth:`Dialect.error_store` /
:meth:`Dialect.header` / :meth:`Dialect.static_assert`
                                      NaN and infinity, keeping the first error
                                      code of a launch, text before a program,
                                      a compile-time assertion

Adding a backend: a row here, its Python half (``ckernels/backends/<kind>.py``,
in the kind -> module table :data:`ckernels.backends.BACKENDS`) and its C
backend file (``src/lib/devices/backend_<kind>.c``).  This module holds C
spellings only: it imports no backend.
"""

from __future__ import annotations

import math as _math

import numpy as np

from . import dtypes
from .errors import InvalidArgumentError, NotSupportedError


#: the element types C dialects hold, in the one table's order (bool, the
#: integers, float32, float64): what :func:`_types` pairs C names with
_DEVICE_ELEMENTS = tuple(d.name for d in dtypes.BUILTINS
                         if d.kind in "biuf" and d.cffi is not None)


def _types(*ctypes) -> dict:
    """Element type name -> C type, the C types given in the order of
    :data:`_DEVICE_ELEMENTS` (element names are spelled in ``dtypes`` only)."""
    assert len(ctypes) == len(_DEVICE_ELEMENTS)
    return dict(zip(_DEVICE_ELEMENTS, ctypes))


class Dialect:
    """One backend's C (see the module docstring).  Subclasses are the rows of
    the table; the emitter, the device operations and the C API generator ask
    only through these attributes and methods."""

    name = "?"
    title = "?"
    language = "?"
    #: element type name -> C type
    types: dict = {}
    inline_function = "static inline"
    user_kernel = "static"
    function_prefix = "static"
    kernel_qualifier = "void"
    kernel_prefix = "void"
    global_space = ""
    thread_index: str | None = None
    group_end: str | None = None
    int64_suffix = "L"
    uint64_suffix = "UL"

    def __init__(self):
        self.int64 = self.types.get("int64")
        self.uint64 = self.types.get("uint64")
        self.uint8 = self.types.get("uint8")
        self.int32 = self.types.get("int32")
        self.uint16 = self.types.get("uint16")
        self.uint32 = self.types.get("uint32")

    @property
    def device(self) -> bool:
        """Whether this is a device dialect (kernels over work items)."""
        return self.thread_index is not None

    # ---- element types ------------------------------------------------------
    def ctype(self, element) -> str | None:
        """The C type of an element type (a :mod:`ckernels.dtypes` row; a struct
        element: its typedef name), or None where the dialect has none."""
        if element.kind == "V":
            return element.c_name
        if element.kind in ("M", "m"):     # instants, durations: int64 counts
            return self.int64
        return self.types.get(element.name)

    def element_types(self) -> tuple:
        """The builtin element types (rows) this dialect holds."""
        return tuple(d for d in dtypes.BUILTINS if d.name in self.types)

    def pointer(self, ct: str, const: bool = False) -> str:
        """A pointer into a kernel buffer."""
        space = f"{self.global_space} " if self.global_space else ""
        return f"{space}{'const ' if const else ''}{ct} *"

    # ---- Numba value types (the jit's emitter) ----------------------------------
    def scalar_type(self, t) -> str | None:
        """C type of a Numba scalar type (bool, ints, floats), or None."""
        d = dtypes.of_numba(t)
        return self.types.get(d.name) if d is not None and d.builtin else None

    def c_type(self, t) -> str | None:
        """C type of a Numba value type (scalars, ``range`` values), or None
        (not representable here; structs are the emitter's typedefs)."""
        from numba.core import types
        t = types.unliteral(t)
        if isinstance(t, types.RangeType):
            return "ck_range_t"
        if isinstance(t, types.RangeIteratorType):
            return "ck_range_iter_t"
        if isinstance(t, types.Pair) and isinstance(types.unliteral(t.first_type),
                                                    types.Integer):
            return "ck_range_pair_t"
        return self.scalar_type(t)

    def prelude(self) -> str:
        """Types every emitted program defines (the ``range`` structs)."""
        i64 = self.int64
        return (f"typedef struct {{ {i64} start, stop, step; }} ck_range_t;\n"
                f"typedef struct {{ {i64} cur, count, step; }} ck_range_iter_t;\n"
                f"typedef struct {{ {i64} first; bool second; }} ck_range_pair_t;\n")

    def header(self, prog) -> str:
        """Text before everything else of an emitted program (pragmas)."""
        return ""

    # ---- literals -------------------------------------------------------------
    def int_literal(self, v: int, t) -> str:
        """A C literal of Numba integer type ``t`` (wrapped to its width)."""
        from numba.core import types
        v = int(v)
        t = types.unliteral(t)
        ct = self.c_type(t)
        bits, signed = (8, False) if t == types.boolean else (t.bitwidth, t.signed)
        if not signed:
            return f"(({ct}){v % 2 ** 64}{self.uint64_suffix})"
        if v == -2**63:
            text = f"(-9223372036854775807{self.int64_suffix} - 1{self.int64_suffix})"
        else:
            text = f"{v}{self.int64_suffix}"
        return text if bits == 64 else f"(({ct}){text})"

    def float_literal(self, v: float, t) -> str:
        """A C literal of Numba float type ``t`` (exact: Python's shortest repr)."""
        from numba.core import types
        v = float(v)
        t = types.unliteral(t)
        ct = self.c_type(t)
        if _math.isnan(v):
            return self.nan(ct)
        if _math.isinf(v):
            return self.inf(ct) if v > 0 else f"(-{self.inf(ct)})"
        if t.bitwidth == 32:
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

    # ---- built-ins and the error buffer -----------------------------------------
    def math(self, name: str, ct: str) -> str | None:
        """The C function for the generic math name ``name`` on ``ct`` values,
        or None if there is none."""
        return name

    def error_store(self, buf: str, code: str) -> str:
        """Statement keeping the first error code of a launch in ``*buf``."""
        raise NotSupportedError(f"{self.title} code has no error buffer")

    def error_store_at(self, buf: str, code: str, offset: str) -> str:
        """:meth:`error_store`, and the failing element's byte offset in the
        output (an unsigned 64-bit expression) in ``buf[2]`` (low word) and
        ``buf[3]`` by the work item whose code was kept."""
        cas = self.error_store(buf, code).rstrip().rstrip(";")
        return (f"if ({cas} == 0) {{ {buf}[2] = (int)(({offset}) & 0xffffffffu); "
                f"{buf}[3] = (int)(({offset}) >> 32); }}")

    def static_assert(self, cond: str, label: str, message: str) -> str:
        """A compile-time assertion of ``cond`` (``label``: an identifier part
        where the dialect needs a name)."""
        return f'_Static_assert({cond}, "{message}");'

    def __repr__(self) -> str:
        return f"<ckernels dialect {self.name!r} ({self.language})>"


class C(Dialect):
    """The host's C (hand-written kernel programs and C APIs of struct types
    for the CPU)."""

    name = "c"
    title = "C"
    language = "C"
    types = {name: dtypes.by_name[name].cffi for name in _DEVICE_ELEMENTS}


class OpenCL(Dialect):
    """OpenCL C: ``__kernel``/``__global``, ``get_global_id(0)``, overloaded math
    built-ins (``sin`` serves float and double, ``degrees``/``radians`` exist),
    the fp64 pragma when double is used, ``atomic_cmpxchg`` into the error
    buffer."""

    name = "opencl"
    title = "OpenCL"
    language = "OpenCL C"
    #             bool    int8    int16    int32  int64   uint8    uint16    uint32
    types = _types("bool", "char", "short", "int", "long", "uchar", "ushort", "uint",
                   "ulong", "float", "double")
    #              uint64   float32  float64
    inline_function = "static inline"
    user_kernel = "static"
    function_prefix = "static"
    kernel_qualifier = "__kernel void"
    kernel_prefix = "__kernel void"
    global_space = "__global"
    thread_index = "get_global_id(0)"
    group_end = "((ulong)get_group_id(0) + 1) * (ulong)get_local_size(0)"
    int64_suffix = "L"
    uint64_suffix = "UL"

    def header(self, prog) -> str:
        # no contraction of a*b+c into fma (the OpenCL C default allows it): the
        # results equal the CPU's, as CUDA programs built with --fmad=false
        fp64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if prog.fp64_user else ""
        return fp64 + "#pragma OPENCL FP_CONTRACT OFF\n"

    def math(self, name: str, ct: str) -> str:
        return name   # OpenCL C overloads every math built-in on float and double

    def error_store(self, buf: str, code: str) -> str:
        return f"atomic_cmpxchg({buf}, 0, {code});"

    def static_assert(self, cond: str, label: str, message: str) -> str:
        # a negative array size: portable to every OpenCL C compiler
        return f"typedef char ck_layout_{label}[({cond}) ? 1 : -1]; /* {message} */"


#: threads per block the library launches at most (``ck_context_launch``)
CUDA_BLOCK = 256

# generic math names whose CUDA built-ins take an ``f`` suffix for float (the
# predicates isnan/isinf/isfinite are overloaded)
_CUDA_SUFFIXED = frozenset({
    "sqrt", "exp", "log", "log10", "log2", "log1p", "expm1", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "erf", "erfc",
    "tgamma", "lgamma", "exp2", "cbrt", "atan2", "pow", "hypot", "copysign", "fmod", "floor",
    "ceil", "trunc", "rint", "ldexp", "nextafter", "fmin", "fmax"})
_CUDA_OVERLOADED = frozenset({"isnan", "isinf", "isfinite"})


class CUDA(Dialect):
    """CUDA C++ compiled by NVRTC: the kernel is ``extern "C" __global__`` (the
    library finds it by name) with ``__launch_bounds__`` matching the launch's
    block size; device functions ``static __device__`` (C API accessors
    ``__device__ inline``: NVRTC warns about every unreferenced static
    function); the flat index from ``blockIdx``/``blockDim``/``threadIdx``;
    math built-ins named by type (``sinf``/``sin``; ``degrees``/``radians`` have
    none); NaN and infinity from their bits (NVRTC has no ``<math.h>``);
    ``LL``/``ULL`` literals; ``atomicCAS`` into the error buffer.  Every CUDA
    device CUDA 11+ supports has fp64."""

    name = "cuda"
    title = "CUDA"
    language = "CUDA C++"
    #              bool    int8           int16    int32  int64
    types = _types("bool", "signed char", "short", "int", "long long",
                   "unsigned char", "unsigned short", "unsigned int", "unsigned long long",
                   "float", "double")
    #              uint8 ... uint64, float32, float64
    inline_function = "__device__ inline"
    user_kernel = "static __device__"
    function_prefix = "static __device__"
    kernel_qualifier = 'extern "C" __global__ void'
    kernel_prefix = f'extern "C" __global__ void __launch_bounds__({CUDA_BLOCK})'
    global_space = ""
    thread_index = "(blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x)"
    group_end = "((unsigned long long)blockIdx.x + 1) * blockDim.x"
    int64_suffix = "LL"
    uint64_suffix = "ULL"

    def math(self, name: str, ct: str) -> str | None:
        if name in _CUDA_OVERLOADED:
            return name
        if name not in _CUDA_SUFFIXED:
            return None       # degrees, radians: no CUDA built-in
        if ct == "float":
            return name + "f"
        if ct == "double":
            return name
        return None

    def nan(self, ct: str) -> str:
        if ct == "float":
            return "__int_as_float(0x7fc00000)"
        return "__longlong_as_double(0x7ff8000000000000LL)"

    def inf(self, ct: str) -> str:
        if ct == "float":
            return "__int_as_float(0x7f800000)"
        return "__longlong_as_double(0x7ff0000000000000LL)"

    def error_store(self, buf: str, code: str) -> str:
        return f"atomicCAS({buf}, 0, {code});"

    def static_assert(self, cond: str, label: str, message: str) -> str:
        return f'static_assert({cond}, "{message}");'


#: the table: context kind -> its dialect
DIALECTS: dict[str, Dialect] = {d.name: d for d in (C(), OpenCL(), CUDA())}
#: the dialects of device kinds
DEVICE_DIALECTS: dict[str, Dialect] = {k: d for k, d in DIALECTS.items() if d.device}
#: element types of double precision on devices (OpenCL needs ``cl_khr_fp64``)
FP64: frozenset[str] = frozenset(n for n, ct in OpenCL.types.items() if ct == "double")


def get(name) -> Dialect:
    """The dialect called ``name`` (``"c"``, ``"opencl"``, ``"cuda"``; a
    :class:`Dialect` is returned as it is); InvalidArgumentError if none."""
    if isinstance(name, Dialect):
        return name
    d = DIALECTS.get(name)
    if d is None:
        raise InvalidArgumentError(f"unknown C dialect {name!r} (dialects: "
                                   f"{', '.join(map(repr, DIALECTS))})")
    return d


def device(kind: str) -> Dialect | None:
    """The dialect of device contexts of ``kind``, or None (no device kind)."""
    return DEVICE_DIALECTS.get(kind)


def uses_fp64(names) -> bool:
    """Whether any of these element type names is double precision on devices."""
    return not FP64.isdisjoint(names)


__all__ = ["Dialect", "C", "OpenCL", "CUDA", "DIALECTS", "DEVICE_DIALECTS", "FP64", "get",
           "device", "uses_fp64", "CUDA_BLOCK"]
