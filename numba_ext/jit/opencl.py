"""The OpenCL target of ``@ckernels.jit``: the OpenCL C dialect of the emitter.

Calls with OpenCL device arrays run through the shared device path
(:mod:`ckernels.jit.device`: operands, signature, broadcasting, launch, error
buffer); what is OpenCL-specific is how the C reads (:class:`OpenCLDialect`):
``__kernel``/``__global`` qualifiers, ``get_global_id(0)``, OpenCL's
overloaded math built-ins (``sin`` serves float and double), ``degrees``/
``radians`` built-ins, the fp64 pragma when double is used, and
``atomic_cmpxchg`` into the error buffer.  The element C types are the
``opencl_c`` column of :mod:`ckernels.dtypes`.
"""

from __future__ import annotations

from .c_emit import Dialect
from .device import DeviceTarget


class OpenCLDialect(Dialect):
    name = "opencl"
    title = "OpenCL"
    function_prefix = "static"
    kernel_prefix = "__kernel void"
    global_space = "__global"
    thread_index = "get_global_id(0)"
    int64_suffix = "L"
    uint64_suffix = "UL"

    def header(self, prog) -> str:
        return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if prog.fp64_user else ""

    def math(self, name: str, ct: str) -> str:
        return name   # OpenCL C overloads every math built-in on float and double

    def error_store(self, buf: str, code: str) -> str:
        return f"atomic_cmpxchg({buf}, 0, {code});"


#: what the dispatcher uses for contexts of kind "opencl"
TARGET = DeviceTarget("opencl", OpenCLDialect())

__all__ = ["OpenCLDialect", "TARGET"]
