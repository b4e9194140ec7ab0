"""Kernel objects called from Python are checked against what they were built for.

``Kernel.__call__``, ``ArrayKernel.execute`` and instantiated jitted kernels
used to accept arrays of other types, fewer elements or empty buffers and
write out of bounds or crash.  A regression would crash the interpreter, so
every misuse runs in a subprocess (one for all cases) that reports which
exception each case raised; the parent checks them.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

import ckernels
from ckernels import errors, kernels

_SCRIPT = r"""
import json, numpy as np, ckernels
from ckernels import kernels, errors

results = {}
def case(name, fn):
    try:
        fn()
        results[name] = "ok"
    except Exception as exc:
        results[name] = [type(exc).__name__, str(exc)]

strided = kernels.make_assignment_kernel("int32", "float64", "strided")
single = kernels.make_assignment_kernel("float64", "int8", "single")
f8, i4 = np.arange(4.0), np.zeros(4, np.int32)
case("strided ok", lambda: strided(i4, f8))
case("strided short source", lambda: strided(np.zeros(1000, np.int32), np.arange(3.0)))
case("strided wrong source dtype", lambda: strided(i4, np.arange(4, dtype=np.float32)))
case("strided wrong destination dtype", lambda: strided(np.zeros(4, np.int8), f8))
case("strided read-only destination", lambda: strided(np.zeros(4, np.int32)[:].setflags(
    write=False) or np.frombuffer(bytes(16), np.int32), f8))
case("strided 2-d", lambda: strided(np.zeros((2, 2), np.int32), np.zeros((2, 2))))
case("strided list", lambda: strided([0, 0], [1.0, 2.0]))
case("strided unaligned", lambda: strided(i4, np.frombuffer(bytes(33), np.float64, 4, 1)))
case("strided source count", lambda: strided(i4))
case("single ok", lambda: single(np.zeros(1), np.ones(1, np.int8)))
case("single empty source", lambda: single(np.zeros(1), np.zeros(0, np.int8)))
case("single empty destination", lambda: single(np.zeros(0), np.ones(3, np.int8)))
case("no types", lambda: kernels.Kernel(strided.builder, "strided", "raw", 1)(i4, f8))

@ckernels.jit("float64(float64, float64)")
def f(x, y):
    return x * y

@ckernels.jit("string(string)")
def g(x):
    return x + x
k = f.instantiate("float64", ["float64", "float64"], "strided")
case("jit ok", lambda: k(np.zeros(3), np.ones(3), np.ones(3)))
case("jit short source", lambda: k(np.zeros(100000), np.ones(3), np.ones(100000)))
case("jit int32 source", lambda: k(np.zeros(3), np.ones(3, np.int32), np.ones(3)))
case("jit string kernel", lambda: g.instantiate("string", ["string"])(np.zeros(1), np.zeros(1)))

a = ckernels.asarray(np.zeros((3, 4)))
b = ckernels.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
ak = kernels.make_array_assignment_kernel(a, b)
case("array ok", lambda: ak.execute(a, b))
case("array ok numpy", lambda: ak(np.zeros((3, 4)), np.ones((3, 4), np.int32)))
case("array smaller destination", lambda: ak.execute(ckernels.asarray(np.zeros((1, 1))), b))
case("array larger source shape", lambda: ak.execute(a, ckernels.asarray(
    np.zeros((30, 40), np.int32))))
case("array other strides", lambda: ak.execute(ckernels.asarray(np.zeros((4, 3)).T), b))
case("array other type", lambda: ak.execute(a, ckernels.asarray(np.zeros((3, 4)))))
case("array empty", lambda: ak.execute(ckernels.asarray(np.zeros((0, 4))), b))
case("array source count", lambda: ak.execute(a))
case("array read-only destination", lambda: ak.execute(
    ckernels.asarray(np.zeros((3, 4))).set_readonly(), b))
s_dst = ckernels.array(["", ""], type="2 * string")
s_src = ckernels.array(["ab", "cd"], type="2 * string")
sk = kernels.make_array_assignment_kernel(s_dst, s_src)
case("string ok", lambda: sk.execute(s_dst, s_src))
case("string other arena", lambda: sk.execute(ckernels.array(["", ""], type="2 * string"),
                                              s_src))
results["string value"] = s_dst.to_list()
ok_dst = np.zeros(4, np.int32); strided(ok_dst, np.array([1.0, 2.0, 3.0, 4.0]))
results["strided value"] = ok_dst.tolist()
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def results():
    p = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


OK = ["strided ok", "single ok", "jit ok", "array ok", "array ok numpy", "string ok"]
REJECTED = {
    "strided short source": ("InvalidArgumentError", "same length"),
    "strided wrong source dtype": ("CKTypeError", "float32"),
    "strided wrong destination dtype": ("CKTypeError", "int8"),
    "strided read-only destination": ("InvalidStateError", "read-only"),
    "strided 2-d": ("CKTypeError", "1-d"),
    "strided list": ("CKTypeError", "1-d NumPy array"),
    "strided unaligned": ("InvalidArgumentError", "aligned"),
    "strided source count": ("InvalidArgumentError", "1 source"),
    "single empty source": ("InvalidArgumentError", "at least one element"),
    "single empty destination": ("InvalidArgumentError", "at least one element"),
    "no types": ("NotSupportedError", ".address"),
    "jit short source": ("InvalidArgumentError", "same length"),
    "jit int32 source": ("CKTypeError", "int32"),
    "jit string kernel": ("NotSupportedError", "string"),
    "array smaller destination": ("InvalidArgumentError", "shape (1, 1)"),
    "array larger source shape": ("InvalidArgumentError", "shape (30, 40)"),
    "array other strides": ("InvalidArgumentError", "strides"),
    "array other type": ("CKTypeError", "float64"),
    "array empty": ("InvalidArgumentError", "shape (0, 4)"),
    "array source count": ("InvalidArgumentError", "1 source"),
    "array read-only destination": ("InvalidStateError", ""),
    "string other arena": ("InvalidArgumentError", "arena"),
}


@pytest.mark.parametrize("name", OK)
def test_matching_calls_run(results, name):
    assert results[name] == "ok"


@pytest.mark.parametrize("name", list(REJECTED))
def test_mismatched_calls_are_rejected_before_running(results, name):
    cls, fragment = REJECTED[name]
    assert results[name] != "ok", f"{name}: accepted"
    assert results[name][0] == cls, results[name]
    assert fragment in results[name][1]


def test_values_written(results):
    assert results["strided value"] == [1, 2, 3, 4]
    assert results["string value"] == ["ab", "cd"]


def test_kernel_attributes_and_repr():
    k = kernels.make_assignment_kernel("int32", "float64", "strided")
    assert k.dst_type == ckernels.types.int32 and k.src_types == (ckernels.types.float64,)
    assert k.strided == k.function and k.single is None
    assert "int32(float64)" in repr(k)
    with pytest.raises(errors.InvalidArgumentError, match="request"):
        kernels.Kernel(k.builder, "both", "x", 1)
    with pytest.raises(errors.CKTypeError, match="KernelBuilder"):
        kernels.Kernel(object(), "single", "x", 1)
    k.builder.destroy()
    assert "destroyed" in repr(k)
    with pytest.raises(errors.InvalidStateError):
        k(np.zeros(1, np.int32), np.zeros(1))


def test_address_docs_state_the_lifetime_rule():
    doc = kernels.Kernel.address.__doc__
    assert "alive" in doc and "unchecked" in doc.lower()
    assert "alive" in ckernels.MemBlock.address.__doc__
