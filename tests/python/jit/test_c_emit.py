"""The C emitter's dialect seam: everything target-specific in the emitted C
comes from the Dialect object, so a second dialect (CUDA C, later) is one small
subclass.  A CUDA-like dialect here must produce source with none of OpenCL's
spellings left in it."""

import math
import re

import numba
import pytest

import ckernels
from ckernels import dialects, dtypes
from ckernels.dialects import OpenCL as OpenCLDialect
from ckernels.jit.c_emit import Dialect, emit_kernel


class CudaLike(Dialect):
    """What a CUDA dialect looks like (the real one is a row of ckernels.dialects)."""
    name = "cuda"
    title = "CUDA"
    types = dialects.CUDA.types
    function_prefix = "static __device__"
    kernel_prefix = 'extern "C" __global__ void'
    global_space = ""
    thread_index = "(blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x)"
    int64_suffix = "LL"
    uint64_suffix = "ULL"

    def math(self, name, ct):
        if name in ("degrees", "radians"):
            return None
        return name + "f" if ct == "float" else name

    def error_store(self, buf, code):
        return f"atomicCAS({buf}, 0, {code});"


@numba.njit
def helper(x):
    return x * 0.5


def corpus(x, y):
    acc = 0.0
    for i in range(3):
        if x > y:
            acc += math.sqrt(abs(x)) + x // (y + 1.5) + x % 2.0
        else:
            acc -= helper(y) ** 2 + math.degrees(x)
    return acc + min(x, y)


def icorpus(a, b):
    s = 0
    for i in range(a % 5):
        s += a // (b | 1) + a % (b | 1) + (a ** 2) - (b << 1)
    return s


@pytest.mark.parametrize("f, args, ret", [
    (corpus, ("float32", "float32"), "float32"),
    (corpus, ("float64", "float64"), "float64"),
    (icorpus, ("int64", "int64"), "int64"),
    (icorpus, ("int32", "int32"), "int64"),
    (lambda x: not x, ("bool",), "bool"),
])
def test_a_second_dialect_leaves_no_opencl_behind(f, args, ret):
    nb = [dtypes.by_name[a].numba for a in args]
    src = emit_kernel(f, nb, dtypes.by_name[ret].numba, CudaLike()).source
    ocl = emit_kernel(f, nb, dtypes.by_name[ret].numba, OpenCLDialect()).source
    for token in (r"\b__global\b", r"\b__kernel\b", "get_global_id", "atomic_cmpxchg",
                  "#pragma OPENCL"):
        assert re.search(token, ocl) or token == "#pragma OPENCL"
        assert not re.search(token, src), token
    for word in ("ulong", "uchar", "ushort", "uint"):
        assert not re.search(rf"\b{word}\b", src), word
    assert not re.search(r"\blong\b(?! long)", src.replace("long long", "")), "bare long"
    assert 'extern "C" __global__ void ck_kernel(' in src and "atomicCAS(" in src
    assert "static __device__ " in src
    if f is corpus:   # math.degrees has no CUDA built-in: the factor, as Numba
        assert "degrees(" in ocl and "degrees(" not in src and "57.2957" in src
    # the element types are the CUDA row's of the dialect table
    for a in args:
        assert f"{dialects.get('cuda').ctype(dtypes.by_name[a])} x0 = " in src or a == "bool"


def test_dialect_literals():
    from numba.core import types
    d = CudaLike()
    assert d.int_literal(-2**63, types.int64) == "(-9223372036854775807LL - 1LL)"
    assert d.int_literal(5, types.uint64) == "((unsigned long long)5ULL)"
    assert d.int_literal(-3, types.int8) == "((signed char)-3LL)"
    o = OpenCLDialect()
    assert o.int_literal(5, types.int64) == "5L" and o.int_literal(7, types.uint32) == \
        "((uint)7UL)"
    assert o.float_literal(0.1, types.float32) == "0.1f"
    assert o.float_literal(float("-inf"), types.float64) == "(-((double)INFINITY))"


def test_error_model_in_the_emitted_source():
    nb = dtypes.by_name["int64"].numba
    py = emit_kernel(lambda a, b: a // b, (nb, nb), nb, OpenCLDialect(), "python")
    npm = emit_kernel(lambda a, b: a // b, (nb, nb), nb, OpenCLDialect(), "numpy")
    assert [e[:2] for e in py.errors] == [(ZeroDivisionError, ("integer division by zero",))]
    assert py.errors[0][2][1:] == (__file__, 103)       # where: the lambda's line
    assert npm.errors == [] and "== 0 ? 0L :" in npm.source
    with pytest.raises(ckernels.errors.NotSupportedError, match="error_model"):
        emit_kernel(lambda a: a, (nb,), nb, OpenCLDialect(), "c")
